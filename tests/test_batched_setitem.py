"""Element assignment in batched reverse sweeps (sg.jacobian, sg.hessian,
tape Jacobians): the adjoint of `x[index] = v` runs on the whole stack of
cotangents (rules/helpers/batched.py value_cotangent_b, zero_at_b) for a
basic index into a float array, and once per example otherwise. Checked
against central differences and against the unbatched adjoint run row by
row (sg.grad of each output component)."""
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_jacobian
from srcgrad.rules import registry
from srcgrad.rules.python import containers
from srcgrad.transforms import batch_safety

RNG = np.random.default_rng(20261129)


def set_rows(x):
    out = np.zeros((3, 4))
    out[0] = x[:4]
    out[1, 1:3] = x[4:6] * x[0]
    out[2] = x[6]                      # a scalar broadcast over a row
    return out * np.sin(x[1])


def set_in_loop(x):
    pose = np.zeros((5, 2))
    k = 0
    for i in range(5):
        pose[i, 0] = x[k]
        k += 1
        if i % 2 == 0:
            pose[i, 1] = np.cos(x[k])
            k += 1
    return pose @ np.array([1.0, -2.0])


def overwrite(x):
    y = x * 2.0
    y[1] = x[0] ** 3                   # x[1]'s entry is overwritten: its cotangent is zeroed
    y[1:3] = y[1:3] * x[2]
    return y


def ellipsis_and_newaxis(x):
    m = np.outer(x, x)
    m[..., 0] = x
    m[None, 1] = np.tanh(x)
    return m.ravel()


def index_arrays(x):
    y = np.zeros(4)
    y[[0, 2, 0]] = x[:3]               # names element 0 twice: the last write wins (per-example path)
    return y * x[3]


def int_target(x):
    counts = np.zeros(3, dtype=int)
    counts[0] = x[0]                   # truncated: no derivative through it
    return x * counts[0] + x ** 2


def list_target(x):
    rows = [x[0], x[1], x[2]]
    rows[1] = x[1] * x[2]
    return np.stack(rows) * x[0]


FUNCTIONS = [(set_rows, 7), (set_in_loop, 8), (overwrite, 4), (ellipsis_and_newaxis, 3), (index_arrays, 4),
             (int_target, 3), (list_target, 3)]


def test_setitem_rule_runs_batched():
    assert batch_safety.batchable(registry.adjoint_rule(containers.array_setitem))
    assert batch_safety.batchable(registry.adjoint_rule(containers.setitem))


@pytest.mark.parametrize("fn, n", FUNCTIONS, ids=[f.__name__ for f, _ in FUNCTIONS])
def test_jacobian_with_element_assignment(fn, n):
    x0 = RNG.normal(size=n) * 0.8 + 0.3
    jac = sg.jacobian(fn)(x0)
    check_close(jac, numerical_jacobian(fn, x0), rtol=1e-6, atol=1e-7)
    y = fn(x0)
    rows = np.stack([sg.grad(lambda x, k=k: fn(x).ravel()[k])(x0) for k in range(y.size)])
    np.testing.assert_array_equal(jac.reshape(rows.shape), rows)


@pytest.mark.parametrize("fn, n", FUNCTIONS[:3], ids=[f.__name__ for f, _ in FUNCTIONS[:3]])
def test_hessian_with_element_assignment(fn, n):
    x0 = RNG.normal(size=n) * 0.8 + 0.3
    w = RNG.normal(size=np.shape(fn(x0)))

    def scalar(x):
        return np.sum(fn(x) * w)
    h = sg.hessian(scalar)(x0)
    check_close(h, numerical_jacobian(sg.grad(scalar), x0), rtol=1e-6, atol=1e-7)
    check_close(h, h.T, rtol=1e-12, atol=1e-12)


def test_batched_helpers_match_the_per_example_loop():
    from srcgrad.rules.helpers import batched
    g = RNG.normal(size=(4, 3, 5))
    for index, v in [((1,), np.ones(5)), ((slice(1, 3), 2), np.ones(2)), ((Ellipsis, 0), 1.0),
                     ((None, 2), np.ones((1, 5))), (0, np.ones((1, 5)))]:
        got = batched.value_cotangent_b(g, index, v, np.zeros((3, 5)))
        want = np.stack([containers.value_cotangent(g[k], index, v, np.zeros((3, 5))) for k in range(4)])
        np.testing.assert_array_equal(got, want)
        zeroed = batched.zero_at_b(g, index)
        np.testing.assert_array_equal(zeroed, np.stack([containers.zero_at(g[k], index) for k in range(4)]))
        own = g.copy()
        assert batched.zero_at_in_place_b(own, index) is own
        np.testing.assert_array_equal(own, zeroed)
