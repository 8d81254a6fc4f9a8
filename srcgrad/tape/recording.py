"""The op-by-op path: the thread-local stack of active tapes and
accumulators, and the recording of a primitive applied to Tensors.

`apply` is installed in srcgrad.tensor (`install_recorder`) because the
Tensor type sits below the tape: Tensor's NumPy dispatch calls it for every
operation on Tensors, and it records one OpEntry on each recording tape that
watches an input. The path check (`install_path_check`) is installed the
same way: a Tensor converted to an ndarray inside a recording tape warns
(GradientPathWarning) only when a tape could have recorded it.
"""
import contextlib
import enum
import threading

import numpy as np

from .. import tensor as tensor_mod
from ..errors import NoRuleError
from ..rules import mutation, registry
from ..tensor import Tensor, Variable, is_differentiable_dtype, unwrap, wrap
from . import buffers
from .entries import DeferredEntry, OpEntry

_local = threading.local()


def _stack():
    stack = getattr(_local, "tapes", None)
    if stack is None:
        stack = _local.tapes = []
    return stack


def recording_tapes():
    """The tapes of this thread that are currently recording."""
    stack = getattr(_local, "tapes", None)
    if not stack:
        return ()
    return [t for t in stack if t._recording]


class UnconnectedGradients(enum.Enum):
    """What `gradient` returns for a source the target does not depend on."""
    NONE = "none"
    ZERO = "zero"


def _unconnected(value):
    if isinstance(value, UnconnectedGradients):
        return value
    try:
        return UnconnectedGradients(value)
    except ValueError:
        raise ValueError("Unknown value for unconnected_gradients: %r" % (value,)) from None


_observers = []


def add_op_observer(observer):
    """Register `observer(func, args, kwargs, out) -> out`, called after every
    operation on Tensors while a tape or accumulator is active (forward
    mode's ForwardAccumulator computes tangents this way)."""
    _observers.append(observer)


def _differentiable_result(result):
    """True for a floating/complex array, or a tuple/list of arrays with one."""
    if isinstance(result, (np.ndarray, np.generic)):
        return is_differentiable_dtype(np.result_type(result))
    if isinstance(result, (tuple, list)) and result:
        return all(isinstance(r, (np.ndarray, np.generic)) for r in result) and any(
            is_differentiable_dtype(np.result_type(r)) for r in result)
    return False


def _floating_array(r):
    return isinstance(r, (np.ndarray, np.generic)) and is_differentiable_dtype(np.result_type(r))


def _mixed_result(result):
    """A tuple/list holding a floating array beside values that are not
    arrays (scipy.linalg.cho_factor's (c, lower)), or a dict holding one
    (scipy.integrate.solve_ivp's OdeResult): the tape and the accumulators
    follow arrays and tuples/lists of arrays only, so the floating one
    would leave them."""
    if isinstance(result, dict):
        return any(_floating_array(r) for r in result.values())
    return isinstance(result, (tuple, list)) and not _differentiable_result(result) and any(
        _floating_array(r) for r in result)


def _holds_objects(result):
    """Is `result` (or an element of a tuple/list result) an array of
    Python objects, which carries no derivative?"""
    if isinstance(result, np.ndarray):
        return result.dtype == object
    return isinstance(result, (tuple, list)) and any(isinstance(r, np.ndarray) and r.dtype == object
                                                     for r in result)


def _tensors_in(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif type(v) in (list, tuple):
            yield from _tensors_in(v)


def _has_tangent(recorders, inputs):
    """Does a recording ForwardAccumulator among `recorders` have a tangent
    for one of the Tensors `inputs`? (An accumulator records no entries, so
    it is never among the tapes `_should_record` selects.)"""
    for r in recorders:
        tangents = getattr(r, "_tangents", None)
        if tangents and any(t._id in tangents for t in inputs):
            return True
    return False


def _observe(func, args, kwargs, out):
    for observer in _observers:
        out = observer(func, args, kwargs, out)
    return out


def apply(func, args, kwargs):
    """Run `func(*args, **kwargs)` on raw values; record it on every
    recording tape that watches one of its Tensor inputs (one OpEntry,
    shared). Installed as srcgrad.tensor's recorder.

    Returns Tensors in place of arrays. Raises NoRuleError when a watched
    input reaches a function with no adjoint rule.
    """
    raw_func = getattr(func, "__srcgrad_raw__", func)
    if buffers.MADE[0]:         # (an array filled with Tensors stands for its Tensor: buffers.py)
        args = [buffers.plain(a) for a in args]
        kwargs = {k: buffers.plain(v) for k, v in kwargs.items()}
    result = raw_func(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()})
    stack = getattr(_local, "tapes", None)
    if not stack:
        return wrap(result)
    tapes = [t for t in stack if t._recording]
    inputs = list(_tensors_in(list(args) + list(kwargs.values())))
    watching = [t for t in tapes if t._should_record(inputs)]
    # the paths cut below lose a tape's gradient and an accumulator's tangent alike
    followed = bool(watching) or _has_tangent(tapes, inputs)
    if followed and mutation.writes_into(func, len(args), list(kwargs)) is not None:
        # np.copyto(buf, t), np.sin(t, out=buf): a plain array written from a watched Tensor
        tensor_mod.warn_path_cut(inputs[0], action="written into a NumPy array by %s"
                                 % getattr(func, "__name__", func), through_srcgrad=True)
    if followed and _mixed_result(result) and not registry.is_nondiff(func):
        tensor_mod.warn_path_cut(inputs[0], action="passed to %s, whose result mixes arrays with other values "
                                 "(the tape records arrays only)" % getattr(func, "__name__", func),
                                 through_srcgrad=True)
    if followed and _holds_objects(result) and not registry.is_nondiff(func):
        # (v.astype(object), np.array([a, b], dtype=object), np.frompyfunc: Python objects, no derivative)
        tensor_mod.warn_path_cut(inputs[0], action="turned into an array of Python objects by %s"
                                 % getattr(func, "__name__", func), through_srcgrad=True)
    if not watching or registry.is_nondiff(func) or not _differentiable_result(result):
        return _observe(func, args, kwargs, wrap(result))
    rule = registry.adjoint_rule(func)
    if rule is None:
        if not in_custom_body():
            found = tensor_mod.user_frame(1, through_srcgrad=True)
            raise NoRuleError(func, *((found[0].f_code.co_filename, found[0].f_lineno) if found else ()),
                              path="tape")
        out = wrap(result)      # inside a custom_gradient body: fails only if differentiated
        entry = DeferredEntry(func, inputs, out)
        for t in watching:
            t._record(entry)
        return _observe(func, args, kwargs, out)
    out = wrap(result)
    entry = OpEntry(rule, args, kwargs, out)
    if entry.input_ids:
        for t in watching:
            t._record(entry)
    return _observe(func, args, kwargs, out)


tensor_mod.install_recorder(apply)


@contextlib.contextmanager
def custom_body():
    """The body of an `sg.custom_gradient` function runs inside this: its
    operations are recorded (so that its grad_fn, which closes over them,
    can be differentiated again), but an operation with no rule is
    recorded as a DeferredEntry (NoRuleError only when a higher-order
    derivative needs it), and its conversions to ndarrays warn only when
    two recorders track the value (a higher derivative is being taken)."""
    _local.custom_body = getattr(_local, "custom_body", 0) + 1
    try:
        yield
    finally:
        _local.custom_body -= 1


def in_custom_body():
    return getattr(_local, "custom_body", 0) > 0


def _path_check(tensor):
    """Does a recording tape track `tensor` (watched, computed from a
    watched value, or a trainable Variable it watches when read), or a
    recording ForwardAccumulator have a tangent for it? Then its conversion to an ndarray cuts a gradient path
    (tensor.GradientPathWarning)."""
    stack = getattr(_local, "tapes", None)
    if not stack:
        return False
    i = tensor._id
    accessed = isinstance(tensor, Variable) and tensor._trainable     # watched when read
    needed = 2 if in_custom_body() else 1       # in a custom_gradient body only higher orders see the cut
    for t in stack:
        if t._recording and (i in getattr(t, "_tracked", ()) or i in getattr(t, "_tangents", ())
                             or (accessed and getattr(t, "_watch_accessed_variables", False))):
            needed -= 1
            if not needed:
                return True
    return False


tensor_mod.install_path_check(_path_check)
tensor_mod.install_copier(buffers.tensor_copy)
