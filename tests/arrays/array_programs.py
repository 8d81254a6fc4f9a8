"""The programs tests/arrays/ differentiates on NumPy, Dask and CuPy arrays:
one per supported construct (module-level defs: srcgrad compiles from
source)."""
import numpy as np


def common_cases(rng, rows):
    """{name: (program, arguments, wrt)} for the programs every array
    library is tested on: data drawn from `rng`, `rows` samples for the
    regression and MLP data."""
    X = rng.normal(size=(rows, 3))
    y = (rng.random(rows) > 0.5).astype(float)
    return {
        "elementwise": (elementwise, (rng.normal(size=(4, 3)),), (0,)),
        "exp_log_tanh": (exp_log_tanh, (rng.normal(size=(5, 2)),), (0,)),
        "broadcast_row": (broadcast_row, (rng.normal(size=(4, 3)), rng.normal(size=3)), (0, 1)),
        "broadcast_col": (broadcast_col, (rng.normal(size=(4, 3)), rng.normal(size=(4, 1))), (0, 1)),
        "reductions": (reductions, (rng.normal(size=(4, 3)),), (0,)),
        "sum_keepdims": (sum_keepdims, (rng.normal(size=(4, 3)),), (0,)),
        "matmul": (matmul, (rng.normal(size=(4, 3)), rng.normal(size=3)), (0, 1)),
        "where_mask": (where_mask, (rng.normal(size=(4, 3)),), (0,)),
        "logistic": (logistic, (rng.normal(size=3), X, y), (0,)),
        "logistic_wrt_data": (logistic, (rng.normal(size=3), X, y), (0, 1)),
        "mlp": (mlp, (rng.normal(size=(3, 5)), rng.normal(size=5), rng.normal(size=(5, 2)),
                      X, rng.normal(size=(rows, 2))), (0, 1, 2)),
        "loop_sum": (loop_sum, (rng.normal(size=(4, 3)),), (0,)),
        "newaxis_slice": (newaxis_slice, (rng.normal(size=(3, 4)),), (0,)),
    }


def elementwise(x):
    return np.sum(np.sin(x) * x + x ** 2 / 3.0 - np.cos(x) / (1.0 + x * x))


def exp_log_tanh(x):
    return np.sum(np.exp(-x * x) + np.log(1.0 + x * x) + np.tanh(x) * np.sqrt(1.0 + x * x))


def broadcast_row(x, b):
    return np.sum((x + b) * b - x * np.abs(b))


def broadcast_col(x, c):
    return np.sum(np.exp((x - c) / 2.0))


def reductions(x):
    return np.sum(x, axis=0) @ np.mean(x, axis=1, keepdims=True)[:3, 0] + np.mean(x) * np.sum(x * x)


def sum_keepdims(x):
    return np.sum(x / np.sum(x * x, axis=1, keepdims=True))


def matmul(a, v):
    return np.sum(np.tanh(a @ v)) + np.sum(a.T @ a) / 10.0


def indexing(x):
    return np.sum(x[1:3] * x[0]) + np.sum(x[:, 1] ** 2) + x[2, 2]


def fancy_index(x, idx):
    return np.sum(x[idx] * np.arange(len(idx))[:, None])


def where_mask(x):
    return np.sum(np.where(x > 0, x, 0.1 * x))


def logistic(w, X, y):
    z = X @ w
    p = 1 / (1 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def mlp(W1, b1, W2, X, y):
    h = np.tanh(X @ W1 + b1)
    out = h @ W2
    return np.mean((out - y) ** 2)


def loop_sum(x):
    total = 0.0
    for i in range(3):
        total = total + np.sum(x * i)
    return total


def clipped(x):
    return np.sum(np.maximum(x, 0.0))


def newaxis_slice(x):
    return np.sum(x[:, None, 1:3] * 2.0)


def assigns(x):
    y = x * 1.0
    y[0] = 3.0
    return np.sum(y * y)


def softmax_xent(W, X, Y):
    logits = X @ W
    logits = logits - np.max(logits, axis=1, keepdims=True)
    logp = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    return -np.mean(np.sum(Y * logp, axis=1))


def layer_norm(x, gamma):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.var(x, axis=-1, keepdims=True)
    return np.sum(((x - mu) / np.sqrt(var + 1e-5) * gamma) ** 2)


def _step(W, h, x):
    return np.tanh(h @ W + x)


def rnn(W, xs):
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = _step(W, h, xs[t, :])
    return np.sum(h * h)


def _apply(f, x):
    return f(x) + x


def _gauss(v):
    return np.exp(-v * v)


def helper_and_function(x):
    return np.sum(_apply(_gauss, x) ** 2)


def helper_and_lambda(x):
    return np.sum(_apply(lambda v: np.exp(-v * v), x) ** 2)


def cs231n_softmax(W, b, X, y):
    scores = X @ W + b
    scores = scores - np.max(scores, axis=1, keepdims=True)
    p = np.exp(scores) / np.sum(np.exp(scores), axis=1, keepdims=True)
    n = X.shape[0]
    return -np.sum(np.log(p[np.arange(n), y])) / n + 0.5e-3 * np.sum(W * W)


def pick_twice(x, rows, cols):
    return np.sum(x[rows, cols] ** 2)


def list_params(params, x):
    W, b, unused = params
    return np.sum(np.tanh(x @ W + b))


def dict_params(params, x):
    return np.sum(np.tanh(x @ params["W"] + params["b"]) ** 2)


def make_scaled_tanh(k):
    def scaled_tanh(x):
        return np.sum(np.tanh(x) * k)
    return scaled_tanh


def einsum_trace(x):
    return np.einsum("ii", x * x)


def method_sum(x):
    return (x * x).sum()


def method_std(x):
    return x.std() * 2.0


def method_var(x):
    return x.var() + 1.0


def method_max_axis(x):
    return np.sum(x.max(axis=0) ** 2)


def method_repeat(x):
    return np.sum(x.repeat(2) * np.arange(24.0))


def special(x):
    return np.sum(sc.erf(x) * sc.expit(x))


try:
    import scipy.special as sc
except ImportError:     # pragma: no cover
    sc = None
