"""Adjoint rules for NumPy: reductions (see numpy_adjoints.py for the notation).

Each rule broadcasts the output's cotangent back over the reduced axes with
`unreduce` (axis None, an int or a tuple; keepdims either way) and
multiplies by the derivative of the reduction. Parameters NumPy has but the
rules do not model (`where=`) are left out of the templates, so passing them
is refused when the call is bound, rather than differentiated wrongly.
Complex inputs follow TF's convention (helpers_math.py).
"""
import numpy as np

from .helpers import unreduce
from .helpers_math import (average_weights, average_weights_adjoint, conj, cumsum_adjoint,
                           degrees_of_freedom, drop_initial, is_not_nan, nan_mean_weights,
                           norm_adjoint, prod_others, real_part)
from .numpy_adjoints import max as _max_rule, min as _min_rule
from .registry import register_adjoint


@register_adjoint(np.prod)
def prod(y, a, axis=None, dtype=None, out=None, keepdims=False, initial=None):
    """d prod(a) / d a_i = the product of the other entries (computed
    without dividing by a_i, so zeros are handled: TF's _ProdGrad)."""
    d[a] = unreduce(d[y], a, axis, keepdims) * conj(prod_others(a, axis, initial))


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
    d[a] = (unreduce(real_part(d[y]) / y, a, axis, keepdims) * (a - np.mean(a, axis=axis, keepdims=True))
            / degrees_of_freedom(a, y, ddof, correction))


@register_adjoint(np.cumsum)
def cumsum(y, a, axis=None, dtype=None, out=None):
    """y_i = sum_{j <= i} a_j: d[a]_j = sum_{i >= j} d[y]_i, the reversed
    cumulative sum (axis=None runs on a.ravel())."""
    d[a] = cumsum_adjoint(d[y], a, axis)


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


@register_adjoint(np.nansum)
def nansum(y, a, axis=None, dtype=None, out=None, keepdims=False, initial=None):
    """As sum over the non-NaN entries; NaN entries get 0."""
    d[a] = unreduce(d[y], a, axis, keepdims) * is_not_nan(a)


@register_adjoint(np.nanmean)
def nanmean(y, a, axis=None, dtype=None, out=None, keepdims=False):
    """As mean over the non-NaN entries (1/count each); NaN entries get 0."""
    d[a] = unreduce(d[y], a, axis, keepdims) * nan_mean_weights(a, axis)


# NaN never equals the max, so max's chooser already skips NaN entries.
register_adjoint(np.nanmax)(_max_rule)
register_adjoint(np.nanmin)(_min_rule)


@register_adjoint(np.average)
def average(y, a, axis=None, weights=None, returned=False, *, keepdims=False):
    """y = sum(a w) / sum(w) over `axis`: d[a] = g w / sum(w),
    d[w] = g (a - y) / sum(w) (summed back to 1-d weights). returned=True
    (a tuple output) is refused."""
    d[a] = average_weights(a, weights, axis, returned) * unreduce(d[y], a, axis, keepdims)
    d[weights] = average_weights_adjoint(d[y], a, y, weights, axis, keepdims, returned)


@register_adjoint(np.linalg.norm)
def norm(y, x, ord=None, axis=None, keepdims=False):
    """Vector norms (ord None/2, 1, inf, -inf, 0, any p) and matrix norms
    ('fro', 'nuc', 1, -1, 2, -2, inf, -inf), over `axis`, keepdims either
    way: see helpers_math.norm_adjoint for each derivative."""
    d[x] = norm_adjoint(d[y], x, y, ord, axis, keepdims)


@register_adjoint(np.linalg.vector_norm)
def vector_norm(y, x, axis=None, keepdims=False, ord=2):
    """The array-API vector norm (axis=None: over all entries)."""
    d[x] = norm_adjoint(d[y], x, y, ord, axis, keepdims, "vector")


@register_adjoint(np.linalg.matrix_norm)
def matrix_norm(y, x, keepdims=False, ord="fro"):
    """The array-API matrix norm over the last two axes."""
    d[x] = norm_adjoint(d[y], x, y, ord, None, keepdims, "matrix")
