"""SciPy functions with rules, called on watched Tensors in a tape's body
(srcgrad/tape/scipy_calls.py): recorded with their rules, as NumPy's are,
while a tape records, and SciPy untouched otherwise. Checked against
autograd and against the compiled path (sg.grad of the same function)."""
import warnings

import numpy as np
import pytest

import srcgrad as sg

st = pytest.importorskip("scipy.stats")
sl = pytest.importorskip("scipy.linalg")
ag = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")
ast_ = pytest.importorskip("autograd.scipy.stats")

X = np.array([0.5, 1.5, 2.5])


def test_a_distribution_method_is_recorded_and_agrees_with_compiled_code_and_autograd():
    original = st.chi2.pdf
    x = sg.Variable(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.GradientPathWarning)      # no cut path
        with sg.GradientTape() as tape:
            y = np.sum(st.chi2.pdf(x, 3.0) * st.norm.logpdf(x, 0.5, 2.0))
        g = tape.gradient(y, x).numpy()
    f = lambda x: np.sum(st.chi2.pdf(x, 3.0) * st.norm.logpdf(x, 0.5, 2.0))      # noqa: E731
    np.testing.assert_allclose(g, sg.grad(f)(X), rtol=1e-12)
    ag_f = lambda x: anp.sum(ast_.chi2.pdf(x, 3.0) * ast_.norm.logpdf(x, 0.5, 2.0))   # noqa: E731
    np.testing.assert_allclose(g, ag.grad(ag_f)(X), rtol=1e-10)
    assert st.chi2.pdf == original and "pdf" not in vars(st.chi2)      # SciPy restored after the tape


def test_scipy_linalg_through_its_module():
    A = np.array([[3.0, 1.0], [1.0, 2.0]])
    b = np.array([1.0, -1.0])
    a = sg.Variable(A)
    with sg.GradientTape() as tape:
        y = np.sum(sl.solve(a, b) ** 2)
    g = tape.gradient(y, a).numpy()
    np.testing.assert_allclose(g, sg.grad(lambda A: np.sum(sl.solve(A, b) ** 2))(A), rtol=1e-12)


def test_untouched_without_a_tape_and_with_plain_arrays():
    assert "logpdf" not in vars(st.norm)
    with sg.GradientTape():
        assert st.norm.logpdf(0.3) == pytest.approx(-0.3 ** 2 / 2 - 0.5 * np.log(2 * np.pi))
    assert "logpdf" not in vars(st.norm)


def _logsumexp_vjp(ans, x):
    shape = x.shape
    return lambda g: np.full(shape, g) * np.exp(x - np.full(shape, ans))


@sg.custom_gradient
def _logsumexp(x):
    ans = np.max(x) + np.log(np.sum(np.exp(x - np.max(x))))

    def grad_fn(g):
        vjp = _logsumexp_vjp(ans, x)        # a closure made at run time: grad_fn runs op by op
        return vjp(g)
    return ans, grad_fn


def _example(y):
    return np.sum(_logsumexp(y ** 2))


def test_define_gradient_second_order_np_full_on_the_tape():
    """autograd's define_gradient example: the VJP maker's np.full(shape, g)
    of a watched cotangent is recorded (np.full does not dispatch on its
    fill value), so the second order is right."""
    import autograd.scipy.special as asp
    y = np.array([0.3, -1.2, 0.8, 0.1])
    v = np.array([0.3, -0.2, 0.5, 0.1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        warnings.simplefilter("error", sg.GradientPathWarning)
        got = sg.grad(lambda y: np.sum(sg.grad(_example)(y) * v))(y)
        hv = sg.hvp(_example)(y, v)
    want = ag.grad(lambda y: anp.sum(ag.grad(lambda y: asp.logsumexp(y ** 2))(y) * v))(y)
    np.testing.assert_allclose(got, want, rtol=1e-10)
    np.testing.assert_allclose(hv, want, rtol=1e-10)


from scipy.special import logsumexp as _logsumexp_by_name     # noqa: E402  (imported by name, as users do)


def _op_by_op_with_scipy(w):
    def rows():                          # a generator: the function runs op by op
        for i in range(2):
            yield w[i] * np.arange(1.0, 4.0)
    return sum(_logsumexp_by_name(r) for r in rows())


def test_a_function_imported_by_name_is_recorded_op_by_op():
    w = np.array([0.3, -0.7])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        warnings.simplefilter("error", sg.GradientPathWarning)
        g = sg.grad(_op_by_op_with_scipy)(w)
    import autograd.scipy.special as asp
    want = ag.grad(lambda w: sum(asp.logsumexp(w[i] * anp.arange(1.0, 4.0)) for i in range(2)))(w)
    np.testing.assert_allclose(g, want, rtol=1e-12)
    assert _logsumexp_by_name.__module__.startswith("scipy")       # restored after the run


def test_a_scipy_function_imported_by_name_in_another_module_is_recorded():
    import scipy_helper_module as helpers
    import autograd.scipy.special as asp

    def gen(w):                     # a generator: the caller runs op by op
        yield helpers.log_normalize(w * 2.0)

    def f(w):
        return sum(np.sum(np.sin(r)) for r in gen(w))

    w = np.array([0.2, -0.4, 0.9])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        warnings.simplefilter("error", sg.GradientPathWarning)
        g = sg.grad(f)(w)
    want = ag.grad(lambda w: anp.sum(anp.sin(w * 2.0 - asp.logsumexp(w * 2.0))))(w)
    np.testing.assert_allclose(g, want, rtol=1e-12)
    assert helpers.logsumexp.__module__.startswith("scipy")       # restored


def _symmetrized(fun, argnum):
    """autograd's test_scipy.py helper: fun with its argument `argnum`
    symmetrized, *args passed on (which the compiler refuses: op by op)."""
    def symmetrized_fun(*args, **kwargs):
        args = list(args)
        args[argnum] = 0.5 * (args[argnum] + np.swapaxes(args[argnum], -1, -2))
        return fun(*args, **kwargs)
    return symmetrized_fun


MVN_LOGPDF = _symmetrized(st.multivariate_normal.logpdf, 2)     # a module-level closure over a bound method


def test_a_scipy_method_held_by_a_closure_is_recorded_op_by_op():
    """`fun = mvn.logpdf` captured in a closure before the tape began is
    another bound-method object than the one the tape replaces: it was not
    recorded (GradientPathError). Against autograd's mvn.logpdf, in both
    modes and at second order."""
    rng = np.random.default_rng(4)
    A = rng.normal(size=(3, 3))
    x, m, C = rng.normal(size=3), rng.normal(size=3), A @ A.T + np.eye(3)
    ag_mvn = pytest.importorskip("autograd.scipy.stats.multivariate_normal")

    def ag_sym(x, m, C):
        return ag_mvn.logpdf(x, m, 0.5 * (C + C.T))
    local = _symmetrized(st.multivariate_normal.logpdf, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        for fn in (MVN_LOGPDF, local):
            g = sg.grad(fn, wrt=(0, 1, 2))(x, m, C)
            for gi, ei in zip(g, ag.grad(ag_sym, (0, 1, 2))(x, m, C)):
                np.testing.assert_allclose(gi, ei, rtol=1e-10)
            v = rng.normal(size=3)
            _, t = sg.jvp(fn, (x, m, C), (v, None, None))
            np.testing.assert_allclose(t, ag.grad(ag_sym)(x, m, C) @ v, rtol=1e-10)
            h = sg.hessian(lambda y: fn(y, m, C))(x)
            np.testing.assert_allclose(h, ag.hessian(ag_sym)(x, m, C), rtol=1e-10)
    assert st.multivariate_normal.logpdf.__func__ is type(st.multivariate_normal).logpdf     # SciPy restored


_B = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, 0.2], [0.1, 0.2, 1.0]])


def _solve_sum(v):
    return np.sum(sl.solve(_B + np.diag(v), np.ones(3)))


def _apply(fn, x):
    return fn(x)


def test_a_tape_after_an_op_by_op_gradient_still_records_scipy():
    # sg.grad of a local function passed on runs op by op inside a tape of its own; a nested tape then
    # rebuilt the cache of SciPy's primitives while their wrappers were installed, found none of them,
    # and every later tape left sl.solve unrecorded: [0.6, 1.4, 2.4] for [0.464, 1.265, 2.236], silently
    x = np.array([0.3, 0.7, 1.2])

    def loss(v):
        def inner(w):
            return _solve_sum(w)
        return _apply(inner, v)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        first = sg.grad(loss)(x)
    eps = 1e-6
    fd = np.array([(_solve_sum(x + eps * u) - _solve_sum(x - eps * u)) / (2 * eps) for u in np.eye(3)])
    np.testing.assert_allclose(first, fd, rtol=1e-6)
    v = sg.Variable(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.GradientPathWarning)
        with sg.GradientTape() as tape:
            y = _solve_sum(v) + np.sum(v ** 2)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), fd + 2 * x, rtol=1e-6)


def test_special_functions_refuse_their_shape_and_order_parameters():
    # gammainc's a, betainc's a and b, the Bessel functions' order had no cotangent: zero, silently
    sp = pytest.importorskip("scipy.special")
    a = np.array([1.3, 2.5])
    cases = [lambda a: sp.gammainc(a, 1.0), lambda a: sp.gammaincc(a, 1.0), lambda a: sp.betainc(a, 3.0, 0.4),
             lambda a: sp.betainc(2.0, a, 0.4), lambda a: sp.jv(a, 2.0), lambda a: sp.yv(a, 2.0),
             lambda a: sp.iv(a, 2.0), lambda a: sp.ive(a, 2.0)]
    for case in cases:
        def f(a, case=case):
            return np.sum(case(a))
        with pytest.raises(NotImplementedError, match="not differentiable with respect to"):
            sg.grad(f)(a)
        with pytest.raises(NotImplementedError, match="not differentiable with respect to"):
            sg.jvp(f, (a,), (np.ones(2),))
    # in x they are differentiated: d/dx gammainc(1.5, x) = x^0.5 e^-x / Gamma(1.5)
    x = np.array([0.7, 1.9])
    np.testing.assert_allclose(sg.grad(lambda x: np.sum(sp.gammainc(1.5, x)))(x),
                               x ** 0.5 * np.exp(-x) / sp.gamma(1.5), rtol=1e-12)
