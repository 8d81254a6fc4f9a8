"""Lowering: list comprehensions and calls of local functions become statements.

Requires: local_functions (`ctx.local_fns` known). Guarantees: no list
comprehension or generator expression is left, nor a call of a local
function: each is computed by statements placed before the statement it
is in (hoisted, innermost first; also the whole test of an `if` or the
iterable of a `for`), into a fresh name that the statement then reads:
- `[elt for t in it if c]` -> `comp = []; for t_1 in it: if c: comp =
  list_append(comp, elt)` (the targets renamed apart, except in the first
  iterable, which Python evaluates in the enclosing scope; a comprehension
  or local call in the element or the conditions is hoisted inside the loop);
- `g(a)` for a local function g -> its body, inlined (local_functions.py).
One inside a lambda, a conditional expression, an and/or or a while
condition (which would run it a different number of times) raises
UnsupportedSyntaxError.
"""
import gast

from ...errors import fail
from ...rules.python import containers
from ...syntax import ast_util
from ...syntax.templates import replace
from ..base import Transformer, inherit_origin
from .common import Block, helper
from .local_functions import inline_call

_COMPREHENSIONS = (gast.ListComp, gast.GeneratorExp)


def _hoistable(node, ctx):
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id in ctx.local_fns:
        return True
    return isinstance(node, _COMPREHENSIONS)


class _Hoist(Transformer):
    """Replace the hoistable expressions inside `root` (innermost first) by
    fresh names, appending the statements computing them to `pre`."""

    def __init__(self, ctx, root, pre):
        super().__init__()
        self.ctx, self.root, self.pre = ctx, root, pre

    def generic_visit(self, node):
        ctx = self.ctx
        if isinstance(node, (gast.Lambda, gast.IfExp, gast.BoolOp)) and node is not self.root:
            if any(_hoistable(n, ctx) for n in ast_util.walk(node)):
                fail(ctx.parsed, node, "a local function call or comprehension inside a lambda, "
                     "conditional expression or and/or")
            return node
        if not isinstance(node, _COMPREHENSIONS) or node is self.root:
            # (a comprehension's element and conditions are hoisted inside its loop)
            node = super().generic_visit(node)
        if node is not self.root and _hoistable(node, ctx):
            tmp = ctx.namer.fresh(node.func.id if isinstance(node, gast.Call) else "comp")
            if isinstance(node, gast.Call):
                self.pre.extend(inline_call(node, tmp, ctx))
            else:
                self.pre.extend(_comprehension(node, tmp, ctx))
            return ast_util.name(tmp)
        return node


class _Hoisting(Block):
    """Each statement is kept, its hoisted expressions computed before it
    (inserted statements, located by what they compute: not a replacement)."""

    def visit_block(self, stmts):
        out = []
        for s in stmts:
            s = self.visit(s)          # (the blocks of a compound statement first)
            out.extend(self.hoisted(s))
            out.append(s)
        return out

    def hoisted(self, s):
        """The statements computing the hoistable expressions of `s`."""
        pre = []
        if isinstance(s, (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr, gast.Return)):
            _Hoist(self.ctx, s, pre).visit(s)
        elif isinstance(s, (gast.If, gast.For)):
            # the header itself may be hoisted (`for y in [...]:`, `if g(x):`): the statement is the root
            field = "test" if isinstance(s, gast.If) else "iter"
            setattr(s, field, _Hoist(self.ctx, s, pre).visit(getattr(s, field)))
        elif isinstance(s, gast.While) and any(_hoistable(n, self.ctx) for n in ast_util.walk(s.test)):
            fail(self.ctx.parsed, s, "a call of a local function in a while condition")
        return pre


def _comprehension(comp, target, ctx):
    """[elt for t in it if c ...] -> target = []; for ...: if c: target = list_append(...)"""
    if any(g.is_async for g in comp.generators):
        fail(ctx.parsed, comp, "async comprehension")
    renames = {}
    for g in comp.generators:
        for n in ast_util.walk(g.target):
            if isinstance(n, gast.Name):
                renames.setdefault(n.id, ctx.namer.fresh(n.id))

    def rename(node):
        node = ast_util.clone(node)
        for n in ast_util.walk(node):
            if isinstance(n, gast.Name) and n.id in renames:
                n.id = renames[n.id]
        return node
    inner = replace("T = APPEND(T, E)", T=ast_util.name(target), E=rename(comp.elt),
                    APPEND=helper(containers.list_append, "list_append"))
    for g in reversed(comp.generators):
        for cond in reversed(g.ifs):
            inner = [ast_util.if_(rename(cond), inner, [])]
        # the first iterable is evaluated in the enclosing scope (`[x for x in x]` iterates over the outer x)
        it = ast_util.clone(g.iter) if g is comp.generators[0] else rename(g.iter)
        inner = [ast_util.for_(rename(g.target), it, inner)]
    out = replace("T = []", T=ast_util.name(target)) + inner
    # local functions called in the element or the conditions: inlined there
    return _Hoisting(ctx).visit_block(inherit_origin(out, comp))


def transform(fdef, ctx):
    fdef.body = _Hoisting(ctx).visit_block(fdef.body)
    return fdef
