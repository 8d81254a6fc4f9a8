"""sg.jit's twin of np.stack's adjoint (twins.stack_adjoint): operand i's
cotangent is g's slice i along the stacked axis, a view, for a list built
in a loop and for a tuple display, on every axis; Numba no longer compiles
np.moveaxis for it (about 9 s of the tanh RNN's first call). Gradients
equal sg.grad's in CPython and autograd's, and nothing runs in CPython."""
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

pytest.importorskip("numba")

import srcgrad as sg  # noqa: E402
from srcgrad.jit import twins  # noqa: E402
from srcgrad.rules.helpers import shapes  # noqa: E402

from gradcheck import check_close, numpy_swapped  # noqa: E402


def rnn(Wx, Wh, xs):
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    hs = []
    for x in xs:
        h = np.tanh(x @ Wx + h @ Wh)
        hs.append(h)
    return np.sum(np.stack(hs) ** 2)


def stacked_on_axis_1(x):
    return np.sum(np.stack((np.sin(x), np.sin(2.0 * x), x), axis=1) * np.arange(12.0).reshape(4, 3))


def stacked_on_last_axis(x):
    m = x.reshape(2, 2)
    return np.sum(np.stack((np.cos(m), m * 0.5), axis=-1) ** 3)


def tuple_display(x):
    return np.sum(np.stack((x * 2.0, np.exp(x), x * x)) * np.arange(12.0).reshape(3, 4))


def numbers_stacked(x):
    parts = []
    for k in range(3):
        parts.append(x[k] * (k + 1.0))
    return np.sum(np.stack(parts) * np.arange(1.0, 4.0))


def _compiled(f, wrt, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)       # (compiled by Numba, not in CPython)
        return sg.jit(sg.grad(f, wrt=wrt))(*args)


def test_the_twin_stands_for_the_helper():
    assert twins.twin_of(shapes.stack_adjoint) is twins.stack_adjoint


def test_an_rnns_list_of_states():
    rng = np.random.default_rng(3)
    Wx, Wh, xs = rng.normal(size=(4, 5)) * 0.5, rng.normal(size=(5, 5)) * 0.3, rng.normal(size=(6, 2, 4))
    got = _compiled(rnn, (0, 1), Wx, Wh, xs)
    want = sg.grad(rnn, wrt=(0, 1))(Wx, Wh, xs)
    with numpy_swapped(__name__, anp):
        ref = autograd.grad(rnn, argnum=(0, 1))(Wx, Wh, xs)
    for a, b, c in zip(got, want, ref):
        check_close(a, b, rtol=1e-13, atol=1e-14)
        check_close(a, c, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("f", [stacked_on_axis_1, stacked_on_last_axis, tuple_display, numbers_stacked])
def test_other_axes_and_a_tuple(f):
    x = np.random.default_rng(4).normal(size=4)
    got = _compiled(f, 0, x)       # (a list of numbers: srcgrad's own helper, as Numba compiles it)
    check_close(got, sg.grad(f)(x), rtol=1e-13, atol=1e-14)
    with numpy_swapped(__name__, anp):
        ref = autograd.grad(f)(x)
    check_close(got, ref, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("typed", [False, True], ids=["list", "typed list"])
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_a_list_on_every_axis(axis, typed):
    """(Numba's np.stack takes no list with an axis: the twin is called
    directly on a list here, as generated code calls it.)"""
    import numba
    twins.install()
    g = np.random.default_rng(6).normal(size=(3, 4, 5))
    n = g.shape[axis]
    shape = tuple(s for k, s in enumerate(g.shape) if k != axis % 3)
    arrays = [np.zeros(shape) for _ in range(n)]
    text = "def run(g, arrays):\n    return stack_adjoint(g, arrays, %d)\n" % axis
    scope = {"stack_adjoint": twins.stack_adjoint}
    exec(text, scope)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", numba.NumbaPendingDeprecationWarning)     # (a reflected list)
        got = numba.njit(scope["run"])(g, numba.typed.List(arrays) if typed else arrays)
    want = shapes.stack_adjoint(g, arrays, axis)
    assert len(got) == len(want) == n
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
