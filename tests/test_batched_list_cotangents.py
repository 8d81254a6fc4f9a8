"""Batched sweeps (Hessians, Jacobians of gradients) through np.stack of
lists of numbers: a per-example rule's cotangent of a list `[a, b]` comes
back stacked as one (B, 2) array, every other one as a list of two (B,)
stacks. Added together, the array's examples were paired with the list's
entries: an error for most batch sizes, and a wrong Hessian without a word
when the batch size equalled the list's length (densify_b now splits the
array into the list form). Checked against central differences of the
gradient and autograd."""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_jacobian

C22 = np.array([[1.0, 2.0], [3.0, 4.0]])


def stacked_pairs(v):
    return np.sum(np.stack([[v[0], v[1]], [v[1] * 3.0, v[0]]]) ** 2 * C22)


def stacked_quads(v):
    return np.sum(np.stack([[v[0], v[1]], [v[2], v[3]]]) ** 2 * C22)


def stacked_mixed(v):
    rows = [[v[0] * v[1], np.sin(v[1])], [v[1], 2.0]]
    return np.sum(np.tanh(np.stack(rows)) * C22) + np.sum(np.stack([v[0], v[1] ** 2]))


CASES = [(stacked_pairs, 2), (stacked_quads, 4), (stacked_mixed, 2)]


def _autograd_hessian(fn, x):
    import test_batched_list_cotangents as me
    saved = me.np
    me.np = anp
    try:
        return autograd.hessian(fn)(x)
    finally:
        me.np = saved


@pytest.mark.parametrize("fn, n", CASES, ids=[f.__name__ for f, _ in CASES])
def test_hessians_through_stacks_of_lists(fn, n):
    x = np.linspace(0.3, 1.2, n)
    expected = numerical_jacobian(sg.grad(fn), x)
    check_close(expected, _autograd_hessian(fn, x), rtol=1e-6, atol=1e-7)
    check_close(sg.hessian(fn)(x), expected, rtol=1e-6, atol=1e-7)
    check_close(sg.jacobian(sg.grad(fn))(x), expected, rtol=1e-6, atol=1e-7)
