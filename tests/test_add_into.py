"""Accumulations in loops add in place under sg.jit (transforms/inplace.py
finds them, tools/linker.py writes them `add_into`, whose Numba twin adds
in place): `bW = bW + ...` in a reverse sweep writes into bW where nothing
else reads its buffer. The twin gives what `+` gives in every other case;
gradients through such loops (sg.jit, sg.grad, tapes, Hessian-vector
products) match autograd and central differences; CPython's code keeps
`+`, and so do cotangents of floats and accumulators that share a buffer
or are the caller's."""
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad, numpy_swapped

jit_api = __import__("importlib").import_module("srcgrad.jit.api")

N = 24      # (the hidden size)


def rnn(Wx, Wh, xs):
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    total = 0.0
    for x in xs:
        h = np.tanh(x @ Wx + h @ Wh)
        total = total + np.sum(h * h)
    return total


def shared_weight(W, xs):
    """W read twice per step (two contributions to bW per step), and a
    running sum of a matrix the size of W."""
    acc = np.zeros_like(W)
    for x in xs:
        acc = acc + np.outer(x, x) * W
        acc = acc + np.sin(W) * 0.1
    return np.sum(acc * acc)


def pendulum(theta, c):
    omega = 0.0
    for i in range(30):
        omega = omega + 0.01 * (-9.81 * np.sin(theta) - c * omega)
        theta = theta + 0.01 * omega
    return theta


def _data():
    rng = np.random.default_rng(0)
    return (rng.normal(0, 0.4, (5, N)), rng.normal(0, 0.3, (N, N)), rng.normal(size=(6, 3, 5)))


def test_the_twin_adds_in_place_only_where_plus_would_give_the_same_array():
    numba = pytest.importorskip("numba")
    from srcgrad.jit import twins
    jit_api._numba()
    add = numba.njit(lambda a, b: twins.add_into(a, b))
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((20, 20)), rng.standard_normal((20, 20))
    want = a + b
    got = add(a, b)
    assert np.shares_memory(got, a) and np.array_equal(got, want)      # (in place)
    cases = [(rng.standard_normal(30), rng.standard_normal((2, 30))),          # broadcast: a new shape
             (rng.standard_normal((1, 30)), rng.standard_normal((2, 30))),
             (rng.standard_normal(30), rng.standard_normal(30) + 1j),           # promoted to complex
             (rng.standard_normal(30).astype(np.float32), rng.standard_normal(30)),
             (rng.standard_normal(60)[::2], rng.standard_normal(30)),            # a strided view
             (1.5, 2.5), (1.5, rng.standard_normal(3)), (np.array(1.5), np.array(2.0))]
    for x, y in cases:
        before = np.array(x, copy=True)
        got = add(x, y)
        want = before + y
        assert np.shape(got) == np.shape(want) and np.result_type(got) == np.result_type(want)   # (0-d: a float)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(x, before)        # (not written)


def test_the_reverse_sweep_accumulates_weights_in_place_and_floats_with_plus():
    pytest.importorskip("numba")
    Wx, Wh, xs = _data()
    src = jit_api.lowered_source(rnn, (0, 1), (Wx, Wh, xs))
    assert "bWh = add_into(bWh, " in src and "bWx = add_into(bWx, " in src
    assert "add_into(" not in str(sg.source(rnn, wrt=(0, 1), args=(Wx, Wh, xs)))      # (CPython: +)
    assert "add_into(" not in jit_api.lowered_source(pendulum, (0, 1), (0.3, 0.1))


@pytest.mark.parametrize("path", ["grad", "function", "jit"])
def test_gradients_through_in_place_accumulations(path):
    Wx, Wh, xs = _data()
    with numpy_swapped(__name__, anp):
        want = autograd.grad(rnn, argnum=(0, 1))(Wx, Wh, xs)
    check_close(want[1], numerical_grad(lambda w: rnn(Wx, w, xs), Wh))
    if path == "grad":
        got = sg.grad(rnn, wrt=(0, 1))(Wx, Wh, xs)
    elif path == "function":
        vx, vh = sg.Variable(Wx), sg.Variable(Wh)
        with sg.GradientTape() as tape:
            y = sg.function(rnn)(vx, vh, xs)
        got = [g.numpy() for g in tape.gradient(y, [vx, vh])]
    else:
        pytest.importorskip("numba")
        with warnings.catch_warnings():
            warnings.simplefilter("error", sg.PerformanceWarning)      # (compiled by Numba)
            got = sg.jit(sg.grad(rnn, wrt=(0, 1)))(Wx, Wh, xs)
    for g, w in zip(got, want):
        check_close(g, w, rtol=1e-10, atol=1e-12)
    for x in (Wx, Wh, xs):          # (the arguments are not written)
        assert np.array_equal(x, _data()[[Wx is x, Wh is x, xs is x].index(True)])


def test_second_order_through_in_place_accumulations():
    W = np.random.default_rng(2).normal(size=(N, N)) * 0.3
    xs = np.random.default_rng(3).normal(size=(4, N))
    v = np.random.default_rng(4).normal(size=(N, N))
    with numpy_swapped(__name__, anp):
        g = autograd.grad(shared_weight)(W, xs)
        hv = autograd.grad(lambda w: np.sum(autograd.grad(shared_weight)(w, xs) * v))(W)
    check_close(sg.grad(shared_weight)(W, xs), g, rtol=1e-10)
    check_close(sg.hvp(shared_weight)(W, xs, v), hv, rtol=1e-8, atol=1e-10)
    if __import__("importlib").util.find_spec("numba") is not None:
        assert "add_into(" in jit_api.lowered_source(shared_weight, (0,), (W, xs))
        check_close(sg.jit(sg.grad(shared_weight))(W, xs), g, rtol=1e-10)


def aliased_accumulator(a, xs):
    """`prev` shares acc's buffer when acc is updated; `a` is the caller's."""
    acc = a * 1.0
    out = 0.0
    for x in xs:
        prev = acc
        acc = acc + x
        out = out + np.sum(prev * acc)
        a = a + x                   # (the caller's array: never written)
    return out + np.sum(a * a)


def test_accumulators_that_share_a_buffer_or_are_arguments_keep_plus():
    rng = np.random.default_rng(5)
    a, xs = rng.standard_normal(300), rng.standard_normal((3, 300))
    a0, xs0 = a.copy(), xs.copy()
    value = aliased_accumulator(a, xs)
    with numpy_swapped(__name__, anp):
        want = autograd.grad(aliased_accumulator)(a, xs)
    check_close(sg.grad(aliased_accumulator)(a, xs), want, rtol=1e-10)
    v = sg.Variable(a)
    with sg.GradientTape() as tape:
        y = sg.function(aliased_accumulator)(v, xs)
    check_close(y.numpy(), value, rtol=1e-12)
    check_close(tape.gradient(y, v).numpy(), want, rtol=1e-10)
    assert np.array_equal(a, a0) and np.array_equal(xs, xs0)
    pytest.importorskip("numba")
    check_close(sg.jit(sg.grad(aliased_accumulator))(a, xs), want, rtol=1e-10)
    check_close(sg.jit(aliased_accumulator)(a, xs), value, rtol=1e-12)
    assert np.array_equal(a, a0) and np.array_equal(xs, xs0)
    src = jit_api.lowered_source(aliased_accumulator, (0,), (a, xs))
    lines = [line.strip() for line in src.splitlines()]
    assert not any(line.startswith(("acc = add_into(", "a = add_into(")) for line in lines)
    assert "bacc = add_into(bacc, bmul_prev * prev)" in lines      # (the reverse sweep's own accumulator)
