"""Rule rows for what generated code calls (srcgrad/rules/generated_code.py):
the helpers are linear in their cotangent argument, and their rules (each
other's transposes) are what differentiates generated code again. Each case
calls the helper directly, as generated code does. einsum_adjoint, which
np.einsum's adjoint calls, has rules of its own so that second-order code
calls it rather than compiling its body (audit 11; its regression tests are
in test_audit_rules.py). transpose_jvp_packed (srcgrad/forward_mode.py) is
what generated JVP code calls for a rule without a tangent rule: its rows
give it the JVP of np.cumprod and np.prod, whose reference is written with
autograd (cumprod(x) cumsum(v / x), prod(x) sum(v / x); autograd has no
cumprod rule: running products)."""
import autograd.numpy as anp
import numpy as np

from rulecase import Case, P, R, ND, Static
from srcgrad import runtime
from srcgrad.forward_mode import transpose_jvp_packed
from srcgrad.rules.helpers.broadcast import rereduce, unbroadcast, unreduce
from srcgrad.rules.helpers.complex import conj, real_if_close_cotangent, real_if_close_tangent
from srcgrad.rules.helpers.products import einsum_adjoint
from srcgrad.rules.python import containers


def f_unbroadcast(g, x, w):
    return np.sum(unbroadcast(g, x) * w)


def f_unreduce(g, x, axis, w):
    return np.sum(unreduce(g, x, axis) * w)


def f_unreduce_all(g, x, w):
    return np.sum(unreduce(g, x) * w)


def f_rereduce(h, g, axis, w):
    return np.sum(rereduce(h, g, axis) * w)


def f_conj(x, w):
    return np.sum(conj(x) * w)


def f_densify(g, x, w):
    return np.sum(runtime.densify(g, x) * w)


def f_densify_tree(x, w):
    out = runtime.densify_tree([x, None], [x, x])
    return np.sum((out[0] * 2.0 + out[1]) * w)


def f_add_cotangents(x, y, w):
    return np.sum(runtime.add_cotangents(x, y) * w)


def f_add_cotangents_lists(x, y, w):
    out = runtime.add_cotangents([x, None], [y, x])
    return np.sum((out[0] + out[1] * 3.0) * w)


def f_as_input(g, x, w):
    return np.sum(runtime.as_input(g, x) * w)


def f_dict_get(x, y, w):
    d = {"a": x}
    return np.sum((d.get("a", y) * 2.0 + d.get("b", y)) * w)


def f_get_cotangent(x, w):
    return np.sum(containers.get_cotangent(x, {"a": 1.0, "b": 2.0}, "a")["a"] * w)


def f_repeat_cotangent(x, y, w):
    c = containers.repeat_cotangent([x, y, x * 2.0, None], [0.0, 0.0])
    return np.sum((c[0] + c[1] * 2.0) * w)


def f_repeat_list(x, w):
    r = containers.repeat_list([x, None], [0.0] * 4)
    return np.sum((r[0] + r[2] * 2.0) * w)


def f_default_cotangent(x, w):
    absent = containers.default_cotangent(x, {"a": 1.0}, "b", w)          # x
    present = containers.default_cotangent(x * 2.0, {"a": 1.0}, "a", w)  # zeros
    return np.sum((absent + present) * w)


def f_real_if_close_cotangent(x, w):
    return np.sum(real_if_close_cotangent(x, x * 1.0, x) * w)


def f_real_if_close_tangent(x, w):
    return np.sum(real_if_close_tangent(x * 2.0, x) * w)


def f_as_input_tree(x, w):
    out = runtime.as_input_tree([x, None], (x, x))
    return np.sum((out[0] * 2.0 + out[1]) * w)


CASES = [
    Case("unbroadcast_sum", f_unbroadcast, lambda g, x: anp.sum(g, axis=0), (R(3, 4), ND(4)), unbroadcast),
    Case("unbroadcast_keepdim", f_unbroadcast, lambda g, x: anp.sum(g, axis=1, keepdims=True),
         (R(3, 4), ND(3, 1)), unbroadcast),
    Case("unbroadcast_up", f_unbroadcast, lambda g, x: g + anp.zeros((3, 4)), (R(4), ND(3, 4)), unbroadcast),
    Case("unreduce_axis", f_unreduce, lambda g, x, axis: anp.reshape(g, (3, 1)) + anp.zeros((3, 4)),
         (R(3), ND(3, 4), Static(1)), unreduce),
    Case("unreduce_all", f_unreduce_all, lambda g, x: g + anp.zeros((3, 4)), (R(), ND(3, 4)), unreduce),
    Case("rereduce_axis", f_rereduce, lambda h, g, axis: anp.sum(h, axis=1), (R(3, 4), ND(3), Static(1)),
         rereduce),
    Case("conj_real", f_conj, lambda x: x, (R(3, 2),), conj),
    Case("densify", f_densify, lambda g, x: g, (R(3), ND(3)), runtime.densify),
    Case("densify_tree", f_densify_tree, lambda x: 2.0 * x, (R(3),), runtime.densify_tree),
    Case("add_cotangents", f_add_cotangents, lambda x, y: x + y, (R(3, 2), R(3, 2)), runtime.add_cotangents),
    Case("add_cotangents_lists", f_add_cotangents_lists, lambda x, y: x + y + 3.0 * x, (R(3), R(3)),
         runtime.add_cotangents),
    Case("as_input_broadcast", f_as_input, lambda g, x: g + anp.zeros((2, 3)), (R(3), ND(2, 3)), runtime.as_input),
    Case("as_input_tree", f_as_input_tree, lambda x: 2.0 * x, (R(3),), runtime.as_input_tree),
    Case("real_if_close_cotangent", f_real_if_close_cotangent, lambda x: x, (R(3),), real_if_close_cotangent),
    Case("real_if_close_tangent", f_real_if_close_tangent, lambda x: 2.0 * x, (R(3),), real_if_close_tangent),
    Case("dict_get", f_dict_get, lambda x, y: 2.0 * x + y, (R(3), R(3)), dict.get),
    Case("get_cotangent", f_get_cotangent, lambda x: x, (R(3),), containers.get_cotangent),
    Case("repeat_cotangent", f_repeat_cotangent, lambda x, y: 3.0 * x + 2.0 * y, (R(3), R(3)),
         containers.repeat_cotangent),
    Case("repeat_list", f_repeat_list, lambda x: 3.0 * x, (R(3),), containers.repeat_list),
    Case("default_cotangent", f_default_cotangent, lambda x: x, (R(3),), containers.default_cotangent),
]


# ---------------------------------------------------------- einsum's adjoint

def f_einsum_adjoint(g, a, b, w):
    c = einsum_adjoint(g, ["ij,jk->ik", a, b])
    return np.sum(np.concatenate([np.ravel(c[1]), np.ravel(c[2])]) * w)


def _ag_einsum_adjoint(g, a, b):
    return anp.concatenate([anp.ravel(anp.dot(g, b.T)), anp.ravel(anp.dot(a.T, g))])


def f_einsum_adjoint_interleaved(g, a, w):
    c = einsum_adjoint(g, [a, [0, 1], a, [0, 1], [0]])      # einsum('ij,ij->i', a, a)
    return np.sum((c[0] + 2.0 * c[2]) * w)


def _ag_einsum_adjoint_interleaved(g, a):
    return 3.0 * g[:, None] * a


CASES += [
    Case("audit_einsum_adjoint", f_einsum_adjoint, _ag_einsum_adjoint, (R(2, 4), R(2, 3), R(3, 4)),
      einsum_adjoint),
    Case("audit_einsum_adjoint_interleaved", f_einsum_adjoint_interleaved, _ag_einsum_adjoint_interleaved,
      (R(3), R(3, 2)), einsum_adjoint),
]


def f_transpose_jvp_cumprod(x, v, w):
    return np.sum(transpose_jvp_packed(np.cumprod, np.cumprod(x), (v,), (x, 0, None, None)) * w)


def f_transpose_jvp_prod(x, v, w):
    return np.sum(transpose_jvp_packed(np.prod, np.prod(x, axis=1), (v,), (x, 1, None, None, False, None)) * w)


def _ag_cumprod(x):
    out = [x[0]]
    for i in range(1, x.shape[0]):
        out.append(out[-1] * x[i])
    return anp.stack(out)


CASES += [
    Case("transpose_jvp_packed_cumprod", f_transpose_jvp_cumprod,
         lambda x, v: _ag_cumprod(x) * anp.cumsum(v / x), (P(4), R(4)), (transpose_jvp_packed, np.cumprod)),
    Case("transpose_jvp_packed_prod", f_transpose_jvp_prod,
         lambda x, v: anp.prod(x, axis=1) * anp.sum(v / x, axis=1), (P(2, 3), R(2, 3)),
         (transpose_jvp_packed, np.prod)),
]

