"""sg.jit runs tanh, arctan, sinh and cosh of large float arrays through
NumPy's own SIMD loops (twins.vector_ufunc, called from Numba's object
mode): the same values as NumPy's bit for bit, Numba's compiled ufunc for
small arrays and numbers, and gradients equal to sg.grad's in CPython and
to autograd's, for every ufunc of lower.VECTOR_UFUNCS, float64 and float32,
1-d, 2-d and non-contiguous arrays (next to exp, log, expm1 and log1p,
which stay Numba's)."""
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

pytest.importorskip("numba")

import srcgrad as sg  # noqa: E402
from srcgrad.jit import lower, twins  # noqa: E402

from gradcheck import check_close, numpy_swapped  # noqa: E402

jit_api = __import__("importlib").import_module("srcgrad.jit.api")


def all_ufuncs(x):
    """Every ufunc of VECTOR_UFUNCS, each of its result read."""
    a = np.tanh(x) + np.arctan(x) + np.sinh(0.5 * x)
    b = np.cosh(0.3 * x) + np.exp(0.2 * x) + np.expm1(0.1 * x)
    c = np.log(1.5 + x * x) + np.log1p(x * x)
    return a * b + c


def all_ufuncs_loss(x):
    return np.sum(all_ufuncs(x) * all_ufuncs(x[::-1]))


@pytest.fixture(scope="module")
def jitted():
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)       # (compiled by Numba, not in CPython)
        return sg.jit(all_ufuncs), sg.jit(sg.grad(all_ufuncs_loss))


def test_the_lowered_code_calls_the_twin():
    assert set(lower.VECTOR_UFUNCS) == set(twins.VECTOR_FROM)
    rng = np.random.default_rng(0)
    src = jit_api.lowered_source(all_ufuncs_loss, (0,), (rng.standard_normal(300),))
    assert src.count(lower.VECTOR_NAME + "(") >= len(lower.VECTOR_UFUNCS)
    assert "np.tanh(" not in src and "np.exp(" in src


@pytest.mark.parametrize("shape", [(3,), (600,), (40, 30), (7, 5)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_values_are_numpys(jitted, shape, dtype):
    value, _ = jitted
    rng = np.random.default_rng(1)
    x = rng.uniform(-2.0, 2.0, shape).astype(dtype)
    for arg in (x, x.T, x[..., ::2]):          # (contiguous, transposed, strided)
        got = value(arg)
        assert got.shape == arg.shape
        # (Numba computes 0.5 * x of a float32 x in float64, NumPy in float32: sg.jit's types are Numba's)
        np.testing.assert_allclose(got, all_ufuncs(arg), rtol=1e-5 if dtype == np.float32 else 1e-13)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_twin_gives_numpys_values_bit_for_bit(dtype):
    numba = pytest.importorskip("numba")
    jit_api._numba()
    x = np.random.default_rng(2).uniform(0.1, 2.0, (30, 40)).astype(dtype)
    for name in lower.VECTOR_UFUNCS:
        kernel = numba.njit(eval("lambda x: vector_ufunc(x, %r)" % name, {"vector_ufunc": twins.vector_ufunc}))
        for arg in (x, x.T, x[:, ::2], x[:3, :4]):
            got = kernel(arg)
            assert got.dtype == dtype and got.flags.c_contiguous, name
            want = getattr(np, name)(arg)
            if arg.size >= twins.VECTOR_FROM[name]:
                np.testing.assert_array_equal(got, want, err_msg=name)      # (NumPy's own loop)
            else:
                np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-14, err_msg=name)


@pytest.mark.parametrize("n", [5, 200, 700])
def test_gradients_match_cpython_and_autograd(jitted, n):
    _, grad = jitted
    x = np.random.default_rng(n).uniform(-1.5, 1.5, n)
    with numpy_swapped(__name__, anp):
        want = autograd.grad(all_ufuncs_loss)(x)
    check_close(sg.grad(all_ufuncs_loss)(x), want, rtol=1e-12, atol=1e-12)
    check_close(grad(x), want, rtol=1e-12, atol=1e-12)


def test_numbers_and_small_arrays_stay_compiled():
    numba = pytest.importorskip("numba")
    jit_api._numba()

    @numba.njit
    def calls(x, v):
        return twins.vector_ufunc(x, "tanh"), twins.vector_ufunc(v, "cosh")

    t, e = calls(0.5, np.arange(3.0))
    assert t == pytest.approx(np.tanh(0.5), rel=1e-15)
    np.testing.assert_allclose(e, np.cosh(np.arange(3.0)), rtol=1e-15)
    t, e = calls(np.array(0.5), np.array([[1.0 + 2.0j]]))       # (0-d and complex arrays: Numba's own)
    assert np.shape(t) == () and float(t) == pytest.approx(np.tanh(0.5), rel=1e-15)
    np.testing.assert_allclose(e, np.cosh([[1.0 + 2.0j]]), rtol=1e-14)
