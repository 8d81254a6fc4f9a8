"""Forward mode op by op through NumPy calls on nested lists of Tensors:
`np.array([[1.0, 0.0], [c, -s]])` (rotation matrices built entry by entry,
as in ADBench's hand tracking). The accumulator used to see only the top
level of a list argument, so a matrix built from rows of Tensors got no
tangent: a silent zero. Checked against central differences, the compiled
JVP and autograd."""
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from srcgrad import op_by_op


def rotation(v):
    c, s = np.cos(v[0]), np.sin(v[0])
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) * v[1]


def nested_mixed(v):
    return np.array([[1.0, v[2] * v[0]], [np.cos(v[0]), -v[1]]])


def three_levels(v):
    return np.array([[[v[0], 1.0], [v[1] ** 2, v[2]]], [[0.0, v[0] * v[1]], [2.0, 3.0]]])


def stacked_rows(v):
    return np.stack([np.array([v[0], v[1]]), np.array([[v[2], 1.0]])[0]])


FUNCTIONS = [rotation, nested_mixed, three_levels, stacked_rows]
X = np.array([0.3, -0.7, 1.1])
T = np.array([1.0, 0.5, -0.2])


def _central(f, x, t, h=1e-6):
    return (f(x + h * t) - f(x - h * t)) / (2 * h)


def _autograd_jvp(f, x, t):
    import test_forward_nested_lists as me
    saved = me.np
    me.np = anp
    try:
        return autograd.make_jvp(f)(x)(t)[1]
    finally:
        me.np = saved


@pytest.mark.parametrize("f", FUNCTIONS, ids=[f.__name__ for f in FUNCTIONS])
def test_op_by_op_jvp_of_nested_lists(f):
    expected = _central(f, X, T)
    np.testing.assert_allclose(_autograd_jvp(f, X, T), expected, rtol=1e-7, atol=1e-8)
    value, tangent = op_by_op.jvp(f, [X], [T])
    np.testing.assert_array_equal(value, f(X))
    np.testing.assert_allclose(tangent, expected, rtol=1e-7, atol=1e-8)
    compiled = sg.jvp(f, (X,), (T,))[1]
    np.testing.assert_allclose(tangent, compiled, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("f", FUNCTIONS, ids=[f.__name__ for f in FUNCTIONS])
def test_forward_accumulator_of_nested_lists(f):
    x = sg.constant(X)
    with sg.ForwardAccumulator(x, sg.constant(T)) as acc:
        y = f(x)
    np.testing.assert_allclose(acc.jvp(y).numpy(), _central(f, X, T), rtol=1e-7, atol=1e-8)


def test_jvp_falling_back_op_by_op_with_nested_lists():
    """A call sg.jvp cannot compile (*args of a list) runs op by op: the
    tangents of its rotation matrices are right."""
    extra = [np.array([2.0, 1.0])]

    def model(v, *scale):
        return rotation(v) * scale[0][0]

    def caller(v):
        return model(v, *extra)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tangent = sg.jvp(caller, (X,), (T,))[1]
    np.testing.assert_allclose(tangent, _central(caller, X, T), rtol=1e-7, atol=1e-8)
