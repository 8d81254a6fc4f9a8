"""Adjoint rules for scipy.special (optional: imported only when SciPy is).

The derivatives are the standard ones (DLMF: 5.15 polygamma, 7.2 erf,
8.8 incomplete gamma, 10.6/10.29 Bessel; autograd's scipy/special.py
differentiates the same list; TF's math_grad.py for erfinv, ndtri, lgamma).
scipy.special's ufuncs dispatch on srcgrad Tensors like NumPy's, so the
op-by-op tape records them. A few scipy.special functions are plain Python
functions that convert their input to an ndarray (logsumexp, polygamma,
multigammaln): the tape cannot see them, so this module exports
Tensor-aware primitives of the same name and signature, which are what the
rules are registered for:

    from srcgrad.rules.scipy.special import logsumexp, polygamma, multigammaln

SciPy's own function objects get rules too where user code calls them
directly (scipy.special.logsumexp, softmax, log_softmax: the end of this
module); the compiled paths (sg.grad, @sg.function) find those by the
callee object, and while a tape records, tape/scipy_calls.py replaces them
by wrappers that record the call with the same rule (SciPy itself would
convert a Tensor with np.asarray).

In the notation of rules/numpy/__init__.py. Templates reach SciPy as
`sp.name` (a template's own name shadows the module-level one).
"""
import math

import numpy as np
import scipy.special as sp

from ...runtime import primitive
from ..helpers.broadcast import unbroadcast, unreduce
from ..helpers.complex import cast_like, conj, float_dtype, sign
from ..helpers.stats import not_differentiable
from ..helpers.special import logsumexp_value, logsumexp_value_cotangent, logsumexp_weights
from ..registry import adjoint_rule, register_adjoint, register_nondiff
from ..tangents import register_tangent

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
SQRT_2PI = math.sqrt(2.0 * math.pi)


# ------------------------------------------- Tensor-aware Python functions


@primitive
def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """scipy.special.logsumexp, recorded on the tape (with return_sign=True,
    the pair (log|S|, sign S))."""
    return sp.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)


@primitive
def polygamma(n, x):
    """scipy.special.polygamma in x's floating dtype, recorded on the tape."""
    out = np.asarray(sp.polygamma(n, x))
    dtype = float_dtype(x)
    return out.astype(dtype) if out.dtype != dtype else out


@primitive
def multigammaln(a, d):
    """scipy.special.multigammaln, recorded on the tape."""
    return sp.multigammaln(a, d)


def _half_steps(a, d):
    """0, 1/2, ..., (d-1)/2 in a's floating dtype, on a new last axis."""
    return (np.arange(d) / 2.0).astype(float_dtype(a))


# --------------------------------------------------------------- logistic


@register_adjoint(sp.expit)
def expit(z, x, out=None, dtype=None):
    """d/dx sigma(x) = sigma(x) (1 - sigma(x))."""
    d[x] = d[z] * z * (1.0 - z)


@register_adjoint(sp.log_expit)
def log_expit(z, x, out=None, dtype=None):
    """d/dx log sigma(x) = 1 - sigma(x) = sigma(-x)."""
    d[x] = d[z] * sp.expit(-x)


@register_adjoint(sp.logit)
def logit(z, x, out=None, dtype=None):
    """d/dx log(x / (1 - x)) = 1 / (x (1 - x))."""
    d[x] = d[z] / (x * (1.0 - x))


@register_adjoint(logsumexp)
def logsumexp_(z, a, axis=None, b=None, keepdims=False, return_sign=False):
    """d logsumexp(a) / d a = b exp(a - z) (the softmax weights);
    d / d b = exp(a - z). With return_sign=True, z = (r, s): the same with
    r for z, times the sign s (scipy_logsumexp, below)."""
    g = unreduce(logsumexp_value_cotangent(d[z], z, return_sign), a, axis, keepdims)
    d[a] = g * logsumexp_weights(a, logsumexp_value(z, return_sign), axis, keepdims, b)
    d[b] = unbroadcast(g * logsumexp_weights(a, logsumexp_value(z, return_sign), axis, keepdims), b)


adjoint_rule(logsumexp).sequence_output = True      # the pair of return_sign=True


# ------------------------------------------------------------ error function


@register_adjoint(sp.erf)
def erf(z, x, out=None, dtype=None):
    """d/dx erf x = 2 / sqrt(pi) exp(-x^2) (holomorphic: conj for complex x)."""
    d[x] = d[z] * conj(TWO_OVER_SQRT_PI * np.exp(-x * x))


@register_adjoint(sp.erfc)
def erfc(z, x, out=None, dtype=None):
    """d/dx erfc x = -2 / sqrt(pi) exp(-x^2)."""
    d[x] = -d[z] * conj(TWO_OVER_SQRT_PI * np.exp(-x * x))


@register_adjoint(sp.erfcx)
def erfcx(z, x, out=None, dtype=None):
    """erfcx x = exp(x^2) erfc x: d/dx = 2 x erfcx(x) - 2 / sqrt(pi)."""
    d[x] = d[z] * conj(2.0 * x * z - TWO_OVER_SQRT_PI)


@register_adjoint(sp.erfinv)
def erfinv(z, x, out=None, dtype=None):
    """d/dx erfinv x = sqrt(pi) / 2 exp(erfinv(x)^2) (TF's _ErfinvGrad)."""
    d[x] = d[z] * SQRT_PI_OVER_TWO * np.exp(z * z)


@register_adjoint(sp.erfcinv)
def erfcinv(z, x, out=None, dtype=None):
    """d/dx erfcinv x = -sqrt(pi) / 2 exp(erfcinv(x)^2)."""
    d[x] = -d[z] * SQRT_PI_OVER_TWO * np.exp(z * z)


@register_adjoint(sp.ndtr)
def ndtr(z, x, out=None, dtype=None):
    """The standard normal CDF: d/dx = exp(-x^2 / 2) / sqrt(2 pi)."""
    d[x] = d[z] * INV_SQRT_2PI * np.exp(-0.5 * x * x)


@register_adjoint(sp.log_ndtr)
def log_ndtr(z, x, out=None, dtype=None):
    """d/dx log Phi(x) = phi(x) / Phi(x) = exp(-x^2 / 2 - log Phi(x)) / sqrt(2 pi)."""
    d[x] = d[z] * INV_SQRT_2PI * np.exp(-0.5 * x * x - z)


@register_adjoint(sp.ndtri)
def ndtri(z, x, out=None, dtype=None):
    """The inverse normal CDF: d/dx = sqrt(2 pi) exp(z^2 / 2) (TF's _NdtriGrad)."""
    d[x] = d[z] * SQRT_2PI * np.exp(0.5 * z * z)


# ---------------------------------------------------------- gamma family


@register_adjoint(sp.gammaln)
def gammaln(z, x, out=None, dtype=None):
    """d/dx log|Gamma(x)| = digamma(x) (TF's _LgammaGrad)."""
    d[x] = d[z] * sp.digamma(x)


@register_adjoint(sp.loggamma)
def loggamma(z, x, out=None, dtype=None):
    """d/dx log Gamma(x) = digamma(x) (principal branch; holomorphic)."""
    d[x] = d[z] * conj(sp.digamma(x))


@register_adjoint(sp.digamma)
def digamma(z, x, out=None, dtype=None):
    """d/dx psi(x) = polygamma(1, x) (scipy.special.psi is this ufunc)."""
    d[x] = d[z] * polygamma(1, x)


@register_adjoint(polygamma)
def polygamma_(z, n, x):
    """d/dx psi^(n)(x) = psi^(n+1)(x); the order n is an integer."""
    d[x] = unbroadcast(d[z] * polygamma(n + 1, x), x)


@register_adjoint(sp.gamma)
def gamma(z, x, out=None, dtype=None):
    """d/dx Gamma(x) = Gamma(x) digamma(x)."""
    d[x] = d[z] * z * sp.digamma(x)


@register_adjoint(sp.rgamma)
def rgamma(z, x, out=None, dtype=None):
    """d/dx 1 / Gamma(x) = -digamma(x) / Gamma(x)."""
    d[x] = -d[z] * z * sp.digamma(x)


@register_adjoint(multigammaln)
def multigammaln_(z, a, d_):
    """d/da log Gamma_d(a) = sum_{j < d} digamma(a - j/2)."""
    d[a] = d[z] * np.sum(sp.digamma(np.expand_dims(a, -1) - _half_steps(a, d_)), axis=-1)


@register_adjoint(sp.gammainc)
def gammainc(z, a, x, out=None, dtype=None):
    """Regularised lower incomplete gamma P(a, x): dP/dx = x^(a-1) e^-x / Gamma(a)
    (in x, as autograd and TF). a: not differentiable (NotImplementedError)."""
    d[x] = unbroadcast(d[z] * np.exp((a - 1.0) * np.log(x) - x - sp.gammaln(a)), x)
    d[a] = not_differentiable("scipy.special.gammainc", "a")


@register_adjoint(sp.gammaincc)
def gammaincc(z, a, x, out=None, dtype=None):
    """Q(a, x) = 1 - P(a, x): dQ/dx = -x^(a-1) e^-x / Gamma(a). a: not differentiable
    (NotImplementedError)."""
    d[x] = unbroadcast(-d[z] * np.exp((a - 1.0) * np.log(x) - x - sp.gammaln(a)), x)
    d[a] = not_differentiable("scipy.special.gammaincc", "a")


@register_adjoint(sp.beta)
def beta(z, a, b, out=None, dtype=None):
    """B(a, b): dB/da = B (psi(a) - psi(a + b)), dB/db = B (psi(b) - psi(a + b))."""
    d[a] = unbroadcast(d[z] * z * (sp.digamma(a) - sp.digamma(a + b)), a)
    d[b] = unbroadcast(d[z] * z * (sp.digamma(b) - sp.digamma(a + b)), b)


@register_adjoint(sp.betaln)
def betaln(z, a, b, out=None, dtype=None):
    """log|B(a, b)|: d/da = psi(a) - psi(a + b), d/db = psi(b) - psi(a + b)."""
    d[a] = unbroadcast(d[z] * (sp.digamma(a) - sp.digamma(a + b)), a)
    d[b] = unbroadcast(d[z] * (sp.digamma(b) - sp.digamma(a + b)), b)


@register_adjoint(sp.betainc)
def betainc(z, a, b, x, out=None, dtype=None):
    """Regularised incomplete beta I_x(a, b): dI/dx = x^(a-1) (1-x)^(b-1) / B(a, b)
    (in x, as autograd and TF). a, b: not differentiable (NotImplementedError)."""
    d[x] = unbroadcast(
        d[z] * np.exp((a - 1.0) * np.log(x) + (b - 1.0) * np.log1p(-x) - sp.betaln(a, b)), x)
    d[a] = not_differentiable("scipy.special.betainc", "a")
    d[b] = not_differentiable("scipy.special.betainc", "b")


# ------------------------------------------------------------------ Bessel


@register_adjoint(sp.j0)
def j0(z, x, out=None, dtype=None):
    """J0' = -J1."""
    d[x] = -d[z] * sp.j1(x)


@register_adjoint(sp.j1)
def j1(z, x, out=None, dtype=None):
    """J1' = (J0 - J2) / 2."""
    d[x] = d[z] * (sp.j0(x) - sp.jv(2, x)) / 2.0


@register_adjoint(sp.y0)
def y0(z, x, out=None, dtype=None):
    """Y0' = -Y1."""
    d[x] = -d[z] * sp.y1(x)


@register_adjoint(sp.y1)
def y1(z, x, out=None, dtype=None):
    """Y1' = (Y0 - Y2) / 2."""
    d[x] = d[z] * (sp.y0(x) - sp.yv(2, x)) / 2.0


@register_adjoint(sp.jv)
def jv(z, v, x, out=None, dtype=None):
    """J_v' = (J_{v-1} - J_{v+1}) / 2 (DLMF 10.6.1); the order v: not differentiable
    (NotImplementedError).
    scipy.special.jn is this ufunc."""
    d[x] = unbroadcast(cast_like(d[z] * (sp.jv(v - 1, x) - sp.jv(v + 1, x)) / 2.0, x), x)
    d[v] = not_differentiable("scipy.special.jv", "v")


@register_adjoint(sp.yv)
def yv(z, v, x, out=None, dtype=None):
    """Y_v' = (Y_{v-1} - Y_{v+1}) / 2; the order v: not differentiable (NotImplementedError)."""
    d[x] = unbroadcast(cast_like(d[z] * (sp.yv(v - 1, x) - sp.yv(v + 1, x)) / 2.0, x), x)
    d[v] = not_differentiable("scipy.special.yv", "v")


@register_adjoint(sp.yn)
def yn(z, n, x, out=None, dtype=None):
    """Y_n' = (Y_{n-1} - Y_{n+1}) / 2 for integer n (yn computes in float64)."""
    d[x] = unbroadcast(cast_like(d[z] * (sp.yn(n - 1, x) - sp.yn(n + 1, x)) / 2.0, x), x)


@register_adjoint(sp.i0)
def i0(z, x, out=None, dtype=None):
    """I0' = I1."""
    d[x] = d[z] * sp.i1(x)


@register_adjoint(sp.i1)
def i1(z, x, out=None, dtype=None):
    """I1' = (I0 + I2) / 2."""
    d[x] = d[z] * (sp.i0(x) + sp.iv(2, x)) / 2.0


@register_adjoint(sp.iv)
def iv(z, v, x, out=None, dtype=None):
    """I_v' = (I_{v-1} + I_{v+1}) / 2 (DLMF 10.29.1); the order v: not differentiable
    (NotImplementedError)."""
    d[x] = unbroadcast(cast_like(d[z] * (sp.iv(v - 1, x) + sp.iv(v + 1, x)) / 2.0, x), x)
    d[v] = not_differentiable("scipy.special.iv", "v")


@register_adjoint(sp.i0e)
def i0e(z, x, out=None, dtype=None):
    """i0e = e^-|x| I0: i0e' = i1e - sign(x) i0e."""
    d[x] = d[z] * (sp.i1e(x) - sign(x) * z)


@register_adjoint(sp.i1e)
def i1e(z, x, out=None, dtype=None):
    """i1e = e^-|x| I1: i1e' = (i0e + ive(2, x)) / 2 - sign(x) i1e."""
    d[x] = d[z] * ((sp.i0e(x) + sp.ive(2, x)) / 2.0 - sign(x) * z)


@register_adjoint(sp.ive)
def ive(z, v, x, out=None, dtype=None):
    """ive = e^-|x| I_v: d/dx = (ive(v-1) + ive(v+1)) / 2 - sign(x) ive(v); the order v:
    not differentiable (NotImplementedError)."""
    d[x] = unbroadcast(cast_like(
        d[z] * ((sp.ive(v - 1, x) + sp.ive(v + 1, x)) / 2.0 - sign(x) * z), x), x)
    d[v] = not_differentiable("scipy.special.ive", "v")


# ----------------------------------------------------- information theory


@register_adjoint(sp.xlogy)
def xlogy(z, x, y, out=None, dtype=None):
    """x log y: d/dx = log y, d/dy = x / y."""
    d[x] = unbroadcast(d[z] * np.log(y), x)
    d[y] = unbroadcast(d[z] * x / y, y)


@register_adjoint(sp.xlog1py)
def xlog1py(z, x, y, out=None, dtype=None):
    """x log(1 + y): d/dx = log1p(y), d/dy = x / (1 + y)."""
    d[x] = unbroadcast(d[z] * np.log1p(y), x)
    d[y] = unbroadcast(d[z] * x / (1.0 + y), y)


@register_adjoint(sp.entr)
def entr(z, x, out=None, dtype=None):
    """-x log x: d/dx = -(log x + 1) (x > 0)."""
    d[x] = -d[z] * (np.log(x) + 1.0)


register_nondiff(sp.gammasgn)


# ----------------------------------------------- SciPy's own Python functions
# User code calling scipy.special.logsumexp itself is differentiated by the compiled
# paths, which find this rule by the callee object.


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


@register_adjoint(sp.softmax)
def scipy_softmax(z, x, axis=None):
    """z = exp(x) / sum(exp(x)) over `axis` (None: all elements; an int or a
    tuple): the Jacobian is diag(z) - z z^T along the axis, so d/dx =
    z (g - sum(g z)) (the softmax Jacobian, as autograd's and JAX's
    jax.nn.softmax differentiate it)."""
    d[x] = z * (d[z] - np.sum(d[z] * z, axis=axis, keepdims=True))


@register_tangent(sp.softmax)
def scipy_softmax_tangent(z, x, axis=None):
    """dz = z (dx - sum(z dx)) over `axis`."""
    t[z] = z * (t[x] - np.sum(z * t[x], axis=axis, keepdims=True))


@register_adjoint(sp.log_softmax)
def scipy_log_softmax(z, x, axis=None):
    """z = x - logsumexp(x) over `axis`: d/dx = g - exp(z) sum(g), exp(z)
    being the softmax (the derivative of logsumexp; as JAX's
    jax.nn.log_softmax)."""
    d[x] = d[z] - np.exp(z) * np.sum(d[z], axis=axis, keepdims=True)


@register_tangent(sp.log_softmax)
def scipy_log_softmax_tangent(z, x, axis=None):
    """dz = dx - sum(exp(z) dx) over `axis`."""
    t[z] = t[x] - np.sum(np.exp(z) * t[x], axis=axis, keepdims=True)


# SciPy's own objects, called directly in differentiated code (the same templates; on the tape,
# tape/scipy_calls.py records them through wrappers, SciPy converting its input otherwise)
tensor_polygamma = polygamma        # (the spelling of the Tensor-aware primitive in the template below)


@register_adjoint(sp.polygamma)
def scipy_polygamma(z, n, x):
    """d/dx psi^(n)(x) = psi^(n+1)(x), as polygamma_."""
    d[x] = unbroadcast(d[z] * tensor_polygamma(n + 1, x), x)


register_adjoint(sp.multigammaln, name="scipy_multigammaln")(multigammaln_)
