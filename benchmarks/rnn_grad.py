"""Time one gradient of an RNN loss written with a Python loop.

The loss is a vanilla tanh RNN over T time steps, written the way NumPy
users write it: a `for` loop over time, the hidden states collected in a
list and stacked (or written into a preallocated array by element
assignment, `H[t] = h`, which only srcgrad's compiler differentiates), and a
squared-error readout. Side by side, in one process:

  (a) compiled, list   `@sg.function` of the list version inside a tape
  (b) compiled, H[t]=  the element-assignment version inside a tape
  (c) sg.grad, list    the fused compiled gradient, no tape
  (d) op by op, list   the list version on Variables inside a tape
  (e) autograd         the list version through autograd.numpy
  (f) torch / jax      the same loop in PyTorch (eager) and JAX (jit), when installed

Every gradient is first checked against the compiled one with np.allclose.
Each time is the best of 5 repeats of N loops (timeit's autorange), and the
peak memory of one gradient is measured with tracemalloc for the NumPy paths.

    python benchmarks/rnn_grad.py [--steps 50] [--hidden 32] [--batch 16]
"""
import argparse
import sys
import timeit
import tracemalloc

import numpy as np

import srcgrad as sg


def rnn_loss(Wx, Wh, b, xs, target):
    """Mean squared error of the stacked hidden states (list version)."""
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    hs = []
    for x in xs:
        h = np.tanh(x @ Wx + h @ Wh + b)
        hs.append(h)
    H = np.stack(hs)
    return np.mean((H - target) ** 2)


def rnn_loss_setitem(Wx, Wh, b, xs, target):
    """The same loss, states written into a preallocated array."""
    T, batch = xs.shape[0], xs.shape[1]
    H = np.zeros((T, batch, Wh.shape[0]))
    h = np.zeros((batch, Wh.shape[0]))
    for t in range(T):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
        H[t] = h
    return np.mean((H - target) ** 2)


def make_data(steps, hidden, batch, features=8, seed=0):
    rng = np.random.default_rng(seed)
    params = [rng.normal(0, 0.3, (features, hidden)), rng.normal(0, 0.3, (hidden, hidden)),
              np.zeros(hidden)]
    xs = rng.normal(size=(steps, batch, features))
    target = rng.normal(0, 0.5, (steps, batch, hidden))
    return params, xs, target


def build_methods(params, xs, target):
    variables = [sg.Variable(p) for p in params]
    compiled, compiled_set = sg.function(rnn_loss), sg.function(rnn_loss_setitem)
    grad = sg.grad(rnn_loss, wrt=(0, 1, 2))
    methods = {}

    def tape_of(fn):
        def run():
            with sg.GradientTape() as tape:
                loss = fn(*variables, xs, target)
            return [g.numpy() for g in tape.gradient(loss, variables)]
        return run
    methods["(a) compiled, list"] = tape_of(compiled)
    methods["(b) compiled, H[t]="] = tape_of(compiled_set)
    methods["(c) sg.grad, list"] = lambda: list(grad(*params, xs, target))
    methods["(d) op by op, list"] = tape_of(rnn_loss)
    try:
        import autograd
        import autograd.numpy as anp
        g = dict(rnn_loss.__globals__)
        g["np"] = anp
        ag_loss = type(rnn_loss)(rnn_loss.__code__, g)
        ag_grad = autograd.grad(ag_loss, (0, 1, 2))
        methods["(e) autograd"] = lambda: list(ag_grad(*params, xs, target))
    except ImportError:
        pass
    try:
        import torch
        tp = [torch.tensor(p, requires_grad=True) for p in params]
        txs, tt = torch.tensor(xs), torch.tensor(target)

        def torch_grad():
            Wx, Wh, b = tp
            h = torch.zeros(xs.shape[1], params[1].shape[0], dtype=torch.float64)
            hs = []
            for x in txs:
                h = torch.tanh(x @ Wx + h @ Wh + b)
                hs.append(h)
            loss = torch.mean((torch.stack(hs) - tt) ** 2)
            return [g.numpy() for g in torch.autograd.grad(loss, tp)]
        methods["(f) torch"] = torch_grad
    except ImportError:
        pass
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp

        def jax_loss(Wx, Wh, b, xs, target):
            h = jnp.zeros((xs.shape[1], Wh.shape[0]))
            hs = []
            for t in range(xs.shape[0]):
                h = jnp.tanh(xs[t] @ Wx + h @ Wh + b)
                hs.append(h)
            return jnp.mean((jnp.stack(hs) - target) ** 2)
        jgrad = jax.jit(jax.grad(jax_loss, (0, 1, 2)))
        jargs = [jnp.asarray(a) for a in params + [xs, target]]

        def jax_grad():
            return [np.asarray(g) for g in jax.block_until_ready(jgrad(*jargs))]
        methods["(f) jax (jit)"] = jax_grad
    except ImportError:
        pass
    return methods


def best_time(fn, repeat, min_time):
    timer = timeit.Timer(fn)
    number = 1
    while True:
        if timer.timeit(number) >= min_time:
            break
        number *= 2
    return min(timer.repeat(repeat, number)) / number, number


def peak_memory(fn):
    fn()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.2)
    args = parser.parse_args(argv)
    params, xs, target = make_data(args.steps, args.hidden, args.batch)
    methods = build_methods(params, xs, target)
    reference = methods["(c) sg.grad, list"]()
    for name, fn in methods.items():
        for g, r in zip(fn(), reference):
            if not np.allclose(g, r, rtol=1e-8, atol=1e-10):
                print("gradient of %s disagrees with sg.grad" % name)
                return 1
    print("gradient of a tanh RNN loss (T=%d, hidden %d, batch %d, float64), best of %d"
          % (args.steps, args.hidden, args.batch, args.repeat))
    print("all gradients agree (np.allclose)\n")
    print("%-22s | %10s %8s %7s | %10s" % ("method", "time", "vs (a)", "N", "peak mem"))
    print("-" * 68)
    ref = None
    for name, fn in methods.items():
        t, n = best_time(fn, args.repeat, args.min_time)
        ref = ref or t
        mem = "%8.2f MB" % (peak_memory(fn) / 2 ** 20) if not name.startswith("(f)") else "       n/a"
        print("%-22s | %8.2f ms %7.2fx %7d | %s" % (name, t * 1e3, t / ref, n, mem))
    return 0


if __name__ == "__main__":
    sys.exit(main())
