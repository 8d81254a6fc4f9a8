"""Lowering: chained assignment, `a = b = value`.

Requires: parse. Guarantees: every assignment has one target. Python
evaluates the value once and binds the targets left to right, so

    a = b = np.zeros(3)    ->    _chain = np.zeros(3); a = _chain; b = _chain

(the names share one object, as in Python: views.py sees them linked
through `_chain`, and an element assignment to one while the other is used
is refused as for any alias).
"""
from ...syntax import ast_util
from .common import Block


class _Chained(Block):

    def visit_Assign(self, node):
        if len(node.targets) == 1:
            return node
        tmp = self.ctx.namer.fresh("_chain")
        out = [ast_util.copy_location(ast_util.assign(tmp, node.value), node)]
        for target in node.targets:
            out.append(ast_util.copy_location(ast_util.assign(target, ast_util.name(tmp)), node))
        return out


def transform(fdef, ctx):
    fdef.body = _Chained(ctx).visit_block(fdef.body)
    return fdef
