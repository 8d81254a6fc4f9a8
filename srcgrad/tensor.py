"""Values: Tensor, Variable, constant, and NumPy dispatch.

A `Tensor` wraps an immutable `np.ndarray`. Python operators and NumPy's
dispatch protocols (`__array_ufunc__`, NEP 13; `__array_function__`, NEP 18)
route every operation on Tensors through `apply`, which computes on the raw
arrays and, when a recording tape watches an input, appends one tape entry
whose VJP comes from the rule registry (the op-by-op path).
"""
import dis
import itertools
import linecache
import operator
import os
import sys
import warnings

import numpy as np

from . import runtime
from .errors import api_boundary, location
from .rules import mutation, registry
from .rules.python import containers

_asarray = np.asarray       # (NumPy's own: inside a tape np.asarray is the recording wrapper of scipy_calls)
_ids = itertools.count(1)


def id_mark():
    """A number below the `_id` of every Tensor made after the call (Tensors
    are numbered as they are made)."""
    return next(_ids)


def unwrap(x):
    """The raw value of a Tensor/Variable (ndarray); other objects unchanged.
    Lists and tuples are unwrapped element-wise."""
    if isinstance(x, Tensor):
        return x._value
    if type(x) in (list, tuple):
        return type(x)(unwrap(e) for e in x)
    return x


def unwrap_nested(x):
    """unwrap, through nested lists, tuples and dicts."""
    if isinstance(x, Tensor):
        return x._value
    if type(x) in (list, tuple):
        return type(x)(unwrap_nested(e) for e in x)
    if type(x) is dict:
        return {k: unwrap_nested(v) for k, v in x.items()}
    return x


def apply(func, args, kwargs=None):
    """Run `func(*args, **kwargs)` on Tensors: through the recorder that the
    tape module installs (`install_recorder`), which computes on the raw
    values and records the operation on every tape that watches an input.
    Returns Tensors in place of arrays."""
    return _recorder(func, args, kwargs or {})


def _unrecorded(func, args, kwargs):
    raw = getattr(func, "__srcgrad_raw__", func)
    return wrap(raw(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()}))


_recorder = _unrecorded


def install_recorder(recorder):
    """Called once by srcgrad.tape: `recorder(func, args, kwargs)` runs an
    operation on Tensors and records it (the op-by-op path)."""
    global _recorder
    _recorder = recorder


def wrap(result):
    """Tensors in place of the arrays in `result` (an array, or a tuple or
    list of them, named tuples included); other values unchanged."""
    if isinstance(result, (np.ndarray, np.generic)):
        return Tensor(result)
    if isinstance(result, tuple) and hasattr(result, "_fields"):    # eigh, svd, slogdet
        return type(result)(*[wrap(r) for r in result])
    if type(result) in (tuple, list):
        return type(result)(wrap(r) for r in result)
    return result


# ------------------------------------------------- conversions that cut the path

class GradientPathWarning(UserWarning):
    """A watched Tensor was converted to a plain ndarray while a tape (or a
    ForwardAccumulator) was recording: what is computed from the array is
    not recorded, so gradients through it are cut (`tape.gradient` returns
    None, or zeros, or misses that path). Raised by `Tensor.__array__`, i.e.
    `np.asarray(t)`, `np.array(t)`, `np.max([ta, tb])`, or a library
    function that converts its argument; the message names the user's
    function, file and line.

    Not issued for: conversions inside srcgrad itself (compiled code works
    on ndarrays on purpose), Tensors no recording tape or accumulator
    tracks, integer and boolean Tensors, `t.numpy()` (the explicit
    conversion), `float(t)`, printing and formatting.

    To silence it: `warnings.simplefilter("ignore", sg.GradientPathWarning)`
    (or `warnings.catch_warnings()` around the code), or convert on purpose
    with `t.numpy()`, or inside `with tape.stop_recording():`. To make
    every cut an error: `warnings.simplefilter("error", sg.GradientPathWarning)`
    (the conversion then raises it).
    """


_path_check = None      # installed by srcgrad.tape: is this Tensor tracked by a recording tape/accumulator?
#: >0 while sg.grad, sg.jvp or sg.jacobian run a function op by op (op_by_op.py), where float(t) and
#: t.item() of a tracked Tensor cut the derivative's path (GradientPathWarning, an error there)
STRICT = [0]


_copier = None          # installed by srcgrad.tape: t.copy() in the user's code while this thread records


def install_copier(copier):
    """Called once by srcgrad.tape: `copier(tensor)` -> a mutable stand-in
    for `tensor.copy()` in the user's code while a tape records in this
    thread (tape/buffers.py), or None."""
    global _copier
    _copier = copier


def install_path_check(check):
    """Called once by srcgrad.tape: `check(tensor) -> bool`, True when a
    recording tape or accumulator tracks `tensor` (its conversion to an
    ndarray cuts a gradient path)."""
    global _path_check
    _path_check = check


_SRCGRAD_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_PASS_THROUGH = ("numpy", "scipy")      # libraries whose frames lead to the user's call


def frame_kind(frame):
    """"srcgrad", "numpy" (NumPy or SciPy), "library" (another installed
    library or the standard library) or "user"."""
    filename = frame.f_code.co_filename
    if filename.startswith("<srcgrad") or filename.startswith(_SRCGRAD_DIR):
        return "srcgrad"
    top = (frame.f_globals.get("__name__") or "").partition(".")[0]
    if top in _PASS_THROUGH:
        return "numpy"
    if top in sys.stdlib_module_names or "site-packages" in filename or "dist-packages" in filename:
        return "library"
    return "user"


def user_frame(depth=1, through_srcgrad=False):
    """(frame, library) for the code that called the caller of this
    function's caller (`depth` more frames up): `frame` is the first
    frame outside NumPy, SciPy and other libraries (the user's), `library`
    the outermost library frame passed on the way (the library function
    the user called) or None. Returns None when that code is srcgrad's own
    (generated code, rules, the tape), unless `through_srcgrad`: then
    srcgrad's frames are passed too (the user's line that led there)."""
    frame = sys._getframe(depth + 1)
    library = None
    beyond_numpy = False        # (passed a frame of a library other than NumPy: SciPy's, say)
    while frame is not None:
        kind = frame_kind(frame)
        if kind == "srcgrad":
            if not through_srcgrad:
                # srcgrad's own call (through NumPy's Python functions at most): None. But a library
                # function that srcgrad runs (sg.grad(scipy.optimize.rosen), op by op) converting: there
                return (library, library) if beyond_numpy else None
            frame = frame.f_back
            continue
        if kind == "user":
            return frame, library
        library = frame
        beyond_numpy = beyond_numpy or kind == "library" or not (
            frame.f_globals.get("__name__") or "").startswith("numpy")
        frame = frame.f_back
    return (library, library) if library is not None else None


def path_is_cut(tensor):
    """Would converting `tensor` to an ndarray now cut a gradient path (a
    floating Tensor that a recording tape or accumulator tracks)?"""
    return _path_check is not None and tensor._value.dtype.kind in "fc" and _path_check(tensor)


def warn_path_cut(tensor, depth=2, action="converted to a NumPy array", through_srcgrad=False):
    """Warn (GradientPathWarning) that `tensor` is being converted to an
    ndarray by user code (the code `depth` frames above this function's
    caller, NumPy's and other libraries' frames passed), naming the user's
    function, file and line; say nothing when the conversion comes from
    srcgrad itself (unless `through_srcgrad`: the tape's own frames are
    passed on the way to the user's line). `action` says what happened to
    the Tensor."""
    found = user_frame(depth, through_srcgrad)
    if found is None:
        return
    frame, library = found
    code = frame.f_code
    filename, lineno = code.co_filename, frame.f_lineno
    text = linecache.getline(filename, lineno).strip()
    via = ""
    if library is not None and library is not frame:
        lib_name = library.f_globals.get("__name__", "?")
        via = " (inside %s.%s)" % (lib_name, getattr(library.f_code, "co_qualname", library.f_code.co_name))
    kind = "Variable" if isinstance(tensor, Variable) else "Tensor"
    message = (
        "srcgrad: a watched %s (shape %s, %s) was %s in %s() at %s%s%s. "
        "What is computed from that array is not recorded, so the gradient path through it is cut "
        "(tape.gradient returns None or misses this path). Apply NumPy functions to the %s itself, "
        "or register a rule for a library function (sg.register_adjoint); to convert on purpose use "
        ".numpy(); silence with warnings.simplefilter('ignore', srcgrad.GradientPathWarning)."
        % (kind, tensor.shape, tensor.dtype.name, action, getattr(code, "co_qualname", code.co_name),
           location(filename, lineno), ": `%s`" % text if text else "", via, kind))
    module = frame.f_globals.get("__name__", "<unknown>")
    registry = frame.f_globals.setdefault("__warningregistry__", {})
    try:        # (the globals let the warning show a notebook cell's line)
        warnings.warn_explicit(message, GradientPathWarning, filename, lineno, module, registry, frame.f_globals)
    except ImportError:     # (`python -c` code: its loader, asked for the source, raises ImportError)
        warnings.warn_explicit(message, GradientPathWarning, filename, lineno, module, registry)


def _stores_subscript(frame):
    """Is `frame` executing `obj[i] = value` (the instruction NumPy's
    element assignment runs in)?"""
    try:
        return frame.f_code.co_code[frame.f_lasti] == _STORE_SUBSCR
    except (AttributeError, IndexError):
        return False


_STORE_SUBSCR = dis.opmap["STORE_SUBSCR"]


def _overrides(value, protocol):
    """Is `value` an ndarray of a subclass with its own NumPy protocol
    method (a Buffer the tape follows: tape/buffers.py)?"""
    return isinstance(value, np.ndarray) and getattr(type(value), protocol) is not getattr(np.ndarray, protocol)


def _user_line():
    """' at file:line: `text`' for the user's line that called into NumPy, or ''."""
    found = user_frame(3, through_srcgrad=True)
    if found is None:
        return ""
    frame = found[0]
    text = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    return " at %s%s" % (location(frame.f_code.co_filename, frame.f_lineno), ": `%s`" % text if text else "")


def _setitem_message(what):
    """The TypeError's message for `what` (`t[i] = v`) writing into a
    Tensor, naming the user's line: where it runs (sg.grad's op-by-op
    fallback, or a tape) and what to write instead."""
    where = _user_line()
    if STRICT[0]:
        return ("srcgrad Tensors are immutable: `%s`%s writes into a Tensor in place. The function runs op by op "
                "on the tape (the compiler refused it: the PerformanceWarning says why), where this is not "
                "recorded. Write into an array allocated in the function (np.zeros(shape), np.zeros_like(x) "
                "there are recorded: out = np.zeros_like(t); out[...] = t; out[i] = v), build the value with "
                "np.where or np.concatenate, or make the function compile (the warning names the construct): "
                "compiled code supports `t[i] = v` into a variable t." % (what, where))
    return ("srcgrad Tensors are immutable, as tf.Tensor is: `%s`%s is not recorded op by op (on a "
            "GradientTape, or where the compiler refused a function). Compiled code supports it; op by op, write "
            "into an array allocated while the tape records (np.zeros, np.zeros_like there are recorded), or "
            "t = srcgrad.rules.python.containers.setitem(t, i, v)." % (what, where))


def _in_place_message(ufunc, method, out):
    """The TypeError's message for a ufunc writing a Tensor into a NumPy
    array (`a *= t`, `a[i] += t`, `np.exp(t, out=a)`), naming the user's line."""
    name = "np.%s%s" % (ufunc.__name__, "" if method == "__call__" else "." + method)
    where = _user_line()
    kind = "an array of %s" % out[0].dtype.name if len(out) == 1 and isinstance(out[0], np.ndarray) else "arrays"
    return ("srcgrad Tensors are immutable, and %s%s writes a Tensor into %s in place (an augmented "
            "assignment such as `a *= t` or `a[i] += t` runs %s(..., out=a)), which cannot be recorded op "
            "by op. Write the new value instead: `a = a * t`, or `a[i] = a[i] + t` into an array allocated "
            "inside the tape (np.zeros, np.ones, np.empty there are recorded when filled with Tensors)."
            % (name, where, kind, name))


def _at_message(ufunc, into_tensor):
    """The TypeError's message for `ufunc.at(a, indices, b)` writing into a
    Tensor `a` (immutable), or writing a Tensor `b` into a NumPy array that
    the tape does not follow (allocated before it), naming the user's line."""
    name = "np.%s.at" % ufunc.__name__
    what = ("writes into a Tensor in place (srcgrad Tensors are immutable)" if into_tensor else
            "writes a Tensor into a NumPy array allocated outside the tape in place, which cannot be recorded")
    if ufunc in (np.add, np.subtract):
        instead = ("allocate the array inside the tape or the function sg.grad runs (np.zeros, np.ones, np.empty "
                   "and their _like forms there are followed: a = np.zeros(shape); a[...] = t; %s(a, i, v) "
                   "is recorded)" % name)
    else:
        instead = ("element assignments into an array allocated inside the tape, one index at a time so that "
                   "repeated indices compound: for k in range(len(i)): a[i[k]] = np.%s(a[i[k]], v[k])"
                   % ufunc.__name__)
    return "srcgrad: %s%s %s. Write instead: %s." % (name, _user_line(), what, instead)


def is_differentiable_dtype(dtype):
    return np.dtype(dtype).kind in "fc"


def conformed(d, like):
    """The derivative `d` (an ndarray, or a Tensor: a backward or tangent
    pass run on Tensors, which the tapes around record) as one of `like`
    (a Tensor): its real part for a real `like` (TF's convention: a real
    value's derivative is real), broadcast to like's shape, in like's
    floating dtype."""
    if d.dtype.kind == "c" and like.dtype.kind != "c":
        d = np.real(d)
    if d.shape != like.shape:
        d = np.broadcast_to(d, like.shape)
    if d.dtype != like.dtype and is_differentiable_dtype(like.dtype):
        d = d.astype(like.dtype)
    return d


def _binary(ufunc):
    @api_boundary
    def method(self, other):
        return ufunc(self, other)

    @api_boundary
    def rmethod(self, other):
        return ufunc(other, self)
    return method, rmethod



def _refused_in_place(name):
    """The Tensor method `t.<name>(...)` of an ndarray method that changes
    the array in place (sort, fill, partition, put, itemset, resize):
    refused with a TypeError naming the user's line and the functional
    spelling (rules/mutation.py's IN_PLACE_METHODS), as Tensors are
    immutable, as tf.Tensor is."""
    @api_boundary
    def method(self, *args, **kwargs):
        raise self._in_place(name)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = "Refused (TypeError): Tensors are immutable; %s." % mutation.IN_PLACE_METHODS[name]
    return method

def _reduction_method(fn):
    """The Tensor method `t.<name>(axis, keepdims, **kwargs)` calling
    `fn(t, ...)` (np.sum, np.mean, np.max, np.min): the other keywords
    (dtype, initial, where, ...) are NumPy's, passed on (a rule refuses by
    name what it does not model)."""
    def method(self, axis=None, keepdims=False, **kwargs):
        return fn(self, axis=axis, keepdims=keepdims, **kwargs)
    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = "np.%s(self, axis, keepdims, **kwargs), recorded on the tape." % fn.__name__
    return method

class Tensor:
    """An immutable value wrapping an `np.ndarray`, as `tf.Tensor`.

    Supports the Python operators, indexing and NumPy dispatch: `np.sin(t)`,
    `np.sum(t, axis=0)` and `t @ w` return Tensors and are recorded on
    recording tapes that watch `t`. `repr` follows TF:
    `srcgrad.Tensor(6.0, shape=(), dtype=float64)`.
    """

    __array_priority__ = 100
    __slots__ = ("_value", "_id", "__weakref__")

    def __init__(self, value, dtype=None):
        self._value = _asarray(value, dtype=dtype)
        self._id = next(_ids)

    # -- basic protocol
    def numpy(self):
        """The value as an ndarray (a copy for Variables)."""
        return self._value

    @property
    def shape(self):
        return self._value.shape

    @shape.setter
    @api_boundary
    def shape(self, value):
        """`t.shape = s`: refused (TypeError naming the user's line), as
        NumPy reshapes the array in place; x = x.reshape(s) instead."""
        raise TypeError("srcgrad Tensors are immutable, as tf.Tensor is: t.shape = %r%s reshapes an array in "
                        "place, which cannot be recorded op by op. Write it functionally: x = x.reshape(%r)"
                        % (value, _user_line(), value))

    @property
    def dtype(self):
        return self._value.dtype

    @property
    def ndim(self):
        return self._value.ndim

    @property
    def size(self):
        return self._value.size

    def __array__(self, dtype=None, copy=None):
        """The ndarray (cast to `dtype`). Inside a recording tape, for a
        floating Tensor the tape tracks, warns GradientPathWarning: the
        conversion cuts the gradient path (see that class). A cast to an
        integer or boolean dtype (np.int64(t), np.asarray(t, dtype=int))
        does not: its values carry no derivative (as x.astype(int))."""
        if (_path_check is not None and self._value.dtype.kind in "fc"
                and (dtype is None or np.dtype(dtype).kind in "fc") and _path_check(self)):
            warn_path_cut(self)     # (the caller of __array__: NumPy calls it from C)
        if dtype is None:
            return self._value
        return self._value.astype(dtype)

    @api_boundary
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.get("out")
        if out is not None:
            if any(_overrides(o, "__array_ufunc__") for o in out):
                return NotImplemented       # (an array the tape follows, tape/buffers.py: its own method writes)
            raise TypeError(_in_place_message(ufunc, method, out))
        kwargs.pop("out", None)
        if method == "at":      # ufunc.at(a, indices, b) writes into a
            if _overrides(inputs[0], "__array_ufunc__"):
                return NotImplemented       # (an array the tape follows, tape/buffers.py: records it)
            if isinstance(inputs[0], Tensor) or any(isinstance(v, Tensor) for v in inputs[2:]):
                raise TypeError(_at_message(ufunc, isinstance(inputs[0], Tensor)))
            return getattr(ufunc, method)(*[unwrap(v) for v in inputs], **kwargs)    # (Tensor indices only)
        if method == "__call__":
            return apply(ufunc, inputs, kwargs)
        return apply(getattr(ufunc, method), inputs, kwargs)

    @api_boundary
    def __array_function__(self, func, types, args, kwargs):
        if _overrides(kwargs.get("out"), "__array_function__"):
            return NotImplemented           # (np.sum(t, out=buf) into an array the tape follows: its method writes)
        written = mutation.WRITES_INTO.get(func)
        if written is not None and args and isinstance(args[0], Tensor):
            # (np.put_along_axis(t, ...), np.copyto(t, v): NumPy would write into the Tensor's own array)
            raise TypeError("srcgrad Tensors are immutable, as tf.Tensor is: np.%s%s writes into its argument %s "
                            "in place, which cannot be recorded op by op. Write instead: %s"
                            % (func.__name__, _user_line(), written[0], written[1]))
        form = registry.tape_form(func)
        if form is not None:
            result = form(*args, **kwargs)
            if result is not NotImplemented:
                return result
        return apply(func, args, kwargs)

    def __repr__(self):
        if self._value.ndim == 0:
            body = str(self._value[()])
        else:
            body = np.array2string(self._value, separator=" ")
        if "\n" in body:
            body = "\n" + body
        return "srcgrad.Tensor(%s, shape=%s, dtype=%s)" % (body, self.shape, self.dtype.name)

    def __str__(self):
        return self.__repr__()

    def __hash__(self):
        return id(self)

    def __bool__(self):
        return bool(self._value)

    def __float__(self):
        """float(t): a Python float, which the tape cannot follow. An
        explicit float(t) is a conversion on purpose (as `.numpy()`); NumPy
        calls it too for `out[i] = t` into a plain array, which cuts the
        gradient path unseen: that warns GradientPathWarning inside a
        recording tape that tracks `t`, as `np.asarray(t)` does. While
        sg.grad, sg.jvp or sg.jacobian run a function op by op, any
        float(t) of a Tensor they differentiate is that error (as autograd
        and JAX refuse float() of a traced value): the derivative would
        miss the path."""
        if _path_check is not None and self._value.dtype.kind in "fc" and (
                STRICT[0] or _stores_subscript(sys._getframe(1))) and _path_check(self):
            warn_path_cut(self, action="written into a NumPy array element" if _stores_subscript(
                sys._getframe(1)) else "converted to a Python float")
        return float(self._value)

    def __int__(self):
        return int(self._value)

    def __index__(self):
        return operator.index(self._value)

    def __len__(self):
        if not self._value.ndim:
            raise TypeError("len() of a 0-d Tensor")
        return self._value.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def item(self):
        """t.item(): a Python number, which the tape cannot follow (an error
        while sg.grad, sg.jvp or sg.jacobian run a function op by op: see
        __float__)."""
        self._strict_cut("converted to a Python number (.item())")
        return self._value.item()

    def tolist(self):
        """t.tolist(): Python numbers, which the tape cannot follow (an
        error while sg.grad, sg.jvp or sg.jacobian run a function op by op:
        see __float__)."""
        self._strict_cut("converted to Python numbers (.tolist())")
        return self._value.tolist()

    def _strict_cut(self, action):
        if STRICT[0] and _path_check is not None and self._value.dtype.kind in "fc" and _path_check(self):
            warn_path_cut(self, depth=3, action=action)

    def __format__(self, spec):
        if self._value.ndim == 0:
            return format(self._value.item(), spec)
        return format(str(self), spec)

    # -- operators (all through NumPy ufuncs, hence recorded)
    __add__, __radd__ = _binary(np.add)
    __sub__, __rsub__ = _binary(np.subtract)
    __mul__, __rmul__ = _binary(np.multiply)
    __truediv__, __rtruediv__ = _binary(np.true_divide)
    __floordiv__, __rfloordiv__ = _binary(np.floor_divide)
    __mod__, __rmod__ = _binary(np.remainder)
    __pow__, __rpow__ = _binary(np.power)
    __matmul__, __rmatmul__ = _binary(np.matmul)
    # (masks combined, `(x > 0) | (y == 0)`, as ndarray's: no derivative; floats raise NumPy's TypeError)
    __and__, __rand__ = _binary(np.bitwise_and)
    __or__, __ror__ = _binary(np.bitwise_or)
    __xor__, __rxor__ = _binary(np.bitwise_xor)
    __lshift__, __rlshift__ = _binary(np.left_shift)
    __rshift__, __rrshift__ = _binary(np.right_shift)

    def __divmod__(self, o):
        """divmod(t, o): (t // o, t % o), as ndarray.__divmod__ (np.divmod)."""
        return np.divmod(self, o)

    def __rdivmod__(self, o):
        return np.divmod(o, self)

    def __round__(self, ndigits=None):
        """round(t, n) of a 0-d Tensor (what a NumPy scalar, x[i], rounds
        as): np.round(t, n), piecewise constant, so its result carries no
        derivative (as np.round). NumPy arrays do not define round(): nor do
        Tensors of one or more dimensions (TypeError)."""
        if self.ndim:
            raise TypeError("type %s doesn't define __round__ method for arrays of one or more dimensions "
                            "(as numpy.ndarray): use np.round(t, n)" % type(self).__name__)
        return np.round(self) if ndigits is None else np.round(self, ndigits)

    def __neg__(self):
        return np.negative(self)

    def __pos__(self):
        return np.positive(self)

    def __abs__(self):
        return np.absolute(self)

    def __setitem__(self, index, value):
        raise TypeError(_setitem_message("t[i] = v"))

    def __invert__(self):
        return np.invert(self)

    def copy(self):
        """ndarray.copy in the user's code. While a tape records in this
        thread, a Buffer standing for the Tensor (tape/buffers.py): an
        array the code may write into, its element assignments recorded
        (`y = x.copy(); y[0] = v`, as with np.zeros). Otherwise the Tensor
        itself: Tensors are immutable."""
        if _copier is not None:
            made = _copier(self, sys._getframe(1))
            if made is not None:
                return made
        return self

    def _in_place(self, name):
        """The TypeError an in-place ndarray method (t.sort(), t.fill(v))
        raises on an immutable Tensor, naming the user's line."""
        return TypeError("srcgrad Tensors are immutable, as tf.Tensor is: t.%s(...)%s changes an array in place, "
                         "which cannot be recorded op by op. Write it functionally: %s"
                         % (name, _user_line(), mutation.IN_PLACE_METHODS[name]))

    sort = _refused_in_place("sort")
    fill = _refused_in_place("fill")
    partition = _refused_in_place("partition")
    put = _refused_in_place("put")
    itemset = _refused_in_place("itemset")
    resize = _refused_in_place("resize")

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        """`ndarray.astype`: the same Tensor when the dtype already matches
        (Tensors are immutable: `copy` changes nothing), else a cast that is
        recorded (its cotangent is cast back). `order`, `casting` and `subok`
        are accepted as NumPy's and ignored (a Tensor has no memory layout to
        keep)."""
        if np.dtype(dtype) == self.dtype:
            return self
        return containers.cast(self, dtype)

    def __lt__(self, o):
        return np.less(self, o)

    def __le__(self, o):
        return np.less_equal(self, o)

    def __gt__(self, o):
        return np.greater(self, o)

    def __ge__(self, o):
        return np.greater_equal(self, o)

    def __eq__(self, o):
        return np.equal(self, o)

    def __ne__(self, o):
        return np.not_equal(self, o)

    @api_boundary
    def __getitem__(self, index):
        return apply(operator.getitem, (self, unwrap(index)))

    # -- ndarray methods users write
    @property
    def T(self):
        return np.transpose(self)

    @property
    def flat(self):
        """`t.flat[i]` reads np.ravel(t)[i] (ndarray.flat's read; an int,
        slice, integer array or mask index), recorded as a ravel and an
        index. Writing through it raises TypeError (Tensors are immutable)."""
        return _FlatReader(self)

    sum = _reduction_method(np.sum)
    mean = _reduction_method(np.mean)
    max = _reduction_method(np.max)
    min = _reduction_method(np.min)

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return np.reshape(self, shape)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = axes[0]
        return np.transpose(self, axes or None)

    def dot(self, other):
        return np.dot(self, other)

    # the other ndarray methods the compiler knows (anf_calls._METHODS), op by op too
    def ravel(self, order="C"):
        return np.ravel(self, order)

    def flatten(self, order="C"):
        return np.ravel(self, order)

    def squeeze(self, axis=None):
        return np.squeeze(self, axis)

    def swapaxes(self, axis1, axis2):
        return np.swapaxes(self, axis1, axis2)

    def prod(self, axis=None, keepdims=False, **kwargs):
        """np.prod(self, ...): the other keywords (dtype, initial, where, ...) as
        NumPy's, passed on (a rule refuses by name what it does not model)."""
        return np.prod(self, axis=axis, keepdims=keepdims, **kwargs)

    def var(self, axis=None, ddof=0, keepdims=False, **kwargs):
        """np.var(self, ...): the other keywords passed on (see sum)."""
        return np.var(self, axis=axis, ddof=ddof, keepdims=keepdims, **kwargs)

    def std(self, axis=None, ddof=0, keepdims=False, **kwargs):
        """np.std(self, ...): the other keywords passed on (see sum)."""
        return np.std(self, axis=axis, ddof=ddof, keepdims=keepdims, **kwargs)

    def cumsum(self, axis=None):
        return np.cumsum(self, axis=axis)

    def cumprod(self, axis=None):
        return np.cumprod(self, axis=axis)

    def clip(self, min=None, max=None):
        return np.clip(self, min, max)

    def conj(self):
        return np.conj(self)

    conjugate = conj

    def trace(self, offset=0, axis1=0, axis2=1):
        return np.trace(self, offset, axis1, axis2)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return np.diagonal(self, offset, axis1, axis2)

    def repeat(self, repeats, axis=None):
        return np.repeat(self, repeats, axis)

    def take(self, indices, axis=None):
        return np.take(self, indices, axis)

    @property
    def real(self):
        return np.real(self)

    @property
    def imag(self):
        return np.imag(self)

    def argmax(self, axis=None):
        return np.argmax(self._value, axis)

    def argmin(self, axis=None):
        return np.argmin(self._value, axis)


class _FlatReader:
    """What `Tensor.flat` returns: reads of the raveled Tensor, as numpy.flatiter."""

    def __init__(self, tensor):
        self._tensor = tensor

    def __getitem__(self, index):
        return np.ravel(self._tensor)[index]

    def __setitem__(self, index, value):
        raise TypeError(_setitem_message("t.flat[i] = v"))

    def __len__(self):
        return self._tensor.size

    def __iter__(self):
        return iter(np.ravel(self._tensor))


class Variable(Tensor):
    """A mutable value, as `tf.Variable`.

    `initial_value`: scalar, list or array (float64 for Python floats, as
    NumPy). `trainable=True` Variables read inside a tape are watched
    automatically (unless the tape has `watch_accessed_variables=False`). The
    result of an operation on a Variable is a Tensor. `assign*` replace the
    stored array (never mutate it in place), so values a tape recorded stay
    valid. Raises ValueError on an assignment of a different shape.
    """

    __slots__ = ("_trainable", "_name")

    def __init__(self, initial_value, trainable=True, name=None, dtype=None):
        value = initial_value._value if isinstance(initial_value, Tensor) else initial_value
        _refuse_other_array(value, "sg.Variable")
        super().__init__(np.array(value, dtype=dtype))
        self._trainable = bool(trainable)
        self._name = name if name is not None else "Variable"

    @property
    def trainable(self):
        return self._trainable

    @property
    def name(self):
        return self._name

    def numpy(self):
        return self._value.copy()

    def assign(self, value):
        """Replace the value; shape must match. Returns self."""
        _refuse_other_array(value, "Variable.assign")
        new = np.array(unwrap(value), dtype=self._value.dtype)
        if new.shape != self._value.shape:
            raise ValueError("Cannot assign a value of shape %s to Variable %r of shape %s"
                             % (new.shape, self._name, self._value.shape))
        self._value = new
        return self

    def assign_add(self, delta):
        return self.assign(self._value + unwrap(delta))

    def assign_sub(self, delta):
        return self.assign(self._value - unwrap(delta))

    def __repr__(self):
        value = str(self._value[()]) if self._value.ndim == 0 else np.array2string(self._value, separator=" ")
        return "<srcgrad.Variable '%s' shape=%s dtype=%s, numpy=%s>" % (
            self._name, self.shape, self.dtype.name, value)

    def __hash__(self):
        return id(self)


def constant(value, dtype=None):
    """A Tensor from a scalar, list or array (copied), as `tf.constant`.
    Python floats give float64 (NumPy's default), unlike TF's float32."""
    if isinstance(value, Tensor):
        value = value._value
    _refuse_other_array(value, "sg.constant")
    return Tensor(np.array(value, dtype=dtype))


def _refuse_other_array(value, what):
    """Raise ForeignArrayError for another library's array (Dask, PyTorch,
    array_api_strict): a Tensor holds an ndarray, so wrapping it would
    convert it to NumPy behind the user's back."""
    if type(value) is not np.ndarray and runtime.arrays.is_other_array(value):
        raise runtime.arrays.ForeignArrayError(
            "srcgrad: %s of a %s array would convert it to NumPy: Tensors, Variables and tapes hold NumPy "
            "arrays. Differentiate functions of such arrays with sg.grad / sg.value_and_grad, which keep their "
            "type (docs/arrays.md), or pass np.asarray(x) explicitly" % (what, type(value).__module__.split(".")[0]))


runtime.install(Tensor, apply, unwrap)
