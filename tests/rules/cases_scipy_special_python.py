"""Rule-test rows for scipy.special's plain-Python functions called as SciPy's
own objects (srcgrad/rules/scipy/special.py): scipy.special.logsumexp
with every `axis` form, keepdims and the weights b (broadcast).

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
from rulecase import Case, P, R

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
]
