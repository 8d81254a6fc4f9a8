"""Rules for NumPy's constructors with a differentiated value: np.full and
np.full_like (in the fill value), np.linspace (in its end points), np.copy,
np.array of a (nested) list of arrays, and the conversions np.asarray,
np.asanyarray, np.ascontiguousarray and np.asfortranarray.

The notation is rules/numpy/__init__.py's.

Each is linear in what it is differentiated in: full broadcasts the fill
value (its adjoint sums back: unbroadcast), linspace is
(1 - t_i) start + t_i stop (rules/helpers/constructors.py), np.array stacks
its elements (the cotangent of element i is d[z][i]). The other
constructors (zeros, ones, eye...) are non-differentiable
(rules/nondiff.py). np.arange is linear in start and step, np.bincount in
its weights.
"""
import numpy as np

from ..helpers.broadcast import broadcast_like, unbroadcast
from ..helpers.complex import cast_like
from ..helpers.constructors import arange_adjoint, arange_tangent, linspace_adjoint, linspace_tangent
from ..helpers.batched import restacked_b
from ..helpers.shapes import array_adjoint, array_tangent, restacked
from ..registry import register_adjoint, register_batched_adjoint
from ..tangents import declare_linear, register_linear, register_tangent


# -------------------------------------------------------------- filled arrays

@register_adjoint(np.full)
def full(z, shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    """z = fill_value broadcast to `shape`: d fill_value is the cotangent
    summed back to fill_value's shape (the shape is not differentiated)."""
    d[fill_value] = unbroadcast(d[z], fill_value)


@register_tangent(np.full)
def full_tangent(z, shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    t[z] = broadcast_like(t[fill_value], z)


@register_adjoint(np.full_like)
def full_like(z, a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """z = fill_value broadcast to a's shape (a's values are not read): d
    fill_value is the cotangent summed back to fill_value's shape."""
    d[fill_value] = unbroadcast(d[z], fill_value)


@register_tangent(np.full_like)
def full_like_tangent(z, a, fill_value, dtype=None, order="K", subok=True, shape=None, *,
                      device=None):
    t[z] = broadcast_like(t[fill_value], z)


# --------------------------------------------------------------------- ranges

@register_adjoint(np.linspace)
def linspace(z, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """z_i = (1 - t_i) start + t_i stop, t_i = i / (num - 1) (i / num without
    the endpoint), along `axis`: d start = sum_i (1 - t_i) g_i,
    d stop = sum_i t_i g_i. retstep=True is refused."""
    d[start] = linspace_adjoint(d[z], start, stop, num, endpoint, retstep, axis, False)
    d[stop] = linspace_adjoint(d[z], start, stop, num, endpoint, retstep, axis, True)


@register_tangent(np.linspace)
def linspace_tangent_(z, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
                      device=None):
    """linspace is linear in (start, stop)."""
    t[z] = linspace_tangent(t[start], t[stop], num, endpoint, retstep, axis)


declare_linear(linspace_tangent, (0, 1))


@register_adjoint(np.arange)
def arange(z, start, stop=None, step=None, dtype=None, *, device=None, like=None):
    """z_i = start + i step (i < ceil((stop - start) / step)): d start =
    sum_i g_i, d step = sum_i i g_i; stop sets the count only (0), and so
    does the single argument of np.arange(stop)."""
    d[start] = arange_adjoint(d[z], start, stop, step, False)
    d[step] = arange_adjoint(d[z], start, stop, step, True)


@register_tangent(np.arange)
def arange_tangent_(z, start, stop=None, step=None, dtype=None, *, device=None, like=None):
    """t[z] = t[start] + i t[step] (zero for np.arange(stop))."""
    t[z] = arange_tangent(z, start, stop, step, t[start], t[step])


@register_adjoint(np.bincount)
def bincount(z, x, weights=None, minlength=0):
    """z_k = sum of weights_i over x_i == k, linear in the weights: d
    weights_i = g[x_i] (x holds integers: not differentiated)."""
    d[weights] = cast_like(d[z][x], weights)


@register_tangent(np.bincount)
def bincount_tangent(z, x, weights=None, minlength=0):
    """The segment sum of the weights' tangent, of z's length."""
    t[z] = np.bincount(x, weights=t[weights], minlength=np.shape(z)[0])


# --------------------------------------------------------------------- copies

@register_adjoint(np.copy)
def copy_(z, a, order="K", subok=False):
    """A copy: the cotangent passes through."""
    d[a] = d[z]


register_linear(np.copy, static=())


@register_adjoint(np.array)
def array(z, object, dtype=None, copy=True, order="K", subok=False, ndmin=0, ndmax=0, like=None):
    """np.array([a, b, ...]) stacks its elements (nested lists: along several
    new axes): element i's cotangent is d[z][i]."""
    d[object] = array_adjoint(d[z], object)


@register_adjoint(array_adjoint)
def array_adjoint_(z, g, obj):
    """array_adjoint (np.array's adjoint, met again at second order) is
    linear in g, entry i of its result being g[i]: the entries'
    cotangents are stacked back (obj gives only the structure: none)."""
    d[g] = restacked(d[z], obj, g)


register_linear(array_adjoint, static=("obj",))


@register_batched_adjoint(array_adjoint)
def array_adjoint_batched(z, g, obj):
    d[g] = restacked_b(d[z], obj, g, _B)


@register_adjoint(np.asarray)
def asarray(z, a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """np.asarray(a): a itself, or its (nested) list stacked as np.array
    does: entry i's cotangent is d[z][i] (a defensive `x = np.asarray(x)`
    passes the cotangent through)."""
    d[a] = array_adjoint(d[z], a)


@register_adjoint(np.asanyarray)
def asanyarray(z, a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """As np.asarray."""
    d[a] = array_adjoint(d[z], a)


@register_adjoint(np.ascontiguousarray)
def ascontiguousarray(z, a, dtype=None, *, like=None):
    """As np.asarray (only the memory layout changes)."""
    d[a] = array_adjoint(d[z], a)


@register_adjoint(np.asfortranarray)
def asfortranarray(z, a, dtype=None, *, like=None):
    """As np.asarray (only the memory layout changes)."""
    d[a] = array_adjoint(d[z], a)


# The conversions are linear: their tangent is the tangents stacked (or passed
# through) as the values are, cast to the output's dtype. (Forward mode could
# transpose the adjoints above; a tangent rule is direct, and a
# ForwardAccumulator records no conversion: their tangent rows are compiled
# only, tests/rules/tangent_rows.py.)

@register_tangent(np.asarray)
def asarray_tangent(z, a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """np.asarray is linear in a: the tangents of its entries, stacked."""
    t[z] = cast_like(array_tangent(t[a], a), z)


@register_tangent(np.asanyarray)
def asanyarray_tangent(z, a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """As np.asarray's."""
    t[z] = cast_like(array_tangent(t[a], a), z)


@register_tangent(np.ascontiguousarray)
def ascontiguousarray_tangent(z, a, dtype=None, *, like=None):
    """As np.asarray's."""
    t[z] = cast_like(array_tangent(t[a], a), z)


@register_tangent(np.asfortranarray)
def asfortranarray_tangent(z, a, dtype=None, *, like=None):
    """As np.asarray's."""
    t[z] = cast_like(array_tangent(t[a], a), z)


@register_tangent(np.array)
def array_tangent_(z, object, dtype=None, copy=True, order="K", subok=False, ndmin=0, ndmax=0, like=None):
    """As np.asarray's (`ndmin`'s leading axes by the reshape to z's shape)."""
    t[z] = cast_like(np.reshape(array_tangent(t[object], object), np.shape(z)), z)


declare_linear(array_tangent)

