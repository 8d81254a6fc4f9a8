"""Rules for NumPy's piecewise-linear and selecting elementwise functions:
maximum, minimum, fmax, fmin, clip, where, absolute, fabs, copysign,
remainder, fmod, ldexp, divmod (and the builtin), modf, frexp, nan_to_num,
interp and unwrap.

The notation is rules/numpy/__init__.py's.

Each function is linear on pieces, and its derivative is the piece's (0 or
1 for a selection). At the kinks the conventions are autograd's and JAX's:
ties of maximum/minimum (and fmax/fmin) split the cotangent evenly, and so
do the tangents (the mean of both); d|x|/dx = sign(x), 0 at 0; np.clip's
bounds are included in the pass-through piece (TF's clip_by_value);
np.interp's derivative at a knot is the slope of the piece to its right
(JAX's jnp.interp).
"""
import builtins

import numpy as np

from ..helpers.broadcast import broadcast_like, unbroadcast
from ..helpers.complex import cast_like, conj, real_if_real, real_part, sign
from ..helpers.elementwise import (balanced_eq, clip_above, clip_below, clip_inside, is_finite,
                                   sign_product, unwrap_periods)
from ..helpers.interp import (interp_fp_adjoint, interp_fp_tangent, interp_left_mask, interp_right_mask,
                              interp_slope, interp_xp_adjoint, interp_xp_tangent)
from ..registry import register_adjoint
from ..tangents import declare_linear, register_tangent


# ---------------------------------------------------------- maxima and minima
# One template for maximum, minimum, fmax and fmin: z is x where x wins and y
# where y does, so the cotangent goes to the winner; ties split it evenly
# (autograd's rule), and a NaN operand, which fmax and fmin ignore, gets 0
# (balanced_eq).


def extremum(z, x, y, out=None, dtype=None):
    """Ties split the cotangent evenly between x and y (autograd's rule)."""
    d[x] = unbroadcast(d[z] * balanced_eq(x, z, y), x)
    d[y] = unbroadcast(d[z] * balanced_eq(y, z, x), y)


def extremum_tangent(z, x, y, out=None, dtype=None):
    """Ties take the mean of both tangents (the adjoint's half-and-half)."""
    t[z] = t[x] * balanced_eq(x, z, y) + t[y] * balanced_eq(y, z, x)


for _f, _like in ((np.maximum, None), (np.minimum, None), (np.fmax, "maximum"), (np.fmin, "minimum")):
    register_adjoint(_f, name=_f.__name__, doc=_like and (
        "As %s (ties split evenly, autograd's rule); a NaN operand is ignored by %s and gets 0."
        % (_like, _f.__name__)))(extremum)
    if _like is None:
        register_tangent(_f, name=_f.__name__ + "_tangent")(extremum_tangent)


@register_adjoint(np.clip)
def clip(z, a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    """The cotangent passes to `a` where lo <= a <= hi (bounds included, as
    TF's clip_by_value), to the lower bound where a < lo and to the upper
    where a > hi (array bounds are summed back to their shape). The masks
    select (np.where, as TF's clip_by_value gradient) rather than multiply,
    which the array API does not allow for booleans."""
    d[a] = unbroadcast(np.where(clip_inside(a, a_min, a_max, min, max), d[z], 0.0), a)
    d[a_min] = unbroadcast(np.where(clip_below(a, a_min, a_max, min, max), d[z], 0.0), a_min)
    d[a_max] = unbroadcast(np.where(clip_above(a, a_min, a_max, min, max), d[z], 0.0), a_max)
    d[min] = unbroadcast(np.where(clip_below(a, a_min, a_max, min, max), d[z], 0.0), min)
    d[max] = unbroadcast(np.where(clip_above(a, a_min, a_max, min, max), d[z], 0.0), max)


# ------------------------------------------------------------------ selection

@register_adjoint(np.where)
def where(z, condition, x, y):
    d[x] = unbroadcast(np.where(condition, d[z], 0.0), x)
    d[y] = unbroadcast(np.where(condition, 0.0, d[z]), y)


@register_tangent(np.where)
def where_tangent(z, condition, x, y):
    t[z] = broadcast_like(np.where(condition, t[x], t[y]), z)


declare_linear(np.where, (1, 2))


@register_adjoint(np.nan_to_num)
def nan_to_num(z, x, copy=True, nan=0.0, posinf=None, neginf=None):
    """Identity on finite entries; the replaced NaN/inf entries are
    constants (autograd's rule)."""
    d[x] = d[z] * is_finite(x)


# ---------------------------------------------------- absolute value and sign

@register_adjoint(np.absolute)
def absolute(z, x, out=None, dtype=None):
    """d|x|/dx = sign(x) (0 at 0, as autograd and JAX); x / |x| for complex x
    (TF's _ComplexAbsGrad; the real part of a complex cotangent, as for every
    real-valued function of complex values: rules/helpers/complex.py real_part)."""
    d[x] = real_part(d[z]) * sign(x)


@register_tangent(np.absolute)
def absolute_tangent(z, x, out=None, dtype=None):
    """d|x| = sign(x) dx (0 at 0, as the adjoint rule); for complex x,
    d|x| = Re(conj(x / |x|) dx)."""
    t[z] = real_part(t[x] * conj(sign(x)))


@register_adjoint(np.fabs)
def fabs(z, x, out=None, dtype=None):
    """d|x|/dx = sign(x), 0 at 0 (as np.absolute; fabs is real only)."""
    d[x] = d[z] * sign(x)


@register_adjoint(np.copysign)
def copysign(z, x, y, out=None, dtype=None):
    """z = |x| sign(y): dz/dx = sign(x) sign(y); y only sets a sign (no
    cotangent, as TF and JAX)."""
    d[x] = unbroadcast(d[z] * sign_product(x, y), x)


# ----------------------------------------------------------------- remainders

@register_adjoint(np.remainder)
def remainder(z, x, y, out=None, dtype=None):
    """x % y = x - floor(x / y) * y, piecewise linear."""
    d[x] = unbroadcast(d[z], x)
    d[y] = unbroadcast(-d[z] * np.floor_divide(x, y), y)


@register_tangent(np.remainder)
def remainder_tangent(z, x, y, out=None, dtype=None):
    """x % y = x - floor(x / y) y, piecewise linear."""
    t[z] = broadcast_like(t[x] - t[y] * np.floor_divide(x, y), z)


@register_adjoint(np.fmod)
def fmod(z, x, y, out=None, dtype=None):
    """fmod(x, y) = x - trunc(x / y) y, piecewise linear."""
    d[x] = unbroadcast(d[z], x)
    d[y] = unbroadcast(-d[z] * np.trunc(x / y), y)


@register_adjoint(np.ldexp)
def ldexp(z, x, i, out=None, dtype=None):
    """z = x 2^i is linear in x (i is an integer exponent)."""
    d[x] = unbroadcast(np.ldexp(d[z], i), x)


# Two outputs (tuples): the JVPs are these VJPs transposed (forward_mode.transpose_jvp), as for
# every primitive returning a tuple (np.split, np.linalg.slogdet).

@register_adjoint(np.divmod)
def divmod_(z, x, y, out=None, dtype=None):
    """z = (floor(x / y), x % y) (np.divmod, and the builtin divmod on
    arrays, which calls it: ndarray.__divmod__). The quotient is piecewise
    constant (derivative 0, as np.floor_divide); the remainder is
    np.remainder's x - floor(x / y) y: d x = d[z][1], d y = -d[z][1] z[0].
    Shapes: x, y broadcast; each cotangent summed back to its operand."""
    d[x] = unbroadcast(d[z][1], x)
    d[y] = unbroadcast(-d[z][1] * z[0], y)


register_adjoint(builtins.divmod, name="builtin_divmod")(divmod_)


@register_adjoint(np.modf)
def modf(z, x, out=None, dtype=None):
    """z = (x - trunc(x), trunc(x)), both shaped like x (float): the
    fractional part has derivative 1 and the integral part 0 (piecewise
    constant, as np.trunc), so d x = d[z][0]."""
    d[x] = d[z][0]


@register_adjoint(np.frexp)
def frexp(z, x, out=None, dtype=None):
    """z = (m, e), x = m 2^e with the integer exponent e piecewise constant:
    m = x 2^-e, so d x = d[z][0] 2^-e (np.ldexp; e is z[1], an int array
    shaped like x). Real floating x only, as np.frexp."""
    d[x] = np.ldexp(d[z][0], -z[1])


# -------------------------------------------------------------- interpolation

@register_adjoint(np.interp)
def interp(z, x, xp, fp, left=None, right=None, period=None):
    """np.interp is linear on each piece: z = fp[lo] + t (fp[hi] - fp[lo]),
    t = (x - xp[lo]) / (xp[hi] - xp[lo]) on x's piece, left (else fp[0])
    below xp[0], right (else fp[-1]) above xp[-1] (NumPy's compiled interp,
    arr_interp in numpy/_core/src/multiarray/compiled_base.c). d/dx is the
    piece's slope, 0 outside [xp[0], xp[-1]]; at a knot, the slope of the
    piece to its right (at xp[-1], of the last piece): JAX's jnp.interp
    convention (searchsorted side='right'), one-sided derivatives.

    fp gets the linear weights 1 - t and t at lo and hi (the whole
    cotangent at fp[0] below xp[0] and at fp[-1] above xp[-1] unless left
    or right is given); a given left or right gets the cotangents of the
    points it is the value of (x < xp[0], x > xp[-1]; at x == xp[0] the
    value is fp[0]). xp is differentiated too, as JAX does: dz/dxp[lo] =
    -s (1 - t), dz/dxp[hi] = -s t for the slope s; xp must increase, as
    NumPy requires (not checked). With a period, x and xp are reduced
    modulo it and xp sorted (NumPy's own steps, numpy/lib/
    _function_base_impl.py), then the same; the period gets no cotangent.
    A complex fp (or left, right) follows the complex convention
    (rules/helpers/complex.py). The weights and slopes are computed with
    operations that have rules (rules/helpers/interp.py): second order."""
    d[x] = cast_like(real_if_real(d[z] * conj(interp_slope(x, xp, fp, period)), x), x)
    d[xp] = cast_like(real_if_real(interp_xp_adjoint(d[z], x, xp, fp, period), xp), xp)
    d[fp] = cast_like(real_if_real(interp_fp_adjoint(d[z], x, xp, fp, left, right, period), fp), fp)
    d[left] = cast_like(real_if_real(unbroadcast(d[z] * interp_left_mask(x, xp, left, period), left), left), left)
    d[right] = cast_like(real_if_real(
        unbroadcast(d[z] * interp_right_mask(x, xp, right, period), right), right), right)


@register_tangent(np.interp)
def interp_tangent(z, x, xp, fp, left=None, right=None, period=None):
    """The sum of the adjoint's terms, applied to the tangents."""
    t[z] = cast_like(t[x] * interp_slope(x, xp, fp, period) + interp_xp_tangent(t[xp], x, xp, fp, period)
                     + interp_fp_tangent(t[fp], x, xp, left, right, period)
                     + t[left] * interp_left_mask(x, xp, left, period)
                     + t[right] * interp_right_mask(x, xp, right, period), z)


declare_linear(interp_fp_tangent)
declare_linear(interp_xp_tangent)


# ---------------------------------------------------------------------- unwrap

@register_adjoint(np.unwrap)
def unwrap(z, p, discont=None, axis=-1, *, period=2 * np.pi):
    """z = p + k period, k the whole numbers of periods NumPy's unwrap adds
    (a cumulative sum of corrections ddmod - dd, multiples of the period:
    numpy/lib/_function_base_impl.py), constant between the jumps: d p is
    the cotangent itself (as JAX's jnp.unwrap, whose corrections are
    differentiated through jnp.mod, of derivative 1, minus the same
    differences), d period = sum(g k). discont only chooses where the jumps
    are: no cotangent."""
    d[p] = cast_like(d[z], p)
    d[period] = unbroadcast(d[z] * unwrap_periods(p, z, period), period)


@register_tangent(np.unwrap)
def unwrap_tangent(z, p, discont=None, axis=-1, *, period=2 * np.pi):
    t[z] = cast_like(t[p] + t[period] * unwrap_periods(p, z, period), z)

