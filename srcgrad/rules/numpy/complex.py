"""Rules for NumPy's complex-number functions (real, imag, conjugate, angle,
real_if_close) and for dtype casts.

The notation is rules/numpy/__init__.py's.

The convention is TensorFlow's (tensorflow/python/ops/math_grad.py,
_RealGrad, _ImagGrad, _ConjGrad, _AngleGrad; README, "Complex inputs"):
for a real loss of x = a + ib the gradient is dL/da + i dL/db, so the
adjoint of a real-valued function of complex values is complex, and a real
input gets the real part (rules/helpers/complex.py). Re, Im and conj are
real-linear, so their tangents are themselves applied to the tangent (the
rules of the helper `conj` are in rules/generated_code.py).
"""
import numpy as np

from ..helpers.complex import (angle_cotangent, cast_like, complex_like, conj, imag_cotangent, real_if_close_cotangent,
                               real_if_close_tangent, real_part)
from ..registry import register_adjoint
from ..tangents import declare_linear, register_linear, register_tangent

declare_linear(real_part)


# -------------------------------------------------------------- complex parts

@register_adjoint(np.real)
def real(z, val):
    """Re: the cotangent becomes complex(g, 0) (TF's _RealGrad)."""
    d[val] = complex_like(d[z], val)


register_linear(np.real)


@register_adjoint(np.imag)
def imag(z, val):
    """Im: the cotangent becomes complex(0, g) (TF's _ImagGrad); 0 for real input."""
    d[val] = imag_cotangent(d[z], val)


register_linear(np.imag)


@register_adjoint(np.conjugate)
def conjugate(z, x, out=None, dtype=None):
    """conj: the cotangent is conjugated (TF's _ConjGrad); np.conj is this ufunc."""
    d[x] = conj(d[z])


register_linear(np.conjugate, static=())


@register_adjoint(np.angle)
def angle(y, z, deg=False):
    """y = arg z = atan2(Im z, Re z): the gradient is g i / conj(z) = g i z / |z|^2
    (TF's _AngleGrad); 0 for real input (undefined at 0). Times 180/pi for deg."""
    d[z] = angle_cotangent(d[y], z, deg)


@register_adjoint(np.real_if_close)
def real_if_close(z, a, tol=100):
    """The identity on values where the result stays complex; where the
    imaginary part was dropped (close to 0), the cotangent takes `a`'s kind
    back (autograd's rule; it took the real part in both cases)."""
    d[a] = real_if_close_cotangent(d[z], z, a)


@register_tangent(np.real_if_close)
def real_if_close_tangent_(z, a, tol=100):
    """dz = da where z stayed complex, Re(da) where it became real."""
    t[z] = real_if_close_tangent(t[a], z)


@register_adjoint(real_if_close_cotangent)
def real_if_close_cotangent_(out, g, z, a):
    """Linear in g: its transpose (Re where z is real, the identity else)."""
    d[g] = real_if_close_tangent(d[out], z)


register_linear(real_if_close_cotangent)


@register_adjoint(real_if_close_tangent)
def real_if_close_tangent_adjoint(out, t, z):
    """Linear in t: its transpose (complex(Re h, 0) where z is real)."""
    d[t] = real_if_close_cotangent(d[out], z, t)


register_linear(real_if_close_tangent)


# ---------------------------------------------------------------- dtype casts

@register_adjoint(cast_like)
def cast_like_(z, g, x):
    """A cast is linear; its adjoint casts the cotangent back to g's dtype."""
    d[g] = cast_like(d[z], g)
