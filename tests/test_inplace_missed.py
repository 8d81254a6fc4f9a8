"""In-place changes the compiler used to miss (a right value, a silently wrong
gradient): in-place methods on a receiver that is not a plain name
(`Y[0].sort()`, `y[1:3].fill(0)`, `d["a"].append(v)`), a Generator's shuffle
and out=, np.put_along_axis, and the standard library's list changers
(random.shuffle, heapq, bisect.insort). Each is refused naming the user's line;
where the tape is right (lists of Tensors) the refusal falls back to it and
the gradient matches central differences; where it is not, the tape raises
TypeError too."""
import heapq
import inspect
import random
import re
import warnings

import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad

W = np.arange(4.0)
X = np.array([0.5, 1.5, -2.0, 0.7])


def fill_slice(x):
    y = x * 1.0
    y[1:3].fill(0.0)
    return np.sum(y * W)


def sort_row(x):
    Y = np.outer(x, x)
    Y[0].sort()
    return np.sum(Y * np.arange(16.0).reshape(4, 4))


def sort_dict_item(x):
    d = {"a": x * 1.0}
    d["a"].sort()
    return np.sum(d["a"] * W)


def sort_reshaped(x):
    y = x * 1.0
    y.reshape(2, 2).sort(axis=0)
    return np.sum(y * W)


def rng_shuffle(x):
    y = x * 1.0
    np.random.default_rng(5).shuffle(y)
    return np.sum(y * W)


def rng_permuted_out(x):
    y = x * 1.0
    np.random.default_rng(0).permuted(y, out=y)
    return np.sum(y * W)


RNG = np.random.default_rng(7)


def known_rng_shuffle(x):
    y = x * 1.0
    RNG.shuffle(y)
    return np.sum(y * W)


def put_along_axis(x):
    y = x * 1.0
    np.put_along_axis(y, np.array([0, 2]), x[:2] ** 2, axis=0)
    return np.sum(y * W)


# the tape's Tensors have no in-place methods, and NumPy cannot write into them:
# refused in the compiler with no fallback, TypeError op by op
ARRAY_CASES = [
    (fill_slice, "y[1:3].fill(0.0)", "y[1:3].fill(...)"),
    (sort_row, "Y[0].sort()", "Y[0].sort(...)"),
    (sort_dict_item, 'd["a"].sort()', "d['a'].sort(...)"),
    (sort_reshaped, "y.reshape(2, 2).sort(axis=0)", "y.reshape(2, 2).sort(...)"),
    (rng_shuffle, "np.random.default_rng(5).shuffle(y)", "shuffle(...)"),
    (rng_permuted_out, "permuted(y, out=y)", "out=..."),
    (known_rng_shuffle, "RNG.shuffle(y)", "shuffle writing into x"),
    (put_along_axis, "np.put_along_axis(", "np.put_along_axis writing into arr"),
]


def _line_of(f, text):
    lines, start = inspect.getsourcelines(f)
    return start + next(k for k, line in enumerate(lines) if text in line)


def _where(f, text):
    return "%s:%d" % (__file__.rsplit("/", 1)[-1], _line_of(f, text))


@pytest.mark.parametrize("f,text,what", ARRAY_CASES, ids=[c[0].__name__ for c in ARRAY_CASES])
def test_array_case_refused_compiled(f, text, what):
    with pytest.raises(sg.UnsupportedSyntaxError) as info:
        sg.grad(f)(X.copy())
    message = str(info.value)
    assert what in message and _where(f, text) in message
    assert not info.value.op_by_op
    with pytest.raises(sg.UnsupportedSyntaxError):
        sg.value_and_grad(f)(X.copy())
    with pytest.raises(sg.UnsupportedSyntaxError):
        sg.jit(sg.grad(f))(X.copy())
    V = sg.Variable(X.copy())
    with pytest.raises(sg.UnsupportedSyntaxError) as info:
        with sg.GradientTape():
            sg.function(f)(V)
    assert _where(f, text) in str(info.value)


@pytest.mark.parametrize("f,text,what", ARRAY_CASES, ids=[c[0].__name__ for c in ARRAY_CASES])
def test_array_case_raises_op_by_op(f, text, what):
    V = sg.Variable(X.copy())
    with pytest.raises(TypeError):
        with sg.GradientTape():
            f(V)


@pytest.mark.parametrize("name", ["sort", "fill", "partition", "put", "itemset", "resize"])
def test_tensor_in_place_methods_raise(name):
    t = sg.constant(X)
    with pytest.raises(TypeError, match=r"immutable.*t\.%s\(\.\.\.\).*test_inplace_missed\.py" % name):
        getattr(t, name)(0)
    check_close(t.numpy(), X, rtol=0, atol=0)


def test_put_along_axis_into_tensor_leaves_it_unchanged():
    t = sg.constant(X)
    with pytest.raises(TypeError, match="np.put_along_axis at .*test_inplace_missed.py"):
        np.put_along_axis(t, np.array([0]), 9.0, axis=0)
    check_close(t.numpy(), X, rtol=0, atol=0)


# -- the functional spellings the hints give: right gradients
def fill_slice_functional(x):
    y = x * 1.0
    y[1:3] = np.full_like(y[1:3], 0.0)
    return np.sum(y * W)


def sort_row_functional(x):
    Y = np.outer(x, x)
    Y[0] = np.sort(Y[0])
    return np.sum(Y * np.arange(16.0).reshape(4, 4))


def sort_reshaped_functional(x):
    t = x.reshape(2, 2)
    t = np.sort(t, axis=0)
    return np.sum(t.ravel() * W)


def shuffle_functional(x):
    y = x * 1.0
    y = y[np.random.default_rng(5).permutation(len(y))]
    return np.sum(y * W)


def put_along_axis_functional(x):
    y = x * 1.0
    for i, v in zip([0, 2], x[:2] ** 2):
        y[i] = v
    return np.sum(y * W)


@pytest.mark.parametrize("f", [fill_slice_functional, sort_row_functional, sort_reshaped_functional,
                               shuffle_functional, put_along_axis_functional])
def test_functional_spelling(f):
    expected = numerical_grad(f, X.copy())
    check_close(sg.grad(f)(X.copy()), expected)
    check_close(sg.jit(sg.grad(f))(X.copy()), expected)
    V = sg.Variable(X.copy())
    with sg.GradientTape() as tape:
        y = sg.function(f)(V)
    check_close(tape.gradient(y, V).numpy(), expected)


# -- lists: the tape moves the Tensors right, so the refusal falls back to it
def random_shuffle_list(x):
    xs = [x[0], x[1], x[2], x[3]]
    random.seed(1)
    random.shuffle(xs)
    return sum(w * v for w, v in zip(W, xs))


def heap(x):
    h = []
    for v in x:
        heapq.heappush(h, v * 2)
    return heapq.heappop(h) * 3 + h[0]


def heapify_list(x):
    h = [x[0] * 1.0, x[1] * 2.0, x[2] * 1.0]
    heapq.heapify(h)
    return h[0] * 5.0


def append_to_dict_item(x):
    d = {"a": [x[0]]}
    d["a"].append(x[1])
    return d["a"][-1] * 3.0


LIST_CASES = [
    (random_shuffle_list, "random.shuffle(xs)", "random.shuffle changing its list argument"),
    (heap, "heapq.heappush(h, v * 2)", "heapq.heappush changing its list argument"),
    (heapify_list, "heapq.heapify(h)", "heapq.heapify changing its list argument"),
    (append_to_dict_item, 'd["a"].append(x[1])', "d['a'].append(...)"),
]


@pytest.mark.parametrize("f,text,what", LIST_CASES, ids=[c[0].__name__ for c in LIST_CASES])
def test_list_case_falls_back_right(f, text, what):
    expected = numerical_grad(f, X.copy())
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        with pytest.raises(sg.UnsupportedSyntaxError) as info:
            sg.grad(f)(X.copy())
    assert what in str(info.value) and _where(f, text) in str(info.value)
    assert info.value.op_by_op
    with pytest.warns(sg.PerformanceWarning, match=re.escape(what)):
        check_close(sg.grad(f)(X.copy()), expected)
    with pytest.warns(sg.PerformanceWarning):
        V = sg.Variable(X.copy())
        with sg.GradientTape() as tape:
            y = sg.function(f)(V)
        check_close(tape.gradient(y, V).numpy(), expected)
    V = sg.Variable(X.copy())
    with sg.GradientTape() as tape:       # op by op
        y = f(V)
    check_close(tape.gradient(y, V).numpy(), expected)


def sorted_instead(x):
    xs = sorted([x[0] * 2, x[1] * 2, x[2] * 2, x[3] * 2])
    return xs[0] * 3 + xs[1]


def test_sorted_instead_of_heapq_compiles():
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        check_close(sg.grad(sorted_instead)(X.copy()), numerical_grad(sorted_instead, X.copy()))


# -- still handled as before
def plain_sort(x):
    y = x * 1.0
    y.sort()
    return np.sum(y * W)


def np_random_shuffle(x):
    y = x * 1.0
    np.random.shuffle(y)
    return np.sum(y * W)


@pytest.mark.parametrize("f,text", [(plain_sort, "y.sort()"), (np_random_shuffle, "np.random.shuffle(y)")])
def test_name_cases_still_refused(f, text):
    with pytest.raises(sg.UnsupportedSyntaxError) as info:
        sg.grad(f)(X.copy())
    assert _where(f, text) in str(info.value) and not info.value.op_by_op


def heap_of_constants(x):
    h = []
    for k in (3, 1, 2):
        heapq.heappush(h, k)
    return x[heapq.heappop(h)] * 2.0


def test_heap_of_plain_numbers_still_right():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        check_close(sg.grad(heap_of_constants)(X.copy()), numerical_grad(heap_of_constants, X.copy()))


def _set_shape(x, y):
    z = x * 1.0
    z.shape = (1, -1)       # NumPy reshapes z in place
    return np.sum((z * y) ** 2)


def _set_shape_functionally(x, y):
    z = (x * 1.0).reshape((1, -1))
    return np.sum((z * y) ** 2)


def test_setting_shape_is_refused_with_the_functional_spelling():
    """`z.shape = s` (probe 4): refused with a TypeError naming the line and
    `x = x.reshape(s)` on sg.grad and a tape (it raised AttributeError from
    the Tensor's read-only property); the functional spelling is right."""
    x, y = np.array([1.0, 2.0, 3.0]), np.array([[1.0], [2.0], [3.0]])
    for run in (lambda: sg.grad(_set_shape)(x, y), lambda: _on_tape(_set_shape, x, y)):
        with pytest.raises(TypeError, match=r"t\.shape = \(1, -1\).*test_inplace_missed\.py.*x\.reshape"):
            run()
    check_close(sg.grad(_set_shape_functionally)(x, y),
                numerical_grad(lambda v: _set_shape_functionally(v, y), x), rtol=1e-6, atol=1e-8)


def _on_tape(f, x, y):
    v = sg.Variable(x)
    with sg.GradientTape() as tape:
        out = sg.function(f)(v, y)
    return tape.gradient(out, v)
