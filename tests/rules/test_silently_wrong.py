"""Regression tests for results that were silently wrong, and checks the rule
tables cannot express (issue 11).

Each regression test failed before its fix:
  - np.full / np.full_like were registered non-differentiable: the gradient
    of their fill value was dropped (5.25 where 6.75 is right);
  - np.linspace likewise: its end points got no gradient and no tangent;
  - the tangent of np.vstack/hstack/column_stack/dstack of an *array*
    (whose rows are the operands) was zero in forward mode, and the reverse
    mode returned a list cotangent for it (an error once chained);
  - complex inputs of np.linalg.eigh/eigvalsh/svd, inv, solve, det,
    slogdet, pinv, cholesky got wrong gradients (transposes where the
    conjugate transposes belong).
Also: the tangents of np.max/np.min at ties (the mean of the tied entries'
tangents), which were already right, and what np.full does op by op.

Oracles: central finite differences (of real and imaginary parts
separately for complex inputs, TF's convention: dL/da + i dL/db) and
hand-computed values.
"""
import numpy as np
import pytest

import srcgrad as sg
from srcgrad.rules import tangents as tangent_registry

EPS = 1e-6


def numerical_grad(f, x, eps=EPS):
    """Central differences of the real scalar f at x; for complex x,
    dL/da + i dL/db (TF's convention)."""
    x = np.array(x, dtype=np.result_type(x, np.float64))
    g = np.zeros_like(x)
    steps = (eps, 1j * eps) if np.iscomplexobj(x) else (eps,)
    for k in np.ndindex(x.shape):
        parts = []
        for s in steps:
            xp, xm = x.copy(), x.copy()
            xp[k] += s
            xm[k] -= s
            parts.append((f(xp) - f(xm)) / (2 * eps))
        g[k] = parts[0] + (1j * parts[1] if len(parts) > 1 else 0)
    return g


def tape_grad(f, *xs):
    ts = [sg.constant(x) for x in xs]
    with sg.GradientTape() as tape:
        tape.watch(ts)
        y = f(*ts)
    gs = tape.gradient(y, ts)
    return [None if g is None else g.numpy() for g in gs]


def directional(f, x, v, eps=EPS):
    return (np.asarray(f(x + eps * v)) - np.asarray(f(x - eps * v))) / (2 * eps)


def acc_jvp(f, x, v):
    t = sg.constant(x)
    with sg.ForwardAccumulator(t, v) as acc:
        y = f(t)
    out = acc.jvp(y)
    return None if out is None else out.numpy()


# ---------------------------------------------------------------------------
# np.full, np.full_like: differentiable in the fill value
# ---------------------------------------------------------------------------

def full_loss(v):
    a = np.full((3,), v)
    return np.sum(a * v) + 0.75 * v


def full_like_loss(x, v):
    return np.sum(np.full_like(x, v) * x)


def full_like_tensor_loss(x, v):
    return np.sum(np.full_like(x * v, v) * x)


def test_full_fill_value_gradient():
    """d/dv [sum(full(3, v) * v) + 0.75 v] = 6 v + 0.75 (was 3 v + 0.75:
    the full(...) factor was taken as a constant)."""
    v = 1.0
    assert sg.grad(full_loss)(v) == pytest.approx(6.75, rel=1e-12)
    _, jv = sg.jvp(full_loss, (v,), (1.0,))
    assert jv == pytest.approx(6.75, rel=1e-12)


def test_full_like_fill_value_gradient_both_paths():
    x, v = np.array([1.0, 2.0, -0.5]), 3.0
    assert sg.grad(full_like_loss, wrt=1)(x, v) == pytest.approx(np.sum(x), rel=1e-12)
    _, jv = sg.jvp(full_like_loss, (x, v), (None, 1.0))
    assert jv == pytest.approx(np.sum(x), rel=1e-12)
    # op by op, NumPy dispatches full_like on its first argument: a Tensor there
    (gx, gv) = tape_grad(full_like_tensor_loss, x, v)
    assert gv == pytest.approx(np.sum(x), rel=1e-12)
    np.testing.assert_allclose(gx, np.full_like(x, v), rtol=1e-12)


def test_full_op_by_op():
    """np.full(shape, tensor) is recorded on the tape (tape/scipy_calls.py:
    its fill value reaches the array through np.copyto, which does not
    dispatch, so the tape replaces np.full while recording)."""
    (g,) = tape_grad(full_loss, 1.0)
    assert g == pytest.approx(6.75)


# ---------------------------------------------------------------------------
# np.linspace: differentiable in start and stop
# ---------------------------------------------------------------------------

def linspace_loss(a, b):
    return np.sum(np.linspace(a, b, 5) * np.arange(5.0))


def linspace_vec(x):
    return np.linspace(x[0], x[1], 4)


def test_linspace_gradient_and_tangent():
    a, b = 0.5, 2.0
    t = np.linspace(0, 1, 5)
    ga, gb = sg.grad(linspace_loss, wrt=(0, 1))(a, b)
    assert ga == pytest.approx(np.sum((1 - t) * np.arange(5.0)), rel=1e-12)
    assert gb == pytest.approx(np.sum(t * np.arange(5.0)), rel=1e-12)
    x, v = np.array([0.3, 1.7]), np.array([1.0, -2.0])
    expected = directional(linspace_vec, x, v)
    assert np.abs(expected).max() > 0.5
    np.testing.assert_allclose(sg.jvp(linspace_vec, (x,), (v,))[1], expected, rtol=1e-8)
    np.testing.assert_allclose(acc_jvp(linspace_vec, x, v), expected, rtol=1e-8)


def linspace_retstep_loss(a):
    return np.sum(np.linspace(a, 2.0, 4, retstep=True)[0])


def test_linspace_retstep_refused():
    with pytest.raises(NotImplementedError, match="retstep"):
        sg.grad(linspace_retstep_loss)(0.5)


# ---------------------------------------------------------------------------
# Forward mode of the joining functions, op by op and generated
# ---------------------------------------------------------------------------

def vstack_array(x):
    return np.vstack(x)


def hstack_array(x):
    return np.hstack(x)


def column_stack_array(x):
    return np.column_stack(x)


def dstack_array(x):
    return np.dstack(x)


def row_stack_list(x):
    return np.vstack([x[0], x[1] * 2.0])


def append_rows(x):
    return np.append(x, x[:1] * 3.0, axis=0)


def vstack_scaled(x):
    return np.sum(np.vstack(x * 2.0) * np.arange(6.0).reshape(2, 3))


@pytest.mark.parametrize("f", [vstack_array, hstack_array, column_stack_array, dstack_array,
                               row_stack_list, append_rows])
def test_joining_tangents_are_not_zero(f):
    """np.vstack(x) of an array x: the tangent was zero (the transposed VJP
    returned a list for an array operand)."""
    rng = np.random.default_rng(3)
    x, v = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    expected = directional(f, x, v)
    assert np.abs(expected).max() > 0.1
    np.testing.assert_allclose(sg.jvp(f, (x,), (v,))[1], expected, rtol=1e-8)
    np.testing.assert_allclose(acc_jvp(f, x, v), expected, rtol=1e-8)


def test_vstack_of_an_array_reverse_chained():
    """The cotangent of an array operand is an array (was a list, which the
    next rule, multiply's, could not use)."""
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    (g,) = tape_grad(vstack_scaled, x)
    np.testing.assert_allclose(g, 2.0 * np.arange(6.0).reshape(2, 3), rtol=1e-12)
    np.testing.assert_allclose(sg.grad(vstack_scaled)(x), 2.0 * np.arange(6.0).reshape(2, 3))


@pytest.mark.skipif(not hasattr(np, "row_stack"), reason="np.row_stack was removed")
def test_row_stack_compiled():
    def row_stack_loss(x):
        return np.sum(np.row_stack([x, x * x]) * 2.0)
    x = np.array([0.5, -1.0])
    with pytest.warns(DeprecationWarning):
        g = sg.grad(row_stack_loss)(x)
    np.testing.assert_allclose(g, 2.0 + 4.0 * x)


# ---------------------------------------------------------------------------
# np.max / np.min tangents at ties: the mean of the tied entries' tangents
# ---------------------------------------------------------------------------

def max_all(x):
    return np.max(x)


def max_rows(x):
    return np.max(x, axis=1)


def min_cols_kd(x):
    return np.min(x, axis=0, keepdims=True)


def amax_method(x):
    return x.max(axis=1)


def ptp_rows(x):
    return np.ptp(x, axis=1)


TIED = np.array([[3.0, 1.0, 3.0], [2.0, 2.0, 0.5]])
TANGENT = np.array([[1.0, 5.0, 4.0], [-1.0, 3.0, 7.0]])


@pytest.mark.parametrize("f,expected", [
    (max_all, 2.5),                           # mean of 1 and 4
    (max_rows, [2.5, 1.0]),                   # (1 + 4) / 2, (-1 + 3) / 2
    (min_cols_kd, [[-1.0, 5.0, 7.0]]),        # column 0: min 2 alone, ...
    (amax_method, [2.5, 1.0]),
    (ptp_rows, [2.5 - 5.0, 1.0 - 7.0]),
])
def test_max_min_tangents_at_ties(f, expected):
    """Ties split evenly (the adjoint's convention) in forward mode, op by
    op and generated; the result is the mean of the one-sided derivatives
    (what central differences give for max of two tied entries)."""
    np.testing.assert_allclose(sg.jvp(f, (TIED,), (TANGENT,))[1], expected, rtol=1e-12)
    np.testing.assert_allclose(acc_jvp(f, TIED, TANGENT), expected, rtol=1e-12)


def max_of_list(a, b):
    return np.max([a, b], axis=0) * np.array([1.0, 2.0, 3.0])


def min_of_list(a, b):
    return np.min([a, b * 1.0], axis=0)


def test_max_min_of_a_list_compiled_with_ties():
    """np.max([a, b], axis=0) in compiled code (its rule's tie chooser failed
    on a list: "Field elements must be 2- or 3-tuples"); ties split evenly."""
    a, b = np.array([1.0, 3.0, 2.0]), np.array([1.0, 0.5, 2.0])

    def loss(a, b):
        return np.sum(max_of_list(a, b)) + np.sum(min_of_list(a, b))
    ga, gb = sg.grad(loss, wrt=(0, 1))(a, b)
    np.testing.assert_allclose(ga, [0.5 + 0.5, 2.0, 1.5 + 0.5])
    np.testing.assert_allclose(gb, [0.5 + 0.5, 1.0, 1.5 + 0.5])
    _, jv = sg.jvp(max_of_list, (a, b), (np.ones(3), 2.0 * np.ones(3)))
    np.testing.assert_allclose(jv, [1.5, 2.0, 4.5])


def test_max_of_a_list_op_by_op():
    """np.max([a, b]) of Tensors: NumPy's dispatch sees the list only; the tape's wrapper of np.max
    records it (tape/scipy_calls.py), so its tangent is there."""
    a, b = np.array([1.0, 3.0, 2.0]), np.array([1.0, 0.5, 2.0])
    ta, tb = sg.constant(a), sg.constant(b)
    with sg.ForwardAccumulator([ta, tb], [np.ones(3), 2.0 * np.ones(3)]) as acc:
        y = max_of_list(ta, tb)
    np.testing.assert_allclose(acc.jvp(y).numpy(), [1.5, 2.0, 4.5])


# ---------------------------------------------------------------------------
# Every tangent rule of the new modules has a row in the forward table
# ---------------------------------------------------------------------------

def test_every_new_tangent_rule_has_a_row():
    import test_forward
    covered = {f for c in test_forward.ALL_CASES
               for f in (c[3] if isinstance(c[3], tuple) else (c[3],))}
    new = {np.full, np.full_like, np.linspace, np.copy, np.block, np.insert, np.vstack, np.hstack, np.dstack,
           np.column_stack, np.append, np.ptp, np.linalg.eigvals, getattr(np, "row_stack", np.vstack)}
    rules = [p for p, r in tangent_registry.tangent_rules().items()
             if p in new or r.template.__module__ == "srcgrad.rules.numpy.fft"]
    assert rules
    missing = [getattr(p, "__name__", p) for p in rules if p not in covered]
    assert not missing, missing


# ---------------------------------------------------------------------------
# Known limitations that need compiler work (reported; strict xfail so a fix
# shows up)
# ---------------------------------------------------------------------------

EIG_A = np.array([[0.0, -2.0, 0.3], [1.5, 0.1, 0.0], [0.2, 0.4, 1.0]])   # a complex pair


def eigvals_squared(a):
    lam = np.linalg.eigvals(a)
    return np.sum(np.real(lam * lam))


def test_eigvals_squared_on_the_tape():
    (g,) = tape_grad(eigvals_squared, EIG_A)
    np.testing.assert_allclose(g, numerical_grad(eigvals_squared, EIG_A), rtol=1e-6, atol=1e-8)


def test_eigvals_squared_compiled():
    """eig/eigvals of a real matrix keep the conj() of the adjoints downstream
    (function.py _mentions_complex)."""
    np.testing.assert_allclose(sg.grad(eigvals_squared)(EIG_A),
                               numerical_grad(eigvals_squared, EIG_A), rtol=1e-6, atol=1e-8)


def r_concat(a, b):
    return np.sum(np.r_[a, b] * np.arange(5.0))


def test_r_index_expression_compiled():
    """np.r_[a, b] is np.concatenate of the items made 1-d (resolve.py): a
    regression test of a once silently zero gradient."""
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])
    ga, gb = sg.grad(r_concat, wrt=(0, 1))(a, b)
    np.testing.assert_allclose(ga, [0.0, 1.0])
    np.testing.assert_allclose(gb, [2.0, 3.0, 4.0])


def block_nested(a, b):
    return np.sum(np.block([[a, b], [b, a]]) * np.arange(16.0).reshape(4, 4))


def test_block_nested_compiled():
    a, b = np.ones((2, 2)), np.zeros((2, 2))
    ga, gb = sg.grad(block_nested, wrt=(0, 1))(a, b)
    w = np.arange(16.0).reshape(4, 4)
    np.testing.assert_allclose(ga, w[:2, :2] + w[2:, 2:])
    np.testing.assert_allclose(gb, w[:2, 2:] + w[2:, :2])


def test_block_nested_op_by_op():
    """(Fixed by audit 11: np.block on Tensors is computed from recorded
    operations, rules/helpers/shapes.py block_on_tensors.)"""
    a, b = np.ones((2, 2)), np.zeros((2, 2))
    ga, gb = tape_grad(block_nested, a, b)
    w = np.arange(16.0).reshape(4, 4)
    np.testing.assert_allclose(ga, w[:2, :2] + w[2:, 2:])
