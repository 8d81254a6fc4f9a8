"""Rule-test rows for srcgrad/rules/numpy_more.py and the pad modes added to
np.pad's rule: full, full_like, linspace (differentiated fill value and end
points), copy, the builtin sorted, block, insert, row_stack, ptp, median,
quantile, percentile (and their nan- variants, with q differentiated too),
nanprod, nanvar, nanstd, and np.pad in the modes maximum, minimum, mean,
median and linear_ramp.

autograd has no rule for most of these, so `ref` writes each with autograd
operations that have one: order statistics by sorting with NumPy (a
permutation, not differentiated) and autograd indexing, pad's statistic
modes axis by axis as NumPy computes them (numpy/lib/_arraypad_impl.py).

TANGENT_CASES: rows for tests/test_forward.py's tangent table (its format:
name, case function, input specs, primitives covered), for the tangent
rules of numpy_more.py (block and insert: audit 11).
"""
import builtins

import autograd.numpy as anp
import numpy as np
from rulecase import Arg, Case, NAN, ND, R, Static, WC  # noqa: F401

C = Case


def _raw(x):
    """The value inside an autograd box (to compute a permutation)."""
    while hasattr(x, "_value"):
        x = x._value
    return np.asarray(x)


# ----------------------------------------------------------- constructors

def f_full(v, w):
    return np.sum(np.full((3, 4), v) * w)


def f_full_dtype(v, w):
    return np.sum(np.full((2, 3), v, dtype=v.dtype) * w)


def f_full_like(x, v, w):
    # `x * v` (a Tensor op by op) so that NumPy dispatches full_like to srcgrad:
    # np.full_like(plain_array, tensor) converts the Tensor (see test_numpy_more.py)
    return np.sum(np.full_like(x * v, v) * w)


def f_linspace(a, b, w):
    return np.sum(np.linspace(a, b, 5) * w)


def f_linspace_axis(a, b, w):
    return np.sum(np.linspace(a, b, 4, axis=1) * w)


def f_linspace_open(a, b, w):
    return np.sum(np.linspace(a, b, 3, endpoint=False, axis=-1) * w)


def f_linspace_one(a, b, w):
    return np.sum(np.linspace(a, b, 1) * w)


def _ag_linspace(a, b, num, endpoint=True, axis=0):
    t = np.linspace(0.0, 1.0, num, endpoint=endpoint)
    nd = np.ndim(np.broadcast_to(_raw(a), np.broadcast_shapes(np.shape(_raw(a)), np.shape(_raw(b))))) + 1
    shape = [1] * nd
    shape[axis % nd] = num
    t = t.reshape(shape)
    return anp.expand_dims(a, axis) * (1.0 - t) + anp.expand_dims(b, axis) * t


def f_copy(x, w):
    return np.sum(np.copy(x) * w)


# ----------------------------------------------------------------- sorted

def f_sorted_list(x, w):
    return np.sum(np.stack(sorted([x[0], x[1], x[2], x[3]])) * w)


def f_sorted_reverse(x, w):
    return np.sum(np.stack(sorted([x[2], x[0], x[1]], reverse=True)) * w)


def f_sorted_array(x, w):
    return np.sum(np.stack(sorted(x)) * w)


def f_sorted_key(x, w):
    return np.sum(np.stack(sorted(x, key=abs)) * w)


def f_sorted_mixed(x, w):
    ys = sorted([x[0], 0.25, x[1], -0.5])
    return ys[0] * w[0] + ys[1] * w[1] + ys[2] * w[2] + ys[3] * w[3]


def _ag_sorted(x, key=None, reverse=False):
    v = _raw(x)
    order = sorted(range(len(v)), key=lambda i: (key or (lambda e: e))(v[i]), reverse=reverse)
    return x[np.array(order)]


def _ag_sorted_mixed(x):
    v = anp.concatenate([x[:1], np.array([0.25]), x[1:2], np.array([-0.5])])
    return _ag_sorted(v)


# ------------------------------------------------------------ block, insert

def f_block_1d(a, b, w):
    return np.sum(np.block([a, b, a]) * w)


def f_block_2d(a, b, c, e, w):
    return np.sum(np.block([[a, b], [c, e]]) * w)


def f_block_scalar(a, s, w):
    return np.sum(np.block([[a], [np.full((1, 3), s)]]) * w)


def f_insert_flat(a, v, w):
    return np.sum(np.insert(a, 2, v) * w)


def f_insert_rows(a, v, w):
    return np.sum(np.insert(a, [1, 3], v, axis=0) * w)


def f_insert_broadcast(a, v, w):
    return np.sum(np.insert(a, 1, v, axis=1) * w)


def f_row_stack(a, b, w):
    return np.sum(np.row_stack([a, b]) * w)


# ------------------------------------------------------------- reductions

def f_ptp(x, w):
    return np.sum(np.ptp(x) * w)


def f_ptp_ax0(x, w):
    return np.sum(np.ptp(x, axis=0) * w)


def f_ptp_ax1_kd(x, w):
    return np.sum(np.ptp(x, axis=1, keepdims=True) * w)


def _ag_ptp(axis=None, keepdims=False):
    def ref(x):
        return anp.max(x, axis=axis, keepdims=keepdims) - anp.min(x, axis=axis, keepdims=keepdims)
    return ref


def _ag_quantile(x, q, axis=None, keepdims=False, nan=False):
    """np.quantile(x, q, axis, method='linear'), written with autograd
    indexing: the sort order is computed by NumPy (a permutation of the
    entries, not differentiated), the interpolation weights from q."""
    v = _raw(x)
    nd = v.ndim
    axes = tuple(range(nd)) if axis is None else tuple(
        sorted(a % nd for a in (axis if isinstance(axis, tuple) else (axis,))))
    rest = [i for i in range(nd) if i not in axes]
    moved = anp.reshape(anp.transpose(x, rest + list(axes)),
                        (int(np.prod([v.shape[i] for i in rest])), -1))
    vm = np.transpose(v, rest + list(axes)).reshape(moved.shape)
    order = np.argsort(vm, axis=-1, kind="stable")
    rows = np.arange(vm.shape[0])[:, None]
    srt = moved[rows, order]
    n = np.sum(~np.isnan(vm), axis=-1, keepdims=True) if nan else np.full((vm.shape[0], 1), vm.shape[1])
    qv = _raw(q)
    qshape = np.shape(qv)
    qx = anp.reshape(q, qshape + (1, 1))
    h = (n - 1) * qx
    lo = np.floor(_raw(h)).astype(int)
    hi = np.minimum(lo + 1, n - 1)
    f = h - lo
    x_lo = srt[rows, lo]
    x_hi = srt[rows, hi]
    out = (1.0 - f) * x_lo + f * x_hi               # qshape + (rows, 1)
    out_shape = tuple(1 if (keepdims and i in axes) else v.shape[i] for i in range(nd)
                      if keepdims or i not in axes)
    return anp.reshape(out, qshape + out_shape)


def f_median(x, w):
    return np.sum(np.median(x) * w)


def f_median_ax0(x, w):
    return np.sum(np.median(x, axis=0) * w)


def f_median_ax12_kd(x, w):
    return np.sum(np.median(x, axis=(1, 2), keepdims=True) * w)


def f_nanmedian_ax1(x, w):
    return np.sum(np.nanmedian(x, axis=1) * w)


def f_quantile(x, q, w):
    return np.sum(np.quantile(x, q) * w)


def f_quantile_ax(x, q, w):
    return np.sum(np.quantile(x, q, axis=-1) * w)


def f_quantile_static(x, w):
    return np.sum(np.quantile(x, [0.1, 0.5, 0.95], axis=0, keepdims=True) * w)


def f_nanquantile(x, q, w):
    return np.sum(np.nanquantile(x, q, axis=1) * w)


def f_percentile(x, q, w):
    return np.sum(np.percentile(x, q * 100.0, axis=0) * w)


def f_nanpercentile(x, w):
    return np.sum(np.nanpercentile(x, 30.0) * w)


def f_nanprod(x, w):
    return np.sum(np.nanprod(x) * w)


def f_nanprod_ax1(x, w):
    return np.sum(np.nanprod(x, axis=1) * w)


def f_nanvar(x, w):
    return np.sum(np.nanvar(x) * w)


def f_nanvar_ax0_ddof(x, w):
    return np.sum(np.nanvar(x, axis=0, ddof=1) * w)


def f_nanstd_ax1_kd(x, w):
    return np.sum(np.nanstd(x, axis=1, keepdims=True) * w)


def f_nanstd(x, w):
    return np.sum(np.nanstd(x) * w)


def _ag_nanvar(axis=None, keepdims=False, ddof=0, std=False):
    def ref(x):
        keep = ~np.isnan(_raw(x))
        x0 = anp.where(keep, x, 0.0)
        n = np.sum(keep, axis=axis, keepdims=True)
        m = anp.sum(x0, axis=axis, keepdims=True) / n
        dev = anp.where(keep, x0 - m, 0.0)
        var = anp.sum(dev * dev, axis=axis, keepdims=keepdims) / (
            np.sum(keep, axis=axis, keepdims=keepdims) - ddof)
        return anp.sqrt(var) if std else var
    return ref


def _ag_nanprod(axis=None):
    def ref(x):
        return anp.prod(anp.where(np.isnan(_raw(x)), 1.0, x), axis=axis)
    return ref


# ------------------------------------------------------------- pad modes

def f_pad_stat(a, pad_width, mode, w):
    return np.sum(np.pad(a, pad_width, mode=mode) * w)


def f_pad_stat_length(a, w):
    return np.sum(np.pad(a, ((2, 1), (1, 3)), mode="mean", stat_length=((1, 2), (3, 2))) * w)


def f_pad_max_length(a, w):
    return np.sum(np.pad(a, 2, mode="maximum", stat_length=2) * w)


def f_pad_ramp(a, e, w):
    return np.sum(np.pad(a, ((1, 2), (3, 1)), mode="linear_ramp", end_values=e) * w)


def _ag_pad_stat(a, pad_width, mode, stat_length=None, end_values=0.0):
    """np.pad's statistic modes with autograd operations, axis by axis."""
    v = _raw(a)
    nd = v.ndim
    pw = np.broadcast_to(np.asarray(pad_width), (nd, 2))
    sl = np.broadcast_to(np.asarray(stat_length if stat_length is not None else -1), (nd, 2))
    cur = a
    for axis in range(nd):
        n = _raw(cur).shape[axis]
        l, r = int(pw[axis][0]), int(pw[axis][1])
        moved = anp.moveaxis(cur, axis, 0)
        if mode == "linear_ramp":
            tl = (np.arange(l) / max(l, 1)).reshape((l,) + (1,) * (nd - 1))
            tr = (np.arange(r)[::-1] / max(r, 1)).reshape((r,) + (1,) * (nd - 1))
            left = end_values + (moved[:1] - end_values) * tl
            right = end_values + (moved[-1:] - end_values) * tr
        else:
            ll = n if sl[axis][0] < 0 else min(int(sl[axis][0]), n)
            rl = n if sl[axis][1] < 0 else min(int(sl[axis][1]), n)
            lw, rw = moved[:ll], moved[n - rl:]
            if mode == "median":
                lstat, rstat = _ag_quantile(lw, 0.5, 0, True), _ag_quantile(rw, 0.5, 0, True)
            else:
                red = {"mean": anp.mean, "maximum": anp.max, "minimum": anp.min}[mode]
                lstat, rstat = red(lw, axis=0, keepdims=True), red(rw, axis=0, keepdims=True)
            ones = np.ones((1,) + _raw(moved).shape[1:])
            left = anp.concatenate([lstat] * l, axis=0) if l else ones[:0]
            right = anp.concatenate([rstat] * r, axis=0) if r else ones[:0]
        cur = anp.moveaxis(anp.concatenate([left, moved, right], axis=0), 0, axis)
    return cur


# --------------------------------------------------- einsum, interleaved

def f_einsum_sublists(a, b, w):
    return np.sum(np.einsum(a, [0, 1], b, [1, 2], [0, 2]) * w)


def f_einsum_sublists_implicit(a, b, w):
    return np.sum(np.einsum(a, [1, 0], b, [1, 2]) * w)


def f_einsum_sublists_ellipsis(a, b, c, w):
    return np.sum(np.einsum(a, [Ellipsis, 0, 1], b, [1, 2], c, [2], [Ellipsis, 0]) * w)


# ---------------------------------------------------------- linear algebra

PHASE = 0.6 - 0.8j


def f_eig(a, w):
    lam, v = np.linalg.eig(a)
    parts = np.concatenate([np.real(lam)[..., None, :], np.imag(lam)[..., None, :], np.abs(v) ** 2],
                           axis=-2)
    return np.sum(parts * w)


def _ag_eig(a):
    lam, v = anp.linalg.eig(a)
    return anp.concatenate([anp.real(lam)[..., None, :], anp.imag(lam)[..., None, :],
                            anp.abs(v) ** 2], axis=-2)


# No complex constant multiplies the eigenvalues here: compiled code treats a
# function as real (and leaves conj out of its adjoint) unless it mentions
# complex values or np.fft (function.py's _mentions_complex), and eig's
# complex outputs do not count (reported); np.real/np.imag are right either way.

def f_eig_values_only(a, w):
    lam, v = np.linalg.eig(a)
    return np.sum((0.6 * np.real(lam) + 0.8 * np.imag(lam)) * w)


def f_eigvals(a, w):
    lam = np.linalg.eigvals(a)
    return np.sum((0.6 * np.real(lam) + 0.8 * np.imag(lam)) * w)


def _ag_eigvals(a):
    lam = anp.linalg.eig(a)[0]
    return 0.6 * anp.real(lam) + 0.8 * anp.imag(lam)


def f_lstsq(a, b, w):
    x, res, rank, s = np.linalg.lstsq(a, b)
    return np.sum(np.concatenate([np.ravel(x), res, s]) * w)


def f_lstsq_rcond(a, b, w):
    x, res, rank, s = np.linalg.lstsq(a, b, rcond=1e-8)
    return np.sum(np.concatenate([np.ravel(x), res]) * w)


def _ag_lstsq(a, b, with_s=True, with_res=True):
    m, n = np.shape(a)
    b2 = b if np.ndim(b) == 2 else b[:, None]
    if m >= n:
        x = anp.linalg.solve(anp.dot(a.T, a), anp.dot(a.T, b2))
        res = anp.sum((b2 - anp.dot(a, x)) ** 2, axis=0) if m > n else anp.zeros(0)
    else:
        x = anp.dot(a.T, anp.linalg.solve(anp.dot(a, a.T), b2))
        res = anp.zeros(0)
    parts = [anp.reshape(x if np.ndim(b) == 2 else x[:, 0], -1)]
    if with_res:
        parts.append(res)
    if with_s:
        parts.append(anp.linalg.svd(a, compute_uv=False))
    return anp.concatenate(parts)


def f_qr(a, w):
    q, r = np.linalg.qr(a)
    return np.sum(np.concatenate([np.reshape(q, (-1,)), np.reshape(r, (-1,))]) * w)


def f_qr_complete(a, w):
    q, r = np.linalg.qr(a, mode="complete")
    return np.sum(np.concatenate([np.reshape(q[:, :3], (-1,)), np.reshape(r, (-1,))]) * w)


def f_qr_r(a, w):
    return np.sum(np.linalg.qr(a, mode="r") * w)


def _ag_qr_factors(a):
    """Q, R of NumPy's QR (reduced) without a QR: R = D chol(A^T A)^T for the
    square part, D the signs of NumPy's diag(R) (constants), Q = X R^{-1},
    and for a wide A, R's remaining columns Q^T Y."""
    v = _raw(a)
    m, n = v.shape[-2:]
    k = min(m, n)
    d = np.sign(np.diagonal(np.linalg.qr(v)[1], axis1=-2, axis2=-1))
    x = a[..., :, :k]
    rp = anp.swapaxes(anp.linalg.cholesky(anp.matmul(anp.swapaxes(x, -1, -2), x)), -1, -2)
    r_sq = rp * d[..., :, None]
    q = anp.swapaxes(anp.linalg.solve(anp.swapaxes(r_sq, -1, -2), anp.swapaxes(x, -1, -2)), -1, -2)
    if n > m:
        r = anp.concatenate([r_sq, anp.matmul(anp.swapaxes(q, -1, -2), a[..., :, m:])], axis=-1)
    else:
        r = r_sq
    return q, r


def _ag_qr(a):
    q, r = _ag_qr_factors(a)
    return anp.concatenate([anp.reshape(q, (-1,)), anp.reshape(r, (-1,))])


def _ag_qr_complete(a):
    q, r = _ag_qr_factors(a)
    r_full = anp.concatenate([r, anp.zeros((np.shape(a)[0] - np.shape(a)[1], np.shape(a)[1]))])
    return anp.concatenate([anp.reshape(q, (-1,)), anp.reshape(r_full, (-1,))])


# ---------------------------------------------------------------- the table

CASES = [
    # constructors with a differentiated value
    # np.full(shape, tensor) reads the Tensor with np.asarray (no NumPy dispatch hook,
    # as np.array): compiled code only
    C("full_scalar", f_full, lambda v: v + anp.zeros((3, 4)), (R(),), np.full,
      meta={"compiled_only": True}),
    C("full_row", f_full, lambda v: v + anp.zeros((3, 4)), (R(4),), np.full,
      meta={"compiled_only": True}),
    C("full_dtype", f_full_dtype, lambda v: v + anp.zeros((2, 3)), (R(),), np.full,
      meta={"compiled_only": True}),
    C("full_like", f_full_like, lambda x, v: v + anp.zeros(x.shape), (ND(3, 4), R()), np.full_like),
    C("full_like_row", f_full_like, lambda x, v: v + anp.zeros(x.shape), (ND(2, 3), R(3)),
      np.full_like),
    C("linspace_scalars", f_linspace, lambda a, b: _ag_linspace(a, b, 5), (R(), R()), np.linspace),
    C("linspace_arrays", f_linspace, lambda a, b: _ag_linspace(a, b, 5), (R(3), R(2, 1)),
      np.linspace),
    C("linspace_axis1", f_linspace_axis, lambda a, b: _ag_linspace(a, b, 4, axis=1), (R(3), R(3)),
      np.linspace),
    C("linspace_open_last", f_linspace_open,
      lambda a, b: _ag_linspace(a, b, 3, endpoint=False, axis=-1), (R(2), R()), np.linspace),
    C("linspace_one", f_linspace_one, lambda a, b: _ag_linspace(a, b, 1), (R(), R()), np.linspace),
    C("copy", f_copy, lambda x: x * 1.0, (R(3, 4),), np.copy),
    # the builtin sorted
    C("sorted_list", f_sorted_list, lambda x: _ag_sorted(x), (R(4),), builtins.sorted),
    C("sorted_reverse", f_sorted_reverse, lambda x: _ag_sorted(x[np.array([2, 0, 1])], reverse=True),
      (R(3),), builtins.sorted),
    C("sorted_array", f_sorted_array, lambda x: _ag_sorted(x), (R(5),), builtins.sorted),
    C("sorted_key_abs", f_sorted_key, lambda x: _ag_sorted(x, key=abs), (R(5),), builtins.sorted),
    C("sorted_mixed_floats", f_sorted_mixed, _ag_sorted_mixed, (R(2),), builtins.sorted),
    # block, insert, row_stack
    C("block_1d", f_block_1d, lambda a, b: anp.concatenate([a, b, a]), (R(3), R(2)), np.block),
    C("block_2d", f_block_2d,
      lambda a, b, c, e: anp.concatenate([anp.concatenate([a, b], axis=1),
                                          anp.concatenate([c, e], axis=1)], axis=0),
      (R(2, 3), R(2, 1), R(1, 3), R(1, 1)), np.block, meta={"compiled_only": True}),
    C("block_scalar_fill", f_block_scalar,
      lambda a, s: anp.concatenate([a, s + anp.zeros((1, 3))], axis=0), (R(2, 3), R()), np.block,
      meta={"compiled_only": True}),
    C("insert_flat", f_insert_flat,
      lambda a, v: anp.concatenate([anp.reshape(a, -1)[:2], anp.reshape(v, -1),
                                    anp.reshape(a, -1)[2:]]), (R(2, 3), R(2)), np.insert),
    C("insert_rows", f_insert_rows,
      lambda a, v: anp.concatenate([a[:1], v[None], a[1:3], v[None], a[3:]]), (R(4, 3), R(3)),
      np.insert),
    C("insert_broadcast", f_insert_broadcast,
      lambda a, v: anp.concatenate([a[:, :1], v + anp.zeros((3, 1)), a[:, 1:]], axis=1),
      (R(3, 2), R()), np.insert),
    C("row_stack", f_row_stack, lambda a, b: anp.concatenate([a[None], b[None]]), (R(3), R(3)),
      getattr(np, "row_stack", np.vstack)),
    # order statistics
    C("ptp", f_ptp, _ag_ptp(), (R(3, 4),), np.ptp),
    C("ptp_ax0", f_ptp_ax0, _ag_ptp(0), (R(3, 4),), np.ptp),
    C("ptp_ax1_kd", f_ptp_ax1_kd, _ag_ptp(1, True), (R(2, 3, 4),), np.ptp),
    C("median_even", f_median, lambda x: _ag_quantile(x, 0.5), (R(3, 4),), np.median),
    C("median_odd_ax0", f_median_ax0, lambda x: _ag_quantile(x, 0.5, 0), (R(5, 3),), np.median),
    C("median_ax12_kd", f_median_ax12_kd, lambda x: _ag_quantile(x, 0.5, (1, 2), True),
      (R(2, 3, 2),), np.median),
    C("nanmedian_ax1", f_nanmedian_ax1, lambda x: _ag_quantile(x, 0.5, 1, nan=True), (NAN(3, 6),),
      np.nanmedian),
    C("quantile_q", f_quantile, lambda x, q: _ag_quantile(x, q), (R(3, 4), Arg((), "prob")),
      np.quantile),
    C("quantile_qs_axis", f_quantile_ax, lambda x, q: _ag_quantile(x, q, -1),
      (R(2, 5), Arg((3,), "prob")), np.quantile),
    C("quantile_static_kd", f_quantile_static,
      lambda x: _ag_quantile(x, np.array([0.1, 0.5, 0.95]), 0, True), (R(4, 3),), np.quantile),
    C("nanquantile", f_nanquantile, lambda x, q: _ag_quantile(x, q, 1, nan=True),
      (NAN(3, 7), Arg((2,), "prob")), np.nanquantile),
    C("percentile", f_percentile, lambda x, q: _ag_quantile(x, q, 0),
      (R(6, 2), Arg((), "prob")), np.percentile),
    C("nanpercentile", f_nanpercentile, lambda x: _ag_quantile(x, 0.3, nan=True), (NAN(4, 4),),
      np.nanpercentile),
    C("nanprod", f_nanprod, _ag_nanprod(), (NAN(3, 4),), np.nanprod),
    C("nanprod_ax1", f_nanprod_ax1, _ag_nanprod(1), (NAN(3, 5),), np.nanprod),
    C("nanvar", f_nanvar, _ag_nanvar(), (NAN(3, 4),), np.nanvar),
    C("nanvar_ax0_ddof", f_nanvar_ax0_ddof, _ag_nanvar(0, ddof=1), (NAN(6, 3),), np.nanvar),
    C("nanstd", f_nanstd, _ag_nanvar(std=True), (NAN(3, 4),), np.nanstd),
    C("nanstd_ax1_kd", f_nanstd_ax1_kd, _ag_nanvar(1, True, std=True), (NAN(3, 6),), np.nanstd),
    # np.pad's statistic modes
    C("pad_maximum", f_pad_stat, lambda a, pw, m: _ag_pad_stat(a, pw, m),
      (R(3, 4), Static(((1, 2), (2, 1))), Static("maximum")), np.pad),
    C("pad_minimum_1d", f_pad_stat, lambda a, pw, m: _ag_pad_stat(a, pw, m),
      (R(5), Static((2, 3)), Static("minimum")), np.pad),
    C("pad_mean", f_pad_stat, lambda a, pw, m: _ag_pad_stat(a, pw, m),
      (R(3, 4), Static(2), Static("mean")), np.pad),
    C("pad_median", f_pad_stat, lambda a, pw, m: _ag_pad_stat(a, pw, m),
      (R(4, 3), Static(((1, 1), (2, 0))), Static("median")), np.pad),
    C("pad_median_3d", f_pad_stat, lambda a, pw, m: _ag_pad_stat(a, pw, m),
      (R(2, 3, 3), Static(1), Static("median")), np.pad),
    C("pad_linear_ramp", f_pad_stat, lambda a, pw, m: _ag_pad_stat(a, pw, m),
      (R(3, 4), Static(((2, 1), (1, 3))), Static("linear_ramp")), np.pad),
    C("pad_mean_stat_length", f_pad_stat_length,
      lambda a: _ag_pad_stat(a, ((2, 1), (1, 3)), "mean", ((1, 2), (3, 2))), (R(4, 5),), np.pad),
    C("pad_maximum_stat_length", f_pad_max_length,
      lambda a: _ag_pad_stat(a, 2, "maximum", 2), (R(4, 5),), np.pad),
    C("pad_linear_ramp_end_values", f_pad_ramp,
      lambda a, e: _ag_pad_stat(a, ((1, 2), (3, 1)), "linear_ramp", end_values=e), (R(3, 3), R()),
      np.pad),
]


CASES += [
    # einsum's interleaved (operand, sublist) form
    C("einsum_sublists", f_einsum_sublists, lambda a, b: anp.einsum("ij,jk->ik", a, b),
      (R(2, 3), R(3, 4)), np.einsum),
    C("einsum_sublists_implicit", f_einsum_sublists_implicit, lambda a, b: anp.einsum("ba,bc", a, b),
      (R(3, 2), R(3, 4)), np.einsum),
    C("einsum_sublists_ellipsis", f_einsum_sublists_ellipsis,
      lambda a, b, c: anp.einsum("...ij,jk,k->...i", a, b, c), (R(2, 2, 3), R(3, 4), R(4)), np.einsum),
    # eig, eigvals (general real matrices; complex outputs), lstsq, qr
    C("eig", f_eig, _ag_eig, (R(3, 3),), np.linalg.eig),
    C("eig_batched", f_eig, _ag_eig, (R(2, 4, 4),), np.linalg.eig),
    C("eig_values_only", f_eig_values_only, _ag_eigvals, (R(4, 4),), np.linalg.eig),
    C("eigvals", f_eigvals, _ag_eigvals, (R(3, 3),), np.linalg.eigvals),
    C("eigvals_batched", f_eigvals, _ag_eigvals, (R(2, 3, 3),), np.linalg.eigvals),
    C("lstsq_over", f_lstsq, _ag_lstsq, (WC(5, 3), R(5, 2)), np.linalg.lstsq),
    C("lstsq_over_vector", f_lstsq, _ag_lstsq, (WC(4, 2), R(4)), np.linalg.lstsq),
    C("lstsq_under", f_lstsq, _ag_lstsq, (WC(2, 4), R(2)), np.linalg.lstsq),
    C("lstsq_square_rcond", f_lstsq_rcond, lambda a, b: _ag_lstsq(a, b, with_s=False),
      (WC(3, 3), R(3, 2)), np.linalg.lstsq),
    C("qr_tall", f_qr, _ag_qr, (WC(4, 3),), np.linalg.qr),
    C("qr_square", f_qr, _ag_qr, (WC(3, 3),), np.linalg.qr),
    C("qr_wide", f_qr, _ag_qr, (WC(3, 5),), np.linalg.qr),
    C("qr_batched", f_qr, _ag_qr, (WC(2, 4, 3),), np.linalg.qr),
    C("qr_complete", f_qr_complete, _ag_qr_complete, (WC(5, 3),), np.linalg.qr),
    C("qr_mode_r", f_qr_r, lambda a: _ag_qr_factors(a)[1], (WC(4, 3),), np.linalg.qr),
    C("qr_mode_r_wide", f_qr_r, lambda a: _ag_qr_factors(a)[1], (WC(2, 4),), np.linalg.qr),
]


# ---------------------------------------------------------------------------
# Tangent rows for tests/test_forward.py (its input specs: (shape, domain))
# ---------------------------------------------------------------------------

def c_full(v): return np.full((2, 3), v) * 2.0                            # noqa: E704
def c_full_like(x, v): return np.full_like(x, v) * x                      # noqa: E704
def c_linspace(a, b): return np.linspace(a, b, 4, axis=-1)                # noqa: E704
def c_copy(x): return np.copy(x) * x                                      # noqa: E704
def c_vstack(x, y): return np.vstack([x, y])                              # noqa: E704
def c_vstack_array(x): return np.vstack(x * 2.0)                          # noqa: E704
def c_hstack(x, y): return np.hstack((x, y, np.ones(1, x.dtype)))        # noqa: E704
def c_dstack(x, y): return np.dstack([x, y])                              # noqa: E704
def c_column_stack(x, y): return np.column_stack([x, y])                  # noqa: E704
def c_column_stack_array(x): return np.column_stack(x)                    # noqa: E704
def c_append(x, y): return np.append(x, y, axis=0)                        # noqa: E704
def c_append_flat(x, y): return np.append(x, y)                           # noqa: E704
def c_ptp(x): return np.ptp(x, axis=1)                                    # noqa: E704
def c_row_stack(x, y): return np.row_stack((x, y))                         # noqa: E704
def c_eigvals(a): return np.imag(np.linalg.eigvals(a)) + np.real(np.linalg.eigvals(a))  # noqa: E704
def c_block(x, y): return np.block([[x, 2.0 * x], [y, np.ones((1, 3), x.dtype)]])  # noqa: E704
def c_insert(x, y): return np.insert(x, [1, 3], [y[0], 2.0])                 # noqa: E704
def c_insert_axis(x, y): return np.insert(x, 1, y, axis=0)                 # noqa: E704


TANGENT_CASES = [
    ("full_like", c_full_like, (((2, 3), "real"), ((3,), "real")), np.full_like),
    ("linspace", c_linspace, (((2,), "real"), ((), "real")), np.linspace),
    ("copy", c_copy, (((3, 2), "real"),), (np.copy, np.multiply)),
    ("vstack", c_vstack, (((3,), "real"), ((2, 3), "real")), np.vstack),
    ("vstack_array", c_vstack_array, (((2, 3), "real"),), np.vstack),
    ("hstack", c_hstack, (((2,), "real"), ((3,), "real")), np.hstack),
    ("dstack", c_dstack, (((2, 3), "real"), ((2, 3), "real")), np.dstack),
    ("column_stack", c_column_stack, (((3,), "real"), ((3, 2), "real")), np.column_stack),
    ("column_stack_array", c_column_stack_array, (((2, 4), "real"),), np.column_stack),
    ("append", c_append, (((2, 3), "real"), ((1, 3), "real")), np.append),
    ("append_flat", c_append_flat, (((2, 2), "real"), ((3,), "real")), np.append),
    ("ptp", c_ptp, (((3, 4), "real"),), np.ptp),
    ("eigvals", c_eigvals, (((3, 3), "real"),), np.linalg.eigvals),
    ("block", c_block, (((2, 3), "real"), ((1, 3), "real")), (np.block, np.multiply)),
    ("insert", c_insert, (((5,), "real"), ((2,), "real")), np.insert),
    ("insert_axis", c_insert_axis, (((2, 3), "real"), ((3,), "real")), np.insert),
]
if hasattr(np, "row_stack"):
    TANGENT_CASES.append(("row_stack", c_row_stack, (((3,), "real"), ((2, 3), "real")), np.row_stack))
# np.full(shape, tensor) is not dispatched to srcgrad op by op (see CASES)
COMPILED_ONLY_TANGENT_CASES = [
    ("full", c_full, (((), "real"),), np.full),
]
