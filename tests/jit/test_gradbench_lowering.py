"""sg.jit compiles the gradients of GradBench's evals (benchmarks/workloads/
gradbench.py; the objectives as in _gradbench_objectives.py, at tiny sizes):
no fallback to CPython (a PerformanceWarning is an error here), and the
gradient is sg.grad's (to rounding) and central differences'."""
import os
import sys
import warnings

import numpy as np
import pytest

numba = pytest.importorskip("numba")

import srcgrad as sg  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:   # (`pytest` run without `python -m`: the checkout's benchmarks/)
    sys.path.insert(0, ROOT)
from benchmarks.workloads._gradbench_objectives import ba_reproj_component, lstm_objective, ode_last  # noqa: E402


def compiled_gradient(f, args, wrt):
    """sg.jit(sg.grad(f, wrt))(*args), which must compile, and sg.grad's."""
    grad = sg.grad(f, wrt=wrt)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        got = sg.jit(sg.grad(f, wrt=wrt))(*args)
    return got, grad(*args)


def agree(got, expected, f, args, wrt, rtol=1e-12, fd_rtol=1e-6):
    """`got` is sg.grad's `expected` to rtol, and central differences' (of
    f at args, every coordinate) to fd_rtol."""
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(got) == len(expected) == len(wrt)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol * max(1.0, float(np.max(np.abs(e)))))
    for g, i in zip(got, wrt):
        x = args[i]
        fd = np.zeros_like(x)
        for k in range(x.size):
            h = 1e-6 * max(1.0, abs(float(x.flat[k])))
            xp, xm = x.copy(), x.copy()
            xp.flat[k] += h
            xm.flat[k] -= h
            fd.flat[k] = (f(*args[:i], xp, *args[i + 1:]) - f(*args[:i], xm, *args[i + 1:])) / (2 * h)
        np.testing.assert_allclose(g, fd, rtol=fd_rtol, atol=fd_rtol * max(1.0, float(np.max(np.abs(fd)))))


# ---------------------------------------------------------------- kmeans: unindex of x[None, :, :]
def kmeans_cost(points, centroids):
    dists = np.sum((points[:, None, :] - centroids[None, :, :]) ** 2, axis=2)
    return np.sum(np.min(dists, axis=1))


@pytest.mark.slow
def test_kmeans_newaxis_index_compiles():
    points = np.random.default_rng(0).random((30, 2))
    centroids = points[-3:].copy()
    args = (points, centroids)
    got, expected = compiled_gradient(kmeans_cost, args, (1,))
    agree(got, expected, kmeans_cost, args, (1,))


def weighted_rows(X, w):
    # (w[:, None]: the index (slice, None); X[1, None, :]: an integer and a None; a keepdims reduction;
    # X[None, :, :]'s cotangent summed over its leading axis)
    return np.sum(w[:, None] * X ** 2) + np.sum(np.sin(X[1, None, :]) * w[None, 0:1]) \
        + np.sum(np.sum(X, axis=1, keepdims=True) * X) + np.sum(np.tanh(X[None, :, :] - X[:, None, :]))


def test_unindex_newaxis_with_slice_and_integer():
    rng = np.random.default_rng(1)
    args = (rng.normal(size=(4, 3)), rng.uniform(0.5, 1.5, 4))
    got, expected = compiled_gradient(weighted_rows, args, (0, 1))
    agree(got, expected, weighted_rows, args, (0, 1))


# ---------------------------------------------------------------- ba (slow: ~20 s of Numba at opt 0)
# (the benchmark's own objective: ba_reproj_component of benchmarks/workloads/_gradbench_objectives.py)


@pytest.mark.slow
def test_ba_compiles():
    rng = np.random.default_rng(0)
    p = 5
    cam = np.concatenate([rng.normal(0, 0.2, (p, 3)), rng.normal(0, 0.5, (p, 3)), rng.uniform(300, 500, (p, 1)),
                          rng.normal(0, 5, (p, 2)), rng.normal(0, 0.05, (p, 1)), rng.normal(0, 0.005, (p, 1))],
                         axis=1)
    X = np.concatenate([rng.uniform(-2, 2, (p, 2)), rng.uniform(6, 12, (p, 1))], axis=1)
    args = (cam, X, rng.uniform(0.5, 1.5, p), rng.normal(0, 100, (p, 2)), 1)
    got, expected = compiled_gradient(ba_reproj_component, args, (0, 1, 2))
    agree(got, expected, ba_reproj_component, args, (0, 1, 2), fd_rtol=1e-5)


# ---------------------------------------------------------------- ode: np.concatenate of a list display
# (the benchmark's own objective: ode_last of benchmarks/workloads/_gradbench_objectives.py)


def test_ode_concatenate_compiles():
    args = (np.random.default_rng(0).random(8), 3)
    got, expected = compiled_gradient(ode_last, args, (0,))
    agree(got, expected, ode_last, args, (0,))


def joined_columns(a, b, w):
    c = np.concatenate([a, np.tanh(b), a * b], axis=1)
    return np.sum(np.stack([c, c ** 2]) * w)


@pytest.mark.slow
def test_concatenate_along_axis_1_compiles():
    rng = np.random.default_rng(2)
    args = (rng.normal(size=(3, 2)), rng.normal(size=(3, 2)), rng.normal(size=(2, 3, 6)))
    got, expected = compiled_gradient(joined_columns, args, (0, 1))
    agree(got, expected, joined_columns, args, (0, 1))


# ---------------------------------------------------------------- lstm: lists of arrays (hidden, cell)
# (the benchmark's own objective: sigmoid and lstm_objective of benchmarks/workloads/_gradbench_objectives.py)


def test_lstm_lists_compile():
    rng = np.random.default_rng(0)
    layers, c, b = 2, 4, 3
    args = (rng.random((2 * layers, 4 * b)), rng.random((3, b)), rng.random((2 * layers, b)),
            rng.integers(0, 2, (c, b)).astype(np.float64))
    assert "comp.append(" in sg.source(lstm_objective, wrt=(0, 1), args=args, jit=True)
    got, expected = compiled_gradient(lstm_objective, args, (0, 1))
    agree(got, expected, lstm_objective, args, (0, 1))


def test_appends_in_place_only_for_unaliased_lists():
    import ast

    from srcgrad.jit import lower
    code = ("def f(x, n):\n"
            "    comp = []\n"
            "    for i in range(n):\n"
            "        comp = APPEND(comp, x[i])\n"
            "    ys = comp\n"
            "    seen = []\n"
            "    for i in range(n):\n"
            "        seen = APPEND(seen, x[i])\n"
            "        push(stack, seen)\n"
            "    return ys, seen\n")
    fdef = ast.parse(code).body[0]
    lower._appends_in_place(fdef, {"APPEND"})
    text = ast.unparse(fdef)
    assert "comp.append(x[i])" in text           # (read only after its loop: built in place)
    assert "seen = APPEND(seen, x[i])" in text   # (its old values are pushed: a new list each time)


def reductions_and_leading_broadcast(x, c):
    # (unreduce over one axis, with and without keepdims; unbroadcast over leading axes of length 1)
    d = (x[:, None, :] - c[None, :, :]) ** 2
    s = np.sum(d, axis=2) + np.max(d, axis=0)[None, :, 0]
    return np.sum(np.min(s, axis=1)) + np.sum(np.sum(x, axis=1, keepdims=True) * x) + np.sum(np.mean(d, axis=1))


@pytest.mark.slow
def test_one_axis_reductions_compile():
    rng = np.random.default_rng(3)
    args = (rng.normal(size=(5, 3)), rng.normal(size=(2, 3)))
    got, expected = compiled_gradient(reductions_and_leading_broadcast, args, (0, 1))
    agree(got, expected, reductions_and_leading_broadcast, args, (0, 1))


# ---------------------------------------------------------------- gmm: np.einsum, Q[:, rows, cols] = l
def make_Q(q, l):
    k, d = q.shape
    cols, rows = np.triu_indices(d, 1)
    Q = np.zeros((k, d, d))
    Q[:, rows, cols] = l
    diag = np.arange(d)
    Q[:, diag, diag] = np.exp(q)
    Q[:, np.array([0, 0]), np.array([1, 1])] = l[:, :2] * 3.0     # (an element written twice: the last counts)
    return Q


def einsum_and_scatter(q, l, x):
    Q = make_Q(q, l)
    Qx = np.einsum("kij,nj->nki", Q, x)
    return np.sum(Qx ** 2)


def test_einsum_and_integer_array_assignment_compile():
    rng = np.random.default_rng(4)
    args = (rng.normal(size=(2, 3)), rng.normal(size=(2, 3)), rng.normal(size=(4, 3)))
    got, expected = compiled_gradient(einsum_and_scatter, args, (0, 1))
    agree(got, expected, einsum_and_scatter, args, (0, 1))


def logsumexp(v):
    vmax = np.max(v, axis=-1, keepdims=True)
    return np.log(np.sum(np.exp(v - vmax), axis=-1)) + vmax[..., 0]


def gmm_objective(alpha, mu, q, l, x):
    n, d = x.shape
    k = alpha.shape[0]
    cols, rows = np.triu_indices(d, 1)
    Q = np.zeros((k, d, d))
    Q[:, rows, cols] = l
    diag = np.arange(d)
    Q[:, diag, diag] = np.exp(q)
    xc = x[:, None, :] - mu[None, :, :]
    Qxc = np.einsum("kij,nkj->nki", Q, xc)
    beta = alpha + np.sum(q, axis=1) - 0.5 * np.sum(Qxc ** 2, axis=2)
    return -n * logsumexp(alpha) + np.sum(logsumexp(beta)) - 0.5 * np.sum(Q ** 2)


@pytest.mark.slow
def test_gmm_compiles():
    rng = np.random.default_rng(0)
    d, k, n = 3, 2, 20
    args = (rng.normal(size=k), rng.uniform(size=(k, d)), rng.normal(size=(k, d)),
            rng.normal(size=(k, d * (d - 1) // 2)), rng.normal(size=(n, d)))
    got, expected = compiled_gradient(gmm_objective, args, (0, 1, 2, 3))
    agree(got, expected, gmm_objective, args, (0, 1, 2, 3), rtol=1e-11)


# ---------------------------------------------------------------- dense list cotangents: elements changing shape
def element_changes_shape(x):
    xs = [x[0:1], x[1:2]]
    xs[1] = x[0:2] * 2.0        # (element 1: shape (1,), then (2,))
    return np.sum(xs[0] * xs[1])


def element_changes_shape_read_before(x):
    xs = [x[i:i + 1] for i in range(2)]
    y = xs[1] * 5.0
    xs[1] = x[0:2] * 2.0
    return np.sum(xs[0] * xs[1]) + np.sum(y)


@pytest.mark.parametrize("f", [element_changes_shape, element_changes_shape_read_before])
def test_list_element_of_another_shape_is_not_a_wrong_zero(f):
    # sg.jit's list cotangents hold zeros where sg.grad's hold None: a zero shaped like another value of the
    # element must not be taken for a cotangent (the compiled code gives up, and CPython's sweep runs)
    x = np.array([0.3, 0.7, 1.1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        got = sg.jit(sg.grad(f))(x)
    np.testing.assert_allclose(got, sg.grad(f)(x), rtol=1e-14)
