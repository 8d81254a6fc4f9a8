"""Issue 16, "the tape": what a GradientTape differentiates must be the
values at the time the operations were recorded, and a cut gradient path
must not be silent.

* `test_operand_mutated_after_recording`: a plain ndarray operand of a
  recorded operation (`y = t * W`, `A @ t`, `np.sin(t * V)`, and a global
  array read by an @sg.function) is changed in place between the operation
  and `tape.gradient`. TF keeps the values at the op: the gradient must be
  the one at record time (computed by hand from the saved values, and by
  central differences), or a clear error (RuntimeError/ValueError saying the
  operand changed). Silently using the new values fails.
* `test_cut_path_warns`: `np.copyto(buf, tensor_expr)` and a list of
  Tensors reaching a ufunc cut the gradient path: they must warn
  `sg.GradientPathWarning` (pytest.warns).
* `test_element_assignment_into_an_array_allocated_on_the_tape`:
  `out = np.zeros(3); out[0] = tensor_expr` (scalar and row) is recorded
  (tape/buffers.py): the gradient by hand, checked by central differences.
* `test_custom_gradient_second_order`: a `@sg.custom_gradient` logsumexp
  whose grad_fn uses `np.full` (autograd's define_gradient example),
  differentiated twice (sg.grad of sg.grad, sg.hessian, sg.hvp,
  sg.jacobian(sg.grad), nested tapes op by op and around an @sg.function),
  against differences of differences of the plain function (and the exact
  Hessian of logsumexp, diag(p) - p p^T, p = softmax(x)).
"""
import warnings

import numpy as np
import pytest

import srcgrad as sg
from system_support import HVP_ATOL, HVP_RTOL, close, fd_grad, fd_hvp, params, short_traceback

X = np.array([0.5, 1.5, -2.0])
A0 = np.array([[1.0, 2.0, 0.0], [0.5, -1.0, 1.0]])
W_GLOBAL = np.ones(3)


def _squared_scaled(x):
    return np.sum((x * W_GLOBAL) ** 2)


def recorded(case, xt):
    """Record `case` on a watched xt; return (target, the ndarray operand to mutate,
    the gradient at record time by hand)."""
    if case == "multiply":
        W = np.ones(3)
        y = xt * W
        return np.sum(y * y), W, 2 * X * np.ones(3) ** 2
    if case == "multiply_linear":
        W = np.ones(3)
        return xt * W, W, np.ones(3)
    if case == "matmul":
        A = A0.copy()
        return np.sum(np.sin(A @ xt)), A, A0.T @ np.cos(A0 @ X)
    if case == "sin_of_product":
        V = np.ones(3)
        return np.sum(np.sin(xt * V)), V, np.cos(X)
    if case == "compiled_global":
        W_GLOBAL[:] = 1.0
        return sg.function(_squared_scaled)(xt), W_GLOBAL, 2 * X
    raise ValueError(case)


MUTATED = ["multiply", "multiply_linear", "matmul", "sin_of_product", "compiled_global"]


@pytest.mark.parametrize("case", MUTATED)
@short_traceback
def test_operand_mutated_after_recording(case):
    xt = sg.constant(X)
    try:
        with sg.GradientTape() as tape:
            tape.watch(xt)
            target, operand, expected = recorded(case, xt)
        operand *= 100.0
        try:
            g = tape.gradient(target, xt)
        except (RuntimeError, ValueError) as exc:
            text = str(exc).lower()
            assert any(w in text for w in ("changed", "mutated", "modified", "in place")), str(exc)
            return      # a clear error
        close(g, expected, what="gradient at record time")
    finally:
        W_GLOBAL[:] = 1.0


@short_traceback
def test_record_time_gradients_by_finite_differences():
    """The hand-derived record-time gradients above, by central differences."""
    close(2 * X, fd_grad(lambda v: np.sum((v * np.ones(3)) ** 2), X))
    close(A0.T @ np.cos(A0 @ X), fd_grad(lambda v: np.sum(np.sin(A0 @ v)), X))
    close(np.cos(X), fd_grad(lambda v: np.sum(np.sin(v)), X))


# ------------------------------------------------------------------ cut paths must warn

_BEFORE_THE_TAPE = np.zeros(3)     # (a plain ndarray: np.zeros in the tape returns a Buffer, tape/buffers.py)


def cut(case, xt):
    if case == "copyto":    # (into an array allocated on the tape, np.copyto is recorded: test_buffers_inplace.py)
        buf = _BEFORE_THE_TAPE.copy()
        np.copyto(buf, xt * 2.0)
        return np.sum(buf * xt)
    if case == "setitem_scalar":
        out = np.zeros(3)
        out[0] = np.sum(xt * xt)
        return np.sum(out * xt)
    if case == "setitem_vector":        # control: warns today
        out = np.zeros((2, 3))
        out[0] = xt * xt
        return np.sum(out[0] * xt)
    if case == "list_to_ufunc":         # (np.asarray(xt) in the user's code is recorded now)
        return np.sum(np.sin([xt, xt]) * xt)
    raise ValueError(case)


CUT_CASES = ["copyto", "list_to_ufunc"]
# an array the user's code allocates while the tape records is a Buffer (tape/buffers.py): element
# assignment of a Tensor into it is recorded
FILLED_CASES = ("setitem_scalar", "setitem_vector")


def _setitem_scalar_grad():
    """d/dx sum(out * x) with out = [sum(x^2), 0, 0]: 2x out_0' + e_0 sum(x^2)."""
    return 2 * X * X[0] + np.array([np.sum(X * X), 0.0, 0.0])
SILENT = {
    "copyto": "tape: np.copyto(buf, watched_expr) into a plain ndarray cuts the path with no GradientPathWarning",
    "setitem_scalar": "tape: out[0] = scalar watched Tensor into a plain ndarray cuts the path with no "
                      "GradientPathWarning",
}


@pytest.mark.parametrize("case", FILLED_CASES)
@short_traceback
def test_element_assignment_into_an_array_allocated_on_the_tape(case):
    xt = sg.constant(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.GradientPathWarning)
        with sg.GradientTape() as tape:
            tape.watch(xt)
            target = cut(case, xt)
    close(tape.gradient(target, xt), _setitem_scalar_grad() if case == "setitem_scalar" else 3 * X * X)
    close(_setitem_scalar_grad(), fd_grad(lambda v: np.sum(np.array([np.sum(v * v), 0.0, 0.0]) * v), X))


@pytest.mark.parametrize("case", CUT_CASES)     # (SILENT: fixed, both warn now)
@short_traceback
def test_cut_path_warns(case):
    """A conversion the tape cannot see (NumPy does not dispatch on a list's
    elements, nor on the value written into a plain array) warns."""
    xt = sg.constant(X)
    with pytest.warns(sg.GradientPathWarning):
        with sg.GradientTape() as tape:
            tape.watch(xt)
            target = cut(case, xt)
    tape.gradient(target, xt)


# ------------------------------------------------------------------ custom_gradient at second order

@sg.custom_gradient
def logsumexp(x):
    """autograd's define_gradient example, as an sg.custom_gradient."""
    m = np.max(x)
    ans = m + np.log(np.sum(np.exp(x - m)))

    def grad(g):
        return np.full(x.shape, g) * np.exp(x - np.full(x.shape, ans))
    return ans, grad


def lse_loss(x):
    return logsumexp(x) * 1.0


XC = np.array([0.3, -0.8, 1.2])
VC = np.array([1.0, 0.5, -0.3])


def exact_hessian(x):
    p = np.exp(x) / np.sum(np.exp(x))
    return np.diag(p) - np.outer(p, p)


def custom_hvp(mode):
    if mode == "grad_grad":
        g = sg.grad(lse_loss)
        return sg.grad(lambda w: np.sum(g(w) * VC))(XC)
    if mode == "hessian":
        return np.asarray(sg.hessian(lse_loss)(XC)) @ VC
    if mode == "hvp":
        return sg.hvp(lse_loss)(XC, VC)
    if mode == "jacobian_of_grad":
        return np.asarray(sg.jacobian(sg.grad(lse_loss))(XC)) @ VC
    fn = logsumexp if mode == "nested_tapes_op_by_op" else sg.function(lse_loss)
    xt = sg.constant(XC)
    with sg.GradientTape() as outer:
        outer.watch(xt)
        with sg.GradientTape() as inner:
            inner.watch(xt)
            y = fn(xt)
        g = inner.gradient(y, xt)
        gv = np.sum(g * VC)
    return outer.gradient(gv, xt)


CUSTOM_MODES = ["grad_grad", "hessian", "hvp", "jacobian_of_grad", "nested_tapes_op_by_op",
                "nested_tapes_compiled"]
CUSTOM = ("tape: the grad_fn's np.full(x.shape, ans) is not differentiated in ans at second order (only the "
          "diag(p) part of the Hessian remains; a GradientPathWarning names np.full)")


@short_traceback
def test_custom_gradient_first_order():
    """Control: the first derivative (softmax) is right."""
    close(sg.grad(lse_loss)(XC), fd_grad(lse_loss, XC))


@pytest.mark.filterwarnings("ignore::srcgrad.GradientPathWarning")
@pytest.mark.parametrize("name, mode", params(["logsumexp"], CUSTOM_MODES, {}))   # (fixed: grad_fn compiled)
@short_traceback
def test_custom_gradient_second_order(name, mode):
    expected = fd_hvp(lse_loss, XC, VC)
    close(expected, exact_hessian(XC) @ VC, rtol=HVP_RTOL, atol=HVP_ATOL, what="oracle")
    close(custom_hvp(mode), expected, rtol=HVP_RTOL, atol=HVP_ATOL, what=mode)
