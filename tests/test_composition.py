"""Compositions at the edges of the tape and the functional API.

1. 0-d float64 Variables on a tape run a decorated function's code
   specialised to 0-d values (as Python floats do under sg.grad: no
   zeros_like, no unbroadcast), passed as NumPy scalars so that ndarray
   attributes (shape, reshape, astype, T, item) keep working. Gradients are
   checked against central differences, sg.grad, the op-by-op tape and
   autograd.
2. sg.hvp called on watched Tensors inside a recording tape is recorded
   (the generated JVP of the generated gradient runs on Tensors): third
   derivatives against autograd.
3. What sg.jacobian and sg.hessian return runs a Jacobian engine, not
   generated code: sg.source raises NoRuleError naming it; differentiated,
   it runs op by op, and on watched Tensors inside a tape it computes with
   tapes of its own, which the outer tape records (third derivatives
   against autograd).
"""
import math
import os
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad

THIS_FILE = os.path.basename(__file__)


# ---------------------------------------------------------------- functions

def pendulum(theta0, c):
    theta = theta0
    omega = 0.0
    for i in range(200):
        alpha = -9.81 * math.sin(theta) - c * omega
        omega = omega + 0.01 * alpha
        theta = theta + 0.01 * omega
    return theta


def pendulum_np(theta0, c):
    theta = theta0
    omega = 0.0
    for i in range(200):
        alpha = -9.81 * np.sin(theta) - c * omega
        omega = omega + 0.01 * alpha
        theta = theta + 0.01 * omega
    return theta


def uses_array_attributes(a, b):
    """Reads ndarray attributes of its 0-d arguments."""
    n = a.shape
    v = a.reshape(1) * np.ones(3) + b.T
    w = np.sum(v ** 2) * b.astype(np.float64)
    return w + len(n) + a.item() * 0.0 + np.exp(a) * b


def cubic(x):
    return np.sum(np.sin(x) * x ** 2)


def cubic_ag(x):
    return anp.sum(anp.sin(x) * x ** 2)


def sum_of_hvp(x, v):
    return np.sum(sg.hvp(cubic)(x, v))


# ------------------------------------------------- 1. 0-d Variables on a tape

def _tape_grad(f, *values):
    vs = [sg.Variable(np.float64(v)) for v in values]
    with sg.GradientTape() as tape:
        y = f(*vs)
    return [g.numpy() for g in tape.gradient(y, vs)]


def test_zero_d_variables_run_the_scalar_code_and_agree():
    compiled = sg.function(pendulum)
    by_tape = _tape_grad(compiled, 0.5, 0.3)
    by_grad = sg.grad(pendulum, wrt=(0, 1))(0.5, 0.3)
    op_by_op = _tape_grad(pendulum_np, 0.5, 0.3)
    fd = numerical_grad(lambda p: pendulum(p[0], p[1]), np.array([0.5, 0.3]))
    ag = autograd.grad(lambda p: _pendulum_ag(p[0], p[1]))(np.array([0.5, 0.3]))
    for path in (by_grad, op_by_op):
        check_close(by_tape, [np.asarray(g) for g in path], rtol=1e-10, atol=1e-12)
    check_close(by_tape, list(fd), rtol=1e-6, atol=1e-8)
    check_close(by_tape, list(ag), rtol=1e-10, atol=1e-12)
    # the tape ran the code specialised to 0-d values: no zeros_like in it
    program = next(iter(compiled._programs.values()))
    assert program.resolution.scalars == {"theta0", "c"}
    assert all(g.dtype == np.float64 and g.shape == () for g in by_tape)


def _pendulum_ag(theta0, c):
    theta, omega = theta0, 0.0
    for i in range(200):
        alpha = -9.81 * anp.sin(theta) - c * omega
        omega = omega + 0.01 * alpha
        theta = theta + 0.01 * omega
    return theta


def test_zero_d_variables_keep_ndarray_attributes():
    compiled = sg.function(uses_array_attributes)
    by_tape = _tape_grad(compiled, 0.4, -1.3)
    op_by_op = _tape_grad(uses_array_attributes, 0.4, -1.3)
    check_close(by_tape, op_by_op, rtol=1e-10, atol=1e-12)
    fd = numerical_grad(lambda p: uses_array_attributes(np.float64(p[0]), np.float64(p[1])),
                        np.array([0.4, -1.3]))
    check_close(by_tape, list(fd), rtol=1e-6, atol=1e-8)


def test_zero_d_float32_variables_keep_their_dtype():
    a, b = sg.Variable(np.float32(0.4)), sg.Variable(np.float32(-1.3))
    with sg.GradientTape() as tape:
        y = sg.function(pendulum_np)(a, b)
    ga, gb = tape.gradient(y, [a, b])
    assert y.dtype == np.float32 and ga.dtype == np.float32 and gb.dtype == np.float32


def test_zero_d_variables_second_order_through_nested_tapes():
    compiled = sg.function(pendulum)
    a, c = sg.Variable(0.5), sg.Variable(0.3)
    with sg.GradientTape() as outer:
        with sg.GradientTape() as inner:
            y = compiled(a, c)
        ga = inner.gradient(y, a)
    gaa = outer.gradient(ga, a).numpy()
    expected = autograd.grad(autograd.grad(_pendulum_ag))(0.5, 0.3)
    check_close(gaa, expected, rtol=1e-8, atol=1e-10)


# ------------------------------------------------ 2. sg.hvp recorded on a tape

def test_hvp_on_watched_tensors_is_recorded():
    x = np.array([0.3, 0.7, -1.1])
    v = np.array([1.0, -2.0, 0.5])
    xv = sg.Variable(x)
    with sg.GradientTape() as tape:
        y = np.sum(sg.hvp(cubic)(xv, v))
    got = tape.gradient(y, xv)
    assert got is not None
    expected = autograd.grad(lambda x: anp.sum(autograd.hessian_vector_product(cubic_ag)(x, v)))(x)
    check_close(got.numpy(), expected, rtol=1e-10, atol=1e-12)
    fd = numerical_grad(lambda x: np.sum(sg.hvp(cubic)(x, v)), x)
    check_close(got.numpy(), fd, rtol=1e-6, atol=1e-8)


def test_hvp_outside_a_tape_is_an_array():
    x = np.array([0.3, 0.7])
    hv = sg.hvp(cubic)(x, np.ones(2))
    assert type(hv) is np.ndarray
    check_close(hv, autograd.hessian_vector_product(cubic_ag)(x, np.ones(2)), rtol=1e-10, atol=1e-12)


# ------------------------- 3. sg.jacobian / sg.hessian results: differentiated op by op

def test_differentiating_a_jacobian_result_runs_op_by_op():
    """What sg.jacobian and sg.hessian return has no generated code
    (sg.source says so); differentiated, it runs op by op (a
    PerformanceWarning naming it): its Jacobian is then computed by a tape
    on the Tensors, which the outer derivative records (autograd's
    test_jacobian_higher_order)."""
    H = sg.hessian(cubic)
    with pytest.raises(sg.NoRuleError, match="sg.hessian returned"):
        sg.source(H)
    x = np.array([0.3, 0.7])
    with pytest.warns(sg.PerformanceWarning, match="sg.jacobian returned"):
        g = sg.grad(sg.jacobian(cubic))(x)
    check_close(g, autograd.grad(lambda v: anp.sum(autograd.jacobian(cubic_ag)(v)))(x), rtol=1e-10, atol=1e-12)
    with pytest.warns(sg.PerformanceWarning):
        J3 = sg.jacobian(sg.hessian(cubic))(x)
    check_close(J3, autograd.jacobian(autograd.hessian(cubic_ag))(x), rtol=1e-10, atol=1e-12)


def test_hessian_on_watched_tensors_is_recorded():
    """Called on a Tensor a tape watches, sg.hessian computes with nested
    tapes on the Tensors: no cut path (no GradientPathWarning), and the
    outer tape differentiates the result (a third derivative)."""
    xv = sg.Variable(np.array([0.3, 0.7]))
    with sg.GradientTape() as tape:
        with warnings.catch_warnings():
            warnings.simplefilter("error", sg.GradientPathWarning)
            h = sg.hessian(cubic)(xv)
        total = np.sum(h)
    expected = autograd.hessian(cubic_ag)(np.array([0.3, 0.7]))
    check_close(h.numpy(), expected, rtol=1e-10, atol=1e-12)
    check_close(tape.gradient(total, xv).numpy(),
                autograd.grad(lambda v: anp.sum(autograd.hessian(cubic_ag)(v)))(np.array([0.3, 0.7])),
                rtol=1e-10, atol=1e-12)


# ------------------------------- 4. second order through a loop over dict items

def dict_items_loop(a):
    d = {"a": a, "c": a * 2.0}
    s = 0.0
    for k, v in d.items():
        s = s + np.sum(v ** 3)
    return s


def dict_items_loop_ag(a):
    return anp.sum(a ** 3) + anp.sum((2.0 * a) ** 3)


def test_second_order_through_a_loop_over_dict_items():
    """list(d) (the keys) gets no cotangent: the second-order adjoint of the
    lowered loop once added a list cotangent to the dict's."""
    a = np.array([1.0, 2.0, 3.0])
    want = autograd.hessian(dict_items_loop_ag)(a)
    check_close(sg.hessian(dict_items_loop)(a), want, rtol=1e-10, atol=1e-12)
    check_close(sg.grad(lambda x: np.sum(sg.grad(dict_items_loop)(x)))(a), want.sum(0),
                rtol=1e-10, atol=1e-12)


# ------------------------------------------- 5. insert_grad_of inside a callee

def triple_cotangent(y):
    with sg.insert_grad_of(y) as by:
        by = by * 3.0
    return y * y


def calls_triple_cotangent(x):
    return np.sum(triple_cotangent(x * 2.0))


def test_insert_grad_of_in_a_called_helper():
    """The helper's insert_grad_of body runs on its adjoint; the caller's
    forward sweep runs the helper's compiled primal (Python cannot skip the
    block)."""
    x = np.array([0.3, 0.5])
    want = 3.0 * 2.0 * (2.0 * x) * 2.0        # d sum((2x)^2) = 8x, times 3 in the backward pass
    check_close(sg.grad(calls_triple_cotangent)(x), want, rtol=1e-12, atol=1e-14)
    v = sg.Variable(x)
    with sg.GradientTape() as tape:
        y = sg.function(calls_triple_cotangent)(v)
    check_close(tape.gradient(y, v).numpy(), want, rtol=1e-12, atol=1e-14)
    check_close(y.numpy(), np.sum((2.0 * x) ** 2), rtol=1e-12, atol=1e-14)


# ------------------------------------ 6. sg.jvp with a zero tangent for a loop count

def sine_loop(x, n):
    for i in range(n):
        x = np.sin(x)
    return x


def test_jvp_zero_tangent_for_an_int_count():
    x, v = np.array([0.3, 0.5]), np.array([1.0, -2.0])
    y, jv = sg.jvp(sine_loop, (x, 3), (v, 0))
    _, want = sg.jvp(sine_loop, (x, 3), (v, None))
    check_close(jv, want, rtol=1e-14, atol=1e-15)
    fd = (sine_loop(x + 1e-6 * v, 3) - sine_loop(x - 1e-6 * v, 3)) / 2e-6
    check_close(jv, fd, rtol=1e-6, atol=1e-8)


# ----------------------------- 7. silent-wrong regressions found by the audit

def takes_a_list(ops):
    return ops[1] * 2.0


def passes_a_list_display(X):
    return np.sum(takes_a_list([X, X * 3.0]))


def passes_a_dict_display(X):
    return np.sum(takes_a_list({0: X * 5.0, 1: X * 3.0}))


def test_display_passed_to_a_user_function_keeps_its_gradient():
    """a1([X, X * 3]) once had a zero gradient (the display was not a name,
    so the call looked inactive)."""
    X = np.array([1.0, 2.0])
    for f in (passes_a_list_display, passes_a_dict_display):
        check_close(sg.grad(f)(X), numerical_grad(f, X.copy()), rtol=1e-6, atol=1e-8)
        check_close(sg.grad(f)(X), 6.0 * np.ones(2), rtol=1e-12, atol=1e-14)


def det_by_eigvals(A):
    return np.real(np.prod(np.linalg.eigvals(A)))


def eigvals_in_a_helper(A):
    return det_by_eigvals(A) * 2.0


def test_eigvals_of_a_real_matrix():
    """eigvals of a real matrix is complex: the generated code keeps the
    conj() of the complex rules downstream of it (once stripped: wrong)."""
    A = np.array([[2.0, 1.0, 0.3], [0.5, 3.0, -1.0], [0.2, 0.4, 1.5]])
    want = np.linalg.det(A) * np.linalg.inv(A).T
    check_close(sg.grad(det_by_eigvals)(A), want, rtol=1e-10, atol=1e-12)
    check_close(sg.grad(eigvals_in_a_helper)(A), 2.0 * want, rtol=1e-10, atol=1e-12)


def pair_of(u, v):
    s = np.sin(u + v)
    return s * u, np.cos(v) - s


def unconnected_input_restored_by_shape(x, y):
    """Found by tests/test_random_programs.py: y is overwritten in the loop
    and read back only for its shape, so the reverse sweep restored it as a
    ShapeOf; its (zero) gradient came out NaN."""
    a = x * 1.0
    x = np.sin(x)
    b = np.sin(x)
    for i in range(0, 2, 1):
        x, y = pair_of(x, x)
        x = np.tanh(x + y)
    return np.sum(a * b + x)


def test_unconnected_input_restored_by_its_shape_has_zero_gradient():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=3), rng.normal(size=3)
    gx, gy = sg.grad(unconnected_input_restored_by_shape, wrt=(0, 1))(x, y)
    np.testing.assert_array_equal(gy, np.zeros(3))
    check_close(gx, numerical_grad(lambda v: unconnected_input_restored_by_shape(v, y), x.copy()),
                rtol=1e-6, atol=1e-8)


# ------------------------------------ 8. a tuple a helper returns, indexed whole

def pair_returned(u, v):
    s = np.sin(u + v)
    return s * u, np.cos(v) - s


def indexes_the_tuple(x, y):
    z = pair_returned(x, y)[0]
    w = pair_returned(x, y)
    return np.sum(z) + np.sum(w[1] * w[0])


def indexes_the_tuple_ag(x, y):
    s = anp.sin(x + y)
    a, b = s * x, anp.cos(y) - s
    return anp.sum(a) + anp.sum(b * a)


def test_indexing_the_tuple_a_helper_returns():
    """z = pair(x, y)[0] once crashed in the generated VJP call (the tuple's
    cotangent list passed as one output cotangent)."""
    x = np.array([0.3, -0.7, 1.1])
    y = 2.0 * x
    got = sg.grad(indexes_the_tuple, wrt=(0, 1))(x, y)
    want = autograd.grad(indexes_the_tuple_ag, (0, 1))(x, y)
    for g, w in zip(got, want):
        check_close(g, w, rtol=1e-10, atol=1e-12)
    xv, yv = sg.Variable(x), sg.Variable(y)
    with sg.GradientTape() as tape:
        out = sg.function(indexes_the_tuple)(xv, yv)
    for g, w in zip(tape.gradient(out, [xv, yv]), want):
        check_close(g.numpy(), w, rtol=1e-10, atol=1e-12)
    check_close(sg.hessian(lambda a: indexes_the_tuple(a, y))(x),
                autograd.hessian(lambda a: indexes_the_tuple_ag(a, y))(x), rtol=1e-9, atol=1e-11)


def dict_items_with_key_test(a):
    d = {"k": a, "m": a * a}
    s = 0.0
    for k, v in d.items():
        s = s + np.sum(v) * (2.0 if k == "k" else 1.0)
    return s


def test_hessian_through_a_loop_over_dict_items_reading_the_keys():
    """The batched second-order sweep once tried zeros for the string keys
    and stacked an all-None key cotangent list."""
    a = np.array([0.3, -0.5, 0.8])
    check_close(sg.hessian(dict_items_with_key_test)(a), 2.0 * np.eye(3), rtol=1e-12, atol=1e-14)
    check_close(sg.hvp(dict_items_with_key_test)(a, np.ones(3)), 2.0 * np.ones(3), rtol=1e-12, atol=1e-14)
