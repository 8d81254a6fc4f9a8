"""sg.grad, sg.jvp, sg.hessian of a function that has a rule (a ufunc, a
NumPy function, a scipy.stats method): differentiated by the rule
(callables._primitive_function), as autograd's `grad(np.sqrt)` and JAX's
`grad(jnp.sqrt)`; checked against closed forms, finite differences and
autograd."""
import numpy as np
import pytest

import srcgrad as sg

st = pytest.importorskip("scipy.stats")
ag = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")


def _fd(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("prim,ag_prim", [(np.sqrt, anp.sqrt), (np.tanh, anp.tanh), (np.exp, anp.exp),
                                          (np.log1p, anp.log1p)])
def test_grad_of_a_ufunc(prim, ag_prim):
    x = 0.7
    assert np.isclose(sg.grad(prim)(x), ag.grad(ag_prim)(x), rtol=1e-12)
    assert np.isclose(sg.grad(sg.grad(prim))(x), ag.grad(ag.grad(ag_prim))(x), rtol=1e-10)
    _, t = sg.jvp(prim, (x,), (1.0,))
    assert np.isclose(t, _fd(prim, x), rtol=1e-7)


def test_grad_of_a_binary_ufunc_both_arguments():
    gx, gy = sg.grad(np.arctan2, wrt=(0, 1))(0.3, 0.5)
    assert np.allclose([gx, gy], [0.5 / 0.34, -0.3 / 0.34])


def test_grad_of_sum_and_a_scipy_distribution_method():
    assert np.array_equal(sg.grad(np.sum)(np.ones(3)), np.ones(3))
    x = np.array([0.5, 2.0, 3.5])
    g = sg.grad(lambda x: np.sum(st.chi2.pdf(x, 3.0)))(x)
    np.testing.assert_allclose(sg.grad(st.chi2.pdf)(2.0, 3.0), g[1], rtol=1e-12)
    np.testing.assert_allclose(g[1], _fd(lambda t: st.chi2.pdf(t, 3.0), 2.0), rtol=1e-6)
    assert np.isclose(sg.grad(st.norm.pdf)(0.3), -0.3 * st.norm.pdf(0.3))


def test_hessian_of_a_primitive():
    x = np.array([0.2, 0.9])
    H = sg.hessian(lambda x: np.sum(np.sin(x)))(x)
    assert np.allclose(H, np.diag(-np.sin(x)))
