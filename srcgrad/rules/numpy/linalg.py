"""Rules for NumPy's linear algebra: products (matmul, dot, vdot, inner,
outer, the binary ufuncs' outer methods np.add/subtract/multiply/divide.outer,
tensordot, einsum, kron, cross, vecdot), 1-d convolution and
correlation (convolve, correlate), diagonals (trace, diag,
diagonal) and np.linalg (inv, solve, det, slogdet, cholesky, eigh,
eigvalsh, eig, eigvals, svd, svdvals, pinv, lstsq, qr, matrix_power,
multi_dot and NumPy 2's array-API spellings).

The notation is rules/numpy/__init__.py's.

The identities are the standard ones (Giles, "An extended collection of
matrix derivative results for forward and reverse mode AD", 2008; Murray
2016 for cholesky; Townsend 2016 for svd; Boeddeker et al. 2017 for eig;
Walter & Lehmann 2018 and Liao et al. 2019 for qr; Golub & Pereyra 1973 for
pinv and lstsq): the run-time helpers in rules/helpers/products.py and
linalg.py give each with its source.

Conventions. np.linalg functions work on stacks of matrices (the last two
axes), and so do their rules. A parameter holding a sequence of arrays
(einsum's `*operands`, multi_dot's `arrays`) gets a list cotangent; a
primitive returning a tuple (eigh, svd, slogdet, eig, lstsq, qr) reads
`d[z][i]`, zeros for an unused output. cholesky and eigh assume a symmetric
input and return a symmetric cotangent (autograd's cholesky, JAX, PyTorch):
the derivative in the space of symmetric matrices, not of NumPy's read of
one triangle. eigh needs distinct eigenvalues when its eigenvectors are
used, svd distinct nonzero singular values, eig distinct eigenvalues and a
loss that does not depend on the eigenvectors' phases; pinv and lstsq
assume constant (full) rank, qr an invertible R.

Complex values follow TF's convention (README, "Complex inputs"): a
product's cotangent uses the other operand's conjugate, the matrix
functions' identities hold with conjugate transposes (`mH`), and
eigh/cholesky return Hermitian cotangents.
"""
import numpy as np

from ..helpers.broadcast import broadcast_like, dot_adjoint, matmul_adjoint_x, matmul_adjoint_y, unbroadcast
from ..helpers.complex import conj
from ..helpers.linalg import (as_column, cholesky_adjoint, det_adjoint, diag_adjoint, diagonal_embed,
                              eig_adjoint, eigh_adjoint, eigvals_adjoint, eigvals_tangent,
                              eigvalsh_adjoint, from_column, lstsq_adjoint, matrix_power_adjoint, mH,
                              mT, multi_dot_adjoint, pinv_adjoint, qr_rule_adjoint, slogdet_adjoint,
                              solve_adjoint_a, solve_adjoint_rhs, svd_rule_adjoint, svd_values_adjoint,
                              trace_adjoint)
from ..helpers.products import (convolve_adjoint, correlate_adjoint, cross_adjoint, einsum_adjoint, inner_adjoint,
                                kron_adjoint, outer_left, outer_unbroadcast, tensordot_adjoint, vecdot_adjoint)
from ..registry import register_adjoint
from ..tangents import declare_linear, register_linear, register_tangent

declare_linear(as_column)
declare_linear(outer_left)
declare_linear(outer_unbroadcast)
declare_linear(from_column)
declare_linear(np.matmul, "any")      # (hand-written tangent: generated code reads `dx @ y`)
for _f in (dot_adjoint, np.diag):
    declare_linear(_f)
declare_linear(matmul_adjoint_x, frozenset((0, 2)))     # (g y^T: linear in g and in y)
declare_linear(matmul_adjoint_y, frozenset((0, 1)))     # (x^T g: linear in g and in x)
for _f in (np.vdot, np.cross, np.einsum):
    declare_linear(_f, "any")


# ------------------------------------------------------------------- products

@register_adjoint(np.matmul)
def matmul(z, x, y, out=None, dtype=None):
    """Z = X Y: dX = dZ Y^T, dY = X^T dZ (Giles 2008, 2.2.2), with NumPy's
    1-d and batch conventions."""
    d[x] = matmul_adjoint_x(d[z], x, conj(y))
    d[y] = matmul_adjoint_y(d[z], conj(x), y)


@register_tangent(np.matmul)
def matmul_tangent(z, x, y, out=None, dtype=None):
    """d(X Y) = dX Y + X dY."""
    t[z] = t[x] @ y + x @ t[y]


@register_tangent(matmul_adjoint_x)
def matmul_adjoint_x_tangent(z, g, x, y):
    """matmul's cotangent of X, dZ Y^T, is bilinear in (dZ, Y) and reads X
    for its shape only: its tangent is the product rule over g and y
    (second-order code, sg.hvp, reads it instead of the transformed source
    of the helper, whose fast path tests types)."""
    t[z] = matmul_adjoint_x(t[g], x, y) + matmul_adjoint_x(g, x, t[y])


@register_tangent(matmul_adjoint_y)
def matmul_adjoint_y_tangent(z, g, x, y):
    """matmul's cotangent of Y, X^T dZ, is bilinear in (X, dZ) and reads Y
    for its shape only."""
    t[z] = matmul_adjoint_y(t[g], x, y) + matmul_adjoint_y(g, t[x], y)


@register_adjoint(np.dot)
def dot(z, x, y, out=None):
    """np.dot: matmul's rule for rank <= 2, tensordot contractions beyond."""
    d[x] = dot_adjoint(d[z], x, conj(y), True)
    d[y] = dot_adjoint(d[z], conj(x), y, False)


register_linear(np.dot, "any")


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


register_linear(np.inner, "any")


@register_adjoint(np.outer)
def outer(z, a, b, out=None):
    """z = ravel(a) ravel(b)^T: d a = g ravel(b), d b = g^T ravel(a)."""
    d[a] = np.reshape(np.matmul(d[z], np.ravel(conj(b))), np.shape(a))
    d[b] = np.reshape(np.matmul(np.ravel(conj(a)), d[z]), np.shape(b))


register_linear(np.outer, "any")


# ufunc.outer(A, B) of a binary ufunc: f(outer_left(A, B), B), shape
# A.shape + B.shape (no ravel, unlike np.outer). `np.add.outer` is a method
# bound to the ufunc (found in the registry by equality); each rule is the
# ufunc's own elementwise rule on the broadcast operands, the cotangent of A
# summed over B's axes (outer_unbroadcast) and B's over A's (unbroadcast).

@register_adjoint(np.add.outer)
def add_outer(z, A, B):
    """z[i..., j...] = A[i...] + B[j...]: d A = g summed over B's axes,
    d B = g summed over A's."""
    d[A] = outer_unbroadcast(d[z], A, B)
    d[B] = unbroadcast(d[z], B)


@register_tangent(np.add.outer)
def add_outer_tangent(z, A, B):
    """Linear: the tangents broadcast as the operands are."""
    t[z] = broadcast_like(outer_left(t[A], B) + t[B], z)


@register_adjoint(np.subtract.outer)
def subtract_outer(z, A, B):
    """z[i..., j...] = A[i...] - B[j...]: d A = g summed over B's axes,
    d B = -g summed over A's."""
    d[A] = outer_unbroadcast(d[z], A, B)
    d[B] = unbroadcast(-d[z], B)


@register_tangent(np.subtract.outer)
def subtract_outer_tangent(z, A, B):
    """Linear: the tangents broadcast as the operands are."""
    t[z] = broadcast_like(outer_left(t[A], B) - t[B], z)


@register_adjoint(np.multiply.outer)
def multiply_outer(z, A, B):
    """z[i..., j...] = A[i...] B[j...] (np.multiply's rule, conjugated
    operands: TF's convention): d A = sum over B's axes of g conj(B),
    d B = sum over A's axes of g conj(A)."""
    d[A] = outer_unbroadcast(d[z] * conj(B), A, B)
    d[B] = unbroadcast(d[z] * conj(outer_left(A, B)), B)


@register_tangent(np.multiply.outer)
def multiply_outer_tangent(z, A, B):
    """The product rule: outer(tA, B) + outer(A, tB)."""
    t[z] = broadcast_like(outer_left(t[A], B) * B + outer_left(A, B) * t[B], z)


@register_adjoint(np.true_divide.outer)
def true_divide_outer(z, A, B):
    """z[i..., j...] = A[i...] / B[j...] (np.true_divide's rule; np.divide
    is the same ufunc): d A = sum over B's axes of g / conj(B), d B = -sum
    over A's axes of g conj(z / B)."""
    d[A] = outer_unbroadcast(d[z] / conj(B), A, B)
    d[B] = unbroadcast(-d[z] * conj(z / B), B)


@register_tangent(np.true_divide.outer)
def true_divide_outer_tangent(z, A, B):
    """d(A / B) = (dA - z dB) / B, broadcast as the operands are."""
    t[z] = broadcast_like((outer_left(t[A], B) - z * t[B]) / B, z)


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


register_linear(np.tensordot, "any")


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
    (rules/helpers/products.py; the rules of einsum_adjoint itself are in
    rules/generated_code.py)."""
    d[operands] = einsum_adjoint(d[z], operands)


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


register_linear(np.kron, "any")


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


# ------------------------------------------------ convolution and correlation

@register_adjoint(np.convolve)
def convolve(z, a, v, mode="full"):
    """Discrete linear convolution of 1-d sequences, z = F[mode's slice],
    F_k = sum_i a_i v_{k-i} (NumPy's definition, the np.convolve
    docstring): bilinear, so d a = np.correlate(G, v, 'valid') and
    d v = np.correlate(G, a, 'valid'), G being d[z] padded with zeros to
    F's length (the transpose of a convolution is a correlation: autograd's
    scipy.signal.convolve VJP pads g the same way and convolves it with the
    flipped other operand in 'valid' mode). Every mode, either operand the
    longer."""
    d[a] = convolve_adjoint(d[z], a, v, mode, True)
    d[v] = convolve_adjoint(d[z], a, v, mode, False)


register_linear(np.convolve, "any")


@register_adjoint(np.correlate)
def correlate(z, a, v, mode="valid"):
    """Cross-correlation of 1-d sequences, z = C[mode's slice],
    C_k = sum_n a_{n+k} conj(v_n) (NumPy's definition, the np.correlate
    docstring: v is conjugated): d a = np.convolve(G, v, 'valid'),
    d v = the reversed conjugate of np.correlate(G, a, 'valid'), G being
    d[z] padded with zeros to C's length. The tangent is
    correlate(t[a], v) + correlate(a, t[v]) (linear in each operand over
    the reals)."""
    d[a] = correlate_adjoint(d[z], a, v, mode, True)
    d[v] = correlate_adjoint(d[z], a, v, mode, False)


register_linear(np.correlate, "any")


# ------------------------------------------------------------------ diagonals

@register_adjoint(np.trace)
def trace(z, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """d tr(A) = tr(dA): the cotangent on the traced diagonal."""
    d[a] = trace_adjoint(d[z], a, offset, axis1, axis2)


register_linear(np.trace, static=("offset", "axis1", "axis2"))


@register_adjoint(np.linalg.trace)
def linalg_trace(z, x, offset=0, dtype=None):
    """Trace over the last two axes (array API)."""
    d[x] = trace_adjoint(d[z], x, offset, -2, -1)


@register_adjoint(np.diagonal)
def diagonal(z, a, offset=0, axis1=0, axis2=1):
    """The cotangent is written on the diagonal read (offset, axis1, axis2), 0 elsewhere."""
    d[a] = diagonal_embed(d[z], a, offset, axis1, axis2)


register_linear(np.diagonal)


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


# ------------------------------------------------------------------ np.linalg

@register_adjoint(np.linalg.inv)
def inv(z, a):
    """Z = A^{-1}: dZ = -Z dA Z, so Abar = -Z^H Zbar Z^H (Giles 2008, 2.2.3)."""
    d[a] = -np.matmul(np.matmul(mH(z), d[z]), mH(z))


@register_tangent(np.linalg.inv)
def inv_tangent(z, a):
    """d(A^-1) = -A^-1 dA A^-1 (Giles 2008, 2.2.3)."""
    t[z] = -(z @ t[a] @ z)


@register_adjoint(np.linalg.solve)
def solve(z, a, b):
    """X = A^{-1} B: Bbar = A^{-H} Xbar, Abar = -Bbar X^H (Giles 2008,
    2.3.1). b is a (stacked) vector only when 1-d (NumPy 2); batch axes
    broadcast and are summed back."""
    gb = solve_adjoint_rhs(d[z], a, b)
    d[a] = solve_adjoint_a(gb, z, a, b)
    d[b] = unbroadcast(gb, b)


@register_tangent(np.linalg.solve)
def solve_tangent(z, a, b):
    """z = A^-1 b: dz = A^-1 (db - dA z) (a 1-d b is a column)."""
    t[z] = from_column(np.linalg.solve(a, as_column(t[b], b) - t[a] @ as_column(z, b)), b)


@register_adjoint(np.linalg.det)
def det(z, a):
    """d det A = det A tr(A^{-1} dA): Abar = g conj(det A) A^{-H} (Giles 2008, 2.2.4)."""
    d[a] = det_adjoint(d[z], z, a)


@register_tangent(np.linalg.det)
def det_tangent(z, a):
    """d det A = det A tr(A^-1 dA) (Jacobi's formula)."""
    t[z] = z * np.trace(np.linalg.solve(a, t[a]), axis1=-2, axis2=-1)


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


@register_tangent(np.linalg.eigvals)
def eigvals_tangent_(z, a):
    """dw = diag(V^{-1} dA V)."""
    t[z] = eigvals_tangent(t[a], a)


declare_linear(eigvals_tangent)


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


@register_adjoint(np.linalg.matrix_power)
def matrix_power(z, a, n):
    """A^n: Abar = sum_k (A^H)^k Zbar (A^H)^(n-1-k); n < 0 through inv."""
    d[a] = matrix_power_adjoint(d[z], a, n)


@register_adjoint(np.linalg.multi_dot)
def multi_dot(z, arrays, out=None):
    """A0 @ ... @ An: each factor gets L^H g R^H (matmul's rule)."""
    d[arrays] = multi_dot_adjoint(d[z], arrays)
