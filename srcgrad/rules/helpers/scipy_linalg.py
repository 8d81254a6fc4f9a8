"""Run-time helpers of the scipy.linalg rules (rules/scipy/linalg.py).

As in linalg.py, every helper is one of:

- a `primitive` with a rule of its own: `solve_tri`, `expm_p` and
  `sylvester` wrap scipy.linalg.solve_triangular, expm and solve_sylvester
  (SciPy converts Tensors with np.asarray, so backward code that called
  SciPy directly could not be differentiated again op by op; the wrappers
  are recorded on tapes, and their rules are the SciPy functions' rules);
- written with NumPy functions that have rules and with these primitives;
- a `nondiff_helper` (permutation matrices, structure masks, flags).

Matrices are stacks in the last two axes; batch axes broadcast as SciPy's
batched linalg functions do, and are summed back to each input's shape.
Complex inputs follow TensorFlow's convention (the cotangent of a
holomorphic function's input is the adjoint, with conjugate transposes).

Sources: Giles, "An extended collection of matrix derivative results for
forward and reverse mode algorithmic differentiation" (2008), 2.3.1 for
solves; Murray, "Differentiation of the Cholesky decomposition" (2016);
Higham, "Functions of Matrices" (2008), Thm 3.6 / (3.16) for the Fréchet
derivative of expm from a block-triangular matrix, and Al-Mohy & Higham,
"Computing the Fréchet derivative of the matrix exponential" (2009), for
L(A, E)^* = L(A^H, E); the square root's derivative solves a Sylvester
equation (Higham 2008, (6.5)); for LU, A = P L U gives
L^{-1} P^T dA U^{-1} = L^{-1} dL + dU U^{-1}, split into its strictly lower
and upper parts (as in JAX's lu_pullback and Seeger et al. 2017).
"""
import numpy as np
import scipy.linalg as sl

from ...runtime import nondiff_helper, primitive
from .broadcast import unbroadcast
from .complex import conj
from .linalg import cholesky_adjoint, mH, mT


# ------------------------------------------------------------- primitives

@primitive
def solve_tri(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
              check_finite=True):
    """scipy.linalg.solve_triangular, recorded on tapes (same signature)."""
    return sl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal,
                               check_finite=check_finite)


@primitive
def expm_p(A):
    """scipy.linalg.expm, recorded on tapes."""
    return sl.expm(A)


@primitive
def sylvester(a, b, q):
    """scipy.linalg.solve_sylvester (X with a X + X b = q), recorded on tapes."""
    return sl.solve_sylvester(a, b, q)


@primitive
def solve_band(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    """scipy.linalg.solve_banded, recorded on tapes (same signature)."""
    return sl.solve_banded(l_and_u, ab, b, check_finite=check_finite)


# ------------------------------------------------------ banded solves

def _band_row(values, shift):
    """A row of banded storage from one diagonal's `values`, whose column
    j holds an entry when 0 <= j + shift < n: for shift >= 0 they fill the
    first columns, zeros on the right; for shift < 0 the last, zeros left."""
    if shift >= 0:
        return np.concatenate([values, np.zeros(shift, dtype=np.result_type(values))])
    return np.concatenate([np.zeros(-shift, dtype=np.result_type(values)), values])


def banded_transpose(l_and_u, ab):
    """The (u, l) banded storage of A^T for A in (l, u) storage ab, where
    ab[u + i - j, j] = A[i, j]: row k of the result holds
    ab[l + u - k, j + k - l] at column j (zeros where out of range)."""
    lo, up = l_and_u
    n = np.shape(ab)[-1]
    rows = []
    for k in range(lo + up + 1):
        shift = k - lo
        src = ab[lo + up - k]
        rows.append(_band_row(src[shift:], shift) if shift >= 0 else _band_row(src[:n + shift], shift))
    return np.stack(rows)


def solve_banded_adjoint_b(g, l_and_u, ab, b):
    """x = A^{-1} b, A in (l, u) banded storage: bbar = A^{-H} xbar (Giles
    2008, 2.3.1), solved in the (u, l) storage of A^T, conjugated."""
    lo, up = l_and_u
    return solve_band((up, lo), conj(banded_transpose(l_and_u, ab)), g)


def solve_banded_adjoint_ab(gb, x, l_and_u, ab, b):
    """Abar = -bbar x^H (Giles 2008, 2.3.1) on the band only, in ab's
    storage: entry (k, j) is A[j + k - u, j]'s, -sum over b's columns of
    bbar[j + k - u] conj(x[j]) (zeros where SciPy's storage is padding)."""
    lo, up = l_and_u
    n = np.shape(ab)[-1]
    gb2, x2 = np.reshape(gb, (n, -1)), np.reshape(conj(x), (n, -1))
    rows = []
    for k in range(lo + up + 1):
        shift = k - up          # row i = j + shift of A
        part = -np.sum(gb2[max(shift, 0):n + min(shift, 0)] * x2[max(-shift, 0):n - max(shift, 0)], axis=1)
        rows.append(_band_row(part, shift))
    return np.stack(rows)


# ------------------------------------------------------ triangular solves

@nondiff_helper
def trans_code(trans):
    """solve_triangular's `trans` (0/'N', 1/'T', 2/'C') as 0, 1 or 2."""
    codes = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2, "n": 0, "t": 1, "c": 2}
    if trans not in codes:
        raise ValueError("srcgrad: solve_triangular's trans must be 0, 1, 2, 'N', 'T' or 'C', "
                         "not %r" % (trans,))
    return codes[trans]


def _as_matrix(v, b):
    """A right-hand side (or solution) as a stack of matrices: b is a single
    vector exactly when it is 1-d (SciPy's rule)."""
    return np.expand_dims(v, -1) if np.ndim(b) == 1 else v


def _triangle(m, lower, strict=False):
    """The lower (upper) triangle of each matrix of m; `strict` drops the diagonal."""
    if lower:
        return np.tril(m, -1 if strict else 0)
    return np.triu(m, 1 if strict else 0)


def _from_matrix(v, b):
    """The inverse of _as_matrix."""
    return np.squeeze(v, -1) if np.ndim(b) == 1 else v


def solve_triangular_adjoint_b(g, a, b, trans, lower, unit_diagonal):
    """x = op(T)^{-1} b, op = identity, transpose or conjugate transpose: the
    cotangent op(T)^{-H} g of b (before summing broadcast batch axes). With a
    1-d b and a stack a, g is a stack of vectors: solved as (..., n, 1)."""
    t = trans_code(trans)
    g2 = _as_matrix(g, b)
    if t == 0:
        gb = solve_tri(a, g2, 2, lower, unit_diagonal)
    elif t == 1:
        gb = conj(solve_tri(a, conj(g2), 0, lower, unit_diagonal))
    else:
        gb = solve_tri(a, g2, 0, lower, unit_diagonal)
    return _from_matrix(gb, b)


def solve_triangular_adjoint_a(gb, x, a, b, trans, lower, unit_diagonal):
    """The cotangent of a: op(T)bar = -gb x^H (Giles 2008, 2.3.1), mapped back
    through op, restricted to the triangle solve_triangular reads (without
    the diagonal when it is taken as unit)."""
    t = trans_code(trans)
    gb2, x2 = _as_matrix(gb, b), _as_matrix(x, b)
    if t == 0:
        ga = -np.matmul(gb2, mH(x2))
    elif t == 1:
        ga = -np.matmul(conj(x2), mT(gb2))
    else:
        ga = -np.matmul(x2, mH(gb2))
    return unbroadcast(_triangle(ga, lower, unit_diagonal), a)


# ----------------------------------------------------------- Cholesky

def cho_factor_adjoint(gc, c, lower):
    """cho_factor returns (c, lower): the factor in one triangle of c, and
    unspecified values in the other (SciPy). The rule reads the factor's
    triangle of c and of its cotangent, and applies Cholesky's rule (Murray
    2016; symmetric cotangent, as np.linalg.cholesky's rule)."""
    return cholesky_adjoint(_triangle(gc, lower), _triangle(c, lower), not lower)


def cholesky_scipy_adjoint(g, z, lower):
    """scipy.linalg.cholesky returns the upper factor unless `lower`."""
    return cholesky_adjoint(g, z, not lower)


@nondiff_helper
def as_flag(lower):
    """cho_factor's `lower` as one bool (batched cho_factor returns an array of flags)."""
    return bool(np.all(lower))


def cho_solve_adjoint_b(g, c_and_lower, b):
    """x = A^{-1} b with A = L L^H (lower) or U^H U: the cotangent of b is
    A^{-1} g (A is Hermitian), by two triangular solves on c's factor."""
    c, flag = c_and_lower
    lower = as_flag(flag)
    g2 = _as_matrix(g, b)
    if lower:
        return _from_matrix(solve_tri(c, solve_tri(c, g2, 0, True), 2, True), b)
    return _from_matrix(solve_tri(c, solve_tri(c, g2, 2, False), 0, False), b)


def cho_solve_adjoint_c(gb, x, c_and_lower, b):
    """The cotangent of (c, lower): with Abar = -gb x^H, A = L L^H gives
    Lbar = (Abar + Abar^H) L and A = U^H U gives Ubar = U (Abar + Abar^H), each
    on the factor's triangle; the flag gets none."""
    c, flag = c_and_lower
    lower = as_flag(flag)
    factor = _triangle(c, lower)        # c's other triangle holds unspecified values
    ga = -np.matmul(_as_matrix(gb, b), mH(_as_matrix(x, b)))
    s = ga + mH(ga)
    gc = np.matmul(s, factor) if lower else np.matmul(factor, s)
    return [unbroadcast(_triangle(gc, lower), c), None]


# ------------------------------------------------------------ general solves

_SYMMETRIC = ("sym", "symmetric", "her", "hermitian", "pos", "positive definite")


@nondiff_helper
def band_mask(a, assume_a):
    """The entries of each matrix that scipy.linalg.solve/inv read for the
    structure `assume_a` (a boolean mask; None: all). 'banded' is read over
    the bandwidth of a's nonzero entries."""
    n = np.shape(a)[-1]
    i, j = np.indices((n, n))
    if assume_a in ("diagonal",):
        return i == j
    if assume_a in ("tridiagonal",):
        return np.abs(i - j) <= 1
    if assume_a in ("upper triangular",):
        return j >= i
    if assume_a in ("lower triangular",):
        return i >= j
    if assume_a in ("banded",):
        nz = np.any(np.asarray(a) != 0, axis=tuple(range(np.ndim(a) - 2)))
        low = max(int(np.max((i - j)[nz], initial=0)), 0)
        up = max(int(np.max((j - i)[nz], initial=0)), 0)
        return (i - j <= low) & (j - i <= up)
    return None


def structured(a, assume_a, lower):
    """The matrix scipy.linalg.solve/inv work with for `assume_a`: the
    Hermitian matrix from the `lower` (else upper) triangle for 'sym', 'her',
    'pos'; the entries of the structure (zeros elsewhere) for the diagonal,
    banded and triangular kinds; a itself for 'gen' and None."""
    if assume_a in _SYMMETRIC:
        t = np.tril(a) if lower else np.triu(a)
        s = np.tril(a, -1) if lower else np.triu(a, 1)
        return t + (mH(s) if assume_a in ("her", "hermitian", "pos", "positive definite")
                    else mT(s))
    mask = band_mask(a, assume_a)
    if mask is None:
        return a
    return np.where(mask, a, 0.0)


def project_structure(ga, a, assume_a):
    """The cotangent of a from that of the structured matrix: its Hermitian
    part for the symmetric kinds (the derivative in the space of symmetric
    matrices, as the cholesky and eigh rules), the structure's entries for
    the others, ga for the general case; batch axes summed back."""
    if assume_a in _SYMMETRIC:
        return unbroadcast(0.5 * (ga + mH(ga)), a)
    mask = band_mask(a, assume_a)
    if mask is None:
        return unbroadcast(ga, a)
    return unbroadcast(np.where(mask, ga, 0.0), a)


def solve_scipy_adjoint_b(g, a, b, lower, assume_a, transposed):
    """x = A^{-1} b (A^{-T} b when `transposed`), A the structured a: the
    cotangent of b is A^{-H} g (when transposed, (A^{-T})^H g = conj(A^{-1} conj(g)))."""
    m = structured(a, assume_a, lower)
    if transposed:
        return conj(_solve(m, conj(g), b))
    return _solve(mH(m), g, b)


def _solve(m, v, b):
    """m^{-1} v with NumPy 2's vector rule for b (np.linalg.solve has a rule)."""
    if np.ndim(b) == 1:
        return np.squeeze(np.linalg.solve(m, np.expand_dims(v, -1)), -1)
    return np.linalg.solve(m, v)


def solve_scipy_adjoint_a(gb, x, a, b, assume_a, transposed):
    """Abar = -gb x^H (for `transposed`, of A^T: Abar = -conj(x) gb^T),
    projected on a's structure."""
    gb2, x2 = _as_matrix(gb, b), _as_matrix(x, b)
    if transposed:
        ga = -np.matmul(conj(x2), mT(gb2))
    else:
        ga = -np.matmul(gb2, mH(x2))
    return project_structure(ga, a, assume_a)


def inv_scipy_adjoint(g, z, a, assume_a):
    """Z = A^{-1}: Abar = -Z^H Zbar Z^H (Giles 2008, 2.2.3), projected on a's structure."""
    return project_structure(-np.matmul(np.matmul(mH(z), g), mH(z)), a, assume_a)


# ------------------------------------------------------------------ expm

def expm_adjoint(a, g):
    """The adjoint of the Fréchet derivative L(A, .) of expm at A, applied to
    g: L(A^H, g) (Al-Mohy & Higham 2009), read from the upper-right block of
    expm([[A^H, g], [0, A^H]]) (Higham 2008, (3.16))."""
    ah = mH(a)
    top = np.concatenate([ah, g], axis=-1)
    bottom = np.concatenate([np.zeros_like(ah + g), ah], axis=-1)
    n = np.shape(a)[-1]
    return expm_p(np.concatenate([top, bottom], axis=-2))[..., :n, n:]


# ----------------------------------------------------------------- sqrtm

def sqrtm_adjoint(z, g):
    """X = sqrtm(A), X X = A: X dX + dX X = dA, so Abar solves the Sylvester
    equation X^H Abar + Abar X^H = Xbar (Higham 2008, (6.5); autograd's rule)."""
    return sylvester(mH(z), mH(z), g)


# ------------------------------------------------------------------- LU

@nondiff_helper
def lu_check_square(a):
    """1 for square matrices; the LU rule is written for square a only."""
    if np.shape(a)[-1] != np.shape(a)[-2]:
        raise NotImplementedError("srcgrad: the derivative of scipy.linalg.lu is implemented for "
                                  "square matrices only, not shape %s" % (np.shape(a),))
    return 1


@nondiff_helper
def permutation_matrix(p, p_indices, like):
    """lu's permutation as a (stack of) matrix P with A = P L U: p itself, or
    for p_indices=True (A = L[p] U) the rows of the identity picked by p."""
    p = np.asarray(p)
    dtype = np.result_type(np.asarray(like).dtype, np.float32)
    if not p_indices:
        return p.astype(dtype)
    n = np.shape(p)[-1]
    return np.eye(n, dtype=dtype)[p]


@nondiff_helper
def lu_permutation_of(a):
    """The permutation matrix P of a = P L U (for permute_l=True, where lu
    returns P L and U only)."""
    return sl.lu(np.asarray(a))[0]


def lu_adjoint(g, z, a, permute_l, p_indices):
    """The cotangent of a in (P, L, U) = lu(a) (or (P L, U) with permute_l):
    with M = tril(L^H Lbar, -1) + triu(Ubar U^H), Abar = P L^{-H} M U^{-H}
    (square a; the permutation has no derivative, and L's unit diagonal none)."""
    if permute_l:
        P = lu_permutation_of(a)
        L = np.matmul(mT(P), z[0])
        U = z[1]
        gL = np.matmul(mT(P), g[0])
        gU = g[1]
    else:
        P = permutation_matrix(z[0], p_indices, a)
        L, U = z[1], z[2]
        gL, gU = g[1], g[2]
    m = np.tril(np.matmul(mH(L), gL), -1) + np.triu(np.matmul(gU, mH(U))) * lu_check_square(a)
    left = solve_tri(L, m, 2, True, True)                  # L^{-H} M
    right = mH(solve_tri(U, mH(left), 0, False))           # (L^{-H} M) U^{-H}
    return np.matmul(P, right)
