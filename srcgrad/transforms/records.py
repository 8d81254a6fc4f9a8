"""Records: objects of plain data-holder classes in differentiated code.

An object built inside differentiated code from differentiated values, of a
class whose `__init__` only stores its arguments (a dataclass, or a class
plain_fields accepts), is a record of its fields: its methods are
compiled as functions of the fields (srcgrad/methods.py FieldMethod), so
derivatives flow to the fields. `SelfFields` rewrites such a method's body.

Requires: a parsed and lowered method body. Guarantees: no use of `self`
other than through its fields, methods and class attributes remains
(FieldMethod refuses what is left).
"""
import ast
import dataclasses
import inspect
import textwrap
import types
import weakref

import gast

from . import chains
from ..syntax import ast_util
from ..syntax.anno import Anno


class SelfFields(ast_util.NodeTransformer):
    """In a FieldMethod's body: `self.W` -> the field's parameter,
    `self.m(...)` / `self(...)` / `self.prop` -> calls of field functions
    (on the fields), `self.CONST` -> the class attribute's value,
    `self.static(...)` -> the static method.

    cls: the record's class; me: the name of `self`; params: {field: its
    parameter}; field_method(cls, name): the FieldMethod of a method."""

    def __init__(self, cls, me, params, field_method):
        self.cls, self.me, self.params, self.field_method = cls, me, params, field_method

    def fields(self):
        return [ast_util.name(p) for p in self.params.values()]

    def is_self(self, node):
        return isinstance(node, gast.Name) and node.id == self.me and isinstance(node.ctx, gast.Load)

    def callee(self, name):
        n = ast_util.name(name if name.isidentifier() else "call")
        Anno.CALLEE.add_to(n, self.field_method(self.cls, name))
        Anno.HELPER.add_to(n, True)
        return n

    def visit_Call(self, node):
        func = node.func
        node.args = [self.visit(a) for a in node.args]
        for k in node.keywords:
            k.value = self.visit(k.value)
        if self.is_self(func):
            return ast_util.copy_location(ast_util.call(self.callee("__call__"), self.fields() + node.args,
                                                        node.keywords), node)
        if isinstance(func, gast.Attribute) and self.is_self(func.value):
            member = inspect.getattr_static(self.cls, func.attr, None)
            if isinstance(member, types.FunctionType):
                return ast_util.copy_location(ast_util.call(self.callee(func.attr), self.fields() + node.args,
                                                            node.keywords), node)
            if isinstance(member, (staticmethod, classmethod)):
                node.func = self.value(getattr(self.cls, func.attr), func.attr)
                return node
        node.func = self.visit(func)
        return node

    def value(self, obj, name):
        n = ast_util.name(name)
        Anno.CALLEE.add_to(n, obj)
        Anno.HELPER.add_to(n, True)
        return n

    def visit_Attribute(self, node):
        if self.is_self(node.value) and isinstance(node.ctx, gast.Load):
            attr = node.attr
            if attr in self.params:
                return ast_util.copy_location(ast_util.name(self.params[attr]), node)
            member = inspect.getattr_static(self.cls, attr, None)
            if isinstance(member, property):
                return ast_util.copy_location(ast_util.call(self.callee(attr), self.fields()), node)
            if member is not None and not isinstance(member, (types.FunctionType, classmethod)):
                return ast_util.copy_location(self.value(getattr(self.cls, attr), attr), node)
        return self.generic_visit(node)


def plain_fields(cls):
    """{attribute: ("param", name) | ("const", value)} when `cls` is a plain
    data holder (a dataclass without __post_init__, or a class whose
    __init__ only stores its parameters or constants in attributes, with
    the default __new__ and attribute access, not a context manager); else
    None."""
    if not chains.user_class(cls) or cls.__new__ is not object.__new__:
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


# SciPy functions whose result is an OptimizeResult/OdeResult (a dict whose
# keys are also attributes): `sol.y` is read as `sol["y"]`, which the
# container rules differentiate
_DICT_RESULTS = {("scipy.integrate", "solve_ivp")}       # (module prefix, name)


def result_fields_as_items(node):
    """`sol.y` -> `sol["y"]` for a name assigned only from solve_ivp.
    Returns the walk of `node` when nothing changed (else None)."""
    assigned = {}
    nodes = ast_util.walk(node)
    for n in nodes:
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            assigned[n.id] = assigned.get(n.id, 0) + 1
    results = set()
    for n in nodes:
        if (isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], gast.Name)
                and isinstance(n.value, gast.Call) and assigned.get(n.targets[0].id) == 1):
            callee = Anno.CALLEE.of(n.value.func)
            module = (getattr(callee, "__module__", None) or "").split(".")
            name = getattr(callee, "__name__", None)
            if any((".".join(module[:k]), name) in _DICT_RESULTS for k in range(1, len(module) + 1)):
                results.add(n.targets[0].id)
    if not results:
        return nodes

    class _Items(gast.NodeTransformer):
        def visit_Attribute(self, a):
            self.generic_visit(a)
            if (isinstance(a.value, gast.Name) and a.value.id in results and isinstance(a.ctx, gast.Load)
                    and not hasattr(dict, a.attr)):
                item = gast.Subscript(value=a.value, slice=ast_util.const(a.attr), ctx=gast.Load())
                return ast_util.copy_location(item, a)
            return a
    _Items().visit(node)


class RecordResolution:
    """The resolver's handling of records (resolve.py `_Resolver`): locals
    bound to objects of plain data-holder classes built from differentiated
    values, their fields as locals, their methods as field functions."""

    def find_records(self, body):
        """The local names whose every assignment builds an object of one
        plain data-holder class from values not all known at transform
        time (objects built from constants are known values instead)."""
        stores, classes = {}, {}
        nodes = ast_util.walk(ast_util.module(body))
        for n in nodes:
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                stores[n.id] = stores.get(n.id, 0) + 1
        for n in nodes:
            if isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], gast.Name) \
                    and isinstance(n.value, gast.Call):
                found, cls = self.static(n.value.func)
                if found and plain_fields(cls) is not None and not any(
                        isinstance(a, gast.Starred) for a in n.value.args) and \
                        all(k.arg is not None for k in n.value.keywords):
                    static = all(self.static(a)[0] for a in n.value.args) and \
                        all(self.static(k.value)[0] for k in n.value.keywords)
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
                v = ast_util.const(v) if chains.literal(v) else chains.helper_name(v, p)
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
            call = ast_util.call(chains.helper_name(self.field_method(cls, attr), attr), self._fields(name, node))
            return ast_util.copy_location(call, node)
        self._unsupported(node, "reading %s.%s, which is not a field of %s (an object built from differentiated "
                          "values)" % (name, attr, cls.__name__), "pass its arrays")

    def _record_call(self, node, name, method):
        """`obj.m(x)` / `obj(x)` -> m's field function called on the fields and x."""
        cls = self.records[name][0]
        member = inspect.getattr_static(cls, method, None)
        if isinstance(member, staticmethod):
            node.func = chains.helper_name(getattr(cls, method), method)
            return node
        if not isinstance(member, types.FunctionType):
            self._unsupported(node, "calling %s.%s of %s, an object built from differentiated values"
                              % (name, method, cls.__name__), "use its methods, or pass its arrays")
        node.func = ast_util.copy_location(chains.helper_name(self.field_method(cls, method), method), node.func)
        node.args = self._fields(name, node) + node.args
        return node

    # -- values known at transform time
