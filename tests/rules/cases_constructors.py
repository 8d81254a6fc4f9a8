"""Rule rows for NumPy's constructors with a differentiated value
(srcgrad/rules/numpy/constructors.py): np.full and np.full_like (in the fill
value), np.linspace (in its end points), np.arange (in start and step),
np.bincount (in its weights), np.copy, and the conversions
np.asarray, np.asanyarray, np.ascontiguousarray and np.asfortranarray (of
an array: the identity; of a (nested) list or tuple of arrays: a stack).

autograd has no rule for these, so `ref` writes each with autograd
operations that have one (a broadcast sum, linspace as (1 - t) start +
t stop).
"""
import autograd.numpy as anp
import numpy as np
from rulecase import Case, ND, R, _raw

C = Case


def f_full(v, w):
    return np.sum(np.full((3, 4), v) * w)


def f_full_dtype(v, w):
    return np.sum(np.full((2, 3), v, dtype=v.dtype) * w)


def f_full_like(x, v, w):
    # `x * v` (a Tensor op by op) so that NumPy dispatches full_like to srcgrad:
    # np.full_like(plain_array, tensor) converts the Tensor (see test_silently_wrong.py)
    return np.sum(np.full_like(x * v, v) * w)


def f_linspace(a, b, w):
    return np.sum(np.linspace(a, b, 5) * w)


def f_linspace_axis(a, b, w):
    return np.sum(np.linspace(a, b, 4, axis=1) * w)


def f_linspace_open(a, b, w):
    return np.sum(np.linspace(a, b, 3, endpoint=False, axis=-1) * w)


def f_linspace_one(a, b, w):
    return np.sum(np.linspace(a, b, 1) * w)


def _ag_linspace(a, b, num, endpoint=True, axis=0):
    t = np.linspace(0.0, 1.0, num, endpoint=endpoint)
    nd = np.ndim(np.broadcast_to(_raw(a), np.broadcast_shapes(np.shape(_raw(a)), np.shape(_raw(b))))) + 1
    shape = [1] * nd
    shape[axis % nd] = num
    t = t.reshape(shape)
    return anp.expand_dims(a, axis) * (1.0 - t) + anp.expand_dims(b, axis) * t


def _step(s):
    return 0.3 + 0.1 * np.tanh(s)       # in (0.2, 0.4): np.arange(a, a + 2.05, step) has 6 to 11 points


def f_arange(a, s, w):
    return np.sum(np.arange(a, a + 2.05, _step(s)) * w)


def f_arange_start(a, w):
    return np.sum(np.arange(a, 3.0, 0.5) * w)      # (a from a normal draw: the count is 7 to 13 or so)


def _ag_arange(a, start, stop, step):
    n = int(np.ceil((_raw(stop) - _raw(start)) / _raw(step)))
    return a * 0.0 + start + anp.arange(n) * step


_BINS = np.array([0, 2, 0, 3, 2])


def f_bincount(v, w):
    return np.sum(np.bincount(_BINS, weights=v, minlength=5) * w)


def f_copy(x, w):
    return np.sum(np.copy(x) * w)


def f_asarray(x, w):
    return np.sum(np.asarray(x) * w)


def f_asarray_list(x, y, w):
    return np.sum(np.asarray([x, y, x]) * w)


def f_asarray_tuple_scalars(a, b, w):
    return np.sum(np.asarray((a, 2.0 * b, a * b)) * w)


def f_asarray_nested(x, y, w):
    return np.sum(np.asarray([[x, y], [y, 2.0 * x]]) * w)


def f_asarray_dtype(x, w):
    return np.sum(np.asarray(x, dtype=x.dtype) * w)


def f_asanyarray(x, w):
    return np.sum(np.asanyarray(x) * w)


def f_asanyarray_list(x, y, w):
    return np.sum(np.asanyarray([x, y]) * w)


def f_ascontiguousarray(x, w):
    return np.sum(np.ascontiguousarray(x.T) * w)


def f_ascontiguousarray_list(x, y, w):
    return np.sum(np.ascontiguousarray([x, y]) * w)


def f_asfortranarray(x, w):
    return np.sum(np.asfortranarray(x) * w)


def f_asfortranarray_list(x, y, w):
    return np.sum(np.asfortranarray((y, x)) * w)


CASES = [
    # constructors with a differentiated value
    # np.full(shape, tensor) reads the Tensor with np.asarray (no NumPy dispatch hook,
    # as np.array): compiled code only
    C("full_scalar", f_full, lambda v: v + anp.zeros((3, 4)), (R(),), np.full,
      meta={"compiled_only": True}),
    C("full_row", f_full, lambda v: v + anp.zeros((3, 4)), (R(4),), np.full,
      meta={"compiled_only": True}),
    C("full_dtype", f_full_dtype, lambda v: v + anp.zeros((2, 3)), (R(),), np.full,
      meta={"compiled_only": True}),
    C("full_like", f_full_like, lambda x, v: v + anp.zeros(x.shape), (ND(3, 4), R()), np.full_like),
    C("full_like_row", f_full_like, lambda x, v: v + anp.zeros(x.shape), (ND(2, 3), R(3)),
      np.full_like),
    C("linspace_scalars", f_linspace, lambda a, b: _ag_linspace(a, b, 5), (R(), R()), np.linspace),
    C("linspace_arrays", f_linspace, lambda a, b: _ag_linspace(a, b, 5), (R(3), R(2, 1)),
      np.linspace),
    C("linspace_axis1", f_linspace_axis, lambda a, b: _ag_linspace(a, b, 4, axis=1), (R(3), R(3)),
      np.linspace),
    C("linspace_open_last", f_linspace_open,
      lambda a, b: _ag_linspace(a, b, 3, endpoint=False, axis=-1), (R(2), R()), np.linspace),
    C("linspace_one", f_linspace_one, lambda a, b: _ag_linspace(a, b, 1), (R(), R()), np.linspace),
    C("arange_start_step", f_arange,
      lambda a, s: _ag_arange(a, a, a + 2.05, 0.3 + 0.1 * anp.tanh(s)), (R(), R()), np.arange),
    C("arange_start", f_arange_start, lambda a: _ag_arange(a, a, 3.0, 0.5), (R(),), np.arange),
    C("bincount_weights", f_bincount,
      lambda v: anp.dot(np.asarray(_BINS[:, None] == np.arange(5), dtype=float).T, v), (R(5),), np.bincount),
    C("copy", f_copy, lambda x: x * 1.0, (R(3, 4),), np.copy),
    # conversions: an array passes through, a (nested) list or tuple is stacked
    C("asarray", f_asarray, lambda x: x * 1.0, (R(3, 4),), np.asarray),
    C("asarray_0d", f_asarray, lambda x: x * 1.0, (R(),), np.asarray),
    C("asarray_list", f_asarray_list, lambda x, y: anp.stack([x, y, x]), (R(3), R(3)), np.asarray),
    C("asarray_tuple_scalars", f_asarray_tuple_scalars, lambda a, b: anp.stack([a, 2.0 * b, a * b]),
      (R(), R()), np.asarray),
    # a nested list of Tensors: op by op, np.asarray (and np.array) of it records no
    # entry yet (tape.gradient returns None): compiled code only
    C("asarray_nested", f_asarray_nested,
      lambda x, y: anp.stack([anp.stack([x, y]), anp.stack([y, 2.0 * x])]), (R(2, 3), R(2, 3)),
      np.asarray, meta={"compiled_only": True}),
    C("asarray_dtype", f_asarray_dtype, lambda x: x * 1.0, (R(2, 3),), np.asarray),
    C("asanyarray", f_asanyarray, lambda x: x * 1.0, (R(3, 4),), np.asanyarray),
    C("asanyarray_list", f_asanyarray_list, lambda x, y: anp.stack([x, y]), (R(2, 3), R(2, 3)),
      np.asanyarray),
    C("ascontiguousarray_transposed", f_ascontiguousarray, lambda x: anp.transpose(x), (R(3, 4),),
      (np.ascontiguousarray, np.transpose)),
    C("ascontiguousarray_list", f_ascontiguousarray_list, lambda x, y: anp.stack([x, y]), (R(4), R(4)),
      np.ascontiguousarray),
    C("asfortranarray", f_asfortranarray, lambda x: x * 1.0, (R(3, 4),), np.asfortranarray),
    C("asfortranarray_list", f_asfortranarray_list, lambda x, y: anp.stack([y, x]), (R(3), R(3)),
      np.asfortranarray),
]
