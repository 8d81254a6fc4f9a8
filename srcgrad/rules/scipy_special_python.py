"""Adjoint rules for scipy.special's plain-Python functions, keyed on SciPy's
own function objects (optional: imported only when SciPy is).

scipy_special.py registers rules for srcgrad's Tensor-aware wrappers of
these functions (srcgrad.rules.scipy_special.logsumexp, ...), which the
op-by-op tape records. User code that calls SciPy's function itself,

    from scipy.special import logsumexp
    def loss(x): return logsumexp(x, axis=1).sum()

is differentiated by the compiled paths (sg.grad, @sg.function), which find
the rule below by the callee object. The op-by-op tape cannot: SciPy
converts its input with np.asarray, which detaches a Tensor.
"""
import scipy.special as sp

from .helpers import nondiff_helper, unbroadcast, unreduce
from .helpers_math import logsumexp_weights
from .registry import register_adjoint


@nondiff_helper
def refuse_return_sign(return_sign):
    """1 when logsumexp returns the value alone; NotImplementedError for
    return_sign=True, whose (value, sign) tuple has no rule here."""
    if return_sign:
        raise NotImplementedError(
            "srcgrad: scipy.special.logsumexp(..., return_sign=True) is not differentiable; "
            "differentiate logsumexp of a positive weight b instead")
    return 1


@register_adjoint(sp.logsumexp)
def scipy_logsumexp(z, a, axis=None, b=None, keepdims=False, return_sign=False):
    """z = log sum(b exp(a)): d/da = b exp(a - z) (the softmax weights), d/db = exp(a - z),
    for every `axis` (int, tuple, None) and `keepdims`; b broadcasts against a."""
    g = unreduce(d[z], a, axis, keepdims) * refuse_return_sign(return_sign)
    d[a] = g * logsumexp_weights(a, z, axis, keepdims, b)
    d[b] = unbroadcast(g * logsumexp_weights(a, z, axis, keepdims), b)
