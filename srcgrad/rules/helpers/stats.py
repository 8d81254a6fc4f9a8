"""Run-time helpers of the scipy.stats rules (rules/scipy/stats.py).

As in every helper module (rules/helpers/__init__.py), each helper is
written with NumPy functions and scipy.special ufuncs that have adjoint
rules (so generated derivative code that calls it can be differentiated
again, op by op or compiled), or is a `nondiff_helper` (support masks,
floors, errors).

Densities are written here from their formulas, not by calling SciPy: a
rule's backward code must stay differentiable, and SciPy's distribution
methods convert Tensors with np.asarray. The formulas are the standard
densities in SciPy's parameterisation (the SciPy reference guide, "Statistical
functions (scipy.stats)", one page per distribution; DLMF 5.15 for the
digamma function): with y = (x - loc) / scale,

    logpdf(x; shapes, loc, scale) = log f(y; shapes) - log(scale).

For a location-scale family, with s = d logpdf / dx (the score):
    d logpdf / d loc = -s,   d logpdf / d scale = -(s (x - loc) + 1) / scale,
and for the distribution function F, dF/dx = pdf(x), dF/dloc = -pdf(x),
dF/dscale = -pdf(x) (x - loc) / scale. logcdf, sf and logsf follow from
F: d log F = dF / F, d(1 - F) = -dF. Outside the support every derivative
is 0 (the functions are constant there).
"""
import math

import numpy as np
import scipy.special as sp

from ...runtime import nondiff_helper
from .broadcast import unbroadcast
from .complex import cast_like

LOG_2PI_HALF = 0.5 * math.log(2.0 * math.pi)
LOG_PI = math.log(math.pi)
LOG_2 = math.log(2.0)


# ------------------------------------------------------------ generic pieces

def cot(g, p):
    """`g` as the cotangent of parameter `p`: summed over the axes `p` was
    broadcast along, in `p`'s floating dtype (SciPy computes in float64)."""
    return unbroadcast(cast_like(g, p), p)


def dscale_density(g, s, x, loc, scale):
    """g d logpdf / d scale for a location-scale family with score s:
    -g (s (x - loc) + 1) / scale."""
    return -g * (s * (x - loc) + 1.0) / scale


@nondiff_helper
def finite(v):
    """The boolean mask of finite entries of v (no derivative)."""
    return np.isfinite(v)


def cdf_weight(kind, g, z, logp):
    """The cotangent factor of a distribution-function method whose
    derivative in a parameter is dF = exp(logp) (logp: the log of dF, e.g.
    logpdf(x) for the derivative in x), given the method's output z and
    cotangent g:
        cdf:  g dF          logcdf: g dF / F = g exp(logp - z)
        sf:  -g dF          logsf: -g dF / S = -g exp(logp - z).
    Where dF = 0 (logp = -inf), the factor is 0."""
    ok = finite(logp)
    if kind in ("logcdf", "logsf"):
        logp = np.where(ok, logp - np.where(ok, z, 0.0), 0.0)
    else:
        logp = np.where(ok, logp, 0.0)
    w = np.where(ok, np.exp(logp), 0.0)
    if kind in ("sf", "logsf"):
        return -g * w
    return g * w


@nondiff_helper
def not_differentiable(function, parameter):
    """Raised from a rule's backward code when `parameter` of `function` is
    differentiated and has no closed-form derivative (the shape parameter of
    t.cdf, gamma.cdf, beta.cdf, ...; of scipy.special.gammainc and betainc,
    the order of the Bessel functions). The forward value is unaffected."""
    raise NotImplementedError(
        "srcgrad: %s is not differentiable with respect to %r (no closed form; autograd and "
        "TensorFlow Probability do not differentiate it either). Differentiate with respect to "
        "its other arguments only, or pass %s as a constant." % (function, parameter, parameter))


@nondiff_helper
def between(y, lo, hi, closed=False):
    """The mask lo < y < hi (lo <= y <= hi with `closed`); None: unbounded."""
    y = np.asarray(y)
    inside = np.ones(np.shape(y), dtype=bool)
    if lo is not None:
        inside = inside & ((y >= lo) if closed else (y > lo))
    if hi is not None:
        inside = inside & ((y <= hi) if closed else (y < hi))
    return inside


@nondiff_helper
def integer_mask(m, n=None):
    """The mask of integers 0 <= m (<= n): a discrete distribution's support."""
    m = np.asarray(m)
    inside = (m >= 0) & (m == np.floor(m))
    if n is not None:
        inside = inside & (m <= n)
    return inside


@nondiff_helper
def floor_of(m):
    """floor(m) as floats (a discrete distribution function is a step function)."""
    return np.floor(np.asarray(m, dtype=np.float64))


def _std(x, loc, scale):
    return (x - loc) / scale


def _masked(inside, value, fill):
    return np.where(inside, value, fill)


# --------------------------------------------------------------------- norm

def norm_log_density(x, loc=0.0, scale=1.0):
    """log N(x; loc, scale^2) = -y^2 / 2 - log(scale) - log(2 pi) / 2."""
    y = _std(x, loc, scale)
    return -0.5 * y * y - np.log(scale) - LOG_2PI_HALF


def norm_score(x, loc=0.0, scale=1.0):
    """d/dx norm.logpdf = -y / scale."""
    return -_std(x, loc, scale) / scale


# ------------------------------------------------------------------------ t

def t_log_density(x, df, loc=0.0, scale=1.0):
    """Student's t: log Gamma((df+1)/2) - log Gamma(df/2) - log(df pi)/2
    - (df+1)/2 log(1 + y^2/df) - log(scale)."""
    y = _std(x, loc, scale)
    return (sp.gammaln(0.5 * (df + 1.0)) - sp.gammaln(0.5 * df) - 0.5 * (np.log(df) + LOG_PI)
            - 0.5 * (df + 1.0) * np.log1p(y * y / df) - np.log(scale))


def t_score(x, df, loc=0.0, scale=1.0):
    """d/dx t.logpdf = -(df + 1) y / ((df + y^2) scale)."""
    y = _std(x, loc, scale)
    return -(df + 1.0) * y / ((df + y * y) * scale)


def t_ddf(x, df, loc=0.0, scale=1.0):
    """d/d df t.logpdf = (psi((df+1)/2) - psi(df/2) - 1/df - log(1 + y^2/df)
    + (df+1) y^2 / (df (df + y^2))) / 2."""
    y = _std(x, loc, scale)
    y2 = y * y
    return 0.5 * (sp.digamma(0.5 * (df + 1.0)) - sp.digamma(0.5 * df) - 1.0 / df
                  - np.log1p(y2 / df) + (df + 1.0) * y2 / (df * (df + y2)))


# --------------------------------------------------------------------- beta

def beta_log_density(x, a, b, loc=0.0, scale=1.0):
    """Beta: (a-1) log y + (b-1) log(1-y) - log B(a, b) - log(scale) on 0 < y < 1."""
    y = _std(x, loc, scale)
    inside = between(y, 0.0, 1.0)
    ys = _masked(inside, y, 0.5)
    v = sp.xlogy(a - 1.0, ys) + sp.xlog1py(b - 1.0, -ys) - sp.betaln(a, b) - np.log(scale)
    return _masked(inside, v, -np.inf)


def beta_score(x, a, b, loc=0.0, scale=1.0):
    """d/dx beta.logpdf = ((a-1)/y - (b-1)/(1-y)) / scale (0 outside)."""
    y = _std(x, loc, scale)
    inside = between(y, 0.0, 1.0)
    ys = _masked(inside, y, 0.5)
    return _masked(inside, ((a - 1.0) / ys - (b - 1.0) / (1.0 - ys)) / scale, 0.0)


def beta_da(x, a, b, loc=0.0, scale=1.0):
    """d/da beta.logpdf = log y - psi(a) + psi(a + b)."""
    y = _std(x, loc, scale)
    inside = between(y, 0.0, 1.0)
    ys = _masked(inside, y, 0.5)
    return _masked(inside, np.log(ys) - sp.digamma(a) + sp.digamma(a + b), 0.0)


def beta_db(x, a, b, loc=0.0, scale=1.0):
    """d/db beta.logpdf = log(1 - y) - psi(b) + psi(a + b)."""
    y = _std(x, loc, scale)
    inside = between(y, 0.0, 1.0)
    ys = _masked(inside, y, 0.5)
    return _masked(inside, np.log1p(-ys) - sp.digamma(b) + sp.digamma(a + b), 0.0)


# -------------------------------------------------------------------- gamma

def gamma_log_density(x, a, loc=0.0, scale=1.0):
    """Gamma: (a-1) log y - y - log Gamma(a) - log(scale) on y > 0."""
    y = _std(x, loc, scale)
    inside = between(y, 0.0, None)
    ys = _masked(inside, y, 1.0)
    return _masked(inside, sp.xlogy(a - 1.0, ys) - ys - sp.gammaln(a) - np.log(scale), -np.inf)


def gamma_score(x, a, loc=0.0, scale=1.0):
    """d/dx gamma.logpdf = ((a-1)/y - 1) / scale."""
    y = _std(x, loc, scale)
    inside = between(y, 0.0, None)
    ys = _masked(inside, y, 1.0)
    return _masked(inside, ((a - 1.0) / ys - 1.0) / scale, 0.0)


def gamma_da(x, a, loc=0.0, scale=1.0):
    """d/da gamma.logpdf = log y - psi(a)."""
    y = _std(x, loc, scale)
    inside = between(y, 0.0, None)
    ys = _masked(inside, y, 1.0)
    return _masked(inside, np.log(ys) - sp.digamma(a), 0.0)


# --------------------------------------------------------------------- chi2

def chi2_log_density(x, df, loc=0.0, scale=1.0):
    """Chi-squared: (df/2 - 1) log y - y/2 - (df/2) log 2 - log Gamma(df/2)
    - log(scale) on y > 0."""
    y = _std(x, loc, scale)
    inside = between(y, 0.0, None)
    ys = _masked(inside, y, 1.0)
    h = 0.5 * df
    return _masked(inside, sp.xlogy(h - 1.0, ys) - 0.5 * ys - h * LOG_2 - sp.gammaln(h)
                   - np.log(scale), -np.inf)


def chi2_score(x, df, loc=0.0, scale=1.0):
    """d/dx chi2.logpdf = ((df/2 - 1)/y - 1/2) / scale."""
    y = _std(x, loc, scale)
    inside = between(y, 0.0, None)
    ys = _masked(inside, y, 1.0)
    return _masked(inside, ((0.5 * df - 1.0) / ys - 0.5) / scale, 0.0)


def chi2_ddf(x, df, loc=0.0, scale=1.0):
    """d/d df chi2.logpdf = (log y - log 2 - psi(df/2)) / 2."""
    y = _std(x, loc, scale)
    inside = between(y, 0.0, None)
    ys = _masked(inside, y, 1.0)
    return _masked(inside, 0.5 * (np.log(ys) - LOG_2 - sp.digamma(0.5 * df)), 0.0)


# -------------------------------------------------------------------- expon

def expon_log_density(x, loc=0.0, scale=1.0):
    """Exponential: -y - log(scale) on y >= 0."""
    y = _std(x, loc, scale)
    inside = between(y, 0.0, None, closed=True)
    return _masked(inside, -y - np.log(scale), -np.inf)


def expon_score(x, loc=0.0, scale=1.0):
    """d/dx expon.logpdf = -1 / scale on the support."""
    y = _std(x, loc, scale)
    inside = between(y, 0.0, None, closed=True)
    return _masked(inside, -1.0 / scale + 0.0 * y, 0.0)


# ------------------------------------------------------------------ laplace

def laplace_log_density(x, loc=0.0, scale=1.0):
    """Laplace: -|y| - log 2 - log(scale)."""
    y = _std(x, loc, scale)
    return -np.abs(y) - LOG_2 - np.log(scale)


def laplace_score(x, loc=0.0, scale=1.0):
    """d/dx laplace.logpdf = -sign(y) / scale (0 at the kink, as d|y|/dy)."""
    y = _std(x, loc, scale)
    return -np.sign(y) / scale


# ----------------------------------------------------------------- logistic

def logistic_log_density(x, loc=0.0, scale=1.0):
    """Logistic: -|y| - 2 log(1 + exp(-|y|)) - log(scale)."""
    y = np.abs(_std(x, loc, scale))
    return -y - 2.0 * np.log1p(np.exp(-y)) - np.log(scale)


def logistic_score(x, loc=0.0, scale=1.0):
    """d/dx logistic.logpdf = -tanh(y / 2) / scale."""
    return -np.tanh(0.5 * _std(x, loc, scale)) / scale


# ------------------------------------------------------------------- cauchy

def cauchy_log_density(x, loc=0.0, scale=1.0):
    """Cauchy: -log pi - log(1 + y^2) - log(scale)."""
    y = _std(x, loc, scale)
    return -LOG_PI - np.log1p(y * y) - np.log(scale)


def cauchy_score(x, loc=0.0, scale=1.0):
    """d/dx cauchy.logpdf = -2 y / ((1 + y^2) scale)."""
    y = _std(x, loc, scale)
    return -2.0 * y / ((1.0 + y * y) * scale)


# ------------------------------------------------------------------ lognorm

def lognorm_log_density(x, s, loc=0.0, scale=1.0):
    """Log-normal with shape s: -log(s y sqrt(2 pi)) - (log y)^2 / (2 s^2)
    - log(scale) on y > 0."""
    y = _std(x, loc, scale)
    inside = between(y, 0.0, None)
    ly = np.log(_masked(inside, y, 1.0))
    return _masked(inside, -np.log(s) - ly - LOG_2PI_HALF - 0.5 * ly * ly / (s * s)
                   - np.log(scale), -np.inf)


def lognorm_score(x, s, loc=0.0, scale=1.0):
    """d/dx lognorm.logpdf = -(1 + log(y) / s^2) / (y scale)."""
    y = _std(x, loc, scale)
    inside = between(y, 0.0, None)
    ys = _masked(inside, y, 1.0)
    return _masked(inside, -(1.0 + np.log(ys) / (s * s)) / (ys * scale), 0.0)


def lognorm_ds(x, s, loc=0.0, scale=1.0):
    """d/ds lognorm.logpdf = -1/s + (log y)^2 / s^3."""
    y = _std(x, loc, scale)
    inside = between(y, 0.0, None)
    ly = np.log(_masked(inside, y, 1.0))
    return _masked(inside, -1.0 / s + ly * ly / (s * s * s), 0.0)


def lognorm_u(x, s, loc=0.0, scale=1.0):
    """u = log(y) / s, so that lognorm.cdf = Phi(u) and dF/ds = -phi(u) u / s
    (0 where y <= 0)."""
    y = _std(x, loc, scale)
    inside = between(y, 0.0, None)
    return _masked(inside, np.log(_masked(inside, y, 1.0)) / s, 0.0)


def lognorm_logphi_u(x, s, loc=0.0, scale=1.0):
    """log phi(u) for u = log(y)/s: the log of |dF/ds| s / |u|; -inf off the support."""
    y = _std(x, loc, scale)
    inside = between(y, 0.0, None)
    u = lognorm_u(x, s, loc, scale)
    return _masked(inside, norm_log_density(u), -np.inf)


# ------------------------------------------------------------------ uniform

def uniform_log_density(x, loc=0.0, scale=1.0):
    """Uniform on [loc, loc + scale]: -log(scale) inside, -inf outside."""
    y = _std(x, loc, scale)
    inside = between(y, 0.0, 1.0, closed=True)
    return _masked(inside, -np.log(scale) + 0.0 * y, -np.inf)


def uniform_score(x, loc=0.0, scale=1.0):
    """d/dx uniform.logpdf = 0."""
    return 0.0 * _std(x, loc, scale)


# ------------------------------------------------------------------ poisson

def poisson_log_mass(k, mu, loc=0.0):
    """Poisson: m log mu - mu - log m! for integers m = k - loc >= 0, else -inf."""
    m = k - loc
    inside = integer_mask(m)
    ms = _masked(inside, m, 0.0)
    return _masked(inside, sp.xlogy(ms, mu) - mu - sp.gammaln(ms + 1.0), -np.inf)


def poisson_dmu(k, mu, loc=0.0):
    """d/dmu poisson.logpmf = m / mu - 1 on the support."""
    m = k - loc
    return _masked(integer_mask(m), m / mu - 1.0, 0.0)


def poisson_logpmf_floor(k, mu, loc=0.0):
    """log pmf(floor(k - loc)): poisson.cdf(k) = Q(floor(m) + 1, mu), so
    dF/dmu = -pmf(floor(m)) (DLMF 8.8.13 for the regularised incomplete gamma)."""
    return poisson_log_mass(floor_of(k - loc), mu)


# -------------------------------------------------------- binom, bernoulli

def binom_log_mass(k, n, p, loc=0.0):
    """Binomial: log C(n, m) + m log p + (n - m) log(1 - p) for integers
    0 <= m = k - loc <= n, else -inf."""
    m = k - loc
    inside = integer_mask(m, n)
    ms = _masked(inside, m, 0.0)
    return _masked(inside, sp.gammaln(n + 1.0) - sp.gammaln(ms + 1.0) - sp.gammaln(n - ms + 1.0)
                   + sp.xlogy(ms, p) + sp.xlog1py(n - ms, -p), -np.inf)


def binom_dp(k, n, p, loc=0.0):
    """d/dp binom.logpmf = m / p - (n - m) / (1 - p) on the support."""
    m = k - loc
    return _masked(integer_mask(m, n), m / p - (n - m) / (1.0 - p), 0.0)


def binom_log_dcdf(k, n, p, loc=0.0):
    """log |dF/dp| for binom.cdf: dF/dp = -n pmf(floor(m); n - 1, p)
    (F = I_{1-p}(n - m, m + 1), the regularised incomplete beta, DLMF 8.17.4)."""
    return np.log(n + 0.0 * p) + binom_log_mass(floor_of(k - loc), n - 1.0, p)


# ------------------------------------------------------ multivariate_normal

@nondiff_helper
def mvn_dim(x, mean, cov):
    """The dimension d of multivariate_normal's arguments (mean's length,
    else cov's, else 1), as SciPy's _process_parameters infers it."""
    if mean is not None and np.ndim(mean) > 0:
        return np.shape(mean)[-1]
    if cov is not None and np.ndim(cov) > 0:
        return np.shape(cov)[-1]
    return 1


def mvn_quantiles(x, dim):
    """x as a (..., d) stack, as SciPy's _process_quantiles reads it: a
    scalar is one 1-d point, a 1-d x one point when d > 1, else d == 1 points."""
    if np.ndim(x) == 0:
        return np.reshape(x, (1, 1))
    if np.ndim(x) == 1:
        return np.reshape(x, (-1, 1) if dim == 1 else (1, -1))
    return x


def mvn_cov_matrix(cov, dim):
    """cov as a d x d matrix: a scalar c is c I, a vector the diagonal."""
    if np.ndim(cov) == 0:
        return cov * np.eye(dim)
    if np.ndim(cov) == 1:
        return np.diag(cov)
    return cov


def mvn_solved(x, mean, cov):
    """Sigma^{-1} (x - mean) for each point, shape (..., d), and the points'
    batch shape (the shape of logpdf's unsqueezed output)."""
    dim = mvn_dim(x, mean, cov)
    xs = mvn_quantiles(x, dim)
    r = xs if mean is None else xs - mean
    sigma = mvn_cov_matrix(cov, dim)
    flat = np.reshape(r, (-1, dim))
    solved = np.transpose(np.linalg.solve(sigma, np.transpose(flat)))
    return np.reshape(solved, np.shape(xs))


def mvn_g(g, x, mean, cov):
    """The output cotangent as (..., 1), one entry per point (SciPy squeezes
    the output)."""
    dim = mvn_dim(x, mean, cov)
    xs = mvn_quantiles(x, dim)
    return np.reshape(g, np.shape(xs)[:-1] + (1,))


def mvn_dx(g, x, mean, cov):
    """d logN(x; mean, Sigma) / dx = -Sigma^{-1} (x - mean) (Giles 2008, 2.3.1),
    times the cotangent, in x's shape."""
    return np.reshape(-mvn_g(g, x, mean, cov) * mvn_solved(x, mean, cov), np.shape(x))


def mvn_dmean(g, x, mean, cov):
    """d logN / d mean = Sigma^{-1} (x - mean), summed over points."""
    v = mvn_g(g, x, mean, cov) * mvn_solved(x, mean, cov)
    return np.reshape(v, (-1, np.shape(v)[-1]))


def mvn_dcov(g, x, mean, cov):
    """d logN / d Sigma = (Sigma^{-1} r r^T Sigma^{-1} - Sigma^{-1}) / 2 per
    point (Giles 2008, 2.2.3 and 2.2.4), summed over points: symmetric, the
    derivative in the space of symmetric matrices (SciPy reads one triangle
    of cov; autograd's rule gives the same). A scalar cov (c I) gets the
    trace, a vector (a diagonal) the diagonal."""
    dim = mvn_dim(x, mean, cov)
    sigma = mvn_cov_matrix(cov, dim)
    gp = np.reshape(mvn_g(g, x, mean, cov), (-1,))
    s = np.reshape(mvn_solved(x, mean, cov), (-1, dim))
    outer = np.matmul(np.transpose(s * np.expand_dims(gp, -1)), s)
    return mvn_cov_cotangent(0.5 * (outer - np.sum(gp) * np.linalg.inv(sigma)), cov)


def mvn_cov_cotangent(full, cov):
    """A d x d cotangent of Sigma, symmetrised (the derivative in the space
    of symmetric matrices), on cov's structure: the trace for a scalar cov
    (c I), the diagonal for a vector (a diagonal), else the matrix."""
    full = 0.5 * (full + np.transpose(full))
    if np.ndim(cov) == 0:
        return np.trace(full)
    if np.ndim(cov) == 1:
        return np.diagonal(full)
    return full


def mvn_entropy_dcov(g, mean, cov):
    """d/dSigma of multivariate_normal.entropy = (d log(2 pi e) + log det
    Sigma) / 2: Sigma^{-1} / 2 (Jacobi's formula, d log det S = tr(S^{-1}
    dS); symmetric). A scalar cov (c I) gets the trace, d / (2c); a vector
    (a diagonal) the diagonal, 1 / (2 c_i)."""
    dim = mvn_dim(None, mean, cov)
    return mvn_cov_cotangent(0.5 * g * np.linalg.inv(mvn_cov_matrix(cov, dim)), cov)


# ----------------------------------------------------------------- dirichlet

def dirichlet_full(x, alpha):
    """x with its components on the first axis, the last component appended
    as 1 - sum when x has one fewer than alpha (SciPy's convention)."""
    if np.shape(x)[0] == np.shape(alpha)[0]:
        return x
    return np.concatenate([x, 1.0 - np.sum(x, axis=0, keepdims=True)], axis=0)


def _alpha_column(alpha, x):
    """alpha shaped (d, 1, ...) to broadcast against x's trailing axes."""
    return np.reshape(alpha, np.shape(alpha) + (1,) * (np.ndim(x) - 1))


def dirichlet_dx(g, x, alpha):
    """d log Dir(x; alpha) / dx_i = (alpha_i - 1) / x_i; with the last
    component implied, x_d = 1 - sum, the last term is subtracted."""
    full = dirichlet_full(x, alpha)
    dfull = g * (_alpha_column(alpha, x) - 1.0) / full
    if np.shape(x)[0] == np.shape(alpha)[0]:
        return dfull
    return dfull[:-1] - dfull[-1:]


def dirichlet_dalpha(g, x, alpha):
    """d log Dir / d alpha_i = log x_i - psi(alpha_i) + psi(sum alpha),
    summed over the points (x's trailing axes)."""
    full = dirichlet_full(x, alpha)
    per = g * (np.log(full) - _alpha_column(sp.digamma(alpha) - sp.digamma(np.sum(alpha)), x))
    return np.sum(np.reshape(per, (np.shape(alpha)[0], -1)), axis=1)
