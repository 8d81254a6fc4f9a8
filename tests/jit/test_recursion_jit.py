"""sg.jit of recursive functions: the split residuals of a recursion hold
the residuals of the calls below it, a tuple type containing itself, which
Numba cannot type; sg.jit compiles such code with its recursive calls
reversed jointly (program.JOINT_RECURSION: the call's VJP runs it again),
unless the code prints (the output would repeat: CPython then, with a
PerformanceWarning). CPython's sg.grad keeps split mode (the user's code
runs once); so does a tape's call of `@sg.function(jit=True)` that runs in
CPython, while its compiled sweeps reverse recursive calls jointly. Also: a function that returns early and then runs a loop (no
None saved for a name a branch defines first, which Numba cannot type)."""
import os
import sys
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from srcgrad import program as program_mod
from srcgrad.callables import as_function
from srcgrad.errors import PerformanceWarning
from srcgrad.functional import _grad_inputs
from gradcheck import check_close, numerical_grad, numpy_swapped

pytest.importorskip("numba")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:   # (`pytest` run without `python -m`: the checkout's benchmarks/)
    sys.path.insert(0, ROOT)
from benchmarks.workloads._gradbench_objectives import det_by_minor as det  # noqa: E402  (cmpad's, recursive)

OBJECTIVES = "benchmarks.workloads._gradbench_objectives"


def power(x, n):
    """x ** n elementwise, by recursion on the int n."""
    if n == 0:
        return np.ones_like(x)
    return x * power(x, n - 1)


def power_loss(x):
    return np.sum(np.sin(power(x, 3)))


def noisy_power(x, n):
    print("power", n)
    if n == 0:
        return np.ones_like(x)
    return x * noisy_power(x, n - 1)


def noisy_loss(x):
    return np.sum(noisy_power(x, 2))


def early_return_then_loop(x, n):
    if n == 0:
        return np.sum(x)
    s = np.zeros_like(x)
    for _ in range(n):
        s = s + x * x
    return np.sum(np.tanh(s))


def _no_fallback(jitted, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        out = jitted(*args)
    assert not jitted.fallbacks, jitted.fallbacks
    return out


def test_recursive_determinant_compiles_and_matches_the_closed_form_and_autograd():
    jitted = sg.jit(sg.grad(det))
    rng = np.random.default_rng(0)
    for n in (3, 4, 5, 4):
        A = rng.standard_normal((n, n))
        got = _no_fallback(jitted, A)
        check_close(got, np.linalg.det(A) * np.linalg.inv(A).T, rtol=1e-9, atol=1e-12)
        with numpy_swapped(OBJECTIVES, anp):
            check_close(got, autograd.grad(det)(A), rtol=1e-10, atol=1e-12)
        check_close(got, sg.grad(det)(A), rtol=1e-12, atol=1e-14)       # (CPython's split code)
    assert len(jitted.signatures) == 1          # (new shapes, same dtype and rank: no new compilation)


def test_recursive_call_is_reversed_jointly_in_the_lowered_code():
    A = np.random.default_rng(1).standard_normal((4, 4))
    text = sg.source(det, args=(A,), jit=True)
    assert text.startswith("# lowered for Numba")
    # the recursion's reverse sweep calls the joint VJP of the call below, which calls itself
    vjp = text[text.index("def det_of_minor_vjp("):]
    vjp = vjp[:vjp.index("\ndef ")]
    assert "_bA = det_of_minor_vjp(A, " in vjp
    assert "det_of_minor(A, " in vjp             # (its forward sweep runs the call below again)
    # CPython's code stays split: the recursive call's residuals are handed to its reverse sweep
    assert "det_of_minor_bwd" in str(sg.source(det, args=(A,)))


def test_only_recursive_residuals_choose_the_joint_compilation():
    A = np.random.default_rng(2).standard_normal((4, 4))
    program, mask, _ = _grad_inputs(as_function(det), (A,), {}, (0,))
    assert program.compile(mask).recursive_residuals
    joint = program.compile(mask, program_mod.JOINT_RECURSION)
    assert not joint.recursive_residuals
    got = joint.gradient_function(1, (0,), False, False)(A)       # the joint code in CPython
    check_close(got, np.linalg.det(A) * np.linalg.inv(A).T, rtol=1e-9, atol=1e-12)
    x = np.linspace(0.2, 1.4, 5)
    program, mask, _ = _grad_inputs(as_function(early_return_then_loop), (x, 3), {}, (0,))
    assert not program.compile(mask).recursive_residuals


def test_recursive_array_function_matches_central_differences_and_autograd():
    x = np.array([0.3, -0.7, 1.1, 0.05])
    got = _no_fallback(sg.jit(sg.grad(power_loss)), x)
    check_close(got, numerical_grad(power_loss, x), rtol=1e-6, atol=1e-8)
    with numpy_swapped(__name__, anp):
        check_close(got, autograd.grad(power_loss)(x), rtol=1e-12, atol=1e-14)


def test_a_recursive_function_that_prints_runs_in_cpython_and_prints_once(capsys):
    x = np.array([0.5, 2.0])
    jitted = sg.jit(sg.grad(noisy_loss))
    with pytest.warns(PerformanceWarning, match="recursive and prints"):
        got = jitted(x)
    check_close(got, 2 * x, rtol=1e-12)
    assert capsys.readouterr().out.split("\n").count("power 0") == 1     # (user code ran once)


def test_early_return_then_loop_compiles():
    x = np.linspace(-0.6, 0.9, 6)
    jitted = sg.jit(sg.grad(early_return_then_loop))
    for n in (0, 3, 1):
        got = _no_fallback(jitted, x, n)
        check_close(got, numerical_grad(lambda v: early_return_then_loop(v, n), x), rtol=1e-6, atol=1e-8)
        check_close(got, sg.grad(early_return_then_loop)(x, n), rtol=1e-12, atol=1e-14)
    # the branch's first definition of s saves no earlier value (there is none): no push of s before it
    text = str(sg.source(early_return_then_loop, args=(x, 3)))
    first = text.index("s = np.zeros_like(x)")
    assert "push(_stack, s)" not in text[:first]


def test_a_recursive_function_on_a_tape_with_jit():
    A = np.random.default_rng(3).standard_normal((4, 4))
    f = sg.function(det, jit=True)
    v = sg.Variable(A)
    for _ in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("error", PerformanceWarning)
            with sg.GradientTape() as tape:
                y = f(v)
            got = tape.gradient(y, v).numpy()
        check_close(got, np.linalg.det(A) * np.linalg.inv(A).T, rtol=1e-9, atol=1e-12)
    assert not f.jit.fallbacks


def test_a_recursion_appending_to_a_global_list_runs_once_under_jit():
    # the joint reversal would run the recursive calls again: the code reads a mutable global (Numba would
    # freeze it), so sg.jit runs CPython's split code, and the user's appends happen once
    import test_bound_builtin_methods as bound
    x = np.array([0.5, -1.5, 2.0])
    del bound.CALLS[:]
    with pytest.warns(PerformanceWarning, match="CALLS"):
        got = sg.jit(sg.grad(bound.counted_loss))(x)
    assert bound.CALLS == [3, 2, 1, 0]
    check_close(got, numerical_grad(bound.counted_loss, x), rtol=1e-6, atol=1e-8)
