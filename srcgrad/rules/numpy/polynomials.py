"""Rules for NumPy's polynomial evaluation: np.polyval (in the coefficients
and in x) and np.vander (the matrix of powers).

The notation is rules/numpy/__init__.py's. Both are sums of powers of x:
d/dx x^k = k x^(k-1), and polyval is linear in its coefficients. The
helpers (rules/helpers/polynomials.py) build the powers by repeated
products, so the derivative at x = 0 is finite, and use only operations
with rules: the rules are differentiated again. Complex values follow TF's
convention (the conjugate derivative times the cotangent).
"""
import numpy as np

from ..helpers.broadcast import unbroadcast
from ..helpers.complex import conj
from ..helpers.polynomials import (polyval_derivative, polyval_p_adjoint, polyval_p_tangent, vander_adjoint,
                                   vander_derivative)
from ..python.containers import seq_cotangent
from ..registry import register_adjoint
from ..tangents import declare_linear, register_tangent


@register_adjoint(np.polyval)
def polyval(z, p, x):
    """z = sum_i p[i] x^(N-1-i) (NumPy's polyval): d x = g conj(p'(x)),
    p' = polyval(polyder(p)); d p[i] = g conj(x^(N-1-i)), summed back to
    p[i]'s shape (a list for a list of coefficients)."""
    d[p] = seq_cotangent(polyval_p_adjoint(d[z], p, x), p)
    d[x] = unbroadcast(d[z] * conj(polyval_derivative(p, x)), x)


@register_tangent(np.polyval)
def polyval_tangent(z, p, x):
    """polyval of the coefficients' tangents plus t[x] p'(x)."""
    t[z] = polyval_p_tangent(t[p], p, x) + t[x] * polyval_derivative(p, x)


@register_adjoint(np.vander)
def vander(z, x, N=None, increasing=False):
    """z[i, j] = x_i^k_j, k_j = N-1-j (j when increasing; NumPy's vander):
    d x_i = sum_j g[i, j] conj(k_j x_i^(k_j - 1))."""
    d[x] = vander_adjoint(d[z], x, N, increasing)


@register_tangent(np.vander)
def vander_tangent(z, x, N=None, increasing=False):
    """t[z][i, j] = t[x]_i k_j x_i^(k_j - 1)."""
    t[z] = t[x][:, None] * vander_derivative(x, N, increasing)


declare_linear(polyval_p_tangent)
