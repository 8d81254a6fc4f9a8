"""The paths shared by the two MLP workloads (`mlp` and `digits`).

A one-hidden-layer tanh MLP with a softmax cross-entropy loss (plus an
optional L2 term on the weights), its gradient with respect to the four
parameters (W1, b1, W2, b2), through every path, checked against the
backward pass written by hand below, and the peak memory (tracemalloc) of
one gradient for the NumPy-based paths.
"""
import numpy as np

from benchmarks import harness
from benchmarks.workloads._swap import with_numpy


def hand_written(W1, b1, W2, b2, x, y, l2=0.0):
    """The gradient of mean softmax cross-entropy (+ l2 * (|W1|^2 + |W2|^2))
    of tanh(x @ W1 + b1) @ W2 + b2, by hand."""
    n = x.shape[0]
    h = np.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    dlogits = (p * y.sum(axis=1, keepdims=True) - y) / n
    dW2 = h.T @ dlogits
    db2 = dlogits.sum(axis=0)
    dpre = (dlogits @ W2.T) * (1 - h * h)
    dW1 = x.T @ dpre
    db1 = dpre.sum(axis=0)
    if l2:
        dW1 += 2 * l2 * W1
        dW2 += 2 * l2 * W2
    return dW1, db1, dW2, db2


def run_paths(bench, loss, params, x, y, l2):
    """Every path for `loss(W1, b1, W2, b2, x, y_onehot)` (a plain NumPy
    function, or an @sg.function whose body is used for the other paths)."""
    import srcgrad as sg

    body = getattr(loss, "python_function", loss)
    compiled = loss if hasattr(loss, "python_function") else sg.function(loss)
    bench.reference("hand-written NumPy", lambda: hand_written(*params, x, y, l2), memory=True)
    bench.path("plain forward (no gradient)", lambda: body(*params, x, y), memory=True,
               check=False, notes="the loss alone")

    grad = sg.grad(body, wrt=(0, 1, 2, 3))
    bench.path("srcgrad sg.grad", lambda: grad(*params, x, y), memory=True)

    variables = [sg.Variable(p) for p in params]

    def tape_of(fn):
        def run():
            with sg.GradientTape() as tape:
                value = fn(*variables, x, y)
            return tape.gradient(value, variables)
        return run
    bench.path("srcgrad @sg.function on tape", tape_of(compiled), memory=True)
    bench.path("srcgrad op by op on tape", tape_of(body), memory=True)

    autograd = harness.optional("autograd")
    if autograd is None:
        bench.skip("autograd", harness.unavailable("autograd"))
    else:
        import autograd.numpy as anp
        ag = autograd.grad(with_numpy(body, anp), argnum=(0, 1, 2, 3))
        bench.path("autograd", lambda: ag(*params, x, y), memory=True, notes="same source")

    jax, jnp = harness.jax_modules()
    if jax is None:
        for name in ("JAX eager", "JAX jit (steady state)", "JAX jit first call"):
            bench.skip(name, harness.unavailable("jax"))
    else:
        j_args = [jnp.asarray(a) for a in list(params) + [x, y]]
        j_eager = jax.grad(with_numpy(body, jnp), argnums=(0, 1, 2, 3))
        bench.path("JAX eager", lambda: jax.block_until_ready(j_eager(*j_args)),
                   notes="same source", costly_start=True)

        def make_jit():
            g = jax.jit(jax.grad(with_numpy(body, jnp), argnums=(0, 1, 2, 3)))
            return lambda: jax.block_until_ready(g(*j_args))
        bench.jit_paths("JAX jit (steady state)", "JAX jit first call", make_jit,
                        notes="same source")

    torch = harness.torch_module()
    if torch is None:
        bench.skip("PyTorch eager", harness.unavailable("torch"))
    else:
        t_params = [torch.tensor(p, requires_grad=True) for p in params]
        t_x, t_y = torch.tensor(x), torch.tensor(y)

        def torch_grad():
            W1, b1, W2, b2 = t_params
            logits = torch.tanh(t_x @ W1 + b1) @ W2 + b2
            value = -(t_y * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
            if l2:
                value = value + l2 * ((W1 * W1).sum() + (W2 * W2).sum())
            return torch.autograd.grad(value, t_params)
        bench.path("PyTorch eager", torch_grad, notes="torch.log_softmax")
