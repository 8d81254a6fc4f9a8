"""Run-time helpers of the shape and indexing rules (rules/numpy/shapes.py,
indexing.py).

The cotangent of an operation that only moves elements is the inverse
move; of one that selects or repeats elements, a scatter-add through an
index map (`index_scatter`, the map being the operation applied to the
positions 0..n-1: `index_map`). index_gather and index_scatter are each
other's adjoints (primitives; their rules are in rules/numpy/indexing.py).
NumPy's own definitions (numpy/lib/_function_base_impl.py,
_shape_base_impl.py) say what is moved where.
"""
import numpy as np

from ...runtime import nondiff_helper, primitive
from .broadcast import unbroadcast
from .complex import inexact_dtype


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
    Linear in g; its rule is index_gather. A complex g is scattered part by
    part (np.bincount's weights are real)."""
    idx = np.asarray(idx)
    g = np.asarray(g)
    valid = idx >= 0
    size = int(np.prod(np.shape(x), dtype=np.int64))
    g = np.broadcast_to(g, idx.shape)
    positions, weights = idx[valid].ravel(), g[valid].ravel()
    out = np.bincount(positions, weights=weights.real, minlength=size)
    if weights.dtype.kind == "c":
        out = out + 1j * np.bincount(positions, weights=weights.imag, minlength=size)
    return out.astype(inexact_dtype(g, x)).reshape(np.shape(x))


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


# ---------------------------------------------------------------- rearranging

@nondiff_helper
def inverse_axes(axes, x):
    """The permutation undoing transpose(x, axes); None for a plain reverse."""
    if axes is None:
        return None
    ndim = np.ndim(x)
    return tuple(np.argsort([a % ndim for a in axes]))


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


# ------------------------------------------------------ joining and splitting

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
    return [gm[i, ...] for i in range(len(arrays))]


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


def meshgrid_axis(i, n, indexing):
    """The output axis along which np.meshgrid lays its input i of n: i
    for indexing='ij'; for 'xy' (Cartesian, the default) the first two are
    swapped when n >= 2 (NumPy's meshgrid in numpy/lib/_function_base_impl.py:
    with 'xy' its output i has shape (len(x1), len(x0), len(x2), ...))."""
    if indexing == "xy" and n >= 2 and i < 2:
        return 1 - i
    return i


def meshgrid_adjoint(gs, xi, indexing="xy"):
    """np.meshgrid(*xi): output i is ravel(xi[i]) laid along axis
    meshgrid_axis(i) and broadcast over the others (dense) or kept with
    length-1 other axes (sparse=True). Its cotangent gs[i] (either shape) is
    summed over every other axis and reshaped to xi[i]'s shape (meshgrid
    ravels its inputs). A list, one cotangent per input."""
    n = len(xi)
    out = []
    for i, (g, x) in enumerate(zip(gs, xi)):
        if g is None:
            out.append(None)
            continue
        keep = meshgrid_axis(i, n, indexing)
        others = tuple(k for k in range(np.ndim(g)) if k != keep)
        out.append(np.reshape(np.sum(g, axis=others), np.shape(x)))
    return out


def array_adjoint(g, obj):
    """np.array(obj): obj a (nested) list/tuple of arrays or scalars stacked
    along new leading axes; the cotangent has the same structure, entry i
    being g[i]. An array-like obj gets g reshaped (ndmin's axes dropped)."""
    if isinstance(obj, (list, tuple)):
        return [array_adjoint(g[i, ...], e) for i, e in enumerate(obj)]     # (g[i, ...]: the array API's spelling)
    return np.reshape(g, np.shape(obj))


def restacked(h, obj, g):
    """The adjoint of array_adjoint(g, obj) (linear in g, entry i of its
    result being g[i]) for the cotangent `h` of its result, a nested list
    like obj: the entries' cotangents stacked back as np.array stacked the
    values (None: zeros), in g's shape."""
    return np.reshape(array_tangent(h, obj), np.shape(g))


def array_tangent(tobj, obj):
    """The tangent of np.asarray(obj) (and its spellings), linear in `tobj`:
    for a (nested) list or tuple, its entries' tangents stacked as the
    values are (an entry without a tangent, None, gives zeros shaped like
    it); for an array-like obj, its tangent as is (the rule casts it to the
    output's dtype)."""
    if isinstance(obj, (list, tuple)):
        if tobj is None:
            tobj = [None] * len(obj)
        return np.stack([array_tangent(t, e) for t, e in zip(tobj, obj)])
    if tobj is None:
        return np.zeros(np.shape(obj), dtype=inexact_dtype(obj))
    return tobj


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


# ---------------------------------------------------- repeating and selecting

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
        if axis is None:     # ((n, r) with n = a's size: -1 is ambiguous when r = 0 and g is empty)
            return np.reshape(np.sum(np.reshape(g, (int(np.size(a)), r)), axis=1), shape)
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



@nondiff_helper
def choose_index(a, choices, mode):
    """np.choose's index array after `mode` ('raise', 'wrap' or 'clip', in
    any spelling NumPy accepts): np.choose itself applied to the choice
    numbers 0..n-1 (n = len(choices))."""
    return np.choose(a, np.arange(len(choices)), mode=mode)


def choose_adjoint(g, a, choices, mode):
    """np.choose(a, choices): output element p is element p of choice
    idx[p] (all operands broadcast together; idx is `a` after `mode`), so
    choice i's cotangent is g where idx == i, summed back over the axes it
    was broadcast along. A list, one entry per choice (the rows of an array
    of choices: seq_cotangent stacks them)."""
    idx = choose_index(a, choices, mode)
    return [unbroadcast(np.where(idx == i, g, 0.0), choices[i]) for i in range(len(choices))]


def choose_tangent(tchoices, a, choices, mode):
    """np.choose is linear in its choices: the choice of their tangents (a
    list with None for a choice without one: zeros; or an array of them).
    Linear in `tchoices`."""
    if isinstance(tchoices, (list, tuple)):
        tchoices = [np.zeros(np.shape(c), dtype=inexact_dtype(c)) if t is None else t
                    for t, c in zip(tchoices, choices)]
    return np.choose(a, tchoices, mode=mode)

# ---------------------------------------------------------------- differences

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


def diff_end_adjoint(g, a, n, axis, prepend, append, which):
    """The cotangent of np.diff's `prepend` (which='prepend') or `append`:
    the differences were of concatenate(prepend, a, append) along axis, so
    the end gets its slice of that array's cotangent (the first
    difference's adjoint applied n times), summed for a scalar end (NumPy
    expands it to length 1 along axis and a's shape elsewhere)."""
    end = prepend if which == "prepend" else append
    for _ in range(n):
        g = -np.diff(np.pad(g, _diff_pad(np.ndim(g), axis)), axis=axis)
    before = _diff_extra(prepend, a, axis)
    ax = axis % np.ndim(a)
    if which == "prepend":
        part = g[_along(np.ndim(g), ax, 0, before)]
    else:
        start = before + np.shape(a)[ax]
        part = g[_along(np.ndim(g), ax, start, start + _diff_extra(append, a, axis))]
    if np.ndim(end) == 0:
        return np.sum(part)
    return np.reshape(part, np.shape(end))


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
    dtype = inexact_dtype(f)
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


# ---------------------------------------------------------------------- block

@nondiff_helper
def block_positions(arrays):
    """For np.block(arrays) (nested lists of arrays and scalars): the same
    nested structure with, in place of each leaf, the flat positions in the
    output of its elements (in the leaf's shape). np.block only moves
    elements (none is repeated), so they are found by blocking, in place of
    each leaf, the consecutive integers numbering its elements."""
    leaves = []
    _leaves(arrays, leaves)
    offsets = [0]
    for x in leaves:
        offsets.append(offsets[-1] + int(np.size(x)))
    ids = np.block(_numbered(arrays, iter(offsets))).reshape(-1)
    where = np.empty(ids.size, dtype=np.intp)
    where[ids] = np.arange(ids.size)
    return _placed(arrays, where, iter(offsets))


def _leaves(arrays, out):
    if isinstance(arrays, list):
        for e in arrays:
            _leaves(e, out)
    else:
        out.append(arrays)


def _numbered(arrays, offsets):
    if isinstance(arrays, list):
        return [_numbered(e, offsets) for e in arrays]
    return next(offsets) + np.arange(int(np.size(arrays)), dtype=np.intp).reshape(np.shape(arrays))


def _placed(arrays, where, offsets):
    if isinstance(arrays, list):
        return [_placed(e, where, offsets) for e in arrays]
    start = next(offsets)
    return where[start:start + int(np.size(arrays))].reshape(np.shape(arrays))


def block_adjoint(g, arrays):
    """np.block assembles its leaves into one array: each leaf's cotangent
    is g read at the positions its elements went to (index_gather), in the
    nested-list structure of `arrays`."""
    return gather_tree(g, block_positions(arrays))


def block_tangent(tangents, arrays):
    """np.block of the leaves' tangents, in the nesting of `arrays` (a list
    or tuple of tangents, None for a leaf or sublist without one: zeros of
    the leaf's shape). Linear in `tangents`."""
    return np.block(_tangent_tree(tangents, arrays))


def _tangent_tree(tangents, arrays):
    if isinstance(arrays, (list, tuple)):
        if tangents is None:
            tangents = [None] * len(arrays)
        return [_tangent_tree(t, a) for t, a in zip(tangents, arrays)]
    if tangents is None:
        return np.zeros(np.shape(arrays), dtype=inexact_dtype(arrays))
    return tangents


def block_on_tensors(arrays):
    """np.block(arrays) on Tensors (tensor.py's register_tape_form), from
    operations the tape records: the raveled leaves concatenated, gathered
    into the output's order (index_gather), reshaped. A tape entry's list
    parameter holds one level of Tensors; np.block's are nested. Anything
    but a nested list of leaves is left to np.block (NotImplemented)."""
    if type(arrays) is not list:
        return NotImplemented
    leaves = []
    _leaves(arrays, leaves)
    if not leaves or any(type(x) in (list, tuple) for x in leaves):
        return NotImplemented
    ids, shape = block_sources(arrays)
    flat = np.concatenate([np.ravel(x) for x in leaves])
    return np.reshape(index_gather(flat, ids), shape)


@nondiff_helper
def block_sources(arrays):
    """For np.block(arrays): for each output element (flat), its position in
    the concatenation of the raveled leaves; and the output's shape."""
    leaves = []
    _leaves(arrays, leaves)
    offsets = [0]
    for x in leaves:
        offsets.append(offsets[-1] + int(np.size(x)))
    ids = np.block(_numbered(arrays, iter(offsets)))
    return ids.reshape(-1), ids.shape


def gather_tree(g, positions):
    """index_gather(g, p) for each array p of a nested list, same nesting."""
    if isinstance(positions, list):
        return [gather_tree(g, p) for p in positions]
    return index_gather(g, positions)


# --------------------------------------------------------------------- insert

@nondiff_helper
def insert_index_maps(arr, obj, values, axis):
    """Flat source positions for np.insert(arr, obj, values, axis): of arr's
    elements (-1 at the inserted ones) and of values' elements (-1 at arr's;
    a broadcast value repeats its position)."""
    arr = np.asarray(arr)
    pos_arr = np.arange(arr.size).reshape(arr.shape)
    pos_values = np.arange(int(np.size(values))).reshape(np.shape(values))
    arr_map = np.insert(pos_arr, obj, np.full(np.shape(values), -1), axis=axis)
    values_map = np.insert(np.full(arr.shape, -1), obj, pos_values, axis=axis)
    return arr_map, values_map


def insert_adjoint(g, arr, obj, values, axis, wrt_arr):
    """np.insert only moves arr's elements and copies values' (broadcast)
    ones: each gets the cotangents of the output positions it went to
    (index_scatter; a broadcast value's copies accumulate). Values given as
    a list or tuple get a list cotangent, one entry per element (a list
    parameter's cotangent, registry.py)."""
    arr_map, values_map = insert_index_maps(arr, obj, values, axis)
    if wrt_arr:
        return index_scatter(g, arr, arr_map)
    c = index_scatter(g, values, values_map)
    if isinstance(values, (list, tuple)):
        return [c[i] for i in range(len(values))]
    return c


def insert_tangent(tarr, tvalues, arr, obj, values, axis):
    """np.insert is linear in (arr, values) jointly: the insert of their
    tangents, zeros for arr's or for values' (or a list element's) where
    they have none. Linear in (tarr, tvalues)."""
    if isinstance(values, (list, tuple)):
        if tvalues is None:
            tvalues = [None] * len(values)
        rows = [np.zeros(np.shape(v), dtype=inexact_dtype(v)) if t is None else t for t, v in zip(tvalues, values)]
        tvalues = np.stack(rows) if rows else np.zeros(np.shape(values))
    elif tvalues is None:
        tvalues = np.zeros(np.shape(values), dtype=inexact_dtype(values))
    if tarr is None or getattr(tarr, "dtype", np.result_type(tarr)).kind not in "fc":
        tarr = np.zeros(np.shape(arr), dtype=inexact_dtype(arr, tvalues))
    return np.insert(tarr, obj, tvalues, axis=axis)


# ------------------------------------------------------------------- ediff1d

@nondiff_helper
def _ediff1d_lengths(ary, to_begin):
    """(len(to_begin), the number of differences) in np.ediff1d's output."""
    begin = 0 if to_begin is None else int(np.size(to_begin))
    return begin, max(int(np.size(ary)) - 1, 0)


def ediff1d_adjoint(g, ary, to_end, to_begin, part):
    """np.ediff1d(ary, to_end, to_begin) = concatenate(ravel(to_begin),
    diff(ravel(ary)), ravel(to_end)) (NumPy's definition,
    numpy/lib/_arraysetops_impl.py): each end gets its slice of g back in
    its shape, and ary the first difference's adjoint of the middle slice,
    d ary_j = g_{j-1} - g_j (zero padding). `part`: 'ary', 'to_end' or
    'to_begin'."""
    begin, n = _ediff1d_lengths(ary, to_begin)
    if part == "to_begin":
        return np.reshape(g[:begin], np.shape(to_begin))
    if part == "to_end":
        return np.reshape(g[begin + n:], np.shape(to_end))
    middle = g[begin:begin + n]
    return np.reshape(np.pad(middle, [(1, 0)]) - np.pad(middle, [(0, 1)]), np.shape(ary))


def ediff1d_tangent(tary, tend, tbegin, ary, to_end, to_begin):
    """The tangent of np.ediff1d: ediff1d of the tangents, zeros for a part
    that has none. Jointly linear in tary, tend, tbegin."""
    dtype = inexact_dtype(ary)
    if tary is None:
        tary = np.zeros(np.shape(ary), dtype=dtype)
    parts = []
    if to_begin is not None:
        parts.append(np.reshape(np.zeros(np.shape(to_begin), dtype=dtype) if tbegin is None else tbegin, (-1,)))
    parts.append(np.diff(np.reshape(tary, (-1,))))
    if to_end is not None:
        parts.append(np.reshape(np.zeros(np.shape(to_end), dtype=dtype) if tend is None else tend, (-1,)))
    return np.concatenate(parts) if len(parts) > 1 else parts[0]
