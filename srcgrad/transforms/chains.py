"""What the resolver knows before the function runs: values of chains and
constants at transform time.

`StaticValues` is the part of the resolver (resolve.py `_Resolver`) that
evaluates, without running user code, the expressions whose value is known
when the function is compiled: constants and displays of them, globals and
closure names (not Variables), known locals, attribute and item chains on
those, and `sg.grad(f)` of a known f (`static`); and the value a local name
holds after an assignment (`known_value`: an object of a user class built
from constants, a function or object read from a global or argument, a
list of those). The module-level helpers classify objects for the
resolver (`is_value`: a Tensor or Variable, an input; `arraylike`: read
live) and split attribute/item chains (`chain`). `same_resolution` is what
Program.is_current compares a chain's object with.

Requires: the resolver's fields (`known`, `params`, `examples`, `locals`,
`ns`) and `_walked`, `_root_value`.
"""
import random
import sys
import types

import gast
import numpy as np

from .. import runtime
from ..syntax import ast_util
from ..syntax.anno import Anno

# ndarray attributes and methods: on a local array value these are NumPy
# operations, never chain steps to a leaf.
ARRAY_ATTRS = {
    "T", "shape", "ndim", "size", "dtype", "real", "imag", "sum", "mean", "max", "min", "reshape",
    "transpose", "dot", "astype", "copy", "ravel", "flatten", "squeeze", "item", "tolist", "std",
    "var", "prod", "cumsum", "argmax", "argmin", "clip", "round", "conj", "nbytes", "itemsize",
    "all", "any", "nonzero", "swapaxes", "flat", "numpy", "cumprod", "trace", "diagonal", "repeat", "take",
    "conjugate",
}


def is_value(obj):
    return runtime.is_tensor(obj)


def arraylike(obj):
    return runtime.is_tensor(obj) or isinstance(obj, (np.ndarray, np.generic, int, float, complex, bool))


def array_tree(obj):
    """Is `obj` a list, tuple or dict holding only arrays and numbers (at any
    depth)? Such a parameter is a differentiated value as a whole (its
    elements are read from it, never Variables of their own)."""
    if isinstance(obj, dict):
        return all(array_tree(v) for v in obj.values())
    if type(obj) in (list, tuple):
        return all(array_tree(v) for v in obj)
    return arraylike(obj) or obj is None


_LIBRARIES = ("numpy", "scipy", "math", "builtins")


def library_module(obj):
    """Is `obj` a module of NumPy, SciPy or the standard library?"""
    if not isinstance(obj, types.ModuleType):
        return False
    top = obj.__name__.partition(".")[0]
    return top in _LIBRARIES or top in sys.stdlib_module_names


#: what a chain that could not be evaluated resolved to (`param["seed"]` with the key absent, read in a
#: branch that checks for it): the compiled code reads it live; the key appearing later recompiles
ABSENT = type("Absent", (), {"__repr__": lambda self: "<absent>"})()


def same_resolution(old, new):
    """Would the compiled code resolve `new` as it resolved `old`? Arrays
    and numbers are read live (any array will do, but not a Variable in
    place of an array, nor the other way: a Variable is an input); bound
    methods by their function and instance (a new object at each access),
    built-in types' bound methods (`xs.append`) by their name and instance;
    everything else by identity. An array or number read live must stay
    real, or complex, as it was: complex values switch the adjoints to
    TF's conjugating convention (a real constant turned complex after
    compiling would otherwise drop the conj() silently)."""
    if arraylike(old) and not is_value(old):
        # (a real array turned complex, or back: the adjoints keep or drop TF's conj(), Program.complex_mode)
        return arraylike(new) and not is_value(new) and _is_complex(new) == _is_complex(old)
    if is_value(old):
        return is_value(new)
    if isinstance(old, types.MethodType):
        return isinstance(new, types.MethodType) and new.__func__ is old.__func__ and new.__self__ is old.__self__
    if isinstance(old, types.BuiltinMethodType) and not isinstance(old.__self__, (type(None), types.ModuleType)):
        # (a built-in type's bound method, `CALLS.append` of a global list: a new object at each access too)
        return type(new) is type(old) and new.__self__ is old.__self__ and new.__name__ == old.__name__
    return new is old


def _is_complex(obj):
    return isinstance(obj, complex) or (isinstance(obj, (np.ndarray, np.generic)) and obj.dtype.kind == "c")


def chain(node):
    """Split an Attribute/Subscript chain into (root Name, [steps]) or None."""
    steps = []
    while True:
        if isinstance(node, gast.Attribute):
            steps.append(("attr", node.attr, node))
            node = node.value
        elif isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Constant):
            steps.append(("item", node.slice.value, node))
            node = node.value
        else:
            break
    if isinstance(node, gast.Name) and steps:
        return node, steps[::-1]
    return None


def is_srcgrad_transform(fn):
    """sg.grad / sg.value_and_grad, and jvp_function (an sg.jvp call,
    lower/jvp_calls.py): evaluated at transform time on known functions
    (they only wrap the function)."""
    return getattr(fn, "__module__", None) == "srcgrad.functional" and \
        getattr(fn, "__name__", None) in ("grad", "value_and_grad", "jvp_function")


class Known:
    """A value known at transform time for a local name: `value`, and
    whether it came from a global or an argument (`shared`: a list of such
    objects may be mutated after compiling; its unrolled loop checks it)."""
    __slots__ = ("value", "shared")

    def __init__(self, value, shared):
        self.value, self.shared = value, shared


def helper_name(obj, name):
    """A Name standing for `obj` in generated code (injected, not looked up)."""
    n = ast_util.name(name)
    Anno.CALLEE.add_to(n, obj)
    Anno.HELPER.add_to(n, True)
    return n


def literal(v):
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
        return True
    return isinstance(v, tuple) and all(literal(x) for x in v)


def user_class(cls):
    """Is `cls` a class of the user's (not NumPy's, SciPy's, an installed
    library's, the standard library's or srcgrad's)?"""
    if not isinstance(cls, type):
        return False
    module = getattr(cls, "__module__", "") or ""
    top = module.partition(".")[0]
    if top in ("numpy", "scipy", "srcgrad", "builtins") or top in sys.stdlib_module_names:
        return False
    filename = getattr(sys.modules.get(module), "__file__", "") or ""
    return not ("site-packages" in filename or "dist-packages" in filename)


class StaticValues:
    """The resolver's static evaluation (see the module docstring)."""

    def static(self, node):
        """(True, value) when `node`'s value is known at transform time
        without running user code: constants, displays of them, globals
        and closure names (not Variables), known locals, attribute and item
        chains on those, and sg.grad(f) of a known f; else (False, None)."""
        if isinstance(node, gast.Constant):
            return True, node.value
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
            found, v = self.static(node.operand)
            if found and isinstance(v, (int, float, complex)) and not isinstance(v, bool):
                return True, (-v if isinstance(node.op, gast.USub) else v)
            return False, None
        if isinstance(node, (gast.Tuple, gast.List)):
            values = [self.static(e) for e in node.elts]
            if all(f for f, _ in values) and not any(isinstance(e, gast.Starred) for e in node.elts):
                vs = [v for _, v in values]
                return True, (tuple(vs) if isinstance(node, gast.Tuple) else vs)
            return False, None
        if isinstance(node, gast.Dict):
            if any(k is None for k in node.keys):
                return False, None
            keys = [self.static(k) for k in node.keys]
            values = [self.static(v) for v in node.values]
            if all(f for f, _ in keys + values):
                return True, {k: v for (_, k), (_, v) in zip(keys, values)}
            return False, None
        if isinstance(node, gast.Name):
            if Anno.HELPER.of(node, False):
                return False, None
            if node.id in self.known and node.id not in self.params:
                return True, self.known[node.id].value
            if node.id in self.params:
                # an object passed in (compiled code is keyed by its identity); not a container,
                # keyed by its type only
                value = self.examples.get(node.id)
                if value is None or arraylike(value) or type(value) in (list, tuple, dict):
                    return False, None
                return True, value
            if node.id in self.locals:
                return False, None
            found, value = self.ns.lookup(node.id)
            if not found or is_value(value):
                return False, None
            return True, value
        if isinstance(node, (gast.Attribute, gast.Subscript)):
            if isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Slice):
                return False, None
            found, value = self.static(node.value)
            if not found:
                return False, None
            if isinstance(node, gast.Subscript):
                ok, key = self.static(node.slice)
                if not ok or arraylike(value):
                    return False, None
            try:
                value = getattr(value, node.attr) if isinstance(node, gast.Attribute) else value[key]
            except Exception:
                return False, None
            ch = chain(node)
            if ch is not None and ch[0].id not in self.known:
                self._walked(ch[0].id, ch[1], value)
            return (False, None) if is_value(value) else (True, value)
        if isinstance(node, gast.Call) and is_srcgrad_transform(Anno.CALLEE.of(node.func)):
            args = [self.static(a) for a in node.args]
            kwargs = {k.arg: self.static(k.value) for k in node.keywords}
            if all(f for f, _ in args) and all(f for f, _ in kwargs.values()) and None not in kwargs:
                try:
                    return True, Anno.CALLEE.of(node.func)(*[v for _, v in args],
                                                      **{k: v for k, (_, v) in kwargs.items()})
                except Exception:
                    return False, None
        return False, None

    def known_value(self, value):
        """The _Known a local assigned `value` holds, or None: an object of a
        user class built from known values (the constructor runs once now,
        for the object's type and attributes: the compiled code reads the
        attributes of the object built at run time), a function or object
        read from a global or argument, a list or tuple of those, or an
        element of a known list."""
        if isinstance(value, gast.Call):
            cls = Anno.CALLEE.of(value.func)
            if user_class(cls) and not any(isinstance(a, gast.Starred) for a in value.args) and \
                    all(k.arg is not None for k in value.keywords):
                args = [self.static(a) for a in value.args]
                kwargs = {k.arg: self.static(k.value) for k in value.keywords}
                if all(f for f, _ in args) and all(f for f, _ in kwargs.values()):
                    values = [v for _, v in args] + [v for _, v in kwargs.values()]
                    try:
                        with _random_states_kept(cls, values):
                            obj = cls(*[v for _, v in args], **{k: v for k, (_, v) in kwargs.items()})
                    except Exception:
                        return None
                    return Known(obj, False)
                return None
        if isinstance(value, (gast.List, gast.Tuple)):
            parts = [self.known_value(e) for e in value.elts]
            if parts and all(p is not None for p in parts):
                vs = [p.value for p in parts]
                return Known(tuple(vs) if isinstance(value, gast.Tuple) else vs, any(p.shared for p in parts))
            return None
        found, obj = self.static(value)
        if not found or arraylike(obj) or obj is None or isinstance(obj, (str, bytes)):
            return None
        if type(obj) in (list, tuple) and any(arraylike(v) or v is None for v in obj):
            return None
        root = value
        while isinstance(root, (gast.Attribute, gast.Subscript)):
            root = root.value
        local = isinstance(root, gast.Name) and root.id in self.known and root.id not in self.params
        return Known(obj, self.known[root.id].shared if local else True)


class _random_states_kept:
    """The states of the random generators a constructor run at transform
    time may draw from, put back after it: NumPy's global generator,
    Python's `random`, and the Generators and RandomStates among its
    arguments and its class's module globals. The constructor runs again
    when the compiled code runs (the object the program uses is built
    then); its draws must be the plain call's, in the plain call's order
    (a layer whose __init__ draws its weights: numpy-ml, CS231n)."""

    def __init__(self, cls, values):
        module = sys.modules.get(getattr(cls, "__module__", None) or "")
        pool = list(values) + (list(vars(module).values()) if module is not None else [])
        self.generators = [v for v in pool if isinstance(v, (np.random.Generator, np.random.RandomState))]

    def __enter__(self):
        self.numpy_state = np.random.get_state()
        self.python_state = random.getstate()
        self.states = [(g, g.bit_generator.state if isinstance(g, np.random.Generator) else g.get_state())
                       for g in self.generators]
        return self

    def __exit__(self, *exc):
        np.random.set_state(self.numpy_state)
        random.setstate(self.python_state)
        for g, state in self.states:
            if isinstance(g, np.random.Generator):
                g.bit_generator.state = state
            else:
                g.set_state(state)
        return False
