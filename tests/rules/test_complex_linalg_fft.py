"""Complex inputs of the FFT and linear-algebra rules, in TensorFlow's
convention (README "Complex inputs"; tests/rules/test_complex.py for the core
functions): for a real loss L of z = a + ib the gradient is dL/da + i dL/db.

The oracle is central finite differences along the real and the imaginary
axis of every entry, separately; the paths are the op-by-op tape, sg.grad
and sg.function inside a tape. Where autograd differentiates the function
its gradient must be the conjugate of ours (autograd's convention).

The linear-algebra rows are regressions: np.linalg.eigh, eigvalsh, svd,
inv, solve, det, slogdet, pinv, cholesky, matrix_power and multi_dot
returned wrong gradients for complex matrices (transposes where conjugate
transposes belong), and so did the products vdot, inner, outer, tensordot,
einsum, kron, cross and vecdot (the other operand not conjugated), silently.
So did every real-valued function of complex values (abs, real, imag,
angle, norm, var, the singular values, eigh's eigenvalues) whose output met
a complex value later (`np.abs(z) * c`): the imaginary part of the
cotangent a real value receives was not dropped (`f_real_times_complex`).
"""
import warnings
import zlib

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg

EPS = 1e-6
RTOL, ATOL = 1e-5, 1e-6
PHASE = 0.6 - 0.8j


def _herm(a):
    return a + np.conj(np.swapaxes(a, -1, -2))


# ---------------------------------------------------------------------------
# Case functions: real losses of complex inputs; w is a fixed complex weight
# of the output's shape (never differentiated)
# ---------------------------------------------------------------------------

def f_fft(z, w):
    return np.sum(np.real(np.fft.fft(z, 6) * w))


def f_ifft_ortho(z, w):
    return np.sum(np.real(np.fft.ifft(z, axis=0, norm="ortho") * w))


def f_fft2(z, w):
    return np.sum(np.real(np.fft.fft2(z, s=(2, 4)) * w))


def f_ifftn(z, w):
    return np.sum(np.real(np.fft.ifftn(z, axes=(0, 2), norm="forward") * w))


def f_fftn(z, w):
    return np.sum(np.real(np.fft.fftn(z) * w))


def f_irfft(z, w):
    return np.sum(np.fft.irfft(z) * np.real(w))


def f_irfft_odd(z, w):
    return np.sum(np.fft.irfft(z, 5, norm="ortho") * np.real(w))


def f_irfft2(z, w):
    return np.sum(np.fft.irfft2(z) * np.real(w))


def f_irfftn(z, w):
    return np.sum(np.fft.irfftn(z, s=(3, 4), axes=(0, 1)) * np.real(w))


def f_hfft(z, w):
    return np.sum(np.fft.hfft(z, 7) * np.real(w))


def f_fftshift(z, w):
    return np.sum(np.real(np.fft.fftshift(z) * w))


def f_ifftshift(z, w):
    return np.sum(np.real(np.fft.ifftshift(z, axes=1) * w))


def f_rfft_of_real_part(z, w):
    return np.sum(np.real(np.fft.rfft(np.real(z) * 2.0 + np.imag(z)) * w))


# linear algebra

def f_norm_ords(z, w):
    return (np.linalg.norm(z) + np.linalg.norm(z, 3, axis=0)[1] + np.linalg.norm(z, np.inf, axis=1)[0]
            + np.linalg.norm(z, 1) + np.linalg.norm(z, 2) + np.linalg.norm(z, -2)
            + np.linalg.norm(z, "fro") + np.linalg.norm(z, -np.inf) + np.linalg.vector_norm(z, ord=0.5))


def f_eigvalsh(z, w):
    return np.sum(np.linalg.eigvalsh(_herm(z)) * np.real(w[0]))


def f_eigh(z, w):
    lam, v = np.linalg.eigh(_herm(z))
    return np.sum(lam * np.real(w[0])) + np.sum(np.abs(v) ** 2 * np.real(w))


def f_eigh_projector(z, w):
    lam, v = np.linalg.eigh(_herm(z))
    p = v[:, :1] @ np.conj(v[:, :1]).T          # the first eigenprojector, gauge-free
    return np.sum(np.real(p * w))


def f_svd_values(z, w):
    return np.sum(np.linalg.svd(z, compute_uv=False) * np.real(w[0]))


def f_svd(z, w):
    u, s, vh = np.linalg.svd(z, full_matrices=False)
    return (np.sum(s * np.real(w[0, :3])) + np.sum(np.abs(u) ** 2 * np.real(w[:, :3]))
            + np.sum(np.abs(vh) ** 2 * np.imag(w[:3])))


def f_svd_product(z, w):
    u, s, vh = np.linalg.svd(z, full_matrices=False)
    return np.sum(np.real((u * s ** 2) @ vh * w))


def f_svd_wide(z, w):
    u, s, vh = np.linalg.svd(np.swapaxes(z, -1, -2), full_matrices=False)
    return np.sum(np.real((u[:, :2] * s[:2]) @ vh[:2] * w.T)) + np.sum(np.abs(vh) ** 2 * np.real(w.T[:3]))


def f_inv(z, w):
    return np.sum(np.real(np.linalg.inv(z) * w))


def f_solve(z, y, w):
    return np.sum(np.real(np.linalg.solve(z, y) * w))


def f_det(z, w):
    return np.real(np.linalg.det(z) * w[0, 0])


def f_slogdet(z, w):
    sign, logdet = np.linalg.slogdet(z)
    return logdet * np.real(w[0, 0]) + np.real(sign * w[0, 1])


def f_pinv(z, w):
    return np.sum(np.real(np.linalg.pinv(z) * w.T))


def f_cholesky(z, w):
    a = z @ np.conj(z.T) + 3.0 * np.eye(3)
    return np.sum(np.real(np.linalg.cholesky(a) * w))


def f_matrix_power(z, w):
    return np.sum(np.real(np.linalg.matrix_power(z, 3) * w) + np.real(np.linalg.matrix_power(z, -2) * w))


def f_multi_dot(z, y, w):
    return np.sum(np.real(np.linalg.multi_dot([z, y, z]) * w))


def f_vdot(z, y, w):
    return np.real(np.vdot(z, y) * w[0, 0])


def f_eig(z, w):
    lam, v = np.linalg.eig(z)
    return np.sum(np.real(lam * w[0])) + np.sum(np.abs(v) ** 2 * np.real(w))


def f_eigvals(z, w):
    return np.sum(np.real(np.linalg.eigvals(z) * w[0]))


def f_qr(z, w):
    q, r = np.linalg.qr(z)
    return np.sum(np.real(q * w)) + np.sum(np.imag(r * w[:3, :3]))


def f_qr_wide(z, w):
    q, r = np.linalg.qr(np.swapaxes(z, -1, -2))
    return np.sum(np.real(q * w[:3, :3])) + np.sum(np.real(r * w.T))


def f_qr_r(z, w):
    return np.sum(np.real(np.linalg.qr(z, mode="r") * w[:3, :3]))


def f_lstsq(z, y, w):
    x, res, rank, s = np.linalg.lstsq(z, y)
    return np.sum(np.real(x * w[:3, :2])) + np.sum(res * np.real(w[0, :2])) + np.sum(s * np.real(w[1]))


def f_inner(z, y, w):
    return np.sum(np.real(np.inner(z, y) * w))


def f_outer(z, y, w):
    return np.sum(np.real(np.outer(z, y) * w[:2, :2]))


def f_linalg_outer(z, y, w):
    return np.sum(np.real(np.linalg.outer(z[0], y[0]) * w[:3, :3]))


def f_tensordot(z, y, w):
    return np.sum(np.real(np.tensordot(z, y, axes=([1], [1])) * w[:2, :2]))


def f_einsum(z, y, w):
    return np.sum(np.real(np.einsum("ij,kj->ik", z, y) * w[:2, :2]))


def f_einsum_sublists(z, y, w):
    return np.sum(np.real(np.einsum(z, [0, 1], y, [2, 1], [0, 2]) * w[:2, :2]))


def f_kron(z, y, w):
    return np.sum(np.real(np.kron(z[:, :2], y[:, :2]) * np.ones((4, 4))))


def f_cross(z, y, w):
    return np.sum(np.real(np.cross(z, y) * w[:2]))


def f_vecdot(z, y, w):
    return np.sum(np.real(np.vecdot(z, y) * w[0, :2]) + np.real(np.linalg.vecdot(y, z) * w[1, :2]))


def f_real_times_complex(z, w):
    c = w[0, 0]
    return np.real(np.sum(np.abs(z) * c) + np.linalg.norm(z) * c + np.sum(np.real(z) * c)
                   + np.sum(np.imag(z) * c) + np.sum(np.angle(z) * c) + np.var(z) * c
                   + np.sum(np.linalg.svd(z, compute_uv=False) * c)
                   + np.sum(np.linalg.eigvalsh(_herm(z)) * c))


# name, function, complex input shapes, autograd twin (or None)
CASES = [
    ("real_times_complex", f_real_times_complex, [(3, 3)], (3, 3), None),
    ("fft", f_fft, [(2, 5)], (2, 6), lambda z, w: anp.sum(anp.real(anp.fft.fft(z, 6) * w))),
    ("ifft_ortho", f_ifft_ortho, [(4, 3)], (4, 3),
     lambda z, w: anp.sum(anp.real(anp.fft.ifft(z, axis=0, norm="ortho") * w))),
    ("fft2", f_fft2, [(3, 3)], (2, 4), lambda z, w: anp.sum(anp.real(anp.fft.fft2(z, s=(2, 4)) * w))),
    ("ifftn", f_ifftn, [(2, 3, 2)], (2, 3, 2),
     lambda z, w: anp.sum(anp.real(anp.fft.ifftn(z, axes=(0, 2), norm="forward") * w))),
    ("fftn", f_fftn, [(2, 3)], (2, 3), lambda z, w: anp.sum(anp.real(anp.fft.fftn(z) * w))),
    ("irfft", f_irfft, [(4,)], (6,), lambda z, w: anp.sum(anp.fft.irfft(z) * anp.real(w))),
    ("irfft_odd", f_irfft_odd, [(2, 3)], (2, 5), None),
    ("irfft2", f_irfft2, [(3, 3)], (3, 4), lambda z, w: anp.sum(anp.fft.irfft2(z) * anp.real(w))),
    ("irfftn", f_irfftn, [(2, 4)], (3, 4), None),
    ("hfft", f_hfft, [(4,)], (7,), None),
    ("fftshift", f_fftshift, [(3, 4)], (3, 4), lambda z, w: anp.sum(anp.real(anp.fft.fftshift(z) * w))),
    ("ifftshift", f_ifftshift, [(2, 5)], (2, 5),
     lambda z, w: anp.sum(anp.real(anp.fft.ifftshift(z, axes=1) * w))),
    ("rfft_of_real_part", f_rfft_of_real_part, [(6,)], (4,), None),
    ("norm_ords", f_norm_ords, [(3, 3)], (3, 3), None),
    ("eigvalsh", f_eigvalsh, [(3, 3)], (3, 3), None),
    ("eigh", f_eigh, [(3, 3)], (3, 3), None),
    ("eigh_projector", f_eigh_projector, [(3, 3)], (3, 3), None),
    ("svd_values", f_svd_values, [(4, 3)], (4, 3), None),
    ("svd", f_svd, [(4, 3)], (4, 3), None),
    ("svd_product", f_svd_product, [(4, 3)], (4, 3), None),
    ("svd_wide", f_svd_wide, [(4, 3)], (4, 3), None),
    ("inv", f_inv, [(3, 3)], (3, 3), lambda z, w: anp.sum(anp.real(anp.linalg.inv(z) * w))),
    ("solve", f_solve, [(3, 3), (3, 2)], (3, 2), None),
    ("det", f_det, [(3, 3)], (3, 3), None),
    ("slogdet", f_slogdet, [(3, 3)], (3, 3), None),
    ("pinv", f_pinv, [(4, 3)], (4, 3), None),
    ("cholesky", f_cholesky, [(3, 3)], (3, 3), None),
    ("matrix_power", f_matrix_power, [(3, 3)], (3, 3), None),
    ("multi_dot", f_multi_dot, [(3, 3), (3, 3)], (3, 3), None),
    ("vdot", f_vdot, [(2, 3), (2, 3)], (3, 3), None),
    ("inner", f_inner, [(2, 3), (2, 3)], (2, 2), None),
    ("outer", f_outer, [(2,), (2,)], (3, 3), None),
    ("linalg_outer", f_linalg_outer, [(2, 3), (2, 3)], (3, 3), None),
    ("tensordot", f_tensordot, [(2, 3), (2, 3)], (3, 3), None),
    ("einsum", f_einsum, [(2, 3), (2, 3)], (3, 3), None),
    ("einsum_sublists", f_einsum_sublists, [(2, 3), (2, 3)], (3, 3), None),
    ("kron", f_kron, [(2, 3), (2, 3)], (3, 3), None),
    ("cross", f_cross, [(2, 3), (2, 3)], (3, 3), None),
    ("vecdot", f_vecdot, [(2, 3), (2, 3)], (3, 3), None),
    ("eig", f_eig, [(3, 3)], (3, 3), None),
    ("eigvals", f_eigvals, [(3, 3)], (3, 3), None),
    ("qr", f_qr, [(4, 3)], (4, 3), None),
    ("qr_wide", f_qr_wide, [(4, 3)], (4, 3), None),
    ("qr_r", f_qr_r, [(4, 3)], (4, 3), None),
    ("lstsq", f_lstsq, [(4, 3), (4, 2)], (4, 3), None),
]
BY_NAME = {c[0]: c for c in CASES}


def _data(name):
    """Complex inputs (normal real and imaginary parts; square matrices get
    3 I added, well conditioned) and a complex weight of the output's shape."""
    _, _, shapes, wshape, _ = BY_NAME[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    args = []
    for shape in shapes:
        a = rng.normal(size=shape) + 1j * rng.normal(size=shape)
        if len(shape) == 2 and shape[0] == shape[1] and name not in ("eig", "eigvals", "eigh",
                                                                      "eigvalsh", "eigh_projector"):
            a = a + 3.0 * np.eye(shape[0])
        args.append(a)
    w = rng.normal(size=wshape) + 1j * rng.normal(size=wshape)
    return args, w


def tf_numerical_grad(f, args, i, eps=EPS):
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
        tape.watch(xs)
        loss = fn(*xs, w)
    return [g.numpy() for g in tape.gradient(loss, xs)]


def _grad(fn, args, w):
    g = sg.grad(fn, wrt=tuple(range(len(args))))(*args, w)
    return list(g) if len(args) > 1 else [g]


_FUNCTIONS = {}


def _function(fn, args, w):
    f = _FUNCTIONS.setdefault(fn, sg.function(fn))
    xs = [sg.constant(a) for a in args]
    with sg.GradientTape() as tape:
        tape.watch(xs)
        loss = f(*xs, w)
    return [g.numpy() for g in tape.gradient(loss, xs)]


PATHS = {"tape": _tape, "grad": _grad, "function": _function}


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("name", list(BY_NAME))
def test_complex_gradient_is_tf_convention(name, path):
    _, fn, _, _, _ = BY_NAME[name]
    args, w = _data(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        grads = PATHS[path](fn, args, w)
    assert len(grads) == len(args)
    for i, g in enumerate(grads):
        g = np.asarray(g)
        assert g.dtype == np.complex128, g.dtype
        expected = tf_numerical_grad(lambda *a: fn(*a, w), args, i)
        np.testing.assert_allclose(g, expected, rtol=RTOL, atol=ATOL,
                                   err_msg="%s, input %d, %s path" % (name, i, path))


@pytest.mark.parametrize("name", [c[0] for c in CASES if c[4] is not None])
def test_autograd_gives_the_conjugate(name):
    _, fn, _, _, ref = BY_NAME[name]
    args, w = _data(name)
    ours = _grad(fn, args, w)
    for i, g in enumerate(ours):
        theirs = autograd.grad(ref, i)(*args, w)
        np.testing.assert_allclose(g, np.conj(theirs), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["fft", "irfft", "fft2", "svd_product", "inv"])
def test_complex64_stays_complex64(name):
    _, fn, _, _, _ = BY_NAME[name]
    args, w = _data(name)
    args32 = [a.astype(np.complex64) for a in args]
    (g,) = _grad(fn, args32, w.astype(np.complex64))[:1]
    assert np.asarray(g).dtype == np.complex64
    (g64,) = _grad(fn, args, w)[:1]
    np.testing.assert_allclose(g, g64, rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("mode", ["jvp", "accumulator"])
@pytest.mark.parametrize("name", list(BY_NAME))
def test_complex_forward_mode(name, mode):
    """Forward mode along a complex direction v (tangent rules, or the
    transposed VJP) equals the directional difference (f(z + e v) -
    f(z - e v)) / 2e of the real loss. (np.abs's tangent, t * sign(x), was
    wrong for complex x: it is Re(conj(sign(x)) t).)"""
    _, fn, _, _, _ = BY_NAME[name]
    args, w = _data(name)
    rng = np.random.default_rng(zlib.crc32(("v" + name).encode()))
    vs = [rng.normal(size=np.shape(a)) + 1j * rng.normal(size=np.shape(a)) for a in args]
    plus = [a + EPS * v for a, v in zip(args, vs)]
    minus = [a - EPS * v for a, v in zip(args, vs)]
    expected = (fn(*plus, w) - fn(*minus, w)) / (2 * EPS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        if mode == "jvp":
            _, jv = sg.jvp(fn, tuple(args) + (w,), tuple(vs) + (None,))
        else:
            xs = [sg.constant(a) for a in args]
            with sg.ForwardAccumulator(xs, vs) as acc:
                y = fn(*xs, w)
            jv = acc.jvp(y).numpy()
    np.testing.assert_allclose(np.real(jv), expected, rtol=RTOL, atol=ATOL)
