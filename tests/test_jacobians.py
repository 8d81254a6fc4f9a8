"""Vectorised Jacobians: one reverse sweep on a stack of cotangents.

`GradientTape.jacobian`/`batch_jacobian` (experimental_use_pfor=True, the
default), `sg.jacobian` and `sg.hessian` push the rows of the identity
through the adjoint at once (a leading batch axis on every cotangent). A
rule runs batched as written, through its batched template, or once per
example (transforms/batch_safety.py). Checked here:

* every row of the rule table (tests/test_rules.py's CASES): the batched
  generated adjoint of the case function equals the unbatched one per
  cotangent, with batch sizes equal to the inputs' axis lengths (a batch
  axis broadcast against a primal axis of the same length would be wrong
  silently otherwise);
* Jacobians of vector-valued functions built from the batched rules
  (broadcasting, reductions with axes, matmul in every rank, indexing,
  reshapes and transposes, containers), on the tape (compiled and op by
  op), with and without pfor and in chunks (`parallel_iterations`),
  against autograd's jacobian and central finite differences;
* batch_jacobian, sg.jacobian and sg.hessian against autograd.
"""
import zlib

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
import test_rules
from gradcheck import check_close, numerical_jacobian
from rulecase import Static, _draw
from srcgrad.callables import as_function
from srcgrad.transforms import batch_safety

RNG = np.random.default_rng(7)


def _args(case):
    rng = np.random.default_rng(zlib.crc32(("jac:" + case.name).encode()))
    args = [a.value if isinstance(a, Static) else _draw(rng, a) for a in case.inputs]
    w = rng.normal(size=np.shape(case.ref(*args)))
    return args, w


def _batch_sizes(args):
    sizes = {2}
    for a in args:
        sizes |= set(np.shape(a))
    return sorted(s for s in sizes if s > 1)[:3]


CASES = [c for c in test_rules.CASES if c.meta.get("compiled", True) is not False]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_batched_adjoint_of_every_rule_row_equals_the_unbatched_one(case):
    """The batched joint code of each case function, seeded with a stack of
    B different output cotangents, gives the unbatched gradients, stacked."""
    args, w = _args(case)
    fn = as_function(case.fn)
    params = fn.bind(tuple(args) + (w,), {})
    program = fn.program_for(params)
    program, values = fn.values_for(params, program)
    mask = [i in case.wrt for i in range(len(values))]
    raw = [np.asarray(v, dtype=np.float64) if i in case.wrt else v for i, v in enumerate(values)]
    one = program.compile(mask)
    stacked = program.compile(mask, "batched")
    for B in _batch_sizes(args):
        seeds = np.random.default_rng(B).normal(size=B)
        expected = [one.joint(*raw, s) for s in seeds]
        got = stacked.joint(*raw, seeds)
        for k, g in enumerate(got):
            want = np.stack([np.broadcast_to(e[k], np.shape(raw[case.wrt[k]])) for e in expected])
            np.testing.assert_allclose(np.broadcast_to(g, want.shape), want, rtol=1e-12, atol=1e-12,
                                       err_msg="%s, B=%d, input %d" % (case.name, B, case.wrt[k]))


# --------------------------------------------------------------------------
# Jacobians of vector-valued functions

W34 = RNG.normal(size=(3, 4))
V4 = RNG.normal(size=4)


def j_elementwise(x):
    return np.tanh(x) * x + np.exp(-x * x) / (1.0 + x * x) - np.maximum(x, 0.1)


def j_broadcast(x):
    return (x[:, None] * W34 + V4) ** 2


def j_reductions(x):
    m = x.reshape(3, 4)
    return np.concatenate([np.sum(m, axis=0), np.mean(m, axis=1), np.max(m) * np.ones(1), np.min(m, axis=0)])


def j_keepdims(x):
    m = x.reshape(3, 4)
    return (m - np.mean(m, axis=1, keepdims=True)) / np.sqrt(np.var(m, axis=1, keepdims=True) + 1.0)


def j_matmul_vector(x):
    return np.tanh(W34 @ x) * np.sum(x)


def j_matmul_matrix(x):
    m = x.reshape(4, 2)
    return (W34 @ m).ravel()


def j_matmul_left_vector(x):
    return x[:3] @ W34 + x[3:] @ W34.T @ W34 * 0.1


def j_indexing(x):
    return x[::2] * x[1::2] + x[np.array([0, 3, 3])]


def j_reshape_transpose(x):
    m = x.reshape(2, 3, 2)
    return np.transpose(m, (2, 0, 1)).reshape(-1) * np.swapaxes(m, 0, 2).ravel()


def j_where_clip(x):
    return np.where(x > 0, x ** 2, np.sin(x)) + np.clip(x, -0.5, 0.5)


def j_loop(x):
    h = x
    for i in range(3):
        h = np.tanh(h * 0.9 + x[::-1] * 0.1)
    return h


def j_containers(x):
    parts = []
    for i in range(3):
        parts.append(x * (i + 1.0))
    return np.stack(parts).sum(axis=0) + parts[1] * parts[2]


def j_helper(x):
    return _helper(x, 2.0) * x


def _helper(a, b):
    return np.sin(a * b) + a


VECTOR_FUNCTIONS = [
    (j_elementwise, 6), (j_broadcast, 3), (j_reductions, 12), (j_keepdims, 12), (j_matmul_vector, 4),
    (j_matmul_matrix, 8), (j_matmul_left_vector, 7), (j_indexing, 6), (j_reshape_transpose, 12),
    (j_where_clip, 5), (j_loop, 4), (j_containers, 3), (j_helper, 5),
]


def _autograd_version(fn):
    import test_jacobians as me
    saved = me.np
    me.np = anp
    try:
        return lambda x: fn(x)
    finally:
        me.np = saved


def _autograd_jacobian(fn, x):
    import test_jacobians as me
    saved = me.np
    me.np = anp
    try:
        return autograd.jacobian(fn)(x)
    finally:
        me.np = saved


@pytest.mark.parametrize("fn, n", VECTOR_FUNCTIONS, ids=[f.__name__ for f, _ in VECTOR_FUNCTIONS])
@pytest.mark.parametrize("path", ["compiled", "op_by_op"])
def test_tape_jacobian_vectorised(fn, n, path):
    x0 = RNG.normal(size=n) * 0.7 + 0.05
    expected = _autograd_jacobian(fn, x0)
    check_close(expected, numerical_jacobian(fn, x0), rtol=1e-6, atol=1e-7)
    f = sg.function(fn) if path == "compiled" else fn
    x = sg.constant(x0)
    with sg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = f(x)
    check_close(tape.jacobian(y, x).numpy(), expected, rtol=1e-10, atol=1e-12)
    check_close(tape.jacobian(y, x, parallel_iterations=2).numpy(), expected, rtol=1e-10, atol=1e-12)
    check_close(tape.jacobian(y, x, experimental_use_pfor=False).numpy(), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn, n", VECTOR_FUNCTIONS, ids=[f.__name__ for f, _ in VECTOR_FUNCTIONS])
def test_sg_jacobian_against_autograd(fn, n):
    x0 = RNG.normal(size=n) * 0.7 + 0.05
    check_close(sg.jacobian(fn)(x0), _autograd_jacobian(fn, x0), rtol=1e-10, atol=1e-12)


def per_example(x, w):
    return np.tanh(x @ w) * np.sum(x ** 2, axis=1, keepdims=True)


def test_batch_jacobian_vectorised_against_autograd():
    x0, w0 = RNG.normal(size=(5, 3)), RNG.normal(size=(3, 4))
    ref = np.stack([autograd.jacobian(lambda r: anp.tanh(r @ w0) * anp.sum(r ** 2))(r) for r in x0])
    f = sg.function(per_example)
    x = sg.constant(x0)
    for fn in (f, per_example):
        with sg.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = fn(x, w0)
        for kwargs in ({}, {"parallel_iterations": 3}, {"experimental_use_pfor": False}):
            j = tape.batch_jacobian(y, x, **kwargs)
            assert j.shape == (5, 4, 3)
            check_close(j.numpy(), ref, rtol=1e-10, atol=1e-12)


def test_non_batchable_rule_is_looped_inside_the_sweep():
    """np.linalg.det's rule is not batch-safe as written: it runs once per
    example inside the vectorised sweep, with the same result."""
    def dets(x):
        m = np.reshape(x, (2, 2, 2))
        return np.linalg.det(m) * np.sum(x)
    x0 = RNG.normal(size=8)
    det_rule = sg.rules.registry.adjoint_rule(np.linalg.det)
    assert not batch_safety.batchable(det_rule)
    x = sg.constant(x0)
    with sg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = dets(x)
    check_close(tape.jacobian(y, x).numpy(), numerical_jacobian(dets, x0), rtol=1e-6, atol=1e-8)
    check_close(tape.jacobian(y, x).numpy(), tape.jacobian(y, x, experimental_use_pfor=False).numpy(),
                rtol=1e-12, atol=1e-14)
    check_close(sg.jacobian(dets)(x0), numerical_jacobian(dets, x0), rtol=1e-6, atol=1e-8)


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def test_hessian_of_rosenbrock_is_the_closed_form():
    from scipy.optimize import rosen_hess
    x0 = RNG.normal(size=30)
    check_close(sg.hessian(rosen)(x0), rosen_hess(x0), rtol=1e-12, atol=1e-10)


def mlp_loss(w, x):
    h = np.tanh(x @ w[:6].reshape(3, 2))
    return np.sum(h * w[6:]) + 0.5 * np.sum(w ** 2)


def test_hessian_of_a_model_against_autograd():
    x0 = RNG.normal(size=(4, 3))
    w0 = RNG.normal(size=8)

    def ref(w):
        h = anp.tanh(x0 @ anp.reshape(w[:6], (3, 2)))
        return anp.sum(h * w[6:]) + 0.5 * anp.sum(w ** 2)
    check_close(sg.hessian(mlp_loss)(w0, x0), autograd.hessian(ref)(w0), rtol=1e-10, atol=1e-12)


def test_the_common_rules_run_batched():
    """The rules of everyday models run on a stack of cotangents as written
    or through a batched template (a regression here would make Jacobians
    silently slow, not wrong)."""
    import operator
    from srcgrad.rules import registry
    from srcgrad.rules.helpers import broadcast as helpers
    common = [np.add, np.subtract, np.multiply, np.true_divide, np.power, np.negative, np.exp, np.log,
              np.tanh, np.sin, np.cos, np.sqrt, np.maximum, np.where, np.sum, np.mean, np.max, np.matmul,
              operator.getitem, np.reshape, np.transpose, np.squeeze, np.expand_dims, np.broadcast_to,
              helpers.unbroadcast, helpers.unreduce, helpers.unindex]
    slow = [getattr(p, "__name__", p) for p in common
            if registry.batched_rule(p) is None and not batch_safety.batchable(registry.adjoint_rule(p))]
    assert not slow, slow


def _rotated(t, X):
    c, s = np.cos(t[0]), np.sin(t[0])
    return (np.array([[c, -s], [s, c * t[1]]]) @ X).ravel()


def _fortran(x):
    M = np.array([[x[0], x[1] * x[2]], [np.sin(x[1]), x[0] ** 2], [x[2], 1.0]])
    return np.ravel(M, order="F") * 2.0 + np.sum(np.ravel(M.T @ M)[:3])


def test_jacobian_of_built_arrays_and_ravel_is_batched_and_right():
    """np.array of a nested list and np.ravel (C and F order) have batched
    adjoints (array_adjoint_b, unravel_b): one slice per entry for every
    row of the Jacobian, not one adjoint call per row (GradBench's ht was
    58 gradient sweeps' time); the values are central differences'."""
    from srcgrad.rules.helpers import batched
    X = np.random.default_rng(0).normal(size=(2, 30))
    for f, x in ((lambda t: _rotated(t, X), np.array([0.3, 1.2])), (_fortran, np.array([0.3, -1.2, 0.7]))):
        eps = 1e-6
        fd = np.stack([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(x.size)], axis=1)
        np.testing.assert_allclose(sg.jacobian(f)(x), fd, rtol=1e-6, atol=1e-8)
    g = np.arange(24.0).reshape(2, 3, 4)
    parts = batched.array_adjoint_b(g, [np.ones(4), np.ones(4), np.ones(4)])
    assert [np.shape(p) for p in parts] == [(2, 4)] * 3 and np.array_equal(parts[1], g[:, 1])
    a = np.asfortranarray(np.ones((3, 4)))
    rows = np.arange(24.0).reshape(2, 12)
    got = batched.unravel_b(rows, a, "F")
    assert np.array_equal(got[1], np.reshape(rows[1], (4, 3)).T)


def _joined(x):
    M = np.reshape(x, (2, 3))
    return np.concatenate([np.concatenate([x[:1], x[1:] * x[:-1]]), np.concatenate([M, M ** 2], axis=-1).ravel(),
                           np.concatenate([M, np.tanh(M)], axis=None), np.concatenate(M * M)])


def test_jacobian_through_concatenate_is_batched_and_right():
    """np.concatenate's adjoint runs on the stack of cotangents
    (concatenate_adjoint_b, seq_cotangent_b: lists, an array's rows, axis
    -1 and None): central differences' values."""
    x = np.linspace(-0.9, 0.8, 6)
    eps = 1e-6
    fd = np.stack([(_joined(x + eps * e) - _joined(x - eps * e)) / (2 * eps) for e in np.eye(x.size)], axis=1)
    np.testing.assert_allclose(sg.jacobian(_joined)(x), fd, rtol=1e-6, atol=1e-8)


SCALE = 2.0


def _scaled_quartic(x, w):
    return SCALE * np.sum(w * x ** 4)


def test_hessian_fast_path_follows_rebinding_and_new_kinds():
    """sg.hessian's repeat calls skip binding the arguments (a cache per
    argument types): rebinding a global the code read, another pattern of
    axes of length 1 and a Python float must each give their own Hessian."""
    global SCALE
    h = sg.hessian(_scaled_quartic)
    x, w = RNG.normal(size=3), RNG.normal(size=3)
    expected = np.diag(12.0 * w * x ** 2)
    try:
        check_close(h(x, w), SCALE * expected, rtol=1e-12, atol=1e-12)
        check_close(h(x, w), SCALE * expected, rtol=1e-12, atol=1e-12)        # (the fast path)
        SCALE = -3.0
        check_close(h(x, w), SCALE * expected, rtol=1e-12, atol=1e-12)
    finally:
        SCALE = 2.0
    w1 = np.array([0.5])                        # (broadcast: another Program)
    check_close(h(x, w1), np.diag(SCALE * 12.0 * 0.5 * x ** 2), rtol=1e-12, atol=1e-12)
    check_close(h(x, w), SCALE * expected, rtol=1e-12, atol=1e-12)
    check_close(h(1.5, 2.0), SCALE * 12.0 * 2.0 * 1.5 ** 2, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="scalar-valued"):
        sg.hessian(lambda x: x * x)(x)
