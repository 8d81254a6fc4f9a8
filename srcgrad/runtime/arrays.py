"""Arrays that are not NumPy's: Dask, CuPy, array-API arrays (layer 0).

Generated code is written with NumPy calls (`np.exp(x)`, `np.sum(g,
axis=0)`, `x @ w`). An array type that implements NumPy's dispatch
protocols (`__array_function__` and `__array_ufunc__`: Dask, CuPy) keeps its
type through them, so the same generated code runs lazily on a Dask array.
What dispatch cannot keep are NumPy's constructors and conversions
(`np.zeros(shape)`, `np.asarray(x)`, `np.add.at`, `float(x)`): the runtime
helpers that need them ask this module, which answers in the input's own
namespace (`array_api_compat.array_namespace`), imported only when such an
array is met, so that NumPy-only programs pay one type check.

An array type without NumPy dispatch (array_api_strict) would be converted
to NumPy by the first `np.*` call of the generated code: `check_arguments`
refuses it up front (ForeignArrayError), as do the rules recorded as
NumPy-only (`NUMPY_ONLY`, checked when a program is compiled for such
arrays; docs/arrays.md lists them).
"""
import numpy as np

from ..errors import SrcgradError

_NUMPY_TYPES = (np.ndarray, np.generic)
class TypeCache(dict):
    """{type: bool}, filled as types are met: a cache of a runtime helper
    (sg.export writes it empty, as a class of its own)."""


_IS_OTHER = TypeCache()          # type -> is it another library's array


class ForeignArrayError(SrcgradError, TypeError):
    """A computation srcgrad cannot run on this array type (Dask, an
    array-API array) without converting it to NumPy, which it does not do
    behind the user's back: an array type without NumPy dispatch, a
    NumPy-only derivative rule (the message names the function and the
    line; docs/arrays.md lists them), an API that holds NumPy arrays only
    (tapes, sg.jvp)."""


def is_other_array(x):
    """Is `x` an array of another library (it has shape and dtype and
    speaks NumPy dispatch or the array API), not a NumPy array, a Python
    number or a srcgrad Tensor? One dict lookup per type after the first."""
    t = type(x)
    known = _IS_OTHER.get(t)
    if known is None:
        top = t.__module__.split(".")[0]
        known = (not issubclass(t, _NUMPY_TYPES) and top != "srcgrad"
                 and hasattr(t, "shape") and hasattr(t, "dtype")
                 and (hasattr(t, "__array_namespace__") or hasattr(t, "__array_function__")
                      or top == "torch"))       # (PyTorch's Tensor: the array API through array_api_compat)
        _IS_OTHER[t] = known
    return known


def any_other_array(values):
    """Does any of `values` (or an element of a list/tuple/dict among them)
    hold another library's array?"""
    for v in values:
        if type(v) in (list, tuple):
            if any_other_array(v):
                return True
        elif type(v) is dict:
            if any_other_array(v.values()):
                return True
        elif is_other_array(v):
            return True
    return False


def involved(*xs):
    """Is one of `xs` another library's array, or a `ShapeOf` stand-in for
    one (its `like`: the namespace)?"""
    for x in xs:
        if is_other_array(x) or getattr(x, "like", None) is not None:
            return True
    return False


def _shape_and_namespace(x, g):
    """(shape, namespace) of the array `x` (or its ShapeOf stand-in),
    the namespace being x's when it is another library's array, else g's."""
    like = getattr(x, "like", None)
    if like is not None:
        return tuple(x.shape), like
    if is_other_array(x):
        return tuple(x.shape), namespace(x)
    return tuple(np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape), namespace(g)


def dispatches(x):
    """Does `x`'s type implement NumPy's dispatch protocols, so that
    `np.exp(x)`, `np.sum(x)` and `np.broadcast_to(x, s)` return its type?"""
    t = type(x)
    return hasattr(t, "__array_function__") and hasattr(t, "__array_ufunc__")


def namespace(*xs):
    """The array-API namespace of `xs` (array_api_compat's: for Dask its
    wrapper of dask.array). Python numbers and None among `xs` are ignored."""
    try:
        from array_api_compat import array_namespace
    except ImportError:     # pragma: no cover - the arrays extra is missing
        raise ImportError("srcgrad needs array-api-compat to differentiate %s arrays: "
                          "pip install 'srcgrad[arrays]'" % library(xs)) from None
    arrays = [x for x in xs if x is not None and not isinstance(x, (int, float, complex))]
    return array_namespace(*arrays)


def library(xs):
    """The top-level module of the first other library's array among `xs`
    (or in a list, tuple or dict among them): "dask", "torch"."""
    for x in xs:
        if type(x) in (list, tuple, dict):
            found = library(x.values() if type(x) is dict else x)
            if found != "non-NumPy":
                return found
        elif is_other_array(x):
            return type(x).__module__.split(".")[0]
    return "non-NumPy"


def dtype_kind(x):
    """NumPy's dtype kind letter ('f', 'c', 'i', 'u', 'b') of an array (or
    a dtype) of any library (array_api_strict's dtypes are not NumPy
    dtypes)."""
    dtype = getattr(x, "dtype", x)
    try:
        return np.dtype(dtype).kind
    except TypeError:       # (torch.float64, array_api_strict.float32: NumPy's dtype of the same name)
        try:
            return np.dtype(str(dtype).rsplit(".", 1)[-1]).kind
        except TypeError:
            return "O"


def zeros_like(x, float_only=False):
    """Zeros shaped like the other library's array `x`, in its namespace
    (and chunking, for Dask): x's dtype when floating, float64 for
    integers (and booleans unless `float_only`, which returns None for
    them as zeros_tree does)."""
    kind = dtype_kind(x)
    if float_only and kind not in "fciu":
        return None
    xp = namespace(x)
    return xp.zeros_like(x, dtype=x.dtype if kind in "fc" else xp.float64)


def ones_like(x):
    """Ones shaped like `x` (the seed of a gradient): in x's namespace for
    another library's array, NumPy's otherwise."""
    if is_other_array(x):
        return namespace(x).ones_like(x)
    return np.ones_like(x)


def zeros(shape, dtype, like):
    """Zeros of `shape` in the namespace of `like` (a namespace module or
    an array), float64 for a non-floating `dtype`."""
    xp = like if hasattr(like, "zeros_like") else namespace(like)
    try:
        kind = np.dtype(dtype).kind
    except TypeError:
        kind = "f"
    return xp.zeros(tuple(shape), dtype=dtype if kind in "fc" else xp.float64)


def as_gradient(g, x):
    """`g` as the gradient of the input `x` when either is another
    library's array: broadcast to x's shape, cast to x's floating dtype, in
    x's namespace when `x` is such an array. A gradient with respect to a
    NumPy `x` that the computation made another library's array (NumPy
    weights, Dask data) stays that array: a lazy Dask array, computed by
    the caller (`.compute()`), never converted here."""
    shape, xp = _shape_and_namespace(x, g)
    if not is_other_array(g):
        if isinstance(g, np.ndarray) and g.ndim and is_other_array(x) and not dispatches(x):
            # (the code ran by the array API's names: a NumPy gradient means a value left the namespace)
            raise ForeignArrayError(
                "srcgrad: the gradient with respect to a %s array came out as a NumPy array: something in the "
                "computation converted its values to NumPy (a library function srcgrad does not run by the "
                "array API's names). Please report it with the program" % library((x,)))
        g = xp.asarray(g if isinstance(g, np.ndarray) else np.asarray(g))   # (a Python float is float64)
    if tuple(g.shape) != shape:
        g = xp.broadcast_to(g, shape)
    if is_other_array(x):
        kind = dtype_kind(x)
        if kind in "fc" and g.dtype != x.dtype:
            if dtype_kind(g) == "c" and kind != "c":
                g = xp.real(g)
            g = xp.astype(g, x.dtype)
    else:
        dtype = np.result_type(x)
        if dtype.kind in "fc" and g.dtype != dtype:
            if dtype_kind(g) == "c" and dtype.kind != "c":
                g = xp.real(g)
            g = xp.astype(g, getattr(xp, dtype.name, dtype))     # (the namespace's dtype of that name)
    return g


def as_argument(v):
    """An argument differentiated by grad, another library's array: kept
    as it is (floating), or cast to float64 in its namespace (integers)."""
    if dtype_kind(v) in "fc":
        return v
    xp = namespace(v)
    return xp.astype(v, xp.float64)


def refuse_numpy_only(calls, values):
    """Raise ForeignArrayError for the first of `calls` ([(name, filename,
    lineno)]: NumPy-only rules a program calls) given `values` that hold
    another library's arrays."""
    if calls:
        name, filename, lineno = calls[0]
        more = "" if len(calls) == 1 else " (and %s)" % ", ".join(
            "%s at line %s" % (n, ln) for n, _, ln in calls[1:4])
        raise ForeignArrayError(
            "srcgrad: the derivative of %s (%s:%s) is NumPy-only: on %s arrays it would convert them to "
            "NumPy, fail, or differ from NumPy's meaning (PyTorch's x.std() divides by n - 1)%s. Differentiate "
            "with NumPy arrays, or write the step with functions that work on them (docs/arrays.md lists both)"
            % (name, filename, lineno, library(values), more))


def check_arguments(values, what="differentiate"):
    """Refuse arrays of a type that NumPy's functions would convert (no
    `__array_function__`/`__array_ufunc__`: array_api_strict): the generated
    code calls NumPy, and converting them silently is what srcgrad must not
    do. Raises ForeignArrayError naming the type."""
    for v in values:
        if type(v) in (list, tuple):
            check_arguments(v, what)
        elif type(v) is dict:
            check_arguments(list(v.values()), what)
        elif is_other_array(v) and not dispatches(v):
            raise ForeignArrayError(
                "srcgrad cannot %s code on %s.%s arrays: its generated code calls NumPy functions, and "
                "this type implements neither __array_function__ nor __array_ufunc__, so NumPy would "
                "convert it to a NumPy array. Arrays with NumPy dispatch (Dask, CuPy) keep their type; "
                "see docs/arrays.md" % (what, type(v).__module__, type(v).__name__))


# ---------------------------------------------------------------- scatters

def _basic(index):
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (slice, int, np.integer)) and not isinstance(p, bool)
               for p in parts)


def scatter_add(g, x, index):
    """zeros shaped like `x` with `g` added at `x[index]`, for another
    library's array `g` or `x` (the adjoint of indexing; np.add.at's job).
    Basic indices (ints, slices, None, Ellipsis) are assigned (item
    assignment: Dask, CuPy and the array API have it); one integer array
    indexing the first axis accumulates repeated positions through a
    one-hot product (n x k, chunked like the rest for Dask). Other advanced
    indices raise ForeignArrayError."""
    shape, xp = _shape_and_namespace(x, g)
    dtype = g.dtype if is_other_array(g) and dtype_kind(g) in "fc" else (
        x.dtype if is_other_array(x) and dtype_kind(x) in "fc" else xp.float64)
    if not is_other_array(g):
        g = xp.asarray(g, dtype=dtype)
    if _basic(index):
        out = xp.zeros_like(x, dtype=dtype) if is_other_array(x) else xp.zeros(shape, dtype=dtype)
        # (None adds a length-1 axis to x[index]: dropped, and g reshaped to match)
        parts = tuple(p for p in (index if isinstance(index, tuple) else (index,)) if p is not None)
        if Ellipsis not in parts and len(parts) < len(shape):
            parts = parts + (Ellipsis,)     # the array API wants every axis named
        target = out[parts].shape
        g = xp.broadcast_to(g, tuple(s for s in g.shape)) if len(g.shape) == len(target) else g
        if tuple(g.shape) != tuple(target):
            g = xp.reshape(xp.broadcast_to(g, out[index].shape), target) if None in (
                index if isinstance(index, tuple) else (index,)) else xp.broadcast_to(g, target)
        out[parts] = g
        return out
    if library((g, x)) == "torch" and _integer_arrays(index):
        return _torch_scatter_add(g, shape, dtype, index)
    idx = index[0] if isinstance(index, tuple) and len(index) == 1 else index
    if isinstance(idx, (list, tuple)) or is_other_array(idx) or isinstance(idx, np.ndarray):
        idx = np.asarray(idx) if not is_other_array(idx) else idx
        if dtype_kind(idx) in "iu" and len(idx.shape) == 1 and shape:
            n = shape[0]
            if not is_other_array(idx):
                idx = np.where(idx < 0, idx + n, idx)
                idx = xp.asarray(idx)
            else:
                idx = xp.where(idx < 0, idx + n, idx)
            onehot = xp.astype(xp.arange(n)[:, None] == idx[None, :], dtype)      # (n, k)
            rest = tuple(g.shape[1:])
            flat = xp.reshape(g, (g.shape[0], -1)) if rest else xp.reshape(g, (g.shape[0], 1))
            return xp.reshape(onehot @ flat, shape)
    raise ForeignArrayError(
        "srcgrad: the adjoint of indexing with %r is NumPy-only (np.add.at); on %s arrays only basic "
        "indices (ints, slices, None, ...) and one 1-d integer array on the first axis are supported "
        "(and, on PyTorch tensors, integer arrays on every axis: p[np.arange(n), labels])"
        % (type(index).__name__, library((g, x))))


def _integer_arrays(index):
    """Is `index` integer arrays (or lists, or ints) only, one per leading
    axis (p[np.arange(n), labels])?"""
    parts = index if isinstance(index, tuple) else (index,)
    found = False
    for p in parts:
        if isinstance(p, (bool, np.bool_)) or p is None or p is Ellipsis or isinstance(p, slice):
            return False
        if isinstance(p, (int, np.integer)):
            continue
        if isinstance(p, (list, np.ndarray)) or is_other_array(p):
            if dtype_kind(p if is_other_array(p) else np.asarray(p)) not in "iu":
                return False
            found = True
        else:
            return False
    return found


def _torch_scatter_add(g, shape, dtype, index):
    """zeros of `shape` with `g` added at the integer-array `index`,
    repeated positions accumulating: PyTorch's index_put_(accumulate=True),
    the library's own scatter-add (the array API has none)."""
    import torch
    parts = index if isinstance(index, tuple) else (index,)
    tensors = tuple(p if isinstance(p, torch.Tensor) else torch.as_tensor(np.asarray(p, dtype=np.int64))
                    for p in parts)
    if isinstance(g, torch.Tensor):
        dtype = g.dtype
    elif not isinstance(dtype, torch.dtype):
        dtype = getattr(torch, np.dtype(dtype).name)
    out = torch.zeros(shape, dtype=dtype)
    target_shape = torch.broadcast_shapes(*(t.shape for t in tensors)) + tuple(shape[len(tensors):])
    values = torch.as_tensor(g, dtype=out.dtype) if not isinstance(g, torch.Tensor) else g.to(out.dtype)
    out.index_put_(tensors, torch.broadcast_to(values, target_shape), accumulate=True)
    return out
