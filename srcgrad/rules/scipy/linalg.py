"""Adjoint rules for scipy.linalg (optional: imported only when SciPy is).

solve_triangular (lower/upper, trans 0/1/2 or 'N'/'T'/'C', unit_diagonal),
cho_factor and cho_solve, expm (the adjoint of its Fréchet derivative),
sqrtm (a Sylvester equation) and solve_sylvester, lu (P, L, U or, with
permute_l, P L and U; p_indices), and solve (every assume_a, transposed),
inv (assume_a), det and cholesky (upper by default, as SciPy). All of them
work on stacks of matrices (SciPy's batched linalg: the last two axes) and
broadcast batch axes are summed back. The identities and their sources are
in rules/helpers/scipy_linalg.py.

Conventions, as rules/numpy/linalg.py's: the symmetric kinds (cholesky,
cho_factor, solve/inv with assume_a 'sym', 'her', 'pos') read one triangle
of a and return the symmetric cotangent (the derivative in the space of
symmetric matrices, as autograd, JAX and PyTorch); the structured kinds
(triangular, diagonal, banded) return a cotangent on the structure's
entries; lu's permutation has no derivative; cho_factor's other triangle
(unspecified values, per SciPy) gets none.

SciPy converts Tensors with np.asarray, so the op-by-op tape cannot record
these calls: the compiled paths (sg.grad, @sg.function) can. The backward
code uses srcgrad's Tensor-aware wrappers (`solve_tri`, `expm_p`,
`sylvester` in rules/helpers/scipy_linalg.py), which carry the same rules, so it
can itself be differentiated op by op. In templates scipy.linalg is `sl`.
"""
import numpy as np
import scipy.linalg as sl

from ..helpers.broadcast import unbroadcast
from ..helpers.linalg import det_adjoint, mH
from ..helpers.scipy_linalg import (cho_factor_adjoint, cho_solve_adjoint_b, cho_solve_adjoint_c,
                                    cholesky_scipy_adjoint, expm_adjoint, expm_p, inv_scipy_adjoint,
                                    lu_adjoint, solve_banded_adjoint_ab, solve_banded_adjoint_b,
                                    solve_band, solve_scipy_adjoint_a, solve_scipy_adjoint_b,
                                    solve_tri, solve_triangular_adjoint_a,
                                    solve_triangular_adjoint_b, sqrtm_adjoint, sylvester)
from ..registry import register_adjoint


# ------------------------------------------------------------------ solves


@register_adjoint(solve_tri)
@register_adjoint(sl.solve_triangular)
def solve_triangular(z, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    """x = op(T)^{-1} b, T the lower (upper) triangle of a: bbar = op(T)^{-H} xbar,
    op(T)bar = -bbar x^H on T's triangle (Giles 2008, 2.3.1); no diagonal with unit_diagonal."""
    gb = solve_triangular_adjoint_b(d[z], a, b, trans, lower, unit_diagonal)
    d[a] = solve_triangular_adjoint_a(gb, z, a, b, trans, lower, unit_diagonal)
    d[b] = unbroadcast(gb, b)


@register_adjoint(sl.solve)
def scipy_solve(z, a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
                assume_a=None, transposed=False):
    """x = A^{-1} b (A^{-T} b when transposed), A as assume_a reads a: bbar = A^{-H} xbar,
    Abar = -bbar x^H (Giles 2008, 2.3.1), projected on the structure."""
    gb = solve_scipy_adjoint_b(d[z], a, b, lower, assume_a, transposed)
    d[a] = solve_scipy_adjoint_a(gb, z, a, b, assume_a, transposed)
    d[b] = unbroadcast(gb, b)


@register_adjoint(solve_band)
@register_adjoint(sl.solve_banded)
def scipy_solve_banded(z, l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    """x = A^{-1} b, A in banded storage ab (l sub- and u super-diagonals): bbar = A^{-H}
    xbar by a banded solve with A^T's storage, Abar = -bbar x^H on the band (Giles 2008,
    2.3.1), in ab's storage (its padding entries get zero)."""
    gb = solve_banded_adjoint_b(d[z], l_and_u, ab, b)
    d[ab] = solve_banded_adjoint_ab(gb, z, l_and_u, ab, b)
    d[b] = gb


@register_adjoint(sl.inv)
def scipy_inv(z, a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
    """Z = A^{-1}: Abar = -Z^H Zbar Z^H (Giles 2008, 2.2.3), projected on assume_a's structure."""
    d[a] = inv_scipy_adjoint(d[z], z, a, assume_a)


@register_adjoint(sl.det)
def scipy_det(z, a, overwrite_a=False, check_finite=True):
    """d det A = det A tr(A^{-1} dA): Abar = g det(A) A^{-T} (Giles 2008, 2.2.4)."""
    d[a] = det_adjoint(d[z], z, a)


# ---------------------------------------------------------------- Cholesky


@register_adjoint(sl.cholesky)
def scipy_cholesky(z, a, lower=False, overwrite_a=False, check_finite=True):
    """A = U^H U (upper, SciPy's default) or L L^H: Murray 2016, symmetric cotangent."""
    d[a] = cholesky_scipy_adjoint(d[z], z, lower)


@register_adjoint(sl.cho_factor)
def cho_factor(z, a, lower=False, overwrite_a=False, check_finite=True):
    """(c, lower): Cholesky's rule on the factor's triangle of c (the other triangle of c
    holds unspecified values and gets no cotangent)."""
    d[a] = cho_factor_adjoint(d[z][0], z[0], lower)


@register_adjoint(sl.cho_solve)
def cho_solve(z, c_and_lower, b, overwrite_b=False, check_finite=True):
    """x = A^{-1} b, A = L L^H (or U^H U) from c: bbar = A^{-1} xbar, Abar = -bbar x^H, and
    Lbar = (Abar + Abar^H) L (Ubar = U (Abar + Abar^H)) on the factor's triangle."""
    gb = cho_solve_adjoint_b(d[z], c_and_lower, b)
    d[c_and_lower] = cho_solve_adjoint_c(gb, z, c_and_lower, b)
    d[b] = unbroadcast(gb, b)


# ---------------------------------------------------------- matrix functions


@register_adjoint(expm_p)
@register_adjoint(sl.expm)
def expm(z, A):
    """Abar = L(A^H, Zbar), the Fréchet derivative at A^H (Al-Mohy & Higham 2009), from the
    block-triangular expm([[A^H, Zbar], [0, A^H]]) (Higham 2008, (3.16))."""
    d[A] = expm_adjoint(A, d[z])


@register_adjoint(sl.sqrtm)
def sqrtm(z, A, disp=None, blocksize=None):
    """X = sqrtm(A): Abar solves X^H Abar + Abar X^H = Xbar (Higham 2008, (6.5))."""
    d[A] = sqrtm_adjoint(z, d[z])


@register_adjoint(sylvester)
@register_adjoint(sl.solve_sylvester)
def solve_sylvester(z, a, b, q):
    """a X + X b = q: qbar solves a^H Y + Y b^H = Xbar (the adjoint Sylvester operator),
    abar = -qbar X^H, bbar = -X^H qbar."""
    gq = sylvester(mH(a), mH(b), d[z])
    d[a] = unbroadcast(-np.matmul(gq, mH(z)), a)
    d[b] = unbroadcast(-np.matmul(mH(z), gq), b)
    d[q] = unbroadcast(gq, q)


# ---------------------------------------------------------------------- LU


@register_adjoint(sl.lu)
def lu(z, a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    """(P, L, U) with A = P L U (or (P L, U)): with M = tril(L^H Lbar, -1) + triu(Ubar U^H),
    Abar = P L^{-H} M U^{-H} (square a; no derivative for the permutation)."""
    d[a] = lu_adjoint(d[z][:], z, a, permute_l, p_indices)
