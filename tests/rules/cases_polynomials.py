"""Rule-test rows for np.polyval and np.vander
(srcgrad/rules/numpy/polynomials.py): polyval in the coefficients and in x
(x of any shape, 0-d; a list of coefficients; 2-d coefficients whose rows
broadcast against x; a constant polynomial), vander with the default N, a
smaller and a larger N, increasing powers, and entries at 0 (where x ** 0's
derivative would be NaN: the rules build powers by products).

autograd has no rule for either: `ref` is Horner's scheme with autograd
operations (NumPy's own polyval), and vander's columns as repeated
products, stacked.
"""
import autograd.numpy as anp
import numpy as np
from rulecase import Case, ND, R

C = Case

_ZERO_AT_1 = np.array([1.0, 0.0, 1.0, 1.0])


def f_polyval(p, x, w):
    return np.sum(np.polyval(p, x) * w)


def f_polyval_list(a, b, x, w):
    return np.sum(np.polyval([a, 2.0, b, a * b], x) * w)


def f_polyval_at_zero(p, x, w):
    return np.sum(np.polyval(p, x * _ZERO_AT_1) * w)


def f_vander(x, w):
    return np.sum(np.vander(x) * w)


def f_vander_n(x, w):
    return np.sum(np.vander(x, 3) * w)


def f_vander_wide_increasing(x, w):
    return np.sum(np.vander(x, N=6, increasing=True) * w)


def f_vander_one(x, w):
    return np.sum(np.vander(x, 1) * w)


def f_vander_at_zero(x, w):
    return np.sum(np.vander(x * _ZERO_AT_1, 4, True) * w)


def _ag_polyval(p, x):
    y = 0.0
    for i in range(len(p)):
        y = y * x + p[i]
    return y + anp.zeros(np.shape(x))


def _ag_vander(x, N=None, increasing=False):
    n = x.shape[0] if N is None else N
    columns, power = [], anp.ones(x.shape)
    for _ in range(n):
        columns.append(power)
        power = power * x
    table = anp.stack(columns, axis=1)
    return table if increasing else table[:, ::-1]


CASES = [
    C("polyval", f_polyval, _ag_polyval, (R(4), R(3, 5)), np.polyval),
    C("polyval_0d_x", f_polyval, _ag_polyval, (R(3), R()), np.polyval),
    C("polyval_const_p", f_polyval, _ag_polyval, (ND(5), R(6)), np.polyval),
    C("polyval_const_x", f_polyval, _ag_polyval, (R(4), ND(2, 3)), np.polyval),
    C("polyval_degree_0", f_polyval, _ag_polyval, (R(1), R(4)), np.polyval),
    C("polyval_2d_p", f_polyval, _ag_polyval, (R(3, 4), R(2, 4)), np.polyval),
    C("polyval_list_p", f_polyval_list, lambda a, b, x: _ag_polyval([a, 2.0, b, a * b], x), (R(), R(), R(5)),
      (np.polyval, np.multiply)),
    C("polyval_at_zero", f_polyval_at_zero, lambda p, x: _ag_polyval(p, x * _ZERO_AT_1), (R(3), R(4)),
      (np.polyval, np.multiply)),
    C("vander", f_vander, _ag_vander, (R(4),), np.vander),
    C("vander_n", f_vander_n, lambda x: _ag_vander(x, 3), (R(5),), np.vander),
    C("vander_wide_increasing", f_vander_wide_increasing, lambda x: _ag_vander(x, 6, True), (R(3),),
      np.vander),
    C("vander_one_column", f_vander_one, lambda x: _ag_vander(x, 1), (R(3),), np.vander),
    C("vander_at_zero", f_vander_at_zero, lambda x: _ag_vander(x * _ZERO_AT_1, 4, True), (R(4),),
      (np.vander, np.multiply)),
]
