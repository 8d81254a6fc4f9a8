"""Forward mode: tangent rules, ForwardAccumulator, generated JVP code and
the functional transforms (jvp, jacobian, hessian, hvp).

Oracles, per layer:
  - every tangent rule (TANGENT_CASES, one row per use, broadcasting shapes)
    against central finite differences of the plain NumPy function
    (directional derivatives), op by op and through the generated code, with
    all inputs and each input alone (the symbolic-zero variants of the
    rule); against the reverse mode by the dot-product test
    <u, J v> = <J^T u, v>; and in float32 (dtypes preserved);
  - every adjoint rule without a tangent rule (the transpose-trick
    fallback), through the rule table of tests/test_rules.py: forward mode,
    op by op and generated, against reverse mode on each such primitive's
    first row;
  - ForwardAccumulator: the examples of the tf.autodiff.ForwardAccumulator
    page with NumPy in place of TensorFlow, nesting with GradientTape both
    ways, TF's errors;
  - jvp against JAX (x64, enabled in a context manager); jacobian,
    hessian and hvp against autograd (JAX's eager hessians cost seconds).
"""
import builtins
import gc
import operator
import warnings
import zlib

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import cases_fft
import tangent_rows as cases_more
import srcgrad as sg
from srcgrad import forward_mode as forward_mod
from srcgrad.rules.helpers import broadcast as helpers
from srcgrad.rules.helpers import complex as complex_helpers
from srcgrad.rules.helpers import shapes as shape_helpers
from srcgrad.rules.python import containers
from srcgrad.rules import tangents as tangent_registry
from srcgrad.transforms import instantiate

FD_RTOL, FD_ATOL = 1e-6, 1e-7          # against central differences (float64)
PATH_RTOL, PATH_ATOL = 1e-12, 1e-13    # op by op against generated code
F32_RTOL, F32_ATOL = 2e-3, 2e-4        # float32 against float64


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------

def draw(rng, spec):
    """An input from a spec: (shape, domain) or a plain Python value
    (static, never differentiated). Domains: real, pos, unit (|x| < 0.9),
    gt1 (> 1.2), nz (|x| in [0.5, 1.5]), wc (a well-conditioned matrix)."""
    shape, domain = spec
    if domain == "real":
        return rng.normal(size=shape)
    if domain == "pos":
        return rng.uniform(0.5, 2.0, shape)
    if domain == "unit":
        return rng.uniform(-0.9, 0.9, shape)
    if domain == "gt1":
        return rng.uniform(1.2, 3.0, shape)
    if domain == "nz":
        return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 1.5, shape)
    if domain == "wc":
        return np.eye(shape[-1]) * 3.0 + rng.normal(size=shape) * 0.3
    raise ValueError(domain)


def R(*s):
    return (s, "real")


def P(*s):
    return (s, "pos")


def U(*s):
    return (s, "unit")


def G1(*s):
    return (s, "gt1")


def NZ(*s):
    return (s, "nz")


def WC(*s):
    return (s, "wc")


class Static:
    def __init__(self, value):
        self.value = value


# ---------------------------------------------------------------------------
# Case functions: real defs (the compiler reads their source)
# ---------------------------------------------------------------------------

def c_add(x, y): return x + y                                   # noqa: E704
def c_sub(x, y): return x - y                                   # noqa: E704
def c_mul(x, y): return x * y                                   # noqa: E704
def c_div(x, y): return x / y                                   # noqa: E704
def c_pow(x, y): return x ** y                                  # noqa: E704
def c_pow_const(x): return x ** 3                               # noqa: E704
def c_mod(x, y): return x % y                                   # noqa: E704
def c_neg(x): return -x                                         # noqa: E704
def c_pos(x): return +x                                         # noqa: E704
def c_exp(x): return np.exp(x)                                  # noqa: E704
def c_log(x): return np.log(x)                                  # noqa: E704
def c_sqrt(x): return np.sqrt(x)                                # noqa: E704
def c_tanh(x): return np.tanh(x)                                # noqa: E704
def c_sin(x): return np.sin(x)                                  # noqa: E704
def c_cos(x): return np.cos(x)                                  # noqa: E704
def c_abs(x): return np.abs(x)                                  # noqa: E704
def c_exp2(x): return np.exp2(x)                                # noqa: E704
def c_expm1(x): return np.expm1(x)                              # noqa: E704
def c_log2(x): return np.log2(x)                                # noqa: E704
def c_log10(x): return np.log10(x)                              # noqa: E704
def c_log1p(x): return np.log1p(x)                              # noqa: E704
def c_square(x): return np.square(x)                            # noqa: E704
def c_cbrt(x): return np.cbrt(x)                                # noqa: E704
def c_reciprocal(x): return np.reciprocal(x)                    # noqa: E704
def c_tan(x): return np.tan(x)                                  # noqa: E704
def c_arcsin(x): return np.arcsin(x)                            # noqa: E704
def c_arccos(x): return np.arccos(x)                            # noqa: E704
def c_arctan(x): return np.arctan(x)                            # noqa: E704
def c_arctan2(y, x): return np.arctan2(y, x)                    # noqa: E704
def c_hypot(x, y): return np.hypot(x, y)                        # noqa: E704
def c_sinh(x): return np.sinh(x)                                # noqa: E704
def c_cosh(x): return np.cosh(x)                                # noqa: E704
def c_arcsinh(x): return np.arcsinh(x)                          # noqa: E704
def c_arccosh(x): return np.arccosh(x)                          # noqa: E704
def c_arctanh(x): return np.arctanh(x)                          # noqa: E704
def c_logaddexp(x, y): return np.logaddexp(x, y)                # noqa: E704
def c_real(x): return np.real(x) * 2.0                          # noqa: E704
def c_imag(x): return np.imag(x * 1j) + x                       # noqa: E704
def c_conj(x): return np.conjugate(x) * x                       # noqa: E704
def c_maximum(x, y): return np.maximum(x, y)                    # noqa: E704
def c_minimum(x, y): return np.minimum(x, y)                    # noqa: E704
def c_where(x, y): return np.where(x > 0.0, x, y)               # noqa: E704
def c_sum(x): return np.sum(x)                                  # noqa: E704
def c_sum_axis(x): return np.sum(x, axis=1)                     # noqa: E704
def c_sum_keep(x): return np.sum(x, axis=0, keepdims=True)      # noqa: E704
def c_mean(x): return np.mean(x, axis=-1)                       # noqa: E704
def c_max(x): return np.max(x, axis=0)                          # noqa: E704
def c_min(x): return np.min(x)                                  # noqa: E704
def c_amax(x): return np.amax(x, axis=1, keepdims=True)         # noqa: E704
def c_amin(x): return np.amin(x, axis=1)                        # noqa: E704
def c_cumsum(x): return np.cumsum(x, axis=1)                    # noqa: E704
def c_matmul(x, y): return x @ y                                # noqa: E704
def c_matmul_vec(x, y): return np.matmul(x, y)                  # noqa: E704
def c_dot(x, y): return np.dot(x, y)                            # noqa: E704
def c_tensordot(a, b): return np.tensordot(a, b, axes=1)        # noqa: E704
def c_outer(a, b): return np.outer(a, b)                        # noqa: E704
def c_inner(a, b): return np.inner(a, b)                        # noqa: E704
def c_kron(a, b): return np.kron(a, b)                          # noqa: E704
def c_trace(a): return np.trace(a)                              # noqa: E704
def c_diagonal(a): return np.diagonal(a, offset=1)              # noqa: E704
def c_inv(a): return np.linalg.inv(a)                           # noqa: E704
def c_solve(a, b): return np.linalg.solve(a, b)                 # noqa: E704
def c_det(a): return np.linalg.det(a)                           # noqa: E704
def c_reshape(x): return np.reshape(x, (2, 6))                  # noqa: E704
def c_transpose(x): return np.transpose(x, (2, 0, 1))           # noqa: E704
def c_T(x): return x.T                                          # noqa: E704
def c_swapaxes(x): return np.swapaxes(x, 0, 2)                  # noqa: E704
def c_moveaxis(x): return np.moveaxis(x, 0, -1)                 # noqa: E704
def c_expand_dims(x): return np.expand_dims(x, 1)               # noqa: E704
def c_squeeze(x): return np.squeeze(x, axis=0)                  # noqa: E704
def c_broadcast_to(x): return np.broadcast_to(x, (2, 3, 4))     # noqa: E704
def c_ravel(x): return np.ravel(x)                              # noqa: E704
def c_flip(x): return np.flip(x, axis=1)                        # noqa: E704
def c_roll(x): return np.roll(x, 2, axis=1)                     # noqa: E704
def c_tril(x): return np.tril(x)                                # noqa: E704
def c_triu(x): return np.triu(x, k=1)                           # noqa: E704
def c_tile(x): return np.tile(x, (2, 1))                        # noqa: E704
def c_repeat(x): return np.repeat(x, 2, axis=0)                 # noqa: E704
def c_concatenate(x, y): return np.concatenate([x, y], axis=0)  # noqa: E704
def c_stack(x, y): return np.stack([x, y, x * y], axis=1)       # noqa: E704
def c_getitem(x): return x[1:, ::2]                             # noqa: E704
def c_getitem_int(x): return x[np.array([0, 2, 0])]             # noqa: E704
def c_unindex(g): return helpers.unindex(g, np.zeros((4, 3), g.dtype), (np.array([1, 1, 3]),))  # noqa: E704
def c_matmul_adjoints(g, x, y):                                 # (matmul's cotangents, met at second order)
    return np.sum(helpers.matmul_adjoint_x(g, x, y) ** 2) + np.sum(helpers.matmul_adjoint_y(g * g, x, y) * y)


def c_array_adjoint(g):                                         # (np.array's adjoint, met at second order)
    rows = shape_helpers.array_adjoint(g * g, [[1.0, 2.0, 0.5], [3.0, 4.0, 0.0]])
    return np.stack([np.stack(r) for r in rows]) * g


def c_outers(x, y): return np.add.outer(x, y) * np.subtract.outer(y, x).T + np.multiply.outer(x, y) / np.divide.outer(y, x + 3.0).T  # noqa: E501,E704
def c_reduces(x): return np.add.reduce(x) + np.multiply.reduce(x, axis=1) * np.maximum.reduce(x, axis=1) - np.minimum.reduce(x)  # noqa: E501,E704
def c_accumulates(x): return np.add.accumulate(x) * np.multiply.accumulate(x, axis=1)  # noqa: E704
def c_seq_repeat(x, y):
    r = containers.seq_repeat([x, y], 2)
    return r[0] * 3.0 + r[1] * r[2] - r[3]


def c_repeat_cotangent(x, y):
    c = containers.repeat_cotangent([x, y, x * 2.0, None], [0.0, 0.0])
    return c[0] * c[1]


def c_repeat_list(x):
    r = containers.repeat_list([x, None], [0.0] * 4)
    return r[0] * 2.0 + r[2]


def c_add_at(a, b): return helpers.add_at(a, np.array([0, 2, 0]), b)                    # noqa: E704
def c_subtract_at(a, b): return helpers.subtract_at(a, (np.array([1, 1]), np.array([0, 2])), b)  # noqa: E704


def c_setitem(x, v):
    y = x * 1.0
    y[1] = v
    y[2:, 0] = v[0] * 2.0
    return y


def c_dict_ops(x, v):
    d = dict(a=x, b=v * 2.0)
    e = dict(d)
    return e["a"] * e["b"]


def c_list_ops(x, v):
    xs = [x]
    xs.append(v * 2.0)
    xs.extend([x * v])
    ys = list(xs)
    return sum(ys) + np.stack(tuple(ys))[0]


def c_real_if_close(x): return np.real_if_close(x) * x     # noqa: E704


def c_real_if_close_helpers(x):
    return complex_helpers.real_if_close_cotangent(x, x * 1.0, x) * 2.0 + \
        complex_helpers.real_if_close_tangent(x * x, x)


def c_dict_get(x, v):
    d = {"a": x * 2.0}
    g = containers.get_cotangent(v, d, "a")
    return d.get("a", v) * 3.0 + d.get("b", v) + g["a"] + containers.default_cotangent(x, d, "b", v) \
        + containers.default_cotangent(v, d, "a", x)


TANGENT_CASES = [
    # (name, case function, input specs, primitives covered, runs op by op)
    ("add", c_add, (R(3, 4), R(4)), np.add),
    ("add_bcast", c_add, (R(3, 1), R(1, 4)), np.add),
    ("add_scalar", c_add, (R(), R(2, 3)), np.add),
    ("sub", c_sub, (R(2, 3), R(3)), np.subtract),
    ("sub_scalar", c_sub, (R(3), R()), np.subtract),
    ("mul", c_mul, (R(3, 4), R(4)), np.multiply),
    ("mul_bcast", c_mul, (R(3, 1), R(1, 4)), np.multiply),
    ("div", c_div, (R(3, 4), NZ(4)), np.true_divide),
    ("div_scalar_num", c_div, (R(), NZ(3)), np.true_divide),
    ("pow", c_pow, (P(3, 2), R(2)), np.power),
    ("pow_const", c_pow_const, (R(4),), np.power),
    ("mod", c_mod, (R(4), P(4)), np.remainder),
    ("neg", c_neg, (R(3),), np.negative),
    ("pos", c_pos, (R(3),), np.positive),
    ("exp", c_exp, (R(2, 3),), np.exp),
    ("log", c_log, (P(4),), np.log),
    ("sqrt", c_sqrt, (P(4),), np.sqrt),
    ("tanh", c_tanh, (R(4),), np.tanh),
    ("sin", c_sin, (R(4),), np.sin),
    ("cos", c_cos, (R(4),), np.cos),
    ("abs", c_abs, (NZ(5),), np.absolute),
    ("exp2", c_exp2, (R(3),), np.exp2),
    ("expm1", c_expm1, (R(3),), np.expm1),
    ("log2", c_log2, (P(3),), np.log2),
    ("log10", c_log10, (P(3),), np.log10),
    ("log1p", c_log1p, (P(3),), np.log1p),
    ("square", c_square, (R(3),), np.square),
    ("cbrt", c_cbrt, (P(3),), np.cbrt),
    ("reciprocal", c_reciprocal, (NZ(3),), np.reciprocal),
    ("tan", c_tan, (U(3),), np.tan),
    ("arcsin", c_arcsin, (U(3),), np.arcsin),
    ("arccos", c_arccos, (U(3),), np.arccos),
    ("arctan", c_arctan, (R(3),), np.arctan),
    ("arctan2", c_arctan2, (R(2, 3), NZ(3)), np.arctan2),
    ("hypot", c_hypot, (NZ(3, 1), NZ(2)), np.hypot),
    ("sinh", c_sinh, (R(3),), np.sinh),
    ("cosh", c_cosh, (R(3),), np.cosh),
    ("arcsinh", c_arcsinh, (R(3),), np.arcsinh),
    ("arccosh", c_arccosh, (G1(3),), np.arccosh),
    ("arctanh", c_arctanh, (U(3),), np.arctanh),
    ("logaddexp", c_logaddexp, (R(2, 3), R(3)), np.logaddexp),
    ("real", c_real, (R(3),), np.real),
    ("imag", c_imag, (R(3),), (np.imag, np.multiply)),
    ("conj", c_conj, (R(3),), np.conjugate),
    ("maximum", c_maximum, (R(3, 4), R(4)), np.maximum),
    ("minimum", c_minimum, (R(3, 1), R(4)), np.minimum),
    ("where", c_where, (R(3, 4), R(4)), np.where),
    ("where_bcast", c_where, (R(4), R(3, 1)), np.where),
    ("sum", c_sum, (R(3, 4),), np.sum),
    ("sum_axis", c_sum_axis, (R(3, 4),), np.sum),
    ("sum_keepdims", c_sum_keep, (R(3, 4),), np.sum),
    ("mean", c_mean, (R(3, 4),), np.mean),
    ("max", c_max, (R(3, 4),), np.max),
    ("min", c_min, (R(3, 4),), np.min),
    ("amax", c_amax, (R(3, 4),), np.amax),
    ("amin", c_amin, (R(3, 4),), np.amin),
    ("cumsum", c_cumsum, (R(2, 4),), np.cumsum),
    ("matmul", c_matmul, (R(3, 4), R(4, 2)), np.matmul),
    ("matmul_batched", c_matmul, (R(2, 3, 4), R(4, 2)), np.matmul),
    ("matmul_vec", c_matmul_vec, (R(4), R(2, 4, 3)), np.matmul),
    ("dot", c_dot, (R(3, 4), R(4)), np.dot),
    ("dot_nd", c_dot, (R(2, 3, 4), R(4, 2)), np.dot),
    ("tensordot", c_tensordot, (R(2, 3), R(3, 4)), np.tensordot),
    ("outer", c_outer, (R(3), R(2)), np.outer),
    ("inner", c_inner, (R(2, 3), R(4, 3)), np.inner),
    ("kron", c_kron, (R(2, 2), R(2, 3)), np.kron),
    ("trace", c_trace, (R(3, 3),), np.trace),
    ("diagonal", c_diagonal, (R(3, 4),), np.diagonal),
    ("inv", c_inv, (WC(3, 3),), np.linalg.inv),
    ("inv_batched", c_inv, (WC(2, 3, 3),), np.linalg.inv),
    ("solve", c_solve, (WC(3, 3), R(3)), np.linalg.solve),
    ("solve_matrix", c_solve, (WC(3, 3), R(3, 2)), np.linalg.solve),
    ("solve_batched_vector", c_solve, (WC(2, 3, 3), R(3)), np.linalg.solve),
    ("det", c_det, (WC(3, 3),), np.linalg.det),
    ("det_batched", c_det, (WC(2, 3, 3),), np.linalg.det),
    ("reshape", c_reshape, (R(3, 4),), np.reshape),
    ("transpose", c_transpose, (R(2, 3, 4),), np.transpose),
    ("T", c_T, (R(2, 3),), np.transpose),
    ("swapaxes", c_swapaxes, (R(2, 3, 4),), np.swapaxes),
    ("moveaxis", c_moveaxis, (R(2, 3, 4),), np.moveaxis),
    ("expand_dims", c_expand_dims, (R(2, 3),), np.expand_dims),
    ("squeeze", c_squeeze, (R(1, 3),), np.squeeze),
    ("broadcast_to", c_broadcast_to, (R(3, 1),), np.broadcast_to),
    ("ravel", c_ravel, (R(2, 3),), np.ravel),
    ("flip", c_flip, (R(2, 3),), np.flip),
    ("roll", c_roll, (R(2, 4),), np.roll),
    ("tril", c_tril, (R(3, 3),), np.tril),
    ("triu", c_triu, (R(3, 4),), np.triu),
    ("tile", c_tile, (R(2, 3),), np.tile),
    ("repeat", c_repeat, (R(2, 3),), np.repeat),
    ("concatenate", c_concatenate, (R(2, 3), R(1, 3)), np.concatenate),
    ("stack", c_stack, (R(3), R(3)), (np.stack, np.multiply)),
    ("getitem", c_getitem, (R(3, 4),), operator.getitem),
    ("real_if_close", c_real_if_close, (R(3),), np.real_if_close),
    ("real_if_close_helpers", c_real_if_close_helpers, (R(3),),
     (complex_helpers.real_if_close_cotangent, complex_helpers.real_if_close_tangent)),
    ("getitem_int", c_getitem_int, (R(3, 2),), operator.getitem),
    ("unindex", c_unindex, (R(3, 3),), (helpers.unindex, helpers.unindex_array)),
    ("matmul_adjoints", c_matmul_adjoints, (R(5, 3), R(5, 4), R(4, 3)),
     (helpers.matmul_adjoint_x, helpers.matmul_adjoint_y)),
    ("array_adjoint", c_array_adjoint, (R(2, 3),), shape_helpers.array_adjoint),
    # ufunc methods: outer, reduce (axis 0 by default), accumulate
    ("ufunc_outer", c_outers, (R(3), R(3)), (np.add.outer, np.subtract.outer, np.multiply.outer, np.divide.outer)),
    ("ufunc_reduce", c_reduces, (R(3, 3),), (np.add.reduce, np.multiply.reduce, np.maximum.reduce,
                                             np.minimum.reduce)),
    ("ufunc_accumulate", c_accumulates, (R(3, 3),), (np.add.accumulate, np.multiply.accumulate)),
    # the pure forms of np.add.at / np.subtract.at (repeated indices; b broadcast along a's rows)
    ("add_at", c_add_at, (R(4, 3), R(3)), (helpers.add_at, helpers.scatter_at)),
    ("subtract_at", c_subtract_at, (R(2, 3), R()), (helpers.subtract_at, helpers.scatter_at)),
    # the tangent rules of numpy_more.py and numpy_fft.py (rows in their case modules)
    *cases_more.TANGENT_CASES,
    *cases_fft.TANGENT_CASES,
]
# compiled only (element assignment and list methods are lowered to these helpers)
COMPILED_ONLY_CASES = [
    ("setitem", c_setitem, (R(4, 3), R(3)), (containers.setitem, containers.array_setitem)),
    ("dict_ops", c_dict_ops, (R(3), R(3)), containers.as_dict),
    ("dict_get", c_dict_get, (R(3), R(3)), (dict.get, containers.get_cotangent, containers.default_cotangent)),
    ("list_ops", c_list_ops, (R(3), R(3)), (containers.list_append, containers.list_extend,
                                            containers.as_list, containers.as_tuple, builtins.sum)),
    *cases_more.COMPILED_ONLY_TANGENT_CASES,
    # list repetition: `xs * n` and the two helpers of its cotangents
    ("seq_repeat", c_seq_repeat, (R(3), R(3)), containers.seq_repeat),
    ("repeat_cotangent", c_repeat_cotangent, (R(3), R(3)), containers.repeat_cotangent),
    ("repeat_list", c_repeat_list, (R(3),), containers.repeat_list),
]
ALL_CASES = TANGENT_CASES + COMPILED_ONLY_CASES
BY_NAME = {c[0]: c for c in ALL_CASES}
assert len(BY_NAME) == len(ALL_CASES)
OP_BY_OP = {c[0] for c in TANGENT_CASES}


def _data(name, dtype=np.float64):
    """Inputs and a tangent per input, seeded by the case name."""
    _, fn, specs, _ = BY_NAME[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    xs = [draw(rng, s).astype(dtype) for s in specs]
    vs = [rng.normal(size=np.shape(x)).astype(dtype) for x in xs]
    return xs, vs


def _directional_fd(fn, xs, vs, active, eps=1e-6):
    plus = [x + eps * v if i in active else x for i, (x, v) in enumerate(zip(xs, vs))]
    minus = [x - eps * v if i in active else x for i, (x, v) in enumerate(zip(xs, vs))]
    return (np.asarray(fn(*plus)) - np.asarray(fn(*minus))) / (2 * eps)


def _op_by_op(fn, xs, vs, active):
    ts = [sg.constant(x) for x in xs]
    with sg.ForwardAccumulator([ts[i] for i in active], [vs[i] for i in active]) as acc:
        y = fn(*ts)
    return y, acc.jvp(y)


def _compiled(fn, xs, vs, active):
    return sg.jvp(fn, tuple(xs), tuple(v if i in active else None for i, v in enumerate(vs)))


def _actives(name):
    n = len(BY_NAME[name][2])
    return [tuple(range(n))] + ([(i,) for i in range(n)] if n > 1 else [])


PARAMS = [pytest.param(c[0], a, id="%s-%s" % (c[0], "".join(map(str, a))))
          for c in ALL_CASES for a in _actives(c[0])]


@pytest.mark.parametrize("name,active", PARAMS)
def test_tangent_rule_vs_finite_differences(name, active):
    """Op by op and generated code, all inputs and each alone, against
    central differences; the two paths agree to round-off."""
    _, fn, _, _ = BY_NAME[name]
    xs, vs = _data(name)
    expected = _directional_fd(fn, xs, vs, active)
    out, jvp = _compiled(fn, xs, vs, active)
    np.testing.assert_allclose(out, fn(*xs), rtol=1e-14, atol=1e-14)
    assert np.shape(jvp) == np.shape(expected)
    np.testing.assert_allclose(jvp, expected, rtol=FD_RTOL, atol=FD_ATOL)
    if name in OP_BY_OP:
        y, t = _op_by_op(fn, xs, vs, active)
        assert isinstance(t, sg.Tensor) and t.shape == y.shape and t.dtype == y.dtype
        np.testing.assert_allclose(t.numpy(), jvp, rtol=PATH_RTOL, atol=PATH_ATOL)


@pytest.mark.parametrize("name", [c[0] for c in TANGENT_CASES])
def test_tangent_rule_dot_product_with_reverse_mode(name):
    """<u, J v> (forward, op by op) == <J^T u, v> (the tape's VJP)."""
    _, fn, _, _ = BY_NAME[name]
    xs, vs = _data(name)
    active = tuple(range(len(xs)))
    y, jv = _op_by_op(fn, xs, vs, active)
    u = np.random.default_rng(7).normal(size=y.shape)
    ts = [sg.constant(x) for x in xs]
    with sg.GradientTape() as tape:
        tape.watch(ts)
        y2 = fn(*ts)
    with warnings.catch_warnings():     # c_imag's complex intermediate, real inputs
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        grads = tape.gradient(y2, ts, output_gradients=u)
    lhs = np.sum(u * jv.numpy())
    rhs = sum(np.sum(g.numpy() * v) for g, v in zip(grads, vs))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", [c[0] for c in ALL_CASES])
def test_tangent_rule_float32(name):
    """float32 inputs and tangents give float32 outputs and tangents, close
    to the float64 ones (both paths)."""
    _, fn, _, _ = BY_NAME[name]
    xs64, vs64 = _data(name)
    xs, vs = [x.astype(np.float32) for x in xs64], [v.astype(np.float32) for v in vs64]
    active = tuple(range(len(xs)))
    _, expected = _compiled(fn, xs64, vs64, active)
    out, jvp = _compiled(fn, xs, vs, active)
    assert np.asarray(out).dtype == np.float32 and np.asarray(jvp).dtype == np.float32, name
    np.testing.assert_allclose(jvp, expected, rtol=F32_RTOL, atol=F32_ATOL)
    if name in OP_BY_OP:
        y, t = _op_by_op(fn, xs, vs, active)
        assert y.dtype == np.float32 and t.dtype == np.float32
        np.testing.assert_allclose(t.numpy(), expected, rtol=F32_RTOL, atol=F32_ATOL)


def _covers(case):
    return case[3] if isinstance(case[3], tuple) else (case[3],)


def test_every_tangent_rule_has_a_case():
    rules = [p for p, r in tangent_registry.tangent_rules().items()
             if r.template.__module__.startswith(("srcgrad.rules.numpy.", "srcgrad.rules.python."))]
    covered = {f for c in ALL_CASES for f in _covers(c)}
    missing = [getattr(p, "__name__", p) for p in rules if p not in covered]
    assert not missing, "tangent rules with no row in TANGENT_CASES: %s" % missing


def test_symbolic_zeros_are_dropped_from_compiled_rules():
    rule = tangent_registry.tangent_rule(np.multiply)
    assert "return dx * y\n" in instantiate.jvp(rule, {"x"}).__srcgrad_source__ + "\n"
    assert "dx * y + x * dy" in instantiate.jvp(rule, {"x", "y"}).__srcgrad_source__
    div = instantiate.jvp(tangent_registry.tangent_rule(np.true_divide), {"y"}).__srcgrad_source__
    assert "return -(z * dy / y)" in div
    total = instantiate.jvp(tangent_registry.tangent_rule(np.sum), {"x"}).__srcgrad_source__
    assert "np.sum(dx, axis=axis, keepdims=keepdims)" in total


# ---------------------------------------------------------------------------
# The fallback: adjoint rules without a tangent rule (transpose trick)
# ---------------------------------------------------------------------------

try:
    import test_rules as _rule_table
    RULE_CASES = {}
    for _c in _rule_table.CASES:      # the first row of each primitive without a tangent rule
        for _f in (_c.covers if isinstance(_c.covers, tuple) else (_c.covers,)):
            if tangent_registry.tangent_rule(_f) is None:
                RULE_CASES.setdefault(_f, _c)
    RULE_CASES = sorted({c.name: c for c in RULE_CASES.values()}.values(), key=lambda c: c.name)
    RULE_TABLE_ERROR = None
except Exception as exc:          # the table belongs to tests/test_rules.py
    RULE_CASES, RULE_TABLE_ERROR = [], exc

# np.array of a list of Tensors is not dispatched through NumPy's protocols
NOT_OP_BY_OP = {np.array}


def test_rule_table_imports():
    assert RULE_TABLE_ERROR is None, RULE_TABLE_ERROR


@pytest.mark.parametrize("case", RULE_CASES, ids=[c.name for c in RULE_CASES])
def test_every_adjoint_rule_in_forward_mode(case):
    """One row per primitive of tests/test_rules.py that has no tangent rule:
    the JVP of the row's scalar loss, op by op and through generated code
    (the transpose of the VJP), equals <gradient, v> from the reverse mode."""
    from rulecase import Static as RStatic, _draw
    rng = np.random.default_rng(zlib.crc32(case.name.encode()))
    args = [a.value if isinstance(a, RStatic) else _draw(rng, a) for a in case.inputs]
    w = rng.normal(size=np.shape(case.ref(*args)))
    wrt = case.wrt
    vs = {i: rng.normal(size=np.shape(args[i])) for i in wrt}
    g = sg.grad(case.fn, wrt=wrt)(*args, w)
    g = g if len(wrt) > 1 else (g,)
    expected = sum(np.sum(gi * vs[i]) for gi, i in zip(g, wrt))
    tangents = tuple(vs.get(i) for i in range(len(args))) + (None,)
    _, compiled = sg.jvp(case.fn, tuple(args) + (w,), tangents)
    np.testing.assert_allclose(compiled, expected, rtol=1e-8, atol=1e-10)
    covers = case.covers if isinstance(case.covers, tuple) else (case.covers,)
    if any(f in NOT_OP_BY_OP for f in covers) or case.meta.get("compiled_only"):
        return      # the tape cannot see the call (np.array of Tensors; SciPy's np.asarray)
    xs = [sg.constant(a) if i in wrt else a for i, a in enumerate(args)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        with sg.ForwardAccumulator([xs[i] for i in wrt], [vs[i] for i in wrt]) as acc:
            loss = case.fn(*xs, w)
    np.testing.assert_allclose(acc.jvp(loss).numpy(), expected, rtol=1e-8, atol=1e-10)


def c_cumprod(x):
    return np.cumprod(x, axis=0) * 2.0


def test_fallback_appears_in_generated_code_and_is_exact():
    assert tangent_registry.tangent_rule(np.cumprod) is None
    src = sg.source(c_cumprod, mode="forward")
    assert "transpose_jvp(cumprod, cumprod_x, (dx,), (x, 0, None, None))" in src
    x, v = np.array([[1.5, -0.5], [2.0, 0.7], [0.3, 1.1]]), np.ones((3, 2))
    _, jv = sg.jvp(c_cumprod, (x,), (v,))
    np.testing.assert_allclose(jv, _directional_fd(c_cumprod, [x], [v], (0,)), rtol=1e-7)


# -- a user primitive with a tangent rule only

@helpers.primitive
def softplus(x):
    return np.log1p(np.exp(x))


@sg.register_tangent(softplus)
def softplus_tangent(z, x):
    """d softplus(x) = sigmoid(x) dx."""
    t[z] = t[x] / (1.0 + np.exp(-x))  # noqa: F821  (template notation)


def c_softplus(x):
    return softplus(x) * x


def test_register_tangent_user_primitive_both_paths():
    x, v = np.array([0.3, -1.2, 2.0]), np.array([1.0, 0.5, -2.0])
    expected = _directional_fd(c_softplus, [x], [v], (0,))
    _, jv = sg.jvp(c_softplus, (x,), (v,))
    np.testing.assert_allclose(jv, expected, rtol=1e-7)
    xt = sg.constant(x)
    with sg.ForwardAccumulator(xt, v) as acc:
        y = c_softplus(xt)
    np.testing.assert_allclose(acc.jvp(y).numpy(), expected, rtol=1e-7)
    assert "dsoftplus_x = dx / (1.0 + np.exp(-x))" in sg.source(c_softplus, mode="forward")


def test_register_tangent_rejects_malformed_templates():
    with pytest.raises(ValueError, match="exactly once"):
        @sg.register_tangent(np.fix)
        def bad(z, x):
            y = t[x]  # noqa: F821, F841
    with pytest.raises(ValueError, match="not an input parameter"):
        @sg.register_tangent(np.fix)
        def bad2(z, x):
            t[z] = t[q]  # noqa: F821


# ---------------------------------------------------------------------------
# ForwardAccumulator (tf.autodiff.ForwardAccumulator's page, with NumPy)
# ---------------------------------------------------------------------------

def test_basic_jvp():
    x = sg.constant([1.0, 2.0, 3.0])
    v = sg.constant([1.0, 0.0, 2.0])
    acc = sg.ForwardAccumulator(x, v)
    with acc:
        y = x * x
    np.testing.assert_allclose(acc.jvp(y).numpy(), 2 * x.numpy() * v.numpy())
    assert acc.jvp(x) is v            # a watched primal's tangent is the one given


def test_linear_regression_forward_columns_equal_gradient():
    """The page's first example: one JVP per parameter direction, stacked,
    equals the gradient (one VJP)."""
    x = sg.constant([[2.0, 3.0], [1.0, 4.0]])
    targets = sg.constant([[1.0], [-1.0]])
    kernel = sg.Variable([[0.3], [-0.7]])
    bias = sg.Variable([0.1])

    def loss_fn():
        return np.sum((x @ kernel + bias - targets) ** 2.0)
    kernel_fprop = []
    with sg.ForwardAccumulator(kernel, sg.constant([[1.0], [0.0]])) as acc:
        kernel_fprop.append(acc.jvp(loss_fn()))
    with sg.ForwardAccumulator(kernel, sg.constant([[0.0], [1.0]])) as acc:
        kernel_fprop.append(acc.jvp(loss_fn()))
    with sg.ForwardAccumulator(bias, sg.constant([1.0])) as acc:
        bias_fprop = acc.jvp(loss_fn())
    with sg.GradientTape() as tape:
        loss = loss_fn()
    kernel_grad, bias_grad = tape.gradient(loss, (kernel, bias))
    np.testing.assert_allclose(kernel_grad.numpy(), np.stack([k.numpy() for k in kernel_fprop])[:, None])
    np.testing.assert_allclose(bias_grad.numpy(), bias_fprop.numpy()[None])


def test_nested_accumulators_take_higher_order_from_outer():
    primal = sg.constant(1.1)
    with sg.ForwardAccumulator(primal, sg.constant(1.0)) as outer:
        with sg.ForwardAccumulator(primal, sg.constant(1.0)) as inner:
            primal_out = primal ** sg.constant(3.5)
    inner_jvp = inner.jvp(primal_out)
    np.testing.assert_allclose(inner_jvp.numpy(), 3.5 * 1.1 ** 2.5)
    np.testing.assert_allclose(outer.jvp(inner_jvp).numpy(), 3.5 * 2.5 * 1.1 ** 1.5)
    # inner accumulators do not see the outer one's JVP computation
    assert inner.jvp(outer.jvp(primal_out)) is None


def test_forward_over_backward_hessian_vector_product():
    v = sg.Variable([1.0, 2.0])
    with sg.ForwardAccumulator(v, sg.constant([1.0, 0.0])) as acc:
        with sg.GradientTape() as tape:
            y = np.sum(v ** 3.0)
        backward = tape.gradient(y, v)
    np.testing.assert_allclose(backward.numpy(), [3.0, 12.0])
    np.testing.assert_allclose(acc.jvp(backward).numpy(), [6.0, 0.0])


def test_backward_over_forward():
    """A tape around an accumulator records the JVP computation:
    d/dx <grad f(x), v> = H v."""
    x = sg.constant([0.5, -1.0, 2.0])
    v = np.array([1.0, 2.0, 0.5])
    with sg.GradientTape() as tape:
        tape.watch(x)
        with sg.ForwardAccumulator(x, v) as acc:
            y = np.sum(np.sin(x) * x ** 2)
        jv = acc.jvp(y)
    hv = tape.gradient(jv, x)
    h = autograd.hessian(lambda a: anp.sum(anp.sin(a) * a ** 2))(x.numpy())
    np.testing.assert_allclose(hv.numpy(), h @ v, rtol=1e-12)


def test_third_order_two_accumulators_and_a_tape():
    x = sg.constant(1.3)
    with sg.ForwardAccumulator(x, sg.constant(1.0)) as outer:
        with sg.ForwardAccumulator(x, sg.constant(1.0)) as inner:
            with sg.GradientTape() as tape:
                tape.watch(x)
                y = x ** 4.0
            g = tape.gradient(y, x)
        d2 = inner.jvp(g)
    np.testing.assert_allclose(g.numpy(), 4 * 1.3 ** 3)
    np.testing.assert_allclose(d2.numpy(), 12 * 1.3 ** 2)
    np.testing.assert_allclose(outer.jvp(d2).numpy(), 24 * 1.3)


def test_jvp_lookup_outside_context_and_no_new_tangents_after_exit():
    x = sg.constant(2.0)
    with sg.ForwardAccumulator(x, 1.0) as acc:
        y = x * x
    z = x * x
    np.testing.assert_allclose(acc.jvp(y).numpy(), 4.0)
    assert acc.jvp(z) is None


def test_nested_structures_and_unconnected():
    a, b, c = sg.constant(1.0), sg.constant([1.0, 2.0]), sg.constant(3.0)
    acc = sg.ForwardAccumulator({"a": a, "b": [b]}, {"a": 2.0, "b": [np.array([1.0, -1.0])]})
    with acc:
        y = a * np.sum(b)
        w = c * 2.0
    out = acc.jvp({"y": y, "rest": (w, b)})
    np.testing.assert_allclose(out["y"].numpy(), 2.0 * 3.0 + 1.0 * 0.0)
    assert out["rest"][0] is None
    np.testing.assert_allclose(out["rest"][1].numpy(), [1.0, -1.0])
    zero = acc.jvp(w, unconnected_gradients="zero")
    np.testing.assert_allclose(zero.numpy(), 0.0)
    assert acc.jvp([w], unconnected_gradients=sg.UnconnectedGradients.ZERO)[0].numpy() == 0.0
    with pytest.raises(ValueError):
        acc.jvp(w, unconnected_gradients="sometimes")


def test_tangents_are_converted_to_the_primal_dtype():
    x = sg.constant(np.array([1.0, 2.0], dtype=np.float32))
    with sg.ForwardAccumulator(x, [1, 1]) as acc:
        y = np.sin(x) * x
    assert acc.jvp(x).dtype == np.float32 and acc.jvp(y).dtype == np.float32


def test_watch_adds_tangents():
    x = sg.constant(1.5)
    acc = sg.ForwardAccumulator(x, 1.0)
    acc.watch(x, 2.0)
    with acc:
        y = 2.0 * x
    np.testing.assert_allclose(acc.jvp(y).numpy(), 6.0)


def test_errors():
    x = sg.constant([1.0, 2.0])
    with pytest.raises(ValueError, match="multiple times"):
        sg.ForwardAccumulator([x, x], [x, x])
    with pytest.raises(ValueError, match="structure"):
        sg.ForwardAccumulator([x], (x, x))
    with pytest.raises(ValueError, match="shape"):
        sg.ForwardAccumulator(x, np.ones(3))
    with pytest.raises(ValueError, match="not a Tensor"):
        sg.ForwardAccumulator(np.ones(2), np.ones(2))
    acc = sg.ForwardAccumulator(x, np.ones(2))
    with acc:
        with pytest.raises(ValueError, match="already recording"):
            acc.__enter__()
    with pytest.warns(UserWarning, match="floating"):
        sg.ForwardAccumulator(sg.constant([1, 2]), [1, 1])


def test_no_rule_error_names_register_tangent_or_adjoint():
    x = sg.constant([1.0, 2.0])
    with sg.ForwardAccumulator(x, np.ones(2)):
        with pytest.raises(sg.NoRuleError):
            np.poly(x)      # no tangent rule and no adjoint rule


def test_tangents_of_dead_primals_are_dropped():
    x = sg.constant(1.0)
    acc = sg.ForwardAccumulator(x, 1.0)
    with acc:
        y = x * 2.0
        assert len(acc._tangents) == 2
        del y
        gc.collect()
    assert len(acc._tangents) == 1


def test_accumulator_does_not_leak_into_a_later_tape():
    x = sg.constant(2.0)
    with sg.ForwardAccumulator(x, 1.0):
        pass
    with sg.GradientTape() as tape:
        tape.watch(x)
        y = x ** 3
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 12.0)
    assert not forward_mod.accumulating()


# ---------------------------------------------------------------------------
# Generated JVP code for decorated functions
# ---------------------------------------------------------------------------

def helper(a, c):
    return a * c, np.sin(a)


@sg.function
def loop_branch(x, n):
    y = x
    for i in range(n):
        if i % 2 == 0:
            y = np.sin(y) * x
        else:
            y = y + x
    p, q = helper(y, 2.0)
    s = 0.0
    k = 0
    while k < 2:
        s = s + np.sum(p * q)
        k += 1
    return s


def test_forward_source_of_loop_and_branch_is_readable():
    src = sg.source(loop_branch, wrt=(0,), mode="forward")
    lines = [line.strip() for line in src.splitlines()]
    assert lines[0] == "def loop_branch_jvp(x, n, dx):"
    for expected in ["for i in range(n):", "if cond:", "dsin_y = dy * np.cos(y)",
                     "dy = dsin_y * x + sin_y * dx", "(p, q), (dp, dq) = helper_jvp(y, 2.0, dy)",
                     "ds = 0.0", "dmul_p = dp * q + p * dq", "return (s, ds)"]:
        assert expected in lines, (expected, src)
    assert "# y = np.sin(y) * x  (test_forward.py:" in src
    assert "transpose_jvp" not in src and "_stack" not in src


def test_forward_code_of_loop_and_branch_is_right():
    x, v = np.array([0.3, -0.8, 1.1]), np.array([1.0, 2.0, -0.5])
    for n in (0, 1, 2, 5):
        out, jv = sg.jvp(loop_branch, (x, n), (v, None))
        np.testing.assert_allclose(out, loop_branch.python_function(x, n))
        fd = _directional_fd(lambda a: loop_branch.python_function(a, n), [x], [v], (0,))
        np.testing.assert_allclose(jv, fd, rtol=1e-7, atol=1e-9)


def test_decorated_function_in_accumulator_runs_generated_code():
    x, v = np.array([0.3, -0.8, 1.1]), np.array([1.0, 2.0, -0.5])
    xt = sg.constant(x)
    program = loop_branch.program_for({"x": xt, "n": 3})
    program._compiled.pop(("forward", (True, False)), None)
    with sg.ForwardAccumulator(xt, v) as acc:
        y = loop_branch(xt, 3)
    assert ("forward", (True, False)) in program._compiled
    _, expected = sg.jvp(loop_branch, (x, 3), (v, None))
    np.testing.assert_allclose(acc.jvp(y).numpy(), expected, rtol=1e-13)


W_GLOBAL = sg.Variable([[0.5], [-1.0]])


@sg.function
def model(x):
    return np.sum(np.tanh(x @ W_GLOBAL) ** 2)


def test_accumulator_through_a_variable_read_as_a_global():
    x = np.array([[2.0, 3.0], [1.0, 4.0]])
    with sg.ForwardAccumulator(W_GLOBAL, np.array([[1.0], [0.0]])) as acc:
        y = model(x)
    with sg.GradientTape() as tape:
        y2 = model(x)
    np.testing.assert_allclose(acc.jvp(y).numpy(), tape.gradient(y2, W_GLOBAL).numpy()[0, 0])


@sg.function
def cube(x):
    return np.sum(x ** 3)


def test_decorated_function_forward_over_reverse_and_reverse_over_forward():
    v = sg.Variable([1.0, 2.0])
    with sg.ForwardAccumulator(v, sg.constant([1.0, 0.0])) as acc:
        with sg.GradientTape() as tape:
            y = cube(v)
        backward = tape.gradient(y, v)
    np.testing.assert_allclose(acc.jvp(backward).numpy(), [6.0, 0.0])
    x = sg.constant([1.0, 2.0])
    with sg.GradientTape() as tape:
        tape.watch(x)
        with sg.ForwardAccumulator(x, np.array([1.0, 0.0])) as acc:
            y = cube(x)
        jv = acc.jvp(y)
    np.testing.assert_allclose(jv.numpy(), 3.0)
    np.testing.assert_allclose(tape.gradient(jv, x).numpy(), [6.0, 0.0])


@sg.function
def pair_product(xs):
    return xs[0] * xs[1]


def test_decorated_function_with_tangents_inside_a_list_argument():
    a, b = sg.constant([1.0, 2.0]), sg.constant([3.0, -1.0])
    with sg.ForwardAccumulator(a, np.array([1.0, 1.0])) as acc:
        y = pair_product([a, b])
    np.testing.assert_allclose(acc.jvp(y).numpy(), b.numpy())


@sg.custom_gradient
def st_round(x):
    """Straight-through rounding: the gradient of the identity."""
    def grad(dy):
        return dy * 1.0
    return np.round(x), grad


def uses_round(x):
    return st_round(x) * x


def test_custom_gradient_in_generated_jvp_code_transposes_grad_fn():
    x, v = np.array([0.4, 1.6, -2.2]), np.array([1.0, -1.0, 0.5])
    out, jv = sg.jvp(uses_round, (x,), (v,))
    np.testing.assert_allclose(out, np.round(x) * x)
    np.testing.assert_allclose(jv, v * x + np.round(x) * v)


def test_custom_tangents_helper_for_the_op_by_op_path():
    x = sg.constant([0.4, 1.6])
    with sg.ForwardAccumulator(x, np.array([1.0, 2.0])) as acc:
        y = sg.constant(np.round(x.numpy()))
        forward_mod.custom_tangents((x,), [y], lambda dy: dy * 3.0)
    np.testing.assert_allclose(acc.jvp(y).numpy(), [3.0, 6.0])


def test_source_forward_with_two_inputs_and_bad_mode():
    src = sg.source(c_mul, wrt=(0, 1), mode="forward")
    assert "def c_mul_jvp(x, y, dx, dy):" in src and "dout = dx * y + x * dy" in src
    with pytest.raises(ValueError):
        sg.source(c_mul, mode="sideways")


# ---------------------------------------------------------------------------
# Functional transforms against JAX (x64; jvp only: JAX's eager tracing of
# hessians costs seconds) and autograd
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def jax_x64():
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        yield jax


def f_vec(x, W):
    return np.tanh(W @ x) * np.sum(x ** 2)


def f_vec_jax(x, W):
    import jax.numpy as jnp
    return jnp.tanh(W @ x) * jnp.sum(x ** 2)


def f_scalar(x):
    return np.sum(np.sin(x) * x[0] + np.cos(x) ** 2) + np.prod(x[:2])


RNG = np.random.default_rng(42)


def test_jvp_against_jax(jax_x64):
    x, W = RNG.normal(size=3), RNG.normal(size=(4, 3))
    v, vW = RNG.normal(size=3), RNG.normal(size=(4, 3))
    out, jv = sg.jvp(f_vec, (x, W), (v, vW))
    ref_out, ref_jv = jax_x64.jvp(f_vec_jax, (x, W), (v, vW))
    np.testing.assert_allclose(out, ref_out, rtol=1e-13)
    np.testing.assert_allclose(jv, ref_jv, rtol=1e-12)
    _, jv_x = sg.jvp(f_vec, (x, W), (v, None))
    np.testing.assert_allclose(jv_x, jax_x64.jvp(lambda a: f_vec_jax(a, W), (x,), (v,))[1], rtol=1e-12)


def test_jvp_errors():
    with pytest.raises(ValueError, match="primals but"):
        sg.jvp(c_mul, (1.0, 2.0), (1.0,))
    with pytest.raises(ValueError, match="shape"):
        sg.jvp(c_sin, (np.ones(3),), (np.ones(2),))
    with pytest.raises(TypeError):
        sg.jvp(c_sin, np.ones(3), np.ones(3))


def test_jvp_of_unconnected_output_is_zeros():
    _, jv = sg.jvp(c_mul, (np.ones(2), np.ones(2)), (None, None))
    np.testing.assert_array_equal(jv, np.zeros(2))


def f_vec_ag(x, W):
    return anp.tanh(W @ x) * anp.sum(x ** 2)


@pytest.mark.parametrize("shape_in,mode", [((3,), "forward"), ((6,), "reverse")])
def test_jacobian_forward_and_reverse_against_autograd(shape_in, mode):
    x, W = RNG.normal(size=shape_in), RNG.normal(size=(4,) + shape_in)
    jac = sg.jacobian(f_vec, wrt=0)(x, W)
    assert jac.shape == (4,) + shape_in
    np.testing.assert_allclose(jac, autograd.jacobian(f_vec_ag)(x, W), rtol=1e-12, atol=1e-14)
    jw = sg.jacobian(f_vec, wrt=1)(x, W)          # 4 x 4 x n: reverse mode (more inputs)
    assert jw.shape == (4, 4) + shape_in
    np.testing.assert_allclose(jw, autograd.jacobian(f_vec_ag, 1)(x, W), rtol=1e-12, atol=1e-14)


def c_mat(x):
    return x.T @ x


def test_jacobian_of_matrix_function_has_out_shape_plus_in_shape():
    x = RNG.normal(size=(3, 2))
    jac = sg.jacobian(c_mat)(x)
    assert jac.shape == (2, 2, 3, 2)
    np.testing.assert_allclose(jac, autograd.jacobian(lambda a: a.T @ a)(x), rtol=1e-12)
    j1, j2 = sg.jacobian(c_mul, wrt=(0, 1))(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    np.testing.assert_allclose(j1, np.diag([3.0, 4.0]))
    np.testing.assert_allclose(j2, np.diag([1.0, 2.0]))
    with pytest.raises(TypeError):
        sg.jacobian(helper)(np.ones(2), 1.0)


def f_scalar_ag(x):
    return anp.sum(anp.sin(x) * x[0] + anp.cos(x) ** 2) + anp.prod(x[:2])


def test_hessian_and_hvp_against_autograd():
    x, v = RNG.normal(size=4), RNG.normal(size=4)
    h = sg.hessian(f_scalar)(x)
    assert h.shape == (4, 4)
    ref = autograd.hessian(f_scalar_ag)(x)
    np.testing.assert_allclose(h, ref, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(sg.hvp(f_scalar)(x, v), ref @ v, rtol=1e-12, atol=1e-13)
    with pytest.raises(ValueError, match="shape"):
        sg.hvp(f_scalar)(x, np.ones(3))


def test_hessian_of_decorated_function_wrt_second_argument_and_matrix_input():
    W = RNG.normal(size=(2, 3))
    h = sg.hessian(cube)(W)
    assert h.shape == (2, 3, 2, 3)
    np.testing.assert_allclose(h.reshape(6, 6), np.diag(6.0 * W.ravel()), rtol=1e-13)

    def g(a, x):
        return np.sum(np.exp(a * x))
    x = np.array([0.2, -0.4])
    ref = autograd.hessian(lambda x: anp.sum(anp.exp(1.5 * x)), 0)(x)
    np.testing.assert_allclose(sg.hessian(g, wrt=1)(1.5, x), ref, rtol=1e-13)
    with pytest.raises(ValueError, match="scalar"):
        sg.hessian(c_sin)(np.ones(2))


def test_hessian_float32():
    x = np.array([0.5, 1.0], dtype=np.float32)
    h = sg.hessian(cube)(x)
    assert h.dtype == np.float32
    np.testing.assert_allclose(h, np.diag(6.0 * x), rtol=1e-6)


# -- forward over forward through the transpose trick, for a list parameter

def list_to_array(x):
    return np.array([[x, x * 1.0, x + 2.5], [x ** 2, x, x / 2.0]])


def jvp_of_list_to_array(x, v):
    return sg.jvp(list_to_array, (x,), (v,))[1]


def test_jvp_of_jvp_through_a_list_parameter():
    """np.array([...]) has no tangent rule; its JVP is the transpose of its
    VJP, whose list parameter nests the tangents one level deeper when the
    JVP is differentiated again. The tangent of v was dropped (zeros)."""
    def a_jvp(x, v):                    # d/dx fun(x) * v, by autograd
        return autograd.jacobian(lambda s: anp.array([[s, s * 1.0, s + 2.5], [s ** 2, s, s / 2.0]]))(x) * v
    x, v = 3.0, 0.5
    for dx, dv in [(0.0, 1.0), (1.0, 0.0), (0.7, -1.3)]:
        _, t = sg.jvp(jvp_of_list_to_array, (x, v), (dx, dv))
        expected = autograd.jacobian(a_jvp, 0)(x, v) * dx + autograd.jacobian(a_jvp, 1)(x, v) * dv
        np.testing.assert_allclose(t, expected, rtol=1e-12)
        fd = _directional_fd(jvp_of_list_to_array, [x, v], [dx, dv], (0, 1))
        np.testing.assert_allclose(t, fd, rtol=1e-6, atol=1e-8)


def _max_times_min(a):
    xs = [a[0], a[1] * 2.0]
    return max(xs) * min(xs)        # (builtins on a list: the compiler refuses, op by op differentiates)


def test_accumulator_runs_a_refused_function_op_by_op():
    """An @sg.function the compiler refuses in forward mode runs op by op
    under a ForwardAccumulator (as sg.jvp and sg.grad run it), with the
    PerformanceWarning, instead of raising the refusal."""
    x, t = np.array([1.0, 2.0]), np.array([0.3, -0.7])
    v = sg.Variable(x)
    with pytest.warns(sg.PerformanceWarning, match="op by op"):
        with sg.ForwardAccumulator(v, t) as acc:
            y = sg.function(_max_times_min)(v)
    eps = 1e-6
    fd = (_max_times_min(x + eps * t) - _max_times_min(x - eps * t)) / (2 * eps)
    np.testing.assert_allclose(float(acc.jvp(y)), fd, rtol=1e-8)
    np.testing.assert_allclose(float(acc.jvp(y)), sg.jvp(_max_times_min, (x,), (t,))[1], rtol=1e-12)
