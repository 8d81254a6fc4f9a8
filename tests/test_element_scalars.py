"""An element `x[i]` (or `x[i, j]`) of an array parameter of that rank, at
indices that surely hold Python ints (a `for` over range, int constants,
len, integer arithmetic of those), is 0-d: the scalar specialisation
applies to what is computed from it (no unbroadcast, zeros 0.0), as for a
Python float argument (transforms/kinds.py, `_element_op`,
`_index_ints`). Checked: the generated code, and values against autograd
and central differences, with the cases where the specialisation must not
apply (a row, an index read from a list, an index array, a reassigned
parameter) giving the same values as before."""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg

from gradcheck import check_close, numerical_grad


def chain(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] ** 2 * x[i - 1]
    return s


def grid(x):
    s = 0.0
    for i in range(1, x.shape[0]):
        for j in range(x.shape[1]):
            s = s + np.sin(x[i, j]) * x[i - 1, j] + x[0, 2] * 0.5
    return s


def rows(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sum(x[i] ** 2) * x[i, 0]
    return s


def listed(x):
    order = [2, 0, 1]
    s = 0.0
    for k in range(3):
        s = s + x[order[k]] * x[k] ** 2
    return s


def fancy(x):
    idx = np.argsort(x)
    s = 0.0
    for k in range(2):
        s = s + np.sum(x[idx] * x[k])
    return s


def rebound(x):
    x = x * 2.0
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] ** 3
    return s


def strided(x):
    s = 0.0
    n = len(x)
    for i in range(0, n // 2):
        s = s + x[2 * i] * x[n - 1 - i]
    return s


CASES = {"chain": (chain, (5,)), "grid": (grid, (4, 3)), "rows": (rows, (3, 4)), "listed": (listed, (3,)),
         "fancy": (fancy, (4,)), "rebound": (rebound, (4,)), "strided": (strided, (7,))}


def _autograd_of(f):
    return type(f)(f.__code__, dict(f.__globals__, np=anp), f.__name__)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values(name):
    f, shape = CASES[name]
    x = np.random.default_rng(3).uniform(0.2, 1.5, shape)
    got = sg.grad(f)(x)
    check_close(got, autograd.grad(_autograd_of(f))(x), rtol=1e-12, atol=1e-12)
    check_close(got, numerical_grad(f, x), rtol=1e-6, atol=1e-7)
    check_close(sg.hessian(f)(x), autograd.hessian(_autograd_of(f))(x), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", ["chain", "grid", "strided"])
def test_element_reads_are_scalar_code(name):
    f, shape = CASES[name]
    source = sg.source(f, args=(np.ones(shape),))
    assert "unbroadcast(" not in source and "ShapeOf(" not in source, source


def test_a_row_is_not_a_scalar():
    source = sg.source(rows, args=(np.ones((3, 4)),))
    assert "unbroadcast(" in source or "unreduce(" in source


def test_float32_elements():
    x = np.linspace(0.2, 1.0, 5).astype(np.float32)
    got = sg.grad(chain)(x)
    assert got.dtype == np.float32
    check_close(got, autograd.grad(_autograd_of(chain))(x.astype(np.float64)), rtol=1e-5, atol=1e-6)
