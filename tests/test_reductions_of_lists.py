"""Reductions of lists of Tensors op by op (np.mean([a, 2 * b]),
np.max([a, b, 0.3])): NumPy's dispatch sees the list, not the Tensors in
it, so it converted them (a cut path: a wrong gradient with a warning on a
tape, an error from op_by_op.jvp). While a tape records, the tape's
wrapper of these functions records them with their rules
(tape/scipy_calls.py NUMPY_NON_DISPATCHING). Checked against central
differences, autograd and the compiled derivatives."""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from srcgrad import op_by_op


def mean_of_list(v):
    return np.mean([v[0], v[1] * 2.0, v[2]]) * v[0]


def sum_of_list(v):
    return np.sum(np.sum([v, v * v], axis=0) * np.array([1.0, 2.0, 3.0]))


def max_min_of_list(v):
    return np.max([v[0], v[1], 0.3]) + np.min([v[2], v[0] ** 2])


def prod_of_list(v):
    return np.prod([v[0], v[1], v[2]])


FUNCTIONS = [mean_of_list, sum_of_list, max_min_of_list, prod_of_list]
X = np.array([0.5, 0.7, 1.3])


def _central(f, x, t, h=1e-6):
    return (f(x + h * t) - f(x - h * t)) / (2 * h)


def _autograd(f):
    import test_reductions_of_lists as me
    saved = me.np
    me.np = anp
    try:
        return autograd.grad(f)(X)
    finally:
        me.np = saved


@pytest.mark.parametrize("f", FUNCTIONS, ids=[f.__name__ for f in FUNCTIONS])
def test_reductions_of_lists_of_tensors(f):
    expected = np.array([_central(f, X, e) for e in np.eye(3)])
    np.testing.assert_allclose(_autograd(f), expected, rtol=1e-6, atol=1e-8)
    xt = sg.constant(X)
    with sg.GradientTape() as tape:
        tape.watch(xt)
        out = f(xt)
    taped = tape.gradient(out, xt).numpy()
    np.testing.assert_allclose(taped, expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(taped, sg.grad(f)(X), rtol=1e-13, atol=1e-14)
    t = np.array([1.0, -0.5, 0.25])
    tangent = op_by_op.jvp(f, [X], [t])[1]
    np.testing.assert_allclose(tangent, expected @ t, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tangent, sg.jvp(f, (X,), (t,))[1], rtol=1e-13, atol=1e-14)
