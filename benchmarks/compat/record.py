"""Recording the calls of gradient functions, in autograd's run and in
srcgrad's, so that the harness can compare the gradients at the same points.

A call is recorded when it is made by the program itself (not from inside
another recorded call: autograd's `grad(grad(f))` calls `grad(f)` on
boxes, srcgrad compiles it). Each record holds a copy of the arguments
(taken before the call: programs update their parameters in place) and of
the result, and a label `kind:function name:argnum` that is the same in
both runs (`grad:objective:0`). The two runs are paired call by call: the
k-th call with a label in one run against the k-th with that label in the
other.
"""
import functools
import numbers
import time
import types

import numpy as np


class StopProgram(BaseException):
    """Raised after the last recorded call an example needs (its `max_calls`)."""


class Recorder:
    def __init__(self, keep_per_label=3, max_calls=None):
        self.keep = keep_per_label
        self.max_calls = max_calls
        self.depth = 0
        self.counts = {}
        self.records = []
        self.total = 0
        self.first_call_time = None

    def call(self, label, fn, args, kwargs):
        if self.depth:
            return fn(*args, **kwargs)
        index = self.counts.get(label, 0)
        self.counts[label] = index + 1
        self.total += 1
        keep = index < self.keep
        record = None
        if keep:
            record = {"label": label, "index": index, "seq": self.total - 1,
                      "args": snapshot(args), "kwargs": snapshot(kwargs)}
            self.records.append(record)
        self.depth += 1
        start = time.perf_counter()
        if self.first_call_time is None:
            self.first_call_time = time.time()
        try:
            result = fn(*args, **kwargs)
        except BaseException as e:
            if record is not None:
                record["error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
            raise
        finally:
            self.depth -= 1
        if record is not None:
            record["result"] = snapshot(result)
            record["seconds"] = time.perf_counter() - start
        if self.max_calls is not None and self.total >= self.max_calls:
            raise StopProgram("stopped after %d gradient calls" % self.total)
        return result

    def wrap(self, label, fn):
        recorder = self

        def recorded(*args, **kwargs):
            return recorder.call(label, fn, args, kwargs)
        recorded.__name__ = getattr(fn, "__name__", "recorded")
        recorded.__wrapped__ = fn
        recorded._compat_name = label
        inner = getattr(fn, "__srcgrad_function__", None)
        if inner is not None:           # srcgrad compiles through the wrapper, as through fn
            recorded.__srcgrad_function__ = inner
        return recorded


def transform_label(kind, name, argnum=0):
    """`grad(objective)`, `value_and_grad(f, argnum=(0, 1))`: the same text in
    both runs for the same transform of the same function."""
    if isinstance(argnum, (tuple, list)):
        argnum = tuple(argnum)
        if len(argnum) == 1:
            argnum = argnum[0]
    return "%s(%s)" % (kind, name) if argnum == 0 else "%s(%s, argnum=%s)" % (kind, name, argnum)


def gradient_kind(g):
    """The autograd name of what an srcgrad Gradient computes."""
    if g.has_aux and not g.preserve_result:
        return "grad_and_aux"
    return "value_and_grad" if g.preserve_result else "grad"


def canonical_name(f, depth=0):
    """A function's name for labels: its __name__, or for what a transform
    returned, the transform's label (`grad(grad(fun))`), in either run."""
    name = getattr(f, "_compat_name", None)
    if name:
        return name
    if depth > 10:
        return "?"
    try:
        from srcgrad.functional import GradFunction, Gradient
        from srcgrad.op_by_op import OpByOpGradient
    except ImportError:        # (the autograd run need not import srcgrad)
        Gradient = GradFunction = OpByOpGradient = ()
    if Gradient and isinstance(f, (Gradient, OpByOpGradient)):
        inner = f.fn if isinstance(f, Gradient) else f.f
        return transform_label(gradient_kind(f), canonical_name(inner, depth + 1), f.wrt)
    wrapped = getattr(f, "fun", None)       # an autograd primitive (f_wrapped) of a NumPy function
    if getattr(getattr(f, "__code__", None), "co_name", None) == "f_wrapped" and wrapped is not None:
        return canonical_name(wrapped, depth + 1)
    if GradFunction and isinstance(f, GradFunction):
        return canonical_name(f.gradient, depth + 1)
    owner = getattr(f, "__self__", None)
    if Gradient and isinstance(owner, Gradient):
        return canonical_name(owner, depth + 1)
    python_function = getattr(f, "python_function", None)
    if python_function is not None and python_function is not f:
        return canonical_name(python_function, depth + 1)
    code = getattr(f, "__code__", None)
    if code is not None:        # (srcgrad renames a lambda after the variable it is assigned to)
        return code.co_name
    return getattr(f, "__name__", None) or type(f).__name__


def root_function(f, depth=0):
    """The user function at the bottom of nested transforms (srcgrad objects)."""
    if depth > 10:
        return f
    for attr in ("gradient", "fn", "python_function", "__self__", "__wrapped__"):
        inner = getattr(f, attr, None)
        if inner is not None and inner is not f and not isinstance(inner, type):
            return root_function(inner, depth + 1)
    return f


def snapshot(x, depth=0):
    """A copy of x made of numbers, ndarrays, and lists/tuples/dicts of them;
    other objects as a placeholder naming their type."""
    if depth > 20:
        return ("<deep>",)
    if isinstance(x, dict):
        return {k: snapshot(v, depth + 1) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(snapshot(v, depth + 1) for v in x) if type(x) in (list, tuple) else \
            tuple(snapshot(v, depth + 1) for v in x)
    if isinstance(x, (bool, str, type(None))):
        return x
    if isinstance(x, numbers.Number):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        return np.array(x, copy=True)
    to_numpy = getattr(x, "numpy", None)       # a srcgrad Tensor
    if callable(to_numpy):
        try:
            return np.array(to_numpy(), copy=True)
        except Exception:
            pass
    value = getattr(x, "_value", None)         # an autograd box (should not reach depth 0)
    if value is not None and type(x).__module__.startswith("autograd"):
        return snapshot(value, depth + 1)
    fields = getattr(x, "__dict__", None)
    if isinstance(fields, dict) and not isinstance(x, (types.FunctionType, types.MethodType, type,
                                                        types.ModuleType, functools.partial)):
        # an object of the program's own type (a gradient in a user's vector space, rkhs.py): its
        # fields, compared as a dict
        return {"<object %s>" % type(x).__name__: {k: snapshot(v, depth + 1) for k, v in sorted(fields.items())
                                                   if not k.startswith("__")}}
    return ("<object>", type(x).__name__)


def compare(a, b, rtol, path="value", atol=0.0):
    """None when a and b agree (same structure; numbers within atol + rtol
    times the larger magnitude, per leaf), else a short description of the
    first difference."""
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)) or set(a) != set(b):
            return "%s: structure differs (%s vs %s)" % (path, _kind(a), _kind(b))
        for k in a:
            d = compare(a[k], b[k], rtol, "%s[%r]" % (path, k), atol)
            if d:
                return d
        return None
    if isinstance(a, (list, tuple)) and not _is_placeholder(a) or isinstance(b, (list, tuple)) and \
            not _is_placeholder(b):
        if not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))) or len(a) != len(b):
            return "%s: structure differs (%s vs %s)" % (path, _kind(a), _kind(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = compare(x, y, rtol, "%s[%d]" % (path, i), atol)
            if d:
                return d
        return None
    if _is_placeholder(a) or _is_placeholder(b) or isinstance(a, str) or isinstance(b, str) or a is None or \
            b is None:
        return None if a == b else "%s: %r vs %r" % (path, a, b)
    x, y = np.asarray(a), np.asarray(b)
    if x.shape != y.shape:
        return "%s: shape %s vs %s" % (path, x.shape, y.shape)
    if x.dtype.kind not in "fcib" or y.dtype.kind not in "fcib":
        return None if np.array_equal(x, y) else "%s: differs" % path
    x = x.astype(np.complex128 if "c" in (x.dtype.kind + y.dtype.kind) else np.float64)
    y = y.astype(x.dtype)
    bad_x, bad_y = ~np.isfinite(x), ~np.isfinite(y)
    if np.any(bad_x != bad_y) or np.any(x[bad_x] != y[bad_y]) and not np.all(np.isnan(x[bad_x]) & np.isnan(y[bad_y])):
        return "%s: non-finite values differ" % path
    x, y = x[~bad_x], y[~bad_y]
    if x.size == 0:
        return None
    scale = max(np.max(np.abs(y)), np.max(np.abs(x)))
    err = np.max(np.abs(x - y))
    if err <= atol + rtol * scale or scale == 0:
        return None
    return "%s: max abs difference %.3g, relative to max |value| %.3g (rtol %g%s)" % (
        path, err, err / scale, rtol, ", atol %g" % atol if atol else "")


def relative_error(a, b):
    """max |a - b| / max(|a|, |b|) over all numeric leaves (nan if structures differ)."""
    la, lb = _leaves(a), _leaves(b)
    if len(la) != len(lb):
        return float("nan")
    err, scale = 0.0, 0.0
    for x, y in zip(la, lb):
        try:
            x, y = np.asarray(x, dtype=complex), np.asarray(y, dtype=complex)
        except (TypeError, ValueError):
            continue
        if x.shape != y.shape:
            return float("nan")
        m = np.isfinite(x) & np.isfinite(y)
        if m.any():
            err = max(err, float(np.max(np.abs(x[m] - y[m]))))
            scale = max(scale, float(np.max(np.abs(x[m]))), float(np.max(np.abs(y[m]))))
    return err / scale if scale else 0.0


def _leaves(x):
    if isinstance(x, dict):
        return [v for k in sorted(x, key=repr) for v in _leaves(x[k])]
    if isinstance(x, (list, tuple)) and not _is_placeholder(x):
        return [v for e in x for v in _leaves(e)]
    if _is_placeholder(x) or isinstance(x, str) or x is None:
        return []
    return [x]


def _is_placeholder(x):
    return type(x) is tuple and len(x) in (1, 2) and isinstance(x[0], str) and x[0].startswith("<")


def _kind(x):
    if isinstance(x, dict):
        return "dict of %d" % len(x)
    if isinstance(x, (list, tuple)):
        return "%s of %d" % (type(x).__name__, len(x))
    return type(x).__name__
