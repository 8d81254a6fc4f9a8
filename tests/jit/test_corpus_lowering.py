"""sg.jit compiles more of the corpus (tests/corpus_funcs.py): the idioms
below fell back to CPython before, with a PerformanceWarning. Each entry's
jitted gradient is compiled (no fallback), equals sg.grad's CPython code
and central differences. What made them compile: reversed ranges with a
step and `r[::-1]` of a range (lower.py); twins of check_not_shared
(memory bounds; an overlap runs CPython's exact test), of value_cotangent
for slices, an Ellipsis, masks and integer arrays, of unindex for a mask or
an integer array, and of zero_at for indices read from names that start at
None, np.stack of a list built in a loop (twins.stack_list), and zeros
like an array or a tuple of arrays (twins.zeros_like_value, whose array
implementation Numba had refused: its parameter was not named as the
stub's), the derivative of |x| (twins.complex_sign) and real_part, and a
number's zeros_like as a number (not a 0-d array Numba would not unify
with the number another branch assigns), one entry of a vector written
in place (twins.setitem_in_place), a slot of a container written in place
(twins.check_slot_not_shared), np.maximum's derivative
(twins.balanced_eq), the zeros of a loop variable's value before the
loop, None (twins.zeros_like: an empty stand-in nothing reads), and the
cotangents of an entry of a tuple of arrays (twins.unindex, add_cotangents:
a tuple of zeros with the entry's), and a list of integers indexing a
matrix beside a slice (lowered as an array; twins.unindex adds at repeated
positions), and a slice of a list of arrays (`head, *rest = parts`)."""
import warnings

import numpy as np
import pytest

import corpus_funcs as cf
import srcgrad as sg
from srcgrad.errors import PerformanceWarning
from gradcheck import check_close, numerical_grad

pytest.importorskip("numba")

COMPILED = ["for_range_negative_step", "for_reversed_range", "augmented_assignment", "bubble_sort",
            "bubble_sort_tuple_swap", "relu_masked_assign", "masked_scale_assign", "dp_recurrence",
            "assign_whole_array", "assign_ellipsis_columns", "gauss_seidel", "helper_assigns_into_local",
            "index_integer_array", "index_boolean_mask", "rnn_states_stack", "list_len_stack_scalars",
            "other_module_list_stack", "gru_like", "logsumexp_rows", "comprehension_of_local_def",
            "huber_loss", "chained_comparison_elementwise", "return_in_nested_loops", "conv1d_valid",
            "cumulative_sum", "lambda_local", "loop_variable_after_loop", "newton_while_true",
            "for_tuple_of_arrays", "tuple_built_and_indexed", "tuple_from_helper_indexed", "nested_unpacking",
            "index_2d_mixed", "starred_head_rest"]
ENTRIES = {e.name: e for e in cf.CORPUS}


@pytest.mark.parametrize("name", COMPILED)
def test_corpus_entry_compiles_and_matches(name):
    entry = ENTRIES[name]
    args = entry.inputs(np.random.default_rng(0))
    jitted = sg.jit(sg.grad(entry.fn, wrt=entry.wrt))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        got = jitted(*args)
    assert not jitted.fallbacks, jitted.fallbacks
    want = sg.grad(entry.fn, wrt=entry.wrt)(*args)
    got, want = (got, want) if len(entry.wrt) > 1 else ((got,), (want,))
    for g, w, i in zip(got, want, entry.wrt):
        check_close(g, w, rtol=1e-10, atol=1e-12)

        def f(v, i=i):
            call = list(args)
            call[i] = v
            return np.sum(entry.fn(*call))      # (sg.grad of an array output: of its sum)
        check_close(g, numerical_grad(f, np.asarray(args[i], dtype=float)), rtol=1e-5, atol=1e-6)


def writes_into_x_or_a_copy(x, c):
    y = x if c > 0 else x * 1.0         # (shared or not: the compiler cannot tell, the run-time check can)
    y[0] = 2.0 * y[0]
    return np.sum(y * x)


def test_overlapping_memory_runs_cpythons_exact_check():
    x = np.array([0.5, -1.0, 2.0, 3.0])
    jitted = sg.jit(sg.grad(writes_into_x_or_a_copy))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        got = jitted(x, -1.0)                   # (apart: compiled, no fallback)
    assert not jitted.fallbacks
    check_close(got, numerical_grad(lambda v: writes_into_x_or_a_copy(v, -1.0), x), rtol=1e-6, atol=1e-8)
    with pytest.raises(sg.UnsupportedSyntaxError):
        sg.grad(writes_into_x_or_a_copy)(x, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PerformanceWarning)
        with pytest.raises(sg.UnsupportedSyntaxError):      # (the bounds overlap: CPython's check raises)
            jitted(x, 1.0)
    check_close(x, [0.5, -1.0, 2.0, 3.0])           # (nothing written)


def reversed_stepped(x, n):
    acc = 0.0
    for i in reversed(range(1, n, 3)):
        acc = acc * 0.5 + x[i] * x[i]
    for i in reversed(range(n - 1, -1, -2)):
        acc = acc * np.cos(x[i])
    return acc


@pytest.mark.parametrize("n", [0, 1, 2, 5, 7, 8])
def test_reversed_ranges_with_a_step(n):
    x = np.linspace(0.1, 0.9, 9)
    jitted = sg.jit(sg.grad(reversed_stepped))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        got = jitted(x, n)
    check_close(got, numerical_grad(lambda v: reversed_stepped(v, n), x), rtol=1e-6, atol=1e-8)
    check_close(got, sg.grad(reversed_stepped)(x, n), rtol=1e-12, atol=1e-14)


def test_stack_list_and_zeros_like_value_twins():
    import numba
    from srcgrad.jit import twins
    twins.install()
    stack = numba.njit(lambda xs: twins.stack_list(xs))
    typed = numba.typed.List      # (a Python list argument is a reflected list: deprecated as an argument)
    rows = [np.arange(3.0), np.arange(3.0) + 1.0]
    check_close(stack(typed(rows)), np.stack(rows), rtol=0, atol=0)
    check_close(stack(typed([0.5, 1.5, -2.0])), np.array([0.5, 1.5, -2.0]), rtol=0, atol=0)
    with pytest.raises(ValueError):
        stack(typed([np.arange(3.0), np.arange(2.0)]))
    zeros = numba.njit(lambda x: twins.zeros_like_value(x))
    check_close(zeros(np.ones((2, 3))), np.zeros((2, 3)), rtol=0, atol=0)
    assert zeros(np.ones(3, dtype=np.int64)).dtype == np.float64       # (an integer array's cotangent)
    a, b = zeros((np.ones(2), np.ones((2, 2))))
    check_close(a, np.zeros(2), rtol=0, atol=0)
    check_close(b, np.zeros((2, 2)), rtol=0, atol=0)


def test_a_callees_scatter_accumulation_adds_in_place():
    # GradBench's ode: its right-hand side reads x[:1] and x[1:], whose cotangents the reverse sweep adds
    # (`bx = bx + unindex(bx_i, x, slice(None, 1))`): called 40 times per gradient, each a new array of
    # x's size in CPython's code; sg.jit's linker writes the sum in place when nothing reads the old bx
    import os
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if root not in sys.path:
        sys.path.insert(0, root)
    from benchmarks.workloads._gradbench_objectives import ode_last
    x = np.random.default_rng(4).random(50)
    text = sg.source(ode_last, args=(x, 4), jit=True)
    assert "bx = unindex_add(bx, bx_i, x, slice(None, 1, None))" in text
    jitted = sg.jit(sg.grad(ode_last))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        got = jitted(x, 4)
    check_close(got, sg.grad(ode_last)(x, 4), rtol=1e-12, atol=1e-14)
    check_close(got, numerical_grad(lambda v: ode_last(v, 4), x), rtol=1e-6, atol=1e-8)


def test_overlapping_memory_on_a_tape_with_jit_runs_the_cpython_sweeps():
    x = np.array([0.5, -1.0, 2.0, 3.0])
    f = sg.function(writes_into_x_or_a_copy, jit=True)
    v = sg.Variable(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        with sg.GradientTape() as tape:
            y = f(v, -1.0)                  # (apart: the compiled sweeps)
        got = tape.gradient(y, v).numpy()
    check_close(got, numerical_grad(lambda u: writes_into_x_or_a_copy(u, -1.0), x), rtol=1e-6, atol=1e-8)
    assert not f.jit.fallbacks
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PerformanceWarning)
        with pytest.raises(sg.UnsupportedSyntaxError):     # (overlapping: CPython's sweep and its exact check)
            with sg.GradientTape():
                f(v, 1.0)
    assert f.jit.fallbacks
    check_close(x, [0.5, -1.0, 2.0, 3.0])


def slots_of_a_list(x, shared):
    a = np.zeros(3)
    xs = [a, np.ones(3)] if not shared else [a, a]
    xs[0] += x                          # (NumPy writes into the array slot 0 holds)
    return np.sum(xs[0] * xs[1]) + np.sum(x ** 2)


def test_a_list_slot_written_in_place_compiles_and_a_shared_one_raises_cpythons_error():
    x = np.array([0.5, -1.0, 2.0])
    jitted = sg.jit(sg.grad(slots_of_a_list))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        got = jitted(x, False)
    check_close(got, sg.grad(slots_of_a_list)(x, False), rtol=1e-14, atol=0)
    check_close(got, numerical_grad(lambda v: slots_of_a_list(v, False), x), rtol=1e-6, atol=1e-8)
    with pytest.raises(sg.UnsupportedSyntaxError, match="holds the same array"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PerformanceWarning)
            jitted(x, True)


def picked_columns_and_rows(X):
    return np.sum(X[:, [0, 0, 2]] ** 2 * X[:, [1, 3, 3]]) + np.sum(np.sin(X[[2, 2], :]) * X[[0, 1], :])


def test_lists_of_integers_indexing_a_matrix_beside_a_slice_repeated_positions_included():
    X = np.random.default_rng(5).normal(size=(3, 4))
    jitted = sg.jit(sg.grad(picked_columns_and_rows))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        got = jitted(X)
    assert "np.array([0, 0, 2])" in jitted.source
    check_close(got, sg.grad(picked_columns_and_rows)(X), rtol=1e-13, atol=1e-14)
    check_close(got, numerical_grad(picked_columns_and_rows, X), rtol=1e-6, atol=1e-8)
