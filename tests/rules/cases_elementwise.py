"""Rule rows for the elementwise families (srcgrad/rules/numpy/elementwise.py,
piecewise.py, complex.py) and scipy.special's elementwise functions
(srcgrad/rules/scipy/special.py).

Each case function returns np.sum(op(inputs) * w); `ref` is the same
operation with autograd (composed from autograd's functions where autograd
has no rule of its own). Binary operations are tested with broadcasting
shapes; domains keep each function smooth (rulecase.py). np.i0 and its
derivative bessel_i1 (srcgrad's I1: NumPy has none) are checked against
autograd.scipy.special's i0 and i1.
"""
import builtins
import math

import autograd.numpy as anp
import autograd.scipy.special as asp
import numpy as np
import scipy.special

from rulecase import Case, GT1, ND, NZ, P, PR, R, Static, U, _raw
from srcgrad.rules.helpers.complex import cast_like
from srcgrad.rules.helpers.elementwise import bessel_i1
from srcgrad.rules.scipy.special import multigammaln, polygamma

sp = scipy.special
SQRT2 = math.sqrt(2.0)


# -- exp and logs

def f_exp2(x, w):
    return np.sum(np.exp2(x) * w)


def f_expm1(x, w):
    return np.sum(np.expm1(x) * w)


def f_log2(x, w):
    return np.sum(np.log2(x) * w)


def f_log10(x, w):
    return np.sum(np.log10(x) * w)


def f_log1p(x, w):
    return np.sum(np.log1p(x) * w)


def f_logaddexp(x, y, w):
    return np.sum(np.logaddexp(x, y) * w)


def f_logaddexp2(x, y, w):
    return np.sum(np.logaddexp2(x, y) * w)


# -- powers, roots

def f_float_power(x, y, w):
    return np.sum(np.float_power(x, y) * w)


def f_float_power_const(x, w):
    return np.sum(np.float_power(x, 3.0) * w)


def f_square(x, w):
    return np.sum(np.square(x) * w)


def f_cbrt(x, w):
    return np.sum(np.cbrt(x) * w)


def f_reciprocal(x, w):
    return np.sum(np.reciprocal(x) * w)


# -- trigonometric and hyperbolic

def f_tan(x, w):
    return np.sum(np.tan(x) * w)


def f_arcsin(x, w):
    return np.sum(np.arcsin(x) * w)


def f_arccos(x, w):
    return np.sum(np.arccos(x) * w)


def f_arctan(x, w):
    return np.sum(np.arctan(x) * w)


def f_arctan2(y, x, w):
    return np.sum(np.arctan2(y, x) * w)


def f_hypot(x, y, w):
    return np.sum(np.hypot(x, y) * w)


def f_sinh(x, w):
    return np.sum(np.sinh(x) * w)


def f_cosh(x, w):
    return np.sum(np.cosh(x) * w)


def f_arcsinh(x, w):
    return np.sum(np.arcsinh(x) * w)


def f_arccosh(x, w):
    return np.sum(np.arccosh(x) * w)


def f_arctanh(x, w):
    return np.sum(np.arctanh(x) * w)


def f_deg2rad(x, w):
    return np.sum(np.deg2rad(x) * w)


def f_rad2deg(x, w):
    return np.sum(np.rad2deg(x) * w)


def f_radians(x, w):
    return np.sum(np.radians(x) * w)


def f_degrees(x, w):
    return np.sum(np.degrees(x) * w)


def f_sinc(x, w):
    return np.sum(np.sinc(x) * w)


# -- piecewise linear, selection

def f_fabs(x, w):
    return np.sum(np.fabs(x) * w)


def f_fmax(x, y, w):
    return np.sum(np.fmax(x, y) * w)


def f_fmin(x, y, w):
    return np.sum(np.fmin(x, y) * w)


def f_clip_const(x, w):
    return np.sum(np.clip(x, -0.5, 0.5) * w)


def f_clip_arrays(x, lo, hi, w):
    return np.sum(np.clip(x, lo - 1.0, hi + 1.0) * w)


def f_clip_kw(x, w):
    return np.sum(np.clip(x, min=-0.5, max=0.7) * w)


def f_clip_upper(x, hi, w):
    return np.sum(np.clip(x, None, hi) * w)


def f_copysign(x, y, w):
    return np.sum(np.copysign(x, y) * w)


def f_ldexp(x, i, w):
    return np.sum(np.ldexp(x, i) * w)


def f_fmod(x, y, w):
    return np.sum(np.fmod(x, y) * w)


def f_nan_to_num(x, w):
    return np.sum(np.nan_to_num(x) * w)


# np.interp: knots fixed (_XP), or increasing from positive steps (cumsum);
# 2 x puts points below xp[0] and above xp[-1]

def f_interp(x, fp, w):
    return np.sum(np.interp(x, _XP, fp) * w)


def f_interp_wide(x, fp, w):
    return np.sum(np.interp(2.0 * x, _XP, fp) * w)


def f_interp_left_right(x, fp, left, right, w):
    return np.sum(np.interp(2.0 * x, _XP, fp, left, right) * w)


def f_interp_left_const(x, fp, w):
    return np.sum(np.interp(2.0 * x, _XP, fp, left=-3.0) * w)


def f_interp_right_kw(x, fp, right, w):
    return np.sum(np.interp(2.0 * x, _XP, fp, right=right) * w)


def f_interp_xp(x, steps, fp, w):
    return np.sum(np.interp(2.0 * x, np.cumsum(steps) - 2.5, fp) * w)


def f_interp_period(x, xp, fp, w):
    return np.sum(np.interp(3.0 * x, xp, fp, period=2.5) * w)


def f_interp_const_fp(x, w):
    return np.sum(np.interp(x, _XP, [0.0, 1.0, -1.0, 0.5]) * w)


# -- complex functions on real inputs (complex inputs: test_complex.py)

def f_real(x, w):
    return np.sum(np.real(x) * w)


def f_imag_of_real(x, w):
    return np.sum((x + np.imag(x)) * w)


def f_conj(x, w):
    return np.sum(np.conj(x) * w)


def f_conjugate(x, w):
    return np.sum(np.conjugate(x) * w)


def f_angle_of_real(x, w):
    return np.sum((x + np.angle(x)) * w)


def f_real_if_close(x, w):
    return np.sum(np.real_if_close(x) * w)


def f_cast_like(x, y, w):
    return np.sum(cast_like(x, y) * w)


# -- scipy.special

def f_expit(x, w):
    return np.sum(sp.expit(x) * w)


def f_log_expit(x, w):
    return np.sum(sp.log_expit(x) * w)


def f_logit(x, w):
    return np.sum(sp.logit(x) * w)


def f_erf(x, w):
    return np.sum(sp.erf(x) * w)


def f_erfc(x, w):
    return np.sum(sp.erfc(x) * w)


def f_erfcx(x, w):
    return np.sum(sp.erfcx(x) * w)


def f_erfinv(x, w):
    return np.sum(sp.erfinv(x) * w)


def f_erfcinv(x, w):
    return np.sum(sp.erfcinv(x) * w)


def f_ndtr(x, w):
    return np.sum(sp.ndtr(x) * w)


def f_log_ndtr(x, w):
    return np.sum(sp.log_ndtr(x) * w)


def f_ndtri(x, w):
    return np.sum(sp.ndtri(x) * w)


def f_gammaln(x, w):
    return np.sum(sp.gammaln(x) * w)


def f_loggamma(x, w):
    return np.sum(sp.loggamma(x) * w)


def f_digamma(x, w):
    return np.sum(sp.digamma(x) * w)


def f_psi(x, w):
    return np.sum(sp.psi(x) * w)


def f_polygamma1(x, w):
    return np.sum(polygamma(1, x) * w)


def f_polygamma_arg(n, x, w):
    return np.sum(polygamma(n, x) * w)


def f_gamma(x, w):
    return np.sum(sp.gamma(x) * w)


def f_rgamma(x, w):
    return np.sum(sp.rgamma(x) * w)


def f_multigammaln(x, w):
    return np.sum(multigammaln(x, 3) * w)


def f_scipy_polygamma(x, w):
    return np.sum(scipy.special.polygamma(2, x) * w)


def f_scipy_multigammaln(x, w):
    return np.sum(scipy.special.multigammaln(x, 2) * w)


def f_gammainc(a, x, w):
    return np.sum(sp.gammainc(a, x) * w)


def f_gammaincc(a, x, w):
    return np.sum(sp.gammaincc(a, x) * w)


def f_beta(a, b, w):
    return np.sum(sp.beta(a, b) * w)


def f_betaln(a, b, w):
    return np.sum(sp.betaln(a, b) * w)


def f_betainc(a, b, x, w):
    return np.sum(sp.betainc(a, b, x) * w)


def f_j0(x, w):
    return np.sum(sp.j0(x) * w)


def f_j1(x, w):
    return np.sum(sp.j1(x) * w)


def f_y0(x, w):
    return np.sum(sp.y0(x) * w)


def f_y1(x, w):
    return np.sum(sp.y1(x) * w)


def f_jv(v, x, w):
    return np.sum(sp.jv(v, x) * w)


def f_jn(x, w):
    return np.sum(sp.jn(2, x) * w)


def f_yv(v, x, w):
    return np.sum(sp.yv(v, x) * w)


def f_yn(x, w):
    return np.sum(sp.yn(2, x) * w)


def f_i0(x, w):
    return np.sum(sp.i0(x) * w)


def f_i1(x, w):
    return np.sum(sp.i1(x) * w)


def f_iv(v, x, w):
    return np.sum(sp.iv(v, x) * w)


def f_i0e(x, w):
    return np.sum(sp.i0e(x) * w)


def f_i1e(x, w):
    return np.sum(sp.i1e(x) * w)


def f_ive(v, x, w):
    return np.sum(sp.ive(v, x) * w)


def f_xlogy(x, y, w):
    return np.sum(sp.xlogy(x, y) * w)


def f_xlog1py(x, y, w):
    return np.sum(sp.xlog1py(x, y) * w)


def f_entr(x, w):
    return np.sum(sp.entr(x) * w)


# ---------------------------------------------------------------------------
# autograd references for functions autograd has no rule for

def _ag_ndtr(x):
    return 0.5 * (1.0 + asp.erf(x / SQRT2))


def _ag_clip(x, lo, hi):
    return anp.minimum(anp.maximum(x, lo), hi)


def _ag_half_order(kind):
    """Bessel functions of order 1/2 in closed form (DLMF 10.16.1, 10.39.1)."""
    def ref(v, x):
        c = anp.sqrt(2.0 / (np.pi * x))
        return {"j": c * anp.sin(x), "y": -c * anp.cos(x), "i": c * anp.sinh(x)}[kind]
    return ref


_XP = np.array([-1.0, -0.2, 0.4, 1.1])


def _ag_interp(x, xp, fp, left=None, right=None, period=None):
    """np.interp with autograd.numpy (autograd has no rule for it): with a
    period, NumPy's own steps (x and xp modulo the period, xp sorted and
    extended by a knot each side: numpy/lib/_function_base_impl.py); then
    the piece holding x (found on the raw values) and its line, left
    (fp[0]) below xp[0] and right (fp[-1]) above xp[-1]."""
    if period is not None:
        x = anp.mod(x, period)
        xp = anp.mod(xp, period)
        order = np.argsort(_raw(xp))
        xp, fp = xp[order], anp.array(fp)[order]
        xp = anp.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = anp.concatenate([fp[-1:], fp, fp[:1]])
    xr, xpr = _raw(x), _raw(xp)
    hi = np.clip(np.searchsorted(xpr, xr, side="right"), 1, len(xpr) - 1)
    lo = hi - 1
    inside = fp[lo] + (x - xp[lo]) * (fp[hi] - fp[lo]) / (xp[hi] - xp[lo])
    zeros = anp.zeros(np.shape(xr))
    below = (fp[0] if left is None else left) + zeros
    above = (fp[-1] if right is None else right) + zeros
    return anp.where(xr < xpr[0], below, anp.where(xr > xpr[-1], above, inside))


C = Case
CASES = [
    # ---- exp and logs
    C("exp2", f_exp2, lambda x: anp.exp2(x), (R(3, 4),), np.exp2),
    C("expm1", f_expm1, lambda x: anp.expm1(x), (R(3, 4),), np.expm1),
    C("log2", f_log2, lambda x: anp.log2(x), (P(3, 4),), np.log2),
    C("log10", f_log10, lambda x: anp.log10(x), (P(3, 4),), np.log10),
    C("log1p", f_log1p, lambda x: anp.log1p(x), (P(2, 3),), np.log1p),
    C("logaddexp_34_4", f_logaddexp, lambda x, y: anp.logaddexp(x, y), (R(3, 4), R(4)), np.logaddexp),
    C("logaddexp_scalar_23", f_logaddexp, lambda x, y: anp.logaddexp(x, y), (R(), R(2, 3)),
      np.logaddexp),
    C("logaddexp2_31_14", f_logaddexp2, lambda x, y: anp.logaddexp2(x, y), (R(3, 1), R(1, 4)),
      np.logaddexp2),

    # ---- powers and roots
    C("float_power_34_4", f_float_power, lambda x, y: anp.power(x, y), (P(3, 4), R(4)),
      np.float_power),
    C("float_power_31_14", f_float_power, lambda x, y: anp.power(x, y), (P(3, 1), R(1, 4)),
      np.float_power),
    C("float_power_const", f_float_power_const, lambda x: x ** 3.0, (R(3, 4),), np.float_power),
    C("square", f_square, lambda x: anp.square(x), (R(3, 4),), np.square),
    C("cbrt", f_cbrt, lambda x: anp.sign(x) * anp.abs(x) ** (1.0 / 3.0), (NZ(3, 4),), np.cbrt),
    C("reciprocal", f_reciprocal, lambda x: anp.reciprocal(x), (NZ(3, 4),), np.reciprocal),

    # ---- trigonometric and hyperbolic
    C("tan", f_tan, lambda x: anp.tan(x), (U(3, 4),), np.tan),
    C("arcsin", f_arcsin, lambda x: anp.arcsin(x), (U(3, 4),), np.arcsin),
    C("arccos", f_arccos, lambda x: anp.arccos(x), (U(3, 4),), np.arccos),
    C("arctan", f_arctan, lambda x: anp.arctan(x), (R(3, 4),), np.arctan),
    C("arctan2_34_4", f_arctan2, lambda y, x: anp.arctan2(y, x), (R(3, 4), NZ(4)), np.arctan2),
    C("arctan2_scalar_23", f_arctan2, lambda y, x: anp.arctan2(y, x), (NZ(), R(2, 3)), np.arctan2),
    C("hypot_31_14", f_hypot, lambda x, y: anp.hypot(x, y), (R(3, 1), R(1, 4)), np.hypot),
    C("sinh", f_sinh, lambda x: anp.sinh(x), (R(3, 4),), np.sinh),
    C("cosh", f_cosh, lambda x: anp.cosh(x), (R(3, 4),), np.cosh),
    C("arcsinh", f_arcsinh, lambda x: anp.arcsinh(x), (R(3, 4),), np.arcsinh),
    C("arccosh", f_arccosh, lambda x: anp.arccosh(x), (GT1(3, 4),), np.arccosh),
    C("arctanh", f_arctanh, lambda x: anp.arctanh(x), (U(3, 4),), np.arctanh),
    C("deg2rad", f_deg2rad, lambda x: anp.deg2rad(x), (R(3, 4),), np.deg2rad),
    C("rad2deg", f_rad2deg, lambda x: anp.rad2deg(x), (R(3, 4),), np.rad2deg),
    C("radians", f_radians, lambda x: anp.radians(x), (R(3,),), np.radians),
    C("degrees", f_degrees, lambda x: anp.degrees(x), (R(3,),), np.degrees),
    C("sinc", f_sinc, lambda x: anp.sin(np.pi * x) / (np.pi * x), (R(3, 4),), np.sinc),

    # ---- piecewise linear and selection (kinks avoided by the domains)
    C("fabs", f_fabs, lambda x: anp.fabs(x), (NZ(3, 4),), np.fabs),
    C("fmax_34_4", f_fmax, lambda x, y: anp.fmax(x, y), (R(3, 4), R(4)), np.fmax),
    C("fmin_31_14", f_fmin, lambda x, y: anp.fmin(x, y), (R(3, 1), R(1, 4)), np.fmin),
    C("clip_const", f_clip_const, lambda x: anp.clip(x, -0.5, 0.5), (R(3, 4),), np.clip),
    C("clip_arrays", f_clip_arrays, lambda x, lo, hi: _ag_clip(x, lo - 1.0, hi + 1.0),
      (R(3, 4), R(4), R(3, 1)), np.clip),
    C("clip_kw", f_clip_kw, lambda x: anp.clip(x, -0.5, 0.7), (R(3, 4),), np.clip),
    C("clip_upper_array", f_clip_upper, lambda x, hi: anp.minimum(x, hi), (R(3, 4), R(4)), np.clip),
    C("copysign", f_copysign, lambda x, y: anp.abs(x) * np.sign(y), (NZ(3, 4), ND(4)), np.copysign),
    C("ldexp", f_ldexp, lambda x, i: x * 2.0 ** i, (R(3, 4), Static(np.array([0, 1, -1, 3]))),
      np.ldexp),
    C("fmod_34_4", f_fmod, lambda x, y: x - anp.trunc(x / y) * y, (R(3, 4), NZ(4)), np.fmod),
    C("nan_to_num", f_nan_to_num, lambda x: anp.nan_to_num(x), (R(3, 4),), np.nan_to_num),
    # np.interp: points inside, below xp[0] and above xp[-1] (2 x), left/right given
    C("interp", f_interp, lambda x, fp: _ag_interp(x, _XP, fp), (R(3, 4), R(4)), np.interp),
    C("interp_0d_x", f_interp, lambda x, fp: _ag_interp(x, _XP, fp), (R(), R(4)), np.interp),
    C("interp_outside", f_interp_wide, lambda x, fp: _ag_interp(2.0 * x, _XP, fp), (R(12), R(4)),
      np.interp),
    C("interp_left_right", f_interp_left_right,
      lambda x, fp, left, right: _ag_interp(2.0 * x, _XP, fp, left, right), (R(3, 4), R(4), R(), R()),
      np.interp),
    C("interp_left_const", f_interp_left_const, lambda x, fp: _ag_interp(2.0 * x, _XP, fp, left=-3.0),
      (R(12), R(4)), np.interp),
    C("interp_right_kw", f_interp_right_kw,
      lambda x, fp, right: _ag_interp(2.0 * x, _XP, fp, right=right), (R(12), ND(4), R()), np.interp),
    C("interp_xp", f_interp_xp, lambda x, steps, fp: _ag_interp(2.0 * x, anp.cumsum(steps) - 2.5, fp),
      (R(12), P(4), R(4)), (np.interp, np.cumsum)),
    C("interp_period", f_interp_period, lambda x, xp, fp: _ag_interp(3.0 * x, xp, fp, period=2.5),
      (R(12), R(5), R(5)), np.interp),
    C("interp_const_fp", f_interp_const_fp, lambda x: _ag_interp(x, _XP, np.array([0.0, 1.0, -1.0, 0.5])),
      (R(3, 4),), np.interp),

    # ---- complex functions on real inputs
    C("real_of_real", f_real, lambda x: anp.real(x), (R(3, 4),), np.real),
    C("imag_of_real", f_imag_of_real, lambda x: x + anp.imag(x), (R(3, 4),), np.imag),
    C("conj_of_real", f_conj, lambda x: anp.conj(x), (R(3, 4),), np.conjugate),
    C("conjugate_of_real", f_conjugate, lambda x: anp.conjugate(x), (R(3,),), np.conjugate),
    C("angle_of_real", f_angle_of_real, lambda x: x + anp.angle(x), (NZ(3, 4),), np.angle),
    C("real_if_close", f_real_if_close, lambda x: anp.real_if_close(x), (R(3, 4),),
      np.real_if_close),
    C("cast_like", f_cast_like, lambda x, y: x, (R(3, 4), ND(3, 4)), cast_like),

    # ---- scipy.special: logistic, error function, normal distribution
    C("expit", f_expit, lambda x: asp.expit(x), (R(3, 4),), sp.expit),
    C("log_expit", f_log_expit, lambda x: -anp.logaddexp(0.0, -x), (R(3, 4),), sp.log_expit),
    C("logit", f_logit, lambda x: asp.logit(x), (PR(3, 4),), sp.logit),
    C("erf", f_erf, lambda x: asp.erf(x), (R(3, 4),), sp.erf),
    C("erfc", f_erfc, lambda x: asp.erfc(x), (R(3, 4),), sp.erfc),
    C("erfcx", f_erfcx, lambda x: anp.exp(x * x) * asp.erfc(x), (U(3, 4),), sp.erfcx),
    C("erfinv", f_erfinv, lambda x: asp.erfinv(x), (U(3, 4),), sp.erfinv),
    C("erfcinv", f_erfcinv, lambda x: asp.erfcinv(x), (PR(3, 4),), sp.erfcinv),
    C("ndtr", f_ndtr, _ag_ndtr, (R(3, 4),), sp.ndtr),
    C("log_ndtr", f_log_ndtr, lambda x: anp.log(_ag_ndtr(x)), (R(3, 4),), sp.log_ndtr),
    C("ndtri", f_ndtri, lambda x: SQRT2 * asp.erfinv(2.0 * x - 1.0), (PR(3, 4),), sp.ndtri),

    # ---- scipy.special: gamma family
    C("gammaln", f_gammaln, lambda x: asp.gammaln(x), (P(3, 4),), sp.gammaln),
    C("loggamma", f_loggamma, lambda x: asp.gammaln(x), (P(3, 4),), sp.loggamma),
    C("digamma", f_digamma, lambda x: asp.digamma(x), (P(3, 4),), sp.digamma),
    C("psi", f_psi, lambda x: asp.psi(x), (P(3,),), sp.psi),
    C("polygamma_1", f_polygamma1, lambda x: asp.polygamma(1, x), (P(3, 4),), polygamma),
    C("polygamma_n_arg", f_polygamma_arg, lambda n, x: asp.polygamma(n, x),
      (Static(np.array([[1], [2], [3]])), P(3, 4)), polygamma),
    C("gamma", f_gamma, lambda x: asp.gamma(x), (P(3, 4),), sp.gamma),
    C("rgamma", f_rgamma, lambda x: asp.rgamma(x), (P(3, 4),), sp.rgamma),
    C("multigammaln", f_multigammaln, lambda x: asp.multigammaln(x, 3), (GT1(3,),), multigammaln),
    C("scipy_polygamma", f_scipy_polygamma, lambda x: asp.polygamma(2, x), (P(3, 4),), scipy.special.polygamma),
    C("scipy_multigammaln", f_scipy_multigammaln, lambda x: asp.multigammaln(x, 2), (GT1(3,),),
      scipy.special.multigammaln),
    C("gammainc", f_gammainc, lambda a, x: asp.gammainc(a, x),
      (Static(np.array([0.8, 1.5, 3.0, 2.0])), P(3, 4)), sp.gammainc),
    C("gammaincc", f_gammaincc, lambda a, x: asp.gammaincc(a, x),
      (Static(np.array([[0.8], [1.5], [3.0]])), P(3, 4)), sp.gammaincc),
    C("beta_34_4", f_beta, lambda a, b: asp.beta(a, b), (P(3, 4), P(4)), sp.beta),
    C("betaln_31_14", f_betaln, lambda a, b: asp.betaln(a, b), (P(3, 1), P(1, 4)), sp.betaln),
    C("betainc", f_betainc, lambda a, b, x: asp.betainc(a, b, x),
      (Static(np.array([0.8, 1.5, 3.0, 2.0])), Static(1.7), PR(3, 4)), sp.betainc),

    # ---- scipy.special: Bessel functions
    C("j0", f_j0, lambda x: asp.j0(x), (R(3, 4),), sp.j0),
    C("j1", f_j1, lambda x: asp.j1(x), (R(3, 4),), sp.j1),
    C("y0", f_y0, lambda x: asp.y0(x), (P(3, 4),), sp.y0),
    C("y1", f_y1, lambda x: asp.y1(x), (P(3, 4),), sp.y1),
    C("jv_half", f_jv, _ag_half_order("j"), (Static(0.5), P(3, 4)), sp.jv),
    C("jn_2", f_jn, lambda x: asp.jn(2, x), (R(3, 4),), sp.jn),
    C("yv_half", f_yv, _ag_half_order("y"), (Static(0.5), P(3, 4)), sp.yv),
    C("yn_2", f_yn, lambda x: asp.yn(2, x), (P(3, 4),), sp.yn),
    C("i0", f_i0, lambda x: asp.i0(x), (R(3, 4),), sp.i0),
    C("i1", f_i1, lambda x: asp.i1(x), (R(3, 4),), sp.i1),
    C("iv_half", f_iv, _ag_half_order("i"), (Static(0.5), P(3, 4)), sp.iv),
    C("iv_orders", f_iv, lambda v, x: asp.iv(v, x), (Static(np.array([0.0, 1.0, 2.0, 3.0])), R(3, 4)),
      sp.iv),
    C("i0e", f_i0e, lambda x: asp.i0(x) * anp.exp(-anp.abs(x)), (NZ(3, 4),), sp.i0e),
    C("i1e", f_i1e, lambda x: asp.i1(x) * anp.exp(-anp.abs(x)), (NZ(3, 4),), sp.i1e),
    C("ive", f_ive, lambda v, x: asp.ive(v, x), (Static(1.0), NZ(3, 4)), sp.ive),

    # ---- scipy.special: information theory
    C("xlogy_34_4", f_xlogy, lambda x, y: x * anp.log(y), (R(3, 4), P(4)), sp.xlogy),
    C("xlog1py_31_14", f_xlog1py, lambda x, y: x * anp.log1p(y), (R(3, 1), P(1, 4)), sp.xlog1py),
    C("entr", f_entr, lambda x: -x * anp.log(x), (P(3, 4),), sp.entr),
]


# ---- np.i0 and its derivative I1 (srcgrad's bessel_i1): around 0, the power
# series (|x| <= 20), across the switch at 20 and the asymptotic expansion beyond;
# autograd.scipy.special's i0 and i1 (SciPy's values) are the reference

def f_np_i0(x, w):
    return np.sum(np.i0(x) * w)


def f_np_i0_shifted(x, w):
    return np.sum(np.i0(19.5 + x) * w)


def f_np_i0_large(x, w):
    return np.sum(np.i0(-25.0 - x) * w)


def f_bessel_i1(x, w):
    return np.sum(bessel_i1(x) * w)


def f_bessel_i1_at_zero(x, w):
    return np.sum(bessel_i1(x * np.array([1.0, 0.0, 1.0])) * w)


def f_bessel_i1_large(x, w):
    return np.sum(bessel_i1(25.0 + x) * w)


CASES += [
    C("np_i0", f_np_i0, lambda x: asp.i0(x), (R(3, 4),), np.i0),
    C("np_i0_0d", f_np_i0, lambda x: asp.i0(x), (R(),), np.i0),
    C("np_i0_across_20", f_np_i0_shifted, lambda x: asp.i0(19.5 + x), (P(5),), np.i0),
    C("np_i0_large_negative", f_np_i0_large, lambda x: asp.i0(-25.0 - x), (P(4),), np.i0),
    C("bessel_i1", f_bessel_i1, lambda x: asp.i1(x), (R(3, 4),), bessel_i1),
    C("bessel_i1_at_zero", f_bessel_i1_at_zero, lambda x: asp.i1(x * np.array([1.0, 0.0, 1.0])), (R(2, 3),),
      (bessel_i1, np.multiply)),
    C("bessel_i1_large", f_bessel_i1_large, lambda x: asp.i1(25.0 + x), (P(3),), bessel_i1),
]


# ---- np.unwrap: p plus whole periods, constant between the jumps (inputs scaled
# so that neighbours differ by more than half a period); `ref` adds NumPy's
# correction as a constant, k period with k read from NumPy's output

def f_unwrap(x, w):
    return np.sum(np.unwrap(3.0 * x) * w)


def f_unwrap_ax0(x, w):
    return np.sum(np.unwrap(3.0 * x, axis=0) * w)


def f_unwrap_discont(x, w):
    return np.sum(np.unwrap(3.0 * x, 4.0) * w)


def f_unwrap_period(x, per, w):
    return np.sum(np.unwrap(2.0 * x, period=3.0 + per) * w)


def _ag_unwrap(p, period=2.0 * np.pi, **kwargs):
    raw_p, raw_period = _raw(p), _raw(period)
    k = np.round((np.unwrap(raw_p, period=raw_period, **kwargs) - raw_p) / raw_period)
    return p + k * period


CASES += [
    C("unwrap", f_unwrap, lambda x: _ag_unwrap(3.0 * x), (R(12),), np.unwrap),
    C("unwrap_2d", f_unwrap, lambda x: _ag_unwrap(3.0 * x), (R(3, 6),), np.unwrap),
    C("unwrap_ax0", f_unwrap_ax0, lambda x: _ag_unwrap(3.0 * x, axis=0), (R(6, 3),), np.unwrap),
    C("unwrap_discont", f_unwrap_discont, lambda x: _ag_unwrap(3.0 * x, discont=4.0), (R(12),), np.unwrap),
    C("unwrap_period", f_unwrap_period, lambda x, per: _ag_unwrap(2.0 * x, 3.0 + per), (R(12), P()),
      np.unwrap),
]



# -- two outputs: divmod (quotient piecewise constant), modf (integral part constant), frexp

def f_np_divmod(x, y, w):
    q, r = np.divmod(x, y)
    return np.sum((r + q) * w)


def f_builtin_divmod(x, y, w):
    q, r = divmod(x, y)
    return np.sum(r * w)


def f_modf(x, w):
    frac, whole = np.modf(x)
    return np.sum((frac + whole) * w)


def f_frexp(x, w):
    m, e = np.frexp(x)
    return np.sum(m * w)


def _ag_frexp_mantissa(x):
    """x 2^-e, the exponent e read from the value (piecewise constant)."""
    return x * np.ldexp(1.0, -np.frexp(_raw(x))[1])


CASES += [
    C("np_divmod_34_4", f_np_divmod, lambda x, y: anp.mod(x, y) + anp.floor_divide(x, y), (R(3, 4), NZ(4)),
      np.divmod),
    C("builtin_divmod", f_builtin_divmod, lambda x, y: anp.mod(x, y), (R(3, 4), NZ(3, 1)), builtins.divmod),
    C("modf", f_modf, lambda x: x - anp.trunc(x) + anp.trunc(x), (R(3, 4),), np.modf),
    C("frexp", f_frexp, _ag_frexp_mantissa, (R(3, 4),), np.frexp),
]
