"""Workload 8 (issue 9): the 200x200 Jacobian of f(x) = tanh(A @ x) * x.

The hand-written Jacobian, with t = tanh(A @ x):

    J = (1 - t**2)[:, None] * A * x[:, None] + diag(t)

(float64, A and x standard normal / sqrt(n) scaled). Paths: srcgrad's
`GradientTape.jacobian` (vectorised: one reverse sweep on the stack of the
identity's rows) over the `@sg.function` (one tape entry) and op by op;
`sg.jacobian` (which picks forward or reverse mode from the sizes);
`autograd.jacobian`; JAX `jacrev` and `jacfwd`, eager and jitted (jit
first call, i.e. compile time, separately); PyTorch `torch.func.jacrev`
and `jacfwd` (eager, vmap-vectorised).

Goal (issue 9): srcgrad <= 10x the hand-written Jacobian (issue 9 measured
161x before vectorising; JAX jit 4.7x).
"""
import numpy as np

from benchmarks import harness
from benchmarks.workloads._swap import with_numpy

NAME = "jacobian"
TITLE = "200x200 Jacobian of tanh(A @ x) * x"


def f(A, x):
    return np.tanh(A @ x) * x


def hand_written(A, x):
    t = np.tanh(A @ x)
    J = (1.0 - t * t)[:, None] * A * x[:, None]
    J[np.diag_indices_from(J)] += t
    return J


def run(bench):
    import srcgrad as sg

    n = 12 if bench.settings.small else 200
    bench.params = {"n": n}
    bench.tolerance(1e-9, 1e-12)
    rng = np.random.default_rng(0)
    A = rng.normal(size=(n, n)) / np.sqrt(n)
    x = rng.normal(size=n)

    bench.reference("hand-written NumPy", lambda: hand_written(A, x))
    bench.path("plain forward (no derivative)", lambda: f(A, x), check=False)

    compiled = sg.function(f)
    v = sg.Variable(x)

    def tape_of(fn):
        def run_tape():
            with sg.GradientTape() as tape:
                y = fn(A, v)
            return tape.jacobian(y, v)
        return run_tape
    bench.path("srcgrad tape.jacobian, @sg.function", tape_of(compiled), notes="vectorised")
    bench.path("srcgrad tape.jacobian, op by op", tape_of(f), notes="vectorised")
    jac = sg.jacobian(f, wrt=1)
    bench.path("srcgrad sg.jacobian", lambda: jac(A, x))
    harness.sg_jit_reason(bench, lambda: (lambda jitted: lambda: jitted(A, x))(sg.jit(sg.jacobian(f, wrt=1))),
                          name="srcgrad sg.jit(sg.jacobian)")

    autograd = harness.optional("autograd")
    if autograd is None:
        bench.skip("autograd.jacobian", harness.unavailable("autograd"))
    else:
        import autograd.numpy as anp
        f_ag = with_numpy(f, anp)
        ag = autograd.jacobian(lambda x: f_ag(A, x))
        bench.path("autograd.jacobian", lambda: ag(x), notes="one VJP per row")

    jax, jnp = harness.jax_modules()
    if jax is None:
        bench.skip("JAX", harness.unavailable("jax"))
    else:
        jA, jx = jnp.asarray(A), jnp.asarray(x)
        for mode in ("jacrev", "jacfwd"):
            transform = getattr(jax, mode)
            eager = transform(with_numpy(f, jnp), argnums=1)
            bench.path("JAX %s eager" % mode,
                       lambda eager=eager: jax.block_until_ready(eager(jA, jx)),
                       costly_start=True)

            def make_jit(transform=transform):
                g = jax.jit(transform(with_numpy(f, jnp), argnums=1))
                return lambda: jax.block_until_ready(g(jA, jx))
            bench.jit_paths("JAX %s jit (steady state)" % mode, "JAX %s jit first call" % mode,
                            make_jit)

    torch = harness.torch_module()
    if torch is None:
        bench.skip("PyTorch torch.func", harness.unavailable("torch"))
    else:
        import torch.func
        tA, tx = torch.tensor(A), torch.tensor(x)

        def f_torch(x):
            return torch.tanh(tA @ x) * x
        for mode in ("jacrev", "jacfwd"):
            transform = getattr(torch.func, mode)(f_torch)
            bench.path("PyTorch torch.func.%s" % mode, lambda transform=transform: transform(tx),
                       notes="eager, vmap")

    ref = "hand-written NumPy"
    for path in ("srcgrad tape.jacobian, @sg.function", "srcgrad sg.jacobian"):
        bench.target("%s / hand-written" % path.replace("srcgrad ", ""),
                     lambda path=path: bench.ratio(path, ref), "<=", 10, "issue 9")

    def to_jax():       # (JAX's faster mode in this run: its jit steady state)
        jax_times = [bench.median("JAX %s jit (steady state)" % mode) for mode in ("jacrev", "jacfwd")]
        jax_times = [t for t in jax_times if t is not None]
        mine = bench.median("srcgrad sg.jacobian")
        return mine / min(jax_times) if jax_times and mine is not None else None
    bench.target("sg.jacobian / JAX jit (the faster of jacrev and jacfwd)", to_jax, "<=", 1.5, "issue 18")
