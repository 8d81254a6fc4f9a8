"""Rules for scipy.stats distributions (optional: imported only when SciPy
is).

The rules are keyed on the bound methods of SciPy's module-level
distribution objects (`scipy.stats.norm.logpdf` is a bound method of the
instance `scipy.stats.norm`; bound methods compare and hash equal, so the
registry finds the rule for every fetch of the method), and their templates
mirror the methods' call signatures, `logpdf(x, *shapes, loc=0, scale=1)`
for continuous and `logpmf(k, *shapes, loc=0)` for discrete distributions,
so that positional and keyword call sites bind.

Covered: norm, t, beta, gamma, chi2, expon, laplace, logistic, cauchy,
lognorm, uniform (logpdf, pdf, cdf, logcdf, sf, logsf: in x, loc, scale and
the shape parameters), poisson, binom, bernoulli (logpmf, pmf, cdf, logcdf,
sf, logsf: in the continuous parameter mu or p), multivariate_normal
(logpdf, pdf: in x, mean and cov) and dirichlet (logpdf, pdf: in x and
alpha). The shape parameters of t, beta, gamma and chi2 have no closed-form
derivative in their distribution functions: differentiating
cdf/logcdf/sf/logsf with respect to them raises NotImplementedError (the
forward value is unaffected), as autograd and TensorFlow Probability do not
provide it either.

The maths is the same for every location-scale family (the SciPy reference
guide's densities; rules/helpers/stats.py has each formula and its source):
with the score s = d logpdf / dx, d logpdf / d loc = -s and
d logpdf / d scale = -(s (x - loc) + 1) / scale; d pdf = pdf d logpdf; and
for F = cdf, dF/dx = pdf(x), dF/dloc = -pdf(x), dF/dscale = -pdf(x)
(x - loc) / scale, with d log F = dF / F, d(1 - F) = -dF (`cdf_weight`).
So the templates are parametrised (registry.Template's `constants`): one
per method and signature, the distribution's helpers (`SCORE`,
`LOG_DENSITY`, the shape derivatives) and the method (`KIND`: cdf, logcdf,
sf or logsf) bound when each rule is registered, from the tables below.

Only the compiled paths (sg.grad, @sg.function) see these calls: SciPy
converts a Tensor with np.asarray, so the op-by-op tape cannot record them.
The notation is rules/numpy/__init__.py's.
"""
import scipy.stats as st

from ..helpers.stats import (beta_da, beta_db, beta_log_density, beta_score, binom_dp,
                             binom_log_dcdf, cauchy_log_density, cauchy_score, cdf_weight,
                             chi2_ddf, chi2_log_density, chi2_score, cot, dirichlet_dalpha,
                             dirichlet_dx, dscale_density, expon_log_density, expon_score,
                             gamma_da, gamma_log_density, gamma_score, laplace_log_density,
                             laplace_score, logistic_log_density, logistic_score, lognorm_ds,
                             lognorm_log_density, lognorm_logphi_u, lognorm_score, lognorm_u,
                             mvn_dcov, mvn_dmean, mvn_dx, mvn_entropy_dcov, norm_log_density, norm_score,
                             not_differentiable, poisson_dmu, poisson_logpmf_floor, t_ddf,
                             t_log_density, t_score, uniform_log_density, uniform_score)
from ..registry import register_adjoint

CDF_KINDS = ("cdf", "logcdf", "sf", "logsf")
# what each distribution-function method is, and its derivative (for the docstrings)
_CDF_DOC = {"cdf": ("F(x)", "dF/dx = pdf(x), dF/dloc = -pdf(x), dF/dscale = -pdf(x) (x - loc) / scale"),
            "logcdf": ("log F(x)", "d log F = dF / F, with dF as for the cdf"),
            "sf": ("S(x) = 1 - F(x)", "dS = -dF, with dF as for the cdf"),
            "logsf": ("log S(x)", "d log S = -dF / S, with dF as for the cdf")}


def _register(distribution, rules, rename=None, **constants):
    """Register scipy.stats.<distribution>.<method>'s rule for each
    (method, template) of `rules`, named <distribution>_<method>, with the
    template's parameters renamed by `rename` and its placeholders bound to
    `constants`, KIND (the method) and METHOD (its full name); WHAT and CDF
    fill the docstrings of the distribution functions."""
    for method, template in rules:
        what, cdf = _CDF_DOC.get(method, ("", ""))
        register_adjoint(getattr(getattr(st, distribution), method), name="%s_%s" % (distribution, method),
                         rename=rename,
                         constants=dict(constants, KIND=method, METHOD="scipy.stats.%s.%s" % (distribution, method),
                                        WHAT=what, CDF=cdf))(template)


# ------------------------------------------------- location-scale families


def logpdf(z, x, loc=0, scale=1):
    """log density of {DIST}: with score = d/dx ({SCORE}), d/dloc = -score,
    d/dscale = -(score (x - loc) + 1) / scale."""
    score = SCORE(x, loc, scale)
    d[x] = cot(d[z] * score, x)
    d[loc] = cot(-d[z] * score, loc)
    d[scale] = cot(dscale_density(d[z], score, x, loc, scale), scale)


def pdf(z, x, loc=0, scale=1):
    """density of {DIST}: d pdf = pdf d logpdf (the logpdf rule, times z)."""
    g = d[z] * z
    score = SCORE(x, loc, scale)
    d[x] = cot(g * score, x)
    d[loc] = cot(-g * score, loc)
    d[scale] = cot(dscale_density(g, score, x, loc, scale), scale)


def distribution_function(z, x, loc=0, scale=1):
    """{WHAT} of {DIST}: {CDF}."""
    p = cdf_weight(KIND, d[z], z, LOG_DENSITY(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


for _name, _dist, _log_density, _score in [
        ("norm", "N(loc, scale^2)", norm_log_density, norm_score),
        ("expon", "exponential, rate 1/scale", expon_log_density, expon_score),
        ("laplace", "Laplace (double exponential)", laplace_log_density, laplace_score),
        ("logistic", "logistic", logistic_log_density, logistic_score),
        ("cauchy", "Cauchy", cauchy_log_density, cauchy_score),
        ("uniform", "uniform on [loc, loc + scale]", uniform_log_density, uniform_score)]:
    _register(_name, [("logpdf", logpdf), ("pdf", pdf)] + [(k, distribution_function) for k in CDF_KINDS],
              DIST=_dist, LOG_DENSITY=_log_density, SCORE=_score)


# ----------------------- with a shape parameter (t, chi2: df; gamma: a; lognorm: s)
# The templates' parameter `shape` takes the distribution's name for it (rename).


def logpdf_shape(z, x, shape, loc=0, scale=1):
    """log density of {DIST}: with score = d/dx ({SCORE}), d/dloc = -score,
    d/dscale = -(score (x - loc) + 1) / scale, d/d{SHAPE}: {DSHAPE}."""
    score = SCORE(x, shape, loc, scale)
    d[x] = cot(d[z] * score, x)
    d[shape] = cot(d[z] * DSHAPE(x, shape, loc, scale), shape)
    d[loc] = cot(-d[z] * score, loc)
    d[scale] = cot(dscale_density(d[z], score, x, loc, scale), scale)


def pdf_shape(z, x, shape, loc=0, scale=1):
    """density of {DIST}: d pdf = pdf d logpdf (the logpdf rule, times z)."""
    g = d[z] * z
    score = SCORE(x, shape, loc, scale)
    d[x] = cot(g * score, x)
    d[shape] = cot(g * DSHAPE(x, shape, loc, scale), shape)
    d[loc] = cot(-g * score, loc)
    d[scale] = cot(dscale_density(g, score, x, loc, scale), scale)


def distribution_function_shape(z, x, shape, loc=0, scale=1):
    """{WHAT} of {DIST}: {CDF}. {SHAPE}: not differentiable (NotImplementedError)."""
    p = cdf_weight(KIND, d[z], z, LOG_DENSITY(x, shape, loc, scale))
    d[x] = cot(p, x)
    d[shape] = not_differentiable(METHOD, SHAPE)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


def lognorm_distribution_function(z, x, s, loc=0, scale=1):
    """{WHAT} of log-normal with shape s: {CDF}. dF/ds = -phi(u) u / s with
    u = log(y) / s."""
    p = cdf_weight(KIND, d[z], z, lognorm_log_density(x, s, loc, scale))
    d[x] = cot(p, x)
    q = cdf_weight(KIND, d[z], z, lognorm_logphi_u(x, s, loc, scale))
    d[s] = cot(-q * lognorm_u(x, s, loc, scale) / s, s)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


for _name, _dist, _log_density, _score, _shape, _dshape, _cdf in [
        ("t", "Student's t with df degrees of freedom", t_log_density, t_score, "df", t_ddf,
         distribution_function_shape),
        ("chi2", "chi-squared with df degrees of freedom", chi2_log_density, chi2_score, "df", chi2_ddf,
         distribution_function_shape),
        ("gamma", "Gamma with shape a", gamma_log_density, gamma_score, "a", gamma_da, distribution_function_shape),
        ("lognorm", "log-normal with shape s", lognorm_log_density, lognorm_score, "s", lognorm_ds,
         lognorm_distribution_function)]:
    _register(_name, [("logpdf", logpdf_shape), ("pdf", pdf_shape)] + [(k, _cdf) for k in CDF_KINDS],
              rename={"shape": _shape}, DIST=_dist, LOG_DENSITY=_log_density, SCORE=_score, SHAPE=_shape,
              DSHAPE=_dshape)


# --------------------------------------------------------------------- beta


def beta_logpdf(z, x, a, b, loc=0, scale=1):
    """log density of Beta(a, b) on [loc, loc + scale]: with score = d/dx (beta_score), d/dloc =
    -score, d/dscale = -(score (x - loc) + 1) / scale, d/da: beta_da, d/db: beta_db."""
    score = beta_score(x, a, b, loc, scale)
    d[x] = cot(d[z] * score, x)
    d[a] = cot(d[z] * beta_da(x, a, b, loc, scale), a)
    d[b] = cot(d[z] * beta_db(x, a, b, loc, scale), b)
    d[loc] = cot(-d[z] * score, loc)
    d[scale] = cot(dscale_density(d[z], score, x, loc, scale), scale)


def beta_pdf(z, x, a, b, loc=0, scale=1):
    """density of Beta(a, b) on [loc, loc + scale]: d pdf = pdf d logpdf (the logpdf rule, times
    z)."""
    g = d[z] * z
    score = beta_score(x, a, b, loc, scale)
    d[x] = cot(g * score, x)
    d[a] = cot(g * beta_da(x, a, b, loc, scale), a)
    d[b] = cot(g * beta_db(x, a, b, loc, scale), b)
    d[loc] = cot(-g * score, loc)
    d[scale] = cot(dscale_density(g, score, x, loc, scale), scale)


def beta_distribution_function(z, x, a, b, loc=0, scale=1):
    """{WHAT} of Beta(a, b) on [loc, loc + scale]: {CDF}. a, b: not
    differentiable (NotImplementedError)."""
    p = cdf_weight(KIND, d[z], z, beta_log_density(x, a, b, loc, scale))
    d[x] = cot(p, x)
    d[a] = not_differentiable(METHOD, "a")
    d[b] = not_differentiable(METHOD, "b")
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


_register("beta", [("logpdf", beta_logpdf), ("pdf", beta_pdf)]
          + [(k, beta_distribution_function) for k in CDF_KINDS])


# ------------------------------------------------------ discrete families


def poisson_logpmf(z, k, mu, loc=0):
    """Poisson with mean mu log mass: d/dmu from poisson_dmu; k, loc (and n) are integers, with no
    derivative."""
    d[mu] = cot(d[z] * poisson_dmu(k, mu, loc), mu)


def poisson_pmf(z, k, mu, loc=0):
    """Poisson with mean mu mass: d pmf = pmf d logpmf."""
    d[mu] = cot(d[z] * z * poisson_dmu(k, mu, loc), mu)


def poisson_distribution_function(z, k, mu, loc=0):
    """Poisson with mean mu {KIND} (F = cdf; log F, 1 - F, log(1 - F) as for continuous ones):
    dF/dmu = -pmf(floor(k - loc))."""
    d[mu] = cot(-cdf_weight(KIND, d[z], z, poisson_logpmf_floor(k, mu, loc)), mu)


def binom_logpmf(z, k, n, p, loc=0):
    """binomial with n trials log mass: d/dp from binom_dp; k, loc (and n) are integers, with no
    derivative."""
    d[p] = cot(d[z] * binom_dp(k, n, p, loc), p)


def binom_pmf(z, k, n, p, loc=0):
    """binomial with n trials mass: d pmf = pmf d logpmf."""
    d[p] = cot(d[z] * z * binom_dp(k, n, p, loc), p)


def binom_distribution_function(z, k, n, p, loc=0):
    """binomial with n trials {KIND} (F = cdf; log F, 1 - F, log(1 - F) as for continuous ones):
    dF/dp = -n pmf(floor(k - loc); n - 1, p); n is an integer (no derivative)."""
    d[p] = cot(-cdf_weight(KIND, d[z], z, binom_log_dcdf(k, n, p, loc)), p)


def bernoulli_logpmf(z, k, p, loc=0):
    """Bernoulli log mass: d/dp from binom_dp; k, loc (and n) are integers, with no
    derivative."""
    d[p] = cot(d[z] * binom_dp(k, 1.0, p, loc), p)


def bernoulli_pmf(z, k, p, loc=0):
    """Bernoulli mass: d pmf = pmf d logpmf."""
    d[p] = cot(d[z] * z * binom_dp(k, 1.0, p, loc), p)


def bernoulli_distribution_function(z, k, p, loc=0):
    """Bernoulli {KIND} (F = cdf; log F, 1 - F, log(1 - F) as for continuous ones): dF/dp = -1
    on 0 <= k - loc < 1, else 0."""
    d[p] = cot(-cdf_weight(KIND, d[z], z, binom_log_dcdf(k, 1.0, p, loc)), p)


for _name, (_logpmf, _pmf, _cdf) in [
        ("poisson", (poisson_logpmf, poisson_pmf, poisson_distribution_function)),
        ("binom", (binom_logpmf, binom_pmf, binom_distribution_function)),
        ("bernoulli", (bernoulli_logpmf, bernoulli_pmf, bernoulli_distribution_function))]:
    _register(_name, [("logpmf", _logpmf), ("pmf", _pmf)] + [(k, _cdf) for k in CDF_KINDS])


# -------------------------------------------------- multivariate families


@register_adjoint(st.multivariate_normal.logpdf)
def multivariate_normal_logpdf(z, x, mean=None, cov=1, allow_singular=False):
    """log N(x; mean, Sigma) = -(d log 2 pi + log det Sigma + r^T Sigma^{-1} r) / 2, r = x - mean:
    d/dx = -Sigma^{-1} r, d/dmean = Sigma^{-1} r, d/dSigma = (Sigma^{-1} r r^T Sigma^{-1}
    - Sigma^{-1}) / 2 (symmetric; scalar and diagonal cov too). x is a point (d,) or a stack
    (..., d); cov must be nonsingular."""
    d[x] = cot(mvn_dx(d[z], x, mean, cov), x)
    d[mean] = cot(mvn_dmean(d[z], x, mean, cov), mean)
    d[cov] = cot(mvn_dcov(d[z], x, mean, cov), cov)


@register_adjoint(st.multivariate_normal.pdf)
def multivariate_normal_pdf(z, x, mean=None, cov=1, allow_singular=False):
    """N(x; mean, Sigma): d pdf = pdf d logpdf (the logpdf rule, times z)."""
    g = d[z] * z
    d[x] = cot(mvn_dx(g, x, mean, cov), x)
    d[mean] = cot(mvn_dmean(g, x, mean, cov), mean)
    d[cov] = cot(mvn_dcov(g, x, mean, cov), cov)


@register_adjoint(st.multivariate_normal.entropy)
def multivariate_normal_entropy(z, mean=None, cov=1):
    """H = (d log(2 pi e) + log det Sigma) / 2 (independent of the mean):
    d/dSigma = Sigma^{-1} / 2 (symmetric; scalar and diagonal cov too)."""
    d[cov] = cot(mvn_entropy_dcov(d[z], mean, cov), cov)


@register_adjoint(st.dirichlet.logpdf)
def dirichlet_logpdf(z, x, alpha):
    """log Dir(x; alpha) = sum (alpha_i - 1) log x_i - log B(alpha): d/dx_i = (alpha_i - 1) / x_i,
    d/dalpha_i = log x_i - psi(alpha_i) + psi(sum alpha). Components on x's first axis (SciPy);
    with one fewer than alpha the last is 1 - sum (the derivative then keeps x on the simplex)."""
    d[x] = cot(dirichlet_dx(d[z], x, alpha), x)
    d[alpha] = cot(dirichlet_dalpha(d[z], x, alpha), alpha)


@register_adjoint(st.dirichlet.pdf)
def dirichlet_pdf(z, x, alpha):
    """Dir(x; alpha): d pdf = pdf d logpdf (the logpdf rule, times z)."""
    g = d[z] * z
    d[x] = cot(dirichlet_dx(g, x, alpha), x)
    d[alpha] = cot(dirichlet_dalpha(g, x, alpha), alpha)
