"""sg.jit writes a temporary of an elementwise expression into its one
read (jit/lower.py, `_fold_elementwise`), so that Numba fuses the chain
into one loop (it fuses only across its own temporaries): folded exactly
where nothing between the assignment and the read can change what the
expression reads, and never where something might. End to end, the
lowered 200-step chain reads as one expression per step, and its gradient
is sg.grad's in CPython and autograd's."""
import ast
import textwrap
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

pytest.importorskip("numba")

import srcgrad as sg  # noqa: E402
from srcgrad.jit import lower  # noqa: E402


def folded(source):
    """The body of the function in `source` after the fold, as source."""
    fdef = ast.parse(textwrap.dedent(source)).body[0]
    lower._fold_elementwise(fdef, {"np"})
    return [ast.unparse(s) for s in fdef.body]


def test_a_chain_is_one_expression():
    assert folded("""
        def f(x, w):
            m = x * w
            s = np.sin(m)
            t = 0.01 * s
            y = x + t
            return y
    """) == ["return x + 0.01 * np.sin(x * w)"]


def test_stack_operations_between_do_not_stop_it():
    assert folded("""
        def f(x, w, _stack__x):
            s = np.sin(x)
            _stack__x.append(x)
            v = _stack__x.pop()
            y = x + s * w
            return (y, v)
    """) == ["_stack__x.append(x)", "v = _stack__x.pop()", "y = x + np.sin(x) * w", "return (y, v)"]


def test_into_the_arguments_of_a_call():
    assert folded("""
        def f(b, bx, w):
            g = bx * 0.5
            b = add_into(b, g * w)
            return b
    """) == ["b = add_into(b, bx * 0.5 * w)", "return b"]


@pytest.mark.parametrize("between", [
    "x = w",                    # (an operand rebound)
    "x[0] = 5.0",               # (written into)
    "touch(x)",                 # (a call that may write into it)
    "x += 1.0",
    "for i in range(2):\n    pass",
    "q = helper(w)",            # (an assignment of a call that may write)
    "x.append(1.0)",            # (a list the expression reads: np.sin of a list changes with it)
    "q = x.pop()",
])
def test_nothing_that_may_change_an_operand_is_crossed(between):
    body = textwrap.indent(between, " " * 12)
    got = folded("""
        def f(x, w):
            t = x * 2.0
%s
            y = t + w
            return y
    """ % body)
    assert got[0] == "t = x * 2.0"


@pytest.mark.parametrize("source", [
    # read twice
    """
    def f(x):
        t = x * 2.0
        y = t + t
        return y
    """,
    # read in a loop's body: once per iteration
    """
    def f(x, n):
        t = x * 2.0
        for i in range(n):
            x = x + t
        return x
    """,
    # assigned twice
    """
    def f(x, c):
        t = x * 2.0
        if c:
            t = x * 3.0
        y = t + 1.0
        return y
    """,
    # not elementwise: a matrix product, a helper, a reduction
    """
    def f(a, b):
        t = a @ b
        y = t + 1.0
        return y
    """,
    """
    def f(a):
        t = helper(a)
        y = t + 1.0
        return y
    """,
    """
    def f(a):
        t = np.sum(a, axis=0)
        y = t + 1.0
        return y
    """,
    # read after a call that runs before the read (the call's own evaluation may write)
    """
    def f(a, b):
        t = a * 2.0
        y = helper(touch(a), t)
        return y
    """,
    # a parameter
    """
    def f(t):
        t = t * 2.0
        y = t + 1.0
        return y
    """,
])
def test_not_folded(source):
    """`t` keeps its assignment (the others may fold: `y` into the return)."""
    before = ast.parse(textwrap.dedent(source)).body[0].body[0]
    got = folded(source)
    assert got[0] == ast.unparse(before)
    assert any("t" in {n.id for n in ast.walk(ast.parse(s)) if isinstance(n, ast.Name)} for s in got[1:])


def test_a_branch_folds_inside_its_own_block():
    assert folded("""
        def f(x, c):
            if c:
                t = x * 2.0
                x = t + 1.0
            return x
    """) == ["if c:\n    x = x * 2.0 + 1.0", "return x"]


STEPS = 200


def chain(x, w):
    for i in range(STEPS):
        x = x + 0.01 * np.sin(x * w)
    return np.sum(x)


def test_the_lowered_chain_is_fused_and_its_gradient_is_sg_grads():
    rng = np.random.default_rng(5)
    x, w = rng.normal(size=10), rng.normal(size=10)
    g = sg.grad(chain, wrt=(0, 1))
    source = sg.source(chain, args=(x, w), wrt=(0, 1), jit=True)
    assert "x = x + 0.01 * np.sin(mul_x)" in source
    assert "sin = np.sin" not in source
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)       # (compiled by Numba)
        got = sg.jit(g)(x, w)
    want = g(x, w)

    def ag_chain(x, w):
        for i in range(STEPS):
            x = x + 0.01 * anp.sin(x * w)
        return anp.sum(x)
    ref = autograd.grad(ag_chain, argnum=(0, 1))(x, w)
    for a, b, c in zip(got, want, ref):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(a, c, rtol=1e-13, atol=1e-14)
