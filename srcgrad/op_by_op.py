"""The op-by-op fallback: what the compiler cannot see statically runs on the tape.

A function the compiler refuses at transform time (a closure made at run
time and called, a generator, `map`/`functools.partial`, an attribute
written on `self`, source it cannot read: `UnsupportedSyntaxError` with
`op_by_op`, `ResolutionError`, `SourceNotFoundError`) is differentiated as
autograd and PyTorch differentiate everything: its Python body runs once,
on Tensors, and every NumPy operation is recorded on a tape (the same rule
registry as compiled code), whose reverse sweep gives the gradient. The
refusal becomes a `PerformanceWarning` naming the function, the user's
line and the reason; the derivative is the same, slower. With
`warnings.simplefilter("error", sg.PerformanceWarning)` the refusal itself
is raised instead (compiled code or nothing).

Only refusals found before any user code runs fall back (the compile step),
so user code still runs exactly once per derivative. What the tape could not
do right either (NumPy writing into an array: `out=`, views, aliases) stays
an error (`UnsupportedSyntaxError.op_by_op` False).

Every function here takes the user's callable `f` and its arguments; under
an outer recording tape (a higher derivative), the inner tape's gradient is
itself recorded (nested tapes), so the fallback composes at every order.
"""
import collections
import contextlib
import functools
import warnings

import numpy as np

from .errors import (GradientPathError, NoRuleError, PerformanceWarning, ResolutionError, SourceNotFoundError,
                     UnsupportedSyntaxError, api_boundary)
from .forward_mode import ForwardAccumulator
from . import tensor as tensor_mod
from .runtime import arrays
from .tape import GradientTape, buffers, recording_tapes, scipy_calls
from .tensor import GradientPathWarning, Tensor, Variable, id_mark, is_differentiable_dtype, user_frame


def falls_back(exc):
    """May the function whose compilation raised `exc` run op by op? A
    refusal the tape can do right; a source it cannot read; and a callable
    of the standard library without a rule (functools.partial, map, filter,
    itertools: they only hold or pass on the Tensors, which the tape
    records) -- not a NumPy or SciPy function without a rule, which the tape
    cannot differentiate either."""
    if isinstance(exc, (UnsupportedSyntaxError, ResolutionError)):
        return getattr(exc, "op_by_op", True)
    if isinstance(exc, NoRuleError) and getattr(exc.function, "__srcgrad_transform__", None) is not None:
        return True     # what sg.jacobian returned: op by op, it computes on the Tensors with a tape
    if isinstance(exc, NoRuleError) and exc.path == "compiled" and not isinstance(exc.function, str):
        module = getattr(exc.function, "__module__", None) or getattr(type(exc.function), "__module__", "")
        top = (module or "").partition(".")[0].lstrip("_")
        return top in ("functools", "itertools", "builtins", "operator", "collections")
    return isinstance(exc, SourceNotFoundError)


def warn(f, exc, stacklevel=3):
    """The PerformanceWarning of a fallback: the function, the reason (the
    refusal's first line) and where (the user's file and line)."""
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
    lines = str(exc).splitlines()
    reason = lines[0] if lines else type(exc).__name__
    at = next((ln.strip() for ln in lines[1:] if ln.strip().startswith("at ")), "")
    message = PerformanceWarning(
        "srcgrad differentiates %s op by op on the tape (not compiled): %s%s" % (name, reason, " " + at if at else ""))
    found = user_frame(1, through_srcgrad=True)
    try:
        if found is None:
            warnings.warn(message, stacklevel=stacklevel)
            return
        frame = found[0]
        warnings.warn_explicit(message, PerformanceWarning, frame.f_code.co_filename, frame.f_lineno,
                               module=frame.f_globals.get("__name__"), registry=frame.f_globals.setdefault(
                                   "__warningregistry__", {}))
    except PerformanceWarning:
        # `warnings.simplefilter("error", sg.PerformanceWarning)`: compiled code or the refusal itself
        raise exc from None


def _watch(tape, value):
    """`value` as what the tape watches: a Tensor (a float array or
    number), or a list/tuple/dict of them. Returns (watched, leaves)."""
    if isinstance(value, Tensor):
        # a recorded copy (outer tapes and accumulators see through it): the same Tensor at two
        # places, sg.grad(f)((x, x)), is two independent arguments, as in JAX and autograd
        value = np.positive(value)
        tape.watch(value)
        return value, [value]
    if isinstance(value, (list, tuple)):
        parts = [_watch(tape, v) for v in value]
        return type(value)(p for p, _ in parts), [leaf for _, ls in parts for leaf in ls]
    if isinstance(value, dict):
        parts = {k: _watch(tape, v) for k, v in value.items()}
        return {k: p for k, (p, _) in parts.items()}, [leaf for _, ls in parts.values() for leaf in ls]
    arr = np.asarray(value)
    if not is_differentiable_dtype(arr.dtype):
        arr = arr.astype(np.float64)
    t = Tensor(arr)
    tape.watch(t)
    return t, [t]


def _result(g, source, on_tape):
    """A gradient as grad returns it: ndarrays of the argument's dtype off
    the tape (zeros where unconnected), Tensors under an outer tape; a list,
    tuple or dict of them for a container argument."""
    if isinstance(source, (list, tuple)):
        g = g if g is not None else [None] * len(source)
        return type(source)(_result(gi, si, on_tape) for gi, si in zip(g, source))
    if isinstance(source, dict):
        g = g if g is not None else {}
        return {k: _result(g.get(k), source[k], on_tape) for k in source}
    if on_tape:
        return g if g is not None else Tensor(np.zeros_like(source.numpy()))
    value = np.zeros_like(source.numpy()) if g is None else np.asarray(g.numpy())
    dtype = np.asarray(source.numpy()).dtype
    return value.astype(dtype, copy=False) if value.dtype != dtype else value


@contextlib.contextmanager
def _scipy_recorded(f):
    """While f runs on the tape: SciPy functions with rules that f's module,
    or a module f calls into, imported by name are recorded
    (tape/scipy_calls.py); a value being differentiated that leaves the
    tape (GradientPathWarning: `Y[i] = t` into an ndarray) raises
    GradientPathError, since the derivative returned would miss that path."""
    namespace = getattr(getattr(f, "__func__", f), "__globals__", None)
    scipy_calls.enter(namespace)
    # (fun = mvn.logpdf held by a closure: f's, or a module-level wrapper's)
    scipy_calls.replace_cells(getattr(f, "__func__", f))
    scipy_calls.replace_module_closures(namespace)
    buffers.enter()         # (np.zeros(n) filled with Tensors: out[i] = t is recorded, tape/buffers.py)
    tensor_mod.STRICT[0] += 1     # (float(t) of a differentiated Tensor: an error here, tensor.py)
    try:
        with scipy_calls.everywhere(), warnings.catch_warnings():      # (and every module f calls into)
            warnings.simplefilter("error", GradientPathWarning)
            try:
                yield
            except Exception as exc:
                cut = _path_cut_in(exc)     # (NumPy turns the warning raised in t.__float__ into a ValueError)
                if cut is None:
                    raise
                name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
                raise GradientPathError(
                    "srcgrad differentiates %s op by op on the tape (the compiler refused it), and %s "
                    "The derivative would miss this path, so srcgrad stops: build the array from the values "
                    "(np.stack, np.array([...]), np.where) instead of writing them into a NumPy array, or "
                    "register a rule for the function that converts them."
                    % (name, str(cut).replace("srcgrad: ", "", 1).split(" What is computed")[0])) from None
    finally:
        tensor_mod.STRICT[0] -= 1
        buffers.exit()
        scipy_calls.exit()


def _roots(f, args, kwargs):
    """What f's run may have stored Tensors into: its arguments, the object
    of a bound method, its closure cells, and every value of its module's
    globals (dicts, lists, objects, callable objects and classes:
    `bn_param["running_mean"] = ...`, `self.cache = X`, `Model.registry`);
    `_detach` skips what cannot hold them (modules, functions, NumPy)."""
    func = getattr(f, "__func__", f)
    out = list(args) + list(kwargs.values())
    if getattr(f, "__self__", None) is not None:
        out.append(f.__self__)
    if not isinstance(f, _FUNCTION_TYPES):
        out.append(f)       # (a callable object: its attributes and its class's)
    out.extend(c.cell_contents for c in (getattr(func, "__closure__", None) or ()) if _filled(c))
    out.extend(list((getattr(func, "__globals__", None) or {}).values()))
    return out


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


_MODULE = type(contextlib)
_FUNCTION_TYPES = (type(_filled), type(len), type(np.add), functools.partial, staticmethod, classmethod, property)
#: objects and classes of these packages are never searched (their state holds no Tensor of the user's run)
_INTERNAL = frozenset(("numpy", "scipy", "srcgrad", "builtins", "abc", "typing", "enum", "functools",
                       "contextlib", "warnings", "logging", "threading", "io", "_io", "re", "inspect", "ast",
                       "importlib", "collections", "weakref", "_weakrefset", "types", "pytest", "_pytest",
                       "pluggy", "unittest", "IPython", "ipykernel", "traitlets", "matplotlib", "pandas", "torch",
                       "jax", "jaxlib", "autograd", "sympy", "dask", "numba"))
#: at most this many values are looked at (lists of numbers count one each): a bound on _detach's time
DETACH_LIMIT = 200000


def _internal(obj):
    """Is `obj` (a class, or an object of a class) NumPy's, srcgrad's, the
    standard library's or another package's whose state _detach skips?"""
    cls = obj if isinstance(obj, type) else type(obj)
    module = getattr(cls, "__module__", None)
    return not isinstance(module, str) or module.partition(".")[0] in _INTERNAL


def _own(values, out=None):
    """The ids of the containers in `values` (op_by_op's own watched
    arguments, which f may have stored somewhere: never detached)."""
    out = set() if out is None else out
    for v in values:
        if isinstance(v, (list, tuple, dict)) and id(v) not in out:
            out.add(id(v))
            _own(v.values() if isinstance(v, dict) else v, out)
    return out


def _detach(roots, mark, seen=None, limit=None):
    """Replace the Tensors that f's run made (numbered after `mark`, not
    Variables) and stored into the user's state by their ndarrays: after
    the derivative, the program's state is what the plain call leaves (a
    running mean is an array, not a Tensor of a finished tape). Searched,
    breadth first and to any depth (`seen`: ids visited, against cycles),
    from `roots`: dicts, lists, deques, tuples, object arrays, objects'
    attributes (`__dict__` and `__slots__`, callable objects too), their
    classes' attributes and classes themselves; not modules, functions or
    the objects of NumPy, srcgrad and the packages in _INTERNAL. At most
    `limit` values (DETACH_LIMIT) are looked at. Returns how many were."""
    seen = set() if seen is None else seen
    limit = DETACH_LIMIT if limit is None else limit
    queue = collections.deque(r for r in roots if _searched(r))
    looked = 0
    while queue and looked < limit:
        root = queue.popleft()
        if id(root) in seen:
            continue
        seen.add(id(root))
        if type(root) is list or type(root) is dict:
            items, store = (root.items() if type(root) is dict else enumerate(root)), root.__setitem__
            items = [(k, v) for k, v in items if type(v) not in _ATOMS]     # (the fast path: numbers)
            looked += len(root)
        else:
            items, store = _slots(root)
            looked += len(items)
        for k, v in items:
            if isinstance(v, Tensor):
                new = _detached(v, mark)
                if new is not v:
                    _store(store, k, new)
            elif isinstance(v, tuple):
                new = _detached(v, mark)
                if new is not v:
                    _store(store, k, new)
                queue.extend(e for e in v if _searched(e))
            elif _searched(v):
                queue.append(v)
    return looked


def _store(store, k, new):
    try:
        store(k, new)
    except (AttributeError, TypeError, ValueError):
        pass


def _searched(v):
    """May `v` hold (through its items or attributes) a Tensor the user
    stored? Containers, objects of the user's classes and the classes."""
    if isinstance(v, (dict, list, tuple, collections.deque)):
        return True
    if isinstance(v, np.ndarray):
        return v.dtype == object
    if isinstance(v, (Tensor, _MODULE, _FUNCTION_TYPES, str, bytes, int, float, complex, type(None))):
        return False
    if isinstance(v, _METHOD):
        return True     # a bound method: its object
    return not _internal(v)


def _slots(root):
    """(items, store) of `root`: the (key, value) of each place that may
    hold a value (items of a dict/list/deque/tuple/object array, attributes
    of an object or class, the object's classes (searched as values
    themselves), a bound method's object), and `store(key, new)`, which
    puts a new value there (refused for what is not a place)."""
    if isinstance(root, dict):
        return list(root.items()), root.__setitem__
    if isinstance(root, (list, collections.deque)):
        return list(enumerate(root)), root.__setitem__
    if isinstance(root, tuple):
        return list(enumerate(root)), _immutable
    if isinstance(root, np.ndarray):
        return (list(enumerate(root.flat)) if root.dtype == object else []), root.flat.__setitem__
    if isinstance(root, _METHOD):
        return [(None, root.__self__)], _immutable
    if isinstance(root, type):
        return [(k, v) for k, v in list(vars(root).items()) if not k.startswith("__")], \
            functools.partial(_set_attribute, root)
    out = []
    d = getattr(root, "__dict__", None)
    if isinstance(d, dict):
        out.extend(d.items())
    for cls in type(root).__mro__:
        if _internal(cls):
            continue
        out.append((_CLASS, cls))
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            try:
                out.append((name, getattr(root, name)))
            except AttributeError:
                pass
    return out, functools.partial(_set_attribute, root)


_CLASS = object()       # (the key of an object's class among its places: not stored into)
_METHOD = type(_filled.__get__(0))
_ATOMS = frozenset((int, float, complex, bool, str, bytes, type(None), np.float64, np.float32, np.int64, np.int32,
                    np.bool_, np.complex128))


def _set_attribute(obj, name, value):
    if name is _CLASS:
        raise TypeError("not stored")
    setattr(obj, name, value)


def _immutable(k, new):
    raise TypeError("not stored")


def _detached(v, mark):
    """`v` with the Tensors made after `mark` (not Variables) as ndarrays: a
    Tensor, or a tuple holding some (a new tuple); `v` itself if none."""
    if isinstance(v, Tensor):
        return v if v._id < mark or isinstance(v, Variable) else v.numpy()
    if isinstance(v, tuple):
        new = [_detached(e, mark) for e in v]
        if any(a is not b for a, b in zip(new, v)):
            try:
                return type(v)(new) if type(v) is tuple else type(v)(*new)
            except TypeError:
                return v
    return v


def _path_cut_in(exc):
    """The GradientPathWarning `exc` is, or was raised while handling."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, GradientPathWarning):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _refuse_other_arrays(f, values):
    """Raise ForeignArrayError when `values` hold another library's arrays
    (Dask, PyTorch, array_api_strict): the tape's Tensors hold NumPy
    arrays, so running f op by op would convert them."""
    if arrays.any_other_array(values):
        name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
        raise arrays.ForeignArrayError(
            "srcgrad cannot compile %s (the PerformanceWarning says why), and differentiating it op by op on "
            "the tape would convert its %s arrays to NumPy: the tape holds NumPy arrays only. Make %s compile "
            "(the warning names the construct), or differentiate it with NumPy arrays"
            % (name, arrays.library(values), name))


def gradient(f, args, kwargs, wrt, preserve_result=False, has_aux=False):
    """sg.grad(f, wrt, preserve_result, has_aux)(*args, **kwargs), op by
    op: f runs once on Tensors inside a GradientTape watching the `wrt`
    arguments; the gradient is the tape's (of the sum of f's output, as
    `tape.gradient`). Returns what `grad` returns (ndarrays, or Tensors
    under an outer recording tape). Raises TypeError as `grad` does for a
    tuple, list or dict output without has_aux."""
    _refuse_other_arrays(f, list(args) + list(kwargs.values()))
    on_tape = bool(recording_tapes())
    user_args, args = args, list(args)
    mark = id_mark()
    with _scipy_recorded(f), GradientTape(persistent=False) as tape:
        sources = []
        for i in wrt:
            args[i], _ = _watch(tape, args[i])
            sources.append(args[i])
        out = buffers.resolve(f(*args, **kwargs))
    if has_aux:
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError("grad with has_aux=True needs a function returning (value, aux); %s returned %s"
                            % (getattr(f, "__name__", f), type(out).__name__))
        value, aux = out
    else:
        value, aux = out, None
        if isinstance(value, (list, tuple, dict)):
            raise TypeError("grad needs a function returning one array; %s returned a %s (to return other "
                            "values with it, return (value, aux) and pass has_aux=True)"
                            % (getattr(f, "__name__", f), type(value).__name__))
    if np.iscomplexobj(value.numpy() if isinstance(value, Tensor) else value):
        raise TypeError("grad needs a real-valued output (as autograd's and JAX's grad); %s returned a complex "
                        "value: differentiate np.real(...), np.abs(...) ** 2 or another real function of it"
                        % getattr(f, "__name__", f))
    if isinstance(value, Tensor):
        grads = tape.gradient(value, sources)
    else:
        grads = [None] * len(sources)     # not connected to the arguments
    if not on_tape:
        _detach(_roots(f, user_args, kwargs), mark, seen=_own(args))
    grads = [_result(g, s, on_tape) for g, s in zip(grads, sources)]
    g = grads[0] if len(wrt) == 1 else tuple(grads)
    if not on_tape and isinstance(value, Tensor):
        value = value.numpy()
    if has_aux:
        return ((value, aux), g) if preserve_result else (g, aux)
    return (value, g) if preserve_result else g


def _seeded(p, t, watched, ts):
    """The primal `p` as Tensors the accumulator watches, with the tangent
    `t` (the same structure for a list, tuple or dict `p`), appended to
    `watched` and `ts`. A Tensor is copied (recorded: outer tapes see
    through it), so that one Tensor at two places gets two tangents. A
    None in the tangent's structure leaves its primal without a tangent
    (seeded, it was np.asarray(None, dtype=float): NaN)."""
    if type(p) in (list, tuple) and isinstance(t, (list, tuple)):
        return type(p)(_seeded(a, b, watched, ts) if b is not None else a for a, b in zip(p, t))
    if type(p) is dict and isinstance(t, dict):
        return {k: _seeded(v, t.get(k), watched, ts) if t.get(k) is not None else v for k, v in p.items()}
    a = None if isinstance(p, Tensor) else np.asarray(p)
    x = np.positive(p) if a is None else Tensor(a if is_differentiable_dtype(a.dtype) else a.astype(np.float64))
    watched.append(x)
    ts.append(t if isinstance(t, Tensor) else Tensor(np.asarray(t, dtype=x.dtype)))
    return x


def _output_tangent(acc, o, on_tape):
    """The tangent of the output `o` (zeros where not connected; a list or
    dict of tangents for a list or dict output)."""
    if type(o) in (list, tuple):
        return type(o)(_output_tangent(acc, e, on_tape) for e in o)
    if type(o) is dict:
        return {k: _output_tangent(acc, e, on_tape) for k, e in o.items()}
    d = acc.jvp(o) if isinstance(o, Tensor) else None
    if d is None:
        d = Tensor(np.zeros_like(np.asarray(o.numpy() if isinstance(o, Tensor) else o, dtype=float)))
    return d if on_tape else d.numpy()


def _numpy_tree(o):
    if type(o) in (list, tuple):
        return type(o)(_numpy_tree(e) for e in o)
    if type(o) is dict:
        return {k: _numpy_tree(e) for k, e in o.items()}
    return o.numpy() if isinstance(o, Tensor) else o


def jvp(f, primals, tangents):
    """sg.jvp(f, primals, tangents), op by op: f runs once on Tensors inside
    a ForwardAccumulator. Returns (f(*primals), J . tangents) as ndarrays
    (Tensors under an outer tape)."""
    _refuse_other_arrays(f, list(primals) + list(tangents))
    on_tape = bool(recording_tapes())
    watched, ts = [], []
    args = [p if t is None else _seeded(p, t, watched, ts) for p, t in zip(primals, tangents)]
    mark = id_mark()
    with _scipy_recorded(f), ForwardAccumulator(watched, ts) as acc:
        out = buffers.resolve(f(*args))
    outs = out if isinstance(out, tuple) else (out,)
    tans = [_output_tangent(acc, o, on_tape) for o in outs]
    if not on_tape:
        outs = tuple(_numpy_tree(o) for o in outs)
        _detach(_roots(f, primals, {}), mark, seen=_own(args))
    if isinstance(out, tuple):
        return outs, tuple(tans)
    return outs[0], tans[0]


def jacobian(f, args, wrt, hessian=False):
    """sg.jacobian(f)(*args) (or sg.hessian with `hessian`), op by op, with
    the tape's jacobian (of the tape's gradient for a Hessian). Returns an
    ndarray of shape out.shape + x.shape, or a tuple for several `wrt`."""
    user_args, args = args, list(args)
    mark = id_mark()
    with _scipy_recorded(f), GradientTape(persistent=True) as outer:
        sources = []
        for i in wrt:
            args[i], _ = _watch(outer, args[i])
            sources.append(args[i])
        if hessian:
            with GradientTape() as inner:
                for s in sources:
                    inner.watch(s)
                y = buffers.resolve(f(*args))
            target = inner.gradient(y, sources[0]) if len(sources) == 1 else None
            if target is None:
                raise TypeError("sg.hessian needs one argument to differentiate, op by op")
        else:
            target = buffers.resolve(f(*args))
    jacs = [outer.jacobian(target, s, unconnected_gradients="zero") for s in sources]
    jacs = [j.numpy() for j in jacs]
    if not recording_tapes():
        _detach(_roots(f, user_args, {}), mark, seen=_own(args))
    return jacs[0] if len(wrt) == 1 else tuple(jacs)


def hvp(f, args, wrt, v):
    """sg.hvp(f, wrt)(*args, v), op by op: forward over reverse on the
    tape (a GradientTape inside a ForwardAccumulator: Pearlmutter's
    product, each f run once). Returns an ndarray of args[wrt]'s shape."""
    user_args, args = args, list(args)
    x = Tensor(np.asarray(args[wrt], dtype=np.result_type(np.asarray(args[wrt]), np.float64)))
    args[wrt] = x
    mark = id_mark()
    with _scipy_recorded(f), ForwardAccumulator(x, Tensor(np.asarray(v, dtype=x.dtype))) as acc:
        with GradientTape() as tape:
            tape.watch(x)
            y = buffers.resolve(f(*args))
        g = tape.gradient(y, x)
    hv = acc.jvp(g) if g is not None else None
    if not recording_tapes():
        _detach(_roots(f, user_args, {}), mark, seen=_own(args))
    return np.zeros_like(x.numpy()) if hv is None else hv.numpy()


class OpByOpGradient:
    """What `sg.grad(f)` returns for an `f` the compiler refuses when it is
    parsed (a generator function, source it cannot read: op_by_op.py):
    each call differentiates f op by op on the tape, with a
    PerformanceWarning. Returns what `Gradient` returns."""

    def __init__(self, f, reason, wrt, preserve_result, has_aux):
        self.f, self.reason = f, reason
        self.__srcgrad_op_by_op__ = reason      # (compiled code calling it runs op by op too)
        self.wrt, self.preserve_result, self.has_aux = wrt, preserve_result, has_aux
        self.__name__ = self.__qualname__ = "d%s" % getattr(f, "__name__", "f")
        self.__wrapped__ = f

    def __repr__(self):
        return "<srcgrad gradient %s of %r, op by op>" % (self.__name__, self.f)

    @api_boundary
    def __call__(self, *args, **kwargs):
        warn(self.f, self.reason)
        return gradient(self.f, args, kwargs, self.wrt, self.preserve_result, self.has_aux)
