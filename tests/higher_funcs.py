"""User functions for tests/test_higher_order.py (issue 9: derivatives of
second and third order).

* Companions of corpus entries whose Hessian is identically zero at their
  inputs (linear or piecewise-linear functions: a Hessian-vector product of
  zero checks little), each composing the corpus function with a nonlinear
  outer function so that the second derivative runs through the corpus
  function's own generated adjoint (its cotangent depends on x).
* Dedicated functions: straight-line code, a module-level `sg.grad` and
  functions calling it, and functions for `sg.hessian`.

As in tests/corpus_funcs.py, NumPy is reached through the module global
`np`, so the autograd oracle can rebind it to autograd.numpy here too.
"""
import math

import numpy as np

import corpus_funcs as cf
import srcgrad as sg


# ---------------------------------------------------------------------------
# Companions of the corpus entries with a zero Hessian
# ---------------------------------------------------------------------------

def while_other_module_squared(a):
    return cf.while_other_module(a) ** 2


def for_zero_trips_squared(x, n):
    return cf.for_zero_trips(x, n) ** 2


def guard_clauses_squared(x, n):
    return cf.guard_clauses(x, n) ** 2


def cumulative_sum_squared(x):
    return np.sum(cf.cumulative_sum(x) ** 2)


def r_and_c_index_tricks_squared(x, y):
    a = np.r_[x, y, 1.0]
    b = np.c_[x, y]
    return np.sum(a * a * np.arange(7.0)) + np.sum(b * b * np.array([[1.0, -2.0]]))


def bubble_sort_weighted_squares(x):
    y = cf.bubble_sort(x)
    return np.sum(np.arange(1.0, y.shape[0] + 1.0) * y ** 2)


def bubble_sort_tuple_swap_squared(x):
    return cf.bubble_sort_tuple_swap(x) ** 2


def activity_int_counters_squared(x):
    return cf.activity_int_counters(x) ** 2


def interp_searchsorted_squared(fp, t):
    return cf.interp_searchsorted(fp, t) ** 2


def softmax_squares(x):
    return np.sum(cf.softmax(x) ** 2)


# ---------------------------------------------------------------------------
# Dedicated functions
# ---------------------------------------------------------------------------

def straight_line(x):
    """No control flow: reassignment and a few nonlinear ufuncs."""
    y = np.sin(x) * x
    z = np.exp(-0.5 * y * y)
    y = z * np.cos(x) + y
    return np.sum(y * x)


def loop_loss(x):
    """A loop with a carried state, differentiated by the module-level G_LOOP."""
    h = x
    for i in range(3):
        h = np.tanh(0.8 * h + 0.3 * x)
    return np.sum(h * x)


def plain_loss(x):
    return np.sum(np.sin(x) * x ** 2)


G_LOOP = sg.grad(loop_loss)
G_PLAIN = sg.grad(plain_loss)


def calls_grad_of_loop(x):
    """A function that calls sg.grad (a module-level gradient of a loop)."""
    return np.sum(G_LOOP(x) ** 2)


def calls_grad_of_plain(x):
    return np.sum(np.cos(G_PLAIN(x)) * x)


def two_args(x, w):
    """For sg.grad(fun)(x) on watched Tensors: fun's gradient wrt x depends on w."""
    return np.sum(np.tanh(x * w) ** 2 + x ** 3)


def rosenbrock_loop(x):
    """Chained Rosenbrock by a loop over the coordinates."""
    total = 0.0
    for i in range(x.shape[0] - 1):
        total = total + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return total


def branch_matrix(W):
    """A matrix argument and a branch on the data."""
    if np.sum(W) > 0.0:
        return np.sum(np.tanh(W @ W.T))
    return np.sum(np.sin(W) * W)


def while_scalar_power(x):
    """A while loop whose trip count depends on the data (x ** 2 ** k until large)."""
    y = x
    k = 0
    while np.max(np.abs(y)) < 5.0 and k < 6:
        y = y * y + x
        k += 1
    return np.sum(y)


# ---------------------------------------------------------------------------
# Reproducers of the failures found (tests/test_higher_order.py, test_repro_*)
# ---------------------------------------------------------------------------

def default_scale(x, scale=2.0):
    """A default argument not passed: sg.jvp / sg.hvp / sg.hessian."""
    return np.sum(np.tanh(scale * x))


def assign_into_zeros(x):
    """Element assignment of differentiated values into a new array."""
    M = np.zeros((2, 2))
    for i in range(2):
        for j in range(2):
            M[i, j] = np.sin(x[i]) * x[j]
    return np.sum(M @ x)


def setitem_on_copy(x):
    """Element assignment into a copy of the argument."""
    y = x.copy()
    y[0] = y[0] * y[1]
    return np.sum(y * y)


def math_float(a):
    """The math module on a Python float."""
    return math.sin(a) * a


def if_else_scalar(x):
    """x ** 2 sin(x) for x > 0: third derivative 6 cos x - 6 x sin x - x ** 2 cos x."""
    if x > 0.0:
        y = x * x
    else:
        y = x
    return y * np.sin(x)


def cube_by_loop(x):
    """x ** 3 by a loop: third derivative 6."""
    y = x
    for i in range(2):
        y = y * x
    return y
