"""The SciPy rules beyond the rule tables (tests/rules/cases_scipy_*.py): what they
refuse, their values outside a distribution's support, and second
derivatives through the Tensor-aware wrappers that the backward code of the
scipy.linalg rules calls (op by op: nested tapes), against central
differences of the first derivative.
"""
import numpy as np
import pytest
import scipy.integrate as si
import scipy.linalg as sl
import scipy.special
import scipy.stats as st

import srcgrad as sg
from gradcheck import numerical_grad, numerical_jacobian
from srcgrad.rules.helpers.scipy_linalg import expm_p, solve_tri, sylvester

t_cdf = st.t.cdf
gamma_logpdf = st.gamma.logpdf
gamma_cdf = st.gamma.cdf
binom_cdf = st.binom.cdf
binom_sf = st.binom.sf
poisson_cdf = st.poisson.cdf


# ---------------------------------------------------------------------------
# Refused derivatives

def f_t_cdf(x, df):
    return np.sum(t_cdf(x, df, 0.5, 2.0))


def test_shape_of_t_cdf_is_not_differentiable_but_x_is():
    x = np.array([0.3, -1.2, 2.0])
    with pytest.raises(NotImplementedError, match="scipy.stats.t.cdf.*'df'"):
        sg.grad(f_t_cdf, wrt=(1,))(x, 3.0)
    g = sg.grad(f_t_cdf)(x, 3.0)
    np.testing.assert_allclose(g, st.t.pdf(x, 3.0, 0.5, 2.0), rtol=1e-12)


def f_lse_sign(x):
    return np.sum(scipy.special.logsumexp(x, return_sign=True)[0])


def test_logsumexp_return_sign_value_gradient():
    """return_sign=True is differentiated since audit 11 (it was refused):
    with b = 1 the value's gradient is the softmax (test_audit_rules.py
    checks weights of both signs)."""
    x = np.array([0.1, 0.2])
    np.testing.assert_allclose(sg.grad(f_lse_sign)(x), np.exp(x) / np.sum(np.exp(x)), rtol=1e-12)


def f_lu_rect(a):
    return np.sum(sl.lu(a)[2])


def test_lu_of_a_rectangular_matrix_is_refused():
    with pytest.raises(NotImplementedError, match="square"):
        sg.grad(f_lu_rect)(np.arange(6.0).reshape(2, 3) + np.eye(2, 3))


def decay(t, y):
    return -y


def event(t, y):
    return y[0] - 0.5


def f_ivp_events(y0):
    sol = si.solve_ivp(decay, (0.0, 1.0), y0, events=event)
    return np.sum(sol["y"])


def test_solve_ivp_with_events_is_refused():
    with pytest.raises(NotImplementedError, match="events"):
        sg.grad(f_ivp_events)(np.array([1.0, 2.0]))


# ---------------------------------------------------------------------------
# Outside the support: 0, not NaN

def f_gamma_logpdf(x):
    return np.sum(np.where(x > 0.0, gamma_logpdf(x, 2.0), 0.0))


def f_gamma_cdf(x):
    return np.sum(gamma_cdf(x, 2.0, scale=1.5))


def test_continuous_outside_support_gives_zero():
    x = np.array([-1.0, 0.5, 2.0])
    g = sg.grad(f_gamma_cdf)(x)
    assert g[0] == 0.0
    np.testing.assert_allclose(g[1:], st.gamma.pdf(x[1:], 2.0, scale=1.5), rtol=1e-12)
    g = sg.grad(f_gamma_logpdf)(x)
    assert g[0] == 0.0 and np.all(np.isfinite(g))
    np.testing.assert_allclose(g[1:], 1.0 / x[1:] - 1.0, rtol=1e-12)


def f_binom_cdf(p, k):
    return np.sum(binom_cdf(k, 4, p) + binom_sf(k, 4, p))


def f_poisson_cdf(mu, k):
    return np.sum(poisson_cdf(k, mu))


def test_discrete_distribution_functions_outside_support():
    k = np.array([-1.0, 0.0, 2.5, 4.0, 7.0])
    p = np.full(5, 0.3)
    # cdf + sf = 1: the derivatives cancel everywhere, inside the support or not
    np.testing.assert_allclose(sg.grad(f_binom_cdf)(p, k), np.zeros(5), atol=1e-15)
    mu = np.full(5, 1.7)
    g = sg.grad(f_poisson_cdf)(mu, k)
    fd = numerical_grad(lambda v: f_poisson_cdf(v, k), mu)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)
    assert g[0] == 0.0


# ---------------------------------------------------------------------------
# Second derivatives through the wrappers (nested tapes, op by op)

def _second(fn, x, w):
    """d/dx <w, d/dx sum(fn(x))> by nested tapes."""
    xt = sg.constant(x)
    with sg.GradientTape() as outer:
        outer.watch(xt)
        with sg.GradientTape() as inner:
            inner.watch(xt)
            loss = np.sum(fn(xt))
        g = inner.gradient(loss, xt)
        total = np.sum(g * w)
    return outer.gradient(total, xt).numpy()


def _first(fn, x):
    xt = sg.constant(x)
    with sg.GradientTape() as tape:
        tape.watch(xt)
        loss = np.sum(fn(xt))
    return tape.gradient(loss, xt).numpy()


@pytest.mark.parametrize("name", ["expm_p", "solve_tri", "sylvester"])
def test_second_derivative_through_linalg_wrappers(name):
    rng = np.random.default_rng(5)
    a = 0.4 * rng.normal(size=(3, 3))
    b = rng.normal(size=(3, 2))
    q = rng.normal(size=(3, 3))
    spd = a @ a.T + 2.0 * np.eye(3)
    fns = {
        "expm_p": (lambda m: expm_p(m) * np.arange(9.0).reshape(3, 3), a),
        "solve_tri": (lambda m: solve_tri(m + 3.0 * np.eye(3), b, 1, True) ** 2, a),
        "sylvester": (lambda m: sylvester(m, spd, q) ** 2, spd),
    }
    fn, x = fns[name]
    w = rng.normal(size=x.shape)
    second = _second(fn, x, w)
    fd = numerical_jacobian(lambda v: _first(fn, v), x)
    expected = np.tensordot(w, fd, axes=w.ndim)
    np.testing.assert_allclose(second, expected, rtol=1e-5, atol=1e-6)
