"""Rule rows for srcgrad's container and element-assignment primitives and
Python's builtins (srcgrad/rules/python/containers.py, builtins.py): what
the compiler lowers `xs.append(v)`, `x[i] = v`, `list(x)`, `sum(xs)` and
`x.astype(...)` to, `sorted`, and `sequence_as_array` (a list or tuple
read whole by a NumPy function: `np.square(p)`). The case functions call
the primitives directly, so the op-by-op tape records them as well (except
sequence_as_array: its np.asarray is srcgrad's own call, which a tape does
not record, so its rows are compiled only; the compiler inserts it)."""
import builtins

import autograd.numpy as anp
import numpy as np

from rulecase import Case, R, _raw
from srcgrad.rules.python.containers import (array_setitem, as_dict, as_list, as_tuple, cast, list_append,
                                             list_extend, seq_repeat, sequence_as_array, setitem)


def f_setitem_row(x, v, w):
    return np.sum(setitem(x, 1, v) * w)


def f_setitem_slice(x, v, w):
    return np.sum(setitem(x, slice(0, 2), v) * w)


def f_list_append(x, y, w):
    return np.sum(list_append([x], y)[1] * w + list_append([x], y)[0] * w)


def f_list_extend(x, y, w):
    return np.sum(list_extend([x], [y, x])[2] * w + list_extend([y], [x])[0] * w)


def f_seq_repeat(x, y, w):
    r = seq_repeat([x, y], 2)
    return np.sum((r[0] + r[2] * 2.0 + r[3]) * w)


def f_as_list(x, w):
    return np.sum(as_list(x)[1] * w)


def f_as_tuple(x, y, w):
    return np.sum(as_tuple([x, y])[1] * w + as_tuple([x, y])[0] * w)


def f_as_dict(x, y, w):
    d = as_dict({"a": x, "b": y})
    return np.sum(d["a"] * w + d["b"] * w * 2.0)


def f_builtin_sum(x, y, w):
    return np.sum(sum([x, y, x]) * w)


def f_cast(x, w):
    return np.sum(cast(x, np.float64) * w)


def _set_row(x, v):
    mask = np.ones(x.shape)
    mask[1] = 0.0
    onehot = 1.0 - mask
    return x * mask + v * onehot


def _set_first_two(x, v):
    mask = np.ones(x.shape)
    mask[:2] = 0.0
    pad = anp.concatenate([v, anp.zeros((x.shape[0] - 2,) + x.shape[1:])], axis=0)
    return x * mask + pad


CASES = [
    Case("setitem_row", f_setitem_row, _set_row, (R(3, 4), R(4)), (setitem, array_setitem)),
    Case("setitem_row_broadcast", f_setitem_row, _set_row, (R(3, 4), R()), (setitem, array_setitem)),
    Case("setitem_slice", f_setitem_slice, _set_first_two, (R(3, 4), R(2, 4)), (setitem, array_setitem)),
    Case("list_append", f_list_append, lambda x, y: x + y, (R(3), R(3)), list_append),
    Case("list_extend", f_list_extend, lambda x, y: x + y, (R(3), R(3)), list_extend),
    Case("seq_repeat", f_seq_repeat, lambda x, y: 3.0 * x + y, (R(3), R(3)), seq_repeat),
    Case("as_list_rows", f_as_list, lambda x: x[1], (R(3, 4),), as_list),
    Case("as_tuple", f_as_tuple, lambda x, y: y + x, (R(4), R(4)), as_tuple),
    Case("as_dict", f_as_dict, lambda x, y: x + 2.0 * y, (R(4), R(4)), as_dict),
    Case("builtin_sum_broadcast", f_builtin_sum, lambda x, y: 2 * x + y, (R(3, 4), R(4)), builtins.sum),
    Case("cast", f_cast, lambda x: x, (R(3, 4),), cast),
]


# --------------------------------------------------------- the builtin sorted

C = Case


def f_sorted_list(x, w):
    return np.sum(np.stack(sorted([x[0], x[1], x[2], x[3]])) * w)


def f_sorted_reverse(x, w):
    return np.sum(np.stack(sorted([x[2], x[0], x[1]], reverse=True)) * w)


def f_sorted_array(x, w):
    return np.sum(np.stack(sorted(x)) * w)


def f_sorted_key(x, w):
    return np.sum(np.stack(sorted(x, key=abs)) * w)


def f_sorted_mixed(x, w):
    ys = sorted([x[0], 0.25, x[1], -0.5])
    return ys[0] * w[0] + ys[1] * w[1] + ys[2] * w[2] + ys[3] * w[3]


def f_sequence_as_array_list(x, y, w):
    return np.sum(sequence_as_array([x, 2.0 * y, x]) * w)


def f_sequence_as_array_tuple(a, b, w):
    return np.sum(sequence_as_array((a * b, b)) * w)


def f_sequence_as_array_nested(x, y, w):
    return np.sum(sequence_as_array([[x, y], (y, x)]) * w)


def f_sequence_as_array_array(x, w):
    return np.sum(sequence_as_array(x) * w)


CO = {"compiled_only": True}


def _ag_sorted(x, key=None, reverse=False):
    v = _raw(x)
    order = sorted(range(len(v)), key=lambda i: (key or (lambda e: e))(v[i]), reverse=reverse)
    return x[np.array(order)]


def _ag_sorted_mixed(x):
    v = anp.concatenate([x[:1], np.array([0.25]), x[1:2], np.array([-0.5])])
    return _ag_sorted(v)


CASES += [
    # the builtin sorted
    C("sorted_list", f_sorted_list, lambda x: _ag_sorted(x), (R(4),), builtins.sorted),
    C("sorted_reverse", f_sorted_reverse, lambda x: _ag_sorted(x[np.array([2, 0, 1])], reverse=True),
      (R(3),), builtins.sorted),
    C("sorted_array", f_sorted_array, lambda x: _ag_sorted(x), (R(5),), builtins.sorted),
    C("sorted_key_abs", f_sorted_key, lambda x: _ag_sorted(x, key=abs), (R(5),), builtins.sorted),
    C("sorted_mixed_floats", f_sorted_mixed, _ag_sorted_mixed, (R(2),), builtins.sorted),
    # sequence_as_array: a list or tuple stacked (np.asarray), anything else as is
    C("sequence_as_array_list", f_sequence_as_array_list, lambda x, y: anp.stack([x, 2.0 * y, x]),
      (R(3), R(3)), sequence_as_array, meta=CO),
    C("sequence_as_array_tuple_scalars", f_sequence_as_array_tuple, lambda a, b: anp.stack([a * b, b]),
      (R(), R()), sequence_as_array, meta=CO),
    C("sequence_as_array_nested", f_sequence_as_array_nested,
      lambda x, y: anp.stack([anp.stack([x, y]), anp.stack([y, x])]), (R(4), R(4)), sequence_as_array,
      meta=CO),
    C("sequence_as_array_array", f_sequence_as_array_array, lambda x: x * 1.0, (R(3, 4),),
      sequence_as_array, meta=CO),
]
