"""Rules for NumPy's reductions: sums, means, extrema, products,
cumulative sums and products, variance and standard deviation, weighted
averages, norms, the order statistics (ptp, median, quantile, percentile),
the nan- variants (nancumsum too), the trapezoidal rule (trapezoid), and
covariance and correlation matrices (cov, corrcoef), and the ufunc methods
that are these reductions (np.add/multiply/maximum/minimum.reduce,
np.add/multiply.accumulate).

The notation is rules/numpy/__init__.py's.

Each adjoint broadcasts the output's cotangent back over the reduced axes
with `unreduce` (axis None, an int or a tuple; keepdims either way) and
multiplies by the derivative of the reduction; each tangent reduces the
input's tangent the same way. Parameters NumPy has but the rules do not
model (`where=`) are left out of the templates, so passing them is refused
when the call is bound, rather than differentiated wrongly. Ties of max/min
(and ptp) split the cotangent evenly, as autograd and JAX do; the
quantiles follow NumPy's default method 'linear' (Hyndman & Fan 1996, type
7). Complex inputs follow TF's convention (rules/helpers/complex.py). The
identities and their sources are in rules/helpers/reductions.py.
"""
import numpy as np

from ..helpers.broadcast import reduction_size, unreduce
from ..helpers.complex import cast_like, conj, real_part
from ..helpers.covariance import corrcoef_adjoint, corrcoef_tangent_, cov_adjoint, cov_tangent
from ..helpers.reductions import (average_weights, average_weights_adjoint, cumsum_adjoint, zero_safe_ratio,
                                  degrees_of_freedom, drop_initial, is_not_nan, max_chooser,
                                  median_adjoint, nan_mask, nan_mean_weights, nan_to_one,
                                  nanstd_adjoint, nanvar_adjoint, norm_adjoint, percentile_adjoint,
                                  prod_others, ptp_adjoint, quantile_adjoint, trapezoid_dx_adjoint,
                                  trapezoid_dx_tangent, trapezoid_x_adjoint, trapezoid_x_tangent,
                                  trapezoid_y_adjoint)
from ..registry import register_adjoint
from ..tangents import declare_linear, register_linear, register_tangent


# ------------------------------------------------------------- sums and means

@register_adjoint(np.sum)
def sum(y, x, axis=None, dtype=None, out=None, keepdims=False, initial=None):
    """d/dx sum(x) = 1 broadcast back to x's shape."""
    d[x] = unreduce(d[y], x, axis, keepdims)


register_linear(np.sum, static=("axis", "keepdims"))


@register_adjoint(np.mean)
def mean(y, x, axis=None, dtype=None, out=None, keepdims=False):
    """The sum's adjoint divided by the count: the division is made before
    the cotangent is broadcast back (the same values, one division per
    output element instead of one per input element)."""
    d[x] = unreduce(d[y] / reduction_size(x, y), x, axis, keepdims)


register_linear(np.mean, static=("axis", "keepdims"))


# -------------------------------------------------------------------- extrema

@register_adjoint(np.max)
def max(y, x, axis=None, out=None, keepdims=False, initial=None):
    """The cotangent goes to the maximal entries; ties split it evenly (as
    autograd and JAX do)."""
    d[x] = unreduce(d[y], x, axis, keepdims) * max_chooser(x, y, axis, keepdims)


@register_tangent(np.max)
def max_tangent(y, x, axis=None, out=None, keepdims=False, initial=None):
    """The mean of the tangents at the maximal entries (ties split evenly)."""
    t[y] = np.sum(t[x] * max_chooser(x, y, axis, keepdims), axis=axis, keepdims=keepdims)


@register_adjoint(np.min)
def min(y, x, axis=None, out=None, keepdims=False, initial=None):
    d[x] = unreduce(d[y], x, axis, keepdims) * max_chooser(x, y, axis, keepdims)


@register_tangent(np.min)
def min_tangent(y, x, axis=None, out=None, keepdims=False, initial=None):
    t[y] = np.sum(t[x] * max_chooser(x, y, axis, keepdims), axis=axis, keepdims=keepdims)


# NumPy 2 keeps np.amax/np.amin as functions distinct from np.max/np.min.
register_adjoint(np.amax)(max)
register_adjoint(np.amin)(min)
register_tangent(np.amax)(max_tangent)
register_tangent(np.amin)(min_tangent)
# NaN never equals the max, so max's chooser already skips NaN entries.
register_adjoint(np.nanmax)(max)
register_adjoint(np.nanmin)(min)


@register_adjoint(np.ptp)
def ptp(y, a, axis=None, out=None, keepdims=False):
    """ptp = max - min: the cotangent goes to the maximal entries and,
    negated, to the minimal ones (ties split evenly)."""
    d[a] = ptp_adjoint(d[y], a, axis, keepdims)


@register_tangent(np.ptp)
def ptp_tangent(y, a, axis=None, out=None, keepdims=False):
    """The mean tangent over the maximal entries minus that over the minimal
    ones (ties split evenly, as the adjoint)."""
    t[y] = (np.sum(t[a] * max_chooser(a, np.max(a, axis=axis, keepdims=True), axis, True),
                   axis=axis, keepdims=keepdims)
            - np.sum(t[a] * max_chooser(a, np.min(a, axis=axis, keepdims=True), axis, True),
                     axis=axis, keepdims=keepdims))


# ------------------------------------------------------------------- products

@register_adjoint(np.prod)
def prod(y, a, axis=None, dtype=None, out=None, keepdims=False, initial=None):
    """d prod(a) / d a_i = the product of the other entries (computed
    without dividing by a_i, so zeros are handled: TF's _ProdGrad)."""
    d[a] = unreduce(d[y], a, axis, keepdims) * conj(prod_others(a, axis, initial))


@register_adjoint(np.nanprod)
def nanprod(y, a, axis=None, dtype=None, out=None, keepdims=False, initial=None):
    """prod with NaN read as 1: d a_i = the product of the other non-NaN
    entries (prod's zero-safe rule), 0 at NaNs."""
    d[a] = (unreduce(d[y], a, axis, keepdims) * prod_others(nan_to_one(a), axis, initial)
            * nan_mask(a))


# ----------------------------------------------- cumulative sums and products

@register_adjoint(np.cumsum)
def cumsum(y, a, axis=None, dtype=None, out=None):
    """y_i = sum_{j <= i} a_j: d[a]_j = sum_{i >= j} d[y]_i, the reversed
    cumulative sum (axis=None runs on a.ravel())."""
    d[a] = cumsum_adjoint(d[y], a, axis)


register_linear(np.cumsum, static=("axis",))


@register_adjoint(np.cumprod)
def cumprod(y, a, axis=None, dtype=None, out=None):
    """y_i = prod_{j <= i} a_j: d[a]_j = sum_{i >= j} d[y]_i y_i / a_j
    (TF's _CumprodGrad; undefined where a has zeros, as there)."""
    d[a] = cumsum_adjoint(d[y] * conj(y), a, axis) / conj(a)


@register_adjoint(np.cumulative_sum)
def cumulative_sum(y, x, axis=None, dtype=None, out=None, include_initial=False):
    """The array-API cumsum: the same adjoint, after dropping the cotangent
    of the prepended 0 when include_initial."""
    d[x] = cumsum_adjoint(drop_initial(d[y], axis, include_initial), x, axis)


@register_adjoint(np.cumulative_prod)
def cumulative_prod(y, x, axis=None, dtype=None, out=None, include_initial=False):
    """The array-API cumprod (adjoint as cumprod's)."""
    d[x] = (cumsum_adjoint(drop_initial(d[y] * conj(y), axis, include_initial), x, axis)
            / conj(x))


@register_adjoint(np.nancumsum)
def nancumsum(y, a, axis=None, dtype=None, out=None):
    """cumsum with NaN read as 0 (NumPy's nancumsum): d a is cumsum's, the
    reversed cumulative sum of d[y], and 0 at NaNs (as nansum's)."""
    d[a] = cumsum_adjoint(d[y], a, axis) * is_not_nan(a)


@register_tangent(np.nancumsum)
def nancumsum_tangent(y, a, axis=None, dtype=None, out=None):
    """The cumulative sum of the tangents at the non-NaN entries."""
    t[y] = np.cumsum(np.where(is_not_nan(a), t[a], 0.0), axis=axis)


# --------------------------------------- ufunc methods: reduce and accumulate
# `np.add.reduce` is a method bound to the ufunc np.add (one object per
# attribute read, equal and hashing alike: the registry finds it by equality).
# NumPy defines np.sum, np.prod, np.max and np.min as np.add/multiply/
# maximum/minimum.reduce (numpy/_core/fromnumeric.py, _wrapreduction), and
# np.cumsum/np.cumprod as np.add/multiply.accumulate: these are the same rules,
# with the methods' own signature (the first parameter is `array`, axis=0 by
# default; axis=None reduces every axis). `where=` is not modelled (refused
# when the call is bound). The tangent templates pass `axis` to np.sum and
# np.cumsum by position: a pass-through keyword `axis=axis` is left out of
# generated code where the call uses its default, and 0 here is not theirs.

@register_adjoint(np.add.reduce)
def add_reduce(y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None):
    """np.sum's rule (np.sum is np.add.reduce): d/dx = 1 broadcast back to
    array's shape over the reduced axes (axis=0 by default)."""
    d[array] = unreduce(d[y], array, axis, keepdims)


@register_tangent(np.add.reduce)
def add_reduce_tangent(y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None):
    """Linear: the sum of the tangent over the same axes."""
    t[y] = np.sum(t[array], axis, keepdims=keepdims)


@register_adjoint(np.multiply.reduce)
def multiply_reduce(y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None):
    """np.prod's rule (np.prod is np.multiply.reduce): d y / d a_i = the
    product of the other entries (and `initial`), zero-safe (TF's
    _ProdGrad), broadcast back over the reduced axes."""
    d[array] = unreduce(d[y], array, axis, keepdims) * conj(prod_others(array, axis, initial))


@register_tangent(np.multiply.reduce)
def multiply_reduce_tangent(y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None):
    """sum_i t_i prod_{j != i} a_j over the reduced axes (zero-safe)."""
    t[y] = np.sum(t[array] * prod_others(array, axis, initial), axis, keepdims=keepdims)


def extremum_reduce(y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None):
    """np.max's/np.min's rule (they are np.maximum/minimum.reduce): the
    cotangent goes to the entries equal to y, ties split evenly (autograd,
    JAX); none gets it where `initial` wins."""
    d[array] = unreduce(d[y], array, axis, keepdims) * max_chooser(array, y, axis, keepdims)


def extremum_reduce_tangent(y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None):
    """The mean of the tangents at the entries equal to y (ties split)."""
    t[y] = np.sum(t[array] * max_chooser(array, y, axis, keepdims), axis, keepdims=keepdims)


register_adjoint(np.maximum.reduce, name="maximum_reduce")(extremum_reduce)
register_adjoint(np.minimum.reduce, name="minimum_reduce")(extremum_reduce)
register_tangent(np.maximum.reduce, name="maximum_reduce_tangent")(extremum_reduce_tangent)
register_tangent(np.minimum.reduce, name="minimum_reduce_tangent")(extremum_reduce_tangent)


@register_adjoint(np.add.accumulate)
def add_accumulate(y, array, axis=0, dtype=None, out=None):
    """np.cumsum's rule along `axis` (default 0): d[a]_j = sum_{i >= j}
    d[y]_i, the reversed cumulative sum."""
    d[array] = cumsum_adjoint(d[y], array, axis)


@register_tangent(np.add.accumulate)
def add_accumulate_tangent(y, array, axis=0, dtype=None, out=None):
    """Linear: the cumulative sum of the tangent."""
    t[y] = np.cumsum(t[array], axis)


@register_adjoint(np.multiply.accumulate)
def multiply_accumulate(y, array, axis=0, dtype=None, out=None):
    """np.cumprod's rule along `axis` (default 0): d[a]_j = sum_{i >= j}
    d[y]_i y_i / a_j (TF's _CumprodGrad; undefined where a has zeros, as
    there and as np.cumprod's rule)."""
    d[array] = cumsum_adjoint(d[y] * conj(y), array, axis) / conj(array)


@register_tangent(np.multiply.accumulate)
def multiply_accumulate_tangent(y, array, axis=0, dtype=None, out=None):
    """d y_i = y_i sum_{j <= i} t_j / a_j (the adjoint's identity
    transposed; undefined where a has zeros, as the adjoint)."""
    t[y] = y * np.cumsum(t[array] / array, axis)


# ---------------------------------------------------------------- integration

@register_adjoint(np.trapezoid)
def trapezoid(z, y, x=None, dx=1.0, axis=-1):
    """The trapezoidal rule z = sum(d (y[1:] + y[:-1]) / 2, axis), d the
    spacings (dx, or np.diff(x) along the axis: NumPy's trapezoid in
    numpy/lib/_function_base_impl.py): linear in y, in dx, and in x through
    np.diff. d y_i = g (d_{i-1} + d_i) / 2, d dx = sum g (y_i + y_{i+1}) / 2
    (summed back to dx's shape; 0 when x is given), d x = diff's adjoint of
    g (y_i + y_{i+1}) / 2."""
    d[y] = trapezoid_y_adjoint(d[z], y, x, dx, axis)
    d[x] = trapezoid_x_adjoint(d[z], y, x, dx, axis)
    d[dx] = trapezoid_dx_adjoint(d[z], y, x, dx, axis)


@register_tangent(np.trapezoid)
def trapezoid_tangent(z, y, x=None, dx=1.0, axis=-1):
    """Linear in y, x and dx separately: the trapezoidal rule of the
    tangent of y, plus that of y with the tangent of x as sample points
    (or of dx as the spacing)."""
    t[z] = (np.trapezoid(t[y], x=x, dx=dx, axis=axis) + trapezoid_x_tangent(t[x], y, axis)
            + trapezoid_dx_tangent(t[dx], y, x, axis))


declare_linear(np.trapezoid)
declare_linear(trapezoid_x_tangent)
declare_linear(trapezoid_dx_tangent)
if hasattr(np, "trapz"):       # NumPy < 2.4 (deprecated there): np.trapezoid under its old name
    register_adjoint(np.trapz, name="trapz")(trapezoid)
    register_tangent(np.trapz, name="trapz_tangent")(trapezoid_tangent)


# ------------------------------------------------------ variance and averages

@register_adjoint(np.var)
def var(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, mean=None,
        correction=None):
    """d var / d a = 2 (a - mean(a)) / (N - ddof). (d var / d mean is 0 at
    the mean, so a precomputed `mean=` needs no cotangent.) For complex a
    this is TF's convention (autograd's is the conjugate)."""
    d[a] = (unreduce(real_part(d[y]), a, axis, keepdims) * 2.0 * (a - np.mean(a, axis=axis, keepdims=True))
            / degrees_of_freedom(a, y, ddof, correction))


@register_adjoint(np.std)
def std(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, mean=None,
        correction=None):
    """d std / d a = (a - mean(a)) / ((N - ddof) std)."""
    d[a] = (unreduce(zero_safe_ratio(real_part(d[y]), y), a, axis, keepdims)
            * (a - np.mean(a, axis=axis, keepdims=True)) / degrees_of_freedom(a, y, ddof, correction))


@register_adjoint(np.nanvar)
def nanvar(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, mean=None,
           correction=None):
    """var over the n non-NaN entries: d a = 2 (a - m) / (n - ddof) there, 0 at
    NaNs (real input)."""
    d[a] = nanvar_adjoint(d[y], a, axis, keepdims, ddof, correction)


@register_adjoint(np.nanstd)
def nanstd(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, mean=None,
           correction=None):
    """std over the n non-NaN entries: d a = (a - m) / ((n - ddof) std) there,
    0 at NaNs (real input)."""
    d[a] = nanstd_adjoint(d[y], y, a, axis, keepdims, ddof, correction)


@register_adjoint(np.nansum)
def nansum(y, a, axis=None, dtype=None, out=None, keepdims=False, initial=None):
    """As sum over the non-NaN entries; NaN entries get 0."""
    d[a] = unreduce(d[y], a, axis, keepdims) * is_not_nan(a)


@register_adjoint(np.nanmean)
def nanmean(y, a, axis=None, dtype=None, out=None, keepdims=False):
    """As mean over the non-NaN entries (1/count each); NaN entries get 0."""
    d[a] = unreduce(d[y], a, axis, keepdims) * nan_mean_weights(a, axis)


@register_adjoint(np.average)
def average(y, a, axis=None, weights=None, returned=False, *, keepdims=False):
    """y = sum(a w) / sum(w) over `axis`: d[a] = g w / sum(w),
    d[w] = g (a - y) / sum(w) (summed back to 1-d weights). returned=True
    (a tuple output) is refused."""
    d[a] = average_weights(a, weights, axis, returned) * unreduce(d[y], a, axis, keepdims)
    d[weights] = average_weights_adjoint(d[y], a, y, weights, axis, keepdims, returned)


# ----------------------------------------------------------- order statistics

# The nan- variants are the same rules over the non-NaN entries of each slice
# (NaN entries get 0), and percentile is quantile at q / 100 (NAN and
# ADJOINT bound at registration).


def median(y, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The middle entry (odd count) or the mean of the two middle ones gets
    the cotangent (np.quantile(a, 0.5)'s rule)."""
    d[a] = median_adjoint(d[y], a, axis, NAN)


def quantile(y, a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    """method='linear': y = (1 - f) x_(lo) + f x_(hi) at the virtual index
    (n - 1) q of the sorted entries (Hyndman & Fan's type 7): d a goes to
    the two order statistics, d q = g (n - 1) (x_(hi) - x_(lo)). Other
    methods and weights are refused."""
    d[a] = ADJOINT(d[y], a, q, axis, NAN, False, method, weights)
    d[q] = ADJOINT(d[y], a, q, axis, NAN, True, method, weights)


for _f, _nan, _doc in ((np.median, False, None),
                       (np.nanmedian, True, "As median over the non-NaN entries; NaN entries get 0.")):
    register_adjoint(_f, name=_f.__name__, doc=_doc, constants={"NAN": _nan})(median)
for _f, _nan, _adjoint, _doc in (
        (np.quantile, False, quantile_adjoint, None),
        (np.nanquantile, True, quantile_adjoint,
         "As quantile over the non-NaN entries of each slice; NaN entries get 0."),
        (np.percentile, False, percentile_adjoint, "np.quantile(a, q / 100)'s rule (d q divided by 100)."),
        (np.nanpercentile, True, percentile_adjoint, "np.nanquantile(a, q / 100)'s rule (d q divided by 100).")):
    register_adjoint(_f, name=_f.__name__, doc=_doc, constants={"NAN": _nan, "ADJOINT": _adjoint})(quantile)


# ---------------------------------------------------------------------- norms

@register_adjoint(np.linalg.norm)
def norm(y, x, ord=None, axis=None, keepdims=False):
    """Vector norms (ord None/2, 1, inf, -inf, 0, any p) and matrix norms
    ('fro', 'nuc', 1, -1, 2, -2, inf, -inf), over `axis`, keepdims either
    way: see rules/helpers/reductions.py norm_adjoint for each derivative."""
    d[x] = norm_adjoint(d[y], x, y, ord, axis, keepdims)


@register_adjoint(np.linalg.vector_norm)
def vector_norm(y, x, axis=None, keepdims=False, ord=2):
    """The array-API vector norm (axis=None: over all entries)."""
    d[x] = norm_adjoint(d[y], x, y, ord, axis, keepdims, "vector")


@register_adjoint(np.linalg.matrix_norm)
def matrix_norm(y, x, keepdims=False, ord="fro"):
    """The array-API matrix norm over the last two axes."""
    d[x] = norm_adjoint(d[y], x, y, ord, None, keepdims, "matrix")


# --------------------------------------------------- covariance and correlation

@register_adjoint(np.cov)
def cov(z, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """C = Xc W Xc^H / f, X the variables as rows (NumPy's cov): d X =
    (G + G^H) Xc W / f, split back into m and y (see
    rules/helpers/covariance.py). rowvar, bias, ddof and (integer, not
    differentiated) fweights; aweights raise NotImplementedError."""
    d[m] = cast_like(cov_adjoint(d[z], m, y, rowvar, bias, ddof, fweights, aweights, True), m)
    d[y] = cast_like(cov_adjoint(d[z], m, y, rowvar, bias, ddof, fweights, aweights, False), y)


@register_tangent(np.cov)
def cov_tangent_(z, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
                 dtype=None):
    """(tXc W Xc^H + Xc W tXc^H) / f."""
    t[z] = cov_tangent(t[m], t[y], z, m, y, rowvar, bias, ddof, fweights, aweights)


@register_adjoint(np.corrcoef)
def corrcoef(z, x, y=None, rowvar=True, *, dtype=None):
    """R = C / (s s^T), C = np.cov(x, y, rowvar), s = sqrt(real(diag(C)))
    (NumPy's corrcoef; its clip to [-1, 1] only removes round-off): the
    cotangent of C is G V + diag(d s / (2 s)), V = 1 / (s s^T),
    d s_i = -(sum_j H_ij + H_ji) / s_i, H = real(G conj(C)) V; then cov's
    adjoint (rules/helpers/covariance.py). A single variable (R = 1) gets 0."""
    d[x] = cast_like(corrcoef_adjoint(d[z], x, y, rowvar, True), x)
    d[y] = cast_like(corrcoef_adjoint(d[z], x, y, rowvar, False), y)


@register_tangent(np.corrcoef)
def corrcoef_tangent(z, x, y=None, rowvar=True, *, dtype=None):
    """tR = tC V + C tV, tC cov's tangent, tV = -V (ts_i / s_i + ts_j / s_j)."""
    t[z] = corrcoef_tangent_(t[x], t[y], z, x, y, rowvar)


declare_linear(cov_tangent, (0, 1))
declare_linear(corrcoef_tangent_, (0, 1))

