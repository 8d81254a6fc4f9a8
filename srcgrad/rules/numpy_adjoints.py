"""Adjoint rules for NumPy, one template per primitive, grouped by family.

Notation (Tangent's): the first parameter is the primal output, `d[z]` its
cotangent, and `d[x] = ...` the contribution to input `x`'s cotangent. The
identities are the standard ones (Giles, "An extended collection of matrix
derivative results for forward and reverse mode AD", 2008; autograd's
numpy_vjps.py for the NumPy broadcasting conventions). Every rule is
broadcast-safe: contributions are summed back to the input's shape with
`unbroadcast`/`unreduce`.
"""
import operator

import numpy as np

from .helpers import (balanced_eq, dot_adjoint, inverse_axes, matmul_adjoint_x, matmul_adjoint_y,
                      max_chooser, reduction_size, unbroadcast, unindex, unreduce)
# Complex inputs follow TF's convention (helpers_math.py): d[x] = d[z] * conj(f'(x)) for
# holomorphic f; conj is the identity on real values.
from ..runtime import densify
from .helpers_math import conj, real_part, sign
from .registry import register_adjoint

# ---------------------------------------------------------------- elementwise


@register_adjoint(np.add)
def add(z, x, y, out=None, dtype=None):
    d[x] = unbroadcast(d[z], x)
    d[y] = unbroadcast(d[z], y)


@register_adjoint(np.subtract)
def subtract(z, x, y, out=None, dtype=None):
    d[x] = unbroadcast(d[z], x)
    d[y] = unbroadcast(-d[z], y)


@register_adjoint(np.multiply)
def multiply(z, x, y, out=None, dtype=None):
    d[x] = unbroadcast(d[z] * conj(y), x)
    d[y] = unbroadcast(d[z] * conj(x), y)


@register_adjoint(np.true_divide)
def true_divide(z, x, y, out=None, dtype=None):
    d[x] = unbroadcast(d[z] / conj(y), x)
    d[y] = unbroadcast(-d[z] * conj(x / (y * y)), y)


@register_adjoint(np.power)
def power(z, x, y, out=None, dtype=None):
    """d/dx x**y = y x**(y-1); d/dy x**y = x**y log x."""
    d[x] = unbroadcast(d[z] * conj(y * x ** (y - 1)), x)
    d[y] = unbroadcast(d[z] * conj(z * np.log(x)), y)


@register_adjoint(np.remainder)
def remainder(z, x, y, out=None, dtype=None):
    """x % y = x - floor(x / y) * y, piecewise linear."""
    d[x] = unbroadcast(d[z], x)
    d[y] = unbroadcast(-d[z] * np.floor_divide(x, y), y)


@register_adjoint(np.negative)
def negative(z, x, out=None, dtype=None):
    d[x] = -d[z]


@register_adjoint(np.positive)
def positive(z, x, out=None, dtype=None):
    d[x] = d[z]


@register_adjoint(np.exp)
def exp(z, x, out=None, dtype=None):
    d[x] = d[z] * conj(z)


@register_adjoint(np.log)
def log(z, x, out=None, dtype=None):
    d[x] = d[z] / conj(x)


@register_adjoint(np.sqrt)
def sqrt(z, x, out=None, dtype=None):
    d[x] = d[z] / (2.0 * conj(z))


@register_adjoint(np.tanh)
def tanh(z, x, out=None, dtype=None):
    d[x] = d[z] * conj(1.0 - z * z)


@register_adjoint(np.sin)
def sin(z, x, out=None, dtype=None):
    d[x] = d[z] * np.cos(conj(x))


@register_adjoint(np.cos)
def cos(z, x, out=None, dtype=None):
    d[x] = -d[z] * np.sin(conj(x))


@register_adjoint(np.absolute)
def absolute(z, x, out=None, dtype=None):
    """d|x|/dx = sign(x) (0 at 0, as autograd and JAX); x / |x| for complex x
    (TF's _ComplexAbsGrad; the real part of a complex cotangent, as for every
    real-valued function of complex values: helpers_math.real_part)."""
    d[x] = real_part(d[z]) * sign(x)


@register_adjoint(np.maximum)
def maximum(z, x, y, out=None, dtype=None):
    """Ties split the cotangent evenly between x and y (autograd's rule)."""
    d[x] = unbroadcast(d[z] * balanced_eq(x, z, y), x)
    d[y] = unbroadcast(d[z] * balanced_eq(y, z, x), y)


@register_adjoint(np.minimum)
def minimum(z, x, y, out=None, dtype=None):
    d[x] = unbroadcast(d[z] * balanced_eq(x, z, y), x)
    d[y] = unbroadcast(d[z] * balanced_eq(y, z, x), y)


@register_adjoint(np.where)
def where(z, condition, x, y):
    d[x] = unbroadcast(np.where(condition, d[z], 0.0), x)
    d[y] = unbroadcast(np.where(condition, 0.0, d[z]), y)


# ----------------------------------------------------------------- reductions


@register_adjoint(np.sum)
def sum(y, x, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """d/dx sum(x) = 1 broadcast back to x's shape."""
    d[x] = unreduce(d[y], x, axis, keepdims)


@register_adjoint(np.mean)
def mean(y, x, axis=None, dtype=None, out=None, keepdims=False, where=None):
    d[x] = unreduce(d[y], x, axis, keepdims) / reduction_size(x, y)


@register_adjoint(np.max)
def max(y, x, axis=None, out=None, keepdims=False, initial=None, where=None):
    """The cotangent goes to the maximal entries; ties split it evenly (as
    autograd and JAX do)."""
    d[x] = unreduce(d[y], x, axis, keepdims) * max_chooser(x, y, axis, keepdims)


@register_adjoint(np.min)
def min(y, x, axis=None, out=None, keepdims=False, initial=None, where=None):
    d[x] = unreduce(d[y], x, axis, keepdims) * max_chooser(x, y, axis, keepdims)


# NumPy 2 keeps np.amax/np.amin as functions distinct from np.max/np.min.
register_adjoint(np.amax)(max)
register_adjoint(np.amin)(min)

# -------------------------------------------------------------- linear algebra


@register_adjoint(np.matmul)
def matmul(z, x, y, out=None, dtype=None):
    """Z = X Y: dX = dZ Y^T, dY = X^T dZ (Giles 2008, 2.2.2), with NumPy's
    1-d and batch conventions."""
    d[x] = matmul_adjoint_x(d[z], x, conj(y))
    d[y] = matmul_adjoint_y(d[z], conj(x), y)


@register_adjoint(np.dot)
def dot(z, x, y, out=None):
    """np.dot: matmul's rule for rank <= 2, tensordot contractions beyond."""
    d[x] = dot_adjoint(d[z], x, conj(y), True)
    d[y] = dot_adjoint(d[z], conj(x), y, False)


# ---------------------------------------------------------- shape and indexing


@register_adjoint(np.reshape)
def reshape(y, x, shape=None, order="C", newshape=None, copy=None):
    d[x] = np.reshape(d[y], np.shape(x))


@register_adjoint(np.transpose)
def transpose(y, x, axes=None):
    d[x] = np.transpose(d[y], inverse_axes(axes, x))


@register_adjoint(np.swapaxes)
def swapaxes(y, x, axis1, axis2):
    d[x] = np.swapaxes(d[y], axis1, axis2)


@register_adjoint(np.expand_dims)
def expand_dims(y, x, axis):
    d[x] = np.reshape(d[y], np.shape(x))


@register_adjoint(np.squeeze)
def squeeze(y, x, axis=None):
    d[x] = np.reshape(d[y], np.shape(x))


@register_adjoint(np.broadcast_to)
def broadcast_to(y, x, shape, subok=False):
    d[x] = unbroadcast(d[y], x)


@register_adjoint(operator.getitem)
def getitem(y, x, index):
    """y = x[index]: the cotangent is scattered back (np.add.at)."""
    d[x] = unindex(d[y], x, index)


@register_adjoint(unindex)
def unindex_(z, g, x, index):
    """unindex is linear in g; its adjoint gathers: d[g] = d[z][index]
    (an element of a container's cotangent may be None: zeros)."""
    d[g] = densify(d[z][index], g)
