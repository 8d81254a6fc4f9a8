"""Workload (issue 18, "no cliffs in plain NumPy"): a loop that reads one
entry of an array at each step, the style of samplers, simulations and
numpy-ml's layers written element by element. A chain energy on n
entries,

    E(x) = sum_i  k (x[i] - x[i-1])^2 + sin(x[i]) x[i-1],

differentiated in x. Each read x[i] in the loop has the cotangent
`unindex(g, x, i)`, an array of x's size: summed into bx at every step
(two such arrays per read), the reverse sweep cost O(n^2). srcgrad adds it
into bx in place where its in-place proof holds (`unindex_add`), O(1) per
read. The workload runs at two sizes; the time per step at the larger
should be about that at the smaller (the quadratic term grows past them:
at 10,000 steps the old reverse sweep took 147 ms, the new one 17 ms).
An element of an array parameter at an int index is also scalar code
(no unbroadcast), which is most of the gain at these sizes.

Reference: the adjoint written by hand (one reverse loop over floats).
"""
import math
import types

import numpy as np

from benchmarks import harness

NAME = "elements"
TITLE = "loop reading x[i] at each step: gradient cost per step at two sizes"

K = 0.7


def chain_energy(x):
    e = 0.0
    for i in range(1, x.shape[0]):
        d = x[i] - x[i - 1]
        e = e + K * d * d + np.sin(x[i]) * x[i - 1]
    return e


def grad_by_hand(x):
    """The adjoint of chain_energy by hand (the loop reads no state: no
    forward values to save)."""
    xs = x.tolist()
    bx = [0.0] * len(xs)
    for i in range(len(xs) - 1, 0, -1):
        d = xs[i] - xs[i - 1]
        bx[i] += 2.0 * K * d + math.cos(xs[i]) * xs[i - 1]
        bx[i - 1] += -2.0 * K * d + math.sin(xs[i])
    return np.array(bx)


SIZES = (500, 4000)


def run(bench):
    import srcgrad as sg

    sizes = (50, 200) if bench.settings.small else SIZES
    bench.params = {"n": list(sizes), "k": K}
    bench.tolerance(1e-10, 1e-12)
    xs = {n: np.random.default_rng(n).standard_normal(n) for n in sizes}
    small, large = sizes
    bench.reference("hand-written adjoint, n=%d" % large, lambda: grad_by_hand(xs[large]))
    grad = sg.grad(chain_energy)
    bench.path("srcgrad sg.grad, n=%d" % large, lambda: grad(xs[large]))
    bench.path("srcgrad sg.grad, n=%d" % small, lambda: grad(xs[small]), check=False,
               notes="compared per step with n=%d (targets)" % large)

    def make_sg_jit():
        jitted = sg.jit(sg.grad(chain_energy))
        return lambda: jitted(xs[large])
    harness.sg_jit_paths(bench, make_sg_jit, notes="the generated gradient compiled by Numba")

    autograd = harness.optional("autograd")
    if autograd is None:
        bench.skip("autograd", harness.unavailable("autograd"))
    else:
        import autograd.numpy as anp

        # the same function with autograd's numpy
        chain_ag = types.FunctionType(chain_energy.__code__, dict(chain_energy.__globals__, np=anp))
        ag = autograd.grad(chain_ag)
        bench.path("autograd", lambda: ag(xs[large]), notes="each read's cotangent an array of x's size")

    jax, jnp = harness.jax_modules()
    if jax is None:
        for name in ("JAX jit (steady state)", "JAX jit first call"):
            bench.skip(name, harness.unavailable("jax"))
    else:
        def make_jit():
            def chain_fori(x):
                def step(i, e):
                    d = x[i] - x[i - 1]
                    return e + K * d * d + jnp.sin(x[i]) * x[i - 1]
                return jax.lax.fori_loop(1, x.shape[0], step, 0.0 * x[0])
            g = jax.jit(jax.grad(chain_fori))
            jx = jnp.asarray(xs[large])
            return lambda: np.asarray(jax.block_until_ready(g(jx)))
        bench.jit_paths("JAX jit (steady state)", "JAX jit first call", make_jit,
                        notes="lax.fori_loop (jitting the Python loop unrolls it)")

    torch = harness.torch_module()
    if torch is None:
        bench.skip("PyTorch eager", harness.unavailable("torch"))
    else:
        tx = torch.tensor(xs[large], dtype=torch.float64, requires_grad=True)

        def torch_grad():
            e = torch.zeros((), dtype=torch.float64)
            for i in range(1, tx.shape[0]):
                d = tx[i] - tx[i - 1]
                e = e + K * d * d + torch.sin(tx[i]) * tx[i - 1]
            return torch.autograd.grad(e, tx)[0].numpy()
        bench.path("PyTorch eager", torch_grad, notes="0-d tensors read from a tensor")

    def per_step():
        r = bench.ratio("srcgrad sg.grad, n=%d" % large, "srcgrad sg.grad, n=%d" % small)
        return None if r is None else r * small / large
    bench.target("sg.grad time per step, n=%d / n=%d" % (large, small), per_step, "<=", 1.5, "issue 18")
