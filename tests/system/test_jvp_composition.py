"""sg.jvp inside differentiated code (lower/jvp_calls.py, functional.JvpOf):
the JVP is a call of f's generated tangent code, differentiated again
(reverse over forward, forward over forward, the Hessian of a function
computing a JVP, on a tape), checked against central finite differences and
against autograd (make_jvp under grad), as autograd's check_grads does at
order 2."""
import numpy as np
import pytest

import srcgrad as sg

ag = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")
from autograd.differential_operators import make_jvp  # noqa: E402

X = np.array([0.3, -0.5, 1.1])
V = np.array([1.0, 2.0, -0.5])


def f(x):
    return np.sin(x) * x + np.tanh(x) ** 2


def f_ag(x):
    return anp.sin(x) * x + anp.tanh(x) ** 2


def jvp_f(x, v):
    return sg.jvp(f, (x,), (v,))[1]


def jvp_f_unpacked(x, v):
    y, t = sg.jvp(f, (x,), (v,))
    return np.sum(y * t)


def loss(x, v):
    return np.sum(jvp_f(x, v) ** 2)


def loss_ag(x, v):
    return anp.sum(make_jvp(f_ag)(x)(v)[1] ** 2)


def _fd(fun, x, dx, h=1e-6):
    return (fun(x + h * dx) - fun(x - h * dx)) / (2 * h)


def test_reverse_over_forward_both_arguments():
    gx, gv = sg.grad(loss, wrt=(0, 1))(X, V)
    np.testing.assert_allclose(gx, ag.grad(loss_ag, 0)(X, V), rtol=1e-10)
    np.testing.assert_allclose(gv, ag.grad(loss_ag, 1)(X, V), rtol=1e-10)
    for k in range(3):
        e = np.eye(3)[k]
        np.testing.assert_allclose(gx[k], _fd(lambda x: loss(x, V), X, e), rtol=1e-6)


def test_forward_over_forward():
    dx = np.array([0.2, -1.0, 0.5])
    _, t = sg.jvp(lambda x: loss(x, V), (X,), (dx,))
    np.testing.assert_allclose(t, _fd(lambda x: loss(x, V), X, dx), rtol=1e-6)


def test_tuple_of_the_jvp_unpacked_and_hessian():
    g = sg.grad(jvp_f_unpacked)(X, V)
    np.testing.assert_allclose(g, ag.grad(lambda x: anp.sum(anp.prod(anp.array(make_jvp(f_ag)(x)(V)), 0)))(X),
                               rtol=1e-10)
    H = sg.hessian(lambda x: loss(x, V))(X)
    H_ag = ag.hessian(lambda x: loss_ag(x, V))(X)
    np.testing.assert_allclose(H, H_ag, rtol=1e-8, atol=1e-12)


def test_on_a_tape_the_compiled_and_op_by_op_paths_agree():
    dec = sg.function(loss)
    x, v = sg.Variable(X), sg.Variable(V)
    with sg.GradientTape() as tape:
        y = dec(x, v)
    gx, gv = tape.gradient(y, [x, v])
    np.testing.assert_allclose(gx.numpy(), ag.grad(loss_ag, 0)(X, V), rtol=1e-10)
    np.testing.assert_allclose(gv.numpy(), ag.grad(loss_ag, 1)(X, V), rtol=1e-10)


def test_jvp_of_a_function_calling_a_derived_tangent_rule():
    # np.deg2rad and scipy's erf have adjoint rules only: their tangent is derived (rules/tangents.py)
    special = pytest.importorskip("scipy.special")

    def g(x):
        return np.deg2rad(x) * special.erf(x)

    def h(x, v):
        return np.sum(sg.jvp(g, (x,), (v,))[1] ** 2)

    gx = sg.grad(h)(X, V)
    for k in range(3):
        np.testing.assert_allclose(gx[k], _fd(lambda x: h(x, V), X, np.eye(3)[k]), rtol=1e-6)
