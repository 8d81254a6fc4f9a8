"""Rule-test rows for shapes and indexing (srcgrad/rules/numpy/shapes.py,
indexing.py).

Rearranging (ravel, moveaxis, rollaxis, flip, fliplr, flipud, rot90, roll,
tril, triu), joining (concatenate, stack, hstack, vstack, dstack,
column_stack, append, np.array of a list), splitting (split, array_split,
hsplit, vsplit, dsplit, unstack; unused pieces get zero cotangents),
repeating (tile, repeat, pad in its copying and constant modes), selecting
(take, take_along_axis, sort, partition, delete, compress, extract, select,
choose; repeated indices accumulate), promoting (atleast_1d/2d/3d, one operand or
several) and np.diff, plus the index_gather/index_scatter primitives the
selecting rules use; np.block, np.insert, row_stack, and np.pad in its
statistic modes (maximum, minimum, mean, median, linear_ramp: `ref` pads axis
by axis as NumPy does, numpy/lib/_arraypad_impl.py); np.ediff1d (with
to_begin/to_end, differentiated or constant) and sliding_window_view
(overlapping windows: their cotangents accumulate; `ref` gathers x's
entries through NumPy's own windows of the positions 0..n-1 with autograd
indexing, which adds repeated positions back).

Where autograd has no rule for a spelling (flip, take, take_along_axis,
sort along an axis, repeat with per-element counts, pad's copying modes,
atleast_2d of several arrays...), `ref` writes the same selection with
autograd indexing.
"""
import autograd.numpy as anp
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from cases_reductions import _ag_quantile
from rulecase import Case, R, ND, NZ, Static, _ag_bcast, _raw  # noqa: F401

from srcgrad.rules.helpers.shapes import index_gather, index_scatter

C = Case


def _pad_map(shape, pad_width, mode):
    return np.pad(np.arange(int(np.prod(shape))).reshape(shape), pad_width, mode=mode)


# ------------------------------------------------------------- rearranging

def f_ravel(a, w):
    return np.sum(np.ravel(a) * w)


def f_ravel_f(a, w):
    return np.sum(np.ravel(a, order="F") * w)


def f_moveaxis(a, w):
    return np.sum(np.moveaxis(a, 0, -1) * w)


def f_moveaxis_multi(a, w):
    return np.sum(np.moveaxis(a, [0, 1], [2, 0]) * w)


def f_rollaxis(a, axis, start, w):
    return np.sum(np.rollaxis(a, axis, start) * w)


def f_flip(a, w):
    return np.sum(np.flip(a, 1) * w)


def f_flip_all(a, w):
    return np.sum(np.flip(a) * w)


def f_flip_axes(a, w):
    return np.sum(np.flip(a, (0, 2)) * w)


def f_fliplr(a, w):
    return np.sum(np.fliplr(a) * w)


def f_flipud(a, w):
    return np.sum(np.flipud(a) * w)


def f_rot90(a, w):
    return np.sum(np.rot90(a) * w)


def f_rot90_axes(a, w):
    return np.sum(np.rot90(a, 3, axes=(1, 2)) * w)


def f_roll(a, w):
    return np.sum(np.roll(a, 2) * w)


def f_roll_axes(a, w):
    return np.sum(np.roll(a, (1, -2), axis=(0, 1)) * w)


def f_tril(a, w):
    return np.sum(np.tril(a) * w)


def f_tril_k(a, w):
    return np.sum(np.tril(a, -1) * w)


def f_triu_batched(a, w):
    return np.sum(np.triu(a, 1) * w)


# ----------------------------------------------------------------- joining

def f_concatenate(a, b, w):
    return np.sum(np.concatenate([a, b]) * w)


def f_concatenate_axis1(a, b, c, w):
    return np.sum(np.concatenate((a, b, c), axis=1) * w)


def f_concatenate_none(a, b, w):
    return np.sum(np.concatenate([a, b], axis=None) * w)


def f_concatenate_const(a, w):
    return np.sum(np.concatenate([a, np.ones((1, 3))], axis=0) * w)


def f_concat(a, b, w):
    return np.sum(np.concat([a, b], axis=-1) * w)


def f_stack(a, b, w):
    return np.sum(np.stack([a, b]) * w)


def f_stack_last(a, b, c, w):
    return np.sum(np.stack((a, b, c), axis=-1) * w)


def f_hstack(a, b, w):
    return np.sum(np.hstack([a, b]) * w)


def f_vstack(a, b, w):
    return np.sum(np.vstack([a, b]) * w)


def f_dstack(a, b, w):
    return np.sum(np.dstack([a, b]) * w)


def f_column_stack(a, b, w):
    return np.sum(np.column_stack([a, b]) * w)


def f_append(a, b, w):
    return np.sum(np.append(a, b) * w)


def f_append_axis(a, b, axis, w):
    return np.sum(np.append(a, b, axis=axis) * w)


def f_array_list(a, b, w):
    return np.sum(np.array([a, b]) * w)


def f_array_nested(a, b, w):
    return np.sum(np.array([[a, b], [b, a]]) * w)


def f_array_of_array(a, w):
    return np.sum(np.array(a, ndmin=3) * w)


# --------------------------------------------------------------- splitting

def f_split(a, w):
    p, q, r = np.split(a, 3, axis=1)
    return np.sum(p * w[0]) + np.sum(q * q * w[1]) + np.sum(r * w[2])


def f_split_unused(a, w):
    p, q, r = np.split(a, [1, 4])
    return np.sum(p * w[:1]) + np.sum(r * r * w[1:])


def f_array_split(a, w):
    p, q, r = np.array_split(a, 3)
    return np.sum(p * w[:3]) + np.sum(q * q * w[3:5]) + np.sum(r * w[5:])


def f_hsplit(a, w):
    p, q = np.hsplit(a, 2)
    return np.sum(p * w[0]) + np.sum(q * q * w[1])


def f_vsplit(a, w):
    p, q = np.vsplit(a, 2)
    return np.sum(p * w[0]) + np.sum(q * q * w[1])


def f_dsplit(a, w):
    p, q = np.dsplit(a, [1])
    return np.sum(p * w[..., :1]) + np.sum(q * q * w[..., 1:])


def f_unstack(a, w):
    p, q = np.unstack(a, axis=1)
    return np.sum(p * w[0]) + np.sum(q * q * w[1])


def f_broadcast_arrays(a, b, w):
    p, q = np.broadcast_arrays(a, b)
    return np.sum(p * w[0]) + np.sum(q * q * w[1])


# --------------------------------------------------------------- repeating

def f_tile(a, reps, w):
    return np.sum(np.tile(a, reps) * w)


def f_repeat(a, w):
    return np.sum(np.repeat(a, 2, axis=1) * w)


def f_repeat_flat(a, w):
    return np.sum(np.repeat(a, 3) * w)


def f_repeat_counts(a, w):
    return np.sum(np.repeat(a, [1, 0, 3], axis=0) * w)


def f_resize(a, w):
    return np.sum(np.resize(a, (3, 3)) * w)


def f_pad(a, w):
    return np.sum(np.pad(a, ((1, 2), (0, 1))) * w)


def f_pad_int(a, w):
    return np.sum(np.pad(a, 1) * w)


def f_pad_value(a, c, w):
    return np.sum(np.pad(a, 1, constant_values=c) * w)


def f_pad_mode(a, pad_width, mode, w):
    return np.sum(np.pad(a, pad_width, mode=mode) * w)


# --------------------------------------------------------------- selecting

def f_take(a, w):
    return np.sum(np.take(a, [0, 2, 2], axis=1) * w)


def f_take_flat(a, idx, w):
    return np.sum(np.take(a, idx) * w)


def f_take_mode(a, idx, mode, w):
    return np.sum(np.take(a, idx, axis=0, mode=mode) * w)


def f_take_along_axis(a, idx, w):
    return np.sum(np.take_along_axis(a, idx, axis=1) * w)


def f_take_along_axis_none(a, idx, w):
    return np.sum(np.take_along_axis(a, idx, axis=None) * w)


def f_sort(a, w):
    return np.sum(np.sort(a) * w)


def f_sort_axis0(a, w):
    return np.sum(np.sort(a, axis=0) * w)


def f_sort_none(a, w):
    return np.sum(np.sort(a, axis=None) * w)


def f_partition(a, w):
    return np.sum(np.partition(a, 2) * w)


def f_delete(a, w):
    return np.sum(np.delete(a, [0, 2], axis=1) * w)


def f_delete_flat(a, w):
    return np.sum(np.delete(a, 1) * w)


def f_compress(a, w):
    return np.sum(np.compress([True, False, True], a, axis=1) * w)


def f_extract(a, w):
    return np.sum(np.extract(a > 0.0, a) * w)


def f_select(a, b, w):
    return np.sum(np.select([a > 0.0, b > 0.5], [2.0 * a, b], default=a * a) * w)


def f_select_scalar_default(a, b, w):
    return np.sum(np.select([a > 0.0], [b]) * w)


def f_choose_list(a, x, y, v, w):
    return np.sum(np.choose(a, [x, y, v]) * w)


def f_choose_same_input(a, x, y, w):
    return np.sum(np.choose(a, (x, 2.0 * x, y)) * w)


def f_choose_array(a, c, w):
    return np.sum(np.choose(a, c) * w)


def f_choose_mode(a, c, mode, w):
    return np.sum(np.choose(a, c, mode=mode) * w)


def f_choose_list_mode(a, x, y, mode, w):
    return np.sum(np.choose(a, [x, y], mode=mode) * w)


def f_index_gather(x, idx, w):
    return np.sum(index_gather(x, idx) * w)


def f_index_scatter(g, x, idx, w):
    return np.sum(index_scatter(g, x, idx) * w)


# --------------------------------------------------------------- promoting

def f_atleast_1d(a, w):
    return np.sum(np.atleast_1d(a) * w)


def f_atleast_2d(a, w):
    return np.sum(np.atleast_2d(a) * w)


def f_atleast_2d_two(a, b, w):
    p, q = np.atleast_2d(a, b)
    return np.sum(p * w[:1]) + np.sum(q * q * w[1:, :1])


def f_atleast_3d(a, w):
    return np.sum(np.atleast_3d(a) * w)


def f_atleast_3d_two(a, b, w):
    p, q = np.atleast_3d(a, b)
    return np.sum(p * w[0]) + np.sum(q * q * w[1])


# ------------------------------------------------------------- differences

def f_diff(a, w):
    return np.sum(np.diff(a) * w)


def f_diff_2_axis0(a, w):
    return np.sum(np.diff(a, 2, axis=0) * w)


def f_diff_prepend_append(a, w):
    return np.sum(np.diff(a, prepend=0.0, append=np.ones((2, 1))) * w)


def f_gradient(a, w):
    return np.sum(np.gradient(a) * w)


def f_gradient_2d(a, w):
    gy, gx = np.gradient(a, 0.5)
    return np.sum(gy * w[0]) + np.sum(gx * gx * w[1])


def f_gradient_coords(a, x, w):
    return np.sum(np.gradient(a, x, axis=1, edge_order=2) * w)


# ------------------------------------------------------------- autograd refs

def _ref_gather(a, idx):
    """a.ravel()[idx] (idx < 0: 0), with autograd indexing."""
    flat = anp.ravel(a)
    return anp.where(idx >= 0, flat[np.maximum(idx, 0)], 0.0)


def _ref_scatter(g, x, idx):
    onehot = (np.arange(x.size)[:, None] == idx.ravel()[None, :]).astype(float)
    return anp.reshape(anp.dot(onehot, anp.ravel(g)), x.shape)


def _sorted_ref(axis):
    def ref(a):
        order = anp.argsort(a, axis=axis)
        if axis is None:
            return anp.ravel(a)[order.ravel()]
        if axis == 0:
            return a[order, np.arange(a.shape[1])[None, :]]
        return a[np.arange(a.shape[0])[:, None], order]
    return ref


def _ag_select(a, b):
    return anp.where(a > 0.0, 2.0 * a, anp.where(b > 0.5, _ag_bcast(b, a), a * a))


def _ag_choose(idx, choices):
    """np.choose with the index already reduced to 0..n-1: a sum of
    anp.where over the choices, each broadcast against the others (autograd
    has no rule for np.choose)."""
    shape = np.broadcast_shapes(np.shape(idx), *[anp.shape(c) for c in choices])
    out = 0.0
    for i, c in enumerate(choices):
        out = out + anp.where(idx == i, c + anp.zeros(shape), 0.0)
    return out


def _ag_choose_rows(idx, c):
    return _ag_choose(idx, [c[i] for i in range(c.shape[0])])


def _stencil(n, h, edge_order=1):
    """np.gradient along an axis of length n as a matrix (autograd's
    gradient rule takes no spacing argument)."""
    return np.gradient(np.eye(n), h, axis=0, edge_order=edge_order)


def _ag_gradient_coords(a, x):
    return anp.dot(a, _stencil(4, x, 2).T)


_IDX_GATHER = np.array([[0, 5, -1], [5, 2, 3]])
_IDX_SCATTER = np.array([0, 3, 3, -1, 1])
_TAKE_IDX = np.array([[1, 4], [4, 0]])
_TAKE_MODE_IDX = np.array([0, 3, -4, 1])
_ALONG_IDX = np.array([[0, 2, 2], [1, 1, 0]])
_ALONG_FLAT_IDX = np.array([5, 0, 5, 2])
_CHOOSE_IDX = np.array([[0, 1, 2], [2, 0, 1]])
_CHOOSE_COL = np.array([[2], [0], [1], [1]])                # (4, 1): broadcast against the choices
_CHOOSE_OUT_OF_RANGE = np.array([[-1, 3, 5], [2, -4, 0]])   # wrap: mod 3; clip: 0 or 2

CASES = [
    # ---- rearranging
    C("sh_ravel", f_ravel, lambda a: anp.ravel(a), (R(2, 3, 2),), np.ravel),
    C("sh_ravel_f", f_ravel_f, lambda a: anp.ravel(anp.transpose(a)), (R(2, 3),), np.ravel),
    C("sh_moveaxis", f_moveaxis, lambda a: anp.moveaxis(a, 0, -1), (R(2, 3, 4),), np.moveaxis),
    C("sh_moveaxis_multi", f_moveaxis_multi, lambda a: anp.moveaxis(a, [0, 1], [2, 0]), (R(2, 3, 4),),
      np.moveaxis),
    C("sh_rollaxis", f_rollaxis, lambda a, ax, st: anp.rollaxis(a, ax, st),
      (R(2, 3, 4), Static(2), Static(0)), np.rollaxis),
    C("sh_rollaxis_end", f_rollaxis, lambda a, ax, st: anp.rollaxis(a, ax, st),
      (R(2, 3, 4), Static(0), Static(3)), np.rollaxis),
    C("sh_flip", f_flip, lambda a: a[:, ::-1], (R(2, 3),), np.flip),
    C("sh_flip_all", f_flip_all, lambda a: a[::-1, ::-1], (R(2, 3),), np.flip),
    C("sh_flip_axes", f_flip_axes, lambda a: a[::-1, :, ::-1], (R(2, 3, 2),), np.flip),
    C("sh_fliplr", f_fliplr, lambda a: anp.fliplr(a), (R(2, 3),), np.fliplr),
    C("sh_flipud", f_flipud, lambda a: anp.flipud(a), (R(3, 2),), np.flipud),
    C("sh_rot90", f_rot90, lambda a: anp.rot90(a), (R(2, 3),), np.rot90),
    C("sh_rot90_axes", f_rot90_axes, lambda a: anp.swapaxes(a, 1, 2)[:, :, ::-1], (R(2, 3, 4),),
      np.rot90),
    C("sh_roll", f_roll, lambda a: anp.roll(a, 2), (R(2, 3),), np.roll),
    C("sh_roll_axes", f_roll_axes, lambda a: anp.roll(anp.roll(a, 1, 0), -2, 1), (R(3, 4),), np.roll),
    C("sh_tril", f_tril, lambda a: anp.tril(a), (R(3, 3),), np.tril),
    C("sh_tril_k", f_tril_k, lambda a: anp.tril(a, -1), (R(3, 4),), np.tril),
    C("sh_triu_batched", f_triu_batched, lambda a: a * np.triu(np.ones((3, 3)), 1), (R(2, 3, 3),),
      np.triu),

    # ---- joining
    C("sh_concatenate", f_concatenate, lambda a, b: anp.concatenate([a, b]), (R(2, 3), R(1, 3)),
      np.concatenate),
    C("sh_concatenate_axis1", f_concatenate_axis1, lambda a, b, c: anp.concatenate([a, b, c], axis=1),
      (R(2, 1), R(2, 3), R(2, 2)), np.concatenate),
    C("sh_concatenate_none", f_concatenate_none,
      lambda a, b: anp.concatenate([anp.ravel(a), anp.ravel(b)]), (R(2, 3), R(4)), np.concatenate),
    C("sh_concatenate_const", f_concatenate_const,
      lambda a: anp.concatenate([a, np.ones((1, 3))], axis=0), (R(2, 3),), np.concatenate),
    C("sh_concat_alias", f_concat, lambda a, b: anp.concatenate([a, b], axis=-1), (R(2, 2), R(2, 3)),
      np.concat),
    C("sh_stack", f_stack, lambda a, b: anp.stack([a, b]), (R(2, 3), R(2, 3)), np.stack),
    C("sh_stack_last", f_stack_last, lambda a, b, c: anp.stack([a, b, c], axis=-1),
      (R(3), R(3), R(3)), np.stack),
    C("sh_hstack_1d", f_hstack, lambda a, b: anp.hstack([a, b]), (R(2), R(3)), np.hstack),
    C("sh_hstack_scalar", f_hstack, lambda a, b: anp.concatenate([anp.reshape(a, (1,)), b]),
      (R(), R(3)), np.hstack),
    C("sh_hstack_2d", f_hstack, lambda a, b: anp.hstack([a, b]), (R(2, 1), R(2, 3)), np.hstack),
    C("sh_vstack", f_vstack, lambda a, b: anp.vstack([a, b]), (R(3), R(2, 3)), np.vstack),
    C("sh_dstack", f_dstack, lambda a, b: anp.dstack([a, b]), (R(3), R(1, 3, 2)), np.dstack),
    C("sh_dstack_2d", f_dstack, lambda a, b: anp.dstack([a, b]), (R(2, 3), R(2, 3)), np.dstack),
    C("sh_column_stack", f_column_stack, lambda a, b: anp.column_stack([a, b]), (R(3), R(3, 2)),
      np.column_stack),
    C("sh_append", f_append, lambda a, b: anp.append(a, b), (R(2, 3), R(3)), np.append),
    C("sh_append_axis0", f_append_axis, lambda a, b, ax: anp.concatenate([a, b], axis=ax),
      (R(2, 3), R(1, 3), Static(0)), np.append),
    C("sh_append_axis_neg", f_append_axis, lambda a, b, ax: anp.concatenate([a, b], axis=ax),
      (R(2, 3), R(2, 1), Static(-1)), np.append),
    # np.array is not dispatched to Tensors (NumPy gives no hook for it), so op by
    # op it detaches; in compiled code it has its rule. Compiled paths only.
    C("sh_array_list", f_array_list, lambda a, b: anp.array([a, b]), (R(3), R(3)), np.array,
      meta={"compiled_only": True}),
    C("sh_array_nested", f_array_nested, lambda a, b: anp.array([[a, b], [b, a]]), (R(3), R(3)), np.array,
      meta={"compiled_only": True}),
    C("sh_array_of_array", f_array_of_array, lambda a: anp.reshape(a, (1, 2, 3)), (R(2, 3),), np.array,
      meta={"compiled_only": True}),

    # ---- splitting (list outputs)
    C("sh_split", f_split, lambda a: anp.stack([a[:, :2], a[:, 2:4] ** 2, a[:, 4:]]), (R(2, 6),),
      np.split),
    C("sh_split_unused_piece", f_split_unused, lambda a: anp.concatenate([a[:1], a[4:] ** 2]), (R(7),),
      np.split),
    C("sh_array_split", f_array_split, lambda a: anp.concatenate([a[:3], a[3:5] ** 2, a[5:]]), (R(7),),
      np.array_split),
    C("sh_hsplit", f_hsplit, lambda a: anp.stack([a[:, :2], a[:, 2:] ** 2]), (R(3, 4),), np.hsplit),
    C("sh_vsplit", f_vsplit, lambda a: anp.stack([a[:2], a[2:] ** 2]), (R(4, 3),), np.vsplit),
    C("sh_dsplit", f_dsplit, lambda a: anp.concatenate([a[..., :1], a[..., 1:] ** 2], axis=-1),
      (R(2, 2, 3),), np.dsplit),
    C("sh_unstack", f_unstack, lambda a: anp.stack([a[:, 0], a[:, 1] ** 2]), (R(3, 2),), np.unstack),

    C("sh_broadcast_arrays", f_broadcast_arrays,
      lambda a, b: anp.stack([a + anp.zeros((2, 3)), b * b + anp.zeros((2, 3))]), (R(2, 1), R(3)),
      np.broadcast_arrays),

    # ---- repeating
    C("sh_tile", f_tile, lambda a, reps: anp.tile(a, reps), (R(2, 3), Static((2, 1, 2))), np.tile),
    C("sh_tile_int", f_tile, lambda a, reps: anp.tile(a, reps), (R(2), Static(3)), np.tile),
    C("sh_tile_short_reps", f_tile, lambda a, reps: anp.concatenate([a, a], axis=1),
      (R(2, 3), Static((2,))), np.tile),
    C("sh_repeat", f_repeat, lambda a: anp.repeat(a, 2, axis=1), (R(2, 3),), np.repeat),
    C("sh_repeat_flat", f_repeat_flat, lambda a: anp.repeat(a, 3), (R(2, 2),), np.repeat),
    C("sh_repeat_counts", f_repeat_counts, lambda a: a[np.array([0, 2, 2, 2])], (R(3, 2),), np.repeat),
    C("sh_resize", f_resize, lambda a: anp.ravel(a)[np.array([0, 1, 2, 3, 0, 1, 2, 3, 0])].reshape(3, 3),
      (R(2, 2),), np.resize),
    C("sh_pad", f_pad, lambda a: anp.concatenate([anp.zeros((1, 4)), anp.concatenate(
        [a, anp.zeros((2, 1))], axis=1), anp.zeros((2, 4))]), (R(2, 3),), np.pad),
    C("sh_pad_int", f_pad_int, lambda a: _ref_gather(a, np.pad(np.arange(1, 7).reshape(2, 3), 1) - 1),
      (R(2, 3),), np.pad),
    C("sh_pad_constant_value", f_pad_value,
      lambda a, c: _ref_gather(a, np.pad(np.arange(1, 7).reshape(2, 3), 1) - 1)
      + c * np.pad(np.zeros((2, 3)), 1, constant_values=1.0), (R(2, 3), R()), np.pad),
    C("sh_pad_edge", f_pad_mode, lambda a, pw, mode: _ref_gather(a, _pad_map((2, 3), pw, mode)),
      (R(2, 3), Static(2), Static("edge")), np.pad),
    C("sh_pad_reflect", f_pad_mode, lambda a, pw, mode: _ref_gather(a, _pad_map((3, 4), pw, mode)),
      (R(3, 4), Static(((1, 2), (3, 1))), Static("reflect")), np.pad),
    C("sh_pad_symmetric", f_pad_mode, lambda a, pw, mode: _ref_gather(a, _pad_map((3, 3), pw, mode)),
      (R(3, 3), Static(((2, 1), (1, 3))), Static("symmetric")), np.pad),
    C("sh_pad_wrap", f_pad_mode, lambda a, pw, mode: _ref_gather(a, _pad_map((4,), pw, mode)),
      (R(4), Static((3, 6)), Static("wrap")), np.pad),

    # ---- selecting (repeated indices accumulate)
    C("sh_take_axis", f_take, lambda a: a[:, [0, 2, 2]], (R(2, 3),), np.take),
    C("sh_take_flat", f_take_flat, lambda a, idx: anp.ravel(a)[idx], (R(2, 3), Static(_TAKE_IDX)),
      np.take),
    C("sh_take_wrap", f_take_mode, lambda a, idx, mode: a[np.mod(idx, 3)],
      (R(3, 2), Static(_TAKE_MODE_IDX), Static("wrap")), np.take),
    C("sh_take_clip", f_take_mode, lambda a, idx, mode: a[np.clip(idx, 0, 2)],
      (R(3, 2), Static(_TAKE_MODE_IDX), Static("clip")), np.take),
    C("sh_take_along_axis", f_take_along_axis, lambda a, idx: a[np.arange(2)[:, None], idx],
      (R(2, 3), Static(_ALONG_IDX)), np.take_along_axis),
    C("sh_take_along_axis_none", f_take_along_axis_none, lambda a, idx: anp.ravel(a)[idx],
      (R(2, 3), Static(_ALONG_FLAT_IDX)), np.take_along_axis),
    C("sh_sort", f_sort, _sorted_ref(-1), (R(3, 4),), np.sort),
    C("sh_sort_axis0", f_sort_axis0, _sorted_ref(0), (R(3, 4),), np.sort),
    C("sh_sort_none", f_sort_none, _sorted_ref(None), (R(2, 3),), np.sort),
    C("sh_partition", f_partition, lambda a: a[anp.argpartition(a, 2)], (R(6),), np.partition),
    C("sh_delete", f_delete, lambda a: a[:, [1, 3]], (R(2, 4),), np.delete),
    C("sh_delete_flat", f_delete_flat, lambda a: anp.ravel(a)[np.array([0, 2, 3, 4, 5])], (R(2, 3),),
      np.delete),
    C("sh_compress", f_compress, lambda a: a[:, [0, 2]], (R(2, 3),), np.compress),
    C("sh_extract", f_extract, lambda a: a[a > 0.0], (NZ(3, 4),), np.extract),
    C("sh_select", f_select, _ag_select, (NZ(2, 3), R(3)), np.select),
    C("sh_select_scalar_default", f_select_scalar_default,
      lambda a, b: anp.where(a > 0.0, _ag_bcast(b, a), 0.0), (ND(2, 3), R(3)), np.select),
    # np.choose: choice i's cotangent is d[z] where a == i, summed over broadcasting
    C("sh_choose_list_bcast", f_choose_list, lambda a, x, y, v: _ag_choose(a, [x, y, v]),
      (Static(_CHOOSE_IDX), R(2, 3), R(3), R()), np.choose),
    C("sh_choose_list_a_bcast", f_choose_list, lambda a, x, y, v: _ag_choose(a, [x, y, v]),
      (Static(_CHOOSE_COL), R(3), R(4, 1), R(1, 3)), np.choose),
    C("sh_choose_same_input", f_choose_same_input, lambda a, x, y: _ag_choose(a, [x, 2.0 * x, y]),
      (Static(_CHOOSE_IDX), R(2, 3), R(2, 1)), np.choose),
    C("sh_choose_array", f_choose_array, _ag_choose_rows, (Static(_CHOOSE_IDX), R(3, 2, 3)), np.choose),
    C("sh_choose_array_bcast", f_choose_array, _ag_choose_rows, (Static(_CHOOSE_COL), R(3, 1, 3)),
      np.choose),
    C("sh_choose_array_rows_bcast", f_choose_array, _ag_choose_rows, (Static(_CHOOSE_IDX), R(3, 3)),
      np.choose),
    C("sh_choose_wrap", f_choose_mode, lambda a, c, mode: _ag_choose_rows(np.mod(a, 3), c),
      (Static(_CHOOSE_OUT_OF_RANGE), R(3, 2, 3), Static("wrap")), np.choose),
    C("sh_choose_clip", f_choose_mode, lambda a, c, mode: _ag_choose_rows(np.clip(a, 0, 2), c),
      (Static(_CHOOSE_OUT_OF_RANGE), R(3, 1, 3), Static("clip")), np.choose),
    C("sh_choose_list_clip", f_choose_list_mode,
      lambda a, x, y, mode: _ag_choose(np.clip(a, 0, 1), [x, y]),
      (Static(_CHOOSE_OUT_OF_RANGE), R(2, 3), R(3), Static("clip")), np.choose),
    C("sh_index_gather", f_index_gather, _ref_gather, (R(2, 3), Static(_IDX_GATHER)), index_gather),
    C("sh_index_scatter", f_index_scatter, _ref_scatter, (R(5), ND(2, 2), Static(_IDX_SCATTER)),
      index_scatter),

    # ---- promoting
    C("sh_atleast_1d_scalar", f_atleast_1d, lambda a: anp.reshape(a, (1,)), (R(),), np.atleast_1d),
    C("sh_atleast_2d", f_atleast_2d, lambda a: anp.reshape(a, (1, 3)), (R(3),), np.atleast_2d),
    C("sh_atleast_2d_two", f_atleast_2d_two,
      lambda a, b: anp.concatenate([anp.reshape(a, (1, 3)), anp.concatenate(
          [anp.reshape(b * b, (1, 1)), anp.zeros((1, 2))], axis=1)]),
      (R(3), R()), np.atleast_2d),
    C("sh_atleast_3d", f_atleast_3d, lambda a: anp.reshape(a, (2, 3, 1)), (R(2, 3),), np.atleast_3d),
    C("sh_atleast_3d_two", f_atleast_3d_two,
      lambda a, b: anp.stack([anp.reshape(a, (1, 2, 1)), anp.reshape(b * b, (1, 2, 1))]),
      (R(2), R(1, 2)), np.atleast_3d),

    # ---- differences
    C("sh_diff", f_diff, lambda a: anp.diff(a), (R(2, 4),), np.diff),
    C("sh_diff_2_axis0", f_diff_2_axis0, lambda a: anp.diff(a, 2, axis=0), (R(5, 2),), np.diff),
    C("sh_diff_prepend_append", f_diff_prepend_append,
      lambda a: anp.diff(anp.concatenate([np.zeros((2, 1)), a, np.ones((2, 1))], axis=1)),
      (R(2, 3),), np.diff),
    C("sh_gradient", f_gradient, lambda a: anp.gradient(a), (R(5),), np.gradient),
    C("sh_gradient_2d_both_axes", f_gradient_2d,
      lambda a: anp.stack([anp.dot(_stencil(3, 0.5), a), anp.dot(a, _stencil(4, 0.5).T) ** 2]),
      (R(3, 4),), np.gradient),
    C("sh_gradient_coords_edge2", f_gradient_coords,
      lambda a, x: _ag_gradient_coords(a, x), (R(2, 4), Static(np.array([0.0, 0.5, 1.5, 1.75]))),
      np.gradient),
]


# ---------------------- block, insert, row_stack and np.pad's statistic modes

def f_block_1d(a, b, w):
    return np.sum(np.block([a, b, a]) * w)


def f_block_2d(a, b, c, e, w):
    return np.sum(np.block([[a, b], [c, e]]) * w)


def f_block_scalar(a, s, w):
    return np.sum(np.block([[a], [np.full((1, 3), s)]]) * w)


def f_insert_flat(a, v, w):
    return np.sum(np.insert(a, 2, v) * w)


def f_insert_rows(a, v, w):
    return np.sum(np.insert(a, [1, 3], v, axis=0) * w)


def f_insert_broadcast(a, v, w):
    return np.sum(np.insert(a, 1, v, axis=1) * w)


def f_row_stack(a, b, w):
    return np.sum(np.row_stack([a, b]) * w)


def f_pad_stat(a, pad_width, mode, w):
    return np.sum(np.pad(a, pad_width, mode=mode) * w)


def f_pad_stat_length(a, w):
    return np.sum(np.pad(a, ((2, 1), (1, 3)), mode="mean", stat_length=((1, 2), (3, 2))) * w)


def f_pad_max_length(a, w):
    return np.sum(np.pad(a, 2, mode="maximum", stat_length=2) * w)


def f_pad_ramp(a, e, w):
    return np.sum(np.pad(a, ((1, 2), (3, 1)), mode="linear_ramp", end_values=e) * w)


def _ag_pad_stat(a, pad_width, mode, stat_length=None, end_values=0.0):
    """np.pad's statistic modes with autograd operations, axis by axis."""
    v = _raw(a)
    nd = v.ndim
    pw = np.broadcast_to(np.asarray(pad_width), (nd, 2))
    sl = np.broadcast_to(np.asarray(stat_length if stat_length is not None else -1), (nd, 2))
    cur = a
    for axis in range(nd):
        n = _raw(cur).shape[axis]
        l, r = int(pw[axis][0]), int(pw[axis][1])
        moved = anp.moveaxis(cur, axis, 0)
        if mode == "linear_ramp":
            tl = (np.arange(l) / max(l, 1)).reshape((l,) + (1,) * (nd - 1))
            tr = (np.arange(r)[::-1] / max(r, 1)).reshape((r,) + (1,) * (nd - 1))
            left = end_values + (moved[:1] - end_values) * tl
            right = end_values + (moved[-1:] - end_values) * tr
        else:
            ll = n if sl[axis][0] < 0 else min(int(sl[axis][0]), n)
            rl = n if sl[axis][1] < 0 else min(int(sl[axis][1]), n)
            lw, rw = moved[:ll], moved[n - rl:]
            if mode == "median":
                lstat, rstat = _ag_quantile(lw, 0.5, 0, True), _ag_quantile(rw, 0.5, 0, True)
            else:
                red = {"mean": anp.mean, "maximum": anp.max, "minimum": anp.min}[mode]
                lstat, rstat = red(lw, axis=0, keepdims=True), red(rw, axis=0, keepdims=True)
            ones = np.ones((1,) + _raw(moved).shape[1:])
            left = anp.concatenate([lstat] * l, axis=0) if l else ones[:0]
            right = anp.concatenate([rstat] * r, axis=0) if r else ones[:0]
        cur = anp.moveaxis(anp.concatenate([left, moved, right], axis=0), 0, axis)
    return cur


CASES += [
    # block, insert, row_stack
    C("block_1d", f_block_1d, lambda a, b: anp.concatenate([a, b, a]), (R(3), R(2)), np.block),
    C("block_2d", f_block_2d,
      lambda a, b, c, e: anp.concatenate([anp.concatenate([a, b], axis=1),
                                          anp.concatenate([c, e], axis=1)], axis=0),
      (R(2, 3), R(2, 1), R(1, 3), R(1, 1)), np.block, meta={"compiled_only": True}),
    C("block_scalar_fill", f_block_scalar,
      lambda a, s: anp.concatenate([a, s + anp.zeros((1, 3))], axis=0), (R(2, 3), R()), np.block,
      meta={"compiled_only": True}),
    C("insert_flat", f_insert_flat,
      lambda a, v: anp.concatenate([anp.reshape(a, -1)[:2], anp.reshape(v, -1),
                                    anp.reshape(a, -1)[2:]]), (R(2, 3), R(2)), np.insert),
    C("insert_rows", f_insert_rows,
      lambda a, v: anp.concatenate([a[:1], v[None], a[1:3], v[None], a[3:]]), (R(4, 3), R(3)),
      np.insert),
    C("insert_broadcast", f_insert_broadcast,
      lambda a, v: anp.concatenate([a[:, :1], v + anp.zeros((3, 1)), a[:, 1:]], axis=1),
      (R(3, 2), R()), np.insert),
    C("row_stack", f_row_stack, lambda a, b: anp.concatenate([a[None], b[None]]), (R(3), R(3)),
      getattr(np, "row_stack", np.vstack)),
    # np.pad's statistic modes
    C("pad_maximum", f_pad_stat, lambda a, pw, m: _ag_pad_stat(a, pw, m),
      (R(3, 4), Static(((1, 2), (2, 1))), Static("maximum")), np.pad),
    C("pad_minimum_1d", f_pad_stat, lambda a, pw, m: _ag_pad_stat(a, pw, m),
      (R(5), Static((2, 3)), Static("minimum")), np.pad),
    C("pad_mean", f_pad_stat, lambda a, pw, m: _ag_pad_stat(a, pw, m),
      (R(3, 4), Static(2), Static("mean")), np.pad),
    C("pad_median", f_pad_stat, lambda a, pw, m: _ag_pad_stat(a, pw, m),
      (R(4, 3), Static(((1, 1), (2, 0))), Static("median")), np.pad),
    C("pad_median_3d", f_pad_stat, lambda a, pw, m: _ag_pad_stat(a, pw, m),
      (R(2, 3, 3), Static(1), Static("median")), np.pad),
    C("pad_linear_ramp", f_pad_stat, lambda a, pw, m: _ag_pad_stat(a, pw, m),
      (R(3, 4), Static(((2, 1), (1, 3))), Static("linear_ramp")), np.pad),
    C("pad_mean_stat_length", f_pad_stat_length,
      lambda a: _ag_pad_stat(a, ((2, 1), (1, 3)), "mean", ((1, 2), (3, 2))), (R(4, 5),), np.pad),
    C("pad_maximum_stat_length", f_pad_max_length,
      lambda a: _ag_pad_stat(a, 2, "maximum", 2), (R(4, 5),), np.pad),
    C("pad_linear_ramp_end_values", f_pad_ramp,
      lambda a, e: _ag_pad_stat(a, ((1, 2), (3, 1)), "linear_ramp", end_values=e), (R(3, 3), R()),
      np.pad),
]


# -- np.ediff1d and sliding_window_view

def f_ediff1d(x, w):
    return np.sum(np.ediff1d(x) * w)


def f_ediff1d_ends(x, e, b, w):
    return np.sum(np.ediff1d(x, e, b) * w)


def f_ediff1d_to_end_kw(x, e, w):
    return np.sum(np.ediff1d(x, to_end=e) * w)


def f_ediff1d_const_begin(x, w):
    return np.sum(np.ediff1d(x, to_begin=[1.0, -2.0]) * w)


def f_swv(x, window, w):
    return np.sum(sliding_window_view(x, window) * w)


def f_swv_axis(x, window, axis, w):
    return np.sum(np.lib.stride_tricks.sliding_window_view(x, window, axis=axis) * w)


def _ag_ediff1d(x, to_end=None, to_begin=None):
    parts = [] if to_begin is None else [anp.reshape(to_begin, (-1,))]
    parts.append(anp.diff(anp.reshape(x, (-1,))))
    if to_end is not None:
        parts.append(anp.reshape(to_end, (-1,)))
    return anp.concatenate(parts)


def _ag_swv(x, window, axis=None):
    positions = np.arange(np.size(_raw(x))).reshape(np.shape(_raw(x)))
    return anp.reshape(x, (-1,))[sliding_window_view(positions, window, axis=axis)]


CASES += [
    C("ediff1d", f_ediff1d, lambda x: _ag_ediff1d(x), (R(6),), np.ediff1d),
    C("ediff1d_2d", f_ediff1d, lambda x: _ag_ediff1d(x), (R(3, 4),), np.ediff1d),
    C("ediff1d_one_entry", f_ediff1d_ends, lambda x, e, b: _ag_ediff1d(x, e, b), (R(1), R(2), R()),
      np.ediff1d),
    C("ediff1d_ends", f_ediff1d_ends, lambda x, e, b: _ag_ediff1d(x, e, b), (R(2, 3), R(2, 2), R(3)),
      np.ediff1d),
    C("ediff1d_to_end_kw", f_ediff1d_to_end_kw, lambda x, e: _ag_ediff1d(x, to_end=e), (R(5), R(1)),
      np.ediff1d),
    C("ediff1d_const_ends", f_ediff1d_ends, lambda x, e, b: _ag_ediff1d(x, e, b), (R(4), ND(2), ND()),
      np.ediff1d),
    C("ediff1d_const_begin", f_ediff1d_const_begin, lambda x: _ag_ediff1d(x, to_begin=np.array([1.0, -2.0])),
      (R(4),), np.ediff1d),
    C("sliding_window_view_1d", f_swv, lambda x, window: _ag_swv(x, window), (R(7), Static(3)),
      sliding_window_view),
    C("sliding_window_view_2d", f_swv, lambda x, window: _ag_swv(x, window), (R(4, 5), Static((2, 3))),
      sliding_window_view),
    C("sliding_window_view_axis", f_swv_axis, lambda x, window, axis: _ag_swv(x, window, axis),
      (R(5, 4), Static(2), Static(0)), sliding_window_view),
    C("sliding_window_view_axes", f_swv_axis, lambda x, window, axis: _ag_swv(x, window, axis),
      (R(2, 5, 4), Static((3, 2)), Static((-1, 1))), sliding_window_view),
    C("sliding_window_view_repeated_axis", f_swv_axis, lambda x, window, axis: _ag_swv(x, window, axis),
      (R(6, 3), Static((2, 3)), Static((0, 0))), sliding_window_view),
    C("sliding_window_view_whole", f_swv, lambda x, window: _ag_swv(x, window), (R(3, 2), Static((3, 2))),
      sliding_window_view),
]



# -- meshgrid: each output is its (raveled) input broadcast along its axis ('xy' swaps the first two)

def f_meshgrid_xy(x, y, w):
    X, Y = np.meshgrid(x, y)
    return np.sum((X * 2.0 + Y) * w)


def f_meshgrid_ij_sparse(x, y, w):
    X, Y = np.meshgrid(x, y, indexing="ij", sparse=True)
    return np.sum((X - Y * 3.0) * w)


CASES += [
    C("meshgrid_xy", f_meshgrid_xy, lambda x, y: x[None, :] * 2.0 + y[:, None], (R(4), R(3)), np.meshgrid),
    C("meshgrid_ij_sparse", f_meshgrid_ij_sparse, lambda x, y: x[:, None] - y[None, :] * 3.0, (R(4), R(3)),
      np.meshgrid),
]
