"""Run-time helpers of the elementwise rules (rules/numpy/elementwise.py,
piecewise.py): the masks of the piecewise-linear functions (ties of
maximum/minimum split evenly, autograd's convention; np.clip's bounds
included, as TF's clip_by_value) and the exponent's term of the power's
tangent.
"""
import numpy as np

from ...runtime import nondiff_helper


@nondiff_helper
def sign(x):
    return np.sign(x)


@nondiff_helper
def balanced_eq(x, z, y):
    """1 where x alone attains z = maximum(x, y), 1/2 where x == y, else 0
    (autograd's convention for maximum/minimum ties)."""
    x = np.asarray(x)
    dtype = np.result_type(x, np.float32) if np.issubdtype(x.dtype, np.inexact) else np.float64
    eq = (x == z).astype(dtype)
    return eq / (1 + (x == y)).astype(dtype)


def _clip_masks(a, a_min, a_max, min, max):
    """(inside, below, above) for np.clip(a, lo, hi) = minimum(maximum(a, lo), hi):
    `above` where the upper bound is the result, `below` where the lower
    bound is, `inside` where `a` passes through (bounds included, as TF's
    clip_by_value gradient). The bounds come positionally or by keyword."""
    lo = a_min if a_min is not None else min
    hi = a_max if a_max is not None else max
    a = np.asarray(a)
    above = np.zeros(np.shape(a), dtype=bool) if hi is None else (
        (a if lo is None else np.maximum(a, lo)) > hi)
    below = np.zeros(np.shape(a), dtype=bool) if lo is None else (a < lo) & ~above
    return ~(above | below), below, above


@nondiff_helper
def clip_inside(a, a_min=None, a_max=None, min=None, max=None):
    """1 where `a` passes through np.clip unchanged, else 0."""
    return _clip_masks(a, a_min, a_max, min, max)[0]


@nondiff_helper
def clip_below(a, a_min=None, a_max=None, min=None, max=None):
    """1 where np.clip's result is the lower bound, else 0."""
    return _clip_masks(a, a_min, a_max, min, max)[1]


@nondiff_helper
def clip_above(a, a_min=None, a_max=None, min=None, max=None):
    """1 where np.clip's result is the upper bound, else 0."""
    return _clip_masks(a, a_min, a_max, min, max)[2]


@nondiff_helper
def sign_product(x, y):
    """d copysign(x, y) / dx = sign(x) sign(y), with the sign bit (so +-0
    count as +-1)."""
    return np.copysign(1.0, x) * np.copysign(1.0, y)


@nondiff_helper
def is_finite(x):
    return np.isfinite(x)


def power_exponent_tangent(ty, z, x):
    """The exponent's term of d(x ** y): dy x**y log(x), zero where dy is
    zero. A direction that keeps y fixed needs no y-derivative, which x ** y
    lacks for a base x <= 0 (log(x) is nan or -inf there); an integer
    exponent computed in a loop (`x[i] ** (i + 1)`) may carry a zero tangent
    in generated code. The base is replaced by 1 where dy is zero (the
    double-where trick), so that derivatives of this term are finite too.
    Linear in `ty`."""
    safe = np.where(ty == 0, 1.0, x)
    return ty * z * np.log(safe)


# ---------------------------------------------------------------------- unwrap

@nondiff_helper
def unwrap_periods(p, z, period):
    """k with np.unwrap(p) = p + k period: the whole number of periods NumPy
    added to each entry (a cumulative sum of corrections that are
    multiples of the period, numpy/lib/_function_base_impl.py), read back
    from the output, in the output's dtype."""
    z = np.asarray(z)
    k = np.round((z - np.asarray(p)) / np.asarray(period))
    return k.astype(z.dtype if z.dtype.kind == "f" else np.float64)
