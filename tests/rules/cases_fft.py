"""Rule-test rows for np.fft (srcgrad/rules/numpy/fft.py).

Inputs are real (the table's domains); complex inputs are checked in
tests/rules/test_complex_linalg_fft.py. A transform with a complex output enters the
loss as `np.real(F * C)` with the complex constant C = 0.6 - 0.8j, so both
its real and imaginary parts are weighed (0.6 Re F + 0.8 Im F).

`ref` uses autograd.numpy.fft where autograd differentiates the call (the
complex transforms; the real ones for even lengths); for odd lengths of the
real transforms it writes them from their definition: rfft as the first
n//2 + 1 coefficients of fft, irfft as Re(B c) with the explicit matrix
B_jk = w_k e^{2 pi i jk / n} / n.

TANGENT_CASES: rows for tests/test_forward.py's tangent table (real
outputs, since that table checks float32 outputs).
"""
import autograd.numpy as anp
import numpy as np
from rulecase import Case, R

C = Case
PHASE = 0.6 - 0.8j


def _scale(n, norm, inverse):
    """The factor NumPy's norm applies to a transform of length n."""
    if norm == "ortho":
        return 1.0 / np.sqrt(n)
    if (norm == "forward") != inverse:
        return 1.0 / n
    return 1.0


def _first(x, n, axis):
    """x[..., :n, ...] along axis (autograd indexing; its take has no VJP)."""
    axis = axis % np.ndim(x)
    return x[(slice(None),) * axis + (slice(0, n),)]


def _fix(x, n, axis):
    """x cut or zero-padded to length n along axis (autograd operations)."""
    m = np.shape(x)[axis]
    if n <= m:
        return _first(x, n, axis)
    shape = list(np.shape(x))
    shape[axis] = n - m
    return anp.concatenate([x, anp.zeros(shape)], axis=axis)


def _ag_rfft(x, n=None, axis=-1, norm=None):
    """rfft written as the first n//2 + 1 coefficients of the complex fft."""
    n = np.shape(x)[axis] if n is None else n
    full = anp.fft.fft(_fix(x, n, axis), axis=axis, norm=norm)
    return _first(full, n // 2 + 1, axis)


def _ag_irfft(c, n=None, axis=-1, norm=None):
    """irfft from its definition: y_j = s sum_k w_k Re(c_k e^{2 pi i jk/n}),
    w_k = 1 for k = 0 and k = n/2, 2 otherwise (real c: Re(c_k) cos)."""
    m = np.shape(c)[axis]
    n = 2 * (m - 1) if n is None else n
    k = np.arange(n // 2 + 1)
    w = np.where((k == 0) | (2 * k == n), 1.0, 2.0)
    j = np.arange(n)
    B = np.cos(2 * np.pi * np.outer(j, k) / n) * w * _scale(n, norm, True)   # (n, n//2 + 1)
    cm = anp.moveaxis(_fix(c, n // 2 + 1, axis), axis, -1)
    return anp.moveaxis(anp.dot(cm, B.T), -1, axis)


# ------------------------------------------------------ complex transforms

def f_fft(x, w):
    return np.sum(np.real(np.fft.fft(x) * PHASE) * w)


def f_fft_n_axis(x, w):
    return np.sum(np.real(np.fft.fft(x, 4, axis=0) * PHASE) * w)


def f_fft_pad_ortho(x, w):
    return np.sum(np.real(np.fft.fft(x, n=7, norm="ortho") * PHASE) * w)


def f_fft_forward(x, w):
    return np.sum(np.real(np.fft.fft(x, norm="forward") * PHASE) * w)


def f_ifft(x, w):
    return np.sum(np.real(np.fft.ifft(x, n=8, norm="ortho") * PHASE) * w)


def f_ifft_default(x, w):
    return np.sum(np.real(np.fft.ifft(x, axis=0) * PHASE) * w)


def f_fft2(x, w):
    return np.sum(np.real(np.fft.fft2(x) * PHASE) * w)


def f_fft2_s_axes(x, w):
    return np.sum(np.real(np.fft.fft2(x, s=(2, 5), axes=(0, 2)) * PHASE) * w)


def f_ifft2(x, w):
    return np.sum(np.real(np.fft.ifft2(x, norm="forward") * PHASE) * w)


def f_fftn(x, w):
    return np.sum(np.real(np.fft.fftn(x) * PHASE) * w)


def f_fftn_axes(x, w):
    return np.sum(np.real(np.fft.fftn(x, s=(3, 2), axes=(2, 0), norm="forward") * PHASE) * w)


def f_ifftn(x, w):
    return np.sum(np.real(np.fft.ifftn(x, axes=(0, 1)) * PHASE) * w)


# --------------------------------------------------------- real transforms

def f_rfft(x, w):
    return np.sum(np.real(np.fft.rfft(x) * PHASE) * w)


def f_rfft_odd(x, w):
    return np.sum(np.real(np.fft.rfft(x, n=5, axis=0, norm="ortho") * PHASE) * w)


def f_rfft2(x, w):
    return np.sum(np.real(np.fft.rfft2(x) * PHASE) * w)


def f_rfft2_s(x, w):
    return np.sum(np.real(np.fft.rfft2(x, s=(3, 5)) * PHASE) * w)


def f_rfftn(x, w):
    return np.sum(np.real(np.fft.rfftn(x, axes=(0, 2), norm="ortho") * PHASE) * w)


def f_irfft(x, w):
    return np.sum(np.fft.irfft(x) * w)


def f_irfft_odd(x, w):
    return np.sum(np.fft.irfft(x, n=7, norm="forward") * w)


def f_irfft_axis(x, w):
    return np.sum(np.fft.irfft(x, 6, axis=0, norm="ortho") * w)


def f_irfft2(x, w):
    return np.sum(np.fft.irfft2(x) * w)


def f_irfft2_s(x, w):
    return np.sum(np.fft.irfft2(x, s=(4, 5)) * w)


def f_irfftn(x, w):
    return np.sum(np.fft.irfftn(x, axes=(0, 2)) * w)


def f_hfft(x, w):
    return np.sum(np.fft.hfft(x) * w)


def f_hfft_odd(x, w):
    return np.sum(np.fft.hfft(x, n=5, norm="ortho") * w)


def f_ihfft(x, w):
    return np.sum(np.real(np.fft.ihfft(x) * PHASE) * w)


def f_ihfft_odd(x, w):
    return np.sum(np.real(np.fft.ihfft(x, n=7, norm="forward") * PHASE) * w)


# ------------------------------------------------------------------ shifts

def f_fftshift(x, w):
    return np.sum(np.fft.fftshift(x) * w)


def f_fftshift_axes(x, w):
    return np.sum(np.fft.fftshift(x, axes=0) * w)


def f_ifftshift(x, w):
    return np.sum(np.fft.ifftshift(x, axes=(0, 1)) * w)


def _re(f):
    def ref(*a):
        return anp.real(f(*a) * PHASE)
    return ref


CASES = [
    C("fft", f_fft, _re(lambda x: anp.fft.fft(x)), (R(8),), np.fft.fft),
    C("fft_n4_axis0", f_fft_n_axis, _re(lambda x: anp.fft.fft(x, 4, axis=0)), (R(6, 3),), np.fft.fft),
    C("fft_pad7_ortho", f_fft_pad_ortho, _re(lambda x: anp.fft.fft(x, n=7, norm="ortho")), (R(2, 5),),
      np.fft.fft),
    C("fft_norm_forward", f_fft_forward, _re(lambda x: anp.fft.fft(x, norm="forward")), (R(3, 4),),
      np.fft.fft),
    C("ifft_pad8_ortho", f_ifft, _re(lambda x: anp.fft.ifft(x, n=8, norm="ortho")), (R(6),), np.fft.ifft),
    C("ifft_axis0", f_ifft_default, _re(lambda x: anp.fft.ifft(x, axis=0)), (R(5, 2),), np.fft.ifft),
    C("fft2", f_fft2, _re(lambda x: anp.fft.fft2(x)), (R(2, 3, 4),), np.fft.fft2),
    C("fft2_s_axes", f_fft2_s_axes, _re(lambda x: anp.fft.fft2(x, s=(2, 5), axes=(0, 2))),
      (R(3, 2, 4),), np.fft.fft2),
    C("ifft2_forward", f_ifft2, _re(lambda x: anp.fft.ifft2(x, norm="forward")), (R(3, 4),),
      np.fft.ifft2),
    C("fftn", f_fftn, _re(lambda x: anp.fft.fftn(x)), (R(2, 3, 4),), np.fft.fftn),
    C("fftn_s_axes_forward", f_fftn_axes,
      _re(lambda x: anp.fft.fftn(x, s=(3, 2), axes=(2, 0), norm="forward")), (R(3, 2, 4),),
      np.fft.fftn),
    C("ifftn_axes", f_ifftn, _re(lambda x: anp.fft.ifftn(x, axes=(0, 1))), (R(3, 4, 2),),
      np.fft.ifftn),
    C("rfft", f_rfft, _re(lambda x: anp.fft.rfft(x)), (R(8),), np.fft.rfft),
    C("rfft_odd_n5_axis0", f_rfft_odd, _re(lambda x: _ag_rfft(x, 5, 0, "ortho")), (R(4, 3),),
      np.fft.rfft),
    C("rfft2", f_rfft2, _re(lambda x: anp.fft.rfft2(x)), (R(4, 6),), np.fft.rfft2),
    C("rfft2_s_odd", f_rfft2_s,
      _re(lambda x: anp.fft.fft(_ag_rfft(x, 5, 1), n=3, axis=0)), (R(4, 4),), np.fft.rfft2),
    C("rfftn_axes_ortho", f_rfftn,
      _re(lambda x: anp.fft.fft(_ag_rfft(x, None, 2, "ortho"), axis=0, norm="ortho")), (R(2, 3, 5),),
      np.fft.rfftn),
    C("irfft", f_irfft, lambda x: anp.fft.irfft(x), (R(5),), np.fft.irfft),
    C("irfft_odd_forward", f_irfft_odd, lambda x: _ag_irfft(x, 7, -1, "forward"), (R(2, 6),),
      np.fft.irfft),
    C("irfft_axis0_ortho", f_irfft_axis, lambda x: _ag_irfft(x, 6, 0, "ortho"), (R(3, 2),),
      np.fft.irfft),
    C("irfft2", f_irfft2, lambda x: anp.fft.irfft2(x), (R(4, 3),), np.fft.irfft2),
    C("irfft2_s_odd", f_irfft2_s, lambda x: _ag_irfft2_s(x), (R(3, 4),), np.fft.irfft2),
    C("irfftn_axes", f_irfftn, lambda x: anp.fft.irfftn(x, axes=(0, 2)), (R(2, 3, 4),),
      np.fft.irfftn),
    C("hfft", f_hfft, lambda x: _ag_irfft(x, None, -1, "forward"), (R(5),), np.fft.hfft),
    C("hfft_odd_ortho", f_hfft_odd, lambda x: _ag_irfft(x, 5, -1, "ortho"), (R(2, 4),), np.fft.hfft),
    C("ihfft", f_ihfft, _re(lambda x: anp.conj(_ag_rfft(x, None, -1, "forward"))), (R(6),),
      np.fft.ihfft),
    C("ihfft_odd", f_ihfft_odd, _re(lambda x: anp.conj(_ag_rfft(x, 7, -1, None))), (R(3, 5),),
      np.fft.ihfft),
    C("fftshift", f_fftshift, lambda x: anp.fft.fftshift(x), (R(5),), np.fft.fftshift),
    C("fftshift_axis0", f_fftshift_axes, lambda x: anp.fft.fftshift(x, axes=0), (R(5, 4),),
      np.fft.fftshift),
    C("ifftshift", f_ifftshift, lambda x: anp.fft.ifftshift(x, axes=(0, 1)), (R(3, 4, 2),),
      np.fft.ifftshift),
]


def _ag_irfft2_s(x):
    """irfft2(x, s=(4, 5)): ifft along axis 0 (length 4), then irfft along
    axis 1 (length 5), from the definition: with a complex intermediate
    c = ifft(x), Re(B c) = B Re(c) - (B's imaginary part) Im(c)."""
    c = anp.fft.ifft(_fix(x, 4, 0), axis=0)
    n, m = 5, 3
    k = np.arange(m)
    w = np.where((k == 0) | (2 * k == n), 1.0, 2.0)
    ang = 2 * np.pi * np.outer(np.arange(n), k) / n
    cm = _fix(c, m, 1)
    return (anp.dot(anp.real(cm), (np.cos(ang) * w).T) - anp.dot(anp.imag(cm), (np.sin(ang) * w).T)) / n


# ---------------------------------------------------------------------------
# Tangent rows for tests/test_forward.py (real outputs)
# ---------------------------------------------------------------------------

def c_fft(x): return np.real(np.fft.fft(x, 6) * PHASE)                         # noqa: E704
def c_ifft(x): return np.imag(np.fft.ifft(x, norm="ortho"))                    # noqa: E704
def c_rfft(x): return np.real(np.fft.rfft(x, axis=0) * PHASE)                  # noqa: E704
def c_irfft(x): return np.fft.irfft(x, 5)                                      # noqa: E704
def c_hfft(x): return np.fft.hfft(x * (1.0 + 0.5j))                            # noqa: E704
def c_ihfft(x): return np.real(np.fft.ihfft(x) * PHASE)                        # noqa: E704
def c_fft2(x): return np.real(np.fft.fft2(x, s=(3, 3)) * PHASE)                # noqa: E704
def c_ifft2(x): return np.real(np.fft.ifft2(x) * PHASE)                        # noqa: E704
def c_rfft2(x): return np.imag(np.fft.rfft2(x))                                # noqa: E704
def c_irfft2(x): return np.fft.irfft2(x)                                       # noqa: E704
def c_fftn(x): return np.real(np.fft.fftn(x, axes=(0, 2)) * PHASE)             # noqa: E704
def c_ifftn(x): return np.real(np.fft.ifftn(x, norm="forward") * PHASE)        # noqa: E704
def c_rfftn(x): return np.real(np.fft.rfftn(x) * PHASE)                        # noqa: E704
def c_irfftn(x): return np.fft.irfftn(x, s=(2, 3, 4), axes=(0, 1, 2))         # noqa: E704
def c_fftshift(x): return np.fft.fftshift(x)                                   # noqa: E704
def c_ifftshift(x): return np.fft.ifftshift(x, axes=1)                         # noqa: E704


def _r(*shape):
    return (shape, "real")


TANGENT_CASES = [
    ("fft", c_fft, (_r(2, 5),), (np.fft.fft, np.real)),
    ("ifft", c_ifft, (_r(4),), (np.fft.ifft, np.imag)),
    ("rfft", c_rfft, (_r(5, 2),), np.fft.rfft),
    ("irfft", c_irfft, (_r(2, 4),), np.fft.irfft),
    ("hfft", c_hfft, (_r(4),), np.fft.hfft),
    ("ihfft", c_ihfft, (_r(5),), np.fft.ihfft),
    ("fft2", c_fft2, (_r(2, 4),), np.fft.fft2),
    ("ifft2", c_ifft2, (_r(2, 3, 2),), np.fft.ifft2),
    ("rfft2", c_rfft2, (_r(3, 4),), np.fft.rfft2),
    ("irfft2", c_irfft2, (_r(3, 3),), np.fft.irfft2),
    ("fftn", c_fftn, (_r(2, 3, 2),), np.fft.fftn),
    ("ifftn", c_ifftn, (_r(3, 2),), np.fft.ifftn),
    ("rfftn", c_rfftn, (_r(2, 2, 3),), np.fft.rfftn),
    ("irfftn", c_irfftn, (_r(2, 3, 3),), np.fft.irfftn),
    ("fftshift", c_fftshift, (_r(3, 4),), np.fft.fftshift),
    ("ifftshift", c_ifftshift, (_r(3, 5),), np.fft.ifftshift),
]
