"""sg.jit(sg.hvp(f)) compiles the generated JVP of f's generated gradient
(forward over reverse) with Numba: H . v equal to sg.hvp's in CPython, to
autograd's Hessian-vector product and to central differences of the
gradient; one compile per argument kinds; and sg.hvp itself (same values,
same errors) for what it does not compile."""
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

pytest.importorskip("numba")

import srcgrad as sg  # noqa: E402

from gradcheck import check_close, numerical_jacobian  # noqa: E402


def polynomial(x):
    return np.sum(np.sin(x) * x ** 3) + x[0] * x[1]


def logistic(w, X, y):
    z = X @ w
    return np.sum(np.log1p(np.exp(-y * z))) + 0.5 * np.sum(w * w)


def kmeans(points, centroids):
    dists = np.sum((points[:, None, :] - centroids[None, :, :]) ** 2, axis=2)
    return np.sum(np.min(dists, axis=1))


def rollout(theta, steps):
    """A loop whose reverse sweep reads what it overwrote."""
    s = np.array([0.5, -0.2])
    for _ in range(steps):
        s = np.tanh(theta @ s) + 0.1 * s
    return np.sum(s ** 2)


def scalar(a, b):
    return np.sin(a) * a ** 2 * b


def _data(seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((30, 4))
    return {
        "polynomial": (polynomial, (rng.standard_normal(5),), 0),
        "logistic": (logistic, (rng.standard_normal(4), X, np.sign(rng.standard_normal(30))), 0),
        "kmeans": (kmeans, (rng.standard_normal((40, 3)), rng.standard_normal((4, 3))), 1),
        "scalar": (scalar, (0.7, 1.3), 0),
    }


def _autograd_of(f):
    return type(f)(f.__code__, dict(f.__globals__, np=anp), f.__name__)


_JITTED = {}


@pytest.mark.parametrize("name", sorted(_data(0)))
@pytest.mark.parametrize("seed", range(3))
def test_compiled_hvp_matches(name, seed):
    f, args, wrt = _data(seed)[name]
    v = np.random.default_rng(100 + seed).standard_normal(np.shape(args[wrt]))
    if type(args[wrt]) is float:
        v = float(v)
    jitted = _JITTED.setdefault(name, sg.jit(sg.hvp(f, wrt=wrt)))      # (compiled once per function)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)       # (compiled by Numba, not CPython)
        got = jitted(*args, v)
    assert not jitted.fallbacks and jitted.source is not None
    plain = sg.hvp(f, wrt=wrt)(*args, v)
    assert type(got) is np.ndarray and got.shape == np.shape(args[wrt]) and got.dtype == np.float64
    check_close(got, plain, rtol=1e-12, atol=1e-12)
    ag = _autograd_of(f)
    reference = autograd.hessian_vector_product(ag, argnum=wrt)(*args, v)
    check_close(got, reference, rtol=1e-10, atol=1e-10)

    def gradient_along(t):
        moved = list(args)
        moved[wrt] = args[wrt] + t * v
        return np.asarray(autograd.grad(ag, argnum=wrt)(*moved))
    check_close(got, numerical_jacobian(gradient_along, 0.0), rtol=1e-5, atol=1e-6)


def test_a_loop_runs_in_cpython_with_the_reason():
    """The JVP of a gradient with a loop pushes tangents on a stack of its
    own (`push(_dstack, ...)`), which the lowering does not pair with the
    primal stack's variables yet: sg.hvp's CPython code runs, with a
    PerformanceWarning, and its values."""
    rng = np.random.default_rng(0)
    theta, v = 0.5 * rng.standard_normal((2, 2)), rng.standard_normal((2, 2))
    jitted = sg.jit(sg.hvp(rollout))
    with pytest.warns(sg.PerformanceWarning, match="hvp_rollout runs in CPython"):
        got = jitted(theta, 6, v)
    check_close(got, sg.hvp(rollout)(theta, 6, v), rtol=1e-12, atol=1e-12)
    reference = autograd.hessian_vector_product(_autograd_of(rollout))(theta, 6, v)
    check_close(got, reference, rtol=1e-10, atol=1e-10)


def test_new_shapes_do_not_compile_again():
    jitted = sg.jit(sg.hvp(logistic))
    rng = np.random.default_rng(0)
    for n, d in ((30, 4), (50, 7), (9, 2)):
        X, y, w = rng.standard_normal((n, d)), np.sign(rng.standard_normal(n)), rng.standard_normal(d)
        v = rng.standard_normal(d)
        check_close(jitted(w, X, y, v), sg.hvp(logistic)(w, X, y, v), rtol=1e-12, atol=1e-12)
    assert len(jitted.signatures) == 1


def test_float32_keeps_its_dtype():
    x = np.linspace(-1.0, 1.0, 6).astype(np.float32)
    v = np.ones(6, np.float32)
    got = sg.jit(sg.hvp(polynomial))(x, v)
    assert got.dtype == np.float32
    check_close(got, sg.hvp(polynomial)(x, v), rtol=1e-5, atol=1e-5)


def test_what_it_does_not_compile_runs_sg_hvp():
    """An integer argument to differentiate, a wrongly shaped v, a Tensor:
    sg.hvp's own path, values and errors."""
    jitted = sg.jit(sg.hvp(polynomial))
    x = np.arange(5)
    v = np.ones(5)
    check_close(jitted(x, v), sg.hvp(polynomial)(x, v), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="vector of shape"):
        jitted(np.ones(5), np.ones(4))
    xt = sg.Variable(np.linspace(0.1, 0.9, 5))
    check_close(np.asarray(jitted(xt, v)), sg.hvp(polynomial)(xt.numpy(), v), rtol=1e-12, atol=1e-12)
