"""Python's scoping rules in the lowering (transforms/lower/), where
srcgrad once gave wrong values and gradients or crashed the generated code:

1. A comprehension's first iterable is evaluated in the enclosing scope:
   `[x * 2 for x in x]` iterates over the outer x (comprehensions.py, which
   renamed the target there too: the generated code read an unbound name).
   Dict and set comprehensions are refused by the compiler and run op by op.
2. A comprehension or a local function call as the whole header of a
   `for` or `if` (`for y in [...]:`, `if g(x):`) is hoisted before the
   statement like one inside it (it was refused or left unresolved).
3. A default of a local `def` or `lambda` is evaluated once, where the
   function is defined (again at each execution of the def in a loop), not
   at the calls: a name it reads may be rebound before the call
   (local_functions.py binds it to `<function>_<param>_default` at the
   definition; the calls gave silent wrong values and gradients).
4. A local function's name must denote one function in the whole body:
   a second definition, an assignment or a parameter of the same name is
   refused (and runs op by op) instead of inlining the wrong body at every
   call (silent wrong values and gradients).

Each function is checked against plain Python (the value), a closed form,
central finite differences and, where autograd runs it (`np` rebound to
autograd.numpy in this module, as tests/test_frontend_patterns.py does),
autograd, through sg.value_and_grad, sg.jvp and sg.function on a
GradientTape.
"""
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad, numpy_swapped

RTOL, ATOL = 1e-5, 1e-6            # against finite differences
AG_RTOL, AG_ATOL = 1e-8, 1e-10     # against autograd and the closed forms
X3 = np.array([0.3, 1.2, -0.7])


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
        with numpy_swapped(__name__, anp):
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
    with numpy_swapped(__name__, anp):
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



# ===========================================================================
# 3. Defaults of local functions: evaluated at the definition
# ===========================================================================

def def_default_then_rebound(x):
    a = 2.0 * x
    def g(z, c=a):      # c is 2x: bound here
        return z * c
    a = x ** 3
    return np.sum(g(x)) + 0.0 * np.sum(np.sin(a))      # (its adjoint reads a: a is computed, after the def)


def lambda_default_then_rebound(x):
    a = 2.0 * x
    g = lambda z, c=a: z * c  # noqa: E731
    a = x ** 3
    return np.sum(g(x))


def test_def_default_is_evaluated_at_the_definition():
    check(def_default_then_rebound, np.sum(2 * X3 ** 2), 4 * X3)


def test_lambda_default_is_evaluated_at_the_definition():
    check(lambda_default_then_rebound, np.sum(2 * X3 ** 2), 4 * X3)


def test_the_default_is_bound_once_where_the_function_is_defined():
    src = sg.source(def_default_then_rebound)
    forward = src.split("# Reverse sweep")[0]
    assert forward.count("g_c_default = ") == 1, src
    assert forward.index("g_c_default = ") < forward.index("x ** 3"), src


def default_read_by_two_calls(x):
    a = np.sin(x)
    def g(z, c=a, k=2.0, f=np.tanh):    # a constant, a global's attribute: left at the calls
        return f(z) * c * k
    a = a * 10.0
    return np.sum(g(x)) + np.sum(g(a, k=-1.0))


def test_two_calls_read_the_same_default_and_its_gradient_is_counted_once_per_call():
    s, c = np.sin(X3), np.cos(X3)
    a = 10.0 * s
    value = np.sum(2.0 * np.tanh(X3) * s - np.tanh(a) * s)
    grad = (2.0 * (1 - np.tanh(X3) ** 2) * s + 2.0 * np.tanh(X3) * c
            - (1 - np.tanh(a) ** 2) * 10.0 * c * s - np.tanh(a) * c)
    check(default_read_by_two_calls, value, grad)


def def_in_a_loop(x):
    s = 0.0
    a = x
    for _ in range(3):
        def g(z, c=a):      # re-evaluated at each iteration: x, x^2, x^3
            return z * c
        a = a * x
        s = s + np.sum(g(x))
    return s


def lambda_in_a_loop(x):
    s = 0.0
    a = x
    for _ in range(3):
        g = lambda z, c=a * 2.0: z * c  # noqa: E731
        a = np.sin(a)
        s = s + np.sum(g(x))
    return s


def test_def_in_a_loop_evaluates_its_default_at_each_iteration():
    check(def_in_a_loop, np.sum(X3 ** 2 + X3 ** 3 + X3 ** 4), 2 * X3 + 3 * X3 ** 2 + 4 * X3 ** 3)


def test_lambda_in_a_loop_evaluates_its_default_at_each_iteration():
    s1 = np.sin(X3)
    s2 = np.sin(s1)
    c1, c2 = np.cos(X3), np.cos(s1) * np.cos(X3)
    value = np.sum(2 * X3 * (X3 + s1 + s2))
    grad = 2 * (X3 + s1 + s2) + 2 * X3 * (1 + c1 + c2)
    check(lambda_in_a_loop, value, grad)


def called_before_the_def_runs_again(x):
    s = 0.0
    a = x
    for i in range(3):
        if i > 0:
            s = s + np.sum(g(x))    # noqa: F821 (the g of the previous iteration, with its default)
        def g(z, c=a):
            return z * c
        a = a * x
    return s


def test_a_call_reads_the_default_of_the_last_execution_of_the_def():
    check(called_before_the_def_runs_again, np.sum(X3 ** 2 + X3 ** 3), 2 * X3 + 3 * X3 ** 2)


def keyword_only_defaults(x):
    a = np.sin(x)
    def g(z, *, c=a, d=2.0):
        return z * c * d
    a = x
    return np.sum(g(x)) + np.sum(g(x, d=3.0)) + np.sum(g(x, c=a))


def positional_only_default(x):
    a = np.sin(x)
    def g(z, /, c=a):
        return z * c
    a = x
    return np.sum(g(x)) + np.sum(g(a, a))


def test_keyword_only_defaults():
    s, c = np.sin(X3), np.cos(X3)
    check(keyword_only_defaults, np.sum(5 * X3 * s + 2 * X3 ** 2), 5 * (s + X3 * c) + 4 * X3)


def test_positional_only_parameter_and_default():
    s, c = np.sin(X3), np.cos(X3)
    check(positional_only_default, np.sum(X3 * s + X3 ** 2), s + X3 * c + 2 * X3)


def nested_local_functions(x):
    def h(y, k=x ** 2):         # k is x^2 (the parameter, before it is rebound)
        def g(z, c=y * k):      # c is y k: y rebound below
            return z + c
        y = y * 3.0
        return g(y)
    x = x + 1.0
    return np.sum(h(x))


def test_defaults_of_nested_local_functions():
    value = np.sum(3 * (X3 + 1) + (X3 + 1) * X3 ** 2)
    grad = 3 + X3 ** 2 + 2 * X3 * (X3 + 1)
    check(nested_local_functions, value, grad)


def default_read_in_a_comprehension(x):
    a = x * x
    g = lambda z, c=a: z * c  # noqa: E731
    a = x
    return np.sum(sum([g(v) for v in x]))


def test_default_read_by_calls_inside_a_comprehension():
    check(default_read_in_a_comprehension, np.sum(X3) * np.sum(X3 ** 2),
          np.sum(X3 ** 2) + 2 * X3 * np.sum(X3))


# ===========================================================================
# 4. A local function's name is bound once
# ===========================================================================

def two_defs_of_one_name(x):
    if x[0] > 0:
        def g(z):
            return z * 2.0
    else:
        def g(z):
            return z * 3.0
    return np.sum(g(x))


def lambda_rebound(x):
    g = lambda z: z * 2.0  # noqa: E731
    y = g(x)
    g = lambda z: z * 5.0  # noqa: E731
    return np.sum(y + g(x))


def def_named_as_a_parameter(x, g=np.sin):
    y = g(x)
    def g(z):
        return z * 2.0
    return np.sum(y + g(x))


def def_named_as_a_parameter_of_a_local_function(x):
    def h(z, g):
        def g(u):
            return u * 2.0
        return g(z)
    return np.sum(h(x, np.sin))


@pytest.mark.parametrize("fn, message, value, grad", [
    (two_defs_of_one_name, "defined more than once", np.sum(2 * X3), 2 + 0 * X3),
    (lambda_rebound, "defined more than once", np.sum(7 * X3), 7 + 0 * X3),
    (def_named_as_a_parameter, "named as the parameter", np.sum(np.sin(X3) + 2 * X3), np.cos(X3) + 2),
    (def_named_as_a_parameter_of_a_local_function, "named as its parameter", np.sum(2 * X3), 2 + 0 * X3),
])
def test_a_local_function_name_bound_twice_is_refused_and_runs_op_by_op(fn, message, value, grad):
    with pytest.raises(sg.UnsupportedSyntaxError, match=message):
        sg.grad(fn)(X3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        v, g = sg.value_and_grad(fn)(X3)
    assert np.isclose(fn(X3), value)
    check_close(v, value, AG_RTOL, AG_ATOL)
    check_close(g, grad, AG_RTOL, AG_ATOL)
    check_close(g, numerical_grad(fn, X3), RTOL, ATOL)
