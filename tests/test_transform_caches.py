"""Transforms of the same function, in every order, give the values each
gives alone.

srcgrad caches per function what it compiles: a Gradient per (wrt,
preserve_result, has_aux), Programs per argument kinds, Artefacts per mask
and mode, and each artefact's generated gradient functions per
(wrt, preserve_result, has_aux). sg.grad(f) and sg.value_and_grad(f) have
generated functions of the same name (grad_<f>) but different outputs; the
artefact used to hand the tree generated last to whichever was transformed
again, so `sg.jit(sg.grad(f))`, `sg.hessian(f)`, then `sg.hvp(f)` ran the
JVP of value_and_grad's code and failed on (value, gradient) pairs.

Each test takes a fresh copy of the function (a new function object with
the same code: nothing cached), applies the transforms in the order given,
and checks every result against independent values: the analytic gradient
and Hessian of sum(sin(x) * x), which is diag(2 cos x - x sin x), and
central differences (tests/gradcheck.py).
"""
import itertools
import types
import warnings

import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad, numerical_jacobian

X = np.array([0.3, -1.2, 2.0])
V = np.array([1.0, -2.0, 0.5])


def f(x):
    return np.sum(np.sin(x) * x)


def two(w, x):
    return np.sum(np.sin(x) * x) + np.sum(w * x)


def value(x):
    return np.sum(np.sin(x) * x)


def gradient(x):
    return np.cos(x) * x + np.sin(x)


def hessian(x):
    return np.diag(2 * np.cos(x) - x * np.sin(x))


def fresh(fn):
    """A new function object with fn's code: no cache of srcgrad's on it."""
    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__)


def check_gradient(g):
    check_close(g, gradient(X))
    check_close(g, numerical_grad(value, X))


def check_hessian(h):
    check_close(h, hessian(X))
    check_close(h, numerical_jacobian(gradient, X))


def check_hvp(hv):
    check_close(hv, hessian(X) @ V)
    check_close(hv, numerical_jacobian(gradient, X) @ V)


def run_grad(g):
    check_gradient(sg.grad(g)(X))


def run_jit_grad(g):
    check_gradient(sg.jit(sg.grad(g))(X))


def run_value_and_grad(g):
    v, d = sg.value_and_grad(g)(X)
    check_close(v, value(X))
    check_gradient(d)


def run_hessian(g):
    check_hessian(sg.hessian(g)(X))


def run_hvp(g):
    check_hvp(sg.hvp(g)(X, V))


def run_jvp(g):
    out, t = sg.jvp(g, (X,), (V,))
    check_close(out, value(X))
    check_close(t, gradient(X) @ V)
    check_close(t, numerical_grad(value, X) @ V)


def run_jacobian_of_grad(g):
    check_hessian(sg.jacobian(sg.grad(g))(X))


def run_jit_value_and_grad(g):
    v, d = sg.jit(sg.value_and_grad(g))(X)
    check_close(v, value(X))
    check_gradient(d)


def run_jvp_of_grad(g):
    out, t = sg.jvp(sg.grad(g), (X,), (V,))
    check_gradient(out)
    check_hvp(t)


def run_grad_of_grad(g):
    check_close(sg.grad(sg.grad(g))(X), hessian(X) @ np.ones(3))


RUNS = {"grad": run_grad, "jit_grad": run_jit_grad, "value_and_grad": run_value_and_grad,
        "hessian": run_hessian, "hvp": run_hvp, "jvp": run_jvp, "jacobian_grad": run_jacobian_of_grad}

#: the transforms without Numba: every ordered triple
CPYTHON = ["grad", "value_and_grad", "hessian", "hvp", "jvp", "jacobian_grad"]


def _run(names, runs=RUNS):
    g = fresh(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)     # (sg.jit without Numba runs in CPython)
        for name in names:
            runs[name](g)


def test_reported_order():
    """The report: sg.jit(sg.grad(f)), sg.hessian(f), sg.hvp(f)."""
    _run(["jit_grad", "hessian", "hvp"])


@pytest.mark.parametrize("names", list(itertools.permutations(CPYTHON, 3)), ids="-".join)
def test_triples_in_every_order(names):
    _run(names)


@pytest.mark.parametrize("names", [("jit_grad",) + p for p in itertools.permutations(CPYTHON, 2)]
                         + [p + ("jit_grad",) for p in itertools.permutations(CPYTHON, 2)], ids="-".join)
def test_jit_grad_first_or_last(names):
    """sg.jit(sg.grad(f)) compiles the generated gradient function (with
    Numba where installed) before or after two other transforms."""
    _run(names)


@pytest.mark.parametrize("names", [tuple(RUNS), tuple(reversed(RUNS))], ids=["forward", "reversed"])
def test_all_seven(names):
    _run(names)


MORE = dict(RUNS, jit_value_and_grad=run_jit_value_and_grad, jvp_grad=run_jvp_of_grad,
            grad_grad=run_grad_of_grad)


@pytest.mark.parametrize("names", [
    ("value_and_grad", "jit_grad", "jit_value_and_grad"),
    ("grad", "jit_value_and_grad", "jit_grad", "hvp"),
    ("jit_grad", "value_and_grad", "jvp_grad", "grad_grad"),
    ("hessian", "jit_grad", "jvp_grad", "jit_value_and_grad", "grad_grad"),
    ("jit_value_and_grad", "grad_grad", "hessian", "jvp_grad"),
], ids="-".join)
def test_generated_functions_transformed_again(names):
    """The generated functions of grad and value_and_grad (one name, two
    outputs), each compiled by Numba or transformed again, in mixed orders."""
    _run(names, MORE)


def test_two_arguments_each_wrt():
    """grad, value_and_grad, hessian and hvp of each argument of one
    function: each (wrt, preserve_result) form keeps its own code."""
    g = fresh(two)
    w = np.array([0.5, 1.5, -1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        check_close(sg.jit(sg.grad(g, wrt=1))(w, X), gradient(X) + w)
        check_close(sg.hessian(g, wrt=1)(w, X), hessian(X))
        v, d = sg.value_and_grad(g, wrt=0)(w, X)
        check_close(v, value(X) + w @ X)
        check_close(d, X)
        check_close(sg.hvp(g, wrt=1)(w, X, V), hessian(X) @ V)
        check_close(sg.hvp(g, wrt=0)(w, X, V), np.zeros(3))
        check_close(sg.hessian(g, wrt=0)(w, X), np.zeros((3, 3)))
        check_close(sg.jvp(sg.grad(g, wrt=(0, 1)), (w, X), (V, None))[1][1], V)
        check_close(sg.jit(sg.value_and_grad(g, wrt=1))(w, X)[1], gradient(X) + w)
        check_close(sg.grad(g, wrt=1)(w, X), numerical_grad(lambda x: value(x) + w @ x, X))
