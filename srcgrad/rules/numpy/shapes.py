"""Rules for NumPy's shape functions: rearranging (reshape, transpose,
swapaxes, moveaxis, rollaxis, expand_dims, squeeze, broadcast_to, ravel,
flip, fliplr, flipud, rot90, roll, tril, triu), joining (concatenate,
stack, hstack, vstack, dstack, column_stack, row_stack, append, block),
splitting (split, array_split, hsplit, vsplit, dsplit, unstack,
broadcast_arrays, meshgrid), promoting (atleast_1d/2d/3d) and differences (diff,
gradient, ediff1d).

The notation is rules/numpy/__init__.py's.

Every function here is linear: the cotangent of an operation that only
moves elements is the inverse move (autograd's numpy_vjps.py for the same
list), and its tangent is the operation applied to the tangent. A
parameter holding a sequence of arrays (concatenate's `arrays`,
atleast_1d's `*arys`) gets a list cotangent (an array, its rows being the
operands, when an array was passed: containers.seq_cotangent); the split
family reads its outputs' cotangents as the list `d[z]` (zeros for unused
pieces). The run-time helpers are in rules/helpers/shapes.py.

Batched templates (`register_batched_adjoint`) serve vectorised Jacobians
for the rules that are not batch-safe as written (the cotangent has one
more leading axis than the output: rules/helpers/batched.py).
"""
import numpy as np

from ..helpers.batched import reshape_b, swapaxes_b, transpose_b
from ..helpers.broadcast import unbroadcast
from ..helpers.complex import cast_like
from ..helpers.shapes import (append_adjoint, atleast_adjoint, block_adjoint, block_on_tensors, block_tangent,
                              broadcast_arrays_adjoint, concatenate_adjoint, diff_adjoint, diff_end_adjoint,
                              meshgrid_adjoint,
                              ediff1d_adjoint,
                              ediff1d_tangent, gradient_adjoint,
                              hsplit_axis, inverse_axes, negate_shift, promoted_concatenate_adjoint,
                              rollaxis_inverse, split_adjoint, stack_adjoint, unravel)
from ..python.containers import seq_cotangent
from ..registry import register_adjoint, register_batched_adjoint, register_tape_form
from ..tangents import declare_linear, register_linear, register_tangent


# ---------------------------------------------------------------- rearranging

@register_adjoint(np.reshape)
def reshape(y, x, shape=None, order="C", newshape=None, copy=None):
    d[x] = np.reshape(d[y], np.shape(x))


register_linear(np.reshape, static=("shape", "order"))


@register_batched_adjoint(np.reshape)
def reshape_batched(y, x, shape=None, order="C", newshape=None, copy=None):
    d[x] = reshape_b(d[y], x)


@register_adjoint(np.transpose)
def transpose(y, x, axes=None):
    d[x] = np.transpose(d[y], inverse_axes(axes, x))


register_linear(np.transpose)


@register_batched_adjoint(np.transpose)
def transpose_batched(y, x, axes=None):
    d[x] = transpose_b(d[y], inverse_axes(axes, x))


@register_adjoint(np.swapaxes)
def swapaxes(y, x, axis1, axis2):
    d[x] = np.swapaxes(d[y], axis1, axis2)


register_linear(np.swapaxes)


@register_batched_adjoint(np.swapaxes)
def swapaxes_batched(y, x, axis1, axis2):
    d[x] = swapaxes_b(d[y], axis1, axis2)


@register_adjoint(np.expand_dims)
def expand_dims(y, x, axis):
    d[x] = np.reshape(d[y], np.shape(x))


register_linear(np.expand_dims)


@register_batched_adjoint(np.expand_dims)
def expand_dims_batched(y, x, axis):
    d[x] = reshape_b(d[y], x)


@register_adjoint(np.squeeze)
def squeeze(y, x, axis=None):
    d[x] = np.reshape(d[y], np.shape(x))


register_linear(np.squeeze)


@register_batched_adjoint(np.squeeze)
def squeeze_batched(y, x, axis=None):
    d[x] = reshape_b(d[y], x)


@register_adjoint(np.broadcast_to)
def broadcast_to(y, x, shape, subok=False):
    d[x] = unbroadcast(d[y], x)


register_linear(np.broadcast_to, static=("shape",))


@register_adjoint(np.ravel)
def ravel(z, a, order="C"):
    """Flattening: the cotangent is reshaped back, read in ravel's order (C or F)."""
    d[a] = unravel(d[z], a, order)


register_linear(np.ravel)


@register_adjoint(np.moveaxis)
def moveaxis(z, a, source, destination):
    """The cotangent has its axes moved back (destination to source)."""
    d[a] = np.moveaxis(d[z], destination, source)


register_linear(np.moveaxis)


@register_adjoint(np.rollaxis)
def rollaxis(z, a, axis, start=0):
    """The cotangent is transposed by the inverse permutation."""
    d[a] = np.transpose(d[z], rollaxis_inverse(a, axis, start))


@register_adjoint(np.flip)
def flip(z, m, axis=None):
    """A reversal is its own adjoint."""
    d[m] = np.flip(d[z], axis)


register_linear(np.flip)


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


register_linear(np.roll)


@register_adjoint(np.tril)
def tril(z, m, k=0):
    """A mask: the cotangent keeps the same triangle."""
    d[m] = np.tril(d[z], k)


register_linear(np.tril)


@register_adjoint(np.triu)
def triu(z, m, k=0):
    """A mask: the cotangent keeps the same triangle."""
    d[m] = np.triu(d[z], k)


register_linear(np.triu)


# -------------------------------------------------------------------- joining

@register_adjoint(np.concatenate)
def concatenate(z, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """Each operand's cotangent is its piece of d[z] (np.concat is the same
    function)."""
    d[arrays] = seq_cotangent(concatenate_adjoint(d[z], arrays, axis), arrays)


register_linear(np.concatenate, static=("axis",))


@register_adjoint(np.stack)
def stack(z, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """Operand i's cotangent is d[z]'s slice i along the new axis."""
    d[arrays] = seq_cotangent(stack_adjoint(d[z], arrays, axis), arrays)


register_linear(np.stack, static=("axis",))


# hstack, vstack, dstack and column_stack (and row_stack, vstack's old name)
# concatenate their operands made at least 1-d, 2-d, 3-d or columns (PROMOTE)
# along AXIS: each operand's cotangent is its piece of d[z], reshaped back.
# Joining is linear: the tangent joins the tangents the same way (a list, or
# an array whose rows are the operands), in z's dtype (a constant operand's
# zero tangent is float64). Templates for the two signatures.


def joined(z, tup, *, dtype=None, casting="same_kind"):
    d[tup] = seq_cotangent(promoted_concatenate_adjoint(d[z], tup, PROMOTE, AXIS), tup)


def joined_tangent(z, tup, *, dtype=None, casting="same_kind"):
    t[z] = cast_like(JOIN(t[tup]), z)


def joined_operands(z, tup):
    d[tup] = seq_cotangent(promoted_concatenate_adjoint(d[z], tup, PROMOTE, AXIS), tup)


def joined_operands_tangent(z, tup):
    t[z] = cast_like(JOIN(t[tup]), z)


_JOINS = [    # primitive, its tangent's join, PROMOTE, AXIS, docstring
    (np.hstack, np.hstack, "1d", None,
     "concatenate of the operands made at least 1-d (axis 1, or 0 for 1-d ones): pieces reshaped back."),
    (np.vstack, np.vstack, "2d", 0,
     "concatenate along axis 0 of the operands made at least 2-d: pieces reshaped back."),
    (np.dstack, np.dstack, "3d", 2,
     "concatenate along axis 2 of the operands made at least 3-d: pieces reshaped back."),
    (np.column_stack, np.column_stack, "column", 1,
     "1-d operands become columns, then concatenate along axis 1: pieces reshaped back.")]
if hasattr(np, "row_stack"):      # deprecated in NumPy 2.0, a function of its own
    _JOINS.append((np.row_stack, np.vstack, "2d", 0,
                   "np.vstack (concatenate along axis 0 of the operands made at least 2-d): pieces reshaped back."))
for _f, _join, _promote, _axis, _doc in _JOINS:
    _options = _f not in (np.dstack, np.column_stack)     # (dtype, casting)
    register_adjoint(_f, name=_f.__name__, doc=_doc, constants={"PROMOTE": _promote, "AXIS": _axis})(
        joined if _options else joined_operands)
    register_tangent(_f, name=_f.__name__ + "_tangent", constants={"JOIN": _join})(
        joined_tangent if _options else joined_operands_tangent)
    if _join is _f:
        declare_linear(_f)


@register_adjoint(np.append)
def append(z, arr, values, axis=None):
    """concatenate((arr, values), axis), both flattened when axis is None."""
    d[arr] = append_adjoint(d[z], arr, values, axis, True)
    d[values] = append_adjoint(d[z], arr, values, axis, False)


@register_tangent(np.append)
def append_tangent(z, arr, values, axis=None):
    """np.append is concatenate, jointly linear in (arr, values)."""
    t[z] = cast_like(np.append(t[arr], t[values], axis=axis), z)


declare_linear(np.append, (0, 1))
declare_linear(cast_like)


@register_adjoint(np.block)
def block(z, arrays):
    """np.block assembles nested lists of arrays: each leaf's cotangent is
    d[z] read where its elements went (nested-list structure kept)."""
    d[arrays] = block_adjoint(d[z], arrays)


@register_tangent(np.block)
def block_tangent_(z, arrays):
    """np.block is linear: the block of the leaves' tangents (zeros for
    leaves without one)."""
    t[z] = block_tangent(t[arrays], arrays)


declare_linear(block_tangent)
register_tape_form(np.block, block_on_tensors)


# ------------------------------------------------------------------ splitting

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


@register_adjoint(np.meshgrid)
def meshgrid(z, *xi, copy=True, sparse=False, indexing="xy"):
    """z[i] (an array of shape (len(x0), ..., len(x_{n-1})), the first two
    lengths swapped for indexing='xy'; length 1 on the other axes when
    sparse) is ravel(xi[i]) broadcast along its axis (NumPy's meshgrid is
    np.broadcast_arrays of reshaped inputs): d xi[i] = d[z][i] summed over
    the other axes, reshaped to xi[i]'s shape. Linear; its JVP is this
    VJP transposed (forward_mode.transpose_jvp), as for the split family."""
    d[xi] = meshgrid_adjoint(d[z][:], xi, indexing)


@register_adjoint(np.broadcast_arrays)
def broadcast_arrays(z, *args, subok=False):
    """Each output is its input broadcast: its cotangent is summed back."""
    d[args] = broadcast_arrays_adjoint(d[z][:], args)


# ------------------------------------------------------------------ promoting

@register_adjoint(np.atleast_1d)
def atleast_1d(z, *arys):
    """Only axes of length 1 are added: each cotangent is reshaped back."""
    d[arys] = atleast_adjoint(d[z][:], arys)


@register_adjoint(np.atleast_2d)
def atleast_2d(z, *arys):
    """Only axes of length 1 are added: each cotangent is reshaped back."""
    d[arys] = atleast_adjoint(d[z][:], arys)


for _f in (np.atleast_1d, np.atleast_2d):
    declare_linear(_f)


@register_adjoint(np.atleast_3d)
def atleast_3d(z, *arys):
    """Only axes of length 1 are added: each cotangent is reshaped back."""
    d[arys] = atleast_adjoint(d[z][:], arys)


# ---------------------------------------------------------------- differences

@register_adjoint(np.diff)
def diff(z, a, n=1, axis=-1, prepend=None, append=None):
    """n-th differences along axis: the adjoint of the first difference,
    applied n times, of the array extended by prepend/append; each part
    gets its slice."""
    d[a] = diff_adjoint(d[z], a, n, axis, prepend, append)
    d[prepend] = diff_end_adjoint(d[z], a, n, axis, prepend, append, "prepend")
    d[append] = diff_end_adjoint(d[z], a, n, axis, prepend, append, "append")


@register_adjoint(np.gradient)
def gradient(z, f, *varargs, axis=None, edge_order=1):
    """Finite differences, linear in f: each axis's stencil transposed
    (spacings and coordinates are not differentiated)."""
    d[f] = gradient_adjoint(d[z][:], f, varargs, axis, edge_order)


@register_adjoint(np.ediff1d)
def ediff1d(z, ary, to_end=None, to_begin=None):
    """z = concatenate(ravel(to_begin), diff(ravel(ary)), ravel(to_end))
    (NumPy's ediff1d): each end gets its slice of the cotangent, ary the
    first difference's adjoint of the middle, d ary_j = g_{j-1} - g_j."""
    d[ary] = ediff1d_adjoint(d[z], ary, to_end, to_begin, "ary")
    d[to_end] = ediff1d_adjoint(d[z], ary, to_end, to_begin, "to_end")
    d[to_begin] = ediff1d_adjoint(d[z], ary, to_end, to_begin, "to_begin")


@register_tangent(np.ediff1d)
def ediff1d_tangent_(z, ary, to_end=None, to_begin=None):
    """Linear: ediff1d of the tangents (zeros for a part without one)."""
    t[z] = cast_like(ediff1d_tangent(t[ary], t[to_end], t[to_begin], ary, to_end, to_begin), z)


declare_linear(ediff1d_tangent, (0, 1, 2))

