"""sg.check: srcgrad's derivatives against finite differences and against
each other (issue 20, item 5).

It passes on a set of corpus functions (tests/corpus_funcs.py: loops,
branches, containers, closures, methods, recursion), at second order where
the corpus checks second order; it fails on a deliberately wrong
`@sg.custom_gradient`, with a table naming the checks that disagree.
"""
import numpy as np
import pytest

import corpus_funcs as cf
import srcgrad as sg

# a spread of constructs; second order where the corpus checks it
NAMES = ["newton_sqrt", "while_counter", "rnn_for_range", "for_zip", "horner", "break_on_threshold",
         "return_in_loop", "huber_loss", "augmented_assignment_arrays", "list_unpacking", "closure_array",
         "recursion_power", "method_call", "math_functions", "softmax", "attention", "gru_like",
         "logsumexp_rows", "lstm_dict_params", "activity_int_index"]
ENTRIES = {e.name: e for e in cf.CORPUS}


@pytest.mark.parametrize("name", NAMES)
def test_check_passes_on_corpus_functions(name):
    e = ENTRIES[name]
    assert sg.check(e.fn, *e.make_args(), wrt=e.wrt, order=2 if e.second_order else 1) is None


@sg.custom_gradient
def wrong_sin(x):
    """sin with a gradient twice too large."""
    def grad_fn(dy):
        return dy * 2.0 * np.cos(x)
    return np.sin(x), grad_fn


def uses_wrong_sin(x):
    return np.sum(wrong_sin(x) * x)


def test_check_fails_with_a_table_on_a_wrong_custom_gradient():
    with pytest.raises(AssertionError) as info:
        sg.check(uses_wrong_sin, np.array([0.3, -0.5, 1.1]))
    message = str(info.value)
    lines = message.splitlines()
    assert lines[0] == "sg.check: 4 of 5 checks of uses_wrong_sin disagree:"
    header = lines[1].split()
    assert header[:2] == ["check", "argument"] and "tolerance" in lines[1] and "result" in lines[1]
    assert "max abs err" in lines[1] and "max rel err" in lines[1]
    rows = {line.split("  ")[1].strip(): line for line in lines[3:]}
    assert rows["rev vs finite differences"].rstrip().endswith("FAIL")
    assert rows["fwd vs finite differences"].rstrip().endswith("FAIL")
    # forward and reverse modes agree with each other: the custom gradient is wrong, not srcgrad
    assert rows["rev/fwd dot product <u,Jv> = <J^T u,v>"].rstrip().endswith("ok")
    assert "0 (float64 3)" in rows["rev vs finite differences"]
    assert "rtol=1e-05 atol=1e-06" in rows["rev vs finite differences"]


def test_check_options():
    x = np.array([0.3, -0.5, 1.1])
    sg.check(uses_wrong_sin, x, order=1, modes=("fwd", "rev"), rtol=1.0, atol=1.0)    # loose enough
    with pytest.raises(AssertionError, match="1 of 1 checks"):
        sg.check(uses_wrong_sin, x, order=1, modes="rev")
    with pytest.raises(ValueError, match="modes"):
        sg.check(np.sin, x, modes=("backward",))
    with pytest.raises(ValueError, match="order"):
        sg.check(np.sin, x, order=3)
    with pytest.raises(ValueError, match="wrt index 2"):
        sg.check(uses_wrong_sin, x, wrt=2)


def two_args(x, w):
    return np.tanh(x @ w)


def test_check_array_outputs_several_arguments_and_float32():
    rng = np.random.default_rng(0)
    sg.check(two_args, rng.standard_normal((2, 3)), rng.standard_normal((3, 4)), wrt=(0, 1))
    sg.check(two_args, rng.standard_normal((2, 3)).astype(np.float32),
             rng.standard_normal((3, 4)).astype(np.float32), wrt=(0, 1))
    sg.check(lambda t: t ** 3 * np.sin(t), 1.3)                                 # a Python float
    sg.check(lambda x, n: np.sum(x ** n), np.arange(1.0, 4.0), 3)               # an int argument left alone
    sg.check(two_args, rng.standard_normal((2, 3)), rng.standard_normal((3, 4)), modes="fwd")   # first order only
    big = rng.standard_normal(400)                                              # random directions
    sg.check(lambda v: np.sum(np.sin(v) * v), big, order=1)


def test_check_refuses_what_it_cannot_check():
    with pytest.raises(TypeError, match="one array output"):
        sg.check(lambda x: (x, x), np.ones(2))
    with pytest.raises(TypeError, match="containers"):
        sg.check(lambda xs: np.sum(xs[0]), [np.ones(2)])
