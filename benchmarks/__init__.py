"""srcgrad's benchmarks: one command times every workload of issues 9 and 10.

    python -m benchmarks            (or: python benchmarks/run.py)

needs the `test` extra (autograd, SciPy, scikit-learn) and optionally the
`bench` extra (`pip install -e ".[test,bench]"`: PyTorch 2.13.0, CPU build,
and JAX); a library that is missing is skipped with a note.

What is measured. Each workload computes one derivative (a gradient of a
scalar loss, a Jacobian, a Hessian) through every path where it makes
sense: srcgrad's `sg.grad` (fused generated code), an `@sg.function` on a
`GradientTape` (one compiled tape entry), the same body op by op on a tape,
autograd, JAX (eager; jit in the steady state; jit's first call, which
includes tracing and compilation), PyTorch eager, and a derivative written
by hand in NumPy, which is the reference (ratio 1) and the oracle: every
path must agree with it (`np.allclose`, tolerance stated per workload)
before it is timed, so a fast wrong answer cannot win. float64 everywhere.

How (benchmarks/harness.py): warm-up, then interleaved repeats (every path
of a workload in each round, in a shuffled order), the median per call;
peak memory of one call with tracemalloc for the NumPy-based paths.

The workloads (benchmarks/workloads/, one module each, with the details)
and the goals they check, from the issues:

  issue 10 (generated code as fast as hand-written)
    pendulum   1000-step damped pendulum on Python floats (math.sin):
               sg.grad <= 5x its own forward, >= 20x faster than autograd
    mlp        MLP 784-256-10, batch 256: <= 1.25x hand-written time,
               <= 1.5x hand-written peak memory
    rnn        tanh RNN, 50 steps, hidden 64, batch 16: <= 1.5x hand-written;
               the `H[t] = h` form within 1.2x of the list form (time, memory)
    smallops   200 small elementwise steps on a length-10 vector:
               >= 10x faster than autograd
    digits     the MLP of examples/digits.py on scikit-learn's digits (no goal)
    transform  first call of sg.grad on a 50-line function, fresh process:
               <= 50 ms
    overhead   tape overhead per call of a tiny @sg.function: <= 15 us
  issue 9 (compiled at every order, vectorised Jacobians)
    jacobian   200x200 Jacobian of tanh(A @ x) * x: <= 10x hand-written
    hessian    100x100 Hessian of chained Rosenbrock (scipy.optimize.rosen;
               hand-written = scipy.optimize.rosen_hess): <= 6x
  issue 18 (no cliffs in plain NumPy; sg.jit)
    constants  a 500-step loop with its constants as literals, globals,
               closure cells: within 1.2x of the literals
    elements   a loop reading x[i] (a chain energy) at 500 and 4000 steps:
               time per step within 1.5x
    gradbench  GradBench's 9 evals: geo-mean <= 1.0x JAX jit, <= 0.5x PyTorch
  (and checkpoint, arrays: sg.checkpointed's memory, other array libraries)

Output: a table per workload, the goals met or not, the machine and the
versions, and benchmarks/results.json with every number (all repeats), from
which `python -m benchmarks --from-json benchmarks/results.json --markdown`
prints the README's tables again.
"""
