"""Cotangents summed or scattered back to an input's shape.

unbroadcast undoes NumPy broadcasting (the adjoint of a broadcast is a sum
over the broadcast axes), unreduce undoes a reduction (the adjoint of a sum
is a broadcast), rereduce is unreduce's transpose, unindex undoes indexing
(a scatter-add), broadcast_like is the tangent side of unbroadcast, and
matmul's adjoints are products followed by unbroadcast (NumPy's 1-d and
batch conventions: autograd's numpy_vjps.py; Giles, "An extended collection
of matrix derivative results for forward and reverse mode AD", 2008,
2.2.2). The compiler knows these helpers by name: codegen saves the
residuals they read only the shape of as `ShapeOf`, and the batched twins
(batched.py) replace them in vectorised Jacobians.
"""
import math

import numpy as np

from ...runtime import ShapeOf, arrays, nondiff_helper, primitive, unindex_container


def _shape(x):
    t = type(x)
    if t is np.ndarray or t is ShapeOf:
        return x.shape          # (np.shape is a Python function: the common cases without it)
    return x.shape if isinstance(x, ShapeOf) else np.shape(x)


def _size(x):
    size = getattr(x, "size", None)       # (ShapeOf's, and Dask's: np.size computes a Dask array)
    return size if isinstance(size, int) else np.size(x)


#: Up to this many elements, a broadcast cotangent is materialised instead of
#: made a view: np.broadcast_to's Python-level setup (an nditer, about 5 us)
#: costs more than allocating and filling a small array, and small arrays
#: are where per-call overhead dominates a gradient (issue 18's digits MLP).
SMALL_BROADCAST = 1 << 14


def broadcast_up(g, shape):
    """`g` broadcast to `shape` (NumPy broadcasting rules; ValueError when it
    does not broadcast): a new array for a NumPy array or Python/NumPy
    number up to SMALL_BROADCAST elements, else np.broadcast_to's read-only
    view. Either way the values and dtype are np.broadcast_to's."""
    if (type(g) is np.ndarray or type(g) is float or isinstance(g, np.generic)) \
            and math.prod(shape) <= SMALL_BROADCAST:
        out = np.empty(shape, g.dtype if type(g) is not float else np.float64)
        out[...] = g
        return out
    return np.broadcast_to(g, shape)


def _normalize_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if not isinstance(axis, (tuple, list)):
        axis = (axis,)
    return tuple(sorted(a % ndim if ndim else 0 for a in axis))


#: From this many elements, a sum over axes of a C-contiguous float64 or
#: complex128 array is a matrix-vector product with ones (sum_axes); below
#: it NumPy's reduction costs less than the product's setup (a (64, 32)
#: column sum: 2.6 us reduced, 4.3 us as a product).
FAST_SUM_SIZE = 4096
_FAST_SUM_DTYPES = (np.dtype(np.float64), np.dtype(np.complex128))
_ONES = {}      # length -> a read-only float64 vector of ones


def _ones(n):
    found = _ONES.get(n)
    if found is None:
        if len(_ONES) > 64:
            _ONES.clear()
        found = _ONES[n] = np.ones(n)
        found.flags.writeable = False
    return found


def sum_axes(g, axes, keepdims=False):
    """`np.add.reduce(g, axis=axes, keepdims=keepdims)` for the ndarray `g`
    and sorted axes `axes` (a tuple). NumPy's reduction over an axis whose
    inner stride is short (the observations of a (31843, 2) array, the
    short last axis of a (2, 31843, 2) one) runs its generic strided loop,
    15-40x slower than BLAS's matrix-vector product with a vector of ones
    (measured on this machine: 459 vs 31 us, 945 vs 35 us). So a C-contiguous
    float64 or complex128 `g` of at least FAST_SUM_SIZE elements whose
    reduced axes are adjacent is summed as `ones(K) @ g` reshaped (A, K, C):
    the same terms, added in BLAS's order instead of NumPy's (both
    accumulate along the axis; the results agree to rounding, not bits).
    Other arrays: NumPy's reduction."""
    if (g.size >= FAST_SUM_SIZE and g.dtype in _FAST_SUM_DTYPES and axes and g.flags.c_contiguous
            and axes[-1] - axes[0] == len(axes) - 1):
        shape = g.shape
        a0, a1 = axes[0], axes[-1] + 1
        outer, inner = shape[:a0], shape[a1:]
        k = math.prod(shape[a0:a1])
        if not inner:
            out = g.reshape(math.prod(outer), k) @ _ones(k)
        elif not outer:
            out = _ones(k) @ g.reshape(k, math.prod(inner))
        else:
            out = _ones(k) @ g.reshape(math.prod(outer), k, math.prod(inner))
        return out.reshape(outer + ((1,) * (a1 - a0) if keepdims else ()) + inner)
    return np.add.reduce(g, axis=axes, keepdims=keepdims)


def unbroadcast(g, x):
    """Sum the cotangent `g` back to the shape of `x`, undoing NumPy
    broadcasting: leading axes `g` has and `x` lacks are summed out, and so
    are axes where `x` has length 1. A `g` that broadcasts to x's shape (a
    scalar seed; the transpose of a sum) is broadcast up instead. Result
    shape: np.shape(x)."""
    try:
        shape, gshape = x.shape, g.shape      # arrays and Tensors: no function calls
    except AttributeError:
        shape, gshape = _shape(x), np.shape(g)
    if gshape == shape:
        return g
    if type(g) is np.ndarray:       # (the common cases, in fewer steps: the same calls as below)
        lead = len(gshape) - len(shape)
        if lead > 0 and gshape[lead:] == shape:         # a bias's cotangent: leading axes summed
            axes = 0 if lead == 1 else tuple(range(lead))
            # (small arrays: NumPy's reduction, without sum_axes's call)
            return np.add.reduce(g, axis=axes) if g.size < FAST_SUM_SIZE else sum_axes(g, tuple(range(lead)))
        if lead == 0:
            axes = []
            for i, s in enumerate(shape):
                if gshape[i] != s:
                    if s != 1:
                        break       # (g's length is 1 there: broadcast up, below)
                    axes.append(i)
            else:       # (keepdims: x's axes of length 1 summed)
                return (np.add.reduce(g, axis=tuple(axes), keepdims=True) if g.size < FAST_SUM_SIZE
                        else sum_axes(g, tuple(axes), True))
    if len(gshape) < len(shape) or (len(gshape) == len(shape) and all(
            a == b or a == 1 for a, b in zip(gshape, shape))):
        return broadcast_up(g, shape)        # the transpose: broadcast up to x's shape
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and gshape[lead + i] != 1)
    if type(g) is np.ndarray:       # (the ufunc's reduce: no dispatch through np.sum or ndarray.sum)
        if axes:
            g = sum_axes(g, axes, not lead)
        return g if g.shape == shape else g.reshape(shape)
    if axes:
        g = np.sum(g, axis=axes)
    return np.reshape(g, shape)


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
#: the size of a broadcast product from which unbroadcast_product sums it as an einsum (measured: a
#: (64, 100) product summed to (100,) 19 us as product and sum, 27 us as einsum; (128, 300) 67 vs 43 us)
PRODUCT_SUM_SIZE = 16384


def unbroadcast_product(a, b, x):
    """`unbroadcast(a * b, x)`: the cotangent of a broadcasting product's
    operand (`d[x] = unbroadcast(d[z] * y, x)`, the product rule), without
    the product's array where the sum is large: as the contraction
    `np.einsum` computes in one pass (k-means' (10000, 10, 8) product
    summed over its points: 2.3 ms as product and sum, 1.0 ms as einsum).
    Put by the compiler where the product is read by the unbroadcast alone
    (transforms/optimize.py `unbroadcast_products`); generated code
    transformed again, sg.jit and sg.export read it as `unbroadcast(a *
    b, x)`.

    Taken for two ndarrays of one float or complex dtype, one broadcast
    against the other (for operands of one shape NumPy's product and sum
    are as fast or faster: 21 vs 29 us for (128, 300) summed to (1, 300)),
    one of them of at least PRODUCT_SUM_SIZE elements, whose product is
    summed over an axis (x of rank >= 1): each operand's broadcast axes of length 1 are left
    out of the einsum, the product's axes that x lacks or has as 1 are
    summed. The values are the sums of the same products (einsum sums
    over an axis in order, as NumPy's reduction over an outer axis; the
    BLAS sum unbroadcast uses from FAST_SUM_SIZE elements, in another
    order: equal to rounding). Otherwise `unbroadcast(a * b, x)`. Result
    shape np.shape(x), dtype the product's. Raises what `a * b` raises."""
    if type(a) is np.ndarray and type(b) is np.ndarray and a.shape != b.shape \
            and (a.size >= PRODUCT_SUM_SIZE or b.size >= PRODUCT_SUM_SIZE) \
            and a.dtype == b.dtype and a.dtype.kind in "fc":
        shape = _shape(x)
        full = np.broadcast_shapes(a.shape, b.shape)        # (raises as a * b would)
        n = len(full)
        if 0 < len(shape) <= n <= len(_LETTERS) and full != shape:
            lead = n - len(shape)
            if all(s == f or s == 1 for s, f in zip(shape, full[lead:])):
                specs, operands = [], []
                for arr in (a, b):
                    pad = n - arr.ndim
                    keep = [i for i in range(n) if i >= pad and arr.shape[i - pad] == full[i] and full[i] != 1]
                    specs.append("".join(_LETTERS[i] for i in keep))
                    operands.append(arr.reshape([full[i] for i in keep]))
                out = "".join(_LETTERS[lead + j] for j, s in enumerate(shape) if s != 1 and s == full[lead + j])
                return np.einsum("%s,%s->%s" % (specs[0], specs[1], out), *operands).reshape(shape)
    return unbroadcast(a * b, x)


def unreduce(g, x, axis=None, keepdims=False):
    """Broadcast the cotangent `g` of a reduction of `x` over `axis` back to
    `x`'s shape (re-inserting reduced axes when keepdims was False)."""
    shape = _shape(x)
    if axis is not None and not keepdims:
        axes = _normalize_axes(axis, len(shape))
        kept = tuple(1 if i in axes else s for i, s in enumerate(shape))
        g = g.reshape(kept) if type(g) is np.ndarray else np.reshape(g, kept)
    return broadcast_up(g, shape)


def rereduce(h, g, axis=None, keepdims=False):
    """The transpose of unreduce(g, x, axis, keepdims): `h` (shaped like x)
    summed over the reduced axes, in g's shape."""
    axes = _normalize_axes(axis, len(np.shape(h)))
    if type(h) is np.ndarray and axes:
        return np.reshape(sum_axes(h, axes, True), np.shape(g))
    return np.reshape(np.sum(h, axis=axes, keepdims=True), np.shape(g))


@nondiff_helper
def reduced_shape(x, axis=None, keepdims=False):
    """A ShapeOf (shape and dtype) of `np.sum(x, axis=axis, keepdims=keepdims)`
    without computing it: where the reverse sweep reads a reduction's result
    only for its shape (the mean of a sum, `np.mean(np.sum(y * p, axis=1))`),
    it reads this from the reduced array's source (codegen.py). `x`: an
    array or ShapeOf; `axis`: None or an int; result shape: x's with the
    axis removed (kept as 1 with keepdims)."""
    shape = _shape(x)
    if type(axis) is int and shape:
        a = axis % len(shape)
        new = shape[:a] + (1,) + shape[a + 1:] if keepdims else shape[:a] + shape[a + 1:]
    else:
        axes = _normalize_axes(axis, len(shape))
        if keepdims:
            new = tuple(1 if i in axes else s for i, s in enumerate(shape))
        else:
            new = tuple(s for i, s in enumerate(shape) if i not in axes)
    dtype = x.dtype if type(x) is np.ndarray or type(x) is ShapeOf else getattr(x, "dtype", None)
    return ShapeOf.of_shape(new, dtype if dtype is not None else np.result_type(x))


@nondiff_helper
def reduction_size(x, y):
    """How many elements of `x` were reduced into each element of `y`."""
    if type(y) is float:
        return _size(x)         # (y 0-d: the literal 0.0 of codegen's shape sources)
    return _size(x) // max(_size(y), 1)


def broadcast_like(tangent, z):
    """`tangent` broadcast to the shape of `z` (a view when it differs;
    linear in `tangent`)."""
    shape = np.shape(z)
    if np.shape(tangent) == shape:
        return tangent
    return np.broadcast_to(tangent, shape)


# ------------------------------------------------------------------- indexing

def unindex(g, x, index):
    """The adjoint of `x[index]`: zeros shaped like `x` with `g` added at
    `index` (repeated integer indices accumulate, via np.add.at). For a
    list, tuple or dict `x`, the same structure (containers.py), built in
    plain Python so that Tensors inside stay connected."""
    if type(x) is np.ndarray:
        # (plain arrays and numbers: unindex_array's result, without its wrapper)
        tg = type(g)
        if tg is np.ndarray:
            if type(index) is slice and g.dtype == x.dtype and x.dtype.kind in "fc":
                out = np.zeros(x.shape, x.dtype)
                out[index] = g
                return out
        elif (tg is float or tg is np.float64) and x.dtype == _FLOAT64 and _ints(index):
            out = np.zeros(x.shape)         # (one element: det's A[rows[0], cols[j]])
            out[index] = g
            return out
    elif isinstance(x, (list, tuple, dict)):
        return unindex_container(g, x, index)
    return unindex_array(g, x, index)


_FLOAT64 = np.dtype(np.float64)


def unindex_add(acc, g, x, index):
    """`acc + unindex(g, x, index)` adding `g` into `acc` itself at `index`
    (returned), where the compiler proved that nothing reads the
    old `acc` again and that it is not the caller's (transforms/
    inplace.py): O(size of the read) instead of two arrays of x's size per
    read, which made a loop reading x[i] at each of its n steps cost
    O(n * x.size) in its reverse sweep. Done in place when `acc` is a
    writeable ndarray of x's shape and of the sum's dtype and `index` an
    int, a tuple of ints or a slice (distinct positions, each written
    once); otherwise the sum."""
    if type(acc) is np.ndarray and type(x) is np.ndarray and acc.shape == x.shape and acc.flags.writeable \
            and (type(index) is int or type(index) is slice or _ints(index)):
        tg = type(g)
        if (tg is float or tg is np.float64) and acc.dtype == _FLOAT64 and x.dtype == _FLOAT64:
            acc[index] += g         # (the common case, without result_type)
            return acc
        g_dtype = _FLOAT64 if tg is float else getattr(g, "dtype", None) or np.asarray(g).dtype
        if np.result_type(acc.dtype, g_dtype, x.dtype) == acc.dtype:     # (unindex_array's dtype, summed)
            acc[index] += g
            return acc
    return acc + unindex(g, x, index)


def _ints(index):
    """Is `index` a Python int or a tuple of them (one element, or one
    row: an assignment writes it once)?"""
    if type(index) is int:
        return True
    if type(index) is not tuple:
        return False
    for i in index:
        if type(i) is not int:
            return False
    return True


def basic_index(index):
    """Is `index` basic indexing (ints, slices, None, Ellipsis), whose
    positions are all distinct, so the adjoint can assign instead of
    accumulating with np.add.at?"""
    parts = index if isinstance(index, tuple) else (index,)
    for p in parts:
        if not (p is None or p is Ellipsis or isinstance(p, (slice, int, np.integer))) or isinstance(p, bool):
            return False
    return True


@primitive
def unindex_array(g, x, index):
    """unindex for an array `x` (a primitive: recorded on tapes). For
    another library's array (Dask) in its namespace: arrays.scatter_add."""
    tg = type(g)
    if (tg is float or tg is np.float64) and type(x) is np.ndarray and x.dtype == _FLOAT64 and basic_index(index):
        out = np.zeros(x.shape)         # (one float64 entry of a float64 array: det's A[i, j])
        out[index] = g
        return out
    if (tg is not np.ndarray or type(x) is not np.ndarray) and arrays.involved(g, x):
        return arrays.scatter_add(g, x, index)
    dtype = np.result_type(np.asarray(g).dtype, np.asarray(x).dtype)
    out = np.zeros(np.shape(x), dtype=dtype)
    if basic_index(index):
        out[index] = g
    else:
        np.add.at(out, index, g)        # repeated positions accumulate
    return out


def _ufunc_at(ufunc, a, indices, b):
    """A copy of the array `a` after `ufunc.at(copy, indices, b)`: NumPy's
    own unbuffered in-place operation, run on a copy (a's dtype, NumPy's
    casting and errors: `a` not an array raises NumPy's TypeError)."""
    out = a.copy() if isinstance(a, np.ndarray) else a
    ufunc.at(out, indices, b)
    return out


@primitive
def add_at(a, indices, b):
    """The value `np.add.at(a, indices, b)` leaves in `a`, as a new array
    (`a` is not changed): `a` plus `b` scattered to `indices`, repeated
    positions accumulating. `indices` is any index np.add.at takes (an int,
    a list or integer array, a slice, a tuple of them for an N-d `a`); `b`
    broadcasts to the shape of `a[indices]`. Shape and dtype: `a`'s (NumPy
    casts `b` into it as np.add.at does). Raises what np.add.at raises. The
    compiler rewrites the statement `np.add.at(a, i, b)` into
    `a[...] = add_at(a, i, b)` (transforms/lower/ufunc_at.py); the tape
    records it for an array filled with Tensors (tape/buffers.py). Rules:
    rules/numpy/indexing.py."""
    return _ufunc_at(np.add, a, indices, b)


@primitive
def subtract_at(a, indices, b):
    """The value `np.subtract.at(a, indices, b)` leaves in `a`, as a new
    array: `a` minus `b` scattered to `indices` (see add_at)."""
    return _ufunc_at(np.subtract, a, indices, b)


@primitive
def scatter_at(g, x, indices):
    """Zeros shaped like `x` with `g` added at `indices` as np.add.at adds
    (repeated positions accumulate, `g` broadcast to the shape of
    `x[indices]`): the tangent of add_at's `b`. Dtype: the inexact type of
    g and x. Linear in `g` (its adjoint gathers `d[z][indices]` and sums it
    back to g's shape: rules/numpy/indexing.py)."""
    dtype = np.result_type(np.asarray(g).dtype, np.asarray(x).dtype, np.float16)     # (at least floating)
    out = np.zeros(np.shape(x), dtype=dtype)
    np.add.at(out, indices, g)
    return out


# --------------------------------------------------------------------- matmul

def matmul_product(g, x, y, wrt_x):
    """dZ Y^T (wrt_x) or X^T dZ for z = x @ y (Giles 2008, 2.2.2), promoting
    1-d operands as matmul does, before the broadcast batch axes are summed
    back (the caller's unbroadcast: a stack of cotangents is one more
    leading matmul batch axis)."""
    nx = x.ndim if type(x) is np.ndarray else np.ndim(x)
    ny = y.ndim if type(y) is np.ndarray else np.ndim(y)
    if nx == 2 and ny == 2 and type(g) is np.ndarray and g.ndim == 2 and type(x) is np.ndarray \
            and type(y) is np.ndarray:
        return g @ y.T if wrt_x else x.T @ g            # the common case, without the general promotions
    if nx == 0 or ny == 0:
        return g * (y if wrt_x else x)
    # matrix-vector products: one product for a whole stack of cotangents
    if wrt_x and ny == 1:
        return np.expand_dims(g, -1) * y                # (.., n) -> (.., n, k); z scalar: (..,) -> (.., k)
    if wrt_x and nx == 1 and ny == 2:
        return np.matmul(g, np.swapaxes(y, -1, -2))     # (.., m) @ (m, k)
    if not wrt_x and nx == 1:
        if ny == 2:
            return np.expand_dims(x, -1) * np.expand_dims(g, -2)   # (k, 1) * (.., 1, m)
    if not wrt_x and ny == 1 and nx == 2:
        return np.matmul(g, x)                          # (.., n) @ (n, k)
    g2 = g
    if np.ndim(y) == 1:
        g2 = np.expand_dims(g2, -1)
    if np.ndim(x) == 1:
        g2 = np.expand_dims(g2, -2)
    if wrt_x:
        y2 = y if np.ndim(y) > 1 else np.expand_dims(y, -1)
        b = np.matmul(g2, np.swapaxes(y2, -1, -2))
        return np.squeeze(b, -2) if np.ndim(x) == 1 else b
    x2 = x if np.ndim(x) > 1 else np.expand_dims(x, -2)
    b = np.matmul(np.swapaxes(x2, -1, -2), g2)
    return np.squeeze(b, -1) if np.ndim(y) == 1 else b


def matmul_adjoint_x(g, x, y):
    """Cotangent of x in z = x @ y (NumPy matmul semantics, 1-d and batched)."""
    if type(g) is np.ndarray and type(y) is np.ndarray and type(x) is np.ndarray \
            and g.ndim == 2 and x.ndim == 2 and y.ndim == 2:
        return g @ y.T          # (matrices: nothing broadcast, nothing to sum back)
    return unbroadcast(matmul_product(g, x, y, True), x)


def matmul_adjoint_y(g, x, y):
    """Cotangent of y in z = x @ y (NumPy matmul semantics, 1-d and batched)."""
    if type(g) is np.ndarray and type(x) is np.ndarray and type(y) is np.ndarray \
            and g.ndim == 2 and x.ndim == 2 and y.ndim == 2:
        return x.T @ g
    return unbroadcast(matmul_product(g, x, y, False), y)


def dot_adjoint(g, x, y, wrt_x):
    """Cotangent of x (wrt_x) or y in z = np.dot(x, y). For operands of rank
    <= 2 this is matmul's; for N-d operands np.dot contracts the last axis of
    x with the second-to-last of y (the last when y is 1-d), and the
    cotangents are the transposed contractions (tensordot)."""
    nx, ny = np.ndim(x), np.ndim(y)
    if nx == 0 or ny == 0 or (nx <= 2 and ny <= 2):
        return unbroadcast(matmul_product(g, x, y, wrt_x), x if wrt_x else y)
    k_axis_y = 0 if ny == 1 else ny - 2
    other_y = [i for i in range(ny) if i != k_axis_y]
    if wrt_x:
        g_axes = list(range(nx - 1, np.ndim(g)))
        return np.tensordot(g, y, axes=(g_axes, other_y))
    lead = list(range(nx - 1))
    b = np.tensordot(x, g, axes=(lead, lead))      # (k, y's other axes...)
    return np.moveaxis(b, 0, k_axis_y)
