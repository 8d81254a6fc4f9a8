"""Adjoint rules for NumPy: shapes (see numpy_adjoints.py for the notation).

Rearranging (ravel, moveaxis, rollaxis, flip, fliplr, flipud, rot90, roll),
joining (concatenate, stack, hstack, vstack, dstack, column_stack, append,
np.array of a list), splitting (split, array_split, hsplit, vsplit, dsplit,
unstack), broadcast_arrays, repeating (tile, repeat, resize, pad),
selecting (take, take_along_axis, sort, partition, delete, compress,
extract, tril, triu, select), promoting (atleast_1d/2d/3d), np.diff and
np.gradient. The cotangent of an operation that only moves elements is the
inverse move; of one that selects or repeats elements, a scatter-add
through an index map (`index_scatter`, the map being the operation applied
to the positions 0..n-1, helpers_linalg.index_map).

A parameter holding a sequence of arrays (concatenate's `arrays`,
atleast_1d's `*arys`, select's `choicelist`) gets a list cotangent (an
array, its rows being the operands, when an array was passed:
containers.seq_cotangent); the
split family reads its outputs' cotangents as the list `d[z]` (zeros for
unused pieces).
"""
import numpy as np

from .helpers_linalg import (append_adjoint, array_adjoint, atleast_adjoint, broadcast_arrays_adjoint,
                             compress_index_map, concatenate_adjoint, diff_adjoint, gradient_adjoint,
                             extract_index_map, hsplit_axis, index_gather, index_map, index_scatter,
                             negate_shift, pad_constant_adjoint, permutation_index_map,
                             promoted_concatenate_adjoint, repeat_adjoint, rollaxis_inverse,
                             select_adjoint, select_default_adjoint, split_adjoint, stack_adjoint,
                             tile_adjoint, unravel)
from .containers import seq_cotangent
from .helpers_more import pad_end_values_adjoint, pad_modes_adjoint
from .registry import register_adjoint

# ------------------------------------------------------------- rearranging


@register_adjoint(np.ravel)
def ravel(z, a, order="C"):
    """Flattening: the cotangent is reshaped back, read in ravel's order (C or F)."""
    d[a] = unravel(d[z], a, order)


@register_adjoint(np.moveaxis)
def moveaxis(z, a, source, destination):
    """The cotangent has its axes moved back (destination to source)."""
    d[a] = np.moveaxis(d[z], destination, source)


@register_adjoint(np.rollaxis)
def rollaxis(z, a, axis, start=0):
    """The cotangent is transposed by the inverse permutation."""
    d[a] = np.transpose(d[z], rollaxis_inverse(a, axis, start))


@register_adjoint(np.flip)
def flip(z, m, axis=None):
    """A reversal is its own adjoint."""
    d[m] = np.flip(d[z], axis)


@register_adjoint(np.fliplr)
def fliplr(z, m):
    """A reversal is its own adjoint."""
    d[m] = np.fliplr(d[z])


@register_adjoint(np.flipud)
def flipud(z, m):
    """A reversal is its own adjoint."""
    d[m] = np.flipud(d[z])


@register_adjoint(np.rot90)
def rot90(z, m, k=1, axes=(0, 1)):
    """The cotangent is rotated back (k -> -k in the same plane)."""
    d[m] = np.rot90(d[z], -k, axes)


@register_adjoint(np.roll)
def roll(z, a, shift, axis=None):
    """The cotangent is rolled back by -shift."""
    d[a] = np.roll(d[z], negate_shift(shift), axis)


@register_adjoint(np.tril)
def tril(z, m, k=0):
    """A mask: the cotangent keeps the same triangle."""
    d[m] = np.tril(d[z], k)


@register_adjoint(np.triu)
def triu(z, m, k=0):
    """A mask: the cotangent keeps the same triangle."""
    d[m] = np.triu(d[z], k)


# ----------------------------------------------------------------- joining


@register_adjoint(np.concatenate)
def concatenate(z, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """Each operand's cotangent is its piece of d[z] (np.concat is the same
    function)."""
    d[arrays] = seq_cotangent(concatenate_adjoint(d[z], arrays, axis), arrays)


@register_adjoint(np.stack)
def stack(z, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """Operand i's cotangent is d[z]'s slice i along the new axis."""
    d[arrays] = seq_cotangent(stack_adjoint(d[z], arrays, axis), arrays)


@register_adjoint(np.hstack)
def hstack(z, tup, dtype=None, casting="same_kind"):
    """concatenate of the operands made at least 1-d (axis 1, or 0 for 1-d ones): pieces
    reshaped back."""
    d[tup] = seq_cotangent(promoted_concatenate_adjoint(d[z], tup, "1d", None), tup)


@register_adjoint(np.vstack)
def vstack(z, tup, dtype=None, casting="same_kind"):
    """concatenate along axis 0 of the operands made at least 2-d: pieces reshaped back."""
    d[tup] = seq_cotangent(promoted_concatenate_adjoint(d[z], tup, "2d", 0), tup)


@register_adjoint(np.dstack)
def dstack(z, tup):
    """concatenate along axis 2 of the operands made at least 3-d: pieces reshaped back."""
    d[tup] = seq_cotangent(promoted_concatenate_adjoint(d[z], tup, "3d", 2), tup)


@register_adjoint(np.column_stack)
def column_stack(z, tup):
    """1-d operands become columns, then concatenate along axis 1: pieces reshaped back."""
    d[tup] = seq_cotangent(promoted_concatenate_adjoint(d[z], tup, "column", 1), tup)


@register_adjoint(np.append)
def append(z, arr, values, axis=None):
    """concatenate((arr, values), axis), both flattened when axis is None."""
    d[arr] = append_adjoint(d[z], arr, values, axis, True)
    d[values] = append_adjoint(d[z], arr, values, axis, False)


@register_adjoint(np.array)
def array(z, object, dtype=None, copy=True, order="K", subok=False, ndmin=0, ndmax=0, like=None):
    """np.array([a, b, ...]) stacks its elements (nested lists: along several
    new axes): element i's cotangent is d[z][i]."""
    d[object] = array_adjoint(d[z], object)


# --------------------------------------------------------------- splitting


@register_adjoint(np.split)
def split(z, ary, indices_or_sections, axis=0):
    """The pieces' cotangents (zeros for unused pieces), concatenated."""
    d[ary] = split_adjoint(d[z][:], axis)


@register_adjoint(np.array_split)
def array_split(z, ary, indices_or_sections, axis=0):
    """The pieces' cotangents (zeros for unused pieces), concatenated."""
    d[ary] = split_adjoint(d[z][:], axis)


@register_adjoint(np.hsplit)
def hsplit(z, ary, indices_or_sections):
    """The pieces' cotangents, concatenated along axis 1 (0 for 1-d)."""
    d[ary] = split_adjoint(d[z][:], hsplit_axis(ary))


@register_adjoint(np.vsplit)
def vsplit(z, ary, indices_or_sections):
    """The pieces' cotangents, concatenated along axis 0."""
    d[ary] = split_adjoint(d[z][:], 0)


@register_adjoint(np.dsplit)
def dsplit(z, ary, indices_or_sections):
    """The pieces' cotangents, concatenated along axis 2."""
    d[ary] = split_adjoint(d[z][:], 2)


@register_adjoint(np.unstack)
def unstack(z, x, axis=0):
    """The slices' cotangents, stacked along `axis`."""
    d[x] = np.stack(d[z][:], axis)


@register_adjoint(np.broadcast_arrays)
def broadcast_arrays(z, *args, subok=False):
    """Each output is its input broadcast: its cotangent is summed back."""
    d[args] = broadcast_arrays_adjoint(d[z][:], args)


# --------------------------------------------------------------- repeating


@register_adjoint(np.tile)
def tile(z, A, reps):
    """Each copy of an element contributes: g regrouped by repetition and summed."""
    d[A] = tile_adjoint(d[z], A, reps)


@register_adjoint(np.repeat)
def repeat(z, a, repeats, axis=None):
    """Each element gets the sum of its copies' cotangents."""
    d[a] = repeat_adjoint(d[z], a, repeats, axis)


@register_adjoint(np.resize)
def resize(z, a, new_shape):
    """a's elements repeated cyclically (or truncated) into new_shape."""
    d[a] = index_scatter(d[z], a, index_map(np.resize, a, new_shape))


@register_adjoint(np.pad)
def pad(z, array, pad_width, mode="constant", stat_length=None, constant_values=0,
        end_values=0, reflect_type="even"):
    """Modes constant and empty (the border is not read from `array`), edge,
    reflect, symmetric and wrap (it is: index map), and maximum, minimum,
    mean, median and linear_ramp (statistics of the array, axis by axis:
    helpers_more.pad_stat_adjoint). A scalar constant_values gets the
    border's total, a scalar end_values (linear_ramp) its ramps' weights."""
    d[array] = pad_modes_adjoint(d[z], array, pad_width, mode, reflect_type, stat_length, end_values)
    d[constant_values] = pad_constant_adjoint(d[z], array, pad_width, constant_values)
    d[end_values] = pad_end_values_adjoint(d[z], array, pad_width, mode, stat_length, end_values)


# --------------------------------------------------------------- selecting


@register_adjoint(np.take)
def take(z, a, indices, axis=None, out=None, mode="raise"):
    """Repeated indices accumulate (scatter-add)."""
    d[a] = index_scatter(d[z], a, index_map(np.take, a, indices, axis=axis, mode=mode))


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


@register_adjoint(index_gather)
def index_gather_(z, x, idx):
    """index_gather is linear in x; its adjoint scatters back."""
    d[x] = index_scatter(d[z], x, idx)


@register_adjoint(index_scatter)
def index_scatter_(z, g, x, idx):
    """index_scatter is linear in g; its adjoint gathers."""
    d[g] = index_gather(d[z], idx)


# --------------------------------------------------------------- promoting


@register_adjoint(np.atleast_1d)
def atleast_1d(z, *arys):
    """Only axes of length 1 are added: each cotangent is reshaped back."""
    d[arys] = atleast_adjoint(d[z][:], arys)


@register_adjoint(np.atleast_2d)
def atleast_2d(z, *arys):
    """Only axes of length 1 are added: each cotangent is reshaped back."""
    d[arys] = atleast_adjoint(d[z][:], arys)


@register_adjoint(np.atleast_3d)
def atleast_3d(z, *arys):
    """Only axes of length 1 are added: each cotangent is reshaped back."""
    d[arys] = atleast_adjoint(d[z][:], arys)


# ------------------------------------------------------------- differences


@register_adjoint(np.diff)
def diff(z, a, n=1, axis=-1, prepend=None, append=None):
    """n-th differences along axis: the adjoint of the first difference,
    applied n times (prepend/append are not differentiated)."""
    d[a] = diff_adjoint(d[z], a, n, axis, prepend, append)


@register_adjoint(np.gradient)
def gradient(z, f, *varargs, axis=None, edge_order=1):
    """Finite differences, linear in f: each axis's stencil transposed
    (spacings and coordinates are not differentiated)."""
    d[f] = gradient_adjoint(d[z][:], f, varargs, axis, edge_order)
