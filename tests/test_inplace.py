"""Update in place (srcgrad/transforms/inplace.py): element assignment whose
old value is dead is made in place, in the forward sweep (setitem) and in
the reverse sweep (zero_at); nowhere else. Each case checks the gradient
against autograd or central differences, and the generated code for the
helper chosen."""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad


def rnn_setitem(W, xs):
    T = xs.shape[0]
    H = np.zeros((T, W.shape[0]))
    h = np.zeros(W.shape[0])
    for t in range(T):
        h = np.tanh(W @ h + xs[t])
        H[t] = h
    return np.sum(H * H)


def rnn_list(W, xs):
    h = anp.zeros(W.shape[0])
    hs = []
    for t in range(xs.shape[0]):
        h = anp.tanh(anp.dot(W, h) + xs[t])
        hs.append(h)
    return anp.sum(anp.stack(hs) ** 2)


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(0, 0.5, (4, 4)), rng.normal(size=(6, 4))


def test_rnn_fill_is_in_place_and_right():
    W, xs = _data()
    source = sg.source(rnn_setitem)
    assert "setitem_in_place(H, t, h)" in source
    assert "zero_at_in_place(bH, t)" in source
    expected = autograd.grad(rnn_list)(W, xs)
    check_close(sg.grad(rnn_setitem)(W, xs), expected, rtol=1e-10, atol=1e-12)


def test_persistent_tape_runs_the_in_place_backward_twice():
    """The split sweeps decide on their own: a tape's residuals and seeds
    are the caller's, never written into."""
    W, xs = _data(1)
    expected = autograd.grad(rnn_list)(W, xs)
    Wt = sg.Variable(W)
    with sg.GradientTape(persistent=True) as tape:
        y = sg.function(rnn_setitem)(Wt, xs)
    first = tape.gradient(y, Wt)
    second = tape.gradient(y, Wt)
    check_close(first, expected, rtol=1e-10, atol=1e-12)
    check_close(second, expected, rtol=1e-10, atol=1e-12)


def _read_after_write(x):
    H = np.zeros((3, 2))
    H[0] = x * 2.0
    y = np.sum(H * H)           # reads H after the first write: the second cannot be in place
    H[1] = np.sin(x)
    return y + np.sum(H ** 3)


def test_a_value_read_later_is_copied():
    source = sg.source(_read_after_write)
    assert "setitem_in_place(H, 0" in source          # the zeros are dead after the first write
    assert "_sg_setitem(H_1, 1" in source             # H_1 is read by the reverse sweep
    x = np.array([0.3, -0.4])
    check_close(sg.grad(_read_after_write)(x), numerical_grad(_read_after_write, x))


def _writes_into_a_copy_of_its_argument(x):
    H = x.copy()
    H[0] = H[1] * 3.0
    return np.sum(H * H)


def test_the_callers_array_is_never_written():
    x = np.array([0.5, -1.0, 2.0])
    kept = x.copy()
    g = sg.grad(_writes_into_a_copy_of_its_argument)(x)
    np.testing.assert_array_equal(x, kept)
    check_close(g, numerical_grad(_writes_into_a_copy_of_its_argument, x))


_GLOBAL = np.arange(3.0)


def _starts_from_a_global(x):
    H = _GLOBAL * 1.0
    H[1] = x[0] * x[1]
    return np.sum(H * x)


def test_a_global_array_is_never_written():
    x = np.array([0.5, -1.0, 2.0])
    g = sg.grad(_starts_from_a_global)(x)
    np.testing.assert_array_equal(_GLOBAL, np.arange(3.0))
    check_close(g, numerical_grad(_starts_from_a_global, x))


def test_second_order_of_in_place_code():
    """Generated code with in-place helpers, transformed again, uses the
    functional ones (its own saving of values must not see later writes)."""
    W, xs = _data(2)
    v = np.random.default_rng(3).normal(size=W.shape)
    g = sg.grad(rnn_setitem)

    def directional(W):
        return np.sum(g(W, xs) * v)
    expected = autograd.grad(lambda W: anp.sum(autograd.grad(rnn_list)(W, xs) * v))(W)
    check_close(sg.grad(directional)(W), expected, rtol=1e-8, atol=1e-10)
    check_close(sg.hvp(rnn_setitem)(W, xs, v), expected, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("T", [0, 1, 5])
def test_trip_counts(T):
    W, xs = _data(4)
    xs = xs[:T]
    expected = autograd.grad(rnn_list)(W, xs) if T else np.zeros_like(W)
    check_close(sg.grad(rnn_setitem)(W, xs), expected, rtol=1e-10, atol=1e-12)
