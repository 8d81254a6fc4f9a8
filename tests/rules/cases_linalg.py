"""Rule-test rows for linear algebra (srcgrad/rules/numpy/linalg.py).

Products (vdot, inner, outer, tensordot in every `axes` form, einsum
explicit/implicit/ellipsis/repeated labels/any number of operands, kron,
cross, vecdot), diagonals (trace, diag, diagonal), and np.linalg (inv,
solve, det, slogdet, cholesky, eigh, eigvalsh, svd, svdvals, pinv,
matrix_power, multi_dot, eig, eigvals, lstsq, qr), single and batched
(stacked) matrices; einsum's interleaved (operand, sublist) form.

Multi-output functions (eigh, svd, slogdet) are tested through losses that
use every output and are invariant to the arbitrary signs of eigen- and
singular vectors: the loss weighs `np.reshape(v * v, -1)` etc. by slices of
the flat cotangent `w`. cholesky and eigh rows symmetrize their input in
the case function (their rules assume a symmetric matrix).

Where autograd has no rule for a spelling (vdot, sort along an axis,
einsum with repeated labels, diagonal off the default axes...), `ref`
writes the same operation with autograd operations that have one.
"""
import autograd.numpy as anp
import numpy as np
from rulecase import Case, R, ND, NZ, Static, SPD, SYM, WC, SQ, _ag_bcast, _raw  # noqa: F401

from srcgrad.rules.helpers.linalg import diagonal_embed

C = Case


def _ag_diagonal(x, offset=0, axis1=0, axis2=1):
    """np.diagonal written with autograd indexing (autograd's own diagonal
    rule supports only the default axes)."""
    xm = anp.moveaxis(x, (axis1, axis2), (-2, -1))
    n1, n2 = x.shape[axis1], x.shape[axis2]
    if offset >= 0:
        k = max(0, min(n1, n2 - offset))
        rows, cols = np.arange(k), np.arange(k) + offset
    else:
        k = max(0, min(n1 + offset, n2))
        rows, cols = np.arange(k) - offset, np.arange(k)
    return xm[..., rows, cols]


def _ag_sym(x):
    return 0.5 * (x + anp.swapaxes(x, -1, -2))


# ------------------------------------------------------------------ products

def f_vdot(a, b, w):
    return np.sum(np.vdot(a, b) * w)


def f_inner(a, b, w):
    return np.sum(np.inner(a, b) * w)


def f_outer(a, b, w):
    return np.sum(np.outer(a, b) * w)


def f_linalg_outer(a, b, w):
    return np.sum(np.linalg.outer(a, b) * w)


def f_tensordot(a, b, w):
    return np.sum(np.tensordot(a, b) * w)


def f_tensordot_axes(a, b, axes, w):
    return np.sum(np.tensordot(a, b, axes=axes) * w)


def f_tensordot_1(a, b, w):
    return np.sum(np.tensordot(a, b, 1) * w)


def f_tensordot_pairs(a, b, w):
    return np.sum(np.tensordot(a, b, axes=([2, 0], [0, 1])) * w)


def f_linalg_tensordot(a, b, w):
    return np.sum(np.linalg.tensordot(a, b, axes=1) * w)


def f_einsum_matmul(a, b, w):
    return np.sum(np.einsum("ij,jk->ik", a, b) * w)


def f_einsum_implicit(a, b, w):
    return np.sum(np.einsum("ij,jk", a, b) * w)


def f_einsum_ellipsis(a, b, w):
    return np.sum(np.einsum("...ij,...jk->...ik", a, b) * w)


def f_einsum_ellipsis_implicit(a, b, w):
    return np.sum(np.einsum("i...,i", a, b) * w)


def f_einsum_three(a, b, c, w):
    return np.sum(np.einsum("ij,jk,kl->il", a, b, c) * w)


def f_einsum_diag(a, w):
    return np.sum(np.einsum("ii->i", a) * w)


def f_einsum_trace(a, w):
    return np.sum(np.einsum("ii", a) * w)


def f_einsum_diag_mul(a, b, w):
    return np.sum(np.einsum("iij,i->ij", a, b) * w)


def f_einsum_transpose(a, w):
    return np.sum(np.einsum("ijk->kij", a) * w)


def f_einsum_summed_label(a, b, w):
    return np.sum(np.einsum("ij,k->i", a, b) * w)


def f_einsum_outer(a, b, w):
    return np.sum(np.einsum("i,j", a, b) * w)


def f_linalg_matmul(a, b, w):
    return np.sum(np.linalg.matmul(a, b) * w)


def f_linalg_vecdot(a, b, w):
    return np.sum(np.linalg.vecdot(a, b) * w)


def f_linalg_vecdot_axis0(a, b, w):
    return np.sum(np.linalg.vecdot(a, b, axis=0) * w)


def f_vecdot(a, b, w):
    return np.sum(np.vecdot(a, b) * w)


def f_kron(a, b, w):
    return np.sum(np.kron(a, b) * w)


def f_cross(a, b, w):
    return np.sum(np.cross(a, b) * w)


def f_cross_axes(a, b, w):
    return np.sum(np.cross(a, b, axisa=0, axisb=-1, axisc=0) * w)


def f_linalg_cross(a, b, w):
    return np.sum(np.linalg.cross(a, b) * w)


# ----------------------------------------------------------------- diagonals

def f_trace(a, w):
    return np.sum(np.trace(a) * w)


def f_trace_offset(a, w):
    return np.sum(np.trace(a, 1) * w)


def f_trace_axes(a, w):
    return np.sum(np.trace(a, -1, 2, 1) * w)


def f_linalg_trace(a, w):
    return np.sum(np.linalg.trace(a, offset=1) * w)


def f_diagonal(a, w):
    return np.sum(np.diagonal(a) * w)


def f_diagonal_axes(a, w):
    return np.sum(np.diagonal(a, 1, 2, 0) * w)


def f_linalg_diagonal(a, w):
    return np.sum(np.linalg.diagonal(a, offset=-1) * w)


def f_diag(v, w):
    return np.sum(np.diag(v) * w)


def f_diag_k(v, k, w):
    return np.sum(np.diag(v, k) * w)


def f_diagonal_embed(g, x, w):
    return np.sum(diagonal_embed(g, x, 1, 0, 1) * w)


def f_matrix_transpose(a, w):
    return np.sum(np.matrix_transpose(a) * w)


def f_linalg_matrix_transpose(a, w):
    return np.sum(np.linalg.matrix_transpose(a) * w)


# ----------------------------------------------------------------- np.linalg

def f_inv(a, w):
    return np.sum(np.linalg.inv(a) * w)


def f_solve(a, b, w):
    return np.sum(np.linalg.solve(a, b) * w)


def f_det(a, w):
    return np.sum(np.linalg.det(a) * w)


def f_slogdet(a, w):
    sign, logdet = np.linalg.slogdet(a)
    return np.sum(sign * logdet * w)


def f_cholesky(a, w):
    return np.sum(np.linalg.cholesky(0.5 * (a + np.swapaxes(a, -1, -2))) * w)


def f_cholesky_upper(a, w):
    return np.sum(np.linalg.cholesky(0.5 * (a + np.swapaxes(a, -1, -2)), upper=True) * w)


def f_eigh(a, w):
    vals, vecs = np.linalg.eigh(0.5 * (a + np.swapaxes(a, -1, -2)))
    n = vals.size
    return np.sum(np.reshape(vals, -1) * w[:n]) + np.sum(np.reshape(vecs * vecs, -1) * w[n:])


def f_eigh_values(a, w):
    vals, vecs = np.linalg.eigh(0.5 * (a + np.swapaxes(a, -1, -2)))
    return np.sum(vals * w)


def f_eigh_projector(a, w):
    vals, vecs = np.linalg.eigh(0.5 * (a + np.swapaxes(a, -1, -2)))
    return np.sum((vecs * np.tanh(vals)) @ vecs.T * w)


def f_eigvalsh(a, w):
    return np.sum(np.linalg.eigvalsh(0.5 * (a + np.swapaxes(a, -1, -2))) * w)


def f_svd(a, w):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    i = s.size
    j = i + u.size
    return (np.sum(np.reshape(s, -1) * w[:i]) + np.sum(np.reshape(u * u, -1) * w[i:j])
            + np.sum(np.reshape(vt * vt, -1) * w[j:]))


def f_svd_full_square(a, w):
    u, s, vt = np.linalg.svd(a)
    return np.sum((u * s * s) @ vt * w)


def f_svd_full_used_columns(a, w):
    u, s, vt = np.linalg.svd(a)
    k = s.shape[-1]
    return np.sum(((u[:, :k] * np.sqrt(s)) @ vt[:k]) * w)


def f_svd_values(a, w):
    return np.sum(np.linalg.svd(a, compute_uv=False) * w)


def f_svdvals(a, w):
    return np.sum(np.linalg.svdvals(a) * w)


def f_pinv(a, w):
    return np.sum(np.linalg.pinv(a) * w)


def f_matrix_power(a, n, w):
    return np.sum(np.linalg.matrix_power(a, n) * w)


def f_multi_dot(a, b, c, w):
    return np.sum(np.linalg.multi_dot([a, b, c]) * w)


# ------------------------------------------------------------- autograd refs

def _ref_eigh(a):
    vals, vecs = anp.linalg.eigh(_ag_sym(a))
    return anp.concatenate([anp.reshape(vals, -1), anp.reshape(vecs * vecs, -1)])


def _ref_eigh_projector(a):
    vals, vecs = anp.linalg.eigh(_ag_sym(a))
    return anp.dot(vecs * anp.tanh(vals), vecs.T)


def _ref_svd(a):
    u, s, vt = anp.linalg.svd(a, full_matrices=False)
    return anp.concatenate([anp.reshape(s, -1), anp.reshape(u * u, -1), anp.reshape(vt * vt, -1)])


def _ref_svd_full_square(a):
    u, s, vt = anp.linalg.svd(a, full_matrices=False)
    return anp.dot(u * s * s, vt)


def _ref_svd_used_columns(a):
    u, s, vt = anp.linalg.svd(a, full_matrices=False)
    return anp.dot(u * anp.sqrt(s), vt)


def _ref_slogdet(a):
    sign, logdet = anp.linalg.slogdet(a)
    return sign * logdet


def _ref_matrix_power(a, n):
    if n < 0:
        a, n = anp.linalg.inv(a), -n
    out = a
    for _ in range(n - 1):
        out = anp.matmul(out, a)
    return out


CASES = [
    # ---- products
    C("la_vdot_mat", f_vdot, lambda a, b: anp.sum(anp.ravel(a) * anp.ravel(b)), (R(2, 3), R(3, 2)),
      np.vdot),
    C("la_vdot_vec", f_vdot, lambda a, b: anp.sum(a * b), (R(4), R(4)), np.vdot),
    C("la_inner_mat", f_inner, lambda a, b: anp.inner(a, b), (R(3, 4), R(2, 4)), np.inner),
    C("la_inner_3d_vec", f_inner, lambda a, b: anp.inner(a, b), (R(2, 3, 4), R(4)), np.inner),
    C("la_inner_scalar", f_inner, lambda a, b: a * b, (R(), R(3)), np.inner),
    C("la_outer", f_outer, lambda a, b: anp.outer(a, b), (R(3), R(4)), np.outer),
    C("la_outer_2d", f_outer, lambda a, b: anp.outer(anp.ravel(a), anp.ravel(b)), (R(2, 2), R(3)),
      np.outer),
    C("la_linalg_outer", f_linalg_outer, lambda a, b: anp.outer(a, b), (R(3), R(2)), np.linalg.outer),
    C("la_tensordot_default", f_tensordot, lambda a, b: anp.tensordot(a, b), (R(2, 3, 4), R(3, 4, 2)),
      np.tensordot),
    C("la_tensordot_1", f_tensordot_1, lambda a, b: anp.tensordot(a, b, 1), (R(3, 4), R(4, 2)),
      np.tensordot),
    C("la_tensordot_0", f_tensordot_axes, lambda a, b, ax: anp.tensordot(a, b, ax),
      (R(2), R(3), Static(0)), np.tensordot),
    C("la_tensordot_int_pair", f_tensordot_axes, lambda a, b, ax: anp.tensordot(a, b, ax),
      (R(3, 4), R(2, 3), Static((0, 1))), np.tensordot),
    C("la_tensordot_seq", f_tensordot_axes, lambda a, b, ax: anp.tensordot(a, b, ax),
      (R(2, 3, 4), R(4, 2, 5), Static(([0, 2], [1, 0]))), np.tensordot),
    C("la_tensordot_pairs_unsorted", f_tensordot_pairs, lambda a, b: anp.tensordot(a, b, ([2, 0], [0, 1])),
      (R(2, 3, 4), R(4, 2)), np.tensordot),
    C("la_linalg_tensordot", f_linalg_tensordot, lambda a, b: anp.tensordot(a, b, 1),
      (R(2, 3), R(3, 2)), np.linalg.tensordot),
    C("la_einsum_matmul", f_einsum_matmul, lambda a, b: anp.einsum("ij,jk->ik", a, b),
      (R(2, 3), R(3, 4)), np.einsum),
    C("la_einsum_implicit", f_einsum_implicit, lambda a, b: anp.einsum("ij,jk", a, b),
      (R(2, 3), R(3, 4)), np.einsum),
    C("la_einsum_ellipsis_bcast", f_einsum_ellipsis, lambda a, b: anp.einsum("...ij,...jk->...ik", a, b),
      (R(2, 1, 2, 3), R(3, 3, 2)), np.einsum),
    C("la_einsum_ellipsis_implicit", f_einsum_ellipsis_implicit, lambda a, b: anp.einsum("i...,i", a, b),
      (R(3, 2, 2), R(3)), np.einsum),
    C("la_einsum_three", f_einsum_three, lambda a, b, c: anp.einsum("ij,jk,kl->il", a, b, c),
      (R(2, 3), R(3, 4), R(4, 2)), np.einsum),
    C("la_einsum_diag", f_einsum_diag, lambda a: _ag_diagonal(a), (R(3, 3),), np.einsum),
    C("la_einsum_trace", f_einsum_trace, lambda a: anp.sum(_ag_diagonal(a)), (R(3, 3),), np.einsum),
    C("la_einsum_diag_mul", f_einsum_diag_mul,
      lambda a, b: _ag_diagonal(a, 0, 0, 1).T * b[:, None], (R(3, 3, 2), R(3)), np.einsum),
    C("la_einsum_transpose", f_einsum_transpose, lambda a: anp.transpose(a, (2, 0, 1)), (R(2, 3, 4),),
      np.einsum),
    C("la_einsum_summed_label", f_einsum_summed_label, lambda a, b: anp.einsum("ij,k->i", a, b),
      (R(2, 3), R(4)), np.einsum),
    C("la_einsum_outer", f_einsum_outer, lambda a, b: anp.einsum("i,j", a, b), (R(2), R(3)), np.einsum),
    C("la_linalg_matmul", f_linalg_matmul, lambda a, b: anp.matmul(a, b), (R(2, 3, 4), R(4, 2)),
      np.linalg.matmul),
    C("la_linalg_vecdot", f_linalg_vecdot, lambda a, b: anp.sum(a * b, axis=-1), (R(3, 4), R(4)),
      np.linalg.vecdot),
    C("la_linalg_vecdot_axis0", f_linalg_vecdot_axis0, lambda a, b: anp.sum(a * b, axis=0),
      (R(3, 2), R(3, 1)), np.linalg.vecdot),
    C("la_vecdot_ufunc", f_vecdot, lambda a, b: anp.sum(a * b, axis=-1), (R(2, 3), R(1, 3)), np.vecdot),
    C("la_kron", f_kron, lambda a, b: anp.kron(a, b), (R(2, 3), R(2, 2)), np.kron),
    C("la_kron_ranks", f_kron, lambda a, b: anp.kron(a, b), (R(3), R(2, 2)), np.kron),
    C("la_cross_bcast", f_cross, lambda a, b: anp.cross(a, _ag_bcast(b, a)), (R(4, 3), R(3)), np.cross),
    C("la_cross_axes", f_cross_axes, lambda a, b: anp.cross(a, b, axisa=0, axisb=-1, axisc=0),
      (R(3, 2), R(2, 3)), np.cross),
    C("la_linalg_cross", f_linalg_cross, lambda a, b: anp.cross(a, b), (R(2, 3), R(2, 3)),
      np.linalg.cross),

    # ---- diagonals
    C("la_trace", f_trace, lambda a: anp.trace(a), (R(3, 3),), np.trace),
    C("la_trace_offset", f_trace_offset, lambda a: anp.trace(a, 1), (R(3, 4),), np.trace),
    C("la_trace_axes_3d", f_trace_axes, lambda a: anp.sum(_ag_diagonal(a, -1, 2, 1), -1), (R(2, 3, 4),),
      np.trace),
    C("la_linalg_trace", f_linalg_trace, lambda a: anp.sum(_ag_diagonal(a, 1, -2, -1), -1),
      (R(2, 3, 3),), np.linalg.trace),
    C("la_diagonal", f_diagonal, lambda a: _ag_diagonal(a), (R(3, 4),), np.diagonal),
    C("la_diagonal_axes", f_diagonal_axes, lambda a: _ag_diagonal(a, 1, 2, 0), (R(3, 2, 4),),
      np.diagonal),
    C("la_linalg_diagonal", f_linalg_diagonal, lambda a: _ag_diagonal(a, -1, -2, -1), (R(2, 3, 4),),
      np.linalg.diagonal),
    C("la_diag_build", f_diag, lambda v: anp.diag(v), (R(3),), np.diag),
    C("la_diag_build_k", f_diag_k, lambda v, k: anp.diag(v, k), (R(3), Static(1)), np.diag),
    C("la_diag_read_k", f_diag_k, lambda v, k: _ag_diagonal(v, k), (R(3, 4), Static(-1)), np.diag),
    C("la_diagonal_embed", f_diagonal_embed, lambda g, x: anp.diag(g, 1)[:3, :4], (R(3), ND(3, 4)),
      diagonal_embed),
    C("la_matrix_transpose", f_matrix_transpose, lambda a: anp.swapaxes(a, -1, -2), (R(2, 3, 4),),
      np.matrix_transpose),
    C("la_linalg_matrix_transpose", f_linalg_matrix_transpose, lambda a: anp.swapaxes(a, -1, -2),
      (R(3, 4),), np.linalg.matrix_transpose),

    # ---- np.linalg
    C("la_inv", f_inv, lambda a: anp.linalg.inv(a), (SQ(3),), np.linalg.inv),
    C("la_inv_batched", f_inv, lambda a: anp.linalg.inv(a), (SQ(3, 2),), np.linalg.inv),
    C("la_solve_matrix", f_solve, lambda a, b: anp.linalg.solve(a, b), (SQ(3), R(3, 2)),
      np.linalg.solve),
    C("la_solve_vector", f_solve, lambda a, b: anp.linalg.solve(a, b), (SQ(3), R(3)), np.linalg.solve),
    C("la_solve_batched_vector", f_solve, lambda a, b: anp.matmul(anp.linalg.inv(a), b),
      (SQ(3, 2), R(3)), np.linalg.solve),
    C("la_solve_batched", f_solve, lambda a, b: anp.matmul(anp.linalg.inv(a), b),
      (SQ(3, 2), R(2, 3, 2)), np.linalg.solve),
    C("la_solve_bcast_a", f_solve, lambda a, b: anp.matmul(anp.linalg.inv(a), b),
      (SQ(3), R(2, 3, 2)), np.linalg.solve),
    C("la_det", f_det, lambda a: anp.linalg.det(a), (SQ(3),), np.linalg.det),
    C("la_det_batched", f_det, lambda a: anp.linalg.det(a), (SQ(3, 2),), np.linalg.det),
    C("la_slogdet", f_slogdet, _ref_slogdet, (SQ(3),), np.linalg.slogdet),
    C("la_slogdet_batched", f_slogdet, _ref_slogdet, (SQ(3, 2),), np.linalg.slogdet),
    C("la_cholesky", f_cholesky, lambda a: anp.linalg.cholesky(_ag_sym(a)), (SPD(3, 3),),
      np.linalg.cholesky),
    C("la_cholesky_batched", f_cholesky, lambda a: anp.linalg.cholesky(_ag_sym(a)), (SPD(2, 3, 3),),
      np.linalg.cholesky),
    C("la_cholesky_upper", f_cholesky_upper, lambda a: anp.swapaxes(anp.linalg.cholesky(_ag_sym(a)), -1, -2),
      (SPD(3, 3),), np.linalg.cholesky),
    C("la_eigh", f_eigh, _ref_eigh, (SYM(3, 3),), np.linalg.eigh),
    C("la_eigh_batched", f_eigh, _ref_eigh, (SYM(2, 3, 3),), np.linalg.eigh),
    C("la_eigh_values_only", f_eigh_values, lambda a: anp.linalg.eigh(_ag_sym(a))[0], (SYM(2, 3, 3),),
      np.linalg.eigh),
    C("la_eigh_projector", f_eigh_projector, _ref_eigh_projector, (SYM(3, 3),), np.linalg.eigh),
    C("la_eigvalsh", f_eigvalsh, lambda a: anp.linalg.eigh(_ag_sym(a))[0], (SYM(3, 3),),
      np.linalg.eigvalsh),
    C("la_svd_wide", f_svd, _ref_svd, (WC(3, 4),), np.linalg.svd),
    C("la_svd_tall", f_svd, _ref_svd, (WC(4, 3),), np.linalg.svd),
    C("la_svd_batched", f_svd, _ref_svd, (WC(2, 3, 3),), np.linalg.svd),
    C("la_svd_full_square", f_svd_full_square, _ref_svd_full_square, (WC(3, 3),), np.linalg.svd),
    C("la_svd_full_used_columns", f_svd_full_used_columns, _ref_svd_used_columns, (WC(4, 2),),
      np.linalg.svd),
    C("la_svd_values", f_svd_values, lambda a: anp.linalg.svd(a, compute_uv=False), (WC(3, 4),),
      np.linalg.svd),
    C("la_svdvals_batched", f_svdvals, lambda a: anp.linalg.svd(a, compute_uv=False), (WC(2, 4, 3),),
      np.linalg.svdvals),
    C("la_pinv_wide", f_pinv, lambda a: anp.linalg.pinv(a), (WC(3, 4),), np.linalg.pinv),
    C("la_pinv_tall_batched", f_pinv, lambda a: anp.linalg.pinv(a), (WC(2, 3, 2),), np.linalg.pinv),
    C("la_matrix_power_3", f_matrix_power, _ref_matrix_power, (R(3, 3), Static(3)),
      np.linalg.matrix_power),
    C("la_matrix_power_batched_2", f_matrix_power, _ref_matrix_power, (R(2, 3, 3), Static(2)),
      np.linalg.matrix_power),
    C("la_matrix_power_neg", f_matrix_power, _ref_matrix_power, (SQ(3), Static(-2)),
      np.linalg.matrix_power),
    C("la_multi_dot", f_multi_dot, lambda a, b, c: anp.dot(anp.dot(a, b), c), (R(2, 3), R(3, 4), R(4, 2)),
      np.linalg.multi_dot),
    C("la_multi_dot_vectors", f_multi_dot, lambda a, b, c: anp.dot(anp.dot(a, b), c),
      (R(3), R(3, 4), R(4)), np.linalg.multi_dot),
]


# ------------------------- einsum's interleaved form; eig, eigvals, lstsq, qr

def f_einsum_sublists(a, b, w):
    return np.sum(np.einsum(a, [0, 1], b, [1, 2], [0, 2]) * w)


def f_einsum_sublists_implicit(a, b, w):
    return np.sum(np.einsum(a, [1, 0], b, [1, 2]) * w)


def f_einsum_sublists_ellipsis(a, b, c, w):
    return np.sum(np.einsum(a, [Ellipsis, 0, 1], b, [1, 2], c, [2], [Ellipsis, 0]) * w)


PHASE = 0.6 - 0.8j


def f_eig(a, w):
    lam, v = np.linalg.eig(a)
    parts = np.concatenate([np.real(lam)[..., None, :], np.imag(lam)[..., None, :], np.abs(v) ** 2],
                           axis=-2)
    return np.sum(parts * w)


def _ag_eig(a):
    lam, v = anp.linalg.eig(a)
    return anp.concatenate([anp.real(lam)[..., None, :], anp.imag(lam)[..., None, :],
                            anp.abs(v) ** 2], axis=-2)


def f_eig_values_only(a, w):
    lam, v = np.linalg.eig(a)
    return np.sum((0.6 * np.real(lam) + 0.8 * np.imag(lam)) * w)


def f_eigvals(a, w):
    lam = np.linalg.eigvals(a)
    return np.sum((0.6 * np.real(lam) + 0.8 * np.imag(lam)) * w)


def _ag_eigvals(a):
    lam = anp.linalg.eig(a)[0]
    return 0.6 * anp.real(lam) + 0.8 * anp.imag(lam)


def f_lstsq(a, b, w):
    x, res, rank, s = np.linalg.lstsq(a, b)
    return np.sum(np.concatenate([np.ravel(x), res, s]) * w)


def f_lstsq_rcond(a, b, w):
    x, res, rank, s = np.linalg.lstsq(a, b, rcond=1e-8)
    return np.sum(np.concatenate([np.ravel(x), res]) * w)


def _ag_lstsq(a, b, with_s=True, with_res=True):
    m, n = np.shape(a)
    b2 = b if np.ndim(b) == 2 else b[:, None]
    if m >= n:
        x = anp.linalg.solve(anp.dot(a.T, a), anp.dot(a.T, b2))
        res = anp.sum((b2 - anp.dot(a, x)) ** 2, axis=0) if m > n else anp.zeros(0)
    else:
        x = anp.dot(a.T, anp.linalg.solve(anp.dot(a, a.T), b2))
        res = anp.zeros(0)
    parts = [anp.reshape(x if np.ndim(b) == 2 else x[:, 0], -1)]
    if with_res:
        parts.append(res)
    if with_s:
        parts.append(anp.linalg.svd(a, compute_uv=False))
    return anp.concatenate(parts)


def f_qr(a, w):
    q, r = np.linalg.qr(a)
    return np.sum(np.concatenate([np.reshape(q, (-1,)), np.reshape(r, (-1,))]) * w)


def f_qr_complete(a, w):
    q, r = np.linalg.qr(a, mode="complete")
    return np.sum(np.concatenate([np.reshape(q[:, :3], (-1,)), np.reshape(r, (-1,))]) * w)


def f_qr_r(a, w):
    return np.sum(np.linalg.qr(a, mode="r") * w)


def _ag_qr_factors(a):
    """Q, R of NumPy's QR (reduced) without a QR: R = D chol(A^T A)^T for the
    square part, D the signs of NumPy's diag(R) (constants), Q = X R^{-1},
    and for a wide A, R's remaining columns Q^T Y."""
    v = _raw(a)
    m, n = v.shape[-2:]
    k = min(m, n)
    d = np.sign(np.diagonal(np.linalg.qr(v)[1], axis1=-2, axis2=-1))
    x = a[..., :, :k]
    rp = anp.swapaxes(anp.linalg.cholesky(anp.matmul(anp.swapaxes(x, -1, -2), x)), -1, -2)
    r_sq = rp * d[..., :, None]
    q = anp.swapaxes(anp.linalg.solve(anp.swapaxes(r_sq, -1, -2), anp.swapaxes(x, -1, -2)), -1, -2)
    if n > m:
        r = anp.concatenate([r_sq, anp.matmul(anp.swapaxes(q, -1, -2), a[..., :, m:])], axis=-1)
    else:
        r = r_sq
    return q, r


def _ag_qr(a):
    q, r = _ag_qr_factors(a)
    return anp.concatenate([anp.reshape(q, (-1,)), anp.reshape(r, (-1,))])


def _ag_qr_complete(a):
    q, r = _ag_qr_factors(a)
    r_full = anp.concatenate([r, anp.zeros((np.shape(a)[0] - np.shape(a)[1], np.shape(a)[1]))])
    return anp.concatenate([anp.reshape(q, (-1,)), anp.reshape(r_full, (-1,))])


CASES += [
    # einsum's interleaved (operand, sublist) form
    C("einsum_sublists", f_einsum_sublists, lambda a, b: anp.einsum("ij,jk->ik", a, b),
      (R(2, 3), R(3, 4)), np.einsum),
    C("einsum_sublists_implicit", f_einsum_sublists_implicit, lambda a, b: anp.einsum("ba,bc", a, b),
      (R(3, 2), R(3, 4)), np.einsum),
    C("einsum_sublists_ellipsis", f_einsum_sublists_ellipsis,
      lambda a, b, c: anp.einsum("...ij,jk,k->...i", a, b, c), (R(2, 2, 3), R(3, 4), R(4)), np.einsum),
    # eig, eigvals (general real matrices; complex outputs), lstsq, qr
    C("eig", f_eig, _ag_eig, (R(3, 3),), np.linalg.eig),
    C("eig_batched", f_eig, _ag_eig, (R(2, 4, 4),), np.linalg.eig),
    C("eig_values_only", f_eig_values_only, _ag_eigvals, (R(4, 4),), np.linalg.eig),
    C("eigvals", f_eigvals, _ag_eigvals, (R(3, 3),), np.linalg.eigvals),
    C("eigvals_batched", f_eigvals, _ag_eigvals, (R(2, 3, 3),), np.linalg.eigvals),
    C("lstsq_over", f_lstsq, _ag_lstsq, (WC(5, 3), R(5, 2)), np.linalg.lstsq),
    C("lstsq_over_vector", f_lstsq, _ag_lstsq, (WC(4, 2), R(4)), np.linalg.lstsq),
    C("lstsq_under", f_lstsq, _ag_lstsq, (WC(2, 4), R(2)), np.linalg.lstsq),
    C("lstsq_square_rcond", f_lstsq_rcond, lambda a, b: _ag_lstsq(a, b, with_s=False),
      (WC(3, 3), R(3, 2)), np.linalg.lstsq),
    C("qr_tall", f_qr, _ag_qr, (WC(4, 3),), np.linalg.qr),
    C("qr_square", f_qr, _ag_qr, (WC(3, 3),), np.linalg.qr),
    C("qr_wide", f_qr, _ag_qr, (WC(3, 5),), np.linalg.qr),
    C("qr_batched", f_qr, _ag_qr, (WC(2, 4, 3),), np.linalg.qr),
    C("qr_complete", f_qr_complete, _ag_qr_complete, (WC(5, 3),), np.linalg.qr),
    C("qr_mode_r", f_qr_r, lambda a: _ag_qr_factors(a)[1], (WC(4, 3),), np.linalg.qr),
    C("qr_mode_r_wide", f_qr_r, lambda a: _ag_qr_factors(a)[1], (WC(2, 4),), np.linalg.qr),
]


# -- the binary ufuncs' outer methods: f(a[..., None...], b), shape a.shape + b.shape

def f_add_outer(a, b, w):
    return np.sum(np.add.outer(a, b) * w)


def f_subtract_outer(a, b, w):
    return np.sum(np.subtract.outer(a, b) * w)


def f_multiply_outer(a, b, w):
    return np.sum(np.multiply.outer(a, b) * w)


def f_divide_outer(a, b, w):
    return np.sum(np.divide.outer(a, b) * w)


CASES += [
    C("add_outer", f_add_outer, lambda a, b: a[:, :, None] + b, (R(2, 3), R(4)), np.add.outer),
    C("subtract_outer", f_subtract_outer, lambda a, b: a[:, None, None] - b, (R(3), R(2, 2)), np.subtract.outer),
    C("multiply_outer", f_multiply_outer, lambda a, b: a[:, None] * b, (R(3), R(4)), np.multiply.outer),
    C("divide_outer", f_divide_outer, lambda a, b: a[:, :, None] / b, (R(2, 2), NZ(3)), np.true_divide.outer),
]
