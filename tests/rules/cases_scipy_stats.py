"""Rule-test rows for scipy.stats (srcgrad/rules/scipy/stats.py).

One row per distribution method: norm, t, beta, gamma, chi2, expon,
laplace, logistic, cauchy, lognorm and uniform (logpdf, pdf, cdf, logcdf,
sf, logsf, differentiated in x, the shape parameters, loc and scale, with
broadcasting), poisson, binom and bernoulli (logpmf, pmf, cdf, logcdf, sf,
logsf in mu or p; k is a fixed integer array), multivariate_normal and
dirichlet (logpdf, pdf), plus rows for keyword and default spellings.

Every row is `compiled_only`: SciPy converts a Tensor with np.asarray, so the
op-by-op tape cannot record these calls; the compiled paths (sg.grad,
value_and_grad, @sg.function on a tape) are checked against central
differences, one another and autograd.

The case functions call module-level aliases (`norm_logpdf =
st.norm.logpdf`): the compiler finds the rule of a bound method called by a
plain name. The attribute spellings users write (`st.norm.logpdf(x)`,
`norm.logpdf(x)`) are pinned in tests/rules/test_library_functions.py (the
compiler, today, unbinds the method before looking for a rule).

References (`ref`) are independent: autograd.scipy.stats where it has the
function and parameter (norm, t, multivariate_normal), otherwise the
standardised density and distribution function written with
autograd.numpy / autograd.scipy.special from the formulas on SciPy's
distribution pages, as logpdf(x) = log f((x - loc) / scale) - log(scale)
and cdf(x) = F((x - loc) / scale).
"""
import autograd.numpy as anp
import autograd.scipy.special as asp
import autograd.scipy.stats as ast
import numpy as np
import scipy.stats as st
from rulecase import Arg, Case, Static, ND, R, P, PR, GT1, SPD

C = Case
CO = {"compiled_only": True}
LOG_2PI_HALF = 0.5 * np.log(2.0 * np.pi)


def NDP(*shape):
    """A positive input (0.5 to 2) the row does not differentiate: the shape
    parameter of a distribution function without a closed-form derivative."""
    return Arg(shape, "pos", diff=False)


K_POISSON = np.array([[0, 1, 2, 3], [4, 1, 0, 2], [5, 3, 2, 1]])
K_POISSON_CDF = np.array([[0.0, 1.0, 2.5, 3.0], [4.0, 1.7, 0.0, 2.0], [5.0, 3.0, 2.0, 1.0]])
K_BINOM = np.array([[0, 1, 2, 3], [4, 5, 0, 2], [5, 3, 2, 1]])
K_BINOM_CDF = np.array([[0.0, 1.0, 2.5, 3.0], [4.0, 1.5, 0.0, 2.0], [4.0, 3.0, 2.0, 1.0]])
K_BERNOULLI = np.array([[0, 1, 1, 0], [1, 0, 0, 1], [0, 0, 1, 1]])
K_BERNOULLI_CDF = np.array([[0.0, 0.5, 0.0, 0.9], [0.5, 0.0, 0.2, 0.0], [0.0, 0.7, 0.0, 0.1]])


# ---------------------------------------------------------------------------
# autograd references: the standardised log density log f(y) and distribution
# function F(y) of each family; `_family` builds the six methods from them.

def _std_logistic_cdf(y):
    return asp.expit(y)


_STANDARD = {
    "norm": (lambda y: ast.norm.logpdf(y), lambda y: ast.norm.cdf(y)),
    "t": (lambda y, df: ast.t.logpdf(y, df), lambda y, df: ast.t.cdf(y, df)),
    "beta": (lambda y, a, b: (a - 1.0) * anp.log(y) + (b - 1.0) * anp.log1p(-y) - asp.betaln(a, b),
             lambda y, a, b: ast.beta.cdf(y, a, b)),
    "gamma": (lambda y, a: (a - 1.0) * anp.log(y) - y - asp.gammaln(a),
              lambda y, a: ast.gamma.cdf(y, a)),
    "chi2": (lambda y, df: (0.5 * df - 1.0) * anp.log(y) - 0.5 * y - 0.5 * df * anp.log(2.0)
             - asp.gammaln(0.5 * df),
             lambda y, df: ast.chi2.cdf(y, df)),
    "expon": (lambda y: -y, lambda y: 1.0 - anp.exp(-y)),
    "laplace": (lambda y: -anp.abs(y) - anp.log(2.0),
                lambda y: anp.where(y < 0.0, 0.5 * anp.exp(y), 1.0 - 0.5 * anp.exp(-y))),
    "logistic": (lambda y: -y - 2.0 * anp.log1p(anp.exp(-y)), _std_logistic_cdf),
    "cauchy": (lambda y: -anp.log(np.pi) - anp.log1p(y * y), lambda y: 0.5 + anp.arctan(y) / np.pi),
    "lognorm": (lambda y, s: -anp.log(s) - anp.log(y) - LOG_2PI_HALF
                - anp.log(y) ** 2 / (2.0 * s * s),
                lambda y, s: 0.5 * (1.0 + asp.erf(anp.log(y) / (s * np.sqrt(2.0))))),
    "uniform": (lambda y: 0.0 * y, lambda y: y),
}


def _family(name):
    logf, F = _STANDARD[name]

    def split(args):
        x, *shapes, loc, scale = args
        return (x - loc) / scale, shapes, scale

    def logpdf(*args):
        y, shapes, scale = split(args)
        return logf(y, *shapes) - anp.log(scale)

    def cdf(*args):
        y, shapes, _ = split(args)
        return F(y, *shapes)

    return {
        "logpdf": logpdf,
        "pdf": lambda *a: anp.exp(logpdf(*a)),
        "cdf": cdf,
        "logcdf": lambda *a: anp.log(cdf(*a)),
        "sf": lambda *a: 1.0 - cdf(*a),
        "logsf": lambda *a: anp.log1p(-cdf(*a)),
    }


for _name in _STANDARD:
    for _method, _fn in _family(_name).items():
        globals()["ag_%s_%s" % (_name, _method)] = _fn


def _discrete(logpmf, cdf):
    return {"logpmf": logpmf, "pmf": lambda *a: anp.exp(logpmf(*a)), "cdf": cdf,
            "logcdf": lambda *a: anp.log(cdf(*a)), "sf": lambda *a: 1.0 - cdf(*a),
            "logsf": lambda *a: anp.log1p(-cdf(*a))}


def _binom_logpmf(k, n, p):
    return (asp.gammaln(n + 1.0) - asp.gammaln(k + 1.0) - asp.gammaln(n - k + 1.0)
            + k * anp.log(p) + (n - k) * anp.log1p(-p))


def _binom_cdf(k, n, p):
    kf = np.floor(k)
    return asp.betainc(n - kf, kf + 1.0, 1.0 - p + 0.0 * kf)


_DISCRETE = {
    "poisson": _discrete(lambda k, mu: k * anp.log(mu) - mu - asp.gammaln(k + 1.0),
                         lambda k, mu: asp.gammaincc(np.floor(k) + 1.0, mu + 0.0 * k)),
    "binom": _discrete(_binom_logpmf, _binom_cdf),
    "bernoulli": _discrete(lambda k, p: k * anp.log(p) + (1.0 - k) * anp.log1p(-p),
                           lambda k, p: 1.0 - p + 0.0 * k),
}
for _name, _methods in _DISCRETE.items():
    for _method, _fn in _methods.items():
        globals()["ag_%s_%s" % (_name, _method)] = _fn


# ---------------------------------------------------------------------------
# Aliases of SciPy's bound methods (see the module docstring)

norm_logpdf = st.norm.logpdf
norm_pdf = st.norm.pdf
norm_cdf = st.norm.cdf
norm_logcdf = st.norm.logcdf
norm_sf = st.norm.sf
norm_logsf = st.norm.logsf
t_logpdf = st.t.logpdf
t_pdf = st.t.pdf
t_cdf = st.t.cdf
t_logcdf = st.t.logcdf
t_sf = st.t.sf
t_logsf = st.t.logsf
beta_logpdf = st.beta.logpdf
beta_pdf = st.beta.pdf
beta_cdf = st.beta.cdf
beta_logcdf = st.beta.logcdf
beta_sf = st.beta.sf
beta_logsf = st.beta.logsf
gamma_logpdf = st.gamma.logpdf
gamma_pdf = st.gamma.pdf
gamma_cdf = st.gamma.cdf
gamma_logcdf = st.gamma.logcdf
gamma_sf = st.gamma.sf
gamma_logsf = st.gamma.logsf
chi2_logpdf = st.chi2.logpdf
chi2_pdf = st.chi2.pdf
chi2_cdf = st.chi2.cdf
chi2_logcdf = st.chi2.logcdf
chi2_sf = st.chi2.sf
chi2_logsf = st.chi2.logsf
expon_logpdf = st.expon.logpdf
expon_pdf = st.expon.pdf
expon_cdf = st.expon.cdf
expon_logcdf = st.expon.logcdf
expon_sf = st.expon.sf
expon_logsf = st.expon.logsf
laplace_logpdf = st.laplace.logpdf
laplace_pdf = st.laplace.pdf
laplace_cdf = st.laplace.cdf
laplace_logcdf = st.laplace.logcdf
laplace_sf = st.laplace.sf
laplace_logsf = st.laplace.logsf
logistic_logpdf = st.logistic.logpdf
logistic_pdf = st.logistic.pdf
logistic_cdf = st.logistic.cdf
logistic_logcdf = st.logistic.logcdf
logistic_sf = st.logistic.sf
logistic_logsf = st.logistic.logsf
cauchy_logpdf = st.cauchy.logpdf
cauchy_pdf = st.cauchy.pdf
cauchy_cdf = st.cauchy.cdf
cauchy_logcdf = st.cauchy.logcdf
cauchy_sf = st.cauchy.sf
cauchy_logsf = st.cauchy.logsf
lognorm_logpdf = st.lognorm.logpdf
lognorm_pdf = st.lognorm.pdf
lognorm_cdf = st.lognorm.cdf
lognorm_logcdf = st.lognorm.logcdf
lognorm_sf = st.lognorm.sf
lognorm_logsf = st.lognorm.logsf
uniform_logpdf = st.uniform.logpdf
uniform_pdf = st.uniform.pdf
uniform_cdf = st.uniform.cdf
uniform_logcdf = st.uniform.logcdf
uniform_sf = st.uniform.sf
uniform_logsf = st.uniform.logsf
poisson_logpmf = st.poisson.logpmf
poisson_pmf = st.poisson.pmf
poisson_cdf = st.poisson.cdf
poisson_logcdf = st.poisson.logcdf
poisson_sf = st.poisson.sf
poisson_logsf = st.poisson.logsf
binom_logpmf = st.binom.logpmf
binom_pmf = st.binom.pmf
binom_cdf = st.binom.cdf
binom_logcdf = st.binom.logcdf
binom_sf = st.binom.sf
binom_logsf = st.binom.logsf
bernoulli_logpmf = st.bernoulli.logpmf
bernoulli_pmf = st.bernoulli.pmf
bernoulli_cdf = st.bernoulli.cdf
bernoulli_logcdf = st.bernoulli.logcdf
bernoulli_sf = st.bernoulli.sf
bernoulli_logsf = st.bernoulli.logsf
multivariate_normal_logpdf = st.multivariate_normal.logpdf
multivariate_normal_pdf = st.multivariate_normal.pdf
multivariate_normal_entropy = st.multivariate_normal.entropy
dirichlet_logpdf = st.dirichlet.logpdf
dirichlet_pdf = st.dirichlet.pdf


# ---------------------------------------------------------------------------
# Case functions: one per method, all parameters passed positionally


def f_norm_logpdf(x, loc, scale, w):
    return np.sum(norm_logpdf(x, loc, scale) * w)


def f_norm_pdf(x, loc, scale, w):
    return np.sum(norm_pdf(x, loc, scale) * w)


def f_norm_cdf(x, loc, scale, w):
    return np.sum(norm_cdf(x, loc, scale) * w)


def f_norm_logcdf(x, loc, scale, w):
    return np.sum(norm_logcdf(x, loc, scale) * w)


def f_norm_sf(x, loc, scale, w):
    return np.sum(norm_sf(x, loc, scale) * w)


def f_norm_logsf(x, loc, scale, w):
    return np.sum(norm_logsf(x, loc, scale) * w)


def f_t_logpdf(x, df, loc, scale, w):
    return np.sum(t_logpdf(x, df, loc, scale) * w)


def f_t_pdf(x, df, loc, scale, w):
    return np.sum(t_pdf(x, df, loc, scale) * w)


def f_t_cdf(x, df, loc, scale, w):
    return np.sum(t_cdf(x, df, loc, scale) * w)


def f_t_logcdf(x, df, loc, scale, w):
    return np.sum(t_logcdf(x, df, loc, scale) * w)


def f_t_sf(x, df, loc, scale, w):
    return np.sum(t_sf(x, df, loc, scale) * w)


def f_t_logsf(x, df, loc, scale, w):
    return np.sum(t_logsf(x, df, loc, scale) * w)


def f_beta_logpdf(x, a, b, loc, scale, w):
    return np.sum(beta_logpdf(x, a, b, 0.02 * loc, scale) * w)


def f_beta_pdf(x, a, b, loc, scale, w):
    return np.sum(beta_pdf(x, a, b, 0.02 * loc, scale) * w)


def f_beta_cdf(x, a, b, loc, scale, w):
    return np.sum(beta_cdf(x, a, b, 0.02 * loc, scale) * w)


def f_beta_logcdf(x, a, b, loc, scale, w):
    return np.sum(beta_logcdf(x, a, b, 0.02 * loc, scale) * w)


def f_beta_sf(x, a, b, loc, scale, w):
    return np.sum(beta_sf(x, a, b, 0.02 * loc, scale) * w)


def f_beta_logsf(x, a, b, loc, scale, w):
    return np.sum(beta_logsf(x, a, b, 0.02 * loc, scale) * w)


def f_gamma_logpdf(x, a, loc, scale, w):
    return np.sum(gamma_logpdf(x, a, 0.1 * loc, scale) * w)


def f_gamma_pdf(x, a, loc, scale, w):
    return np.sum(gamma_pdf(x, a, 0.1 * loc, scale) * w)


def f_gamma_cdf(x, a, loc, scale, w):
    return np.sum(gamma_cdf(x, a, 0.1 * loc, scale) * w)


def f_gamma_logcdf(x, a, loc, scale, w):
    return np.sum(gamma_logcdf(x, a, 0.1 * loc, scale) * w)


def f_gamma_sf(x, a, loc, scale, w):
    return np.sum(gamma_sf(x, a, 0.1 * loc, scale) * w)


def f_gamma_logsf(x, a, loc, scale, w):
    return np.sum(gamma_logsf(x, a, 0.1 * loc, scale) * w)


def f_chi2_logpdf(x, df, loc, scale, w):
    return np.sum(chi2_logpdf(x, df, 0.1 * loc, scale) * w)


def f_chi2_pdf(x, df, loc, scale, w):
    return np.sum(chi2_pdf(x, df, 0.1 * loc, scale) * w)


def f_chi2_cdf(x, df, loc, scale, w):
    return np.sum(chi2_cdf(x, df, 0.1 * loc, scale) * w)


def f_chi2_logcdf(x, df, loc, scale, w):
    return np.sum(chi2_logcdf(x, df, 0.1 * loc, scale) * w)


def f_chi2_sf(x, df, loc, scale, w):
    return np.sum(chi2_sf(x, df, 0.1 * loc, scale) * w)


def f_chi2_logsf(x, df, loc, scale, w):
    return np.sum(chi2_logsf(x, df, 0.1 * loc, scale) * w)


def f_expon_logpdf(x, loc, scale, w):
    return np.sum(expon_logpdf(x, 0.1 * loc, scale) * w)


def f_expon_pdf(x, loc, scale, w):
    return np.sum(expon_pdf(x, 0.1 * loc, scale) * w)


def f_expon_cdf(x, loc, scale, w):
    return np.sum(expon_cdf(x, 0.1 * loc, scale) * w)


def f_expon_logcdf(x, loc, scale, w):
    return np.sum(expon_logcdf(x, 0.1 * loc, scale) * w)


def f_expon_sf(x, loc, scale, w):
    return np.sum(expon_sf(x, 0.1 * loc, scale) * w)


def f_expon_logsf(x, loc, scale, w):
    return np.sum(expon_logsf(x, 0.1 * loc, scale) * w)


def f_laplace_logpdf(x, loc, scale, w):
    return np.sum(laplace_logpdf(x, loc, scale) * w)


def f_laplace_pdf(x, loc, scale, w):
    return np.sum(laplace_pdf(x, loc, scale) * w)


def f_laplace_cdf(x, loc, scale, w):
    return np.sum(laplace_cdf(x, loc, scale) * w)


def f_laplace_logcdf(x, loc, scale, w):
    return np.sum(laplace_logcdf(x, loc, scale) * w)


def f_laplace_sf(x, loc, scale, w):
    return np.sum(laplace_sf(x, loc, scale) * w)


def f_laplace_logsf(x, loc, scale, w):
    return np.sum(laplace_logsf(x, loc, scale) * w)


def f_logistic_logpdf(x, loc, scale, w):
    return np.sum(logistic_logpdf(x, loc, scale) * w)


def f_logistic_pdf(x, loc, scale, w):
    return np.sum(logistic_pdf(x, loc, scale) * w)


def f_logistic_cdf(x, loc, scale, w):
    return np.sum(logistic_cdf(x, loc, scale) * w)


def f_logistic_logcdf(x, loc, scale, w):
    return np.sum(logistic_logcdf(x, loc, scale) * w)


def f_logistic_sf(x, loc, scale, w):
    return np.sum(logistic_sf(x, loc, scale) * w)


def f_logistic_logsf(x, loc, scale, w):
    return np.sum(logistic_logsf(x, loc, scale) * w)


def f_cauchy_logpdf(x, loc, scale, w):
    return np.sum(cauchy_logpdf(x, loc, scale) * w)


def f_cauchy_pdf(x, loc, scale, w):
    return np.sum(cauchy_pdf(x, loc, scale) * w)


def f_cauchy_cdf(x, loc, scale, w):
    return np.sum(cauchy_cdf(x, loc, scale) * w)


def f_cauchy_logcdf(x, loc, scale, w):
    return np.sum(cauchy_logcdf(x, loc, scale) * w)


def f_cauchy_sf(x, loc, scale, w):
    return np.sum(cauchy_sf(x, loc, scale) * w)


def f_cauchy_logsf(x, loc, scale, w):
    return np.sum(cauchy_logsf(x, loc, scale) * w)


def f_lognorm_logpdf(x, s, loc, scale, w):
    return np.sum(lognorm_logpdf(x, s, 0.1 * loc, scale) * w)


def f_lognorm_pdf(x, s, loc, scale, w):
    return np.sum(lognorm_pdf(x, s, 0.1 * loc, scale) * w)


def f_lognorm_cdf(x, s, loc, scale, w):
    return np.sum(lognorm_cdf(x, s, 0.1 * loc, scale) * w)


def f_lognorm_logcdf(x, s, loc, scale, w):
    return np.sum(lognorm_logcdf(x, s, 0.1 * loc, scale) * w)


def f_lognorm_sf(x, s, loc, scale, w):
    return np.sum(lognorm_sf(x, s, 0.1 * loc, scale) * w)


def f_lognorm_logsf(x, s, loc, scale, w):
    return np.sum(lognorm_logsf(x, s, 0.1 * loc, scale) * w)


def f_uniform_logpdf(x, loc, scale, w):
    return np.sum(uniform_logpdf(x, 0.02 * loc, scale) * w)


def f_uniform_pdf(x, loc, scale, w):
    return np.sum(uniform_pdf(x, 0.02 * loc, scale) * w)


def f_uniform_cdf(x, loc, scale, w):
    return np.sum(uniform_cdf(x, 0.02 * loc, scale) * w)


def f_uniform_logcdf(x, loc, scale, w):
    return np.sum(uniform_logcdf(x, 0.02 * loc, scale) * w)


def f_uniform_sf(x, loc, scale, w):
    return np.sum(uniform_sf(x, 0.02 * loc, scale) * w)


def f_uniform_logsf(x, loc, scale, w):
    return np.sum(uniform_logsf(x, 0.02 * loc, scale) * w)


def f_poisson_logpmf(k, mu, w):
    return np.sum(poisson_logpmf(k, mu) * w)


def f_poisson_pmf(k, mu, w):
    return np.sum(poisson_pmf(k, mu) * w)


def f_poisson_cdf(k, mu, w):
    return np.sum(poisson_cdf(k, mu) * w)


def f_poisson_logcdf(k, mu, w):
    return np.sum(poisson_logcdf(k, mu) * w)


def f_poisson_sf(k, mu, w):
    return np.sum(poisson_sf(k, mu) * w)


def f_poisson_logsf(k, mu, w):
    return np.sum(poisson_logsf(k, mu) * w)


def f_binom_logpmf(k, n, p, w):
    return np.sum(binom_logpmf(k, n, p) * w)


def f_binom_pmf(k, n, p, w):
    return np.sum(binom_pmf(k, n, p) * w)


def f_binom_cdf(k, n, p, w):
    return np.sum(binom_cdf(k, n, p) * w)


def f_binom_logcdf(k, n, p, w):
    return np.sum(binom_logcdf(k, n, p) * w)


def f_binom_sf(k, n, p, w):
    return np.sum(binom_sf(k, n, p) * w)


def f_binom_logsf(k, n, p, w):
    return np.sum(binom_logsf(k, n, p) * w)


def f_bernoulli_logpmf(k, p, w):
    return np.sum(bernoulli_logpmf(k, p) * w)


def f_bernoulli_pmf(k, p, w):
    return np.sum(bernoulli_pmf(k, p) * w)


def f_bernoulli_cdf(k, p, w):
    return np.sum(bernoulli_cdf(k, p) * w)


def f_bernoulli_logcdf(k, p, w):
    return np.sum(bernoulli_logcdf(k, p) * w)


def f_bernoulli_sf(k, p, w):
    return np.sum(bernoulli_sf(k, p) * w)


def f_bernoulli_logsf(k, p, w):
    return np.sum(bernoulli_logsf(k, p) * w)



# -- keyword and default spellings

def f_norm_logpdf_kw(x, loc, scale, w):
    return np.sum(norm_logpdf(x, loc=loc, scale=scale) * w)


def f_norm_logpdf_default(x, w):
    return np.sum(norm_logpdf(x) * w)


def f_norm_cdf_scale_kw(x, scale, w):
    return np.sum(norm_cdf(x, scale=scale) * w)


def f_t_logpdf_df_kw(x, df, w):
    return np.sum(t_logpdf(x, df=df) * w)


def f_gamma_logpdf_kw(x, a, scale, w):
    return np.sum(gamma_logpdf(x, a, scale=scale) * w)


def f_beta_pdf_shapes_only(x, a, b, w):
    return np.sum(beta_pdf(x, a, b) * w)


def f_poisson_logpmf_loc(k, mu, w):
    return np.sum(poisson_logpmf(k, mu, loc=-1) * w)


def f_expon_logsf_positional_loc(x, loc, w):
    return np.sum(expon_logsf(x, 0.5 * loc) * w)


# -- multivariate_normal: cov symmetrised in the case function (SciPy reads
#    one triangle; the rule's cotangent is the symmetric one, as cholesky's)

def f_mvn_logpdf(x, mean, cov, w):
    return np.sum(multivariate_normal_logpdf(x, mean, 0.5 * (cov + cov.T)) * w)


def f_mvn_logpdf_point(x, mean, cov, w):
    return np.sum(multivariate_normal_logpdf(x, mean=mean, cov=0.5 * (cov + cov.T)) * w)


def f_mvn_pdf(x, mean, cov, w):
    return np.sum(multivariate_normal_pdf(x, mean, 0.5 * (cov + cov.T)) * w)


def f_mvn_logpdf_diag(x, mean, var, w):
    return np.sum(multivariate_normal_logpdf(x, mean, var) * w)


def f_mvn_logpdf_iso(x, var, w):
    return np.sum(multivariate_normal_logpdf(x, cov=var) * w)


def f_mvn_entropy(mean, cov, w):
    return multivariate_normal_entropy(mean, 0.5 * (cov + cov.T)) * w


def f_mvn_entropy_diag(mean, var, w):
    return multivariate_normal_entropy(mean, var) * w


# -- dirichlet: points on the simplex (components on the first axis)

def f_dirichlet_logpdf(p, alpha, w):
    q = p.astype(np.float64)     # SciPy checks sum(x) == 1 to 1e-9: normalise in float64
    return np.sum(dirichlet_logpdf(q / np.sum(q, axis=0), alpha) * w)


def f_dirichlet_logpdf_implied(x, alpha, w):
    return np.sum(dirichlet_logpdf(0.45 * x, alpha) * w)


def f_dirichlet_pdf(p, alpha, w):
    q = p.astype(np.float64)
    return np.sum(dirichlet_pdf(q / np.sum(q, axis=0), alpha) * w)


# ---------------------------------------------------------------------------
# autograd references of the hand-written rows

def _ag_mvn_diag(x, mean, var):
    r = x - mean
    return (-0.5 * anp.sum(r * r / var, axis=-1) - 0.5 * anp.sum(anp.log(var))
            - x.shape[-1] * LOG_2PI_HALF)


def _ag_dirichlet(x, alpha):
    if x.shape[0] < alpha.shape[0]:
        x = anp.concatenate([x, 1.0 - anp.sum(x, axis=0, keepdims=True)], axis=0)
    a = anp.reshape(alpha, alpha.shape + (1,) * (x.ndim - 1))
    return anp.sum((a - 1.0) * anp.log(x), axis=0) - (anp.sum(asp.gammaln(alpha))
                                                      - asp.gammaln(anp.sum(alpha)))


def _ag_sym(c):
    return 0.5 * (c + c.T)


CASES = [
    C("st_norm_logpdf", f_norm_logpdf, lambda x, loc, scale: ag_norm_logpdf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.norm.logpdf, meta=CO),
    C("st_norm_pdf", f_norm_pdf, lambda x, loc, scale: ag_norm_pdf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.norm.pdf, meta=CO),
    C("st_norm_cdf", f_norm_cdf, lambda x, loc, scale: ag_norm_cdf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.norm.cdf, meta=CO),
    C("st_norm_logcdf", f_norm_logcdf, lambda x, loc, scale: ag_norm_logcdf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.norm.logcdf, meta=CO),
    C("st_norm_sf", f_norm_sf, lambda x, loc, scale: ag_norm_sf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.norm.sf, meta=CO),
    C("st_norm_logsf", f_norm_logsf, lambda x, loc, scale: ag_norm_logsf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.norm.logsf, meta=CO),
    C("st_t_logpdf", f_t_logpdf, lambda x, df, loc, scale: ag_t_logpdf(x, df, loc, scale),
      (R(3, 4), GT1(), R(4), P(),), st.t.logpdf, meta=CO),
    C("st_t_pdf", f_t_pdf, lambda x, df, loc, scale: ag_t_pdf(x, df, loc, scale),
      (R(3, 4), GT1(), R(4), P(),), st.t.pdf, meta=CO),
    C("st_t_cdf", f_t_cdf, lambda x, df, loc, scale: ag_t_cdf(x, df, loc, scale),
      (R(3, 4), NDP(), R(4), P(),), st.t.cdf, meta=CO),
    C("st_t_logcdf", f_t_logcdf, lambda x, df, loc, scale: ag_t_logcdf(x, df, loc, scale),
      (R(3, 4), NDP(), R(4), P(),), st.t.logcdf, meta=CO),
    C("st_t_sf", f_t_sf, lambda x, df, loc, scale: ag_t_sf(x, df, loc, scale),
      (R(3, 4), NDP(), R(4), P(),), st.t.sf, meta=CO),
    C("st_t_logsf", f_t_logsf, lambda x, df, loc, scale: ag_t_logsf(x, df, loc, scale),
      (R(3, 4), NDP(), R(4), P(),), st.t.logsf, meta=CO),
    C("st_beta_logpdf", f_beta_logpdf, lambda x, a, b, loc, scale: ag_beta_logpdf(x, a, b, 0.02 * loc, scale),
      (PR(3, 4), P(4), P(), R(), GT1(),), st.beta.logpdf, meta=CO),
    C("st_beta_pdf", f_beta_pdf, lambda x, a, b, loc, scale: ag_beta_pdf(x, a, b, 0.02 * loc, scale),
      (PR(3, 4), P(4), P(), R(), GT1(),), st.beta.pdf, meta=CO),
    C("st_beta_cdf", f_beta_cdf, lambda x, a, b, loc, scale: ag_beta_cdf(x, a, b, 0.02 * loc, scale),
      (PR(3, 4), NDP(4), NDP(), R(), GT1(),), st.beta.cdf, meta=CO),
    C("st_beta_logcdf", f_beta_logcdf, lambda x, a, b, loc, scale: ag_beta_logcdf(x, a, b, 0.02 * loc, scale),
      (PR(3, 4), NDP(4), NDP(), R(), GT1(),), st.beta.logcdf, meta=CO),
    C("st_beta_sf", f_beta_sf, lambda x, a, b, loc, scale: ag_beta_sf(x, a, b, 0.02 * loc, scale),
      (PR(3, 4), NDP(4), NDP(), R(), GT1(),), st.beta.sf, meta=CO),
    C("st_beta_logsf", f_beta_logsf, lambda x, a, b, loc, scale: ag_beta_logsf(x, a, b, 0.02 * loc, scale),
      (PR(3, 4), NDP(4), NDP(), R(), GT1(),), st.beta.logsf, meta=CO),
    C("st_gamma_logpdf", f_gamma_logpdf, lambda x, a, loc, scale: ag_gamma_logpdf(x, a, 0.1 * loc, scale),
      (P(3, 4), P(4), R(), P(),), st.gamma.logpdf, meta=CO),
    C("st_gamma_pdf", f_gamma_pdf, lambda x, a, loc, scale: ag_gamma_pdf(x, a, 0.1 * loc, scale),
      (P(3, 4), P(4), R(), P(),), st.gamma.pdf, meta=CO),
    C("st_gamma_cdf", f_gamma_cdf, lambda x, a, loc, scale: ag_gamma_cdf(x, a, 0.1 * loc, scale),
      (P(3, 4), NDP(4), R(), P(),), st.gamma.cdf, meta=CO),
    C("st_gamma_logcdf", f_gamma_logcdf, lambda x, a, loc, scale: ag_gamma_logcdf(x, a, 0.1 * loc, scale),
      (P(3, 4), NDP(4), R(), P(),), st.gamma.logcdf, meta=CO),
    C("st_gamma_sf", f_gamma_sf, lambda x, a, loc, scale: ag_gamma_sf(x, a, 0.1 * loc, scale),
      (P(3, 4), NDP(4), R(), P(),), st.gamma.sf, meta=CO),
    C("st_gamma_logsf", f_gamma_logsf, lambda x, a, loc, scale: ag_gamma_logsf(x, a, 0.1 * loc, scale),
      (P(3, 4), NDP(4), R(), P(),), st.gamma.logsf, meta=CO),
    C("st_chi2_logpdf", f_chi2_logpdf, lambda x, df, loc, scale: ag_chi2_logpdf(x, df, 0.1 * loc, scale),
      (P(3, 4), P(4), R(), P(),), st.chi2.logpdf, meta=CO),
    C("st_chi2_pdf", f_chi2_pdf, lambda x, df, loc, scale: ag_chi2_pdf(x, df, 0.1 * loc, scale),
      (P(3, 4), P(4), R(), P(),), st.chi2.pdf, meta=CO),
    C("st_chi2_cdf", f_chi2_cdf, lambda x, df, loc, scale: ag_chi2_cdf(x, df, 0.1 * loc, scale),
      (P(3, 4), NDP(4), R(), P(),), st.chi2.cdf, meta=CO),
    C("st_chi2_logcdf", f_chi2_logcdf, lambda x, df, loc, scale: ag_chi2_logcdf(x, df, 0.1 * loc, scale),
      (P(3, 4), NDP(4), R(), P(),), st.chi2.logcdf, meta=CO),
    C("st_chi2_sf", f_chi2_sf, lambda x, df, loc, scale: ag_chi2_sf(x, df, 0.1 * loc, scale),
      (P(3, 4), NDP(4), R(), P(),), st.chi2.sf, meta=CO),
    C("st_chi2_logsf", f_chi2_logsf, lambda x, df, loc, scale: ag_chi2_logsf(x, df, 0.1 * loc, scale),
      (P(3, 4), NDP(4), R(), P(),), st.chi2.logsf, meta=CO),
    C("st_expon_logpdf", f_expon_logpdf, lambda x, loc, scale: ag_expon_logpdf(x, 0.1 * loc, scale),
      (P(3, 4), R(4), P(),), st.expon.logpdf, meta=CO),
    C("st_expon_pdf", f_expon_pdf, lambda x, loc, scale: ag_expon_pdf(x, 0.1 * loc, scale),
      (P(3, 4), R(4), P(),), st.expon.pdf, meta=CO),
    C("st_expon_cdf", f_expon_cdf, lambda x, loc, scale: ag_expon_cdf(x, 0.1 * loc, scale),
      (P(3, 4), R(4), P(),), st.expon.cdf, meta=CO),
    C("st_expon_logcdf", f_expon_logcdf, lambda x, loc, scale: ag_expon_logcdf(x, 0.1 * loc, scale),
      (P(3, 4), R(4), P(),), st.expon.logcdf, meta=CO),
    C("st_expon_sf", f_expon_sf, lambda x, loc, scale: ag_expon_sf(x, 0.1 * loc, scale),
      (P(3, 4), R(4), P(),), st.expon.sf, meta=CO),
    C("st_expon_logsf", f_expon_logsf, lambda x, loc, scale: ag_expon_logsf(x, 0.1 * loc, scale),
      (P(3, 4), R(4), P(),), st.expon.logsf, meta=CO),
    C("st_laplace_logpdf", f_laplace_logpdf, lambda x, loc, scale: ag_laplace_logpdf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.laplace.logpdf, meta=CO),
    C("st_laplace_pdf", f_laplace_pdf, lambda x, loc, scale: ag_laplace_pdf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.laplace.pdf, meta=CO),
    C("st_laplace_cdf", f_laplace_cdf, lambda x, loc, scale: ag_laplace_cdf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.laplace.cdf, meta=CO),
    C("st_laplace_logcdf", f_laplace_logcdf, lambda x, loc, scale: ag_laplace_logcdf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.laplace.logcdf, meta=CO),
    C("st_laplace_sf", f_laplace_sf, lambda x, loc, scale: ag_laplace_sf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.laplace.sf, meta=CO),
    C("st_laplace_logsf", f_laplace_logsf, lambda x, loc, scale: ag_laplace_logsf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.laplace.logsf, meta=CO),
    C("st_logistic_logpdf", f_logistic_logpdf, lambda x, loc, scale: ag_logistic_logpdf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.logistic.logpdf, meta=CO),
    C("st_logistic_pdf", f_logistic_pdf, lambda x, loc, scale: ag_logistic_pdf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.logistic.pdf, meta=CO),
    C("st_logistic_cdf", f_logistic_cdf, lambda x, loc, scale: ag_logistic_cdf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.logistic.cdf, meta=CO),
    C("st_logistic_logcdf", f_logistic_logcdf, lambda x, loc, scale: ag_logistic_logcdf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.logistic.logcdf, meta=CO),
    C("st_logistic_sf", f_logistic_sf, lambda x, loc, scale: ag_logistic_sf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.logistic.sf, meta=CO),
    C("st_logistic_logsf", f_logistic_logsf, lambda x, loc, scale: ag_logistic_logsf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.logistic.logsf, meta=CO),
    C("st_cauchy_logpdf", f_cauchy_logpdf, lambda x, loc, scale: ag_cauchy_logpdf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.cauchy.logpdf, meta=CO),
    C("st_cauchy_pdf", f_cauchy_pdf, lambda x, loc, scale: ag_cauchy_pdf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.cauchy.pdf, meta=CO),
    C("st_cauchy_cdf", f_cauchy_cdf, lambda x, loc, scale: ag_cauchy_cdf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.cauchy.cdf, meta=CO),
    C("st_cauchy_logcdf", f_cauchy_logcdf, lambda x, loc, scale: ag_cauchy_logcdf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.cauchy.logcdf, meta=CO),
    C("st_cauchy_sf", f_cauchy_sf, lambda x, loc, scale: ag_cauchy_sf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.cauchy.sf, meta=CO),
    C("st_cauchy_logsf", f_cauchy_logsf, lambda x, loc, scale: ag_cauchy_logsf(x, loc, scale),
      (R(3, 4), R(4), P(),), st.cauchy.logsf, meta=CO),
    C("st_lognorm_logpdf", f_lognorm_logpdf, lambda x, s, loc, scale: ag_lognorm_logpdf(x, s, 0.1 * loc, scale),
      (P(3, 4), P(), R(4), P(),), st.lognorm.logpdf, meta=CO),
    C("st_lognorm_pdf", f_lognorm_pdf, lambda x, s, loc, scale: ag_lognorm_pdf(x, s, 0.1 * loc, scale),
      (P(3, 4), P(), R(4), P(),), st.lognorm.pdf, meta=CO),
    C("st_lognorm_cdf", f_lognorm_cdf, lambda x, s, loc, scale: ag_lognorm_cdf(x, s, 0.1 * loc, scale),
      (P(3, 4), P(), R(4), P(),), st.lognorm.cdf, meta=CO),
    C("st_lognorm_logcdf", f_lognorm_logcdf, lambda x, s, loc, scale: ag_lognorm_logcdf(x, s, 0.1 * loc, scale),
      (P(3, 4), P(), R(4), P(),), st.lognorm.logcdf, meta=CO),
    C("st_lognorm_sf", f_lognorm_sf, lambda x, s, loc, scale: ag_lognorm_sf(x, s, 0.1 * loc, scale),
      (P(3, 4), P(), R(4), P(),), st.lognorm.sf, meta=CO),
    C("st_lognorm_logsf", f_lognorm_logsf, lambda x, s, loc, scale: ag_lognorm_logsf(x, s, 0.1 * loc, scale),
      (P(3, 4), P(), R(4), P(),), st.lognorm.logsf, meta=CO),
    C("st_uniform_logpdf", f_uniform_logpdf, lambda x, loc, scale: ag_uniform_logpdf(x, 0.02 * loc, scale),
      (PR(3, 4), R(4), GT1(),), st.uniform.logpdf, meta=CO),
    C("st_uniform_pdf", f_uniform_pdf, lambda x, loc, scale: ag_uniform_pdf(x, 0.02 * loc, scale),
      (PR(3, 4), R(4), GT1(),), st.uniform.pdf, meta=CO),
    C("st_uniform_cdf", f_uniform_cdf, lambda x, loc, scale: ag_uniform_cdf(x, 0.02 * loc, scale),
      (PR(3, 4), R(4), GT1(),), st.uniform.cdf, meta=CO),
    C("st_uniform_logcdf", f_uniform_logcdf, lambda x, loc, scale: ag_uniform_logcdf(x, 0.02 * loc, scale),
      (PR(3, 4), R(4), GT1(),), st.uniform.logcdf, meta=CO),
    C("st_uniform_sf", f_uniform_sf, lambda x, loc, scale: ag_uniform_sf(x, 0.02 * loc, scale),
      (PR(3, 4), R(4), GT1(),), st.uniform.sf, meta=CO),
    C("st_uniform_logsf", f_uniform_logsf, lambda x, loc, scale: ag_uniform_logsf(x, 0.02 * loc, scale),
      (PR(3, 4), R(4), GT1(),), st.uniform.logsf, meta=CO),
    C("st_poisson_logpmf", f_poisson_logpmf, lambda k, mu: ag_poisson_logpmf(k, mu),
      (Static(K_POISSON), P(4),), st.poisson.logpmf, meta=CO),
    C("st_poisson_pmf", f_poisson_pmf, lambda k, mu: ag_poisson_pmf(k, mu),
      (Static(K_POISSON), P(4),), st.poisson.pmf, meta=CO),
    C("st_poisson_cdf", f_poisson_cdf, lambda k, mu: ag_poisson_cdf(k, mu),
      (Static(K_POISSON_CDF), P(4),), st.poisson.cdf, meta=CO),
    C("st_poisson_logcdf", f_poisson_logcdf, lambda k, mu: ag_poisson_logcdf(k, mu),
      (Static(K_POISSON_CDF), P(4),), st.poisson.logcdf, meta=CO),
    C("st_poisson_sf", f_poisson_sf, lambda k, mu: ag_poisson_sf(k, mu),
      (Static(K_POISSON_CDF), P(4),), st.poisson.sf, meta=CO),
    C("st_poisson_logsf", f_poisson_logsf, lambda k, mu: ag_poisson_logsf(k, mu),
      (Static(K_POISSON_CDF), P(4),), st.poisson.logsf, meta=CO),
    C("st_binom_logpmf", f_binom_logpmf, lambda k, n, p: ag_binom_logpmf(k, n, p),
      (Static(K_BINOM), Static(5), PR(4),), st.binom.logpmf, meta=CO),
    C("st_binom_pmf", f_binom_pmf, lambda k, n, p: ag_binom_pmf(k, n, p),
      (Static(K_BINOM), Static(5), PR(4),), st.binom.pmf, meta=CO),
    C("st_binom_cdf", f_binom_cdf, lambda k, n, p: ag_binom_cdf(k, n, p),
      (Static(K_BINOM_CDF), Static(5), PR(4),), st.binom.cdf, meta=CO),
    C("st_binom_logcdf", f_binom_logcdf, lambda k, n, p: ag_binom_logcdf(k, n, p),
      (Static(K_BINOM_CDF), Static(5), PR(4),), st.binom.logcdf, meta=CO),
    C("st_binom_sf", f_binom_sf, lambda k, n, p: ag_binom_sf(k, n, p),
      (Static(K_BINOM_CDF), Static(5), PR(4),), st.binom.sf, meta=CO),
    C("st_binom_logsf", f_binom_logsf, lambda k, n, p: ag_binom_logsf(k, n, p),
      (Static(K_BINOM_CDF), Static(5), PR(4),), st.binom.logsf, meta=CO),
    C("st_bernoulli_logpmf", f_bernoulli_logpmf, lambda k, p: ag_bernoulli_logpmf(k, p),
      (Static(K_BERNOULLI), PR(4),), st.bernoulli.logpmf, meta=CO),
    C("st_bernoulli_pmf", f_bernoulli_pmf, lambda k, p: ag_bernoulli_pmf(k, p),
      (Static(K_BERNOULLI), PR(4),), st.bernoulli.pmf, meta=CO),
    C("st_bernoulli_cdf", f_bernoulli_cdf, lambda k, p: ag_bernoulli_cdf(k, p),
      (Static(K_BERNOULLI_CDF), PR(4),), st.bernoulli.cdf, meta=CO),
    C("st_bernoulli_logcdf", f_bernoulli_logcdf, lambda k, p: ag_bernoulli_logcdf(k, p),
      (Static(K_BERNOULLI_CDF), PR(4),), st.bernoulli.logcdf, meta=CO),
    C("st_bernoulli_sf", f_bernoulli_sf, lambda k, p: ag_bernoulli_sf(k, p),
      (Static(K_BERNOULLI_CDF), PR(4),), st.bernoulli.sf, meta=CO),
    C("st_bernoulli_logsf", f_bernoulli_logsf, lambda k, p: ag_bernoulli_logsf(k, p),
      (Static(K_BERNOULLI_CDF), PR(4),), st.bernoulli.logsf, meta=CO),
    # ---- keyword and default spellings
    C("st_norm_logpdf_kw", f_norm_logpdf_kw, lambda x, loc, scale: ag_norm_logpdf(x, loc, scale),
      (R(3, 4), R(3, 1), P(4)), st.norm.logpdf, meta=CO),
    C("st_norm_logpdf_default", f_norm_logpdf_default, lambda x: ast.norm.logpdf(x),
      (R(2, 3),), st.norm.logpdf, meta=CO),
    C("st_norm_cdf_scale_kw", f_norm_cdf_scale_kw, lambda x, scale: ag_norm_cdf(x, 0.0, scale),
      (R(5), P()), st.norm.cdf, meta=CO),
    C("st_t_logpdf_df_kw", f_t_logpdf_df_kw, lambda x, df: ast.t.logpdf(x, df),
      (R(3, 4), GT1(3, 1)), st.t.logpdf, meta=CO),
    C("st_gamma_logpdf_kw", f_gamma_logpdf_kw, lambda x, a, scale: ag_gamma_logpdf(x, a, 0.0, scale),
      (P(3, 4), P(), P(4)), st.gamma.logpdf, meta=CO),
    C("st_beta_pdf_shapes_only", f_beta_pdf_shapes_only,
      lambda x, a, b: ag_beta_pdf(x, a, b, 0.0, 1.0), (PR(3, 4), P(3, 1), P(4)), st.beta.pdf,
      meta=CO),
    C("st_poisson_logpmf_loc", f_poisson_logpmf_loc, lambda k, mu: ag_poisson_logpmf(k + 1, mu),
      (Static(K_POISSON), P(3, 1)), st.poisson.logpmf, meta=CO),
    C("st_expon_logsf_positional_loc", f_expon_logsf_positional_loc,
      lambda x, loc: ag_expon_logsf(x, 0.5 * loc, 1.0), (P(3, 4), Arg((4,), "unit")), st.expon.logsf,
      meta=CO),
    # ---- multivariate_normal: a stack of points, one point, pdf, diagonal and scalar cov
    C("st_mvn_logpdf", f_mvn_logpdf,
      lambda x, mean, cov: ast.multivariate_normal.logpdf(x, mean, _ag_sym(cov)),
      (R(5, 3), R(3), SPD(3, 3)), st.multivariate_normal.logpdf, meta=CO),
    C("st_mvn_logpdf_point", f_mvn_logpdf_point,
      lambda x, mean, cov: ast.multivariate_normal.logpdf(x, mean, _ag_sym(cov)),
      (R(3), R(3), SPD(3, 3)), st.multivariate_normal.logpdf, meta=CO),
    C("st_mvn_pdf", f_mvn_pdf,
      lambda x, mean, cov: ast.multivariate_normal.pdf(x, mean, _ag_sym(cov)),
      (R(4, 2), R(2), SPD(2, 2)), st.multivariate_normal.pdf, meta=CO),
    C("st_mvn_logpdf_diag", f_mvn_logpdf_diag, _ag_mvn_diag, (R(2, 4, 3), R(3), P(3)),
      st.multivariate_normal.logpdf, meta=CO),
    C("st_mvn_logpdf_iso", f_mvn_logpdf_iso,
      lambda x, var: _ag_mvn_diag(x, 0.0, var * anp.ones(1)), (R(6, 1), P()),
      st.multivariate_normal.logpdf, meta=CO),
    C("st_mvn_entropy", f_mvn_entropy,
      lambda mean, cov: ast.multivariate_normal.entropy(mean, _ag_sym(cov)), (ND(3), SPD(3, 3)),
      st.multivariate_normal.entropy, meta=CO),
    C("st_mvn_entropy_diag", f_mvn_entropy_diag,
      lambda mean, var: ast.multivariate_normal.entropy(mean, anp.diag(var)), (ND(3), P(3)),
      st.multivariate_normal.entropy, meta=CO),
    # ---- dirichlet: one point, a stack of points (d, n), the implied last component
    C("st_dirichlet_logpdf", f_dirichlet_logpdf,
      lambda p, alpha: _ag_dirichlet(p / anp.sum(p, axis=0), alpha), (P(3), P(3)),
      st.dirichlet.logpdf, meta=CO),
    C("st_dirichlet_logpdf_stack", f_dirichlet_logpdf,
      lambda p, alpha: _ag_dirichlet(p / anp.sum(p, axis=0), alpha), (P(4, 5), P(4)),
      st.dirichlet.logpdf, meta=CO),
    C("st_dirichlet_logpdf_implied", f_dirichlet_logpdf_implied,
      lambda x, alpha: _ag_dirichlet(0.45 * x, alpha), (PR(2), P(3)), st.dirichlet.logpdf,
      meta=CO),
    C("st_dirichlet_pdf", f_dirichlet_pdf,
      lambda p, alpha: anp.exp(_ag_dirichlet(p / anp.sum(p, axis=0), alpha)), (P(3, 2), P(3)),
      st.dirichlet.pdf, meta=CO),
]
