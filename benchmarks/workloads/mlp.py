"""Workload 2 (issue 10): the gradient of a 784-256-10 tanh MLP's softmax
cross-entropy on a random batch of 256 (float64), with respect to
W1, b1, W2, b2.

The hand-written derivative is the textbook backward pass
(`_softmax_mlp.hand_written`). Goals (issue 10): srcgrad's gradient
<= 1.25x the hand-written time, and the peak memory of one gradient
(tracemalloc) <= 1.5x the hand-written one's. autograd and JAX run the same
source (`np` rebound), PyTorch the same maths with `torch.log_softmax`.
"""
import numpy as np

from benchmarks import harness
from benchmarks.workloads import _softmax_mlp

NAME = "mlp"
TITLE = "MLP 784-256-10 tanh, softmax cross-entropy, batch 256, random data"


def mlp_loss(W1, b1, W2, b2, x, y_onehot):
    """Mean softmax cross-entropy of a tanh MLP on a batch."""
    h = np.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_norm = np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(y_onehot * (shifted - log_norm), axis=1))


def make_data(n_in, n_hidden, n_out, batch, seed=0):
    rng = np.random.default_rng(seed)
    params = [rng.normal(0, 1 / np.sqrt(n_in), (n_in, n_hidden)), rng.normal(0, 0.1, n_hidden),
              rng.normal(0, 1 / np.sqrt(n_hidden), (n_hidden, n_out)), rng.normal(0, 0.1, n_out)]
    x = rng.normal(size=(batch, n_in))
    y = np.eye(n_out)[rng.integers(0, n_out, batch)]
    return params, x, y


def sg_jit_case(cache=False):
    """A call of sg.jit of the gradient on the benchmark's data (its first
    call compiles; `cache`: with the on-disk cache)."""
    import srcgrad as sg
    params, x, y = make_data(784, 256, 10, 256)
    jitted = sg.jit(sg.grad(mlp_loss, wrt=(0, 1, 2, 3)), cache=cache)
    return lambda: jitted(*params, x, y)


def run(bench):
    sizes = (20, 16, 10, 8) if bench.settings.small else (784, 256, 10, 256)
    bench.params = dict(zip(("inputs", "hidden", "classes", "batch"), sizes))
    bench.tolerance(1e-7, 1e-10)
    params, x, y = make_data(*sizes)
    _softmax_mlp.run_paths(bench, mlp_loss, params, x, y, 0.0)

    harness.sg_jit_paths(bench, sg_jit_case, notes="the generated gradient compiled by Numba")
    harness.sg_jit_cached_first(bench, __name__)
    for short, path in (("sg.grad", "srcgrad sg.grad"), ("tape", "srcgrad @sg.function on tape")):
        bench.target("%s / hand-written time" % short,
                     lambda path=path: bench.ratio(path, "hand-written NumPy"), "<=", 1.25,
                     "issue 10")
        bench.target("%s / hand-written peak memory" % short,
                     lambda path=path: bench.memory_ratio(path, "hand-written NumPy"), "<=", 1.5,
                     "issue 10")
