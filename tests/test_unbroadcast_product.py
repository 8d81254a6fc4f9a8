"""A product read only by the unbroadcast that sums it (a broadcast
operand's cotangent: k-means' `sub * (2 g)` summed over its points, and its
tangent in sg.jvp of the gradient) runs as one contraction
(transforms/optimize.py `unbroadcast_products`,
rules/helpers/broadcast.py `unbroadcast_product`: np.einsum without the
product's array). Checked: the helper's values against `unbroadcast(a *
b, x)` on the shapes it takes and those it leaves to the plain calls; that
the einsum runs where it should; the generated code; gradients and
Hessian-vector products against autograd and central differences where the
contraction runs; sg.jit and sg.export reading it as the plain calls."""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from srcgrad.rules.helpers import broadcast
from srcgrad.rules.helpers.broadcast import PRODUCT_SUM_SIZE, ShapeOf, unbroadcast, unbroadcast_product

from gradcheck import check_close, numerical_grad

RNG = np.random.default_rng(21)

# (a's shape, b's shape, x's shape, does the contraction run)
SHAPES = [
    ((3000, 10, 8), (3000, 10, 1), (1, 10, 8), True),       # k-means: summed over the points
    ((1, 10, 8), (3000, 10, 1), (1, 10, 8), True),          # its tangent: both operands broadcast
    ((3000, 10, 8), (3000, 10, 1), (10, 8), True),          # a leading axis x lacks
    ((256, 256), (256,), (256,), True),                     # a bias-like weight
    ((2, 400, 40), (400, 1), (400, 1), True),
    ((3, 1, 70, 60), (1, 5, 70, 60), (5, 1, 1), True),
    ((3, 1, 70, 40), (1, 5, 70, 40), (5, 1, 1), False),        # neither operand of PRODUCT_SUM_SIZE
    ((256, 256), (256, 256), (256,), False),                # one shape: NumPy's product and sum
    ((64, 100), (100,), (100,), False),                     # under PRODUCT_SUM_SIZE
    ((3000, 10, 8), (3000, 10, 1), (3000, 10, 8), False),   # no axis summed
]


@pytest.mark.parametrize("sa, sb, sx, contracted", SHAPES, ids=[str(s[:3]) for s in SHAPES])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_the_helper_is_unbroadcast_of_the_product(sa, sb, sx, contracted, dtype, monkeypatch):
    a = RNG.normal(size=sa).astype(dtype)
    b = RNG.normal(size=sb).astype(dtype)
    if dtype is np.complex128:
        a = a + 1j * RNG.normal(size=sa)
        b = b - 1j * RNG.normal(size=sb)
    calls = []
    real = np.einsum
    monkeypatch.setattr(broadcast.np, "einsum", lambda *args, **kw: calls.append(args[0]) or real(*args, **kw))
    for x in (np.zeros(sx, dtype), ShapeOf.of_shape(sx, np.dtype(dtype))):
        got = unbroadcast_product(a, b, x)
        expected = unbroadcast(a * b, np.zeros(sx, dtype))
        assert got.shape == expected.shape == sx and got.dtype == expected.dtype
        rtol = 1e-4 if dtype is np.float32 else 1e-12
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * np.max(np.abs(expected)))
    assert bool(calls) == contracted, calls


def test_the_helper_raises_what_the_product_raises():
    with pytest.raises(ValueError):
        unbroadcast_product(np.ones((200, 100)), np.ones((3, 100)), np.ones(100))
    assert PRODUCT_SUM_SIZE <= 3000 * 10 * 8


def nearest_centre(points, centres):
    dists = np.sum((points[:, None, :] - centres[None, :, :]) ** 2, axis=2)
    return np.sum(np.min(dists, axis=1))


def _reference(points, centres):
    return anp.sum(anp.min(anp.sum((points[:, None, :] - centres[None, :, :]) ** 2, axis=2), axis=1))


def _data():
    points = RNG.random((3000, 8))
    return points, points[-10:] + 0.01


def test_kmeans_gradient_and_hessian_vector_product_through_the_contraction(monkeypatch):
    points, centres = _data()
    source = sg.source(nearest_centre, wrt=(1,), args=(points, centres))
    assert "unbroadcast_product(sub, " in source and "bsub" not in source, source
    jvp_source = sg.source(sg.grad(nearest_centre, wrt=1), wrt=(1,), mode="forward")
    assert jvp_source.count("unbroadcast_product(") == 2, jvp_source     # (the gradient and its tangent)
    calls = []
    real = np.einsum
    monkeypatch.setattr(broadcast.np, "einsum", lambda *args, **kw: calls.append(args[0]) or real(*args, **kw))
    g = sg.grad(nearest_centre, wrt=1)(points, centres)
    assert calls
    check_close(g, autograd.grad(_reference, 1)(points, centres), rtol=1e-12, atol=1e-10)
    check_close(g[:2], numerical_grad(lambda c: nearest_centre(points, np.concatenate([c, centres[2:]])), centres[:2]),
                rtol=1e-5, atol=1e-5)
    v = RNG.normal(size=centres.shape)
    J, Hv = sg.jvp(sg.grad(nearest_centre, wrt=1), (points, centres), (None, v))
    check_close(J, g, rtol=1e-12, atol=1e-10)
    check_close(Hv, autograd.hessian_vector_product(_reference, 1)(points, centres, v), rtol=1e-12, atol=1e-10)


def test_jit_and_export_read_the_plain_calls(tmp_path):
    points, centres = _data()
    expected = sg.grad(nearest_centre, wrt=1)(points, centres)
    path = tmp_path / "kmeans_grad.py"
    text = sg.export(nearest_centre, path, wrt=(1,))
    assert "unbroadcast_product(" not in text and "unbroadcast(sub * " in text, text
    namespace = {}
    exec(compile(text, str(path), "exec"), namespace)
    check_close(namespace["grad_nearest_centre"](points, centres), expected, rtol=1e-12, atol=1e-10)
    pytest.importorskip("numba")
    lowered = sg.source(nearest_centre, wrt=(1,), args=(points, centres), jit=True)
    assert "unbroadcast_product(" not in lowered and "unbroadcast(sub * " in lowered, lowered
    # compiled and run (a 2-d form of the same pattern: Numba compiles k-means' 3-d one for ~14 s)
    X, w, v = RNG.normal(size=(400, 50)), RNG.normal(size=50), RNG.normal(size=400)
    assert "unbroadcast_product(" in sg.source(weighted_distances, wrt=(1,), args=(X, w, v))
    check_close(sg.jit(sg.grad(weighted_distances, wrt=1))(X, w, v),
                autograd.grad(lambda w: anp.sum(anp.sum((X - w) ** 2, axis=1) * v))(w), rtol=1e-12, atol=1e-10)


def weighted_distances(X, w, v):
    return np.sum(np.sum((X - w) ** 2, axis=1) * v)
