"""Element assignment runs the user's code exactly once, as the plain call
does, and differentiates what NumPy stores.

- `x[f()] += v`, `x[k():] *= c`, `d[key()] += v`, `a[i()][j()] = v`: the
  indices (and slice bounds) are evaluated once, the target's before the
  value of an augmented assignment and after the value of a plain one
  (srcgrad/transforms/lower/mutations.py). A random index draws once: the
  value is read from and written to the same position.
- a float stored into an integer or bool array is truncated by NumPy: no
  derivative passes through the store, in reverse mode, forward mode, the
  tape (op by op and @sg.function) and sg.jit (rules/python/containers.py).
  A complex value stored into a float array keeps its real part: the
  derivative is the real part's.

Each case checks values and gradients against central differences (with
the random draws seeded alike) or autograd, and counts the side effects.
"""
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad

W3 = np.array([1.0, 2.0, 3.0])
CALLS = []


def pick():
    """1 on the first call since CALLS was cleared, 0 on the second, ..."""
    CALLS.append(1)
    return len(CALLS) % 2


def seeded(f, seed=0):
    """f with NumPy's global generator seeded before each call."""
    def g(*args):
        np.random.seed(seed)
        return f(*args)
    return g


def counted(f):
    """(value, number of pick() calls) of f()."""
    CALLS.clear()
    value = f()
    return value, len(CALLS)


# ------------------------------------------------------ indices evaluated once

def random_aug(x):
    y = x * 1.0
    y[np.random.randint(3)] += 10.0 * x[0]
    return np.sum(y * W3)


def test_random_index_of_an_augmented_assignment_draws_once():
    x = np.array([1.0, 1.5, 0.5])
    np.random.seed(0)
    i = np.random.randint(3)
    after_plain = np.random.rand()
    expected = W3.copy()
    expected[0] += 10.0 * W3[i]
    np.random.seed(0)
    value, grad = sg.value_and_grad(random_aug)(x)
    after_grad = np.random.rand()
    assert after_grad == after_plain        # one draw, as the plain call
    check_close(value, seeded(random_aug)(x))
    check_close(grad, expected)
    check_close(grad, numerical_grad(seeded(random_aug), x))
    for seed in range(6):                   # every position the draw can take
        check_close(seeded(sg.grad(random_aug), seed)(x), numerical_grad(seeded(random_aug, seed), x))


def random_set(x):
    y = x * 1.0
    y[np.random.randint(3)] = np.random.normal() * x[0]    # the value draws first, then the index
    return np.sum(y * W3)


def test_plain_assignment_evaluates_the_value_before_the_index():
    x = np.array([1.0, 1.5, 0.5])
    for seed in range(4):
        np.random.seed(seed)
        scale = np.random.normal()
        i = np.random.randint(3)
        expected = W3.copy()
        expected[i] = 0.0
        expected[0] += scale * W3[i]
        value, grad = seeded(sg.value_and_grad(random_set), seed)(x)
        check_close(value, seeded(random_set, seed)(x))
        check_close(grad, expected)
        check_close(grad, numerical_grad(seeded(random_set, seed), x))


def list_aug(x):
    xs = [x * 1.0, x * 2.0]
    xs[pick()] += x ** 2        # Python: xs[1] = xs[1] + x**2
    return np.sum(xs[0] * 3.0 + xs[1])


def list_aug_autograd(x):
    xs = [x * 1.0, x * 2.0]
    xs[pick()] += x ** 2
    return anp.sum(xs[0] * 3.0 + xs[1])


def test_list_index_function_is_called_once():
    x = np.array([0.5, -1.0, 2.0])
    plain, n_plain = counted(lambda: list_aug(x))
    assert n_plain == 1
    (value, grad), n = counted(lambda: sg.value_and_grad(list_aug)(x))
    assert n == 1
    check_close(value, plain)
    check_close(value, 3 * np.sum(x) + np.sum(2 * x + x ** 2))
    expected, _ = counted(lambda: autograd.grad(list_aug_autograd)(x))
    check_close(grad, expected)
    check_close(grad, 3.0 + 2.0 + 2.0 * x)
    (_, tangent), n = counted(lambda: sg.jvp(list_aug, (x,), (np.ones(3),)))
    assert n == 1
    check_close(tangent, np.sum(3.0 + 2.0 + 2.0 * x))


def key():
    CALLS.append(1)
    return "a" if len(CALLS) % 2 else "b"


def dict_aug(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    d[key()] *= x
    return np.sum(d["a"] + 3.0 * d["b"])


def dict_aug_autograd(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    d[key()] *= x
    return anp.sum(d["a"] + 3.0 * d["b"])


def test_dict_key_function_is_called_once():
    x = np.array([0.5, -1.0, 2.0])
    (value, grad), n = counted(lambda: sg.value_and_grad(dict_aug)(x))
    assert n == 1
    plain, _ = counted(lambda: dict_aug(x))
    check_close(value, plain)
    check_close(value, np.sum(x * x + 6.0 * x))
    expected, _ = counted(lambda: autograd.grad(dict_aug_autograd)(x))
    check_close(grad, expected)
    check_close(grad, 2.0 * x + 6.0)


def start():
    CALLS.append(1)
    return len(CALLS)           # 1 on the first call, 2 on the second


def slice_aug(x):
    y = x * 1.0
    y[start():] *= 2.0
    return np.sum(y * W3)


def test_slice_bound_is_evaluated_once():
    x = np.array([1.0, 1.5, 0.5])
    (value, grad), n = counted(lambda: sg.value_and_grad(slice_aug)(x))
    assert n == 1
    plain, _ = counted(lambda: slice_aug(x))
    check_close(value, plain)
    check_close(grad, [1.0, 4.0, 6.0])
    CALLS.clear()
    check_close(grad, numerical_grad(lambda z: (CALLS.clear(), slice_aug(z))[1], x))


def nested_aug(x):
    a = np.stack([x * 1.0, x * 2.0])
    a[pick()][pick() + 1] += x[2] ** 2     # a[1][1] (pick: 1, then 0)
    return np.sum(a * np.arange(6.0).reshape(2, 3))


def nested_set(x):
    a = np.stack([x * 1.0, x * 2.0])
    a[pick()][pick() + 1] = np.sin(x[0])
    return np.sum(a * np.arange(6.0).reshape(2, 3))


@pytest.mark.parametrize("f", [nested_aug, nested_set], ids=["augmented", "plain"])
def test_nested_target_indices_are_evaluated_once(f):
    x = np.array([0.3, 0.5, 0.7])
    plain, n_plain = counted(lambda: f(x))
    (value, grad), n = counted(lambda: sg.value_and_grad(f)(x))
    assert n == n_plain == 2
    check_close(value, plain)
    check_close(grad, numerical_grad(lambda z: (CALLS.clear(), f(z))[1], x))


def test_op_by_op_tape_calls_the_index_function_once():
    x = sg.Variable(np.array([0.5, -1.0, 2.0]))
    CALLS.clear()
    with sg.GradientTape() as tape:
        xs = [x * 1.0, x * 2.0]
        xs[pick()] += x ** 2
        y = np.sum(xs[0] * 3.0 + xs[1])
    assert len(CALLS) == 1
    check_close(tape.gradient(y, x), 3.0 + 2.0 + 2.0 * x.numpy())


def add_at(x, i):
    y = x * 1.0
    y[i] += x[0]
    return np.sum(y)


def test_a_name_index_is_not_rebound():
    code = sg.source(add_at, wrt=0)
    assert "_index" not in code and "_value" not in code, code
    assert "y_i = y[i]" in code, code
    check_close(sg.grad(add_at)(np.array([1.0, 2.0]), 1), [2.0, 1.0])


# -------------------------------------------- stores into integer and bool arrays

def int_zeros(x):
    out = np.zeros(2, dtype=int)
    out[0] = 10.0 * x[0]        # NumPy stores int(5.5) = 5
    return np.sum(out * x)


def int_zeros_like(x):
    labels = np.array([3, 1])
    out = np.zeros_like(labels)
    out[0] = 10.0 * x[0]
    out[1] += 4.0 * x[1]        # int(0 + 5.32) = 5
    return np.sum(out * x)


def int_eye(x):
    m = np.eye(3, dtype=int)
    m[1, :] = 7.0 * x           # truncated row
    m[2, 2] *= x[2]             # int(1 * x2)
    return np.sum(m @ x + np.sin(x))


def bool_store(x):
    out = np.zeros(2, dtype=bool)
    out[0] = x[0]
    return np.sum(out * x)


def int_fill_loop(x):
    out = np.zeros(3, dtype=np.int64)
    for i in range(3):
        out[i] = 10.0 * x[i]
    return np.sum(out * x ** 2)


X_INT = np.array([0.55, 1.33, 0.27])     # (no product lands on an integer: truncation is flat there)


@pytest.mark.parametrize("f, x, expected", [
    (int_zeros, X_INT[:2], [5.0, 0.0]),
    (int_zeros_like, X_INT[:2], [5.0, 5.0]),
    (int_eye, X_INT, [4.0 + np.cos(0.55), 9.0 + np.cos(1.33), 1.0 + np.cos(0.27)]),
    (bool_store, X_INT[:2], [1.0, 0.0]),
    (int_fill_loop, X_INT, 2.0 * np.array([5.0, 13.0, 2.0]) * X_INT),
], ids=["zeros", "zeros_like", "eye", "bool", "fill_loop"])
def test_no_derivative_through_a_store_into_an_integer_array(f, x, expected):
    value, grad = sg.value_and_grad(f)(x)
    check_close(value, f(x))
    check_close(grad, expected)
    check_close(grad, numerical_grad(f, x))
    for k in range(x.size):                 # forward mode: the same derivative
        e = np.zeros_like(x)
        e[k] = 1.0
        _, tangent = sg.jvp(f, (x,), (e,))
        check_close(tangent, expected[k])


def test_integer_fill_loop_stays_in_place():
    code = sg.source(int_fill_loop)
    assert "setitem_in_place(out, i, mul)" in code, code


def test_tape_stores_into_an_integer_buffer():
    x = sg.Variable(np.array([0.55, 1.0]))
    with sg.GradientTape() as tape:         # op by op: a Buffer records the store
        out = np.zeros(2, dtype=int)
        out[0] = 10.0 * x[0]
        y = np.sum(out * x)
    check_close(y.numpy(), 2.75)
    check_close(tape.gradient(y, x), [5.0, 0.0])
    with sg.GradientTape() as tape:         # compiled: @sg.function's split sweeps
        y = sg.function(int_zeros)(x)
    check_close(tape.gradient(y, x), [5.0, 0.0])


def test_jit_store_into_an_integer_array():
    numba = pytest.importorskip("numba")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # (a PerformanceWarning when it runs in CPython)
        grad = sg.jit(sg.grad(int_fill_loop))(X_INT)
    check_close(grad, 2.0 * np.array([5.0, 13.0, 2.0]) * X_INT)
    # the Numba twin of value_cotangent, which compiled gradients call
    from srcgrad.jit import twins
    twins.install()
    value_cotangent = twins.value_cotangent
    twin = numba.njit(lambda g, i, v, x: value_cotangent(g, i, v, x))
    g = np.array([[1.0, 2.0], [3.0, 4.0]])
    check_close(twin(g, 1, np.ones(2), np.zeros((2, 2), dtype=np.int64)), [0.0, 0.0])
    check_close(twin(g, 1, np.ones(2), np.zeros((2, 2), dtype=bool)), [0.0, 0.0])
    check_close(twin(g, 1, np.ones(2), np.zeros((2, 2))), [3.0, 4.0])
    check_close(twin(g[0], 1, 0.5, np.zeros(2, dtype=np.int32)), 0.0)
    check_close(twin(g[0], 1, 0.5, np.zeros(2)), 2.0)


def complex_store(x):
    out = np.zeros(3)
    out[0:2] = (1.0 + 2.0j) * x[0:2]        # NumPy keeps the real part (ComplexWarning)
    out[2:] = 1.0j * x[2:]                  # real part 0
    return np.sum(out * x)


def test_complex_store_into_a_float_array_differentiates_the_real_part():
    x = np.array([0.5, -1.5, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        value, grad = sg.value_and_grad(complex_store)(x)
        check_close(value, complex_store(x))
        check_close(grad, [1.0, -3.0, 0.0])
        check_close(grad, numerical_grad(complex_store, x))
        _, tangent = sg.jvp(complex_store, (x,), (np.ones(3),))
    check_close(tangent, -2.0)
