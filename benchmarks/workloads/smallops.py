"""Workload 4 (issue 10): a chain of 200 small elementwise steps on a
length-10 vector, where the cost is per operation, not per element:

    for i in range(200):  x = x + 0.01 * np.sin(x * w)
    loss = np.sum(x)

the gradient with respect to x and w (both length 10). The hand-written
derivative keeps the 200 states and runs the reverse loop by hand. Goal
(issue 10): srcgrad >= 10x faster than autograd.
"""
import numpy as np

from benchmarks import harness
from benchmarks.workloads._swap import with_numpy

NAME = "smallops"
TITLE = "200 small elementwise steps on a length-10 vector"

STEPS = 200


def make_chain(steps):
    def chain(x, w):
        for i in range(steps):
            x = x + 0.01 * np.sin(x * w)
        return np.sum(x)
    return chain


def make_hand_written(steps):
    def grad_by_hand(x, w):
        xs = []
        for i in range(steps):
            xs.append(x)
            x = x + 0.01 * np.sin(x * w)
        bx = np.ones_like(x)
        bw = np.zeros_like(w)
        for xk in reversed(xs):
            c = 0.01 * np.cos(xk * w) * bx
            bw += c * xk
            bx = bx + c * w
        return bx, bw
    return grad_by_hand


def sg_jit_case(cache=False):
    """A call of sg.jit of the gradient on the benchmark's data (its first
    call compiles; `cache`: with the on-disk cache)."""
    import srcgrad as sg
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=10), rng.normal(size=10)
    jitted = sg.jit(sg.grad(make_chain(STEPS), wrt=(0, 1)), cache=cache)
    return lambda: jitted(x, w)


def run(bench):
    import srcgrad as sg

    steps = 20 if bench.settings.small else STEPS
    size = 10
    bench.params = {"steps": steps, "size": size}
    bench.tolerance(1e-9, 1e-12)
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=size), rng.normal(size=size)
    chain = make_chain(steps)
    by_hand = make_hand_written(steps)

    bench.reference("hand-written NumPy", lambda: by_hand(x, w))
    bench.path("plain forward (no gradient)", lambda: chain(x, w), check=False)
    grad = sg.grad(chain, wrt=(0, 1))
    bench.path("srcgrad sg.grad", lambda: grad(x, w))

    harness.sg_jit_paths(bench, sg_jit_case, notes="the generated gradient compiled by Numba")
    harness.sg_jit_cached_first(bench, __name__)
    compiled = sg.function(chain)
    vx, vw = sg.Variable(x), sg.Variable(w)

    def tape_of(fn):
        def run_tape():
            with sg.GradientTape() as tape:
                value = fn(vx, vw)
            return tape.gradient(value, [vx, vw])
        return run_tape
    bench.path("srcgrad @sg.function on tape", tape_of(compiled))
    harness.sg_jit_paths(bench, lambda: tape_of(sg.function(jit=True)(chain)),
                         notes="the split sweeps compiled by Numba", steady_name=harness.TAPE_JIT_STEADY,
                         first_name=harness.TAPE_JIT_FIRST)
    bench.path("srcgrad op by op on tape", tape_of(chain))

    autograd = harness.optional("autograd")
    if autograd is None:
        bench.skip("autograd", harness.unavailable("autograd"))
    else:
        import autograd.numpy as anp
        ag = autograd.grad(with_numpy(chain, anp), argnum=(0, 1))
        bench.path("autograd", lambda: ag(x, w), notes="same source")

    jax, jnp = harness.jax_modules()
    if jax is None:
        for name in ("JAX eager", "JAX jit (steady state)", "JAX jit first call"):
            bench.skip(name, harness.unavailable("jax"))
    else:
        jx, jw = jnp.asarray(x), jnp.asarray(w)
        j_eager = jax.grad(with_numpy(chain, jnp), argnums=(0, 1))
        bench.path("JAX eager", lambda: jax.block_until_ready(j_eager(jx, jw)), notes="same source",
                   costly_start=True)

        def make_jit():
            g = jax.jit(jax.grad(with_numpy(chain, jnp), argnums=(0, 1)))
            return lambda: jax.block_until_ready(g(jx, jw))
        bench.jit_paths("JAX jit (steady state)", "JAX jit first call", make_jit,
                        notes="same source, loop unrolled")

    torch = harness.torch_module()
    if torch is None:
        bench.skip("PyTorch eager", harness.unavailable("torch"))
    else:
        tx = torch.tensor(x, requires_grad=True)
        tw = torch.tensor(w, requires_grad=True)

        def torch_grad():
            y = tx
            for i in range(steps):
                y = y + 0.01 * torch.sin(y * tw)
            return torch.autograd.grad(y.sum(), (tx, tw))
        bench.path("PyTorch eager", torch_grad)

    bench.target("sg.grad speed-up over autograd",
                 lambda: bench.ratio("autograd", "srcgrad sg.grad"), ">=", 10, "issue 10")
    bench.target("tape speed-up over autograd",
                 lambda: bench.ratio("autograd", "srcgrad @sg.function on tape"), ">=", 10,
                 "issue 10")
