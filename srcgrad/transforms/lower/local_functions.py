"""Lowering: local functions (`def` and `lambda` inside the function).

Requires: check. Guarantees: no local `def` is left in the function's
body, nor a lambda assigned to a name; each is recorded in
`ctx.local_fns`, and `inline_call` (run by comprehensions.py where one is
called, also inside a comprehension) replaces a call by the function's
body, lowered on its own (with its own context, `Lowering.inlined`), its
names renamed apart (`<function>_<name>`) and its result assigned to the
call's target. A local function used as a value (passed on, stored,
returned), called with *args, **kwargs or keyword-only parameters, or
recursively, raises UnsupportedSyntaxError: compiled code has no object to
call for it.
"""
import copy

import gast

from ...errors import fail
from ...syntax import ast_util
from ...syntax.templates import replace
from ..base import inherit_origin
from .common import Block


class _LocalFunctions(Block):

    def visit_FunctionDef(self, node):
        if node.decorator_list:
            fail(self.ctx.parsed, node, "a decorated nested function")
        self.ctx.local_fns[node.name] = node
        return None

    def visit_Assign(self, node):
        if (len(node.targets) == 1 and isinstance(node.targets[0], gast.Name)
                and isinstance(node.value, gast.Lambda)):
            self.ctx.local_fns[node.targets[0].id] = node.value
            return None
        return node


def _check_values(body, ctx):
    """A local def or lambda is inlined where it is called; used as a
    value (passed to another function, stored, returned) it has no
    object the compiled code could call: refused by name."""
    if not ctx.local_fns:
        return
    called = set()
    for s in body:
        for n in ast_util.walk(s):
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Name):
                called.add(id(n.func))
    for s in body:
        for n in ast_util.walk(s):
            if (isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in ctx.local_fns
                    and id(n) not in called):
                fail(ctx.parsed, n, "the local function %s used as a value (passed, stored or returned)" % n.id,
                     "srcgrad inlines local functions where they are called; define %s at module "
                     "level to pass it on" % n.id)


def inline_call(call, target, ctx):
    """Statements computing the local function call `call` into the name `target`."""
    parsed = ctx.parsed
    fn = ctx.local_fns[call.func.id]
    args = fn.args
    params = [a.id for a in args.args]
    if args.vararg or args.kwarg or args.kwonlyargs:
        fail(parsed, call, "a local function with *args, **kwargs or keyword-only parameters")
    renames = {}
    stored = {n.id for n in ast_util.walk(fn) if isinstance(n, gast.Name)
              and isinstance(n.ctx, (gast.Store, gast.Param))}
    for n in stored:
        renames[n] = ctx.namer.fresh("%s_%s" % (call.func.id, n))
    values = {}
    for p, a in zip(params, call.args):
        values[p] = a
    for k in call.keywords:
        if k.arg not in params:
            fail(parsed, call, "an unknown keyword %r in a call of %s" % (k.arg, call.func.id))
        values[k.arg] = k.value
    defaults = dict(zip(params[len(params) - len(args.defaults):], args.defaults))
    pre = []
    for p in params:
        v = values.get(p, defaults.get(p))
        if v is None:
            fail(parsed, call, "a call of %s without argument %r" % (call.func.id, p))
        pre += replace("PARAM = ARG", PARAM=ast_util.name(renames[p]), ARG=v)
    if isinstance(fn, gast.Lambda):
        body = inherit_origin(replace("return VALUE", VALUE=fn.body), fn)
    else:
        body = ast_util.clone(fn.body)
        if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
            body = body[1:]
    for s in body:
        for n in ast_util.walk(s):
            if isinstance(n, gast.Name) and n.id in renames:
                n.id = renames[n.id]
    # a local function's returns: lowered on its own, then its result is assigned
    fake = copy.copy(parsed.node)
    fake.body = body
    inner = copy.copy(parsed)
    inner.node = fake
    if any(isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id == call.func.id
           for n in ast_util.walk(fake)):
        fail(parsed, call, "a recursive local function (%s)" % call.func.id, "define it at module level")
    lowered = ctx.lower_body(fake, ctx.inlined(inner, set(renames.values()))).body
    ret = lowered[-1]
    if not isinstance(ret, gast.Return):
        fail(parsed, call, "a local function without a return value")
    result = replace("TARGET = VALUE", TARGET=ast_util.name(target), VALUE=ret.value)
    return inherit_origin(pre, call) + lowered[:-1] + inherit_origin(result, call)


def transform(fdef, ctx):
    fdef.body = _LocalFunctions(ctx).visit_block(fdef.body)
    _check_values(fdef.body, ctx)
    return fdef
