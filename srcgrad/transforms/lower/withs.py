"""Lowering: `with` blocks, and the `sg.insert_grad_of` marker.

Requires: check (no return, break or continue leaves a with block; the
targets are names). Guarantees:
- `with A as a, B: body` is `_with = A; a = with_enter(_with); _with_1 = B;
  with_enter(_with_1); body; with_exit(_with_1); with_exit(_with)`
  (srcgrad/runtime/syntax.py): the forward sweep runs the body inside the
  context manager (np.errstate, warnings.catch_warnings), the reverse sweep
  outside it; the context manager itself is never differentiated. An
  exception in the body exits them through Compiled.run;
- `with sg.insert_grad_of(x) as bx: body` is one marker statement,
  `grad_of(x)`, carrying (x, bx, body) as its GRAD_OF annotation: the
  forward sweeps drop it, the reverse sweep runs the body at its place
  with `bx` bound to the adjoint of `x` accumulated so far, and takes back
  what `bx` holds (Tangent's insert_grad_of). The names the body assigns
  are its own: a use outside the block raises UnsupportedSyntaxError, and
  `parsed.grad_of` is set.
"""
import gast

from ...errors import fail
from ...runtime import syntax as runtime_syntax
from ...syntax import ast_util
from ...syntax.anno import Anno
from ...syntax.templates import replace
from .common import Block, helper


class _Withs(Block):

    compound = Block.compound + (gast.With,)

    def visit_With(self, node):
        self.generic_visit(node)
        if self.is_grad_of(node):
            return self.grad_of(node)
        pre, post = [], []
        for item in node.items:
            cm = ast_util.name(self.ctx.namer.fresh("_with"))
            pre += replace("CM = MANAGER", CM=cm, MANAGER=item.context_expr)
            enter = helper(runtime_syntax.with_enter, "with_enter")
            if item.optional_vars is not None:
                pre += replace("TARGET = ENTER(CM)", TARGET=item.optional_vars, ENTER=enter, CM=cm)
            else:
                pre += replace("ENTER(CM)", ENTER=enter, CM=cm)
            post = replace("EXIT(CM)", EXIT=helper(runtime_syntax.with_exit, "with_exit"), CM=cm) + post
        return pre + node.body + post

    def is_grad_of(self, node):
        call = node.items[0].context_expr
        return isinstance(call, gast.Call) and getattr(self.ctx.static(call.func), "__srcgrad_grad_of__", False)

    def grad_of(self, node):
        """`with sg.insert_grad_of(x) as bx: body` -> the marker `grad_of(x)`."""
        parsed = self.ctx.parsed
        item = node.items[0]
        call = item.context_expr
        if len(node.items) != 1:
            fail(parsed, node, "sg.insert_grad_of with other context managers in one with statement",
                 op_by_op=False)
        if len(call.args) != 1 or call.keywords or not isinstance(call.args[0], gast.Name):
            fail(parsed, call, "sg.insert_grad_of of something other than one variable",
                 "name the value first: y = ...; with sg.insert_grad_of(y) as by:", op_by_op=False)
        target = item.optional_vars
        if target is not None and not isinstance(target, gast.Name):
            fail(parsed, target, "sg.insert_grad_of(x) as a target other than a name", op_by_op=False)
        for n in ast_util.walk(ast_util.module(node.body)):
            if isinstance(n, (gast.FunctionDef, gast.ClassDef, gast.Lambda, gast.Yield, gast.YieldFrom)):
                fail(parsed, n, "a %s inside an insert_grad_of block" % type(n).__name__, op_by_op=False)
        own = set(ast_util.names_stored(ast_util.module(node.body))) | ({target.id} if target is not None else set())
        self.ctx.grad_of_blocks.append((node, own))
        marker, = replace("GRAD_OF(X)", GRAD_OF=helper(runtime_syntax.grad_of, "grad_of"),
                          X=ast_util.name(call.args[0].id))
        return Anno.GRAD_OF.add_to(marker, (call.args[0].id, target.id if target is not None else None, node.body))


def _check_grad_of_names(body, ctx):
    """The names an insert_grad_of body assigns exist in the reverse
    sweep only: used anywhere else in the function, they are rejected."""
    for block, own in ctx.grad_of_blocks:
        inside = {id(n) for n in ast_util.walk(ast_util.module(block.body))}
        for n in ast_util.walk(ast_util.module(body)):
            if isinstance(n, gast.Name) and n.id in own and id(n) not in inside:
                fail(ctx.parsed, n, "%s, assigned inside an insert_grad_of block, used outside it" % n.id,
                     "the block runs in the backward pass only; use another name outside it", op_by_op=False)


def transform(fdef, ctx):
    fdef.body = _Withs(ctx).visit_block(fdef.body)
    if ctx.grad_of_blocks:
        _check_grad_of_names(fdef.body, ctx)
        ctx.parsed.grad_of = True
    return fdef
