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


def value(t):
    assert isinstance(t, sg.Tensor), t
    return t.numpy()


def test_square_gradient():
    assert value(seeds.square_gradient()) == 6.0


def test_nested_tapes():
    d1, d2 = seeds.nested_tapes()
    assert (value(d1), value(d2)) == (6.0, 2.0)


def test_persistent_tape():
    dz, dy = seeds.persistent_tape()
    assert (value(dz), value(dy)) == (108.0, 6.0)


def test_watch_accessed_variables_off():
    ga, gb = seeds.watch_accessed_variables_off()
    assert value(ga) == 6.0 and gb is None


def test_unwatched_variable_answer():
    gx, gw = seeds.unwatched_variable_answer()
    assert value(gx) == 4.0 and gw is None


def test_variable_square():
    assert value(seeds.variable_square()) == 6.0


@pytest.mark.parametrize("example", [seeds.what_the_tape_watches, seeds.what_the_tape_watches_without_x3])
def test_what_the_tape_watches(example):
    g0, g1, g2, g3 = example()
    assert value(g0) == 6.0
    assert g1 is None and g2 is None and g3 is None


def test_watching_everything():
    assert [value(g) for g in seeds.watching_everything()] == [6.0] * 4


def test_persistent_variable():
    dz, dy = seeds.persistent_variable()
    assert (value(dz), value(dy)) == (108.0, 6.0)


def test_nested_variable():
    d1, d2 = seeds.nested_variable()
    assert (value(d1), value(d2)) == (6.0, 2.0)


def test_jacobian_example():
    np.testing.assert_array_equal(value(seeds.jacobian_example()), [[2, 0], [0, 4]])


def test_batch_jacobian_example():
    j = seeds.batch_jacobian_example()
    assert j.dtype == np.float32
    np.testing.assert_array_equal(value(j), [[[2, 0], [0, 4]], [[6, 0], [0, 8]]])


def test_simple_function_matches_closed_form():
    w, b, dl_dw, dl_db = seeds.simple_function()
    x = np.array([[1.0, 2.0, 3.0]])
    y = x @ w.numpy() + b.numpy()
    # loss = mean(y**2) over the 2 outputs: dl/dy = y, dl/dw = x^T y, dl/db = y
    check_close(value(dl_dw), x.T @ y, rtol=1e-12)
    check_close(value(dl_db), y[0], rtol=1e-12)
    assert dl_dw.shape == (3, 2) and dl_db.shape == (2,)


def test_dense_layer_gradients():
    layer, (g_kernel, g_bias) = seeds.dense_layer()
    assert g_kernel.shape == (3, 2) and g_bias.shape == (2,)
    x = np.array([[1.0, 2.0, 3.0]])
    pre = x @ layer.kernel.numpy() + layer.bias.numpy()
    dy = np.where(pre > 0, pre, 0.0)   # d mean(relu(pre)**2) / d relu = relu (n = 2)
    check_close(value(g_kernel), x.T @ dy, rtol=1e-12)
    check_close(value(g_bias), dy[0], rtol=1e-12)
    assert [v.name for v in layer.trainable_variables] == ["kernel", "bias"]


def test_watched_constant():
    assert value(seeds.watched_constant()) == 6.0


def test_reset_example():
    assert value(seeds.reset_example()) == 6.0


def test_stop_recording_example():
    g, untraced = seeds.stop_recording_example()
    assert value(g) == 6.0 and untraced is None


def test_script_prints_the_documents_values():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "seeds.py")],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    for text in ["at 3.0: 6.0", "dy_dx = 6.0  d2y_dx2 = 2.0", "dz_dx = 108.0  dy_dx = 6.0",
                 "srcgrad.Tensor(4.0, shape=(), dtype=float64)\nNone",
                 "srcgrad.Tensor(6.0, shape=(), dtype=float64)\nNone\nNone\nNone",
                 "y = x ^ 4 at x = 3 is 108.0", "First Derivative: 6.0", "Second Derivative: 2.0",
                 "[[2.0, 0.0], [0.0, 4.0]]", "[[[2.0, 0.0], [0.0, 4.0]], [[6.0, 0.0], [0.0, 8.0]]]",
                 "kernel, shape: (3, 2)", "bias, shape: (2,)"]:
        assert text in out, (text, out)
