"""Smoke test of the autograd-compatibility harness (benchmarks/compat/): its
source rewriting, its shim of autograd's API on srcgrad, and its recording
and comparison of gradient calls, on a tiny autograd-style program written
here (not autograd's code, and without an autograd checkout).
"""
import importlib.util
import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks.compat import record, shim  # noqa: E402
from benchmarks.compat.rewrite import apply_patches, rewrite_source  # noqa: E402

PROGRAM = '''\
import autograd.numpy as np
import autograd.numpy.random as npr
import autograd.scipy.signal
from autograd import grad, value_and_grad as vgrad
from autograd.misc.optimizers import adam
from autograd.scipy.special import logsumexp
from autograd import (
    elementwise_grad,
)

X = npr.RandomState(0).randn(6, 3)


def loss(params, i):
    W, b = params
    out = np.tanh(np.dot(X, W) + b)
    return np.sum(out ** 2) - logsumexp(out[:, 0])


def both(a, b):
    return np.sum(np.sin(a) * b)


gradient = grad(loss)
params = adam(gradient, (np.ones((3, 2)), np.zeros(2)), num_iters=3, step_size=0.1)
g_both = grad(both, argnum=(0, 1))(np.arange(3.0), np.ones(3))
value, g_b = vgrad(both, argnum=1)(np.arange(3.0), np.ones(3))
slopes = elementwise_grad(lambda t: np.tanh(t) * t)(np.linspace(-1.0, 1.0, 5))
conv = autograd.scipy.signal.convolve(np.arange(5.0), np.array([1.0, -1.0]), mode="valid")
'''


def _run(source, tmp_path, name):
    """Run program text as a module from a file (srcgrad reads the source of
    what it differentiates), returning its namespace."""
    path = tmp_path / (name + ".py")
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return vars(module)


def test_rewrite_maps_autograd_imports_and_keeps_lines():
    new, notes = rewrite_source(PROGRAM)
    assert new.count("\n") == PROGRAM.count("\n")
    assert "import numpy as np" in new and "from numpy import random as npr" in new
    assert "from scipy.special import logsumexp" in new
    assert "from benchmarks.compat.shim import grad, value_and_grad as vgrad" in new
    assert "from benchmarks.compat.shim import adam" in new
    assert "benchmarks.compat.shim.convolve(" in new
    assert "grad(both, wrt=(0, 1))" in new and "vgrad(both, wrt=1)" in new
    assert "autograd" not in "".join(line for line in new.splitlines() if not line.startswith("#"))


def test_patches_are_exact():
    assert apply_patches("num_iters=1000)", [("num_iters=1000", "num_iters=3")]) == "num_iters=3)"
    with pytest.raises(Exception, match="matches 0 times"):
        apply_patches("num_iters=10", [("num_iters=1000", "num_iters=3")])


def test_rewritten_program_agrees_with_autograd(tmp_path):
    pytest.importorskip("autograd")
    theirs = _run(PROGRAM, tmp_path, "compat_smoke_autograd")
    ours = _run(rewrite_source(PROGRAM)[0], tmp_path, "compat_smoke_srcgrad")
    for name in ("g_both", "value", "g_b", "slopes", "conv"):
        assert record.compare(record.snapshot(ours[name]), record.snapshot(theirs[name]), 1e-9) is None, name
    # adam's three steps used the gradients: the parameters agree too
    assert record.compare(record.snapshot(ours["params"]), record.snapshot(theirs["params"]), 1e-9) is None


def test_shim_check_grads_passes_and_catches_a_wrong_vjp():
    np.random.seed(0)
    shim.CHECK_FAILURES.clear()
    shim.check_grads(lambda x, y: np.sum(np.sin(x) * y), argnum=(0, 1), modes=["rev"], order=1)(
        np.random.randn(3), np.random.randn(3))
    assert shim.CHECK_FAILURES == []

    @shim.primitive
    def twice(x):
        return 2.0 * x
    shim.defvjp(twice, lambda ans, x: lambda g: 2.001 * g)
    with pytest.raises(AssertionError, match=r"\(VJP\) check of twice failed"):
        shim.check_grads(twice, modes=["rev"], order=1)(1.0)
    shim.CHECK_FAILURES.clear()


def test_flatten_round_trip():
    value = (1.0, np.arange(6.0).reshape(2, 3), [np.ones(2), {"b": 2.0, "a": np.zeros((1, 2))}], ())
    flat, unflatten = shim.flatten(value)
    assert flat.shape == (12,)
    again, _ = shim.flatten(unflatten(flat))
    assert np.array_equal(flat, again)


def test_recorder_labels_and_comparison():
    rec = record.Recorder(keep_per_label=2)
    f = rec.wrap("grad(f)", lambda x: 2 * x)
    x = np.ones(2)
    f(x)
    x += 1                       # a program updating its parameters in place: the record keeps the copy
    f(x)
    f(x)
    assert [r["index"] for r in rec.records] == [0, 1] and rec.counts["grad(f)"] == 3
    assert np.array_equal(rec.records[0]["args"][0], np.ones(2))
    assert record.compare({"a": [1.0, np.ones(2)]}, {"a": [1.0, np.ones(2) * (1 + 1e-9)]}, 1e-6) is None
    assert "max abs difference" in record.compare(np.ones(2), np.array([1.0, 1.1]), 1e-6)
    assert "structure" in record.compare((1.0,), [1.0, 2.0], 1e-6)
    assert record.transform_label("grad", "loss", (0,)) == "grad(loss)"
    assert record.transform_label("grad", "loss", (0, 1)) == "grad(loss, argnum=(0, 1))"
