"""np.cross in batched sweeps (vectorised Jacobians and Hessians): its rule
runs on the stack of cotangents through cross_adjoint_b (np.cross
broadcasts over the batch axis) instead of once per example. Checked
against autograd's Jacobians and central differences, for the vector axis
last and first (axisa/axisb/axisc, axis), an operand broadcast over the
other, and a Hessian (second order through the rule); the rule is
batch-safe (batch_safety.ALLOWED)."""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_jacobian
from srcgrad.rules import registry
from srcgrad.transforms import batch_safety


def rows(v, X):
    return np.sum(np.sin(np.cross(v, X)) * X, axis=0)


def columns(v, X):
    return np.sum(np.cross(v, X, axisa=0, axisb=0, axisc=0) ** 2, axis=1)


def shared_axis(v, X):
    return np.sum(np.cross(v, X, axis=0) * X, axis=1)


def broadcast(v, X):
    # one axis vector against many points
    return np.sum(np.cos(np.cross(v, X)), axis=0)


def broadcast_by_hand(v, X):
    # (autograd's cross does not sum its cotangent back over a broadcast operand: the reference
    # broadcasts v itself)
    return np.sum(np.cos(np.cross(v * np.ones_like(X), X)), axis=0)


def energy(x):
    X = np.reshape(x, (4, 3))
    return np.sum(np.cross(X[:-1], X[1:]) ** 2)


def _autograd_of(f):
    return type(f)(f.__code__, dict(f.__globals__, np=anp), f.__name__)


def test_the_rule_is_batch_safe():
    assert batch_safety.batchable(registry.adjoint_rule(np.cross))


@pytest.mark.parametrize("f, transpose, v_shape", [
    (rows, False, (20, 3)), (columns, True, (20, 3)), (shared_axis, True, (20, 3)), (broadcast, False, (3,))])
def test_jacobians(f, transpose, v_shape):
    rng = np.random.default_rng(1)
    v, X = rng.standard_normal(v_shape), rng.standard_normal((20, 3))
    if transpose:
        v, X = v.T.copy(), X.T.copy()
    jv, jX = sg.jacobian(f, wrt=(0, 1))(v, X)
    g = _autograd_of(broadcast_by_hand if f is broadcast else f)
    check_close(jv, autograd.jacobian(g, argnum=0)(v, X), rtol=1e-10, atol=1e-12)
    check_close(jX, autograd.jacobian(g, argnum=1)(v, X), rtol=1e-10, atol=1e-12)
    check_close(jv, numerical_jacobian(lambda a: f(a, X), v))


def test_hessian():
    x = np.random.default_rng(2).standard_normal(12)
    h = sg.hessian(energy)(x)
    check_close(h, autograd.hessian(_autograd_of(energy))(x), rtol=1e-10, atol=1e-10)
    check_close(h, numerical_jacobian(sg.grad(energy), x), rtol=1e-5, atol=1e-5)


def used_once(v, X):
    return np.sum(np.tanh(np.cross(v, X)), axis=0)


def test_the_sweep_calls_the_batched_twin(monkeypatch):
    # (the values above would agree through the per-example loop too: this checks the stack is used)
    from srcgrad.rules.helpers import batched
    calls = []
    real = batched.cross_adjoint_b

    def spy(g, *args):
        calls.append(np.shape(g))
        return real(g, *args)
    monkeypatch.setitem(batched.BATCHED, batched.cross_adjoint, (spy, ()))
    rng = np.random.default_rng(4)
    v, X = rng.standard_normal((7, 3)), rng.standard_normal((7, 3))
    jv = sg.jacobian(used_once, wrt=0)(v, X)
    check_close(jv, autograd.jacobian(_autograd_of(used_once), argnum=0)(v, X), rtol=1e-10, atol=1e-12)
    assert calls and all(shape == (3, 7, 3) for shape in calls)
