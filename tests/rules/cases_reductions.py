"""Rule rows for the reduction family (srcgrad/rules/numpy/reductions.py)
and scipy.special.logsumexp (srcgrad/rules/scipy/special.py).

Reductions are tested on (3, 4) inputs with axis None, an int, a negative
int and a tuple, keepdims False and True, and on 3-d inputs; `ref` is the
same reduction with autograd, composed from autograd's functions where
autograd has no rule (cumprod, nan-reductions, matrix 1/2/inf norms; the
order statistics ptp, median, quantile and percentile by sorting with NumPy,
a permutation that is not differentiated, and autograd indexing).

np.trapezoid (y, x as a 1-d or an n-d array of sample points, dx as a
scalar or an array, every axis) and np.nancumsum: autograd has no rule for
either; `ref` writes the trapezoidal rule as sum(d (y[1:] + y[:-1]) / 2)
with autograd's diff, and nancumsum as cumsum of anp.where(isnan, 0, x).
"""
import autograd.numpy as anp
import autograd.scipy.special as asp
import numpy as np

from rulecase import Arg, Case, NAN, ND, NZ, P, R, Static, _raw
from srcgrad.rules.scipy.special import logsumexp


# -- prod

def f_prod(x, w):
    return np.sum(np.prod(x) * w)


def f_prod_ax0(x, w):
    return np.sum(np.prod(x, axis=0) * w)


def f_prod_ax1_kd(x, w):
    return np.sum(np.prod(x, axis=1, keepdims=True) * w)


def f_prod_axm1(x, w):
    return np.sum(np.prod(x, axis=-1) * w)


def f_prod_ax02(x, w):
    return np.sum(np.prod(x, axis=(0, 2)) * w)


def f_prod_zeros(x, mask, w):
    return np.sum(np.prod(x * mask, axis=1) * w)


# -- var, std

def f_var(x, w):
    return np.sum(np.var(x) * w)


def f_var_ax0(x, w):
    return np.sum(np.var(x, axis=0) * w)


def f_var_ax1_kd_ddof(x, w):
    return np.sum(np.var(x, axis=1, ddof=1, keepdims=True) * w)


def f_var_ax02(x, w):
    return np.sum(np.var(x, axis=(0, 2)) * w)


def f_var_correction(x, w):
    return np.sum(np.var(x, axis=-1, correction=1) * w)


def f_std(x, w):
    return np.sum(np.std(x) * w)


def f_std_ax1(x, w):
    return np.sum(np.std(x, axis=1) * w)


def f_std_ax0_kd_ddof(x, w):
    return np.sum(np.std(x, axis=0, ddof=1, keepdims=True) * w)


def f_std_ax12(x, w):
    return np.sum(np.std(x, axis=(1, 2)) * w)


# -- cumulative

def f_cumsum(x, w):
    return np.sum(np.cumsum(x) * w)


def f_cumsum_ax0(x, w):
    return np.sum(np.cumsum(x, axis=0) * w)


def f_cumsum_axm1(x, w):
    return np.sum(np.cumsum(x, axis=-1) * w)


def f_cumprod(x, w):
    return np.sum(np.cumprod(x) * w)


def f_cumprod_ax1(x, w):
    return np.sum(np.cumprod(x, axis=1) * w)


def f_cumprod_ax0(x, w):
    return np.sum(np.cumprod(x, axis=0) * w)


def f_cumulative_sum(x, w):
    return np.sum(np.cumulative_sum(x, axis=1) * w)


def f_cumulative_sum_init(x, w):
    return np.sum(np.cumulative_sum(x, axis=0, include_initial=True) * w)


def f_cumulative_prod(x, w):
    return np.sum(np.cumulative_prod(x, axis=1, include_initial=True) * w)


def f_cumulative_prod_1d(x, w):
    return np.sum(np.cumulative_prod(x) * w)


# -- NaN-ignoring

def f_nansum(x, w):
    return np.sum(np.nansum(x) * w)


def f_nansum_ax0(x, w):
    return np.sum(np.nansum(x, axis=0) * w)


def f_nansum_ax1_kd(x, w):
    return np.sum(np.nansum(x, axis=1, keepdims=True) * w)


def f_nanmean(x, w):
    return np.sum(np.nanmean(x) * w)


def f_nanmean_ax1(x, w):
    return np.sum(np.nanmean(x, axis=1) * w)


def f_nanmean_ax0_kd(x, w):
    return np.sum(np.nanmean(x, axis=0, keepdims=True) * w)


def f_nanmax_ax1(x, w):
    return np.sum(np.nanmax(x, axis=1) * w)


def f_nanmin(x, w):
    return np.sum(np.nanmin(x) * w)


# -- average

def f_average(x, w):
    return np.sum(np.average(x) * w)


def f_average_ax0(x, w):
    return np.sum(np.average(x, axis=0) * w)


def f_average_weights_1d(x, v, w):
    return np.sum(np.average(x, axis=1, weights=v) * w)


def f_average_weights_full(x, v, w):
    return np.sum(np.average(x, weights=v) * w)


def f_average_weights_kd(x, v, w):
    return np.sum(np.average(x, axis=0, weights=v, keepdims=True) * w)


# -- norms

def f_norm(x, w):
    return np.sum(np.linalg.norm(x) * w)


def f_norm_ord(x, ord, w):
    return np.sum(np.linalg.norm(x, ord) * w)


def f_norm_axis(x, ord, axis, keepdims, w):
    return np.sum(np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims) * w)


def f_vector_norm(x, w):
    return np.sum(np.linalg.vector_norm(x) * w)


def f_vector_norm_ord(x, w):
    return np.sum(np.linalg.vector_norm(x, axis=0, ord=1, keepdims=True) * w)


def f_matrix_norm(x, w):
    return np.sum(np.linalg.matrix_norm(x, ord="nuc") * w)


def f_matrix_norm_fro(x, w):
    return np.sum(np.linalg.matrix_norm(x, keepdims=True) * w)


# -- scipy.special.logsumexp (srcgrad's Tensor-aware spelling)

def f_logsumexp(x, w):
    return np.sum(logsumexp(x) * w)


def f_logsumexp_ax1(x, w):
    return np.sum(logsumexp(x, axis=1) * w)


def f_logsumexp_ax0_kd(x, w):
    return np.sum(logsumexp(x, axis=0, keepdims=True) * w)


def f_logsumexp_b(x, b, w):
    return np.sum(logsumexp(x, axis=-1, b=b) * w)


# ---------------------------------------------------------------------------
# autograd references

def _ag_prod_rows(x):
    """prod over axis 1 as explicit products (autograd's prod divides by x)."""
    out = x[:, 0]
    for j in range(1, x.shape[1]):
        out = out * x[:, j]
    return out


def _ag_cumprod(x, axis):
    """cumprod along `axis` of a 2-d array (axis None: of its ravel)."""
    if axis is None:
        x, axis = anp.reshape(x, (-1,)), 0
    xs = [x[i] if axis == 0 else x[:, i] for i in range(x.shape[axis])]
    out, acc = [], None
    for v in xs:
        acc = v if acc is None else acc * v
        out.append(acc)
    return anp.stack(out, axis=axis)


def _ag_nan(fill):
    def clean(x):
        return anp.where(anp.isnan(x), fill, x)
    return clean


def _ag_nanmean(x, axis=None, keepdims=False):
    keep = ~np.isnan(x)
    return (anp.sum(_ag_nan(0.0)(x), axis=axis, keepdims=keepdims)
            / np.sum(keep, axis=axis, keepdims=keepdims))


def _ag_svals(x):
    return anp.linalg.svd(x, compute_uv=False)


def _ag_matrix_norm(ord):
    def ref(x):
        a = anp.abs(x)
        return {1: lambda: anp.max(anp.sum(a, axis=0)), -1: lambda: anp.min(anp.sum(a, axis=0)),
                np.inf: lambda: anp.max(anp.sum(a, axis=1)), -np.inf: lambda: anp.min(anp.sum(a, axis=1)),
                2: lambda: anp.max(_ag_svals(x)), -2: lambda: anp.min(_ag_svals(x)),
                "nuc": lambda: anp.sum(_ag_svals(x))}[ord]()
    return ref


def _ag_vector_norm(ord):
    def ref(x):
        a = anp.abs(x)
        if ord == np.inf:
            return anp.max(a)
        if ord == -np.inf:
            return anp.min(a)
        if ord == 0:
            return anp.sum(x != 0) + 0.0 * anp.sum(x)
        return anp.sum(a ** ord) ** (1.0 / ord)
    return ref


def _ag_logsumexp_b(x, b):
    m = anp.max(x, axis=-1, keepdims=True)
    return anp.log(anp.sum(b * anp.exp(x - m), axis=-1)) + m[..., 0]


_ZERO_MASK = np.array([[1.0, 0.0, 1.0, 1.0],       # one zero: only it gets the product of the rest
                       [0.0, 1.0, 0.0, 1.0],       # two zeros: every entry gets 0
                       [1.0, 1.0, 1.0, 1.0]])

C = Case

# -- nancumsum and trapezoid

def f_nancumsum(x, w):
    return np.sum(np.nancumsum(x) * w)


def f_nancumsum_ax0(x, w):
    return np.sum(np.nancumsum(x, axis=0) * w)


def f_nancumsum_axm1(x, w):
    return np.sum(np.nancumsum(x, axis=-1) * w)


def _ag_nancumsum(x, axis=None):
    return anp.cumsum(anp.where(np.isnan(_raw(x)), 0.0, x), axis=axis)


def f_trapezoid(y, w):
    return np.sum(np.trapezoid(y) * w)


def f_trapezoid_ax0(y, w):
    return np.sum(np.trapezoid(y, axis=0) * w)


def f_trapezoid_x(y, x, w):
    return np.sum(np.trapezoid(y, x) * w)


def f_trapezoid_x_ax0(y, x, w):
    return np.sum(np.trapezoid(y, x=x, axis=0) * w)


def f_trapezoid_dx(y, dx, w):
    return np.sum(np.trapezoid(y, dx=dx) * w)


def f_trapezoid_dx_ax0(y, dx, w):
    return np.sum(np.trapezoid(y, None, dx, 0) * w)


def f_trapezoid_x_and_dx(y, x, dx, w):
    """dx is ignored when x is given: its gradient is 0."""
    return np.sum(np.trapezoid(y, x, dx) * w)


def f_trapz(y, x, w):
    return np.sum(np.trapz(y, x) * w)


def _ag_trapezoid(y, x=None, dx=1.0, axis=-1):
    """sum(d (y[1:] + y[:-1]) / 2) along `axis`, d the spacings (NumPy's
    definition), with autograd's diff, indexing and sum."""
    n = y.ndim
    hi = tuple(slice(1, None) if i == axis % n else slice(None) for i in range(n))
    lo = tuple(slice(None, -1) if i == axis % n else slice(None) for i in range(n))
    if x is None:
        d = dx
    elif anp.ndim(x) == 1:
        shape = [1] * n
        shape[axis % n] = x.shape[0] - 1
        d = anp.reshape(anp.diff(x), shape)
    else:
        d = anp.diff(x, axis=axis)
    return anp.sum(d * (y[hi] + y[lo]) / 2.0, axis=axis)

CASES = [
    # ---- prod (zeros handled without division)
    C("prod", f_prod, lambda x: anp.prod(x), (NZ(3, 4),), np.prod),
    C("prod_ax0", f_prod_ax0, lambda x: anp.prod(x, axis=0), (R(3, 4),), np.prod),
    C("prod_ax1_kd", f_prod_ax1_kd, lambda x: anp.prod(x, axis=1, keepdims=True), (R(3, 4),), np.prod),
    C("prod_axm1", f_prod_axm1, lambda x: anp.prod(x, axis=-1), (R(2, 3, 4),), np.prod),
    C("prod_ax02", f_prod_ax02, lambda x: anp.prod(anp.prod(x, axis=2), axis=0), (R(2, 3, 2),),
      np.prod),
    C("prod_zeros", f_prod_zeros, lambda x, m: _ag_prod_rows(x * m), (R(3, 4), Static(_ZERO_MASK)),
      np.prod),

    # ---- var, std (ddof / correction)
    C("var", f_var, lambda x: anp.var(x), (R(3, 4),), np.var),
    C("var_ax0", f_var_ax0, lambda x: anp.var(x, axis=0), (R(3, 4),), np.var),
    C("var_ax1_kd_ddof", f_var_ax1_kd_ddof, lambda x: anp.var(x, axis=1, ddof=1, keepdims=True),
      (R(3, 4),), np.var),
    C("var_ax02", f_var_ax02, lambda x: anp.var(x, axis=(0, 2)), (R(2, 3, 4),), np.var),
    C("var_correction", f_var_correction, lambda x: anp.var(x, axis=-1, ddof=1), (R(3, 4),), np.var),
    C("std", f_std, lambda x: anp.std(x), (R(3, 4),), np.std),
    C("std_ax1", f_std_ax1, lambda x: anp.std(x, axis=1), (R(3, 4),), np.std),
    C("std_ax0_kd_ddof", f_std_ax0_kd_ddof, lambda x: anp.std(x, axis=0, ddof=1, keepdims=True),
      (R(3, 4),), np.std),
    C("std_ax12", f_std_ax12, lambda x: anp.std(x, axis=(1, 2)), (R(2, 3, 4),), np.std),

    # ---- cumulative sums and products
    C("cumsum", f_cumsum, lambda x: anp.cumsum(x), (R(3, 4),), np.cumsum),
    C("cumsum_ax0", f_cumsum_ax0, lambda x: anp.cumsum(x, axis=0), (R(3, 4),), np.cumsum),
    C("cumsum_axm1", f_cumsum_axm1, lambda x: anp.cumsum(x, axis=2), (R(2, 3, 4),), np.cumsum),
    C("cumprod", f_cumprod, lambda x: _ag_cumprod(x, None), (NZ(3, 4),), np.cumprod),
    C("cumprod_ax1", f_cumprod_ax1, lambda x: _ag_cumprod(x, 1), (NZ(3, 4),), np.cumprod),
    C("cumprod_ax0", f_cumprod_ax0, lambda x: _ag_cumprod(x, 0), (NZ(3, 4),), np.cumprod),
    C("cumulative_sum", f_cumulative_sum, lambda x: anp.cumsum(x, axis=1), (R(3, 4),),
      np.cumulative_sum),
    C("cumulative_sum_init", f_cumulative_sum_init,
      lambda x: anp.concatenate([anp.zeros((1, 4)), anp.cumsum(x, axis=0)], axis=0), (R(3, 4),),
      np.cumulative_sum),
    C("cumulative_prod_init", f_cumulative_prod,
      lambda x: anp.concatenate([anp.ones((3, 1)), _ag_cumprod(x, 1)], axis=1), (NZ(3, 4),),
      np.cumulative_prod),
    C("cumulative_prod_1d", f_cumulative_prod_1d, lambda x: _ag_cumprod(x, None), (NZ(5,),),
      np.cumulative_prod),

    # ---- NaN-ignoring reductions (inputs about 30 % NaN)
    C("nansum", f_nansum, lambda x: anp.sum(_ag_nan(0.0)(x)), (NAN(3, 4),), np.nansum),
    C("nansum_ax0", f_nansum_ax0, lambda x: anp.sum(_ag_nan(0.0)(x), axis=0), (NAN(3, 4),),
      np.nansum),
    C("nansum_ax1_kd", f_nansum_ax1_kd, lambda x: anp.sum(_ag_nan(0.0)(x), axis=1, keepdims=True),
      (NAN(3, 4),), np.nansum),
    C("nanmean", f_nanmean, lambda x: _ag_nanmean(x), (NAN(3, 4),), np.nanmean),
    C("nanmean_ax1", f_nanmean_ax1, lambda x: _ag_nanmean(x, 1), (NAN(3, 6),), np.nanmean),
    C("nanmean_ax0_kd", f_nanmean_ax0_kd, lambda x: _ag_nanmean(x, 0, True), (NAN(5, 3),),
      np.nanmean),
    C("nanmax_ax1", f_nanmax_ax1, lambda x: anp.max(_ag_nan(-np.inf)(x), axis=1), (NAN(3, 6),),
      np.nanmax),
    C("nanmin", f_nanmin, lambda x: anp.min(_ag_nan(np.inf)(x)), (NAN(3, 4),), np.nanmin),

    # ---- average, with and without weights (weights differentiated too)
    C("average", f_average, lambda x: anp.mean(x), (R(3, 4),), np.average),
    C("average_ax0", f_average_ax0, lambda x: anp.mean(x, axis=0), (R(3, 4),), np.average),
    C("average_weights_1d", f_average_weights_1d,
      lambda x, v: anp.sum(x * v, axis=1) / anp.sum(v), (R(3, 4), P(4)), np.average),
    C("average_weights_full", f_average_weights_full, lambda x, v: anp.sum(x * v) / anp.sum(v),
      (R(3, 4), P(3, 4)), np.average),
    C("average_weights_kd", f_average_weights_kd,
      lambda x, v: anp.sum(x * v, axis=0, keepdims=True) / anp.sum(v, axis=0, keepdims=True),
      (R(3, 4), P(3, 4)), np.average),

    # ---- vector norms
    C("norm_vec", f_norm, lambda x: anp.linalg.norm(x), (R(5,),), np.linalg.norm),
    C("norm_3d", f_norm, lambda x: anp.linalg.norm(anp.reshape(x, -1)), (R(2, 3, 4),), np.linalg.norm),
    C("norm_vec_1", f_norm_ord, lambda x, o: anp.sum(anp.abs(x)), (NZ(5,), Static(1)), np.linalg.norm),
    C("norm_vec_inf", f_norm_ord, lambda x, o: _ag_vector_norm(np.inf)(x), (R(5,), Static(np.inf)), np.linalg.norm),
    C("norm_vec_minf", f_norm_ord, lambda x, o: _ag_vector_norm(-np.inf)(x), (R(5,), Static(-np.inf)),
      np.linalg.norm),
    C("norm_vec_3", f_norm_ord, lambda x, o: anp.linalg.norm(x, 3), (NZ(5,), Static(3)),
      np.linalg.norm),
    C("norm_vec_0", f_norm_ord, lambda x, o: _ag_vector_norm(0)(x), (R(5,), Static(0)),
      np.linalg.norm),
    C("norm_ax1_kd", f_norm_axis,
      lambda x, o, a, k: anp.sqrt(anp.sum(x * x, axis=1, keepdims=True)),
      (R(3, 4), Static(None), Static(1), Static(True)), np.linalg.norm),
    C("norm_ax0_1", f_norm_axis, lambda x, o, a, k: anp.sum(anp.abs(x), axis=0),
      (NZ(3, 4), Static(1), Static(0), Static(False)), np.linalg.norm),
    C("norm_axm1_inf_kd", f_norm_axis, lambda x, o, a, k: anp.max(anp.abs(x), axis=-1, keepdims=True),
      (R(2, 3, 4), Static(np.inf), Static(-1), Static(True)), np.linalg.norm),
    C("norm_ax1_p", f_norm_axis, lambda x, o, a, k: anp.sum(anp.abs(x) ** 2.5, axis=1) ** 0.4,
      (NZ(3, 4), Static(2.5), Static(1), Static(False)), np.linalg.norm),
    # ---- matrix norms
    C("norm_fro", f_norm_ord, lambda x, o: anp.linalg.norm(x, "fro"), (R(3, 4),
      Static("fro")), np.linalg.norm),
    C("norm_nuc", f_norm_ord, lambda x, o: _ag_matrix_norm("nuc")(x), (R(3, 4), Static("nuc")),
      np.linalg.norm),
    C("norm_mat_2", f_norm_ord, lambda x, o: _ag_matrix_norm(2)(x), (R(3, 4), Static(2)),
      np.linalg.norm),
    C("norm_mat_m2", f_norm_ord, lambda x, o: _ag_matrix_norm(-2)(x), (R(4, 3), Static(-2)),
      np.linalg.norm),
    C("norm_mat_1", f_norm_ord, lambda x, o: _ag_matrix_norm(1)(x), (NZ(3, 4), Static(1)),
      np.linalg.norm),
    C("norm_mat_m1", f_norm_ord, lambda x, o: _ag_matrix_norm(-1)(x), (NZ(3, 4), Static(-1)),
      np.linalg.norm),
    C("norm_mat_inf", f_norm_ord, lambda x, o: _ag_matrix_norm(np.inf)(x), (NZ(3, 4),
      Static(np.inf)), np.linalg.norm),
    C("norm_mat_minf", f_norm_ord, lambda x, o: _ag_matrix_norm(-np.inf)(x), (NZ(3, 4),
      Static(-np.inf)), np.linalg.norm),
    C("norm_batch_fro_kd", f_norm_axis,
      lambda x, o, a, k: anp.sqrt(anp.sum(x * x, axis=(0, 2), keepdims=True)),
      (R(3, 2, 4), Static("fro"), Static((0, 2)), Static(True)), np.linalg.norm),
    C("norm_batch_nuc", f_norm_axis,
      lambda x, o, a, k: anp.stack([_ag_matrix_norm("nuc")(x[:, i, :]) for i in range(2)]),
      (R(3, 2, 4), Static("nuc"), Static((0, 2)), Static(False)), np.linalg.norm),
    C("norm_batch_2_swapped", f_norm_axis,
      lambda x, o, a, k: anp.stack([_ag_matrix_norm(2)(x[i].T) for i in range(2)]),
      (R(2, 3, 4), Static(2), Static((2, 1)), Static(False)), np.linalg.norm),
    C("norm_batch_1", f_norm_axis,
      lambda x, o, a, k: anp.max(anp.sum(anp.abs(x), axis=1), axis=-1),
      (NZ(2, 3, 4), Static(1), Static((1, 2)), Static(False)), np.linalg.norm),
    C("vector_norm", f_vector_norm, lambda x: anp.sqrt(anp.sum(x * x)), (R(3, 4),),
      np.linalg.vector_norm),
    C("vector_norm_1_kd", f_vector_norm_ord, lambda x: anp.sum(anp.abs(x), axis=0, keepdims=True),
      (NZ(3, 4),), np.linalg.vector_norm),
    C("matrix_norm_nuc", f_matrix_norm,
      lambda x: anp.stack([_ag_matrix_norm("nuc")(x[i]) for i in range(2)]), (R(2, 3, 4),),
      np.linalg.matrix_norm),
    C("matrix_norm_fro_kd", f_matrix_norm_fro,
      lambda x: anp.sqrt(anp.sum(x * x, axis=(-2, -1), keepdims=True)), (R(2, 3, 4),),
      np.linalg.matrix_norm),

    # ---- logsumexp
    C("logsumexp", f_logsumexp, lambda x: asp.logsumexp(x), (R(3, 4),), logsumexp),
    C("logsumexp_ax1", f_logsumexp_ax1, lambda x: asp.logsumexp(x, axis=1), (R(3, 4),), logsumexp),
    C("logsumexp_ax0_kd", f_logsumexp_ax0_kd, lambda x: asp.logsumexp(x, axis=0, keepdims=True),
      (R(3, 4),), logsumexp),
    C("logsumexp_b", f_logsumexp_b, _ag_logsumexp_b, (R(3, 4), P(4)), logsumexp),
]


# --------------------------------------- order statistics and nan- reductions

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


CASES += [
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
    # np.nancumsum: NaN entries read as 0 (and get no cotangent)
    C("nancumsum", f_nancumsum, lambda x: _ag_nancumsum(x), (NAN(3, 4),), np.nancumsum),
    C("nancumsum_ax0", f_nancumsum_ax0, lambda x: _ag_nancumsum(x, 0), (NAN(3, 4),), np.nancumsum),
    C("nancumsum_axm1_3d", f_nancumsum_axm1, lambda x: _ag_nancumsum(x, -1), (NAN(2, 3, 4),),
      np.nancumsum),
    C("nancumsum_no_nan", f_nancumsum_ax0, lambda x: _ag_nancumsum(x, 0), (R(4, 2),), np.nancumsum),
    # np.trapezoid: y, x (1-d, n-d), dx (scalar, array), every axis
    C("trapezoid", f_trapezoid, lambda y: _ag_trapezoid(y), (R(3, 5),), np.trapezoid),
    C("trapezoid_1d", f_trapezoid, lambda y: _ag_trapezoid(y), (R(6),), np.trapezoid),
    C("trapezoid_ax0", f_trapezoid_ax0, lambda y: _ag_trapezoid(y, axis=0), (R(4, 3),), np.trapezoid),
    C("trapezoid_x1d", f_trapezoid_x, lambda y, x: _ag_trapezoid(y, x), (R(3, 5), R(5)), np.trapezoid),
    C("trapezoid_x1d_ax0", f_trapezoid_x_ax0, lambda y, x: _ag_trapezoid(y, x, axis=0), (R(4, 2, 3), R(4)),
      np.trapezoid),
    C("trapezoid_xnd", f_trapezoid_x, lambda y, x: _ag_trapezoid(y, x), (R(3, 5), R(3, 5)), np.trapezoid),
    C("trapezoid_xnd_bcast", f_trapezoid_x_ax0, lambda y, x: _ag_trapezoid(y, x, axis=0), (R(4, 3), R(4, 1)),
      np.trapezoid),
    C("trapezoid_x_const", f_trapezoid_x, lambda y, x: _ag_trapezoid(y, x), (R(2, 4), ND(4)), np.trapezoid),
    C("trapezoid_dx", f_trapezoid_dx, lambda y, dx: _ag_trapezoid(y, dx=dx), (R(3, 5), R()), np.trapezoid),
    C("trapezoid_dx_array", f_trapezoid_dx_ax0, lambda y, dx: _ag_trapezoid(y, dx=dx, axis=0),
      (R(4, 3), R(3, 3)), np.trapezoid),
    C("trapezoid_dx_row", f_trapezoid_dx_ax0, lambda y, dx: _ag_trapezoid(y, dx=dx, axis=0), (R(4, 3), R(3)),
      np.trapezoid),
    C("trapezoid_x_and_dx", f_trapezoid_x_and_dx, lambda y, x, dx: _ag_trapezoid(y, x), (R(2, 4), R(4), R()),
      np.trapezoid),
]
if hasattr(np, "trapz"):       # NumPy < 2.4: np.trapezoid's deprecated name has the same rule
    CASES.append(C("trapz_x1d", f_trapz, lambda y, x: _ag_trapezoid(y, x), (R(3, 5), R(5)), np.trapz))



# -- the ufunc methods that are these reductions (np.add.reduce is np.sum; axis=0 by default)

def f_add_reduce(x, w):
    return np.sum(np.add.reduce(x) * w)


def f_add_reduce_ax1_kd(x, w):
    return np.sum(np.add.reduce(x, axis=1, keepdims=True) * w)


def f_multiply_reduce(x, w):
    return np.sum(np.multiply.reduce(x) * w)


def f_maximum_reduce_axm1(x, w):
    return np.sum(np.maximum.reduce(x, axis=-1) * w)


def f_minimum_reduce(x, w):
    return np.sum(np.minimum.reduce(x, axis=None) * w)


def f_add_accumulate(x, w):
    return np.sum(np.add.accumulate(x) * w)


def f_multiply_accumulate_ax1(x, w):
    return np.sum(np.multiply.accumulate(x, axis=1) * w)


CASES += [
    C("add_reduce", f_add_reduce, lambda x: anp.sum(x, axis=0), (R(3, 4),), np.add.reduce),
    C("add_reduce_ax1_kd", f_add_reduce_ax1_kd, lambda x: anp.sum(x, axis=1, keepdims=True), (R(2, 3, 4),),
      np.add.reduce),
    C("multiply_reduce", f_multiply_reduce, lambda x: anp.prod(x, axis=0), (NZ(3, 4),), np.multiply.reduce),
    C("maximum_reduce_axm1", f_maximum_reduce_axm1, lambda x: anp.max(x, axis=-1), (R(3, 4),),
      np.maximum.reduce),
    C("minimum_reduce_all", f_minimum_reduce, lambda x: anp.min(x), (R(3, 4),), np.minimum.reduce),
    C("add_accumulate", f_add_accumulate, lambda x: anp.cumsum(x, axis=0), (R(3, 4),), np.add.accumulate),
    C("multiply_accumulate_ax1", f_multiply_accumulate_ax1, lambda x: _ag_cumprod(x, 1), (NZ(3, 4),),
      np.multiply.accumulate),
]
