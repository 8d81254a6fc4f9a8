"""Records: objects of plain data-holder classes in differentiated code.

An object built inside differentiated code from differentiated values, of a
class whose `__init__` only stores its arguments (a dataclass, or a class
resolve.plain_fields accepts), is a record of its fields: its methods are
compiled as functions of the fields (srcgrad/methods.py FieldMethod), so
derivatives flow to the fields. `SelfFields` rewrites such a method's body.

Requires: a parsed and lowered method body. Guarantees: no use of `self`
other than through its fields, methods and class attributes remains
(FieldMethod refuses what is left).
"""
import inspect
import types

import gast

from ..syntax import ast_util
from ..syntax.anno import Anno


class SelfFields(gast.NodeTransformer):
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
