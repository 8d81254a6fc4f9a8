"""Library functions in differentiated code: the behaviour users should get.

1. A function from an installed library (SciPy, the standard library) that
   has no rule must raise `sg.NoRuleError` naming that function and the
   user's file and line, as a NumPy function without a rule does (API.md,
   "Errors, in detail"). Today the compiler treats any Python function not
   from numpy/srcgrad as user code: it descends into the library's source
   and reports a `try`/`with` statement in the library's file, or fails to
   find the source of a function SciPy builds with exec (`_parse_args`).

2. A rule registered for a bound method of a module-level object
   (`scipy.stats.norm.logpdf`, srcgrad/rules/scipy/stats.py) must be found
   for every spelling users write. Today it is found when the method is
   called by a plain name (`logpdf = st.norm.logpdf; logpdf(x)`, which the
   rule tables use), but an attribute call (`norm.logpdf(x)`,
   `st.norm.logpdf(x)`, `scipy.stats.norm.logpdf(x)`) is unbound to
   `rv_continuous.logpdf(norm, x)` before the rule lookup, and SciPy's own
   source is compiled.

Both were compiler changes (function.compilable treats installed libraries
and the standard library as primitives; anf looks a rule up before unbinding
a method); the tests pin the behaviour.
"""
import statistics

import numpy as np
import pytest
import scipy
import scipy.special
import scipy.stats
from scipy import stats
from scipy.stats import norm

import srcgrad as sg


X = np.array([0.2, -0.3, 0.5])
W = np.array([1.0, -2.0, 0.5])


# ---------------------------------------------------------------------------
# 1. No rule: NoRuleError naming the function and the user's line

def f_skewnorm(x):
    return np.sum(scipy.stats.skewnorm.logpdf(x, 2.0) * W)


def f_diric(x):
    return np.sum(scipy.special.diric(x, 3) * W)


def f_zscore(x):
    return np.sum(stats.zscore(x) * W)


def f_fmean(x):
    return statistics.fmean(x)


@pytest.mark.parametrize("fn,name,line", [
    (f_skewnorm, "logpdf", "scipy.stats.skewnorm.logpdf(x, 2.0)"),
    (f_diric, "diric", "scipy.special.diric(x, 3)"),
    (f_zscore, "zscore", "stats.zscore(x)"),
    (f_fmean, "fmean", "statistics.fmean(x)"),
], ids=["skewnorm.logpdf", "special.diric", "stats.zscore", "statistics.fmean"])
def test_library_function_without_rule_raises_no_rule_error(fn, name, line):
    with pytest.raises(sg.NoRuleError) as info:
        sg.grad(fn)(X)
    message = str(info.value)
    assert name in message
    assert "test_library_functions.py:" in message      # the user's file:line ...
    assert line in message                               # ... quoted
    assert "site-packages" not in message and "statistics.py:" not in message


def test_library_function_without_rule_in_decorated_function_on_a_tape():
    f = sg.function(f_diric)
    x = sg.constant(X)
    with pytest.raises(sg.NoRuleError, match="diric"):
        with sg.GradientTape() as tape:
            tape.watch(x)
            f(x)


def f_skewnorm_constant(x):
    return np.sum(x * scipy.stats.skewnorm.logpdf(0.3, 2.0))


def test_library_function_on_constants_only_runs_as_is():
    """A library call that no differentiated value reaches needs no rule."""
    g = sg.grad(f_skewnorm_constant)(X)
    np.testing.assert_allclose(g, np.full(3, scipy.stats.skewnorm.logpdf(0.3, 2.0)), rtol=1e-12)


# ---------------------------------------------------------------------------
# 2. Bound methods with a rule, every spelling

def f_norm_imported(x):
    return np.sum(norm.logpdf(x, 0.5, 2.0) * W)


def f_norm_stats(x):
    return np.sum(stats.norm.logpdf(x, loc=0.5, scale=2.0) * W)


def f_norm_scipy(x):
    return np.sum(scipy.stats.norm.logpdf(x, 0.5, scale=2.0) * W)


def f_mvn_attribute(x):
    return np.sum(stats.multivariate_normal.logpdf(x, np.zeros(3), np.eye(3)))


_logpdf = scipy.stats.norm.logpdf


def f_norm_plain_name(x):
    return np.sum(_logpdf(x, 0.5, 2.0) * W)


def _expected_norm():
    return -(X - 0.5) / 4.0 * W


def test_bound_method_rule_by_plain_name():
    """The spelling that works today (and that the rule tables use)."""
    np.testing.assert_allclose(sg.grad(f_norm_plain_name)(X), _expected_norm(), rtol=1e-12)


@pytest.mark.parametrize("fn", [f_norm_imported, f_norm_stats, f_norm_scipy],
                         ids=["norm.logpdf", "stats.norm.logpdf", "scipy.stats.norm.logpdf"])
def test_bound_method_rule_by_attribute(fn):
    np.testing.assert_allclose(sg.grad(fn)(X), _expected_norm(), rtol=1e-12)


def test_multivariate_normal_by_attribute():
    np.testing.assert_allclose(sg.grad(f_mvn_attribute)(X), -X, rtol=1e-12)
