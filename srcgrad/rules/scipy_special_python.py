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

from .helpers import unbroadcast, unreduce
from .helpers_math import logsumexp_value, logsumexp_value_cotangent, logsumexp_weights
from .registry import adjoint_rule, register_adjoint


@register_adjoint(sp.logsumexp)
def scipy_logsumexp(z, a, axis=None, b=None, keepdims=False, return_sign=False):
    """z = log sum(b exp(a)): d/da = b exp(a - z) (the softmax weights), d/db = exp(a - z),
    for every `axis` (int, tuple, None) and `keepdims`; b broadcasts against a. With
    return_sign=True, z = (r, s), r = log|S|, s = sign S for S = sum(b exp(a)): d/da =
    s b exp(a - r), d/db = s exp(a - r) (the sign is piecewise constant)."""
    g = unreduce(logsumexp_value_cotangent(d[z], z, return_sign), a, axis, keepdims)
    d[a] = g * logsumexp_weights(a, logsumexp_value(z, return_sign), axis, keepdims, b)
    d[b] = unbroadcast(g * logsumexp_weights(a, logsumexp_value(z, return_sign), axis, keepdims), b)


# with return_sign=True the output is the pair (r, s), read as r, s = ...: generated
# code holds it as a container (its cotangent is a list; an array is left as is)
adjoint_rule(sp.logsumexp).sequence_output = True
