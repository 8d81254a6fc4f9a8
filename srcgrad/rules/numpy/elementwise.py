"""Rules for NumPy's smooth elementwise functions: arithmetic, powers and
roots, exp and logs, trigonometric and hyperbolic functions, and the
modified Bessel function np.i0 (with I1, its derivative, a primitive of
rules/helpers/elementwise.py).

The notation is rules/numpy/__init__.py's.

The derivatives are the textbook ones (Abramowitz & Stegun ch. 4; autograd's
numpy_vjps.py and numpy_jvps.py for the same list; Griewank & Walther,
Evaluating Derivatives, 2nd ed., 2008, ch. 3 for the tangents), with
TensorFlow's complex convention (rules/helpers/complex.py; math_grad.py):
for a holomorphic f, d[x] = d[z] * conj(f'(x)). Where the derivative is
cheaper from the output it is written with `z` (exp2, tan, arcsin... as TF
does). Constants are Python floats, so a float32 input keeps a float32
cotangent. A tangent that may be smaller than the output (a sum whose only
active term was broadcast) goes through `broadcast_like(tangent, z)`.
"""
import math

import numpy as np

from ..helpers.broadcast import broadcast_like, unbroadcast
from ..helpers.complex import cast_like, conj, power_exponent_adjoint
from ..helpers.elementwise import bessel_i1, bessel_i1_derivative, power_exponent_tangent
from ..registry import register_adjoint
from ..tangents import declare_linear, register_tangent

LN2 = math.log(2.0)
LN10 = math.log(10.0)
DEG = 180.0 / math.pi          # degrees per radian
RAD = math.pi / 180.0          # radians per degree

declare_linear(broadcast_like)
declare_linear(power_exponent_tangent)
# hand-written tangents of linear functions (generated code reads `-dx`, `dx * y`)
declare_linear(np.negative)
declare_linear(np.positive)
declare_linear(np.multiply, "any")
declare_linear(np.add, (0, 1))
declare_linear(np.subtract, (0, 1))


# ----------------------------------------------------------------- arithmetic

@register_adjoint(np.add)
def add(z, x, y, out=None, dtype=None):
    d[x] = unbroadcast(d[z], x)
    d[y] = unbroadcast(d[z], y)


@register_tangent(np.add)
def add_tangent(z, x, y, out=None, dtype=None):
    t[z] = broadcast_like(t[x] + t[y], z)


@register_adjoint(np.subtract)
def subtract(z, x, y, out=None, dtype=None):
    d[x] = unbroadcast(d[z], x)
    d[y] = -unbroadcast(d[z], y)       # (negated after the sum: on the smaller array)


@register_tangent(np.subtract)
def subtract_tangent(z, x, y, out=None, dtype=None):
    t[z] = broadcast_like(t[x] - t[y], z)


@register_adjoint(np.multiply)
def multiply(z, x, y, out=None, dtype=None):
    d[x] = unbroadcast(d[z] * conj(y), x)
    d[y] = unbroadcast(d[z] * conj(x), y)


@register_tangent(np.multiply)
def multiply_tangent(z, x, y, out=None, dtype=None):
    t[z] = t[x] * y + x * t[y]


@register_adjoint(np.true_divide)
def true_divide(z, x, y, out=None, dtype=None):
    d[x] = unbroadcast(d[z] / conj(y), x)
    d[y] = unbroadcast(-d[z] * conj(x / (y * y)), y)


@register_tangent(np.true_divide)
def true_divide_tangent(z, x, y, out=None, dtype=None):
    """d(x / y) = dx / y - (x / y) dy / y."""
    t[z] = t[x] / y - z * t[y] / y


@register_adjoint(np.power)
def power(z, x, y, out=None, dtype=None):
    """d/dx x**y = y x**(y-1); d/dy x**y = x**y log x. The power of x is
    written y - (y != 0): y - 1, or 0 where y is 0, so that d/dx x**0 is 0
    at x = 0 too (0 * 0**-1 would be nan; autograd's rule does the same);
    for a literal y it folds to y - 1 (optimize.py)."""
    d[x] = unbroadcast(d[z] * conj(y * x ** (y - (y != 0))), x)
    d[y] = unbroadcast(power_exponent_adjoint(d[z], z, x), y)


@register_tangent(np.power)
def power_tangent(z, x, y, out=None, dtype=None):
    """d(x ** y) = y x**(y-1) dx + x**y log(x) dy (the second term only
    where dy is nonzero: power_exponent_tangent)."""
    t[z] = t[x] * y * x ** (y - (y != 0)) + power_exponent_tangent(t[y], z, x)


@register_adjoint(np.float_power)
def float_power(z, x, y, out=None, dtype=None):
    """As power (d/dx x^y = y x^(y-1), 0 where y is 0; d/dy x^y = x^y ln
    x), computed in float_power's float64 and cast back to each operand's
    dtype."""
    d[x] = cast_like(unbroadcast(d[z] * conj(y * np.float_power(x, y - (y != 0))), x), x)
    d[y] = cast_like(unbroadcast(d[z] * conj(z * np.log(x)), y), y)


@register_adjoint(np.negative)
def negative(z, x, out=None, dtype=None):
    d[x] = -d[z]


@register_tangent(np.negative)
def negative_tangent(z, x, out=None, dtype=None):
    t[z] = -t[x]


@register_adjoint(np.positive)
def positive(z, x, out=None, dtype=None):
    d[x] = d[z]


@register_tangent(np.positive)
def positive_tangent(z, x, out=None, dtype=None):
    t[z] = t[x]


@register_adjoint(np.reciprocal)
def reciprocal(z, x, out=None, dtype=None):
    """d/dx 1/x = -1/x^2 = -z^2."""
    d[x] = -d[z] * conj(z * z)


@register_tangent(np.reciprocal)
def reciprocal_tangent(z, x, out=None, dtype=None):
    t[z] = -t[x] * z * z


@register_adjoint(np.square)
def square(z, x, out=None, dtype=None):
    """d/dx x^2 = 2x."""
    d[x] = d[z] * conj(2.0 * x)


@register_tangent(np.square)
def square_tangent(z, x, out=None, dtype=None):
    t[z] = t[x] * 2.0 * x


@register_adjoint(np.sqrt)
def sqrt(z, x, out=None, dtype=None):
    d[x] = d[z] / (2.0 * conj(z))


@register_tangent(np.sqrt)
def sqrt_tangent(z, x, out=None, dtype=None):
    t[z] = t[x] / (2.0 * z)


@register_adjoint(np.cbrt)
def cbrt(z, x, out=None, dtype=None):
    """d/dx x^(1/3) = 1 / (3 z^2) (real only: cbrt has no complex loop)."""
    d[x] = d[z] / (3.0 * z * z)


@register_tangent(np.cbrt)
def cbrt_tangent(z, x, out=None, dtype=None):
    t[z] = t[x] / (3.0 * z * z)


# --------------------------------------------------------------- exp and logs

@register_adjoint(np.exp)
def exp(z, x, out=None, dtype=None):
    d[x] = d[z] * conj(z)


@register_tangent(np.exp)
def exp_tangent(z, x, out=None, dtype=None):
    t[z] = t[x] * z


@register_adjoint(np.exp2)
def exp2(z, x, out=None, dtype=None):
    """d/dx 2^x = 2^x ln 2."""
    d[x] = d[z] * conj(z * LN2)


@register_tangent(np.exp2)
def exp2_tangent(z, x, out=None, dtype=None):
    t[z] = t[x] * z * np.log(2.0)


@register_adjoint(np.expm1)
def expm1(z, x, out=None, dtype=None):
    """d/dx (e^x - 1) = e^x = z + 1."""
    d[x] = d[z] * conj(z + 1.0)


@register_tangent(np.expm1)
def expm1_tangent(z, x, out=None, dtype=None):
    t[z] = t[x] * (z + 1.0)


@register_adjoint(np.log)
def log(z, x, out=None, dtype=None):
    d[x] = d[z] / conj(x)


@register_tangent(np.log)
def log_tangent(z, x, out=None, dtype=None):
    t[z] = t[x] / x


@register_adjoint(np.log2)
def log2(z, x, out=None, dtype=None):
    """d/dx log2 x = 1 / (x ln 2)."""
    d[x] = d[z] / conj(x * LN2)


@register_tangent(np.log2)
def log2_tangent(z, x, out=None, dtype=None):
    t[z] = t[x] / (x * np.log(2.0))


@register_adjoint(np.log10)
def log10(z, x, out=None, dtype=None):
    """d/dx log10 x = 1 / (x ln 10)."""
    d[x] = d[z] / conj(x * LN10)


@register_tangent(np.log10)
def log10_tangent(z, x, out=None, dtype=None):
    t[z] = t[x] / (x * np.log(10.0))


@register_adjoint(np.log1p)
def log1p(z, x, out=None, dtype=None):
    """d/dx log(1 + x) = 1 / (1 + x)."""
    d[x] = d[z] / conj(1.0 + x)


@register_tangent(np.log1p)
def log1p_tangent(z, x, out=None, dtype=None):
    t[z] = t[x] / (1.0 + x)


@register_adjoint(np.logaddexp)
def logaddexp(z, x, y, out=None, dtype=None):
    """z = log(e^x + e^y): dz/dx = e^(x - z), dz/dy = e^(y - z) (softmax weights)."""
    d[x] = unbroadcast(d[z] * np.exp(x - z), x)
    d[y] = unbroadcast(d[z] * np.exp(y - z), y)


@register_tangent(np.logaddexp)
def logaddexp_tangent(z, x, y, out=None, dtype=None):
    """z = log(e^x + e^y): dz = e^(x - z) dx + e^(y - z) dy."""
    t[z] = t[x] * np.exp(x - z) + t[y] * np.exp(y - z)


@register_adjoint(np.logaddexp2)
def logaddexp2(z, x, y, out=None, dtype=None):
    """z = log2(2^x + 2^y): dz/dx = 2^(x - z), dz/dy = 2^(y - z)."""
    d[x] = unbroadcast(d[z] * np.exp2(x - z), x)
    d[y] = unbroadcast(d[z] * np.exp2(y - z), y)


# --------------------------------------------------------------- trigonometry

@register_adjoint(np.sin)
def sin(z, x, out=None, dtype=None):
    d[x] = d[z] * np.cos(conj(x))


@register_tangent(np.sin)
def sin_tangent(z, x, out=None, dtype=None):
    t[z] = t[x] * np.cos(x)


@register_adjoint(np.cos)
def cos(z, x, out=None, dtype=None):
    d[x] = -d[z] * np.sin(conj(x))


@register_tangent(np.cos)
def cos_tangent(z, x, out=None, dtype=None):
    t[z] = -t[x] * np.sin(x)


@register_adjoint(np.tan)
def tan(z, x, out=None, dtype=None):
    """d/dx tan x = 1 + tan^2 x = sec^2 x."""
    d[x] = d[z] * conj(1.0 + z * z)


@register_tangent(np.tan)
def tan_tangent(z, x, out=None, dtype=None):
    t[z] = t[x] * (1.0 + z * z)


@register_adjoint(np.arcsin)
def arcsin(z, x, out=None, dtype=None):
    """d/dx arcsin x = 1 / sqrt(1 - x^2) (principal branches; written with
    x, not as 1 / cos(z): at x = +-1 it is inf, as the tangent rule's and
    autograd's, where cos(arcsin(1)) rounds to 6e-17)."""
    d[x] = d[z] / conj(np.sqrt(1.0 - x * x))


@register_tangent(np.arcsin)
def arcsin_tangent(z, x, out=None, dtype=None):
    t[z] = t[x] / np.sqrt(1.0 - x * x)


@register_adjoint(np.arccos)
def arccos(z, x, out=None, dtype=None):
    """d/dx arccos x = -1 / sqrt(1 - x^2) (as arcsin's: -inf at x = +-1)."""
    d[x] = -d[z] / conj(np.sqrt(1.0 - x * x))


@register_tangent(np.arccos)
def arccos_tangent(z, x, out=None, dtype=None):
    t[z] = -t[x] / np.sqrt(1.0 - x * x)


@register_adjoint(np.arctan)
def arctan(z, x, out=None, dtype=None):
    """d/dx arctan x = 1 / (1 + x^2)."""
    d[x] = d[z] / conj(1.0 + x * x)


@register_tangent(np.arctan)
def arctan_tangent(z, x, out=None, dtype=None):
    t[z] = t[x] / (1.0 + x * x)


@register_adjoint(np.arctan2)
def arctan2(z, y, x, out=None, dtype=None):
    """z = atan2(y, x): dz/dy = x / (x^2 + y^2), dz/dx = -y / (x^2 + y^2)."""
    d[y] = unbroadcast(d[z] * x / (x * x + y * y), y)
    d[x] = unbroadcast(-d[z] * y / (x * x + y * y), x)


@register_tangent(np.arctan2)
def arctan2_tangent(z, y, x, out=None, dtype=None):
    """d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)."""
    t[z] = (x * t[y] - y * t[x]) / (x * x + y * y)


@register_adjoint(np.hypot)
def hypot(z, x, y, out=None, dtype=None):
    """z = sqrt(x^2 + y^2): dz/dx = x / z, dz/dy = y / z."""
    d[x] = unbroadcast(d[z] * x / z, x)
    d[y] = unbroadcast(d[z] * y / z, y)


@register_tangent(np.hypot)
def hypot_tangent(z, x, y, out=None, dtype=None):
    t[z] = (x * t[x] + y * t[y]) / z


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


# ------------------------------------------------------- hyperbolic functions

@register_adjoint(np.sinh)
def sinh(z, x, out=None, dtype=None):
    """d/dx sinh x = cosh x."""
    d[x] = d[z] * np.cosh(conj(x))


@register_tangent(np.sinh)
def sinh_tangent(z, x, out=None, dtype=None):
    t[z] = t[x] * np.cosh(x)


@register_adjoint(np.cosh)
def cosh(z, x, out=None, dtype=None):
    """d/dx cosh x = sinh x."""
    d[x] = d[z] * np.sinh(conj(x))


@register_tangent(np.cosh)
def cosh_tangent(z, x, out=None, dtype=None):
    t[z] = t[x] * np.sinh(x)


@register_adjoint(np.tanh)
def tanh(z, x, out=None, dtype=None):
    d[x] = d[z] * conj(1.0 - z * z)


@register_tangent(np.tanh)
def tanh_tangent(z, x, out=None, dtype=None):
    t[z] = t[x] * (1.0 - z * z)


@register_adjoint(np.arcsinh)
def arcsinh(z, x, out=None, dtype=None):
    """d/dx arsinh x = 1 / sqrt(x^2 + 1) = 1 / cosh(z)."""
    d[x] = d[z] / conj(np.cosh(z))


@register_tangent(np.arcsinh)
def arcsinh_tangent(z, x, out=None, dtype=None):
    t[z] = t[x] / np.sqrt(x * x + 1.0)


@register_adjoint(np.arccosh)
def arccosh(z, x, out=None, dtype=None):
    """d/dx arcosh x = 1 / sqrt(x^2 - 1) = 1 / sinh(z) (x > 1)."""
    d[x] = d[z] / conj(np.sinh(z))


@register_tangent(np.arccosh)
def arccosh_tangent(z, x, out=None, dtype=None):
    t[z] = t[x] / np.sqrt(x * x - 1.0)


@register_adjoint(np.arctanh)
def arctanh(z, x, out=None, dtype=None):
    """d/dx artanh x = 1 / (1 - x^2)."""
    d[x] = d[z] / conj(1.0 - x * x)


@register_tangent(np.arctanh)
def arctanh_tangent(z, x, out=None, dtype=None):
    t[z] = t[x] / (1.0 - x * x)


# ------------------------------------------------------------ Bessel functions

@register_adjoint(np.i0)
def i0(z, x):
    """d/dx I0(x) = I1(x) (DLMF 10.29.3; as autograd's scipy.special.i0
    rule). NumPy has no I1: bessel_i1 (rules/helpers/elementwise.py: power
    series, Hankel expansion for |x| > 20) is a primitive with its own rule
    below, so every order is differentiated. Real x (np.i0 refuses complex)."""
    d[x] = d[z] * bessel_i1(x)


@register_tangent(np.i0)
def i0_tangent(z, x):
    t[z] = t[x] * bessel_i1(x)


@register_adjoint(bessel_i1)
def bessel_i1_(z, x):
    """d/dx I1(x) = I0(x) - I1(x) / x, 1/2 at 0 (DLMF 10.29.2)."""
    d[x] = d[z] * bessel_i1_derivative(x)


@register_tangent(bessel_i1)
def bessel_i1_tangent(z, x):
    t[z] = t[x] * bessel_i1_derivative(x)

