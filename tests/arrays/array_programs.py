"""The programs tests/arrays/ differentiates on NumPy, Dask and CuPy arrays:
one per supported construct (module-level defs: srcgrad compiles from
source)."""
import numpy as np


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


def special(x):
    return np.sum(sc.erf(x) * sc.expit(x))


try:
    import scipy.special as sc
except ImportError:     # pragma: no cover
    sc = None
