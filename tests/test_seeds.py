"""The reference documents' examples (examples/seeds.py) give the documents' values."""
import os
import subprocess
import sys

import numpy as np
import pytest

from gradcheck import check_close

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "examples"))
import seeds  # noqa: E402

import srcgrad as sg  # noqa: E402

SIX = "srcgrad.Tensor(6.0, shape=(), dtype=float64)"


def value(t, expected, dtype=np.float64):
    """Assert `t` is a Tensor holding exactly `expected` (shape and dtype too)."""
    assert isinstance(t, sg.Tensor), t
    assert not isinstance(t, sg.Variable), t
    v = t.numpy()
    expected = np.asarray(expected, dtype=dtype)
    assert v.shape == expected.shape, (v.shape, expected.shape)
    assert v.dtype == dtype, v.dtype
    np.testing.assert_allclose(v, expected, rtol=1e-12, atol=0)


# example -> the values the documents print (None: no gradient)
DOCUMENT_VALUES = [
    (seeds.square_gradient, 6.0),
    (seeds.nested_tapes, (6.0, 2.0)),
    (seeds.persistent_tape, (108.0, 6.0)),
    (seeds.watch_accessed_variables_off, (6.0, None)),
    (seeds.unwatched_variable_answer, (4.0, None)),
    (seeds.variable_square, 6.0),
    (seeds.what_the_tape_watches, (6.0, None, None, None)),
    (seeds.what_the_tape_watches_without_x3, (6.0, None, None, None)),
    (seeds.watching_everything, (6.0, 6.0, 6.0, 6.0)),
    (seeds.persistent_variable, (108.0, 6.0)),
    (seeds.nested_variable, (6.0, 2.0)),
    (seeds.watched_constant, 6.0),
    (seeds.reset_two_tapes, 6.0),
    (seeds.reset_example, 6.0),
    (seeds.stop_recording_example, (6.0, None)),
]


@pytest.mark.parametrize("example, expected", DOCUMENT_VALUES, ids=[f.__name__ for f, _ in DOCUMENT_VALUES])
def test_document_values(example, expected):
    got = example()
    if not isinstance(expected, tuple):
        got, expected = (got,), (expected,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        if e is None:
            assert g is None
        else:
            value(g, e)


def test_jacobian_example():
    value(seeds.jacobian_example(), [[2.0, 0.0], [0.0, 4.0]])


def test_batch_jacobian_example():
    # the document's x is float32, and so is its batch jacobian
    value(seeds.batch_jacobian_example(), [[[2, 0], [0, 4]], [[6, 0], [0, 8]]], dtype=np.float32)


def test_simple_function_matches_closed_form():
    w, b, dl_dw, dl_db = seeds.simple_function()
    assert dl_dw.shape == (3, 2) and dl_db.shape == (2,)
    x = np.array([[1.0, 2.0, 3.0]])
    y = x @ w.numpy() + b.numpy()
    # loss = mean(y**2) over the 2 outputs: dl/dy = 2 y / 2 = y, dl/dw = x^T y, dl/db = y
    value(dl_dw, x.T @ y)
    value(dl_db, y[0])
    # the random w is seeded: the same values on every run
    _, _, dl_dw2, _ = seeds.simple_function()
    np.testing.assert_array_equal(dl_dw2.numpy(), dl_dw.numpy())


def test_dense_layer_gradients():
    layer, grad = seeds.dense_layer()
    assert isinstance(grad, list) and len(grad) == 2
    g_kernel, g_bias = grad
    assert g_kernel.shape == (3, 2) and g_bias.shape == (2,)
    x = np.array([[1.0, 2.0, 3.0]])
    pre = x @ layer.kernel.numpy() + layer.bias.numpy()
    assert (pre > 0).any(), "the seeded layer must have an active unit for this test to mean anything"
    dy = np.where(pre > 0, pre, 0.0)   # d mean(relu(pre)**2) / d relu = relu (n = 2)
    value(g_kernel, x.T @ dy)
    value(g_bias, dy[0])
    assert [v.name for v in layer.trainable_variables] == ["kernel", "bias"]
    check_close(g_kernel.numpy(), x.T @ dy)


def test_dense_layer_call_is_compiled():
    # the layer's __call__ is an @sg.function: outside a tape it still gives relu(x W + b)
    layer = seeds.Dense(2, 3)
    x = np.array([[1.0, -2.0, 3.0]])
    out = layer(sg.constant(x))
    assert isinstance(out, sg.Tensor)
    np.testing.assert_allclose(out.numpy(), np.maximum(x @ layer.kernel.numpy() + layer.bias.numpy(), 0.0))


def test_script_prints_the_documents_values():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "seeds.py")],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    for text in ["at 3.0: 6.0", "dy_dx = 6.0  d2y_dx2 = 2.0", "dz_dx = 108.0  dy_dx = 6.0",
                 "watch_accessed_variables=False: 6.0 None",
                 "srcgrad.Tensor(4.0, shape=(), dtype=float64)\nNone",
                 "Variable x**2: 6.0",
                 SIX + "\nNone\nNone\nNone",
                 "\n".join([SIX] * 4),
                 "y = x ^ 4 at x = 3 is 108.0", "First Derivative: 6.0", "Second Derivative: 2.0",
                 "[[2.0, 0.0], [0.0, 4.0]]", "[[[2.0, 0.0], [0.0, 4.0]], [[6.0, 0.0], [0.0, 8.0]]]",
                 "shape=(3, 2), dtype=float64)", "shape=(2,), dtype=float64)",
                 "dl_dw shape: (3, 2)  dl_db shape: (2,)",
                 "kernel, shape: (3, 2)\nbias, shape: (2,)",
                 "watched constant x**2: 6.0", "two tapes (loss_fn forgotten): 6.0",
                 "after reset: 6.0", "stop_recording: 6.0 None"]:
        assert text in out, (text, out)
