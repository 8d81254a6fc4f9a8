"""Run-time helpers for the rules of numpy_more.py and numpy_fft.py.

As in helpers.py, every helper here is one of: written with NumPy
functions that have rules (so a higher-order tape, which runs rules on
Tensors, records it op by op), a `primitive` with a rule of its own, or a
`nondiff_helper` (index maps, masks, weights that are piecewise constant).

Sources of the identities are given per helper: Giles, "An extended
collection of matrix derivative results for forward and reverse mode
algorithmic differentiation" (2008); Boeddeker et al., "On the computation
of complex-valued gradients with application to statistically optimum
beamforming" (arXiv:1701.00392, 2017) for eig; Walter & Lehmann, "Algorithmic
differentiation of linear algebra functions with application in optimum
experimental design" (2018) and Liao et al., "Differentiable programming
tensor networks" (2019) for qr; Golub & Pereyra (1973) for lstsq through the
pseudo-inverse; NumPy's own definitions (numpy/lib/_function_base_impl.py,
_arraypad_impl.py, numpy/fft/_pocketfft.py) for what is differentiated.
"""
import numpy as np

from .helpers import max_chooser, nondiff_helper, unbroadcast, unreduce
from .helpers_linalg import (_any_nonzero, _dtype, eye_like, index_gather, index_scatter, mH,
                             off_diagonal_inverse_gaps, pad_adjoint, pinv_adjoint, svd_values_adjoint)
from .helpers_math import conj, real_part


def real_if_real(g, x):
    """`g` as the cotangent of `x`: its real part when `x` is real (a real
    input meeting complex values gets the real part of the complex
    cotangent, README "Complex inputs"), else `g`."""
    if _is_complex(g) and not _is_complex(x):
        return np.real(g)
    return g


@nondiff_helper
def _is_complex(x):
    try:
        return x.dtype.kind == "c"
    except AttributeError:
        return isinstance(x, complex) or np.asarray(x).dtype.kind == "c"


# ------------------------------------------------------------ constructors

@nondiff_helper
def linspace_weights(num, endpoint, axis, g):
    """t_i = i / (num - 1) (i / num without the endpoint; 0 for num == 1), the
    weight of `stop` in linspace's sample i (that of `start` is 1 - t_i),
    shaped to broadcast along `axis` of the output `g`, in g's dtype."""
    ndim = np.ndim(g)
    t = np.linspace(0.0, 1.0, num, endpoint=endpoint).astype(_dtype(g))
    shape = [1] * ndim
    shape[axis % ndim] = num
    return np.reshape(t, shape)


def _refuse_retstep(retstep):
    if retstep:
        raise NotImplementedError(
            "srcgrad: np.linspace(..., retstep=True) returns a tuple; differentiate "
            "np.linspace and compute the step as (stop - start) / (num - 1)")


def linspace_adjoint(g, start, stop, num, endpoint, retstep, axis, wrt_stop):
    """z_i = start + (stop - start) t_i = (1 - t_i) start + t_i stop along
    `axis` (array start/stop broadcast against each other), so
    d start = sum_i (1 - t_i) g_i and d stop = sum_i t_i g_i, summed back to
    each one's shape."""
    _refuse_retstep(retstep)
    t = linspace_weights(num, endpoint, axis, g)
    w = t if wrt_stop else 1.0 - t
    total = np.sum(g * w, axis=axis % np.ndim(g))
    return unbroadcast(total, stop if wrt_stop else start)


def linspace_tangent(t_start, t_stop, num, endpoint, retstep, axis):
    """The tangent of np.linspace: linspace is linear in (start, stop), so
    it is np.linspace of the tangents."""
    _refuse_retstep(retstep)
    return np.linspace(t_start, t_stop, num, endpoint=endpoint, axis=axis)


# ----------------------------------------------------------------- sorted

@nondiff_helper
def sorted_positions(iterable, key, reverse):
    """For z = sorted(iterable, key=key, reverse=reverse): src[j], the index
    in `iterable` of z's element j, found by sorting the positions with the
    same key and order (Python's sort is stable, so this is the permutation
    sorted used)."""
    items = [np.asarray(x) if hasattr(x, "shape") else x for x in iterable]
    if key is None:
        return sorted(range(len(items)), key=lambda i: items[i], reverse=reverse)
    return sorted(range(len(items)), key=lambda i: key(items[i]), reverse=reverse)


@nondiff_helper
def sorted_inverse(iterable, key, reverse):
    """inverse[i]: the position in sorted(iterable, key, reverse) of the
    iterable's element i."""
    src = sorted_positions(iterable, key, reverse)
    inverse = [0] * len(src)
    for j, i in enumerate(src):
        inverse[i] = j
    return inverse


def sorted_adjoint(gs, iterable, key, reverse):
    """sorted is a permutation: the iterable's element i, which went to
    position inverse[i], gets that position's cotangent. For a list/tuple
    iterable the cotangent is a list; for an array (sorted over its first
    axis) the rows' cotangents stacked back in place."""
    inverse = sorted_inverse(iterable, key, reverse)
    back = [gs[j] for j in inverse]
    if isinstance(iterable, (list, tuple)):
        return back
    return np.stack(back)


# ------------------------------------------------------------- reductions

def ptp_adjoint(g, a, axis, keepdims):
    """ptp = max - min over `axis`: the cotangent goes to the maximal entries
    and, negated, to the minimal ones (ties split evenly, as max and min)."""
    hi = np.max(a, axis=axis, keepdims=True)
    lo = np.min(a, axis=axis, keepdims=True)
    gf = unreduce(g, a, axis, keepdims)
    return gf * (max_chooser(a, hi, axis, True) - max_chooser(a, lo, axis, True))


@nondiff_helper
def nan_count(a, axis):
    """The number of non-NaN entries of each reduction of `a` over `axis`
    (keepdims), in a's floating dtype."""
    return np.sum(~np.isnan(a), axis=axis, keepdims=True).astype(_dtype(a))


@nondiff_helper
def nan_mask(a):
    """1 where `a` is not NaN, 0 where it is, in a's floating dtype."""
    return (~np.isnan(a)).astype(_dtype(a))


def nan_to_zero(a):
    """`a` with NaN entries replaced by 0 (differentiable in the others)."""
    return np.where(np.isnan(a), 0.0, a)


def nan_to_one(a):
    """`a` with NaN entries replaced by 1 (nanprod's reading)."""
    return np.where(np.isnan(a), 1.0, a)


def nanvar_adjoint(g, a, axis, keepdims, ddof, correction):
    """nanvar = sum over the n non-NaN entries of (a - m)^2 / (n - ddof), m
    their mean: d a_i = 2 (a_i - m) / (n - ddof) at non-NaN entries, 0 at
    NaNs (dvar/dm = 0 at the mean)."""
    ddof = correction if correction is not None else ddof
    n = nan_count(a, axis)
    mask = nan_mask(a)
    m = np.sum(nan_to_zero(a), axis=axis, keepdims=True) / n
    return unreduce(g, a, axis, keepdims) * 2.0 * (nan_to_zero(a) - m) * mask / (n - ddof)


def nanstd_adjoint(g, y, a, axis, keepdims, ddof, correction):
    """nanstd = sqrt(nanvar): d a_i = (a_i - m) / ((n - ddof) std)."""
    return 0.5 * nanvar_adjoint(g / y, a, axis, keepdims, ddof, correction)


# ------------------------------------------------------------- quantiles

def _norm_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if not isinstance(axis, (tuple, list)):
        axis = (axis,)
    return tuple(sorted(int(ax) % ndim for ax in axis))


def _refuse_method(method, weights):
    if weights is not None:
        raise NotImplementedError("srcgrad: np.quantile/np.percentile(..., weights=...) has no rule")
    if method != "linear":
        raise NotImplementedError(
            "srcgrad: np.quantile/np.percentile(method=%r) has no rule; only the default "
            "method='linear' (interpolation between the two nearest order statistics) is "
            "differentiated" % (method,))


def _moved(a, axes):
    """a with the reduced `axes` moved last and flattened into one."""
    nd = np.ndim(a)
    rest = [i for i in range(nd) if i not in axes]
    moved = np.transpose(a, rest + list(axes))
    shape = np.shape(moved)
    return np.reshape(moved, shape[:len(rest)] + (-1,)), rest


@nondiff_helper
def _quantile_ranks(a, axes, nan):
    """For each slice of `a` reduced over `axes` (moved last, flattened):
    the stable sort order, shape (rest..., N), and the count n of the
    entries a quantile reads, shape (rest..., 1), in a's floating dtype
    (NaN sorts last and is left out when `nan`; without `nan` a NaN makes
    the result NaN, as in NumPy)."""
    am, _ = _moved(np.asarray(a), axes)
    order = np.argsort(am, axis=-1, kind="stable")
    if nan:
        n = np.sum(~np.isnan(am), axis=-1, keepdims=True)
    else:
        n = np.full(am.shape[:-1] + (1,), am.shape[-1])
    return order, n.astype(_dtype(a))


@nondiff_helper
def _rank_onehots(order, position, dtype):
    """One-hot masks over a slice's entries (last axis) of the entry of
    sorted rank `position` (shape qshape + rest + (1,)), per quantile:
    shape qshape + rest + (N,)."""
    nq = np.ndim(position) - np.ndim(order)
    order = np.broadcast_to(order, np.shape(position)[:nq] + np.shape(order))
    src = np.take_along_axis(order, np.maximum(position, 0).astype(np.intp), axis=-1)
    return (np.arange(np.shape(order)[-1]) == src).astype(dtype)


@nondiff_helper
def _shape_of(x):
    return tuple(np.shape(x))


@nondiff_helper
def _ones_shape(x):
    return (1,) * np.ndim(x)


def quantile_adjoint(g, a, q, axis, nan, wrt_q, method="linear", weights=None):
    """np.quantile(a, q, axis, method='linear') (and the nan- variants) reads
    the sorted entries x_(0) <= ... <= x_(n-1) of each slice at the virtual
    index h = (n - 1) q, between lo = floor(h) and hi = min(lo + 1, n - 1):
    y = (1 - f) x_(lo) + f x_(hi), f = h - lo (Hyndman & Fan 1996, type 7,
    NumPy's default). So d a = g (1 - f) at the entry of rank lo and g f at
    that of rank hi (summed over the q's), and d q = g (n - 1)
    (x_(hi) - x_(lo)). Ties among the entries: the stable sort order picks
    which tied entry receives the cotangent. Returns d a (d q with wrt_q).
    Raises NotImplementedError for another `method` or with `weights`."""
    _refuse_method(method, weights)
    axes = _norm_axes(axis, np.ndim(a))
    order, n = _quantile_ranks(a, axes, nan)
    am, rest = _moved(a, axes)
    qshape = _shape_of(q)
    dtype = _dtype(g, a)
    qx = np.reshape(q, qshape + _ones_shape(n))
    h = (n - 1) * qx
    lo = np.floor(h)
    f = h - lo
    lo_mask = _rank_onehots(order, lo, dtype)
    hi_mask = _rank_onehots(order, np.minimum(lo + 1, n - 1), dtype)
    rest_shape = tuple(np.shape(a)[i] for i in rest)
    gq = np.reshape(g, qshape + rest_shape + (1,))      # keepdims' 1s dropped
    if wrt_q:
        amx = nan_to_zero(am)
        spread = np.sum((hi_mask - lo_mask) * amx, axis=-1, keepdims=True)
        dq = np.reshape(gq * (n - 1) * spread, qshape + (-1,))
        return np.reshape(np.sum(dq, axis=-1), qshape)
    weights = (1.0 - f) * lo_mask + f * hi_mask
    ga = np.sum(np.reshape(gq * weights, (-1,) + rest_shape + _shape_of(am)[-1:]), axis=0)
    red_shape = tuple(np.shape(a)[i] for i in axes)
    ga = np.reshape(ga, rest_shape + red_shape)
    perm = list(rest) + list(axes)
    return np.transpose(ga, [int(i) for i in np.argsort(perm)]).astype(dtype)


def percentile_adjoint(g, a, q, axis, nan, wrt_q, method="linear", weights=None):
    """np.percentile(a, q) = np.quantile(a, q / 100): d q is 1/100 of the
    quantile's. (q may be a list: np.divide, not `/`.)"""
    if wrt_q:
        return quantile_adjoint(g, a, np.divide(q, 100.0), axis, nan, True, method, weights) / 100.0
    return quantile_adjoint(g, a, np.divide(q, 100.0), axis, nan, False, method, weights)


def median_adjoint(g, a, axis, nan):
    """np.median is np.quantile(a, 0.5): the middle entry, or the mean of the
    two middle ones, gets the cotangent."""
    return quantile_adjoint(g, a, 0.5, axis, nan, False)


# ------------------------------------------------------------------ block

@nondiff_helper
def block_positions(arrays):
    """For np.block(arrays) (nested lists of arrays and scalars): the same
    nested structure with, in place of each leaf, the flat positions in the
    output of its elements (in the leaf's shape). np.block only moves
    elements (none is repeated), so they are found by blocking, in place of
    each leaf, the consecutive integers numbering its elements."""
    leaves = []
    _leaves(arrays, leaves)
    offsets = [0]
    for x in leaves:
        offsets.append(offsets[-1] + int(np.size(x)))
    ids = np.block(_numbered(arrays, iter(offsets))).reshape(-1)
    where = np.empty(ids.size, dtype=np.intp)
    where[ids] = np.arange(ids.size)
    return _placed(arrays, where, iter(offsets))


def _leaves(arrays, out):
    if isinstance(arrays, list):
        for e in arrays:
            _leaves(e, out)
    else:
        out.append(arrays)


def _numbered(arrays, offsets):
    if isinstance(arrays, list):
        return [_numbered(e, offsets) for e in arrays]
    return next(offsets) + np.arange(int(np.size(arrays)), dtype=np.intp).reshape(np.shape(arrays))


def _placed(arrays, where, offsets):
    if isinstance(arrays, list):
        return [_placed(e, where, offsets) for e in arrays]
    start = next(offsets)
    return where[start:start + int(np.size(arrays))].reshape(np.shape(arrays))


def block_adjoint(g, arrays):
    """np.block assembles its leaves into one array: each leaf's cotangent
    is g read at the positions its elements went to (index_gather), in the
    nested-list structure of `arrays`."""
    return gather_tree(g, block_positions(arrays))


def block_tangent(tangents, arrays):
    """np.block of the leaves' tangents, in the nesting of `arrays` (a list
    or tuple of tangents, None for a leaf or sublist without one: zeros of
    the leaf's shape). Linear in `tangents`."""
    return np.block(_tangent_tree(tangents, arrays))


def _tangent_tree(tangents, arrays):
    if isinstance(arrays, (list, tuple)):
        if tangents is None:
            tangents = [None] * len(arrays)
        return [_tangent_tree(t, a) for t, a in zip(tangents, arrays)]
    if tangents is None:
        return np.zeros(np.shape(arrays), dtype=_dtype(arrays))
    return tangents


def block_on_tensors(arrays):
    """np.block(arrays) on Tensors (tensor.py's register_tape_form), from
    operations the tape records: the raveled leaves concatenated, gathered
    into the output's order (index_gather), reshaped. A tape entry's list
    parameter holds one level of Tensors; np.block's are nested. Anything
    but a nested list of leaves is left to np.block (NotImplemented)."""
    if type(arrays) is not list:
        return NotImplemented
    leaves = []
    _leaves(arrays, leaves)
    if not leaves or any(type(x) in (list, tuple) for x in leaves):
        return NotImplemented
    ids, shape = block_sources(arrays)
    flat = np.concatenate([np.ravel(x) for x in leaves])
    return np.reshape(index_gather(flat, ids), shape)


@nondiff_helper
def block_sources(arrays):
    """For np.block(arrays): for each output element (flat), its position in
    the concatenation of the raveled leaves; and the output's shape."""
    leaves = []
    _leaves(arrays, leaves)
    offsets = [0]
    for x in leaves:
        offsets.append(offsets[-1] + int(np.size(x)))
    ids = np.block(_numbered(arrays, iter(offsets)))
    return ids.reshape(-1), ids.shape


def gather_tree(g, positions):
    """index_gather(g, p) for each array p of a nested list, same nesting."""
    if isinstance(positions, list):
        return [gather_tree(g, p) for p in positions]
    return index_gather(g, positions)


# ----------------------------------------------------------------- insert

@nondiff_helper
def insert_index_maps(arr, obj, values, axis):
    """Flat source positions for np.insert(arr, obj, values, axis): of arr's
    elements (-1 at the inserted ones) and of values' elements (-1 at arr's;
    a broadcast value repeats its position)."""
    arr = np.asarray(arr)
    pos_arr = np.arange(arr.size).reshape(arr.shape)
    pos_values = np.arange(int(np.size(values))).reshape(np.shape(values))
    arr_map = np.insert(pos_arr, obj, np.full(np.shape(values), -1), axis=axis)
    values_map = np.insert(np.full(arr.shape, -1), obj, pos_values, axis=axis)
    return arr_map, values_map


def insert_adjoint(g, arr, obj, values, axis, wrt_arr):
    """np.insert only moves arr's elements and copies values' (broadcast)
    ones: each gets the cotangents of the output positions it went to
    (index_scatter; a broadcast value's copies accumulate). Values given as
    a list or tuple get a list cotangent, one entry per element (a list
    parameter's cotangent, registry.py)."""
    arr_map, values_map = insert_index_maps(arr, obj, values, axis)
    if wrt_arr:
        return index_scatter(g, arr, arr_map)
    c = index_scatter(g, values, values_map)
    if isinstance(values, (list, tuple)):
        return [c[i] for i in range(len(values))]
    return c


def insert_tangent(tarr, tvalues, arr, obj, values, axis):
    """np.insert is linear in (arr, values) jointly: the insert of their
    tangents, zeros for arr's or for values' (or a list element's) where
    they have none. Linear in (tarr, tvalues)."""
    if isinstance(values, (list, tuple)):
        if tvalues is None:
            tvalues = [None] * len(values)
        rows = [np.zeros(np.shape(v), dtype=_dtype(v)) if t is None else t for t, v in zip(tvalues, values)]
        tvalues = np.stack(rows) if rows else np.zeros(np.shape(values))
    elif tvalues is None:
        tvalues = np.zeros(np.shape(values), dtype=_dtype(values))
    if tarr is None or getattr(tarr, "dtype", np.result_type(tarr)).kind not in "fc":
        tarr = np.zeros(np.shape(arr), dtype=_dtype(arr, tvalues))
    return np.insert(tarr, obj, tvalues, axis=axis)


# -------------------------------------------------------- pad, stat modes

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
    dtype = _dtype(cur)
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
    constant, empty and the copying modes (helpers_linalg.pad_adjoint), and
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


# -------------------------------------------------------------------- FFT
# Conventions (numpy/fft/_pocketfft.py): fft(a, n, axis, norm) first cuts or
# zero-pads a to length n along axis; norm scales the forward transform by
# 1 ("backward", the default None), 1/sqrt(n) ("ortho") or 1/n ("forward")
# and the inverse by the complementary factor. The adjoint of a transform
# with norm `nm` is the opposite transform with the swapped norm (the
# conjugate-transposed DFT matrix, scaled alike): `dual_norm`.

@nondiff_helper
def dual_norm(norm):
    """The norm whose opposite transform is the adjoint: backward <->
    forward, ortho stays (NumPy's own _swap_direction)."""
    return {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}[norm]


@nondiff_helper
def fft_axes(a, s, axes, c2r=False):
    """(axes, lengths) of an n-d transform of `a`, as NumPy reads `s` and
    `axes`: all axes (or the last len(s)) by default, lengths from `s` or
    from a's shape; for a complex-to-real transform (irfftn, `c2r`) the last
    length is the output's, 2 (m - 1) by default. Axes non-negative."""
    nd = np.ndim(a)
    shape = np.shape(a)
    if axes is None:
        axes = list(range(nd)) if s is None else list(range(nd - len(s), nd))
    axes = [int(ax) % nd for ax in axes]
    if s is None:
        s = [shape[ax] for ax in axes]
        if c2r:
            s[-1] = 2 * (shape[axes[-1]] - 1)
    s = [int(shape[ax]) if n == -1 else int(n) for n, ax in zip(s, axes)]
    return axes, s


@nondiff_helper
def listed(n):
    """A 1-d transform's n or axis as fftn's s or axes: [n], None for None."""
    return None if n is None else [n]


@nondiff_helper
def _cut_or_pad(shape, axis, n):
    """(slices, pad widths) taking an array of `shape` to length n along axis."""
    cur = shape[axis]
    index = tuple(slice(None) if i != axis else slice(0, min(cur, n)) for i in range(len(shape)))
    widths = [(0, 0)] * len(shape)
    widths[axis] = (0, max(n - cur, 0))
    return index, widths


def fix_length(x, n, axis):
    """x cut or zero-padded to length n along axis (what the FFTs do to their
    input; the adjoint of one is the other)."""
    index, widths = _cut_or_pad(np.shape(x), axis, n)
    return np.pad(x[index], widths)


def fix_lengths(x, like, axes):
    """x cut or zero-padded along `axes` to the lengths `like` has there."""
    for ax in axes:
        x = fix_length(x, np.shape(like)[ax], ax)
    return x


@nondiff_helper
def irfft_weights(n, g, axis):
    """w_k for the half spectrum k = 0 .. n//2 of a real signal of length n:
    1 for k = 0 (and k = n/2 for even n), 2 for the others, whose
    conjugates stand for the missing half. Shaped along `axis` of g."""
    w = np.full(n // 2 + 1, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    shape = [1] * np.ndim(g)
    shape[axis] = -1
    return w.reshape(shape).astype(_dtype(g))


def c2c_adjoint(g, a, s, axes, norm, inverse):
    """fftn / ifftn (and fft, ifft, fft2, ifft2): z = F a with F the DFT
    along `axes` (scaled by norm) after cutting/padding a to s. In TF's
    convention the cotangent is F^H g (README, "Complex inputs"): the
    opposite transform with the dual norm, cut/padded back to a's lengths;
    its real part for a real a."""
    axes, s = fft_axes(a, s, axes)
    if inverse:
        h = np.fft.fftn(g, axes=axes, norm=dual_norm(norm))
    else:
        h = np.fft.ifftn(g, axes=axes, norm=dual_norm(norm))
    return real_if_real(fix_lengths(h, a, axes), a)


def r2c_adjoint(g, a, s, axes, norm):
    """rfftn (and rfft, rfft2) of a real a: the DFT's first n//2 + 1 rows
    along the last axis, so the cotangent is Re(F^H P g), P zero-padding the
    half spectrum to length n: the inverse transform (dual norm) of the
    padded g, real part, cut/padded back."""
    axes, s = fft_axes(a, s, axes)
    h = np.fft.ifftn(fix_length(g, s[-1], axes[-1]), axes=axes, norm=dual_norm(norm))
    return real_if_real(fix_lengths(h, a, axes), a)


def c2r_adjoint(g, a, s, axes, norm):
    """irfftn (and irfft, irfft2): y = Re(B c) with B_jk = w_k e^{2 pi i jk/n}
    (scaled) along the last axis, w the weights of `irfft_weights` (the
    imaginary parts of c_0 and c_{n/2} are discarded), after the inverse
    complex transforms along the other axes. The cotangent of c is B^H g =
    w * rfft(g) (dual norm), then the forward complex transforms along the
    other axes, cut/padded back to c's lengths."""
    axes, s = fft_axes(a, s, axes, True)
    n = s[-1]
    u = np.fft.rfft(g, axis=axes[-1], norm=dual_norm(norm)) * irfft_weights(n, g, axes[-1])
    if len(axes) > 1:
        u = np.fft.fftn(u, axes=axes[:-1], norm=dual_norm(norm))
    return real_if_real(fix_lengths(u, a, axes), a)


# ---------------------------------------------------------- linear algebra

def _solve_right_h(b, r):
    """b R^{-H} for an invertible (triangular) R: solve(R, b^H)^H."""
    return mH(np.linalg.solve(r, mH(b)))


def eig_adjoint(gw, gv, w, v, a):
    """A = V diag(w) V^{-1} (general square A, distinct eigenvalues;
    NumPy normalizes each eigenvector to unit 2-norm, with an arbitrary
    phase a loss must not depend on). With M = V^{-1} dA V,
    dw = diag(M) and dV = V (F o M) + V diag(c), F_ij = 1/(w_j - w_i) off
    the diagonal, c_j = -Re(v_j^H (V (F o M))_j) keeping |v_j| = 1. In TF's
    convention this gives (Boeddeker et al. 2017; autograd's grad_eig is
    the conjugate):
        Abar = V^{-H} (diag(wbar) + conj(F) o (V^H Vt)) V^H,
        Vt = Vbar - V Re(diag(V^H Vbar)),
    real part for a real A. The eigenvector term is skipped when Vbar is
    zero (eigenvalues only)."""
    inner = np.expand_dims(gw, -2) * eye_like(w)
    if _any_nonzero(gv):
        vhgv = np.matmul(mH(v), gv)
        norm_term = np.real(np.diagonal(vhgv, axis1=-2, axis2=-1))
        vt = gv - v * np.expand_dims(norm_term, -2)
        inner = inner + conj(off_diagonal_inverse_gaps(w)) * np.matmul(mH(v), vt)
    abar = np.linalg.solve(mH(v), np.matmul(inner, mH(v)))    # V^{-H} inner V^H
    return real_if_real(abar, a)


def eigvals_adjoint(g, a):
    """Eigenvalues of a general A: Abar = V^{-H} diag(wbar) V^H (real part
    for a real A; the eigenvectors are recomputed)."""
    w, v = np.linalg.eig(a)
    return eig_adjoint(g, 0.0, w, v, a)


def eigvals_tangent(ta, a):
    """dw = diag(V^{-1} dA V) (the eigenvectors are recomputed)."""
    w, v = np.linalg.eig(a)
    return np.diagonal(np.linalg.solve(v, np.matmul(ta, v)), axis1=-2, axis2=-1)


def _copyltu_h(m):
    """The Hermitian matrix with m's strictly lower triangle below the
    diagonal, its conjugate transpose above, and Re(diag m) on it."""
    low = np.tril(m, -1)
    return low + mH(low) + np.real(m) * eye_like(m)


def qr_square_adjoint(gq, gr, q, r):
    """A = Q R with m >= n (Q m x n with orthonormal columns, R n x n upper
    triangular, invertible, with real diagonal as LAPACK returns it):
    Abar = (Qbar + Q copyltu(M)) R^{-H}, M = R Rbar^H - Qbar^H Q, where
    copyltu builds a Hermitian matrix from M's lower triangle (Walter &
    Lehmann 2018; Seeger et al. 2017; with conjugate transposes and the
    real part of the diagonal for complex A)."""
    m = np.matmul(r, mH(gr)) - np.matmul(mH(gq), q)
    return _solve_right_h(gq + np.matmul(q, _copyltu_h(m)), r)


def qr_adjoint(gq, gr, q, r):
    """Reduced QR of any A of full rank. m >= n: qr_square_adjoint. m < n:
    A = [X | Y], R = [U | V] with X = Q U the QR of the square part and
    Y = Q V; then Ybar = Q Vbar and X's cotangent is the square one with
    Qbar + Y Vbar^H (Liao et al. 2019; PyTorch's linalg_qr_backward)."""
    m, n = np.shape(q)[-2], np.shape(r)[-1]
    if m >= n:
        return qr_square_adjoint(gq, gr, q, r)
    u, gu = r[..., :, :m], gr[..., :, :m]
    v, gv = r[..., :, m:], gr[..., :, m:]
    y = np.matmul(q, v)
    gx = qr_square_adjoint(gq + np.matmul(y, mH(gv)), gu, q, u)
    return np.concatenate([gx, np.matmul(q, gv)], axis=-1)


def qr_rule_adjoint(g, z, a, mode):
    """np.linalg.qr's rule: mode 'reduced' (Q, R); 'complete' (Q m x m,
    defined when m <= n or when Qbar vanishes on Q's extra columns, an
    arbitrary basis of the complement); 'r' (R alone, Q recomputed). The
    mode 'raw' is refused."""
    if mode == "raw":
        raise NotImplementedError("np.linalg.qr(mode='raw') has no rule: use 'reduced', "
                                  "'complete' or 'r'")
    if mode == "r":
        q = np.linalg.qr(a)[0]
        return qr_adjoint(np.zeros_like(q), g, q, z)
    gq, gr, q, r = g[0], g[1], z[0], z[1]
    m, n = np.shape(q)[-2], np.shape(r)[-1]
    if mode == "complete" and m > n:
        if _any_nonzero(gq[..., :, n:]):
            raise NotImplementedError(
                "the gradient of np.linalg.qr(mode='complete') through the extra columns of Q "
                "(an arbitrary basis of the orthogonal complement) is not defined: use "
                "mode='reduced'")
        q, gq, r, gr = q[..., :, :n], gq[..., :, :n], r[..., :n, :], gr[..., :n, :]
    return qr_adjoint(gq, gr, q, r)


@nondiff_helper
def _check_full_rank(a, rank):
    if int(rank) < min(np.shape(a)[-2:]):
        raise NotImplementedError(
            "np.linalg.lstsq: the gradient is implemented for a matrix of full rank "
            "(rank %d < %d here; rcond truncated it, or it is singular)"
            % (int(rank), min(np.shape(a)[-2:])))


@nondiff_helper
def _has_residuals(res):
    return np.size(res) > 0


def lstsq_adjoint(g, z, a, b, wrt_a):
    """np.linalg.lstsq(a, b) -> (x, residuals, rank, s) for a of full rank
    (overdetermined: least squares; underdetermined: minimum norm):
    x = pinv(a) b, so bbar = pinv(a)^H xbar and abar is pinv's cotangent
    (Golub & Pereyra 1973) for pinvbar = xbar b^H. The residuals
    r_j = |b_j - a x_j|^2 (m > n) are stationary in x (normal equations),
    so dr_j = 2 Re(e_j^H (db_j - da x_j)), e = b - a x: bbar += 2 rbar e,
    abar -= 2 (e rbar) x^H. The singular values s: abar += U diag(sbar) V^H.
    A 1-d b is a column."""
    gx, gres, gs = g[0], real_part(g[1]), real_part(g[3])
    x, res, rank = z[0], z[1], z[2]
    _check_full_rank(a, rank)
    b2 = np.expand_dims(b, -1) if np.ndim(b) == 1 else b
    x2 = np.expand_dims(x, -1) if np.ndim(b) == 1 else x
    gx2 = np.expand_dims(gx, -1) if np.ndim(b) == 1 else gx
    p = np.linalg.pinv(a)
    if not wrt_a:
        gb = np.matmul(mH(p), gx2)
        if _has_residuals(res):
            gb = gb + 2.0 * (b2 - np.matmul(a, x2)) * gres
        return real_if_real(gb[..., 0] if np.ndim(b) == 1 else gb, b)
    ga = pinv_adjoint(np.matmul(gx2, mH(b2)), p, a)
    if _has_residuals(res):
        ga = ga - 2.0 * np.matmul((b2 - np.matmul(a, x2)) * gres, mH(x2))
    ga = ga + svd_values_adjoint(gs, a)
    return real_if_real(ga, a)
