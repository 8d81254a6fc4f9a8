"""What generated code calls at run time, and the primitive decorators.

This module imports neither gast nor the compiler nor the Tensor machinery:
it is what generated derivative code needs to run, and it must stay light.
Every function here is differentiable again, so generated code can itself
be transformed (higher-order derivatives compiled at every order): each is
a primitive with rules in srcgrad/rules/runtime_rules.py, non-differentiable
(its result carries no derivative), or a stack operation that the code
generators know (`push`, `pop`: their adjoints are each other, their tangents
themselves, Griewank & Walther, Evaluating Derivatives, 2008, sec. 4.3).

Tensors. The Tensor type registers itself here (`install`), so that a
primitive called on Tensors is recorded on the tape op by op, and a
non-differentiable helper unwraps them; this module never imports it.
"""
import functools
import math

import numpy as np

from . import arrays


class _Dispatch:
    tensor = ()                 # the Tensor class, once srcgrad.tensor is imported
    apply = None                # apply(func, args, kwargs): run on Tensors, record on tapes
    unwrap = staticmethod(lambda x: x)


def install(tensor_type, apply, unwrap):
    """Called once by srcgrad.tensor: the Tensor class, the function that
    runs a primitive on Tensors (recording it), and the one that unwraps a
    Tensor to its ndarray."""
    _Dispatch.tensor = tensor_type
    _Dispatch.apply = staticmethod(apply)
    _Dispatch.unwrap = staticmethod(unwrap)


def is_tensor(x):
    """Is `x` a srcgrad Tensor (or Variable)? False before srcgrad.tensor
    installs its class."""
    return isinstance(x, _Dispatch.tensor)


def holds_tensor(seq):
    """Does the (nested) list or tuple `seq` hold a Tensor? (A loop, not
    any() of a generator: every primitive given an index tuple asks.)"""
    tensor = _Dispatch.tensor
    for e in seq:
        t = type(e)
        if t is list or t is tuple:
            if holds_tensor(e):
                return True
        elif isinstance(e, tensor):
            return True
    return False


def primitive(f):
    """Make a Python function a srcgrad primitive: called on Tensors, it runs
    on their values and is recorded on active tapes with its registered
    rule; called on arrays, it is `f` itself (plus one isinstance check per
    argument). An argument that is a list or tuple holding Tensors counts
    as Tensors (`array_setitem(out, i, [a, b])` in compiled code run on
    Tensors under a tape: run raw, its np.array would convert them, and the
    tape lose them, without a word). `wrapper.__srcgrad_raw__` is `f`."""
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        tensor = _Dispatch.tensor
        for a in args:
            t = type(a)
            if isinstance(a, tensor) or ((t is tuple or t is list) and holds_tensor(a)):
                return _Dispatch.apply(wrapper, args, kwargs)
        for v in kwargs.values():
            if isinstance(v, tensor):
                return _Dispatch.apply(wrapper, args, kwargs)
        return f(*args, **kwargs)
    wrapper.__srcgrad_raw__ = f
    return wrapper


def nondiff_helper(f):
    """A helper whose result carries no derivative (a mask, a size, an index
    array): Tensor arguments are unwrapped and a plain value is returned."""
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        tensor = _Dispatch.tensor
        for a in args:
            if isinstance(a, tensor):
                break
        else:
            if not kwargs:
                return f(*args)         # (arrays: no unwrapping, as primitive's)
        unwrap = _Dispatch.unwrap
        return f(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()})
    wrapper.__srcgrad_raw__ = f
    wrapper.__srcgrad_nondiff__ = True
    return wrapper


# ----------------------------------------------------------------- the stack

#: `push(stack, x)`: save `x` for the reverse sweep (a list's append, called
#: as a function so that generated code stays plain calls the compiler knows).
push = list.append

#: `x = pop(stack)`: restore the value saved last.
pop = list.pop


# ------------------------------------------------------------- stand-ins

_FLOAT64 = np.dtype(np.float64)


class ShapeOf:
    """Stands in for a residual array of which the adjoint reads only the
    shape and dtype (the second argument of unbroadcast/unreduce, say), so
    the split forward sweep need not keep its values alive."""

    __slots__ = ("shape", "dtype", "like")

    def __init__(self, x):
        t = type(x)
        if t is np.ndarray:
            self.shape, self.dtype, self.like = x.shape, x.dtype, None
            return
        if t is float or t is np.float64 or x is None:
            # (a Python float, a NumPy element, the None a name holds before its first value: no attribute
            # lookups, no exception; np.result_type(None) is float64)
            self.shape, self.dtype, self.like = (), _FLOAT64, None
            return
        try:
            self.shape, self.dtype = x.shape, x.dtype
        except AttributeError:          # Python scalars
            self.shape, self.dtype = np.shape(x), np.result_type(x)
        # another library's array (Dask): its namespace, for zeros of its type
        self.like = arrays.namespace(x) if type(x) is not np.ndarray and arrays.is_other_array(x) else None

    @classmethod
    def of_shape(cls, shape, dtype):
        """A ShapeOf of an array of `shape` (a tuple of ints) and `dtype`
        that was never made (the shape of a reduction, helpers.reduced_shape)."""
        made = cls.__new__(cls)
        made.shape, made.dtype, made.like = shape, dtype, None
        return made

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(math.prod(self.shape))

    def __repr__(self):
        return "ShapeOf(shape=%s, dtype=%s)" % (self.shape, self.dtype)


# ------------------------------------------------- zeros and accumulation

_SEQ = (list, tuple)


def vector_object(x):
    """Is `x` a value of a user's own vector space (autograd's VSpace types:
    a function in an RKHS, examples/rkhs.py), differentiated as a whole? An
    object whose class defines `+`, that is not a number, array, string,
    container, function, class or module. Its cotangents come from custom
    gradients and add with its own `+`."""
    if x is None or isinstance(x, (int, float, complex, str, bytes, np.ndarray, np.generic, list, tuple, dict,
                                   type, functools.partial)) or callable(getattr(x, "__code__", None)):
        return False
    if arrays.is_other_array(x) or hasattr(x, "__array__") or type(x).__module__ in ("builtins", "types"):
        return False
    return getattr(type(x), "__add__", None) is not None


def zeros_tree(x):
    """Zeros shaped like `x`: np.zeros_like for a floating array or number
    (float64 zeros for an integer one), the same structure for lists/tuples
    (as lists) and dicts, None for values that carry no derivative."""
    if isinstance(x, _SEQ):
        return [zeros_tree(e) for e in x]
    if isinstance(x, dict):
        out = {}
        for k, v in x.items():
            out[k] = zeros_tree(v)
        return out
    if x is None or isinstance(x, (str, bytes, bool)) or isinstance(x, ShapeOf):
        return None
    dtype = getattr(x, "dtype", None)
    try:
        kind = np.dtype(dtype).kind if dtype is not None else np.result_type(x).kind
    except TypeError:
        # an array-API dtype (array_api_strict's) is not a NumPy dtype
        if arrays.is_other_array(x):
            return arrays.zeros_like(x, float_only=True)
        if vector_object(x) and getattr(type(x), "__mul__", None) is not None:
            return x * 0.0      # the zero of a user's vector space (its own scalar product)
        return None
    if kind in "fc":
        return np.zeros_like(x)
    return np.zeros_like(x, dtype=np.float64) if kind in "iu" else None


@nondiff_helper
def zero_tangent(x):
    """A zero tangent for `x`, a value that may be a list, tuple or dict:
    zeros_tree(x), with float zeros for a boolean array or bool (a mask a
    differentiated value is multiplied by, whose activity the compiler
    could not rule out: a value read back from a stack)."""
    return densify(None, x)


def sparse_zeros(x):
    """The reverse sweep's zero cotangent for `x`: for a list, tuple or dict
    a container of None (each element a symbolic zero, so accumulating into
    a long list costs no array work); for an array, zeros (also for its
    ShapeOf stand-in: an unconnected input restored by its shape); None for
    a value of a user's vector space (vector_object)."""
    if isinstance(x, _SEQ):
        return [None] * len(x)
    if isinstance(x, dict):
        return dict.fromkeys(x)
    if isinstance(x, ShapeOf):      # an array the reverse sweep restored by its shape only
        if x.like is not None:
            return arrays.zeros(x.shape, x.dtype, x.like)
        kind = np.dtype(x.dtype).kind
        return np.zeros(x.shape, dtype=x.dtype if kind in "fc" else np.float64) if kind in "fciu" else None
    if type(x) is not np.ndarray and vector_object(x):
        return None         # a user's vector-space value: no cotangent yet (the first one is kept as it is)
    return zeros_tree(x)


def zeros_for(value, cotangent):
    """A zero cotangent for `value` (a value the reverse sweep has just
    restored, whose shape may differ from the later value's): zeros shaped
    like `value`, or like the old `cotangent` while `value` is unset."""
    if value is None or isinstance(value, ShapeOf):
        value = cotangent
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "fc":
        return np.zeros_like(value)
    return sparse_zeros(value)


def densify(g, x):
    """An element's cotangent (or tangent) read out of a container or off a
    stack: zeros shaped like `x` where it is a symbolic zero (None); float
    zeros for a boolean `x` (a mask read back from the residuals of a split
    forward, multiplied into a differentiated value)."""
    if g is not None:
        return g
    z = zeros_tree(x)
    if z is None and (isinstance(x, (bool, np.bool_)) or (isinstance(x, np.ndarray) and x.dtype.kind == "b")):
        return np.zeros(np.shape(x))
    if z is None and arrays.is_other_array(x) and arrays.dtype_kind(x) == "b":
        return arrays.zeros_like(x)
    return z


def densify_tree(g, x):
    """A container cotangent with every None element replaced by zeros (for
    rules that read the cotangents of a tuple output, such as np.split's)."""
    if g is None:
        return zeros_tree(x)
    if isinstance(x, _SEQ) and isinstance(g, (list, tuple)):
        return [densify(e, xi) for e, xi in zip(g, x)]
    return g


def as_input_tree(g, x):
    """`g` as the gradient of the input `x` that may be a list, tuple or
    dict (a name the compiler cannot pin to an array): the same structure
    as `x`, zeros for its symbolic-zero (None) elements, each leaf cast by
    `as_input`; an array `g` for a list `x` (the list read as one array,
    np.sin(p)) split into its rows. What a generated gradient function
    returns for such an input, as `sg.grad` returns it at top level."""
    if isinstance(x, _SEQ):
        if g is None or isinstance(g, (list, tuple)):
            gs = g if g is not None else [None] * len(x)
        else:
            gs = list(np.broadcast_to(g, np.shape(x)))
        return type(x)(as_input_tree(gi, xi) for gi, xi in zip(gs, x))
    if isinstance(x, dict):
        gs = g if isinstance(g, dict) else {}
        return {k: as_input_tree(gs.get(k), xi) for k, xi in x.items()}
    if g is None:
        return densify(None, x)
    if vector_object(x):
        return g            # a user's vector-space value: its cotangent as its custom gradients made it
    return as_input(g, x)


def add_cotangents(a, b):
    """a + b for cotangents of the same structure and shapes: element-wise
    for lists and dicts, None is zero. A list and an array (the cotangent of
    a list read as one array, np.sin(p)) add row by row: a list."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, _SEQ) or isinstance(b, _SEQ):
        # a list read element by element (p[0]) and as one array (np.sin(p)): the array's rows are the elements'
        return [add_cotangents(x, y) for x, y in zip(a, b)]
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for k, v in b.items():
            out[k] = add_cotangents(out.get(k), v)
        return out
    return a + b


def unindex_container(g, x, index):
    """The adjoint of `x[index]` for a list, tuple or dict `x`: zeros shaped
    like `x` with `g` at `index` (a slice places the elements of `g`)."""
    out = sparse_zeros(x)
    if isinstance(index, slice):
        positions = range(len(x))[index]
        for p, v in zip(positions, g):
            out[p] = add_cotangents(out[p], v)
        return out
    out[index] = g
    return out


def as_input(g, x):
    """`g` as the gradient of the input `x`: broadcast to x's shape, in x's
    floating dtype (the real part of a complex `g` for a real `x`), as a
    writable array. What a generated gradient function returns. For
    another library's array `x` or `g` (Dask): in x's namespace, or g's
    when `x` is NumPy (arrays.as_gradient: never converted to NumPy)."""
    if (type(g) is not np.ndarray or type(x) is not np.ndarray) and arrays.involved(g, x):
        return arrays.as_gradient(g, x)
    g = np.asarray(g) if not isinstance(g, _Dispatch.tensor) else g
    shape = np.shape(x)
    if np.shape(g) != shape:
        g = np.broadcast_to(g, shape) * 1
    dtype = np.result_type(x)
    if dtype.kind in "fc" and g.dtype != dtype:
        g = (np.real(g) if g.dtype.kind == "c" and dtype.kind != "c" else g).astype(dtype)
    return g
