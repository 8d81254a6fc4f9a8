"""Regressions found by running autograd's own test suite through srcgrad
(benchmarks/compat): each is a program autograd differentiates, checked here
against autograd and central differences, on srcgrad's paths.

* `operator.add(a, b)` and the other operator functions, called by name or
  passed to functools.reduce, are the expressions `a + b`, ...: compiled
  (they were refused: no rule for operator.add).
* `sorted(d)` of a dict differentiated through the dict: the keys carry no
  derivative (the transpose-trick tangent of the list of keys crashed).
* A list or tuple argument holding arrays of different shapes, at second
  order in every mode pair (forward over reverse, reverse over forward):
  the same structure back, zeros for an element not read.
"""
import functools
import operator
import warnings

import autograd
import autograd.numpy as anp
import numpy as np

import srcgrad as sg
from system_support import close, fd_grad, short_traceback

X = np.array([0.5, 1.5, 0.7])
Y = np.array([2.0, -1.0, 0.3])


def operators(x, y):
    return np.sum(operator.add(x, y) * operator.mul(x, 2.0) - operator.sub(y, x) + operator.neg(x)
                  + operator.truediv(x, 3.0) + operator.pow(x, 2.0))


def a_operators(x, y):
    return anp.sum((x + y) * (x * 2.0) - (y - x) - x + x / 3.0 + x ** 2.0)


def reduced_product(x):
    return np.sum(functools.reduce(operator.mul, [x[0], x[1], x[2]]) * x)


@short_traceback
def test_operator_functions_are_compiled():
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)     # compiled, no fallback
        g = sg.grad(operators, wrt=(0, 1))(X, Y)
        h = sg.hessian(lambda v: operators(v, Y))(X)
    for gi, ei in zip(g, autograd.grad(a_operators, (0, 1))(X, Y)):
        close(gi, ei, rtol=1e-12, what="against autograd")
    close(g[0], fd_grad(lambda v: operators(v, Y), X), what="against central differences")
    close(h, autograd.hessian(lambda v: a_operators(v, Y))(X), rtol=1e-12, what="Hessian against autograd")
    assert "x + y" in sg.source(operators, wrt=(0, 1)).replace("add_x = ", "")


@short_traceback
def test_operator_passed_to_reduce():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)     # functools.reduce: op by op
        g = sg.grad(reduced_product)(X)
    close(g, fd_grad(reduced_product, X), what="against central differences")
    close(g, autograd.grad(lambda x: anp.sum(x[0] * x[1] * x[2] * x))(X), rtol=1e-12, what="against autograd")


def weighted_by_sorted_keys(d):
    a, b = 0.0, 0.0
    for i, k in enumerate(sorted(d)):
        a = a + np.sum(np.sin(d[k])) * (i + 1.0)
        b = b + np.sum(np.cos(d[k]))
    return a + b


def gradient_of_weighted(d, u):
    return WEIGHTED_GRAD(d, u)


def weighted_scaled(d, u):
    return weighted_by_sorted_keys(d) * u


WEIGHTED_GRAD = sg.grad(weighted_scaled)


@short_traceback
def test_sorted_keys_of_a_dict_at_second_order():
    rng = np.random.default_rng(5)
    D = {"b": rng.normal(size=(2, 3)), "a": rng.normal(size=4), "c": rng.normal(size=2)}
    T = {k: rng.normal(size=np.shape(v)) for k, v in D.items()}
    g = sg.grad(weighted_by_sorted_keys)(D)
    for i, k in enumerate(sorted(D)):
        close(g[k], np.cos(D[k]) * (i + 1.0) - np.sin(D[k]), rtol=1e-12, what="entry %s" % k)
    _, t = sg.jvp(gradient_of_weighted, (D, 1.0), (T, 0.0))
    for i, k in enumerate(sorted(D)):
        close(t[k], (-np.sin(D[k]) * (i + 1.0) - np.cos(D[k])) * T[k], rtol=1e-12, what="tangent of entry %s" % k)
    hv = sg.grad(lambda d: sum(np.sum(gradient_of_weighted(d, 1.0)[k] * T[k]) for k in sorted(d)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        h = hv(D)
    for k in D:
        close(h[k], t[k], rtol=1e-10, what="reverse over reverse, entry %s" % k)


@short_traceback
def test_std_at_a_constant_input_has_zero_derivative():
    """std of one number, or of equal entries, is 0 along every direction
    that keeps them so: the derivative is 0 (central differences, autograd),
    not 0/0 = nan. Away from that, std's gradient is unchanged."""
    close(sg.grad(np.std)(3.5), 0.0, atol=0, what="sg.grad of a number")
    close(sg.jvp(np.std, (3.5,), (1.0,))[1], 0.0, atol=0, what="sg.jvp of a number")
    close(sg.grad(lambda a: np.std(a, axis=0))(np.ones((1, 3))), np.zeros((1, 3)), atol=0,
          what="one row along the axis")
    x = np.array([0.3, -1.2, 2.0])
    close(sg.grad(np.std)(x), autograd.grad(anp.std)(x), rtol=1e-12, what="against autograd")
    close(sg.hessian(lambda a: np.std(a))(x), autograd.hessian(anp.std)(x), rtol=1e-10, what="Hessian")


def all_close_to_itself(x):
    return np.allclose(x, (x * 3.0) / 3.0)


def test_grad_of_a_bool_output_raises_type_error():
    """autograd's test_logic.py::test_nograd: np.allclose has no derivative;
    sg.grad of it is a TypeError (it returned zeros), as in autograd and JAX."""
    import pytest
    with pytest.raises(TypeError, match="bool"):
        sg.grad(all_close_to_itself)(np.array([1.0, 2.0, 3.0]))
    close(sg.grad(lambda x: 2.0)(np.ones(2)), np.zeros(2), atol=0, what="a constant float output: zeros")


def loop_over_list(ps, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(np.tanh(ps[0] * i) * ps[1])
    return s


LOOP_GRAD = sg.grad(loop_over_list)


def first_gradient_squared(ps, n):
    return np.sum(LOOP_GRAD(ps, n)[0] ** 2)


@short_traceback
def test_gradient_of_a_list_in_a_loop_differentiated_again():
    """The generated gradient of a list argument ends in as_input_tree
    (zeros for the unread element); differentiated again, compiled, it
    agrees with autograd."""
    ps = [np.array([1.0, -0.4]), np.array([0.5, 0.8]), np.zeros(3)]
    assert "as_input_tree(" in sg.source(LOOP_GRAD, args=(ps, 3))

    def a_loop(p, n):
        s = 0.0
        for i in range(n):
            s = s + anp.sum(anp.tanh(p[0] * i) * p[1])
        return s
    expected = autograd.grad(lambda p: anp.sum(autograd.grad(a_loop)(p, 3)[0] ** 2))(ps)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        got = sg.grad(first_gradient_squared)(ps, 3)
    for gi, ei in zip(got, expected):
        close(gi, ei, rtol=1e-12, what="against autograd")
    close(got[2], np.zeros(3), atol=0, what="the unread element")


@short_traceback
def test_hessian_of_a_numpy_function_with_keyword_parameters():
    """Was ValueError "wrt index 0 out of range for std with 0 parameters":
    the Function made for a library function with optional parameters
    (np.std(a, axis=None, ...)) had only *args and **kwargs, so wrt=0 named
    nothing. Its required parameters are named now."""
    x = np.array([1.0, 2.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)     # (the Hessian of a *args function: op by op)
        h = sg.hessian(np.std)(x)
    close(h, autograd.hessian(anp.std)(x), what="against autograd")
    close(h, np.array([fd_grad(lambda v: sg.grad(np.std)(v)[i], x) for i in range(3)]),
          what="against central differences of sg.grad(np.std)")
    close(sg.grad(np.std)(x), autograd.grad(anp.std)(x), what="the gradient, against autograd")


@short_traceback
def test_repeat_zero_times_over_the_flattened_array():
    """Was ValueError "cannot reshape array of size 0 into shape (0)" (autograd's
    test_repeat at second order): np.repeat(a, 0) with axis=None has an empty
    cotangent, which reshape(-1, 0) cannot place."""
    x = np.array([[0.3], [-1.2], [0.7]])
    for repeats in (0, 2):
        def f(a, repeats=repeats):
            return np.sum(np.repeat(a, repeats) ** 3)

        def fa(a, repeats=repeats):
            return anp.sum(anp.repeat(a, repeats) ** 3)
        close(sg.grad(f)(x), autograd.grad(fa)(x), what="gradient, repeats=%d" % repeats)
        close(sg.hessian(f)(x), autograd.hessian(fa)(x), what="Hessian, repeats=%d" % repeats)


def _zip_pairs(x, y):
    total = 0.0
    for pair in zip(x, y):
        total = total + pair[0] * pair[1] ** 2
    return total


@short_traceback
def test_a_zip_loop_with_one_target_and_the_helpers_that_use_it():
    """Was refused ("a zip loop whose target does not unpack every
    sequence"): `for pair in zip(a, b)`, in user code and in srcgrad's own
    tile and kron adjoints, transformed again for a second derivative
    (autograd's test_tile and test_kron)."""
    x, y = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)      # compiled, not op by op
        g = sg.grad(_zip_pairs, wrt=(0, 1))(x, y)
        close(g[0], y ** 2, what="d/dx")
        close(g[1], 2 * x * y, what="d/dy")
        rng = np.random.RandomState(0)
        a, b = rng.randn(2, 2), rng.randn(3, 2)
        close(sg.hessian(lambda v: np.sum(np.sin(np.tile(v, (2, 3)))))(a),
              autograd.hessian(lambda v: anp.sum(anp.sin(anp.tile(v, (2, 3)))))(a), what="tile's Hessian")
        close(sg.hessian(lambda v: np.sum(np.sin(np.kron(v, b))))(a),
              autograd.hessian(lambda v: anp.sum(anp.sin(anp.kron(v, b))))(a), what="kron's Hessian")
