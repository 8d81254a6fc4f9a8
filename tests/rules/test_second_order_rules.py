"""Second order through the rules added for np.convolve, np.correlate,
np.trapezoid, np.polyval, np.vander, np.ediff1d, np.cov, np.corrcoef,
np.nancumsum, np.i0, np.unwrap and sliding_window_view: their adjoints and
tangents are written with operations that have rules (or are primitives
with their own rules: bessel_i1), so they are differentiated again.

Each function is checked with `sg.check` (first order against central
differences, forward against reverse, and second order: forward over
reverse and reverse over reverse, against differences of the gradient), and
its Hessian-vector product on nested tapes op by op against the compiled
one (sg.hvp) and, where autograd can run an equivalent spelling, against
autograd's Hessian.
"""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import srcgrad as sg

TIGHT = dict(rtol=1e-9, atol=1e-11)
RNG = np.random.default_rng(20261127)
X5 = RNG.normal(size=5)
V5 = RNG.normal(size=5)
X34 = RNG.normal(size=(3, 4))
V34 = RNG.normal(size=(3, 4))


def tape_hvp(f, x, v):
    """H v of the scalar f on nested tapes, op by op."""
    var = sg.Variable(x)
    with sg.GradientTape() as outer:
        with sg.GradientTape() as inner:
            y = f(var)
        g = inner.gradient(y, var)
        s = np.sum(g * v)
    return outer.gradient(s, var).numpy()


def _check(f, x, v, ref=None):
    sg.check(f, x)
    hv = sg.hvp(f)(x, v)
    np.testing.assert_allclose(tape_hvp(f, x, v), hv, **TIGHT)
    np.testing.assert_allclose(sg.grad(lambda z: np.sum(sg.grad(f)(z) * v))(x), hv, **TIGHT)
    if ref is not None:
        hess = autograd.hessian(ref)(x)
        np.testing.assert_allclose(hv, np.tensordot(hess, v, np.ndim(x)), **TIGHT)


# ------------------------------------------------ convolution and correlation

def _ag_full_convolution(a, v):
    n = a.shape[0]
    out = 0.0
    for i in range(n):
        out = out + a[i] * anp.concatenate([np.zeros(i), v, np.zeros(n - 1 - i)])
    return out


def convolve_same(x):
    return np.sum(np.sin(np.convolve(x, x[1:4] ** 2, "same")))


def convolve_same_ag(x):
    return anp.sum(anp.sin(_ag_full_convolution(x, x[1:4] ** 2)[1:6]))


def correlate_valid(x):
    return np.sum(np.correlate(np.tanh(x), x[:2], "valid") ** 3)


def correlate_valid_ag(x):
    return anp.sum(_ag_full_convolution(anp.tanh(x), x[:2][::-1])[1:5] ** 3)


def correlate_full_short_a(x):
    return np.sum(np.cos(np.correlate(x[:2], x * x, "full")))


def correlate_same_short_a(x):
    return np.sum(np.correlate(x[:2], np.exp(x), "same") ** 2)


@pytest.mark.parametrize("f, ref", [(convolve_same, convolve_same_ag), (correlate_valid, correlate_valid_ag),
                                    (correlate_full_short_a, None), (correlate_same_short_a, None)],
                         ids=["convolve_same", "correlate_valid", "correlate_full", "correlate_same"])
def test_convolution_second_order(f, ref):
    _check(f, X5, V5, ref)


# ------------------------------------- nancumsum, trapezoid, cov and corrcoef

T5 = np.cumsum(RNG.uniform(0.5, 1.0, 5))


def nancumsum_cubed(x):
    return np.sum(np.nancumsum(np.where(x > 1.0, np.nan, x) ** 3, axis=1))


def nancumsum_cubed_ag(x):
    return anp.sum(anp.cumsum(anp.where(x > 1.0, 0.0, x) ** 3, axis=1))


def trapezoid_of_sin(x):
    return np.sum(np.trapezoid(np.sin(x), axis=0) ** 2)


def trapezoid_of_sin_ag(x):
    return anp.sum(anp.sum((anp.sin(x)[1:] + anp.sin(x)[:-1]) / 2.0, axis=0) ** 2)


def trapezoid_in_x(x):
    return np.trapezoid(np.exp(x), x) ** 2


def trapezoid_in_x_ag(x):
    return anp.sum(anp.diff(x) * (anp.exp(x)[1:] + anp.exp(x)[:-1]) / 2.0) ** 2


def trapezoid_in_dx(x):
    return np.sum(np.trapezoid(x[:, :3], dx=x[:, 3:]) ** 2)


def cov_of_tanh(x):
    return np.sum(np.cov(np.tanh(x)) ** 2)


def cov_columns_with_y(x):
    return np.sum(np.cov(x[:, :3], x[:, 3], rowvar=False, ddof=0) ** 2)


def corrcoef_cubed(x):
    return np.sum(np.corrcoef(x) ** 3)


def corrcoef_of_rows(x):
    return np.sum(np.sin(np.corrcoef(x[0], x[1] * x[2])))


@pytest.mark.parametrize("f, x, v, ref", [
    (nancumsum_cubed, X34, V34, nancumsum_cubed_ag),
    (trapezoid_of_sin, X34, V34, trapezoid_of_sin_ag),
    (trapezoid_in_x, T5, V5, trapezoid_in_x_ag),
    (trapezoid_in_dx, X34, V34, None),
    (cov_of_tanh, X34, V34, None),
    (cov_columns_with_y, X34, V34, None),
    (corrcoef_cubed, X34, V34, None),
    (corrcoef_of_rows, X34, V34, None),
], ids=["nancumsum", "trapezoid", "trapezoid_x", "trapezoid_dx", "cov", "cov_columns_y", "corrcoef",
        "corrcoef_rows"])
def test_reductions_second_order(f, x, v, ref):
    _check(f, x, v, ref)


@pytest.mark.parametrize("call", [
    lambda m: np.sum(np.cov(m, aweights=np.ones(4))),
    lambda m: np.sum(np.cov(m, fweights=[1, 2, 1, 1], aweights=[0.5, 1.0, 1.0, 2.0])),
], ids=["aweights", "fweights_and_aweights"])
def test_cov_aweights_are_refused_by_name(call):
    with pytest.raises(NotImplementedError, match=r"np\.cov\(\.\.\., aweights=\.\.\.\) has no rule"):
        sg.grad(call)(X34)
    with pytest.raises(NotImplementedError, match="aweights"):
        with sg.GradientTape() as tape:
            m = sg.constant(X34)
            tape.watch(m)
            loss = call(m)
        tape.gradient(loss, m)


# ---------------------------------------------------------- polyval and vander

def polyval_in_both(x):
    return np.sum(np.polyval(x[:3], np.sin(x)) ** 2)


def polyval_in_both_ag(x):
    s = anp.sin(x)
    return anp.sum(((x[0] * s + x[1]) * s + x[2]) ** 2)


def vander_with_zero(x):
    return np.sum(np.vander(x * np.array([1.0, 0.0, 1.0, 1.0, 1.0]), 4) ** 2)


def vander_with_zero_ag(x):
    y = x * np.array([1.0, 0.0, 1.0, 1.0, 1.0])
    return anp.sum(anp.stack([y * y * y, y * y, y, anp.ones(5)], axis=1) ** 2)


@pytest.mark.parametrize("f, ref", [(polyval_in_both, polyval_in_both_ag), (vander_with_zero, vander_with_zero_ag)],
                         ids=["polyval", "vander"])
def test_polynomials_second_order(f, ref):
    _check(f, X5, V5, ref)


# ---------------------------------------------------------------------- unwrap

def unwrap_squared(x):
    return np.sum(np.unwrap(4.0 * np.sin(3.0 * x)) ** 2)


def test_unwrap_second_order():
    _check(unwrap_squared, X5, V5)


# ------------------------------------------------ ediff1d, sliding_window_view

def ediff1d_with_ends(x):
    return np.sum(np.ediff1d(np.sin(x), to_end=x[0] * x[1], to_begin=x[:2]) ** 3)


def ediff1d_with_ends_ag(x):
    s = anp.sin(x)
    return anp.sum(anp.concatenate([x[:2], s[1:] - s[:-1], anp.reshape(x[0] * x[1], (1,))]) ** 3)


def sliding_windows(x):
    return np.sum(np.prod(sliding_window_view(x, 3), axis=-1) ** 2)


def sliding_windows_ag(x):
    return anp.sum((x[:-2] * x[1:-1] * x[2:]) ** 2)


def sliding_windows_2d(x):
    return np.sum(np.tanh(np.lib.stride_tricks.sliding_window_view(x, (2, 3))) ** 2)


@pytest.mark.parametrize("f, x, v, ref", [
    (ediff1d_with_ends, X5, V5, ediff1d_with_ends_ag),
    (sliding_windows, X5, V5, sliding_windows_ag),
    (sliding_windows_2d, X34, V34, None),
], ids=["ediff1d", "sliding_window_view", "sliding_window_view_2d"])
def test_shapes_second_order(f, x, v, ref):
    _check(f, x, v, ref)



# ----------------------------------------------------------------------- i0

def i0_of_sin(x):
    return np.sum(np.i0(np.sin(x) * 3.0) ** 2)


def i0_third_order(x):
    """d^3/dx^3 sum(I0(x)) along V5: I1'' = (3 I1 + I3) / 4."""
    return np.sum(sg.grad(lambda y: np.sum(sg.grad(lambda u: np.sum(np.i0(u)))(y) * V5))(x) * V5)


def test_i0_second_order():
    _check(i0_of_sin, X5, V5)


def test_i0_derivatives_match_scipy():
    """np.i0's first, second and third derivatives against SciPy's Bessel
    functions (I1, (I0 + I2) / 2, (3 I1 + I3) / 4), around 0, across the
    series/expansion switch at 20, and beyond."""
    sp = pytest.importorskip("scipy.special")
    x = np.array([-31.0, -20.5, -3.0, -0.5, 0.0, 1e-9, 0.2, 1.5, 19.9, 20.1, 45.0])
    d1 = np.array([sg.grad(np.i0)(v) for v in x])
    d2 = np.array([sg.grad(sg.grad(np.i0))(v) for v in x])
    np.testing.assert_allclose(d1, sp.i1(x), rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(d2, (sp.i0(x) + sp.iv(2, x)) / 2.0, rtol=1e-12)
    g3 = sg.grad(i0_third_order)(X5)
    np.testing.assert_allclose(g3, V5 * V5 * (3.0 * sp.i1(X5) + sp.iv(3, X5)) / 4.0, rtol=1e-10, atol=1e-12)


def test_bessel_i1_values_match_scipy():
    from srcgrad.rules.helpers.elementwise import bessel_i1
    sp = pytest.importorskip("scipy.special")
    x = np.concatenate([np.linspace(-40.0, 40.0, 4001), [0.0, 1e-300, -1e-8, 19.999, 20.0, 20.001, 300.0, 700.0]])
    np.testing.assert_allclose(bessel_i1(x), sp.i1(x), rtol=5e-15, atol=1e-300)
    assert bessel_i1(np.float32(1.5)).dtype == np.float32
