"""The same gradient on NumPy, Dask and CuPy arrays (docs/arrays.md).

Each program of programs.py is differentiated with sg.grad on NumPy inputs
and on the same values as Dask arrays (chunked, so reductions and products
cross chunks) and CuPy arrays (skipped without a GPU). On Dask nothing is
computed inside the call (the scheduler refuses: a hidden conversion to
NumPy would compute), the gradient is a Dask array, and its computed value
equals NumPy's gradient.
"""
import numpy as np
import pytest

import srcgrad as sg
import array_programs as P

RNG = np.random.default_rng(19)


def _data():
    cases = P.common_cases(RNG, 40)
    cases.update({
        "indexing": (P.indexing, (RNG.normal(size=(4, 3)),), (0,)),
        "fancy_index": (P.fancy_index, (RNG.normal(size=(4, 3)), np.array([0, 2, 0, 3])), (0,)),
        "scipy_special_ufuncs": (P.special, (RNG.normal(size=(3, 4)),), (0,)),
    })
    return cases


CASES = _data()


def _to_dask(a):
    import dask.array as da
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        return da.from_array(a, chunks=tuple(max(1, s // 2) for s in a.shape))
    return a            # integer index arrays stay NumPy (static data)


def _to_cupy(a):
    import cupy
    return cupy.asarray(a) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a


def _cupy():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no GPU")
    except Exception:
        pytest.skip("no GPU")
    return cupy


def _as_tuple(g, wrt):
    return g if len(wrt) > 1 else (g,)


@pytest.mark.parametrize("name", sorted(CASES))
def test_dask_gradient_is_lazy_and_equals_numpy(name, no_compute):
    import dask.array as da
    f, args, wrt = CASES[name]
    expected = _as_tuple(sg.grad(f, wrt=wrt)(*args), wrt)
    dargs = [_to_dask(a) for a in args]
    with no_compute:
        got = _as_tuple(sg.grad(f, wrt=wrt)(*dargs), wrt)
        value, _ = sg.value_and_grad(f, wrt=wrt)(*dargs)
    for g, e in zip(got, expected):
        assert isinstance(g, da.Array), type(g)
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g.compute(), e, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(value), f(*args), rtol=1e-12)


def test_numpy_weights_dask_data_gives_a_lazy_gradient(no_compute):
    """w NumPy, X and y Dask: the gradient with respect to w depends on the
    Dask data, so it is a lazy Dask array (computed with .compute()), not
    a NumPy array computed behind the caller's back."""
    import dask.array as da
    _, (w, X, y), _ = CASES["logistic"]
    expected = sg.grad(P.logistic)(w, X, y)
    with no_compute:
        g = sg.grad(P.logistic)(w, da.from_array(X, chunks=10), da.from_array(y, chunks=10))
    assert isinstance(g, da.Array) and g.shape == w.shape
    np.testing.assert_allclose(g.compute(), expected, rtol=1e-12)


def test_dask_integer_argument_is_promoted_lazily(no_compute):
    import dask.array as da
    x = np.arange(6).reshape(2, 3)
    with no_compute:
        g = sg.grad(P.elementwise)(da.from_array(x, chunks=1))
    assert isinstance(g, da.Array) and g.dtype == np.float64
    np.testing.assert_allclose(g.compute(), sg.grad(P.elementwise)(x), rtol=1e-12)


def test_dask_float32_stays_float32(no_compute):
    import dask.array as da
    x = RNG.normal(size=(4, 3)).astype(np.float32)
    with no_compute:
        g = sg.grad(P.exp_log_tanh)(da.from_array(x, chunks=2))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g.compute(), sg.grad(P.exp_log_tanh)(x), rtol=1e-5)


def test_numpy_only_rule_raises_naming_the_line():
    """np.maximum's adjoint builds NumPy masks: on a Dask array it is
    refused before anything runs, naming the function and the line."""
    import dask.array as da
    x = da.from_array(RNG.normal(size=(4, 3)), chunks=2)
    with pytest.raises(sg.ForeignArrayError, match=r"np\.maximum.*programs\.py:\d+"):
        sg.grad(P.clipped)(x)
    # the same program on NumPy is unaffected
    assert isinstance(sg.grad(P.clipped)(np.ones((2, 2))), np.ndarray)


def test_item_assignment_is_numpy_only():
    import dask.array as da
    with pytest.raises(sg.ForeignArrayError, match=r"item assignment.*programs\.py:\d+"):
        sg.grad(P.assigns)(da.from_array(np.ones((3, 2)), chunks=1))


def test_forward_mode_refuses_dask():
    import dask.array as da
    x = da.from_array(np.ones(3), chunks=1)
    with pytest.raises(sg.ForeignArrayError, match="sg.jvp"):
        sg.jvp(P.elementwise, (x,), (x,))


@pytest.mark.parametrize("name", sorted(CASES))
def test_cupy_gradient_equals_numpy(name):
    cupy = _cupy()
    f, args, wrt = CASES[name]
    expected = _as_tuple(sg.grad(f, wrt=wrt)(*args), wrt)
    got = _as_tuple(sg.grad(f, wrt=wrt)(*[_to_cupy(a) for a in args]), wrt)
    for g, e in zip(got, expected):
        assert isinstance(g, cupy.ndarray)
        np.testing.assert_allclose(cupy.asnumpy(g), e, rtol=1e-10)
