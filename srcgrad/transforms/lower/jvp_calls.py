"""Lowering: `sg.jvp(f, (p_1, ..., p_n), (t_1, ..., t_n))` in differentiated code.

Requires: check. Guarantees: such a call, with tuple or list displays of
primals and tangents (a tangent written `None` is not given), is a call of
`jvp_function(f, n, mask)(p_1, ..., p_n, t_i...)` (functional.py's
`JvpOf`: the primals, then the given tangents), unpacked by a statement
of its own before the statement it was in (`_jvp_out, _jvp_tan = ...`;
the call is then the display `(_jvp_out, _jvp_tan)`, and `[0]`, `[1]` of
it the name), which the resolver
evaluates at transform time for a known f like `sg.grad(f)`. The JVP is
then a call of f's generated tangent code, differentiated again like any
generated function (reverse over forward, forward over forward), as JAX
differentiates `jax.jvp`. Other spellings (primals in a variable, keyword
arguments, a call in an `if`/`while` test or a `for` header) are left as
they are.
"""
import gast

from ...syntax import ast_util
from .common import Block, helper


class _JvpCalls(Block):

    def simple(self, node):
        rewriter = _Rewriter(self.ctx)
        node = rewriter.visit(node)
        return rewriter.pre + [node]

    visit_Assign = visit_AugAssign = visit_Return = visit_Expr = simple


class _Rewriter(ast_util.NodeTransformer):

    def __init__(self, ctx):
        self.ctx = ctx
        self.pre = []

    def visit_FunctionDef(self, node):
        return node         # (a local function's body is lowered where it is inlined)

    def visit_Lambda(self, node):
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        if node.keywords or len(node.args) != 3:
            return node
        make = getattr(self.ctx.static(node.func), "__srcgrad_jvp__", None)
        if make is None:
            return node
        f, primals, tangents = node.args
        displays = (gast.Tuple, gast.List)
        if not (isinstance(primals, displays) and isinstance(tangents, displays)) or \
                len(primals.elts) != len(tangents.elts) or \
                any(isinstance(e, gast.Starred) for e in primals.elts + tangents.elts):
            return node
        mask = tuple(not (isinstance(t, gast.Constant) and t.value is None) for t in tangents.elts)
        if not any(mask):
            return node
        callee = gast.Call(func=helper(make, "jvp_function"),
                           args=[f, gast.Constant(value=len(primals.elts), kind=None),
                                 gast.Constant(value=mask, kind=None)], keywords=[])
        given = [t for t, m in zip(tangents.elts, mask) if m]
        call = gast.Call(func=callee, args=list(primals.elts) + given, keywords=[])
        out, tan = self.ctx.namer.fresh("_jvp_out"), self.ctx.namer.fresh("_jvp_tan")
        self.ctx.locals.update((out, tan))
        assign = gast.Assign(targets=[ast_util.tuple_([ast_util.name(out, store=True), ast_util.name(tan, store=True)],
                                                      store=True)], value=call, type_comment=None)
        self.pre.append(ast_util.copy_location(assign, node))
        return ast_util.tuple_([ast_util.name(out), ast_util.name(tan)])

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if isinstance(node.value, gast.Tuple) and isinstance(node.slice, gast.Constant) and \
                type(node.slice.value) is int and -len(node.value.elts) <= node.slice.value < len(node.value.elts):
            return node.value.elts[node.slice.value]
        return node


def transform(fdef, ctx):
    """Rewrite the sg.jvp calls of `fdef`'s body (see the module docstring)."""
    fdef.body = _JvpCalls(ctx).visit_block(fdef.body)
    return fdef
