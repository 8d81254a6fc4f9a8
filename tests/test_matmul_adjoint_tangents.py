"""Second-order code through matmul: the cotangent helpers
matmul_adjoint_x (g y^T) and matmul_adjoint_y (x^T g) have tangent rules
(rules/numpy/linalg.py; the product rule over the two arguments each is
linear in, the third read for its shape only), which forward mode uses in
place of transforming the helpers' source. sg.hvp and sg.hessian through
them are checked against autograd and central differences, with matmul's
1-d, 2-d and batched operands, one or both operands differentiated."""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg

from gradcheck import check_close, numerical_jacobian


def right(w, X):
    return np.sum(np.tanh(X @ w) ** 2)


def left(w, X):
    return np.sum(np.sin(w @ X) * (w @ X))


def both(x, A):
    return np.sum((x[:, None] @ x[None, :] + A) ** 2) + np.sum((A @ x) @ x)


def batched(W, X):
    return np.sum(np.tanh(X @ W) ** 3)


def vector_vector(x, y):
    return (x @ y) ** 3 + np.sum(x * x) * (x @ y)


CASES = {
    "right_2d": (right, lambda r: (r.standard_normal((4, 3)), r.standard_normal((5, 4)))),
    "right_1d": (right, lambda r: (r.standard_normal(4), r.standard_normal((5, 4)))),
    "left_1d": (left, lambda r: (r.standard_normal(5), r.standard_normal((5, 3)))),
    "both": (both, lambda r: (r.standard_normal(3), r.standard_normal((3, 3)))),
    "batched": (batched, lambda r: (r.standard_normal((4, 2)), r.standard_normal((3, 5, 4)))),
    "vector_vector": (vector_vector, lambda r: (r.standard_normal(4), r.standard_normal(4))),
}


def _autograd_of(f):
    return type(f)(f.__code__, dict(f.__globals__, np=anp), f.__name__)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("wrt", [0, 1])
def test_hvp_through_matmul(name, wrt):
    f, make = CASES[name]
    rng = np.random.default_rng(7)
    args = make(rng)
    v = rng.standard_normal(np.shape(args[wrt]))
    got = sg.hvp(f, wrt=wrt)(*args, v)
    ag = _autograd_of(f)
    check_close(got, autograd.hessian_vector_product(ag, argnum=wrt)(*args, v), rtol=1e-10, atol=1e-10)

    def gradient_along(t):
        moved = list(args)
        moved[wrt] = args[wrt] + t * v
        return np.asarray(autograd.grad(ag, argnum=wrt)(*moved))
    check_close(got, numerical_jacobian(gradient_along, 0.0), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["right_2d", "both", "batched"])
def test_hessian_through_matmul(name):
    f, make = CASES[name]
    args = make(np.random.default_rng(3))
    check_close(sg.hessian(f)(*args), autograd.hessian(_autograd_of(f))(*args), rtol=1e-10, atol=1e-10)


def test_the_tangent_calls_the_helper():
    """The JVP of the gradient calls matmul_adjoint_y on the tangent (no
    generated `matmul_adjoint_y_jvp`), and drops the term of an operand
    that carries no tangent (X: linear in each of g and x)."""
    rng = np.random.default_rng(0)
    w, X = rng.standard_normal(4), rng.standard_normal((5, 4))
    source = sg.source(sg.grad(right, wrt=(0,)), wrt=0, mode="forward", args=(w, X))
    assert "matmul_adjoint_y_jvp" not in source and source.count("_jvp(") == 1      # (its own def line)
    assert "matmul_adjoint_y(" in source and "zeros_like(X)" not in source
