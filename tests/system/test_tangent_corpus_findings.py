"""What running Google Tangent's corpus (benchmarks/tangent_corpus) found
beyond Tangent's own selection, each a regression test:

* `sg.jvp` of a function of a dict (nested too), against the derivative
  written out;
* `sg.hvp` of a function the compiler refuses runs op by op, as sg.hessian
  and grad of grad do (Tangent's stack functions), against the Hessian;
* d/dx arcsin and arccos at x = +-1 are infinite in reverse mode too (they
  were computed as 1/cos(z), which rounds to 1.6e16);
* `sg.grad` of a complex output raises TypeError op by op too;
* sg.grad of a function calling sg.jvp of a function whose rules have no
  tangent rule (forward mode transposes their VJPs at run time).
"""
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from system_support import close, fd_grad, short_traceback


def of_dict(p):
    return p["a"] * p["b"] + np.sum(p["w"]["v"] ** 2) * p["b"]


@short_traceback
def test_jvp_of_a_dict_argument():
    p = {"a": 2.0, "b": 3.0, "w": {"v": np.array([1.0, 2.0])}}
    t = {"a": 1.0, "b": 0.5, "w": {"v": np.array([1.0, -1.0])}}
    y, dy = sg.jvp(of_dict, (p,), (t,))
    close(y, 6.0 + 5.0 * 3.0)
    # d = b da + a db + 2 v.dv b + |v|^2 db
    close(dy, 3.0 * 1.0 + 2.0 * 0.5 + 2.0 * (1.0 - 2.0) * 3.0 + 5.0 * 0.5)
    with pytest.raises(ValueError, match="same keys"):
        sg.jvp(of_dict, (p,), ({"a": 1.0},))


class Stack:
    def __init__(self):
        self.items = []

    def append(self, x):
        self.items.append(x)

    def pop(self):
        return self.items.pop()


def through_stack(x):
    stack = Stack()
    stack.append(x)
    b = stack.pop()
    return np.sum(x * x * b + np.sin(x))


@short_traceback
def test_hvp_runs_op_by_op_where_the_compiler_refuses():
    x = np.array([1.0, 2.0])
    v = np.array([1.0, -1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        hv = sg.hvp(through_stack)(x, v)
        hess = sg.hessian(through_stack)(x)
    # the Hessian of sum(x^3 + sin x) is diag(6x - sin x)
    close(hess, np.diag(6 * x - np.sin(x)))
    close(hv, hess @ v)
    close(hv, fd_grad(lambda z: np.dot(sg.grad(lambda w: through_stack(w))(z), v), x), what="FD of the gradient")


@pytest.mark.parametrize("fn, at, sign", [(np.arcsin, 1.0, 1), (np.arcsin, -1.0, 1),
                                          (np.arccos, 1.0, -1), (np.arccos, -1.0, -1)])
def test_arcsin_arccos_slopes_are_infinite_at_the_ends(fn, at, sign):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        g = sg.grad(lambda a: fn(a))(at)
        t = sg.jvp(lambda a: fn(a), (at,), (1.0,))[1]
    assert np.isinf(g) and np.sign(g) == sign, g
    assert np.isinf(t) and np.sign(t) == sign, t
    close(sg.grad(lambda a: fn(a))(0.3), sign / np.sqrt(1 - 0.09))


def complex_out(x):
    return np.sum(np.exp(1j * x))


def complex_out_op_by_op(x):
    def gen():          # a generator: the compiler refuses it, the function runs op by op
        yield np.exp(1j * x)
    return np.sum(list(gen())[0])


@pytest.mark.parametrize("fn", [complex_out, complex_out_op_by_op])
def test_grad_of_a_complex_output_raises_on_both_paths(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        with pytest.raises(TypeError, match="real-valued output"):
            sg.grad(fn)(np.array([0.1, 0.2]))


def _jvp_of(f):
    def jvp_f(x, v):
        return sg.jvp(f, (x,), (v,))[1]
    return jvp_f


def atleast_sq(x):
    return np.sum(np.atleast_1d(x) ** 2)


def prod_norm(x):
    return np.prod(x) * np.linalg.norm(x)


def cumprod_sin(x):
    return np.sum(np.sin(np.cumprod(x)))


@pytest.mark.parametrize("fn, ag", [
    (atleast_sq, lambda x: anp.sum(anp.atleast_1d(x) ** 2)),
    (prod_norm, lambda x: anp.prod(x) * anp.linalg.norm(x)),
    # (autograd's cumprod has no VJP of its VJP: the products written out)
    (cumprod_sin, lambda x: anp.sin(x[0]) + anp.sin(x[0] * x[1]) + anp.sin(x[0] * x[1] * x[2]))])
def test_grad_of_a_jvp_through_rules_without_tangent_rules(fn, ag):
    """Reverse over forward where forward mode transposes a rule's VJP
    (transpose_jvp: np.atleast_1d, np.prod, np.linalg.norm, np.cumprod have
    no tangent rule): d/dx <grad f(x), v> = H v, against autograd's Hessian
    and central differences of srcgrad's JVP."""
    x, v = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 3.0])
    hv = sg.grad(_jvp_of(fn))(x, v)
    close(hv, autograd.hessian(ag)(x) @ v, what="against autograd")
    close(hv, fd_grad(lambda z: _jvp_of(fn)(z, v), x), what="against central differences")
