"""Tangent rules derived from adjoint templates (rules/tangents.py,
`derived_tangent`): every NumPy or SciPy ufunc with an adjoint rule but no
tangent rule of its own gets one when its adjoint is an elementwise product
with the cotangent. Each derived rule is checked against central finite
differences, at first order (sg.jvp) and, because the derived rule is
generated code, at second order (sg.hvp, forward over reverse, against
finite differences of sg.grad), and against the transpose-of-the-VJP path
that forward mode used before (forward_mode.transpose_jvp)."""
import numpy as np
import pytest

import srcgrad as sg
from srcgrad.rules import registry, tangents

X = np.array([0.31, 0.62, 0.47])
Y = np.array([0.55, 0.23, 0.71])
V = np.array([1.0, -0.5, 0.25])
ORDER = np.array([1.0, 2.0, 1.0])      # an integer order: yn(n, x) takes no other


def _derivable():
    out = []
    for prim, rule in registry.adjoint_rules().items():
        if not isinstance(prim, np.ufunc) or prim in tangents.tangent_rules():
            continue
        if tangents.derived_tangent(prim) is None or prim.nin not in (1, 2):
            continue
        out.append(pytest.param(prim, id="%s.%s" % (getattr(prim, "__module__", None) or "np", prim.__name__)))
    return out


DERIVABLE = _derivable()


def _order_first(prim):
    """jv(v, x), gammainc(a, x), ...: the first operand is an order or a
    shape the rule does not differentiate (no d[v]); it is held constant."""
    return prim.nin == 2 and registry.adjoint_rule(prim).params[0] not in registry.adjoint_rule(prim).diff_params


def _program(prim):
    if prim.nin == 1:
        return lambda x: np.sum(prim(x) * x)
    if _order_first(prim):
        return lambda x: np.sum(prim(ORDER, x) * x)
    return lambda x: np.sum(prim(x, 0.5 * x + Y) * x)


def _call(prim):
    if prim.nin == 1:
        return lambda x: prim(x)
    if _order_first(prim):
        return lambda x: prim(ORDER, x)
    return lambda x: prim(x, 0.5 * x + Y)


def test_the_usual_elementwise_functions_are_derived():
    names = {p.values[0].__name__ for p in DERIVABLE}
    assert {"deg2rad", "fabs", "erf", "gammaln", "expit", "logit", "xlogy", "fmax", "copysign"} <= names


@pytest.mark.parametrize("prim", DERIVABLE)
def test_derived_tangent_matches_finite_differences(prim):
    f = _program(prim)
    with np.errstate(all="ignore"):
        if not np.all(np.isfinite([f(X + h * V) for h in (-1e-4, 0.0, 1e-4)])):
            pytest.skip("%s is not finite near the test point" % prim.__name__)
    rule = tangents.tangent_rule(prim)
    assert rule is not None and rule.doc.startswith("Derived from the adjoint rule")
    _, jvp = sg.jvp(f, (X,), (V,))
    h = 1e-6
    fd = (f(X + h * V) - f(X - h * V)) / (2 * h)
    np.testing.assert_allclose(jvp, fd, rtol=1e-5, atol=1e-7)
    # the transposed VJP, the path forward mode took without the derived rule
    z = prim(X) if prim.nin == 1 else prim(X, 0.5 * X + Y)
    with np.errstate(all="ignore"):
        if _order_first(prim):
            z, args, tans = prim(ORDER, X), (ORDER, X), (V,)
        else:
            args = (X,) if prim.nin == 1 else (X, 0.5 * X + Y)
            tans = (V,) if prim.nin == 1 else (V, 0.5 * V)
        params = registry.adjoint_rule(prim).params
        transposed = sg.forward_mode.transpose_jvp(prim, z, tans, *(args + (None,) * (len(params) - len(args))))
    direct = sg.jvp(_call(prim), (X,), (V,))[1]
    np.testing.assert_allclose(direct, transposed, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("prim", DERIVABLE)
def test_derived_tangent_second_order(prim):
    f = _program(prim)
    with np.errstate(all="ignore"):
        if not np.all(np.isfinite([f(X + h * V) for h in (-1e-3, 0.0, 1e-3)])):
            pytest.skip("%s is not finite near the test point" % prim.__name__)
        hv = sg.hvp(f)(X, V)
        e = 1e-5
        fd = (sg.grad(f)(X + e * V) - sg.grad(f)(X - e * V)) / (2 * e)
    if not np.all(np.isfinite(fd)):
        pytest.skip("the second derivative of %s is not finite here" % prim.__name__)
    np.testing.assert_allclose(hv, fd, rtol=1e-4, atol=1e-6)


def test_reductions_and_linear_maps_are_not_derived():
    # not ufuncs (their adjoint is not diag(F)), or not a product with the cotangent: transpose_jvp stays
    assert tangents.derived_tangent(np.prod) is None
    assert tangents.derived_tangent(np.ldexp) is None
