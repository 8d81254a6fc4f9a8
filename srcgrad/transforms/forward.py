"""Forward mode: generate tangent (JVP) code.

Requires: anf (one primitive per statement) and activity (the active names:
varied by an input that has a tangent, and useful to an output).
Guarantees: `generate` returns a FunctionDef

    f_jvp(*inputs, *tangents of the active inputs) -> (outputs, output tangents)

(`return y, dy` for one output, `return (a, b), (da, db)` for a tuple; None
for an output with no tangent) that runs the primal statements in order and,
after each one, computes the tangent `dx` of each active target. Control
flow is kept as it is: forward mode needs no stack. Tangent rules are
inlined from the tangent registry (rules/tangents.py) with symbolic zeros
dropped; a primitive with an adjoint rule but no tangent rule becomes a call
of the runtime helper `transpose_jvp` (srcgrad/forward.py). A call of a user
function becomes a call of its own generated `g_jvp`. A name assigned a
value that carries no tangent (a constant before a loop that makes it
active) gets `dx = np.zeros_like(x)` (`zeros_tree(x)` for a name that may
hold a list, tuple or dict, whose tangent is the same container of
tangents), so every active name has a tangent whenever it has a value.
"""
import copy
import math

import gast
import numpy as np

from .. import runtime
from ..errors import NoRuleError
from ..rules import tangents as tangent_rules
from ..rules.python import containers
from ..rules.helpers import broadcast as broadcast_helpers
from ..rules.helpers.broadcast import broadcast_like
from ..syntax import ast_util
from . import instantiate, ops, optimize
from ..syntax.anno import Anno
from ..syntax.naming import TANGENT_PREFIX
from .generator import Generator


def _targets(stmt):
    t = stmt.targets[0]
    return [e.id for e in t.elts] if isinstance(t, gast.Tuple) else [t.id]


class ForwardGenerator(Generator):
    def __init__(self, ctx):
        super().__init__(ctx)
        self.compile_callee = ctx.jvp_callee     # (op, mask) -> the callee's forward compilation
        self.stack_tangents = {}                 # stack of generated code -> its tangent stack
        self.active_stacks = set()               # the stacks that carry tangents (activity.py)
        self.tan = {}
        self.def_line = self.parsed.origin(self.parsed.node)[1]

    # -- names
    def tangent(self, name):
        return self.derivative_name(self.tan, TANGENT_PREFIX, name)

    def zeros_fn(self, container):
        """What generated code calls for a zero tangent: np.zeros_like, or
        zero_tangent for a value that may be a list, tuple or dict."""
        if container:
            return self.inject("zero_tangent", runtime.zero_tangent)
        return self.inject("np", np) + ".zeros_like"

    def zeros(self, e):
        """A zero tangent for the value of expression `e` (0.0 for a name
        known to be 0-d)."""
        if isinstance(e, gast.Name) and e.id in self.scalar:
            return ast_util.const(0.0)
        array = isinstance(e, gast.Name) and e.id not in self.dynamic
        return ast_util.call(self.zeros_fn(not array), [_as_load(e)])

    def is_active(self, e):
        return isinstance(e, gast.Name) and e.id in self.active

    # -- statements
    def block(self, body):
        out = []
        for s in body:
            out.extend(self.stmt(s))
        return out

    def comment(self, s):
        if self.parsed.origin(s)[1] == self.def_line:
            return []       # (statements the lowering pass adds carry the def line)
        return self.origin_comment(s)

    def stmt(self, s):
        if isinstance(s, gast.If):
            head = self.comment(s)
            self.last_comment = None
            body = self.block(s.body)
            self.last_comment = None
            orelse = self.block(s.orelse)
            self.last_comment = None
            return head + [ast_util.copy_location(ast_util.if_(s.test, body, orelse), s)]
        if isinstance(s, (gast.For, gast.While)):
            head = self.comment(s)
            self.last_comment = None
            new = copy.copy(s)
            new.body = self.block(s.body) or [ast_util.pass_()]
            self.last_comment = None
            return head + [new]
        if isinstance(s, gast.Assign):
            code, done = self.tangent_code(s)
            primal = [] if Anno.JVP_CALL.of(s, False) else [s]   # a user call: its JVP call computes both
            for t in _targets(s):       # an active name assigned a constant: its tangent is zero
                if t in self.active and t not in done:
                    if isinstance(s.value, gast.Constant) and s.value.value is None:
                        code.append(ast_util.assign(self.tangent(t), ast_util.const(None)))
                    elif isinstance(s.value, gast.List) and not s.value.elts:
                        # (an empty list's tangent: an empty list, which the appends fill, as the value's)
                        code.append(ast_util.assign(self.tangent(t), gast.List(elts=[], ctx=gast.Load())))
                    else:
                        code.append(ast_util.assign(self.tangent(t), self.zeros(ast_util.name(t))))
            return self.comment(s) + primal + code
        if Anno.GRAD_OF.of(s) is not None:
            return []       # an insert_grad_of block acts on adjoints only
        op = Anno.OP.of(s)
        if op is not None and op.kind == "push":
            # push(S, x) of generated code: x's tangent goes on S's tangent stack
            # (None for an inactive x on a stack that carries tangents: the
            # pop it pairs with may have another name, see activity.py)
            stack, x = op.args
            if stack.id not in self.active_stacks:
                return [s]
            tangent = ast_util.name(self.tangent(x.id)) if self.is_active(x) else ast_util.const(None)
            push = ast_util.call(ast_util.name(self.inject("push", runtime.push)),
                                 [ast_util.name(self.stack_tangent(stack.id)), tangent])
            return [s, ast_util.expr_stmt(push)]
        return [s]     # print(...) and other expressions run as written

    def stack_tangent(self, stack):
        if stack not in self.stack_tangents:
            self.stack_tangents[stack] = self.namer.fresh("d" + stack if not stack.startswith("_")
                                                          else "_d" + stack.lstrip("_"))
        return self.stack_tangents[stack]

    def tangent_code(self, s):
        """The statements computing the tangents of `s`'s targets, and the
        set of targets they define."""
        op = Anno.OP.of(s)
        targets = _targets(s)
        if op.kind == "pop" and (op.args[0].id in self.active_stacks or self.is_active(op.args[0])):
            # x = pop(S): x's tangent comes off S's tangent stack (dropped
            # when x is inactive, to keep the stacks in step). A stack this
            # code only pops (the residuals of a split forward, copied:
            # S = list(res[k])) has the tangent list its copy computed.
            t = targets[0]
            stack = op.args[0].id
            tangents = self.stack_tangent(stack) if stack in self.active_stacks else self.tangent(stack)
            pop = ast_util.call(ast_util.name(self.inject("pop", runtime.pop)), [ast_util.name(tangents)])
            if t not in self.active:
                return [ast_util.expr_stmt(pop)], set()
            # (None, a symbolic zero, where the value pushed had no tangent)
            dense = ast_util.call(ast_util.name(self.inject("densify", runtime.densify)), [pop, ast_util.name(t)])
            return [ast_util.assign(self.tangent(t), dense)], {t}
        if len(targets) == 1 and targets[0] in self.active_stacks and op.kind in ("rule", "copy"):
            # S = list(res[k]), residuals handed in copied into a stack this code also pushes onto
            # (a split reverse sweep re-running a checkpointed loop's steps recorded): S's tangent
            # stack starts as the copy of res[k]'s tangent list, not empty (its pops of res[k]'s
            # values found no tangents: IndexError)
            src = [n for n in op.operand_names() if n in self.active]
            if src:
                copy_call = ast_util.call(ast_util.name(self.inject("as_list", containers.as_list)),
                                          [ast_util.name(self.tangent(src[0]))])
                return [ast_util.assign(self.stack_tangent(targets[0]), copy_call)], set()
        if not any(t in self.active for t in targets):
            return [], set()
        t = targets[0]
        if op.kind == "copy":
            src = op.args[0]
            if self.is_active(src):
                return [ast_util.assign(self.tangent(t), ast_util.name(self.tangent(src.id)))], {t}
            return [], set()
        if op.kind == "rule":
            return self.rule_code(s, op.rule.primitive, op.rule, op.bindings, t)
        if op.kind == "call":
            rule = tangent_rules.registered_tangent(op.callee)
            if rule is not None and isinstance(s.value, gast.Call) and len(targets) == 1:
                # (a helper of srcgrad's own with a tangent rule: matmul_adjoint_x in second-order code)
                if not any(self.is_active(n) for n in op.args):
                    return [], set()
                return self.rule_code(s, op.callee, None, self.rule_bindings(s, rule), t)
            return self.call_code(s, op, targets)
        if op.kind == "opaque":
            active_in = [n for n in op.args if self.is_active(n)]
            if not active_in:
                return [], set()
            rule = tangent_rules.tangent_rule(op.obj) if callable(op.obj) else None
            if rule is not None and isinstance(s.value, gast.Call):
                return self.rule_code(s, op.obj, None, self.rule_bindings(s, rule), t)
            if op.obj is None:
                self.fail(s, *ops.unknown_receiver_refusal())
            filename, lineno, _ = self.parsed.origin(s)
            raise NoRuleError(op.obj, filename, lineno)
        if op.kind == "pack":       # [a, b], (a, b), {k: a}: the same container of tangents
            value = ast_util.clone(s.value)
            elts = value.values if isinstance(value, gast.Dict) else value.elts
            stacks = [isinstance(e, gast.Name) and e.id in self.active_stacks for e in elts]
            if not any(self.is_active(e) for e in elts) and not any(stacks):
                return [], set()
            # (a stack in a container, the residuals of a split forward: its tangent stack)
            new = [ast_util.name(self.tangent(e.id)) if self.is_active(e) else
                   ast_util.name(self.stack_tangent(e.id)) if stack else self.zeros(e)
                   for e, stack in zip(elts, stacks)]
            if isinstance(value, gast.Dict):
                value.values = new
            else:
                value.elts = new
            return [ast_util.assign(self.tangent(t), value)], {t}
        return [], set()

    def rule_bindings(self, s, rule):
        """{parameter: argument node} of tangent rule `rule` for the call
        `s.value` (defaults filled in), as rule_code takes them."""
        try:
            bound = rule.signature.bind(ast_util.name("_z"), *s.value.args,
                                        **{k.arg: k.value for k in s.value.keywords})
        except TypeError as exc:
            self.fail(s, "this call of %s (%s)" % (rule.name, exc))
        bound.apply_defaults()
        return {p: v if isinstance(v, gast.AST) else ast_util.const(v)
                for p, v in bound.arguments.items() if p != rule.output}

    def display_tangent(self, s, e, sparse, primitive):
        """The tuple of tangents of the list or tuple display `e` passed to
        a rule, nested displays as nested tuples (einsum's operands
        ('i,i', [a, 2.0], b): left out, a's tangent was dropped without a
        word). `sparse`: None for a top-level entry with no tangent (the
        transposed VJP reads it), else zeros."""
        elts = []
        for x in e.elts:
            if self.is_active(x):
                elts.append(ast_util.name(self.tangent(x.id)))
            elif isinstance(x, (gast.List, gast.Tuple)) and any(self.is_active(n) for n in ast_util.walk(x)):
                elts.append(self.display_tangent(s, x, False, primitive))
            elif any(self.is_active(n) for n in ast_util.walk(x)):
                self.fail(s, "a nested structure of differentiated values passed to %s"
                          % getattr(primitive, "__name__", primitive))
            else:
                elts.append(ast_util.const(None) if sparse else self.zeros(x))
        return ast_util.tuple_(elts)

    def rule_code(self, s, primitive, adjoint, bindings, t):
        rule = tangent_rules.tangent_rule(primitive)
        params = rule.tangent_params if rule is not None else adjoint.diff_params
        tnames = {}
        for p in params:
            e = bindings.get(p)
            if self.is_active(e):
                tnames[p] = self.tangent(e.id)
            elif isinstance(e, (gast.List, gast.Tuple)) and any(self.is_active(x) for x in ast_util.walk(e)):
                # a list parameter (np.stack's arrays): the list of tangents
                tnames[p] = self.display_tangent(s, e, rule is None, primitive)
            elif e is not None and any(self.is_active(n) for n in ast_util.walk(e)):
                self.fail(s, "a nested structure of differentiated values passed to %s"
                          % getattr(primitive, "__name__", primitive))
        if not tnames:
            return [], set()
        dt = self.tangent(t)
        if rule is None:
            # no tangent rule: transpose the adjoint rule's VJP at run time
            helper = self.inject("transpose_jvp", self.ctx.transpose_jvp)
            prim = self.inject(getattr(primitive, "__name__", "primitive"), primitive)
            tans = ast_util.tuple_([(ast_util.name(tnames[p]) if isinstance(tnames[p], str) else tnames[p])
                                    if p in tnames else ast_util.const(None) for p in adjoint.diff_params])
            args = [ast_util.name(prim), ast_util.name(t), tans, ast_util.tuple_([
                _as_load(bindings.get(p, ast_util.const(None))) for p in adjoint.params])]
            return [ast_util.assign(dt, ast_util.call(ast_util.name(helper), args))], {t}
        for p in [p for p in bindings if p not in rule.params]:
            default = adjoint.signature.parameters[p].default if adjoint is not None else None
            e = bindings[p]
            if not (isinstance(e, gast.Constant) and type(e.value) is type(default) and e.value == default):
                self.fail(s, "this call of %s (its tangent rule %s has no parameter %s)"
                          % (getattr(primitive, "__name__", primitive), rule.name, p))
        gmap = {n: self.inject(n, rule.globals[n]) for n in instantiate.free_names(rule)}
        zeros = self.zeros_fn(any(isinstance(e, gast.Name) and e.id in self.dynamic for e in bindings.values()))
        bind = {p: bindings[p] for p in rule.params if p in bindings}
        for p in rule.params:
            if p not in bind and p in rule.defaults:
                bind[p] = ast_util.const(rule.defaults[p])
        stmts, value = instantiate.inline_tangent(rule, t, bind, tnames, self.namer, gmap, zeros)
        if isinstance(value, instantiate.Zero):
            return [], set()
        code = stmts + [ast_util.assign(dt, value)]
        if t in self.scalar:
            # a 0-d output of 0-d operands: its tangent needs no broadcast_like
            aliases = {a for n, a in gmap.items() if rule.globals.get(n) is broadcast_like}
            if aliases:
                code = [optimize.ElideShapeHelper(aliases, self.scalar).visit(c) for c in code]
        if Anno.OP.of(s).python_float:
            # math.sin(x) on a Python float: its tangent stays in the math module
            np_aliases = {a for n, a in gmap.items() if rule.globals.get(n) is np}
            if np_aliases:
                code = [optimize.MathFunctions(np_aliases, self.inject("math", math)).visit(c) for c in code]
        return optimize.fold(code), {t}

    def call_code(self, s, op, targets):
        mask = tuple(self.is_active(e) for e in op.args)
        if not any(mask):
            return [], set()
        compiled = self.compile_callee(op, mask)
        if compiled.tuple_output != isinstance(s.targets[0], gast.Tuple):
            self.fail(s, "a tuple or list holding differentiated values",
                      "unpack tuples returned by your own functions directly: a, b = f(x)")
        base = getattr(op.callee, "__name__", "g")
        fn = self.inject(base + "_jvp", compiled.jvp_fn)
        args = [_as_load(e) for e in op.args] + [ast_util.name(self.tangent(e.id))
                                                 for e, m in zip(op.args, mask) if m]
        done = {t for t, a in zip(targets, compiled.output_active) if a}
        tans = [ast_util.name(self.tangent(t) if t in done and t in self.active else "_", store=True)
                for t in targets]
        prim = s.targets[0]
        tan = ast_util.tuple_(tans, store=True) if compiled.tuple_output else tans[0]
        call = ast_util.call(ast_util.name(fn), args)
        new = ast_util.copy_location(
            ast_util.assign(ast_util.tuple_([ast_util.set_store(ast_util.clone(prim)), tan], store=True), call), s)
        Anno.JVP_CALL.add_to(s, True)
        return [new], done & self.active


def _as_load(e):
    return ast_util.set_load(ast_util.clone(e)) if isinstance(e, gast.AST) else e


def transform(fdef, ctx):
    """Generate the JVP function of the ANF'd `fdef` for the active names
    `ctx.active` and the active inputs of `ctx.mask`. Returns (FunctionDef,
    injected {name: object})."""
    inputs = ctx.inputs
    active_inputs = [n for n, m in zip(inputs, ctx.mask) if m]
    ret = fdef.body[-1]
    tuple_output = isinstance(ret.value, gast.Tuple)
    outputs = [e.id for e in ret.value.elts] if tuple_output else [ret.value.id]
    gen = ForwardGenerator(ctx)
    active = ctx.active
    for n in ast_util.walk(fdef):       # helpers the lowering pass calls (setitem, list_append)
        if Anno.HELPER.of(n, False):
            n.id = gen.inject(n.id, Anno.CALLEE.of(n))
    gen.dynamic = ctx.facts.dynamic
    gen.scalar = ctx.facts.scalar
    gen.active_stacks = ctx.facts.active_stacks
    tangent_params = [gen.tangent(n) for n in active_inputs]
    # an input without a tangent that is reassigned a varied value (the
    # cotangent seed of generated code: bx = unbroadcast(bx, x)) starts at zero
    body = [ast_util.assign(gen.tangent(n), gen.zeros(ast_util.name(n)))
            for n in inputs if n in active and n not in active_inputs]
    body += gen.block(fdef.body[:-1])
    # tangent stacks of the stacks of generated code being differentiated again
    body = [ast_util.assign(d, gast.List(elts=[], ctx=gast.Load()))
            for _, d in sorted(gen.stack_tangents.items())] + body

    def out_tangent(o):
        return ast_util.name(gen.tangent(o)) if (o in active or o in active_inputs) else ast_util.const(None)
    if tuple_output:
        ret_value = ast_util.tuple_([ast_util.tuple_([ast_util.name(o) for o in outputs]),
                                     ast_util.tuple_([out_tangent(o) for o in outputs])])
    else:
        ret_value = ast_util.tuple_([ast_util.name(outputs[0]), out_tangent(outputs[0])])
    # (a product summed by unbroadcast, the tangent of a reverse sweep's product rule: one contraction)
    returned = {n.id for n in ast_util.walk(ret_value) if isinstance(n, gast.Name)}
    body = optimize.unbroadcast_products(
        body, returned, {alias for alias, obj in gen.injected.items() if obj is broadcast_helpers.unbroadcast},
        lambda: gen.inject("unbroadcast_product", broadcast_helpers.unbroadcast_product))
    name = ctx.parsed.node.name
    jvp = ast_util.function_def(name + "_jvp", list(inputs) + tangent_params,
                                [ast_util.comment("Primal and tangent of %s, statement by statement" % name)]
                                + body + [ast_util.return_(ret_value)])
    return jvp, gen.injected
