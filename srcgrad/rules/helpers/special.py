"""Run-time helpers of the scipy.special rules (rules/scipy/special.py):
logsumexp's value, its cotangent with return_sign=True, and its softmax
weights.
"""
import numpy as np

from .broadcast import unreduce


def logsumexp_value(z, return_sign):
    """logsumexp's value r = log|sum b exp(a)|: z, or z[0] when z is the
    (value, sign) pair of return_sign=True."""
    return z[0] if return_sign else z


def logsumexp_value_cotangent(g, z, return_sign):
    """The cotangent of logsumexp's log-sum as if it were log(sum b exp(a))
    itself: g; with return_sign=True (z = (r, s), r = log|S|, s = sign S,
    S = sum b exp(a)), the value's cotangent times s, since dr = dS / S and
    1 / S = s exp(-r). The sign is piecewise constant: its cotangent is
    dropped. A missing value cotangent (None) is zero."""
    if not return_sign:
        return g
    gr = g[0] if g is not None else None
    if gr is None:
        return np.zeros_like(z[0])
    return gr * z[1]


def logsumexp_weights(a, z, axis=None, keepdims=False, b=None):
    """d logsumexp / d a = b exp(a - z): the softmax weights (times b)."""
    e = np.exp(a - unreduce(z, a, axis, keepdims))
    return e if b is None else e * b
