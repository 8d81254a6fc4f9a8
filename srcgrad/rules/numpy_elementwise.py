"""Adjoint rules for NumPy: elementwise (see numpy_adjoints.py for the notation).

Every ufunc NumPy differentiates smoothly, with the textbook derivatives
(Abramowitz & Stegun ch. 4; autograd's numpy_vjps.py for the same list) and
TensorFlow's complex convention (helpers_math.py; math_grad.py): for a
holomorphic f, d[x] = d[z] * conj(f'(x)). Where the derivative is cheaper
from the output it is written with `z` (exp2, tan, arcsin... as TF does).
Binary rules sum broadcast cotangents back with `unbroadcast`. Constants are Python floats, so a
float32 input keeps a float32 cotangent.
"""
import math

import numpy as np

from .helpers import balanced_eq, unbroadcast
from .helpers_math import (angle_cotangent, cast_like, clip_above, clip_below, clip_inside,
                           complex_like, conj, imag_cotangent, is_finite, sign, sign_product)
from .registry import register_adjoint

LN2 = math.log(2.0)
LN10 = math.log(10.0)
DEG = 180.0 / math.pi          # degrees per radian
RAD = math.pi / 180.0          # radians per degree

# ------------------------------------------------------------- exp and logs


@register_adjoint(np.exp2)
def exp2(z, x, out=None, dtype=None):
    """d/dx 2^x = 2^x ln 2."""
    d[x] = d[z] * conj(z * LN2)


@register_adjoint(np.expm1)
def expm1(z, x, out=None, dtype=None):
    """d/dx (e^x - 1) = e^x = z + 1."""
    d[x] = d[z] * conj(z + 1.0)


@register_adjoint(np.log2)
def log2(z, x, out=None, dtype=None):
    """d/dx log2 x = 1 / (x ln 2)."""
    d[x] = d[z] / conj(x * LN2)


@register_adjoint(np.log10)
def log10(z, x, out=None, dtype=None):
    """d/dx log10 x = 1 / (x ln 10)."""
    d[x] = d[z] / conj(x * LN10)


@register_adjoint(np.log1p)
def log1p(z, x, out=None, dtype=None):
    """d/dx log(1 + x) = 1 / (1 + x)."""
    d[x] = d[z] / conj(1.0 + x)


@register_adjoint(np.logaddexp)
def logaddexp(z, x, y, out=None, dtype=None):
    """z = log(e^x + e^y): dz/dx = e^(x - z), dz/dy = e^(y - z) (softmax weights)."""
    d[x] = unbroadcast(d[z] * np.exp(x - z), x)
    d[y] = unbroadcast(d[z] * np.exp(y - z), y)


@register_adjoint(np.logaddexp2)
def logaddexp2(z, x, y, out=None, dtype=None):
    """z = log2(2^x + 2^y): dz/dx = 2^(x - z), dz/dy = 2^(y - z)."""
    d[x] = unbroadcast(d[z] * np.exp2(x - z), x)
    d[y] = unbroadcast(d[z] * np.exp2(y - z), y)


# ------------------------------------------------------------ powers, roots


@register_adjoint(np.float_power)
def float_power(z, x, y, out=None, dtype=None):
    """As power (d/dx x^y = y x^(y-1), d/dy x^y = x^y ln x), computed in
    float_power's float64 and cast back to each operand's dtype."""
    d[x] = cast_like(unbroadcast(d[z] * conj(y * np.float_power(x, y - 1)), x), x)
    d[y] = cast_like(unbroadcast(d[z] * conj(z * np.log(x)), y), y)


@register_adjoint(np.square)
def square(z, x, out=None, dtype=None):
    """d/dx x^2 = 2x."""
    d[x] = d[z] * conj(2.0 * x)


@register_adjoint(np.cbrt)
def cbrt(z, x, out=None, dtype=None):
    """d/dx x^(1/3) = 1 / (3 z^2) (real only: cbrt has no complex loop)."""
    d[x] = d[z] / (3.0 * z * z)


@register_adjoint(np.reciprocal)
def reciprocal(z, x, out=None, dtype=None):
    """d/dx 1/x = -1/x^2 = -z^2."""
    d[x] = -d[z] * conj(z * z)


# ------------------------------------------------------------- trigonometry


@register_adjoint(np.tan)
def tan(z, x, out=None, dtype=None):
    """d/dx tan x = 1 + tan^2 x = sec^2 x."""
    d[x] = d[z] * conj(1.0 + z * z)


@register_adjoint(np.arcsin)
def arcsin(z, x, out=None, dtype=None):
    """d/dx arcsin x = 1 / sqrt(1 - x^2) = 1 / cos(z) (on the principal branch)."""
    d[x] = d[z] / conj(np.cos(z))


@register_adjoint(np.arccos)
def arccos(z, x, out=None, dtype=None):
    """d/dx arccos x = -1 / sqrt(1 - x^2) = -1 / sin(z)."""
    d[x] = -d[z] / conj(np.sin(z))


@register_adjoint(np.arctan)
def arctan(z, x, out=None, dtype=None):
    """d/dx arctan x = 1 / (1 + x^2)."""
    d[x] = d[z] / conj(1.0 + x * x)


@register_adjoint(np.arctan2)
def arctan2(z, y, x, out=None, dtype=None):
    """z = atan2(y, x): dz/dy = x / (x^2 + y^2), dz/dx = -y / (x^2 + y^2)."""
    d[y] = unbroadcast(d[z] * x / (x * x + y * y), y)
    d[x] = unbroadcast(-d[z] * y / (x * x + y * y), x)


@register_adjoint(np.hypot)
def hypot(z, x, y, out=None, dtype=None):
    """z = sqrt(x^2 + y^2): dz/dx = x / z, dz/dy = y / z."""
    d[x] = unbroadcast(d[z] * x / z, x)
    d[y] = unbroadcast(d[z] * y / z, y)


@register_adjoint(np.sinh)
def sinh(z, x, out=None, dtype=None):
    """d/dx sinh x = cosh x."""
    d[x] = d[z] * np.cosh(conj(x))


@register_adjoint(np.cosh)
def cosh(z, x, out=None, dtype=None):
    """d/dx cosh x = sinh x."""
    d[x] = d[z] * np.sinh(conj(x))


@register_adjoint(np.arcsinh)
def arcsinh(z, x, out=None, dtype=None):
    """d/dx arsinh x = 1 / sqrt(x^2 + 1) = 1 / cosh(z)."""
    d[x] = d[z] / conj(np.cosh(z))


@register_adjoint(np.arccosh)
def arccosh(z, x, out=None, dtype=None):
    """d/dx arcosh x = 1 / sqrt(x^2 - 1) = 1 / sinh(z) (x > 1)."""
    d[x] = d[z] / conj(np.sinh(z))


@register_adjoint(np.arctanh)
def arctanh(z, x, out=None, dtype=None):
    """d/dx artanh x = 1 / (1 - x^2)."""
    d[x] = d[z] / conj(1.0 - x * x)


@register_adjoint(np.deg2rad)
def deg2rad(z, x, out=None, dtype=None):
    """Linear: z = x pi / 180."""
    d[x] = d[z] * RAD


@register_adjoint(np.rad2deg)
def rad2deg(z, x, out=None, dtype=None):
    """Linear: z = x 180 / pi."""
    d[x] = d[z] * DEG


register_adjoint(np.radians)(deg2rad)     # distinct ufunc objects, same maths
register_adjoint(np.degrees)(rad2deg)


@register_adjoint(np.sinc)
def sinc(z, x):
    """sinc x = sin(pi x) / (pi x): d/dx = (cos(pi x) - sinc x) / x, 0 at x = 0."""
    d[x] = d[z] * np.where(x == 0, 0.0, (np.cos(np.pi * x) - z) / np.where(x == 0, 1.0, x))


# ------------------------------------------------- piecewise-linear, selection


@register_adjoint(np.fabs)
def fabs(z, x, out=None, dtype=None):
    """d|x|/dx = sign(x), 0 at 0 (as np.absolute; fabs is real only)."""
    d[x] = d[z] * sign(x)


@register_adjoint(np.fmax)
def fmax(z, x, y, out=None, dtype=None):
    """As maximum (ties split evenly, autograd's rule); a NaN operand is
    ignored by fmax and gets 0."""
    d[x] = unbroadcast(d[z] * balanced_eq(x, z, y), x)
    d[y] = unbroadcast(d[z] * balanced_eq(y, z, x), y)


@register_adjoint(np.fmin)
def fmin(z, x, y, out=None, dtype=None):
    """As minimum; a NaN operand gets 0."""
    d[x] = unbroadcast(d[z] * balanced_eq(x, z, y), x)
    d[y] = unbroadcast(d[z] * balanced_eq(y, z, x), y)


@register_adjoint(np.clip)
def clip(z, a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    """The cotangent passes to `a` where lo <= a <= hi (bounds included, as
    TF's clip_by_value), to the lower bound where a < lo and to the upper
    where a > hi (array bounds are summed back to their shape)."""
    d[a] = unbroadcast(d[z] * clip_inside(a, a_min, a_max, min, max), a)
    d[a_min] = unbroadcast(d[z] * clip_below(a, a_min, a_max, min, max), a_min)
    d[a_max] = unbroadcast(d[z] * clip_above(a, a_min, a_max, min, max), a_max)
    d[min] = unbroadcast(d[z] * clip_below(a, a_min, a_max, min, max), min)
    d[max] = unbroadcast(d[z] * clip_above(a, a_min, a_max, min, max), max)


@register_adjoint(np.copysign)
def copysign(z, x, y, out=None, dtype=None):
    """z = |x| sign(y): dz/dx = sign(x) sign(y); y only sets a sign (no
    cotangent, as TF and JAX)."""
    d[x] = unbroadcast(d[z] * sign_product(x, y), x)


@register_adjoint(np.ldexp)
def ldexp(z, x, i, out=None, dtype=None):
    """z = x 2^i is linear in x (i is an integer exponent)."""
    d[x] = unbroadcast(np.ldexp(d[z], i), x)


@register_adjoint(np.fmod)
def fmod(z, x, y, out=None, dtype=None):
    """fmod(x, y) = x - trunc(x / y) y, piecewise linear."""
    d[x] = unbroadcast(d[z], x)
    d[y] = unbroadcast(-d[z] * np.trunc(x / y), y)


@register_adjoint(np.nan_to_num)
def nan_to_num(z, x, copy=True, nan=0.0, posinf=None, neginf=None):
    """Identity on finite entries; the replaced NaN/inf entries are
    constants (autograd's rule)."""
    d[x] = d[z] * is_finite(x)


# ------------------------------------------------------------------ complex


@register_adjoint(np.real)
def real(z, val):
    """Re: the cotangent becomes complex(g, 0) (TF's _RealGrad)."""
    d[val] = complex_like(d[z], val)


@register_adjoint(np.imag)
def imag(z, val):
    """Im: the cotangent becomes complex(0, g) (TF's _ImagGrad); 0 for real input."""
    d[val] = imag_cotangent(d[z], val)


@register_adjoint(np.conjugate)
def conjugate(z, x, out=None, dtype=None):
    """conj: the cotangent is conjugated (TF's _ConjGrad); np.conj is this ufunc."""
    d[x] = conj(d[z])


@register_adjoint(np.angle)
def angle(y, z, deg=False):
    """y = arg z = atan2(Im z, Re z): the gradient is g i / conj(z) = g i z / |z|^2
    (TF's _AngleGrad); 0 for real input (undefined at 0). Times 180/pi for deg."""
    d[z] = angle_cotangent(d[y], z, deg)


@register_adjoint(np.real_if_close)
def real_if_close(z, a, tol=100):
    """The identity on values: the cotangent takes `a`'s kind back (autograd's rule)."""
    d[a] = complex_like(d[z], a)


# ------------------------------------------------------------- dtype casts


@register_adjoint(cast_like)
def cast_like_(z, g, x):
    """A cast is linear; its adjoint casts the cotangent back to g's dtype."""
    d[g] = cast_like(d[z], g)
