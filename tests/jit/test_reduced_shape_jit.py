"""sg.jit compiles the reduced_shape reads (the shape of a reduction the
reverse sweep needs, tests/test_reduced_shape.py) with its twin: no
fallback to CPython, the gradient of sg.grad."""
import warnings

import numpy as np
import pytest

numba = pytest.importorskip("numba")

import srcgrad as sg  # noqa: E402
from gradcheck import check_close  # noqa: E402


def softmax_nll(p, y):
    logp = p - np.log(np.sum(np.exp(p), axis=1, keepdims=True))
    return -np.mean(np.sum(y * logp, axis=1))


def test_jit_compiles_reduced_shape():
    rng = np.random.default_rng(5)
    p, y = rng.normal(size=(6, 4)), rng.uniform(size=(6, 4))
    assert "reduced_shape" in sg.source(softmax_nll, args=(p, y), jit=True)
    grad = sg.grad(softmax_nll)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        got = sg.jit(grad)(p, y)
    check_close(got, grad(p, y), rtol=1e-12, atol=1e-14)
