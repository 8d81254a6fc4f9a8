"""scipy.integrate.odeint and solve_ivp through srcgrad's compiled paths
(srcgrad/integrate.py: the adjoint method).

Oracles:
  - linear ODEs with closed-form solutions: y' = -k y (elementwise), whose
    gradients in y0, k and every output time are written out by hand, and
    y' = A y, y(t) = expm(t A) y0, whose gradient in A is
    sum_j t_j L(t_j A^T, w_j y0^T), with SciPy's own expm_frechet for L;
  - nonlinear ODEs (Lotka-Volterra, a small neural ODE) against central
    finite differences of the same SciPy solve at tight tolerances
    (rtol = atol = 1e-10) and against autograd's odeint;
  - every compiled path: sg.grad, sg.value_and_grad, @sg.function on a tape.
"""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest
import scipy.integrate as si
import scipy.linalg
from autograd.builtins import tuple as ag_tuple
from autograd.scipy.integrate import odeint as ag_odeint

import srcgrad as sg
from gradcheck import numerical_grad

TOL = dict(rtol=1e-10, atol=1e-10)
T3 = np.array([0.0, 0.4, 1.0])


# ---------------------------------------------------------------------------
# y' = -k y: closed form

def decay(y, t, k):
    return -k * y


def decay_tfirst(t, y, k):
    return -k * y


def loss_decay(y0, k, t, w):
    return np.sum(si.odeint(decay, y0, t, args=(k,), rtol=1e-10, atol=1e-10) * w)


def loss_decay_tfirst(y0, k, t, w):
    return np.sum(si.odeint(decay_tfirst, y0, t, (k,), rtol=1e-10, atol=1e-10, tfirst=True) * w)


def _decay_exact(y0, k, t, w):
    """Gradients of sum_j w_j . y0 exp(-k (t_j - t_0)) by hand."""
    tau = t - t[0]
    e = np.exp(-np.outer(tau, k))                       # (T, D)
    gy0 = np.sum(w * e, axis=0)
    gk = np.sum(w * e * y0 * -tau[:, None], axis=0)
    yt = y0 * e
    gt = np.sum(w * yt * -k, axis=1)                    # moving t_j
    gt[0] = -np.sum(gt[1:])                             # moving t_0 moves every later output back
    return gy0, gk, gt


Y0 = np.array([1.0, -2.0, 0.5])
K = np.array([0.7, 1.3, 0.2])
W3 = np.array([[1.0, 2.0, -1.0], [0.5, -3.0, 2.0], [4.0, 1.0, 0.3]])


@pytest.mark.parametrize("loss", [loss_decay, loss_decay_tfirst])
def test_odeint_decay_matches_closed_form(loss):
    gy0, gk, gt = sg.grad(loss, wrt=(0, 1, 2))(Y0, K, T3, W3)
    ey0, ek, et = _decay_exact(Y0, K, T3, W3)
    np.testing.assert_allclose(gy0, ey0, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(gk, ek, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(gt, et, rtol=1e-7, atol=1e-9)


def test_odeint_decay_every_compiled_path_agrees():
    expected = sg.grad(loss_decay, wrt=(0, 1))(Y0, K, T3, W3)
    value, vg = sg.value_and_grad(loss_decay, wrt=(0, 1))(Y0, K, T3, W3)
    np.testing.assert_allclose(value, loss_decay(Y0, K, T3, W3), rtol=1e-12)
    f = sg.function(loss_decay)
    y0, k = sg.constant(Y0), sg.constant(K)
    with sg.GradientTape() as tape:
        tape.watch([y0, k])
        out = f(y0, k, T3, W3)
    tg = tape.gradient(out, [y0, k])
    for a, b, c in zip(expected, vg, tg):
        np.testing.assert_allclose(b, a, rtol=1e-12)
        np.testing.assert_allclose(c.numpy(), a, rtol=1e-12)
    np.testing.assert_allclose(expected[0], _decay_exact(Y0, K, T3, W3)[0], rtol=1e-7)


# ---------------------------------------------------------------------------
# y' = A y: y(t) = expm(t A) y0

def linear(y, t, A):
    return A @ y


def loss_linear(y0, A, w):
    return np.sum(si.odeint(linear, y0, T3, args=(A,), rtol=1e-11, atol=1e-11) * w)


def test_odeint_linear_system_matches_expm_and_its_frechet_derivative():
    rng = np.random.default_rng(3)
    A = 0.5 * rng.normal(size=(3, 3))
    gy0, gA = sg.grad(loss_linear, wrt=(0, 1))(Y0, A, W3)
    ey0 = sum(scipy.linalg.expm(t * A).T @ w for t, w in zip(T3, W3))
    eA = sum(t * scipy.linalg.expm_frechet(t * A.T, np.outer(w, Y0), compute_expm=False)
             for t, w in zip(T3, W3))
    np.testing.assert_allclose(gy0, ey0, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(gA, eA, rtol=1e-7, atol=1e-9)


# ---------------------------------------------------------------------------
# Lotka-Volterra: finite differences and autograd

def lotka_volterra(y, t, theta):
    prey, pred = y[0], y[1]
    return np.array([theta[0] * prey - theta[1] * prey * pred,
                     theta[2] * prey * pred - theta[3] * pred])


def ag_lotka_volterra(y, t, theta):
    prey, pred = y[0], y[1]
    return anp.array([theta[0] * prey - theta[1] * prey * pred,
                      theta[2] * prey * pred - theta[3] * pred])


TLV = np.linspace(0.0, 3.0, 7)
THETA = np.array([1.1, 0.4, 0.1, 0.4])
YLV = np.array([10.0, 5.0])


def loss_lv(y0, theta, w):
    ys = si.odeint(lotka_volterra, y0, TLV, args=(theta,), rtol=1e-10, atol=1e-10)
    return np.sum(ys * w)


def test_odeint_lotka_volterra_against_finite_differences_and_autograd():
    w = np.random.default_rng(1).normal(size=(len(TLV), 2))
    gy0, gth = sg.grad(loss_lv, wrt=(0, 1))(YLV, THETA, w)
    fd_y0 = numerical_grad(lambda v: loss_lv(v, THETA, w), YLV)
    fd_th = numerical_grad(lambda v: loss_lv(YLV, v, w), THETA)
    np.testing.assert_allclose(gy0, fd_y0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gth, fd_th, rtol=1e-5, atol=1e-6)

    def ag_loss(y0, theta):
        return anp.sum(ag_odeint(ag_lotka_volterra, y0, TLV, ag_tuple((theta,)), **TOL) * w)
    np.testing.assert_allclose(gy0, autograd.grad(ag_loss, 0)(YLV, THETA), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(gth, autograd.grad(ag_loss, 1)(YLV, THETA), rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------------
# A small neural ODE: y' = tanh(W y + b), two parameter arrays

def neural(y, t, W, b):
    return np.tanh(W @ y + b)


def loss_neural(y0, W, b):
    ys = si.odeint(neural, y0, np.array([0.0, 0.5, 1.5]), args=(W, b), rtol=1e-10, atol=1e-10)
    return np.sum(ys[-1] ** 2) + np.sum(ys[1])


def test_odeint_neural_ode_against_finite_differences():
    rng = np.random.default_rng(2)
    y0, W, b = rng.normal(size=3), rng.normal(size=(3, 3)), rng.normal(size=3)
    gy0, gW, gb = sg.grad(loss_neural, wrt=(0, 1, 2))(y0, W, b)
    np.testing.assert_allclose(gy0, numerical_grad(lambda v: loss_neural(v, W, b), y0),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gW, numerical_grad(lambda v: loss_neural(y0, v, b), W),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gb, numerical_grad(lambda v: loss_neural(y0, W, v), b),
                               rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------
# solve_ivp: the result read as sol["y"]

TEVAL = np.array([0.2, 0.5, 1.0])


def decay_ivp(t, y, k):
    return -k * y


def loss_ivp(y0, k, t_eval, w):
    sol = si.solve_ivp(decay_ivp, (0.0, 1.0), y0, t_eval=t_eval, args=(k,), rtol=1e-10,
                       atol=1e-10)
    return np.sum(sol["y"] * w)


def loss_ivp_lsoda(y0, k, w):
    sol = si.solve_ivp(decay_ivp, [0.0, 1.0], y0, method="LSODA", t_eval=TEVAL, args=(k,),
                       rtol=1e-10, atol=1e-10)
    return np.sum(sol["y"] * w)


def loss_ivp_t0(t0, y0, k, w):
    sol = si.solve_ivp(decay_ivp, np.array([t0, 1.0]), y0, method="DOP853", t_eval=TEVAL,
                       args=(k,), rtol=1e-10, atol=1e-10)
    return np.sum(sol["y"] * w)


def test_solve_ivp_decay_matches_closed_form():
    w = W3.T                                            # (D, T), as sol.y
    gy0, gk, gte = sg.grad(loss_ivp, wrt=(0, 1, 2))(Y0, K, TEVAL, w)
    e = np.exp(-np.outer(TEVAL, K))                    # (T, D)
    np.testing.assert_allclose(gy0, np.sum(w.T * e, axis=0), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(gk, np.sum(w.T * e * Y0 * -TEVAL[:, None], axis=0), rtol=1e-7,
                               atol=1e-9)
    np.testing.assert_allclose(gte, np.sum(w.T * Y0 * e * -K, axis=1), rtol=1e-7, atol=1e-9)


def loss_ivp_attribute(y0, k, t_eval, w):
    sol = si.solve_ivp(decay_ivp, (0.0, 1.0), y0, t_eval=t_eval, args=(k,), rtol=1e-10,
                       atol=1e-10)
    return np.sum(sol.y * w) + 0.0 * np.sum(sol.t)


def test_solve_ivp_result_read_as_attributes_sol_y():
    """`sol.y` (the usual spelling) is read as `sol["y"]`: same gradient."""
    w = W3.T
    by_attribute = sg.grad(loss_ivp_attribute, wrt=(0, 1))(Y0, K, TEVAL, w)
    by_item = sg.grad(loss_ivp, wrt=(0, 1))(Y0, K, TEVAL, w)
    for a, b in zip(by_attribute, by_item):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(by_attribute[1],
                               numerical_grad(lambda v: loss_ivp_attribute(Y0, v, TEVAL, w), K),
                               rtol=1e-5, atol=1e-6)


def test_solve_ivp_lsoda_and_dop853_against_finite_differences():
    w = W3.T
    gy0, gk = sg.grad(loss_ivp_lsoda, wrt=(0, 1))(Y0, K, w)
    np.testing.assert_allclose(gy0, numerical_grad(lambda v: loss_ivp_lsoda(v, K, w), Y0),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gk, numerical_grad(lambda v: loss_ivp_lsoda(Y0, v, w), K),
                               rtol=1e-5, atol=1e-6)
    gt0 = sg.grad(loss_ivp_t0)(0.1, Y0, K, w)
    fd = (loss_ivp_t0(0.1 + 1e-6, Y0, K, w) - loss_ivp_t0(0.1 - 1e-6, Y0, K, w)) / 2e-6
    np.testing.assert_allclose(gt0, fd, rtol=1e-5, atol=1e-6)


def lv_ivp(t, y, theta):
    return lotka_volterra(y, t, theta)


def loss_lv_ivp(y0, theta, w):
    sol = si.solve_ivp(lv_ivp, (0.0, 3.0), y0, t_eval=TLV, args=(theta,), method="RK45",
                       rtol=1e-10, atol=1e-10)
    return np.sum(sol["y"] * w)


def test_solve_ivp_lotka_volterra_agrees_with_odeint_and_finite_differences():
    w = np.random.default_rng(4).normal(size=(2, len(TLV)))
    gy0, gth = sg.grad(loss_lv_ivp, wrt=(0, 1))(YLV, THETA, w)
    oy0, oth = sg.grad(loss_lv, wrt=(0, 1))(YLV, THETA, w.T)
    np.testing.assert_allclose(gy0, oy0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gth, oth, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gth, numerical_grad(lambda v: loss_lv_ivp(YLV, v, w), THETA),
                               rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------
# What is refused

def loss_full_output(y0, k):
    ys, info = si.odeint(decay, y0, T3, args=(k,), full_output=True)
    return np.sum(ys)


def test_odeint_full_output_is_refused():
    with pytest.raises(NotImplementedError, match="full_output"):
        sg.grad(loss_full_output)(Y0, K)


def test_second_derivative_through_odeint_is_refused():
    """The backward sweep's primitive records on a tape, and its rule refuses."""
    from srcgrad.integrate import odeint_vjp
    g = sg.constant(W3)
    z = si.odeint(decay, Y0, T3, args=(K,))
    with sg.GradientTape() as tape:
        tape.watch(g)
        gy0, gt, gk = odeint_vjp(g, z, decay, Y0, T3, (K,))     # flat: one array per float arg
        total = np.sum(gy0)
    with pytest.raises(NotImplementedError, match="second derivatives"):
        tape.gradient(total, g)


# ---------------------------------------------------------------------------
# Forward mode: forward sensitivities (the tangent rules), against reverse mode

@pytest.mark.parametrize("which", ["odeint", "solve_ivp"])
def test_forward_mode_agrees_with_reverse_mode(which):
    rng = np.random.default_rng(7)
    v_y0, v_th = rng.normal(size=2), rng.normal(size=4)
    if which == "odeint":
        fn, w = loss_lv, rng.normal(size=(len(TLV), 2))
    else:
        fn, w = loss_lv_ivp, rng.normal(size=(2, len(TLV)))
    value, jv = sg.jvp(fn, (YLV, THETA, w), (v_y0, v_th, None))
    gy0, gth = sg.grad(fn, wrt=(0, 1))(YLV, THETA, w)
    np.testing.assert_allclose(value, fn(YLV, THETA, w), rtol=1e-12)
    np.testing.assert_allclose(jv, np.dot(gy0, v_y0) + np.dot(gth, v_th), rtol=1e-6)


def test_forward_mode_in_the_output_times():
    v = np.array([0.0, 0.3, -0.2])
    _, jv = sg.jvp(loss_decay, (Y0, K, T3, W3), (None, None, v, None))
    np.testing.assert_allclose(jv, np.dot(_decay_exact(Y0, K, T3, W3)[2], v), rtol=1e-7)

