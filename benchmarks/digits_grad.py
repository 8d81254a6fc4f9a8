"""Time one gradient of the digits MLP loss through each of srcgrad's paths.

Side by side, in one process, for a minibatch of 64 and for the full
training set (1347 images):

  (a) compiled   `@sg.function` called inside a `sg.GradientTape`
  (b) op-by-op   the same body, undecorated, on Variables inside a tape
  (c) sg.grad    the compiled gradient function, no tape
  (d) autograd   the same maths through `autograd.numpy`
  (e) numpy fwd  the plain NumPy forward pass alone (the floor)
  (f) torch/jax  when installed (skipped otherwise)

and the peak memory of one gradient on the full training set (tracemalloc)
for the NumPy-based paths.

Before timing, every gradient is checked against autograd's with
`np.allclose`, so a fast wrong answer cannot win. Each time is the best of
5 repeats of N loops (N chosen by `timeit.Timer.autorange`).

    python benchmarks/digits_grad.py [--repeat 5] [--min-time 0.2]
"""
import argparse
import os
import sys
import timeit
import tracemalloc

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "examples"))
try:
    import srcgrad as sg
except ImportError:  # running from a source checkout without installing
    sys.path.insert(0, ROOT)
    import srcgrad as sg

import digits  # noqa: E402  (examples/digits.py: the loss being timed)

HIDDEN = digits.HIDDEN
L2 = digits.L2
loss_compiled = digits.loss_fn                 # @sg.function
loss_body = digits.loss_fn.python_function      # the same body, undecorated
grad_compiled = sg.grad(loss_compiled, wrt=(0, 1, 2, 3))


def make_data(seed=0):
    digits = load_digits()
    x = digits.data / 16.0
    x_train, _, y_train, _ = train_test_split(
        x, digits.target, test_size=0.25, random_state=0, stratify=digits.target)
    onehot = np.eye(10)[y_train]
    rng = np.random.default_rng(seed)
    params = [rng.normal(0.0, 1.0 / np.sqrt(x.shape[1]), (x.shape[1], HIDDEN)),
              rng.normal(0.0, 0.1, HIDDEN),
              rng.normal(0.0, 1.0 / np.sqrt(HIDDEN), (HIDDEN, 10)),
              rng.normal(0.0, 0.1, 10)]
    return params, x_train, onehot


def build_methods(params, x, y):
    """name -> zero-argument callable returning the 4 gradients (or None)."""
    variables = [sg.Variable(p) for p in params]
    methods = {}

    def compiled_tape():
        with sg.GradientTape() as tape:
            loss = loss_compiled(*variables, x, y)
        return tape.gradient(loss, variables)

    def op_by_op_tape():
        with sg.GradientTape() as tape:
            loss = loss_body(*variables, x, y)
        return tape.gradient(loss, variables)

    def sg_grad():
        return grad_compiled(*params, x, y)

    methods["(a) compiled tape"] = compiled_tape
    methods["(b) op-by-op tape"] = op_by_op_tape
    methods["(c) sg.grad"] = sg_grad

    try:
        import autograd
        import autograd.numpy as anp

        def loss_anp(W1, b1, W2, b2, x, y_onehot):
            h = anp.tanh(x @ W1 + b1)
            logits = h @ W2 + b2
            shifted = logits - anp.max(logits, axis=1, keepdims=True)
            log_norm = anp.log(anp.sum(anp.exp(shifted), axis=1, keepdims=True))
            nll = -anp.mean(anp.sum(y_onehot * (shifted - log_norm), axis=1))
            return nll + L2 * (anp.sum(W1 * W1) + anp.sum(W2 * W2))

        ag_grad = autograd.grad(loss_anp, argnum=(0, 1, 2, 3))
        methods["(d) autograd"] = lambda: ag_grad(*params, x, y)
    except ImportError:
        pass

    methods["(e) numpy forward only"] = lambda: (loss_body(*params, x, y), None)[1]

    try:
        import torch

        torch.set_num_threads(max(1, os.cpu_count() or 1))
        t_params = [torch.tensor(p, requires_grad=True) for p in params]
        t_x, t_y = torch.tensor(x), torch.tensor(y)

        def torch_grad():
            W1, b1, W2, b2 = t_params
            logits = torch.tanh(t_x @ W1 + b1) @ W2 + b2
            log_probs = torch.log_softmax(logits, dim=1)
            loss = -(t_y * log_probs).sum(dim=1).mean() + L2 * ((W1 * W1).sum() + (W2 * W2).sum())
            grads = torch.autograd.grad(loss, t_params)
            return [g.numpy() for g in grads]

        methods["(f) torch"] = torch_grad
    except ImportError:
        pass

    try:
        import jax

        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp

        def loss_jax(W1, b1, W2, b2, x, y_onehot):
            logits = jnp.tanh(x @ W1 + b1) @ W2 + b2
            log_probs = jax.nn.log_softmax(logits, axis=1)
            nll = -jnp.mean(jnp.sum(y_onehot * log_probs, axis=1))
            return nll + L2 * (jnp.sum(W1 * W1) + jnp.sum(W2 * W2))

        jax_grad = jax.jit(jax.grad(loss_jax, argnums=(0, 1, 2, 3)))
        j_args = [jnp.asarray(a) for a in params + [x, y]]

        def jax_run():
            return [np.asarray(g) for g in jax.block_until_ready(jax_grad(*j_args))]

        methods["(f) jax (jit)"] = jax_run
    except ImportError:
        pass
    return methods


def reference_grads(params, x, y):
    """Gradients by a hand-written backward pass (independent of any AD)."""
    W1, b1, W2, b2 = params
    n = x.shape[0]
    h = np.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    dlogits = (p * y.sum(axis=1, keepdims=True) - y) / n
    dW2 = h.T @ dlogits + 2 * L2 * W2
    db2 = dlogits.sum(axis=0)
    dpre = (dlogits @ W2.T) * (1 - h * h)
    dW1 = x.T @ dpre + 2 * L2 * W1
    db1 = dpre.sum(axis=0)
    return [dW1, db1, dW2, db2]


def verify(methods, params, x, y):
    expected = reference_grads(params, x, y)
    bad = []
    for name, fn in methods.items():
        grads = fn()
        if grads is None:
            continue
        grads = [np.asarray(g) for g in grads]
        ok = len(grads) == 4 and all(
            g.shape == e.shape and np.allclose(g, e, rtol=1e-7, atol=1e-10)
            for g, e in zip(grads, expected))
        if not ok:
            bad.append(name)
    return bad


def best_time(fn, repeat, min_time):
    timer = timeit.Timer(fn)
    number = 1
    while True:
        elapsed = timer.timeit(number)
        if elapsed >= min_time:
            break
        number = max(number * 2, int(number * min_time / max(elapsed, 1e-9) * 1.1))
    return min(timer.repeat(repeat=repeat, number=number)) / number, number


def peak_memory(fn):
    """Peak bytes allocated (tracemalloc; NumPy reports its buffers to it)
    during one call of `fn`, above what was allocated before it."""
    fn()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def fmt(seconds):
    if seconds < 1e-3:
        return "%7.1f us" % (seconds * 1e6)
    return "%7.2f ms" % (seconds * 1e3)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.2,
                        help="seconds per repeat used to choose the loop count N")
    args = parser.parse_args(argv)

    params, x_train, onehot = make_data()
    settings = [("batch 64", x_train[:64], onehot[:64]),
                ("full %d" % len(x_train), x_train, onehot)]
    results = {}
    for label, x, y in settings:
        methods = build_methods(params, x, y)
        bad = verify(methods, params, x, y)
        if bad:
            print("gradients disagree with the hand-written backward pass (%s): %s"
                  % (label, ", ".join(bad)))
            return 1
        for name, fn in methods.items():
            results[name, label] = best_time(fn, args.repeat, args.min_time)

    names = list(dict.fromkeys(name for name, _ in results))
    print("gradient of the digits MLP loss (%d-%d-10 tanh, float64), best of %d"
          % (x_train.shape[1], HIDDEN, args.repeat))
    print("all gradients agree with a hand-written backward pass (np.allclose)\n")
    header = "%-24s" % "method"
    for label, _, _ in settings:
        header += " | %-10s %-9s %-9s" % (label, "vs (a)", "N")
    print(header)
    print("-" * len(header))
    for name in names:
        row = "%-24s" % name
        for label, _, _ in settings:
            t, number = results[name, label]
            ref = results["(a) compiled tape", label][0]
            row += " | %s %7.2fx %9d" % (fmt(t), t / ref, number)
        print(row)
    # Peak memory of one gradient on the full training set. Only for the
    # NumPy-based paths: torch and JAX allocate outside tracemalloc's view.
    label, x, y = settings[-1]
    methods = build_methods(params, x, y)
    print("\npeak memory of one gradient, %s (tracemalloc)" % label)
    ref = None
    for name in ("(a) compiled tape", "(b) op-by-op tape", "(c) sg.grad", "(d) autograd",
                 "(e) numpy forward only"):
        if name in methods:
            peak = peak_memory(methods[name])
            ref = ref or peak
            print("%-24s | %8.2f MB %7.2fx" % (name, peak / 2 ** 20, peak / ref))
    missing = [lib for lib in ("torch", "jax") if not any(lib in n for n in names)]
    if missing:
        print("\n(not installed, skipped: %s)" % ", ".join(missing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
