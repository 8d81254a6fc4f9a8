"""Rules for np.fft (the notation is numpy/__init__.py's).

The complex transforms (fft, ifft, fft2, ifft2, fftn, ifftn), the real ones
(rfft, rfft2, rfftn and their inverses irfft, irfft2, irfftn), the Hermitian
ones (hfft, ihfft) and fftshift/ifftshift, with every `n`/`s`, `axis`/`axes`
and `norm` argument NumPy takes. All are linear, so the tangent of each is
the same transform of the input's tangent, and each adjoint is a transform
back (rules/helpers/fft.py: c2c_adjoint, r2c_adjoint, c2r_adjoint): the conjugate
transpose of the (scaled, cut or zero-padded) DFT matrix, which is the
opposite transform with the swapped norm. Complex values follow TF's
convention (README, "Complex inputs": the cotangent of z = F a is F^H g); a
real input gets the real part. The identities are the DFT's (autograd's
numpy/fft.py implements the same VJPs in its conjugate convention, for
even lengths of the real transforms; these rules take any length).
"""
import numpy as np

from ..helpers.complex import conj
from ..helpers.fft import c2c_adjoint, c2r_adjoint, dual_norm, listed, r2c_adjoint
from ..registry import register_adjoint
from ..tangents import register_linear


# ------------------------------------------------------ complex transforms


@register_adjoint(np.fft.fft)
def fft(z, a, n=None, axis=-1, norm=None, out=None):
    """z = F a (the DFT along axis, a cut/padded to n): d a = F^H g, the
    inverse transform with the swapped norm, cut/padded back."""
    d[a] = c2c_adjoint(d[z], a, listed(n), listed(axis), norm, False)


@register_adjoint(np.fft.ifft)
def ifft(z, a, n=None, axis=-1, norm=None, out=None):
    """z = F^-1 a: d a is the forward transform of g with the swapped norm."""
    d[a] = c2c_adjoint(d[z], a, listed(n), listed(axis), norm, True)


@register_adjoint(np.fft.fft2)
def fft2(z, a, s=None, axes=(-2, -1), norm=None, out=None):
    """fftn over `axes` (two by default): d a = F^H g."""
    d[a] = c2c_adjoint(d[z], a, s, axes, norm, False)


@register_adjoint(np.fft.ifft2)
def ifft2(z, a, s=None, axes=(-2, -1), norm=None, out=None):
    """ifftn over `axes` (two by default): d a = the forward transform of g."""
    d[a] = c2c_adjoint(d[z], a, s, axes, norm, True)


@register_adjoint(np.fft.fftn)
def fftn(z, a, s=None, axes=None, norm=None, out=None):
    """The n-d DFT over `axes` (a cut/padded to s): d a = F^H g."""
    d[a] = c2c_adjoint(d[z], a, s, axes, norm, False)


@register_adjoint(np.fft.ifftn)
def ifftn(z, a, s=None, axes=None, norm=None, out=None):
    """The n-d inverse DFT: d a = the forward transform of g (swapped norm)."""
    d[a] = c2c_adjoint(d[z], a, s, axes, norm, True)


# --------------------------------------------------------- real transforms


@register_adjoint(np.fft.rfft)
def rfft(z, a, n=None, axis=-1, norm=None, out=None):
    """The first n//2 + 1 DFT coefficients of a real a: d a = Re of the
    inverse transform of g zero-padded to n."""
    d[a] = r2c_adjoint(d[z], a, listed(n), listed(axis), norm)


@register_adjoint(np.fft.rfft2)
def rfft2(z, a, s=None, axes=(-2, -1), norm=None, out=None):
    """rfftn over `axes` (two by default)."""
    d[a] = r2c_adjoint(d[z], a, s, axes, norm)


@register_adjoint(np.fft.rfftn)
def rfftn(z, a, s=None, axes=None, norm=None, out=None):
    """rfft along the last axis, fft along the others: d a = Re(F^H P g)."""
    d[a] = r2c_adjoint(d[z], a, s, axes, norm)


@register_adjoint(np.fft.irfft)
def irfft(z, a, n=None, axis=-1, norm=None, out=None):
    """The real signal of length n (2 (m - 1) by default) whose half
    spectrum is a: d a = w rfft(g) (swapped norm), w_k = 2 for the
    coefficients standing for a conjugate pair, 1 for k = 0 and n/2."""
    d[a] = c2r_adjoint(d[z], a, listed(n), listed(axis), norm)


@register_adjoint(np.fft.irfft2)
def irfft2(z, a, s=None, axes=(-2, -1), norm=None, out=None):
    """irfftn over `axes` (two by default)."""
    d[a] = c2r_adjoint(d[z], a, s, axes, norm)


@register_adjoint(np.fft.irfftn)
def irfftn(z, a, s=None, axes=None, norm=None, out=None):
    """ifft along all axes but the last, irfft along it: d a = the fft of
    w rfft(g) along the others (swapped norms)."""
    d[a] = c2r_adjoint(d[z], a, s, axes, norm)


@register_adjoint(np.fft.hfft)
def hfft(z, a, n=None, axis=-1, norm=None, out=None):
    """hfft(a) = irfft(conj(a)) with the swapped norm (NumPy's definition):
    irfft's cotangent, conjugated."""
    d[a] = conj(c2r_adjoint(d[z], conj(a), listed(n), listed(axis), dual_norm(norm)))


@register_adjoint(np.fft.ihfft)
def ihfft(z, a, n=None, axis=-1, norm=None, out=None):
    """ihfft(a) = conj(rfft(a)) with the swapped norm: rfft's cotangent of
    conj(g)."""
    d[a] = r2c_adjoint(conj(d[z]), a, listed(n), listed(axis), dual_norm(norm))


# ------------------------------------------------------------------ shifts


@register_adjoint(np.fft.fftshift)
def fftshift(y, x, axes=None):
    """A roll by n//2: the cotangent is rolled back (ifftshift)."""
    d[x] = np.fft.ifftshift(d[y], axes)


@register_adjoint(np.fft.ifftshift)
def ifftshift(y, x, axes=None):
    """A roll by -(n//2): the cotangent is rolled back (fftshift)."""
    d[x] = np.fft.fftshift(d[y], axes)


# ----------------------------------------------------------- tangent rules
# Every transform is linear in its input: its tangent is the same transform.


for _f in (np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft, np.fft.hfft, np.fft.ihfft,
           np.fft.fft2, np.fft.ifft2, np.fft.rfft2, np.fft.irfft2, np.fft.fftn, np.fft.ifftn,
           np.fft.rfftn, np.fft.irfftn, np.fft.fftshift, np.fft.ifftshift):
    register_linear(_f)
