"""optimize.factor_products: a batched sweep's `a = b * u` then `a = a + b *
w` (b a cotangent, u and w residuals) becomes `a = b * (u + w)`: one
product on the batch instead of two and the sum. Checked on the pass itself
(what it merges and what it must leave: a read of a, a new b, a w assigned
in between, a cotangent in w) and on the Hessians and Jacobians it speeds
up, against autograd and central differences."""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_jacobian
from srcgrad.syntax import ast_util
from srcgrad.transforms import optimize


def _factor(code, cheap):
    stmts = ast_util.quote(code)
    out = optimize.factor_products(stmts, lambda n: n in set(cheap))
    return "\n".join(ast_util.to_source(s).strip() for s in out)


@pytest.mark.parametrize("code, cheap, expected", [
    # merged: the second product folds into the first, either operand order
    ("a = b * u\nc = d * v\na = a + b * w", "uvw", "a = b * (u + w)\nc = d * v"),
    ("a = u * b\na = w * b + a", "uw", "a = b * (u + w)"),
    ("a = b * (u * 2.0)\na = a + b * (w * -2.0)\na = a + b * v", "uvw", "a = b * (u * 2.0 + w * -2.0 + v)"),
    # left alone: a read in between, b assigned in between, w assigned in between, w a cotangent,
    # another cotangent's product, a sum of something else
    ("a = b * u\nc = a * 2.0\na = a + b * w", "uw", "a = b * u\nc = a * 2.0\na = a + b * w"),
    ("a = b * u\nb = b * 2.0\na = a + b * w", "uw", "a = b * u\nb = b * 2.0\na = a + b * w"),
    ("a = b * u\nw = u * 3.0\na = a + b * w", "uw", "a = b * u\nw = u * 3.0\na = a + b * w"),
    ("a = b * u\na = a + b * g", "u", "a = b * u\na = a + b * g"),
    ("a = b * u\na = a + d * w", "uw", "a = b * u\na = a + d * w"),
    ("a = b * u\na = a - b * w", "uw", "a = b * u\na = a - b * w"),
    ("a = u * v\na = a + u * w", "uvw", "a = u * v\na = a + u * w"),
])
def test_the_pass(code, cheap, expected):
    assert _factor(code, cheap) == expected


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def reused(x):
    # x read in three products: its second-order adjoint sums three products of one cotangent
    return np.sum(x ** 3 * np.sin(x) + np.cos(x) * x ** 2)


def _autograd_of(f):
    return type(f)(f.__code__, dict(f.__globals__, np=anp), f.__name__)


@pytest.mark.parametrize("f", [rosen, reused])
def test_hessians(f):
    x = np.random.default_rng(0).uniform(-1.5, 1.5, 12)
    h = sg.hessian(f)(x)
    check_close(h, autograd.hessian(_autograd_of(f))(x), rtol=1e-10, atol=1e-10)
    check_close(h, numerical_jacobian(sg.grad(f), x), rtol=1e-5, atol=1e-5)


def test_jacobian_of_a_gradient_on_a_tape():
    x = np.random.default_rng(1).uniform(-1.0, 1.0, 7)
    v = sg.Variable(x)
    fn = sg.function(reused)
    with sg.GradientTape() as outer:
        with sg.GradientTape() as inner:
            y = fn(v)
        g = inner.gradient(y, v)
    h = outer.jacobian(g, v)
    check_close(h, autograd.hessian(_autograd_of(reused))(x), rtol=1e-10, atol=1e-10)
