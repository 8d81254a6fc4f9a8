"""Adjoint rules for NumPy: linalg (see numpy_adjoints.py for the notation).

Products (vdot, inner, outer, tensordot, einsum, kron, cross), diagonals
(trace, diag, diagonal) and np.linalg (inv, solve, det, slogdet, cholesky,
eigh, eigvalsh, svd, svdvals, pinv, matrix_power, multi_dot and NumPy 2's
array-API spellings). np.linalg functions work on stacks of matrices (the
last two axes), and so do their rules. The run-time helpers are in
helpers_linalg.py, with each identity and its source.

Conventions. A parameter holding a sequence of arrays (einsum's
`*operands`, multi_dot's `arrays`) gets a list cotangent; a primitive
returning a tuple (eigh, svd, slogdet) reads `d[z][i]`, zeros for an unused
output. cholesky and eigh assume a symmetric input and return a symmetric
cotangent (autograd's cholesky, JAX, PyTorch): the derivative in the space
of symmetric matrices, not of NumPy's read of one triangle. eigh needs
distinct eigenvalues when its eigenvectors are used, svd distinct nonzero
singular values; pinv assumes constant (full) rank.

Complex values follow TF's convention (README, "Complex inputs"): a
product's cotangent uses the other operand's conjugate (as matmul's), the
matrix functions' identities hold with conjugate transposes (`mH`), and
eigh/cholesky return Hermitian cotangents.
"""
import numpy as np

from .helpers import matmul_adjoint_x, matmul_adjoint_y, unbroadcast
from .helpers_linalg import (cholesky_adjoint, cross_adjoint, det_adjoint, diag_adjoint,
                             diagonal_embed, eigh_adjoint, eigvalsh_adjoint, einsum_adjoint,
                             einsum_adjoint_tangent, einsum_adjoint_vjp, inner_adjoint,
                             kron_adjoint, matrix_power_adjoint, mH, mT, multi_dot_adjoint,
                             pinv_adjoint, slogdet_adjoint, solve_adjoint_a, solve_adjoint_rhs,
                             svd_rule_adjoint, svd_values_adjoint, tensordot_adjoint,
                             trace_adjoint, vecdot_adjoint)
from .helpers_math import conj
from .registry import register_adjoint
from .tangents import register_linear, register_tangent

# ------------------------------------------------------------------ products


@register_adjoint(np.vdot)
def vdot(z, a, b):
    """vdot(a, b) = sum(conj(ravel(a)) * ravel(b)): antilinear in a, so
    d a = conj(g) b; d b = g a."""
    d[a] = np.reshape(conj(d[z]) * b, np.shape(a))
    d[b] = np.reshape(d[z] * a, np.shape(b))


@register_adjoint(np.inner)
def inner(z, a, b):
    """Contraction of the last axes (a 0-d operand multiplies)."""
    d[a] = inner_adjoint(d[z], a, conj(b), True)
    d[b] = inner_adjoint(d[z], conj(a), b, False)


@register_adjoint(np.outer)
def outer(z, a, b, out=None):
    """z = ravel(a) ravel(b)^T: d a = g ravel(b), d b = g^T ravel(a)."""
    d[a] = np.reshape(np.matmul(d[z], np.ravel(conj(b))), np.shape(a))
    d[b] = np.reshape(np.matmul(np.ravel(conj(a)), d[z]), np.shape(b))


@register_adjoint(np.linalg.outer)
def linalg_outer(z, x1, x2):
    """Outer product of two vectors (array API): d x1 = g x2, d x2 = g^T x1."""
    d[x1] = np.matmul(d[z], conj(x2))
    d[x2] = np.matmul(conj(x1), d[z])


@register_adjoint(np.tensordot)
def tensordot(z, a, b, axes=2):
    """Every `axes` form (int, pair of ints, pair of sequences)."""
    d[a] = tensordot_adjoint(d[z], a, conj(b), axes, True)
    d[b] = tensordot_adjoint(d[z], conj(a), b, axes, False)


@register_adjoint(np.linalg.tensordot)
def linalg_tensordot(z, x1, x2, axes=2):
    """The array-API spelling of np.tensordot (same `axes` forms)."""
    d[x1] = tensordot_adjoint(d[z], x1, conj(x2), axes, True)
    d[x2] = tensordot_adjoint(d[z], conj(x1), x2, axes, False)


@register_adjoint(np.einsum)
def einsum(z, *operands, out=None, optimize=False, dtype=None, order="K", casting="safe"):
    """einsum(subscripts, *ops) (explicit or implicit output, ellipsis,
    repeated labels) and the interleaved form einsum(op0, sublist0, ...):
    each operand's cotangent is one einsum of g with the others
    (helpers_linalg.einsum_adjoint)."""
    d[operands] = einsum_adjoint(d[z], operands)


@register_adjoint(einsum_adjoint)
def einsum_adjoint_(z, g, operands):
    """einsum's adjoint is multilinear in g and the operands (each entry one
    einsum): its VJP differentiates each entry's einsum the same way
    (helpers_linalg.einsum_adjoint_vjp). A primitive here, so that
    second-order code calls it rather than compiling its body (a third
    derivative, which would compile einsum_adjoint_vjp, is refused with
    UnsupportedSyntaxError)."""
    d[g] = einsum_adjoint_vjp(d[z][:], g, operands, True)
    d[operands] = einsum_adjoint_vjp(d[z][:], g, operands, False)


@register_tangent(einsum_adjoint)
def einsum_adjoint_tangent_(z, g, operands):
    t[z] = einsum_adjoint_tangent(t[g], t[operands], g, operands)


register_linear(einsum_adjoint_tangent, (0, 1))


@register_adjoint(np.linalg.matmul)
def linalg_matmul(z, x1, x2):
    """The array-API spelling of np.matmul (Giles 2008, 2.2.2)."""
    d[x1] = matmul_adjoint_x(d[z], x1, x2)
    d[x2] = matmul_adjoint_y(d[z], x1, x2)


@register_adjoint(np.linalg.vecdot)
def linalg_vecdot(z, x1, x2, axis=-1):
    """z = sum(conj(x1) * x2, axis), broadcasting: d x1 = conj(g) x2, d x2 = g x1."""
    d[x1] = vecdot_adjoint(conj(d[z]), x1, x2, axis, True)
    d[x2] = vecdot_adjoint(d[z], x1, x2, axis, False)


@register_adjoint(np.vecdot)
def vecdot(z, x1, x2, out=None, axis=-1, keepdims=False, casting="same_kind", order="K",
           dtype=None, subok=True, signature=None, axes=None):
    """The vecdot ufunc: sum(conj(x1) * x2, axis)."""
    d[x1] = vecdot_adjoint(conj(d[z]), x1, x2, axis, True, keepdims, axes)
    d[x2] = vecdot_adjoint(d[z], x1, x2, axis, False, keepdims, axes)


@register_adjoint(np.kron)
def kron(z, a, b):
    """kron(a, b)[i * sb + j] = a[i] b[j] per axis: g regrouped by factor and contracted with
    the other one."""
    d[a] = kron_adjoint(d[z], a, conj(b), True)
    d[b] = kron_adjoint(d[z], conj(a), b, False)


@register_adjoint(np.cross)
def cross(z, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """g . (a x b) = a . (b x g) = b . (g x a) (3-vectors)."""
    d[a] = cross_adjoint(d[z], a, conj(b), axisa, axisb, axisc, axis, True)
    d[b] = cross_adjoint(d[z], conj(a), b, axisa, axisb, axisc, axis, False)


@register_adjoint(np.linalg.cross)
def linalg_cross(z, x1, x2, axis=-1):
    """Cross product of 3-vectors along `axis` (array API)."""
    d[x1] = cross_adjoint(d[z], x1, conj(x2), -1, -1, -1, axis, True)
    d[x2] = cross_adjoint(d[z], conj(x1), x2, -1, -1, -1, axis, False)


# ----------------------------------------------------------------- diagonals


@register_adjoint(np.trace)
def trace(z, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """d tr(A) = tr(dA): the cotangent on the traced diagonal."""
    d[a] = trace_adjoint(d[z], a, offset, axis1, axis2)


@register_adjoint(np.linalg.trace)
def linalg_trace(z, x, offset=0, dtype=None):
    """Trace over the last two axes (array API)."""
    d[x] = trace_adjoint(d[z], x, offset, -2, -1)


@register_adjoint(np.diagonal)
def diagonal(z, a, offset=0, axis1=0, axis2=1):
    """The cotangent is written on the diagonal read (offset, axis1, axis2), 0 elsewhere."""
    d[a] = diagonal_embed(d[z], a, offset, axis1, axis2)


@register_adjoint(np.linalg.diagonal)
def linalg_diagonal(z, x, offset=0):
    """The diagonal of the last two axes (array API)."""
    d[x] = diagonal_embed(d[z], x, offset, -2, -1)


@register_adjoint(diagonal_embed)
def diagonal_embed_(z, g, x, offset=0, axis1=0, axis2=1):
    """diagonal_embed is linear in g; its adjoint reads the diagonal back."""
    d[g] = unbroadcast(np.diagonal(d[z], offset, axis1, axis2), g)


@register_adjoint(np.diag)
def diag(z, v, k=0):
    """1-d v: builds a matrix (adjoint: its k-th diagonal); 2-d v: reads the
    k-th diagonal (adjoint: that diagonal of zeros shaped like v)."""
    d[v] = diag_adjoint(d[z], v, k)


@register_adjoint(np.matrix_transpose)
def matrix_transpose(z, x):
    """Swap of the last two axes: the cotangent is swapped back."""
    d[x] = mT(d[z])


@register_adjoint(np.linalg.matrix_transpose)
def linalg_matrix_transpose(z, x):
    """Swap of the last two axes: the cotangent is swapped back."""
    d[x] = mT(d[z])


# ----------------------------------------------------------------- np.linalg


@register_adjoint(np.linalg.inv)
def inv(z, a):
    """Z = A^{-1}: dZ = -Z dA Z, so Abar = -Z^H Zbar Z^H (Giles 2008, 2.2.3)."""
    d[a] = -np.matmul(np.matmul(mH(z), d[z]), mH(z))


@register_adjoint(np.linalg.solve)
def solve(z, a, b):
    """X = A^{-1} B: Bbar = A^{-H} Xbar, Abar = -Bbar X^H (Giles 2008,
    2.3.1). b is a (stacked) vector only when 1-d (NumPy 2); batch axes
    broadcast and are summed back."""
    gb = solve_adjoint_rhs(d[z], a, b)
    d[a] = solve_adjoint_a(gb, z, a, b)
    d[b] = unbroadcast(gb, b)


@register_adjoint(np.linalg.det)
def det(z, a):
    """d det A = det A tr(A^{-1} dA): Abar = g conj(det A) A^{-H} (Giles 2008, 2.2.4)."""
    d[a] = det_adjoint(d[z], z, a)


@register_adjoint(np.linalg.slogdet)
def slogdet(z, a):
    """(sign, log|det A|): d log|det A| = Re tr(A^{-1} dA); the sign has no
    derivative for real A, and for complex A (a phase) d sign =
    sign i Im tr(A^{-1} dA)."""
    d[a] = slogdet_adjoint(d[z][0], d[z][1], z[0], a)


@register_adjoint(np.linalg.cholesky)
def cholesky(z, a, upper=False):
    """A = L L^T (Murray 2016), symmetric cotangent."""
    d[a] = cholesky_adjoint(d[z], z, upper)


@register_adjoint(np.linalg.eigh)
def eigh(z, a, UPLO="L"):
    """(w, V) of a symmetric A: Abar = V (diag(wbar) + F o (V^T Vbar)) V^T,
    F_ij = 1/(w_j - w_i), symmetrized (autograd, JAX); Hermitian A: with
    V^H (Boeddeker et al. 2017)."""
    d[a] = eigh_adjoint(d[z][0], d[z][1], z[0], z[1])


@register_adjoint(np.linalg.eigvalsh)
def eigvalsh(z, a, UPLO="L"):
    """Eigenvalues of a symmetric (Hermitian) A: Abar = V diag(wbar) V^H
    (eigenvectors recomputed)."""
    d[a] = eigvalsh_adjoint(d[z], a, UPLO)


@register_adjoint(np.linalg.svd)
def svd(z, a, full_matrices=True, compute_uv=True, hermitian=False):
    """(U, s, Vt), Townsend 2016 (complex A: with conjugate transposes and a
    phase term, Wan & Zhang 2019); compute_uv=False: s alone,
    Abar = U diag(sbar) V^H. full_matrices=True needs zero cotangents on the
    extra columns of U / rows of Vt when A is not square."""
    d[a] = svd_rule_adjoint(d[z][:], z, a, full_matrices, compute_uv)


@register_adjoint(np.linalg.svdvals)
def svdvals(z, x):
    """Singular values: Abar = U diag(sbar) V^H (factors recomputed)."""
    d[x] = svd_values_adjoint(d[z], x)


@register_adjoint(np.linalg.pinv)
def pinv(z, a, rcond=None, hermitian=False, rtol=None):
    """Golub & Pereyra 1973 (constant rank)."""
    d[a] = pinv_adjoint(d[z], z, a)


@register_adjoint(np.linalg.matrix_power)
def matrix_power(z, a, n):
    """A^n: Abar = sum_k (A^H)^k Zbar (A^H)^(n-1-k); n < 0 through inv."""
    d[a] = matrix_power_adjoint(d[z], a, n)


@register_adjoint(np.linalg.multi_dot)
def multi_dot(z, arrays, out=None):
    """A0 @ ... @ An: each factor gets L^H g R^H (matmul's rule)."""
    d[arrays] = multi_dot_adjoint(d[z], arrays)
