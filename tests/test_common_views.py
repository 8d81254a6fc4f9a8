"""Repeated view reads of an array parameter are computed once
(transforms/cse.py): `x[:-1]` read twice gets one cotangent, scattered back
once. Checked against central differences and autograd on sg.grad,
@sg.function on a tape and op by op on a tape, and sg.hessian against
autograd's; the merge is refused where the two reads could differ (x
rebound between them, an integer read of a vector, reads inside a loop)
and where the second read is returned."""
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad, numerical_jacobian, numpy_swapped

V = np.array([0.5, 1.5, -2.0, 0.25, 1.25])
M = np.array([[0.5, 1.5, -2.0, 0.3], [0.25, -1.0, 0.7, 1.1], [2.0, -0.4, 0.9, -1.3]])


def rosen(x):
    """scipy.optimize.rosen: x[:-1] read twice."""
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rows_and_columns(x):
    """x[:, 0], x[0] and x[..., 1] each read twice; x[0, 1] (a copy) twice."""
    return (np.sum(x[:, 0] ** 2 * np.cos(x[:, 0])) + np.sum(x[0] * np.tanh(x[0])) + np.sum(x[..., 1] * x[:, 2])
            + np.sum(x[..., 1]) * x[0, 1] + x[0, 1] ** 3)


def named_bounds(x):
    """Slices with computed bounds, read twice each."""
    n = x.shape[0] // 2
    a = x[:n] * x[n:2 * n]
    return np.sum(a * x[:n]) + np.sum(np.sin(x[n:2 * n]))


def rebound_between(x):
    """x is rebound between the reads: the second reads the new x."""
    a = x[1:]
    x = x * x
    b = x[1:]
    return np.sum(a * b)


def in_a_loop(x):
    """Reads inside a loop body (not merged) and at the top level."""
    s = np.sum(x[1:] * x[:-1])
    for k in range(3):
        s = s + np.sum(x[1:] * (k + 1.0)) * np.sum(x[:-1])
    return s + np.sum(x[:-1] ** 2)


def stepped(x):
    """Stepped and reversed slices, each read twice."""
    return np.sum(x[::2] * x[::-1][:3]) + np.sum(x[::2] ** 2) + np.sum(np.exp(x[::-1]))


CASES = [(rosen, V), (rows_and_columns, M), (named_bounds, V), (rebound_between, V), (in_a_loop, V),
         (stepped, V)]


def _tape(g, x):
    v = sg.Variable(x.copy())
    with sg.GradientTape() as t:
        y = g(v)
    return y.numpy(), t.gradient(y, v).numpy()


@pytest.mark.parametrize("path", ["grad", "function", "op_by_op"])
@pytest.mark.parametrize("f, x", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_repeated_views_differentiate_as_numpy_computes_them(f, x, path):
    want = numerical_grad(f, x)
    with numpy_swapped(__name__, anp):
        check_close(autograd.grad(f)(x.copy()), want)
    with warnings.catch_warnings():
        if path != "op_by_op":
            warnings.simplefilter("error", sg.PerformanceWarning)       # (compiled, not op by op)
        value, grad = {"grad": lambda: sg.value_and_grad(f)(x.copy()),
                       "function": lambda: _tape(sg.function(f), x),
                       "op_by_op": lambda: _tape(f, x)}[path]()
    check_close(value, f(x.copy()))
    check_close(grad, want)


@pytest.mark.parametrize("f, x", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_hessians_through_merged_views_match_autograd(f, x):
    with numpy_swapped(__name__, anp):
        want = autograd.hessian(f)(x.copy())
    check_close(sg.hessian(f)(x.copy()), want, rtol=1e-9, atol=1e-9)
    check_close(numerical_jacobian(sg.grad(f), x), want, rtol=1e-5, atol=1e-5)


def _code(f, *args):
    """The generated code without its comments (which quote the source)."""
    return "\n".join(line for line in str(sg.source(f, args=args or None)).splitlines()
                     if not line.strip().startswith("#"))


def test_the_generated_code_reads_each_view_once():
    src = _code(rosen, V)
    assert src.count("x[:-1]") == 1 and src.count("x[1:]") == 1
    assert src.count("unindex(") + src.count("unindex_add(") == 2       # (was 3: one scatter per read)
    src = _code(rows_and_columns, M)
    for read in ("x[:, 0]", "x[0]", "x[..., 1]"):
        assert src.count(read) == 1, read
    assert src.count("x[0, 1]") == 2        # (a copy of one element: read twice, as written)
    src = _code(rebound_between, V)
    assert src.count("[1:]") == 2
    src = _code(rosen)          # (no arguments: x's kind unknown, maybe a list, whose slices copy)
    assert src.count("x[:-1]") == 2


def pair(x):
    a = x[1:]
    b = x[1:]
    return a * 2.0, b


def test_a_returned_second_read_is_its_own_array():
    v = sg.Variable(V.copy())
    with sg.GradientTape() as t:
        y1, y2 = sg.function(pair)(v)
        loss = np.sum(y1) + 3.0 * np.sum(y2 ** 2)
    check_close(t.gradient(loss, v).numpy(), np.r_[0.0, 2.0 + 6.0 * V[1:]])
    a, b = pair(V.copy())
    check_close(b, V[1:])


@pytest.mark.parametrize("f, x", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_forward_mode_through_merged_views(f, x):
    v = np.random.default_rng(7).standard_normal(x.shape)
    value, tangent = sg.jvp(f, (x.copy(),), (v,))
    check_close(value, f(x.copy()))
    check_close(tangent, np.sum(numerical_grad(f, x) * v))
