"""Probe: batched reverse sweeps (sg.hessian, sg.jacobian(sg.grad(f)),
sg.jacobian of vector functions in reverse and forced forward mode, and
tape.jacobian of an @sg.function) on small whole functions in the style of
published NumPy code, against central differences (of the gradient for
second order) and autograd where autograd supports the idiom. Not a test:
run

    PYTHONPATH=. python3 tests/tools/probe_batched.py [substring ...]

Input sizes vary so that the batch size B (inputs for a Hessian, outputs
for a reverse Jacobian) equals and differs from the lengths of the lists,
tuples, axes and loops inside the function: where examples and entries are
paired wrongly without a word. Each idiom is a module-level function of one
float vector `v` returning an array (the compiler reads its source;
autograd runs it with `np` swapped for autograd.numpy); its scalar form
`np.sum(np.sin(y) * (1 + y))` (y its output) gives the Hessians."""
import math
import sys
import traceback
import warnings

import numpy as np

import srcgrad as sg
import srcgrad.jacobians as sgj

SIZES = (2, 3, 4, 5, 6)
C22 = np.array([[1.0, 2.0], [3.0, 4.0]])


# -------------------------------------------------------------- helpers the idioms call

def _sq(a):
    return a * a


def _pair(a, b):
    return [a * b, a - b]


def _rows(v):
    return [v * 2.0, np.sin(v)]


@sg.custom_gradient
def _cube(a):
    def back(g):
        return g * 3.0 * a * a
    return a ** 3, back


class _Model:
    def __init__(self, n):
        self.w = np.linspace(0.5, 1.5, n)
        self.b = 0.3

    def __call__(self, v):
        return np.tanh(self.w * v + self.b) * v


# -------------------------------------------------------------- idioms (v: 1-D, size >= 2)

def list_scalars_stack(v):
    return np.stack([v[0] * v[1], v[1], v[0] ** 2])


def list_scalars_array(v):
    return np.array([v[0], v[1] * v[0], 2.0])


def nested_array(v):
    return np.array([[v[0], -v[1]], [v[1] * v[0], 1.0]])


def nested_stack(v):
    return np.stack([[v[0], v[1]], [v[1] * 3.0, v[0]]]) * C22


def nested_array_n(v):
    return np.array([[v[i] * v[j] for j in range(len(v))] for i in range(2)])


def tuple_stack(v):
    return np.stack((v[0] * v[-1], v[1] ** 2))


def list_arrays_stack(v):
    return np.stack([v, v * v, np.cos(v)])


def list_arrays_stack_axis1(v):
    return np.stack([v, v ** 2], axis=1)


def list_arrays_array(v):
    return np.array([v * 2.0, v ** 2])


def concat_mixed(v):
    return np.concatenate([[v[0], v[1]], v * 2.0, [1.0]])


def concat_arrays(v):
    return np.concatenate([v[::-1], v ** 2, v[:1]])


def hstack_mixed(v):
    return np.hstack([[v[0], 1.0], v[1:] ** 2])


def vstack_rows(v):
    return np.vstack([v, v ** 2, np.sin(v)])


def vstack_scalars(v):
    return np.vstack([[v[0], v[1]], [v[1] ** 2, v[0] * v[1]]])


def dict_arrays(v):
    d = {"a": v * 2.0, "b": v ** 2}
    d["c"] = d["a"] * d["b"]
    return d["c"] + d["a"]


def dict_scalars(v):
    d = {"x": v[0], "y": v[1]}
    return np.array([d["x"] * d["y"], d["y"] ** 2])


def assign_loop(v):
    out = np.zeros(len(v))
    for i in range(len(v)):
        out[i] = v[i] ** 2 + v[0]
    return out


def assign_loop_fixed2(v):
    out = np.zeros(2)
    for i in range(2):
        out[i] = v[i] * v[1 - i]
    return out


def assign_2d(v):
    n = len(v)
    out = np.zeros((n, 2))
    for i in range(n):
        out[i, 0] = v[i] ** 2
        out[i, 1] = v[i] * v[0]
    return out


def assign_columns(v):
    n = len(v)
    out = np.zeros((n, 3))
    for k in range(3):
        out[:, k] = v ** (k + 1)
    return out


def assign_rows_from_list(v):
    out = np.zeros((2, 2))
    out[0] = [v[0], v[1] ** 2]
    out[1] = [v[1] * v[0], 1.0]
    return out


def add_at(v):
    out = np.zeros(3)
    idx = np.array([0, 1, 0, 2, 1, 0])[: len(v)]
    np.add.at(out, idx, v ** 2)
    return out


def append_loop_stack(v):
    rows = []
    for i in range(len(v)):
        rows.append(v[i] * v)
    return np.stack(rows)


def append_loop_scalars(v):
    xs = []
    for i in range(2):
        xs.append(v[i] ** 2)
    return np.array(xs)


def append_loop_pairs(v):
    xs = []
    for i in range(len(v) - 1):
        xs.append([v[i], v[i + 1] * v[i]])
    return np.array(xs)


def reverse_slice(v):
    return v[::-1] * v


def int_index_repeated(v):
    idx = np.array([0, 0, 1, len(v) - 1, 1])
    return v[idx] ** 2 * v[idx[::-1]]


def bool_mask(v):
    return v[v > 0.0] ** 2


def where_mask(v):
    return np.where(v > 0.5, v ** 2, np.sin(v))


def reshape_transpose(v):
    a = np.concatenate([v, v ** 2]).reshape(2, len(v))
    return (a.T @ a).ravel()


def swap_move(v):
    a = np.stack([v, v * v, v + 1.0])[:, :, None] * np.ones((1, 1, 2))
    return np.moveaxis(np.swapaxes(a, 0, 1), -1, 0).ravel() * 1.5


def broadcast_row_col(v):
    return (v[None, :] * v[:, None] + v.reshape(1, -1) ** 2).ravel()


def reduce_axis_keepdims(v):
    a = np.outer(v, v ** 2)
    return np.sum(a, axis=0, keepdims=True).ravel() + np.mean(a, axis=1)


def max_min(v):
    a = np.outer(v, np.sin(v))
    return np.array([np.max(a), np.min(v)]) + np.max(a, axis=0)[:2]


def sort_cumsum_diff(v):
    return np.concatenate([np.sort(v ** 3), np.cumsum(v * v), np.diff(v ** 2)])


def clip_where(v):
    return np.clip(v ** 2, 0.1, 0.8) + np.where(v > 0.0, v, 0.0)


def matmul_1d_2d(v):
    A = np.outer(v, np.arange(1.0, len(v) + 1))
    return A @ v + v @ A


def einsum_idiom(v):
    A = np.outer(v, v) + np.eye(len(v))
    return np.einsum("ij,j->i", A, v) + np.einsum("ii", A)


def linalg_solve(v):
    A = np.outer(v, v) + 3.0 * np.eye(len(v))
    return np.linalg.solve(A, v ** 2)


def linalg_inv_det(v):
    A = np.outer(v, v) + 2.0 * np.eye(len(v))
    return np.linalg.inv(A).ravel() * np.linalg.det(A)


def outer_trace(v):
    A = np.outer(v, v ** 2)
    return A.ravel() + np.trace(A)


def python_floats(v):
    s = 0.5
    t = 2.0 * s + float(len(v))
    return v * t + s * v ** 2


def helper_calls(v):
    a, b = _pair(v[0], v[1])
    return np.stack([_sq(a), b, _sq(v[-1])])


def helper_rows(v):
    return np.stack(_rows(v))


def closure_lambda(v):
    k = 1.5
    f = lambda a: a * k + a ** 2    # noqa: E731

    def g(a):
        return np.sin(a) * k
    return np.array([f(v[0]), g(v[1])])


def while_loop(v):
    y = v
    i = 0
    while i < 3:
        y = np.sin(y) * v
        i += 1
    return y


def checkpointed_loop(v):
    y = v
    for t in sg.checkpointed(range(4), snapshots=2):
        y = np.sin(y) + 0.5 * y * v
    return y


def custom_grad(v):
    return _cube(v) + v


_MODELS = {n: _Model(n) for n in range(1, 8)}


def method_self(v):
    m = _MODELS[len(v)]
    return m(v)


def list_of_rows_array(v):
    return np.array([[v[0], v[1]], [v[1], v[0]], [v[0] * v[1], 2.0]])


def scalars_loop_array(v):
    out = []
    for i in range(len(v)):
        out.append(v[i] * v[0])
    return np.array(out)


def nested_arrays_array(v):
    return np.array([[v, v ** 2], [v * 3.0, np.cos(v)]])


def stack_list_of_lists_n(v):
    n = len(v)
    return np.stack([[v[i], v[(i + 1) % n] ** 2] for i in range(n)])


def tuple_unpack(v):
    a, b = v[0], v[1]
    t = (a * b, a + b)
    return np.array(t) ** 2


def array_of_rows_n(v):
    return np.array([v[i] * v for i in range(len(v))])


def concat_pieces_n(v):
    return np.concatenate([v[i] * v[: i + 1] for i in range(len(v))])


def builtin_sum_list(v):
    xs = [v[i] ** 2 for i in range(len(v))]
    return np.array([sum(xs), xs[0] * xs[-1]])


def zip_enumerate(v):
    out = []
    for k, (a, b) in enumerate(zip(v[:-1], v[1:])):
        out.append(a * b + k)
    return np.array(out)


def helper_tuple_unpack(v):
    a, b = _pair(v[0], v[-1])
    c, d = _pair(a, b)
    return np.stack([a, b, c, d])


def dict_of_lists(v):
    d = {"p": [v[0], v[1]], "q": [v[1] ** 2, v[0] * v[1]]}
    return np.array(d["p"]) * np.array(d["q"])


def assign_row_from_list(v):
    n = len(v)
    out = np.zeros((n, 2))
    for i in range(n):
        out[i, :] = [v[i], v[i] * v[0]]
    return out


def prod_cumprod(v):
    return np.concatenate([[np.prod(v)], np.cumprod(v)])


def tile_repeat_kron(v):
    return np.concatenate([np.tile(v, 2), np.repeat(v, 2), np.kron(v, v[:2])])


def builtin_max_min(v):
    xs = [v[0] ** 2, v[1], np.sin(v[-1])]
    return np.array([max(xs), min(xs), max(v[0], v[1])])


def split_halves(v):
    a, b = np.array_split(v, 2)
    return np.concatenate([a * np.sum(b), b ** 2])


def list_slices_stack(v):
    xs = [v[i] ** 2 for i in range(len(v))]
    return np.stack(xs[1:] + xs[:1]) * np.stack(xs[::-1])


def list_plus_repeat(v):
    xs = [v[0]] + [v[1]] * 2
    ys = [v[-1] * v[0]] * len(v)
    return np.array(xs + ys)


def list_extend(v):
    xs = [v[0]]
    xs.extend([v[1] ** 2, v[0] * v[1]])
    return np.array(xs)


def sliding_windows(v):
    return np.stack([v[i:i + 2] for i in range(len(v) - 1)]) ** 2


def polyval_list(v):
    return np.polyval([v[0], v[1], 1.0], v)


def dot_list(v):
    return np.array([np.dot([v[0], v[1]], [v[1], 2.0]), np.linalg.norm([v[0], v[1]])])


def norm_axis(v):
    A = np.outer(v, v ** 2) + 1.0
    return np.linalg.norm(A, axis=0) + np.linalg.norm(A, axis=1)


def column_stack_dstack(v):
    return np.concatenate([np.column_stack([v, v ** 2]).ravel(), np.dstack([v, np.sin(v)]).ravel()])


def block_matrix(v):
    a = np.outer(v[:2], v[:2])
    return np.block([[a, a * 2.0], [np.eye(2), a ** 2]]).ravel()


def maximum_lists(v):
    return np.maximum(v ** 2, 0.3) + np.minimum(v, [0.2] * len(v))


def fib_tuple_state(v):
    a, b = v[0], v[1]
    for _ in range(len(v)):
        a, b = b, a * 0.5 + b * v[0]
    return np.array([a, b])


def conditional_append(v):
    xs = []
    for i in range(len(v)):
        if i % 2 == 0:
            xs.append(v[i] ** 2)
        else:
            xs.append(v[i] * v[0])
    return np.array(xs)


def asarray_list(v):
    return np.asarray([v[0] * v[1], v[-1]]) * np.asarray([[v[0]], [v[1]]])


def methods_keepdims(v):
    A = np.outer(v, v)
    return (A.sum(axis=0, keepdims=True) * A.mean(axis=1, keepdims=True)).ravel() + A.max(axis=1)


def stack_list_of_scalars_n(v):
    return np.stack([v[i] * v[(i + 1) % len(v)] for i in range(len(v))])


def stack_list_of_pairs_axis1(v):
    return np.stack([[v[0], v[1]], [v[1] * v[0], v[0] ** 2]], axis=1)


def array_of_2d_list_n(v):
    n = len(v)
    return np.array([[v[i] * v[j] for j in range(n)] for i in range(n)])


def einsum_outer_trace(v):
    A = np.einsum("i,j->ij", v, v ** 2)
    return np.einsum("ij,jk->ik", A, A).ravel() + np.einsum("ii->", A)


def solve_matrix_rhs(v):
    n = len(v)
    A = np.outer(v, v) + 3.0 * np.eye(n)
    B = np.stack([v, v ** 2], axis=1)
    return np.linalg.solve(A, B).ravel()


def slogdet_pinv(v):
    A = np.outer(v, v) + 2.0 * np.eye(len(v))
    sign, logdet = np.linalg.slogdet(A)
    return np.linalg.pinv(A).ravel() * logdet


def nested_list_in_loop(v):
    rows = []
    for i in range(2):
        rows.append([v[i], v[i] ** 2, v[0] * v[1]])
    return np.array(rows)


def setitem_list_elements(v):
    xs = [0.0] * len(v)
    for i in range(len(v)):
        xs[i] = v[i] * v[0]
    return np.array(xs)


def interp_sorted(v):
    return np.interp(np.array([0.2, 0.5]), np.array([0.0, 0.4, 1.0]), np.array([v[0], v[1], v[0] * v[1]]))


# ---- named lists holding constants, passed to rules (their cotangent: one (B, len) array)

def lc_reductions(v):
    xs = [v[0], 2.0, v[1] * v[0]]
    return np.array([np.sum(xs), np.mean(xs), np.prod(xs), np.max(xs), np.linalg.norm(xs)])


def lc_elementwise(v):
    xs = [v[0], 2.0, v[1] * v[0]]
    return np.exp(xs) * np.array([1.0, 2.0, 3.0]) + np.maximum(xs, 0.5) + np.clip(xs, -0.5, 0.7)


def lc_scans(v):
    xs = [v[0], 2.0, v[1] * v[0]]
    return np.concatenate([np.cumsum(xs), np.sort(xs), np.diff(xs)])


def lc_where(v):
    xs = [v[0], 2.0, v[1] * v[0]]
    ys = [v[1], v[0] ** 2, 1.0]
    return np.where([True, False, True], xs, ys) * v[0]


def lc_outer_einsum(v):
    xs = [v[0], 2.0]
    return np.concatenate([np.outer(xs, v).ravel(), np.einsum("i,i->", xs, [v[1], v[0]])[None]])


def lc_matmul_2d(v):
    A = [[v[0], 1.0], [v[1], v[0] * v[1]]]
    return np.matmul(A, v[:2]) + np.dot(v[:2], A)


def lc_solve(v):
    A = np.array([[2.0, v[0]], [v[1], 3.0]])
    return np.linalg.solve(A, [v[0], 2.0])


def lc_polyval_interp(v):
    return np.concatenate([np.polyval([v[0], 2.0, v[1]], v), np.interp([0.25, 0.75], [0.0, 0.5, 1.0], [v[0], 1.0, v[1]])])


def lc_concat_const(v):
    return np.concatenate([v, [1.0], [v[0] * 2.0, 3.0]]) * np.concatenate([[2.0], v[::-1], [1.0, v[1]]])


def lc_times_array(v):
    xs = [v[0], 2.0]
    return (np.asarray(xs) * v[:2]) + np.multiply(xs, v[:2]) + np.divide(xs, 1.0 + v[:2] ** 2)


def lc_tuple_const(v):
    t = (v[0] * v[1], 1.0)
    return np.dot(t, t) * v


def lc_nested_const(v):
    A = [[v[0], 1.0], [2.0, v[1]]]
    return np.linalg.det(A) * v + np.trace(A) + np.sum(np.linalg.inv(A))


def lc_list_len_n(v):
    xs = [v[i] if i % 2 else 1.0 for i in range(len(v))]
    return np.dot(xs, xs) * v + np.matmul(xs, v)


def lc_helper_list(v):
    return np.dot(_pair(v[0], 2.0), _pair(v[1], v[0]))


# ---- more containers, indexing and linear algebra

def builtins_scalars(v):
    xs = [v[0] * v[1], v[1] ** 2, math.sin(v[0])]
    return np.array([sum(xs), abs(v[1]) * xs[0], max(xs) * min(v[0], 0.2)])


def take_along(v):
    idx = np.argsort(v)
    A = np.outer(v, v)
    return np.concatenate([np.take(v, idx) * v, np.take_along_axis(A, idx[None, :], axis=1).ravel()])


def add_at_2d(v):
    out = np.zeros((3, 2))
    rows = np.array([0, 2, 0, 1, 2, 0])[: len(v)]
    np.add.at(out, (rows, rows % 2), v * v[0])
    return out.ravel()


def mask_assign(v):
    out = v * 1.0
    out[v > 0.0] = v[v > 0.0] ** 2
    return out * v


def eigh_cholesky_qr(v):
    A = np.outer(v, v) + 2.0 * np.eye(len(v))
    w = np.linalg.eigvalsh(A)
    L = np.linalg.cholesky(A)
    Q, R = np.linalg.qr(A)
    return np.concatenate([w, L.ravel(), np.abs(np.diag(R))])


def tensordot_kron(v):
    A = np.outer(v, v[:2])
    return np.concatenate([np.tensordot(A, v[:2], axes=1), np.kron(v[:2], [1.0, v[0]])])


def list_of_dicts(v):
    ds = [{"a": v[i], "b": v[i] ** 2} for i in range(len(v))]
    return np.array([d["a"] * d["b"] for d in ds])


def dict_of_tuples(v):
    d = {"p": (v[0], v[1] * 2.0), "q": (v[-1], 1.0)}
    return np.array([d["p"][0] * d["q"][0], d["p"][1] + d["q"][1]])


def tuple_of_lists(v):
    t = ([v[0], v[1]], [v[1] ** 2, 2.0])
    return np.array(t[0]) * np.array(t[1]) + np.dot(t[0], t[1])


def zip_two_lists(v):
    xs = [v[i] for i in range(len(v))]
    ys = [v[i] ** 2 for i in range(len(v))]
    return np.array([a * b for a, b in zip(xs, ys)])


def list_arrays_transposed(v):
    xs = [v * 2.0, v ** 2]
    return np.array(xs[::-1]).T.ravel() * np.array(xs).T.ravel()


def helper_returns_tuple_indexed(v):
    r = _pair(v[0], v[1])
    return np.array([r[0] * r[1], r[1]])


def closure_constant(v):
    W = np.linspace(1.0, 2.0, len(v))

    def apply(a):
        return np.tanh(W * a)
    return apply(v) * apply(v ** 2)


def vstack_consts_matmul(v):
    A = np.vstack([[v[0], 1.0], [2.0, v[1]]])
    return A @ np.array([v[1], 1.0]) + np.array([1.0, v[0]]) @ A


def stack_lists_of_arrays(v):
    return np.stack([[v, v ** 2], [np.sin(v), v * 3.0]]).ravel()


def reshape_pairs(v):
    a = np.concatenate([v, v ** 2]).reshape(-1, 2)
    return (a[:, 0] * a[:, 1]) + np.sum(a, axis=1)


def cumsum_axis_2d(v):
    A = np.outer(v, v ** 2)
    return np.concatenate([np.cumsum(A, axis=0).ravel(), np.diff(A, axis=1).ravel(), np.cumprod(v)])


def sort_axis_max_axis(v):
    A = np.outer(v, np.sin(v))
    return np.concatenate([np.sort(A, axis=1).ravel(), np.max(A, axis=1), np.min(A, axis=0, keepdims=True).ravel()])


def list_comp_nested_pairs(v):
    return np.array([[v[i] * v[j], v[j]] for i in range(2) for j in range(len(v))])


# ---- loops and stacks inside helpers (their split sweeps differentiated again)

def _while_helper(v):
    y = v
    k = 0
    while k < 3:
        y = np.sin(y) * v + 0.1
        k += 1
    return y


def while_in_helper(v):
    return _while_helper(v) * v[0]


def _ckpt_helper_list(v):
    ys = []
    y = v
    for t in sg.checkpointed(range(3), snapshots=1):
        y = np.cos(y) * v
        ys.append(y[0])
    return np.array(ys), y


def checkpointed_list_in_helper(v):
    a, b = _ckpt_helper_list(v)
    return np.concatenate([a, b])


def _append_helper(v):
    rows = []
    for i in range(len(v)):
        rows.append([v[i], v[i] * v[0]])
    return rows


def rows_from_helper(v):
    return np.array(_append_helper(v)).ravel() ** 2


def _setitem_helper(v):
    out = np.zeros((len(v), 2))
    for i in range(len(v)):
        out[i, :] = [v[i] ** 2, 1.0]
    return out


def setitem_in_helper(v):
    return (_setitem_helper(v) @ np.array([1.0, v[0]])) * v


def custom_in_loop(v):
    y = v
    for _ in range(2):
        y = _cube(y) * 0.5 + v
    return y


def nested_helpers(v):
    return _while_helper(np.stack(_rows(v))[0]) + helper_calls(v)[0]


IDIOMS = [f for name, f in list(globals().items()) if callable(f) and not name.startswith("_")
          and getattr(f, "__module__", None) == __name__ and name not in ("main", "scalar_of")]


# -------------------------------------------------------------- checks

def scalar_of(g):
    """The scalar form of idiom g, compiled by srcgrad as a closure."""
    def s(v):
        y = g(v)
        return np.sum(np.sin(y) * (1.0 + y))
    s.__name__ = "scalar_" + g.__name__
    return s


def fd(f, x, eps=1e-6):
    y0 = np.asarray(f(x.copy()), dtype=float)
    J = np.zeros(y0.shape + x.shape)
    for i in range(x.size):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        J[..., i] = (np.asarray(f(xp), dtype=float) - np.asarray(f(xm), dtype=float)) / (2 * eps)
    return J


def _autograd(kind, g, x):
    import autograd
    import autograd.numpy as anp
    me = sys.modules[__name__]
    saved = me.np
    me.np = anp
    try:
        if kind == "hessian":
            s = lambda v: anp.sum(anp.sin(g(v)) * (1.0 + g(v)))    # noqa: E731
            return np.asarray(autograd.hessian(s)(x))
        return np.asarray(autograd.jacobian(g)(x))
    finally:
        me.np = saved


def _tape_jacobian(g, x):
    fg = sg.function(g)
    xt = sg.Tensor(x.copy()) if hasattr(sg, "Tensor") else x.copy()
    with sg.GradientTape(persistent=True) as tape:
        tape.watch(xt)
        y = fg(xt)
    return np.asarray(tape.jacobian(y, xt, unconnected_gradients="zero"))


def _forced_forward(g, x):
    saved = sgj.FORWARD_MIN_OUT, sgj.FORWARD_BELOW
    sgj.FORWARD_MIN_OUT, sgj.FORWARD_BELOW = 0, float("inf")
    try:
        jac = sg.jacobian(g)
        jac(x)
        return jac(x)       # (the second call, same shapes: forward mode)
    finally:
        sgj.FORWARD_MIN_OUT, sgj.FORWARD_BELOW = saved


def close(a, b, rtol=1e-5, atol=1e-6):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=atol)


def probe(g, n):
    """{path: "ok" | "WRONG ..." | "error ..." | "n/a"} for idiom g at size n."""
    x = np.linspace(0.35, 1.3, n) * np.array([1.0, -1.0] * n)[:n]
    s = scalar_of(g)
    try:
        y = np.asarray(g(x.copy()))
    except Exception as exc:
        return {"plain": "n/a (%s)" % type(exc).__name__}
    try:
        expected_h = fd(sg.grad(s), x)
    except Exception as exc:        # (sg.grad refuses: its error is the finding; autograd is the oracle)
        res0 = "error %s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:150])
        try:
            expected_h = _autograd("hessian", g, x)
        except Exception:
            return {"grad": res0}
    expected_j = fd(g, x)
    res = {}
    for kind, expected, auto in (("hessian", expected_h, "hessian"), ("jacobian", expected_j, "jacobian")):
        try:
            a = _autograd(auto, g, x)
            res["autograd_" + kind] = "ok" if close(a, expected) else "DISAGREES"
            if not close(a, expected):
                expected = a if kind == "hessian" else expected
        except Exception as exc:
            res["autograd_" + kind] = "n/a (%s)" % type(exc).__name__
    paths = {
        "hessian": (lambda: sg.hessian(s)(x), expected_h),
        "jac_of_grad": (lambda: sg.jacobian(sg.grad(s))(x), expected_h),
        "jacobian_rev": (lambda: sg.jacobian(g)(x), expected_j),
        "jacobian_fwd": (lambda: _forced_forward(g, x), expected_j),
        "tape_jacobian": (lambda: _tape_jacobian(g, x), expected_j),
    }
    for name, (run, expected) in paths.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = run()
            if close(got, expected):
                res[name] = "ok"
            else:
                got = np.asarray(got)
                res[name] = "WRONG shape %s vs %s, max err %s" % (
                    got.shape, expected.shape,
                    np.max(np.abs(got - expected)) if got.shape == expected.shape else "-")
        except Exception as exc:
            res[name] = "error %s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:150] if str(exc) else "")
            if "-v" in sys.argv:
                traceback.print_exc()
    res["B"] = "n=%d out=%d" % (n, y.size)
    return res


def main(argv):
    wanted = [a for a in argv if not a.startswith("-")]
    counts = {}
    for g in IDIOMS:
        if wanted and not any(w in g.__name__ for w in wanted):
            continue
        for n in SIZES:
            res = probe(g, n)
            for k, v in res.items():
                if k in ("B", "plain"):
                    continue
                counts.setdefault(k, {}).setdefault(v.split()[0], 0)
                counts[k][v.split()[0]] += 1
            bad = {k: v for k, v in res.items() if k != "B" and not v.startswith(("ok", "n/a"))}
            print("%-26s %-12s %s" % (g.__name__, res.get("B", ""), "ok" if not bad else bad), flush=True)
    print()
    for k, c in counts.items():
        print("%-18s %s" % (k, c))


if __name__ == "__main__":
    main(sys.argv[1:])
