"""Run-time helpers of np.pad's rule (rules/numpy/indexing.py), every mode
but a callable: constant and empty (the border is not read from the array),
the copying modes edge, reflect, symmetric and wrap (an index map), and the
statistic modes maximum, minimum, mean, median and linear_ramp, which NumPy
computes axis by axis (numpy/lib/_arraypad_impl.py).
"""
import numpy as np

from ...runtime import nondiff_helper
from .complex import inexact_dtype
from .shapes import _arange_like, index_scatter


@nondiff_helper
def pad_index_map(array, pad_width, mode, reflect_type):
    """Flat source positions of np.pad(array, pad_width, mode) for the modes
    that copy elements (edge, reflect, symmetric, wrap); -1 where constant."""
    if mode in ("reflect", "symmetric") and reflect_type != "even":
        raise NotImplementedError("np.pad(mode=%r, reflect_type=%r) has no rule" % (mode, reflect_type))
    if mode not in ("edge", "reflect", "symmetric", "wrap"):
        raise NotImplementedError("np.pad(mode=%r) has no rule (constant, empty, edge, reflect, "
                                  "symmetric, wrap, maximum, minimum, mean, median and linear_ramp "
                                  "do)" % (mode,))
    return np.pad(_arange_like(array), pad_width, mode=mode)


@nondiff_helper
def pad_slices(array, pad_width):
    """The slices of np.pad's output holding the original array."""
    ndim = np.ndim(array)
    pw = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (ndim, 2))
    return tuple(slice(int(b), int(b) + n) for (b, _), n in zip(pw, np.shape(array)))


def pad_adjoint(g, array, pad_width, mode, reflect_type):
    """np.pad copies `array` into the middle of its output and fills the
    border: with constants (the adjoint reads the middle back) or with
    copies of elements (the adjoint also adds the border's cotangents to the
    elements copied there, through an index map)."""
    if mode in ("constant", "empty"):
        return g[pad_slices(array, pad_width)]
    return index_scatter(g, array, pad_index_map(array, pad_width, mode, reflect_type))


def pad_constant_adjoint(g, array, pad_width, constant_values):
    """The cotangent of a scalar constant_values: the border's total."""
    if np.ndim(constant_values) != 0:
        raise NotImplementedError("np.pad: only a scalar constant_values is differentiated")
    return np.sum(g) - np.sum(g[pad_slices(array, pad_width)])


# ------------------------------------------------------------ statistic modes

STAT_PAD_MODES = ("maximum", "minimum", "mean", "median", "linear_ramp")


@nondiff_helper
def _pad_pairs(value, ndim, default):
    """np.pad's per-axis (before, after) pairs of `value` (None: `default`)."""
    if value is None:
        return [(default, default)] * ndim
    v = np.broadcast_to(np.asarray(value, dtype=object), (ndim, 2))
    return [(v[i, 0], v[i, 1]) for i in range(ndim)]


@nondiff_helper
def _pad_partial(array, pad_width, mode, axis, stat_length, end_values):
    """np.pad(array, ...) with the widths of axes >= `axis` set to 0: the
    array NumPy pads along `axis` (it pads axis by axis, in order, each
    axis's statistics read from the array already padded along the earlier
    ones)."""
    nd = np.ndim(array)
    pw = [tuple(int(x) for x in p) for p in _pad_pairs(pad_width, nd, 0)]
    pw = [pw[i] if i < axis else (0, 0) for i in range(nd)]
    kwargs = {}
    if mode in ("maximum", "minimum", "mean", "median"):
        kwargs["stat_length"] = stat_length
    if mode == "linear_ramp":
        kwargs["end_values"] = end_values
    return np.pad(np.asarray(array), pw, mode=mode, **kwargs)


@nondiff_helper
def _pad_axis_weights(cur, axis, width, length, mode):
    """For np.pad along `axis` of `cur` with widths (l, r): (c_left, W_left,
    c_right, W_right) such that pad position i of the left border holds
    c_left[i] * sum(W_left * cur) along the axis (likewise on the right): the
    part of the border that depends on `cur` (for linear_ramp the rest is
    the end value). W is shaped like cur: the weights of the statistic over
    its window (mean: 1/len; maximum/minimum: the attaining entries, ties
    split evenly; median: the middle entry or the two middle ones), or the
    edge entry for linear_ramp; c broadcasts along the axis (ones, or the
    ramp's weights of the edge value)."""
    cur = np.asarray(cur)
    nd = cur.ndim
    n = cur.shape[axis]
    l, r = int(width[0]), int(width[1])
    dtype = inexact_dtype(cur)
    shape = [1] * nd
    shape[axis] = -1
    idx = np.arange(n).reshape(shape)

    def along(v):
        return np.asarray(v, dtype=dtype).reshape(shape)

    def window(start, stop):
        inside = (idx >= start) & (idx < stop)
        if mode == "mean":
            return np.broadcast_to(inside / max(stop - start, 1), cur.shape).astype(dtype)
        sub = np.take(cur, np.arange(start, stop), axis=axis)
        if mode in ("maximum", "minimum"):
            red = np.max if mode == "maximum" else np.min
            hit = (cur == red(sub, axis=axis, keepdims=True)) & inside
            return (hit / np.sum(hit, axis=axis, keepdims=True)).astype(dtype)
        order = np.argsort(sub, axis=axis, kind="stable") + start    # median
        k = stop - start
        w = np.zeros(cur.shape, dtype=dtype)
        for rank in ((k - 1) // 2, k // 2):
            w = w + 0.5 * (idx == np.take(order, [rank], axis=axis))
        return w

    if mode == "linear_ramp":
        w_left = np.broadcast_to(idx == 0, cur.shape).astype(dtype)
        w_right = np.broadcast_to(idx == n - 1, cur.shape).astype(dtype)
        return (along(np.arange(l) / max(l, 1)), w_left,
                along(np.arange(r)[::-1] / max(r, 1)), w_right)
    ll = n if length[0] is None else min(int(length[0]), n)
    rl = n if length[1] is None else min(int(length[1]), n)
    return along(np.ones(l)), window(0, ll), along(np.ones(r)), window(n - rl, n)


def pad_modes_adjoint(g, array, pad_width, mode, reflect_type, stat_length, end_values):
    """The cotangent of `array` in np.pad, every mode but a callable:
    constant, empty and the copying modes (pad_adjoint), and
    the statistic modes (pad_stat_adjoint)."""
    if mode in STAT_PAD_MODES:
        return pad_stat_adjoint(g, array, pad_width, mode, stat_length, end_values)
    return pad_adjoint(g, array, pad_width, mode, reflect_type)


def pad_stat_adjoint(g, array, pad_width, mode, stat_length, end_values):
    """np.pad in the modes maximum, minimum, mean, median and linear_ramp
    (numpy/lib/_arraypad_impl.py): NumPy pads axis by axis, the border along
    an axis being a statistic of a window of the array already padded along
    the earlier axes (or, for linear_ramp, a ramp from the end value to the
    edge entry). Each axis's map is linear in its input for fixed ranks
    (piecewise linear for maximum/minimum/median), so the adjoint runs the
    axes in reverse: the border's cotangent, weighted by the ramp, is summed
    along the axis and spread over the window by the statistic's weights,
    and added to the middle's."""
    nd = np.ndim(array)
    widths = _pad_pairs(pad_width, nd, 0)
    lengths = _pad_pairs(stat_length, nd, None)
    for axis in range(nd - 1, -1, -1):
        cur = _pad_partial(array, pad_width, mode, axis, stat_length, end_values)
        l, r = int(widths[axis][0]), int(widths[axis][1])
        n = np.shape(cur)[axis]
        c_left, w_left, c_right, w_right = _pad_axis_weights(cur, axis, widths[axis], lengths[axis], mode)
        g_left = np.take(g, np.arange(0, l), axis=axis)
        g_mid = np.take(g, np.arange(l, l + n), axis=axis)
        g_right = np.take(g, np.arange(l + n, l + n + r), axis=axis)
        s_left = np.sum(g_left * c_left, axis=axis, keepdims=True)
        s_right = np.sum(g_right * c_right, axis=axis, keepdims=True)
        g = g_mid + s_left * w_left + s_right * w_right
    return g


def pad_end_values_adjoint(g, array, pad_width, mode, stat_length, end_values):
    """The cotangent of a scalar end_values of np.pad(mode='linear_ramp'):
    the output is affine in it, with slope np.pad(zeros, ..., end_values=1)."""
    if mode != "linear_ramp":
        return np.sum(g) * 0.0
    if np.ndim(end_values) != 0:
        raise NotImplementedError("np.pad(mode='linear_ramp'): only a scalar end_values is "
                                  "differentiated")
    return np.sum(g * _ramp_slope(array, pad_width))


@nondiff_helper
def _ramp_slope(array, pad_width):
    z = np.zeros(np.shape(array))
    return np.pad(z, pad_width, mode="linear_ramp", end_values=1.0)
