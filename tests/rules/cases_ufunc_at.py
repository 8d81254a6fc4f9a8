"""Rule rows for the pure forms of np.add.at and np.subtract.at
(srcgrad/rules/helpers/broadcast.py add_at, subtract_at, and scatter_at,
the tangent of their `b`; rules in srcgrad/rules/numpy/indexing.py):
repeated indices accumulate, `b` broadcasts to the shape of `a[indices]`.

autograd's arrays have no ufunc.at, so `ref` writes the scatter-add as a
product with a 0/1 matrix S (S @ b adds b's entries at their indices).
"""
import autograd.numpy as anp
import numpy as np
from rulecase import Case, ND, R

from srcgrad.rules.helpers.broadcast import add_at, scatter_at, subtract_at

C = Case

IDX = np.array([0, 2, 0, 0])
S = (IDX == np.arange(3)[:, None]).astype(float)     # (3, 4): S[j, k] = 1 where IDX[k] == j
ROWS, COLS = np.array([1, 1, 2]), np.array([0, 3, 0])
S2 = (ROWS * 4 + COLS == np.arange(12)[:, None]).astype(float)     # (12, 3), the raveled (rows, cols)


def f_add_at(a, b, w):
    return np.sum(add_at(a, IDX, b) * w)


def f_add_at_rows_broadcast(a, b, w):
    return np.sum(add_at(a, IDX[:3], b) * w)


def f_add_at_pairs(a, b, w):
    return np.sum(add_at(a, (ROWS, COLS), b) * w)


def f_subtract_at(a, b, w):
    return np.sum(subtract_at(a, IDX, b) * w)


def f_subtract_at_scalar(a, b, w):
    return np.sum(subtract_at(a, [1, 1], b) * w)


def f_scatter_at(g, x, w):
    return np.sum(scatter_at(g, x, IDX) * w)


CASES = [
    C("add_at_repeated", f_add_at, lambda a, b: a + anp.dot(S, b), (R(3), R(4)), add_at),
    # a (3, 4), rows [0, 2, 0]: b (4,) broadcast along the rows it is added to
    C("add_at_rows_broadcast", f_add_at_rows_broadcast,
      lambda a, b: a + anp.dot(S[:, :3], anp.ones((3, 1))) * b, (R(3, 4), R(4)), add_at),
    C("add_at_pairs", f_add_at_pairs, lambda a, b: a + anp.reshape(anp.dot(S2, b), (3, 4)), (R(3, 4), R(3)),
      add_at),
    C("subtract_at_repeated", f_subtract_at, lambda a, b: a - anp.dot(S, b), (R(3), R(4)), subtract_at),
    C("subtract_at_scalar", f_subtract_at_scalar, lambda a, b: a - np.array([0.0, 2.0, 0.0]) * b, (R(3), R(1)),
      subtract_at),
    C("scatter_at", f_scatter_at, lambda g, x: anp.dot(S, g), (R(4), ND(3)), scatter_at),
]
