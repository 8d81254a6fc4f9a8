"""Python's scoping rules in the lowering (transforms/lower/), where
srcgrad once gave wrong values and gradients or crashed the generated code:

1. A comprehension's first iterable is evaluated in the enclosing scope:
   `[x * 2 for x in x]` iterates over the outer x (comprehensions.py, which
   renamed the target there too: the generated code read an unbound name).
   Dict and set comprehensions are refused by the compiler and run op by op.
2. A comprehension or a local function call as the whole header of a
   `for` or `if` (`for y in [...]:`, `if g(x):`) is hoisted before the
   statement like one inside it (it was refused or left unresolved).

Each function is checked against plain Python (the value), a closed form,
central finite differences and, where autograd runs it (`np` rebound to
autograd.numpy in this module, as tests/test_frontend_patterns.py does),
autograd, through sg.value_and_grad, sg.jvp and sg.function on a
GradientTape.
"""
import contextlib
import sys
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad

RTOL, ATOL = 1e-5, 1e-6            # against finite differences
AG_RTOL, AG_ATOL = 1e-8, 1e-10     # against autograd and the closed forms
X3 = np.array([0.3, 1.2, -0.7])


@contextlib.contextmanager
def autograd_numpy():
    """`np` -> autograd.numpy in this module (the functions read it as a global)."""
    module = sys.modules[__name__]
    saved = module.np
    module.np = anp
    try:
        yield
    finally:
        module.np = saved


@pytest.fixture(autouse=True)
def compiled_only():
    """PerformanceWarning as an error: these functions must compile (a
    refusal is raised instead of running op by op)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        yield


def check(fn, value, grad, x=X3, autograd_ok=True):
    """fn's value and gradient at x through every path: Python's value and
    the closed forms `value`, `grad`, finite differences, autograd."""
    saved = x.copy()
    assert np.isclose(fn(x), value, rtol=AG_RTOL, atol=AG_ATOL), (fn(x), value)
    expected = numerical_grad(fn, x)
    check_close(expected, grad, RTOL, ATOL)
    v, g = sg.value_and_grad(fn)(x)
    check_close(v, value, AG_RTOL, AG_ATOL)
    check_close(g, grad, AG_RTOL, AG_ATOL)
    check_close(g, expected, RTOL, ATOL)
    t = np.array([0.5, -1.0, 2.0])
    out, tangent = sg.jvp(fn, (x,), (t,))
    check_close(out, value, AG_RTOL, AG_ATOL)
    check_close(tangent, np.dot(grad, t), AG_RTOL, AG_ATOL)
    if autograd_ok:
        with autograd_numpy():
            check_close(autograd.grad(fn)(x), g, AG_RTOL, AG_ATOL)
    xt = sg.constant(x)
    with sg.GradientTape() as tape:
        tape.watch(xt)
        y = sg.function(fn)(xt)
    check_close(y.numpy(), value, AG_RTOL, AG_ATOL)
    check_close(tape.gradient(y, xt).numpy(), grad, AG_RTOL, AG_ATOL)
    np.testing.assert_array_equal(x, saved, err_msg="the argument was mutated")


# ===========================================================================
# 1. A comprehension's first iterable is in the enclosing scope
# ===========================================================================

def list_comp_shadowing(x):
    ys = [x * 2 for x in x]
    return np.sum(x ** 2) + sum(ys)


def generator_in_sum_shadowing(v):
    return sum(v * v for v in v) + np.sum(v)


def condition_in_comprehension_scope(x):
    ys = [np.sin(x) for x in x if x > 0]
    return sum(ys) + np.sum(x)


def two_generators(x):
    ys = [x * y for x in x for y in [x, 2.0 * x] if x > -5.0]    # the second iterable reads the element x
    return sum(ys) + np.sum(x ** 2)


def nested_comprehension_shadowing(x):
    m = [x, x * 2.0]
    ys = [[x * x for x in x] for x in m]    # the inner x iterates over a row of m
    return sum(sum(r) for r in ys) + np.sum(x)



def comprehension_in_a_local_function(x):
    def g(x):
        return sum([x * 3.0 for x in x])
    return g(x) + np.sum(x)


def test_list_comprehension_over_the_name_of_its_target():
    check(list_comp_shadowing, np.sum(X3 ** 2 + 2 * X3), 2 * X3 + 2)


def test_generator_expression_in_sum_over_the_name_of_its_target():
    check(generator_in_sum_shadowing, np.sum(X3 ** 2 + X3), 2 * X3 + 1)


def test_condition_reads_the_comprehension_target():
    positive = X3 > 0
    check(condition_in_comprehension_scope, np.sum(np.sin(X3[positive])) + np.sum(X3),
          np.where(positive, np.cos(X3), 0.0) + 1)


def test_second_generator_reads_the_first_target():
    check(two_generators, np.sum(4 * X3 ** 2), 8 * X3)


def test_nested_comprehensions_shadowing_one_name():
    check(nested_comprehension_shadowing, np.sum(5 * X3 ** 2 + X3), 10 * X3 + 1)



def test_comprehension_in_a_local_function_shadowing_its_parameter():
    check(comprehension_in_a_local_function, np.sum(4 * X3), 4 + 0 * X3)



def dict_comp_shadowing(x):
    d = {k: x * x for k, x in enumerate(x)}
    return d[0] + d[2] + np.sum(x)


def set_comp_shadowing(x):
    return sum({x * 2.0 for x in x}) + np.sum(x)


@pytest.mark.parametrize("fn, construct, value, grad", [
    (dict_comp_shadowing, "dict comprehension", X3[0] ** 2 + X3[2] ** 2 + np.sum(X3),
     np.array([2 * X3[0] + 1, 1, 2 * X3[2] + 1])),
    (set_comp_shadowing, "set comprehension", np.sum(3 * X3), 3 + 0 * X3),
])
def test_dict_and_set_comprehensions_run_op_by_op(fn, construct, value, grad):
    """The compiler refuses them (check.py); the op-by-op tape runs them
    with Python's scoping."""
    with pytest.raises(sg.UnsupportedSyntaxError, match=construct):
        sg.grad(fn)(X3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        v, g = sg.value_and_grad(fn)(X3)
    assert np.isclose(fn(X3), value)
    check_close(v, value, AG_RTOL, AG_ATOL)
    check_close(g, grad, AG_RTOL, AG_ATOL)
    check_close(g, numerical_grad(fn, X3), RTOL, ATOL)
    with autograd_numpy():
        check_close(autograd.grad(fn)(X3), grad, AG_RTOL, AG_ATOL)


# ===========================================================================
# 2. Comprehensions and local calls as for and if headers
# ===========================================================================

def comprehension_as_first_iterable(x):
    ys = [x + 1.0 for x in [x * 2.0 for x in x]]
    return sum(ys) * np.sum(x)



def test_comprehension_as_the_first_iterable_of_another():
    s = np.sum(2 * X3 + 1)
    check(comprehension_as_first_iterable, s * np.sum(X3), np.full(3, 2 * np.sum(X3) + s))



def loop_over_a_comprehension(x):
    s = 0.0
    for y in [x * 2.0 for x in x]:
        s = s + y * y
    return s


def local_call_as_if_test(x):
    positive = lambda z: np.sum(z) > 0  # noqa: E731
    if positive(x):
        return np.sum(x ** 2)
    return np.sum(x)


def test_comprehension_as_a_for_loop_iterable():
    check(loop_over_a_comprehension, np.sum(4 * X3 ** 2), 8 * X3)


def test_local_function_call_as_an_if_test():
    check(local_call_as_if_test, np.sum(X3 ** 2), 2 * X3)
    check(local_call_as_if_test, np.sum(-X3), 1 + 0 * X3, x=-X3)

