"""A function that calls a method of a global list or dict (`LOG.append(x)`,
`TABLE.get(k)`) is compiled once. Its Program checks, before each reuse,
that every attribute chain it resolved still resolves the same
(chains.same_resolution); `LOG.append` is a new bound built-in method at
each access, and identity made the Program stale at once: every call
compiled the function again (100x a warm call), and a recursive such
function compiled its callee's Program again at each level of the
compilation, without end (RecursionError). They are now compared by their
instance and name. The user's code still runs once per derivative."""
import numpy as np

import srcgrad as sg
from srcgrad.callables import as_function
from srcgrad.functional import _grad_inputs
from gradcheck import check_close, numerical_grad

LOG = []
TABLE = {"scale": 3.0}
CALLS = []


def logged(x):
    LOG.append(x.shape)
    return np.sum(TABLE.get("scale", 1.0) * np.sin(x) * x)


def counted_power(x, n):
    CALLS.append(n)
    if n == 0:
        return np.ones_like(x)
    return x * counted_power(x, n - 1)


def counted_loss(x):
    return np.sum(np.cos(counted_power(x, 3)))


X = np.array([0.5, -1.5, 2.0])


def test_a_global_lists_method_keeps_the_program_current():
    del LOG[:]
    program, mask, _ = _grad_inputs(as_function(logged), (X,), {}, (0,))
    g = sg.grad(logged)
    for _ in range(3):
        check_close(g(X), 3.0 * (np.cos(X) * X + np.sin(X)), rtol=1e-12)
    assert program.is_current()
    again, _, _ = _grad_inputs(as_function(logged), (X,), {}, (0,))
    assert again is program
    assert LOG == [X.shape] * 3         # (once per gradient)


def test_a_rebound_method_owner_makes_the_program_stale():
    global TABLE
    program, mask, _ = _grad_inputs(as_function(logged), (X,), {}, (0,))
    assert program.is_current()
    old = TABLE
    try:
        TABLE = {"scale": 2.0}
        assert not program.is_current()         # (another dict: resolved again)
        check_close(sg.grad(logged)(X), 2.0 * (np.cos(X) * X + np.sin(X)), rtol=1e-12)
    finally:
        TABLE = old


def test_a_recursive_function_appending_to_a_global_list():
    want = numerical_grad(counted_loss, X)
    del CALLS[:]
    check_close(sg.grad(counted_loss)(X), want, rtol=1e-6, atol=1e-8)
    assert CALLS == [3, 2, 1, 0]        # (split mode: the user's code ran once)
    del CALLS[:]
    v = sg.Variable(X)
    with sg.GradientTape() as tape:
        y = sg.function(counted_loss)(v)
    check_close(tape.gradient(y, v).numpy(), want, rtol=1e-6, atol=1e-8)
    assert CALLS == [3, 2, 1, 0]
