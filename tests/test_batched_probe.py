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
