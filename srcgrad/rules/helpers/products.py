"""Run-time helpers of the product rules (rules/numpy/linalg.py): inner,
tensordot, kron, cross, vecdot and einsum. Each cotangent is the product of
g with the other operand (conjugated, TF's complex convention), contracted
over the output's other axes and put back in the operand's axis order
(Giles, "An extended collection of matrix derivative results for forward
and reverse mode AD", 2008, the product rule; autograd's numpy_vjps.py for
NumPy's axis conventions).
"""
import numpy as np

from ...runtime import nondiff_helper
from .broadcast import unbroadcast
from .complex import conj, inexact_dtype


def outer_left(a, b):
    """`a` with np.ndim(b) length-1 axes appended: a binary ufunc's
    f.outer(a, b) is f(outer_left(a, b), b), of shape a.shape + b.shape
    (NumPy's ufunc.outer: r[i..., j...] = f(a[i...], b[j...])). Linear in a."""
    return np.reshape(a, np.shape(a) + (1,) * np.ndim(b))


def outer_unbroadcast(g, a, b):
    """The cotangent `g` of f(outer_left(a, b), b) with respect to the
    first operand, summed over b's axes back to a's shape."""
    return np.reshape(unbroadcast(g, outer_left(a, b)), np.shape(a))


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


# --------------------------------------------------------------------- einsum

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"     # (string.ascii_letters, upper case first)


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
    rules/generated_code.py); on a tape it runs op by op."""
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
    dtype = inexact_dtype(g)
    grads = [None]
    for i in range(len(ops)):
        spec, consts = _einsum_adjoint_plan(subscripts, shapes, i, dtype)
        others = [conj(o) for j, o in enumerate(ops) if j != i]
        grads.append(_contract(spec, [g, *others, *consts]))
    return grads


#: adjoint contractions whose operands hold at least this many entries in all are planned
#: (np.einsum's optimize="greedy": BLAS through tensordot/matmul); below, planning costs more
#: than it saves (measured: 240 entries 3 us plain vs 13 us planned; 5,000: 31 vs 15; 100,000:
#: 575 vs 89, GradBench's gmm)
PLANNED_EINSUM_MIN = 4096


def _contract(spec, operands):
    """np.einsum(spec, *operands) for an adjoint: NumPy's own loop for small
    operands, a planned contraction (the same sum in another order) for
    large ones. The user's own np.einsum is never changed: only the
    derivative's contractions are srcgrad's to order."""
    total = 0
    for o in operands:          # (compiled again at the third order: plain loops)
        total = total + np.size(o)
    if len(operands) > 1 and total >= PLANNED_EINSUM_MIN:
        return np.einsum(spec, *operands, optimize="greedy")
    return np.einsum(spec, *operands)


# einsum_adjoint has rules of its own (rules/numpy/linalg.py): second-order code
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
    an operand entering conjugated gets the conjugate of its cotangent. A
    None in `h` (a symbolic zero: a batched sweep's example of a list
    cotangent with an unused entry) contributes nothing, and so does a
    None entry in a list cotangent of one operand (einsum raised
    TypeError on them)."""
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
    dtype = inexact_dtype(g)
    terms = []
    for i in range(n):
        spec, consts = _einsum_adjoint_plan(subscripts, shapes, i, dtype)
        others = [conj(ops[j]) for j in range(n) if j != i]
        hi = h[i + 1]
        if isinstance(hi, (list, tuple)):   # (an operand's list cotangent: its None entries zeros)
            hi = np.array([np.zeros(shapes[i][1:]) if e is None else e for e in hi])
        terms.append(None if hi is None else einsum_cotangents(hi, [spec, g, *others, *consts]))
    if wrt_g:
        dg = np.zeros_like(g)
        for i in range(n):
            if terms[i] is not None:
                dg = dg + terms[i][1]
        return dg
    out = [None]
    for j in range(n):
        total = np.zeros(np.shape(ops[j]), dtype=inexact_dtype(g, ops[j]))
        for i in range(n):
            if i != j and terms[i] is not None:
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
            out[k] = np.zeros(np.shape(operands[k]), dtype=inexact_dtype(g, operands[k]))
    return out


# ----------------------------------------------- convolution and correlation

@nondiff_helper
def conv_mode(mode):
    """np.convolve's / np.correlate's `mode` as 'valid', 'same' or 'full':
    NumPy 2 takes these names and the integers 0, 1, 2 (the C converter
    PyArray_CorrelatemodeConverter; the primal has already refused any
    other value)."""
    if isinstance(mode, str):
        return mode
    return ("valid", "same", "full")[int(mode)]


@nondiff_helper
def full_padding(n, m, length, mode, correlate):
    """(before, after): where the `length` entries of `mode`'s output sit in
    the full result of the 1-d sequences of lengths n and m (n + m - 1
    entries). 'valid' starts at min(n, m) - 1; 'same' at (min(n, m) - 1) // 2
    for np.convolve, and for np.correlate at (m - 1) // 2 when n >= m, n // 2
    when n < m (NumPy swaps and reverses the operands of a correlation
    whose first is the shorter: multiarray.correlate2 in
    numpy/_core/src/multiarray/multiarraymodule.c); 'full' at 0."""
    mode = conv_mode(mode)
    short = min(n, m)
    if mode == "full":
        start = 0
    elif mode == "valid":
        start = short - 1
    elif correlate and n < m:
        start = n // 2
    elif correlate:
        start = (m - 1) // 2
    else:
        start = (short - 1) // 2
    return start, n + m - 1 - start - length


def conv_full_cotangent(g, a, v, mode, correlate):
    """The cotangent of the full convolution (correlation) of a and v whose
    `mode` slice has the cotangent g: g with zeros around it (np.pad,
    which has a rule: this is differentiated again at second order)."""
    g = np.reshape(g, (-1,))
    before, after = full_padding(np.size(a), np.size(v), np.shape(g)[0], mode, correlate)
    return np.pad(g, [(before, after)])


def convolve_adjoint(g, a, v, mode, wrt_a):
    """z = np.convolve(a, v, mode) is a slice of the full convolution
    F_k = sum_i a_i v_{k-i}, which is symmetric in a and v: with G the
    cotangent of F (g padded with zeros), d a_i = sum_k G_k conj(v_{k-i}),
    i.e. np.correlate(G, v, 'valid') (np.correlate conjugates its second
    operand: TF's complex convention), and d v likewise with a."""
    other = v if wrt_a else a
    x = a if wrt_a else v
    G = conv_full_cotangent(g, a, v, mode, False)
    return np.reshape(np.correlate(G, np.reshape(other, (-1,)), "valid"), np.shape(x))


def correlate_adjoint(g, a, v, mode, wrt_a):
    """z = np.correlate(a, v, mode) is a slice of the full correlation
    C_k = sum_n a_{n+k} conj(v_n), k = -(m-1)..n-1 (NumPy's definition, the
    np.correlate docstring), holomorphic in a and antiholomorphic in v.
    With G the cotangent of C: d a_i = sum_k G_k v_{i-k}, np.convolve(G, v,
    'valid'); d v_n = sum_k conj(G_k) a_{n+k}, the reversed conjugate of
    np.correlate(G, a, 'valid') (TF's convention: the cotangent of conj(v)
    is the conjugate of that of v)."""
    G = conv_full_cotangent(g, a, v, mode, True)
    if wrt_a:
        return np.reshape(np.convolve(G, np.reshape(v, (-1,)), "valid"), np.shape(a))
    return np.reshape(conj(np.correlate(G, np.reshape(a, (-1,)), "valid"))[::-1], np.shape(v))
