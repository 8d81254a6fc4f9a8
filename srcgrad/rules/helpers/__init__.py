"""Run-time helpers of the rule templates: what generated code calls.

No gast and no registry here. Each helper is written with NumPy functions
that have rules (so it can be differentiated again: op by op when a
higher-order tape records it, and compiled like a user function when
generated code that calls it is transformed again), is a `primitive` whose
rule its family's rule file registers, or is a `nondiff_helper` (its result
carries no derivative: masks, index maps, axis lists).

One module per family of rules, named after it, and the helpers every family
shares:

    broadcast     unbroadcast, unreduce, rereduce, unindex, matmul's adjoints:
                  cotangents summed or scattered back to an input's shape
                  (the compiler knows these by name)
    complex       the complex convention (TensorFlow's) and cotangent dtypes
    elementwise   rules/numpy/elementwise.py, piecewise.py
    reductions    rules/numpy/reductions.py (with order statistics, trapezoid)
    covariance    np.cov and np.corrcoef (rules/numpy/reductions.py)
    products      matrix and tensor products, einsum, convolve and correlate
                  (rules/numpy/linalg.py)
    linalg        np.linalg's decompositions and inverses (rules/numpy/linalg.py)
    shapes, pad   rules/numpy/shapes.py, indexing.py
    interp        np.interp's pieces, weights and slopes (rules/numpy/piecewise.py)
    fft           rules/numpy/fft.py
    constructors  rules/numpy/constructors.py
    polynomials   np.polyval's and np.vander's powers (rules/numpy/polynomials.py)
    special, stats, scipy_linalg    rules/scipy/ (imported with SciPy only)
    batched       the batched twins of the helpers (vectorised Jacobians)

The helpers sit apart from the templates because they run (templates are
parsed, never called), because several families share them (unbroadcast,
conj, mH, index_scatter), and because they import no rule module, so the
rule files can import any of them without a cycle.
"""
