"""Complex inputs follow TensorFlow's convention (README, "Rules"):

for a real loss L of a complex input z = a + ib, the gradient is
dL/da + i dL/db, the direction of steepest ascent. So sum(|z|^2) has gradient
2z, and a holomorphic f contributes d[z] * conj(f'(z)); autograd and JAX
return the conjugate.

Each case function returns a real loss. The oracle is central finite
differences taken separately along the real and the imaginary axis of every
entry; the paths are the op-by-op tape (`sg.GradientTape` over
`sg.constant`s), `sg.grad` (the fused compiled code) and `sg.function`
inside a tape. Where autograd differentiates the function, its gradient must
be the conjugate of ours.
"""
import warnings
import zlib

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
import scipy.special

import srcgrad as sg

EPS = 1e-6
RTOL, ATOL = 1e-5, 1e-6


# ---------------------------------------------------------------------------
# Case functions: real losses of complex inputs (the last argument, w, is a
# fixed complex weight, never differentiated)
# ---------------------------------------------------------------------------

def f_abs2(z, w):
    return np.sum(np.abs(z) ** 2)


def f_abs(z, w):
    return np.sum(np.abs(z) * np.real(w))


def f_real(z, w):
    return np.sum(np.real(z) * np.real(w))


def f_imag(z, w):
    return np.sum(np.imag(z) * np.real(w))


def f_conj(z, w):
    return np.sum(np.real(np.conj(z) * w))


def f_angle(z, w):
    return np.sum(np.angle(z) * np.real(w))


def f_mul(z, y, w):
    return np.sum(np.real(z * y * w))


def f_div(z, y, w):
    return np.sum(np.real(z / y * w))


def f_pow_const(z, w):
    return np.sum(np.real(z ** 3 * w))


def f_pow(z, y, w):
    return np.sum(np.real(z ** y * w))


def f_square(z, w):
    return np.sum(np.real(np.square(z) * w))


def f_reciprocal(z, w):
    return np.sum(np.real(np.reciprocal(z) * w))


def f_exp(z, w):
    return np.sum(np.real(np.exp(z) * w))


def f_log(z, w):
    return np.sum(np.real(np.log(z) * w))


def f_sqrt(z, w):
    return np.sum(np.real(np.sqrt(z) * w))


def f_tanh(z, w):
    return np.sum(np.real(np.tanh(z) * w))


def f_sin(z, w):
    return np.sum(np.real(np.sin(z) * w))


def f_cos(z, w):
    return np.sum(np.real(np.cos(z) * w))


def f_tan(z, w):
    return np.sum(np.real(np.tan(z) * w))


def f_sinh_cosh(z, w):
    return np.sum(np.real((np.sinh(z) + np.cosh(z)) * w))


def f_arcsinh(z, w):
    return np.sum(np.real(np.arcsinh(z) * w))


def f_arctan(z, w):
    return np.sum(np.real(np.arctan(z) * w))


def f_exp2_expm1(z, w):
    return np.sum(np.real((np.exp2(z) + np.expm1(z)) * w))


def f_logs(z, w):
    return np.sum(np.real((np.log1p(z) + np.log2(z) + np.log10(z)) * w))


def f_matmul(a, b, w):
    return np.sum(np.real((a @ b) * w))


def f_dot(a, b, w):
    return np.sum(np.real(np.dot(a, b) * w[:, 0]))


def f_sum_mean(z, w):
    return np.sum(np.real(np.sum(z * w, axis=0) + np.mean(z, axis=1)[0]))


def f_prod(z, w):
    return np.sum(np.real(np.prod(z, axis=1) * w[:, 0]))


def f_cumsum_cumprod(z, w):
    return np.sum(np.real((np.cumsum(z, axis=1) + np.cumprod(z, axis=1)) * w))


def f_var_std(z, w):
    return np.sum(np.var(z, axis=0) * np.real(w[0])) + np.std(z)


def f_norm(z, w):
    return np.linalg.norm(z) + np.linalg.norm(z[0], 1) + np.linalg.norm(z, "nuc")


def f_erf_loggamma(z, w):
    return np.sum(np.real((scipy.special.erf(z) + scipy.special.loggamma(z + 2.0)) * w))


def f_convolve(a, v, w):
    return np.sum(np.real(np.convolve(a, v) * np.reshape(w, -1)))


def f_correlate(a, v, w):
    """np.correlate conjugates v: holomorphic in a, antiholomorphic in v."""
    return np.sum(np.real(np.correlate(a, v, "full") * np.reshape(w, -1)))


def f_correlate_same(a, v, w):
    return np.sum(np.real(np.correlate(a, v, "same") * np.reshape(w, -1)[:5]))


def f_cov(z, w):
    return np.sum(np.real(np.cov(z)[:, :2] * w))


def f_corrcoef(z, w):
    return np.sum(np.real(np.corrcoef(z)[:, :2] * w))


def f_trapezoid(z, x, w):
    return np.sum(np.real(np.trapezoid(z, x=x, axis=1)[:, None] * w))


def f_polyval(p, x, w):
    return np.sum(np.real(np.polyval(p, x) * w))


def f_vander(x, w):
    return np.sum(np.real(np.vander(x, 2) * w))


def f_ediff1d(z, e, w):
    return np.sum(np.real(np.ediff1d(z, to_end=e) * np.reshape(w, -1)))


def f_sliding_window_view(z, w):
    windows = np.lib.stride_tricks.sliding_window_view(z, 2)
    return np.sum(np.real(windows[:, 0] * windows[:, 1] * np.reshape(w, -1)[:5]))


def f_real_input(theta, w):
    """A real input meeting complex values: its gradient is real."""
    return np.sum(np.real(np.exp(1j * theta) * w))


# name, function, complex input shapes, autograd twin (or None)
CASES = [
    ("abs2", f_abs2, [(3, 2)], lambda z, w: anp.sum(anp.abs(z) ** 2)),
    ("abs", f_abs, [(3, 2)], lambda z, w: anp.sum(anp.abs(z) * anp.real(w))),
    ("real", f_real, [(3, 2)], lambda z, w: anp.sum(anp.real(z) * anp.real(w))),
    ("imag", f_imag, [(3, 2)], lambda z, w: anp.sum(anp.imag(z) * anp.real(w))),
    ("conj", f_conj, [(3, 2)], lambda z, w: anp.sum(anp.real(anp.conj(z) * w))),
    ("angle", f_angle, [(3, 2)], lambda z, w: anp.sum(anp.angle(z) * anp.real(w))),
    ("mul", f_mul, [(3, 2), (2,)], lambda z, y, w: anp.sum(anp.real(z * y * w))),
    ("div", f_div, [(3, 2), (3, 1)], lambda z, y, w: anp.sum(anp.real(z / y * w))),
    ("pow_const", f_pow_const, [(3, 2)], lambda z, w: anp.sum(anp.real(z ** 3 * w))),
    ("pow", f_pow, [(3, 2), (2,)], None),
    ("square", f_square, [(3, 2)], lambda z, w: anp.sum(anp.real(anp.square(z) * w))),
    ("reciprocal", f_reciprocal, [(3, 2)], lambda z, w: anp.sum(anp.real(anp.reciprocal(z) * w))),
    ("exp", f_exp, [(3, 2)], lambda z, w: anp.sum(anp.real(anp.exp(z) * w))),
    ("log", f_log, [(3, 2)], lambda z, w: anp.sum(anp.real(anp.log(z) * w))),
    ("sqrt", f_sqrt, [(3, 2)], None),
    ("tanh", f_tanh, [(3, 2)], lambda z, w: anp.sum(anp.real(anp.tanh(z) * w))),
    ("sin", f_sin, [(3, 2)], lambda z, w: anp.sum(anp.real(anp.sin(z) * w))),
    ("cos", f_cos, [(3, 2)], lambda z, w: anp.sum(anp.real(anp.cos(z) * w))),
    ("tan", f_tan, [(3, 2)], lambda z, w: anp.sum(anp.real(anp.tan(z) * w))),
    ("sinh_cosh", f_sinh_cosh, [(3, 2)], None),
    ("arcsinh", f_arcsinh, [(3, 2)], None),
    ("arctan", f_arctan, [(3, 2)], None),
    ("exp2_expm1", f_exp2_expm1, [(3, 2)], None),
    ("logs", f_logs, [(3, 2)], None),
    ("matmul", f_matmul, [(3, 4), (4, 2)], lambda a, b, w: anp.sum(anp.real(anp.matmul(a, b) * w))),
    ("dot", f_dot, [(3, 4), (4,)], lambda a, b, w: anp.sum(anp.real(anp.dot(a, b) * w[:, 0]))),
    ("sum_mean", f_sum_mean, [(3, 2)], None),
    ("prod", f_prod, [(3, 2)], None),
    ("cumsum_cumprod", f_cumsum_cumprod, [(3, 2)], None),
    ("var_std", f_var_std, [(3, 2)], None),
    ("norm", f_norm, [(3, 2)], None),
    ("erf_loggamma", f_erf_loggamma, [(3, 2)], None),
    ("convolve", f_convolve, [(4,), (3,)], None),
    ("correlate", f_correlate, [(4,), (3,)], None),
    ("correlate_same_short_a", f_correlate_same, [(2,), (5,)], None),
    ("cov", f_cov, [(3, 4)], None),
    ("corrcoef", f_corrcoef, [(3, 5)], None),
    ("trapezoid", f_trapezoid, [(3, 4), (4,)], None),
    ("polyval", f_polyval, [(4,), (3, 2)], None),
    ("vander", f_vander, [(3,)], None),
    ("ediff1d", f_ediff1d, [(5,), (2,)], None),
    ("sliding_window_view", f_sliding_window_view, [(6,)], None),
]
BY_NAME = {c[0]: c for c in CASES}


def _data(name):
    """Complex inputs (entries of modulus about 1, away from 0 and the
    branch cuts of log/sqrt on the negative real axis) and a complex w."""
    _, _, shapes, _ = BY_NAME[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    args = []
    for shape in shapes:
        r = rng.uniform(0.5, 1.5, shape)
        phi = rng.uniform(-2.0, 2.0, shape)
        args.append(r * np.exp(1j * phi))
    w = rng.normal(size=(3, 2)) + 1j * rng.normal(size=(3, 2))
    return args, w


def tf_numerical_grad(f, args, i, eps=EPS):
    """dL/da + i dL/db for input i, by central differences along the real
    and the imaginary axis of each entry."""
    x = np.array(args[i], dtype=complex)
    grad = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        parts = []
        for step in (eps, 1j * eps):
            xp, xm = x.copy(), x.copy()
            xp[k] += step
            xm[k] -= step
            a_p, a_m = list(args), list(args)
            a_p[i], a_m[i] = xp, xm
            parts.append((f(*a_p) - f(*a_m)) / (2 * eps))
        grad[k] = parts[0] + 1j * parts[1]
    return grad


def _tape(fn, args, w):
    xs = [sg.constant(a) for a in args]
    with sg.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        loss = fn(*xs, w)
    return [g.numpy() for g in tape.gradient(loss, xs)]


def _grad(fn, args, w):
    wrt = tuple(range(len(args)))
    g = sg.grad(fn, wrt=wrt)(*args, w)
    return list(g) if len(args) > 1 else [g]


_FUNCTIONS = {}


def _function(fn, args, w):
    f = _FUNCTIONS.setdefault(fn, sg.function(fn))
    xs = [sg.constant(a) for a in args]
    with sg.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        loss = f(*xs, w)
    return [g.numpy() for g in tape.gradient(loss, xs)]


PATHS = {"tape": _tape, "grad": _grad, "function": _function}


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("name", list(BY_NAME))
def test_complex_gradient_is_tf_convention(name, path):
    _, fn, _, _ = BY_NAME[name]
    args, w = _data(name)
    grads = PATHS[path](fn, args, w)
    assert len(grads) == len(args)
    for i, g in enumerate(grads):
        g = np.asarray(g)
        assert g.dtype == np.complex128, g.dtype
        expected = tf_numerical_grad(lambda *a: fn(*a, w), args, i)
        np.testing.assert_allclose(g, expected, rtol=RTOL, atol=ATOL,
                                   err_msg="%s, input %d, %s path" % (name, i, path))


@pytest.mark.parametrize("name", [n for n, *_, ref in CASES if ref is not None])
def test_autograd_gives_the_conjugate(name):
    _, fn, _, ref = BY_NAME[name]
    args, w = _data(name)
    ours = _grad(fn, args, w)
    for i, g in enumerate(ours):
        theirs = autograd.grad(ref, i)(*args, w)
        np.testing.assert_allclose(g, np.conj(theirs), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("path", list(PATHS))
def test_abs2_gradient_is_2z(path):
    """The convention's defining example: d sum |z|^2 = 2z."""
    z = np.array([1.0 + 2.0j, -0.5 + 0.25j, 3.0 - 1.0j])
    (g,) = PATHS[path](f_abs2, [z], None)
    np.testing.assert_allclose(g, 2 * z, rtol=1e-12)


@pytest.mark.parametrize("path", list(PATHS))
def test_complex64_stays_complex64(path):
    z = (np.array([1.0 + 2.0j, -0.5 + 0.25j]) * np.ones((3, 1))).astype(np.complex64)
    w = np.ones((3, 2), dtype=np.complex64)
    (g,) = PATHS[path](f_exp, [z], w)
    assert np.asarray(g).dtype == np.complex64
    np.testing.assert_allclose(g, np.conj(np.exp(z)) * np.conj(w), rtol=1e-5)


@pytest.mark.parametrize("path", list(PATHS))
def test_real_input_gets_real_gradient(path):
    """theta real, exp(1j theta) complex: the gradient of theta is real
    (the real part of the complex cotangent, dL/dtheta)."""
    theta = np.array([0.3, -1.2, 2.0])
    w = np.array([1.0 - 0.5j, 0.25 + 2.0j, -1.0 + 0.0j])
    with warnings.catch_warnings():
        # the tape / sg.grad cast the complex cotangent to the input's
        # dtype (discarding the imaginary part, which is the intent)
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        (g,) = PATHS[path](f_real_input, [theta], w)
    g = np.asarray(g)
    assert g.dtype == np.float64
    expected = tf_numerical_grad(lambda t: f_real_input(np.real(t), w), [theta], 0).real
    np.testing.assert_allclose(g, expected, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(g, np.real(np.conj(1j * np.exp(1j * theta)) * np.conj(w)).real,
                               rtol=1e-12)


# -- a Python complex number (not an array) as the argument

def real_part_of_cos(z, u):
    return np.real(np.conj(u) * np.cos(z))


@pytest.mark.parametrize("z", [0.4 + 0.03j, -1.2 + 0.7j, np.complex128(0.3 - 0.5j), np.array(0.9 + 0.2j)])
def test_python_complex_scalar_argument_keeps_the_conjugation(z):
    """A Python complex was compiled as a real scalar: the adjoint of cos
    lost its conjugation (the imaginary part of the gradient had the wrong
    sign, silently). By both axes' central differences, and the conjugate
    of autograd's gradient."""
    u = 0.7 - 0.4j
    f = lambda v: real_part_of_cos(v, u)  # noqa: E731
    fd = (f(z + EPS) - f(z - EPS)) / (2 * EPS) + 1j * (f(z + 1j * EPS) - f(z - 1j * EPS)) / (2 * EPS)
    for g in (sg.grad(real_part_of_cos)(z, u), sg.value_and_grad(real_part_of_cos)(z, u)[1]):
        np.testing.assert_allclose(g, fd, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(g, np.conj(autograd.grad(lambda v: anp.real(anp.conj(u) * anp.cos(v)))(
            complex(z))), rtol=1e-12)


def real_loss_of_real_if_close(z, u):
    return np.sum(np.real(np.conj(u) * np.real_if_close(z)))


def test_real_if_close_of_a_complex_value_that_stays_complex():
    """np.real_if_close keeps a value whose imaginary part is not close to 0:
    it is the identity there, and its cotangent and tangent keep their
    imaginary parts (the rule took the real part: the imaginary part of the
    gradient was lost, silently). Central differences on both axes."""
    z = np.array([0.3 + 0.2j, 1.1 - 0.5j])
    u = np.array([0.7 - 0.4j, -0.2 + 0.9j])
    f = lambda v: real_loss_of_real_if_close(v, u)  # noqa: E731
    fd = np.array([(f(z + EPS * e) - f(z - EPS * e)) / (2 * EPS)
                   + 1j * (f(z + 1j * EPS * e) - f(z - 1j * EPS * e)) / (2 * EPS) for e in np.eye(2)])
    np.testing.assert_allclose(sg.grad(real_loss_of_real_if_close)(z, u), fd, rtol=RTOL, atol=ATOL)
    v = np.array([0.5 + 1.0j, -1.0 + 0.25j])
    _, t = sg.jvp(np.real_if_close, (z,), (v,))
    np.testing.assert_allclose(t, v, rtol=1e-14)
    x = np.array([0.3 + 1e-20j, 1.1 + 0j])       # becomes real: the tangent's real part
    _, t = sg.jvp(np.real_if_close, (x,), (v,))
    np.testing.assert_allclose(t, np.real(v), rtol=1e-14)
