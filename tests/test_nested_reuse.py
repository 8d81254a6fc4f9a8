"""Nested tapes: the outer tape's Jacobian of a recorded gradient runs the
batched reverse sweep on the residuals the call's forward sweep returned
(Artefact.forward_matches), instead of the batched joint code that runs
the forward sweep again. The results must be the same as before, through
persistent tapes, loops (stacks), and programs whose batched forward sweep
differs (which keep the joint code)."""
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close
from srcgrad.artefact import Artefact


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def looped(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        s = s + np.sin(x[i] * x[i + 1]) * x[i]
    return s


def softplus_sum(x, w):
    z = x @ w
    return np.sum(np.log1p(np.exp(z)) * x[:, 0])


def _nested(f, args, persistent=False):
    vs = [sg.Variable(a) for a in args]
    with sg.GradientTape(persistent=persistent) as outer:
        with sg.GradientTape() as inner:
            y = f(*vs)
        g = inner.gradient(y, vs[0])
    first = outer.jacobian(g, vs[0]).numpy()
    if persistent:
        again = outer.jacobian(g, vs[0]).numpy()
        np.testing.assert_array_equal(first, again)      # (the residuals are read, not consumed)
        grad_sum = outer.gradient(g, vs[0]).numpy()
        check_close(grad_sum, first.reshape(grad_sum.size, -1).sum(axis=0).reshape(grad_sum.shape),
                    rtol=1e-12, atol=1e-12)
    return first


@pytest.mark.parametrize("f, args", [
    (rosen, (np.random.default_rng(0).uniform(-1.5, 1.5, 9),)),
    (looped, (np.random.default_rng(1).normal(size=7),)),
    (softplus_sum, (np.random.default_rng(2).normal(size=(3, 4)), np.random.default_rng(3).normal(size=4))),
])
@pytest.mark.parametrize("persistent", [False, True])
def test_nested_tapes_reuse_residuals(f, args, persistent, monkeypatch):
    compiled = sg.function(f)
    calls = []
    real = Artefact.forward_matches

    def spy(self, other):
        found = real(self, other)
        calls.append(found)
        return found
    monkeypatch.setattr(Artefact, "forward_matches", spy)
    reused = _nested(compiled, args, persistent)
    assert calls, "the outer Jacobian did not go through the batched sweep"
    monkeypatch.setattr(Artefact, "forward_matches", lambda self, other: False)
    rerun = _nested(compiled, args, persistent)
    np.testing.assert_array_equal(reused, rerun)
    x = args[0]
    h = sg.hessian(f)(*args)
    check_close(reused.reshape(h.shape), h, rtol=1e-10, atol=1e-10)
    grad = sg.grad(f)
    eps = 1e-6
    fd = np.array([(grad(x + eps * e.reshape(x.shape), *args[1:]) - grad(x - eps * e.reshape(x.shape), *args[1:]))
                   / (2 * eps) for e in np.eye(x.size)])
    check_close(reused.reshape(x.size, x.size), fd.reshape(x.size, x.size).T, rtol=1e-5, atol=1e-6)


def test_rosen_batched_forward_matches():
    """For the Rosenbrock gradient the batched code has the plain split
    forward sweep (unbroadcast_b reads only a shape, as unbroadcast does)."""
    compiled = sg.function(rosen)
    v = sg.Variable(np.linspace(-1.0, 1.0, 6))
    found = []
    real = Artefact.forward_matches

    def spy(self, other):
        found.append(real(self, other))
        return found[-1]
    Artefact.forward_matches = spy
    try:
        _nested(compiled, (v.numpy(),))
    finally:
        Artefact.forward_matches = real
    assert found == [True]
