"""Probe: program-level idioms through forward mode op by op
(`op_by_op.jvp`, and a `ForwardAccumulator` around the plain call) against
central differences, the compiled `sg.jvp` and autograd's make_jvp (where
autograd supports the idiom). Not a test: run

    PYTHONPATH=. python3 tests/tools/probe_forward_idioms.py [substring ...]

Each idiom is a module-level function of one float vector (the compiler
reads its source; autograd runs it with `np` swapped for autograd.numpy)."""
import sys
import traceback
import warnings

import numpy as np

import srcgrad as sg
from srcgrad import op_by_op

X = np.array([0.3, -0.7, 1.1, 0.45, -1.3, 0.9])
T = np.array([1.0, 0.5, -0.2, 0.3, -0.8, 0.6])


def _helper_apply(g, v):
    return g(v) * 2.0


def _noisy(v):
    rng = np.random.default_rng(3)
    return v * rng.normal(size=v.shape)


def _scale(v, s=2.0):
    return v * s


# -------------------------------------------------------------- idioms

def nested_array(v):
    return np.array([[v[0], -v[1]], [v[1] * v[2], 1.0]])


def nested_stack(v):
    return np.stack([[v[0], v[1]], [v[2], v[3]]])


def nested_concat(v):
    return np.concatenate([[v[0], v[1]], [v[2] * 2.0], v[3:]])


def nested_hstack(v):
    return np.hstack([[v[0], 1.0], v[2:4]])


def nested_vstack(v):
    return np.vstack([[v[0], v[1]], [v[2], v[3]]])


def nested_column_stack(v):
    return np.column_stack([[v[0], v[1]], [v[2], v[3]]])


def asarray_list(v):
    return np.asarray([v[0] ** 2, v[1], 3.0])


def array_of_arrays(v):
    return np.array([v[:2], v[2:4] * v[4]])


def array_tuple(v):
    return np.array((v[0], (v[1] + v[2])))


def array_dtype(v):
    return np.array([v[0], v[1]], dtype=float) * v[2]


def dict_values(v):
    d = {"a": v[0] * v[1], "b": np.sin(v[2:])}
    return d["a"] * d["b"]


def dict_return(v):
    return {"a": v[0] * 2.0, "b": np.exp(v[1:3])}


def tuple_return(v):
    return v[0] * v[1], np.cos(v[2:4])


def tuple_unpack(v):
    a, b = (v[0], v[1] ** 2)
    return np.array([a * b, a + b])


def setitem_loop(v):
    out = np.zeros(3)
    for i in range(3):
        out[i] = v[i] * v[i + 1]
    return out


def setitem_2d(v):
    out = np.zeros((2, 3))
    out[0] = v[:3]
    out[1, :] = v[3:] ** 2
    out[:, 1] *= v[0]
    return out


def setitem_row_view(v):
    out = np.ones((2, 3))
    row = out[1]
    row[0] = v[0]
    row[2] = v[1] * v[2]
    return out * 2.0


def setitem_empty_like(v):
    out = np.empty_like(v)
    out[:] = np.tanh(v)
    out[0] = v[5]
    return out


def setitem_then_read(v):
    out = np.zeros(4)
    out[0] = v[0]
    for i in range(1, 4):
        out[i] = out[i - 1] * v[i] + 1.0
    return out


def setitem_fancy(v):
    out = np.zeros(6)
    out[[0, 2, 4]] = v[:3]
    out[np.array([1, 3])] = v[3:5] * 2.0
    return out


def setitem_mask(v):
    out = np.zeros(6)
    out[v > 0] = v[v > 0] ** 2
    return out


def add_at(v):
    out = np.zeros(3)
    np.add.at(out, [0, 1, 0, 2, 2, 2], v)
    return out * v[:3]


def subtract_at(v):
    out = np.ones(3)
    np.subtract.at(out, [0, 0, 1], v[:3] ** 2)
    return out


def inplace_add(v):
    out = np.zeros(6)
    out += v
    out *= v
    out -= 1.0
    out /= 2.0
    return out


def inplace_slice(v):
    out = np.ones(6)
    out[1:4] += v[:3]
    out[::2] *= v[3:]
    return out


def inplace_on_copy(v):
    y = v.copy()
    y[1] = v[0] * 3.0
    y *= 2.0
    return y


def inplace_full(v):
    out = np.full(3, 2.0)
    out[1] = v[0]
    return out * v[:3]


def list_append(v):
    xs = []
    for i in range(3):
        xs.append(v[i] * v[i + 3])
    return np.array(xs)


def list_extend(v):
    xs = [v[0]]
    xs.extend([v[1] * 2.0, v[2]])
    xs += [v[3]]
    return np.stack(xs)


def list_sum(v):
    xs = [v[i] ** 2 for i in range(4)]
    return sum(xs)


def list_comprehension_array(v):
    return np.array([np.sin(v[i]) for i in range(6)])


def transpose_T(v):
    m = v.reshape(2, 3)
    return m.T @ m


def methods(v):
    m = v.reshape(2, 3)
    return m.sum(axis=0) * m.mean() + m.max(axis=1).sum() + m.prod()


def methods_more(v):
    m = v.reshape((3, 2))
    return np.concatenate([m.cumsum(axis=0).ravel(), m.std(axis=0), m.var(axis=1), m.flatten() ** 2,
                           m.clip(-0.5, 0.5).ravel(), m.dot(np.ones(2)), m.T.reshape(-1),
                           m.swapaxes(0, 1).ravel(), m.squeeze().ravel(), m.trace() * np.ones(1),
                           np.atleast_1d(m.min())])


def python_scalars(v):
    return 2 * v + 3 - v / 4.0 + 1.5 ** v[0] + v[1] ** 2 + abs(v[2]) + max(v[3], 0.1)


def python_float_cast(v):
    s = 0.0
    for i in range(6):
        s = s + v[i] * (i + 1)
    return s * 1.0


def complex_input(v):
    z = v[:3] + 1j * v[3:]
    return np.abs(z * z + np.conj(z)) + np.angle(z)


def complex_exp(v):
    z = np.exp(1j * v[:3]) * v[3:]
    return np.real(z) + np.imag(z) ** 2


def complex_fft(v):
    return np.abs(np.fft.fft(v)) ** 2


def complex_astype(v):
    z = v.astype(complex)
    return np.real(z * z * 1j)


def integer_cast(v):
    i = int(np.floor(v[2] * 2.0)) % 3
    return v[i] * v + v.astype(np.int64) * v


def round_floor(v):
    return np.floor(v * 3.0) * v + np.round(v, 1) * v + np.sign(v) * v


def where_op(v):
    return np.where(v > 0, v ** 2, -v) + np.where(v < 0.5, 1.0, v)


def where_nested(v):
    return np.where(v > 0, np.where(v > 0.5, v, 2.0 * v), np.exp(v))


def maximum_op(v):
    return np.maximum(v, 0.0) + np.minimum(v[::-1], v) + np.fmax(v, 0.2) + np.clip(v, -0.5, 0.5)


def tuple_from_helper(v):
    a, b = np.divmod(v, 0.7)
    return a * v + b


def closure_helper(v):
    k = v[0]
    return _helper_apply(lambda u: u * k + np.sin(u), v)


def closure_def(v):
    k = v[1] * 2.0

    def inner(u):
        return u * k
    return inner(v) + _helper_apply(inner, v)


def lambda_map(v):
    return np.array(list(map(lambda u: u ** 2, v)))


def random_helper(v):
    return _noisy(v) + v ** 2


def random_inline(v):
    rng = np.random.default_rng(0)
    noise = rng.normal(size=6)
    return v * noise + rng.uniform()


def default_arg_helper(v):
    return _scale(v) + _scale(v, v[0])


def matmul_ops(v):
    a = v.reshape(2, 3)
    return (a @ a.T).ravel() + np.dot(a[0], a[1]) + np.einsum("ij,ij->i", a, a).sum()


def linalg_ops(v):
    a = np.diag(v[:3]) + 2.0 + np.outer(v[3:], v[3:])
    return np.concatenate([np.linalg.inv(a).ravel(), np.linalg.solve(a, v[:3]), [np.linalg.det(a)]])


def linalg_eigh(v):
    a = np.outer(v[:3], v[3:])
    s = a + a.T + np.diag([0.0, 3.0, 6.0])
    w, q = np.linalg.eigh(s)
    return w + np.abs(q[:, 0])


def svd_op(v):
    a = v.reshape(2, 3)
    return np.linalg.svd(a, compute_uv=False)


def norm_op(v):
    return np.linalg.norm(v) + np.linalg.norm(v.reshape(2, 3), axis=1).sum()


def indexing_ops(v):
    m = v.reshape(2, 3)
    return np.concatenate([m[:, 1], m[1, ::-1], m[[0, 1], [2, 0]], m[m > 0], v[np.argsort(v)][:2],
                           m[..., None][0, 0], m[-1]])


def broadcasting(v):
    a = v[:3].reshape(3, 1)
    b = v[3:].reshape(1, 3)
    return (a * b + a - b).ravel()


def reductions(v):
    m = v.reshape(2, 3)
    return np.array([np.max(m), np.logaddexp.reduce(v), np.cumprod(v)[-1], np.linalg.norm(m, 1),
                     np.sum(m, axis=(0, 1)), np.mean(m, keepdims=True)[0, 0]])


def concat_mixed(v):
    return np.concatenate([v[:2], np.zeros(2), np.array([v[3] * 2.0])])


def append_insert(v):
    return np.insert(np.append(v[:3], v[4]), 1, v[5]) * 2.0


def tile_repeat(v):
    return np.tile(v[:2], 2) + np.repeat(v[2:4], 2)


def pad_roll(v):
    return np.roll(np.pad(v, 1, constant_values=0.5), 2) * 2.0


def sort_ops(v):
    return np.sort(v) * np.arange(6) + np.cumsum(np.sort(v)[::-1])


def while_loop(v):
    y = v[0]
    i = 0
    while i < 4:
        y = y * v[i + 1] + np.sin(y)
        i += 1
    return y


def recursion_helper(v):
    return _rec(v, 3)


def _rec(v, n):
    if n == 0:
        return v
    return _rec(np.tanh(v) * 1.5, n - 1)


def generator_sum(v):
    return sum(v[i] * v[i + 1] for i in range(5))


def zip_lists(v):
    out = []
    for a, b in zip(v[:3], v[3:]):
        out.append(a * b)
    return np.array(out)


def enumerate_buffer(v):
    out = np.zeros((3, 2))
    for i, a in enumerate(v[:3]):
        out[i] = [a, a * v[i + 3]]
    return out


def setitem_list_value(v):
    out = np.zeros((2, 2))
    out[0] = [v[0], v[1]]
    out[1] = (v[2] * 2.0, 1.0)
    return out


def setitem_then_inplace_row(v):
    out = np.zeros((2, 3))
    out[0] = v[:3]
    out[0] *= v[3]
    out[1] += out[0]
    return out


def zeros_like_tensor(v):
    out = np.zeros_like(v)
    out[2] = v[2] * v[3]
    out += v
    return out


def scalar_item(v):
    return v[0] * v[1:3].sum()


def astype_float32(v):
    return (v.astype(np.float32) * 2.0).astype(np.float64)


def copy_then_write(v):
    y = np.copy(v)
    y[0] = y[1] * 2.0
    return y


def ones_slice_write(v):
    out = np.ones(6)
    out[2:] = v[:4] * v[2:]
    return out


def cross_op(v):
    return np.cross(v[:3], v[3:])


def mean_std(v):
    return (v - v.mean()) / v.std()


def softmax(v):
    e = np.exp(v - np.max(v))
    return e / e.sum()


def logsumexp_manual(v):
    m = np.max(v)
    return m + np.log(np.sum(np.exp(v - m)))


def outer_kron(v):
    return np.kron(v[:2], v[2:4]) + np.outer(v[:2], v[4:]).ravel()


def diag_trace(v):
    m = v.reshape(2, 3)
    d = np.diag(m @ m.T)
    return np.concatenate([d, [np.trace(m @ m.T)], np.diagonal(m)])


def triu_tril(v):
    m = np.outer(v[:3], v[3:])
    return (np.triu(m) - 2.0 * np.tril(m, -1)).ravel()


def split_op(v):
    a, b, c = np.split(v, 3)
    return a * b + c


def array_split_op(v):
    parts = np.array_split(v, 4)
    return np.concatenate([p * (i + 1) for i, p in enumerate(parts)])


def meshgrid_op(v):
    a, b = np.meshgrid(v[:2], v[2:5])
    return (a * b).ravel()


def interp_op(v):
    return np.interp(np.array([0.1, 0.5]), np.array([0.0, 1.0]), v[:2])


def polyval_op(v):
    return np.polyval(v[:3], v[3:])


def setitem_negative(v):
    out = np.zeros(3)
    out[-1] = v[0]
    out[-2] = v[1] * 3.0
    return out


def setitem_2d_loop(v):
    out = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            out[i, j] = v[i] * v[j + 3]
    return out


def buffer_in_list(v):
    out = np.zeros(2)
    out[0] = v[0]
    out[1] = v[1]
    return np.stack([out, v[2:4]])


def buffer_in_nested_list(v):
    out = np.zeros(2)
    out[0] = v[0]
    return np.array([[out[0], v[1]], [out[1], v[2]]])


def buffer_to_helper(v):
    out = np.zeros(3)
    out[1] = v[1]
    return _scale(out) + _scale(v[:3], out[1])


def buffer_returned_tuple(v):
    out = np.zeros(2)
    out[0] = v[0]
    return out, v[1] * 2.0


def buffer_add_at_then_setitem(v):
    out = np.zeros(3)
    np.add.at(out, [0, 0], v[:2])
    out[2] = v[3]
    return out * 2.0


def buffer_out_kwarg(v):
    out = np.zeros(6)
    np.multiply(v, v, out=out)
    np.exp(out, out=out)
    return out


def buffer_copyto(v):
    out = np.zeros(6)
    np.copyto(out, v * 2.0)
    return out


def buffer_fill_then_set(v):
    out = np.empty(3)
    out.fill(1.0)
    out[0] = v[0]
    return out


def buffer_sum_out(v):
    out = np.zeros(3)
    np.sum(v.reshape(2, 3), axis=0, out=out)
    return out * v[:3]


def buffer_T_read(v):
    out = np.zeros((2, 3))
    out[0] = v[:3]
    out[1] = v[3:]
    return out.T.ravel() * 2.0


def buffer_reshape_read(v):
    out = np.zeros(6)
    out[:] = v
    return out.reshape(2, 3).sum(axis=0)


def buffer_ravel_read(v):
    out = np.zeros((2, 3))
    out[1] = v[:3]
    return out.ravel() * 2.0


def buffer_sum_method(v):
    out = np.zeros((2, 3))
    out[1] = v[:3]
    out[0] = v[3:]
    return out.sum(axis=0) + out.mean(axis=1).sum()


def buffer_astype(v):
    out = np.zeros(3)
    out[0] = v[0]
    return out.astype(np.float64) * 2.0


def buffer_iter(v):
    out = np.zeros(3)
    out[0] = v[0]
    out[2] = v[1]
    return sum(e * 2.0 for e in out)


def buffer_item_read_before(v):
    out = np.zeros(3)
    a = out[0]
    out[0] = v[0]
    return a + out


def buffer_float_index(v):
    out = np.zeros((2, 2))
    out[0][1] = v[0]
    out[1][0] = v[1] * 2.0
    return out


def buffer_as_index_value(v):
    out = np.zeros(3)
    out[1] = v[0]
    out2 = np.zeros(3)
    out2[:] = out * v[1]
    return out2


def inplace_on_param(v):
    y = v * 1.0
    y += v ** 2
    return y


def augmented_slice_of_tensor(v):
    y = v[:3]
    y = y + v[3:]
    y *= 2.0
    return y


def dict_loop(v):
    d = {}
    for i in range(3):
        d[i] = v[i] * 2.0
    return np.array([d[i] for i in range(3)])


def dict_update(v):
    d = {"a": v[0]}
    d.update({"b": v[1] * 3.0})
    return d["a"] * d["b"] + np.array(list(d.values())).sum()


def tuple_index_list(v):
    t = (v[0], [v[1], v[2]])
    return t[0] * t[1][1] + t[1][0]


def nested_list_setitem(v):
    m = [[0.0, 0.0], [0.0, 0.0]]
    m[0][1] = v[0]
    m[1][0] = v[1] * v[2]
    return np.array(m)


def list_of_lists_append(v):
    rows = []
    for i in range(2):
        rows.append([v[i], v[i + 2] * 2.0])
    return np.array(rows)


def sum_builtin_of_arrays(v):
    return sum([v[:3], v[3:]])


def max_builtin(v):
    return max(v[0], v[1]) * v[2] + min(v[3], v[4])


def sorted_builtin(v):
    return np.array(sorted([v[0], v[1], v[2]]))


def math_module(v):
    import math
    return v * math.pi + math.sqrt(2.0)


def float32_mix(v):
    return v.astype(np.float32).astype(np.float64) * 0.0 + v * np.float32(2.0)


def einsum_ops(v):
    a = v.reshape(2, 3)
    return np.einsum("ij,kj->ik", a, a).ravel() + np.einsum("i,i", v, v)


def tensordot_op(v):
    a = v.reshape(2, 3)
    return np.tensordot(a, a, axes=([1], [1])).ravel()


def var_ddof(v):
    return np.array([np.var(v, ddof=1), np.std(v, ddof=1)])


def cumsum_diff(v):
    return np.diff(np.cumsum(v ** 2)) + np.diff(v, n=2).sum()


def nan_funcs(v):
    return np.array([np.nansum(v), np.nanmax(v), np.nanmean(v)])


def expand_squeeze(v):
    return np.squeeze(np.expand_dims(v, 0) * 2.0, 0) + np.moveaxis(v.reshape(2, 3), 0, 1).ravel()


def broadcast_to_op(v):
    return np.broadcast_to(v[:3], (2, 3)).ravel() * v


def flip_rot(v):
    m = v.reshape(2, 3)
    return np.concatenate([np.flip(v), np.rot90(m).ravel(), np.fliplr(m).ravel()])


def take_op(v):
    return np.take(v, [0, 2, 2]) + np.take_along_axis(v, np.array([1, 1, 0]), 0)


def select_piecewise(v):
    return np.select([v < 0, v < 0.5], [v ** 2, -v], default=v * 3.0)


def clip_arrays(v):
    return np.clip(v, v[::-1] - 0.5, 1.0)


def abs_sign(v):
    return np.abs(v) * np.sign(v) + np.absolute(v)


def hypot_arctan2(v):
    return np.hypot(v[:3], v[3:]) + np.arctan2(v[:3], v[3:])


def real_if_close_op(v):
    return np.real_if_close(v + 0j) * 2.0


def frexp_ldexp(v):
    m, e = np.frexp(v)
    return m * v + np.ldexp(v, 2)


def modf_op(v):
    f, i = np.modf(v * 2.0)
    return f * v + i


def ix_indexing(v):
    m = v.reshape(2, 3)
    return m[np.ix_([0, 1], [0, 2])].ravel()


def setitem_tensor_index(v):
    out = np.zeros(3)
    i = int(np.argmax(v[:3]))
    out[i] = v[i] * 2.0
    return out


def setitem_repeated_index(v):
    out = np.zeros(3)
    out[[0, 0, 2]] = v[:3]
    return out * v[3:]


def iadd_repeated_index(v):
    out = np.ones(3)
    out[[0, 0, 1]] += v[:3] ** 2
    return out


def add_at_tensor_values_2d(v):
    out = np.zeros((2, 3))
    np.add.at(out, (np.array([0, 1, 0]), np.array([2, 2, 2])), v[:3] * v[3:])
    return out


def slogdet_op(v):
    a = np.outer(v[:3], v[3:]) + np.diag([3.0, 4.0, 5.0])
    sign, logdet = np.linalg.slogdet(a)
    return np.array([sign * logdet, logdet])


def eigh_vectors(v):
    a = np.outer(v[:3], v[:3]) + np.diag([1.0, 2.5, 4.0]) + np.outer(v[3:], v[3:])
    w, q = np.linalg.eigh(a)
    return np.concatenate([w, (q * np.sign(q[0])).ravel()])


def qr_op(v):
    q, r = np.linalg.qr(v.reshape(3, 2))
    return (q @ r).ravel() + np.abs(np.diag(r)).sum()


def cholesky_op(v):
    a = np.outer(v[:3], v[:3]) + np.eye(3) * 2.0
    return np.linalg.cholesky(a).ravel() * v[3]


def buffer_view_inplace(v):
    out = np.zeros((2, 3))
    row = out[0]
    row += v[:3]
    out[1] = row * v[3:]
    return out


def buffer_column_write(v):
    out = np.ones((3, 2))
    out[:, 0] = v[:3]
    out[:, 1] *= v[3:]
    return out.sum(axis=1)


def buffer_nested_loop_accumulate(v):
    acc = np.zeros(2)
    for i in range(3):
        acc += np.array([v[i], v[i + 3]]) * (i + 1)
    return acc


def buffer_then_stack(v):
    rows = []
    for i in range(2):
        r = np.zeros(3)
        r[i] = v[i]
        r[2] = v[i + 3] ** 2
        rows.append(r)
    return np.stack(rows)


def append_then_array_2d(v):
    pts = []
    for i in range(3):
        pts.append([v[i], v[i] * v[i + 3]])
    return np.array(pts) ** 2


def where_scalar_tensor(v):
    return np.where(v > 0, v[0], v[1]) * v


def unique_counts(v):
    u, c = np.unique(np.round(v), return_counts=True)
    return v * c.sum()


def argsort_gather(v):
    idx = np.argsort(v)
    return v[idx] * np.arange(6) + np.take(v, idx[:2]).sum()


def cumulative_ops(v):
    return np.cumsum(v) * np.cumprod(v[::-1]) + np.maximum.accumulate(v)


def matrix_power_op(v):
    a = v[:4].reshape(2, 2)
    return np.linalg.matrix_power(a, 3).ravel()


def ogrid_polynomial(v):
    x = np.linspace(0.0, 1.0, 4)
    return np.polyval(v[:3], x) + np.polyval([v[3], 1.0, v[4]], x)


def list_of_tensor_scalars_sum_prod(v):
    xs = [v[0], v[1] * 2.0, v[2]]
    import math
    return np.array([math.fsum([1.0]) * sum(xs), np.prod(xs), np.mean(xs), np.max(xs)])


def einsum_list_operand(v):
    return np.einsum("i,i->", [v[0], v[1]], [v[2], v[3]]) * v


def tuple_of_arrays_concat(v):
    t = (v[:2], v[2:4] * 2.0)
    return np.concatenate(t) * np.hstack(t)


def scalar_loop_python(v):
    total = 0.0
    for i in range(len(v)):
        total += v[i] * i
    return total


IDIOMS = [f for name, f in list(globals().items()) if callable(f) and not name.startswith("_")
          and getattr(f, "__module__", None) == __name__ and name not in ("main", "probe", "central", "as_flat",
                                                                           "autograd_jvp")]


def as_flat(y):
    if isinstance(y, dict):
        return np.concatenate([as_flat(y[k]) for k in sorted(y)])
    if isinstance(y, (tuple, list)):
        return np.concatenate([as_flat(e) for e in y])
    if isinstance(y, sg.Tensor):
        y = y.numpy()
    return np.ravel(np.asarray(y)).astype(complex)


def central(f, h=1e-6):
    d1 = (as_flat(f(X + h * T)) - as_flat(f(X - h * T))) / (2 * h)
    d2 = (as_flat(f(X + 10 * h * T)) - as_flat(f(X - 10 * h * T))) / (20 * h)
    if np.max(np.abs(d1 - d2)) > 1e-4 * (1 + np.max(np.abs(d1))):
        return None
    return d1


def autograd_jvp(f):
    import autograd
    import autograd.numpy as anp
    me = sys.modules[__name__]
    saved = me.np
    me.np = anp
    try:
        return as_flat(autograd.make_jvp(f)(X)(T)[1])
    finally:
        me.np = saved


def probe(f):
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in ("compiled", "op_by_op", "accumulator", "autograd"):
            try:
                if path == "compiled":
                    out[path] = as_flat(sg.jvp(f, (X,), (T,))[1])
                elif path == "op_by_op":
                    out[path] = as_flat(op_by_op.jvp(f, [X], [T])[1])
                elif path == "accumulator":
                    x = sg.constant(X)
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always", sg.GradientPathWarning)
                        with sg.ForwardAccumulator(x, sg.constant(T)) as acc:
                            y = f(x)
                    if any(issubclass(c.category, sg.GradientPathWarning) for c in caught):
                        raise sg.GradientPathWarning("warned (a cut path)")
                    out[path] = as_flat(acc.jvp(y, unconnected_gradients="zero"))
                else:
                    out[path] = autograd_jvp(f)
            except Exception as exc:
                out[path] = "ERR %s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:160] if str(exc) else "")
    return out


def close(a, b, rtol, atol):
    return a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=atol)


def main(filters):
    fs = [f for f in IDIOMS if not filters or any(s in f.__name__ for s in filters)]
    good = 0
    for f in fs:
        try:
            fd = central(f)
            res = probe(f)
        except Exception:
            print("PROBE-ERROR", f.__name__, traceback.format_exc().splitlines()[-1])
            continue
        problems = []
        for path in ("op_by_op", "accumulator"):
            v = res[path]
            if isinstance(v, str):
                problems.append("%s %s" % (path, v))
                continue
            if fd is not None and not close(v, fd, 1e-5, 1e-6):
                problems.append("%s vs fd: %s vs %s" % (path, np.round(v, 5), np.round(fd, 5)))
            if not isinstance(res["compiled"], str) and not close(v, res["compiled"], 1e-9, 1e-11):
                problems.append("%s vs compiled: %s vs %s" % (path, np.round(v, 6), np.round(res["compiled"], 6)))
            if not isinstance(res["autograd"], str) and not close(v, res["autograd"], 1e-9, 1e-11):
                problems.append("%s vs autograd: %s vs %s" % (path, np.round(v, 6), np.round(res["autograd"], 6)))
        if isinstance(res["compiled"], str):
            problems.append("compiled " + res["compiled"])
        elif fd is not None and not close(res["compiled"], fd, 1e-5, 1e-6):
            problems.append("compiled vs fd: %s vs %s" % (np.round(res["compiled"], 5), np.round(fd, 5)))
        if fd is None:
            problems.append("(no stable finite difference)")
        if problems:
            print("MISMATCH", f.__name__, "::", " | ".join(problems), flush=True)
        else:
            good += 1
    print("probed %d idioms: %d agree on every path" % (len(fs), good))


if __name__ == "__main__":
    main(sys.argv[1:])
