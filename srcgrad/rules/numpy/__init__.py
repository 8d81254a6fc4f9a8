"""Rules for NumPy, one module per family, adjoint and tangent rules of a
primitive side by side:

    elementwise   smooth ufuncs: arithmetic, powers, exp and logs, trigonometry
    piecewise     piecewise-linear and selecting ufuncs: maximum, minimum,
                  fmax, fmin, clip, where, abs, remainder...
    complex       real, imag, conj, angle, dtype casts
    reductions    sums, means, extrema, products, cumulative sums, variance,
                  norms, order statistics and the nan- reductions
    linalg        products, einsum, diagonals, np.linalg
    shapes        rearranging, joining, splitting, promoting, differences
    indexing      getitem, selecting, repeating, padding, inserting
    fft           np.fft
    constructors  full, full_like, linspace, copy, array and the as*array
                  conversions
    polynomials   polyval, vander

Notation (Tangent's and JAX's): a template's first parameter is the primal
output `z`, the others mirror the primitive's signature. An adjoint template
reads the output's cotangent `d[z]` and contributes `d[x] = ...` to input
`x`'s; a tangent template reads the inputs' tangents `t[x]` and defines the
output's, `t[z] = ...` (terms of inputs without a tangent are dropped:
symbolic zeros, rules/tangents.py). Every adjoint rule is broadcast-safe:
contributions are summed back to the input's shape with `unbroadcast` /
`unreduce`. The two modes agree: <u, J v> = <J^T u, v> (tests/test_forward.py
checks both against finite differences).

The run-time helpers the templates call are in rules/helpers/, one module
per family. Importing the package registers the rules.
"""
from . import (complex, constructors, elementwise, fft, indexing, linalg, piecewise, polynomials,  # noqa: F401
               reductions, shapes)
