"""Regressions found by tests/tools/probe_batched.py: Hessians and
Jacobians of gradients (batched reverse sweeps over generated code) and
HVPs, checked against central differences of the gradient and autograd.

A checkpointed loop in a helper: the helper's split reverse sweep copies
the forward's stack of residuals (S = list(res[k])) and pushes onto the
copy (re-running the first step recorded). Differentiated again, that
copy's cotangents (reverse) were dropped, a wrong Hessian without a word,
and its tangents (forward) started empty, an IndexError in sg.hvp."""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_jacobian


def _steps(v):
    y = v
    for t in sg.checkpointed(range(4), snapshots=2):
        y = np.sin(y) + 0.5 * y * v
    return y


def checkpointed_in_helper(v):
    y = _steps(v)
    return np.sum(np.sin(y) * (1.0 + y))


def checkpointed_in_helper_sum(v):
    return np.sum(_steps(v) ** 2)


def _steps_auto(v):
    y = v
    for t in range(4):
        y = anp.sin(y) + 0.5 * y * v
    return y


AUTOGRAD = {
    checkpointed_in_helper: lambda v: anp.sum(anp.sin(_steps_auto(v)) * (1.0 + _steps_auto(v))),
    checkpointed_in_helper_sum: lambda v: anp.sum(_steps_auto(v) ** 2),
}
CASES = [(f, n) for f in AUTOGRAD for n in (2, 3, 4, 6)]


def _x(n):
    return np.linspace(0.35, 1.3, n) * np.array([1.0, -1.0] * n)[:n]


@pytest.mark.parametrize("fn, n", CASES, ids=["%s-%d" % (f.__name__, n) for f, n in CASES])
def test_hessians(fn, n):
    x = _x(n)
    expected = numerical_jacobian(sg.grad(fn), x)
    check_close(expected, autograd.hessian(AUTOGRAD[fn])(x), rtol=1e-6, atol=1e-7)
    check_close(sg.hessian(fn)(x), expected, rtol=1e-6, atol=1e-7)
    check_close(sg.jacobian(sg.grad(fn))(x), expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("fn, n", CASES, ids=["%s-%d" % (f.__name__, n) for f, n in CASES])
def test_hvps(fn, n):
    x = _x(n)
    expected = numerical_jacobian(sg.grad(fn), x)
    for k in range(n):
        check_close(sg.hvp(fn)(x, np.eye(n)[k]), expected[k], rtol=1e-6, atol=1e-7)


# A list display holding a constant ([v[1], 2.0]) passed to np.dot or np.matmul: the rule's cotangent
# of the list is one array of shape (B, 2) (the list's shape, the batch in front), and its entries
# were read as g[k], example k for entry k: a wrong Jacobian (and Hessian) without a word whenever
# B >= 2, an error in the Hessian when it was not (entry_b reads g[:, k]).

W2 = np.array([1.5, -2.0])


def _two(a, b):
    return a * b, a - b


def dot_of_lists(v):
    return np.array([np.dot([v[0], v[1]], [v[1], 2.0]), v[0]])


def matmul_of_lists(v):
    return np.matmul([v[0], v[1]], [v[1], 2.0]) * W2


def dot_and_norm_of_lists(v):
    return np.array([np.dot([v[0], v[1]], [v[1], 2.0]), np.linalg.norm([v[0], v[1]])])


def dot_of_helper_tuple(v):
    z = _two(v[0], v[1])
    return np.array([np.dot(z, [v[1], 2.0]), v[0]])


def _as_autograd(fn):
    import test_batched_probe as me
    saved = me.np
    me.np = anp
    try:
        return fn()
    finally:
        me.np = saved


LIST_CASES = [(f, n) for f in (dot_of_lists, matmul_of_lists, dot_and_norm_of_lists, dot_of_helper_tuple)
              for n in (2, 3, 5)]


@pytest.mark.parametrize("fn, n", LIST_CASES, ids=["%s-%d" % (f.__name__, n) for f, n in LIST_CASES])
def test_jacobians_of_list_operands(fn, n):
    x = _x(n)
    expected = numerical_jacobian(fn, x)
    check_close(expected, _as_autograd(lambda: autograd.jacobian(fn)(x)), rtol=1e-6, atol=1e-7)
    check_close(sg.jacobian(fn)(x), expected, rtol=1e-6, atol=1e-7)
    with sg.GradientTape(persistent=True) as tape:
        xt = sg.Tensor(x.copy())
        tape.watch(xt)
        y = sg.function(fn)(xt)
    check_close(tape.jacobian(y, xt), expected, rtol=1e-6, atol=1e-7)


def _scalar(fn):
    def s(v):
        y = fn(v)
        return np.sum(np.sin(y) * (1.0 + y))
    return s


HESSIAN_LIST_CASES = [(f, 2) for f in (dot_of_lists, matmul_of_lists, dot_and_norm_of_lists)]
# (second order: the helpers of dot's and matmul's rules, differentiated, add the list operand's
# cotangent as one (B, 2) array to its list form: add_cotangents zipped the array's examples with
# the list's entries, a wrong Hessian without a word, or a ValueError when B > 2)
HESSIAN_LIST_CASES += [(f, n) for f in (dot_of_lists, matmul_of_lists, dot_and_norm_of_lists, dot_of_helper_tuple)
                       for n in (2, 3, 5) if (f, n) not in HESSIAN_LIST_CASES]


@pytest.mark.parametrize("fn, n", HESSIAN_LIST_CASES, ids=["%s-%d" % (f.__name__, n) for f, n in HESSIAN_LIST_CASES])
def test_hessians_of_list_operands(fn, n):
    x = _x(n)
    s = _scalar(fn)
    expected = _as_autograd(lambda: autograd.hessian(s)(x))
    check_close(numerical_jacobian(sg.grad(s), x), expected, rtol=1e-6, atol=1e-7)
    check_close(sg.hessian(s)(x), expected, rtol=1e-6, atol=1e-7)
    check_close(sg.jacobian(sg.grad(s))(x), expected, rtol=1e-6, atol=1e-7)


# Element assignment into a Python list (xs = [0.0] * n; xs[i] = ...): at second order and in the
# transposed VJP (forward-mode sg.jacobian), the cotangent of the list is a list of symbolic zeros.
# zero_at_b sent it to batch_vjp, which found no batch size and returned None for the whole list
# (TypeError); and a helper's batched split reverse sweep given only such cotangents had no batch
# size for its zeros (zeros_b(x, None): TypeError).

def setitem_list(v):
    xs = [0.0] * len(v)
    for i in range(len(v)):
        xs[i] = v[i] * v[0]
    return np.sum(np.array(xs) ** 2)


def _setitem_list_helper(v):
    xs = [0.0] * len(v)
    for i in range(len(v)):
        xs[i] = v[i] * v[0]
    return np.array(xs)


def setitem_list_in_helper(v):
    return np.sum(np.sin(_setitem_list_helper(v)) * (1.0 + _setitem_list_helper(v)))


SETITEM_CASES = [(f, n) for f in (setitem_list, setitem_list_in_helper) for n in (2, 3, 4)]


@pytest.mark.parametrize("fn, n", SETITEM_CASES, ids=["%s-%d" % (f.__name__, n) for f, n in SETITEM_CASES])
def test_hessians_of_list_element_assignment(fn, n):
    x = _x(n)
    expected = numerical_jacobian(sg.grad(fn), x)
    check_close(expected, autograd.hessian(lambda v: anp.sum(anp.array([v[i] * v[0] for i in range(n)]) ** 2))(x)
                if fn is setitem_list else
                autograd.hessian(lambda v: anp.sum(anp.sin(anp.array([v[i] * v[0] for i in range(n)]))
                                                   * (1.0 + anp.array([v[i] * v[0] for i in range(n)]))))(x),
                rtol=1e-6, atol=1e-7)
    check_close(sg.hessian(fn)(x), expected, rtol=1e-6, atol=1e-7)
    check_close(sg.jacobian(sg.grad(fn))(x), expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("n", (2, 3, 4))
def test_forward_jacobian_of_list_element_assignment(n, monkeypatch):
    import srcgrad.jacobians as sgj
    monkeypatch.setattr(sgj, "FORWARD_MIN_OUT", 0)
    monkeypatch.setattr(sgj, "FORWARD_BELOW", float("inf"))
    x = _x(n)
    expected = numerical_jacobian(_setitem_list_helper, x)
    jac = sg.jacobian(_setitem_list_helper)
    check_close(jac(x), expected, rtol=1e-6, atol=1e-7)
    check_close(jac(x), expected, rtol=1e-6, atol=1e-7)       # (the second call: forward mode)


# A list display nested in a rule's sequence parameter (einsum's operands ('i,i->', [v[0], 2.0], b)):
# activity analysis, the reverse rule's code and the forward rule's code read one level of the
# operands, so v[0]'s derivative through the nested list was dropped without a word (gradients,
# JVPs, Hessians and Jacobians), or the whole gradient was zero when no other operand was active.

C2 = np.array([1.0, 3.0])


def einsum_nested_lists(v):
    return np.sin(np.einsum("i,i->", [v[0], 2.0], [v[1], v[0]]))


def einsum_nested_list_only(v):
    return np.sin(np.einsum("i,i->", [v[0] * v[1], 2.0], C2))


def einsum_nested_vector(v):
    return np.einsum("i,i->i", [v[0], 2.0], [v[1], v[0] ** 2])


NESTED = [einsum_nested_lists, einsum_nested_list_only]
NESTED_CASES = [(f, n) for f in NESTED for n in (2, 3)]


@pytest.mark.parametrize("fn, n", NESTED_CASES, ids=["%s-%d" % (f.__name__, n) for f, n in NESTED_CASES])
def test_nested_list_operands(fn, n):
    x = _x(n)
    expected_g = numerical_jacobian(fn, x)
    check_close(_as_autograd(lambda: autograd.grad(fn)(x)), expected_g, rtol=1e-6, atol=1e-7)
    check_close(sg.grad(fn)(x), expected_g, rtol=1e-6, atol=1e-7)
    jvps = [sg.jvp(fn, (x,), (np.eye(n)[k],))[1] for k in range(n)]
    check_close(np.array(jvps), expected_g, rtol=1e-6, atol=1e-7)
    expected_h = numerical_jacobian(sg.grad(fn), x)
    check_close(_as_autograd(lambda: autograd.hessian(fn)(x)), expected_h, rtol=1e-6, atol=1e-7)
    check_close(sg.hessian(fn)(x), expected_h, rtol=1e-6, atol=1e-7)
    check_close(sg.jacobian(sg.grad(fn))(x), expected_h, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("n", (2, 3))
def test_nested_list_operands_jacobian(n):
    # (central differences only: autograd's einsum drops the derivative through a list holding a constant)
    x = _x(n)
    expected = numerical_jacobian(einsum_nested_vector, x)
    check_close(sg.jacobian(einsum_nested_vector)(x), expected, rtol=1e-6, atol=1e-7)


# A list read both as one array (np.array(t[1]), whose adjoint gives the list form) and by np.dot
# (whose adjoint, a helper differentiated at second order, returns an array): the helper's batched
# reverse sweep got the list form of its output's cotangent, which unbroadcast_b read as one array
# with the examples on axis 0 (ValueError with a None entry; transposed when B equalled its length).

def tuple_of_lists(v):
    t = ([v[0], v[1]], [v[1] ** 2, 2.0])
    return np.sum(np.sin(np.array(t[0]) * np.array(t[1]) + np.dot(t[0], t[1])))


def tuple_of_lists_auto(v):
    a, b = [v[0], v[1]], [v[1] ** 2, 2.0]
    return anp.sum(anp.sin(anp.array(a) * anp.array(b) + (a[0] * b[0] + a[1] * b[1])))


@pytest.mark.parametrize("n", (2, 3, 4))
def test_hessians_of_a_list_read_two_ways(n):
    x = _x(n)
    expected = numerical_jacobian(sg.grad(tuple_of_lists), x)
    check_close(autograd.hessian(tuple_of_lists_auto)(x), expected, rtol=1e-6, atol=1e-7)
    check_close(sg.hessian(tuple_of_lists)(x), expected, rtol=1e-6, atol=1e-7)
    check_close(sg.jacobian(sg.grad(tuple_of_lists))(x), expected, rtol=1e-6, atol=1e-7)


# A named list holding a constant read by np.outer and np.einsum: at second order, einsum's adjoint
# helper gets, per example, a list cotangent of the list operand with a None (symbolic zero) entry,
# which np.einsum could not read (TypeError).

def outer_and_einsum_of_a_list(v):
    xs = [v[0], 2.0]
    y = np.concatenate([np.outer(xs, v).ravel(), np.einsum("i,i->", xs, [v[1], v[0]])[None]])
    return np.sum(np.sin(y) * (1.0 + y))


def _check_gradient_and_hessians(f, x):
    """sg.grad against central differences of f; sg.hessian and the
    Jacobian of the gradient against central differences of the gradient."""
    expected = numerical_jacobian(sg.grad(f), x)
    check_close(sg.grad(f)(x), numerical_jacobian(f, x), rtol=1e-6, atol=1e-7)
    check_close(sg.hessian(f)(x), expected, rtol=1e-6, atol=1e-7)
    check_close(sg.jacobian(sg.grad(f))(x), expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("n", (2, 3))
def test_hessians_of_einsum_of_a_list(n):
    _check_gradient_and_hessians(outer_and_einsum_of_a_list, _x(n))


def tuple_of_lists_no_constant(v):
    t = ([v[0], v[1]], [v[1] ** 2, v[0] * 3.0])
    return np.sum(np.sin(np.array(t[0]) * np.array(t[1]) + np.dot(t[0], t[1])))


@pytest.mark.parametrize("n", (2, 3, 4))
def test_hessians_of_a_list_of_names_read_two_ways(n):
    _check_gradient_and_hessians(tuple_of_lists_no_constant, _x(n))
