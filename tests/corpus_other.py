"""A second user module for the issue-4 corpus (tests/corpus_funcs.py).

These are ordinary, undecorated user functions living in another module:
srcgrad must transform them recursively when a corpus function calls them,
whether they are reached as `corpus_other.name(...)` or imported with
`from corpus_other import name`. Like the corpus, they read NumPy through
the module global `np`, so the autograd oracle can rebind it.
"""
import numpy as np

SIDE = []  # appended to by the unsupported helper below: it must never run


def softplus(x):
    return np.log(1.0 + np.exp(x))


def dense_layer(x, W, b, activation="tanh"):
    z = x @ W + b
    if activation == "tanh":
        return np.tanh(z)
    return _smooth_relu(z)


def _smooth_relu(z):
    return softplus(z)


def poly_features_norm(x, degree):
    """Collect x, x^2/2, ..., x^degree/degree in a list, stack, take the norm."""
    feats = []
    p = x
    for k in range(degree):
        feats.append(p / (k + 1))
        p = p * x
    F = np.stack(feats)
    return np.sum(F ** 2)


def smooth_abs_sum(x, eps=1e-2):
    return np.sum(_smooth_abs(x, eps))


def _smooth_abs(x, eps):
    return np.sqrt(x * x + eps)


def newton_reciprocal(a, tol=1e-13):
    """1/a by Newton's iteration y <- y (2 - a y), with a while loop (0 < a < 2)."""
    y = np.ones_like(a)
    while np.max(np.abs(1.0 - a * y)) > tol:
        y = y * (2.0 - a * y)
    return y


class Scaler:
    """A small class defined in another module."""

    def __init__(self, scale):
        self.scale = scale

    def apply(self, x):
        return np.tanh(self.scale * x) / self.scale


def bad_helper_with_try(x):
    SIDE.append("other-try")
    try:  # unsupported: try-in-helper
        y = np.sin(x)
    except ValueError:
        y = x
    return y
