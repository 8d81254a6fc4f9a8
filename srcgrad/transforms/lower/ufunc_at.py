"""Lowering: `np.add.at(a, i, b)` and `np.subtract.at(a, i, b)` statements
become whole-array assignments.

Requires: nothing (runs before views and mutations, which then treat the
result as any element assignment written by the user). Guarantees: the
expression statement `np.add.at(a, i, b)` (or `np.subtract.at`), where
`np.add` is NumPy's ufunc before the function runs (a global, a closure
cell: `ctx.static`), `a` a name and the three arguments positional, is
`a[...] = add_at(a, i, b)` (rules/helpers/broadcast.py: `a` after NumPy's
unbuffered scatter-add, as a new array). Element assignment then makes it
functional, and aliases, NumPy views of `a` and `a` a parameter are handled
(checked, or refused by name) as for `a[j] = v`. The value is NumPy's:
repeated indices accumulate, `b` broadcasts, `a` keeps its dtype.

Any other `ufunc.at` call (np.multiply.at, np.maximum.at, np.add.at into an
expression, or its value used) is left as it is, and refused where calls
are classified (anf_calls.py `check_mutation`, rules/mutation.py).
"""
import gast
import numpy as np

from ...rules.helpers.broadcast import add_at, subtract_at
from ...syntax import ast_util
from ...syntax.templates import replace
from ..base import inherit_origin
from .common import Block, helper

_PURE = {"add": (np.add, add_at), "subtract": (np.subtract, subtract_at)}


class _UfuncAt(Block):

    def visit_Expr(self, node):
        call = node.value
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and call.func.attr == "at"
                and isinstance(call.func.value, gast.Attribute) and call.func.value.attr in _PURE
                and len(call.args) == 3 and not call.keywords
                and not any(isinstance(a, gast.Starred) for a in call.args)
                and isinstance(call.args[0], gast.Name)):
            return node
        ufunc, pure = _PURE[call.func.value.attr]
        if self.ctx.static(call.func.value) is not ufunc:
            return node
        a, indices, b = call.args
        # a[...] = add_at(a, i, b): the arguments are evaluated first, as NumPy's call evaluates them
        out = replace("A[...] = F(A, I, B)", A=ast_util.name(a.id), I=indices, B=b, F=helper(pure, pure.__name__))
        return inherit_origin(out, node)


def transform(fdef, ctx):
    fdef.body = _UfuncAt(ctx).visit_block(fdef.body)
    return fdef
