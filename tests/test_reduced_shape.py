"""A reduction read only for its shape (the mean of a row sum, the loss's
`np.mean(np.sum(y * log_p, axis=1))`): the reverse sweep reads the shape
from the reduced operand's source (helpers.reduced_shape), and sg.grad's
code computes neither the reduction nor what only it read. Checked
against central differences and autograd, for each axis and keepdims,
with axes of length 1 in either order of calls, through sg.grad, a tape,
nested use in a Hessian, and (in tests/jit) sg.jit."""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad, numpy_swapped
from srcgrad.rules.helpers import broadcast


def mean_of_rows(p, y):
    logp = p - np.log(np.sum(np.exp(p), axis=1, keepdims=True))
    return -np.mean(np.sum(y * logp, axis=1))


def mean_of_cols(p, y):
    return np.mean(np.sum(y * np.tanh(p), axis=0)) * 3.0


def mean_keepdims(p, y):
    return np.mean(np.sum(y * np.sin(p), axis=-1, keepdims=True))


def mean_of_max(p, y):
    return np.mean(np.max(y * p * p, axis=1))


CASES = [mean_of_rows, mean_of_cols, mean_keepdims, mean_of_max]
SHAPES = [[(5, 4), (1, 4)], [(1, 4), (5, 4)], [(5, 1), (3, 6)]]


def _check(f, p, y):
    got = sg.grad(f)(p, y)
    with numpy_swapped(__name__, anp):
        ref = autograd.grad(f)(p, y)
    check_close(got, ref, rtol=1e-10, atol=1e-12)
    check_close(got, numerical_grad(lambda v: f(v, y), p), rtol=1e-5, atol=1e-7)
    return got


@pytest.mark.parametrize("f", CASES)
@pytest.mark.parametrize("shapes", SHAPES)
def test_gradients_in_both_orders_of_shapes(f, shapes):
    rng = np.random.default_rng(11)
    for shape in shapes:
        p, y = rng.normal(size=shape), rng.uniform(0.1, 1.0, size=shape)
        _check(f, p, y)


def test_the_reduction_is_not_computed():
    rng = np.random.default_rng(0)
    p, y = rng.normal(size=(6, 3)), rng.uniform(size=(6, 3))
    code = sg.source(mean_of_rows, args=(p, y))
    forward = code.split("# Reverse sweep")[0]
    assert "reduced_shape(y, 1, False)" in code, code
    assert "y * " not in forward and "np.sum(mul" not in forward, code


def test_on_a_tape_and_through_the_split_sweeps():
    rng = np.random.default_rng(1)
    p, y = rng.normal(size=(4, 5)), rng.uniform(size=(4, 5))
    f = sg.function(mean_of_rows)
    v = sg.Variable(p)
    with sg.GradientTape(persistent=True) as tape:
        loss = f(v, y)
    first = tape.gradient(loss, v).numpy()
    check_close(first, tape.gradient(loss, v).numpy(), rtol=0, atol=0)
    check_close(first, sg.grad(mean_of_rows)(p, y), rtol=1e-12, atol=1e-14)
    check_close(float(loss.numpy()), mean_of_rows(p, y), rtol=1e-14, atol=0)


def test_hessian_of_the_loss():
    rng = np.random.default_rng(2)
    p, y = rng.normal(size=(3, 4)), rng.uniform(size=(3, 4))
    h = sg.hessian(mean_of_rows)(p, y).reshape(12, 12)
    with numpy_swapped(__name__, anp):
        ref = autograd.hessian(mean_of_rows)(p, y).reshape(12, 12)
    check_close(h, ref, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("shape, axis, keepdims", [
    ((4, 3), 1, False), ((4, 3), 0, True), ((2, 3, 5), -1, False), ((2, 3, 5), 1, True), ((7,), 0, False)])
def test_reduced_shape_is_the_reductions(shape, axis, keepdims):
    x = np.ones(shape, dtype=np.float32)
    want = np.sum(x, axis=axis, keepdims=keepdims)
    for arg in (x, sg.runtime.ShapeOf(x)):
        got = broadcast.reduced_shape(arg, axis, keepdims)
        assert got.shape == np.shape(want) and got.size == np.size(want) and got.dtype == np.float32
