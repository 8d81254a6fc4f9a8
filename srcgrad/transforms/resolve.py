"""Resolve names to runtime objects at transform time, and find the leaves.

Requires: parse, check. Guarantees, on the returned `Resolution`:
- every call's `func` node carries `Anno.CALLEE` (the object called) or
  `Anno.METHOD` (an ndarray method name on a local array value);
- every read of a Variable/Tensor that is not a parameter (a global, a
  closure cell, or an attribute/item chain such as `self.kernel` or
  `params['W']`) is replaced by a fresh local name, and listed in `leaves`
  with the accessor that fetches its value at call time. Leaves are inputs
  of the generated code like the parameters;
- `free` maps each global/closure name read to the object it held, so a
  later call can check nothing was rebound (stale code is never run);
- a local name whose value is known at transform time (flow-sensitively: an
  object of a user class built from constants, a function or object read
  from a global, an element of a known list) is called through that value
  (`scale = Scale(3.0); scale.apply(x)`, `layer(x)`), and a loop over a
  known list of objects or functions (`for layer in LAYERS`, `for layer in
  [Conv(3), Relu()]`) is unrolled, so each call is compiled for its object;
- an object of a plain data-holder class (its __init__ only stores its
  arguments, or a dataclass) built from differentiated values is a record:
  `layer = Affine(W, b)` assigns its fields to locals, `layer.W` reads one,
  `layer.loss(x)`, `layer(x)` and `layer.norm` (a property) call the
  method's field function (function.FieldMethod: the method with `self.W`
  a parameter), so derivatives flow to W and b; any other use of the
  object raises UnsupportedSyntaxError;
- `np.r_[a, b]` / `np.c_[a, b]` are calls of np.concatenate (the items made
  1-d, or columns), so their derivatives flow;
- every read of a non-array object (a function, a bound method, an object)
  that may be passed on to a callee carries `Anno.VALUE`.
"""
import ast
import builtins
import copy
import dataclasses
import inspect
import sys
import textwrap
import types
import weakref
from dataclasses import dataclass, field

import gast
import numpy as np

from .. import runtime
from ..runtime import syntax as runtime_syntax
from ..errors import ResolutionError, UnsupportedSyntaxError, location, where
from ..rules.python import containers
from ..syntax import ast_util
from ..syntax.naming import Namer
from ..syntax.anno import Anno
from .namespace import Namespace

# ndarray attributes and methods: on a local array value these are NumPy
# operations, never chain steps to a leaf.
ARRAY_ATTRS = {
    "T", "shape", "ndim", "size", "dtype", "real", "imag", "sum", "mean", "max", "min", "reshape",
    "transpose", "dot", "astype", "copy", "ravel", "flatten", "squeeze", "item", "tolist", "std",
    "var", "prod", "cumsum", "argmax", "argmin", "clip", "round", "conj", "nbytes", "itemsize",
    "all", "any", "nonzero", "swapaxes", "flat", "numpy", "cumprod", "trace", "diagonal", "repeat", "take",
    "conjugate",
}


@dataclass
class Leaf:
    """An input of the generated code that is not a parameter."""
    name: str            # local name in generated code
    kind: str            # "free" (global/closure name) or "chain"
    root: str            # parameter or free name the chain starts from
    steps: tuple         # (("attr", name) | ("item", constant), ...)
    text: str            # as the user wrote it, for messages and comments
    namespace: object = None   # a called function's namespace (a hoisted leaf)

    def fetch(self, params, namespace):
        """The leaf's value for a call: params is {name: value}; free names
        are looked up in the leaf's own namespace (a called function's, or
        the function a derived program came from) or in `namespace`."""
        if self.kind == "chain" and self.root in params:
            value = params[self.root]
        else:
            value = (self.namespace or namespace).lookup(self.root)[1]
        for kind, key in self.steps:
            value = getattr(value, key) if kind == "attr" else value[key]
        return value


@dataclass
class Resolution:
    """A function's AST with its names resolved, for one set of argument
    kinds (what `resolve` returns; the function layer fills the last three
    fields)."""
    node: gast.FunctionDef
    params: list
    leaves: list = field(default_factory=list)
    free: dict = field(default_factory=dict)        # name -> object seen at transform time
    locals: set = field(default_factory=set)
    examples: dict = field(default_factory=dict)    # parameter -> the object it was resolved for
    namer: Namer = None                             # seeded with every name in use
    containers: set = field(default_factory=set)    # parameters passed lists, tuples or dicts
    scalars: set = field(default_factory=set)       # parameters passed Python floats or ints
    callee_leaves: dict = field(default_factory=dict)   # callee -> the local names passed for its leaves
    chains: dict = field(default_factory=dict)  # (root kind, root, steps) -> object resolved (_Resolver._walked)


def _is_value(obj):
    return runtime.is_tensor(obj)


def _arraylike(obj):
    return runtime.is_tensor(obj) or isinstance(obj, (np.ndarray, np.generic, int, float, complex, bool))


_LIBRARIES = ("numpy", "scipy", "math", "builtins")


def _library_module(obj):
    """Is `obj` a module of NumPy, SciPy or the standard library?"""
    if not isinstance(obj, types.ModuleType):
        return False
    top = obj.__name__.partition(".")[0]
    return top in _LIBRARIES or top in sys.stdlib_module_names


def same_resolution(old, new):
    """Would the compiled code resolve `new` as it resolved `old`? Arrays
    and numbers are read live (any array will do, but not a Variable in
    place of an array, nor the other way: a Variable is an input); bound
    methods by their function and instance (a new object at each access);
    everything else by identity."""
    if _arraylike(old) and not _is_value(old):
        return _arraylike(new) and not _is_value(new)
    if _is_value(old):
        return _is_value(new)
    if isinstance(old, types.MethodType):
        return isinstance(new, types.MethodType) and new.__func__ is old.__func__ and new.__self__ is old.__self__
    return new is old


def _chain(node):
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


def stored_names(fdef):
    names = set()
    for n in ast_util.walk(fdef):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Param)):
            names.add(n.id)
    return names


_UNROLL_MAX = 64        # longest list of objects a loop is unrolled over


def _user_class(cls):
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


def _is_srcgrad_transform(fn):
    """sg.grad / sg.value_and_grad: evaluated at transform time on known
    functions (they only wrap the function)."""
    return getattr(fn, "__module__", None) == "srcgrad.functional" and \
        getattr(fn, "__name__", None) in ("grad", "value_and_grad")


class _Known:
    """A value known at transform time for a local name: `value`, and
    whether it came from a global or an argument (`shared`: a list of such
    objects may be mutated after compiling; its unrolled loop checks it)."""
    __slots__ = ("value", "shared")

    def __init__(self, value, shared):
        self.value, self.shared = value, shared


def plain_fields(cls):
    """{attribute: ("param", name) | ("const", value)} when `cls` is a plain
    data holder (a dataclass without __post_init__, or a class whose
    __init__ only stores its parameters or constants in attributes, with
    the default __new__ and attribute access, not a context manager); else
    None."""
    if not _user_class(cls) or cls.__new__ is not object.__new__:
        return None
    if any(getattr(cls, m, None) is not getattr(object, m) for m in ("__getattribute__", "__setattr__")) or \
            hasattr(cls, "__getattr__") or hasattr(cls, "__enter__"):
        return None             # (a context manager is entered, not differentiated)
    found = _PLAIN.get(cls, False)
    if found is not False:
        return found
    found = None
    if dataclasses.is_dataclass(cls):
        fs = dataclasses.fields(cls)
        if not hasattr(cls, "__post_init__") and all(f.init for f in fs):
            found = {f.name: ("param", f.name) for f in fs}
    else:
        init = cls.__dict__.get("__init__") if "__init__" in cls.__dict__ else None
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(init))) if init is not None else None
        except (OSError, TypeError, SyntaxError):
            tree = None
        fdef = tree.body[0] if tree is not None and tree.body else None
        if isinstance(fdef, ast.FunctionDef) and fdef.args.args and not fdef.decorator_list:
            me = fdef.args.args[0].arg
            params = {a.arg for a in fdef.args.posonlyargs + fdef.args.args[1:] + fdef.args.kwonlyargs}
            body = fdef.body[1:] if (fdef.body and isinstance(fdef.body[0], ast.Expr)
                                     and isinstance(fdef.body[0].value, ast.Constant)) else fdef.body
            out = {}
            for st in body:
                if not (isinstance(st, ast.Assign) and len(st.targets) == 1
                        and isinstance(st.targets[0], ast.Attribute) and isinstance(st.targets[0].value, ast.Name)
                        and st.targets[0].value.id == me):
                    out = None
                    break
                if isinstance(st.value, ast.Name) and st.value.id in params:
                    out[st.targets[0].attr] = ("param", st.value.id)
                elif isinstance(st.value, ast.Constant):
                    out[st.targets[0].attr] = ("const", st.value.value)
                else:
                    out = None
                    break
            found = out or None
    _PLAIN[cls] = found
    return found


_PLAIN = weakref.WeakKeyDictionary()


class _Resolver(gast.NodeTransformer):
    def __init__(self, parsed, namespace, examples, namer):
        self.parsed = parsed
        self.ns = namespace
        self.examples = examples   # {param: example value} or {}
        self.namer = namer
        self.params = parsed.params
        self.locals = stored_names(parsed.node)
        self.leaves = {}
        self.free = {}
        self.in_func_position = False
        self.known = {}            # local name -> _Known, at the statement being resolved
        self.field_method = None   # (cls, name) -> the FieldMethod of a method (set by resolve())
        self.records = {}          # local name -> (class, {init parameter: local name}): see _records
        self.chains = {}           # (root kind, root name, steps) -> the object resolved: see _walked

    # -- helpers
    def _walked(self, root, steps, obj):
        """Record that the chain `root.steps` (a global, closure or parameter
        name, then attribute and constant-item steps) resolved to `obj`: the
        compiled code depends on it (a rule chosen by the function it names,
        code specialised to an array or an object), so a later call that
        finds it changed resolves again (Resolution.chains, Program.is_current).
        Chains through library modules (numpy, scipy, the standard library)
        are not recorded: their functions are not rebound."""
        if not steps or (root in self.locals and root not in self.params):
            return
        kind = "param" if root in self.params else "free"
        if kind == "free":
            found, base = self.ns.lookup(root)
            if not found or _library_module(base):
                return
        self.chains[(kind, root, tuple((k, key) for k, key, *_ in steps))] = obj

    def _error(self, node, message):
        filename, lineno, col = self.parsed.origin(node)
        raise ResolutionError("%s\n  at %s" % (message, where(filename, lineno, col)))

    def _root_value(self, name_node):
        """(known, value, is_object_root) for a chain's root name."""
        name = name_node.id
        if name in self.params:
            if name in self.examples:
                v = self.examples[name]
                return True, v, not _arraylike(v)
            return False, None, name in ("self", "cls")
        if name in self.locals:
            if name in self.known:
                return True, self.known[name].value, True
            return False, None, False
        found, v = self.ns.lookup(name)
        if not found:
            self._error(name_node, "srcgrad could not resolve the name %r" % name)
        self.free[name] = v
        return True, v, not _arraylike(v)

    def _leaf(self, text, kind, root, steps, node):
        if text not in self.leaves and kind == "free":
            self.leaves[text] = Leaf(text, kind, root, tuple(steps), text)
        if text not in self.leaves:
            base = text.replace(".", "_").replace("[", "_").replace("]", "").replace("'", "").replace('"', "")
            self.leaves[text] = Leaf(self.namer.fresh(base), kind, root, tuple(steps), text)
        return ast_util.copy_location(ast_util.name(self.leaves[text].name), node)

    # -- visitors
    def visit_Call(self, node):
        node = self._visit_call(node)
        if _is_srcgrad_transform(Anno.CALLEE.of(node.func)):
            found, value = self._static(node)
            if found:
                Anno.VALUE.add_to(node, value)       # sg.grad(f) passed on: the callee calls a known gradient
        return node

    def _visit_call(self, node):
        func = node.func
        node.args = [self.visit(a) for a in node.args]
        for k in node.keywords:
            k.value = self.visit(k.value)
        if Anno.CALLEE.of(func) is not None:
            return node       # a srcgrad helper placed by lower.py
        if isinstance(func, gast.Name) and func.id in self.records:
            return self._record_call(node, func.id, "__call__")
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and func.value.id in self.records:
            return self._record_call(node, func.value.id, func.attr)
        if isinstance(func, gast.Name):
            example = self.examples.get(func.id) if func.id in self.params else None
            if example is not None and callable(example):
                Anno.CALLEE.add_to(func, example)      # a function or callable object passed in
                return node
            if func.id in self.known:
                Anno.CALLEE.add_to(func, self.known[func.id].value)     # a local holding a known function or object
                return node
            if func.id in self.locals:
                filename, lineno, col = self.parsed.origin(func)
                what = ("a function or object passed in as %s that srcgrad does not know when compiling the "
                        "caller" % func.id if func.id in self.params else
                        "%s, an object or function built inside the differentiated code" % func.id)
                raise UnsupportedSyntaxError(
                    "calling " + what, filename, lineno, col,
                    "call module-level functions, pass functions and objects as arguments, or build objects "
                    "from constants")
            known, value, _ = self._root_value(func)
            functional = containers.FUNCTIONAL.get(value) if callable(value) else None
            if functional is not None:
                # generated code transformed again: an update in place proven safe for that code
                # (transforms/inplace.py) is a functional update for the new one
                Anno.CALLEE.add_to(func, functional)
                Anno.HELPER.add_to(func, True)
                return node
            Anno.CALLEE.add_to(func, value)
            return node
        if isinstance(func, (gast.Attribute, gast.Subscript)):
            ch = _chain(func)
            if ch is not None:
                root, steps = ch
                if root.id in self.known and isinstance(func, gast.Subscript):
                    obj = self._static(func)[1]
                    if obj is not None and callable(obj):
                        Anno.CALLEE.add_to(func, obj)          # known_list[0](x)
                        return node
                known, value, is_object = self._root_value(root)
                if root.id not in self.locals and root.id not in self.params and known:
                    # a module path such as np.linalg.solve, or a global object's method
                    obj = value
                    try:
                        for kind, key, _ in steps:
                            obj = getattr(obj, key) if kind == "attr" else obj[key]
                    except Exception:
                        self._error(func, "srcgrad could not resolve %s" % ast_util.to_source(func))
                    self._walked(root.id, steps, obj)
                    if isinstance(value, types.ModuleType) or callable(obj):
                        Anno.CALLEE.add_to(func, obj)
                        if not isinstance(value, types.ModuleType):
                            Anno.OPAQUE_METHOD.add_to(func, True)
                        return node
            if isinstance(func, gast.Subscript):
                if ch is not None and ch[0].id in self.params and self._example_attribute(func) is not None:
                    Anno.CALLEE.add_to(func, self._example_attribute(func))     # params["f"](x), fs[0](x)
                    func.value = self.visit(func.value)
                    return node
                self._error(func, "calling the result of an expression (%s) is not supported"
                            % ast_util.to_source(func))
            # a method on a value: x.sum(), (a @ b).reshape(...), self.kernel.dot(x)
            is_object = self._is_object_expr(func.value)
            func.value = self.visit(func.value)
            if func.attr in ARRAY_ATTRS and not is_object:
                Anno.METHOD.add_to(func, func.attr)
            else:
                Anno.CALLEE.add_to(func, self._example_attribute(func) if is_object else None)
                Anno.OPAQUE_METHOD.add_to(func, True)
            return node
        if isinstance(func, gast.Call):
            # sg.grad(f)(x): the function sg.grad returns, known when f is
            inner = self._visit_call(func)
            found, value = self._static(inner)
            if found and callable(value):
                Anno.CALLEE.add_to(func, value)
                return node
        self._error(func, "calling the result of an expression is not supported")

    def _example_attribute(self, node):
        """The object `node` (a chain such as self.helper) names for the
        example arguments, or None."""
        ch = _chain(node)
        if ch is None:
            return None
        root, steps = ch
        known, value, _ = self._root_value(root)
        if not known:
            return None
        try:
            for kind, key, _ in steps:
                value = getattr(value, key) if kind == "attr" else value[key]
        except Exception:
            return None
        self._walked(root.id, steps, value)
        return value

    def _is_object_expr(self, node):
        """Is `node` a chain ending on a (known) non-array object?"""
        ch = _chain(node) if not isinstance(node, gast.Name) else (node, [])
        if ch is None:
            return False
        root, steps = ch
        if root.id in self.locals and root.id not in self.params and root.id not in self.known:
            return False
        known, value, is_object = self._root_value(root)
        if not known:
            return is_object and not steps
        try:
            for kind, key, _ in steps:
                value = getattr(value, key) if kind == "attr" else value[key]
        except Exception:
            return False
        self._walked(root.id, steps, value)
        return not _arraylike(value)

    def visit_Attribute(self, node):
        if isinstance(node.value, gast.Name) and node.value.id in self.records and isinstance(node.ctx, gast.Load):
            return self._record_attribute(node)
        return self._visit_chain(node)

    def visit_Subscript(self, node):
        if isinstance(node.ctx, gast.Load):
            found, obj = self._static(node.value)
            if found and (obj is np.r_ or obj is np.c_):
                return self._index_trick(node, obj is np.c_)
            return self._visit_chain(node)
        return self.generic_visit(node)

    def _index_trick(self, node, columns):
        """np.r_[a, b, ...] -> np.concatenate([np.atleast_1d(a), ...]);
        np.c_[a, b, ...] -> np.concatenate([np.reshape(a, column_shape(a)),
        ...], axis=-1) (NumPy's AxisConcatenator for these two: items at
        least 1-d, or 1-d items as columns, joined along the first or the
        last axis). A slice item is np.r_'s range (r_range: no derivative)."""
        items = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        what = "np.c_" if columns else "np.r_"
        parts = []
        for item in items:
            if isinstance(item, gast.Constant) and isinstance(item.value, str):
                self._unsupported(item, "%s with a string directive" % what, "call np.concatenate")
            if isinstance(item, gast.Slice):
                bounds = [self.visit(b) if b is not None else ast_util.const(None)
                          for b in (item.lower, item.upper, item.step)]
                item = ast_util.call(_helper_name(runtime_syntax.r_range, "r_range"), bounds)
            else:
                item = self.visit(item)
            if columns:
                shape = ast_util.call(_helper_name(runtime_syntax.column_shape, "column_shape"),
                                      [ast_util.clone(item)])
                parts.append(ast_util.call(_helper_name(np.reshape, "reshape"), [item, shape]))
            else:
                parts.append(ast_util.call(_helper_name(np.atleast_1d, "atleast_1d"), [item]))
        joined = gast.List(elts=parts, ctx=gast.Load())
        axis = gast.keyword(arg="axis", value=ast_util.const(-1 if columns else 0))
        new = ast_util.call(_helper_name(np.concatenate, "concatenate"), [joined], [axis])
        for n in ast_util.walk(new):
            if not Anno.ORIGIN.exists(n) and Anno.ORIGIN.exists(node):
                Anno.ORIGIN.add_to(n, Anno.ORIGIN.of(node))
        return ast_util.copy_location(new, node)

    def _unsupported(self, node, construct, hint=None):
        filename, lineno, col = self.parsed.origin(node)
        raise UnsupportedSyntaxError(construct, filename, lineno, col, hint)

    def _visit_chain(self, node):
        ch = _chain(node)
        if ch is None:
            return self.generic_visit(node)
        root, steps = ch
        if root.id in self.known and root.id not in self.params:
            found, value = self._static(node)
            node = self.generic_visit(node)
            if found and not _arraylike(value) and value is not None:
                Anno.VALUE.add_to(node, value)       # an attribute of a known local object, passed on
            return node
        if root.id in self.locals and root.id not in self.params:
            return self.generic_visit(node)
        known, value, is_object = self._root_value(root)
        if not is_object:
            return self.generic_visit(node)
        # Walk the chain while the value is an object; stop at the first
        # array-like value (the leaf), or at an ndarray attribute when the
        # value is unknown (sg.source without example arguments).
        taken = []
        obj = value
        for kind, key, step_node in steps:
            if known:
                if _arraylike(obj):
                    break
                try:
                    obj = getattr(obj, key) if kind == "attr" else obj[key]
                except Exception:
                    self._error(step_node, "srcgrad could not evaluate %s at transform time"
                                % ast_util.to_source(step_node))
            elif kind == "attr" and key in ARRAY_ATTRS and taken:
                break
            taken.append((kind, key, step_node))
            if known and _arraylike(obj):
                break
        if not taken:
            return self.generic_visit(node)
        if known:
            self._walked(root.id, taken, obj)
        last = taken[-1][2]
        if known and not _is_value(obj):
            # not a Tensor/Variable (a constant, a sub-object): read live
            node = self.generic_visit(node)
            if last is node and not _arraylike(obj) and obj is not None:
                Anno.VALUE.add_to(node, obj)         # np.sin, obj.method, obj.layer: passed on to a callee
            return node
        text = ast_util.to_source(last)
        leaf = self._leaf(text, "chain", root.id, [(k, key) for k, key, _ in taken], last)
        if last is node:
            return leaf
        # replace the inner chain node by the leaf, keep the outer steps
        parent = node
        while True:
            child = parent.value
            if child is last:
                parent.value = leaf
                break
            parent = child
        return node

    def visit_Name(self, node):
        if not isinstance(node.ctx, gast.Load):
            if isinstance(node.ctx, gast.Store):
                self.known.pop(node.id, None)
            return node
        if Anno.HELPER.of(node, False):
            return node
        if node.id in self.records:
            self._unsupported(node, "using %s, an object of %s built from differentiated values, other than by "
                              "reading its attributes and calling its methods"
                              % (node.id, self.records[node.id][0].__name__),
                              "pass its arrays, or build it outside the differentiated code")
        if node.id in self.known and node.id not in self.params:
            value = self.known[node.id].value
            if not _arraylike(value) and value is not None:
                Anno.VALUE.add_to(node, value)
            return node
        if node.id in self.params:
            example = self.examples.get(node.id)
            if example is not None and not _arraylike(example):
                Anno.VALUE.add_to(node, example)    # an object passed on: the callee knows it too
            return node
        if node.id in self.locals:
            return node
        found, value = self.ns.lookup(node.id)
        if not found:
            self._error(node, "srcgrad could not resolve the name %r" % node.id)
        self.free[node.id] = value
        if _is_value(value):
            return self._leaf(node.id, "free", node.id, [], node)
        if not _arraylike(value) and value is not None:
            Anno.VALUE.add_to(node, value)         # a function or object passed on as an argument
        return node


    # -- statements: what local names hold, flow-sensitively
    def block(self, stmts):
        out = []
        for s in stmts:
            new = self.visit(s)
            if isinstance(new, list):
                out.extend(new)
            elif new is not None:
                out.append(new)
        return out

    def visit_Assign(self, node):
        if len(node.targets) == 1 and isinstance(node.targets[0], gast.Name) and node.targets[0].id in self.records:
            return self._record_assign(node)
        node.value = self.visit(node.value)
        node.targets = [self.visit(t) for t in node.targets]
        if len(node.targets) == 1 and isinstance(node.targets[0], gast.Name):
            known = self._known_value(node.value)
            if known is not None:
                self.known[node.targets[0].id] = known
        return node

    def visit_If(self, node):
        node.test = self.visit(node.test)
        decided = self._decided(node.test)
        if decided is not None:
            # isinstance(layer, Conv) on a known object (an unrolled loop over a list of objects):
            # only the branch taken is compiled
            return self.block(node.body if decided else node.orelse) or [ast_util.copy_location(gast.Pass(), node)]
        before = dict(self.known)
        node.body = self.block(node.body)
        after_body, self.known = self.known, before
        node.orelse = self.block(node.orelse)
        self.known = {k: v for k, v in after_body.items() if k in self.known and self.known[k].value is v.value}
        return node

    def _kill(self, stmts):
        for s in stmts:
            for n in ast_util.walk(s):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                    self.known.pop(n.id, None)

    def visit_While(self, node):
        self._kill(node.body)
        node.test = self.visit(node.test)
        node.body = self.block(node.body)
        self._kill(node.body)
        return node

    def visit_For(self, node):
        unrolled = self._unroll(node)
        if unrolled is not None:
            return unrolled
        node.iter = self.visit(node.iter)
        node.target = self.visit(node.target)
        self._kill(node.body)
        node.body = self.block(node.body)
        self._kill(node.body)
        return node

    def _unroll(self, node):
        """A loop over a known list of objects or functions (lower.py marks
        a loop over sequences with `Anno.OVER`, the names holding them; zip
        and enumerate included): the body once per element, with the index a
        constant, so that each element's calls are compiled for it. A list
        read from a global or an argument is checked at run time to be the
        one unrolled; the other sequences of a zip to be long enough."""
        seqs = Anno.OVER.of(node) or []
        known = {}
        for seq in seqs:
            k = self.known.get(seq)
            if k is not None and type(k.value) in (list, tuple) and len(k.value) <= _UNROLL_MAX and \
                    not any(_arraylike(v) or v is None for v in k.value):
                known[seq] = k
        if not known:
            return None
        n = min(len(k.value) for k in known.values())
        index = node.target.id
        filename, lineno, _ = self.parsed.origin(node)
        where = ast_util.const(location(filename, lineno))
        out = []
        for seq in seqs:
            k = known.get(seq)
            if k is not None and not k.shared and len(k.value) == n:
                continue
            if k is not None and k.shared:
                objects = _helper_name(tuple(k.value), "unrolled")
                check = ast_util.call(_helper_name(runtime_syntax.check_unrolled, "check_unrolled"),
                                      [ast_util.name(seq), objects, where])
            else:
                check = ast_util.call(_helper_name(runtime_syntax.check_length, "check_length"),
                                      [ast_util.name(seq), ast_util.const(n), where])
            out.append(ast_util.copy_location(ast_util.expr_stmt(check), node))
            for n_ in ast_util.walk(out[-1]):
                Anno.ORIGIN.add_to(n_, Anno.ORIGIN.of(node))
        for k in range(n):
            out.extend(_ConstantIndex(index, k).visit(s) for s in ast_util.clone(node.body))
        return self.block(out)

    def _decided(self, test):
        """True/False for a test about a known object's type (isinstance,
        callable, `not` of one); else None."""
        if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
            inner = self._decided(test.operand)
            return None if inner is None else not inner
        if not (isinstance(test, gast.Call) and Anno.CALLEE.of(test.func) in
                (builtins.isinstance, builtins.callable)) or test.keywords:
            return None
        args = [self._static(a) for a in test.args]
        if not all(found for found, _ in args) or not test.args:
            return None
        subject = args[0][1]
        if _arraylike(subject) or subject is None or type(subject) in (list, tuple, dict):
            return None         # a value, not an object: decided at run time
        try:
            return bool(Anno.CALLEE.of(test.func)(*[v for _, v in args]))
        except Exception:
            return None

    # -- objects of plain data-holder classes built from differentiated values
    def find_records(self, body):
        """The local names whose every assignment builds an object of one
        plain data-holder class from values not all known at transform
        time (objects built from constants are known values instead)."""
        stores, classes = {}, {}
        for n in ast_util.walk(ast_util.module(body)):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                stores[n.id] = stores.get(n.id, 0) + 1
        for n in ast_util.walk(ast_util.module(body)):
            if isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], gast.Name) \
                    and isinstance(n.value, gast.Call):
                found, cls = self._static(n.value.func)
                if found and plain_fields(cls) is not None and not any(
                        isinstance(a, gast.Starred) for a in n.value.args) and \
                        all(k.arg is not None for k in n.value.keywords):
                    static = all(self._static(a)[0] for a in n.value.args) and \
                        all(self._static(k.value)[0] for k in n.value.keywords)
                    classes.setdefault(n.targets[0].id, []).append(None if static else cls)
        for name, found in classes.items():
            if name in self.params or len(found) != stores.get(name) or None in found or len(set(found)) != 1:
                continue
            cls = found[0]
            params = sorted({p for kind, p in plain_fields(cls).values() if kind == "param"})
            self.records[name] = (cls, {p: self.namer.fresh("%s_%s" % (name, p)) for p in params})

    def _record_assign(self, node):
        """`obj = Cls(a, b)`: the fields' parameters assigned to locals."""
        name = node.targets[0].id
        cls, locals_ = self.records[name]
        call = node.value
        try:
            bound = inspect.signature(cls).bind(*call.args, **{k.arg: k.value for k in call.keywords})
        except TypeError as exc:
            self._unsupported(call, "this call of %s (%s)" % (cls.__name__, exc))
        bound.apply_defaults()
        out = []
        for p, local in locals_.items():
            v = bound.arguments[p]
            if not isinstance(v, gast.AST):
                v = ast_util.const(v) if _literal(v) else _helper_name(v, p)
            out.append(ast_util.copy_location(ast_util.assign(local, v), node))
            for n in ast_util.walk(out[-1]):
                if not Anno.ORIGIN.exists(n):
                    Anno.ORIGIN.add_to(n, Anno.ORIGIN.of(node))
        return self.block(out)

    def _field(self, name, attr, node):
        cls, locals_ = self.records[name]
        kind, value = plain_fields(cls)[attr]
        field = ast_util.name(locals_[value]) if kind == "param" else ast_util.const(value)
        return ast_util.copy_location(field, node)

    def _fields(self, name, node):
        cls = self.records[name][0]
        return [self._field(name, attr, node) for attr in plain_fields(cls)]

    def _record_attribute(self, node):
        """`obj.W` -> its field; `obj.norm` (a property) -> a call of its field function."""
        name, attr = node.value.id, node.attr
        cls = self.records[name][0]
        if attr in plain_fields(cls):
            return self._field(name, attr, node)
        member = inspect.getattr_static(cls, attr, None)
        if isinstance(member, property):
            call = ast_util.call(_helper_name(self.field_method(cls, attr), attr), self._fields(name, node))
            return ast_util.copy_location(call, node)
        self._unsupported(node, "reading %s.%s, which is not a field of %s (an object built from differentiated "
                          "values)" % (name, attr, cls.__name__), "pass its arrays")

    def _record_call(self, node, name, method):
        """`obj.m(x)` / `obj(x)` -> m's field function called on the fields and x."""
        cls = self.records[name][0]
        member = inspect.getattr_static(cls, method, None)
        if isinstance(member, staticmethod):
            node.func = _helper_name(getattr(cls, method), method)
            return node
        if not isinstance(member, types.FunctionType):
            self._unsupported(node, "calling %s.%s of %s, an object built from differentiated values"
                              % (name, method, cls.__name__), "use its methods, or pass its arrays")
        node.func = ast_util.copy_location(_helper_name(self.field_method(cls, method), method), node.func)
        node.args = self._fields(name, node) + node.args
        return node

    # -- values known at transform time
    def _static(self, node):
        """(True, value) when `node`'s value is known at transform time
        without running user code: constants, displays of them, globals
        and closure names (not Variables), known locals, attribute and item
        chains on those, and sg.grad(f) of a known f; else (False, None)."""
        if isinstance(node, gast.Constant):
            return True, node.value
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
            found, v = self._static(node.operand)
            if found and isinstance(v, (int, float, complex)) and not isinstance(v, bool):
                return True, (-v if isinstance(node.op, gast.USub) else v)
            return False, None
        if isinstance(node, (gast.Tuple, gast.List)):
            values = [self._static(e) for e in node.elts]
            if all(f for f, _ in values) and not any(isinstance(e, gast.Starred) for e in node.elts):
                vs = [v for _, v in values]
                return True, (tuple(vs) if isinstance(node, gast.Tuple) else vs)
            return False, None
        if isinstance(node, gast.Dict):
            if any(k is None for k in node.keys):
                return False, None
            keys = [self._static(k) for k in node.keys]
            values = [self._static(v) for v in node.values]
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
                if value is None or _arraylike(value) or type(value) in (list, tuple, dict):
                    return False, None
                return True, value
            if node.id in self.locals:
                return False, None
            found, value = self.ns.lookup(node.id)
            if not found or _is_value(value):
                return False, None
            return True, value
        if isinstance(node, (gast.Attribute, gast.Subscript)):
            if isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Slice):
                return False, None
            found, value = self._static(node.value)
            if not found:
                return False, None
            if isinstance(node, gast.Subscript):
                ok, key = self._static(node.slice)
                if not ok or _arraylike(value):
                    return False, None
            try:
                value = getattr(value, node.attr) if isinstance(node, gast.Attribute) else value[key]
            except Exception:
                return False, None
            ch = _chain(node)
            if ch is not None and ch[0].id not in self.known:
                self._walked(ch[0].id, ch[1], value)
            return (False, None) if _is_value(value) else (True, value)
        if isinstance(node, gast.Call) and _is_srcgrad_transform(Anno.CALLEE.of(node.func)):
            args = [self._static(a) for a in node.args]
            kwargs = {k.arg: self._static(k.value) for k in node.keywords}
            if all(f for f, _ in args) and all(f for f, _ in kwargs.values()) and None not in kwargs:
                try:
                    return True, Anno.CALLEE.of(node.func)(*[v for _, v in args],
                                                      **{k: v for k, (_, v) in kwargs.items()})
                except Exception:
                    return False, None
        return False, None

    def _known_value(self, value):
        """The _Known a local assigned `value` holds, or None: an object of a
        user class built from known values (the constructor runs once now,
        for the object's type and attributes: the compiled code reads the
        attributes of the object built at run time), a function or object
        read from a global or argument, a list or tuple of those, or an
        element of a known list."""
        if isinstance(value, gast.Call):
            cls = Anno.CALLEE.of(value.func)
            if _user_class(cls) and not any(isinstance(a, gast.Starred) for a in value.args) and \
                    all(k.arg is not None for k in value.keywords):
                args = [self._static(a) for a in value.args]
                kwargs = {k.arg: self._static(k.value) for k in value.keywords}
                if all(f for f, _ in args) and all(f for f, _ in kwargs.values()):
                    try:
                        obj = cls(*[v for _, v in args], **{k: v for k, (_, v) in kwargs.items()})
                    except Exception:
                        return None
                    return _Known(obj, False)
                return None
        if isinstance(value, (gast.List, gast.Tuple)):
            parts = [self._known_value(e) for e in value.elts]
            if parts and all(p is not None for p in parts):
                vs = [p.value for p in parts]
                return _Known(tuple(vs) if isinstance(value, gast.Tuple) else vs, any(p.shared for p in parts))
            return None
        found, obj = self._static(value)
        if not found or _arraylike(obj) or obj is None or isinstance(obj, (str, bytes)):
            return None
        if type(obj) in (list, tuple) and any(_arraylike(v) or v is None for v in obj):
            return None
        root = value
        while isinstance(root, (gast.Attribute, gast.Subscript)):
            root = root.value
        local = isinstance(root, gast.Name) and root.id in self.known and root.id not in self.params
        return _Known(obj, self.known[root.id].shared if local else True)


class _ConstantIndex(gast.NodeTransformer):
    """Reads of the loop index `name` -> the constant `k` (an unrolled copy)."""

    def __init__(self, name, k):
        self.name, self.k = name, k

    def visit_Name(self, node):
        if node.id == self.name and isinstance(node.ctx, gast.Load):
            return ast_util.copy_location(ast_util.const(self.k), node)
        return node


def _literal(v):
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
        return True
    return isinstance(v, tuple) and all(_literal(x) for x in v)


def _helper_name(obj, name):
    """A Name standing for `obj` in generated code (injected, not looked up)."""
    n = ast_util.name(name)
    Anno.CALLEE.add_to(n, obj)
    Anno.HELPER.add_to(n, True)
    return n


# SciPy functions whose result is an OptimizeResult/OdeResult (a dict whose
# keys are also attributes): `sol.y` is read as `sol["y"]`, which the
# container rules differentiate
_DICT_RESULTS = {("scipy.integrate", "solve_ivp")}       # (module prefix, name)


def _result_fields_as_items(node):
    """`sol.y` -> `sol["y"]` for a name assigned only from solve_ivp."""
    assigned = {}
    for n in ast_util.walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            assigned[n.id] = assigned.get(n.id, 0) + 1
    results = set()
    for n in ast_util.walk(node):
        if (isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], gast.Name)
                and isinstance(n.value, gast.Call) and assigned.get(n.targets[0].id) == 1):
            callee = Anno.CALLEE.of(n.value.func)
            module = (getattr(callee, "__module__", None) or "").split(".")
            name = getattr(callee, "__name__", None)
            if any((".".join(module[:k]), name) in _DICT_RESULTS for k in range(1, len(module) + 1)):
                results.add(n.targets[0].id)
    if not results:
        return

    class _Items(gast.NodeTransformer):
        def visit_Attribute(self, a):
            self.generic_visit(a)
            if (isinstance(a.value, gast.Name) and a.value.id in results and isinstance(a.ctx, gast.Load)
                    and not hasattr(dict, a.attr)):
                item = gast.Subscript(value=a.value, slice=ast_util.const(a.attr), ctx=gast.Load())
                return ast_util.copy_location(item, a)
            return a
    _Items().visit(node)


def resolve(parsed, examples=None, field_method=None):
    """Resolve `parsed` (a deep copy is transformed). `examples` maps
    parameter names to example argument values; with them, chains through
    objects (`self.kernel`) are cut exactly where the value becomes an array.
    `field_method(cls, name)` gives the FieldMethod of a method of a plain
    data-holder class (function.py); without it, objects built from
    differentiated values are not records."""
    node = ast_util.clone(parsed.node)
    work = copy.copy(parsed)
    work.node = node
    namer = Namer(stored_names(node) | {n.id for n in ast_util.walk(node) if isinstance(n, gast.Name)}
                  | ast_util.grad_of_names(node) | set(dir(builtins)))
    r = _Resolver(work, Namespace(parsed.func), examples or {}, namer)
    if field_method is not None:
        r.field_method = field_method
        r.find_records(node.body)
    node.body = r.block(node.body)
    _result_fields_as_items(node)
    return Resolution(node=node, params=list(parsed.params), leaves=list(r.leaves.values()),
                      free=r.free, locals=r.locals, examples=dict(examples or {}), namer=namer,
                      chains=r.chains)
