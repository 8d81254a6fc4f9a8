"""Differentiating with respect to a value of the user's own vector space
(autograd's VSpace types; autograd's examples/rkhs.py): a function in a
reproducing kernel Hilbert space, evaluated through a custom gradient whose
VJP returns an element of that space. sg.grad keeps the value as it is
(no conversion to an array), adds its cotangents with the type's own `+`
and returns the gradient as a value of the space."""
import math

import numpy as np
import pytest

import srcgrad as sg


def sq_exp_kernel(x1, x2):
    return math.exp(-(x1 - x2) ** 2)


@sg.custom_gradient
def evaluate(f, x):
    """f(x) = sum_i a_i k(x, x_i); d f(x) / d f is the representer k(x, .)."""
    value = sum(a * f.kernel(x, xr) for xr, a in f.alphas.items())

    def grad_fn(g):
        return RKHSFun(f.kernel, {x: 1.0}) * g, None
    return value, grad_fn


class RKHSFun:
    def __init__(self, kernel, alphas=None):
        self.kernel = kernel
        self.alphas = dict(alphas or {})

    def __call__(self, x):
        return evaluate(self, x)

    def __add__(self, other):
        out = dict(self.alphas)
        for k, v in other.alphas.items():
            out[k] = out.get(k, 0.0) + v
        return RKHSFun(self.kernel, out)

    def __mul__(self, a):
        return RKHSFun(self.kernel, {k: v * a for k, v in self.alphas.items()})


XS = [0.0, 1.0, 2.0, 3.0]
YS = [1.0, 2.0, 1.5, 0.5]


def logprob(f, xs, ys):
    return -sum((f(x) - y) ** 2 for x, y in zip(xs, ys))


def ignores_f(f, xs, ys):
    return sum(y * y for y in ys) + 0.0 * xs[0]


def test_gradient_in_a_user_vector_space():
    f = RKHSFun(sq_exp_kernel, {0.5: 0.3, 2.5: -0.2})
    g = sg.grad(logprob)(f, XS, YS)
    assert isinstance(g, RKHSFun) and g.kernel is sq_exp_kernel
    # d/df of -(f(x) - y)^2 is -2 (f(x) - y) k(x, .): one representer per point
    expected = {x: -2.0 * (f(x) - y) for x, y in zip(XS, YS)}
    assert sorted(g.alphas) == sorted(expected)
    for x in XS:
        assert g.alphas[x] == pytest.approx(expected[x], rel=1e-12)


def test_gradient_steps_agree_with_the_analytic_update():
    """The program of rkhs.py: f <- f + 0.01 grad, three times."""
    f = RKHSFun(sq_exp_kernel)
    h = RKHSFun(sq_exp_kernel)
    for _ in range(3):
        f = f + sg.grad(logprob)(f, XS, YS) * 0.01
        h = h + RKHSFun(sq_exp_kernel, {x: -2.0 * (h(x) - y) for x, y in zip(XS, YS)}) * 0.01
    for x in np.linspace(-1.0, 4.0, 7):
        assert f(x) == pytest.approx(h(x), rel=1e-12, abs=1e-15)


def test_a_gradient_that_does_not_reach_the_value_is_its_zero():
    f = RKHSFun(sq_exp_kernel, {0.5: 0.3})
    g = sg.grad(ignores_f)(f, XS, YS)
    assert isinstance(g, RKHSFun) and all(v == 0.0 for v in g.alphas.values())
