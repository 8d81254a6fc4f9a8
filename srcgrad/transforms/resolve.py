"""Resolve names to runtime objects at transform time, and find the leaves.

Requires: parse, check. Guarantees, on the returned `Resolution`:
- every call's `func` node carries `_sg_callee` (the object called) or
  `_sg_method` (an ndarray method name on a local array value);
- every read of a Variable/Tensor that is not a parameter (a global, a
  closure cell, or an attribute/item chain such as `self.kernel` or
  `params['W']`) is replaced by a fresh local name, and listed in `leaves`
  with the accessor that fetches its value at call time. Leaves are inputs
  of the generated code like the parameters;
- `free` maps each global/closure name read to the object it held, so a
  later call can check nothing was rebound (stale code is never run).
"""
import builtins
import copy
import types
from dataclasses import dataclass, field

import gast
import numpy as np

from ..errors import ResolutionError, UnsupportedSyntaxError, where
from . import ast_util
from .naming import Namer

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


class Namespace:
    """The names a function sees: closure cells, globals, builtins (live)."""

    def __init__(self, func):
        self.func = func
        self.globals = func.__globals__
        code = func.__code__
        self.cells = dict(zip(code.co_freevars, func.__closure__ or ()))

    def lookup(self, name):
        if name in self.cells:
            try:
                return True, self.cells[name].cell_contents
            except ValueError:
                return False, None
        if name in self.globals:
            return True, self.globals[name]
        b = self.globals.get("__builtins__", builtins)
        b = b if isinstance(b, dict) else vars(b)
        if name in b:
            return True, b[name]
        return False, None


@dataclass
class Resolution:
    node: gast.FunctionDef
    params: list
    leaves: list = field(default_factory=list)
    free: dict = field(default_factory=dict)        # name -> object seen at transform time
    locals: set = field(default_factory=set)


def _is_value(obj):
    from ..tensor import Tensor
    return isinstance(obj, Tensor)


def _arraylike(obj):
    from ..tensor import Tensor
    return isinstance(obj, (Tensor, np.ndarray, np.generic, int, float, complex, bool))


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
    for n in gast.walk(fdef):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Param)):
            names.add(n.id)
    return names


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

    # -- helpers
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
        func = node.func
        node.args = [self.visit(a) for a in node.args]
        for k in node.keywords:
            k.value = self.visit(k.value)
        if getattr(func, "_sg_callee", None) is not None:
            return node       # a srcgrad helper placed by lower.py
        if isinstance(func, gast.Name):
            example = self.examples.get(func.id) if func.id in self.params else None
            if example is not None and callable(example):
                func._sg_callee = example      # a function or callable object passed in
                return node
            if func.id in self.locals:
                filename, lineno, col = self.parsed.origin(func)
                raise UnsupportedSyntaxError(
                    "calling %s, an object or function built inside the differentiated code" % func.id,
                    filename, lineno, col, "call module-level functions; build objects outside")
            known, value, _ = self._root_value(func)
            func._sg_callee = value
            return node
        if isinstance(func, gast.Attribute):
            ch = _chain(func)
            if ch is not None:
                root, steps = ch
                known, value, is_object = self._root_value(root)
                if root.id not in self.locals and root.id not in self.params and known:
                    # a module path such as np.linalg.solve, or a global object's method
                    obj = value
                    try:
                        for kind, key, _ in steps:
                            obj = getattr(obj, key) if kind == "attr" else obj[key]
                    except Exception:
                        self._error(func, "srcgrad could not resolve %s" % ast_util.to_source(func))
                    if isinstance(value, types.ModuleType) or callable(obj):
                        func._sg_callee = obj
                        if not isinstance(value, types.ModuleType):
                            func._sg_opaque_method = True
                        return node
            # a method on a value: x.sum(), (a @ b).reshape(...), self.kernel.dot(x)
            is_object = self._is_object_expr(func.value)
            func.value = self.visit(func.value)
            if func.attr in ARRAY_ATTRS and not is_object:
                func._sg_method = func.attr
            else:
                func._sg_callee = self._example_attribute(func) if is_object else None
                func._sg_opaque_method = True
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
        return value

    def _is_object_expr(self, node):
        """Is `node` a chain ending on a (known) non-array object?"""
        ch = _chain(node) if not isinstance(node, gast.Name) else (node, [])
        if ch is None:
            return False
        root, steps = ch
        if root.id in self.locals and root.id not in self.params:
            return False
        known, value, is_object = self._root_value(root)
        if not known:
            return is_object and not steps
        try:
            for kind, key, _ in steps:
                value = getattr(value, key) if kind == "attr" else value[key]
        except Exception:
            return False
        return not _arraylike(value)

    def visit_Attribute(self, node):
        return self._visit_chain(node)

    def visit_Subscript(self, node):
        if isinstance(node.ctx, gast.Load):
            return self._visit_chain(node)
        return self.generic_visit(node)

    def _visit_chain(self, node):
        ch = _chain(node)
        if ch is None:
            return self.generic_visit(node)
        root, steps = ch
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
        last = taken[-1][2]
        if known and not _is_value(obj):
            # not a Tensor/Variable (a constant, a sub-object): read live
            return self.generic_visit(node)
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
            return node
        if node.id in self.params:
            example = self.examples.get(node.id)
            if example is not None and not _arraylike(example):
                node._sg_value = example    # an object passed on: the callee knows it too
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
            node._sg_value = value         # a function or object passed on as an argument
        return node


def resolve(parsed, examples=None):
    """Resolve `parsed` (a deep copy is transformed). `examples` maps
    parameter names to example argument values; with them, chains through
    objects (`self.kernel`) are cut exactly where the value becomes an array."""
    node = ast_util.clone(parsed.node)
    work = copy.copy(parsed)
    work.node = node
    namer = Namer(stored_names(node) | {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
                  | set(dir(builtins)))
    r = _Resolver(work, Namespace(parsed.func), examples or {}, namer)
    node.body = [r.visit(s) for s in node.body]
    res = Resolution(node=node, params=list(parsed.params), leaves=list(r.leaves.values()),
                     free=r.free, locals=r.locals)
    res.examples = dict(examples or {})
    res.namer = namer
    return res
