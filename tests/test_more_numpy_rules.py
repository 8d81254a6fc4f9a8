"""Rules for NumPy functions a probe of published-style code found refused:
np.modf, np.frexp, np.meshgrid, np.divmod and the builtin divmod, the binary
ufuncs' methods (np.add/subtract/multiply/divide.outer, np.add/multiply/
maximum/minimum.reduce, np.add/multiply.accumulate), round() of a NumPy
scalar and `a.flat[i]` reads.

Each loss is checked through every path: compiled (`sg.grad`, with the
op-by-op fallback turned into an error so that the compiled code is what
runs), op by op on a `sg.GradientTape`, the two against each other
(round-off only), both against central finite differences
(tests/gradcheck.py) and, where autograd differentiates the same
operation, against autograd. The tangent rules: `sg.jvp` (compiled) and a
`sg.ForwardAccumulator` (op by op) of the operation itself, against the
finite-difference Jacobian times the tangent.
"""
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad, numerical_jacobian

PATH_RTOL, PATH_ATOL = 1e-12, 1e-14
AG_RTOL, AG_ATOL = 1e-10, 1e-12


def _rng(seed):
    return np.random.default_rng(seed)


def _compiled_grad(f, args, wrt):
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)      # compiled code, not the fallback
        g = sg.grad(f, wrt=wrt)(*args)
    return g if isinstance(g, tuple) else (g,)


def _tape_grad(f, args, wrt):
    vs = [sg.Variable(a) if i in wrt else a for i, a in enumerate(args)]
    with sg.GradientTape() as tape:
        out = f(*vs)
    gs = tape.gradient(out, [vs[i] for i in wrt])
    return tuple(np.asarray(g.numpy() if isinstance(g, sg.Tensor) else g) for g in gs)


def _numerical(f, args, i):
    def fi(xi):
        a = list(args)
        a[i] = xi
        return f(*a)
    return numerical_grad(fi, args[i])


def check_grad(f, args, wrt=None, ag=None):
    """f(*args) a scalar loss: its gradients wrt `wrt` on both paths, against
    each other, finite differences and autograd's of `ag` (same signature)."""
    wrt = tuple(range(len(args))) if wrt is None else wrt
    compiled = _compiled_grad(f, args, wrt)
    taped = _tape_grad(f, args, wrt)
    for i, gc, gt in zip(wrt, compiled, taped):
        check_close(gc, gt, rtol=PATH_RTOL, atol=PATH_ATOL)
        check_close(gc, _numerical(f, args, i))
        if ag is not None:
            check_close(gc, autograd.grad(ag, i)(*args), rtol=AG_RTOL, atol=AG_ATOL)


def check_jvp(op, args, wrt=None, seed=0):
    """op(*args) an array: its JVP along random tangents of the inputs in
    `wrt`, compiled (sg.jvp of op with the others fixed) and op by op
    (ForwardAccumulator), against the finite-difference Jacobian times the
    tangents."""
    wrt = tuple(range(len(args))) if wrt is None else wrt
    rng = _rng(seed)
    tans = {i: rng.normal(size=np.shape(args[i])) for i in wrt}
    expected = 0.0
    for i in wrt:
        def fi(xi, i=i):
            a = list(args)
            a[i] = xi
            return op(*a)
        jac = numerical_jacobian(fi, args[i])
        expected = expected + np.tensordot(jac, tans[i], axes=np.ndim(args[i]))

    if wrt == tuple(range(len(args))):
        partial = op
    elif len(args) == 2 and wrt == (0,):
        def partial(a):
            return op(a, args[1])
    else:
        assert len(args) == 2 and wrt == (1,)

        def partial(b):
            return op(args[0], b)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        _, tangent = sg.jvp(partial, tuple(args[i] for i in wrt), tuple(tans[i] for i in wrt))
    check_close(tangent, expected)

    ts = [sg.Variable(a) if i in wrt else a for i, a in enumerate(args)]
    with sg.ForwardAccumulator([ts[i] for i in wrt], [sg.constant(tans[i]) for i in wrt]) as acc:
        out = op(*ts)
    check_close(acc.jvp(out).numpy(), expected)


# ----------------------------------------------------------------------- modf, frexp

X = np.array([[1.3, -2.7, 0.4], [3.2, -0.6, 5.45]])      # away from integers and powers of 2
W = _rng(1).normal(size=X.shape)


def loss_modf(x):
    frac, whole = np.modf(x)
    return np.sum(frac * W) + np.sum(whole * x)


def ag_modf(x):
    return anp.sum((x - anp.trunc(x)) * W) + anp.sum(anp.trunc(x) * x)


def op_modf_frac(x):
    return np.modf(x)[0] * 2.0


def loss_frexp(x):
    m, e = np.frexp(x)
    return np.sum(m * W + e * x)


def op_frexp_mantissa(x):
    return np.frexp(x)[0]


def test_modf_grad():
    check_grad(loss_modf, (X,), ag=ag_modf)


def test_modf_jvp():
    check_jvp(op_modf_frac, (X,))


def test_frexp_grad():
    check_grad(loss_frexp, (X,))


def test_frexp_jvp():
    check_jvp(op_frexp_mantissa, (X,))


# -------------------------------------------------------------------- meshgrid

XA = np.array([1.3, -2.7, 0.4, 0.9])
YA = np.array([0.7, 1.9, -1.1])
ZA = np.array([[0.5, -0.3]])         # 2-d: meshgrid ravels it


def loss_mesh_xy(x, y):
    X_, Y_ = np.meshgrid(x, y)
    return np.sum(np.sin(X_) * Y_ * np.arange(X_.size).reshape(X_.shape))


def ag_mesh_xy(x, y):
    X_ = x[None, :] * anp.ones((len(y), 1))
    Y_ = y[:, None] * anp.ones((1, len(x)))
    return anp.sum(anp.sin(X_) * Y_ * np.arange(X_.size).reshape(X_.shape))


def loss_mesh_ij(x, y):
    X_, Y_ = np.meshgrid(x, y, indexing="ij")
    return np.sum(X_ ** 2 * Y_ * np.arange(X_.size).reshape(X_.shape))


def ag_mesh_ij(x, y):
    X_ = x[:, None] * anp.ones((1, len(y)))
    Y_ = y[None, :] * anp.ones((len(x), 1))
    return anp.sum(X_ ** 2 * Y_ * np.arange(X_.size).reshape(X_.shape))


def loss_mesh_sparse(x, y):
    X_, Y_ = np.meshgrid(x, y, sparse=True)
    return np.sum(np.cos(X_ * Y_))


def ag_mesh_sparse(x, y):
    return anp.sum(anp.cos(x[None, :] * y[:, None]))


def loss_mesh_three(x, y, z):
    A, B, C = np.meshgrid(x, y, z)       # 'xy': shape (len(y), len(x), z.size)
    return np.sum(A * B ** 2 * C * np.arange(A.size).reshape(A.shape))


def loss_mesh_one_used(x, y):
    X_, Y_ = np.meshgrid(x, y, indexing="xy")
    return np.sum(X_ * np.arange(X_.size).reshape(X_.shape))


def op_mesh(x, y):
    X_, Y_ = np.meshgrid(x, y)
    return X_ * 2.0 + Y_ * 3.0


def op_mesh_ij_sparse(x, y):
    X_, Y_ = np.meshgrid(x, y, indexing="ij", sparse=True)
    return X_ * Y_


def test_meshgrid_xy_grad():
    check_grad(loss_mesh_xy, (XA, YA), ag=ag_mesh_xy)


def test_meshgrid_ij_grad():
    check_grad(loss_mesh_ij, (XA, YA), ag=ag_mesh_ij)


def test_meshgrid_sparse_grad():
    check_grad(loss_mesh_sparse, (XA, YA), ag=ag_mesh_sparse)


def test_meshgrid_three_inputs_grad():
    check_grad(loss_mesh_three, (XA, YA, ZA))


def test_meshgrid_unused_output_grad():
    check_grad(loss_mesh_one_used, (XA, YA))


def test_meshgrid_jvp():
    check_jvp(op_mesh, (XA, YA))
    check_jvp(op_mesh_ij_sparse, (XA, YA))
    check_jvp(op_mesh, (XA, YA), wrt=(1,))


# ------------------------------------------------------------- ufunc.outer

A2 = np.array([[1.3, -2.7], [0.4, 0.9], [1.1, -0.8]])
BV = np.array([0.7, 1.9, -1.1, 0.6])
WO = _rng(2).normal(size=A2.shape + BV.shape)


def loss_add_outer(a, b):
    return np.sum(np.add.outer(a, b) ** 2 * WO)


def ag_add_outer(a, b):
    return anp.sum((a[..., None] + b) ** 2 * WO)


def loss_subtract_outer(a, b):
    return np.sum(np.subtract.outer(a, b) ** 2 * WO)


def ag_subtract_outer(a, b):
    return anp.sum((a[..., None] - b) ** 2 * WO)


def loss_multiply_outer(a, b):
    return np.sum(np.multiply.outer(a, b) * WO)


def ag_multiply_outer(a, b):
    return anp.sum(a[..., None] * b * WO)


def loss_divide_outer(a, b):
    return np.sum(np.divide.outer(a, b) * WO)


def ag_divide_outer(a, b):
    return anp.sum(a[..., None] / b * WO)


def loss_outer_scalar(a, b):
    return np.sum(np.multiply.outer(a, b) * np.arange(4.0))      # a 0-d operand


@pytest.mark.parametrize("loss, ag", [(loss_add_outer, ag_add_outer), (loss_subtract_outer, ag_subtract_outer),
                                      (loss_multiply_outer, ag_multiply_outer),
                                      (loss_divide_outer, ag_divide_outer)])
def test_ufunc_outer_grad(loss, ag):
    check_grad(loss, (A2, BV), ag=ag)
    check_grad(loss, (A2, BV), wrt=(0,), ag=ag)
    check_grad(loss, (A2, BV), wrt=(1,), ag=ag)


def test_ufunc_outer_scalar_operand_grad():
    check_grad(loss_outer_scalar, (np.array(1.7), BV))


def op_add_outer(a, b):
    return np.add.outer(a, b)


def op_subtract_outer(a, b):
    return np.subtract.outer(a, b)


def op_multiply_outer(a, b):
    return np.multiply.outer(a, b)


def op_divide_outer(a, b):
    return np.divide.outer(a, b)


@pytest.mark.parametrize("op", [op_add_outer, op_subtract_outer, op_multiply_outer, op_divide_outer])
def test_ufunc_outer_jvp(op):
    check_jvp(op, (A2, BV))
    check_jvp(op, (A2, BV), wrt=(0,))
    check_jvp(op, (A2, BV), wrt=(1,))


def test_other_ufunc_outer_is_refused_by_name():
    def loss(a, b):
        return np.sum(np.hypot.outer(a, b))
    # (the compiler's refusal falls back to the tape, which refuses too, naming it)
    with pytest.raises(sg.NoRuleError, match=r"np\.hypot\.outer"), pytest.warns(sg.PerformanceWarning):
        sg.grad(loss)(BV, BV)


# ---------------------------------------------------- ufunc.reduce, .accumulate

R3 = _rng(3).uniform(0.5, 2.0, size=(3, 4, 2))
WR = _rng(4).normal(size=(4, 2))


def loss_add_reduce(x):
    return np.sum(np.add.reduce(x) ** 2 * WR)           # axis=0 by default


def ag_add_reduce(x):
    return anp.sum(anp.sum(x, axis=0) ** 2 * WR)


def loss_add_reduce_axes(x):
    return np.sum(np.add.reduce(x, axis=(0, 2), keepdims=True) ** 2)


def ag_add_reduce_axes(x):
    return anp.sum(anp.sum(x, axis=(0, 2), keepdims=True) ** 2)


def loss_add_reduce_all(x):
    return np.add.reduce(x, axis=None) ** 2


def ag_add_reduce_all(x):
    return anp.sum(x) ** 2


def loss_multiply_reduce(x):
    return np.sum(np.multiply.reduce(x, axis=1) * WR[:3])


def ag_multiply_reduce(x):
    return anp.sum(anp.prod(x, axis=1) * WR[:3])


def loss_multiply_reduce_zero(x):
    return np.sum(np.multiply.reduce(x * np.array([0.0, 1.0, 1.0])[:, None, None]) * WR)


def loss_maximum_reduce(x):
    return np.sum(np.maximum.reduce(x, axis=2) * WR[:3, :2].sum())


def ag_maximum_reduce(x):
    return anp.sum(anp.max(x, axis=2) * WR[:3, :2].sum())


def loss_minimum_reduce(x):
    return np.sum(np.minimum.reduce(x) * WR)


def ag_minimum_reduce(x):
    return anp.sum(anp.min(x, axis=0) * WR)


def loss_add_accumulate(x):
    return np.sum(np.add.accumulate(x, axis=1) ** 2)


def ag_add_accumulate(x):
    return anp.sum(anp.cumsum(x, axis=1) ** 2)


def loss_multiply_accumulate(x):
    return np.sum(np.multiply.accumulate(x) * R3)         # axis=0 (autograd has no cumprod rule)


REDUCTIONS = [(loss_add_reduce, ag_add_reduce), (loss_add_reduce_axes, ag_add_reduce_axes),
              (loss_add_reduce_all, ag_add_reduce_all), (loss_multiply_reduce, ag_multiply_reduce),
              (loss_multiply_reduce_zero, None),      # (autograd's prod rule divides: NaN at the zero)
              (loss_maximum_reduce, ag_maximum_reduce),
              (loss_minimum_reduce, ag_minimum_reduce), (loss_add_accumulate, ag_add_accumulate),
              (loss_multiply_accumulate, None)]


@pytest.mark.parametrize("loss, ag", REDUCTIONS, ids=[r[0].__name__ for r in REDUCTIONS])
def test_ufunc_reduce_accumulate_grad(loss, ag):
    check_grad(loss, (R3,), ag=ag)


def test_maximum_reduce_ties_split_as_np_max():
    x = np.array([[1.0, 2.0], [1.0, 0.5], [0.3, 2.0]])

    def via_method(x):
        return np.sum(np.maximum.reduce(x) * np.array([1.0, 3.0]))

    def via_max(x):
        return np.sum(np.max(x, axis=0) * np.array([1.0, 3.0]))
    expected = sg.grad(via_max)(x)
    check_close(_compiled_grad(via_method, (x,), (0,))[0], expected, rtol=0, atol=0)
    check_close(_tape_grad(via_method, (x,), (0,))[0], expected, rtol=0, atol=0)
    check_close(expected, [[0.5, 1.5], [0.5, 0.0], [0.0, 1.5]], rtol=0, atol=0)


def op_add_reduce(x):
    return np.add.reduce(x)


def op_add_reduce_kd(x):
    return np.add.reduce(x, axis=(0, 2), keepdims=True)


def op_multiply_reduce(x):
    return np.multiply.reduce(x, axis=1)


def op_maximum_reduce(x):
    return np.maximum.reduce(x, axis=-1)


def op_minimum_reduce_all(x):
    return np.minimum.reduce(x, axis=None)


def op_add_accumulate(x):
    return np.add.accumulate(x, axis=2)


def op_multiply_accumulate(x):
    return np.multiply.accumulate(x, axis=1)


# The methods' default axis is 0 (np.sum's and np.cumsum's is None): each default-axis call too.

def op_multiply_reduce_default(x):
    return np.multiply.reduce(x)


def op_maximum_reduce_default(x):
    return np.maximum.reduce(x)


def op_minimum_reduce_default(x):
    return np.minimum.reduce(x, keepdims=True)


def op_add_accumulate_default(x):
    return np.add.accumulate(x)


def op_multiply_accumulate_default(x):
    return np.multiply.accumulate(x)


@pytest.mark.parametrize("op", [op_multiply_reduce_default, op_maximum_reduce_default, op_minimum_reduce_default,
                                op_add_accumulate_default, op_multiply_accumulate_default,
                                op_add_reduce, op_add_reduce_kd, op_multiply_reduce, op_maximum_reduce,
                                op_minimum_reduce_all, op_add_accumulate, op_multiply_accumulate])
def test_ufunc_reduce_accumulate_jvp(op):
    check_jvp(op, (R3,))


def test_reduce_where_is_refused():
    def loss(x):
        return np.add.reduce(x, axis=0, where=x > 1.0).sum()
    with pytest.raises(TypeError, match="where"), pytest.warns(sg.PerformanceWarning):
        sg.grad(loss)(R3)


# ---------------------------------------------------------------------- divmod

DX = np.array([[3.9, -8.1], [1.2, 9.6]])
DY = np.array([1.7, -2.3])


def loss_divmod_builtin(x, y):
    q, r = divmod(x, y)
    return np.sum(r ** 2 + q * x)


def ag_divmod(x, y):
    return anp.sum(anp.mod(x, y) ** 2 + anp.floor_divide(x, y) * x)


def loss_np_divmod(x, y):
    q, r = np.divmod(x, y)
    return np.sum(r * np.array([1.0, -2.0]) + q ** 2)


def ag_np_divmod(x, y):
    return anp.sum(anp.mod(x, y) * np.array([1.0, -2.0]) + anp.floor_divide(x, y) ** 2)


def loss_divmod_scalar(x, y):
    q, r = divmod(x[0, 0], 1.5)
    return r * y[0] + q


def test_divmod_grad():
    check_grad(loss_divmod_builtin, (DX, DY), ag=ag_divmod)
    check_grad(loss_np_divmod, (DX, DY), ag=ag_np_divmod)
    check_grad(loss_divmod_scalar, (DX, DY))


def op_np_divmod(x, y):
    q, r = np.divmod(x, y)
    return r


def op_divmod_builtin(x, y):
    q, r = divmod(x, y)
    return r * 2.0 + q


def test_divmod_jvp():
    check_jvp(op_np_divmod, (DX, DY))
    check_jvp(op_divmod_builtin, (DX, DY), wrt=(1,))
    check_jvp(op_divmod_builtin, (DX, DY), wrt=(0,))


# ------------------------------------------------------------------ round, np.round

def loss_round(x):
    return round(x[0] * 3.0, 2) * x[1] + round(x[2]) + x[2]


def ag_round(x):
    return anp.round(x[0] * 3.0, 2) * x[1] + anp.round(x[2]) + x[2]


def loss_np_round(x):
    return np.sum(np.round(x * 3.0, 2) * x + x)


def ag_np_round(x):
    return anp.sum(anp.round(x * 3.0, 2) * x + x)


def test_round_is_piecewise_constant_as_np_round():
    x = np.array([0.4123, -1.2345, 2.7])
    check_grad(loss_round, (x,), ag=ag_round)
    check_grad(loss_np_round, (x,), ag=ag_np_round)


def op_round(x):
    return np.round(x, 1) * x + round(x[0], 2)


def test_round_jvp():
    check_jvp(op_round, (np.array([0.4123, -1.2345, 2.7]),))


def test_round_of_a_tensor_array_is_refused_as_numpy_refuses():
    with pytest.raises(TypeError, match="__round__"):
        round(np.array([1.5, 2.5]), 1)
    with pytest.raises(TypeError, match="__round__"):
        round(sg.constant([1.5, 2.5]), 1)


# ------------------------------------------------------------------------ a.flat

def loss_flat(x):
    return x.flat[2] * 3.0 + np.sum(x.flat[1:4] ** 2) + np.sum(x.flat[[0, 5, 5]] * np.array([1.0, 2.0, 3.0]))


def ag_flat(x):
    r = anp.ravel(x)
    return r[2] * 3.0 + anp.sum(r[1:4] ** 2) + anp.sum(r[np.array([0, 5, 5])] * np.array([1.0, 2.0, 3.0]))


def test_flat_read_grad():
    check_grad(loss_flat, (X,), ag=ag_flat)


def op_flat(x):
    return x.flat[1:5] * 2.0 + x.flat[0]


def test_flat_read_jvp():
    check_jvp(op_flat, (X,))


def test_flat_write_into_a_tensor_is_refused_op_by_op():
    t = sg.constant(X)
    with pytest.raises(TypeError, match="immutable"):
        t.flat[1] = 2.0
