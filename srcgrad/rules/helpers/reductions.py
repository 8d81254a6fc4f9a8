"""Run-time helpers of the reduction rules (rules/numpy/reductions.py):
max/min choosers (ties split evenly, as autograd and JAX), the zero-safe
product of the others (TF's _ProdGrad), reversed cumulative sums,
np.average's weights, the norms' gradients, the nan- reductions, the
order statistics (np.quantile's method 'linear', Hyndman & Fan 1996 type 7,
NumPy's default) and np.trapezoid's factors.
"""
import numpy as np

from ...runtime import nondiff_helper
from .broadcast import _normalize_axes, unbroadcast, unreduce
from .complex import conj, float_dtype, inexact_dtype, real_part, sign


@nondiff_helper
def max_chooser(x, y, axis=None, keepdims=False):
    """Where `x` attains its reduced max/min `y`: 1/k at each of k tied
    positions, 0 elsewhere (ties split evenly, as autograd and JAX do). `x`
    may be a list of arrays (np.max([a, b], axis=0))."""
    if type(x) is np.ndarray and x.dtype.kind == "f" and x.dtype.itemsize >= 4 and type(y) is np.ndarray:
        # the common cases (log-softmax's max, k-means' nearest centre), in fewer calls
        if not keepdims and type(axis) is int:
            y = np.expand_dims(y, axis)
        if keepdims or type(axis) is int:
            mask = (x == y).astype(x.dtype)
            mask /= np.add.reduce(mask, axis=axis, keepdims=True)
            return mask
    x = np.asarray(x)
    shape = np.shape(x)
    if axis is not None and not keepdims:
        axes = _normalize_axes(axis, len(shape))
        y = np.reshape(y, tuple(1 if i in axes else s for i, s in enumerate(shape)))
    elif axis is None and not keepdims:
        y = np.reshape(y, (1,) * len(shape))
    floating = np.issubdtype(np.asarray(x).dtype, np.floating)
    mask = np.astype(x == y, np.result_type(x, np.float32) if floating else np.float64)
    return mask / np.sum(mask, axis=axis, keepdims=True)


@nondiff_helper
def is_not_nan(x):
    return ~np.isnan(x)


def _axes(axis, ndim):
    """`axis` (None, an int or a tuple) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if not isinstance(axis, (tuple, list)):
        axis = (axis,)
    return tuple(sorted(a % ndim for a in axis))


@nondiff_helper
def degrees_of_freedom(a, y, ddof=0, correction=None):
    """N - ddof for np.var/np.std: N elements of `a` reduced into each of `y`
    (`correction` is the array-API name of ddof). A Python number, so a
    float32 cotangent stays float32."""
    n = np.size(a) // max(np.size(y), 1)
    return n - (correction if correction is not None else ddof)


def prod_others(a, axis=None, initial=None):
    """For each entry of `a`, the product of the other entries reduced with
    it by np.prod(a, axis): d prod / d a_i. Safe at zeros (no division by
    a zero entry): with one zero in a reduction, only the zero gets the
    product of the rest; with two or more, every entry gets 0 (TF's _ProdGrad
    gets the same with exclusive cumprods). Written with NumPy functions that
    have rules, so it is differentiated again."""
    zero = np.equal(a, 0)
    safe = np.where(zero, 1.0, a)
    p = np.prod(safe, axis=axis, keepdims=True)
    if initial is not None:
        p = p * initial
    zeros = np.sum(np.astype(zero, np.int64), axis=axis, keepdims=True)     # (the array API sums numbers only)
    return np.where(np.equal(zeros, 0), p / safe,
                    np.where(np.logical_and(zero, np.equal(zeros, 1)), p, 0.0))


def reverse_cumsum(g, axis):
    """sum_{j >= i} g_j along `axis` (the adjoint of cumsum), as
    total - cumsum + g: no flips, only functions with rules."""
    return np.sum(g, axis=axis, keepdims=True) - np.cumsum(g, axis=axis) + g


def cumsum_adjoint(g, a, axis=None):
    """The cotangent of `a` in cumsum(a, axis): the reversed cumulative sum of
    `g`; with axis=None cumsum ran on a.ravel(), so it is reshaped back."""
    if axis is None:
        return np.reshape(reverse_cumsum(g, 0), np.shape(a))
    return reverse_cumsum(g, axis)


def drop_initial(g, axis, include_initial):
    """The cotangent of cumulative_sum/_prod's output without the leading
    initial value (include_initial=True prepends it along `axis`)."""
    if not include_initial:
        return g
    index = [slice(None)] * np.ndim(g)
    index[0 if axis is None else axis] = slice(1, None)
    return g[tuple(index)]


@nondiff_helper
def nan_mean_weights(a, axis=None):
    """d nanmean / d a: 1/count over the non-NaN entries of each reduction,
    0 at NaNs; in a's floating dtype."""
    keep = ~np.isnan(a)
    count = np.sum(keep, axis=axis, keepdims=True)
    return np.astype(keep / count, float_dtype(a))


def _broadcast_weights(a, weights, axis):
    """np.average's weights, reshaped to broadcast against `a` (1-d weights
    lie along `axis`)."""
    if np.ndim(weights) == np.ndim(a):
        return weights
    axes = _axes(axis, np.ndim(a))
    shape = tuple(np.shape(a)[i] if i in axes else 1 for i in range(np.ndim(a)))
    return np.reshape(weights, shape)


def _refuse_returned(returned):
    if returned:
        raise NotImplementedError(
            "srcgrad: np.average(..., returned=True) returns a tuple; differentiate "
            "np.average and np.sum(weights) separately")


def average_weights(a, weights=None, axis=None, returned=False):
    """d average / d a: the normalised weights w / sum(w) broadcast against
    `a` (1/N without weights). Differentiable in `weights`."""
    _refuse_returned(returned)
    if weights is None:
        return uniform_weights(a, axis)
    wb = _broadcast_weights(a, weights, axis)
    return wb / np.sum(wb, axis=axis, keepdims=True)


@nondiff_helper
def uniform_weights(a, axis):
    n = 1
    for i in _axes(axis, np.ndim(a)):
        n *= np.shape(a)[i]
    return 1.0 / n


def average_weights_adjoint(g, a, y, weights, axis=None, keepdims=False, returned=False):
    """The cotangent of `weights` in y = sum(a w) / sum(w) over `axis`:
    g (a - y) / sum(w), summed back to the weights' shape."""
    _refuse_returned(returned)
    wb = _broadcast_weights(a, weights, axis)
    c = (unreduce(g, a, axis, keepdims) * (a - unreduce(y, a, axis, keepdims))
         / np.sum(wb, axis=axis, keepdims=True))
    if np.ndim(weights) == np.ndim(a):
        return c
    axes = _axes(axis, np.ndim(a))
    other = tuple(i for i in range(np.ndim(a)) if i not in axes)
    return np.reshape(np.sum(c, axis=other), np.shape(weights))


# ---------------------------------------------------------------------- norms

def _norm_kind(x, ord, axis, kind):
    """('vector' | 'matrix', axes, ord) for np.linalg.norm's arguments
    (`kind` forces vector_norm / matrix_norm semantics)."""
    nd = np.ndim(x)
    if kind == "vector":
        return "vector", _axes(axis, nd), 2 if ord is None else ord
    if kind == "matrix":
        return "matrix", _pair((-2, -1) if axis is None else axis, nd), "fro" if ord is None else ord
    if axis is None:
        if ord is None:
            return "vector", _axes(None, nd), 2
        axis = (0,) if nd == 1 else (0, 1)
    elif not isinstance(axis, (tuple, list)):
        axis = (axis,)
    if len(axis) == 1:
        return "vector", _axes(axis, nd), 2 if ord is None else ord
    return "matrix", _pair(axis, nd), "fro" if ord is None else ord


def _pair(axis, nd):
    """A matrix norm's (row axis, column axis), non-negative, in the order
    given: unlike a reduction's axes, the order matters (axis=(1, 0) is the
    norm of the transpose: ord=1's column sums are then sums over axis 0)."""
    return tuple(a % nd for a in axis)


@nondiff_helper
def norm_chooser(x, z, sum_axis, choose_axis):
    """Where the sum of |x| over `sum_axis` attains the norm `z` (broadcast
    to x's shape) among the sums along `choose_axis`: 1/k for k ties."""
    s = np.sum(np.abs(x), axis=sum_axis, keepdims=True)
    mask = np.astype(s == z, float_dtype(x))
    mask = np.broadcast_to(mask, np.shape(x))
    return mask / np.sum(mask, axis=choose_axis, keepdims=True)


@nondiff_helper
def abs_chooser(x, z):
    """Where |x| attains the inf/-inf vector norm `z` (full shape), 1/k for k ties."""
    return np.astype(np.abs(x) == z, float_dtype(x))


def norm_adjoint(g, x, z, ord=None, axis=None, keepdims=False, kind=None):
    """The cotangent of `x` in z = np.linalg.norm(x, ord, axis, keepdims)
    (or vector_norm/matrix_norm, `kind`). Gradients (TF's convention for
    complex x, where the 2-norm's is x / |x|):
      vector: 2 -> x / z;  1 -> sign(x);  inf/-inf -> sign(x) at the entries
        attaining max/min |x| (ties split evenly);  0 -> 0;
        p -> x |x|^(p-2) / z^(p-1);
      matrix: 'fro' -> x / z;  'nuc' -> U V^H;  2/-2 -> u v^H of the
        largest/smallest singular value;  1/-1 (inf/-inf) -> sign(x) in the
        column (row) of largest/smallest absolute sum, ties split evenly.
    """
    g = real_part(g)
    kind, axes, ord = _norm_kind(x, ord, axis, kind)
    red = axes if axis is not None or kind == "matrix" else None
    gf = unreduce(g, x, red, keepdims)
    zf = unreduce(z, x, red, keepdims)
    if kind == "vector":
        if ord == 2:
            return gf * x / zf
        if ord == 1:
            return gf * sign(x)
        if ord == np.inf or ord == -np.inf:
            mask = abs_chooser(x, zf)
            return gf * sign(x) * mask / np.sum(mask, axis=axes, keepdims=True)
        if ord == 0:
            return gf * 0.0
        return gf * x * np.abs(x) ** (ord - 2) / zf ** (ord - 1)
    r, c = axes
    if ord == "fro":
        return gf * x / zf
    if ord in (1, -1):
        return gf * sign(x) * norm_chooser(x, zf, r, c)
    if ord in (np.inf, -np.inf):
        return gf * sign(x) * norm_chooser(x, zf, c, r)
    if ord in ("nuc", 2, -2):
        xm = np.moveaxis(x, (r, c), (-2, -1))
        u, s, vh = np.linalg.svd(xm, full_matrices=False)
        if ord == 2:
            u, vh = u[..., :, :1], vh[..., :1, :]
        elif ord == -2:
            u, vh = u[..., :, -1:], vh[..., -1:, :]
        return gf * np.moveaxis(np.matmul(u, vh), (-2, -1), (r, c))
    raise ValueError("srcgrad: no gradient for np.linalg.norm with ord=%r" % (ord,))


# ------------------------------------------------------------ nan- reductions

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
    return np.astype(np.sum(~np.isnan(a), axis=axis, keepdims=True), inexact_dtype(a))


@nondiff_helper
def nan_mask(a):
    """1 where `a` is not NaN, 0 where it is, in a's floating dtype."""
    return np.astype(~np.isnan(a), inexact_dtype(a))


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


# ------------------------------------------------------------------ quantiles

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
    return order, np.astype(n, inexact_dtype(a))


@nondiff_helper
def _rank_onehots(order, position, dtype):
    """One-hot masks over a slice's entries (last axis) of the entry of
    sorted rank `position` (shape qshape + rest + (1,)), per quantile:
    shape qshape + rest + (N,)."""
    nq = np.ndim(position) - np.ndim(order)
    order = np.broadcast_to(order, np.shape(position)[:nq] + np.shape(order))
    src = np.take_along_axis(order, np.maximum(position, 0).astype(np.intp), axis=-1)
    return np.astype(np.arange(np.shape(order)[-1]) == src, dtype)


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
    dtype = inexact_dtype(g, a)
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


# ---------------------------------------------------------------- trapezoid

def trapezoid_terms(y, x, dx, axis):
    """np.trapezoid's two factors, as NumPy computes them
    (numpy/lib/_function_base_impl.py): the spacings d (dx; or np.diff(x)
    along `axis`, a 1-d x reshaped to lie along y's `axis`) and the sums of
    neighbours s = y[1:] + y[:-1] along `axis`; z = sum(d s / 2, axis).
    Written with operations that have rules (differentiated again)."""
    ndim = np.ndim(y)
    upper = [slice(None)] * ndim
    lower = [slice(None)] * ndim
    upper[axis] = slice(1, None)
    lower[axis] = slice(None, -1)
    s = y[tuple(upper)] + y[tuple(lower)]
    if x is None:
        return dx, s
    if np.ndim(x) == 1:
        shape = [1] * ndim
        shape[axis] = np.shape(x)[0] - 1
        return np.reshape(np.diff(x), shape), s
    return np.diff(x, axis=axis), s


@nondiff_helper
def _pad_along(ndim, axis, before, after):
    widths = [(0, 0)] * ndim
    widths[axis] = (before, after)
    return widths


def _trapezoid_product_cotangent(g, d, s, axis):
    """The cotangent of the product d s / 2 that z sums over `axis`."""
    shape = np.broadcast_shapes(np.shape(d), np.shape(s))
    return np.broadcast_to(np.expand_dims(g, axis), shape) / 2.0


def trapezoid_y_adjoint(g, y, x, dx, axis):
    """d y_i = g (d_{i-1} + d_i) / 2 along `axis` (d_{-1} = d_{n-1} = 0): the
    cotangent of s = y[1:] + y[:-1], g d / 2 (conjugated: TF's convention),
    added back at both ends' positions (zero padding), summed back over
    broadcasting."""
    d, s = trapezoid_terms(y, x, dx, axis)
    gs = unbroadcast(_trapezoid_product_cotangent(g, d, s, axis) * conj(d), s)
    ndim = np.ndim(y)
    return (np.pad(gs, _pad_along(ndim, axis, 1, 0)) + np.pad(gs, _pad_along(ndim, axis, 0, 1)))


def trapezoid_dx_adjoint(g, y, x, dx, axis):
    """d dx = sum of g s / 2 (summed back to dx's shape); 0 when x is given
    (NumPy then ignores dx)."""
    d, s = trapezoid_terms(y, x, dx, axis)
    gd = _trapezoid_product_cotangent(g, d, s, axis) * conj(s)
    if x is not None:
        return np.zeros(np.shape(dx), dtype=inexact_dtype(gd))
    return unbroadcast(gd, dx)


def trapezoid_x_adjoint(g, y, x, dx, axis):
    """d is np.diff(x): its cotangent g s / 2 goes to x through diff's
    adjoint, d x_j = dd_{j-1} - dd_j along the axis (zero padding)."""
    d, s = trapezoid_terms(y, x, dx, axis)
    gd = unbroadcast(_trapezoid_product_cotangent(g, d, s, axis) * conj(s), d)
    if np.ndim(x) == 1:
        gd, axis = np.reshape(gd, (-1,)), 0
    ndim = np.ndim(gd)
    return np.pad(gd, _pad_along(ndim, axis, 1, 0)) - np.pad(gd, _pad_along(ndim, axis, 0, 1))


def trapezoid_x_tangent(tx, y, axis):
    """z is linear in x (through np.diff): its tangent is np.trapezoid with
    the tangent of x as the sample points. Linear in tx."""
    return np.trapezoid(y, x=tx, axis=axis)


@nondiff_helper
def _trapezoid_zeros(y, x, axis):
    z = np.trapezoid(y, x=x, axis=axis)
    return np.zeros(np.shape(z), dtype=inexact_dtype(z))


def trapezoid_dx_tangent(tdx, y, x, axis):
    """z is linear in dx (when x is None: otherwise dx is ignored, a zero
    tangent): np.trapezoid with the tangent as the spacing. Linear in tdx."""
    if x is not None:
        return _trapezoid_zeros(y, x, axis)
    return np.trapezoid(y, dx=tdx, axis=axis)


def zero_safe_ratio(g, y):
    """g / y, and 0 where y is 0: the cotangent of std through 1/std at a
    constant input (one element, or all equal), where std is 0 and the
    function is constant along every direction that keeps it so (autograd's
    and central differences' 0, not 0/0). Elementwise and linear in g."""
    zero = y == 0
    return np.where(zero, 0.0, g / np.where(zero, 1.0, y))
