"""Rule-test rows for scipy.special's plain-Python functions called as SciPy's
own objects (srcgrad/rules/scipy/special.py): scipy.special.logsumexp
with every `axis` form, keepdims and the weights b (broadcast), and
scipy.special.softmax and log_softmax with every `axis` form (None, an
int, negative, a tuple; a 0-d input).

softmax and log_softmax rows run op by op too: while a tape records,
tape/scipy_calls.py replaces SciPy's functions that have rules by wrappers
that record the call. References for them: exp(x - logsumexp(x)) and
x - logsumexp(x) written with autograd.numpy (autograd has no softmax).

SciPy converts Tensors with np.asarray, so these rows are `compiled_only`
(sg.grad, value_and_grad, @sg.function on a tape). The srcgrad wrapper of the
same function (srcgrad.rules.scipy_special.logsumexp, recorded op by op) has
its rows in cases_reductions.py. References: autograd.scipy.special.logsumexp,
which differentiates `a` and takes `b` as a constant; rows that differentiate
b use log(sum(b exp(a))) written with autograd.numpy.
"""
import autograd.numpy as anp
import autograd.scipy.special as asp
import numpy as np
import scipy.special
from rulecase import Case, P, R, _raw

C = Case
CO = {"compiled_only": True}


def f_sp_logsumexp(x, w):
    return np.sum(scipy.special.logsumexp(x) * w)


def f_sp_logsumexp_ax1(x, w):
    return np.sum(scipy.special.logsumexp(x, axis=1) * w)


def f_sp_logsumexp_ax0_kd(x, w):
    return np.sum(scipy.special.logsumexp(x, axis=0, keepdims=True) * w)


def f_sp_logsumexp_axes(x, w):
    return np.sum(scipy.special.logsumexp(x, axis=(0, 2)) * w)


def f_sp_logsumexp_b(x, b, w):
    return np.sum(scipy.special.logsumexp(x, axis=-1, b=b) * w)


def f_sp_logsumexp_b_positional(x, b, w):
    return np.sum(scipy.special.logsumexp(x, None, b) * w)


def f_sp_softmax(x, w):
    return np.sum(scipy.special.softmax(x) * w)


def f_sp_softmax_ax0(x, w):
    return np.sum(scipy.special.softmax(x, axis=0) * w)


def f_sp_softmax_ax1_positional(x, w):
    return np.sum(scipy.special.softmax(x, 1) * w)


def f_sp_softmax_axm1(x, w):
    return np.sum(scipy.special.softmax(x, axis=-1) * w)


def f_sp_softmax_axes(x, w):
    return np.sum(scipy.special.softmax(x, axis=(0, 2)) * w)


def f_sp_softmax_of_product(x, y, w):
    return np.sum(scipy.special.softmax(x * y, axis=1) * w)


def f_sp_log_softmax(x, w):
    return np.sum(scipy.special.log_softmax(x) * w)


def f_sp_log_softmax_ax0(x, w):
    return np.sum(scipy.special.log_softmax(x, axis=0) * w)


def f_sp_log_softmax_axm1(x, w):
    return np.sum(scipy.special.log_softmax(x, axis=-1) * w)


def f_sp_log_softmax_axes(x, w):
    return np.sum(scipy.special.log_softmax(x, axis=(2, 0)) * w)


def f_sp_log_softmax_of_product(x, y, w):
    return np.sum(scipy.special.log_softmax(x * y, axis=0) * w)


def _ag_log_softmax(x, axis=None):
    """x - log(sum(exp(x))) over axis, shifted by the (constant) maximum
    (autograd's logsumexp gives a 0-d input a (1,)-shaped gradient)."""
    m = np.max(_raw(x), axis=axis, keepdims=True)
    return x - (anp.log(anp.sum(anp.exp(x - m), axis=axis, keepdims=True)) + m)


def _ag_softmax(x, axis=None):
    return anp.exp(_ag_log_softmax(x, axis))


def _ag_lse_b(x, b, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = anp.log(anp.sum(b * anp.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else anp.squeeze(out, axis=axis)


CASES = [
    C("sp_logsumexp", f_sp_logsumexp, lambda x: asp.logsumexp(x), (R(3, 4),),
      scipy.special.logsumexp, meta=CO),
    C("sp_logsumexp_ax1", f_sp_logsumexp_ax1, lambda x: asp.logsumexp(x, axis=1), (R(3, 4),),
      scipy.special.logsumexp, meta=CO),
    C("sp_logsumexp_ax0_kd", f_sp_logsumexp_ax0_kd,
      lambda x: asp.logsumexp(x, axis=0, keepdims=True), (R(3, 4),), scipy.special.logsumexp,
      meta=CO),
    C("sp_logsumexp_axes", f_sp_logsumexp_axes, lambda x: asp.logsumexp(x, axis=(0, 2)),
      (R(2, 3, 4),), scipy.special.logsumexp, meta=CO),
    C("sp_logsumexp_b", f_sp_logsumexp_b, lambda x, b: _ag_lse_b(x, b, axis=-1),
      (R(3, 4), P(4)), scipy.special.logsumexp, meta=CO),
    C("sp_logsumexp_b_positional", f_sp_logsumexp_b_positional, lambda x, b: _ag_lse_b(x, b),
      (R(3, 4), P(3, 4)), scipy.special.logsumexp, meta=CO),
    C("sp_softmax", f_sp_softmax, _ag_softmax, (R(3, 4),), scipy.special.softmax),
    C("sp_softmax_0d", f_sp_softmax, _ag_softmax, (R(),), scipy.special.softmax),
    C("sp_softmax_ax0", f_sp_softmax_ax0, lambda x: _ag_softmax(x, 0), (R(3, 4),), scipy.special.softmax),
    C("sp_softmax_ax1_positional", f_sp_softmax_ax1_positional, lambda x: _ag_softmax(x, 1), (R(3, 4),),
      scipy.special.softmax),
    C("sp_softmax_axm1_3d", f_sp_softmax_axm1, lambda x: _ag_softmax(x, -1), (R(2, 3, 4),),
      scipy.special.softmax),
    C("sp_softmax_axes", f_sp_softmax_axes, lambda x: _ag_softmax(x, (0, 2)), (R(2, 3, 4),),
      scipy.special.softmax),
    C("sp_softmax_of_product", f_sp_softmax_of_product, lambda x, y: _ag_softmax(x * y, 1),
      (R(3, 4), R(4)), (scipy.special.softmax, np.multiply)),
    C("sp_log_softmax", f_sp_log_softmax, _ag_log_softmax, (R(3, 4),), scipy.special.log_softmax),
    C("sp_log_softmax_0d", f_sp_log_softmax, _ag_log_softmax, (R(),), scipy.special.log_softmax),
    C("sp_log_softmax_ax0", f_sp_log_softmax_ax0, lambda x: _ag_log_softmax(x, 0), (R(3, 4),),
      scipy.special.log_softmax),
    C("sp_log_softmax_axm1_3d", f_sp_log_softmax_axm1, lambda x: _ag_log_softmax(x, -1), (R(2, 3, 4),),
      scipy.special.log_softmax),
    C("sp_log_softmax_axes", f_sp_log_softmax_axes, lambda x: _ag_log_softmax(x, (2, 0)), (R(2, 3, 4),),
      scipy.special.log_softmax),
    C("sp_log_softmax_of_product", f_sp_log_softmax_of_product, lambda x, y: _ag_log_softmax(x * y, 0),
      (R(3, 1), R(1, 4)), (scipy.special.log_softmax, np.multiply)),
]
