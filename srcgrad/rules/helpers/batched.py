"""Batched cotangents: the batched twins of the helpers, for vectorised
Jacobians.

A Jacobian by reverse mode pushes many cotangents through the generated
adjoint at once: a *stack* of cotangents, the batch on a new leading axis
(JAX's vmap of the VJP; TF's pfor). Primal values are not batched. A rule
whose template only combines the cotangent elementwise with primal values
(the ufuncs), or calls the helpers below in place of their unbatched twins
(`BATCHED`), runs batched as written; the others are looped over the batch
(`batch_vjp`), so every rule is correct batched and the common ones are
fast. transforms/batch_safety.py decides which is which; the batched rule
templates of the rules that need one sit with their family (reshape,
transpose... in rules/numpy/shapes.py).

Shapes: a batched cotangent of a value of shape S has shape (B,) + S.
"""
import numpy as np

from ... import runtime
from ...runtime import nondiff_helper
from ..python.containers import _holds_derivatives, seq_cotangent, value_cotangent, zero_at, zero_at_in_place
from .products import cross_adjoint
from .shapes import _split_points, array_adjoint, concatenate_adjoint, ravel_order, unravel
from .broadcast import (_normalize_axes, _shape, basic_index, matmul_adjoint_x, matmul_adjoint_y, matmul_product,
                        rereduce, sum_axes, unbroadcast, unindex, unreduce)


def batch_size(g):
    """The batch size of a batched cotangent (an array, or a container of
    them; scalars and None among them are placeholders of unused outputs)."""
    if isinstance(g, (list, tuple)):
        for e in g:
            b = batch_size(e)
            if b is not None:
                return b
        return None
    if isinstance(g, dict):
        return batch_size(list(g.values()))
    if g is None or np.ndim(g) == 0:
        return None
    return np.shape(g)[0]


@nondiff_helper
def zeros_b(x, B):
    """Zeros of shape (B,) + x's shape, in x's floating dtype (float64 for
    integers); a container of None for a list, tuple or dict; None (a
    symbolic zero) when B is None (a batched split reverse sweep given
    only symbolic zeros, a list of None, cannot tell its batch size)."""
    if isinstance(x, (list, tuple)):
        return [None] * len(x)
    if isinstance(x, dict):
        return dict.fromkeys(x)
    if B is None:
        return None
    if isinstance(x, runtime.ShapeOf):      # an input the reverse sweep restored by its shape only
        kind = np.dtype(x.dtype).kind
        return np.zeros((B,) + tuple(x.shape), dtype=x.dtype if kind in "fc" else np.float64) \
            if kind in "fciu" else None
    if x is None or isinstance(x, (str, bytes, slice)) or x is Ellipsis:
        return None             # (a dict key, a label, part of an index: no derivative)
    try:
        dtype = np.result_type(x)
    except TypeError:           # (an object with no numeric dtype)
        return None
    if dtype.kind not in "fc":
        dtype = np.float64
    return np.zeros((B,) + tuple(np.shape(x)), dtype=dtype)


def densify_b(g, x, B):
    """densify for batched cotangents: zeros of shape (B,) + x's shape
    where `g` is a symbolic zero (None). For a list or tuple `x` given one
    array `g` of shape (B, len(x), ...) (a per-example rule's results
    stacked: np.stack's adjoint of a list of numbers), the list of its
    entries' stacks g[:, k], as every other cotangent of x is: added to
    one of those, the array would pair its examples with x's entries."""
    if g is None:
        return zeros_dense_b(x, B)
    if type(g) is np.ndarray and isinstance(x, (list, tuple)):
        return [densify_b(g[:, k], e, B) for k, e in enumerate(x)]
    return g


def entry_b(g, k):
    """Entry k of the batched cotangent `g` of a list or tuple: g[k] for
    the list form (a list of (B, ...) stacks), g[:, k] for one array of
    shape (B, len, ...) (a rule's cotangent of a list operand, np.dot's or
    matmul's of [a, 2.0]: an array in the list's shape, with the batch in
    front); None (a symbolic zero) as it is. Indexing that array as g[k]
    took example k for entry k: a wrong Jacobian without a word when the
    batch size was at least the list's length."""
    if g is None:
        return None
    if type(g) is np.ndarray:
        return g[:, k]
    return g[k]


def add_cotangents_b(a, b):
    """add_cotangents for batched cotangents: a list's cotangent in the
    list form and one (B, len, ...) array of it (a rule's cotangent of a
    list operand) add entry by entry, the array's entries on its axis 1
    (entry_b), at every level of nesting. (add_cotangents zips the list
    with the array's rows, which here are examples: example k was added to
    entry k, and zip dropped the rest, a wrong Hessian without a word.)"""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        n = len(a) if isinstance(a, (list, tuple)) else len(b)
        return [add_cotangents_b(entry_b(a, k), entry_b(b, k)) for k in range(n)]
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for k, v in b.items():
            out[k] = add_cotangents_b(out.get(k), v)
        return out
    return a + b


def densify_tree_b(g, x, B):
    """densify_tree for batched cotangents."""
    if g is None:
        return zeros_dense_b(x, B)
    if isinstance(x, (list, tuple)) and isinstance(g, (list, tuple)):
        return [densify_b(e, xi, B) for e, xi in zip(g, x)]
    return g


def zeros_dense_b(x, B):
    """Batched zeros with the structure of `x` (lists of zeros for containers)."""
    if isinstance(x, (list, tuple)):
        return [zeros_dense_b(e, B) for e in x]
    if isinstance(x, dict):
        out = {}
        for k, v in x.items():
            out[k] = zeros_dense_b(v, B)
        return out
    return zeros_b(x, B)


def unbroadcast_b(g, x):
    """unbroadcast for a batched `g` of shape (B,) + S: summed (or
    broadcast) to (B,) + x's shape. A list or tuple `g` for an array `x`
    (the list form of the cotangent of a list read as one array: a
    helper's list operand, differentiated again) is stacked on axis 1
    first, its None entries zeros; read as one array, its entries were
    taken for examples (an error, or transposed without a word when the
    batch size equalled the list's length)."""
    if isinstance(g, (list, tuple)) and not isinstance(x, (list, tuple)) and batch_size(g) is not None:
        B = batch_size(g)
        inner = tuple(_shape(x))[1:]
        g = np.stack([np.zeros((B,) + inner) if e is None else np.broadcast_to(e, (B,) + inner) for e in g], axis=1)
    gs = np.shape(g)
    B, inner = gs[0], gs[1:]
    shape = tuple(_shape(x))
    if inner == shape:
        return g
    if len(inner) < len(shape) or (len(inner) == len(shape) and all(
            a == b or a == 1 for a, b in zip(inner, shape))):
        g = np.reshape(g, (B,) + (1,) * (len(shape) - len(inner)) + inner)
        return np.broadcast_to(g, (B,) + shape)
    lead = len(inner) - len(shape)
    axes = tuple(range(1, lead + 1)) + tuple(
        1 + lead + i for i, s in enumerate(shape) if s == 1 and inner[lead + i] != 1)
    if axes:
        g = sum_axes(g, axes) if type(g) is np.ndarray else np.sum(g, axis=axes)
    return np.reshape(g, (B,) + shape)


def unreduce_b(g, x, axis=None, keepdims=False):
    """unreduce for a batched `g`: (B,) + reduced shape -> (B,) + x's shape."""
    shape = tuple(_shape(x))
    B = np.shape(g)[0]
    if not keepdims:
        axes = _normalize_axes(axis, len(shape))
        g = np.reshape(g, (B,) + tuple(1 if i in axes else s for i, s in enumerate(shape)))
    return np.broadcast_to(g, (B,) + shape)


def rereduce_b(h, g, axis=None, keepdims=False):
    """rereduce for a batched `h`: summed over the reduced axes, (B,) + g's shape."""
    axes = _normalize_axes(axis, len(np.shape(h)) - 1)
    B = np.shape(h)[0]
    return np.reshape(np.sum(h, axis=tuple(a + 1 for a in axes), keepdims=True), (B,) + tuple(np.shape(g)))


def matmul_adjoint_x_b(g, x, y):
    """matmul_adjoint_x for a batched `g` (the batch is one more leading
    matmul batch axis)."""
    return unbroadcast_b(matmul_product(g, x, y, True), x)


def matmul_adjoint_y_b(g, x, y):
    return unbroadcast_b(matmul_product(g, x, y, False), y)


def cross_adjoint_b(g, a, b, axisa, axisb, axisc, axis, wrt_a):
    """cross_adjoint for a batched `g` of shape (B,) + c's shape: np.cross
    broadcasts the (unbatched) operand over the batch axis, and the sum back
    keeps it (unbroadcast_b). 3-vectors; other cases (2-vectors) run
    cross_adjoint once per example."""
    if axis is not None:
        axisa = axisb = axisc = axis
    am = np.moveaxis(a, axisa, -1)
    bm = np.moveaxis(b, axisb, -1)
    gm = np.moveaxis(g, axisc + 1 if axisc >= 0 else axisc, -1)
    if am.shape[-1] != 3 or bm.shape[-1] != 3 or np.shape(gm)[-1] != 3:
        return np.stack([cross_adjoint(gk, a, b, axisa, axisb, axisc, None, wrt_a) for gk in g])
    if wrt_a:
        return np.moveaxis(unbroadcast_b(np.cross(bm, gm), am), -1, axisa + 1 if axisa >= 0 else axisa)
    return np.moveaxis(unbroadcast_b(np.cross(gm, am), bm), -1, axisb + 1 if axisb >= 0 else axisb)


def _as_tuple(index):
    return index if isinstance(index, tuple) else (index,)


def _advanced(parts):
    """How many advanced indices `parts` holds. An int counts among them
    when an array does (NumPy: x[i, :, 0] with an array i has its advanced
    indices apart, so their axes go first; with the batch axis in front as
    well, they would go before it)."""
    arrays = sum(1 for p in parts if not (p is None or p is Ellipsis or isinstance(p, (slice, int, np.integer))))
    ints = sum(1 for p in parts if isinstance(p, (int, np.integer)) and not isinstance(p, bool))
    return arrays + ints if arrays else 0


def array_adjoint_b(g, obj):
    """array_adjoint (np.array / np.asarray of a nested list) for a batched
    `g` of shape (B,) + the array's shape: entry i of the list gets
    g[:, i], so one slice per entry for all B cotangents, not one call per
    cotangent (a Jacobian of a function building a rotation matrix from
    its entries)."""
    if isinstance(obj, (list, tuple)):
        return [array_adjoint_b(g[:, i, ...], e) for i, e in enumerate(obj)]
    return np.reshape(g, np.shape(g)[:1] + np.shape(obj))


def restacked_b(h, obj, g, B):
    """restacked for a batched `h` (a nested list like obj of (B,) + entry
    shape cotangents, None for zeros): the entries stacked on axis 1, in
    the shape (B,) + g's shape."""
    return np.reshape(_stacked_entries_b(h, obj, B), (B,) + tuple(np.shape(g)))


def _stacked_entries_b(h, obj, B):
    if isinstance(obj, (list, tuple)):
        if h is None:
            h = [None] * len(obj)
        return np.stack([_stacked_entries_b(t, e, B) for t, e in zip(h, obj)], axis=1)
    if h is None:
        return zeros_b(obj, B)
    return np.broadcast_to(h, (B,) + tuple(np.shape(obj)))


def unravel_b(g, a, order):
    """unravel (np.ravel's adjoint) for a batched `g` of shape (B, a.size):
    each row put back in a's shape, in the order ravel read it."""
    shape = tuple(np.shape(a))
    if ravel_order(a, order) == "F":
        return np.transpose(np.reshape(g, np.shape(g)[:1] + shape[::-1]), (0,) + tuple(range(len(shape), 0, -1)))
    return np.reshape(g, np.shape(g)[:1] + shape)


def concatenate_adjoint_b(g, arrays, axis):
    """concatenate_adjoint for a batched `g` (B,) + the result's shape:
    each operand's pieces of all B cotangents in one split, along the axis
    after the batch axis."""
    if axis is None:
        pieces = np.split(g, _split_points([int(np.size(x)) for x in arrays]), axis=1)
        return [np.reshape(p, np.shape(p)[:1] + np.shape(x)) for p, x in zip(pieces, arrays)]
    ndim = np.ndim(arrays[0])
    return np.split(g, _split_points([np.shape(x)[axis] for x in arrays]), axis=axis % ndim + 1)


def seq_cotangent_b(g, x, B):
    """seq_cotangent for batched cotangents: a list's as is; for an array
    whose rows the list held, the rows' (B,) + row cotangents stacked
    along axis 1 (zeros for None)."""
    if isinstance(x, dict):
        return None
    if isinstance(x, (list, tuple)):
        return g
    rows = [zeros_dense_b(x[i], B) if e is None else e for i, e in enumerate(g)]
    return np.stack(rows, axis=1) if rows else zeros_dense_b(x, B)


def unindex_b(g, x, index):
    """unindex for a batched `g`: (B,) + x[index]'s shape scattered into
    zeros of shape (B,) + x's shape. Containers: the container of batched
    cotangents."""
    if isinstance(x, (list, tuple, dict)):
        return runtime.unindex_container(g, x, index)
    if type(g) is np.ndarray and type(x) is np.ndarray and type(index) is slice and g.dtype == x.dtype:
        out = np.zeros(g.shape[:1] + x.shape, x.dtype)
        out[:, index] = g
        return out
    B = np.shape(g)[0]
    dtype = np.result_type(np.asarray(g).dtype, np.result_type(x))
    out = np.zeros((B,) + tuple(np.shape(x)), dtype=dtype)
    parts = _as_tuple(index)
    if basic_index(index):
        out[(slice(None),) + parts] = g
    elif _advanced(parts) > 1:        # advanced indices move axes: one example at a time
        for k in range(B):
            np.add.at(out[k], index, g[k])
    else:
        np.add.at(out, (slice(None),) + parts, g)
    return out


def unindex_add_b(acc, g, x, index):
    """acc + unindex_b(g, x, index), written into `acc` when it can be: the
    compiler proved that no other name reads acc's buffer again
    (transforms/inplace.py), and here acc is checked to be a writable
    NumPy array owning its data, of shape (B,) + x's shape and a dtype that
    holds the sum. Saves the zeros unindex_b allocates and the full-size
    addition: O(size of the write) instead of O(size of x). Otherwise the
    sum, a new array."""
    if (type(acc) is np.ndarray and type(g) is np.ndarray and type(x) is np.ndarray and acc.flags.writeable
            and acc.flags.owndata and acc.shape == g.shape[:1] + x.shape
            and ((acc.dtype == g.dtype and acc.dtype == x.dtype)
                 or np.result_type(acc.dtype, g.dtype, x.dtype) == acc.dtype)):
        parts = _as_tuple(index)
        if basic_index(index):
            acc[(slice(None),) + parts] += g
        elif _advanced(parts) > 1:        # advanced indices move axes: one example at a time
            for k in range(acc.shape[0]):
                np.add.at(acc[k], index, g[k])
        else:
            np.add.at(acc, (slice(None),) + parts, g)
        return acc
    return acc + unindex_b(g, x, index)


def value_cotangent_b(g, index, v, x=None):
    """value_cotangent for a batched `g` (the adjoint of `x[index] = v`):
    g[:, index] summed back to (B,) + v's shape, a new array. A basic index
    (ints, slices, None, Ellipsis) into a float or complex array runs
    batched; anything else (containers, index arrays that may name an
    element twice, integer arrays) runs value_cotangent once per example."""
    if (type(g) is np.ndarray and basic_index(index) and not isinstance(v, (list, tuple, dict))
            and (x is None or _holds_derivatives(x))):
        part = g[(slice(None),) + _as_tuple(index)].copy()     # (not a view: g may be zeroed in place next)
        return unbroadcast_b(part, v)
    return batch_vjp(lambda gk, _z: (value_cotangent(gk, index, v, x),), g, None)[0]


def zero_at_b(g, index):
    """zero_at for a batched `g`: a copy with g[:, index] zeroed; None (a
    symbolic zero) stays None; a list or dict in its batched form (one
    stack per entry) as zero_at does, entry `index` None; other containers
    once per example. (A list of symbolic zeros went to batch_vjp, which
    has no batch size to loop over and returned None for the whole list:
    a TypeError in Hessians through `xs[i] = ...` on a list.)"""
    if type(g) is np.ndarray and basic_index(index):
        out = g.copy()
        out[(slice(None),) + _as_tuple(index)] = 0.0
        return out
    if isinstance(g, (list, dict)):
        return zero_at(g, index)
    return batch_vjp(lambda gk, _z: (zero_at(gk, index),), g, None)[0]


def zero_at_in_place_b(g, index):
    """zero_at_b zeroing g's own entries (returned), where the compiler
    proved that nothing reads the old `g` again (transforms/inplace.py)."""
    if type(g) is np.ndarray and g.flags.writeable and basic_index(index):
        g[(slice(None),) + _as_tuple(index)] = 0.0
        return g
    return zero_at_b(g, index)


def gather_b(h, index):
    """h[index] for a batched `h` (the transpose of unindex_b): the batch
    axis stays first; a container is indexed as is."""
    if type(h) is np.ndarray and type(index) is slice:
        return h[:, index]
    if isinstance(h, (list, tuple, dict)):
        return h[index]
    parts = _as_tuple(index)
    if _advanced(parts) > 1:
        return np.stack([h[k][index] for k in range(np.shape(h)[0])])
    return h[(slice(None),) + parts]


def reshape_b(g, x):
    """A batched cotangent reshaped to (B,) + x's shape."""
    return np.reshape(g, (np.shape(g)[0],) + tuple(np.shape(x)))


def transpose_b(g, axes):
    """np.transpose of the example axes of a batched `g` (axes None: reversed)."""
    n = np.ndim(g) - 1
    if axes is None:
        return np.transpose(g, (0,) + tuple(range(n, 0, -1)))
    return np.transpose(g, (0,) + tuple(a % n + 1 for a in axes))


def swapaxes_b(g, axis1, axis2):
    n = np.ndim(g) - 1
    return np.swapaxes(g, axis1 % n + 1, axis2 % n + 1)


def batch_vjp(vjp, g, z, *args):
    """Run the unbatched VJP function `vjp(g, z, *args) -> tuple` of a rule
    once per example of the batched cotangent `g` and stack the results:
    the loop for rules that cannot run batched. Returns a tuple aligned with
    vjp's (None where it gives None; all None when `g` is None, a symbolic
    zero)."""
    if isinstance(g, (list, tuple, dict)) and batch_size(g) is None:
        # every element a symbolic zero (a list of dict keys): zero cotangents, as None
        none = [None] * len(g) if not isinstance(g, dict) else dict.fromkeys(g)
        return tuple(None for _ in vjp(none, z, *args))
    if isinstance(g, (list, tuple)):
        B = batch_size(g)
        parts = [vjp([_example(e, k) for e in g], z, *args) for k in range(B)]
    elif isinstance(g, dict):
        B = batch_size(g)
        parts = [vjp({key: _example(e, k) for key, e in g.items()}, z, *args) for k in range(B)]
    elif g is None:
        # a symbolic zero for every example (the cotangent of a dict of checkpointed snapshots that nothing
        # read): zero cotangents, as None
        return tuple(None for _ in vjp(None, z, *args))
    else:
        B = np.shape(g)[0]
        parts = [vjp(g[k], z, *args) for k in range(B)]
    return tuple(_stack(column) for column in zip(*parts)) if parts else ()


def _example(g, k):
    """Example k of the batched cotangent `g`: of each array leaf of a
    container (a checkpoint's snapshot holds a tuple of the carried values),
    its row k; None and scalars (placeholders of unused outputs) as they are."""
    if isinstance(g, (list, tuple)):
        return type(g)(_example(e, k) for e in g)
    if isinstance(g, dict):
        return {key: _example(e, k) for key, e in g.items()}
    if g is None or np.ndim(g) == 0:
        return g
    return g[k]


def _stack(values):
    """The per-example cotangents `values` stacked on a new leading axis
    (containers leaf by leaf). None is a symbolic zero: zeros where other
    examples have a cotangent; a 0-d cotangent among arrays stands for its
    broadcast (a 0.0 for an array's zero cotangent)."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    first = present[0]
    if isinstance(first, (list, tuple)):
        return [_stack([v[i] if v is not None else None for v in values]) for i in range(len(first))]
    if isinstance(first, dict):
        return {key: _stack([v.get(key) if v is not None else None for v in values]) for key in first}
    arrays = [np.asarray(v) for v in present]
    shapes = {a.shape for a in arrays if a.ndim}
    if len(arrays) < len(values) or (shapes and any(a.ndim == 0 for a in arrays)):
        if len(shapes) > 1:
            raise ValueError("srcgrad: per-example cotangents of shapes %s cannot be stacked" % sorted(shapes))
        shape = shapes.pop() if shapes else ()
        dtype = np.result_type(*arrays)
        it = iter(arrays)       # (a 0-d cotangent of an array: its broadcast)
        arrays = [np.broadcast_to(next(it), shape) if v is not None else np.zeros(shape, dtype) for v in values]
    return np.stack(arrays)


#: unbatched helper -> (batched helper, extra trailing arguments the generated code passes)
BATCHED = {
    unbroadcast: (unbroadcast_b, ()),
    unreduce: (unreduce_b, ()),
    rereduce: (rereduce_b, ()),
    matmul_adjoint_x: (matmul_adjoint_x_b, ()),
    matmul_adjoint_y: (matmul_adjoint_y_b, ()),
    cross_adjoint: (cross_adjoint_b, ()),
    unindex: (unindex_b, ()),
    array_adjoint: (array_adjoint_b, ()),
    unravel: (unravel_b, ()),
    concatenate_adjoint: (concatenate_adjoint_b, ()),
    seq_cotangent: (seq_cotangent_b, ("_B",)),
    value_cotangent: (value_cotangent_b, ()),
    zero_at: (zero_at_b, ()),
    zero_at_in_place: (zero_at_in_place_b, ()),
    runtime.densify: (densify_b, ("_B",)),
    runtime.densify_tree: (densify_tree_b, ("_B",)),
}
