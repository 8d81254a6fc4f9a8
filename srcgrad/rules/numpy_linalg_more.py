"""Adjoint rules for np.linalg.eig, eigvals, lstsq and qr (see
numpy_linalg.py for the conventions: batches of matrices in the last two
axes, `d[z][i]` for the outputs of a tuple, zeros for unused ones; complex
values in TF's convention). The identities and their sources are in
helpers_more.py: Boeddeker et al. 2017 for eig, Golub & Pereyra 1973 for
lstsq through the pseudo-inverse, Walter & Lehmann 2018 and Liao et al.
2019 for qr.

eig needs distinct eigenvalues and a loss that does not depend on the
eigenvectors' arbitrary phases; lstsq a matrix of full rank; qr an
invertible R (full rank).
"""
import numpy as np

from .helpers_more import eig_adjoint, eigvals_adjoint, eigvals_tangent, lstsq_adjoint, qr_rule_adjoint
from .registry import register_adjoint
from .tangents import register_linear, register_tangent


@register_adjoint(np.linalg.eig)
def eig(z, a):
    """(w, V) of a general A: Abar = V^{-H} (diag(wbar) + conj(F) o (V^H Vt))
    V^H, F_ij = 1/(w_j - w_i), Vt = Vbar - V Re(diag(V^H Vbar)) for the
    unit-norm eigenvectors (Boeddeker et al. 2017); real part for real A."""
    d[a] = eig_adjoint(d[z][0], d[z][1], z[0], z[1], a)


@register_adjoint(np.linalg.eigvals)
def eigvals(z, a):
    """Eigenvalues of a general A: Abar = V^{-H} diag(wbar) V^H (V
    recomputed); real part for real A."""
    d[a] = eigvals_adjoint(d[z], a)


@register_adjoint(np.linalg.lstsq)
def lstsq(z, a, b, rcond=None):
    """(x, residuals, rank, s) of a full-rank A: x = pinv(A) b (Golub &
    Pereyra 1973), the residuals |b - A x|^2 stationary in x, s the singular
    values. A rank-deficient A (or one rcond truncates) is refused."""
    d[a] = lstsq_adjoint(d[z][:], z, a, b, True)
    d[b] = lstsq_adjoint(d[z][:], z, a, b, False)


@register_adjoint(np.linalg.qr)
def qr(z, a, mode="reduced"):
    """A = Q R: Abar = (Qbar + Q copyltu(R Rbar^H - Qbar^H Q)) R^{-H} for
    m >= n (Walter & Lehmann 2018), through the square part for m < n (Liao
    et al. 2019). Modes reduced, complete (where defined) and r."""
    d[a] = qr_rule_adjoint(d[z][:], z, a, mode)


@register_tangent(np.linalg.eigvals)
def eigvals_tangent_(z, a):
    """dw = diag(V^{-1} dA V)."""
    t[z] = eigvals_tangent(t[a], a)


register_linear(eigvals_tangent)
