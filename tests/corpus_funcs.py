"""The corpus of issue 4: the Python + NumPy that users actually write.

Each corpus function is an ordinary, undecorated module-level `def` (or a
closure built by a factory, or a function calling methods and helpers)
exercising one construct of issue 4's scope. It takes float64 arrays or
Python floats (plus integer counts) and returns a scalar or an array.
`CORPUS` at the bottom lists them with their inputs and which oracles apply;
tests/test_corpus.py checks every entry through `sg.grad`, the compiled tape
entry, the op-by-op tape, autograd and central finite differences.

Conventions that keep the oracles honest:

* NumPy is always reached through the module global `np` (never captured at
  definition time, except where an entry says so), so the autograd oracle
  can rebind `np` to `autograd.numpy` in this module and in corpus_other.
* Functions that assign into arrays first make their own array
  (`x.copy()`, `np.zeros(...)`): the caller's arrays are never mutated by
  the user's code, so any mutation seen by the tests comes from srcgrad.
* Inputs of data-dependent control flow (while tolerances, break and return
  conditions, branch tests) are chosen so that the path taken does not change
  within the finite-difference steps (checked by test_corpus's oracle tests).

`UNSUPPORTED` lists functions using what stays unsupported; the line each
must be reported at carries the comment `# unsupported: <key>`.
"""
import math
import warnings
import zlib
from dataclasses import dataclass
from typing import Callable

import numpy as np

import corpus_other
import srcgrad as sg
from corpus_other import dense_layer, softplus


# ===========================================================================
# Loops: while with data-dependent conditions
# ===========================================================================

def newton_sqrt(x):
    """sqrt(1 + x^2), elementwise, by Newton's method to a relative tolerance."""
    a = 1.0 + x * x
    y = a
    while np.max(np.abs(y * y - a)) > 1e-12 * np.max(a):
        y = 0.5 * (y + a / y)
    return np.sum(y * x)


def newton_cube_root(c):
    """Scalar Newton iteration for the cube root of a Python float c > 0."""
    y = c
    while np.abs(y ** 3 - c) > 1e-12:
        y = y - (y ** 3 - c) / (3.0 * y * y)
    return y


def while_halving(x):
    """Halve until the squared norm is at most 1 (trip count depends on x)."""
    y = x
    s = np.sum(x * x)
    while s > 1.0:
        y = y * 0.5
        s = np.sum(y * y)
    return np.sum(np.sin(y) * x)


def while_counter(x, n):
    i = 0
    h = x
    while i < n:
        h = np.tanh(1.5 * h + 0.1)
        i += 1
    return np.sum(h * h)


def while_fixed_point(x):
    """Solve y = 0.5 cos(y) + x by fixed-point iteration (a contraction)."""
    y = np.zeros_like(x)
    err = 1.0
    while err > 1e-13:
        y_new = 0.5 * np.cos(y) + x
        err = np.max(np.abs(y_new - y))
        y = y_new
    return np.sum(y ** 2)


def while_and_condition(x):
    k = 0
    y = x
    while k < 20 and np.max(np.abs(y)) > 0.3:
        y = np.sin(y) * 0.8
        k += 1
    return np.sum(y * x) + k


def while_in_for(x):
    h = x
    for i in range(3):
        while np.sum(h * h) > 4.0:
            h = h * 0.5
        h = 1.7 * h + x
    return np.sum(np.tanh(h))


def while_tuple_state(x, n):
    """A two-term recurrence carried as a tuple: a, b = b, f(a, b)."""
    a = np.ones_like(x)
    b = x
    k = 0
    while k < n:
        a, b = b, 0.5 * a + np.tanh(x * b)
        k += 1
    return np.sum(a * b)


def inner_minimize(x):
    """Gradient descent on 0.5|z - tanh x|^2 + 0.025 sum z^4 until the step is tiny."""
    z = np.zeros_like(x)
    step = np.ones_like(x)
    while np.sqrt(np.sum(step * step)) > 1e-12:
        step = 0.3 * (z - np.tanh(x) + 0.1 * z ** 3)
        z = z - step
    return np.sum(z * x)


def while_other_module(a):
    """A while loop inside a helper of another module."""
    return np.sum(corpus_other.newton_reciprocal(a) * a * a)


# ===========================================================================
# Loops: for over range (any step), rows, lists, tuples, zip, enumerate,
# reversed; nested loops
# ===========================================================================

def rnn_for_range(h, W, xs):
    for t in range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
    return np.sum(h)


def for_range_negative_step(x):
    acc = x[0] * 0.0
    for i in range(len(x) - 1, 0, -2):
        acc = acc * np.cos(x[i]) + x[i - 1]
    return acc


def for_range_len(x):
    s = 0.0
    for i in range(1, len(x)):
        s = s + x[i] * np.sin(x[i - 1])
    return s


def for_zero_trips(x, n):
    y = x * 2.0
    for i in range(n):
        y = np.sin(y)
    return np.sum(y)


def for_rows(X, w):
    acc = 0.0
    for row in X:
        acc = acc + np.tanh(row @ w)
    return acc


def loop_variable_after_loop(X):
    total = 0.0
    for row in X:
        total = total + np.sum(np.sin(row))
    return total * np.sum(row ** 2)


def for_list_literal(x):
    y = x
    for c in [0.5, 1.5, -2.0]:
        y = np.sin(c * y) + x
    return np.sum(y)


def for_tuple_of_arrays(x, y):
    acc = 0.0
    for v in (x, y, x * y):
        acc = acc + np.sum(v ** 2) * 0.5
    return acc


def for_zip(x, w):
    s = 0.0
    for a, b in zip(x, w):
        s = s + a * b * np.tanh(a)
    return s


def for_enumerate(x):
    s = 0.0
    for i, v in enumerate(x):
        s = s + np.sin(v) * (i + 1) ** 0.5
    return s


def for_enumerate_zip(x, w):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, w)):
        s = s + (i + 1.0) * np.tanh(a * b)
    return s


def for_reversed_range(x):
    acc = 0.0
    for i in reversed(range(len(x))):
        acc = 0.5 * acc + x[i] * x[i]
    return acc


def horner(coeffs, t):
    """sum_k c_k t^k by Horner's rule over reversed(coeffs)."""
    acc = np.zeros_like(t)
    for c in reversed(coeffs):
        acc = acc * t + c
    return np.sum(acc)


def nested_loops(W, x):
    acc = 0.0
    for i in range(W.shape[0]):
        for j in range(W.shape[1]):
            acc = acc + W[i, j] * np.tanh(x[i] * x[j])
    return acc


def triangular_loops(x):
    acc = 0.0
    for i in range(len(x)):
        for j in range(i):
            acc = acc + np.sin(x[i] - x[j]) * x[j]
    return acc


def nested_loop_carried(x):
    h = x
    for i in range(3):
        g = h
        for j in range(2):
            g = np.tanh(g * (i + 1) + 0.1 * j)
        h = h + 0.5 * g
    return np.sum(h ** 2)


# ===========================================================================
# Loops: break and continue
# ===========================================================================

def break_on_threshold(x):
    h = x
    for i in range(10):
        h = np.tanh(1.3 * h + x)
        if np.sum(h) > 1.5:
            break
    return np.sum(h * h)


def continue_skip(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] < 0.0:
            continue
        s = s + x[i] ** 3
    return s


def newton_while_true(a):
    """sqrt(a) by Newton: `while True` with a convergence break."""
    y = a
    while True:
        y_next = 0.5 * (y + a / y)
        if np.max(np.abs(y_next - y)) < 1e-13:
            break
        y = y_next
    return np.sum(y_next * a)


def break_inner_loop(X):
    acc = 0.0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            if X[i, j] > 1.0:
                break
            acc = acc + np.sin(X[i, j]) * (j + 1)
    return acc


def continue_in_while(x):
    i = 0
    s = 0.0
    while i < len(x):
        v = x[i]
        i += 1
        if v < 0.0:
            continue
        s = s + np.sqrt(v + 1.0) * v
    return s


def break_and_continue(x):
    s = 0.0
    for i in range(len(x)):
        if i % 2 == 1:
            continue
        s = s + np.exp(x[i])
        if s > 2.5:
            break
    return s * x[0]


def loop_index_after_break(x):
    h = x
    for i in range(8):
        h = np.sin(h) + 0.5
        if np.min(h) > 0.9:
            break
    return np.sum(h) * (i + 1)


# ===========================================================================
# return inside loops and branches
# ===========================================================================

def return_in_branch(x):
    if np.sum(x) > 0.0:
        return np.sum(x ** 2)
    return np.sum(np.sin(x))


def return_in_both_branches(x):
    m = np.mean(x)
    if m > 0.0:
        return np.sum(np.tanh(x) * m)
    else:
        return np.sum(np.exp(x) * m)


def return_in_loop(x):
    h = x
    for i in range(10):
        h = np.tanh(2.0 * h) + 0.2
        if np.max(h) > 0.9:
            return np.sum(h) * (i + 1)
    return np.sum(h)


def return_in_while(x):
    y = x
    k = 0
    while k < 50:
        y = 0.5 * y + np.sin(x)
        if np.max(np.abs(y)) > 1.5:
            return np.sum(y * y)
        k += 1
    return np.sum(y)


def return_in_nested_loops(X):
    acc = 0.0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            acc = acc + X[i, j] ** 2
            if acc > 3.0:
                return acc * X[i, j]
    return acc


def guard_clauses(x, n):
    if n == 0:
        return np.sum(x) * 0.0
    if n < 0:
        return -np.sum(x)
    y = x
    for i in range(n):
        y = np.cos(y) * x
    return np.sum(y)


def huber(r, delta=1.0):
    if abs(r) <= delta:
        return 0.5 * r * r
    return delta * (abs(r) - 0.5 * delta)


def huber_loss(x, t):
    total = 0.0
    for i in range(len(x)):
        total = total + huber(x[i] - t[i])
    return total


# ===========================================================================
# Expressions: conditional expressions, and/or/not, chained comparisons
# ===========================================================================

def conditional_expression(x):
    y = np.sin(x) if np.sum(x) > 0.0 else np.cos(x)
    return np.sum(y * x)


def conditional_expression_in_loop(x):
    s = 0.0
    for v in x:
        s = s + (v if v > 0.0 else 0.1 * v) * v
    return s


def and_condition(x):
    if np.sum(x) > 0.0 and np.max(x) < 2.0:
        y = x * x
    else:
        y = -x
    return np.sum(y * np.sin(x))


def or_condition(x):
    if np.min(x) < -2.0 or np.sum(x) > 0.0:
        y = np.sin(x)
    else:
        y = np.exp(x)
    return np.sum(y)


def or_default_value(x, scale=0.0):
    s = scale or 2.0
    return np.sum(np.tanh(s * x))


def not_condition(x):
    if not np.any(x > 3.0):
        y = x ** 3
    else:
        y = x
    return np.sum(y)


def chained_comparison(x):
    if -1.0 < np.sum(x) < 1.0:
        y = np.sin(x) * 2.0
    else:
        y = np.tanh(x)
    return np.sum(y * x)


def chained_comparison_elementwise(x):
    s = 0.0
    for v in x:
        if -0.5 < v < 0.5:
            s = s + v ** 2
        else:
            s = s + np.abs(v)
    return s


def boolean_mask_arithmetic(x):
    mask = x > 0.0
    return np.sum(x * x * mask + 0.1 * x * (~mask))


# ===========================================================================
# Statements: augmented assignment, unpacking, assert, pass, docstrings, print
# ===========================================================================

def augmented_assignment(x):
    s = np.sum(x)
    s += np.sum(x ** 2)
    s *= 0.5
    s -= np.mean(np.sin(x))
    s /= 3.0
    s **= 2
    return s


def augmented_assignment_arrays(x, w):
    h = np.tanh(x)
    h *= w
    h += 0.5 * x
    h -= np.mean(h)
    return np.sum(h ** 2)


def tuple_unpacking_swap(x):
    a, b = np.sin(x), np.cos(x)
    a, b = b, a * b
    return np.sum(a + 2.0 * b)


def list_unpacking(x):
    [a, b] = [x * 2.0, x + 1.0]
    return np.sum(a * np.sin(b))


def unpack_array_rows(X):
    a, b, c = X
    return np.sum(a * b - c ** 2)


def starred_unpacking(x):
    first, *middle, last = x
    s = first * last
    for m in middle:
        s = s + m ** 2
    return s


def starred_head_rest(x):
    parts = [np.sin(x), np.cos(x), x ** 2, np.tanh(x)]
    head, *rest = parts
    total = np.sum(head)
    for r in rest:
        total = total + np.sum(r * head)
    return total


def nested_unpacking(x, y):
    (a, b), c = (np.sin(x), np.cos(y)), x * y
    return np.sum(a * b + c)


def with_assert(x):
    assert x.ndim == 1, "expected a vector"
    assert np.all(np.isfinite(x))
    return np.sum(np.exp(-x * x))


def with_pass(x):
    y = x * 2.0
    if np.sum(x) > 10.0:
        pass
    else:
        y = y * np.sin(x)
    for i in range(2):
        pass
    return np.sum(y)


def with_docstring(x):
    """A docstring is not code: nothing to differentiate here."""
    return np.sum(np.tanh(x) ** 2)


def with_print(x):
    loss = np.sum(x ** 2)
    print("loss:", loss)
    return loss


def print_in_loop(x):
    h = x
    for i in range(3):
        h = np.sin(h)
        print("step", i, np.sum(h))
    return np.sum(h)


def is_none_default(x, bias=None):
    h = np.tanh(x)
    if bias is not None:
        h = h + bias
    return np.sum(h * h)


def count_as_divisor(x):
    n_pos = np.sum(x > 0)
    return np.sum(x ** 2) / (n_pos + 1)


# ===========================================================================
# Data: lists, tuples and dicts built, appended to and read
# ===========================================================================

def rnn_states_stack(h, W, U, xs):
    """An RNN collecting its states in a list, then np.stack."""
    states = []
    for t in range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t] @ U)
        states.append(h)
    H = np.stack(states)
    return np.sum(H ** 2) / H.shape[0]


def list_of_terms(x):
    terms = [np.sin(x), x ** 2, np.exp(-x)]
    total = 0.0
    for t in terms:
        total = total + np.sum(t)
    return total


def list_indexing(x):
    parts = [x, 2.0 * x, np.tanh(x)]
    return np.sum(parts[0] * parts[2] + parts[-1] * parts[1])


def list_append_negative_index(x):
    hs = [x, np.sin(x)]
    for i in range(4):
        hs.append(np.tanh(hs[-1] + 0.5 * hs[-2]))
    return np.sum(hs[-1] * hs[-3])


def list_concatenation(x):
    hs = []
    h = x
    for i in range(3):
        h = np.cos(h) * x
        hs = hs + [h]
    return np.sum(np.stack(hs, axis=1) ** 2)


def list_element_assignment(x):
    parts = [x, np.sin(x), np.cos(x)]
    parts[1] = parts[1] * parts[2]
    parts[0] = parts[0] + 1.0
    return np.sum(parts[0] * parts[1])


def list_len_stack_scalars(X):
    cols = []
    for j in range(X.shape[1]):
        cols.append(np.sum(X[:, j] ** 2))
    v = np.stack(cols)
    return np.sum(np.sqrt(v + 1.0)) / len(cols)


def nested_lists(x):
    grid = [[x[0], x[1]], [x[2], x[0] * x[1]]]
    return grid[0][0] * grid[1][1] + grid[1][0] * grid[0][1]


def tuple_built_and_indexed(x):
    pair = (np.sin(x), np.cos(x))
    return np.sum(pair[0] * pair[1] + pair[-1])


def _sincos(x):
    return np.sin(x), np.cos(x)


def tuple_from_helper_indexed(x):
    out = _sincos(x)
    return np.sum(out[0] * out[1] * x)


def dict_of_parameters(x, W, b):
    params = {"W": W, "b": b, "scale": 0.5}
    h = np.tanh(x @ params["W"] + params["b"])
    return params["scale"] * np.sum(h ** 2)


def dict_cache(x):
    cache = {}
    cache["h1"] = np.tanh(x)
    cache["h2"] = np.sin(cache["h1"]) * x
    return np.sum(cache["h1"] * cache["h2"])


def dict_loop_update(x):
    d = {"a": x, "b": x * 2.0}
    for i in range(3):
        d["a"] = np.sin(d["a"] + d["b"])
        d["b"] = d["b"] * 0.5 + d["a"]
    return np.sum(d["a"] * d["b"])


def dict_items_loop(x, W):
    layers = {"first": W, "second": W.T}
    h = x
    for name, M in layers.items():
        h = np.tanh(h @ M)
    return np.sum(h)


def list_of_weights(x, W1, W2):
    layers = [W1, W2]
    h = x
    for Wl in layers:
        h = np.tanh(h @ Wl)
    return np.sum(h ** 2)


def mlp_dict_of_layer_tuples(x, W1, b1, W2):
    params = {"layers": [(W1, b1), (W2, None)]}
    h = x
    for W, b in params["layers"]:
        h = h @ W
        if b is not None:
            h = h + b
        h = np.tanh(h)
    return np.sum(h ** 2)


# ===========================================================================
# Data: indexing and slicing reads
# ===========================================================================

def index_negative(x):
    return x[-1] * x[-2] + np.sum(x[-3:] ** 2)


def index_stepped(x):
    return np.sum(x[::2] * x[1::2]) + np.sum(x[::-1] * np.sin(x))


def index_none(x):
    return np.sum(np.tanh(x[:, None] * x[None, :]))


def index_ellipsis(X):
    return np.sum(X[..., 0] * X[..., -1]) + np.sum(X[0, ...] ** 2)


def index_integer_array(x):
    idx = np.array([0, 2, 2, 4])
    return np.sum(x[idx] ** 2 * np.arange(1, 5))


def index_boolean_mask(x):
    return np.sum(x[x > 0.0] ** 2) + np.sum(np.sin(x[x <= 0.0]))


def index_2d_mixed(X):
    return np.sum(X[1:, ::2] ** 2) + np.sum(X[:, [0, 2]] * X[:, [1, 3]])


def index_argmax(x):
    i = np.argmax(x)
    return x[i] ** 2 + np.sum(x)


def index_2d_fancy(X):
    rows = np.array([0, 1, 2])
    cols = np.array([2, 0, 1])
    return np.sum(np.exp(X[rows, cols]))


def index_2d_in_loop(X):
    acc = 0.0
    for i in range(X.shape[0]):
        acc = acc + X[i, i] * X[i, -1 - i]
    return acc


def index_chained_slices(x):
    return x[1:5][::-1][0] * np.sum(x[::2][1:])


# ===========================================================================
# Data: array element and slice assignment
# ===========================================================================

def cumulative_sum(x):
    y = x.copy()
    for i in range(1, len(y)):
        y[i] += y[i - 1]
    return y


def bubble_sort(x):
    y = x.copy()
    n = len(y)
    for i in range(n):
        for j in range(n - 1 - i):
            if y[j] > y[j + 1]:
                tmp = y[j]
                y[j] = y[j + 1]
                y[j + 1] = tmp
    return y


def bubble_sort_tuple_swap(x):
    y = x.copy()
    n = len(y)
    for i in range(n):
        for j in range(n - 1 - i):
            if y[j] > y[j + 1]:
                y[j], y[j + 1] = y[j + 1], y[j]
    return np.sum(y * np.arange(n))


def rnn_fill_rows(h, W, xs):
    T = xs.shape[0]
    H = np.zeros((T, h.shape[0]))
    for t in range(T):
        h = np.tanh(h @ W + xs[t])
        H[t] = h
    return np.sum(H * H)


def column_add(X, v):
    Y = X.copy()
    Y[:, 0] += v
    return np.sum(np.tanh(Y) ** 2)


def slice_assign(x):
    y = np.zeros(5)
    y[1:3] = np.sin(x[0:2])
    y[3:] = x[2:4] * x[0]
    return np.sum(y * np.linspace(1.0, 2.0, 5)) + np.sum(y ** 2)


def overwrite_self_dependent(x):
    y = x.copy()
    y[0] = y[0] * y[1]
    y[1] = np.sin(y[0]) + y[2]
    y[0] = y[0] * y[1]
    return np.sum(y ** 2)


def relu_masked_assign(x):
    y = x.copy()
    y[y < 0.0] = 0.0
    return np.sum(y ** 2 * x)


def masked_scale_assign(x):
    y = x.copy()
    mask = y > 0.2
    y[mask] = np.sqrt(y[mask])
    return np.sum(y * x)


def index_array_assign(x, v):
    y = np.zeros(6)
    idx = np.array([4, 0, 2])
    y[idx] = v
    y[1] = x[0]
    y[3] = x[1] * x[2]
    return np.sum(np.cos(y) * np.arange(6.0))


def dp_recurrence(x):
    a = np.zeros_like(x)
    a[0] = x[0]
    for i in range(1, len(x)):
        a[i] = a[i - 1] * np.cos(x[i]) + x[i]
    return np.sum(a ** 2)


def outer_product_loops(x):
    n = len(x)
    M = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            M[i, j] = np.sin(x[i]) * x[j]
    return np.sum(M @ x)


def accumulate_same_element(x):
    acc = np.zeros(1)
    for i in range(len(x)):
        acc[0] = 0.5 * acc[0] + x[i] ** 2
    return acc[0]


def inplace_slice_operators(x):
    y = x.copy()
    y[::2] *= 2.0
    y[1:] -= 0.5 * y[:-1]
    return np.sum(np.sin(y) * y)


def assign_whole_array(x):
    y = np.ones_like(x)
    y[:] = np.tanh(x)
    y[...] = y * x
    return np.sum(y)


def assign_ellipsis_columns(X):
    Y = np.zeros_like(X)
    Y[..., 0] = X[..., 1] ** 2
    Y[..., 1:] = np.sin(X[..., :-1])
    return np.sum(Y * X)


def conv1d_valid(x, w):
    k = len(w)
    out = np.zeros(len(x) - k + 1)
    for i in range(len(out)):
        out[i] = np.sum(x[i:i + k] * w)
    return np.sum(np.tanh(out))


def gauss_seidel(A, b):
    n = len(b)
    x = np.zeros_like(b)
    for sweep in range(6):
        for i in range(n):
            s = b[i] - A[i] @ x + A[i, i] * x[i]
            x[i] = s / A[i, i]
    return np.sum(x ** 2)


def _smooth3(v):
    out = v.copy()
    for i in range(1, len(v) - 1):
        out[i] = (v[i - 1] + v[i] + v[i + 1]) / 3.0
    return out


def helper_assigns_into_local(x):
    return np.sum(_smooth3(x) ** 2 * x)


def alias_sees_assignment(x):
    y = np.zeros(3)
    y[:] = x          # (no alias yet: NumPy changes y only)
    view = y          # an alias, not a copy: it sees the next write
    y[0] = x[1] * x[2]  # unsupported: alias
    return np.sum(view * x)


def viterbi_scores(E, T):
    """Max-plus dynamic programming, filling the score table row by row."""
    n, k = E.shape
    score = np.zeros((n, k))
    score[0] = E[0]
    for t in range(1, n):
        score[t] = np.max(score[t - 1][:, None] + T, axis=0) + E[t]
    return np.sum(score[-1] ** 2)


# ===========================================================================
# Functions: closures, module globals, defaults and keywords, *args/**kwargs
# ===========================================================================

def make_scaled_loss(scale, offset):
    def scaled_loss(x):
        return np.sum(np.tanh(scale * x + offset) ** 2)
    return scaled_loss


closure_floats = make_scaled_loss(1.5, -0.2)


def make_projection(P):
    def project(x):
        return np.sum(np.sin(x @ P))
    return project


closure_array = make_projection(np.linspace(-1.0, 1.0, 6).reshape(3, 2))


def _square_plus_one(u):
    return u * u + 1.0


def _soft_sign(u):
    return u / (1.0 + np.abs(u))


def make_composed(inner, outer):
    def composed(x):
        return np.sum(outer(inner(x)) * x)
    return composed


closure_functions = make_composed(_square_plus_one, _soft_sign)


def make_variable_model(W):
    V = sg.Variable(W, name="captured")

    def variable_model(x):
        return np.sum(np.tanh(x @ V) ** 2)
    variable_model.variable = V
    return variable_model


closure_variable = make_variable_model(np.linspace(-0.6, 0.6, 6).reshape(3, 2))


def make_mutable_activation():
    """A closure whose captured helper can be rebound (through `set_act`)."""
    act = np.tanh

    def uses_cell(x):
        return np.sum(act(x) * x)

    def set_act(fn):
        nonlocal act
        act = fn
    uses_cell.set_act = set_act
    return uses_cell


closure_cell = make_mutable_activation()

SCALE = 0.7


def module_global_float(x):
    return np.sum(np.sin(SCALE * x))


def _act_tanh(u):
    return np.tanh(u)


def _act_sin(u):
    return np.sin(u)


GLOBAL_ACT = _act_tanh


def module_global_helper(x):
    return np.sum(GLOBAL_ACT(x) * x)


def _scaled_power(u, scale=1.0, power=2, shift=0.0):
    return scale * (u + shift) ** power


def default_and_keyword_args(x):
    a = _scaled_power(x)
    b = _scaled_power(x, power=3, scale=0.5)
    c = _scaled_power(x, 2.0, shift=0.1)
    return np.sum(a + b * c)


def entry_defaults(x, scale=2.0, shift=0.5):
    return np.sum(np.tanh(scale * x + shift))


def _sum_squares(*arrays):
    total = 0.0
    for a in arrays:
        total = total + np.sum(a * a)
    return total


def star_args(x, y):
    return _sum_squares(x, y, x * y)


def _affine(x, w, shift=0.0, scale=1.0):
    return np.tanh(x * w * scale + shift)


def _forward(f, *args, **kwargs):
    return f(*args, **kwargs)


def args_kwargs_passed_on(x, w):
    return np.sum(_forward(_affine, x, w, shift=0.3) ** 2)


def _layer_kw(x, **options):
    return _affine(x, **options)


def kwargs_passed_on(x, w):
    return np.sum(_layer_kw(x, w=w, scale=0.5) * x)


def star_call_list_dict(x, w):
    parts = [x, w]
    opts = {"shift": 0.1, "scale": 2.0}
    return np.sum(_affine(*parts, **opts))


# ===========================================================================
# Functions: recursion, nested def, lambda, other modules
# ===========================================================================

def power(x, n):
    return 1.0 if n == 0 else x * power(x, n - 1)


def recursion_power(x):
    return np.sum(power(x, 4) * 0.5)


def _unroll(h, W, depth):
    if depth == 0:
        return h
    return _unroll(np.tanh(h @ W), W, depth - 1)


def recursion_rnn(h, W):
    return np.sum(_unroll(h, W, 3) ** 2)


def _tree_sum(x, lo, hi):
    if hi - lo == 1:
        return np.sin(x[lo])
    mid = (lo + hi) // 2
    left = _tree_sum(x, lo, mid)
    right = _tree_sum(x, mid, hi)
    return left + right + 0.1 * left * right


def recursion_divide_and_conquer(x):
    return _tree_sum(x, 0, len(x))


def nested_def(x):
    def square(u):
        return u * u
    return np.sum(square(np.sin(x)))


def nested_def_closure(x, w):
    def act(u):
        return np.tanh(u * w)
    h = act(x)
    return np.sum(act(h) * h)


def nested_def_in_loop(x):
    def step(h, c):
        return np.tanh(h * c + x)
    h = x
    for c in [0.5, 1.0, 1.5]:
        h = step(h, c)
    return np.sum(h)


def lambda_local(x):
    leaky = lambda u: np.maximum(u, 0.1 * u)  # noqa: E731
    return np.sum(leaky(x) * leaky(x - 0.5))


def _apply_twice(f, v):
    return f(f(v))


def lambda_passed_to_helper(x):
    return np.sum(_apply_twice(lambda u: np.sin(u) * x, x))  # unsupported: lambda


def other_module_attribute(x, W, b):
    return np.sum(corpus_other.dense_layer(x, W, b) ** 2)


def other_module_imported_name(x):
    return np.sum(softplus(x) * x)


def other_module_keyword_branch(x, W, b):
    return np.sum(dense_layer(x, W, b, activation="softplus"))


def other_module_list_stack(x):
    return corpus_other.poly_features_norm(x, 3)


def other_module_default_arg(x):
    return corpus_other.smooth_abs_sum(x * 2.0)


def other_module_class(x):
    s = corpus_other.Scaler(1.5)
    return np.sum(s.apply(x) ** 2)


# ===========================================================================
# Functions: methods, properties, staticmethod, classmethod
# ===========================================================================

class Affine:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def __call__(self, x):
        return np.tanh(x @ self.W + self.b)

    def loss(self, x, t):
        return np.mean((self(x) - t) ** 2)

    @property
    def weight_norm(self):
        return np.sum(self.W ** 2)

    @staticmethod
    def softplus(u):
        return np.log(1.0 + np.exp(u))

    @classmethod
    def identity(cls, n):
        return cls(np.eye(n), np.zeros(n))


AFFINE = Affine(np.linspace(-0.8, 0.8, 12).reshape(3, 4), np.linspace(-0.2, 0.2, 4))
TARGET = np.linspace(-0.5, 0.5, 8).reshape(2, 4)


def method_call(x):
    return AFFINE.loss(x, TARGET)


def dunder_call(x):
    return np.sum(AFFINE(x) * x[:, :1])


def method_object_built_inside(x, W, b):
    layer = Affine(W, b)
    return layer.loss(x, TARGET) + 0.1 * layer.weight_norm


def property_read(W):
    layer = Affine(W, np.zeros(W.shape[1]))
    return layer.weight_norm * np.sum(np.sin(W))


def staticmethod_on_class(x):
    return np.sum(Affine.softplus(x) * x)


def staticmethod_on_instance(x):
    return np.sum(AFFINE.softplus(x * 2.0))


def classmethod_constructor(x):
    layer = Affine.identity(3)
    return np.sum(layer(x) ** 2)  # unsupported: object


class Norms:
    EPS = 1e-3

    @classmethod
    def smooth_l1(cls, x):
        return np.sum(np.sqrt(x * x + cls.EPS))


def classmethod_class_attribute(x):
    return Norms.smooth_l1(x) * 2.0


class Particle:
    def __init__(self, pos, vel):
        self.pos = pos
        self.vel = vel

    def step(self, dt):
        return Particle(self.pos + dt * self.vel, self.vel - dt * np.sin(self.pos))

    @property
    def kinetic(self):
        return 0.5 * np.sum(self.vel ** 2)

    @property
    def potential(self):
        return np.sum(1.0 - np.cos(self.pos))


def objects_as_loop_state(pos, vel):
    p = Particle(pos, vel)
    for i in range(3):
        p = p.step(0.1)
    return p.kinetic + p.potential  # unsupported: object


class MLP:
    def __init__(self, weights):
        self.weights = weights

    def act(self, u):
        return np.tanh(u)

    def forward(self, x):
        h = x
        for W in self.weights:
            h = self.act(h @ W)
        return h


MLP_MODEL = MLP([np.linspace(-0.5, 0.5, 12).reshape(3, 4), np.linspace(0.4, -0.4, 8).reshape(4, 2)])


def method_with_loop_over_attribute(x):
    return np.sum(MLP_MODEL.forward(x) ** 2)


# ===========================================================================
# Functions: math module functions on Python floats
# ===========================================================================

def math_functions(a):
    return (math.exp(-a * a) * math.sin(3.0 * a) + math.sqrt(1.0 + a * a)
            + math.log(2.0 + math.cos(a)) + math.tanh(a) * math.pi)


def math_scalar_loop(a, b):
    s = 0.0
    for k in range(1, 4):
        s += math.sin(k * a) * math.exp(-k * b) / k
    return s


def math_pow_hypot(a, b):
    return math.pow(a, 1.5) + math.hypot(a, b) * math.atan(b)


def math_shape_scale(q, k):
    """Attention-style scaling by sqrt of a shape value (not differentiated)."""
    d = q.shape[-1]
    scores = q @ k.T / math.sqrt(d)
    return np.sum(np.tanh(scores))


# ===========================================================================
# Analysis: integer, boolean, shape and index values (activity)
# ===========================================================================

def activity_int_counters(x):
    n = x.shape[0]
    count = 0
    total = 0.0
    for i in range(n):
        if x[i] > 0.0:
            count += 1
        total = total + x[i] * (i + 1)
    return total / (count + 1)


def activity_flag(x):
    done = False
    h = x
    steps = 0
    while not done:
        h = np.sin(h) + 0.3
        steps += 1
        done = steps >= 4 or np.max(np.abs(h)) < 0.01
    return np.sum(h) * steps


def activity_int_index(x):
    idx = int(np.argmax(x))
    return x[idx] * np.sum(x ** 2)


def activity_shape_values(X):
    rows, cols = X.shape
    scale = 1.0 / (rows * cols)
    return scale * np.sum(X ** 2) + X[rows - 1, cols - 1]


GRID = np.linspace(0.0, 1.0, 6)


def interp_searchsorted(fp, t):
    """Piecewise-linear interpolation on GRID; the bin index is an integer."""
    total = 0.0
    for q in t:
        i = np.searchsorted(GRID, q)
        w = (q - GRID[i - 1]) / (GRID[i] - GRID[i - 1])
        total = total + (1.0 - w) * fp[i - 1] + w * fp[i]
    return total


# ===========================================================================
# Realistic programs
# ===========================================================================

def softmax(x):
    """Softmax with the max trick (no loop)."""
    z = x - np.max(x)
    e = np.exp(z)
    return e / np.sum(e)


def attention(q, k, v):
    d = q.shape[-1]
    scores = q @ k.T / math.sqrt(d)
    scores = scores - np.max(scores, axis=1, keepdims=True)
    w = np.exp(scores)
    w = w / np.sum(w, axis=1, keepdims=True)
    return np.sum((w @ v) ** 2)


def gru_like(h, Wz, Wh, xs):
    outputs = []
    for x_t in xs:
        z = 1.0 / (1.0 + np.exp(-(h @ Wz + x_t)))
        cand = np.tanh(h @ Wh + x_t)
        h = (1.0 - z) * h + z * cand
        outputs.append(h)
    return np.mean(np.stack(outputs) ** 2)


def euler_ode(y0, k):
    t = 0.0
    dt = 0.1
    y = y0
    while t < 1.0 - 1e-9:
        y = y + dt * (-k * y + np.sin(y))
        t += dt
    return np.sum(y ** 2)


def power_iteration(A):
    v = np.ones(A.shape[0])
    for i in range(20):
        w = A @ v
        v = w / np.sqrt(np.sum(w * w))
    return v @ A @ v


def running_mean_enumerate(x):
    mean = 0.0
    for i, v in enumerate(x):
        mean = mean + (v - mean) / (i + 1)
    return mean * np.sum(x ** 2)


def logsumexp_rows(X):
    out = []
    for row in X:
        m = np.max(row)
        out.append(m + np.log(np.sum(np.exp(row - m))))
    return np.sum(np.stack(out))


def lstm_dict_params(x_seq, Wf, Wc):
    params = {"f": Wf, "c": Wc}
    h = np.zeros(Wf.shape[1])
    c = np.zeros(Wf.shape[1])
    hs = []
    for x_t in x_seq:
        inp = x_t + h
        f = 1.0 / (1.0 + np.exp(-(inp @ params["f"])))
        c = f * c + (1.0 - f) * np.tanh(inp @ params["c"])
        h = np.tanh(c)
        hs.append(h)
    return np.sum(np.stack(hs)[-2:] ** 2)


# ===========================================================================
# What stays unsupported. Each appends to SIDE first, so a test can see
# whether the body ran; the reported line carries `# unsupported: <key>`.
# ===========================================================================

SIDE = []
_CALLS = 0


def uses_try(x):
    SIDE.append("try")
    try:  # unsupported: try
        y = np.log(x)
    except FloatingPointError:
        y = x
    return np.sum(y)


def uses_with(x):
    SIDE.append("with")
    with np.errstate(all="ignore"):
        return np.sum(np.log(x))  # unsupported: with


def uses_yield(x):
    SIDE.append("yield")
    for i in range(3):
        yield np.sum(x) * i  # unsupported: yield


async def uses_async(x):  # unsupported: async
    SIDE.append("async")
    return np.sum(x)


def uses_global_write(x):
    global _CALLS  # unsupported: global
    SIDE.append("global")
    _CALLS = _CALLS + 1  # unsupported: global
    return np.sum(x * x)


def make_nonlocal_counter():
    count = 0

    def uses_nonlocal_write(x):
        nonlocal count  # unsupported: nonlocal
        SIDE.append("nonlocal")
        count = count + 1  # unsupported: nonlocal
        return np.sum(x) * count
    return uses_nonlocal_write


uses_nonlocal_write = make_nonlocal_counter()


def uses_exec(x):
    SIDE.append("exec")
    exec("SIDE.append('exec ran')")  # unsupported: exec
    return np.sum(x)


def uses_eval(x):
    SIDE.append("eval")
    y = eval("x * 2.0")  # unsupported: eval
    return np.sum(y)


def uses_match(x, mode):
    SIDE.append("match")
    match mode:  # unsupported: match
        case "sin":
            y = np.sin(x)
        case _:
            y = x
    return np.sum(y)


def calls_helper_with_try(x):
    SIDE.append("calls-helper")
    return np.sum(corpus_other.bad_helper_with_try(x) * x)


# ===========================================================================
# Issue 11's Python patterns (the front end): lambdas, with blocks, starred
# arguments, function values, objects built inside, np.r_ / np.c_
# ===========================================================================

_square = lambda a: a * a  # noqa: E731
_sq_pair, _sin_pair = lambda a: a * a * 0.5, lambda a: np.sin(a) * a  # noqa: E731  (two on one line)
_ACTIVATIONS = {
    "soft": lambda u: np.log(1.0 + np.exp(u)),
    "tanh": lambda u: np.tanh(u) * 2.0, "cube": lambda u: u ** 3 * 0.1,
}


def _make_scaled(c):
    return lambda u: c * np.sin(u)


_scaled = _make_scaled(1.7)
lambda_as_function = lambda x, y: np.sum(np.tanh(x) * y + x * x)  # noqa: E731


class _HoldsLambda:
    def __init__(self):
        self.fn = lambda u: np.cos(u) * u


_HOLDER = _HoldsLambda()


def lambda_global_call(x):
    return np.sum(_square(x) + _sq_pair(x) - _sin_pair(x))


def lambda_in_dict(x):
    return np.sum(_ACTIVATIONS["soft"](x) * _ACTIVATIONS["cube"](x) + _ACTIVATIONS["tanh"](x))


def lambda_default_argument(x, act=lambda u: np.sin(u) * u):
    return np.sum(act(x))


def lambda_from_factory(x):
    return np.sum(_scaled(x) * x)


def lambda_on_object(x):
    return np.sum(_HOLDER.fn(x))


def _apply_fn(fn, x):
    return fn(x) * x


def lambda_passed_as_argument(x):
    return np.sum(_apply_fn(_square, x) + _apply_fn(_ACTIVATIONS["soft"], x))


def with_errstate(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(x * x)
        z = np.where(np.isfinite(y), y, 0.0)
    return np.sum(z * x)


def with_in_loop_and_target(x):
    total = 0.0
    for i in range(3):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            total = total + np.sum(np.sin(x * (i + 1)))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        total = total * np.sum(x)
    return total


def starred_random_shape(x):
    rs = np.random.RandomState(3)
    noise = rs.randn(*x.shape)
    return np.sum(np.tanh(x + 0.1 * noise) * noise)


def starred_shape_display(x):
    z = np.ones((*x.shape, 2))
    return np.sum(z * x[..., None] ** 2)


def _split_pairs(pairs):
    return [a for a, b in pairs], [b for a, b in pairs]


def zip_of_starred_call(x):
    pairs = [(x, 2.0 * x), (x * x, np.sin(x))]
    total = 0.0
    for a, b in zip(*_split_pairs(pairs)):
        total = total + np.sum(a * b)
    return total


def comprehension_of_local_def(x):
    def term(k):
        return x[k] * (k + 1.0)
    return np.sum(np.stack([term(k) for k in range(3)]) ** 2)


def _apply_nonlinearity(x, nonlinearity=np.tanh):
    return nonlinearity(x)


def ufunc_default_and_argument(x):
    return np.sum(_apply_nonlinearity(x) * _apply_nonlinearity(x, np.sin))


class _Gain:
    def __init__(self, g, offset=0.0):
        self.g = g
        self.offset = offset

    def __call__(self, x):
        return self.g * np.tanh(x) + self.offset

    def scaled(self, x):
        return self.g * x * x


_GAIN = _Gain(1.3)
_GAINS = [_Gain(2.0), _Gain(-0.5, 0.25)]


def bound_method_as_argument(x):
    return np.sum(_apply_fn(_GAIN.scaled, x))


def object_built_from_constants(x):
    gain = _Gain(0.7, offset=0.1)
    return np.sum(gain.scaled(x) + gain(x))


def objects_in_local_list_loop(x):
    layers = [_Gain(2.0), _Gain(-0.5, 0.25), corpus_other.Scaler(1.5)]
    for layer in layers:
        if isinstance(layer, _Gain):
            x = layer(x)
        else:
            x = layer.apply(x)
    return np.sum(x * x)


def objects_in_global_list_loop(x):
    for layer in _GAINS:
        x = layer(x) * x
    return np.sum(x)


def functions_in_local_list_loop(x):
    for f in [np.sin, _square, _ACTIVATIONS["soft"]]:
        x = f(x) + 0.5 * x
    return np.sum(x)


def r_and_c_index_tricks(x, y):
    a = np.r_[x, y, 1.0]
    b = np.c_[x, y]
    return np.sum(a * np.arange(7.0)) + np.sum(b * np.array([[1.0, -2.0]]))


# ===========================================================================
# The registry
# ===========================================================================

@dataclass(frozen=True)
class Entry:
    """One corpus function and how to check it.

    inputs(rng) returns the positional arguments (float64 arrays, Python
    floats, integer counts); wrt indexes the differentiated ones.
    tape_ok: the undecorated function runs op by op on sg.Tensors (not for
    element assignment into NumPy arrays, nor Python's math module).
    autograd_ok: autograd can run it with `np` rebound to autograd.numpy.
    second_order: checked by a Hessian-vector product through nested tapes
    with respect to argument `hvp_arg` (default: the first wrt argument;
    chosen where the function is nonlinear, the others held fixed).
    """
    name: str
    construct: str
    fn: Callable
    inputs: Callable
    wrt: tuple = (0,)
    tape_ok: bool = True
    autograd_ok: bool = True
    second_order: bool = False
    hvp_arg: int = None

    @property
    def hvp_index(self):
        return self.wrt[0] if self.hvp_arg is None else self.hvp_arg

    def make_args(self):
        rng = np.random.default_rng(zlib.crc32(self.name.encode()))
        return tuple(self.inputs(rng))

    def __repr__(self):
        return "Entry(%s)" % self.name


def _n(r, *shape, scale=1.0):
    return r.normal(0.0, scale, shape)


def _u(r, lo, hi, *shape):
    return r.uniform(lo, hi, shape)


def _a(*values):
    return np.array(values, dtype=np.float64)


def E(fn, construct, inputs, wrt=(0,), name=None, **flags):
    return Entry(name or fn.__name__, construct, fn, inputs, tuple(wrt), **flags)


# element assignment into NumPy arrays: neither TF-style op-by-op tapes nor autograd run it
_ASSIGN = dict(tape_ok=False, autograd_ok=False)
# Python's math module on floats: no Tensors, no autograd boxes
_MATH = dict(tape_ok=False, autograd_ok=False)

WHILE, FOR, BREAK, RETURN = "while", "for", "break/continue", "early return"
EXPR, STMT = "expressions", "statements"
CONTAINERS, INDEX, ASSIGN = "lists/tuples/dicts", "indexing reads", "element assignment"
CLOSURE, ARGS, RECUR, NESTED, OTHER, METHODS, MATH = (
    "closures/globals", "default/keyword/*args/**kwargs", "recursion", "nested def/lambda",
    "other modules", "methods/properties", "math module")
ACTIVITY, REAL = "activity", "realistic"

CORPUS = [
    # -- while loops
    E(newton_sqrt, WHILE, lambda r: (_n(r, 3),), second_order=True),
    E(newton_cube_root, WHILE, lambda r: (2.7,)),
    E(while_halving, WHILE, lambda r: (_a(1.3, -2.1, 0.7),), second_order=True),
    E(while_counter, WHILE, lambda r: (_n(r, 3), 4), second_order=True),
    E(while_counter, WHILE, lambda r: (_n(r, 3), 0), name="while_counter_zero_trips"),
    E(while_fixed_point, WHILE, lambda r: (_n(r, 3),)),
    E(while_and_condition, WHILE, lambda r: (_a(1.2, -0.9, 0.4),)),
    E(while_in_for, WHILE, lambda r: (_a(0.9, -0.6, 0.3),)),
    E(while_tuple_state, WHILE, lambda r: (_n(r, 3), 3), second_order=True),
    E(inner_minimize, WHILE, lambda r: (_n(r, 3),), second_order=True),
    E(while_other_module, WHILE, lambda r: (_u(r, 0.5, 1.5, 3),)),
    # -- for loops
    E(rnn_for_range, FOR, lambda r: (_n(r, 3), _n(r, 3, 3, scale=0.6), _n(r, 4, 3)), wrt=(0, 1, 2),
      second_order=True),
    E(for_range_negative_step, FOR, lambda r: (_n(r, 6),)),
    E(for_range_len, FOR, lambda r: (_n(r, 5),)),
    E(for_zero_trips, FOR, lambda r: (_n(r, 3), 0)),
    E(for_rows, FOR, lambda r: (_n(r, 4, 3), _n(r, 3)), wrt=(0, 1)),
    E(loop_variable_after_loop, FOR, lambda r: (_n(r, 3, 2),)),
    E(for_list_literal, FOR, lambda r: (_n(r, 3),)),
    E(for_tuple_of_arrays, FOR, lambda r: (_n(r, 3), _n(r, 3)), wrt=(0, 1)),
    E(for_zip, FOR, lambda r: (_n(r, 4), _n(r, 4)), wrt=(0, 1), second_order=True),
    E(for_enumerate, FOR, lambda r: (_n(r, 4),)),
    E(for_enumerate_zip, FOR, lambda r: (_n(r, 4), _n(r, 4)), wrt=(0, 1)),
    E(for_reversed_range, FOR, lambda r: (_n(r, 4),)),
    E(horner, FOR, lambda r: (_n(r, 4), _n(r, 3)), wrt=(0, 1), second_order=True, hvp_arg=1),
    E(nested_loops, FOR, lambda r: (_n(r, 3, 3), _n(r, 3)), wrt=(0, 1), second_order=True, hvp_arg=1),
    E(triangular_loops, FOR, lambda r: (_n(r, 4),)),
    E(nested_loop_carried, FOR, lambda r: (_n(r, 3),)),
    # -- break / continue
    E(break_on_threshold, BREAK, lambda r: (_a(0.3, 0.2, 0.25),), second_order=True),
    E(continue_skip, BREAK, lambda r: (_a(0.8, -0.5, 1.1, -0.2, 0.4),)),
    E(newton_while_true, BREAK, lambda r: (_u(r, 0.5, 3.0, 3),)),
    E(break_inner_loop, BREAK, lambda r: (_a(0.2, 1.4, 0.3, -0.5, 0.6, 0.1, 0.9, -1.2, 1.7).reshape(3, 3),)),
    E(continue_in_while, BREAK, lambda r: (_a(0.7, -0.4, 1.3, -1.1, 0.2),)),
    E(break_and_continue, BREAK, lambda r: (_a(0.4, -1.0, 0.3, 2.0, 0.5, 0.1),)),
    E(loop_index_after_break, BREAK, lambda r: (_a(0.5, 0.9, 0.7),)),
    # -- early return
    E(return_in_branch, RETURN, lambda r: (_a(0.5, -0.2, 0.9),), name="return_in_branch_taken",
      second_order=True),
    E(return_in_branch, RETURN, lambda r: (_a(-0.5, 0.2, -0.9),), name="return_in_branch_fallthrough"),
    E(return_in_both_branches, RETURN, lambda r: (_a(-0.3, -0.8, 0.4),)),
    E(return_in_loop, RETURN, lambda r: (_a(0.1, -0.2, 0.05),), second_order=True),
    E(return_in_while, RETURN, lambda r: (_a(1.0, 0.3, -0.4),)),
    E(return_in_nested_loops, RETURN, lambda r: (_a(0.5, -0.8, 1.1, 0.9, -1.0, 0.3).reshape(2, 3),)),
    E(guard_clauses, RETURN, lambda r: (_n(r, 3), 3)),
    E(guard_clauses, RETURN, lambda r: (_n(r, 3), -1), name="guard_clauses_negative"),
    E(huber_loss, RETURN, lambda r: (_a(0.3, 2.0, -1.7, 0.1), _a(0.0, 0.5, 0.2, -0.4)), wrt=(0, 1)),
    # -- expressions
    E(conditional_expression, EXPR, lambda r: (_a(0.5, -0.2, 0.4),), second_order=True),
    E(conditional_expression_in_loop, EXPR, lambda r: (_a(0.5, -0.7, 1.2, -0.1),)),
    E(and_condition, EXPR, lambda r: (_a(0.5, 1.0, -0.3),), second_order=True),
    E(or_condition, EXPR, lambda r: (_a(-0.5, -1.0, 0.3),)),
    E(or_default_value, EXPR, lambda r: (_n(r, 3),)),
    E(not_condition, EXPR, lambda r: (_n(r, 3),)),
    E(chained_comparison, EXPR, lambda r: (_a(0.4, -0.1, 0.2),)),
    E(chained_comparison_elementwise, EXPR, lambda r: (_a(0.3, -0.9, 0.1, 1.4),)),
    E(boolean_mask_arithmetic, EXPR, lambda r: (_a(0.3, -0.9, 0.1, 1.4),)),
    # -- statements
    E(augmented_assignment, STMT, lambda r: (_n(r, 4),)),
    E(augmented_assignment_arrays, STMT, lambda r: (_n(r, 4), _n(r, 4)), wrt=(0, 1), second_order=True),
    E(tuple_unpacking_swap, STMT, lambda r: (_n(r, 3),)),
    E(list_unpacking, STMT, lambda r: (_n(r, 3),)),
    E(unpack_array_rows, STMT, lambda r: (_n(r, 3, 2),)),
    E(starred_unpacking, STMT, lambda r: (_n(r, 5),)),
    E(starred_head_rest, STMT, lambda r: (_n(r, 3),)),
    E(nested_unpacking, STMT, lambda r: (_n(r, 3), _n(r, 3)), wrt=(0, 1)),
    E(with_assert, STMT, lambda r: (_n(r, 4),)),
    E(with_pass, STMT, lambda r: (_n(r, 3),)),
    E(with_docstring, STMT, lambda r: (_n(r, 3),)),
    E(with_print, STMT, lambda r: (_n(r, 3),)),
    E(print_in_loop, STMT, lambda r: (_n(r, 3),)),
    E(is_none_default, STMT, lambda r: (_n(r, 3),)),
    E(count_as_divisor, STMT, lambda r: (_a(0.5, -0.3, 1.2, 0.8),)),
    # -- lists, tuples, dicts
    E(rnn_states_stack, CONTAINERS,
      lambda r: (_n(r, 3), _n(r, 3, 3, scale=0.6), _n(r, 2, 3, scale=0.6), _n(r, 4, 2)), wrt=(0, 1, 2, 3),
      second_order=True),
    E(list_of_terms, CONTAINERS, lambda r: (_n(r, 3),)),
    E(list_indexing, CONTAINERS, lambda r: (_n(r, 3),)),
    E(list_append_negative_index, CONTAINERS, lambda r: (_n(r, 3),), second_order=True),
    E(list_concatenation, CONTAINERS, lambda r: (_n(r, 3),)),
    E(list_element_assignment, CONTAINERS, lambda r: (_n(r, 3),)),
    E(list_len_stack_scalars, CONTAINERS, lambda r: (_n(r, 3, 4),)),
    E(nested_lists, CONTAINERS, lambda r: (_n(r, 3),)),
    E(tuple_built_and_indexed, CONTAINERS, lambda r: (_n(r, 3),)),
    E(tuple_from_helper_indexed, CONTAINERS, lambda r: (_n(r, 3),)),
    E(dict_of_parameters, CONTAINERS, lambda r: (_n(r, 2, 3), _n(r, 3, 2), _n(r, 2)), wrt=(0, 1, 2)),
    E(dict_cache, CONTAINERS, lambda r: (_n(r, 3),)),
    E(dict_loop_update, CONTAINERS, lambda r: (_n(r, 3),), second_order=True),
    E(dict_items_loop, CONTAINERS, lambda r: (_n(r, 2, 3), _n(r, 3, 3)), wrt=(0, 1)),
    E(list_of_weights, CONTAINERS, lambda r: (_n(r, 2, 3), _n(r, 3, 4), _n(r, 4, 2)), wrt=(0, 1, 2)),
    E(mlp_dict_of_layer_tuples, CONTAINERS, lambda r: (_n(r, 2, 3), _n(r, 3, 4), _n(r, 4), _n(r, 4, 2)),
      wrt=(0, 1, 2, 3)),
    # -- indexing and slicing reads
    E(index_negative, INDEX, lambda r: (_n(r, 5),)),
    E(index_stepped, INDEX, lambda r: (_n(r, 6),)),
    E(index_none, INDEX, lambda r: (_n(r, 3),)),
    E(index_ellipsis, INDEX, lambda r: (_n(r, 3, 4),)),
    E(index_integer_array, INDEX, lambda r: (_n(r, 5),)),
    E(index_boolean_mask, INDEX, lambda r: (_a(0.5, -0.3, 1.2, -0.8, 0.1),)),
    E(index_2d_mixed, INDEX, lambda r: (_n(r, 3, 4),)),
    E(index_argmax, INDEX, lambda r: (_a(0.5, 1.3, -0.2, 0.9),)),
    E(index_2d_fancy, INDEX, lambda r: (_n(r, 3, 3),)),
    E(index_2d_in_loop, INDEX, lambda r: (_n(r, 3, 3),)),
    E(index_chained_slices, INDEX, lambda r: (_n(r, 6),)),
    # -- element and slice assignment
    E(cumulative_sum, ASSIGN, lambda r: (_n(r, 5),), **_ASSIGN),
    E(bubble_sort, ASSIGN, lambda r: (_a(0.3, -1.2, 2.1, 0.7, -0.4),), **_ASSIGN),
    E(bubble_sort_tuple_swap, ASSIGN, lambda r: (_a(0.3, -1.2, 2.1, 0.7, -0.4),), **_ASSIGN),
    E(rnn_fill_rows, ASSIGN, lambda r: (_n(r, 3), _n(r, 3, 3, scale=0.6), _n(r, 4, 3)), wrt=(0, 1, 2),
      second_order=True, **_ASSIGN),
    E(column_add, ASSIGN, lambda r: (_n(r, 3, 4), _n(r, 3)), wrt=(0, 1), second_order=True, **_ASSIGN),
    E(slice_assign, ASSIGN, lambda r: (_n(r, 4),), second_order=True, **_ASSIGN),
    E(overwrite_self_dependent, ASSIGN, lambda r: (_n(r, 3),), second_order=True, **_ASSIGN),
    E(relu_masked_assign, ASSIGN, lambda r: (_a(0.5, -0.3, 1.2, -0.8),), **_ASSIGN),
    E(masked_scale_assign, ASSIGN, lambda r: (_a(0.5, -0.3, 1.2, 0.1),), **_ASSIGN),
    E(index_array_assign, ASSIGN, lambda r: (_n(r, 3), _n(r, 3)), wrt=(0, 1), **_ASSIGN),
    E(dp_recurrence, ASSIGN, lambda r: (_n(r, 5),), second_order=True, **_ASSIGN),
    E(outer_product_loops, ASSIGN, lambda r: (_n(r, 3),), **_ASSIGN),
    E(accumulate_same_element, ASSIGN, lambda r: (_n(r, 4),), **_ASSIGN),
    E(inplace_slice_operators, ASSIGN, lambda r: (_n(r, 5),), second_order=True, **_ASSIGN),
    E(assign_whole_array, ASSIGN, lambda r: (_n(r, 3),), **_ASSIGN),
    E(assign_ellipsis_columns, ASSIGN, lambda r: (_n(r, 2, 3),), **_ASSIGN),
    E(conv1d_valid, ASSIGN, lambda r: (_n(r, 6), _n(r, 3)), wrt=(0, 1), **_ASSIGN),
    E(gauss_seidel, ASSIGN, lambda r: (4.0 * np.eye(3) + _n(r, 3, 3, scale=0.5), _n(r, 3)), wrt=(0, 1),
      **_ASSIGN),
    E(helper_assigns_into_local, ASSIGN, lambda r: (_n(r, 5),), **_ASSIGN),
    E(viterbi_scores, ASSIGN, lambda r: (_n(r, 4, 3), _n(r, 3, 3)), wrt=(0, 1), **_ASSIGN),
    # -- closures and module globals
    E(closure_floats, CLOSURE, lambda r: (_n(r, 3),), name="closure_floats", second_order=True),
    E(closure_array, CLOSURE, lambda r: (_n(r, 2, 3),), name="closure_array"),
    E(closure_functions, CLOSURE, lambda r: (_n(r, 3),), name="closure_functions"),
    E(closure_variable, CLOSURE, lambda r: (_n(r, 2, 3),), name="closure_variable", autograd_ok=False),
    E(closure_cell, CLOSURE, lambda r: (_n(r, 3),), name="closure_cell", autograd_ok=False),
    E(module_global_float, CLOSURE, lambda r: (_n(r, 3),)),
    E(module_global_helper, CLOSURE, lambda r: (_n(r, 3),)),
    # -- default and keyword arguments, *args / **kwargs
    E(default_and_keyword_args, ARGS, lambda r: (_n(r, 3),)),
    E(entry_defaults, ARGS, lambda r: (_n(r, 3),)),
    E(star_args, ARGS, lambda r: (_n(r, 3), _n(r, 3)), wrt=(0, 1)),
    E(args_kwargs_passed_on, ARGS, lambda r: (_n(r, 3), _n(r, 3)), wrt=(0, 1)),
    E(kwargs_passed_on, ARGS, lambda r: (_n(r, 3), _n(r, 3)), wrt=(0, 1)),
    E(star_call_list_dict, ARGS, lambda r: (_n(r, 3), _n(r, 3)), wrt=(0, 1)),
    # -- recursion
    E(recursion_power, RECUR, lambda r: (_n(r, 3),), second_order=True),
    E(recursion_rnn, RECUR, lambda r: (_n(r, 3), _n(r, 3, 3, scale=0.7)), wrt=(0, 1)),
    E(recursion_divide_and_conquer, RECUR, lambda r: (_n(r, 5),)),
    # -- nested def and lambda
    E(nested_def, NESTED, lambda r: (_n(r, 3),)),
    E(nested_def_closure, NESTED, lambda r: (_n(r, 3), _n(r, 3)), wrt=(0, 1)),
    E(nested_def_in_loop, NESTED, lambda r: (_n(r, 3),)),
    E(lambda_local, NESTED, lambda r: (_a(0.8, -0.6, 1.3, 0.2),)),
    # -- user functions from other modules
    E(other_module_attribute, OTHER, lambda r: (_n(r, 2, 3), _n(r, 3, 2), _n(r, 2)), wrt=(0, 1, 2)),
    E(other_module_imported_name, OTHER, lambda r: (_n(r, 3),)),
    E(other_module_keyword_branch, OTHER, lambda r: (_n(r, 2, 3), _n(r, 3, 2), _n(r, 2)), wrt=(0, 1, 2)),
    E(other_module_list_stack, OTHER, lambda r: (_n(r, 3),)),
    E(other_module_default_arg, OTHER, lambda r: (_n(r, 3),)),
    # -- methods, properties, staticmethod, classmethod
    E(method_call, METHODS, lambda r: (_n(r, 2, 3),)),
    E(dunder_call, METHODS, lambda r: (_n(r, 2, 3),)),
    E(staticmethod_on_class, METHODS, lambda r: (_n(r, 3),)),
    E(staticmethod_on_instance, METHODS, lambda r: (_n(r, 3),)),
    E(classmethod_class_attribute, METHODS, lambda r: (_n(r, 3),)),
    E(method_with_loop_over_attribute, METHODS, lambda r: (_n(r, 2, 3),)),
    # -- math module on Python floats
    E(math_functions, MATH, lambda r: (0.7,), **_MATH),
    E(math_scalar_loop, MATH, lambda r: (0.4, 0.3), wrt=(0, 1), **_MATH),
    E(math_pow_hypot, MATH, lambda r: (1.3, -0.6), wrt=(0, 1), **_MATH),
    E(math_shape_scale, MATH, lambda r: (_n(r, 2, 4), _n(r, 3, 4)), wrt=(0, 1)),
    # -- activity: integer, boolean, shape and index values
    E(activity_int_counters, ACTIVITY, lambda r: (_a(0.5, -0.3, 1.2, 0.8),)),
    E(activity_flag, ACTIVITY, lambda r: (_n(r, 3),)),
    E(activity_int_index, ACTIVITY, lambda r: (_a(0.5, 1.3, -0.2, 0.9),)),
    E(activity_shape_values, ACTIVITY, lambda r: (_n(r, 2, 3),)),
    E(interp_searchsorted, ACTIVITY, lambda r: (_n(r, 6), _a(0.13, 0.55, 0.91)), wrt=(0, 1)),
    # -- realistic programs
    E(softmax, REAL, lambda r: (_n(r, 4),)),
    E(attention, REAL, lambda r: (_n(r, 2, 4), _n(r, 3, 4), _n(r, 3, 2)), wrt=(0, 1, 2)),
    E(gru_like, REAL, lambda r: (_n(r, 3), _n(r, 3, 3, scale=0.6), _n(r, 3, 3, scale=0.6), _n(r, 4, 3)),
      wrt=(0, 1, 2, 3), second_order=True),
    E(euler_ode, REAL, lambda r: (_n(r, 3), 0.8), wrt=(0, 1)),
    E(power_iteration, REAL, lambda r: (np.diag([3.0, 1.0, 0.5]) + _n(r, 3, 3, scale=0.2),)),
    E(running_mean_enumerate, REAL, lambda r: (_n(r, 4),)),
    E(logsumexp_rows, REAL, lambda r: (_n(r, 3, 4),)),
    E(lstm_dict_params, REAL, lambda r: (_n(r, 4, 3), _n(r, 3, 3, scale=0.6), _n(r, 3, 3, scale=0.6)),
      wrt=(0, 1, 2)),
    # -- issue 11's Python patterns (the front end)
    E(other_module_class, OTHER, lambda r: (_n(r, 3),)),
    E(lambda_global_call, NESTED, lambda r: (_n(r, 3),), second_order=True),
    E(lambda_in_dict, NESTED, lambda r: (_n(r, 3),)),
    E(lambda_default_argument, NESTED, lambda r: (_n(r, 3),)),
    E(lambda_from_factory, NESTED, lambda r: (_n(r, 3),), second_order=True),
    E(lambda_on_object, NESTED, lambda r: (_n(r, 3),)),
    E(lambda_passed_as_argument, NESTED, lambda r: (_n(r, 3),)),
    E(lambda_as_function, NESTED, lambda r: (_n(r, 3), _n(r, 3)), wrt=(0, 1), name="lambda_as_function"),
    E(with_errstate, STMT, lambda r: (_a(0.5, -1.5, 2.0),), second_order=True),
    E(with_in_loop_and_target, STMT, lambda r: (_n(r, 3),)),
    E(starred_random_shape, ARGS, lambda r: (_n(r, 2, 3),)),
    E(starred_shape_display, ARGS, lambda r: (_n(r, 2, 3),)),
    E(zip_of_starred_call, FOR, lambda r: (_n(r, 3),)),
    E(comprehension_of_local_def, NESTED, lambda r: (_n(r, 3),)),
    E(ufunc_default_and_argument, ARGS, lambda r: (_n(r, 3),), second_order=True),
    E(bound_method_as_argument, METHODS, lambda r: (_n(r, 3),)),
    E(object_built_from_constants, METHODS, lambda r: (_n(r, 3),), second_order=True),
    E(objects_in_local_list_loop, METHODS, lambda r: (_n(r, 3),)),
    E(objects_in_global_list_loop, METHODS, lambda r: (_n(r, 3),), second_order=True),
    E(functions_in_local_list_loop, METHODS, lambda r: (_n(r, 3),)),
    E(r_and_c_index_tricks, INDEX, lambda r: (_n(r, 3), _n(r, 3)), wrt=(0, 1), tape_ok=False),
    E(method_object_built_inside, METHODS, lambda r: (_n(r, 2, 3), _n(r, 3, 4, scale=0.5), _n(r, 4)),
      wrt=(0, 1, 2), second_order=True, hvp_arg=1),
    E(property_read, METHODS, lambda r: (_n(r, 3, 2),)),
]

assert len({e.name for e in CORPUS}) == len(CORPUS), "entry names must be unique"

# (function, key of its `# unsupported: <key>` line(s), file, example arguments)
UNSUPPORTED = [
    (uses_try, "try", "corpus_funcs.py", lambda: (np.array([1.0, 2.0]),)),
    (uses_with, "with", "corpus_funcs.py", lambda: (np.array([1.0, 2.0]),)),
    (uses_yield, "yield", "corpus_funcs.py", lambda: (np.array([1.0, 2.0]),)),
    (uses_async, "async", "corpus_funcs.py", lambda: (np.array([1.0, 2.0]),)),
    (uses_global_write, "global", "corpus_funcs.py", lambda: (np.array([1.0, 2.0]),)),
    (uses_nonlocal_write, "nonlocal", "corpus_funcs.py", lambda: (np.array([1.0, 2.0]),)),
    (uses_exec, "exec", "corpus_funcs.py", lambda: (np.array([1.0, 2.0]),)),
    (uses_eval, "eval", "corpus_funcs.py", lambda: (np.array([1.0, 2.0]),)),
    (uses_match, "match", "corpus_funcs.py", lambda: (np.array([1.0, 2.0]), "sin")),
    (alias_sees_assignment, "alias", "corpus_funcs.py", lambda: (np.array([1.0, 2.0, 3.0]),)),
]

# Python srcgrad reads but cannot differentiate, found when the derivative is
# compiled (it depends on what the values are): objects built inside the
# differentiated code from differentiated values that are not plain data
# holders used by their fields and methods (a method returning a new object,
# a classmethod constructor), and a lambda defined inside and passed to
# another function. Each raises UnsupportedSyntaxError naming the line.
UNSUPPORTED_AT_COMPILE = [
    (lambda_passed_to_helper, "lambda", "corpus_funcs.py", lambda: (np.array([0.3, -0.2, 0.5]),)),
    (classmethod_constructor, "object", "corpus_funcs.py", lambda: (np.ones((2, 3)) * 0.5,)),
    (objects_as_loop_state, "object", "corpus_funcs.py", lambda: (np.ones(3) * 0.5, np.ones(3) * 0.2)),
]
