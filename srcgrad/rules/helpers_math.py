"""Run-time helpers for the elementwise, reduction and scipy.special rules,
and for the complex convention.

Like helpers.py (see its docstring), each helper is written with NumPy
functions that have rules (so it is differentiated again when a
higher-order tape records it), is a `primitive` with a rule of its own, or
is a `nondiff_helper`.

The complex convention is TensorFlow's (tensorflow/python/ops/math_grad.py):
for a real loss L of a complex input x = a + ib, the gradient is
dL/da + i dL/db, the direction of steepest ascent. For a holomorphic f the
adjoint of z = f(x) is then d[x] = d[z] * conj(f'(x)); a real input's
cotangent is the real part of the complex one. `conj` is the identity on
real values (one dtype check), so real code pays one Python call for it and
nothing else.

Mixed real and complex operands (`theta * 1j`): the gradient of a real
input is the real part of the complex cotangent. The binary rules'
`helpers.unbroadcast` reads only the input's shape (codegen saves such
residuals as ShapeOf) and does not take that real part, so a real operand of
a binary op with a complex result receives a complex cotangent whose real
part is its gradient; the tape and sg.grad cast each gradient to its
source's dtype, which keeps that real part.
"""
import numpy as np

from . import helpers
from .helpers import nondiff_helper, primitive


@nondiff_helper
def _kind(v):
    """The dtype kind of `v` ('f', 'c', 'i', ...); Python scalars included."""
    dtype = getattr(v, "dtype", None)
    if dtype is not None:
        return dtype.kind
    if isinstance(v, complex):
        return "c"
    if isinstance(v, (bool, int, float)):
        return "f"
    return np.asarray(v).dtype.kind


def conj(x):
    """The complex conjugate of `x`; `x` itself when it is real."""
    try:
        if x.dtype.kind != "c":
            return x
    except AttributeError:
        if isinstance(x, complex):
            return x.conjugate()      # a Python complex stays weakly typed
        if _kind(x) != "c":
            return x
    return np.conjugate(x)


def real_part(g):
    """The cotangent `g` of a real-valued output as a real array. A real
    value that meets complex ones later (`np.abs(z) * c`) receives a complex
    cotangent whose real part is its gradient (see the module docstring);
    the rules of functions from complex to real values (abs, real, imag,
    angle, norms, var, singular values, eigh's eigenvalues...) must drop
    the imaginary part before combining it with complex primal values."""
    if _kind(g) == "c":
        return np.real(g)
    return g


def complex_like(g, x):
    """`g` as the cotangent of `x`: complex(Re g, 0) when `x` is complex
    (TF's _RealGrad), else `g`."""
    if _kind(x) == "c":
        return real_part(g) * (1 + 0j)
    return g


def imag_cotangent(g, x):
    """The cotangent of x in np.imag(x): complex(0, Re g) (TF's _ImagGrad)
    for complex x; 0 for real x, whose imaginary part is the constant 0."""
    if _kind(x) != "c":
        return g * 0.0
    return real_part(g) * 1j


def angle_cotangent(g, z, deg=False):
    """The cotangent of z in np.angle(z, deg): g i / conj(z) = g i z / |z|^2
    (TF's _AngleGrad, g real), times 180/pi for degrees; 0 for real z (whose
    angle is the constant 0 or pi)."""
    if _kind(z) != "c":
        return g * 0.0
    return real_part(g) * ((180.0 / np.pi if deg else 1.0) * 1j) / np.conjugate(z)


def sign(x):
    """d|x|/dx in the convention above: sign(x) for real x (0 at 0, nothing
    to differentiate further), x / |x| for complex x (0 at 0)."""
    if _kind(x) != "c":
        return helpers.sign(x)
    a = np.abs(x)
    return x / np.where(a == 0, 1.0, a)


@primitive
def cast_like(g, x):
    """`g` cast to `x`'s floating dtype (float_power computes in float64; a
    float32 input gets a float32 cotangent)."""
    dtype = float_dtype(x)
    g = np.asarray(g)
    return g if g.dtype == dtype else g.astype(dtype)


@nondiff_helper
def _dtype(x):
    dtype = getattr(x, "dtype", None)
    return dtype if dtype is not None else np.result_type(x)


# A cast is linear: its adjoint casts back (registered in numpy_elementwise.py).


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


@nondiff_helper
def is_not_nan(x):
    return ~np.isnan(x)


# ----------------------------------------------------------------- reductions


def _axes(axis, ndim):
    """`axis` (None, an int or a tuple) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if not isinstance(axis, (tuple, list)):
        axis = (axis,)
    return tuple(sorted(a % ndim for a in axis))


def float_dtype(x):
    """x's dtype if it is inexact, else float64."""
    dtype = np.result_type(_dtype(x), np.float16)
    return np.dtype(np.float64) if dtype == np.float16 and _dtype(x) != np.float16 else dtype


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
    zeros = np.sum(zero, axis=axis, keepdims=True)
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
    return (keep / count).astype(float_dtype(a))


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
    c = (helpers.unreduce(g, a, axis, keepdims) * (a - helpers.unreduce(y, a, axis, keepdims))
         / np.sum(wb, axis=axis, keepdims=True))
    if np.ndim(weights) == np.ndim(a):
        return c
    axes = _axes(axis, np.ndim(a))
    other = tuple(i for i in range(np.ndim(a)) if i not in axes)
    return np.reshape(np.sum(c, axis=other), np.shape(weights))


# ---------------------------------------------------------------- norms


def _norm_kind(x, ord, axis, kind):
    """('vector' | 'matrix', axes, ord) for np.linalg.norm's arguments
    (`kind` forces vector_norm / matrix_norm semantics)."""
    nd = np.ndim(x)
    if kind == "vector":
        return "vector", _axes(axis, nd), 2 if ord is None else ord
    if kind == "matrix":
        return "matrix", _axes((-2, -1) if axis is None else axis, nd), "fro" if ord is None else ord
    if axis is None:
        if ord is None:
            return "vector", _axes(None, nd), 2
        axis = (0,) if nd == 1 else (0, 1)
    elif not isinstance(axis, (tuple, list)):
        axis = (axis,)
    if len(axis) == 1:
        return "vector", _axes(axis, nd), 2 if ord is None else ord
    return "matrix", _axes(axis, nd), "fro" if ord is None else ord


@nondiff_helper
def norm_chooser(x, z, sum_axis, choose_axis):
    """Where the sum of |x| over `sum_axis` attains the norm `z` (broadcast
    to x's shape) among the sums along `choose_axis`: 1/k for k ties."""
    s = np.sum(np.abs(x), axis=sum_axis, keepdims=True)
    mask = (s == z).astype(float_dtype(x))
    mask = np.broadcast_to(mask, np.shape(x))
    return mask / np.sum(mask, axis=choose_axis, keepdims=True)


@nondiff_helper
def abs_chooser(x, z):
    """Where |x| attains the inf/-inf vector norm `z` (full shape), 1/k for k ties."""
    return (np.abs(x) == z).astype(float_dtype(x))


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
    gf = helpers.unreduce(g, x, red, keepdims)
    zf = helpers.unreduce(z, x, red, keepdims)
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


# ------------------------------------------------------------ logsumexp


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
    e = np.exp(a - helpers.unreduce(z, a, axis, keepdims))
    return e if b is None else e * b
