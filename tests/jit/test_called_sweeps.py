"""sg.jit compiles gradients whose called functions branch, loop and return
early: a callee's split sweeps pass their stacks among the residuals
(lowered as tuples of typed lists, lower._split_escaping), a callee's
residuals that are None because its call's branch did not run get a
stand-in of their type (twins._stand_in), and a function's return value
is assigned once over None, so no sweep pushes it (lower/exits.py marks it
NO_SAVE). Each program runs compiled (a PerformanceWarning is an error
here) and is checked against sg.grad in CPython, autograd, and central
differences, on inputs that take each branch."""
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

pytest.importorskip("numba")

import srcgrad as sg  # noqa: E402

from gradcheck import check_close, numerical_grad  # noqa: E402


def clip_norm(v, limit):
    n = np.sqrt(np.sum(v * v))
    if n > limit:
        return v * (limit / n)
    return v


def soft(v):
    out = 0.0
    for k in range(v.shape[0]):
        if v[k] > 0:
            out = out + v[k] ** 2
        else:
            out = out - 0.5 * v[k]
    return out


def ordered(v):
    """Two outputs, returned early on one branch."""
    if v[0] > v[1]:
        return v[:2] * v[0], v[2:]
    return v[2:], v[:2] * v[1]


def running(v):
    """A loop whose reverse sweep reads the values it overwrote."""
    p = 1.0
    for k in range(v.shape[0]):
        p = p * np.cos(v[k]) + 0.1
    return p


def first_above(v, level):
    """A return inside a loop (the loop becomes a while loop on flags)."""
    for k in range(v.shape[0]):
        if v[k] > level:
            return v[k] * (k + 1.0)
    return np.sum(v) * 0.5


def mlp_clipped(x, W):
    h = np.tanh(W @ x)
    h = clip_norm(h, 1.5)
    return soft(h) + np.sum(clip_norm(x, 0.1) ** 2)


def branch_calls(x, W):
    """A callee called on one branch only: on the other, its residuals
    are None (a stand-in takes their place on the typed stacks)."""
    h = W @ x
    if h[0] > 0:
        y = clip_norm(h, 0.5) * running(x)
    else:
        y = h * 2.0
    a, b = ordered(x)
    return np.sum(y ** 2) + np.sum(a * b)


def early_main(x, W):
    """The differentiated function itself returns early."""
    h = np.sin(W @ x)
    if np.sum(h) > 0:
        return np.sum(h ** 2)
    return np.sum(np.cos(h)) * running(x)


def searched(x, W):
    h = np.tanh(W @ x)
    return first_above(h, 0.3) * first_above(x, 0.5) + first_above(h * h, 2.0)


PROGRAMS = [mlp_clipped, branch_calls, early_main, searched]


def _autograd_version(f):
    namespace = dict(f.__globals__, np=anp)
    for name in ("clip_norm", "soft", "ordered", "running", "first_above"):
        g = globals()[name]
        namespace[name] = type(g)(g.__code__, namespace, name)
    return type(f)(f.__code__, namespace, f.__name__)


def _inputs(seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(4), rng.standard_normal((3, 4))


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda f: f.__name__)
def test_compiled_gradient_matches(program):
    jitted = sg.jit(sg.grad(program, wrt=(0, 1)))      # (compiled once: every seed has the same kinds)
    for seed in range(6):
        x, W = _inputs(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("error", sg.PerformanceWarning)       # (compiled by Numba, not CPython)
            got = jitted(x, W)
        assert not jitted.fallbacks
        plain = sg.grad(program, wrt=(0, 1))(x, W)
        reference = autograd.grad(_autograd_version(program), argnum=(0, 1))(x, W)
        for a, b, c in zip(got, plain, reference):
            check_close(a, b, rtol=1e-12, atol=1e-12)
            check_close(a, c, rtol=1e-10, atol=1e-12)
        check_close(got[0], numerical_grad(lambda v: program(v, W), x), rtol=1e-5, atol=1e-7)


def test_both_branches_are_taken():
    """The seeds above run each branch of each program (so both the
    callee's residuals and their stand-ins are exercised)."""
    taken = set()
    for seed in range(6):
        x, W = _inputs(seed)
        taken.add(("branch_calls", bool((W @ x)[0] > 0)))
        taken.add(("early_main", bool(np.sum(np.sin(W @ x)) > 0)))
        taken.add(("ordered", bool(x[0] > x[1])))
        taken.add(("clip", bool(np.sqrt(np.sum(x * x)) > 0.1)))
        taken.add(("first_above", bool(np.any(x > 0.5))))
    assert {("branch_calls", True), ("branch_calls", False), ("early_main", True), ("early_main", False),
            ("ordered", True), ("ordered", False), ("first_above", True), ("first_above", False)} <= taken


def test_the_return_value_is_not_pushed():
    """`return` assigns the return value once, over None: neither sweep
    saves it (the reverse sweep read back None, which a typed stack cannot
    hold), in CPython's code as in the lowered one."""
    x, W = _inputs(0)
    source = sg.source(early_main, wrt=(0, 1), args=(x, W))
    assert "_retval = " in source
    assert "push(_stack, _retval)" not in source and "_retval = pop(" not in source
    lowered = sg.source(branch_calls, wrt=(0, 1), args=(x, W), jit=True)
    assert not lowered.startswith("# sg.jit runs this gradient in CPython"), lowered.splitlines()[0]


def pick(n, k):
    return range(2, n, 3)[k]


@pytest.mark.parametrize("k", [0, 1, 2, -1, -3])
def test_a_range_is_read_by_index(k):
    """A loop that may end early reads its range by index; sg.jit gives
    Numba the getitem it lacks (twins._range_item), with Python's values
    and IndexError."""
    jitted = sg.jit(pick)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        assert jitted(11, k) == range(2, 11, 3)[k]
        with pytest.raises(IndexError):
            jitted(11, 3)
        with pytest.raises(IndexError):
            jitted(11, -4)
