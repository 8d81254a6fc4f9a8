"""Which srcgrad function object stands for a Python callable.

`compilable(obj)` answers for the compiler (a call in differentiated code:
user code is compiled, a primitive with a rule, NumPy, a library function
or srcgrad's own code is not); `as_function(f)` for the functional API and
the tape (sg.grad(f), a bound method, what srcgrad returned); `function` is
the `@sg.function` decorator. The Function of a Python function is cached
on the function itself (weakly: it lives as long as the function).
"""
import functools
import inspect
import os
import sys
import threading
import types
import weakref

from . import op_by_op
from . import tape as tape_mod
from .errors import NoRuleError
from .function import SERVICES as FUNCTION_SERVICES
from .function import BoundFunction, Function
from .methods import FieldMethod, MethodFunction
from .rules import registry
from .syntax import ast_util

_functions_lock = threading.Lock()
_CACHE_ATTR = "_srcgrad_function_"


def compilable(obj):
    """The srcgrad function object the compiler transforms when generated or
    user code calls `obj`, or None (a primitive with a rule, NumPy, a
    library function, an object that is not a function)."""
    if isinstance(obj, Function):
        return obj
    if isinstance(obj, BoundFunction):
        return obj.function
    refused = getattr(obj, "__srcgrad_op_by_op__", None)
    if refused is not None:
        raise refused   # a function that runs op by op: its caller does too (op_by_op.py)
    derived = getattr(obj, "__srcgrad_function__", None)      # sg.grad(f), generated code
    if derived is not None:
        return derived()
    if inspect.ismethod(obj):
        # a bound method of the user's (obj.method passed on, or called by a name)
        if registry.adjoint_rule(obj) is not None or registry.is_nondiff(obj) or compilable(obj.__func__) is None:
            return None
        return as_function(obj)
    code = getattr(obj, "__code__", None)
    if code is None or getattr(obj, "__srcgrad_raw__", None) is not None:
        return None
    if registry.adjoint_rule(obj) is not None or registry.is_nondiff(obj):
        return None             # a rule takes precedence over the source
    module = getattr(obj, "__module__", "") or ""
    if module.startswith("srcgrad.") and not module.startswith("srcgrad.rules."):
        return None
    if code.co_filename.startswith(_SRCGRAD_DIR) and not code.co_filename.startswith(_RULES_DIR):
        return None             # srcgrad's own wrappers (custom_gradient's: functools.wraps copies __module__)
    if _is_library(obj, module):
        return None             # needs a rule: NoRuleError names it where it meets a differentiated value
    return as_function(obj)


_SITE_DIRS = ("site-packages", "dist-packages")


def _is_library(obj, module):
    """Is `obj` a function of an installed library (NumPy, SciPy, anything
    under site-packages) or of the standard library? srcgrad compiles the
    user's code, and treats library functions as primitives: a rule, or
    NoRuleError. (Decorating one with @sg.function compiles it anyway.)"""
    top = module.partition(".")[0]
    if top in ("numpy", "scipy") or top in sys.stdlib_module_names:
        return True
    filename = getattr(getattr(obj, "__code__", None), "co_filename", "") or ""
    if any(part in filename for part in _SITE_DIRS):
        return not filename.startswith(_SRCGRAD_DIR)
    return False


_SRCGRAD_DIR = os.path.dirname(os.path.abspath(__file__))
_RULES_DIR = os.path.join(_SRCGRAD_DIR, "rules")


def as_function(f):
    """The Function wrapping `f` (cached per Python function): `f` itself
    for a Function, the function of a bound @sg.function method, a
    MethodFunction for a bound method, the
    compilable form of a function srcgrad returned (sg.grad(g), generated
    code), or a new Function parsed from `f`'s source.

    The cache is weak: the Function is stored on `f` itself (an attribute of
    its `__dict__`), so it lives exactly as long as `f` does. A mapping keyed
    weakly by `f` cannot do this, since its value refers to `f` (Python has
    no ephemerons): dropping `f` (a notebook cell redefining it) frees the
    Function, its Programs and their generated code with the next garbage
    collection. A Function copied onto another function (functools.wraps
    copies `__dict__`) is not taken for that function's."""
    f = getattr(f, "__srcgrad_recorded__", f)      # (a tape's recording wrapper: tape/scipy_calls.py)
    if isinstance(f, Function):
        return f
    if isinstance(f, BoundFunction):
        return f.function
    refused = getattr(f, "__srcgrad_op_by_op__", None)
    if refused is not None:
        raise refused          # (sg.grad runs it op by op)
    derived = getattr(f, "__srcgrad_function__", None)
    if derived is not None:
        return derived()
    if not isinstance(f, types.FunctionType) and registry.adjoint_rule(f) is not None:
        return _primitive_function(f)   # sg.grad(np.sqrt), sg.grad(scipy.stats.norm.pdf): its rule
    if inspect.ismethod(f):
        return _method_function(f)
    if getattr(f, "__srcgrad_transform__", None) is not None:
        raise NoRuleError(f)            # sg.jacobian(g), sg.hessian(g): not transformable
    raw = getattr(f, "__func__", f)  # staticmethod objects
    cached = _cached(raw)
    if cached is not None:
        return cached
    with _functions_lock:
        fn = _cached(raw)
        if fn is None:
            fn = Function(raw)
            if isinstance(raw, types.FunctionType):
                raw.__dict__[_CACHE_ATTR] = fn
            else:
                _others[raw] = fn       # not a plain function: lives as long as the module
    return fn


_others = weakref.WeakKeyDictionary()
_primitives = {}        # a primitive with a rule -> the Function calling it (ufuncs take no weak reference)


def _primitive_function(prim):
    """A Function whose body calls `prim` (a ufunc, a library function or
    method with an adjoint rule) with its arguments: `sg.grad(np.sqrt)`
    differentiates by the rule, as autograd's `grad(np.sqrt)` and JAX's
    `grad(jnp.sqrt)` do. Its parameters are the ufunc's inputs, or the
    primitive's signature (`*args`, `**kwargs` forwarded)."""
    key = prim if _hashable(prim) else id(prim)
    fn = _primitives.get(key)
    if fn is not None:
        return fn
    name = getattr(prim, "__name__", "primitive")
    if not name.isidentifier():
        name = "primitive"
    nin = getattr(prim, "nin", None)
    if nin is not None:
        params, call = ["x%d" % i for i in range(nin)] if nin > 1 else ["x"], None
    else:
        try:
            sig = inspect.signature(prim)
        except (TypeError, ValueError):
            sig = None
        if sig is None:
            params = ["*args", "**kwargs"]
        else:
            params = []
            for p in sig.parameters.values():
                if p.kind is p.VAR_POSITIONAL:
                    params.append("*" + p.name)
                elif p.kind is p.VAR_KEYWORD:
                    params.append("**" + p.name)
                elif p.default is p.empty and p.kind is not p.KEYWORD_ONLY:
                    params.append(p.name)
                else:
                    # the required parameters by name (np.std(a, axis=None, ...): `a`, which
                    # wrt=0 names), the others forwarded
                    params = [q for q in params if not q.startswith("*")] + ["*args", "**kwargs"]
                    break
    call = ", ".join(params)
    src = "def %s(%s):\n    return _primitive(%s)\n" % (name, ", ".join(params), call)
    namespace = {"_primitive": prim}
    exec(compile(src, "<srcgrad: %s>" % name, "exec"), namespace)
    wrapper = namespace[name]
    wrapper.__srcgrad_origin__ = ("<srcgrad: %s>" % name, 1)
    fn = Function(wrapper, tree=ast_util.parse(src).body[0])
    with _functions_lock:
        return _primitives.setdefault(key, fn)


def _hashable(obj):
    try:
        hash(obj)
        return True
    except TypeError:
        return False


def _cached(raw):
    if isinstance(raw, types.FunctionType):
        fn = raw.__dict__.get(_CACHE_ATTR)
    else:
        fn = _others.get(raw)
    if fn is None or fn.is_stale():
        return None
    return fn if fn.python_function is raw or (fn._origin is not None and fn._origin[0] is raw) else None


def function(f=None, *, jit=False, cache=False):
    """Decorator: make `f` differentiable by source transformation.

    `f` may take Tensors, Variables, ndarrays, Python scalars and nested
    tuples/lists/dicts of them, and return an array or a tuple of arrays.
    Raises UnsupportedSyntaxError (construct, file, line) at decoration for
    Python that srcgrad cannot differentiate (see README, "What Python is
    supported"); some (objects built from differentiated values) are found
    when the derivative is first compiled. A bound method (`obj.method`) is a
    function of its other arguments (see MethodFunction).

    `@sg.function(jit=True)` (the `jit` extra: Numba) compiles the
    function's tape calls with Numba: the split forward sweep when called,
    the reverse sweep for `gradient`, as a pair compiled before the call
    runs (srcgrad/jit/tape.py); outside tapes, the function runs as
    `sg.jit(f)`. Where Numba cannot compile them, they run in CPython with
    a PerformanceWarning saying why (same values). Higher-order tapes and
    vectorised Jacobians run the CPython code. With `cache=True` too, the
    machine code is kept on disk for other processes (as `sg.jit(f,
    cache=True)`).

    Raises:
      TypeError: `cache=True` without `jit=True` (only Numba's code is cached).
    """
    if cache and not jit:
        raise TypeError("sg.function(cache=True) caches the code Numba compiles: use it with jit=True")
    if f is None:
        return functools.partial(function, jit=jit, cache=cache)
    try:
        if inspect.ismethod(f):
            made = MethodFunction(f, as_function(f.__func__))
        else:
            made = Function(f)
    except Exception as exc:
        if not op_by_op.falls_back(exc):
            raise
        op_by_op.warn(f, exc)
        return OpByOpFunction(f, exc)
    if jit:
        if FUNCTION_SERVICES.tape_jit is None:
            raise RuntimeError("srcgrad: sg.function(jit=True) needs srcgrad.jit (import srcgrad)")
        made.jit = FUNCTION_SERVICES.tape_jit(made, cache=cache)
    return made


class OpByOpFunction:
    """What `@sg.function` returns for a function the compiler refuses
    when it is parsed (a generator, a local function passed on, ...):
    called, it runs the Python function, whose operations on watched
    Tensors a recording tape records one by one (op_by_op.py), with a
    PerformanceWarning naming the reason; sg.grad and the other transforms
    of it run op by op too."""

    def __init__(self, f, reason):
        self.python_function = f
        self.reason = self.__srcgrad_op_by_op__ = reason
        functools.update_wrapper(self, f)

    def __repr__(self):
        return "<srcgrad.function %s, op by op>" % getattr(self.python_function, "__qualname__", "?")

    def __call__(self, *args, **kwargs):
        if tape_mod.recording_tapes():
            op_by_op.warn(self.python_function, self.reason)
        return self.python_function(*args, **kwargs)

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)


_field_methods = weakref.WeakKeyDictionary()     # class -> {name: FieldMethod}


def field_method(cls, name):
    """The FieldMethod of `cls`'s method or property `name` (cached per class)."""
    with _functions_lock:
        table = _field_methods.setdefault(cls, {})
        fn = table.get(name)
        if fn is not None:
            return fn
        fn = table[name] = FieldMethod(cls, name)
    try:
        member = inspect.getattr_static(cls, name)
        fn.build(as_function(member.fget if isinstance(member, property) else member), field_method)
    except Exception:
        with _functions_lock:
            table.pop(name, None)
        raise
    return fn


_methods = {}           # (function, id(instance)) -> MethodFunction, most recent last (a bounded cache)
_METHODS_MAX = 64


def _method_function(method):
    """The MethodFunction of a bound method, cached for the most recently
    used (function, instance) pairs (a bound method is a new object at each
    attribute access; the cache keeps at most _METHODS_MAX instances alive)."""
    key = (method.__func__, id(method.__self__))
    with _functions_lock:
        fn = _methods.pop(key, None)
        if fn is not None and fn.instance is method.__self__:
            _methods[key] = fn
            return fn
    fn = MethodFunction(method, as_function(method.__func__))
    with _functions_lock:
        _methods[key] = fn
        while len(_methods) > _METHODS_MAX:
            del _methods[next(iter(_methods))]
    return fn
