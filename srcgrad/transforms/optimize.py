"""Peephole simplification of generated code, for readability.

Requires: reverse (inlined rules). Folds arithmetic on constants (`2 - 1`
becomes `1`) and `x ** 1` to `x`. Never folds `x * 0` to 0 (that would hide
NaN and inf, as JAX's symbolic zeros also refuse to).
"""
import operator

import gast

from . import ast_util

_FOLD = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul}


class _Fold(gast.NodeTransformer):
    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right = node.left, node.right
        if (isinstance(left, gast.Constant) and isinstance(right, gast.Constant)
                and type(node.op) in _FOLD and _number(left.value) and _number(right.value)):
            return ast_util.const(_FOLD[type(node.op)](left.value, right.value))
        if isinstance(node.op, gast.Pow) and isinstance(right, gast.Constant) and right.value == 1 \
                and not isinstance(right.value, bool):
            return left
        return node


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def fold(stmts):
    """Simplify the statements in place; returns them."""
    f = _Fold()
    return [f.visit(s) for s in stmts]
