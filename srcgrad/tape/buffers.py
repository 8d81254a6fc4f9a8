"""Arrays filled element by element, op by op.

Published NumPy code preallocates its outputs and fills them in a loop:

    out = np.zeros((N, F, H, W))
    for i in range(N): ...: out[i, f, h, w] = np.sum(window * w[f]) + b[f]

Compiled code differentiates this (element assignment is lowered to a
functional setitem). Op by op, a Tensor written into a plain ndarray leaves
the tape: NumPy converts it (tf.Tensor, autograd's and JAX's tracers refuse
the same). So while a GradientTape records (a user's, or the one srcgrad runs a
function on op by op for `sg.grad`, `sg.jvp` or `sg.jacobian`:
op_by_op.py), the allocations the user's code makes
(np.zeros, np.ones, np.empty, np.full and their _like forms, of a Tensor
too) return a `Buffer`: an
ndarray whose element assignment of a Tensor records a functional setitem
(`containers.array_setitem`, the compiled path's rule) and keeps the
resulting Tensor, which every later read of the buffer uses (NumPy calls,
operators, indexing, methods, returning it). The raw values are written
too, so the array holds what the plain call computes.

Every way of writing into a buffer is followed or raises (never a value or
gradient that differs from NumPy's):

- a view of it by basic indexing (`row = out[i]`, `v = out[1:]`) is a
  Buffer view: reading it reads the buffer's current Tensor at that index
  (NumPy's aliasing: a later `out[i] = t` shows through `row`), and writing
  into it (`row[j] = t`, `v *= 3`, `out[:, j] *= t`) is recorded as an
  element assignment into the buffer at the view's index;
- the other views (`out.T`, `out.reshape(...)`, `np.transpose(out)`, ...)
  read the buffer's current Tensor through the same operation; writing
  into them raises TypeError naming what to write instead;
- in-place ufuncs and `out=` into a buffer (`out += t`, `np.exp(t,
  out=buf)`, `np.sum(t, axis=0, out=buf)`), `out.fill(v)` and
  `np.copyto(out, t)` are recorded as an assignment of the whole buffer;
- the other in-place methods and functions (`sort`, `partition`, `put`,
  `resize`, `np.put`, `np.putmask`, `np.place`, `np.fill_diagonal`, and
  the ufuncs' `.at` other than `np.add.at` and `np.subtract.at`) raise
  TypeError naming the functional spelling, when the buffer holds a Tensor
  or one is written (on plain values they run as NumPy's);
- `np.add.at(out, i, t)` and `np.subtract.at` are recorded as the whole
  buffer assigned the functional `add_at(out, i, t)` (the compiled path's
  rewrite and rule).

An array that is not a Buffer (allocated before the tape) does not record
`a[i] = t`: that warns GradientPathWarning (tensor.py), and an in-place
update of it with a Tensor (`a *= t`) raises TypeError from the Tensor.
"""
import sys
import threading
import weakref

import numpy as np

from ..rules import mutation
from ..rules.helpers.broadcast import add_at, subtract_at
from ..rules.python.containers import array_setitem
from ..tensor import Tensor, frame_kind, unwrap
from . import nested

ALLOCATORS = ("zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like")
ACTIVE = [0]        # >0 while a tape or accumulator records (enter/exit), in any thread
_thread = threading.local()     # .active: the same count for this thread (its allocations are Buffers)
_lock = threading.Lock()        # (enter/exit: the count and NumPy's namespace change together)
MADE = [False]      # has any Buffer been made? (the tape's per-op check is skipped until one is)
_raw = {}           # name -> NumPy's function (while installed)
_wrappers = {}      # name -> its allocator wrapper (made once per NumPy function)
_installed = [None, {}, {}]     # (NumPy's functions, {name: function}, {name: wrapper}) when enter last made them
_views = {}         # id -> weak reference of the views made while recording (brought up to date by exit)

# A Buffer's __dict__: "_tensor" the Tensor it stands for (a buffer's own; a view's, computed from its
# parent's), and for a view "_parent" (the Buffer it views), "_index" (a basic index: writes go through
# to the parent) or "_read" (parent's Tensor -> the view's: writes raise; _UNKNOWN: not even reads are
# followed), "_src" (the parent's Tensor its "_tensor" was computed from) and "_what" (for messages).
_UNKNOWN = "unknown"


def _held(buf):
    """The Tensor `buf` stands for (None: it holds plain values). A view's
    is read from its parent's current Tensor (recorded), when that changed
    since the last read."""
    d = buf.__dict__
    parent = d.get("_parent")
    if parent is None:
        return d.get("_tensor")
    src = _held(parent)
    if src is None:
        return None
    if d.get("_src") is not src:
        read = d.get("_read")
        if read is _UNKNOWN:
            raise TypeError(
                "srcgrad: an array derived from a NumPy array filled with Tensors (op by op, a tape or "
                "sg.grad's fallback) by an operation srcgrad does not follow (%s) is used after Tensors were "
                "written into the array: its gradient would be wrong. Index the array (out[i], out[:, j]), or "
                "use NumPy functions on it (np.reshape(out, s), out.T, out.copy())." % d.get("_what", "a view"))
        d["_tensor"] = src[d["_index"]] if read is None else read(src)
        d["_src"] = src
    return d["_tensor"]


def _live(buf):
    """The Tensor a buffer holds, while op by op runs; None otherwise (after
    it, the raw values are right and plain NumPy reads them)."""
    return _held(buf) if ACTIVE[0] else None


def plain(v):
    """A Buffer as what NumPy and the tape should see: its Tensor, or its
    values as a plain ndarray; lists and tuples element by element."""
    if isinstance(v, Buffer):
        t = _live(v)
        return t if t is not None else v.view(np.ndarray)
    if isinstance(v, (list, tuple)) and any(isinstance(e, (Buffer, list, tuple)) for e in v):
        return type(v)(plain(e) for e in v)
    return v


def resolve(v, held=False):
    """`v` with Buffers holding Tensors replaced by the Tensors: for the
    tape's inputs while it records, and (`held`) for the targets given to
    `tape.gradient` after it stopped."""
    if isinstance(v, Buffer):
        t = _held(v) if held else _live(v)
        return t if t is not None else v
    if isinstance(v, (list, tuple)) and any(isinstance(e, (Buffer, list, tuple)) for e in v):
        return type(v)(resolve(e, held) for e in v)
    if isinstance(v, dict) and any(isinstance(e, Buffer) for e in v.values()):
        return {k: resolve(e, held) for k, e in v.items()}
    return v


_BASIC = (int, np.integer, slice, type(Ellipsis), type(None))


def _basic(index):
    """Is `index` a basic index (ints, slices, Ellipsis, None: NumPy returns a view)?"""
    if type(index) is tuple:
        return all(isinstance(i, _BASIC) and not isinstance(i, bool) for i in index)
    return isinstance(index, _BASIC) and not isinstance(index, bool)


def _view(parent, raw, index=None, read=None, what=None):
    """`raw` (a view of `parent`'s values) as a Buffer view of `parent`."""
    view = raw.view(Buffer)
    d = view.__dict__
    d["_parent"] = parent
    d["_index"] = index
    d["_read"] = read
    d["_what"] = what
    key = id(view)
    _views[key] = weakref.ref(view, lambda ref, key=key: _views.pop(key) if _views.get(key) is ref else None)
    return view


def _has_tensor(value):
    if isinstance(value, Tensor):
        return True
    if isinstance(value, Buffer):
        return _live(value) is not None
    if isinstance(value, (list, tuple)):
        return any(isinstance(e, (Tensor, Buffer)) and _has_tensor(e) for e in nested.flatten(value))
    return False


def _tracked(buf, value=None):
    """Does writing `value` into `buf` have to be recorded (op by op runs, and
    the buffer holds a Tensor or one is written)?"""
    return bool(ACTIVE[0]) and (_has_tensor(value) or _held(buf) is not None)


def _refuse(buf, what, instead):
    name = buf.__dict__.get("_what")
    raise TypeError(
        "srcgrad: %s%s, which holds Tensors op by op (a tape, or sg.grad's fallback), is not followed: the "
        "value and gradient would differ from NumPy's. Write instead: %s"
        % (what, " into %s (a view of an array filled with Tensors)" % name if name else
           " into a NumPy array your code allocated", instead))


def _assign(buf, index, value):
    """`buf[index] = value`: recorded (a functional setitem on the Tensor
    the buffer stands for; into a view, on its parent at the view's index)
    when it holds a Tensor or one is written; the raw values written too."""
    d = buf.__dict__
    if not _tracked(buf, value):
        np.ndarray.__setitem__(buf.view(np.ndarray), index, unwrap(_unwrap_all(value)))
        return
    parent = d.get("_parent")
    if parent is not None and d.get("_read") is not None:
        _refuse(buf, "writing", "index the array itself: out[i, j] = v (or out[:, j] = v)")
    value = plain(value)
    base = _held(buf)
    if index is Ellipsis and isinstance(value, Tensor) and value.shape == buf.shape and \
            value.dtype == buf.dtype:
        new = value         # (the whole buffer: no copy to record)
    else:
        if base is None:
            base = Tensor(buf.view(np.ndarray).copy())
        new = array_setitem(base, index, value)
    if parent is not None:
        _assign(parent, d["_index"], new)
        d["_tensor"], d["_src"] = new, _held(parent)
    else:
        d["_tensor"] = new
        np.ndarray.__setitem__(buf.view(np.ndarray), index, new._value if new is value else _unwrap_all(value))


class Buffer(np.ndarray):
    """An array the user's code allocated while srcgrad runs it op by op
    (see the module's docstring). Behaves as its values; once a Tensor is
    written into it, as that Tensor."""

    def __array_finalize__(self, obj):
        # (an array NumPy derives from a buffer by a method not followed here: out.view(), copy.copy(out))
        if ACTIVE[0] and isinstance(obj, Buffer) and self.dtype.kind in "fc":
            d = self.__dict__
            d["_parent"] = obj
            d["_index"] = None
            d["_read"] = _UNKNOWN
            d["_what"] = "an array NumPy made from it"

    def __setitem__(self, index, value):
        index = unwrap(index)
        if isinstance(value, Buffer) and value.__dict__.get("_parent") is self and \
                value.__dict__.get("_read") is None and _basic(index) and _same(value.__dict__["_index"], index):
            return      # (`out[i] *= t` stores the view it changed back into its place: NumPy copies nothing)
        _assign(self, index, value)

    def __getitem__(self, index):
        index = unwrap(index)
        raw = self.view(np.ndarray)[index]
        if not ACTIVE[0]:
            return raw
        if isinstance(raw, np.ndarray) and _basic(index):
            return _view(self, raw, index, what="out[%s]" % _index_text(index))
        held = _held(self)
        if held is not None:
            return held[index]
        # (a copy, by advanced indexing: a buffer of its own, so that `out[[0, 0, 2]] += t` -- NumPy's
        # tmp = out[i]; tmp += t; out[i] = tmp -- records the update and then the assignment)
        return raw.view(Buffer) if isinstance(raw, np.ndarray) else raw

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if method == "at":
            return _at(ufunc, inputs, kwargs)
        inputs = [plain(i) for i in inputs]
        if out is None:
            return getattr(ufunc, method)(*inputs, **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        buffers = [o for o in outs if isinstance(o, Buffer)]
        if not buffers or not ACTIVE[0]:
            return getattr(ufunc, method)(*inputs, out=tuple(plain(o) for o in outs), **kwargs)
        if len(outs) != 1:
            if any(_tracked(b) for b in buffers) or any(isinstance(i, Tensor) for i in inputs):
                _refuse(buffers[0], "np.%s(..., out=(...))" % ufunc.__name__,
                        "use the results: a, b = np.%s(x)" % ufunc.__name__)
            return getattr(ufunc, method)(*inputs, out=tuple(plain(o) for o in outs), **kwargs)
        # y += t, y[i] *= t, np.exp(x, out=y) into a buffer: the result, assigned to the whole buffer
        target = outs[0]
        where = kwargs.pop("where", True)
        result = getattr(ufunc, method)(*inputs, **kwargs)
        if where is not True:
            result = np.where(plain(where), result, plain(target))
        _assign(target, Ellipsis, result)
        return target

    def __array_function__(self, func, types, args, kwargs):
        if ACTIVE[0]:
            out = kwargs.get("out")
            if isinstance(out, Buffer):         # np.sum(t, axis=0, out=buf): the result, assigned to the buffer
                result = func(*[plain(a) for a in args], **{k: plain(v) for k, v in kwargs.items() if k != "out"})
                _assign(out, Ellipsis, result)
                return out
            if func is np.copyto and args and isinstance(args[0], Buffer):
                return _copyto(*args, **kwargs)
            written = mutation.WRITES_INTO.get(func)
            if written is not None and args and isinstance(args[0], Buffer) and \
                    (_tracked(args[0]) or any(_has_tensor(a) for a in list(args[1:]) + list(kwargs.values()))):
                _refuse(args[0], "np.%s(%s, ...)" % (func.__name__, written[0]), written[1])
            if func in _VIEW_FUNCTIONS and args and isinstance(args[0], Buffer):
                rest = [plain(a) for a in args[1:]]
                kw = {k: plain(v) for k, v in kwargs.items()}
                raw = func(args[0].view(np.ndarray), *rest, **kw)
                if isinstance(raw, np.ndarray) and np.may_share_memory(raw, args[0]):
                    return _view(args[0], raw, read=lambda t: func(t, *rest, **kw),
                                 what="np.%s(out, ...)" % func.__name__)
        return func(*[plain(a) for a in args], **{k: plain(v) for k, v in kwargs.items()})

    def __reduce__(self):       # (pickled as the plain array it holds)
        return self.view(np.ndarray).__reduce__()

    @property
    def T(self):
        return self.transpose()

    @property
    def real(self):
        return np.real(self)

    @property
    def imag(self):
        return np.imag(self)

    def __copy__(self):
        """copy.copy(out): a buffer holding what `out` holds now."""
        return _copy(self)

    def __deepcopy__(self, memo):
        return _copy(self)

    def fill(self, value):
        """out.fill(v): recorded as out[...] = v when the buffer holds a Tensor or v is one."""
        _assign(self, Ellipsis, value)


_PURE_AT = {np.add: add_at, np.subtract: subtract_at}


def _at(ufunc, inputs, kwargs):
    """`ufunc.at(a, indices, b)` with a buffer among the operands. Into a
    buffer `a` that holds a Tensor or gets one, op by op: np.add.at and
    np.subtract.at are recorded as the whole buffer assigned the functional
    add_at / subtract_at (rules/helpers/broadcast.py, its rule in
    rules/numpy/indexing.py; into a basic view, into its parent at the
    view's index); another ufunc's raises TypeError naming the element
    assignments to write instead. Otherwise NumPy's, on the values (a
    Tensor `b` into a plain array raises TypeError: tensor.py)."""
    target = inputs[0]
    rest = [plain(v) for v in inputs[1:]]
    if not (isinstance(target, Buffer) and _tracked(target, rest[1:])):
        return ufunc.at(plain(target), unwrap(rest[0]), *rest[1:], **kwargs)
    pure = _PURE_AT.get(ufunc)
    if pure is None or len(rest) != 2 or kwargs:
        _refuse(target, "np.%s.at(a, ...)" % ufunc.__name__,
                "element assignments, one index at a time so that repeated indices compound: for k in "
                "range(len(i)): a[i[k]] = np.%s(a[i[k]], v[k])" % ufunc.__name__)
    held = _held(target)
    indices = unwrap(rest[0])
    _assign(target, Ellipsis, pure(held if held is not None else target.view(np.ndarray), indices, rest[1]))


def _copy(buf):
    raw = buf.view(np.ndarray).copy()
    if not ACTIVE[0]:
        return raw.view(Buffer)
    new = raw.view(Buffer)
    held = _held(buf)
    if held is not None:
        new.__dict__["_tensor"] = held
    return new


def _same(a, b):
    try:
        return type(a) is type(b) and bool(a == b)
    except (TypeError, ValueError):
        return False


def _index_text(index):
    parts = index if type(index) is tuple else (index,)

    def one(i):
        if isinstance(i, slice):
            return "%s:%s%s" % ("" if i.start is None else i.start, "" if i.stop is None else i.stop,
                                "" if i.step is None else ":%s" % i.step)
        return "..." if i is Ellipsis else "None" if i is None else str(i)
    return ", ".join(one(i) for i in parts)


def _copyto(dst, src, casting="same_kind", where=True):
    """np.copyto(dst, src[, where=]) into a buffer: dst[...] = src (np.where(where, src, dst))."""
    if where is not True:
        src = np.where(plain(where), plain(src), plain(dst))
    _assign(dst, Ellipsis, src)


def _unwrap_all(v):
    if isinstance(v, (list, tuple)):
        return type(v)(_unwrap_all(e) for e in v)
    return unwrap(plain(v))


def _delegate(name):
    def method(self, *args, **kwargs):
        held = _live(self)
        target = held if held is not None else self.view(np.ndarray)
        return getattr(target, name)(*[plain(a) for a in args], **{k: plain(v) for k, v in kwargs.items()})
    method.__name__ = name
    method.__doc__ = "ndarray.%s on the buffer's Tensor when it holds one, else on its values." % name
    return method


def _delegate_view(name):
    def method(self, *args, **kwargs):
        args = [plain(a) for a in args]
        kwargs = {k: plain(v) for k, v in kwargs.items()}
        raw = getattr(self.view(np.ndarray), name)(*args, **kwargs)
        if ACTIVE[0] and isinstance(raw, np.ndarray) and np.may_share_memory(raw, self):
            return _view(self, raw, read=lambda t: getattr(t, name)(*args, **kwargs), what="out.%s(...)" % name)
        held = _live(self)
        return getattr(held, name)(*args, **kwargs) if held is not None else raw
    method.__name__ = name
    method.__doc__ = ("ndarray.%s: a view of the buffer reading its current Tensor (writes into it raise), or "
                      "the buffer's Tensor's when NumPy copies." % name)
    return method


def _in_place(name):
    def method(self, *args, **kwargs):
        if _tracked(self, list(args) + list(kwargs.values())):
            _refuse(self, "out.%s(...)" % name, mutation.IN_PLACE_METHODS.get(name, "build a new array"))
        return getattr(np.ndarray, name)(self.view(np.ndarray), *[plain(a) for a in args],
                                          **{k: plain(v) for k, v in kwargs.items()})
    method.__name__ = name
    method.__doc__ = ("ndarray.%s on the buffer's values; TypeError when it holds a Tensor or one is written "
                      "(not followed op by op)." % name)
    return method


for _name in ("copy", "flatten", "astype", "dot", "sum", "mean", "max", "min", "prod", "var", "std", "cumsum",
              "clip", "repeat", "take", "trace", "argmax", "argmin", "tolist", "item", "conj"):
    setattr(Buffer, _name, _delegate(_name))
for _name in ("reshape", "transpose", "ravel", "squeeze", "swapaxes", "diagonal"):
    setattr(Buffer, _name, _delegate_view(_name))
for _name in ("sort", "partition", "put", "resize", "setfield", "byteswap", "itemset"):
    if hasattr(np.ndarray, _name):
        setattr(Buffer, _name, _in_place(_name))

#: NumPy functions returning a view of their first argument (read through a Buffer view)
_VIEW_FUNCTIONS = frozenset(f for f in (
    np.reshape, np.transpose, np.ravel, np.squeeze, np.swapaxes, np.moveaxis, np.expand_dims, np.diagonal,
    np.atleast_1d, np.atleast_2d, np.atleast_3d, np.broadcast_to, np.flip, np.fliplr, np.flipud, np.rot90,
    np.real, np.imag, getattr(np, "matrix_transpose", None), getattr(np, "permute_dims", None)) if f is not None)


def _allocator(name, raw):
    def allocate(*args, **kwargs):
        out = raw(*args, **kwargs)
        if ACTIVE[0] and getattr(_thread, "active", 0) and type(out) in (np.ndarray, Tensor) \
                and out.dtype.kind in "fc" and frame_kind(_caller()) == "user":
            MADE[0] = True
            if type(out) is np.ndarray:
                return out.view(Buffer)
            # np.zeros_like(t), np.full(n, t) of a Tensor (its __array_function__ made a Tensor): a buffer
            # of its values, standing for the Tensor when the fill value is one (its gradient flows)
            buf = np.array(out._value).view(Buffer)
            if name in ("full", "full_like") and _has_tensor(list(args[1:]) + [kwargs.get("fill_value")]):
                buf.__dict__["_tensor"] = out
            return buf
        return out
    allocate.__name__ = name
    allocate.__srcgrad_raw__ = raw
    allocate.__srcgrad_recorded__ = raw         # (what the compiler resolves it to: syntax/anno.py)
    allocate.__wrapped__ = raw
    return allocate


def _caller():
    return sys._getframe(2)


def tensor_copy(t, caller):
    """`t.copy()` of a floating Tensor in the user's code (`caller`, its
    frame) while this thread records: a Buffer of its values standing for
    it (element assignments into it recorded, as np.full(n, t)'s buffer);
    None otherwise (the Tensor itself)."""
    if not (ACTIVE[0] and getattr(_thread, "active", 0)) or t.dtype.kind not in "fc" \
            or frame_kind(caller) != "user":
        return None
    MADE[0] = True
    buf = np.array(t._value).view(Buffer)
    buf.__dict__["_tensor"] = t
    return buf


def enter():
    """op_by_op begins running a function: the user's allocations return
    Buffers (NumPy's allocation functions replaced until the last exit;
    another thread's allocations stay plain arrays)."""
    _thread.active = getattr(_thread, "active", 0) + 1
    with _lock:
        _enter()


def _enter():
    ACTIVE[0] += 1
    if ACTIVE[0] == 1:
        # (a tape is entered per training step: the wrappers are made once, installed in one update;
        # made again only when numpy's functions are others than when they were made)
        namespace = vars(np)
        raws = tuple(map(namespace.__getitem__, ALLOCATORS))
        if raws != _installed[0]:
            wrappers = {}
            for name, raw in zip(ALLOCATORS, raws):
                wrapper = _wrappers.get(name)
                if wrapper is None or wrapper.__srcgrad_raw__ is not raw:
                    wrapper = _wrappers[name] = _allocator(name, raw)
                wrappers[name] = wrapper
            _installed[:] = [raws, dict(zip(ALLOCATORS, raws)), wrappers]
        _raw.update(_installed[1])
        namespace.update(_installed[2])


def exit():
    """op_by_op finished: NumPy's functions back (at the last exit). The
    views still alive read their parent's Tensor now, while the tape
    records (a view returned as the target of tape.gradient)."""
    for ref in list(_views.values()) if _views else ():
        view = ref()
        try:
            if view is not None:
                _held(view)
        except TypeError:       # (a view not followed: it raises where it is read)
            pass
    _thread.active = getattr(_thread, "active", 1) - 1
    with _lock:
        ACTIVE[0] -= 1
        if ACTIVE[0] == 0:
            _views.clear()
            vars(np).update(_raw)
            _raw.clear()
