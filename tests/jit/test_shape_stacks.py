"""sg.jit's shape stacks (jit/lower.py, `_shape_stacks`): a loop's saved
value that the reverse sweep reads only as a shape (for unbroadcast,
unreduce, reduction_size) is pushed as its shape tuple, not as the array.
Each program below saves such values in a loop, with a real broadcast, a
keepdims reduction, a Python float, a 0-d mean, shapes that change from
one step to the next, or a sum over a broadcast axis: the gradient under
Numba matches sg.grad's CPython code and central differences, and the
lowered source shows the shape stacks (so the test covers them)."""
import warnings

import numpy as np
import pytest

numba = pytest.importorskip("numba")

import srcgrad as sg  # noqa: E402
from gradcheck import check_close, numerical_grad  # noqa: E402


def bias_loop(x, b):
    for i in range(4):
        c = b * 2.0         # (a loop temporary broadcast along x's rows: its shape is saved)
        x = np.tanh(x + c) * 0.9
    return np.sum(x)


def keepdims_loop(x):
    for i in range(3):
        m = np.max(x, axis=1, keepdims=True)
        x = x - m + np.sum(x, axis=1, keepdims=True) * 0.1
    return np.sum(x ** 2)


def scalar_loop(x, s):
    for i in range(5):
        x = x * s + np.sin(x)
    return np.sum(x)


def mean_loop(x):
    tot = 0.0
    for i in range(4):
        y = x * (i + 1.0)
        tot = tot + np.mean(y * y)
    return tot


def shrinking(x):
    for i in range(3):
        x = np.sin(x[1:]) * x[:-1] + 0.5
    return np.sum(x * x)


def broadcast_up(x, w):
    for i in range(3):
        h = np.tanh(w * x)
        x = x + 0.1 * np.sum(h, axis=0)
    return np.sum(x)


def chain(x, w):
    for i in range(20):
        x = x + 0.01 * np.sin(x * w)
    return np.sum(x)


RNG = np.random.default_rng(1)
# (function, arguments, wrt, whether a shape stack remains: where transforms/shapes.py proves the
# shapes equal, the unbroadcast and the saved shape are gone altogether)
CASES = [(bias_loop, (RNG.normal(size=(3, 4)), RNG.normal(size=4)), (0, 1), True),
         (keepdims_loop, (RNG.normal(size=(3, 4)),), (0,), True),
         (scalar_loop, (RNG.normal(size=4), 0.7), (0, 1), False),
         (mean_loop, (RNG.normal(size=(2, 3)),), (0,), True),
         (shrinking, (RNG.normal(size=6),), (0,), False),
         (broadcast_up, (RNG.normal(size=3), RNG.normal(size=(2, 3))), (0, 1), False),
         (chain, (RNG.normal(size=5), RNG.normal(size=5)), (0, 1), False),
         (chain, (RNG.normal(size=5), RNG.normal(size=1)), (0, 1), False)]


@pytest.mark.parametrize("f, args, wrt, stacked", CASES,
                         ids=["%s-%d" % (c[0].__name__, k) for k, c in enumerate(CASES)])
def test_shape_stacks_give_sg_grads_values(f, args, wrt, stacked):
    jitted = sg.jit(sg.grad(f, wrt=wrt))
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)      # compiled by Numba, not a fallback
        got = jitted(*args)
    assert ("__shape = " in jitted.source) == stacked, jitted.source
    want = sg.grad(f, wrt=wrt)(*args)
    got, want = (got, want) if len(wrt) > 1 else ((got,), (want,))
    for k, g, w in zip(wrt, got, want):
        check_close(g, w, rtol=1e-10, atol=1e-12)

        def along(v, k=k):
            a = list(args)
            a[k] = v
            return f(*a)
        check_close(g, numerical_grad(along, np.asarray(args[k], dtype=np.float64)), rtol=1e-5, atol=1e-7)


def test_a_value_read_whole_by_the_reverse_sweep_is_pushed_whole():
    """chain's x * w: the reverse sweep reads x and mul_x as values (the
    adjoint of the product and of cos): their stacks keep arrays."""
    x, w = RNG.normal(size=5), RNG.normal(size=5)
    jitted = sg.jit(sg.grad(chain, wrt=(0, 1)))
    jitted(x, w)
    assert "_stack__x.append(x)" in jitted.source
    assert "mul_x = _stack__mul_x.pop()" in jitted.source
