"""Tangent (JVP) rules for NumPy, one template per primitive, grouped by family.

Notation (see rules/tangents.py): the first parameter is the primal output,
`t[x]` an input's tangent, `t[z] = ...` the output's. Terms of inputs with
no tangent are dropped at compile time (symbolic zeros), so one template
serves every set of active inputs. Each rule is the directional derivative
of its primitive (Griewank & Walther, Evaluating Derivatives, 2nd ed., 2008,
ch. 3) and agrees with the adjoint rule in numpy_adjoints.py: <u, J v> =
<J^T u, v> (tests/test_forward.py checks both against finite differences),
including the tie conventions (max/min and maximum/minimum split evenly).

A result that may be smaller than the output (a sum whose only active term
was broadcast) goes through `broadcast_like(tangent, z)`.

Primitives with an adjoint rule but no rule here are still differentiated in
forward mode, by transposing their VJP (srcgrad/forward.py, `transpose_jvp`):
correct, one small reverse pass per operation, hence slower.
"""
import builtins
import operator

import numpy as np

from . import containers, helpers
from .helpers import balanced_eq, max_chooser, unindex
from .helpers_math import conj, real_part, sign as complex_sign
from .tangents import register_linear, register_tangent


def broadcast_like(tangent, z):
    """`tangent` broadcast to the shape of `z` (a view when it differs;
    linear in `tangent`)."""
    shape = np.shape(z)
    if np.shape(tangent) == shape:
        return tangent
    return np.broadcast_to(tangent, shape)


def as_column(v, b):
    """`v` as a column (trailing axis of length 1) when the right-hand side
    `b` of np.linalg.solve is a vector, else `v` (linear in `v`)."""
    return np.expand_dims(v, -1) if np.ndim(b) == 1 else v


def from_column(r, b):
    """Undo `as_column` (linear in `r`)."""
    return r[..., 0] if np.ndim(b) == 1 else r


def power_exponent_tangent(ty, z, x):
    """The exponent's term of d(x ** y): dy x**y log(x), zero where dy is
    zero. A direction that keeps y fixed needs no y-derivative, which x ** y
    lacks for a base x <= 0 (log(x) is nan or -inf there); an integer
    exponent computed in a loop (`x[i] ** (i + 1)`) may carry a zero tangent
    in generated code. The base is replaced by 1 where dy is zero (the
    double-where trick), so that derivatives of this term are finite too.
    Linear in `ty`."""
    safe = np.where(ty == 0, 1.0, x)
    return ty * z * np.log(safe)


register_linear(broadcast_like)
register_linear(power_exponent_tangent)
register_linear(real_part)
register_linear(conj)
register_linear(as_column)
register_linear(from_column)

# ---------------------------------------------------------------- elementwise


@register_tangent(np.add)
def add(z, x, y, out=None, dtype=None):
    t[z] = broadcast_like(t[x] + t[y], z)


@register_tangent(np.subtract)
def subtract(z, x, y, out=None, dtype=None):
    t[z] = broadcast_like(t[x] - t[y], z)


@register_tangent(np.multiply)
def multiply(z, x, y, out=None, dtype=None):
    t[z] = t[x] * y + x * t[y]


@register_tangent(np.true_divide)
def true_divide(z, x, y, out=None, dtype=None):
    """d(x / y) = dx / y - (x / y) dy / y."""
    t[z] = t[x] / y - z * t[y] / y


@register_tangent(np.power)
def power(z, x, y, out=None, dtype=None):
    """d(x ** y) = y x**(y-1) dx + x**y log(x) dy (the second term only
    where dy is nonzero: power_exponent_tangent)."""
    t[z] = t[x] * y * x ** (y - 1) + power_exponent_tangent(t[y], z, x)


@register_tangent(np.remainder)
def remainder(z, x, y, out=None, dtype=None):
    """x % y = x - floor(x / y) y, piecewise linear."""
    t[z] = broadcast_like(t[x] - t[y] * np.floor_divide(x, y), z)


@register_tangent(np.negative)
def negative(z, x, out=None, dtype=None):
    t[z] = -t[x]


@register_tangent(np.positive)
def positive(z, x, out=None, dtype=None):
    t[z] = t[x]


@register_tangent(np.exp)
def exp(z, x, out=None, dtype=None):
    t[z] = t[x] * z


@register_tangent(np.log)
def log(z, x, out=None, dtype=None):
    t[z] = t[x] / x


@register_tangent(np.sqrt)
def sqrt(z, x, out=None, dtype=None):
    t[z] = t[x] / (2.0 * z)


@register_tangent(np.tanh)
def tanh(z, x, out=None, dtype=None):
    t[z] = t[x] * (1.0 - z * z)


@register_tangent(np.sin)
def sin(z, x, out=None, dtype=None):
    t[z] = t[x] * np.cos(x)


@register_tangent(np.cos)
def cos(z, x, out=None, dtype=None):
    t[z] = -t[x] * np.sin(x)


@register_tangent(np.absolute)
def absolute(z, x, out=None, dtype=None):
    """d|x| = sign(x) dx (0 at 0, as the adjoint rule); for complex x,
    d|x| = Re(conj(x / |x|) dx)."""
    t[z] = real_part(t[x] * conj(complex_sign(x)))


@register_tangent(np.exp2)
def exp2(z, x, out=None, dtype=None):
    t[z] = t[x] * z * np.log(2.0)


@register_tangent(np.expm1)
def expm1(z, x, out=None, dtype=None):
    t[z] = t[x] * (z + 1.0)


@register_tangent(np.log2)
def log2(z, x, out=None, dtype=None):
    t[z] = t[x] / (x * np.log(2.0))


@register_tangent(np.log10)
def log10(z, x, out=None, dtype=None):
    t[z] = t[x] / (x * np.log(10.0))


@register_tangent(np.log1p)
def log1p(z, x, out=None, dtype=None):
    t[z] = t[x] / (1.0 + x)


@register_tangent(np.square)
def square(z, x, out=None, dtype=None):
    t[z] = t[x] * 2.0 * x


@register_tangent(np.cbrt)
def cbrt(z, x, out=None, dtype=None):
    t[z] = t[x] / (3.0 * z * z)


@register_tangent(np.reciprocal)
def reciprocal(z, x, out=None, dtype=None):
    t[z] = -t[x] * z * z


@register_tangent(np.tan)
def tan(z, x, out=None, dtype=None):
    t[z] = t[x] * (1.0 + z * z)


@register_tangent(np.arcsin)
def arcsin(z, x, out=None, dtype=None):
    t[z] = t[x] / np.sqrt(1.0 - x * x)


@register_tangent(np.arccos)
def arccos(z, x, out=None, dtype=None):
    t[z] = -t[x] / np.sqrt(1.0 - x * x)


@register_tangent(np.arctan)
def arctan(z, x, out=None, dtype=None):
    t[z] = t[x] / (1.0 + x * x)


@register_tangent(np.arctan2)
def arctan2(z, y, x, out=None, dtype=None):
    """d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)."""
    t[z] = (x * t[y] - y * t[x]) / (x * x + y * y)


@register_tangent(np.hypot)
def hypot(z, x, y, out=None, dtype=None):
    t[z] = (x * t[x] + y * t[y]) / z


@register_tangent(np.sinh)
def sinh(z, x, out=None, dtype=None):
    t[z] = t[x] * np.cosh(x)


@register_tangent(np.cosh)
def cosh(z, x, out=None, dtype=None):
    t[z] = t[x] * np.sinh(x)


@register_tangent(np.arcsinh)
def arcsinh(z, x, out=None, dtype=None):
    t[z] = t[x] / np.sqrt(x * x + 1.0)


@register_tangent(np.arccosh)
def arccosh(z, x, out=None, dtype=None):
    t[z] = t[x] / np.sqrt(x * x - 1.0)


@register_tangent(np.arctanh)
def arctanh(z, x, out=None, dtype=None):
    t[z] = t[x] / (1.0 - x * x)


@register_tangent(np.logaddexp)
def logaddexp(z, x, y, out=None, dtype=None):
    """z = log(e^x + e^y): dz = e^(x - z) dx + e^(y - z) dy."""
    t[z] = t[x] * np.exp(x - z) + t[y] * np.exp(y - z)


@register_tangent(np.maximum)
def maximum(z, x, y, out=None, dtype=None):
    """Ties take the mean of both tangents (the adjoint's half-and-half)."""
    t[z] = t[x] * balanced_eq(x, z, y) + t[y] * balanced_eq(y, z, x)


@register_tangent(np.minimum)
def minimum(z, x, y, out=None, dtype=None):
    t[z] = t[x] * balanced_eq(x, z, y) + t[y] * balanced_eq(y, z, x)


@register_tangent(np.where)
def where(z, condition, x, y):
    t[z] = broadcast_like(np.where(condition, t[x], t[y]), z)


@register_tangent(np.real)
def real(z, val):
    t[z] = np.real(t[val])


@register_tangent(np.imag)
def imag(z, val):
    t[z] = np.imag(t[val])


@register_tangent(np.conjugate)
def conjugate(z, x, out=None, dtype=None):
    t[z] = np.conjugate(t[x])


# ----------------------------------------------------------------- reductions


@register_tangent(np.sum)
def sum(y, x, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    t[y] = np.sum(t[x], axis=axis, keepdims=keepdims)


@register_tangent(np.mean)
def mean(y, x, axis=None, dtype=None, out=None, keepdims=False, where=None):
    t[y] = np.mean(t[x], axis=axis, keepdims=keepdims)


@register_tangent(np.max)
def max(y, x, axis=None, out=None, keepdims=False, initial=None, where=None):
    """The mean of the tangents at the maximal entries (ties split evenly)."""
    t[y] = np.sum(t[x] * max_chooser(x, y, axis, keepdims), axis=axis, keepdims=keepdims)


@register_tangent(np.min)
def min(y, x, axis=None, out=None, keepdims=False, initial=None, where=None):
    t[y] = np.sum(t[x] * max_chooser(x, y, axis, keepdims), axis=axis, keepdims=keepdims)


register_tangent(np.amax)(max)
register_tangent(np.amin)(min)


@register_tangent(np.cumsum)
def cumsum(y, a, axis=None, dtype=None, out=None):
    t[y] = np.cumsum(t[a], axis=axis)

# -------------------------------------------------------------- linear algebra


@register_tangent(np.matmul)
def matmul(z, x, y, out=None, dtype=None):
    """d(X Y) = dX Y + X dY."""
    t[z] = t[x] @ y + x @ t[y]


@register_tangent(np.dot)
def dot(z, x, y, out=None):
    t[z] = np.dot(t[x], y) + np.dot(x, t[y])


@register_tangent(np.tensordot)
def tensordot(z, a, b, axes=2):
    t[z] = np.tensordot(t[a], b, axes) + np.tensordot(a, t[b], axes)


@register_tangent(np.outer)
def outer(z, a, b, out=None):
    t[z] = np.outer(t[a], b) + np.outer(a, t[b])


@register_tangent(np.inner)
def inner(z, a, b):
    t[z] = np.inner(t[a], b) + np.inner(a, t[b])


@register_tangent(np.kron)
def kron(z, a, b):
    t[z] = np.kron(t[a], b) + np.kron(a, t[b])


@register_tangent(np.trace)
def trace(z, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    t[z] = np.trace(t[a], offset=offset, axis1=axis1, axis2=axis2)


@register_tangent(np.diagonal)
def diagonal(z, a, offset=0, axis1=0, axis2=1):
    t[z] = np.diagonal(t[a], offset=offset, axis1=axis1, axis2=axis2)


@register_tangent(np.linalg.inv)
def inv(z, a):
    """d(A^-1) = -A^-1 dA A^-1 (Giles 2008, 2.2.3)."""
    t[z] = -(z @ t[a] @ z)


@register_tangent(np.linalg.solve)
def solve(z, a, b):
    """z = A^-1 b: dz = A^-1 (db - dA z) (a 1-d b is a column)."""
    t[z] = from_column(np.linalg.solve(a, as_column(t[b], b) - t[a] @ as_column(z, b)), b)


@register_tangent(np.linalg.det)
def det(z, a):
    """d det A = det A tr(A^-1 dA) (Jacobi's formula)."""
    t[z] = z * np.trace(np.linalg.solve(a, t[a]), axis1=-2, axis2=-1)


# ---------------------------------------------------------- shape and indexing


@register_tangent(np.reshape)
def reshape(y, x, shape=None, order="C", newshape=None, copy=None):
    t[y] = np.reshape(t[x], np.shape(y), order=order)


@register_tangent(np.transpose)
def transpose(y, x, axes=None):
    t[y] = np.transpose(t[x], axes)


@register_tangent(np.swapaxes)
def swapaxes(y, x, axis1, axis2):
    t[y] = np.swapaxes(t[x], axis1, axis2)


@register_tangent(np.moveaxis)
def moveaxis(y, a, source, destination):
    t[y] = np.moveaxis(t[a], source, destination)


@register_tangent(np.expand_dims)
def expand_dims(y, x, axis):
    t[y] = np.reshape(t[x], np.shape(y))


@register_tangent(np.squeeze)
def squeeze(y, x, axis=None):
    t[y] = np.reshape(t[x], np.shape(y))


@register_tangent(np.broadcast_to)
def broadcast_to(y, x, shape, subok=False):
    t[y] = broadcast_like(t[x], y)


@register_tangent(np.ravel)
def ravel(z, a, order="C"):
    t[z] = np.ravel(t[a], order=order)


@register_tangent(np.flip)
def flip(z, m, axis=None):
    t[z] = np.flip(t[m], axis=axis)


@register_tangent(np.roll)
def roll(z, a, shift, axis=None):
    t[z] = np.roll(t[a], shift, axis=axis)


@register_tangent(np.tril)
def tril(z, m, k=0):
    t[z] = np.tril(t[m], k=k)


@register_tangent(np.triu)
def triu(z, m, k=0):
    t[z] = np.triu(t[m], k=k)


@register_tangent(np.tile)
def tile(z, A, reps):
    t[z] = np.tile(t[A], reps)


@register_tangent(np.repeat)
def repeat(z, a, repeats, axis=None):
    t[z] = np.repeat(t[a], repeats, axis=axis)


@register_tangent(np.concatenate)
def concatenate(z, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """A list parameter: t[arrays] is the list of the arrays' tangents."""
    t[z] = np.concatenate(t[arrays], axis=axis)


@register_tangent(np.stack)
def stack(z, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    t[z] = np.stack(t[arrays], axis=axis)


@register_tangent(operator.getitem)
def getitem(y, x, index):
    t[y] = t[x][index]


@register_tangent(unindex)
def unindex_(z, g, x, index):
    """unindex is linear in g (and only reads x's shape)."""
    t[z] = unindex(t[g], x, index)


@register_tangent(helpers.unindex_array)
def unindex_array_(z, g, x, index):
    t[z] = helpers.unindex_array(t[g], x, index)


register_linear(helpers.unindex_array)

# ------------------------------------------ containers (rules/containers.py)
# All linear: the tangent of a list is the list of its elements' tangents.


@register_tangent(containers.setitem)
def setitem(z, x, index, v):
    t[z] = containers.setitem(t[x], index, t[v])


register_tangent(containers.array_setitem)(setitem)


@register_tangent(containers.list_append)
def list_append(z, xs, v):
    t[z] = containers.list_append(t[xs], t[v])


@register_tangent(containers.list_extend)
def list_extend(z, xs, ys):
    t[z] = containers.list_extend(t[xs], t[ys])


@register_tangent(containers.as_list)
def as_list(z, x):
    t[z] = containers.as_list(t[x])


@register_tangent(containers.as_tuple)
def as_tuple(z, x):
    t[z] = containers.as_tuple(t[x])


@register_tangent(containers.as_dict)
def as_dict(z, x):
    t[z] = containers.as_dict(t[x])


@register_tangent(builtins.sum)
def builtin_sum(z, iterable, start=0):
    t[z] = containers.sum_(t[iterable], t[start])
