"""Adjoint rules for scipy.stats distributions (optional: imported only when
SciPy is).

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
alpha). The derivatives and their sources are in helpers_stats.py. The
shape parameters of t, beta, gamma and chi2 have no closed-form derivative
in their distribution functions: differentiating cdf/logcdf/sf/logsf with
respect to them raises NotImplementedError (the forward value is
unaffected), as autograd and TensorFlow Probability do not provide it
either.

Only the compiled paths (sg.grad, @sg.function) see these calls: SciPy
converts a Tensor with np.asarray, so the op-by-op tape cannot record them.
In the notation of numpy_adjoints.py; scipy.stats is `st` in templates.
"""
import scipy.stats as st

from ..helpers.stats import (beta_da, beta_db, beta_log_density, beta_score, binom_dp,
                            binom_log_dcdf, cauchy_log_density, cauchy_score, cdf_weight,
                            chi2_ddf, chi2_log_density, chi2_score, cot, dirichlet_dalpha,
                            dirichlet_dx, dscale_density, expon_log_density, expon_score,
                            gamma_da, gamma_log_density, gamma_score, laplace_log_density,
                            laplace_score, logistic_log_density, logistic_score, lognorm_ds,
                            lognorm_log_density, lognorm_logphi_u, lognorm_score, lognorm_u,
                            mvn_dcov, mvn_dmean, mvn_dx, norm_log_density, norm_score,
                            not_differentiable, poisson_dmu, poisson_logpmf_floor, t_ddf,
                            t_log_density, t_score, uniform_log_density, uniform_score)
from ..registry import register_adjoint

# ------------------------------------------------------------------ norm


@register_adjoint(st.norm.logpdf)
def norm_logpdf(z, x, loc=0, scale=1):
    """log density of N(loc, scale^2): with score = d/dx (norm_score), d/dloc = -score, d/dscale =
    -(score (x - loc) + 1) / scale."""
    score = norm_score(x, loc, scale)
    d[x] = cot(d[z] * score, x)
    d[loc] = cot(-d[z] * score, loc)
    d[scale] = cot(dscale_density(d[z], score, x, loc, scale), scale)


@register_adjoint(st.norm.pdf)
def norm_pdf(z, x, loc=0, scale=1):
    """density of N(loc, scale^2): d pdf = pdf d logpdf (the logpdf rule, times z)."""
    g = d[z] * z
    score = norm_score(x, loc, scale)
    d[x] = cot(g * score, x)
    d[loc] = cot(-g * score, loc)
    d[scale] = cot(dscale_density(g, score, x, loc, scale), scale)


@register_adjoint(st.norm.cdf)
def norm_cdf(z, x, loc=0, scale=1):
    """F(x) of N(loc, scale^2): dF/dx = pdf(x), dF/dloc = -pdf(x), dF/dscale = -pdf(x) (x - loc) /
    scale."""
    p = cdf_weight("cdf", d[z], z, norm_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.norm.logcdf)
def norm_logcdf(z, x, loc=0, scale=1):
    """log F(x) of N(loc, scale^2): d log F = dF / F, with dF as for the cdf."""
    p = cdf_weight("logcdf", d[z], z, norm_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.norm.sf)
def norm_sf(z, x, loc=0, scale=1):
    """S(x) = 1 - F(x) of N(loc, scale^2): dS = -dF, with dF as for the cdf."""
    p = cdf_weight("sf", d[z], z, norm_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.norm.logsf)
def norm_logsf(z, x, loc=0, scale=1):
    """log S(x) of N(loc, scale^2): d log S = -dF / S, with dF as for the cdf."""
    p = cdf_weight("logsf", d[z], z, norm_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


# --------------------------------------------------------------------- t


@register_adjoint(st.t.logpdf)
def t_logpdf(z, x, df, loc=0, scale=1):
    """log density of Student's t with df degrees of freedom: with score = d/dx (t_score), d/dloc =
    -score, d/dscale = -(score (x - loc) + 1) / scale, d/ddf: t_ddf."""
    score = t_score(x, df, loc, scale)
    d[x] = cot(d[z] * score, x)
    d[df] = cot(d[z] * t_ddf(x, df, loc, scale), df)
    d[loc] = cot(-d[z] * score, loc)
    d[scale] = cot(dscale_density(d[z], score, x, loc, scale), scale)


@register_adjoint(st.t.pdf)
def t_pdf(z, x, df, loc=0, scale=1):
    """density of Student's t with df degrees of freedom: d pdf = pdf d logpdf (the logpdf rule,
    times z)."""
    g = d[z] * z
    score = t_score(x, df, loc, scale)
    d[x] = cot(g * score, x)
    d[df] = cot(g * t_ddf(x, df, loc, scale), df)
    d[loc] = cot(-g * score, loc)
    d[scale] = cot(dscale_density(g, score, x, loc, scale), scale)


@register_adjoint(st.t.cdf)
def t_cdf(z, x, df, loc=0, scale=1):
    """F(x) of Student's t with df degrees of freedom: dF/dx = pdf(x), dF/dloc = -pdf(x), dF/dscale
    = -pdf(x) (x - loc) / scale. df: not differentiable (NotImplementedError)."""
    p = cdf_weight("cdf", d[z], z, t_log_density(x, df, loc, scale))
    d[x] = cot(p, x)
    d[df] = not_differentiable("scipy.stats.t.cdf", "df")
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.t.logcdf)
def t_logcdf(z, x, df, loc=0, scale=1):
    """log F(x) of Student's t with df degrees of freedom: d log F = dF / F, with dF as for the
    cdf. df: not differentiable (NotImplementedError)."""
    p = cdf_weight("logcdf", d[z], z, t_log_density(x, df, loc, scale))
    d[x] = cot(p, x)
    d[df] = not_differentiable("scipy.stats.t.logcdf", "df")
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.t.sf)
def t_sf(z, x, df, loc=0, scale=1):
    """S(x) = 1 - F(x) of Student's t with df degrees of freedom: dS = -dF, with dF as for the cdf.
    df: not differentiable (NotImplementedError)."""
    p = cdf_weight("sf", d[z], z, t_log_density(x, df, loc, scale))
    d[x] = cot(p, x)
    d[df] = not_differentiable("scipy.stats.t.sf", "df")
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.t.logsf)
def t_logsf(z, x, df, loc=0, scale=1):
    """log S(x) of Student's t with df degrees of freedom: d log S = -dF / S, with dF as for the
    cdf. df: not differentiable (NotImplementedError)."""
    p = cdf_weight("logsf", d[z], z, t_log_density(x, df, loc, scale))
    d[x] = cot(p, x)
    d[df] = not_differentiable("scipy.stats.t.logsf", "df")
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


# ------------------------------------------------------------------ beta


@register_adjoint(st.beta.logpdf)
def beta_logpdf(z, x, a, b, loc=0, scale=1):
    """log density of Beta(a, b) on [loc, loc + scale]: with score = d/dx (beta_score), d/dloc =
    -score, d/dscale = -(score (x - loc) + 1) / scale, d/da: beta_da, d/db: beta_db."""
    score = beta_score(x, a, b, loc, scale)
    d[x] = cot(d[z] * score, x)
    d[a] = cot(d[z] * beta_da(x, a, b, loc, scale), a)
    d[b] = cot(d[z] * beta_db(x, a, b, loc, scale), b)
    d[loc] = cot(-d[z] * score, loc)
    d[scale] = cot(dscale_density(d[z], score, x, loc, scale), scale)


@register_adjoint(st.beta.pdf)
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


@register_adjoint(st.beta.cdf)
def beta_cdf(z, x, a, b, loc=0, scale=1):
    """F(x) of Beta(a, b) on [loc, loc + scale]: dF/dx = pdf(x), dF/dloc = -pdf(x), dF/dscale =
    -pdf(x) (x - loc) / scale. a, b: not differentiable (NotImplementedError)."""
    p = cdf_weight("cdf", d[z], z, beta_log_density(x, a, b, loc, scale))
    d[x] = cot(p, x)
    d[a] = not_differentiable("scipy.stats.beta.cdf", "a")
    d[b] = not_differentiable("scipy.stats.beta.cdf", "b")
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.beta.logcdf)
def beta_logcdf(z, x, a, b, loc=0, scale=1):
    """log F(x) of Beta(a, b) on [loc, loc + scale]: d log F = dF / F, with dF as for the cdf. a,
    b: not differentiable (NotImplementedError)."""
    p = cdf_weight("logcdf", d[z], z, beta_log_density(x, a, b, loc, scale))
    d[x] = cot(p, x)
    d[a] = not_differentiable("scipy.stats.beta.logcdf", "a")
    d[b] = not_differentiable("scipy.stats.beta.logcdf", "b")
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.beta.sf)
def beta_sf(z, x, a, b, loc=0, scale=1):
    """S(x) = 1 - F(x) of Beta(a, b) on [loc, loc + scale]: dS = -dF, with dF as for the cdf. a, b:
    not differentiable (NotImplementedError)."""
    p = cdf_weight("sf", d[z], z, beta_log_density(x, a, b, loc, scale))
    d[x] = cot(p, x)
    d[a] = not_differentiable("scipy.stats.beta.sf", "a")
    d[b] = not_differentiable("scipy.stats.beta.sf", "b")
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.beta.logsf)
def beta_logsf(z, x, a, b, loc=0, scale=1):
    """log S(x) of Beta(a, b) on [loc, loc + scale]: d log S = -dF / S, with dF as for the cdf. a,
    b: not differentiable (NotImplementedError)."""
    p = cdf_weight("logsf", d[z], z, beta_log_density(x, a, b, loc, scale))
    d[x] = cot(p, x)
    d[a] = not_differentiable("scipy.stats.beta.logsf", "a")
    d[b] = not_differentiable("scipy.stats.beta.logsf", "b")
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


# ----------------------------------------------------------------- gamma


@register_adjoint(st.gamma.logpdf)
def gamma_logpdf(z, x, a, loc=0, scale=1):
    """log density of Gamma with shape a: with score = d/dx (gamma_score), d/dloc = -score,
    d/dscale = -(score (x - loc) + 1) / scale, d/da: gamma_da."""
    score = gamma_score(x, a, loc, scale)
    d[x] = cot(d[z] * score, x)
    d[a] = cot(d[z] * gamma_da(x, a, loc, scale), a)
    d[loc] = cot(-d[z] * score, loc)
    d[scale] = cot(dscale_density(d[z], score, x, loc, scale), scale)


@register_adjoint(st.gamma.pdf)
def gamma_pdf(z, x, a, loc=0, scale=1):
    """density of Gamma with shape a: d pdf = pdf d logpdf (the logpdf rule, times z)."""
    g = d[z] * z
    score = gamma_score(x, a, loc, scale)
    d[x] = cot(g * score, x)
    d[a] = cot(g * gamma_da(x, a, loc, scale), a)
    d[loc] = cot(-g * score, loc)
    d[scale] = cot(dscale_density(g, score, x, loc, scale), scale)


@register_adjoint(st.gamma.cdf)
def gamma_cdf(z, x, a, loc=0, scale=1):
    """F(x) of Gamma with shape a: dF/dx = pdf(x), dF/dloc = -pdf(x), dF/dscale = -pdf(x) (x - loc)
    / scale. a: not differentiable (NotImplementedError)."""
    p = cdf_weight("cdf", d[z], z, gamma_log_density(x, a, loc, scale))
    d[x] = cot(p, x)
    d[a] = not_differentiable("scipy.stats.gamma.cdf", "a")
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.gamma.logcdf)
def gamma_logcdf(z, x, a, loc=0, scale=1):
    """log F(x) of Gamma with shape a: d log F = dF / F, with dF as for the cdf. a: not
    differentiable (NotImplementedError)."""
    p = cdf_weight("logcdf", d[z], z, gamma_log_density(x, a, loc, scale))
    d[x] = cot(p, x)
    d[a] = not_differentiable("scipy.stats.gamma.logcdf", "a")
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.gamma.sf)
def gamma_sf(z, x, a, loc=0, scale=1):
    """S(x) = 1 - F(x) of Gamma with shape a: dS = -dF, with dF as for the cdf. a: not
    differentiable (NotImplementedError)."""
    p = cdf_weight("sf", d[z], z, gamma_log_density(x, a, loc, scale))
    d[x] = cot(p, x)
    d[a] = not_differentiable("scipy.stats.gamma.sf", "a")
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.gamma.logsf)
def gamma_logsf(z, x, a, loc=0, scale=1):
    """log S(x) of Gamma with shape a: d log S = -dF / S, with dF as for the cdf. a: not
    differentiable (NotImplementedError)."""
    p = cdf_weight("logsf", d[z], z, gamma_log_density(x, a, loc, scale))
    d[x] = cot(p, x)
    d[a] = not_differentiable("scipy.stats.gamma.logsf", "a")
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


# ------------------------------------------------------------------ chi2


@register_adjoint(st.chi2.logpdf)
def chi2_logpdf(z, x, df, loc=0, scale=1):
    """log density of chi-squared with df degrees of freedom: with score = d/dx (chi2_score),
    d/dloc = -score, d/dscale = -(score (x - loc) + 1) / scale, d/ddf: chi2_ddf."""
    score = chi2_score(x, df, loc, scale)
    d[x] = cot(d[z] * score, x)
    d[df] = cot(d[z] * chi2_ddf(x, df, loc, scale), df)
    d[loc] = cot(-d[z] * score, loc)
    d[scale] = cot(dscale_density(d[z], score, x, loc, scale), scale)


@register_adjoint(st.chi2.pdf)
def chi2_pdf(z, x, df, loc=0, scale=1):
    """density of chi-squared with df degrees of freedom: d pdf = pdf d logpdf (the logpdf rule,
    times z)."""
    g = d[z] * z
    score = chi2_score(x, df, loc, scale)
    d[x] = cot(g * score, x)
    d[df] = cot(g * chi2_ddf(x, df, loc, scale), df)
    d[loc] = cot(-g * score, loc)
    d[scale] = cot(dscale_density(g, score, x, loc, scale), scale)


@register_adjoint(st.chi2.cdf)
def chi2_cdf(z, x, df, loc=0, scale=1):
    """F(x) of chi-squared with df degrees of freedom: dF/dx = pdf(x), dF/dloc = -pdf(x), dF/dscale
    = -pdf(x) (x - loc) / scale. df: not differentiable (NotImplementedError)."""
    p = cdf_weight("cdf", d[z], z, chi2_log_density(x, df, loc, scale))
    d[x] = cot(p, x)
    d[df] = not_differentiable("scipy.stats.chi2.cdf", "df")
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.chi2.logcdf)
def chi2_logcdf(z, x, df, loc=0, scale=1):
    """log F(x) of chi-squared with df degrees of freedom: d log F = dF / F, with dF as for the
    cdf. df: not differentiable (NotImplementedError)."""
    p = cdf_weight("logcdf", d[z], z, chi2_log_density(x, df, loc, scale))
    d[x] = cot(p, x)
    d[df] = not_differentiable("scipy.stats.chi2.logcdf", "df")
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.chi2.sf)
def chi2_sf(z, x, df, loc=0, scale=1):
    """S(x) = 1 - F(x) of chi-squared with df degrees of freedom: dS = -dF, with dF as for the cdf.
    df: not differentiable (NotImplementedError)."""
    p = cdf_weight("sf", d[z], z, chi2_log_density(x, df, loc, scale))
    d[x] = cot(p, x)
    d[df] = not_differentiable("scipy.stats.chi2.sf", "df")
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.chi2.logsf)
def chi2_logsf(z, x, df, loc=0, scale=1):
    """log S(x) of chi-squared with df degrees of freedom: d log S = -dF / S, with dF as for the
    cdf. df: not differentiable (NotImplementedError)."""
    p = cdf_weight("logsf", d[z], z, chi2_log_density(x, df, loc, scale))
    d[x] = cot(p, x)
    d[df] = not_differentiable("scipy.stats.chi2.logsf", "df")
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


# ----------------------------------------------------------------- expon


@register_adjoint(st.expon.logpdf)
def expon_logpdf(z, x, loc=0, scale=1):
    """log density of exponential, rate 1/scale: with score = d/dx (expon_score), d/dloc = -score,
    d/dscale = -(score (x - loc) + 1) / scale."""
    score = expon_score(x, loc, scale)
    d[x] = cot(d[z] * score, x)
    d[loc] = cot(-d[z] * score, loc)
    d[scale] = cot(dscale_density(d[z], score, x, loc, scale), scale)


@register_adjoint(st.expon.pdf)
def expon_pdf(z, x, loc=0, scale=1):
    """density of exponential, rate 1/scale: d pdf = pdf d logpdf (the logpdf rule, times z)."""
    g = d[z] * z
    score = expon_score(x, loc, scale)
    d[x] = cot(g * score, x)
    d[loc] = cot(-g * score, loc)
    d[scale] = cot(dscale_density(g, score, x, loc, scale), scale)


@register_adjoint(st.expon.cdf)
def expon_cdf(z, x, loc=0, scale=1):
    """F(x) of exponential, rate 1/scale: dF/dx = pdf(x), dF/dloc = -pdf(x), dF/dscale = -pdf(x) (x
    - loc) / scale."""
    p = cdf_weight("cdf", d[z], z, expon_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.expon.logcdf)
def expon_logcdf(z, x, loc=0, scale=1):
    """log F(x) of exponential, rate 1/scale: d log F = dF / F, with dF as for the cdf."""
    p = cdf_weight("logcdf", d[z], z, expon_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.expon.sf)
def expon_sf(z, x, loc=0, scale=1):
    """S(x) = 1 - F(x) of exponential, rate 1/scale: dS = -dF, with dF as for the cdf."""
    p = cdf_weight("sf", d[z], z, expon_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.expon.logsf)
def expon_logsf(z, x, loc=0, scale=1):
    """log S(x) of exponential, rate 1/scale: d log S = -dF / S, with dF as for the cdf."""
    p = cdf_weight("logsf", d[z], z, expon_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


# --------------------------------------------------------------- laplace


@register_adjoint(st.laplace.logpdf)
def laplace_logpdf(z, x, loc=0, scale=1):
    """log density of Laplace (double exponential): with score = d/dx (laplace_score), d/dloc =
    -score, d/dscale = -(score (x - loc) + 1) / scale."""
    score = laplace_score(x, loc, scale)
    d[x] = cot(d[z] * score, x)
    d[loc] = cot(-d[z] * score, loc)
    d[scale] = cot(dscale_density(d[z], score, x, loc, scale), scale)


@register_adjoint(st.laplace.pdf)
def laplace_pdf(z, x, loc=0, scale=1):
    """density of Laplace (double exponential): d pdf = pdf d logpdf (the logpdf rule, times z)."""
    g = d[z] * z
    score = laplace_score(x, loc, scale)
    d[x] = cot(g * score, x)
    d[loc] = cot(-g * score, loc)
    d[scale] = cot(dscale_density(g, score, x, loc, scale), scale)


@register_adjoint(st.laplace.cdf)
def laplace_cdf(z, x, loc=0, scale=1):
    """F(x) of Laplace (double exponential): dF/dx = pdf(x), dF/dloc = -pdf(x), dF/dscale = -pdf(x)
    (x - loc) / scale."""
    p = cdf_weight("cdf", d[z], z, laplace_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.laplace.logcdf)
def laplace_logcdf(z, x, loc=0, scale=1):
    """log F(x) of Laplace (double exponential): d log F = dF / F, with dF as for the cdf."""
    p = cdf_weight("logcdf", d[z], z, laplace_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.laplace.sf)
def laplace_sf(z, x, loc=0, scale=1):
    """S(x) = 1 - F(x) of Laplace (double exponential): dS = -dF, with dF as for the cdf."""
    p = cdf_weight("sf", d[z], z, laplace_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.laplace.logsf)
def laplace_logsf(z, x, loc=0, scale=1):
    """log S(x) of Laplace (double exponential): d log S = -dF / S, with dF as for the cdf."""
    p = cdf_weight("logsf", d[z], z, laplace_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


# -------------------------------------------------------------- logistic


@register_adjoint(st.logistic.logpdf)
def logistic_logpdf(z, x, loc=0, scale=1):
    """log density of logistic: with score = d/dx (logistic_score), d/dloc = -score, d/dscale =
    -(score (x - loc) + 1) / scale."""
    score = logistic_score(x, loc, scale)
    d[x] = cot(d[z] * score, x)
    d[loc] = cot(-d[z] * score, loc)
    d[scale] = cot(dscale_density(d[z], score, x, loc, scale), scale)


@register_adjoint(st.logistic.pdf)
def logistic_pdf(z, x, loc=0, scale=1):
    """density of logistic: d pdf = pdf d logpdf (the logpdf rule, times z)."""
    g = d[z] * z
    score = logistic_score(x, loc, scale)
    d[x] = cot(g * score, x)
    d[loc] = cot(-g * score, loc)
    d[scale] = cot(dscale_density(g, score, x, loc, scale), scale)


@register_adjoint(st.logistic.cdf)
def logistic_cdf(z, x, loc=0, scale=1):
    """F(x) of logistic: dF/dx = pdf(x), dF/dloc = -pdf(x),
    dF/dscale = -pdf(x) (x - loc) / scale."""
    p = cdf_weight("cdf", d[z], z, logistic_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.logistic.logcdf)
def logistic_logcdf(z, x, loc=0, scale=1):
    """log F(x) of logistic: d log F = dF / F, with dF as for the cdf."""
    p = cdf_weight("logcdf", d[z], z, logistic_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.logistic.sf)
def logistic_sf(z, x, loc=0, scale=1):
    """S(x) = 1 - F(x) of logistic: dS = -dF, with dF as for the cdf."""
    p = cdf_weight("sf", d[z], z, logistic_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.logistic.logsf)
def logistic_logsf(z, x, loc=0, scale=1):
    """log S(x) of logistic: d log S = -dF / S, with dF as for the cdf."""
    p = cdf_weight("logsf", d[z], z, logistic_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


# ---------------------------------------------------------------- cauchy


@register_adjoint(st.cauchy.logpdf)
def cauchy_logpdf(z, x, loc=0, scale=1):
    """log density of Cauchy: with score = d/dx (cauchy_score), d/dloc = -score, d/dscale = -(score
    (x - loc) + 1) / scale."""
    score = cauchy_score(x, loc, scale)
    d[x] = cot(d[z] * score, x)
    d[loc] = cot(-d[z] * score, loc)
    d[scale] = cot(dscale_density(d[z], score, x, loc, scale), scale)


@register_adjoint(st.cauchy.pdf)
def cauchy_pdf(z, x, loc=0, scale=1):
    """density of Cauchy: d pdf = pdf d logpdf (the logpdf rule, times z)."""
    g = d[z] * z
    score = cauchy_score(x, loc, scale)
    d[x] = cot(g * score, x)
    d[loc] = cot(-g * score, loc)
    d[scale] = cot(dscale_density(g, score, x, loc, scale), scale)


@register_adjoint(st.cauchy.cdf)
def cauchy_cdf(z, x, loc=0, scale=1):
    """F(x) of Cauchy: dF/dx = pdf(x), dF/dloc = -pdf(x), dF/dscale = -pdf(x) (x - loc) / scale."""
    p = cdf_weight("cdf", d[z], z, cauchy_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.cauchy.logcdf)
def cauchy_logcdf(z, x, loc=0, scale=1):
    """log F(x) of Cauchy: d log F = dF / F, with dF as for the cdf."""
    p = cdf_weight("logcdf", d[z], z, cauchy_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.cauchy.sf)
def cauchy_sf(z, x, loc=0, scale=1):
    """S(x) = 1 - F(x) of Cauchy: dS = -dF, with dF as for the cdf."""
    p = cdf_weight("sf", d[z], z, cauchy_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.cauchy.logsf)
def cauchy_logsf(z, x, loc=0, scale=1):
    """log S(x) of Cauchy: d log S = -dF / S, with dF as for the cdf."""
    p = cdf_weight("logsf", d[z], z, cauchy_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


# --------------------------------------------------------------- lognorm


@register_adjoint(st.lognorm.logpdf)
def lognorm_logpdf(z, x, s, loc=0, scale=1):
    """log density of log-normal with shape s: with score = d/dx (lognorm_score), d/dloc = -score,
    d/dscale = -(score (x - loc) + 1) / scale, d/ds: lognorm_ds."""
    score = lognorm_score(x, s, loc, scale)
    d[x] = cot(d[z] * score, x)
    d[s] = cot(d[z] * lognorm_ds(x, s, loc, scale), s)
    d[loc] = cot(-d[z] * score, loc)
    d[scale] = cot(dscale_density(d[z], score, x, loc, scale), scale)


@register_adjoint(st.lognorm.pdf)
def lognorm_pdf(z, x, s, loc=0, scale=1):
    """density of log-normal with shape s: d pdf = pdf d logpdf (the logpdf rule, times z)."""
    g = d[z] * z
    score = lognorm_score(x, s, loc, scale)
    d[x] = cot(g * score, x)
    d[s] = cot(g * lognorm_ds(x, s, loc, scale), s)
    d[loc] = cot(-g * score, loc)
    d[scale] = cot(dscale_density(g, score, x, loc, scale), scale)


@register_adjoint(st.lognorm.cdf)
def lognorm_cdf(z, x, s, loc=0, scale=1):
    """F(x) of log-normal with shape s: dF/dx = pdf(x), dF/dloc = -pdf(x), dF/dscale = -pdf(x) (x -
    loc) / scale. dF/ds = -phi(u) u / s with u = log(y) / s."""
    p = cdf_weight("cdf", d[z], z, lognorm_log_density(x, s, loc, scale))
    d[x] = cot(p, x)
    q = cdf_weight("cdf", d[z], z, lognorm_logphi_u(x, s, loc, scale))
    d[s] = cot(-q * lognorm_u(x, s, loc, scale) / s, s)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.lognorm.logcdf)
def lognorm_logcdf(z, x, s, loc=0, scale=1):
    """log F(x) of log-normal with shape s: d log F = dF / F, with dF as for the cdf. dF/ds =
    -phi(u) u / s with u = log(y) / s."""
    p = cdf_weight("logcdf", d[z], z, lognorm_log_density(x, s, loc, scale))
    d[x] = cot(p, x)
    q = cdf_weight("logcdf", d[z], z, lognorm_logphi_u(x, s, loc, scale))
    d[s] = cot(-q * lognorm_u(x, s, loc, scale) / s, s)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.lognorm.sf)
def lognorm_sf(z, x, s, loc=0, scale=1):
    """S(x) = 1 - F(x) of log-normal with shape s: dS = -dF, with dF as for the cdf. dF/ds =
    -phi(u) u / s with u = log(y) / s."""
    p = cdf_weight("sf", d[z], z, lognorm_log_density(x, s, loc, scale))
    d[x] = cot(p, x)
    q = cdf_weight("sf", d[z], z, lognorm_logphi_u(x, s, loc, scale))
    d[s] = cot(-q * lognorm_u(x, s, loc, scale) / s, s)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.lognorm.logsf)
def lognorm_logsf(z, x, s, loc=0, scale=1):
    """log S(x) of log-normal with shape s: d log S = -dF / S, with dF as for the cdf. dF/ds =
    -phi(u) u / s with u = log(y) / s."""
    p = cdf_weight("logsf", d[z], z, lognorm_log_density(x, s, loc, scale))
    d[x] = cot(p, x)
    q = cdf_weight("logsf", d[z], z, lognorm_logphi_u(x, s, loc, scale))
    d[s] = cot(-q * lognorm_u(x, s, loc, scale) / s, s)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


# --------------------------------------------------------------- uniform


@register_adjoint(st.uniform.logpdf)
def uniform_logpdf(z, x, loc=0, scale=1):
    """log density of uniform on [loc, loc + scale]: with score = d/dx (uniform_score), d/dloc =
    -score, d/dscale = -(score (x - loc) + 1) / scale."""
    score = uniform_score(x, loc, scale)
    d[x] = cot(d[z] * score, x)
    d[loc] = cot(-d[z] * score, loc)
    d[scale] = cot(dscale_density(d[z], score, x, loc, scale), scale)


@register_adjoint(st.uniform.pdf)
def uniform_pdf(z, x, loc=0, scale=1):
    """density of uniform on [loc, loc + scale]: d pdf = pdf d logpdf (the logpdf rule, times z)."""
    g = d[z] * z
    score = uniform_score(x, loc, scale)
    d[x] = cot(g * score, x)
    d[loc] = cot(-g * score, loc)
    d[scale] = cot(dscale_density(g, score, x, loc, scale), scale)


@register_adjoint(st.uniform.cdf)
def uniform_cdf(z, x, loc=0, scale=1):
    """F(x) of uniform on [loc, loc + scale]: dF/dx = pdf(x), dF/dloc = -pdf(x), dF/dscale =
    -pdf(x) (x - loc) / scale."""
    p = cdf_weight("cdf", d[z], z, uniform_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.uniform.logcdf)
def uniform_logcdf(z, x, loc=0, scale=1):
    """log F(x) of uniform on [loc, loc + scale]: d log F = dF / F, with dF as for the cdf."""
    p = cdf_weight("logcdf", d[z], z, uniform_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.uniform.sf)
def uniform_sf(z, x, loc=0, scale=1):
    """S(x) = 1 - F(x) of uniform on [loc, loc + scale]: dS = -dF, with dF as for the cdf."""
    p = cdf_weight("sf", d[z], z, uniform_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


@register_adjoint(st.uniform.logsf)
def uniform_logsf(z, x, loc=0, scale=1):
    """log S(x) of uniform on [loc, loc + scale]: d log S = -dF / S, with dF as for the cdf."""
    p = cdf_weight("logsf", d[z], z, uniform_log_density(x, loc, scale))
    d[x] = cot(p, x)
    d[loc] = cot(-p, loc)
    d[scale] = cot(-p * (x - loc) / scale, scale)


# --------------------------------------------------------------- poisson


@register_adjoint(st.poisson.logpmf)
def poisson_logpmf(z, k, mu, loc=0):
    """Poisson with mean mu log mass: d/dmu from poisson_dmu; k, loc (and n) are integers, with no
    derivative."""
    d[mu] = cot(d[z] * poisson_dmu(k, mu, loc), mu)


@register_adjoint(st.poisson.pmf)
def poisson_pmf(z, k, mu, loc=0):
    """Poisson with mean mu mass: d pmf = pmf d logpmf."""
    d[mu] = cot(d[z] * z * poisson_dmu(k, mu, loc), mu)


@register_adjoint(st.poisson.cdf)
def poisson_cdf(z, k, mu, loc=0):
    """Poisson with mean mu cdf (F = cdf; log F, 1 - F, log(1 - F) as for continuous ones): dF/dmu
    = -pmf(floor(k - loc))."""
    d[mu] = cot(-cdf_weight("cdf", d[z], z, poisson_logpmf_floor(k, mu, loc)), mu)


@register_adjoint(st.poisson.logcdf)
def poisson_logcdf(z, k, mu, loc=0):
    """Poisson with mean mu logcdf (F = cdf; log F, 1 - F, log(1 - F) as for continuous ones):
    dF/dmu = -pmf(floor(k - loc))."""
    d[mu] = cot(-cdf_weight("logcdf", d[z], z, poisson_logpmf_floor(k, mu, loc)), mu)


@register_adjoint(st.poisson.sf)
def poisson_sf(z, k, mu, loc=0):
    """Poisson with mean mu sf (F = cdf; log F, 1 - F, log(1 - F) as for continuous ones): dF/dmu =
    -pmf(floor(k - loc))."""
    d[mu] = cot(-cdf_weight("sf", d[z], z, poisson_logpmf_floor(k, mu, loc)), mu)


@register_adjoint(st.poisson.logsf)
def poisson_logsf(z, k, mu, loc=0):
    """Poisson with mean mu logsf (F = cdf; log F, 1 - F, log(1 - F) as for continuous ones):
    dF/dmu = -pmf(floor(k - loc))."""
    d[mu] = cot(-cdf_weight("logsf", d[z], z, poisson_logpmf_floor(k, mu, loc)), mu)


# ----------------------------------------------------------------- binom


@register_adjoint(st.binom.logpmf)
def binom_logpmf(z, k, n, p, loc=0):
    """binomial with n trials log mass: d/dp from binom_dp; k, loc (and n) are integers, with no
    derivative."""
    d[p] = cot(d[z] * binom_dp(k, n, p, loc), p)


@register_adjoint(st.binom.pmf)
def binom_pmf(z, k, n, p, loc=0):
    """binomial with n trials mass: d pmf = pmf d logpmf."""
    d[p] = cot(d[z] * z * binom_dp(k, n, p, loc), p)


@register_adjoint(st.binom.cdf)
def binom_cdf(z, k, n, p, loc=0):
    """binomial with n trials cdf (F = cdf; log F, 1 - F, log(1 - F) as for continuous ones): dF/dp
    = -n pmf(floor(k - loc); n - 1, p); n is an integer (no derivative)."""
    d[p] = cot(-cdf_weight("cdf", d[z], z, binom_log_dcdf(k, n, p, loc)), p)


@register_adjoint(st.binom.logcdf)
def binom_logcdf(z, k, n, p, loc=0):
    """binomial with n trials logcdf (F = cdf; log F, 1 - F, log(1 - F) as for continuous ones):
    dF/dp = -n pmf(floor(k - loc); n - 1, p); n is an integer (no derivative)."""
    d[p] = cot(-cdf_weight("logcdf", d[z], z, binom_log_dcdf(k, n, p, loc)), p)


@register_adjoint(st.binom.sf)
def binom_sf(z, k, n, p, loc=0):
    """binomial with n trials sf (F = cdf; log F, 1 - F, log(1 - F) as for continuous ones): dF/dp
    = -n pmf(floor(k - loc); n - 1, p); n is an integer (no derivative)."""
    d[p] = cot(-cdf_weight("sf", d[z], z, binom_log_dcdf(k, n, p, loc)), p)


@register_adjoint(st.binom.logsf)
def binom_logsf(z, k, n, p, loc=0):
    """binomial with n trials logsf (F = cdf; log F, 1 - F, log(1 - F) as for continuous ones):
    dF/dp = -n pmf(floor(k - loc); n - 1, p); n is an integer (no derivative)."""
    d[p] = cot(-cdf_weight("logsf", d[z], z, binom_log_dcdf(k, n, p, loc)), p)


# ------------------------------------------------------------- bernoulli


@register_adjoint(st.bernoulli.logpmf)
def bernoulli_logpmf(z, k, p, loc=0):
    """Bernoulli log mass: d/dp from binom_dp; k, loc (and n) are integers, with no derivative."""
    d[p] = cot(d[z] * binom_dp(k, 1.0, p, loc), p)


@register_adjoint(st.bernoulli.pmf)
def bernoulli_pmf(z, k, p, loc=0):
    """Bernoulli mass: d pmf = pmf d logpmf."""
    d[p] = cot(d[z] * z * binom_dp(k, 1.0, p, loc), p)


@register_adjoint(st.bernoulli.cdf)
def bernoulli_cdf(z, k, p, loc=0):
    """Bernoulli cdf (F = cdf; log F, 1 - F, log(1 - F) as for continuous ones): dF/dp = -1 on 0 <=
    k - loc < 1, else 0."""
    d[p] = cot(-cdf_weight("cdf", d[z], z, binom_log_dcdf(k, 1.0, p, loc)), p)


@register_adjoint(st.bernoulli.logcdf)
def bernoulli_logcdf(z, k, p, loc=0):
    """Bernoulli logcdf (F = cdf; log F, 1 - F, log(1 - F) as for continuous ones): dF/dp = -1 on 0
    <= k - loc < 1, else 0."""
    d[p] = cot(-cdf_weight("logcdf", d[z], z, binom_log_dcdf(k, 1.0, p, loc)), p)


@register_adjoint(st.bernoulli.sf)
def bernoulli_sf(z, k, p, loc=0):
    """Bernoulli sf (F = cdf; log F, 1 - F, log(1 - F) as for continuous ones): dF/dp = -1 on 0 <=
    k - loc < 1, else 0."""
    d[p] = cot(-cdf_weight("sf", d[z], z, binom_log_dcdf(k, 1.0, p, loc)), p)


@register_adjoint(st.bernoulli.logsf)
def bernoulli_logsf(z, k, p, loc=0):
    """Bernoulli logsf (F = cdf; log F, 1 - F, log(1 - F) as for continuous ones): dF/dp = -1 on 0
    <= k - loc < 1, else 0."""
    d[p] = cot(-cdf_weight("logsf", d[z], z, binom_log_dcdf(k, 1.0, p, loc)), p)


# ---------------------------------------------------- multivariate_normal


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


# -------------------------------------------------------------- dirichlet


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
