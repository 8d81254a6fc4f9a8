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
(np.zeros, np.ones, np.empty and their _like forms) return a `Buffer`: an
ndarray whose element assignment of a Tensor records a functional setitem
(`containers.array_setitem`, the compiled path's rule) and keeps the
resulting Tensor, which every later read of the buffer uses (NumPy calls,
operators, indexing, methods, returning it). The raw values are written
too, so the array holds what the plain call computes.

What a Buffer cannot follow raises instead of cutting the path: an in-place
update of a row read from it (`out[i] += t` with `out[i]` a view), handled
by NumPy before srcgrad sees it, is TypeError from the Tensor ("out=").
"""
import sys

import numpy as np

from ..rules.python.containers import array_setitem
from ..tensor import Tensor, frame_kind, unwrap
from . import nested

ALLOCATORS = ("zeros", "ones", "empty", "zeros_like", "ones_like", "empty_like")
ACTIVE = [0]        # >0 while a tape or accumulator records (enter/exit)
MADE = [False]      # has any Buffer been made? (the tape's per-op check is skipped until one is)
_raw = {}           # name -> NumPy's function (while installed)
_wrappers = {}      # name -> its allocator wrapper (made once per NumPy function)


def _live(buf):
    """The Tensor a buffer holds, while op by op runs; None otherwise (after
    it, the raw values are right and plain NumPy reads them)."""
    return buf.__dict__.get("_tensor") if ACTIVE[0] else None


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
        t = v.__dict__.get("_tensor") if held else _live(v)
        return t if t is not None else v
    if isinstance(v, (list, tuple)) and any(isinstance(e, (Buffer, list, tuple)) for e in v):
        return type(v)(resolve(e, held) for e in v)
    if isinstance(v, dict) and any(isinstance(e, Buffer) for e in v.values()):
        return {k: resolve(e, held) for k, e in v.items()}
    return v


class Buffer(np.ndarray):
    """An array the user's code allocated while srcgrad runs it op by op
    (see the module's docstring). Behaves as its values; once a Tensor is
    written into it, as that Tensor."""

    def __setitem__(self, index, value):
        index = unwrap(index)
        held = _live(self)
        has_tensor = any(isinstance(e, Tensor) for e in nested.flatten(value)) if isinstance(
            value, (Tensor, list, tuple)) else False
        if ACTIVE[0] and (has_tensor or held is not None):
            base = held if held is not None else Tensor(self.view(np.ndarray).copy())
            self.__dict__["_tensor"] = array_setitem(base, index, plain(value))
        np.ndarray.__setitem__(self.view(np.ndarray), index, unwrap(_unwrap_all(value)))

    def __getitem__(self, index):
        held = _live(self)
        if held is not None:
            return held[unwrap(index)]
        return self.view(np.ndarray)[index]

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        inputs = [plain(i) for i in inputs]
        if out is None:
            return getattr(ufunc, method)(*inputs, **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        if len(outs) == 1 and isinstance(outs[0], Buffer):     # y += t, np.exp(x, out=y) into a buffer
            result = getattr(ufunc, method)(*inputs, **kwargs)
            target = outs[0]
            if isinstance(result, Tensor) and ACTIVE[0]:
                target.__dict__["_tensor"] = result if result.shape == target.shape else \
                    np.broadcast_to(result, target.shape) * 1.0
            np.copyto(target.view(np.ndarray), unwrap(result), casting="unsafe")
            return target
        return getattr(ufunc, method)(*inputs, out=tuple(plain(o) for o in outs), **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return func(*[plain(a) for a in args], **{k: plain(v) for k, v in kwargs.items()})

    def __reduce__(self):       # (pickled as the plain array it holds)
        return self.view(np.ndarray).__reduce__()

    @property
    def T(self):
        held = _live(self)
        return held.T if held is not None else self.view(np.ndarray).T


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


for _name in ("reshape", "transpose", "copy", "flatten", "ravel", "astype", "dot", "squeeze", "swapaxes",
              "sum", "mean", "max", "min", "prod", "var", "std", "cumsum", "clip", "repeat", "take",
              "diagonal", "trace", "argmax", "argmin", "tolist", "item", "conj"):
    setattr(Buffer, _name, _delegate(_name))


def _allocator(name, raw):
    def allocate(*args, **kwargs):
        out = raw(*args, **kwargs)
        if ACTIVE[0] and type(out) is np.ndarray and out.dtype.kind in "fc" and \
                frame_kind(_caller()) == "user":
            MADE[0] = True
            return out.view(Buffer)
        return out
    allocate.__name__ = name
    allocate.__srcgrad_raw__ = raw
    allocate.__srcgrad_recorded__ = raw         # (what the compiler resolves it to: syntax/anno.py)
    allocate.__wrapped__ = raw
    return allocate


def _caller():
    return sys._getframe(2)


def enter():
    """op_by_op begins running a function: the user's allocations return
    Buffers (NumPy's allocation functions replaced until the last exit)."""
    ACTIVE[0] += 1
    if ACTIVE[0] == 1:
        # (a tape is entered per training step: the wrappers are made once, installed in one update)
        namespace = vars(np)
        wrappers = {}
        for name in ALLOCATORS:
            raw = _raw[name] = namespace[name]
            wrapper = _wrappers.get(name)
            if wrapper is None or wrapper.__srcgrad_raw__ is not raw:
                wrapper = _wrappers[name] = _allocator(name, raw)
            wrappers[name] = wrapper
        namespace.update(wrappers)


def exit():
    """op_by_op finished: NumPy's functions back (at the last exit)."""
    ACTIVE[0] -= 1
    if ACTIVE[0] == 0:
        vars(np).update(_raw)
        _raw.clear()
