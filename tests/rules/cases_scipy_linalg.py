"""Rule-test rows for scipy.linalg (srcgrad/rules/scipy/linalg.py).

solve_triangular (lower/upper, every trans spelling, unit_diagonal, a vector
or matrix right-hand side, batched and broadcast), cho_factor and cho_solve
(alone and composed, lower and upper, batched), expm, sqrtm and
solve_sylvester, lu (P, L, U; permute_l; p_indices; batched), and solve
(general, transposed, assume_a 'sym'/'pos'/triangular/diagonal), inv, det
and cholesky, single and batched.

SciPy's functions convert Tensors with np.asarray, so their rows are
`compiled_only`; srcgrad's Tensor-aware wrappers (solve_tri, expm_p,
sylvester), which the backward code calls, have rows of their own that the
op-by-op tape runs too. Triangular matrices are a well-conditioned matrix
plus 3 I; the symmetric kinds (cholesky, cho_factor, assume_a 'sym'/'pos')
symmetrize their input in the case function (their rules return the
symmetric cotangent, as np.linalg.cholesky's); multi-output lu weighs the
concatenation of L and U.

References are written with autograd: np.linalg.inv / solve / det /
cholesky on the same (masked, symmetrized) matrices, autograd.scipy.linalg's
sqrtm and solve_sylvester, a scaling-and-squaring Taylor series for expm,
and Doolittle's elimination (with the permutation SciPy chose, which is
piecewise constant) for lu.
"""
import autograd.numpy as anp
import autograd.scipy.linalg as asl
import numpy as np
import scipy.linalg
from rulecase import Case, R, SPD, SQ, WC  # noqa: F401

from srcgrad.rules.helpers.scipy_linalg import expm_p, solve_band, solve_tri, sylvester

C = Case
CO = {"compiled_only": True}
sl = scipy.linalg
EYE3 = np.eye(3)


# ---------------------------------------------------------------------------
# Case functions

# -- solve_banded: (l, u) storage, the main diagonal's row + 4 (well conditioned)

def _boost(l_and_u, n):
    out = np.zeros((l_and_u[0] + l_and_u[1] + 1, n))
    out[l_and_u[1]] = 4.0
    return out


BOOST_11, BOOST_21 = _boost((1, 1), 5), _boost((2, 1), 4)


def f_sb_tridiagonal(ab, b, w):
    return np.sum(sl.solve_banded((1, 1), ab + BOOST_11, b) * w)


def f_sb_21(ab, b, w):
    return np.sum(sl.solve_banded((2, 1), ab + BOOST_21, b) * w)


def f_solve_band(ab, b, w):
    return np.sum(solve_band((1, 1), ab + BOOST_11, b) * w)


def _ag_banded(l_and_u, ab):
    """The dense matrix of (l, u) banded storage, for autograd: A[i, j] = ab[u + i - j, j]."""
    lo, up = l_and_u
    n = ab.shape[-1]
    total = 0.0
    for k in range(lo + up + 1):
        d = up - k                       # the diagonal j - i = d
        v = ab[k, d:] if d >= 0 else ab[k, :n + d]
        total = total + anp.diag(v, d)
    return total


# -- solve_triangular: T = a + 3 I (well conditioned), b vector or matrix

def f_st_lower(a, b, w):
    return np.sum(sl.solve_triangular(a + 3.0 * EYE3, b, lower=True) * w)


def f_st_upper(a, b, w):
    return np.sum(sl.solve_triangular(a + 3.0 * EYE3, b) * w)


def f_st_lower_T(a, b, w):
    return np.sum(sl.solve_triangular(a + 3.0 * EYE3, b, trans=1, lower=True) * w)


def f_st_upper_T_str(a, b, w):
    return np.sum(sl.solve_triangular(a + 3.0 * EYE3, b, trans="T") * w)


def f_st_lower_C(a, b, w):
    return np.sum(sl.solve_triangular(a + 3.0 * EYE3, b, trans="C", lower=True) * w)


def f_st_unit_lower(a, b, w):
    return np.sum(sl.solve_triangular(a, b, lower=True, unit_diagonal=True) * w)


def f_st_unit_upper_T(a, b, w):
    return np.sum(sl.solve_triangular(a, b, 1, False, True) * w)


def f_solve_tri_lower(a, b, w):
    return np.sum(solve_tri(a + 3.0 * EYE3, b, 0, True) * w)


def f_solve_tri_upper_C_unit(a, b, w):
    return np.sum(solve_tri(a, b, 2, False, True) * w)


# -- Cholesky: cho_factor, cho_solve, cholesky (symmetrized input)

def f_cho_solve_lower(a, b, w):
    c, low = sl.cho_factor(0.5 * (a + np.swapaxes(a, -1, -2)), lower=True)
    return np.sum(sl.cho_solve((c, low), b) * w)


def f_cho_solve_upper(a, b, w):
    cf = sl.cho_factor(0.5 * (a + np.swapaxes(a, -1, -2)))
    return np.sum(sl.cho_solve(cf, b) * w)


def f_cho_factor_lower(a, w):
    c, low = sl.cho_factor(0.5 * (a + np.swapaxes(a, -1, -2)), lower=True)
    return np.sum(np.tril(c) * w)


def f_cho_factor_upper(a, w):
    c = sl.cho_factor(0.5 * (a + np.swapaxes(a, -1, -2)))[0]
    return np.sum(np.triu(c) * w)


def f_cholesky_upper(a, w):
    return np.sum(sl.cholesky(0.5 * (a + np.swapaxes(a, -1, -2))) * w)


def f_cholesky_lower(a, w):
    return np.sum(sl.cholesky(0.5 * (a + np.swapaxes(a, -1, -2)), lower=True) * w)


# -- matrix functions

def f_expm(a, w):
    return np.sum(sl.expm(0.5 * a) * w)


def f_expm_p(a, w):
    return np.sum(expm_p(0.5 * a) * w)


def f_sqrtm(a, w):
    return np.sum(sl.sqrtm(a) * w)


def f_solve_sylvester(a, b, q, w):
    return np.sum(sl.solve_sylvester(a, b, q) * w)


def f_sylvester(a, b, q, w):
    return np.sum(sylvester(a, b, q) * w)


# -- lu: the loss weighs L and U (P has no derivative)

def f_lu(a, w):
    p, l, u = sl.lu(a)
    return np.sum(np.concatenate([np.reshape(l, -1), np.reshape(u, -1)]) * w)


def f_lu_permute_l(a, w):
    pl, u = sl.lu(a, permute_l=True)
    return np.sum(np.concatenate([np.reshape(pl, -1), np.reshape(u, -1)]) * w)


def f_lu_p_indices(a, w):
    p, l, u = sl.lu(a, p_indices=True)
    return np.sum(np.concatenate([np.reshape(l, -1), np.reshape(u, -1)]) * w)


def f_lu_u_only(a, w):
    return np.sum(sl.lu(a)[2] * w)


# -- solve, inv, det

def f_solve(a, b, w):
    return np.sum(sl.solve(a, b) * w)


def f_solve_transposed(a, b, w):
    return np.sum(sl.solve(a, b, transposed=True) * w)


def f_solve_sym(a, b, w):
    return np.sum(sl.solve(0.5 * (a + a.T), b, assume_a="sym") * w)


def f_solve_pos_lower(a, b, w):
    return np.sum(sl.solve(0.5 * (a + a.T), b, lower=True, assume_a="pos") * w)


def f_solve_lower_triangular(a, b, w):
    return np.sum(sl.solve(a + 3.0 * EYE3, b, assume_a="lower triangular") * w)


def f_solve_diagonal(a, b, w):
    return np.sum(sl.solve(a + 3.0 * EYE3, b, assume_a="diagonal") * w)


def f_inv(a, w):
    return np.sum(sl.inv(a) * w)


def f_inv_pos(a, w):
    return np.sum(sl.inv(0.5 * (a + a.T), assume_a="pos") * w)


def f_inv_upper_triangular(a, w):
    return np.sum(sl.inv(a + 3.0 * EYE3, assume_a="upper triangular") * w)


def f_det(a, w):
    return np.sum(sl.det(a) * w)


# ---------------------------------------------------------------------------
# autograd references

def _sym(a):
    return 0.5 * (a + anp.swapaxes(a, -1, -2))


def _mT(a):
    return anp.swapaxes(a, -1, -2)


def _solve(m, b):
    """m^{-1} b, b a single vector iff 1-d (SciPy's rule), via inv (batched)."""
    if anp.ndim(b) == 1:
        return anp.matmul(anp.linalg.inv(m), b)
    return anp.matmul(anp.linalg.inv(m), b)


def _tri(a, lower, unit=False, shift=3.0):
    n = a.shape[-1]
    if unit:
        t = anp.tril(a, -1) if lower else anp.triu(a, 1)
        return t + np.eye(n)
    t = a + shift * np.eye(n)
    return anp.tril(t) if lower else anp.triu(t)


def _batched(fn):
    """fn applied per matrix of a stack (autograd's tril/triu are 2-d)."""
    def apply(a, *rest):
        if a.ndim == 2:
            return fn(a, *rest)
        return anp.stack([apply(a[i], *rest) for i in range(a.shape[0])])
    return apply


def _ag_expm(a):
    """exp(a) by scaling and squaring a Taylor series (2^-8 a, 18 terms:
    truncation far below float64 round-off for |a| <~ 5)."""
    s = 8
    x = a / 2.0 ** s
    n = a.shape[-1]
    term = anp.zeros(a.shape) + np.eye(n)
    out = term
    for k in range(1, 18):
        term = anp.matmul(term, x) / k
        out = out + term
    for _ in range(s):
        out = anp.matmul(out, out)
    return out


def _value(a):
    while hasattr(a, "_value"):
        a = a._value
    return np.asarray(a)


def _doolittle(a):
    """L (unit lower) and U with a = L U, no pivoting, written with autograd
    scalars (a small square matrix)."""
    n = a.shape[0]
    L = [[None] * n for _ in range(n)]
    U = [[None] * n for _ in range(n)]
    for i in range(n):
        for j in range(i, n):
            U[i][j] = a[i, j] - sum(L[i][k] * U[k][j] for k in range(i))
        for j in range(i + 1, n):
            L[j][i] = (a[j, i] - sum(L[j][k] * U[k][i] for k in range(i))) / U[i][i]
    zero = 0.0 * a[0, 0]
    Lm = anp.stack([anp.stack([L[i][j] if j < i else (zero + 1.0 if i == j else zero)
                               for j in range(n)]) for i in range(n)])
    Um = anp.stack([anp.stack([U[i][j] if j >= i else zero for j in range(n)]) for i in range(n)])
    return Lm, Um


def _ag_lu_single(a, part):
    P = scipy.linalg.lu(_value(a))[0]
    L, U = _doolittle(anp.matmul(P.T, a))
    if part == "lu":
        return anp.concatenate([anp.reshape(L, -1), anp.reshape(U, -1)])
    if part == "plu":
        return anp.concatenate([anp.reshape(anp.matmul(P, L), -1), anp.reshape(U, -1)])
    return U


def _ag_lu(part):
    def ref(a):
        if a.ndim == 2:
            return _ag_lu_single(a, part)
        outs = [_ag_lu_single(a[i], part) for i in range(a.shape[0])]
        if part == "u":
            return anp.stack(outs)
        n = a.shape[-1] * a.shape[-1]
        # lu of a stack: L (all matrices), then U (all matrices), flattened
        return anp.concatenate([anp.concatenate([o[:n] for o in outs]),
                                anp.concatenate([o[n:] for o in outs])])
    return ref


def _ag_cholesky(a, lower):
    L = anp.linalg.cholesky(_sym(a))
    return L if lower else _mT(L)


def _ag_sqrtm(a):
    return _batched(lambda m: asl.sqrtm(m))(a)


CASES = [
    # ---- solve_triangular
    C("sl_st_lower_mat", f_st_lower,
      lambda a, b: _solve(_batched(lambda m: _tri(m, True))(a), b), (SQ(3), R(3, 2)),
      sl.solve_triangular, meta=CO),
    C("sl_st_lower_vec", f_st_lower,
      lambda a, b: _solve(_batched(lambda m: _tri(m, True))(a), b), (SQ(3), R(3)),
      sl.solve_triangular, meta=CO),
    C("sl_st_upper_mat", f_st_upper,
      lambda a, b: _solve(_batched(lambda m: _tri(m, False))(a), b), (SQ(3), R(3, 4)),
      sl.solve_triangular, meta=CO),
    C("sl_st_lower_T", f_st_lower_T,
      lambda a, b: _solve(_mT(_batched(lambda m: _tri(m, True))(a)), b), (SQ(3), R(3, 2)),
      sl.solve_triangular, meta=CO),
    C("sl_st_upper_T_str", f_st_upper_T_str,
      lambda a, b: _solve(_mT(_batched(lambda m: _tri(m, False))(a)), b), (SQ(3), R(3)),
      sl.solve_triangular, meta=CO),
    C("sl_st_lower_C", f_st_lower_C,
      lambda a, b: _solve(_mT(_batched(lambda m: _tri(m, True))(a)), b), (SQ(3), R(3, 2)),
      sl.solve_triangular, meta=CO),
    C("sl_st_unit_lower", f_st_unit_lower,
      lambda a, b: _solve(_batched(lambda m: _tri(m, True, True))(a), b), (R(3, 3), R(3, 2)),
      sl.solve_triangular, meta=CO),
    C("sl_st_unit_upper_T", f_st_unit_upper_T,
      lambda a, b: _solve(_mT(_batched(lambda m: _tri(m, False, True))(a)), b), (R(3, 3), R(3)),
      sl.solve_triangular, meta=CO),
    C("sl_st_batched", f_st_lower,
      lambda a, b: _solve(_batched(lambda m: _tri(m, True))(a), b), (SQ(3, 2), R(2, 3, 2)),
      sl.solve_triangular, meta=CO),
    C("sl_st_batched_a_vec_b", f_st_upper,
      lambda a, b: _solve(_batched(lambda m: _tri(m, False))(a), b), (SQ(3, 2), R(3)),
      sl.solve_triangular, meta=CO),
    C("sl_st_broadcast_b", f_st_lower_T,
      lambda a, b: _solve(_mT(_batched(lambda m: _tri(m, True))(a)), b), (SQ(3), R(2, 3, 2)),
      sl.solve_triangular, meta=CO),
    C("sl_solve_tri_lower", f_solve_tri_lower,
      lambda a, b: _solve(_batched(lambda m: _tri(m, True))(a), b), (SQ(3), R(3, 2)), solve_tri),
    C("sl_solve_tri_upper_C_unit", f_solve_tri_upper_C_unit,
      lambda a, b: _solve(_mT(_batched(lambda m: _tri(m, False, True))(a)), b),
      (R(2, 3, 3), R(3)), solve_tri),
    # ---- solve_banded: tridiagonal (vector and matrix b), two sub-diagonals, the tape-able wrapper
    C("sl_solve_banded_vec", f_sb_tridiagonal,
      lambda ab, b: anp.linalg.solve(_ag_banded((1, 1), ab + BOOST_11), b), (R(3, 5), R(5)),
      sl.solve_banded, meta=CO),
    C("sl_solve_banded_mat", f_sb_tridiagonal,
      lambda ab, b: anp.linalg.solve(_ag_banded((1, 1), ab + BOOST_11), b), (R(3, 5), R(5, 2)),
      sl.solve_banded, meta=CO),
    C("sl_solve_banded_21", f_sb_21,
      lambda ab, b: anp.linalg.solve(_ag_banded((2, 1), ab + BOOST_21), b), (R(4, 4), R(4, 3)),
      sl.solve_banded, meta=CO),
    C("sl_solve_band", f_solve_band,
      lambda ab, b: anp.linalg.solve(_ag_banded((1, 1), ab + BOOST_11), b), (R(3, 5), R(5)), solve_band),
    # ---- Cholesky
    C("sl_cho_solve_lower", f_cho_solve_lower, lambda a, b: _solve(_sym(a), b), (SPD(3, 3), R(3, 2)),
      (sl.cho_factor, sl.cho_solve), meta=CO),
    C("sl_cho_solve_upper_vec", f_cho_solve_upper, lambda a, b: _solve(_sym(a), b),
      (SPD(3, 3), R(3)), (sl.cho_factor, sl.cho_solve), meta=CO),
    C("sl_cho_solve_batched", f_cho_solve_upper, lambda a, b: _solve(_sym(a), b),
      (SPD(2, 3, 3), R(3, 2)), (sl.cho_factor, sl.cho_solve), meta=CO),
    C("sl_cho_solve_broadcast_b", f_cho_solve_lower, lambda a, b: _solve(_sym(a), b),
      (SPD(3, 3), R(2, 3, 2)), (sl.cho_factor, sl.cho_solve), meta=CO),
    C("sl_cho_factor_lower", f_cho_factor_lower, lambda a: _ag_cholesky(a, True), (SPD(3, 3),),
      sl.cho_factor, meta=CO),
    C("sl_cho_factor_upper_batched", f_cho_factor_upper, lambda a: _ag_cholesky(a, False),
      (SPD(2, 3, 3),), sl.cho_factor, meta=CO),
    C("sl_cholesky_upper", f_cholesky_upper, lambda a: _ag_cholesky(a, False), (SPD(3, 3),),
      sl.cholesky, meta=CO),
    C("sl_cholesky_lower_batched", f_cholesky_lower, lambda a: _ag_cholesky(a, True),
      (SPD(2, 3, 3),), sl.cholesky, meta=CO),
    # ---- expm, sqrtm, solve_sylvester
    C("sl_expm", f_expm, lambda a: _ag_expm(0.5 * a), (R(3, 3),), sl.expm, meta=CO),
    C("sl_expm_batched", f_expm, lambda a: _ag_expm(0.5 * a), (R(2, 4, 4),), sl.expm, meta=CO),
    C("sl_expm_p", f_expm_p, lambda a: _ag_expm(0.5 * a), (R(3, 3),), expm_p),
    C("sl_sqrtm", f_sqrtm, _ag_sqrtm, (SPD(3, 3),), sl.sqrtm, meta=CO),
    C("sl_sqrtm_batched", f_sqrtm, _ag_sqrtm, (SPD(2, 3, 3),), sl.sqrtm, meta=CO),
    C("sl_solve_sylvester", f_solve_sylvester, lambda a, b, q: asl.solve_sylvester(a, b, q),
      (SPD(3, 3), SPD(3, 3), R(3, 3)), sl.solve_sylvester, meta=CO),
    C("sl_sylvester", f_sylvester, lambda a, b, q: asl.solve_sylvester(a, b, q),
      (SPD(3, 3), SPD(3, 3), R(3, 3)), sylvester),
    # ---- lu
    C("sl_lu", f_lu, _ag_lu("lu"), (WC(4, 4),), sl.lu, meta=CO),
    C("sl_lu_batched", f_lu, _ag_lu("lu"), (WC(2, 3, 3),), sl.lu, meta=CO),
    C("sl_lu_permute_l", f_lu_permute_l, _ag_lu("plu"), (WC(4, 4),), sl.lu, meta=CO),
    C("sl_lu_p_indices", f_lu_p_indices, _ag_lu("lu"), (WC(3, 3),), sl.lu, meta=CO),
    C("sl_lu_u_only", f_lu_u_only, _ag_lu("u"), (WC(2, 3, 3),), sl.lu, meta=CO),
    # ---- solve, inv, det
    C("sl_solve", f_solve, _solve, (SQ(3), R(3, 2)), sl.solve, meta=CO),
    C("sl_solve_vec", f_solve, _solve, (SQ(3), R(3)), sl.solve, meta=CO),
    C("sl_solve_batched", f_solve, _solve, (SQ(3, 2), R(3, 2)), sl.solve, meta=CO),
    C("sl_solve_transposed", f_solve_transposed, lambda a, b: _solve(_mT(a), b),
      (SQ(3), R(3, 2)), sl.solve, meta=CO),
    C("sl_solve_sym", f_solve_sym, lambda a, b: _solve(_sym(a), b), (SPD(3, 3), R(3, 2)),
      sl.solve, meta=CO),
    C("sl_solve_pos_lower", f_solve_pos_lower, lambda a, b: _solve(_sym(a), b), (SPD(3, 3), R(3)),
      sl.solve, meta=CO),
    C("sl_solve_lower_triangular", f_solve_lower_triangular,
      lambda a, b: _solve(_tri(a, True), b), (SQ(3), R(3, 2)), sl.solve, meta=CO),
    C("sl_solve_diagonal", f_solve_diagonal,
      lambda a, b: _solve((a + 3.0 * np.eye(3)) * np.eye(3), b), (SQ(3), R(3, 2)), sl.solve,
      meta=CO),
    C("sl_inv", f_inv, lambda a: anp.linalg.inv(a), (SQ(3),), sl.inv, meta=CO),
    C("sl_inv_batched", f_inv, lambda a: anp.linalg.inv(a), (SQ(3, 2),), sl.inv, meta=CO),
    C("sl_inv_pos", f_inv_pos, lambda a: anp.linalg.inv(_sym(a)), (SPD(3, 3),), sl.inv, meta=CO),
    C("sl_inv_upper_triangular", f_inv_upper_triangular,
      lambda a: anp.linalg.inv(_tri(a, False)), (SQ(3),), sl.inv, meta=CO),
    C("sl_det", f_det, lambda a: anp.linalg.det(a), (SQ(3),), sl.det, meta=CO),
    C("sl_det_batched", f_det, lambda a: anp.linalg.det(a), (SQ(3, 2),), sl.det, meta=CO),
]
