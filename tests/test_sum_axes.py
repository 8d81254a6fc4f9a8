"""broadcast.sum_axes: the sums of unbroadcast and unbroadcast_b as a
matrix-vector product with ones where NumPy's reduction takes its slow
strided loop (C-contiguous float64 or complex128 arrays of at least
FAST_SUM_SIZE elements, adjacent reduced axes). Checked: the same shape and
dtype as np.add.reduce and the same values to rounding, for leading,
middle, trailing and all axes, with and without keepdims; every other
array (small, float32, integer, non-contiguous, axes apart) takes NumPy's
reduction itself (the same bits); and gradients whose unbroadcast sums such
arrays, plain and batched, against autograd and central differences."""
import itertools

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad
from srcgrad.rules.helpers.broadcast import FAST_SUM_SIZE, sum_axes

SHAPES = [(4000, 2), (2, 3000, 3), (3, 700, 2, 2), (5000,), (2, 2, 1500)]


def _cases():
    for shape in SHAPES:
        for r in range(1, len(shape) + 1):
            for axes in itertools.combinations(range(len(shape)), r):
                if axes[-1] - axes[0] == len(axes) - 1:
                    yield shape, axes


@pytest.mark.parametrize("shape, axes", list(_cases()))
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_matches_numpy(shape, axes, keepdims, dtype):
    rng = np.random.default_rng(len(shape) * 10 + len(axes))
    g = rng.standard_normal(shape).astype(dtype)
    if dtype is np.complex128:
        g = g + 1j * rng.standard_normal(shape)
    assert g.size >= FAST_SUM_SIZE
    expected = np.add.reduce(g, axis=axes, keepdims=keepdims)
    out = sum_axes(g, axes, keepdims)
    assert out.shape == expected.shape and out.dtype == expected.dtype
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12 * np.abs(g).sum())


def test_other_arrays_take_numpy_reduction():
    rng = np.random.default_rng(0)
    big = rng.standard_normal((3000, 4))
    cases = [(big[:100], (0,)), (big.astype(np.float32), (0,)), ((big * 100).astype(np.int64), (0,)),
             (big.T, (1,)), (rng.standard_normal((40, 30, 20)), (0, 2))]
    for g, axes in cases:
        out = sum_axes(g, axes)
        expected = np.add.reduce(g, axis=axes)
        assert out.dtype == expected.dtype
        np.testing.assert_array_equal(out, expected)


def projected(W, b, x):
    # b (1, 2) broadcast over 3000 rows, c (3000, 1) over 2 columns: unbroadcast sums both ways
    c = np.tanh(x[:, :1])
    return np.sum(np.sin(x @ W + b) * c)


def _autograd_of(f):
    return type(f)(f.__code__, dict(f.__globals__, np=anp), f.__name__)


def test_gradients_and_jacobians():
    rng = np.random.default_rng(3)
    W, b, x = rng.standard_normal((3, 2)), rng.standard_normal((1, 2)), rng.standard_normal((3000, 3))
    grads = sg.grad(projected, wrt=(0, 1, 2))(W, b, x)
    expected = autograd.grad(_autograd_of(projected), argnum=(0, 1, 2))(W, b, x)
    for g, e in zip(grads, expected):
        check_close(g, e, rtol=1e-10, atol=1e-10)
    check_close(grads[1], numerical_grad(lambda v: projected(W, v, x), b))
    # batched: the Jacobian of the per-column sums (two rows) sums (2, 3000, 2) stacks
    def columns(W, b, x):
        return np.sum(np.sin(x @ W + b) * np.tanh(x[:, :1]), axis=0)
    jW, jb = sg.jacobian(columns, wrt=(0, 1))(W, b, x)
    eW = autograd.jacobian(_autograd_of(columns), argnum=0)(W, b, x)
    eb = autograd.jacobian(_autograd_of(columns), argnum=1)(W, b, x)
    check_close(jW, eW, rtol=1e-10, atol=1e-10)
    check_close(jb, eb, rtol=1e-10, atol=1e-10)
