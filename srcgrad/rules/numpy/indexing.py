"""Rules for NumPy's indexing and selecting functions: getitem (x[index]),
take, take_along_axis, sort, partition, delete, compress, extract, select,
choose, repeating (tile, repeat, resize), np.pad and np.insert,
sliding_window_view, the gather and scatter primitives they are built
on, and np.add.at / np.subtract.at (the pure add_at and subtract_at the
compiler and the tape rewrite them into).

The notation is rules/numpy/__init__.py's.

Every function here is linear in its array: it selects, repeats or moves
elements. Its cotangent is a scatter-add through an index map
(`index_scatter`, the map being the operation applied to the positions
0..n-1: rules/helpers/shapes.py `index_map`; repeated positions accumulate,
as autograd's np.add.at), and its tangent the operation applied to the
tangent. np.pad's statistic modes (maximum, minimum, mean, median,
linear_ramp) are linear for fixed ranks: rules/helpers/pad.py.
"""
import operator

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ...runtime import densify
from ..helpers.batched import densify_b, gather_b
from ..helpers.broadcast import add_at, scatter_at, subtract_at, unbroadcast, unindex, unindex_array
from ..helpers.pad import pad_constant_adjoint, pad_end_values_adjoint, pad_modes_adjoint
from ..helpers.complex import cast_like
from ..helpers.shapes import (choose_adjoint, choose_tangent, compress_index_map, extract_index_map, index_gather,
                              index_map, index_scatter, insert_adjoint, insert_tangent, permutation_index_map,
                              repeat_adjoint, select_adjoint, select_default_adjoint, tile_adjoint)
from ..python.containers import seq_cotangent
from ..registry import register_adjoint, register_batched_adjoint
from ..tangents import declare_linear, register_linear, register_tangent


# -------------------------------------------------------------------- getitem

@register_adjoint(operator.getitem)
def getitem(y, x, index):
    """y = x[index]: the cotangent is scattered back (np.add.at)."""
    d[x] = unindex(d[y], x, index)


@register_tangent(operator.getitem)
def getitem_tangent(y, x, index):
    t[y] = t[x][index]


@register_adjoint(unindex)
def unindex_(z, g, x, index):
    """unindex is linear in g; its adjoint gathers: d[g] = d[z][index]
    (an element of a container's cotangent may be None: zeros)."""
    d[g] = densify(d[z][index], g)


register_linear(unindex)


@register_batched_adjoint(unindex)
def unindex_batched(z, g, x, index):
    d[g] = densify_b(gather_b(d[z], index), g, _B)


@register_adjoint(unindex_array)
def unindex_array_(z, g, x, index):
    """unindex is linear in g; its adjoint gathers: d[g] = d[z][index]."""
    d[g] = d[z][index]


register_linear(unindex_array)


# ------------------------------------------------------- np.add.at, np.subtract.at

@register_adjoint(add_at)
def add_at_(z, a, indices, b):
    """z = a with b added at indices (np.add.at, repeated positions
    accumulating): z is a + S b, S the scatter-add, linear in a and b. So
    d[a] = d[z], and d[b] = S^T d[z], the gather d[z][indices] (each use of
    an element of b, repeated ones too, reads the cotangent of the position
    it went to) summed back over the axes b was broadcast along (autograd
    and JAX differentiate their scatter-adds the same way:
    autograd/numpy/numpy_vjps.py untake, jax's scatter_add transpose)."""
    d[a] = d[z]
    d[b] = unbroadcast(d[z][indices], b)


@register_tangent(add_at)
def add_at_tangent(z, a, indices, b):
    """Linear in (a, b): t[a] plus t[b] scattered to indices."""
    t[z] = t[a] + scatter_at(t[b], z, indices)


@register_adjoint(subtract_at)
def subtract_at_(z, a, indices, b):
    """z = a - S b (np.subtract.at): add_at's rule with b's cotangent negated."""
    d[a] = d[z]
    d[b] = -unbroadcast(d[z][indices], b)


@register_tangent(subtract_at)
def subtract_at_tangent(z, a, indices, b):
    """Linear in (a, b): t[a] minus t[b] scattered to indices."""
    t[z] = t[a] - scatter_at(t[b], z, indices)


@register_adjoint(scatter_at)
def scatter_at_(z, g, x, indices):
    """scatter_at is linear in g; its adjoint gathers d[z][indices] and sums
    it back over the axes g was broadcast along."""
    d[g] = unbroadcast(d[z][indices], g)


register_linear(scatter_at)


# ------------------------------------------------------------------ selecting

@register_adjoint(np.take)
def take(z, a, indices, axis=None, out=None, mode="raise"):
    """Repeated indices accumulate (scatter-add)."""
    d[a] = index_scatter(d[z], a, index_map(np.take, a, indices, axis=axis, mode=mode))


declare_linear(np.take)


@register_adjoint(np.take_along_axis)
def take_along_axis(z, arr, indices, axis=-1):
    """Scatter-add back through the selected positions."""
    d[arr] = index_scatter(d[z], arr, index_map(np.take_along_axis, arr, indices, axis=axis))


@register_adjoint(np.sort)
def sort(z, a, axis=-1, kind=None, order=None, stable=None):
    """The cotangent goes back through the sorting permutation (argsort)."""
    d[a] = index_scatter(d[z], a, permutation_index_map(a, z, axis))


@register_adjoint(np.partition)
def partition(z, a, kth, axis=-1, kind="introselect", order=None):
    """The cotangent goes back through the partitioning permutation."""
    d[a] = index_scatter(d[z], a, permutation_index_map(a, z, axis))


@register_adjoint(np.delete)
def delete(z, arr, obj, axis=None):
    """The kept elements get their cotangents back; deleted ones 0."""
    d[arr] = index_scatter(d[z], arr, index_map(np.delete, arr, obj, axis=axis))


@register_adjoint(np.compress)
def compress(z, condition, a, axis=None, out=None):
    """The kept elements get their cotangents back; dropped ones 0."""
    d[a] = index_scatter(d[z], a, compress_index_map(condition, a, axis))


@register_adjoint(np.extract)
def extract(z, condition, arr):
    """The extracted elements get their cotangents back; the others 0."""
    d[arr] = index_scatter(d[z], arr, extract_index_map(condition, arr))


@register_adjoint(np.select)
def select(z, condlist, choicelist, default=0):
    """Element p is choice i for the first true cond i, else default."""
    d[choicelist] = select_adjoint(d[z], condlist, choicelist)
    d[default] = select_default_adjoint(d[z], condlist, default)


@register_adjoint(np.choose)
def choose(z, a, choices, out=None, mode="raise"):
    """z[I] = choices[idx[I]][I], idx being `a` after `mode` (wrap: a mod n,
    clip: clamped to 0..n-1), all operands broadcast together (NumPy's
    definition, the np.choose docstring in numpy/_core/fromnumeric.py): a
    selection, so choice i's cotangent is d[z] where idx == i (as np.where's
    and np.select's), summed back over the axes it was broadcast along (JAX's
    jnp.choose, a gather, gives the same). `a` only selects: integers, no
    cotangent. A list of choices gets a list, an array of choices an array."""
    d[choices] = seq_cotangent(choose_adjoint(d[z], a, choices, mode), choices)


@register_tangent(np.choose)
def choose_tangent_(z, a, choices, out=None, mode="raise"):
    """np.choose is linear in its choices: the choice of their tangents."""
    t[z] = cast_like(choose_tangent(t[choices], a, choices, mode), z)


declare_linear(np.choose, (1,))
declare_linear(choose_tangent)


@register_adjoint(index_gather)
def index_gather_(z, x, idx):
    """index_gather is linear in x; its adjoint scatters back."""
    d[x] = index_scatter(d[z], x, idx)


@register_adjoint(index_scatter)
def index_scatter_(z, g, x, idx):
    """index_scatter is linear in g; its adjoint gathers."""
    d[g] = index_gather(d[z], idx)


# ------------------------------------------------------------------ repeating

@register_adjoint(np.tile)
def tile(z, A, reps):
    """Each copy of an element contributes: g regrouped by repetition and summed."""
    d[A] = tile_adjoint(d[z], A, reps)


register_linear(np.tile)


@register_adjoint(np.repeat)
def repeat(z, a, repeats, axis=None):
    """Each element gets the sum of its copies' cotangents."""
    d[a] = repeat_adjoint(d[z], a, repeats, axis)


register_linear(np.repeat)


@register_adjoint(np.resize)
def resize(z, a, new_shape):
    """a's elements repeated cyclically (or truncated) into new_shape."""
    d[a] = index_scatter(d[z], a, index_map(np.resize, a, new_shape))


# ------------------------------------------------------ padding and inserting

@register_adjoint(np.pad)
def pad(z, array, pad_width, mode="constant", stat_length=None, constant_values=0,
        end_values=0, reflect_type="even"):
    """Modes constant and empty (the border is not read from `array`), edge,
    reflect, symmetric and wrap (it is: index map), and maximum, minimum,
    mean, median and linear_ramp (statistics of the array, axis by axis:
    rules/helpers/pad.py pad_stat_adjoint). A scalar constant_values gets the
    border's total, a scalar end_values (linear_ramp) its ramps' weights."""
    d[array] = pad_modes_adjoint(d[z], array, pad_width, mode, reflect_type, stat_length, end_values)
    d[constant_values] = pad_constant_adjoint(d[z], array, pad_width, constant_values)
    d[end_values] = pad_end_values_adjoint(d[z], array, pad_width, mode, stat_length, end_values)


@register_adjoint(np.insert)
def insert(z, arr, obj, values, axis=None):
    """arr's elements are moved and values' copied (broadcast) into the
    output: each gets the cotangents of the positions it went to."""
    d[arr] = insert_adjoint(d[z], arr, obj, values, axis, True)
    d[values] = insert_adjoint(d[z], arr, obj, values, axis, False)


@register_tangent(np.insert)
def insert_tangent_(z, arr, obj, values, axis=None):
    """np.insert is linear in arr and values jointly."""
    t[z] = insert_tangent(t[arr], t[values], arr, obj, values, axis)


declare_linear(insert_tangent, (0, 1))


@register_adjoint(sliding_window_view)
def sliding_window_view_(z, x, window_shape, axis=None, *, subok=False, writeable=False):
    """Every entry of a window is an entry of x (NumPy's sliding_window_view,
    a strided view: numpy/lib/_stride_tricks_impl.py), and windows overlap:
    the cotangents of all the windows' entries are added back at the
    positions they were read from (index_scatter through the index map:
    np.add.at over the window offsets). The view's read-only flag does not
    matter for the derivative."""
    d[x] = index_scatter(d[z], x, index_map(sliding_window_view, x, window_shape, axis=axis))


@register_tangent(sliding_window_view)
def sliding_window_view_tangent(z, x, window_shape, axis=None, *, subok=False, writeable=False):
    """The windows of the tangent (a gather through the same index map)."""
    t[z] = index_gather(t[x], index_map(sliding_window_view, x, window_shape, axis=axis))

