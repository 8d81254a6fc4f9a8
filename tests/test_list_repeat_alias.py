"""List and tuple repetition (`[x] * n`, `n * (a, b)`) and concatenation of
named lists in compiled code: container operations whose elements'
cotangents are the sums of their copies', checked against central
differences and autograd on sg.grad, @sg.function on a tape, op by op on a
tape and sg.jit(sg.grad); and `xs[i] += v` on a list whose slots share one
array (refused clearly, not differentiated wrongly)."""
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad, numpy_swapped

X = np.array([0.5, 1.5, -2.0])


def stack_repeat(x):
    """np.stack of [x] * 3, weighted 0, 1, 2."""
    return np.sum(np.stack([x] * 3) * np.arange(3)[:, None])


def elements_repeat(x):
    """x0 twice and x1: a display of scalars repeated then extended."""
    return np.sum(np.array([x[0]] * 2 + [x[1]]) ** 2)


def float_buffer(x):
    """The common `s = [0.0] * n` buffer, filled by element."""
    n = len(x)
    s = [0.0] * n
    for i in range(n):
        s[i] = x[i] ** 2
    return sum(s)


def none_buffer(x):
    """`hs = [None] * n`, filled with arrays."""
    hs = [None] * 3
    for i in range(3):
        hs[i] = x * i
    return np.sum(np.stack(hs) ** 2)


def int_first(x):
    """`3 * [x]`: the count first."""
    xs = 3 * [x]
    return np.sum(np.stack(xs)[1] * xs[2])


def named_repeat(x):
    """A named list repeated: `[x, x**2] * 2`."""
    ys = [x, x ** 2] * 2
    return np.sum(ys[3] * ys[0] + ys[1])


def tuple_repeat(x):
    """A tuple of scalars repeated."""
    t = (x[0], x[1])
    t2 = t * 2
    return t2[2] * t2[1] + t2[0]


def named_concat(x):
    """Two named lists concatenated with `+`."""
    a = [x]
    b = [x ** 2, np.sin(x)]
    c = a + b
    return np.sum(np.stack(c) * np.arange(3)[:, None])


def array_times_list(x):
    """An array times a list literal stays NumPy's product."""
    return np.sum(x * [1.0, 2.0, 3.0] * 3)


CASES = [stack_repeat, elements_repeat, float_buffer, none_buffer, int_first, named_repeat, tuple_repeat,
         named_concat, array_times_list]


def _paths(f):
    def tape(g):
        v = sg.Variable(X.copy())
        with sg.GradientTape() as t:
            y = g(v)
        return y.numpy(), t.gradient(y, v).numpy()
    return {
        "grad": lambda: sg.value_and_grad(f)(X.copy()),
        "function": lambda: tape(sg.function(f)),
        "op_by_op": lambda: tape(f),
        "jit": lambda: (f(X.copy()), sg.jit(sg.grad(f))(X.copy())),
    }


@pytest.mark.parametrize("path", ["grad", "function", "op_by_op", "jit"])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_sequence_repetition_and_concatenation(f, path):
    want = numerical_grad(f, X)
    with numpy_swapped(__name__, anp):
        check_close(autograd.grad(f)(X.copy()), want)
    with warnings.catch_warnings():
        if path in ("op_by_op", "jit"):     # (sg.jit may run a list program in CPython)
            warnings.simplefilter("ignore", sg.PerformanceWarning)
        else:       # (compiled, not differentiated op by op)
            warnings.simplefilter("error", sg.PerformanceWarning)
        value, grad = _paths(f)[path]()
    check_close(value, f(X.copy()))
    check_close(grad, want)


def test_repetition_compiles_to_a_container_rule():
    src = sg.source(sg.grad(stack_repeat))
    assert "seq_repeat" in src and "repeat_cotangent" in src


def element_times_count(x, n):
    """An element of a list (a list itself) times an int: Python repeats it,
    which the compiler cannot tell from an array's product."""
    nested = [[x], [x ** 2]]
    ys = nested[0] * n
    return np.sum(np.stack(ys))


def test_repetition_of_an_element_is_refused_at_its_line():
    with pytest.raises(sg.UnsupportedSyntaxError, match="repetition") as info:
        sg.grad(element_times_count)(X.copy(), 2)
    assert "test_list_repeat_alias.py" in str(info.value)


def test_second_order_through_repetition():
    def f(x):
        s = [x[0] ** 2] * 2
        return s[0] * s[1] * x[1]
    h = sg.grad(lambda x: sg.grad(f)(x)[0])(X.copy())
    check_close(h, numerical_grad(lambda x: sg.grad(f)(x)[0], X))


def shared_slots(x):
    """Two slots holding one array, written with +=: NumPy changes both."""
    z = np.zeros(3)
    acc = [z, z]
    acc[0] += x
    acc[1] += x ** 2
    return np.sum(acc[0] * acc[1])


def separate_slots(x):
    """Separate arrays in the slots: += is differentiated."""
    acc = [np.zeros(3) for _ in range(2)]
    acc[0] += x
    acc[1] += x ** 2
    return np.sum(acc[0] * acc[1])


@pytest.mark.parametrize("path", ["grad", "function", "jit"])
def test_augmented_write_into_a_shared_slot_is_refused(path):
    def run():
        if path == "grad":
            return sg.value_and_grad(shared_slots)(X.copy())
        if path == "jit":
            return sg.jit(sg.grad(shared_slots))(X.copy())
        v = sg.Variable(X.copy())
        with sg.GradientTape():
            return sg.function(shared_slots)(v)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        with pytest.raises(sg.UnsupportedSyntaxError, match="same array") as info:
            run()
    assert "test_list_repeat_alias.py" in str(info.value)


@pytest.mark.parametrize("path", ["grad", "function", "jit"])
def test_augmented_write_into_separate_slots(path):
    want = numerical_grad(separate_slots, X)       # (autograd refuses += on its arrays)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        value, grad = _paths(separate_slots)[path]()
    check_close(value, separate_slots(X.copy()))
    check_close(grad, want)
