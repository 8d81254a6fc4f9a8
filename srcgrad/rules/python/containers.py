"""Lists, tuples and dicts in differentiated code, and element assignment.

The cotangent of a list or tuple is a list of its elements' cotangents, the
cotangent of a dict a dict; an element with no derivative (an int, a string)
has None. The compiler lowers mutation to functions that return new
containers (transforms/lower.py), so derivative code never mutates the
caller's values, and an overwritten value is simply the old object:

    xs.append(v)   ->  xs = list_append(xs, v)
    x[i] = v       ->  x = setitem(x, i, v)      (arrays, lists and dicts)

Each has an adjoint rule and a tangent rule here, used by both paths
(the tangents are linear: the tangent of a list is the list of its
elements' tangents). On the op-by-op tape,
containers are plain Python values holding Tensors, and only the array
operations on those Tensors are recorded.
"""
import sys

import numpy as np

from ...runtime import _Dispatch, add_cotangents, densify, nondiff_helper, primitive, zeros_tree
from ...runtime.core import holds_tensor
from ..helpers.broadcast import unbroadcast
from ..helpers.shapes import array_adjoint
from ..registry import register_adjoint
from ..tangents import declare_linear, register_linear, register_tangent

_SEQ = (list, tuple)


# ----------------------------------------------------------- lists and tuples

def list_append(xs, v):
    """A new list: `xs` followed by `v` (the compiler's `xs.append(v)`)."""
    return list(xs) + [v]


@register_adjoint(list_append)
def list_append_(z, xs, v):
    d[v] = densify(d[z][-1], v)
    d[xs] = d[z][:-1]       # (last: for `hs = list_append(hs, h)`, `bhs = bhs[:-1]`, with no alias of the old bhs)


register_linear(list_append, (0, 1))


def list_extend(xs, ys):
    """A new list: `xs` followed by the elements of `ys` (`xs.extend(ys)`,
    `xs + [y]`); a tuple when `xs` is one, as `+` gives in Python (`(-1,) +
    shape` stays a shape that other tuples can be added to)."""
    if type(xs) is tuple:
        return xs + tuple(ys)
    return list(xs) + list(ys)


@register_adjoint(list_extend)
def list_extend_(z, xs, ys):
    d[xs] = d[z][:len(xs)]
    d[ys] = seq_cotangent(d[z][len(xs):], ys)


register_linear(list_extend, (0, 1))


def seq_repeat(xs, n):
    """`xs * n` (and `n * xs`) for a list or tuple `xs` and an int `n`: the
    elements of `xs` repeated n times (a tuple for a tuple), as Python's
    sequence repetition: `[0.0] * n`, `[x] * 3`, `(a, b) * 2`. A count
    that makes Python multiply numerically instead (a NumPy array or
    float) raises NotImplementedError: the compiler took it for an int."""
    out = xs * n
    if type(out) not in _SEQ:
        raise NotImplementedError(
            "srcgrad: a list or tuple times %s: NumPy multiplies it as an array here, which srcgrad "
            "compiled as list repetition; write np.asarray(xs) * n" % type(n).__name__)
    return out


@register_adjoint(seq_repeat)
def seq_repeat_(z, xs, n):
    """Each element's cotangent is the sum of its copies' cotangents."""
    d[xs] = repeat_cotangent(d[z], xs)


register_linear(seq_repeat)


def repeat_cotangent(g, xs):
    """The cotangent of `xs` from the list cotangent `g` of `xs * n`: entry
    i is the sum (None a zero) of g's entries i, i + len(xs), ...; None
    when g is (a symbolic zero)."""
    if g is None:
        return None
    k = len(xs)
    out = [None] * k
    for j, e in enumerate(g):
        out[j % k] = add_cotangents(out[j % k], e)
    return out


@register_adjoint(repeat_cotangent)
def repeat_cotangent_(z, g, xs):
    """Linear in g, which it folds: its transpose repeats."""
    d[g] = repeat_list(d[z], g)


register_linear(repeat_cotangent)


def repeat_list(g, like):
    """The cotangent list `g` repeated to the length of `like` (the transpose
    of repeat_cotangent); None stays None."""
    if g is None:
        return None
    return list(g) * (len(like) // len(g)) if g else []


@register_adjoint(repeat_list)
def repeat_list_(z, g, like):
    """Linear in g, which it repeats: its transpose folds."""
    d[g] = repeat_cotangent(d[z], g)


register_linear(repeat_list)


def seq_cotangent(g, x):
    """A list cotangent `g` for `x`: as is for a list or tuple, stacked for
    an array (whose rows the list held). None entries are zeros. For a
    dict, the list held its keys, which carry no derivative: None (zero)."""
    if isinstance(x, dict):
        return None
    if isinstance(x, _SEQ):
        return g
    rows = [np.zeros_like(x[i]) if e is None else e for i, e in enumerate(g)]
    return np.stack(rows) if rows else np.zeros_like(x)


def as_list(x):
    """`list(x)` in differentiated code: the elements of a sequence, or the
    rows of an array."""
    return list(x)


def as_tuple(x):
    """`tuple(x)` in differentiated code."""
    return tuple(x)


def as_sequence_(z, x):
    """The cotangent of each element (or row) is its entry of d[z]."""
    d[x] = seq_cotangent(d[z][:], x)


for _f in (as_list, as_tuple):
    register_adjoint(_f, name=_f.__name__ + "_")(as_sequence_)
    register_linear(_f)


def _sequence_as_array(x):
    """sequence_as_array on raw values: what the tape runs (its Tensors
    unwrapped) when it records the call."""
    return np.asarray(x) if type(x) in _SEQ else x


def sequence_as_array(x):
    """A list or tuple read whole as one array by a NumPy function
    (`np.square(p)`: the compiler passes `sequence_as_array(p)`,
    transforms/kinds.py): np.asarray(x) for a list or tuple, x itself for
    anything else (an array, a Python float stays one). A list holding
    Tensors (compiled code run on Tensors: an @sg.function's JVP under a
    GradientTape) is recorded as this primitive: its np.asarray, srcgrad's
    own call, would leave the tape without a word."""
    if type(x) not in _SEQ:
        return x
    if holds_tensor(x):
        return _Dispatch.apply(sequence_as_array, (x,), {})
    return np.asarray(x)


sequence_as_array.__srcgrad_raw__ = _sequence_as_array


@register_adjoint(sequence_as_array)
def sequence_as_array_(z, x):
    """As np.asarray's: element i of a list gets d[z][i] (autograd and JAX
    treat a list passed to a NumPy function the same way)."""
    d[x] = array_adjoint(d[z], x)


register_linear(sequence_as_array)


# ---------------------------------------------------------------------- dicts

def as_dict(x):
    """`dict(x)` in differentiated code: a copy of the dict `x`."""
    return dict(x)


@register_adjoint(as_dict)
def as_dict_(z, x):
    """A copy: the cotangent is the copy's, key by key."""
    d[x] = d[z]


register_linear(as_dict)


def get_cotangent(g, mapping, key):
    """The cotangent of `mapping` from `mapping.get(key, default)`'s `g`:
    a dict of symbolic zeros (None) with `g` at `key` when the key is there
    (else nothing reached the dict: all None)."""
    out = dict.fromkeys(mapping)
    if key in mapping:
        out[key] = g
    return out


def default_cotangent(g, mapping, key, default):
    """The cotangent of `default` in `mapping.get(key, default)`: `g` when
    the key is absent (the default was returned), else zeros like it."""
    return densify(None, default) if key in mapping else g


def picked(g, key):
    """The entry `key` of the dict cotangent `g` (None: a symbolic zero)."""
    return g.get(key) if isinstance(g, dict) else None


@register_adjoint(get_cotangent)
def get_cotangent_(z, g, mapping, key):
    """Linear in g, which it places at `key`: its transpose picks it out."""
    d[g] = densify(picked(d[z], key), g)


register_linear(get_cotangent)


@register_adjoint(default_cotangent)
def default_cotangent_(z, g, mapping, key, default):
    """Linear in g, passed through or zeroed: its own transpose."""
    d[g] = default_cotangent(d[z], mapping, key, g)


register_linear(default_cotangent)

dict_get = dict.get        # (the spelling generated code uses for the method)


@register_adjoint(dict.get)
def dict_get_(z, mapping, key, default=None):
    """`mapping.get(key, default)` is `mapping[key]` or `default`: the
    cotangent goes to the one returned."""
    d[mapping] = get_cotangent(d[z], mapping, key)
    d[default] = default_cotangent(d[z], mapping, key, default)


register_linear(dict.get, (0, 2))


# --------------------------------------------------------- element assignment

def setitem(x, index, v):
    """`x` with `x[index] = v`, as a new value (`x` is not mutated): the
    compiler's element assignment, for arrays (a copy, NumPy's casting
    rules), lists and dicts."""
    if isinstance(x, list):
        out = list(x)
        if isinstance(index, slice):
            out[index] = list(v)
        else:
            out[index] = v
        return out
    if isinstance(x, dict):
        out = dict(x)
        out[index] = v
        return out
    if type(x) is tuple:        # (t[0][i] = v: the array t[0] rewritten, then put back in a new tuple)
        out = list(x)
        out[index] = v
        return tuple(out)
    return array_setitem(x, index, v)


@primitive
def array_setitem(x, index, v):
    """A copy of array `x` with `out[index] = v`."""
    out = np.array(x, copy=True)
    out[index] = v
    return out


@register_adjoint(setitem)
def setitem_(z, x, index, v):
    """z = x with z[index] = v: the overwritten entries of x get no
    cotangent; v gets the cotangent of the entries it set (summed back over
    broadcasting), none when x is an integer or bool array (NumPy truncated
    v: x's dtype, read from x's ShapeOf). (v's first: then the zeroing can
    be done in place, transforms/inplace.py.)"""
    d[v] = value_cotangent(d[z], index, v, x)
    d[x] = zero_at(d[z], index)


register_adjoint(array_setitem)(setitem_)


@register_tangent(setitem)
def setitem_tangent(z, x, index, v):
    """Linear in (x, v); v's tangent is dropped when z is an integer or
    bool array (NumPy truncated v)."""
    t[z] = setitem(t[x], index, value_tangent(t[v], z))


register_tangent(array_setitem)(setitem_tangent)
declare_linear(setitem, (0, 2))
declare_linear(array_setitem, (0, 2))


def zero_at(g, index):
    """`g` with the entries at `index` zeroed (a new value); None (a
    symbolic zero) stays None."""
    if g is None:
        return None
    if isinstance(g, list):
        out = list(g)
        if isinstance(index, slice):
            out[index] = [None] * len(range(len(g))[index])
        else:
            out[index] = None
        return out
    if isinstance(g, dict):
        out = dict(g)
        out[index] = None
        return out
    return array_setitem(g, index, 0.0)


def setitem_in_place(x, index, v):
    """setitem(x, index, v) writing into `x` itself (returned), where the
    compiler proved that nothing reads the old `x` again (transforms/
    inplace.py): O(size of the write) instead of a copy of `x`. Not an
    ndarray, or read-only: the functional setitem."""
    if type(x) is np.ndarray and x.flags.writeable:
        x[index] = v
        return x
    return setitem(x, index, v)


def zero_at_in_place(g, index):
    """zero_at(g, index) zeroing the entries of `g` itself (returned), where
    the compiler proved that nothing reads the old `g` again."""
    if type(g) is np.ndarray and g.flags.writeable:
        g[index] = 0.0
        return g
    return zero_at(g, index)


def add_into(a, b):
    """`a + b`, where the compiler proved that nothing reads the old `a`
    again (transforms/inplace.py: an accumulation `a = a + b` in a loop,
    `bW = bW + ...` in a reverse sweep), so that it may be written into `a`.
    Only sg.jit's code calls it (tools/linker.py): its Numba twin adds in
    place when `a` is a writeable array of b's shape and dtype; in CPython
    the checks would cost more than the allocation they save, and generated
    code keeps `+`."""
    return a + b


# the in-place helpers and the functional ones they stand for (generated
# code transformed again differentiates the functional ones; broadcast.unindex_add is
# `acc + unindex(g, x, index)` there: resolve.py)
def _references_of_an_own_list():
    """The reference count a list held by one local name alone shows
    inside a helper called as `xs = helper(xs)` (that name, the helper's
    parameter, getrefcount's argument: 3 on CPython 3.11)."""
    def count(xs):
        return sys.getrefcount(xs)

    def caller():
        xs = [0.0]
        xs = count(xs)
        return xs
    return caller()


# (at most CPython 3.11's 3: a count taken under a tracer that holds the frame's locals would be higher, and
# would let a list held once more elsewhere pass; a lower count only updates in place less often)
_OWN_LIST_REFS = min(_references_of_an_own_list(), 3)


def list_append_own(xs, v):
    """`list_append(xs, v)` in a statement `xs = list_append(xs, v)`, which
    rebinds the name it reads (transforms/inplace.py `own_list_updates`):
    when that name is all that holds the list (its reference count, as
    CPython's own in-place `s += t` of a string), nobody can see the old
    list again, and `v` is appended to it in place: O(1) where the copy
    made a loop appending T values cost O(T^2). Otherwise list_append's new
    list. Returns the list."""
    if type(xs) is list and sys.getrefcount(xs) <= _OWN_LIST_REFS:
        xs.append(v)
        return xs
    return list_append(xs, v)


def drop_last_own(xs):
    """`xs[:-1]` in a statement `xs = xs[:-1]` (the adjoint of an append,
    list_append_'s `d[xs] = d[z][:-1]`, in a reverse loop): the last entry
    popped in place when that name is all that holds the list (as
    list_append_own), else the slice. Returns the list."""
    if type(xs) is list and xs and sys.getrefcount(xs) <= _OWN_LIST_REFS:
        xs.pop()
        return xs
    return without_last(xs)


def without_last(xs):
    """`xs[:-1]`, a new list (drop_last_own's copy)."""
    return xs[:-1]


FUNCTIONAL = {setitem_in_place: setitem, zero_at_in_place: zero_at, list_append_own: list_append}


def value_cotangent(g, index, v, x=None):
    """The cotangent of the value assigned at `index` of `x` (or its
    ShapeOf): g[index], summed back to v's shape (NumPy broadcast v when it
    set the entries). An index that names an element more than once
    (`y[[0, 0]] = v`, integer arrays) wrote it last with the last of those
    entries, as NumPy does: only that entry of v gets its cotangent, the
    earlier ones none. `g` None (a symbolic zero) gives zeros, and so does
    an `x` of integer or bool dtype (NumPy truncated v to store it: no
    derivative passes)."""
    if type(g) is np.ndarray and type(index) is int and type(v) is np.ndarray:
        # (the common case, a loop's `H[t] = h`: one row, nothing broadcast, nothing written twice)
        kind = getattr(getattr(x, "dtype", None), "kind", None) if x is not None else "f"
        if type(kind) is str and kind in "fc":
            part = g[index]
            if part.shape == v.shape:
                return part.copy()
    if x is not None and not _holds_derivatives(x):
        g = None
    part = g[index] if g is not None else None
    if type(part) is np.ndarray and part.base is not None:
        part = part.copy()      # not a view of g (whose entries may then be zeroed in place)
    if isinstance(v, dict) or part is None and isinstance(v, _SEQ):
        return part
    if part is None:
        return zeros_tree(v)
    if _is_array(g) and _has_index_array(index):
        mask = _last_writes(g.shape, index)
        if mask is not None:
            part = part * mask
    if isinstance(v, _SEQ):
        return _sequence_cotangent(part, v)
    return unbroadcast(part, v)


def _sequence_cotangent(part, v):
    """The cotangent of a list or tuple `v` of numbers or arrays that NumPy
    stored as the array np.asarray(v), broadcast into the entries whose
    cotangent is the array `part`: summed back to that array's shape, then
    split into v's structure (a list of the cotangents of its elements, two
    levels deep, so that a batched sweep stacks them element by element).
    `part` not an array (an element of a list): as it is. (Compiled again
    at the second order: no try, no nested def.)"""
    if not isinstance(part, (np.ndarray, np.generic)):
        return part
    part = unbroadcast(part, np.zeros(np.shape(v)))
    if len(v) and isinstance(v[0], _SEQ):
        return [list(p) for p in part]
    return list(part)


@nondiff_helper
def _is_array(g):
    """Is the cotangent `g` an ndarray, or a Tensor (unwrapped here)? On
    Tensors too, the mask of last writes applies: a backward pass run op by
    op under an accumulator or an outer tape gave every entry of a repeated
    index its cotangent (a wrong gradient and Hessian)."""
    return type(g) is np.ndarray


def _holds_derivatives(x):
    """Can the array `x` (or its ShapeOf stand-in) hold a derivative: is its
    dtype inexact (float, complex)? Lists, dicts and objects without a
    dtype: True. (Not isinstance(dtype, np.dtype): on another library's
    arrays the generated code's `np` is srcgrad's facade of it.)"""
    dtype = getattr(x, "dtype", None)
    kind = getattr(dtype, "kind", None)      # (NumPy's dtypes, and Dask's, CuPy's, JAX's)
    if isinstance(kind, str):
        return kind in "fc"
    floating = getattr(dtype, "is_floating_point", None)       # (PyTorch's dtypes)
    if isinstance(floating, bool):
        return floating or getattr(dtype, "is_complex", False) is True
    return True


def value_tangent(tv, z):
    """The tangent of a value stored into `z`: `tv`, or zeros of its shape
    when z is an integer or bool array (NumPy truncated the value; linear
    in tv)."""
    if tv is None or _holds_derivatives(z):
        return tv
    return np.zeros(np.shape(tv))


declare_linear(value_tangent)


def _has_index_array(index):
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, (list, np.ndarray)) and np.asarray(p).dtype.kind in "iu" for p in parts)


def _last_writes(shape, index):
    """For `x[index]` with x of `shape`: a boolean array the shape of
    x[index], True where the entry names its element for the last time;
    None when no element is named twice."""
    positions = np.arange(int(np.prod(shape))).reshape(shape)[index]
    flat = positions.ravel()
    if np.unique(flat).size == flat.size:
        return None
    _, last_reversed = np.unique(flat[::-1], return_index=True)
    keep = np.zeros(flat.size, dtype=bool)
    keep[flat.size - 1 - last_reversed] = True
    return keep.reshape(positions.shape)


# ---------------------------------------------------------------- dtype casts

@primitive
def cast(x, dtype):
    """`x.astype(dtype)` as a primitive (Tensor.astype)."""
    return np.asarray(x).astype(dtype)


@register_adjoint(cast)
def cast_(z, x, dtype):
    """A cast is the identity on values: the cotangent is cast back. A cast
    to dtype object (Python objects) is refused (NotImplementedError)."""
    d[x] = cast_back(d[z], x, z)


def cast_back(g, x, z=None):
    """`g` in `x`'s dtype (floating inputs; others keep g's). Raises
    NotImplementedError when the cast's result `z` holds Python objects
    (x.astype(object)): their arithmetic is not differentiated."""
    if isinstance(z, np.ndarray) and z.dtype == object:
        raise NotImplementedError(
            "srcgrad: x.astype(object) of a differentiated value: arrays of Python objects carry no "
            "derivative (autograd and JAX refuse them too); keep the array floating")
    dtype = np.result_type(x)
    return cast(g, dtype) if dtype.kind in "fc" and np.result_type(g) != dtype else g
