"""A recursive user function's generated code calls itself through a
stand-in while it is compiled (artefact.Deferred); the first call binds the
compiled function in its place. Gradients, Hessians and tape gradients of
a recursive determinant (GradBench's det: expansion in minors) match the
closed form det(A) inv(A)^T and autograd, call after call."""
import autograd
import autograd.numpy as anp
import numpy as np

import srcgrad as sg
from gradcheck import check_close, numpy_swapped


def det_of_minor(A, rows, cols):
    if len(rows) == 1:
        return A[rows[0], cols[0]]
    det = 0.0
    sign = 1.0
    for j in range(len(cols)):
        det = det + sign * A[rows[0], cols[j]] * det_of_minor(A, rows[1:], cols[:j] + cols[j + 1:])
        sign = -sign
    return det


def det(A):
    n = A.shape[0]
    return det_of_minor(A, list(range(n)), list(range(n)))


def test_gradients_of_a_recursive_function_call_after_call():
    g = sg.grad(det)
    rng = np.random.default_rng(0)
    for n in (4, 4, 5, 4):
        A = rng.standard_normal((n, n))
        want = np.linalg.det(A) * np.linalg.inv(A).T
        check_close(det(A), np.linalg.det(A), rtol=1e-10)
        check_close(g(A), want, rtol=1e-9, atol=1e-12)
        check_close(g(A), want, rtol=1e-9, atol=1e-12)      # (through the bound functions)
        v = sg.Variable(A)
        with sg.GradientTape() as tape:
            y = sg.function(det)(v)
        check_close(tape.gradient(y, v).numpy(), want, rtol=1e-9, atol=1e-12)


def test_second_derivatives_of_a_recursive_function():
    A = np.random.default_rng(1).standard_normal((4, 4))
    V = np.random.default_rng(2).standard_normal((4, 4))
    with numpy_swapped(__name__, anp):
        H = autograd.hessian(det)(A)
    for _ in range(2):
        check_close(sg.hessian(det)(A), H, rtol=1e-9, atol=1e-10)
        check_close(sg.hvp(det)(A, V), np.einsum("ijkl,kl->ij", H, V), rtol=1e-9, atol=1e-10)
