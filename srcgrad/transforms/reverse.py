"""Reverse mode: generate the forward sweep and the reverse (adjoint) sweep.

Requires: anf (one primitive per statement, SSA for straight-line code) and
activity. Guarantees: `Generated.fwd_body` computes the primal values and
saves, on `_stack`, every value a stacked name had before it was
overwritten inside a branch or loop; `Generated.rev_body` computes the
adjoints `bx` of the active inputs from the output cotangents, popping the
saved values so each statement's rule sees the values it saw going forward.

Adjoints are symbolic zeros until first written (the first contribution is
an assignment, never `0 +`); before a branch or loop is reversed, the
adjoints it touches are materialized with `np.zeros_like`. Rules are inlined
from the registry (inline.py). Calls of user functions become calls of their
own split forward/adjoint (`g_fwd` / `g_bwd`).
"""
from dataclasses import dataclass, field

import operator

import gast
import numpy as np

from ..errors import NoRuleError, UnsupportedSyntaxError, short
from ..rules import containers, helpers_math
from . import ast_util, optimize
from .inline import inline


@dataclass
class Generated:
    fwd_body: list
    rev_body: list
    adjoints: dict                 # primal name -> adjoint name
    rev_locals: set
    injected: dict = field(default_factory=dict)   # name in code -> object
    pushed: set = field(default_factory=set)


def _targets(stmt):
    t = stmt.targets[0]
    return [e.id for e in t.elts] if isinstance(t, gast.Tuple) else [t.id]


class ReverseGenerator:
    def __init__(self, parsed, fdef, active, namer, namespace, compile_callee, outputs):
        self.parsed = parsed
        self.fdef = fdef
        self.active = active
        self.stacked = set(fdef._sg_stacked)
        self.namer = namer
        self.ns = namespace
        self.compile_callee = compile_callee
        self.outputs = outputs
        self.adj = {}
        self.stack = namer.fresh("_stack")   # saved values, pushed forward, popped in reverse
        self.rev_locals = set()
        self.injected = {}
        self.last_comment = None

    # -- names
    def adjoint(self, name):
        if name not in self.adj:
            base = "b" + name if not name.startswith("_") else "_b" + name.lstrip("_")
            self.adj[name] = self.namer.fresh(base)
            self.rev_locals.add(self.adj[name])
        return self.adj[name]

    def inject(self, name, value):
        """A name the generated code can use for `value` (a closure cell)."""
        if self.injected.get(name, value) is value and name in self.injected:
            return name
        found, current = self.ns.lookup(name)
        if name not in self.injected and (name not in self.namer.used or (found and current is value)):
            self.namer.reserve([name])
            self.injected[name] = value
            return name
        for alias, v in self.injected.items():
            if v is value and alias.startswith("_sg_" + name):
                return alias
        alias = self.namer.fresh("_sg_" + name)
        self.injected[alias] = value
        return alias

    def np_name(self):
        return self.inject("np", np)

    def fail(self, node, construct, hint=None):
        filename, lineno, col = self.parsed.origin(node)
        raise UnsupportedSyntaxError(construct, filename, lineno, col, hint)

    # -- preparation: user calls
    def prepare_calls(self, body, depth=0):
        for s in body:
            if isinstance(s, gast.If):
                self.prepare_calls(s.body, depth + 1)
                self.prepare_calls(s.orelse, depth + 1)
            elif isinstance(s, (gast.For, gast.While)):
                self.prepare_calls(s.body, depth + 1)
            elif isinstance(s, gast.Assign) and s._sg_op.kind == "call":
                op = s._sg_op
                callee_params = op.args
                mask = tuple(isinstance(e, gast.Name) and e.id in self.active for e in callee_params)
                if not any(mask) or not any(t in self.active for t in _targets(s)):
                    continue
                compiled = self.compile_callee(op, mask)
                base = getattr(op.callee, "__name__", "g")
                s._sg_callee = compiled
                s._sg_params = callee_params
                s._sg_fwd_name = self.inject(base + "_fwd", compiled.fwd)
                s._sg_bwd_name = self.inject(base + "_bwd", compiled.bwd)
                s._sg_res = self.namer.fresh(base + "_res")
                if depth:
                    self.stacked.add(s._sg_res)

    def mark_first_definitions(self, body, inputs):
        """A top-level assignment that defines a name for the first time
        needs no push: there is no earlier value to restore."""
        seen = set(inputs)
        for s in body:
            if isinstance(s, gast.Assign):
                names = set(_targets(s))
                if hasattr(s, "_sg_res"):
                    names.add(s._sg_res)
                s._sg_first = names - seen
                seen |= names
            else:
                for n in gast.walk(s):
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                        seen.add(n.id)
                    if isinstance(n, gast.Assign) and hasattr(n, "_sg_res"):
                        seen.add(n._sg_res)
        self.first_defined = set()
        for s in body:
            self.first_defined |= getattr(s, "_sg_first", set())

    # -- forward sweep
    def fwd_block(self, body):
        out = []
        for s in body:
            if isinstance(s, gast.Assign):
                targets = _targets(s)
                if hasattr(s, "_sg_callee"):
                    targets = targets + [s._sg_res]
                for t in targets:
                    if t in self.stacked and t not in getattr(s, "_sg_first", ()):
                        push = ast_util.expr_stmt(ast_util.call(self.stack + ".append", [ast_util.name(t)]))
                        push._sg_push = t
                        out.append(push)
                if hasattr(s, "_sg_callee"):
                    elts = [ast_util.name(t, store=True) for t in targets]
                    call = ast_util.call(ast_util.name(s._sg_fwd_name), [_as_load(e) for e in s._sg_params])
                    new = ast_util.copy_location(ast_util.assign(ast_util.tuple_(elts, store=True), call), s)
                    out.append(new)
                else:
                    out.append(s)
            elif isinstance(s, gast.If):
                out.append(ast_util.copy_location(
                    ast_util.if_(s.test, self.fwd_block(s.body), self.fwd_block(s.orelse)), s))
            elif isinstance(s, gast.For):
                out.append(ast_util.copy_location(ast_util.for_(s.target, s.iter, self.fwd_block(s.body)), s))
            elif isinstance(s, gast.While):
                out.append(ast_util.copy_location(gast.While(test=s.test, body=self.fwd_block(s.body),
                                                             orelse=[]), s))
            elif isinstance(s, (gast.Expr, gast.Assert, gast.Raise)):
                out.append(s)
        return out

    # -- reverse sweep
    def rev_block(self, body, materialized):
        out = []
        for s in reversed(body):
            out.extend(self.rev_stmt(s, materialized))
        return out

    def comment(self, s):
        filename, lineno, _ = self.parsed.origin(s)
        if (filename, lineno) == self.last_comment:
            return []
        self.last_comment = (filename, lineno)
        text = self.parsed.line_text(lineno)
        return [ast_util.comment("Grad of: %s  (%s:%s)" % (text, short(filename), lineno))]

    def touched(self, stmts):
        names = set()
        for s in stmts:
            for n in gast.walk(s):
                if isinstance(n, gast.Assign) and hasattr(n, "_sg_op"):
                    names |= {t for t in _targets(n) if t in self.active}
                    names |= {o for o in n._sg_op.operand_names() if o in self.active}
        return names

    def zeros(self, name, like):
        """`np.zeros_like(like)`, or zeros_tree for a (possible) container."""
        if name in self.dynamic:
            return ast_util.call(ast_util.name(self.inject("sparse_zeros", containers.sparse_zeros)),
                                 [ast_util.name(like)])
        return ast_util.call(ast_util.quote_expr(self.np_name() + ".zeros_like"), [ast_util.name(like)])

    def materialize(self, names, materialized):
        out = []
        for n in sorted(names):
            a = self.adjoint(n)
            if a not in materialized:
                out.append(ast_util.assign(a, self.zeros(n, n)))
                materialized.add(a)
        return out

    def rev_stmt(self, s, materialized):
        if isinstance(s, gast.Expr):
            return []
        if isinstance(s, gast.If):
            pre = self.materialize(self.touched([s]), materialized)
            self.last_comment = None
            body = self.rev_block(s.body, materialized)
            orelse = self.rev_block(s.orelse, materialized)
            if not body and not orelse:
                return pre
            return pre + [ast_util.copy_location(ast_util.if_(s.test, body, orelse), s)]
        if isinstance(s, gast.For):
            pre = self.materialize(self.touched([s]), materialized)
            self.last_comment = None
            body = self.rev_block(s.body, materialized)
            if not body:
                return pre
            it = ast_util.call(ast_util.name("reversed"), [s.iter])
            self.last_comment = None
            return pre + [ast_util.copy_location(ast_util.for_(s.target, it, body), s)]
        if isinstance(s, gast.While):
            pre = self.materialize(self.touched([s]), materialized)
            self.last_comment = None
            body = self.rev_block(s.body, materialized)
            if not body:
                return pre
            self.last_comment = None
            it = ast_util.call(ast_util.name("range"), [ast_util.name(s._sg_count)])
            return pre + [ast_util.copy_location(ast_util.for_(ast_util.name("_", store=True), it, body), s)]
        if not isinstance(s, gast.Assign):
            return []
        op = s._sg_op
        targets = _targets(s)
        live = [t for t in targets if t in self.active and self.adjoint(t) in materialized]
        code = []
        if live:
            code = self.adjoint_code(s, op, targets, materialized)
            if code:
                code = self.comment(s) + code
        restore = []
        for t in reversed(targets + ([s._sg_res] if hasattr(s, "_sg_res") else [])):
            if t in self.stacked:
                first = t in getattr(s, "_sg_first", ())
                if not first:
                    pop = ast_util.assign(t, ast_util.call(self.stack + ".pop", []))
                    pop._sg_pop = t
                    restore.append(pop)
                if t in self.active and self.adjoint(t) in materialized and not first:
                    # the restored (earlier) value's cotangent starts at zero, in its own shape
                    a = self.adjoint(t)
                    fn = self.inject("zeros_for", containers.zeros_for)
                    restore.append(ast_util.assign(a, ast_util.call(ast_util.name(fn),
                                                                    [ast_util.name(t), ast_util.name(a)])))
        return code + restore

    def add_expr(self, adjoint_name, value):
        """`b + value`, or add_cotangents(b, value) for a (possible) container."""
        if adjoint_name in self.dynamic_adjoints:
            return ast_util.call(ast_util.name(self.inject("add_cotangents", containers.add_cotangents)),
                                 [ast_util.name(adjoint_name), value])
        return ast_util.add(ast_util.name(adjoint_name), value)

    def accumulate(self, name, value, materialized):
        a = self.adjoint(name)
        if a in materialized:
            value = self.add_expr(a, value)
        else:
            materialized.add(a)
        return ast_util.assign(a, value)

    def adjoint_code(self, s, op, targets, materialized):
        t = targets[0]
        if op.kind == "copy":
            src = op.args[0]
            if isinstance(src, gast.Name) and src.id in self.active:
                return [self.accumulate(src.id, ast_util.name(self.adjoint(t)), materialized)]
            return []
        if op.kind == "rule":
            rule = op.rule
            tmap = {}
            spread = []         # (list display, name of its cotangent list)
            for p in rule.diff_params:
                e = op.bindings.get(p)
                if isinstance(e, gast.Name) and e.id in self.active:
                    tmap[p] = self.adjoint(e.id)
                elif isinstance(e, (gast.List, gast.Tuple)):
                    if any(isinstance(n, gast.Name) and n.id in self.active for n in e.elts):
                        tmap[p] = self.namer.fresh("_b" + p)
                        spread.append((e, tmap[p]))
                elif e is not None and not isinstance(e, (gast.Name, gast.Constant)):
                    if any(isinstance(n, gast.Name) and n.id in self.active for n in gast.walk(e)):
                        self.fail(s, "a nested structure of differentiated values passed to %s" % rule.name)
            if not tmap:
                return []
            gmap = {n: self.inject(n, rule.globals[n]) for n in _template_globals(rule)}
            pre = []
            if rule.sequence_output and t in self.dynamic and \
                    getattr(rule.primitive, "__module__", "") != containers.__name__:
                # a tuple output's cotangent, with zeros for its symbolic-zero elements
                bt = self.adjoint(t)
                pre = [ast_util.assign(bt, ast_util.call(ast_util.name(
                    self.inject("densify_tree", containers.densify_tree)), [ast_util.name(bt), ast_util.name(t)]))]
            code = pre + inline(rule.tree, t, self.adjoint(t), op.bindings, tmap, materialized,
                          self.namer, gmap, accumulate=self.add_expr)
            if self.real_only:
                conj_names = {alias for n, alias in gmap.items() if rule.globals[n] is helpers_math.conj}
                if conj_names:
                    code = [_StripCalls(conj_names).visit(c) for c in code]
            code = optimize.fold(code)
            for e, tmp in spread:
                for k, elt in enumerate(e.elts):
                    if isinstance(elt, gast.Name) and elt.id in self.active:
                        read = ast_util.call(ast_util.name(self.inject("densify", containers.densify)),
                                             [ast_util.item(ast_util.name(tmp), k), ast_util.name(elt.id)])
                        code.append(self.accumulate(elt.id, read, materialized))
            for c in code:
                self.rev_locals |= ast_util.names_stored(c)
            return code
        if op.kind == "call":
            if not hasattr(s, "_sg_callee"):
                return []
            compiled = s._sg_callee
            cots = []
            for tname in targets:
                a = self.adjoint(tname)
                if tname in self.active and a in materialized:
                    cots.append(ast_util.name(a))
                else:
                    cots.append(ast_util.call(ast_util.quote_expr(self.np_name() + ".zeros_like"),
                                              [ast_util.name(tname)]))
            active_params = [e for e, m in zip(s._sg_params, compiled.mask) if m]
            temps = [self.namer.fresh("_" + self.adjoint(e.id)) for e in active_params]
            self.rev_locals |= set(temps)
            call = ast_util.call(ast_util.name(s._sg_bwd_name), [ast_util.name(s._sg_res)] + cots)
            code = [ast_util.unpack(temps, call)]
            for e, tmp in zip(active_params, temps):
                code.append(self.accumulate(e.id, ast_util.name(tmp), materialized))
            return code
        if op.kind == "opaque":
            active_in = [n.id for n in gast.walk(s.value) if isinstance(n, gast.Name) and n.id in self.active]
            if active_in and isinstance(op.obj, str) and op.obj.startswith("attribute"):
                self.fail(s, "reading the %s of an object that holds differentiated values" % op.obj,
                          "objects built inside differentiated code are not supported: pass their arrays")
            if active_in and op.obj is None:
                self.fail(s, "a method call on an object built inside the differentiated code",
                          "objects built inside differentiated code are not supported: build them outside")
            if active_in and isinstance(op.obj, type):
                self.fail(s, "constructing a %s from differentiated values" % op.obj.__name__,
                          "objects built inside differentiated code are not supported: build them outside")
            if active_in and getattr(op.obj, "__self__", None) is not None and hasattr(
                    getattr(op.obj, "__func__", None), "__code__"):
                self.fail(s, "a call of the method %s on a differentiated value"
                          % getattr(op.obj, "__qualname__", op.obj),
                          "call a module-level function instead, passing what it reads as arguments")
            if active_in:
                filename, lineno, _ = self.parsed.origin(s)
                raise NoRuleError(op.obj, filename, lineno)
            return []
        if op.kind == "pack":
            v = s.value
            pairs = zip(v.keys, v.values) if isinstance(v, gast.Dict) else (
                (ast_util.const(k), e) for k, e in enumerate(v.elts))
            code = []
            for key, elt in pairs:
                if isinstance(elt, gast.Name) and elt.id in self.active:
                    read = gast.Subscript(value=ast_util.name(self.adjoint(t)), slice=_as_load(key),
                                          ctx=gast.Load())
                    read = ast_util.call(ast_util.name(self.inject("densify", containers.densify)),
                                         [read, ast_util.name(elt.id)])
                    code.append(self.accumulate(elt.id, read, materialized))
            return code
        return []


operator_getitem = operator.getitem


def dynamic_names(fdef):
    """Names that may hold a list, tuple or dict (their cotangents are added
    with add_cotangents and zeroed with sparse_zeros): parameters given
    container values, containers built in the function (displays, rules
    returning sequences such as list_append or np.split), and copies,
    element reads and element assignments of those. Other rule outputs and
    user-call results are taken to be arrays."""
    examples = getattr(fdef, "_sg_examples", {})
    dynamic = {p for p, v in examples.items() if isinstance(v, (list, tuple, dict))}
    assigns = [n for n in gast.walk(fdef) if isinstance(n, gast.Assign) and hasattr(n, "_sg_op")]
    changed = True
    while changed:
        changed = False
        for s in assigns:
            op = s._sg_op
            new = False
            if op.kind == "pack":
                new = True
            elif op.kind == "copy":
                new = _binding_dynamic(op.args[0], dynamic)
            elif op.kind == "rule":
                prim = op.rule.primitive
                if prim is containers.setitem or prim is operator_getitem:
                    new = _binding_dynamic(op.bindings.get("x"), dynamic)
                else:
                    new = op.rule.sequence_output
            if new:
                for n in _targets(s):
                    if n not in dynamic:
                        dynamic.add(n)
                        changed = True
    return dynamic


def _binding_dynamic(e, dynamic):
    return isinstance(e, gast.Name) and e.id in dynamic


class _StripCalls(gast.NodeTransformer):
    """f(x) -> x for the functions named in `names` (conj on real values)."""

    def __init__(self, names):
        self.names = names

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, gast.Name) and node.func.id in self.names and len(node.args) == 1:
            return node.args[0]
        return node


def _as_load(e):
    return ast_util.set_load(e) if isinstance(e, gast.AST) else e


def _template_globals(rule):
    cached = getattr(rule, "_free_names", None)
    if cached is not None:
        return cached
    params = set(rule.params) | {rule.output, "d"}
    stored = set()
    for s in rule.tree.body:
        stored |= ast_util.names_stored(s)
    loaded = set()
    for s in rule.tree.body:
        loaded |= ast_util.names_loaded(s)
    free = sorted(n for n in loaded - params - stored if n in rule.globals)
    rule._free_names = free
    return free


def generate(parsed, fdef, active, namer, namespace, compile_callee, real_only=False):
    """Generate forward and reverse sweeps for the ANF'd `fdef`. real_only:
    every value is real, so the conj() of TF's complex convention in the
    rules is left out of the generated code."""
    ret = fdef.body[-1]
    outputs = [e.id for e in ret.value.elts] if isinstance(ret.value, gast.Tuple) else [ret.value.id]
    gen = ReverseGenerator(parsed, fdef, active, namer, namespace, compile_callee, outputs)
    gen.real_only = real_only
    for n in gast.walk(fdef):
        if getattr(n, "_sg_helper", False):
            n.id = gen.inject(n.id, n._sg_callee)
    gen.dynamic = dynamic_names(fdef)
    gen.dynamic_adjoints = {gen.adjoint(n) for n in gen.dynamic if n in active}
    body = fdef.body[:-1]
    gen.prepare_calls(body)
    gen.mark_first_definitions(body, list(fdef._sg_inputs))
    fwd = gen.fwd_block(body)
    materialized = set()
    for o in outputs:
        if o in active:
            materialized.add(gen.adjoint(o))
    seeds = {o: gen.adjoint(o) for o in outputs}
    rev = gen.rev_block(body, materialized)
    result = Generated(fwd, rev, gen.adj, gen.rev_locals | set(seeds.values()), gen.injected)
    result.outputs = outputs
    result.seeds = seeds
    result.materialized = materialized
    result.gen = gen
    result.first_defined = gen.first_defined
    _prune_stack(result)
    return result


def _prune_stack(g):
    """Keep only the pushes and pops of names the reverse sweep reads."""
    def strip_pops(stmts):
        out = []
        for s in stmts:
            if getattr(s, "_sg_pop", None) is not None:
                continue
            out.append(s)
        return out

    read = set()
    for s in g.rev_body:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                read.add(n.id)

    def filt(stmts, attr):
        out = []
        for s in stmts:
            name = getattr(s, attr, None)
            if name is not None and name not in read:
                continue
            if isinstance(s, gast.If):
                s.body = filt(s.body, attr) or [ast_util.pass_()]
                s.orelse = filt(s.orelse, attr)
                if all(isinstance(x, gast.Pass) for x in s.body) and not s.orelse and attr == "_sg_pop":
                    continue
            elif isinstance(s, (gast.For, gast.While)):
                s.body = filt(s.body, attr) or [ast_util.pass_()]
                if all(isinstance(x, gast.Pass) for x in s.body) and attr == "_sg_pop":
                    continue
            out.append(s)
        return out
    g.rev_body = filt(g.rev_body, "_sg_pop")
    g.fwd_body = filt(g.fwd_body, "_sg_push")
    pushed = set()
    for s in g.fwd_body:
        for n in gast.walk(s):
            if getattr(n, "_sg_push", None) is not None:
                pushed.add(n._sg_push)
    g.pushed = pushed
