"""sg.jit: generated derivative code compiled with Numba gives the values
of sg.grad (and of central finite differences), falls back to CPython with
a PerformanceWarning where Numba cannot compile, and does not compile again
for new shapes of the same dtypes and ranks.

Each jitted function is built once per module (Numba compiles slowly)."""
import math
import warnings

import numpy as np
import pytest

numba = pytest.importorskip("numba")

import srcgrad as sg  # noqa: E402

STEPS = 20


def pendulum(theta0, c):
    theta = theta0
    omega = 0.0
    for i in range(STEPS):
        alpha = -9.81 * math.sin(theta) - c * omega
        omega = omega + 0.01 * alpha
        theta = theta + 0.01 * omega
    return theta


def chain(x, w):
    for i in range(4):
        x = x + 0.1 * np.sin(x * w)
    return np.sum(x * x)


def rnn_loss(Wx, Wh, b, xs, target):
    T, batch = xs.shape[0], xs.shape[1]
    H = np.zeros((T, batch, Wh.shape[0]))
    h = np.zeros((batch, Wh.shape[0]))
    for t in range(T):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
        H[t] = h
    return np.mean((H - target) ** 2)


def mlp_loss(W1, b1, W2, b2, x, y):
    h = np.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_norm = np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(y * (shifted - log_norm), axis=1))


def tuple_axes(x):
    # (the cotangent broadcast back over a tuple of axes: no Numba twin; a full sum of a sum would compile,
    # its two broadcasts made one, optimize.merge_unreduces)
    return np.sum(np.sum(x * x, axis=(0, 1)) * np.array([1.0, 2.0]))


def central_differences(f, args, i, eps=1e-6):
    """d sum(f) / d args[i] by central differences (float64)."""
    x = np.asarray(args[i], dtype=np.float64)
    out = np.zeros(x.shape)
    for k in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[k] += eps
        minus[k] -= eps
        a_plus = list(args)
        a_minus = list(args)
        a_plus[i] = plus if x.ndim else float(plus)
        a_minus[i] = minus if x.ndim else float(minus)
        out[k] = (np.sum(f(*a_plus)) - np.sum(f(*a_minus))) / (2 * eps)
    return out


@pytest.fixture(scope="module")
def jitted():
    """{name: (function, wrt, jitted gradient, sg.grad)}, built once."""
    out = {}
    for name, f, wrt in (("pendulum", pendulum, (0, 1)), ("chain", chain, (0, 1)),
                         ("rnn", rnn_loss, (0, 1, 2)), ("mlp", mlp_loss, (0, 1, 2, 3))):
        g = sg.grad(f, wrt=wrt)
        out[name] = (f, wrt, sg.jit(g), g)
    return out


def _rng():
    return np.random.default_rng(0)


def _args(name, size=4):
    rng = _rng()
    if name == "pendulum":
        return (0.5, 0.3)
    if name == "chain":
        return (rng.normal(size=size), rng.normal(size=size))
    if name == "rnn":
        T, batch, features, hidden = 3, 2, 3, size
        return (rng.normal(0, 0.5, (features, hidden)), rng.normal(0, 0.5, (hidden, hidden)),
                rng.normal(0, 0.1, hidden), rng.normal(size=(T, batch, features)),
                rng.normal(size=(T, batch, hidden)))
    n_in, hidden, classes, batch = 3, size, 3, 5
    return (rng.normal(size=(n_in, hidden)), rng.normal(size=hidden), rng.normal(size=(hidden, classes)),
            rng.normal(size=classes), rng.normal(size=(batch, n_in)),
            np.eye(classes)[rng.integers(0, classes, batch)])


@pytest.mark.parametrize("name", ["pendulum", "chain", pytest.param("rnn", marks=pytest.mark.slow),
                                  pytest.param("mlp", marks=pytest.mark.slow)])
def test_values_match_sg_grad_and_finite_differences(jitted, name):
    f, wrt, jit_grad, grad = jitted[name]
    args = _args(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)      # compiled, not a fallback
        got = jit_grad(*args)
    expected = grad(*args)
    assert len(got) == len(expected) == len(wrt)
    for g, e, i in zip(got, expected, wrt):
        assert isinstance(g, np.ndarray)
        assert g.shape == e.shape == np.shape(args[i])
        assert g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(g, central_differences(f, args, i), rtol=1e-5, atol=1e-7)
    assert not jit_grad.fallbacks
    assert "append" in jit_grad.source or name == "mlp"      # the stacks were lowered


def test_new_shapes_of_the_same_rank_do_not_compile_again(jitted):
    _, _, jit_grad, grad = jitted["chain"]
    jit_grad(*_args("chain", 4))
    before = list(jit_grad.signatures)
    assert len(before) == 1
    for size in (7, 11):
        args = _args("chain", size)
        for g, e in zip(jit_grad(*args), grad(*args)):
            np.testing.assert_allclose(g, e, rtol=1e-12)
    assert jit_grad.signatures == before


def test_lowered_source_is_plain_numba_python(jitted):
    _, _, jit_grad, _ = jitted["pendulum"]
    text = jit_grad.lowered_source(0.5, 0.3)
    assert "reversed" not in text and "push(" not in text and "pop(_stack)" not in text
    assert "range(STEPS - 1, 0 - 1, -1)" in text
    assert "_stack__theta.append(theta)" in text and "theta = _stack__theta.pop()" in text


def test_fallback_warns_and_stays_correct():
    g = sg.grad(tuple_axes)
    j = sg.jit(g)
    x = _rng().normal(size=(2, 3, 2))
    with pytest.warns(sg.PerformanceWarning, match="runs in CPython"):
        got = j(x)
    np.testing.assert_allclose(got, g(x), rtol=1e-12)
    assert j.fallbacks
    np.testing.assert_allclose(j(x), 2 * x * np.array([1.0, 2.0]))         # (warned once per argument kinds)


def list_min(a):
    return min([a[0], a[1] * 2.0]) * a[2]         # (min of a list: no compiled rule, op by op)


class _Caching:
    def forward(self, x):
        self.cache = x                              # (numpy-ml's layers: state on self)
        return x * 2.0


def caching(x):
    return np.sum(_Caching().forward(x) * x)


@pytest.mark.parametrize("f, expected", [
    (list_min, lambda x: np.array([x[2], 0.0, x[0]])),
    (caching, lambda x: 4.0 * x),
])
def test_what_sg_grad_runs_op_by_op_runs_op_by_op_under_jit(f, expected):
    """A function sg.grad differentiates op by op (the compiler refuses it,
    the tape does it) gives the same gradient under sg.jit, with the
    PerformanceWarning, instead of the refusal."""
    x = np.array([1.0, 2.0, 3.0])
    j = sg.jit(sg.grad(f))
    with pytest.warns(sg.PerformanceWarning, match="op by op"):
        got = j(x)
    np.testing.assert_allclose(got, expected(x), rtol=1e-12)
    assert any("op by op" in reason for reason in j.fallbacks.values())


def test_value_and_grad(jitted):
    vg = sg.value_and_grad(pendulum, wrt=(0, 1))
    j = sg.jit(vg)
    value, grads = j(0.5, 0.3)
    ref_value, ref_grads = vg(0.5, 0.3)
    np.testing.assert_allclose(value, ref_value, rtol=1e-12)
    for g, e in zip(grads, ref_grads):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_plain_function():
    j = sg.jit(pendulum)
    assert j(0.5, 0.3) == pytest.approx(pendulum(0.5, 0.3), rel=1e-14)
    assert sg.jit(j) is j


def test_what_other_transforms_return_runs_in_cpython_with_the_reason():
    # (sg.hvp's function once crashed sg.jit: Numba's UnsupportedBytecodeError is not a NumbaError)
    def f(x):
        return np.sum(np.sin(x) * x)
    x, v = np.array([0.3, -1.0, 2.0]), np.array([1.0, 0.5, -2.0])
    for transform, args in ((sg.hessian(f), (x,)),):      # (sg.jacobian compiled since: test_jacobian_jit.py)
        j = sg.jit(transform)
        with pytest.warns(sg.PerformanceWarning, match="sg.jit compiles what sg.grad"):
            got = j(*args)
        np.testing.assert_allclose(got, transform(*args), rtol=1e-14)
    j = sg.jit(sg.hvp(f))           # (compiled since: tests/jit/test_hvp_jit.py)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        np.testing.assert_allclose(j(x, v), sg.hvp(f)(x, v), rtol=1e-14)


def leaky_product(x):
    leaky = lambda u: np.maximum(u, 0.1 * u)  # noqa: E731
    return np.sum(leaky(x) * leaky(x - 0.5))


def test_any_error_of_numbas_compiler_falls_back_and_errors_of_the_code_propagate():
    # Numba raised a plain TypeError typing np.maximum's helpers (not a NumbaError): sg.jit raised it
    # (found running issue 4's corpus through sg.jit); an error the compiled code raises when it runs
    # is the function's own
    x = np.array([1.0, -0.3, 2.0, -0.1])
    g = sg.jit(sg.grad(leaky_product))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        np.testing.assert_allclose(g(x), sg.grad(leaky_product)(x), rtol=1e-14)

    def index_past_the_end(x):
        return x[5] * 2.0
    j = sg.jit(index_past_the_end)
    with pytest.raises(IndexError):
        j(np.ones(3))


def test_unbroadcast_twin_sums_leading_axes_as_cpython():
    """The Numba twin of unbroadcast: its fast path (a sum over leading axes,
    as a bias's cotangent) and its general one (length-1 axes) give
    CPython's values and shapes."""
    from srcgrad.jit import twins
    from srcgrad.rules.helpers.broadcast import unbroadcast

    twins.install()
    twin = twins.twin_of(unbroadcast)

    @numba.njit
    def run(g, x):
        return twin(g, x)

    rng = np.random.default_rng(0)
    for g_shape, x_shape in [((5, 4, 3), (3,)), ((5, 4, 3), (4, 3)), ((4, 3), (4, 1)), ((4, 3), (1, 3))]:
        g, x = rng.normal(size=g_shape), np.zeros(x_shape)
        got, want = run(g, x), unbroadcast(g, x)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-13)


def _drawn(x):
    return np.sum(x * np.random.normal(size=x.shape))


def test_source_jit_shows_the_lowered_code_or_why_it_runs_in_cpython():
    x = np.array([0.3, -0.2])
    lowered = sg.source(pendulum, wrt=(0, 1), args=(0.3, 0.2), jit=True)
    assert lowered.startswith("# lowered for Numba by sg.jit")
    assert lowered == sg.jit(sg.grad(pendulum, wrt=(0, 1))).lowered_source(0.3, 0.2)
    assert "range(" in lowered and "def grad_pendulum(" in lowered
    fallback = sg.source(_drawn, args=(x,), jit=True)
    assert fallback.startswith("# sg.jit runs this gradient in CPython") and "random" in fallback.splitlines()[0]
    assert sg.source(_drawn, args=(x,)) in fallback
    with pytest.raises(ValueError, match="args"):
        sg.source(pendulum, jit=True)


def transposed_reshape(X):
    return np.sum(X.T.reshape(6) * np.arange(6.0))      # (Numba: NotImplementedError at run time)


def test_what_numba_does_not_implement_at_run_time_falls_back():
    """Compiled code raising NotImplementedError (Numba's reshape of a
    non-contiguous array) runs the gradient in CPython with the
    PerformanceWarning instead of raising (found by the second probe)."""
    X = np.arange(6.0).reshape(2, 3)
    j = sg.jit(sg.grad(transposed_reshape))
    with pytest.warns(sg.PerformanceWarning, match="NotImplementedError"):
        got = j(X)
    np.testing.assert_allclose(got, np.arange(6.0).reshape(3, 2).T, rtol=1e-12)
    np.testing.assert_allclose(j(X + 1.0), got, rtol=1e-12)     # (linear: the same gradient, warned once)


def float_or_cube(a):
    if type(a) is float:            # (Numba's float64 is not Python's float: the other branch, once)
        return a ** 2
    return a ** 3


def test_type_checks_run_in_cpython():
    """Code testing types (type(a) is float, isinstance) runs in CPython
    under sg.jit, with the reason: under Numba the test took the other
    branch and the value and gradient were silently those of a ** 3 (found
    by the second probe helper)."""
    vg = sg.value_and_grad(float_or_cube)
    with pytest.warns(sg.PerformanceWarning, match="tests the types"):
        value, grad = sg.jit(vg)(2.0)
    assert (float(value), float(grad)) == (4.0, 4.0)
    assert (float(value), float(grad)) == tuple(float(v) for v in vg(2.0))


def sum_of_tuple_axes_sum(x):
    return np.sum(np.sum(x * x, axis=(0, 1)))


def test_full_sum_of_a_tuple_axes_sum_compiles():
    """The mean's and sums' cotangents broadcast once (merge_unreduces):
    no tuple-axis broadcast left, so Numba compiles it."""
    j = sg.jit(sg.grad(sum_of_tuple_axes_sum))
    x = _rng().normal(size=(2, 3, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        got = j(x)
    np.testing.assert_allclose(got, 2 * x, rtol=1e-15)
    np.testing.assert_allclose(got, central_differences(sum_of_tuple_axes_sum, (x,), 0), rtol=1e-7)
    assert not j.fallbacks


def row_of_one_tuple(x):
    H = np.zeros((3, 4))
    for t in range(3):
        a = np.sin(x[t])
        H[t] = (a,)                   # NumPy broadcasts the 1-tuple across the row
    return np.sum(H * H * np.arange(4.0))


def row_of_full_tuple(x):
    H = np.zeros((3, 4))
    for t in range(3):
        a = np.sin(x[t])
        H[t] = (a, 2.0 * a, a * a, 1.0)
    return np.sum(H * H * np.arange(4.0))


@pytest.mark.parametrize("fn", [row_of_one_tuple, row_of_full_tuple])
def test_rows_assigned_from_tuples(fn):
    """H[t] = (a,) across a wider row: broadcast as NumPy does, and the
    cotangent of `a` sums the row (it raised ValueError under sg.jit;
    the loop's `a` starts at None, so the tuple's type is Optional)."""
    j = sg.jit(sg.grad(fn))
    x = np.array([0.1, 0.2, 0.3])
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        got = j(x)
    np.testing.assert_allclose(got, sg.grad(fn)(x), rtol=1e-14)
    np.testing.assert_allclose(got, central_differences(fn, (x,), 0), rtol=1e-7)
    assert not j.fallbacks
