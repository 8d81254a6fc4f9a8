"""Run-time helpers for the linear-algebra and shape rules
(numpy_linalg.py, numpy_shapes.py).

As in helpers.py, every helper here is one of:

- written with NumPy functions that have adjoint rules (matmul, swapaxes,
  linalg.solve, tensordot, einsum, moveaxis, split, pad, getitem...), so a
  higher-order tape, which runs rules on Tensors, records it op by op;
- a `primitive` with a rule of its own (`index_gather`/`index_scatter`,
  `diagonal_embed`; their rules are in numpy_shapes.py / numpy_linalg.py);
- a `nondiff_helper` returning index maps, axis lists, masks or other
  values that carry no derivative.

Constants (identity matrices, masks) take the cotangent's dtype, so float32
in gives float32 out. The identities are the standard ones: Giles, "An
extended collection of matrix derivative results for forward and reverse
mode algorithmic differentiation" (2008); Murray, "Differentiation of the
Cholesky decomposition" (2016); Townsend, "Differentiating the singular
value decomposition" (2016); Seeger et al., "Auto-differentiating linear
algebra" (2017); autograd's numpy_vjps.py and linalg.py for the NumPy
conventions (batched matrices in the last two axes, unused outputs).

Complex matrices follow TF's convention (README, "Complex inputs"): the
cotangent of a linear map is its conjugate transpose applied to g, so the
real identities hold with every transpose of a matrix read as the
conjugate transpose (`mH`, which is `mT` for real values); svd and slogdet
have an extra term for complex values (their phases).
"""
import string

import numpy as np

from .helpers import nondiff_helper, primitive, unbroadcast
from .helpers_math import conj, real_part


def _dtype(*xs):
    """The floating dtype of a cotangent computed from `xs` (float32 stays
    float32; integer inputs give float64)."""
    dt = np.result_type(*[getattr(x, "dtype", np.asarray(x).dtype) for x in xs])
    return dt if np.issubdtype(dt, np.inexact) else np.dtype(np.float64)


def mT(x):
    """Transpose of the last two axes (a stack of matrices)."""
    return np.swapaxes(x, -1, -2)


def mH(x):
    """Conjugate transpose of the last two axes (mT for real x)."""
    return np.swapaxes(conj(x), -1, -2)


# ----------------------------------------------------------------- constants

@nondiff_helper
def eye_like(x, n=None):
    """The n x n identity (n: x's last axis) in x's floating dtype."""
    if n is None:
        n = np.shape(x)[-1]
    return np.eye(n, dtype=_dtype(x))


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


# ------------------------------------------------------- diagonal embedding

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
    out = np.zeros(shape, dtype=_dtype(g, x))
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


# ---------------------------------------------------------------- products

def inner_adjoint(g, a, b, wrt_a):
    """np.inner(a, b) contracts the last axes: z[I, J] = sum_k a[I, k] b[J, k].
    d a[I, k] = sum_J g[I, J] b[J, k]; d b[J, k] = sum_I g[I, J] a[I, k].
    A 0-d operand multiplies instead."""
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return unbroadcast(g * (b if wrt_a else a), a if wrt_a else b)
    if wrt_a:
        return np.tensordot(g, b, axes=(list(range(na - 1, na - 1 + nb - 1)), list(range(nb - 1))))
    return np.tensordot(g, a, axes=(list(range(na - 1)), list(range(na - 1))))


@nondiff_helper
def tensordot_axes(a, b, axes):
    """np.tensordot's `axes` (an int N, or a pair of ints or sequences) as
    two lists of non-negative axes of a and b."""
    na, nb = np.ndim(a), np.ndim(b)
    try:
        ax_a, ax_b = axes
    except TypeError:
        n = int(axes)
        return list(range(na - n, na)), list(range(n))
    ax_a = [ax_a] if np.ndim(ax_a) == 0 else list(ax_a)
    ax_b = [ax_b] if np.ndim(ax_b) == 0 else list(ax_b)
    return [int(i) % na for i in ax_a], [int(i) % nb for i in ax_b]


def tensordot_adjoint(g, a, b, axes, wrt_a):
    """z = tensordot(a, b, axes): z's axes are a's free axes then b's. The
    cotangent of a contracts g's b-part with b's free axes, then puts the
    result's axes back in a's order (tensordot returns an operand's remaining
    axes in ascending order); likewise for b."""
    ax_a, ax_b = tensordot_axes(a, b, axes)
    na, nb = np.ndim(a), np.ndim(b)
    free_a = [i for i in range(na) if i not in ax_a]
    free_b = [j for j in range(nb) if j not in ax_b]
    nfa = len(free_a)
    if wrt_a:
        t = np.tensordot(g, b, axes=(list(range(nfa, np.ndim(g))), free_b))
        src = free_a + [ax_a[k] for k in np.argsort(ax_b, kind="stable")]
        return np.transpose(t, [int(i) for i in np.argsort(src, kind="stable")])
    t = np.tensordot(a, g, axes=(free_a, list(range(nfa))))
    src = [ax_b[k] for k in np.argsort(ax_a, kind="stable")] + free_b
    return np.transpose(t, [int(i) for i in np.argsort(src, kind="stable")])


def kron_adjoint(g, a, b, wrt_a):
    """kron(a, b)[i * sb + j] = a[i] b[j] per axis (the operand of lower rank
    gets leading 1s). Reshape g to (sa0, sb0, sa1, sb1, ...), gather the a
    axes first, and contract with the other operand."""
    nd = max(np.ndim(a), np.ndim(b))
    sa = (1,) * (nd - np.ndim(a)) + tuple(np.shape(a))
    sb = (1,) * (nd - np.ndim(b)) + tuple(np.shape(b))
    inter = tuple(s for pair in zip(sa, sb) for s in pair)
    gt = np.transpose(np.reshape(g, inter), list(range(0, 2 * nd, 2)) + list(range(1, 2 * nd, 2)))
    if wrt_a:
        return np.reshape(np.tensordot(gt, np.reshape(b, sb), axes=nd), np.shape(a))
    return np.reshape(np.tensordot(np.reshape(a, sa), gt, axes=nd), np.shape(b))


def cross_adjoint(g, a, b, axisa, axisb, axisc, axis, wrt_a):
    """c = a x b (3-vectors along the given axes). g . (a x b) = a . (b x g)
    = b . (g x a), so d a = b x g and d b = g x a (summed over broadcast
    axes)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    am = np.moveaxis(a, axisa, -1)
    bm = np.moveaxis(b, axisb, -1)
    gm = np.moveaxis(g, axisc, -1)
    if wrt_a:
        return np.moveaxis(unbroadcast(np.cross(bm, gm), am), -1, axisa)
    return np.moveaxis(unbroadcast(np.cross(gm, am), bm), -1, axisb)


def vecdot_adjoint(g, x1, x2, axis, wrt_x1, keepdims=False, axes=None):
    """z = sum(x1 * x2, axis) (real), broadcasting: d x1 = g x2, d x2 = g x1,
    with g's reduced axis put back and broadcast axes summed."""
    if axes is not None:
        raise NotImplementedError("the rule of np.vecdot takes `axis`, not `axes`")
    if axis is None:
        axis = -1
    if axis >= 0:
        axis = axis - max(np.ndim(x1), np.ndim(x2))
    gx = g if keepdims else np.expand_dims(g, axis)
    if wrt_x1:
        return unbroadcast(gx * x2, x1)
    return unbroadcast(gx * x1, x2)


# ------------------------------------------------------------------ einsum

_LETTERS = string.ascii_uppercase + string.ascii_lowercase


@nondiff_helper
def einsum_spec(subscripts, shapes):
    """Parse einsum `subscripts` for operands of `shapes` into explicit
    per-operand label strings and the output labels, with no ellipsis:
    ellipsis axes get fresh letters, shared right-aligned across operands
    as broadcasting does, except an axis of length 1 broadcast against a
    longer one, which gets a label of its own (summed away; its adjoint is
    then the sum over the broadcast axis, as unbroadcast). Implicit output:
    the ellipsis axes, then the labels used once, in ASCII order (NumPy's)."""
    if not isinstance(subscripts, str):
        raise TypeError("einsum_spec takes a subscripts string (einsum_adjoint converts the "
                        "interleaved (operand, sublist) form first)")
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        lhs, out = subscripts.split("->")
    else:
        lhs, out = subscripts, None
    ins = lhs.split(",")
    if len(ins) != len(shapes):
        raise ValueError("einsum: %d subscripts for %d operands" % (len(ins), len(shapes)))
    if out is None:
        labels = [c for s in ins for c in s.replace("...", "")]
        once = sorted(c for c in set(labels) if labels.count(c) == 1)
        out = ("..." if any("..." in s for s in ins) else "") + "".join(once)
    used = set(c for c in subscripts if c.isalpha())
    fresh = (c for c in _LETTERS if c not in used)
    ell_shapes = []
    for s, shp in zip(ins, shapes):
        if "..." in s:
            k = len(shp) - (len(s) - 3)
            ell_shapes.append(tuple(shp[s.index("..."):s.index("...") + k]))
    ell = np.broadcast_shapes(*ell_shapes) if ell_shapes else ()
    ell_labels = [next(fresh) for _ in ell]
    new_ins = []
    for s, shp in zip(ins, shapes):
        if "..." in s:
            i = s.index("...")
            k = len(shp) - (len(s) - 3)
            sub = []
            for j in range(k):
                pos = len(ell) - k + j
                if shp[i + j] == 1 and ell[pos] != 1:
                    sub.append(next(fresh))
                else:
                    sub.append(ell_labels[pos])
            s = s[:i] + "".join(sub) + s[i + 3:]
        new_ins.append(s)
    out = out.replace("...", "".join(ell_labels))
    return new_ins, out


@nondiff_helper
def _einsum_adjoint_plan(subscripts, shapes, i, dtype):
    """The einsum computing the cotangent of operand i: inputs (g, the other
    operands, constants) -> operand i's labels. A label repeated in operand i
    (a diagonal, 'ii') is renamed and tied by an identity matrix; a label of
    operand i that no other input has (summed in the forward) comes from a
    ones vector (the cotangent is constant along it)."""
    ins, out = einsum_spec(subscripts, shapes)
    target = ins[i]
    present = set(out) | set(c for j, s in enumerate(ins) if j != i for c in s)
    used = set(out) | set(c for s in ins for c in s)
    fresh = (c for c in _LETTERS if c not in used)
    consts, const_subs, new_target, seen = [], [], [], set()
    for pos, c in enumerate(target):
        if c in seen:
            c2 = next(fresh)
            consts.append(np.eye(shapes[i][pos], dtype=dtype))
            const_subs.append(c + c2)
            new_target.append(c2)
        else:
            seen.add(c)
            new_target.append(c)
    present |= set(c for s in const_subs for c in s)
    for pos, c in enumerate(target):
        if c not in present:
            consts.append(np.ones(shapes[i][pos], dtype=dtype))
            const_subs.append(c)
            present.add(c)
    others = [s for j, s in enumerate(ins) if j != i]
    spec = ",".join([out] + others + const_subs) + "->" + "".join(new_target)
    return spec, consts


@nondiff_helper
def interleaved_spec(operands):
    """np.einsum's interleaved form (op0, sublist0, op1, sublist1, ...,
    [sublist_out]) as (subscripts string, positions of the operands in
    `operands`): each integer label becomes a letter, Ellipsis '...'."""
    labels = {}

    def letters(sub):
        out = []
        for lab in sub:
            if lab is Ellipsis:
                out.append("...")
            else:
                if lab not in labels:
                    labels[lab] = _LETTERS[len(labels)]
                out.append(labels[lab])
        return "".join(out)

    n = len(operands)
    positions = list(range(0, n - 1 if n % 2 else n, 2))
    ins = [letters(operands[p + 1]) for p in positions]
    spec = ",".join(ins)
    if n % 2:
        spec += "->" + letters(operands[-1])
    return spec, positions


def interleaved_einsum_adjoint(g, operands):
    """The cotangents of einsum's interleaved form, through the equivalent
    subscripts string: a list aligned with `operands`, None at the
    sublists."""
    spec, positions = interleaved_spec(operands)
    grads = einsum_cotangents(g, [spec] + [operands[p] for p in positions])
    out = [None] * len(operands)
    for k, p in enumerate(positions):
        out[p] = grads[k + 1]
    return out


def einsum_adjoint(g, operands):
    """Cotangents of einsum(subscripts, *ops): for each operand, the einsum
    of g with the other operands (conjugated) into that operand's labels
    (Giles 2008's product rule, one contraction per operand). Returns a
    list aligned with `operands` (None for the subscripts string). The
    interleaved form einsum(op0, sublist0, op1, sublist1, ..., [out]) is
    read as the equivalent subscripts string (its list has None at the
    sublists). A primitive of generated code (its rules are in
    numpy_linalg.py); on a tape it runs op by op."""
    return einsum_cotangents(g, operands)


def einsum_cotangents(g, operands):
    """einsum_adjoint's computation, without rules: what the helpers below
    call. Compiling them (a third derivative through np.einsum) stops at its
    *args of a list into np.einsum (UnsupportedSyntaxError), where going on
    would need list code the compiler does not differentiate reliably."""
    if not isinstance(operands[0], str):
        return interleaved_einsum_adjoint(g, operands)
    subscripts, ops = operands[0], operands[1:]
    shapes = [np.shape(o) for o in ops]
    dtype = _dtype(g)
    grads = [None]
    for i in range(len(ops)):
        spec, consts = _einsum_adjoint_plan(subscripts, shapes, i, dtype)
        others = [conj(o) for j, o in enumerate(ops) if j != i]
        grads.append(np.einsum(spec, g, *others, *consts))
    return grads


# einsum_adjoint has rules of its own (numpy_linalg.py): second-order code
# calls it as a primitive rather than compiling its body.

def _einsum_operand_positions(operands):
    """The positions of the arrays in einsum's operands (after the
    subscripts string, or every other one in the interleaved form)."""
    if isinstance(operands[0], str):
        return list(range(1, len(operands)))
    return interleaved_spec(operands)[1]


def einsum_adjoint_vjp(h, g, operands, wrt_g):
    """The VJP of einsum_adjoint(g, operands) (a list whose entry i is
    einsum(spec_i, g, conj(other operands), consts)), linear in the list of
    cotangents `h` (zeros where unused): the cotangent of g (wrt_g), else
    the list of the operands' cotangents (None at the subscripts and
    sublists). Each entry's einsum is differentiated by einsum_cotangents;
    an operand entering conjugated gets the conjugate of its cotangent."""
    if not isinstance(operands[0], str):
        spec, positions = interleaved_spec(operands)
        inner = einsum_adjoint_vjp([None, *[h[p] for p in positions]], g,
                                   [spec, *[operands[p] for p in positions]], wrt_g)
        if wrt_g:
            return inner
        slots = interleaved_slots(operands)
        out = []
        for q in range(len(operands)):
            if slots[q] > 0:
                out.append(inner[slots[q]])
            else:
                out.append(None)
        return out
    subscripts, ops = operands[0], operands[1:]
    n = len(ops)
    shapes = [np.shape(o) for o in ops]
    dtype = _dtype(g)
    terms = []
    for i in range(n):
        spec, consts = _einsum_adjoint_plan(subscripts, shapes, i, dtype)
        others = [conj(ops[j]) for j in range(n) if j != i]
        terms.append(einsum_cotangents(h[i + 1], [spec, g, *others, *consts]))
    if wrt_g:
        dg = np.zeros_like(g)
        for i in range(n):
            dg = dg + terms[i][1]
        return dg
    out = [None]
    for j in range(n):
        total = np.zeros(np.shape(ops[j]), dtype=_dtype(g, ops[j]))
        for i in range(n):
            if i != j:
                total = total + conj(terms[i][2 + j - (j > i)])
        out.append(total)
    return out


@nondiff_helper
def interleaved_slots(operands):
    """For each of einsum's interleaved operands, its entry in the
    subscripts form's list (1, 2, ... for the arrays; 0 for the sublists)."""
    slots = [0] * len(operands)
    for k, p in enumerate(interleaved_spec(operands)[1]):
        slots[p] = k + 1
    return slots


def einsum_adjoint_tangent(tg, tops, g, operands):
    """The tangent of einsum_adjoint(g, operands), jointly linear in the
    tangents of g and of the operands (a list, None where an operand has
    none): entry k is einsum_adjoint(tg, operands)[k] plus, for each operand
    j != k with a tangent, einsum_adjoint with operand j replaced by its
    tangent (entry k does not read operand k)."""
    positions = _einsum_operand_positions(operands)
    out = einsum_cotangents(tg, operands) if tg is not None else [None] * len(operands)
    for j in positions:
        tj = tops[j] if tops is not None else None
        if tj is None:
            continue
        replaced = list(operands)
        replaced[j] = tj
        c = einsum_cotangents(g, replaced)
        for k in positions:
            if k != j:
                out[k] = c[k] if out[k] is None else out[k] + c[k]
    for k in positions:
        if out[k] is None:
            out[k] = np.zeros(np.shape(operands[k]), dtype=_dtype(g, operands[k]))
    return out


# ---------------------------------------------------------------- np.linalg

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


@nondiff_helper
def _phi_mask(x):
    """Lower triangle with the diagonal halved (Murray 2016's Phi)."""
    n = np.shape(x)[-1]
    return np.tril(np.ones((n, n), dtype=_dtype(x))) - 0.5 * np.eye(n, dtype=_dtype(x))


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


# ------------------------------------------------------------------ shapes

@primitive
def index_gather(x, idx):
    """x.ravel()[idx], with 0 where idx < 0: every pure selection of elements
    (take, sort, pad's copying modes, repeat...) is this for some index map
    idx. Linear in x; its rule is index_scatter."""
    idx = np.asarray(idx)
    flat = np.reshape(x, -1)
    valid = idx >= 0
    out = flat[np.where(valid, idx, 0)]
    if not np.all(valid):
        out = np.where(valid, out, np.zeros((), dtype=out.dtype))
    return out


@primitive
def index_scatter(g, x, idx):
    """The adjoint of index_gather: zeros shaped like x with each g[p] added
    at flat position idx[p] (repeated positions accumulate; idx < 0 skipped).
    Linear in g; its rule is index_gather."""
    idx = np.asarray(idx)
    g = np.asarray(g)
    valid = idx >= 0
    size = int(np.prod(np.shape(x), dtype=np.int64))
    g = np.broadcast_to(g, idx.shape)
    out = np.bincount(idx[valid].ravel(), weights=g[valid].ravel(), minlength=size)
    return out.astype(_dtype(g, x)).reshape(np.shape(x))


def _arange_like(x):
    shape = np.shape(x)
    return np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape)


@nondiff_helper
def index_map(fn, a, *args, **kwargs):
    """Flat source positions of fn(a, *args, **kwargs), for a function `fn`
    that only selects (and may repeat) elements of a: fn applied to the
    positions 0..a.size-1 arranged in a's shape."""
    return fn(_arange_like(a), *args, **kwargs)


@nondiff_helper
def compress_index_map(condition, a, axis):
    return np.compress(condition, _arange_like(a), axis=axis)


@nondiff_helper
def extract_index_map(condition, arr):
    return np.extract(condition, _arange_like(arr))


@nondiff_helper
def permutation_index_map(a, z, axis):
    """Flat source positions of z, a permutation of a along `axis` (sort,
    partition): sorting both matches z's entries to a's (equal values are
    interchangeable), so this works whatever order the primal used."""
    a = np.asarray(a)
    z = np.asarray(z)
    src = _arange_like(a)
    if axis is None:
        a, src, axis = a.reshape(-1), src.reshape(-1), 0
        z = z.reshape(-1)
    order_a = np.argsort(a, axis=axis, kind="stable")
    order_z = np.argsort(z, axis=axis, kind="stable")
    out = np.empty_like(src)
    np.put_along_axis(out, order_z, np.take_along_axis(src, order_a, axis=axis), axis=axis)
    return out


@nondiff_helper
def pad_index_map(array, pad_width, mode, reflect_type):
    """Flat source positions of np.pad(array, pad_width, mode) for the modes
    that copy elements (edge, reflect, symmetric, wrap); -1 where constant."""
    if mode in ("reflect", "symmetric") and reflect_type != "even":
        raise NotImplementedError("np.pad(mode=%r, reflect_type=%r) has no rule" % (mode, reflect_type))
    if mode not in ("edge", "reflect", "symmetric", "wrap"):
        raise NotImplementedError("np.pad(mode=%r) has no rule (constant, empty, edge, reflect, "
                                  "symmetric, wrap, maximum, minimum, mean, median and linear_ramp "
                                  "do)" % (mode,))
    return np.pad(_arange_like(array), pad_width, mode=mode)


@nondiff_helper
def pad_slices(array, pad_width):
    """The slices of np.pad's output holding the original array."""
    ndim = np.ndim(array)
    pw = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (ndim, 2))
    return tuple(slice(int(b), int(b) + n) for (b, _), n in zip(pw, np.shape(array)))


def pad_adjoint(g, array, pad_width, mode, reflect_type):
    """np.pad copies `array` into the middle of its output and fills the
    border: with constants (the adjoint reads the middle back) or with
    copies of elements (the adjoint also adds the border's cotangents to the
    elements copied there, through an index map)."""
    if mode in ("constant", "empty"):
        return g[pad_slices(array, pad_width)]
    return index_scatter(g, array, pad_index_map(array, pad_width, mode, reflect_type))


def pad_constant_adjoint(g, array, pad_width, constant_values):
    """The cotangent of a scalar constant_values: the border's total."""
    if np.ndim(constant_values) != 0:
        raise NotImplementedError("np.pad: only a scalar constant_values is differentiated")
    return np.sum(g) - np.sum(g[pad_slices(array, pad_width)])


@nondiff_helper
def negate_shift(shift):
    if np.ndim(shift) == 0:
        return -shift
    return tuple(-int(s) for s in shift)


@nondiff_helper
def rollaxis_inverse(a, axis, start):
    """The permutation undoing np.rollaxis(a, axis, start)."""
    ndim = np.ndim(a)
    axis = axis % ndim
    if start < 0:
        start += ndim
    if axis < start:
        start -= 1
    perm = list(range(ndim))
    perm.remove(axis)
    perm.insert(start, axis)
    return [int(i) for i in np.argsort(perm)]


@nondiff_helper
def ravel_order(a, order):
    """'C' or 'F': the order np.ravel(a, order) reads a in ('A' and 'K' follow
    a's memory layout; other strides raise)."""
    if order in ("A", "K"):
        a = np.asarray(a)
        if a.flags.c_contiguous:
            return "C"
        if a.flags.f_contiguous:
            return "F"
        if order == "A":
            return "C"
        raise NotImplementedError("np.ravel(order='K') of a non-contiguous array has no rule")
    return order


def unravel(g, a, order):
    """Cotangent of np.ravel(a, order): g put back in a's shape, in the order
    ravel read it."""
    shape = tuple(np.shape(a))
    if ravel_order(a, order) == "F":
        return np.transpose(np.reshape(g, shape[::-1]))
    return np.reshape(g, shape)


@nondiff_helper
def _split_points(sizes):
    return [int(i) for i in np.cumsum(sizes)[:-1]]


def _split_along(g, sizes, axis):
    """g cut into consecutive pieces of `sizes` along axis."""
    return np.split(g, _split_points(sizes), axis=axis)


def concatenate_adjoint(g, arrays, axis):
    """np.concatenate: each operand's cotangent is its piece of g (with
    axis=None the operands were flattened first)."""
    if axis is None:
        pieces = _split_along(g, [int(np.size(x)) for x in arrays], 0)
        return [np.reshape(p, np.shape(x)) for p, x in zip(pieces, arrays)]
    return _split_along(g, [np.shape(x)[axis] for x in arrays], axis)


def stack_adjoint(g, arrays, axis):
    """np.stack: operand i's cotangent is g's slice i along the new axis."""
    gm = np.moveaxis(g, axis, 0)
    return [gm[i] for i in range(len(arrays))]


def _promoted(x, kind):
    """The shape np.hstack/vstack/dstack/column_stack give an operand."""
    shape = tuple(np.shape(x))
    if kind == "1d":
        return shape if len(shape) >= 1 else (1,)
    if kind == "2d":
        return shape if len(shape) >= 2 else ((1, 1) if not shape else (1,) + shape)
    if kind == "3d":
        if len(shape) >= 3:
            return shape
        return {0: (1, 1, 1), 1: (1,) + shape + (1,), 2: shape + (1,)}[len(shape)]
    if kind == "column":
        return shape if len(shape) >= 2 else ((1, 1) if not shape else shape + (1,))
    raise ValueError(kind)


def promoted_concatenate_adjoint(g, arrays, kind, axis):
    """hstack (kind '1d', axis 0 for 1-d operands else 1), vstack ('2d', 0),
    dstack ('3d', 2), column_stack ('column', 1): np.concatenate of the
    operands promoted to `kind`; each cotangent is its piece, reshaped back."""
    shapes = [_promoted(x, kind) for x in arrays]
    if axis is None:
        axis = 0 if len(shapes[0]) == 1 else 1
    pieces = _split_along(g, [s[axis] for s in shapes], axis)
    return [np.reshape(p, np.shape(x)) for p, x in zip(pieces, arrays)]


def split_adjoint(gs, axis):
    """np.split / array_split / hsplit...: the pieces' cotangents, joined."""
    return np.concatenate(list(gs), axis=axis)


@nondiff_helper
def hsplit_axis(ary):
    return 0 if np.ndim(ary) == 1 else 1


def tile_adjoint(g, a, reps):
    """np.tile(a, reps): a (promoted to len(reps) axes with leading 1s, and
    reps likewise) repeated r_i times along axis i; g reshaped to
    (r0, s0, r1, s1, ...) and summed over the r axes."""
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    shape = tuple(np.shape(a))
    nd = max(len(reps), len(shape))
    reps = (1,) * (nd - len(reps)) + reps
    full = (1,) * (nd - len(shape)) + shape
    inter = tuple(x for pair in zip(reps, full) for x in pair)
    summed = np.sum(np.reshape(g, inter), axis=tuple(range(0, 2 * nd, 2)))
    return np.reshape(summed, shape)


def repeat_adjoint(g, a, repeats, axis):
    """np.repeat: each element's copies' cotangents, summed. A scalar count
    reshapes (n, r) and sums; per-element counts scatter through an index
    map."""
    if np.ndim(repeats) == 0 or np.size(repeats) == 1:
        r = int(np.reshape(repeats, -1)[0]) if np.ndim(repeats) else int(repeats)
        shape = tuple(np.shape(a))
        if axis is None:
            return np.reshape(np.sum(np.reshape(g, (-1, r)), axis=1), shape)
        ax = axis % len(shape)
        split = shape[:ax] + (shape[ax], r) + shape[ax + 1:]
        return np.sum(np.reshape(g, split), axis=ax + 1)
    return index_scatter(g, a, index_map(np.repeat, a, repeats, axis=axis))


def select_adjoint(g, condlist, choicelist):
    """np.select: element p takes choice i when cond i is the first true one;
    choice i's cotangent is g where that holds (summed over broadcasting)."""
    taken = None
    grads = []
    for cond, choice in zip(condlist, choicelist):
        mask = cond if taken is None else np.logical_and(cond, np.logical_not(taken))
        grads.append(unbroadcast(np.where(mask, g, 0.0), choice))
        taken = cond if taken is None else np.logical_or(taken, cond)
    return grads


def select_default_adjoint(g, condlist, default):
    taken = None
    for cond in condlist:
        taken = cond if taken is None else np.logical_or(taken, cond)
    return unbroadcast(np.where(taken, 0.0, g), default)


def atleast_adjoint(g, arys):
    """np.atleast_1d/2d/3d only add axes of length 1: each cotangent is
    reshaped back. One operand: g is an array; several: a list."""
    if len(arys) == 1:
        return [np.reshape(g, np.shape(arys[0]))]
    return [np.reshape(gi, np.shape(x)) for gi, x in zip(g, arys)]


def broadcast_arrays_adjoint(gs, args):
    """np.broadcast_arrays: each output is its input broadcast to the common
    shape; its cotangent is summed back to the input's shape."""
    return [unbroadcast(g, x) for g, x in zip(gs, args)]


def array_adjoint(g, obj):
    """np.array(obj): obj a (nested) list/tuple of arrays or scalars stacked
    along new leading axes; the cotangent has the same structure, entry i
    being g[i]. An array-like obj gets g reshaped (ndmin's axes dropped)."""
    if isinstance(obj, (list, tuple)):
        return [array_adjoint(g[i], e) for i, e in enumerate(obj)]
    return np.reshape(g, np.shape(obj))


@nondiff_helper
def _along(ndim, axis, start, stop):
    axis = axis % ndim
    return (slice(None),) * axis + (slice(start, stop),)


def append_adjoint(g, arr, values, axis, wrt_arr):
    """np.append(arr, values, axis): concatenate((arr, values), axis), both
    flattened when axis is None."""
    if axis is None:
        n = int(np.size(arr))
        piece = g[:n] if wrt_arr else g[n:]
        return np.reshape(piece, np.shape(arr if wrt_arr else values))
    n = np.shape(arr)[axis]
    if wrt_arr:
        return g[_along(np.ndim(g), axis, 0, n)]
    return g[_along(np.ndim(g), axis, n, None)]


@nondiff_helper
def _diff_pad(ndim, axis):
    pw = [(0, 0)] * ndim
    pw[axis % ndim] = (1, 1)
    return pw


@nondiff_helper
def _diff_extra(x, a, axis):
    """How many positions prepend/append `x` adds along axis."""
    if x is None:
        return 0
    if np.ndim(x) == 0:
        return 1
    return np.shape(x)[axis % np.ndim(a)]


def diff_adjoint(g, a, n, axis, prepend, append):
    """np.diff: the first difference D (out_i = a_{i+1} - a_i) has adjoint
    (D^T g)_j = g_{j-1} - g_j = -diff(pad(g, 1 each side))_j; n-th
    differences apply it n times. With prepend/append the differences were
    of the extended array: its cotangent's middle is a's."""
    for _ in range(n):
        g = -np.diff(np.pad(g, _diff_pad(np.ndim(g), axis)), axis=axis)
    before = _diff_extra(prepend, a, axis)
    if before or _diff_extra(append, a, axis):
        g = g[_along(np.ndim(g), axis, before, before + np.shape(a)[axis])]
    return g


@nondiff_helper
def _gradient_plan(f, varargs, axis, edge_order):
    """np.gradient's axes and, per axis, the matrix M of its (linear)
    finite-difference stencil: M[:, j] is np.gradient of the unit vector e_j
    with that axis's spacing, so the output along the axis is M @ f."""
    ndim = np.ndim(f)
    axes = list(range(ndim)) if axis is None else (
        [axis % ndim] if np.ndim(axis) == 0 else [a % ndim for a in axis])
    if len(varargs) == 0:
        spacings = [None] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacings = [varargs[0]] * len(axes)
    else:
        spacings = list(varargs)
    dtype = _dtype(f)
    mats = []
    for ax, h in zip(axes, spacings):
        eye = np.eye(np.shape(f)[ax], dtype=dtype)
        args = () if h is None else (h,)
        mats.append(np.asarray(np.gradient(eye, *args, axis=0, edge_order=edge_order), dtype=dtype))
    return axes, mats


def gradient_adjoint(g, f, varargs, axis, edge_order):
    """np.gradient is linear in f: along each differentiated axis the output
    is M @ f for the stencil matrix M (central differences inside, one-sided
    of order edge_order at the ends, any spacing or coordinates), so the
    cotangent is the sum over axes of M^T @ g_axis. One axis: g is an array;
    several: a list."""
    axes, mats = _gradient_plan(f, varargs, axis, edge_order)
    gs = [g] if len(axes) == 1 else list(g)
    total = None
    for ax, m, gi in zip(axes, mats, gs):
        t = np.moveaxis(np.tensordot(m, np.moveaxis(gi, ax, 0), axes=(0, 0)), 0, ax)
        total = t if total is None else total + t
    return total
