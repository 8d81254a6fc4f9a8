"""Lowering: local functions (`def` and `lambda` inside the function).

Requires: check. Guarantees: no local `def` is left in the function's
body, nor a lambda assigned to a name; each is recorded in
`ctx.local_fns`, and `inline_call` (run by comprehensions.py where one is
called, also inside a comprehension) replaces a call by the function's
body, lowered on its own (with its own context, `Lowering.inlined`), its
names renamed apart (`<function>_<name>`) and its result assigned to the
call's target. A default that is not a constant or a global is evaluated
where the def or lambda is, as Python does (`<function>_<param>_default =
<default>` in its place, re-run with it in a loop), and the inlined calls
read that name. A local function used as a value (passed on, stored,
returned), with *args or **kwargs (as parameters or in a call), or called
recursively, raises UnsupportedSyntaxError: compiled code has no object to
call for it. So does a local function's name bound otherwise too (a
second def or lambda, an assignment, a parameter): calls are inlined by
name, whichever binding Python would read there. An inlined body's own
local functions are renamed apart with its other names.
"""
import copy

import gast

from ...errors import fail
from ...syntax import ast_util
from ...syntax.templates import replace
from ..base import inherit_origin
from .common import Block


def _fixed(e, ctx):
    """Does the default `e` denote the same object wherever it is evaluated
    (a constant, a global, a builtin, a module's attribute like np.pi)?"""
    if isinstance(e, gast.Constant):
        return True
    if isinstance(e, gast.UnaryOp) and isinstance(e.operand, gast.Constant):
        return True
    return isinstance(e, (gast.Name, gast.Attribute)) and ctx.static(e) is not None


def _bind_defaults(fn, name, ctx):
    """Python evaluates a def's or lambda's defaults once, where it is
    defined (at each execution of the def), not at the calls. The
    statements binding each default that is not fixed to a fresh name, at
    the definition, and a copy of `fn` whose defaults are those names (read
    where a call is inlined; differentiated through like any assignment)."""
    args = fn.args
    positional = args.posonlyargs + args.args
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    bound, pre = {}, []
    for param, default in pairs:
        if _fixed(default, ctx):
            continue
        tmp = ctx.namer.fresh("%s_%s_default" % (name, param.id))
        ctx.locals.add(tmp)
        bound[id(default)] = tmp
        pre += replace("TMP = VALUE", TMP=ast_util.name(tmp), VALUE=default)
    if not pre:
        return fn, pre
    fn = copy.copy(fn)
    fn.args = copy.copy(args)

    def sub(d):
        return ast_util.name(bound[id(d)]) if d is not None and id(d) in bound else d
    fn.args.defaults = [sub(d) for d in args.defaults]
    fn.args.kw_defaults = [sub(d) for d in args.kw_defaults]
    return fn, pre


class _LocalFunctions(Block):

    def __init__(self, ctx):
        super().__init__(ctx)
        self.defined = {}           # name -> the def or lambda assignment statements binding it

    def define(self, name, fn, node):
        self.defined.setdefault(name, []).append(node)
        fn, pre = _bind_defaults(fn, name, self.ctx)
        self.ctx.local_fns[name] = fn
        return pre or None

    def visit_FunctionDef(self, node):
        if node.decorator_list:
            fail(self.ctx.parsed, node, "a decorated nested function")
        return self.define(node.name, node, node)

    def visit_Assign(self, node):
        if (len(node.targets) == 1 and isinstance(node.targets[0], gast.Name)
                and isinstance(node.value, gast.Lambda)):
            return self.define(node.targets[0].id, node.value, node)
        return node


def _check_bound_once(body, ctx, defined):
    """A call of a local function is inlined by name, wherever it is: the
    name must denote that one function in the whole body (bound by one
    def or lambda, not by another one nor by an assignment or a parameter)."""
    hint = "give each local function its own name, not used for anything else"
    for name, nodes in defined.items():
        if len(nodes) > 1:
            fail(ctx.parsed, nodes[1], "the local function %s defined more than once" % name, hint)
        if ctx.top and name in ctx.parsed.params:
            fail(ctx.parsed, nodes[0], "a local function named as the parameter %s" % name, hint)
    for s in body:
        for n in ast_util.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id in defined:
                fail(ctx.parsed, n, "the local function %s assigned another value" % n.id, hint)


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
    positional = [a.id for a in args.posonlyargs + args.args]
    keyword = [a.id for a in args.args + args.kwonlyargs]
    params = positional + [a.id for a in args.kwonlyargs]
    if args.vararg or args.kwarg:
        fail(parsed, call, "a local function with *args or **kwargs")
    if any(isinstance(a, gast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        fail(parsed, call, "a call of the local function %s with *args or **kwargs" % call.func.id)
    if len(call.args) > len(positional):
        fail(parsed, call, "a call of %s with too many positional arguments" % call.func.id)
    renames = {}
    stored = {n.id for n in ast_util.walk(fn) if isinstance(n, gast.Name)
              and isinstance(n.ctx, (gast.Store, gast.Param))}
    # (the local functions it defines are its names too: renamed with the calls of them)
    inner_defs = {n.name for n in ast_util.walk(fn) if isinstance(n, gast.FunctionDef) and n is not fn}
    if inner_defs & set(params):
        fail(parsed, call, "a local function of %s named as its parameter %s"
             % (call.func.id, sorted(inner_defs & set(params))[0]))
    stored |= inner_defs
    for n in stored:
        renames[n] = ctx.namer.fresh("%s_%s" % (call.func.id, n))
    values = {}
    for p, a in zip(positional, call.args):
        values[p] = a
    for k in call.keywords:
        if k.arg not in keyword or k.arg in values:
            fail(parsed, call, "an unknown or repeated keyword %r in a call of %s" % (k.arg, call.func.id))
        values[k.arg] = k.value
    defaults = dict(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    defaults.update((a.id, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
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
            elif isinstance(n, gast.FunctionDef) and n.name in renames:
                n.name = renames[n.name]
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
    converter = _LocalFunctions(ctx)
    fdef.body = converter.visit_block(fdef.body)
    _check_bound_once(fdef.body, ctx, converter.defined)
    _check_values(fdef.body, ctx)
    return fdef
