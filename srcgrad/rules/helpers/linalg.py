"""Run-time helpers of np.linalg's rules (rules/numpy/linalg.py): diagonals,
solves, determinants, Cholesky, eigendecompositions, SVD, pseudo-inverse,
matrix powers and products of several matrices, eig, QR and least squares.

Matrices are stacks in the last two axes. Constants (identity matrices,
masks) take the cotangent's dtype, so float32 in gives float32 out. Complex
matrices follow TF's convention (README, "Complex inputs"): the cotangent of
a linear map is its conjugate transpose applied to g, so the real identities
hold with every transpose of a matrix read as the conjugate transpose (`mH`,
which is `mT` for real values); svd and slogdet have an extra term for
complex values (their phases).

Sources: Giles, "An extended collection of matrix derivative results for
forward and reverse mode algorithmic differentiation" (2008); Murray,
"Differentiation of the Cholesky decomposition" (2016); Townsend,
"Differentiating the singular value decomposition" (2016); Seeger et al.,
"Auto-differentiating linear algebra" (2017); Boeddeker et al., "On the
computation of complex-valued gradients with application to statistically
optimum beamforming" (arXiv:1701.00392, 2017) for eig; Walter & Lehmann,
"Algorithmic differentiation of linear algebra functions with application
in optimum experimental design" (2018) and Liao et al., "Differentiable
programming tensor networks" (2019) for qr; Golub & Pereyra (1973) for the
pseudo-inverse and lstsq; autograd's numpy_vjps.py and linalg.py for the
NumPy conventions (batched matrices, unused outputs).
"""
import numpy as np

from ...runtime import nondiff_helper, primitive
from .broadcast import unbroadcast
from .complex import conj, inexact_dtype, real_if_real, real_part


def mT(x):
    """Transpose of the last two axes (a stack of matrices)."""
    return np.swapaxes(x, -1, -2)


def mH(x):
    """Conjugate transpose of the last two axes (mT for real x)."""
    return np.swapaxes(conj(x), -1, -2)


# ------------------------------------------------------------------ constants

@nondiff_helper
def eye_like(x, n=None):
    """The n x n identity (n: x's last axis) in x's floating dtype."""
    if n is None:
        n = np.shape(x)[-1]
    return np.eye(n, dtype=inexact_dtype(x))


@nondiff_helper
def _eye_bool(w):
    n = np.shape(w)[-1]
    return np.eye(n, dtype=bool)


def off_diagonal_inverse_gaps(w, squared=False):
    """F[..., i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it (with
    `squared`, 1 / (w_j^2 - w_i^2)): the matrix of eigenvalue (squared
    singular value) gaps of the eigh and svd rules. Written with ufuncs and
    np.where, so it is differentiated again (second derivatives)."""
    if squared:
        w = w * w
    diff = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    eye = _eye_bool(w)
    return np.where(eye, 0.0, 1.0 / np.where(eye, 1.0, diff))


# ------------------------------------------------------------------ diagonals

def _diag_positions(shape, offset, axis1, axis2):
    ndim = len(shape)
    a1, a2 = axis1 % ndim, axis2 % ndim
    n1, n2 = shape[a1], shape[a2]
    if offset >= 0:
        length = max(0, min(n1, n2 - offset))
        rows, cols = np.arange(length), np.arange(length) + offset
    else:
        length = max(0, min(n1 + offset, n2))
        rows, cols = np.arange(length) - offset, np.arange(length)
    return a1, a2, rows, cols


@primitive
def diagonal_embed(g, x, offset=0, axis1=0, axis2=1):
    """The adjoint of np.diagonal(x, offset, axis1, axis2): zeros shaped like
    `x` with `g` (shape: x's other axes + (diagonal length,), broadcast)
    written on that diagonal. Linear in g; its rule is np.diagonal."""
    shape = np.shape(x)
    out = np.zeros(shape, dtype=inexact_dtype(g, x))
    a1, a2, rows, cols = _diag_positions(shape, offset, axis1, axis2)
    view = np.moveaxis(out, (a1, a2), (-2, -1))
    view[..., rows, cols] = g
    return out


def trace_adjoint(g, x, offset, axis1, axis2):
    """d trace(x)/dx: the cotangent on the traced diagonal, 0 elsewhere."""
    return diagonal_embed(np.expand_dims(g, -1), x, offset, axis1, axis2)


def diag_adjoint(g, v, k):
    """np.diag(v, k): builds a matrix from a 1-d v (adjoint: read the k-th
    diagonal of g back) or reads the k-th diagonal of a 2-d v (adjoint: put g
    on that diagonal of zeros shaped like v; not np.diag(g, k), which is
    square)."""
    if np.ndim(v) == 1:
        return np.diagonal(g, k)
    return diagonal_embed(g, v, k, 0, 1)


# ---------------------------------------------------- solves and determinants

def solve_adjoint_rhs(g, a, b):
    """x = solve(a, b) (b a vector iff it is 1-d, NumPy 2): the cotangent of
    b before summing broadcast batch axes, solve(a^H, g) (Giles 2008, 2.3.1)."""
    if np.ndim(b) == 1:
        return np.squeeze(np.linalg.solve(mH(a), np.expand_dims(g, -1)), -1)
    return np.linalg.solve(mH(a), g)


def solve_adjoint_a(gb, x, a, b):
    """The cotangent of a in x = solve(a, b): -gb x^H, gb = solve(a^H, g)."""
    if np.ndim(b) == 1:
        return unbroadcast(-np.expand_dims(gb, -1) * np.expand_dims(conj(x), -2), a)
    return unbroadcast(-np.matmul(gb, mH(x)), a)


def as_column(v, b):
    """`v` as a column (trailing axis of length 1) when the right-hand side
    `b` of np.linalg.solve is a vector, else `v` (linear in `v`)."""
    return np.expand_dims(v, -1) if np.ndim(b) == 1 else v


def from_column(r, b):
    """Undo `as_column` (linear in `r`)."""
    return r[..., 0] if np.ndim(b) == 1 else r


def det_adjoint(g, z, a):
    """d det(A) = det(A) tr(A^{-1} dA): the cotangent g conj(det A) A^{-H}
    (Giles 2008, 2.2.4), per matrix of a stack."""
    return np.expand_dims(g * conj(z), (-2, -1)) * mH(np.linalg.inv(a))


def slogdet_adjoint(g_sign, g_logdet, sign, a):
    """d log|det A| = Re tr(A^{-1} dA): the cotangent g A^{-H}. The sign is
    piecewise constant for real A; for complex A it is the phase
    det/|det|, d sign = sign i Im tr(A^{-1} dA), which adds
    -Im(conj(g_sign) sign) i A^{-H}."""
    inv_h = mH(np.linalg.inv(a))
    total = np.expand_dims(real_part(g_logdet), (-2, -1)) * inv_h
    if _is_complex_value(sign):
        phase = -np.imag(conj(g_sign) * sign) * 1j
        total = total + np.expand_dims(phase, (-2, -1)) * inv_h
    return total


@nondiff_helper
def _is_complex_value(x):
    return np.iscomplexobj(x)


# ------------------------------------------------------------- decompositions

@nondiff_helper
def _phi_mask(x):
    """Lower triangle with the diagonal halved (Murray 2016's Phi)."""
    n = np.shape(x)[-1]
    return np.tril(np.ones((n, n), dtype=inexact_dtype(x))) - 0.5 * np.eye(n, dtype=inexact_dtype(x))


def cholesky_adjoint(g, z, upper):
    """A = L L^T. Murray 2016 (eq. 10), with Phi = lower triangle, diagonal
    halved: S = L^{-T} Phi(L^T Lbar) L^{-1}, returned symmetrized,
    (S + S^T) / 2: the cotangent in the space of symmetric matrices (as
    autograd, JAX and PyTorch). `upper`: z = U = L^T, so Lbar = Ubar^T.
    Complex (Hermitian) A = L L^H: the same with conjugate transposes; the
    Hermitian part discards the imaginary part of the (real) diagonal's.
    Triangular solves are done by np.linalg.solve, which batches and has a
    rule of its own."""
    L = mH(z) if upper else z
    gL = mH(g) if upper else g
    P = np.matmul(mH(L), gL) * _phi_mask(L)
    Y = np.linalg.solve(mH(L), P)                  # L^{-H} P
    S = mH(np.linalg.solve(mH(L), mH(Y)))          # L^{-H} P L^{-1}
    return 0.5 * (S + mH(S))


@nondiff_helper
def _any_nonzero(g):
    return bool(np.any(g))


def eigh_adjoint(gw, gv, w, v):
    """A = V diag(w) V^T (symmetric A). dw = diag(V^T dA V) and
    dV = V (F o (V^T dA V)), F_ij = 1/(w_j - w_i) off the diagonal
    (Giles 2008, 3.1; autograd's and JAX's eigh rules), so
    Abar = V (diag(wbar) + F o (V^T Vbar)) V^T, returned symmetrized. The
    eigenvector term is skipped when Vbar is zero (only eigenvalues used),
    so repeated eigenvalues then give no NaN. A complex Hermitian A: the
    same with conjugate transposes (the eigenvalues are real), returned
    Hermitian (Boeddeker et al. 2017); the phase of each eigenvector is
    arbitrary, so a loss must not depend on it."""
    inner = np.expand_dims(real_part(gw), -2) * eye_like(w)
    if _any_nonzero(gv):
        inner = inner + off_diagonal_inverse_gaps(w) * np.matmul(mH(v), gv)
    abar = np.matmul(np.matmul(v, inner), mH(v))
    return 0.5 * (abar + mH(abar))


def svd_adjoint(gu, gs, gvt, u, s, vt, full_matrices):
    """A = U diag(s) V^H, thin (k = min(m, n)), distinct singular values.
    Townsend 2016 (and autograd's grad_svd): with F_ij = 1/(s_j^2 - s_i^2)
    off the diagonal, J = F o (U^H Ubar - Ubar^H U),
    K = F o (V^H Vbar - Vbar^H V):
    Abar = U (J S + diag(sbar) + S K + i Im(diag(U^H Ubar)) S^{-1}) V^H
           + (I - U U^H) Ubar S^{-1} V^H + U S^{-1} Vbar^H (I - V V^H).
    The imaginary term exists for complex A only: the common phase of a
    pair (u_i, v_i) is arbitrary, and a loss must not depend on it; its
    gauge is taken in U (as JAX's svd JVP; Wan & Zhang, "Automatic
    differentiation for complex valued SVD", 2019, derive the same).
    With full_matrices=True the extra columns of U (rows of Vt) are an
    arbitrary basis: their cotangents must be zero."""
    m, n = np.shape(u)[-2], np.shape(vt)[-1]
    k = min(m, n)
    if full_matrices and m != n:
        if _any_nonzero(gu[..., :, k:]) or _any_nonzero(gvt[..., k:, :]):
            raise NotImplementedError(
                "the gradient of np.linalg.svd(full_matrices=True) through the extra columns of U "
                "(rows of Vt) is not defined: use full_matrices=False")
        u, gu = u[..., :, :k], gu[..., :, :k]
        vt, gvt = vt[..., :k, :], gvt[..., :k, :]
    v, gv = mH(vt), mH(gvt)
    F = off_diagonal_inverse_gaps(s, squared=True)
    uhgu = np.matmul(mH(u), gu)
    vhgv = np.matmul(mH(v), gv)
    s_row = np.expand_dims(s, -2)            # scales columns
    s_col = np.expand_dims(s, -1)            # scales rows
    core = (F * (uhgu - mH(uhgu))) * s_row + np.expand_dims(real_part(gs), -2) * eye_like(s) \
        + s_col * (F * (vhgv - mH(vhgv)))
    if _is_complex_value(uhgu):
        phase = 1j * np.imag(np.diagonal(uhgu, axis1=-2, axis2=-1)) / s
        core = core + np.expand_dims(phase, -2) * eye_like(s)
    abar = np.matmul(np.matmul(u, core), vt)
    if m > k:
        proj = eye_like(u, m) - np.matmul(u, mH(u))
        abar = abar + np.matmul(np.matmul(proj, gu) / s_row, vt)
    if n > k:
        proj = eye_like(v, n) - np.matmul(v, mH(v))
        abar = abar + np.matmul(u / s_row, np.matmul(mH(gv), proj))
    return abar


def svd_values_adjoint(g, a):
    """np.linalg.svd(a, compute_uv=False): ds = Re diag(U^H dA V), so
    Abar = U diag(sbar) V^H (the factors are recomputed)."""
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.matmul(u * np.expand_dims(real_part(g), -2), vt)


def svd_rule_adjoint(g, z, a, full_matrices, compute_uv):
    """np.linalg.svd's rule: (U, s, Vt) outputs, or s alone (compute_uv=False)."""
    if not compute_uv:
        return svd_values_adjoint(g, a)
    return svd_adjoint(g[0], g[1], g[2], z[0], z[1], z[2], full_matrices)


def eigvalsh_adjoint(g, a, UPLO):
    """Eigenvalues of a symmetric (Hermitian) A: Abar = V diag(wbar) V^H,
    symmetrized (the eigenvectors are recomputed)."""
    w, v = np.linalg.eigh(a, UPLO)
    return eigh_adjoint(g, 0.0, w, v)


def eig_adjoint(gw, gv, w, v, a):
    """A = V diag(w) V^{-1} (general square A, distinct eigenvalues;
    NumPy normalizes each eigenvector to unit 2-norm, with an arbitrary
    phase a loss must not depend on). With M = V^{-1} dA V,
    dw = diag(M) and dV = V (F o M) + V diag(c), F_ij = 1/(w_j - w_i) off
    the diagonal, c_j = -Re(v_j^H (V (F o M))_j) keeping |v_j| = 1. In TF's
    convention this gives (Boeddeker et al. 2017; autograd's grad_eig is
    the conjugate):
        Abar = V^{-H} (diag(wbar) + conj(F) o (V^H Vt)) V^H,
        Vt = Vbar - V Re(diag(V^H Vbar)),
    real part for a real A. The eigenvector term is skipped when Vbar is
    zero (eigenvalues only)."""
    inner = np.expand_dims(gw, -2) * eye_like(w)
    if _any_nonzero(gv):
        vhgv = np.matmul(mH(v), gv)
        norm_term = np.real(np.diagonal(vhgv, axis1=-2, axis2=-1))
        vt = gv - v * np.expand_dims(norm_term, -2)
        inner = inner + conj(off_diagonal_inverse_gaps(w)) * np.matmul(mH(v), vt)
    abar = np.linalg.solve(mH(v), np.matmul(inner, mH(v)))    # V^{-H} inner V^H
    return real_if_real(abar, a)


def eigvals_adjoint(g, a):
    """Eigenvalues of a general A: Abar = V^{-H} diag(wbar) V^H (real part
    for a real A; the eigenvectors are recomputed)."""
    w, v = np.linalg.eig(a)
    return eig_adjoint(g, 0.0, w, v, a)


def eigvals_tangent(ta, a):
    """dw = diag(V^{-1} dA V) (the eigenvectors are recomputed)."""
    w, v = np.linalg.eig(a)
    return np.diagonal(np.linalg.solve(v, np.matmul(ta, v)), axis1=-2, axis2=-1)


def _solve_right_h(b, r):
    """b R^{-H} for an invertible (triangular) R: solve(R, b^H)^H."""
    return mH(np.linalg.solve(r, mH(b)))


def _copyltu_h(m):
    """The Hermitian matrix with m's strictly lower triangle below the
    diagonal, its conjugate transpose above, and Re(diag m) on it."""
    low = np.tril(m, -1)
    return low + mH(low) + np.real(m) * eye_like(m)


def qr_square_adjoint(gq, gr, q, r):
    """A = Q R with m >= n (Q m x n with orthonormal columns, R n x n upper
    triangular, invertible, with real diagonal as LAPACK returns it):
    Abar = (Qbar + Q copyltu(M)) R^{-H}, M = R Rbar^H - Qbar^H Q, where
    copyltu builds a Hermitian matrix from M's lower triangle (Walter &
    Lehmann 2018; Seeger et al. 2017; with conjugate transposes and the
    real part of the diagonal for complex A)."""
    m = np.matmul(r, mH(gr)) - np.matmul(mH(gq), q)
    return _solve_right_h(gq + np.matmul(q, _copyltu_h(m)), r)


def qr_adjoint(gq, gr, q, r):
    """Reduced QR of any A of full rank. m >= n: qr_square_adjoint. m < n:
    A = [X | Y], R = [U | V] with X = Q U the QR of the square part and
    Y = Q V; then Ybar = Q Vbar and X's cotangent is the square one with
    Qbar + Y Vbar^H (Liao et al. 2019; PyTorch's linalg_qr_backward)."""
    m, n = np.shape(q)[-2], np.shape(r)[-1]
    if m >= n:
        return qr_square_adjoint(gq, gr, q, r)
    u, gu = r[..., :, :m], gr[..., :, :m]
    v, gv = r[..., :, m:], gr[..., :, m:]
    y = np.matmul(q, v)
    gx = qr_square_adjoint(gq + np.matmul(y, mH(gv)), gu, q, u)
    return np.concatenate([gx, np.matmul(q, gv)], axis=-1)


def qr_rule_adjoint(g, z, a, mode):
    """np.linalg.qr's rule: mode 'reduced' (Q, R); 'complete' (Q m x m,
    defined when m <= n or when Qbar vanishes on Q's extra columns, an
    arbitrary basis of the complement); 'r' (R alone, Q recomputed). The
    mode 'raw' is refused."""
    if mode == "raw":
        raise NotImplementedError("np.linalg.qr(mode='raw') has no rule: use 'reduced', "
                                  "'complete' or 'r'")
    if mode == "r":
        q = np.linalg.qr(a)[0]
        return qr_adjoint(np.zeros_like(q), g, q, z)
    gq, gr, q, r = g[0], g[1], z[0], z[1]
    m, n = np.shape(q)[-2], np.shape(r)[-1]
    if mode == "complete" and m > n:
        if _any_nonzero(gq[..., :, n:]):
            raise NotImplementedError(
                "the gradient of np.linalg.qr(mode='complete') through the extra columns of Q "
                "(an arbitrary basis of the orthogonal complement) is not defined: use "
                "mode='reduced'")
        q, gq, r, gr = q[..., :, :n], gq[..., :, :n], r[..., :n, :], gr[..., :n, :]
    return qr_adjoint(gq, gr, q, r)


# ------------------------------------------------------ inverses and products

def pinv_adjoint(g, z, a):
    """Z = pinv(A), for A of constant (here: full) rank (Golub & Pereyra 1973,
    Thm 4.3): dZ = -Z dA Z + Z Z^H dA^H (I - A Z) + (I - Z A) dA^H Z^H Z, so
    Abar = -Z^H G Z^H + (I - A Z) G^H Z Z^H + Z^H Z G^H (I - Z A)."""
    zt, gt = mH(z), mH(g)
    m, n = np.shape(a)[-2], np.shape(a)[-1]
    term1 = -np.matmul(np.matmul(zt, g), zt)
    term2 = np.matmul(np.matmul(eye_like(a, m) - np.matmul(a, z), gt), np.matmul(z, zt))
    term3 = np.matmul(np.matmul(zt, z), np.matmul(gt, eye_like(a, n) - np.matmul(z, a)))
    return term1 + term2 + term3


def matrix_power_adjoint(g, a, n):
    """Z = A^n (n >= 0): dZ = sum_k A^k dA A^(n-1-k), so
    Abar = sum_k (A^H)^k G (A^H)^(n-1-k). For n < 0, Z = B^|n| with
    B = inv(A), and Abar = -B^H Bbar B^H (the inverse's rule)."""
    if n < 0:
        b = np.linalg.inv(a)
        gb = matrix_power_adjoint(g, b, -n)
        return -np.matmul(np.matmul(mH(b), gb), mH(b))
    if n == 0:
        return np.zeros_like(g)
    at = mH(a)
    powers = [None] * n
    p = None
    for k in range(n):
        powers[k] = p                       # (A^T)^k, None for the identity
        p = at if p is None else np.matmul(p, at)
    total = None
    for k in range(n):
        left, right = powers[k], powers[n - 1 - k]
        term = g if left is None else np.matmul(left, g)
        term = term if right is None else np.matmul(term, right)
        total = term if total is None else total + term
    return total


def multi_dot_adjoint(g, arrays):
    """multi_dot(A0, ..., An) = A0 @ ... @ An (the first may be 1-d, a row;
    the last 1-d, a column): the cotangent of Ai is L^H g R^H with L and R
    the products to its left and right (matmul's rule, Giles 2008, 2.2.2),
    from prefix and suffix products."""
    n = len(arrays)
    mats = list(arrays)
    g2 = g
    if np.ndim(mats[-1]) == 1:
        mats[-1] = np.expand_dims(mats[-1], -1)
        g2 = np.expand_dims(g2, -1)
    if np.ndim(mats[0]) == 1:
        mats[0] = np.expand_dims(mats[0], 0)
        g2 = np.expand_dims(g2, 0)
    lefts = [None] * n                  # lefts[i] = A0 ... A(i-1)
    for i in range(1, n):
        lefts[i] = mats[0] if i == 1 else np.matmul(lefts[i - 1], mats[i - 1])
    rights = [None] * n                 # rights[i] = A(i+1) ... An
    for i in range(n - 2, -1, -1):
        rights[i] = mats[n - 1] if i == n - 2 else np.matmul(mats[i + 1], rights[i + 1])
    grads = []
    for i in range(n):
        gi = g2 if lefts[i] is None else np.matmul(mH(lefts[i]), g2)
        gi = gi if rights[i] is None else np.matmul(gi, mH(rights[i]))
        grads.append(np.reshape(gi, np.shape(arrays[i])))
    return grads


@nondiff_helper
def _check_full_rank(a, rank):
    if int(rank) < min(np.shape(a)[-2:]):
        raise NotImplementedError(
            "np.linalg.lstsq: the gradient is implemented for a matrix of full rank "
            "(rank %d < %d here; rcond truncated it, or it is singular)"
            % (int(rank), min(np.shape(a)[-2:])))


@nondiff_helper
def _has_residuals(res):
    return np.size(res) > 0


def lstsq_adjoint(g, z, a, b, wrt_a):
    """np.linalg.lstsq(a, b) -> (x, residuals, rank, s) for a of full rank
    (overdetermined: least squares; underdetermined: minimum norm):
    x = pinv(a) b, so bbar = pinv(a)^H xbar and abar is pinv's cotangent
    (Golub & Pereyra 1973) for pinvbar = xbar b^H. The residuals
    r_j = |b_j - a x_j|^2 (m > n) are stationary in x (normal equations),
    so dr_j = 2 Re(e_j^H (db_j - da x_j)), e = b - a x: bbar += 2 rbar e,
    abar -= 2 (e rbar) x^H. The singular values s: abar += U diag(sbar) V^H.
    A 1-d b is a column."""
    gx, gres, gs = g[0], real_part(g[1]), real_part(g[3])
    x, res, rank = z[0], z[1], z[2]
    _check_full_rank(a, rank)
    b2 = np.expand_dims(b, -1) if np.ndim(b) == 1 else b
    x2 = np.expand_dims(x, -1) if np.ndim(b) == 1 else x
    gx2 = np.expand_dims(gx, -1) if np.ndim(b) == 1 else gx
    p = np.linalg.pinv(a)
    if not wrt_a:
        gb = np.matmul(mH(p), gx2)
        if _has_residuals(res):
            gb = gb + 2.0 * (b2 - np.matmul(a, x2)) * gres
        return real_if_real(gb[..., 0] if np.ndim(b) == 1 else gb, b)
    ga = pinv_adjoint(np.matmul(gx2, mH(b2)), p, a)
    if _has_residuals(res):
        ga = ga - 2.0 * np.matmul((b2 - np.matmul(a, x2)) * gres, mH(x2))
    ga = ga + svd_values_adjoint(gs, a)
    return real_if_real(ga, a)
