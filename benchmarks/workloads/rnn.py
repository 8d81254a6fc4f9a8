"""Workload 3 (issue 10): a tanh RNN written with a Python loop over time,
50 steps, hidden 64, batch 16, 8 input features; the gradient of the mean
squared error of the stacked hidden states with respect to Wx, Wh, b.

Two forms of the same loss, as NumPy users write it:
  list:  the states appended to a list, then `np.stack(hs)`;
  H[t]:  the states written into a preallocated array, `H[t] = h`
         (element assignment: srcgrad's compiler differentiates it,
         autograd and the op-by-op tape cannot; JAX spells it
         `H = H.at[t].set(h)`, PyTorch writes in place).
Both are timed and their peak memory (tracemalloc) measured. The
hand-written derivative is backpropagation through time written out.

Goals (issue 10): srcgrad's gradient <= 1.5x the hand-written one, and the
`H[t] = h` form within 1.2x of the list form in time and in memory.
"""
import numpy as np

from benchmarks import harness
from benchmarks.workloads._swap import with_numpy

NAME = "rnn"
TITLE = "tanh RNN, Python loop over time: list + np.stack, and H[t] = h"


def rnn_loss(Wx, Wh, b, xs, target):
    """Mean squared error of the stacked hidden states (list form)."""
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    hs = []
    for x in xs:
        h = np.tanh(x @ Wx + h @ Wh + b)
        hs.append(h)
    H = np.stack(hs)
    return np.mean((H - target) ** 2)


def rnn_loss_setitem(Wx, Wh, b, xs, target):
    """The same loss, the states written into a preallocated array."""
    T, batch = xs.shape[0], xs.shape[1]
    H = np.zeros((T, batch, Wh.shape[0]))
    h = np.zeros((batch, Wh.shape[0]))
    for t in range(T):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
        H[t] = h
    return np.mean((H - target) ** 2)


def hand_written(Wx, Wh, b, xs, target):
    """Backpropagation through time, by hand."""
    T, batch = xs.shape[:2]
    H = np.empty((T + 1, batch, Wh.shape[0]))   # H[0] = initial state, H[t + 1] = h_t
    H[0] = 0.0
    for t in range(T):
        H[t + 1] = np.tanh(xs[t] @ Wx + H[t] @ Wh + b)
    dH = (2.0 / target.size) * (H[1:] - target)
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    dh = np.zeros((batch, Wh.shape[0]))
    for t in range(T - 1, -1, -1):
        da = (dH[t] + dh) * (1.0 - H[t + 1] ** 2)
        dWx += xs[t].T @ da
        dWh += H[t].T @ da
        db += da.sum(axis=0)
        dh = da @ Wh.T
    return dWx, dWh, db


def make_data(steps, hidden, batch, features, seed=0):
    rng = np.random.default_rng(seed)
    params = [rng.normal(0, 0.3, (features, hidden)),
              rng.normal(0, 1.2 / np.sqrt(hidden), (hidden, hidden)),
              rng.normal(0, 0.1, hidden)]
    xs = rng.normal(size=(steps, batch, features))
    target = rng.normal(0, 0.5, (steps, batch, hidden))
    return params, xs, target


def sg_jit_case(cache=False, loss=rnn_loss_setitem):
    """A call of sg.jit of the H[t] = h gradient (or of `loss`'s) on the
    benchmark's data (its first call compiles; `cache`: with the on-disk
    cache)."""
    import srcgrad as sg
    params, xs, target = make_data(50, 64, 16, 8)
    jitted = sg.jit(sg.grad(loss, wrt=(0, 1, 2)), cache=cache)
    return lambda: jitted(*params, xs, target)


def run(bench):
    import srcgrad as sg

    sizes = (6, 8, 4, 3) if bench.settings.small else (50, 64, 16, 8)
    bench.params = dict(zip(("steps", "hidden", "batch", "features"), sizes))
    bench.tolerance(1e-7, 1e-10)
    params, xs, target = make_data(*sizes)
    args = (*params, xs, target)

    bench.reference("hand-written NumPy (BPTT)", lambda: hand_written(*args), memory=True)
    bench.path("plain forward, list (no gradient)", lambda: rnn_loss(*args), memory=True,
               check=False)
    grad_list = sg.grad(rnn_loss, wrt=(0, 1, 2))
    grad_set = sg.grad(rnn_loss_setitem, wrt=(0, 1, 2))
    bench.path("srcgrad sg.grad, list", lambda: grad_list(*args), memory=True)
    bench.path("srcgrad sg.grad, H[t]=h", lambda: grad_set(*args), memory=True)

    harness.sg_jit_paths(bench, lambda: sg_jit_case(loss=rnn_loss),
                         steady_name="srcgrad sg.jit (steady state), list",
                         first_name="srcgrad sg.jit first call, list",
                         notes="Numba; np.stack of the list by a twin")
    harness.sg_jit_paths(bench, sg_jit_case, steady_name="srcgrad sg.jit (steady state), H[t]=h",
                         first_name="srcgrad sg.jit first call, H[t]=h", notes="Numba")
    harness.sg_jit_cached_first(bench, __name__, name=harness.SG_JIT_CACHED + ", H[t]=h")

    variables = [sg.Variable(p) for p in params]

    def tape_of(fn):
        def run_tape():
            with sg.GradientTape() as tape:
                value = fn(*variables, xs, target)
            return tape.gradient(value, variables)
        return run_tape
    bench.path("srcgrad @sg.function on tape, list", tape_of(sg.function(rnn_loss)), memory=True)
    bench.path("srcgrad @sg.function on tape, H[t]=h", tape_of(sg.function(rnn_loss_setitem)),
               memory=True)
    bench.path("srcgrad op by op on tape, list", tape_of(rnn_loss), memory=True,
               notes="H[t]=h cannot run op by op (Tensors are immutable, as tf.Tensor)")

    autograd = harness.optional("autograd")
    if autograd is None:
        bench.skip("autograd, list", harness.unavailable("autograd"))
    else:
        import autograd.numpy as anp
        ag = autograd.grad(with_numpy(rnn_loss, anp), argnum=(0, 1, 2))
        bench.path("autograd, list", lambda: ag(*args), memory=True,
                   notes="same source; autograd cannot differentiate H[t]=h")

    jax, jnp = harness.jax_modules()
    if jax is None:
        for name in ("JAX eager, list", "JAX jit (steady state), list", "JAX jit first call, list",
                     "JAX jit (steady state), H.at[t].set"):
            bench.skip(name, harness.unavailable("jax"))
    else:
        j_args = [jnp.asarray(a) for a in args]
        j_eager = jax.grad(with_numpy(rnn_loss, jnp), argnums=(0, 1, 2))
        bench.path("JAX eager, list", lambda: jax.block_until_ready(j_eager(*j_args)),
                   notes="same source", costly_start=True)

        def make_jit():
            g = jax.jit(jax.grad(with_numpy(rnn_loss, jnp), argnums=(0, 1, 2)))
            return lambda: jax.block_until_ready(g(*j_args))
        bench.jit_paths("JAX jit (steady state), list", "JAX jit first call, list", make_jit,
                        notes="same source, loop unrolled")

        def rnn_loss_at(Wx, Wh, b, xs, target):
            T, batch = xs.shape[0], xs.shape[1]
            H = jnp.zeros((T, batch, Wh.shape[0]))
            h = jnp.zeros((batch, Wh.shape[0]))
            for t in range(T):
                h = jnp.tanh(xs[t] @ Wx + h @ Wh + b)
                H = H.at[t].set(h)
            return jnp.mean((H - target) ** 2)
        g_at = jax.jit(jax.grad(rnn_loss_at, argnums=(0, 1, 2)))
        bench.path("JAX jit (steady state), H.at[t].set",
                   lambda: jax.block_until_ready(g_at(*j_args)), notes="JAX's H[t] = h")

    torch = harness.torch_module()
    if torch is None:
        bench.skip("PyTorch eager, list", harness.unavailable("torch"))
        bench.skip("PyTorch eager, H[t]=h", harness.unavailable("torch"))
    else:
        tp = [torch.tensor(p, requires_grad=True) for p in params]
        txs, tt = torch.tensor(xs), torch.tensor(target)

        def torch_list():
            Wx, Wh, b = tp
            h = torch.zeros(txs.shape[1], Wh.shape[0], dtype=torch.float64)
            hs = []
            for x in txs:
                h = torch.tanh(x @ Wx + h @ Wh + b)
                hs.append(h)
            value = torch.mean((torch.stack(hs) - tt) ** 2)
            return torch.autograd.grad(value, tp)

        def torch_setitem():
            Wx, Wh, b = tp
            H = torch.zeros(txs.shape[0], txs.shape[1], Wh.shape[0], dtype=torch.float64)
            h = torch.zeros(txs.shape[1], Wh.shape[0], dtype=torch.float64)
            for t in range(txs.shape[0]):
                h = torch.tanh(txs[t] @ Wx + h @ Wh + b)
                H[t] = h
            value = torch.mean((H - tt) ** 2)
            return torch.autograd.grad(value, tp)
        bench.path("PyTorch eager, list", torch_list)
        bench.path("PyTorch eager, H[t]=h", torch_setitem, notes="in-place copy into H")

    ref = "hand-written NumPy (BPTT)"
    bench.target("sg.grad list / hand-written time",
                 lambda: bench.ratio("srcgrad sg.grad, list", ref), "<=", 1.5, "issue 10")
    bench.target("tape list / hand-written time",
                 lambda: bench.ratio("srcgrad @sg.function on tape, list", ref), "<=", 1.5,
                 "issue 10")
    for short, form in (("sg.grad", "srcgrad sg.grad, "),
                        ("tape", "srcgrad @sg.function on tape, ")):
        bench.target("%s H[t]=h / list, time" % short,
                     lambda form=form: bench.ratio(form + "H[t]=h", form + "list"),
                     "<=", 1.2, "issue 10")
        bench.target("%s H[t]=h / list, peak memory" % short,
                     lambda form=form: bench.memory_ratio(form + "H[t]=h", form + "list"),
                     "<=", 1.2, "issue 10")
