"""Run-time helpers of np.interp's rules (rules/numpy/piecewise.py).

np.interp(x, xp, fp) is linear on each piece [xp[lo], xp[hi]] of the
increasing knots xp (NumPy's compiled interp, numpy/_core/src/multiarray/
compiled_base.c):

    z = fp[lo] + t (fp[hi] - fp[lo]),    t = (x - xp[lo]) / (xp[hi] - xp[lo]),

and z = left (fp[0] when left is None) for x < xp[0], right (fp[-1]) for
x > xp[-1]. With a period, x and xp are first reduced modulo the period,
xp sorted, and its last and first knots repeated one period below and above
(NumPy's numpy/lib/_function_base_impl.py interp); every x then lies on a
piece, and left and right are ignored.

`interp_locate` finds each x's piece (indices into xp and fp, and masks:
no derivative). The helpers below compute t, the slope and the weights of
fp from x, xp and fp with operations that have rules (index_gather,
index_scatter, np.where, arithmetic), so that the rules can be
differentiated again (second order).

The piece of x at a knot is JAX's (jax.numpy.interp: searchsorted with
side='right', clipped to [1, n - 1]): at an inner knot xp[k] the piece to
its right, [xp[k], xp[k+1]]; at xp[0] the first piece and at xp[-1] the
last one (one-sided derivatives). On a piece of length 0 (repeated knots,
reached only by x == xp[-1]) z is fp[hi] and the slope 0.
"""
import numpy as np

from ...runtime import nondiff_helper
from .complex import conj
from ..python.containers import sequence_as_array
from .shapes import index_gather, index_scatter


@nondiff_helper
def interp_locate(x, xp, left, right, period):
    """(lo, hi, x_shift, lo_shift, hi_shift, piece, t_fixed, at_left,
    at_right), each shaped like x: the indices into xp and fp of the ends
    of x's piece; the shifts that the period's reduction subtracts from x,
    xp[lo] and xp[hi] (0 without a period); `piece`, where z is
    interpolated on a piece of positive length (z's derivative in x is
    that piece's slope); `t_fixed`, the weight of fp[hi] elsewhere (0 below
    xp[0], 1 above xp[-1] or on a piece of length 0); and where left or
    right (given) is z."""
    x = np.asarray(x, dtype=np.float64)
    xp = np.asarray(xp, dtype=np.float64)
    n = xp.shape[0]
    source = np.arange(n)
    if period is None:
        xs, knots = x, xp
    else:
        p = abs(float(period))
        xs = x % p
        reduced = xp % p
        order = np.argsort(reduced)         # (NumPy's own call: the same order for equal knots)
        source = np.concatenate((order[-1:], order, order[:1]))
        sorted_knots = reduced[order]
        knots = np.concatenate((sorted_knots[-1:] - p, sorted_knots, sorted_knots[:1] + p))
        left = right = None
    m = knots.shape[0]
    if m == 1:
        hi_e = np.zeros(np.shape(x), dtype=np.intp)
        lo_e = hi_e
    else:
        hi_e = np.clip(np.searchsorted(knots, xs, side="right"), 1, m - 1)
        lo_e = hi_e - 1
    lo, hi = source[lo_e], source[hi_e]
    below = xs < knots[0]
    above = xs > knots[-1]
    piece = ~below & ~above & (knots[hi_e] > knots[lo_e])
    t_fixed = np.where(below, 0.0, 1.0)
    at_left = below & (left is not None)
    at_right = above & (right is not None)
    if period is None:
        shifts = (0.0, 0.0, 0.0)
    else:
        shifts = (x - xs, xp[lo] - knots[lo_e], xp[hi] - knots[hi_e])
    return (lo, hi) + shifts + (piece, t_fixed, at_left, at_right)


@nondiff_helper
def interp_left_mask(x, xp, left, period):
    """1.0 where np.interp's value is `left` (x < xp[0], left given), else 0."""
    return interp_locate(x, xp, left, None, period)[7].astype(np.float64)


@nondiff_helper
def interp_right_mask(x, xp, right, period):
    """1.0 where np.interp's value is `right` (x > xp[-1], right given), else 0."""
    return interp_locate(x, xp, None, right, period)[8].astype(np.float64)


@nondiff_helper
def interp_fp_mask(x, xp, left, right, period):
    """1.0 where np.interp's value comes from fp (not from left or right)."""
    loc = interp_locate(x, xp, left, right, period)
    return (~(loc[7] | loc[8])).astype(np.float64)


def interp_t(x, xp, period):
    """The weight of fp[hi] in z: t = (x - xp[lo]) / (xp[hi] - xp[lo]) on
    a piece (differentiable in x and xp), the constant `t_fixed` elsewhere.
    (x and xp may be lists, as np.interp takes them.)"""
    x = sequence_as_array(x)
    xp = sequence_as_array(xp)
    lo, hi, x_shift, lo_shift, hi_shift, piece, t_fixed, at_left, at_right = interp_locate(
        x, xp, None, None, period)
    start = index_gather(xp, lo) - lo_shift
    width = np.where(piece, index_gather(xp, hi) - hi_shift - start, 1.0)
    return np.where(piece, (x - x_shift - start) / width, t_fixed)


def interp_slope(x, xp, fp, period):
    """dz/dx: the slope (fp[hi] - fp[lo]) / (xp[hi] - xp[lo]) of x's piece,
    0 off the pieces (differentiable in xp and fp)."""
    lo, hi, x_shift, lo_shift, hi_shift, piece, t_fixed, at_left, at_right = interp_locate(
        x, xp, None, None, period)
    width = np.where(piece, index_gather(xp, hi) - hi_shift - (index_gather(xp, lo) - lo_shift), 1.0)
    return np.where(piece, (index_gather(fp, hi) - index_gather(fp, lo)) / width, 0.0)


def interp_fp_adjoint(g, x, xp, fp, left, right, period):
    """z is linear in fp, (1 - t) fp[lo] + t fp[hi] (fp[0] or fp[-1] off the
    pieces when left or right is not given): g (1 - t) is added at lo and
    g t at hi (repeated indices accumulate)."""
    lo, hi, x_shift, lo_shift, hi_shift, piece, t_fixed, at_left, at_right = interp_locate(
        x, xp, left, right, period)
    t = interp_t(x, xp, period)
    gv = g * interp_fp_mask(x, xp, left, right, period)
    return index_scatter(gv * (1.0 - t), fp, lo) + index_scatter(gv * t, fp, hi)


def interp_fp_tangent(tfp, x, xp, left, right, period):
    """The tangent of z in fp: (1 - t) tfp[lo] + t tfp[hi] where z comes from
    fp. Linear in tfp."""
    lo, hi, x_shift, lo_shift, hi_shift, piece, t_fixed, at_left, at_right = interp_locate(
        x, xp, left, right, period)
    t = interp_t(x, xp, period)
    mask = interp_fp_mask(x, xp, left, right, period)
    return (index_gather(tfp, lo) * (1.0 - t) + index_gather(tfp, hi) * t) * mask


def interp_xp_adjoint(g, x, xp, fp, period):
    """On a piece, z = fp[lo] + (x - xp[lo]) s with s the slope:
    dz/dxp[lo] = -s (1 - t), dz/dxp[hi] = -s t (0 off the pieces); the
    cotangents are scattered to lo and hi."""
    lo, hi, x_shift, lo_shift, hi_shift, piece, t_fixed, at_left, at_right = interp_locate(
        x, xp, None, None, period)
    gs = g * conj(interp_slope(x, xp, fp, period))
    t = interp_t(x, xp, period)
    return -(index_scatter(gs * (1.0 - t), xp, lo) + index_scatter(gs * t, xp, hi))


def interp_xp_tangent(txp, x, xp, fp, period):
    """The tangent of z in xp: -s ((1 - t) txp[lo] + t txp[hi]). Linear in txp."""
    lo, hi, x_shift, lo_shift, hi_shift, piece, t_fixed, at_left, at_right = interp_locate(
        x, xp, None, None, period)
    t = interp_t(x, xp, period)
    s = interp_slope(x, xp, fp, period)
    return -s * (index_gather(txp, lo) * (1.0 - t) + index_gather(txp, hi) * t)
