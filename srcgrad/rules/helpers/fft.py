"""Run-time helpers of np.fft's rules (rules/numpy/fft.py).

Conventions (numpy/fft/_pocketfft.py): fft(a, n, axis, norm) first cuts or
zero-pads a to length n along axis; norm scales the forward transform by 1
("backward", the default None), 1/sqrt(n) ("ortho") or 1/n ("forward") and
the inverse by the complementary factor. The adjoint of a transform with
norm `nm` is the opposite transform with the swapped norm (the
conjugate-transposed DFT matrix, scaled alike): `dual_norm`. A real input
gets the real part of its cotangent (TF's complex convention).
"""
import numpy as np

from ...runtime import nondiff_helper
from .complex import inexact_dtype, real_if_real


@nondiff_helper
def dual_norm(norm):
    """The norm whose opposite transform is the adjoint: backward <->
    forward, ortho stays (NumPy's own _swap_direction)."""
    return {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}[norm]


@nondiff_helper
def fft_axes(a, s, axes, c2r=False):
    """(axes, lengths) of an n-d transform of `a`, as NumPy reads `s` and
    `axes`: all axes (or the last len(s)) by default, lengths from `s` or
    from a's shape; for a complex-to-real transform (irfftn, `c2r`) the last
    length is the output's, 2 (m - 1) by default. Axes non-negative."""
    nd = np.ndim(a)
    shape = np.shape(a)
    if axes is None:
        axes = list(range(nd)) if s is None else list(range(nd - len(s), nd))
    axes = [int(ax) % nd for ax in axes]
    if s is None:
        s = [shape[ax] for ax in axes]
        if c2r:
            s[-1] = 2 * (shape[axes[-1]] - 1)
    s = [int(shape[ax]) if n == -1 else int(n) for n, ax in zip(s, axes)]
    return axes, s


@nondiff_helper
def listed(n):
    """A 1-d transform's n or axis as fftn's s or axes: [n], None for None."""
    return None if n is None else [n]


@nondiff_helper
def _cut_or_pad(shape, axis, n):
    """(slices, pad widths) taking an array of `shape` to length n along axis."""
    cur = shape[axis]
    index = tuple(slice(None) if i != axis else slice(0, min(cur, n)) for i in range(len(shape)))
    widths = [(0, 0)] * len(shape)
    widths[axis] = (0, max(n - cur, 0))
    return index, widths


def fix_length(x, n, axis):
    """x cut or zero-padded to length n along axis (what the FFTs do to their
    input; the adjoint of one is the other)."""
    index, widths = _cut_or_pad(np.shape(x), axis, n)
    return np.pad(x[index], widths)


def fix_lengths(x, like, axes):
    """x cut or zero-padded along `axes` to the lengths `like` has there."""
    for ax in axes:
        x = fix_length(x, np.shape(like)[ax], ax)
    return x


@nondiff_helper
def irfft_weights(n, g, axis):
    """w_k for the half spectrum k = 0 .. n//2 of a real signal of length n:
    1 for k = 0 (and k = n/2 for even n), 2 for the others, whose
    conjugates stand for the missing half. Shaped along `axis` of g."""
    w = np.full(n // 2 + 1, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    shape = [1] * np.ndim(g)
    shape[axis] = -1
    return w.reshape(shape).astype(inexact_dtype(g))


def c2c_adjoint(g, a, s, axes, norm, inverse):
    """fftn / ifftn (and fft, ifft, fft2, ifft2): z = F a with F the DFT
    along `axes` (scaled by norm) after cutting/padding a to s. In TF's
    convention the cotangent is F^H g (README, "Complex inputs"): the
    opposite transform with the dual norm, cut/padded back to a's lengths;
    its real part for a real a."""
    axes, s = fft_axes(a, s, axes)
    if inverse:
        h = np.fft.fftn(g, axes=axes, norm=dual_norm(norm))
    else:
        h = np.fft.ifftn(g, axes=axes, norm=dual_norm(norm))
    return real_if_real(fix_lengths(h, a, axes), a)


def r2c_adjoint(g, a, s, axes, norm):
    """rfftn (and rfft, rfft2) of a real a: the DFT's first n//2 + 1 rows
    along the last axis, so the cotangent is Re(F^H P g), P zero-padding the
    half spectrum to length n: the inverse transform (dual norm) of the
    padded g, real part, cut/padded back."""
    axes, s = fft_axes(a, s, axes)
    h = np.fft.ifftn(fix_length(g, s[-1], axes[-1]), axes=axes, norm=dual_norm(norm))
    return real_if_real(fix_lengths(h, a, axes), a)


def c2r_adjoint(g, a, s, axes, norm):
    """irfftn (and irfft, irfft2): y = Re(B c) with B_jk = w_k e^{2 pi i jk/n}
    (scaled) along the last axis, w the weights of `irfft_weights` (the
    imaginary parts of c_0 and c_{n/2} are discarded), after the inverse
    complex transforms along the other axes. The cotangent of c is B^H g =
    w * rfft(g) (dual norm), then the forward complex transforms along the
    other axes, cut/padded back to c's lengths."""
    axes, s = fft_axes(a, s, axes, True)
    n = s[-1]
    u = np.fft.rfft(g, axis=axes[-1], norm=dual_norm(norm)) * irfft_weights(n, g, axes[-1])
    if len(axes) > 1:
        u = np.fft.fftn(u, axes=axes[:-1], norm=dual_norm(norm))
    return real_if_real(fix_lengths(u, a, axes), a)
