"""Every adjoint rule, through both of srcgrad's paths, in table form.

The table (`CASES`, in the style of jax's `lax_autodiff_test.py`) has one row
per use of a primitive: a module-level case function, the autograd twin of
the operation, the inputs (shape and domain), and the NumPy callable whose
rule it exercises (`covers`).

A case function takes the array inputs and, last, a fixed random cotangent
`w` (never differentiated), and returns the scalar `np.sum(op(inputs) * w)`,
so that the whole vector-Jacobian product of the rule is tested, not just
its action on a ones cotangent:

    def f_mul_op(x, y, w):
        return np.sum((x * y) * w)

Each case is checked

  (a) op by op: the case function run on watched `sg.Tensor`s inside a
      `sg.GradientTape`, against central finite differences of the plain
      NumPy function (float64, rtol 1e-5, atol 1e-6);
  (b) compiled: `sg.grad(f, wrt=...)` (the fused code `sg.source` shows),
      `sg.value_and_grad` (the split forward/adjoint) and `sg.function(f)`
      called inside a tape (one tape entry), against the same differences;
  (c) the paths against one another, value and gradients, to 1e-12;
  (d) against autograd (`ref`, written with `autograd.numpy`);
  (e) in float32: float32 gradients, close (rtol 1e-3) to the float64 ones;
  and each differentiable input alone (the other inputs inactive), which
  makes the compiler generate a different adjoint.

Ties in `np.max`/`np.min` get their own tests (f), and `test_registry_*`
walks the rule registry: a rule registered without a row here fails.

srcgrad compiles from source (`inspect.getsource`), so every case function
is a real `def` in this file, using the module-level `np`.
"""
import functools
import importlib
import pathlib
import operator
import zlib

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad
from srcgrad.rules.helpers.broadcast import unindex, unindex_array
from srcgrad.rules.helpers.shapes import array_adjoint

FD_RTOL, FD_ATOL = 1e-5, 1e-6          # (a), (b): against finite differences
PATH_RTOL, PATH_ATOL = 1e-12, 1e-15    # (c): srcgrad's paths against each other
AG_RTOL, AG_ATOL = 1e-10, 1e-12        # (d): against autograd (round-off only)
F32_RTOL, F32_ATOL = 1e-3, 1e-5        # (e): float32 against float64


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------

from rulecase import Arg, Case, Static, R, P, NZ, B, ND, _draw, _ag_bcast, _ag_reduce  # noqa: F401



# ---------------------------------------------------------------------------
# Case functions: `def f_<case>(inputs..., w): return np.sum(op(inputs) * w)`
# ---------------------------------------------------------------------------

# -- elementwise binary: + - * / **

def f_add_op(x, y, w):
    return np.sum((x + y) * w)


def f_add_np(x, y, w):
    return np.sum(np.add(x, y) * w)


def f_add_const(x, w):
    return np.sum((x + 1.5) * w)


def f_sub_op(x, y, w):
    return np.sum((x - y) * w)


def f_sub_np(x, y, w):
    return np.sum(np.subtract(x, y) * w)


def f_rsub_const(x, w):
    return np.sum((1.5 - x) * w)


def f_mul_op(x, y, w):
    return np.sum((x * y) * w)


def f_mul_np(x, y, w):
    return np.sum(np.multiply(x, y) * w)


def f_mul_const(x, w):
    return np.sum((3.0 * x) * w)


def f_mul_self(x, w):
    return np.sum((x * x) * w)


def f_div_op(x, y, w):
    return np.sum((x / y) * w)


def f_div_np(x, y, w):
    return np.sum(np.true_divide(x, y) * w)


def f_div_np_divide(x, y, w):
    return np.sum(np.divide(x, y) * w)


def f_rdiv_const(x, w):
    return np.sum((1.0 / x) * w)


def f_pow_const_float(x, w):
    return np.sum((x ** 3.0) * w)


def f_pow_const_int(x, w):
    return np.sum((x ** 2) * w)


def f_pow_half(x, w):
    return np.sum((x ** 0.5) * w)


def f_pow_op(x, y, w):
    return np.sum((x ** y) * w)


def f_pow_np(x, y, w):
    return np.sum(np.power(x, y) * w)


def f_pow_const_base(x, w):
    return np.sum((2.0 ** x) * w)


def f_mod_op(x, y, w):
    return np.sum((x % y) * w)


def f_mod_np(x, y, w):
    return np.sum(np.remainder(x, y) * w)


def f_mod_np_mod(x, y, w):
    return np.sum(np.mod(x, y) * w)


def f_mod_const(x, w):
    return np.sum((x % 1.5) * w)


# -- elementwise unary

def f_neg_op(x, w):
    return np.sum((-x) * w)


def f_neg_np(x, w):
    return np.sum(np.negative(x) * w)


def f_pos_op(x, w):
    return np.sum((+x) * w)


def f_pos_np(x, w):
    return np.sum(np.positive(x) * w)


def f_exp(x, w):
    return np.sum(np.exp(x) * w)


def f_log(x, w):
    return np.sum(np.log(x) * w)


def f_sqrt(x, w):
    return np.sum(np.sqrt(x) * w)


def f_tanh(x, w):
    return np.sum(np.tanh(x) * w)


def f_sin(x, w):
    return np.sum(np.sin(x) * w)


def f_cos(x, w):
    return np.sum(np.cos(x) * w)


def f_abs(x, w):
    return np.sum(np.abs(x) * w)


def f_absolute(x, w):
    return np.sum(np.absolute(x) * w)


# -- maximum, minimum, where

def f_maximum(x, y, w):
    return np.sum(np.maximum(x, y) * w)


def f_maximum_const(x, w):
    return np.sum(np.maximum(x, 0.0) * w)


def f_minimum(x, y, w):
    return np.sum(np.minimum(x, y) * w)


def f_minimum_const(x, w):
    return np.sum(np.minimum(x, 0.25) * w)


def f_where_cmp(x, y, w):
    return np.sum(np.where(x > 0.0, x, y) * w)


def f_where_mask(c, x, y, w):
    return np.sum(np.where(c, x, y) * w)


def f_where_zero(c, x, w):
    return np.sum(np.where(c, x, 0.0) * w)


def f_where_leaky(x, w):
    return np.sum(np.where(x > 0.0, x, 0.1 * x) * w)


# -- reductions, every axis / keepdims combination on a (3, 4) input

# np.sum
def f_sum_axNone(x, w):
    return np.sum(np.sum(x) * w)


def f_sum_axNone_kd(x, w):
    return np.sum(np.sum(x, axis=None, keepdims=True) * w)


def f_sum_ax0(x, w):
    return np.sum(np.sum(x, axis=0) * w)


def f_sum_ax0_kd(x, w):
    return np.sum(np.sum(x, axis=0, keepdims=True) * w)


def f_sum_ax1(x, w):
    return np.sum(np.sum(x, axis=1) * w)


def f_sum_ax1_kd(x, w):
    return np.sum(np.sum(x, axis=1, keepdims=True) * w)


def f_sum_ax01(x, w):
    return np.sum(np.sum(x, axis=(0, 1)) * w)


def f_sum_ax01_kd(x, w):
    return np.sum(np.sum(x, axis=(0, 1), keepdims=True) * w)


def f_sum_axm1(x, w):
    return np.sum(np.sum(x, axis=-1) * w)


def f_sum_axm1_kd(x, w):
    return np.sum(np.sum(x, axis=-1, keepdims=True) * w)


# np.mean

def f_mean_axNone(x, w):
    return np.sum(np.mean(x) * w)


def f_mean_axNone_kd(x, w):
    return np.sum(np.mean(x, axis=None, keepdims=True) * w)


def f_mean_ax0(x, w):
    return np.sum(np.mean(x, axis=0) * w)


def f_mean_ax0_kd(x, w):
    return np.sum(np.mean(x, axis=0, keepdims=True) * w)


def f_mean_ax1(x, w):
    return np.sum(np.mean(x, axis=1) * w)


def f_mean_ax1_kd(x, w):
    return np.sum(np.mean(x, axis=1, keepdims=True) * w)


def f_mean_ax01(x, w):
    return np.sum(np.mean(x, axis=(0, 1)) * w)


def f_mean_ax01_kd(x, w):
    return np.sum(np.mean(x, axis=(0, 1), keepdims=True) * w)


def f_mean_axm1(x, w):
    return np.sum(np.mean(x, axis=-1) * w)


def f_mean_axm1_kd(x, w):
    return np.sum(np.mean(x, axis=-1, keepdims=True) * w)


# np.max

def f_amax_ax1(x, w):
    return np.sum(np.amax(x, axis=1) * w)


def f_amin_ax0_kd(x, w):
    return np.sum(np.amin(x, axis=0, keepdims=True) * w)


def f_max_axNone(x, w):
    return np.sum(np.max(x) * w)


def f_max_axNone_kd(x, w):
    return np.sum(np.max(x, axis=None, keepdims=True) * w)


def f_max_ax0(x, w):
    return np.sum(np.max(x, axis=0) * w)


def f_max_ax0_kd(x, w):
    return np.sum(np.max(x, axis=0, keepdims=True) * w)


def f_max_ax1(x, w):
    return np.sum(np.max(x, axis=1) * w)


def f_max_ax1_kd(x, w):
    return np.sum(np.max(x, axis=1, keepdims=True) * w)


def f_max_ax01(x, w):
    return np.sum(np.max(x, axis=(0, 1)) * w)


def f_max_ax01_kd(x, w):
    return np.sum(np.max(x, axis=(0, 1), keepdims=True) * w)


def f_max_axm1(x, w):
    return np.sum(np.max(x, axis=-1) * w)


def f_max_axm1_kd(x, w):
    return np.sum(np.max(x, axis=-1, keepdims=True) * w)


# np.min

def f_min_axNone(x, w):
    return np.sum(np.min(x) * w)


def f_min_axNone_kd(x, w):
    return np.sum(np.min(x, axis=None, keepdims=True) * w)


def f_min_ax0(x, w):
    return np.sum(np.min(x, axis=0) * w)


def f_min_ax0_kd(x, w):
    return np.sum(np.min(x, axis=0, keepdims=True) * w)


def f_min_ax1(x, w):
    return np.sum(np.min(x, axis=1) * w)


def f_min_ax1_kd(x, w):
    return np.sum(np.min(x, axis=1, keepdims=True) * w)


def f_min_ax01(x, w):
    return np.sum(np.min(x, axis=(0, 1)) * w)


def f_min_ax01_kd(x, w):
    return np.sum(np.min(x, axis=(0, 1), keepdims=True) * w)


def f_min_axm1(x, w):
    return np.sum(np.min(x, axis=-1) * w)


def f_min_axm1_kd(x, w):
    return np.sum(np.min(x, axis=-1, keepdims=True) * w)


# -- reductions on 3-d inputs, and with the axis passed as an argument

def f_sum_3d_ax02(x, w):
    return np.sum(np.sum(x, axis=(0, 2)) * w)


def f_mean_3d_axm1_kd(x, w):
    return np.sum(np.mean(x, axis=-1, keepdims=True) * w)


def f_max_3d_ax1(x, w):
    return np.sum(np.max(x, axis=1) * w)


def f_min_3d_ax20_kd(x, w):
    return np.sum(np.min(x, axis=(2, 0), keepdims=True) * w)


def f_sum_axis_arg(x, axis, w):
    return np.sum(np.sum(x, axis=axis) * w)


def f_mean_axis_arg(x, axis, w):
    return np.sum(np.mean(x, axis=axis) * w)


def f_max_axis_kd_arg(x, axis, keepdims, w):
    return np.sum(np.max(x, axis=axis, keepdims=keepdims) * w)


# -- ndarray attribute / method spellings

def f_m_sum(x, w):
    return np.sum(x.sum() * w)


def f_m_sum_ax0(x, w):
    return np.sum(x.sum(axis=0) * w)


def f_m_sum_ax1_kd(x, w):
    return np.sum(x.sum(axis=1, keepdims=True) * w)


def f_m_mean(x, w):
    return np.sum(x.mean() * w)


def f_m_mean_ax0(x, w):
    return np.sum(x.mean(axis=0) * w)


def f_m_max_ax1(x, w):
    return np.sum(x.max(axis=1) * w)


def f_m_min(x, w):
    return np.sum(x.min() * w)


def f_m_T(x, w):
    return np.sum(x.T * w)


def f_m_transpose(x, w):
    return np.sum(x.transpose() * w)


def f_m_transpose_args(x, w):
    return np.sum(x.transpose(1, 2, 0) * w)


def f_m_transpose_tuple(x, w):
    return np.sum(x.transpose((2, 0, 1)) * w)


def f_m_reshape_args(x, w):
    return np.sum(x.reshape(2, 6) * w)


def f_m_reshape_tuple(x, w):
    return np.sum(x.reshape((6, 2)) * w)


def f_m_reshape_m1(x, w):
    return np.sum(x.reshape(-1) * w)


def f_m_dot(x, y, w):
    return np.sum(x.dot(y) * w)


# -- linear algebra

def f_matmul_op(x, y, w):
    return np.sum((x @ y) * w)


def f_matmul_np(x, y, w):
    return np.sum(np.matmul(x, y) * w)


def f_dot(x, y, w):
    return np.sum(np.dot(x, y) * w)


# -- shapes

def f_reshape_tuple(x, w):
    return np.sum(np.reshape(x, (4, 3)) * w)


def f_reshape_m1(x, w):
    return np.sum(np.reshape(x, -1) * w)


def f_reshape_2m1(x, w):
    return np.sum(np.reshape(x, (2, -1)) * w)


def f_reshape_3d(x, w):
    return np.sum(np.reshape(x, (6, 4)) * w)


def f_reshape_kw(x, w):
    return np.sum(np.reshape(x, shape=(4, 3)) * w)


def f_transpose(x, w):
    return np.sum(np.transpose(x) * w)


def f_transpose_102(x, w):
    return np.sum(np.transpose(x, (1, 0, 2)) * w)


def f_transpose_201(x, w):
    return np.sum(np.transpose(x, (2, 0, 1)) * w)


def f_transpose_kw(x, w):
    return np.sum(np.transpose(x, axes=(1, 2, 0)) * w)


def f_transpose_neg(x, w):
    return np.sum(np.transpose(x, (-1, 0, 1)) * w)


def f_swapaxes(x, w):
    return np.sum(np.swapaxes(x, 0, 2) * w)


def f_swapaxes_neg(x, w):
    return np.sum(np.swapaxes(x, -1, 1) * w)


def f_expand_dims_1(x, w):
    return np.sum(np.expand_dims(x, 1) * w)


def f_expand_dims_m1(x, w):
    return np.sum(np.expand_dims(x, -1) * w)


def f_expand_dims_tuple(x, w):
    return np.sum(np.expand_dims(x, (0, 2)) * w)


def f_squeeze(x, w):
    return np.sum(np.squeeze(x) * w)


def f_squeeze_axis(x, w):
    return np.sum(np.squeeze(x, axis=1) * w)


def f_broadcast_to_row(x, w):
    return np.sum(np.broadcast_to(x, (3, 4)) * w)


def f_broadcast_to_3d(x, w):
    return np.sum(np.broadcast_to(x, (2, 3, 4)) * w)


# -- indexing (operator.getitem) and its adjoint's adjoint (unindex)

def f_getitem_int(x, w):
    return np.sum(x[1] * w)


def f_getitem_neg_int(x, w):
    return np.sum(x[-1] * w)


def f_getitem_slice(x, w):
    return np.sum(x[1:3] * w)


def f_getitem_col(x, w):
    return np.sum(x[:, 1] * w)


def f_getitem_step(x, w):
    return np.sum(x[::-1, ::2] * w)


def f_getitem_scalar(x, w):
    return np.sum(x[1, 2] * w)


def f_getitem_ellipsis(x, w):
    return np.sum(x[..., 0] * w)


def f_getitem_newaxis(x, w):
    return np.sum(x[:, None] * w)


def f_getitem_list(x, w):
    return np.sum(x[[0, 2, 0]] * w)


def f_getitem_array_arg(x, idx, w):
    return np.sum(x[idx] * w)


def f_getitem_pairs_arg(x, rows, cols, w):
    return np.sum(x[rows, cols] * w)


def f_getitem_mask(x, w):
    return np.sum(x[x > 0.0] * w)


def f_unindex(g, x, idx, w):
    return np.sum(unindex(g, x, idx) * w)


def f_array_adjoint(g, w):
    rows = array_adjoint(g, [[1.0, 2.0, 0.5], [3.0, 4.0, 0.0]])
    return np.sum(np.stack([np.stack(r) for r in rows]) * w)


# ---------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------

C = Case
CASES = [
    # ---- + - * / ** with broadcasting undone: (3,4) op (4,), (3,1) op (1,4),
    #      scalar op (2,3), and Python constants
    C("add_op_34_4", f_add_op, lambda x, y: x + y, (R(3, 4), R(4)), np.add),
    C("add_np_31_14", f_add_np, lambda x, y: anp.add(x, y), (R(3, 1), R(1, 4)), np.add),
    C("add_op_scalar_23", f_add_op, lambda x, y: x + y, (R(), R(2, 3)), np.add),
    C("add_np_23_scalar", f_add_np, lambda x, y: anp.add(x, y), (R(2, 3), R()), np.add),
    C("add_np_234_31", f_add_np, lambda x, y: anp.add(x, y), (R(2, 3, 4), R(3, 1)), np.add),
    C("add_const", f_add_const, lambda x: x + 1.5, (R(3, 4),), np.add),
    C("sub_op_4_34", f_sub_op, lambda x, y: x - y, (R(4), R(3, 4)), np.subtract),
    C("sub_np_31_14", f_sub_np, lambda x, y: anp.subtract(x, y), (R(3, 1), R(1, 4)), np.subtract),
    C("sub_op_23_scalar", f_sub_op, lambda x, y: x - y, (R(2, 3), R()), np.subtract),
    C("sub_np_scalar_23", f_sub_np, lambda x, y: anp.subtract(x, y), (R(), R(2, 3)), np.subtract),
    C("rsub_const", f_rsub_const, lambda x: 1.5 - x, (R(3, 4),), np.subtract),
    C("mul_op_34_4", f_mul_op, lambda x, y: x * y, (R(3, 4), R(4)), np.multiply),
    C("mul_np_31_14", f_mul_np, lambda x, y: anp.multiply(x, y), (R(3, 1), R(1, 4)), np.multiply),
    C("mul_op_scalar_23", f_mul_op, lambda x, y: x * y, (R(), R(2, 3)), np.multiply),
    C("mul_np_234_31", f_mul_np, lambda x, y: anp.multiply(x, y), (R(2, 3, 4), R(3, 1)), np.multiply),
    C("mul_const", f_mul_const, lambda x: 3.0 * x, (R(3, 4),), np.multiply),
    C("mul_self", f_mul_self, lambda x: x * x, (R(3, 4),), np.multiply),
    C("div_op_34_4", f_div_op, lambda x, y: x / y, (R(3, 4), NZ(4)), np.true_divide),
    C("div_np_31_14", f_div_np, lambda x, y: anp.true_divide(x, y), (R(3, 1), NZ(1, 4)), np.true_divide),
    C("div_np_divide_34_34", f_div_np_divide, lambda x, y: anp.divide(x, y), (R(3, 4), NZ(3, 4)),
      np.divide),
    C("div_op_scalar_23", f_div_op, lambda x, y: x / y, (R(), NZ(2, 3)), np.true_divide),
    C("div_op_23_scalar", f_div_op, lambda x, y: x / y, (R(2, 3), NZ()), np.true_divide),
    C("rdiv_const", f_rdiv_const, lambda x: 1.0 / x, (NZ(3, 4),), np.true_divide),
    C("pow_const_float", f_pow_const_float, lambda x: x ** 3.0, (R(3, 4),), np.power),
    C("pow_const_int", f_pow_const_int, lambda x: x ** 2, (R(3, 4),), np.power),
    C("pow_half", f_pow_half, lambda x: x ** 0.5, (P(3, 4),), np.power),
    C("pow_op_34_4", f_pow_op, lambda x, y: x ** y, (P(3, 4), R(4)), np.power),
    C("pow_np_31_14", f_pow_np, lambda x, y: anp.power(x, y), (P(3, 1), R(1, 4)), np.power),
    C("pow_op_23_scalar", f_pow_op, lambda x, y: x ** y, (P(2, 3), R()), np.power),
    C("pow_op_scalar_23", f_pow_op, lambda x, y: x ** y, (P(), R(2, 3)), np.power),
    C("pow_const_base", f_pow_const_base, lambda x: 2.0 ** x, (R(3, 4),), np.power),
    C("mod_op_34_4", f_mod_op, lambda x, y: x % y, (R(3, 4), NZ(4)), np.remainder),
    C("mod_np_31_14", f_mod_np, lambda x, y: anp.remainder(x, y), (R(3, 1), NZ(1, 4)), np.remainder),
    C("mod_np_mod_scalar_23", f_mod_np_mod, lambda x, y: anp.mod(x, y), (R(), NZ(2, 3)), np.mod),
    C("mod_const", f_mod_const, lambda x: x % 1.5, (R(3, 4),), np.remainder),

    # ---- unary elementwise
    C("neg_op", f_neg_op, lambda x: -x, (R(3, 4),), np.negative),
    C("neg_np", f_neg_np, lambda x: anp.negative(x), (R(3, 4),), np.negative),
    C("pos_op", f_pos_op, lambda x: x, (R(3, 4),), np.positive),  # ArrayBox has no unary +
    C("pos_np", f_pos_np, lambda x: x, (R(3, 4),), np.positive),
    C("exp", f_exp, lambda x: anp.exp(x), (R(3, 4),), np.exp),
    C("exp_scalar", f_exp, lambda x: anp.exp(x), (R(),), np.exp),
    C("log", f_log, lambda x: anp.log(x), (P(3, 4),), np.log),
    C("log_scalar", f_log, lambda x: anp.log(x), (P(),), np.log),
    C("sqrt", f_sqrt, lambda x: anp.sqrt(x), (P(3, 4),), np.sqrt),
    C("sqrt_3d", f_sqrt, lambda x: anp.sqrt(x), (P(2, 3, 4),), np.sqrt),
    C("tanh", f_tanh, lambda x: anp.tanh(x), (R(3, 4),), np.tanh),
    C("tanh_scalar", f_tanh, lambda x: anp.tanh(x), (R(),), np.tanh),
    C("sin", f_sin, lambda x: anp.sin(x), (R(3, 4),), np.sin),
    C("sin_3d", f_sin, lambda x: anp.sin(x), (R(2, 3, 4),), np.sin),
    C("cos", f_cos, lambda x: anp.cos(x), (R(3, 4),), np.cos),
    C("cos_scalar", f_cos, lambda x: anp.cos(x), (R(),), np.cos),
    C("abs", f_abs, lambda x: anp.abs(x), (NZ(3, 4),), np.abs),
    C("absolute", f_absolute, lambda x: anp.absolute(x), (NZ(2, 3, 4),), np.absolute),

    # ---- maximum, minimum, where (3-argument)
    C("maximum_34_4", f_maximum, lambda x, y: anp.maximum(x, y), (R(3, 4), R(4)), np.maximum),
    C("maximum_31_14", f_maximum, lambda x, y: anp.maximum(x, y), (R(3, 1), R(1, 4)), np.maximum),
    C("maximum_scalar_23", f_maximum, lambda x, y: anp.maximum(x, y), (R(), R(2, 3)), np.maximum),
    C("maximum_const", f_maximum_const, lambda x: anp.maximum(x, 0.0), (NZ(3, 4),), np.maximum),
    C("minimum_34_4", f_minimum, lambda x, y: anp.minimum(x, y), (R(3, 4), R(4)), np.minimum),
    C("minimum_31_14", f_minimum, lambda x, y: anp.minimum(x, y), (R(3, 1), R(1, 4)), np.minimum),
    C("minimum_23_scalar", f_minimum, lambda x, y: anp.minimum(x, y), (R(2, 3), R()), np.minimum),
    C("minimum_const", f_minimum_const, lambda x: anp.minimum(x, 0.25), (NZ(3, 4),), np.minimum),
    C("where_cmp_34_34", f_where_cmp, lambda x, y: anp.where(x > 0.0, x, y), (NZ(3, 4), R(3, 4)),
      np.where),
    C("where_cmp_34_4", f_where_cmp, lambda x, y: anp.where(x > 0.0, x, _ag_bcast(y, x)),
      (NZ(3, 4), R(4)), np.where),
    C("where_cmp_23_scalar", f_where_cmp, lambda x, y: anp.where(x > 0.0, x, _ag_bcast(y, x)),
      (NZ(2, 3), R()), np.where),
    C("where_mask_31_14_34", f_where_mask, lambda c, x, y: anp.where(c, _ag_bcast(x, y), y),
      (B(3, 1), R(1, 4), R(3, 4)), np.where),
    C("where_zero", f_where_zero, lambda c, x: anp.where(c, x, 0.0), (B(3, 4), R(3, 4)), np.where),
    C("where_leaky", f_where_leaky, lambda x: anp.where(x > 0.0, x, 0.1 * x), (NZ(3, 4),), np.where),
]

# ---- reductions: np.sum / np.mean / np.max / np.min on a (3, 4) input, with
#      axis None, 0, 1, (0, 1), -1 and keepdims False/True (one `def` each)
_AXES = {"None": None, "0": 0, "1": 1, "01": (0, 1), "m1": -1}
_REDUCTIONS = {"sum": (np.sum, anp.sum), "mean": (np.mean, anp.mean),
               "max": (np.max, anp.max), "min": (np.min, anp.min)}
for _red, (_np_fn, _ag_fn) in _REDUCTIONS.items():
    for _an, _axis in _AXES.items():
        for _kd in (False, True):
            _name = "%s_ax%s%s" % (_red, _an, "_kd" if _kd else "")
            CASES.append(C(_name, globals()["f_" + _name], _ag_reduce(_ag_fn, _axis, _kd), (R(3, 4),),
                           _np_fn, meta={"reduction": _red, "axis": _axis, "keepdims": _kd}))

CASES += [
    C("sum_3d_ax02", f_sum_3d_ax02, _ag_reduce(anp.sum, (0, 2), False), (R(2, 3, 4),), np.sum),
    C("mean_3d_axm1_kd", f_mean_3d_axm1_kd, _ag_reduce(anp.mean, -1, True), (R(2, 3, 4),), np.mean),
    C("max_3d_ax1", f_max_3d_ax1, _ag_reduce(anp.max, 1, False), (R(2, 3, 4),), np.max),
    C("amax_ax1", f_amax_ax1, _ag_reduce(anp.max, 1, False), (R(3, 4),), np.amax),
    C("amin_ax0_kd", f_amin_ax0_kd, _ag_reduce(anp.min, 0, True), (R(3, 4),), np.amin),
    C("min_3d_ax20_kd", f_min_3d_ax20_kd, _ag_reduce(anp.min, (2, 0), True), (R(2, 3, 4),), np.min),
    C("sum_axis_arg_1", f_sum_axis_arg, lambda x, axis: anp.sum(x, axis=axis),
      (R(3, 4), Static(1)), np.sum),
    C("mean_axis_arg_tuple", f_mean_axis_arg, lambda x, axis: anp.mean(x, axis=axis),
      (R(2, 3, 4), Static((0, 2))), np.mean),
    C("max_axis_kd_arg", f_max_axis_kd_arg, lambda x, axis, kd: anp.max(x, axis=axis, keepdims=kd),
      (R(2, 3, 4), Static(-2), Static(True)), np.max),

    # ---- the ndarray spellings users write
    C("method_sum", f_m_sum, lambda x: anp.sum(x), (R(3, 4),), np.sum),
    C("method_sum_ax0", f_m_sum_ax0, lambda x: anp.sum(x, axis=0), (R(3, 4),), np.sum),
    C("method_sum_ax1_kd", f_m_sum_ax1_kd, lambda x: anp.sum(x, axis=1, keepdims=True), (R(3, 4),),
      np.sum),
    C("method_mean", f_m_mean, lambda x: anp.mean(x), (R(3, 4),), np.mean),
    C("method_mean_ax0", f_m_mean_ax0, lambda x: anp.mean(x, axis=0), (R(3, 4),), np.mean),
    C("method_max_ax1", f_m_max_ax1, lambda x: anp.max(x, axis=1), (R(3, 4),), np.max),
    C("method_min", f_m_min, lambda x: anp.min(x), (R(3, 4),), np.min),
    C("attr_T", f_m_T, lambda x: anp.transpose(x), (R(3, 4),), np.transpose),
    C("attr_T_3d", f_m_T, lambda x: anp.transpose(x), (R(2, 3, 4),), np.transpose),
    C("method_transpose", f_m_transpose, lambda x: anp.transpose(x), (R(3, 4),), np.transpose),
    C("method_transpose_args", f_m_transpose_args, lambda x: anp.transpose(x, (1, 2, 0)),
      (R(2, 3, 4),), np.transpose),
    C("method_transpose_tuple", f_m_transpose_tuple, lambda x: anp.transpose(x, (2, 0, 1)),
      (R(2, 3, 4),), np.transpose),
    C("method_reshape_args", f_m_reshape_args, lambda x: anp.reshape(x, (2, 6)), (R(3, 4),),
      np.reshape),
    C("method_reshape_tuple", f_m_reshape_tuple, lambda x: anp.reshape(x, (6, 2)), (R(3, 4),),
      np.reshape),
    C("method_reshape_m1", f_m_reshape_m1, lambda x: anp.reshape(x, -1), (R(3, 4),), np.reshape),
    C("method_dot", f_m_dot, lambda x, y: anp.dot(x, y), (R(3, 4), R(4, 5)), np.dot),

    # ---- matmul and dot: matrix, batched, broadcast batch, vectors
    C("matmul_op_34_45", f_matmul_op, lambda x, y: anp.matmul(x, y), (R(3, 4), R(4, 5)), np.matmul),
    C("matmul_np_34_45", f_matmul_np, lambda x, y: anp.matmul(x, y), (R(3, 4), R(4, 5)), np.matmul),
    C("matmul_op_234_45", f_matmul_op, lambda x, y: anp.matmul(x, y), (R(2, 3, 4), R(4, 5)),
      np.matmul),
    C("matmul_np_234_245", f_matmul_np, lambda x, y: anp.matmul(x, y), (R(2, 3, 4), R(2, 4, 5)),
      np.matmul),
    C("matmul_op_134_245", f_matmul_op, lambda x, y: anp.matmul(x, y), (R(1, 3, 4), R(2, 4, 5)),
      np.matmul),
    C("matmul_op_34_245", f_matmul_op, lambda x, y: anp.matmul(x, y), (R(3, 4), R(2, 4, 5)),
      np.matmul),
    C("matmul_op_vec_mat", f_matmul_op, lambda x, y: anp.matmul(x, y), (R(4), R(4, 5)), np.matmul),
    C("matmul_op_mat_vec", f_matmul_op, lambda x, y: anp.matmul(x, y), (R(3, 4), R(4)), np.matmul),
    C("matmul_op_vec_vec", f_matmul_op, lambda x, y: anp.matmul(x, y), (R(4), R(4)), np.matmul),
    C("matmul_np_vec_batch", f_matmul_np, lambda x, y: anp.matmul(x, y), (R(4), R(2, 4, 5)),
      np.matmul),
    C("matmul_np_batch_vec", f_matmul_np, lambda x, y: anp.matmul(x, y), (R(2, 3, 4), R(4)),
      np.matmul),
    C("dot_mat_mat", f_dot, lambda x, y: anp.dot(x, y), (R(3, 4), R(4, 5)), np.dot),
    C("dot_vec_vec", f_dot, lambda x, y: anp.dot(x, y), (R(4), R(4)), np.dot),
    C("dot_mat_vec", f_dot, lambda x, y: anp.dot(x, y), (R(3, 4), R(4)), np.dot),
    C("dot_vec_mat", f_dot, lambda x, y: anp.dot(x, y), (R(4), R(4, 5)), np.dot),
    C("dot_scalar_vec", f_dot, lambda x, y: anp.dot(x, y), (R(), R(3)), np.dot),
    C("dot_mat_scalar", f_dot, lambda x, y: anp.dot(x, y), (R(3, 4), R()), np.dot),
    C("dot_3d_mat", f_dot, lambda x, y: anp.dot(x, y), (R(2, 3, 4), R(4, 5)), np.dot),
    C("dot_mat_3d", f_dot, lambda x, y: anp.dot(x, y), (R(3, 4), R(2, 4, 5)), np.dot),
    C("dot_3d_3d", f_dot, lambda x, y: anp.dot(x, y), (R(2, 3, 4), R(2, 4, 5)), np.dot),

    # ---- shapes
    C("reshape_tuple", f_reshape_tuple, lambda x: anp.reshape(x, (4, 3)), (R(3, 4),), np.reshape),
    C("reshape_m1", f_reshape_m1, lambda x: anp.reshape(x, -1), (R(3, 4),), np.reshape),
    C("reshape_2m1", f_reshape_2m1, lambda x: anp.reshape(x, (2, -1)), (R(3, 4),), np.reshape),
    C("reshape_3d", f_reshape_3d, lambda x: anp.reshape(x, (6, 4)), (R(2, 3, 4),), np.reshape),
    C("reshape_kw", f_reshape_kw, lambda x: anp.reshape(x, (4, 3)), (R(3, 4),), np.reshape),
    C("transpose_2d", f_transpose, lambda x: anp.transpose(x), (R(3, 4),), np.transpose),
    C("transpose_3d", f_transpose, lambda x: anp.transpose(x), (R(2, 3, 4),), np.transpose),
    C("transpose_axes_102", f_transpose_102, lambda x: anp.transpose(x, (1, 0, 2)), (R(2, 3, 4),),
      np.transpose),
    C("transpose_axes_201", f_transpose_201, lambda x: anp.transpose(x, (2, 0, 1)), (R(2, 3, 4),),
      np.transpose),
    C("transpose_axes_kw", f_transpose_kw, lambda x: anp.transpose(x, (1, 2, 0)), (R(2, 3, 4),),
      np.transpose),
    C("transpose_axes_neg", f_transpose_neg, lambda x: anp.transpose(x, (2, 0, 1)), (R(2, 3, 4),),
      np.transpose),
    C("swapaxes", f_swapaxes, lambda x: anp.swapaxes(x, 0, 2), (R(2, 3, 4),), np.swapaxes),
    C("swapaxes_neg", f_swapaxes_neg, lambda x: anp.swapaxes(x, -1, 1), (R(2, 3, 4),), np.swapaxes),
    C("expand_dims_1", f_expand_dims_1, lambda x: anp.expand_dims(x, 1), (R(3, 4),), np.expand_dims),
    C("expand_dims_m1", f_expand_dims_m1, lambda x: anp.expand_dims(x, -1), (R(3, 4),),
      np.expand_dims),
    C("expand_dims_tuple", f_expand_dims_tuple, lambda x: anp.reshape(x, (1, 3, 1, 4)), (R(3, 4),),
      np.expand_dims),
    C("squeeze", f_squeeze, lambda x: anp.squeeze(x), (R(3, 1, 4),), np.squeeze),
    C("squeeze_axis", f_squeeze_axis, lambda x: anp.squeeze(x, axis=1), (R(3, 1, 1),), np.squeeze),
    C("broadcast_to_row", f_broadcast_to_row, lambda x: x + anp.zeros((3, 4)), (R(4),),
      np.broadcast_to),
    C("broadcast_to_3d", f_broadcast_to_3d, lambda x: x + anp.zeros((2, 3, 4)), (R(3, 1),),
      np.broadcast_to),

    # ---- indexing: x[...] is operator.getitem; repeated indices accumulate
    C("getitem_int", f_getitem_int, lambda x: x[1], (R(3, 4),), operator.getitem),
    C("getitem_neg_int", f_getitem_neg_int, lambda x: x[-1], (R(3, 4),), operator.getitem),
    C("getitem_slice", f_getitem_slice, lambda x: x[1:3], (R(4, 3),), operator.getitem),
    C("getitem_col", f_getitem_col, lambda x: x[:, 1], (R(3, 4),), operator.getitem),
    C("getitem_step", f_getitem_step, lambda x: x[::-1, ::2], (R(4, 5),), operator.getitem),
    C("getitem_scalar", f_getitem_scalar, lambda x: x[1, 2], (R(3, 4),), operator.getitem),
    C("getitem_ellipsis", f_getitem_ellipsis, lambda x: x[..., 0], (R(2, 3, 4),), operator.getitem),
    C("getitem_newaxis", f_getitem_newaxis, lambda x: x[:, None], (R(3, 4),), operator.getitem),
    C("getitem_list_repeated", f_getitem_list, lambda x: x[[0, 2, 0]], (R(3, 4),), operator.getitem),
    C("getitem_array_arg", f_getitem_array_arg, lambda x, idx: x[idx],
      (R(4, 3), Static(np.array([2, 0, 2, 1]))), operator.getitem),
    C("getitem_pairs_arg", f_getitem_pairs_arg, lambda x, r, c: x[r, c],
      (R(3, 4), Static(np.array([0, 1, 0])), Static(np.array([1, 1, 1]))), operator.getitem),
    C("getitem_mask", f_getitem_mask, lambda x: x[x > 0.0], (NZ(3, 4),), operator.getitem),
    # unindex(g, x, idx) scatters g into zeros shaped like x: linear in g
    C("unindex", f_unindex, lambda g, x, idx: anp.dot(np.eye(x.shape[0])[idx].T, g),
      (R(3, 3), ND(4, 3), Static(np.array([0, 2, 0]))), (unindex, unindex_array)),
    # array_adjoint(g, obj) (np.array's adjoint) splits g into obj's nested lists: linear in g
    C("array_adjoint", f_array_adjoint, lambda g: g * 1.0, (R(2, 3),), array_adjoint),
]

# The per-family tables: every tests/rules/cases_*.py module's CASES.
for _path in sorted(pathlib.Path(__file__).parent.glob("cases_*.py")):
    CASES += importlib.import_module(_path.stem).CASES

BY_NAME = {c.name: c for c in CASES}
assert len(BY_NAME) == len(CASES), "duplicate case names"

# The rules this release must have (the brief), by NumPy callable.
REQUIRED = [np.add, np.subtract, np.multiply, np.true_divide, np.power, np.matmul,
            np.negative, np.exp, np.log, np.sqrt, np.tanh, np.sin, np.cos, np.abs,
            np.maximum, np.minimum, np.where, np.sum, np.mean, np.max, np.dot,
            np.reshape, np.transpose]


def _covers(case):
    return case.covers if isinstance(case.covers, tuple) else (case.covers,)


# ---------------------------------------------------------------------------
# Running a case
# ---------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _data64(name):
    """Inputs and cotangent `w` of a case: float64, seeded by the case name
    (so a case's data does not depend on which tests run)."""
    case = BY_NAME[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    args = tuple(a.value if isinstance(a, Static) else _draw(rng, a) for a in case.inputs)
    out_shape = np.shape(case.ref(*args))
    w = rng.normal(0.0, 1.0, out_shape)
    return args, w


def _data(name, dtype="float64"):
    """Fresh copies of a case's data, floating arrays cast to `dtype`."""
    case = BY_NAME[name]
    args, w = _data64(name)
    out = []
    for spec, a in zip(case.inputs, args):
        if isinstance(spec, Arg) and spec.domain != "bool":
            a = np.array(a, dtype=dtype)
        out.append(a)
    return out, np.array(w, dtype=dtype)


def _np(v):
    if v is None:
        return None
    if isinstance(v, sg.Tensor):
        return v.numpy()
    return np.asarray(v)


def _tensors(case, args):
    """The differentiable inputs as sg.Tensors (watched or not), the rest as is."""
    return [sg.constant(a) if i in case.wrt else a for i, a in enumerate(args)]


def _path_tape(case, args, w, active):
    """(a) op by op: the undecorated case function run on Tensors."""
    xs = _tensors(case, args)
    with sg.GradientTape() as tape:
        for i in active:
            tape.watch(xs[i])
        loss = case.fn(*xs, w)
    grads = tape.gradient(loss, [xs[i] for i in active])
    return _np(loss), [_np(g) for g in grads]


_FUNCTIONS = {}


def _decorated(fn):
    """sg.function(fn), one per case function (shared by the rows using it)."""
    if fn not in _FUNCTIONS:
        _FUNCTIONS[fn] = sg.function(fn)
    return _FUNCTIONS[fn]


def _path_function(case, args, w, active):
    """(b) @sg.function called inside a tape: one entry, generated adjoint."""
    f = _decorated(case.fn)
    xs = _tensors(case, args)
    with sg.GradientTape() as tape:
        for i in active:
            tape.watch(xs[i])
        loss = f(*xs, w)
    grads = tape.gradient(loss, [xs[i] for i in active])
    return _np(loss), [_np(g) for g in grads]


def _path_grad(case, args, w, active):
    """(b) sg.grad: the fused code sg.source shows (no value)."""
    g = sg.grad(case.fn, wrt=tuple(active))(*args, w)
    grads = list(g) if len(active) > 1 else [g]
    return None, [_np(x) for x in grads]


def _path_value_and_grad(case, args, w, active):
    """(b) sg.value_and_grad: split forward + adjoint."""
    value, g = sg.value_and_grad(case.fn, wrt=tuple(active))(*args, w)
    grads = list(g) if len(active) > 1 else [g]
    return _np(value), [_np(x) for x in grads]


PATHS = {"tape": _path_tape, "grad": _path_grad, "value_and_grad": _path_value_and_grad,
         "function": _path_function}
# the default suite runs float32 and the one-input-at-a-time masks through the tape and sg.grad; the
# other compiled paths (the same generated code, another entry point) join with --slow (they are
# checked in float64 with every input by test_gradient_vs_finite_differences and against the tape)
SLOW_PATHS = [p if p in ("tape", "grad") else pytest.param(p, marks=pytest.mark.slow) for p in PATHS]


def _reference(name):
    """The path the others are compared with: the op-by-op tape, or sg.grad
    for rows the tape cannot run (meta compiled_only: np.array)."""
    return "grad" if BY_NAME[name].meta.get("compiled_only") else "tape"


@functools.lru_cache(maxsize=None)
def _run(name, path, dtype="float64", active=None):
    """(value, [gradient per active input]) of a case through one path.
    `active` defaults to all differentiable inputs. Failures are not cached."""
    case = BY_NAME[name]
    if path == "tape" and case.meta.get("compiled_only"):
        pytest.skip("np.array has no NumPy dispatch hook: op by op it detaches (compiled code only)")
    args, w = _data(name, dtype)
    return PATHS[path](case, args, w, case.wrt if active is None else active)


@functools.lru_cache(maxsize=None)
def _finite_differences(name):
    """Central differences of the plain NumPy case function, per input."""
    case = BY_NAME[name]
    args, w = _data(name)
    grads = {}
    for i in case.wrt:
        def loss(v, i=i):
            a = list(args)
            a[i] = v
            return case.fn(*a, w)
        grads[i] = numerical_grad(loss, args[i])
    return grads


def _autograd(name):
    case = BY_NAME[name]
    args, w = _data(name)

    def loss(*a):
        return anp.sum(case.ref(*a) * w)
    return {i: autograd.grad(loss, i)(*args) for i in case.wrt}


def _check_grads(actual, expected, rtol, atol, what):
    for (i, e), a in zip(expected.items(), actual):
        try:
            check_close(a, e, rtol=rtol, atol=atol)
        except AssertionError as err:
            raise AssertionError("%s, input %d: %s" % (what, i, err)) from None


def _case_params(cases=CASES):
    return [pytest.param(c.name, id=c.name) for c in cases]


MULTI_INPUT = [(c.name, i) for c in CASES if len(c.wrt) > 1 for i in c.wrt]


# ---------------------------------------------------------------------------
# (a), (b): every path against central finite differences, float64
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("name", _case_params())
def test_gradient_vs_finite_differences(name, path):
    value, grads = _run(name, path)
    fd = _finite_differences(name)
    assert len(grads) == len(fd)
    for g in grads:
        assert g is not None and g.dtype == np.float64, (type(g), getattr(g, "dtype", None))
    _check_grads(grads, fd, FD_RTOL, FD_ATOL, "%s vs finite differences" % path)


@pytest.mark.parametrize("path", SLOW_PATHS)
@pytest.mark.parametrize("name,argnum", [
    pytest.param(n, i, id="%s-d%s" % (n, BY_NAME[n].param_name(i))) for n, i in MULTI_INPUT])
def test_one_input_at_a_time(name, argnum, path):
    """Only input `argnum` active: the others are unwatched Tensors on the tape
    and inactive arguments to the compiler (a different generated adjoint)."""
    value, grads = _run(name, path, active=(argnum,))
    assert len(grads) == 1
    _check_grads(grads, {argnum: _finite_differences(name)[argnum]}, FD_RTOL, FD_ATOL,
                 "%s, only input %d active" % (path, argnum))


# ---------------------------------------------------------------------------
# (c): the paths agree with one another, value and gradient
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["grad", "value_and_grad", "function"])
@pytest.mark.parametrize("name", _case_params())
def test_compiled_agrees_with_tape(name, path):
    tape_value, tape_grads = _run(name, _reference(name))
    value, grads = _run(name, path)
    if tape_value is None:
        tape_value = BY_NAME[name].fn(*_data(name)[0], _data(name)[1])
    case = BY_NAME[name]
    args, w = _data(name)
    np.testing.assert_allclose(tape_value, case.fn(*args, w), rtol=PATH_RTOL, atol=PATH_ATOL,
                               err_msg="tape value vs plain NumPy")
    if value is not None:
        assert np.shape(value) == ()
        np.testing.assert_allclose(value, tape_value, rtol=PATH_RTOL, atol=PATH_ATOL,
                                   err_msg="%s value vs tape value" % path)
    _check_grads(grads, dict(zip(case.wrt, tape_grads)), PATH_RTOL, PATH_ATOL,
                 "%s vs tape" % path)


# ---------------------------------------------------------------------------
# (d): autograd agrees
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", _case_params())
def test_autograd_agrees(name):
    case = BY_NAME[name]
    args, w = _data(name)
    # The table's two spellings compute the same loss.
    np.testing.assert_allclose(case.fn(*args, w), np.sum(case.ref(*args) * w), rtol=1e-12,
                               err_msg="table row: fn and ref disagree")
    expected = _autograd(name)
    for path in sorted({_reference(name), "grad"}):
        _check_grads(_run(name, path)[1], expected, AG_RTOL, AG_ATOL, "%s vs autograd" % path)


# ---------------------------------------------------------------------------
# (e): float32 in, float32 gradients out
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("path", SLOW_PATHS)
@pytest.mark.parametrize("name", _case_params())
def test_float32(name, path):
    value, grads = _run(name, path, "float32")
    for g in grads:
        assert g is not None
        assert g.dtype == np.float32, "%s gradient dtype %s for float32 inputs" % (path, g.dtype)
    case = BY_NAME[name]
    expected = dict(zip(case.wrt, _run(name, _reference(name))[1]))
    _check_grads([g.astype(np.float64) for g in grads], expected, F32_RTOL, F32_ATOL,
                 "%s float32 vs float64" % path)


# ---------------------------------------------------------------------------
# (f): ties in np.max / np.min
#
# Observed (and documented in the README, matching autograd and JAX): the
# cotangent of a reduced entry is split evenly among the k tied maximal
# entries (1/k each); other entries get 0. The requirement asserted first is
# weaker: the mass is conserved (the gradient summed over the reduced axes
# is the upstream cotangent) and no tied entry gets a negative share of a
# positive cotangent.
# ---------------------------------------------------------------------------

TIES = np.array([[3.0, 1.0, 3.0, 2.0],
                 [3.0, 2.0, 0.0, 2.0],
                 [1.0, 2.0, 3.0, 2.0]])   # ties along both axes and overall
TIE_CASES = [c for c in CASES if c.meta.get("reduction") in ("max", "min")]
TIE_PATHS = ["tape", "grad", "function"]


def _tie_inputs(case, dtype=np.float64):
    x = TIES if case.meta["reduction"] == "max" else -TIES
    axis, kd = case.meta["axis"], case.meta["keepdims"]
    rng = np.random.default_rng(7)
    w = rng.uniform(0.5, 1.5, np.shape(np.max(x, axis=axis, keepdims=kd)))
    return x.astype(dtype), w.astype(dtype)


def _tie_grad(case, path, x, w):
    return PATHS[path](case, [x], w, (0,))[1][0]


def _attained(x, case):
    """Mask of the entries attaining the reduced max (min), and its counts."""
    axis = case.meta["axis"]
    red = np.max if case.meta["reduction"] == "max" else np.min
    mask = x == red(x, axis=axis, keepdims=True)
    return mask, np.sum(mask, axis=axis, keepdims=True)


@pytest.mark.parametrize("path", TIE_PATHS)
@pytest.mark.parametrize("name", _case_params(TIE_CASES))
def test_ties_conserve_mass(name, path):
    case = BY_NAME[name]
    x, w = _tie_inputs(case)
    g = _tie_grad(case, path, x, w)
    axis = case.meta["axis"]
    mask, count = _attained(x, case)
    assert np.any(count > 1), "the input must have ties for this reduction"
    w_kd = np.reshape(w, count.shape)
    np.testing.assert_allclose(np.sum(g, axis=axis, keepdims=True), w_kd, rtol=1e-12,
                               err_msg="gradient mass over the reduced axes != cotangent")
    assert np.all(g[mask] >= 0.0), g
    assert np.all(g[~mask] == 0.0), g


@pytest.mark.parametrize("path", TIE_PATHS)
@pytest.mark.parametrize("name", _case_params(TIE_CASES))
def test_ties_split_evenly(name, path):
    """The documented convention: 1/k of the cotangent to each of k ties, as
    autograd does."""
    case = BY_NAME[name]
    x, w = _tie_inputs(case)
    g = _tie_grad(case, path, x, w)
    mask, count = _attained(x, case)
    expected = mask / count * np.reshape(w, count.shape)
    np.testing.assert_allclose(g, expected, rtol=1e-12, atol=0)
    agf = autograd.grad(lambda v: anp.sum(case.ref(v) * w))
    np.testing.assert_allclose(g, agf(x), rtol=1e-12, atol=0)


@pytest.mark.parametrize("path", TIE_PATHS)
@pytest.mark.parametrize("name", _case_params(TIE_CASES[:4]))
def test_ties_float32(name, path):
    case = BY_NAME[name]
    x, w = _tie_inputs(case, np.float32)
    g = _tie_grad(case, path, x, w)
    assert g.dtype == np.float32
    mask, count = _attained(x, case)
    np.testing.assert_allclose(g, mask / count * np.reshape(w, count.shape), rtol=1e-6)


@pytest.mark.parametrize("path", TIE_PATHS)
def test_maximum_minimum_ties_split_half(path):
    """np.maximum(x, y) / np.minimum at x == y: each side gets half (README;
    autograd's rule), so the total is the cotangent."""
    x = np.array([1.0, -2.0, 0.5, 3.0])
    y = np.array([1.0, -2.0, 0.0, 4.0])
    w = np.array([1.0, 2.0, 3.0, 4.0])
    for fn in (f_maximum, f_minimum):
        case = Case("ties_" + fn.__name__, fn, None, (R(4), R(4)), None)
        gx, gy = PATHS[path](case, [x, y], w, (0, 1))[1]
        tie = x == y
        np.testing.assert_allclose(gx[tie], w[tie] / 2, rtol=1e-12)
        np.testing.assert_allclose(gy[tie], w[tie] / 2, rtol=1e-12)
        np.testing.assert_allclose(gx + gy, w, rtol=1e-12)


@pytest.mark.parametrize("path", TIE_PATHS)
def test_abs_at_zero_is_zero(path):
    """d|x|/dx at 0 is 0 (README; autograd and JAX)."""
    x = np.array([0.0, -1.5, 2.0])
    w = np.array([1.0, 2.0, 3.0])
    case = BY_NAME["abs"]
    (g,) = PATHS[path](case, [x], w, (0,))[1]
    np.testing.assert_allclose(g, [0.0, -2.0, 3.0], rtol=1e-12)


# ---------------------------------------------------------------------------
# The registry: every rule has a row, every required rule is registered
# ---------------------------------------------------------------------------

def _registry():
    from srcgrad.rules.registry import adjoint_rules
    return adjoint_rules()


def _label(f):
    return getattr(f, "__module__", None) or "", getattr(f, "__name__", repr(f))


def test_registry_every_rule_has_a_case():
    covered = {f for c in CASES for f in _covers(c)}
    missing = [f for f in _registry() if f not in covered]
    assert not missing, "rules with no row in tests/rules/test_rules.py CASES: %s" % [
        _label(f) for f in missing]


def test_registry_required_rules_registered():
    rules = _registry()
    missing = [f for f in REQUIRED if f not in rules]
    assert not missing, "required rules not registered: %s" % [_label(f) for f in missing]


def test_registry_every_case_names_a_registered_rule():
    rules = _registry()
    stray = [(c.name, _label(f)) for c in CASES for f in _covers(c) if f not in rules]
    assert not stray, "rows whose `covers` has no registered rule: %s" % stray


def test_registry_every_required_rule_is_tested_with_broadcasting_or_axes():
    """Each required rule has at least two rows (shapes / spellings)."""
    counts = {f: sum(f in _covers(c) for c in CASES) for f in REQUIRED}
    thin = [_label(f) for f, n in counts.items() if n < 2]
    assert not thin, thin
