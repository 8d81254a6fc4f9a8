"""Instantiate rule templates: inline them into generated code, or compile
them into the tape's VJP and JVP functions. One template, two paths.

A rule template (srcgrad/rules/) reads like the maths:

    @register_adjoint(np.multiply)              @register_tangent(np.multiply)
    def multiply(z, x, y):                      def multiply(z, x, y):
        d[x] = unbroadcast(d[z] * y, x)             t[z] = t[x] * y + x * t[y]
        d[y] = unbroadcast(d[z] * x, y)

Inlining substitutes the call site's operands for the parameters and renames
the template's temporaries hygienically (`_name`, fresh); temporaries only a
dropped contribution used are removed. Adjoint templates (`inline_adjoint`):
the cotangent variable replaces `d[z]`, and each `d[x] = e` becomes `bx = e`
(the first contribution: the adjoint was a symbolic zero) or `bx = bx + e`;
a contribution to an inactive operand is dropped. Tangent templates
(`inline_tangent`): `t[x]` of an input with no tangent is a symbolic zero
(JAX's `Zero`), simplified away through sums, products and the functions the
rules declare linear (rules/tangents.py `register_linear`); a value times
zero is never folded (that would hide NaN and inf).

Compiling (`vjp`, `jvp`, `batched_vjp`) inlines the template with the
identity binding into a function built by `codegen.build`, so a rule's VJP
shows its lines in tracebacks like any generated code; each is compiled once
per set of needed cotangents (or tangents) and cached on the rule.

Requires: templates parsed by rules/registry.py (`Template`).
"""
import copy

import gast

from ..rules import registry
from ..rules.helpers import batched
from ..rules.python import containers
from ..rules import tangents as tangent_rules
from ..syntax import ast_util
from ..syntax.naming import ALIAS_PREFIX, Namer
from ..syntax.templates import is_d, is_t, replace
from . import batch_safety, codegen


class TemplateError(Exception):
    """A template reads a cotangent other than its output's."""


# ------------------------------------------------------------------ shared

def free_names(rule):
    """The module globals a template reads (np, helpers), sorted: what
    generated code must have in its namespace to run the inlined body.
    Cached on the rule."""
    if rule.free_names is None:
        rule.free_names = sorted(n for n in all_free_names(rule) if n in rule.globals)
    return rule.free_names


def all_free_names(rule):
    """Every name a template reads that is not a parameter, the marker or a
    temporary (globals, and `_B`, the batch size of batched templates)."""
    params = set(rule.params) | {rule.output, "d", "t"}
    stored, loaded = set(), set()
    for s in rule.tree.body:
        stored |= ast_util.names_stored(s)
        loaded |= ast_util.names_loaded(s)
    return loaded - params - stored


def _temporaries(tree, is_marker, namer):
    """{template temporary: fresh name} for the assignments not to a marker."""
    temps = {}
    for stmt in tree.body:
        if isinstance(stmt, gast.Assign):
            for t in stmt.targets:
                if is_marker(t) is None:
                    for n in ast_util.names_stored(t):
                        if n not in temps:
                            temps[n] = namer.fresh("_" + n)
    return temps


def _drop_dead(stmts, candidates, live=()):
    """`stmts` without the assignments to names in `candidates` that nothing
    after them (nor `live`) reads."""
    live = set(live)
    kept = []
    for stmt in reversed(stmts):
        stored = ast_util.names_stored(stmt)
        if stored and stored <= candidates and not (stored & live):
            continue
        live |= ast_util.names_loaded(stmt)
        kept.append(stmt)
    return kept[::-1]


# ------------------------------------------------------------------ adjoint templates

class _Rewrite:
    """Copies a template statement with the substitutions made, in one pass
    over it (the template itself is never changed)."""

    def __init__(self, output, cotangent, bindings, renames, globals_map):
        self.output = output
        self.cotangent = cotangent
        self.bindings = bindings
        self.renames = renames
        self.globals_map = globals_map

    def visit(self, node):
        cls = type(node)
        if cls is gast.Name:
            if node.id in self.renames:
                return ast_util.name(self.renames[node.id], ctx=node.ctx)
            load = isinstance(node.ctx, gast.Load)
            if load and node.id in self.bindings:
                return ast_util.clone(self.bindings[node.id])
            if load and node.id in self.globals_map:
                return ast_util.name(self.globals_map[node.id], ctx=node.ctx)
            return ast_util.clone(node)
        if cls is gast.Subscript:
            target = is_d(node)
            if target is not None:
                if target != self.output:
                    raise TemplateError("a rule may only read d[%s] (the output's cotangent)" % self.output)
                return ast_util.name(self.cotangent)
        new = cls.__new__(cls)
        attrs = dict(node.__dict__)
        for field in cls._fields:
            value = attrs.get(field)
            if type(value) is list:
                attrs[field] = [self.visit(v) if isinstance(v, gast.AST) else v for v in value]
            elif isinstance(value, gast.AST) and not isinstance(value, gast.expr_context):
                attrs[field] = self.visit(value)
        new.__dict__.update(attrs)
        return new


def inline_adjoint(tree, output, cotangent, bindings, targets, materialized, namer, globals_map=None,
                   accumulate=None):
    """Inline the adjoint template `tree` (a gast FunctionDef) at a call site.

    output: the name of the primal output variable (the rule's first parameter
      is bound to it). cotangent: the name holding its cotangent (`d[z]`).
    bindings: {param: gast expression} for the other parameters.
    targets: {param: adjoint variable name, or None to drop}.
    materialized: set of adjoint names that already hold a value; updated.
    accumulate(target, value) -> expression: how a second contribution is
      added (default `target + value`; the compiler passes add_cotangents
      for containers).
    Returns a list of gast statements. Raises TemplateError.
    """
    globals_map = globals_map or {}
    out_param = tree.args.args[0].id
    bind = dict(bindings)
    bind[out_param] = ast_util.name(output)
    temps = _temporaries(tree, is_d, namer)
    rewrite = _Rewrite(out_param, cotangent, bind, temps, globals_map)
    out = []
    for stmt in tree.body:
        if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant):
            continue  # docstring
        param = is_d(stmt.targets[0]) if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 else None
        if param is not None:
            target = targets.get(param)
            if target is None:
                continue
            value = rewrite.visit(stmt.value)
            if target in materialized:
                value = accumulate(target, value) if accumulate else ast_util.add(ast_util.name(target), value)
            else:
                materialized.add(target)
            out.append(ast_util.assign(target, value))
            continue
        out.append(rewrite.visit(stmt))
    return _drop_dead(out, set(temps.values())) if temps else out


# ------------------------------------------------------------------ tangent templates

class Zero:
    """A symbolic zero tangent; `like` names the input whose shape a
    materialized zero takes (None: the scalar 0.0, broadcast by NumPy)."""

    __slots__ = ("like",)

    def __init__(self, like=None):
        self.like = like


class _TangentRewrite:
    """Substitutes a call site into a tangent template's expressions,
    dropping symbolic zeros (see the module docstring)."""

    def __init__(self, rule, output, bindings, tnames, renames, globals_map, zeros):
        self.rule = rule
        self.output = output
        self.bindings = bindings
        self.tnames = tnames
        self.renames = renames          # temporaries: template name -> fresh name
        self.zero_temps = set()
        self.globals_map = globals_map
        self.zeros = zeros

    def resolve(self, node):
        """The object a template expression such as `np.sum` names, or None."""
        if isinstance(node, gast.Name):
            if node.id in self.rule.params or node.id in self.renames:
                return None
            return self.rule.globals.get(node.id)
        if isinstance(node, gast.Attribute):
            base = self.resolve(node.value)
            return getattr(base, node.attr, None) if base is not None else None
        return None

    def materialize(self, value):
        if not isinstance(value, Zero):
            return value
        if value.like is not None and value.like in self.bindings:
            return ast_util.call(self.zeros, [ast_util.clone(self.bindings[value.like])])
        return ast_util.const(0.0)

    def expr(self, node):
        p = is_t(node)
        if p is not None:
            tangent = self.tnames.get(p)
            if tangent is None:
                return Zero(p)
            return ast_util.name(tangent) if isinstance(tangent, str) else ast_util.clone(tangent)
        if isinstance(node, gast.Name):
            if node.id in self.zero_temps:
                return Zero()
            if node.id in self.renames:
                return ast_util.name(self.renames[node.id])
            if node.id == self.rule.output:
                return ast_util.name(self.output)
            if node.id in self.bindings:
                return ast_util.clone(self.bindings[node.id])
            if node.id in self.globals_map:
                return ast_util.name(self.globals_map[node.id])
            return ast_util.clone(node)
        if isinstance(node, gast.BinOp):
            return self.binop(node)
        if isinstance(node, gast.UnaryOp):
            v = self.expr(node.operand)
            if isinstance(v, Zero) and isinstance(node.op, (gast.USub, gast.UAdd)):
                return Zero()
            return _with(node, operand=self.materialize(v))
        if isinstance(node, gast.Call):
            return self.call(node)
        if isinstance(node, gast.Subscript):
            v = self.expr(node.value)
            if isinstance(v, Zero):
                return Zero()
            return _with(node, value=v, slice=self.materialize(self.expr(node.slice)))
        if isinstance(node, gast.Attribute):
            v = self.expr(node.value)
            if isinstance(v, Zero) and node.attr in tangent_rules.LINEAR_ATTRS:
                return Zero()
            return _with(node, value=self.materialize(v))
        return self.generic(node)

    def generic(self, node):
        new = copy.copy(node)
        for field, value in gast.iter_fields(node):
            if isinstance(value, gast.expr):
                setattr(new, field, self.materialize(self.expr(value)))
            elif isinstance(value, list):
                setattr(new, field, [self.materialize(self.expr(v)) if isinstance(v, gast.expr)
                                     else ast_util.clone(v) for v in value])
            elif isinstance(value, gast.AST):
                setattr(new, field, ast_util.clone(value))
        return new

    def binop(self, node):
        left, right = self.expr(node.left), self.expr(node.right)
        lz, rz = isinstance(left, Zero), isinstance(right, Zero)
        op = node.op
        if isinstance(op, gast.Add):
            if lz:
                return right
            if rz:
                return left
        elif isinstance(op, gast.Sub):
            if lz and rz:
                return Zero()
            if lz:
                return _neg(right)
            if rz:
                return left
        elif isinstance(op, (gast.Mult, gast.MatMult)):
            if lz or rz:
                return Zero()
        elif isinstance(op, gast.Div) and lz:
            return Zero()
        return ast_util.binop(self.materialize(left), ast_util.clone(op), self.materialize(right))

    def call(self, node):
        func = node.func
        obj = self.resolve(func)
        args = [self.expr(a) for a in node.args]
        keywords = []
        for k in node.keywords:   # (keyword node, new value)
            if (isinstance(k.value, gast.Name) and k.arg == k.value.id and k.arg in self.rule.defaults
                    and k.arg in self.bindings and isinstance(self.bindings[k.arg], gast.Constant)
                    and _same(self.bindings[k.arg].value, self.rule.defaults[k.arg])):
                continue   # `axis=axis` where the call site uses the default: leave it out
            keywords.append((k, self.expr(k.value)))
        kind = tangent_rules.linear_kind(obj) if obj is not None else None
        zeros = [isinstance(a, Zero) for a in args]
        if kind == "first" and zeros and zeros[0]:
            return Zero()
        if kind == "any" and any(zeros):
            return Zero()
        if isinstance(kind, frozenset) and any(zeros[i] for i in kind if i < len(zeros)):
            return Zero()
        if isinstance(kind, tuple) and all(zeros[i] for i in kind if i < len(zeros)) \
                and any(i < len(zeros) for i in kind):
            return Zero()
        if isinstance(func, gast.Attribute) and obj is None:
            recv = self.expr(func.value)
            if isinstance(recv, Zero) and func.attr in tangent_rules.LINEAR_METHODS:
                return Zero()
            new_func = _with(func, value=self.materialize(recv))
        else:
            new_func = self.expr(func)
        return _with(node, func=new_func, args=[self.materialize(a) for a in args],
                     keywords=[_with(k, value=self.materialize(v)) for k, v in keywords])


def _with(node, **fields):
    """A copy of `node` with `fields` replaced (the other fields deep-copied)."""
    new = copy.copy(node)
    for f, v in gast.iter_fields(node):
        setattr(new, f, fields[f] if f in fields else ast_util.clone(v))
    return new


def _neg(operand):
    node = ast_util.quote_expr("-_")
    node.operand = operand
    return node


def _same(a, b):
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def inline_tangent(rule, output, bindings, tnames, namer, globals_map, zeros_like):
    """Inline the tangent template of `rule` at a call site.

    output: the name of the primal output. bindings: {param: gast expression}.
    tnames: {param: name of its tangent, or a gast expression (a list of
    tangents for a list parameter)}, for the inputs that have one (the
    others are symbolic zeros). globals_map: {template global: name in the
    generated code}. zeros_like: the name generated code calls to
    materialize a zero. Returns (temporary statements, expression), the
    expression being a `Zero` when the output's tangent is symbolically zero.
    """
    temps = _temporaries(rule.tree, is_t, namer)
    rewrite = _TangentRewrite(rule, output, bindings, tnames, temps, globals_map, zeros_like)
    stmts, value = [], Zero()
    for stmt in rule.tree.body:
        if not isinstance(stmt, gast.Assign):
            continue    # the docstring (TangentRule allows nothing else)
        v = rewrite.expr(stmt.value)
        if is_t(stmt.targets[0]) is not None:
            value = v
            continue
        target = stmt.targets[0]
        if isinstance(v, Zero) and isinstance(target, gast.Name):
            rewrite.zero_temps.add(target.id)
            continue
        new_target = ast_util.clone(target)
        for n in ast_util.walk(new_target):
            if isinstance(n, gast.Name) and n.id in temps:
                n.id = temps[n.id]
        stmts.append(ast_util.assign(new_target, rewrite.materialize(v)))
    live = ast_util.names_loaded(value) if not isinstance(value, Zero) else set()
    return _drop_dead(stmts, set(temps.values()), live), value


# ------------------------------------------------------------------ compiled rules

def _build(rule, fdef, injected, title):
    """Compile `fdef` in the namespace of `rule`'s template module (plus
    `injected`), through codegen.build: its lines show in tracebacks."""
    fn = codegen.build([fdef], injected, rule.template, title, {})[fdef.name]
    fn.__srcgrad_source__ = ast_util.to_source(fdef)
    return fn


def _vjp_def(source, name, needed, extra_head=()):
    """The FunctionDef `name(_g, z, *params) -> tuple` of an adjoint
    template inlined with the identity binding; (fdef, targets)."""
    namer = Namer(set(source.params) | {source.output, "_g", "_B"} | set(source.globals))
    targets = {p: ("_b_" + p if p in needed else None) for p in source.diff_params}
    namer.reserve(t for t in targets.values() if t)
    bindings = {p: ast_util.name(p) for p in source.params}
    body = inline_adjoint(source.tree, source.output, "_g", bindings, targets, set(), namer)
    return body, targets


def _returning(body, targets, diff_params):
    assigned = set()
    for stmt in body:
        assigned |= ast_util.names_stored(stmt)
    return ast_util.return_(ast_util.tuple_([
        ast_util.name(targets[p]) if targets[p] and targets[p] in assigned else ast_util.const(None)
        for p in diff_params]))


def vjp(rule, needed):
    """The tape's VJP function of adjoint `rule` for the cotangents of the
    params in `needed`: `vjp(g, z, **bound) -> tuple` aligned with
    `rule.diff_params` (None where not needed). Compiled once per `needed`
    set from the template, cached on the rule."""
    needed = frozenset(needed)
    fn = rule.compiled.get(needed)
    if fn is None:
        body, targets = _vjp_def(rule, "vjp_" + rule.name, needed)
        fdef = ast_util.function_def("vjp_" + rule.name, ["_g", rule.output] + rule.params,
                                     body + [_returning(body, targets, rule.diff_params)])
        fn = rule.compiled[needed] = _build(rule, fdef, {}, "rule %s" % rule.name)
    return fn


def jvp(rule, needed):
    """The JVP function of tangent `rule` for the inputs in `needed` (those
    with tangents): `jvp(z, *tangents, **bound) -> tangent of z` (tangents
    in the order of `tangent_params`; None when the output's tangent is a
    symbolic zero). Compiled once per `needed` set, cached on the rule."""
    key = tuple(p for p in rule.tangent_params if p in needed)
    fn = rule.compiled.get(key)
    if fn is None:
        namer = Namer(set(rule.params) | {rule.output, "t"} | set(rule.globals))
        tnames = {p: namer.fresh("d" + p) for p in key}
        bindings = {p: ast_util.name(p) for p in rule.params}
        zeros = namer.fresh("_zeros_like")
        stmts, value = inline_tangent(rule, rule.output, bindings, tnames, namer, {}, zeros)
        ret = ast_util.const(None) if isinstance(value, Zero) else value
        fdef = ast_util.function_def("jvp_" + rule.name, [rule.output] + [tnames[p] for p in key] + rule.params,
                                     stmts + [ast_util.return_(ret)])
        fn = rule.compiled[key] = _build(rule, fdef, {zeros: containers.zeros_tree},
                                         "tangent rule %s" % rule.name)
    return fn


def batched_vjp(rule, needed):
    """The tape's VJP function of adjoint `rule` on a stack of cotangents:
    `vjp(g, z, *params) -> tuple` aligned with rule.diff_params, g with a
    leading batch axis (tape.GradientTape.jacobian's vectorised sweep).
    Compiled once per `needed` set: the registered batched template, or the
    template with the batched helpers substituted (where
    transforms/batch_safety.py finds it batch-safe), or a loop over the
    examples."""
    needed = frozenset(needed)
    key = ("batched", needed)
    fn = rule.compiled.get(key)
    if fn is None:
        fn = rule.compiled[key] = _compile_batched(rule, needed)
    return fn


def _compile_batched(rule, needed):
    template = registry.batched_rule(rule.primitive)
    if template is None and not batch_safety.batchable(rule):
        unbatched = vjp(rule, needed)

        def looped(g, z, /, *args, **kwargs):     # (positional-only: a rule may have a parameter g)
            def one(gk, zz, /, *a):
                return unbatched(gk, zz, *a, **kwargs)
            return batched.batch_vjp(one, g, z, *args)
        return looped
    source = template or rule
    body, targets = _vjp_def(source, "batched_vjp_" + rule.name, needed)
    batch_size = ALIAS_PREFIX + "batch_size"
    injected = {batch_size: batched.batch_size}
    if template is None:                # substitute the batched helpers
        renames, extra = {}, {}
        for name in free_names(source):
            twin = batch_safety.batched_twin(source.globals[name])
            if twin is not None:
                helper, args = twin
                renames[name] = ALIAS_PREFIX + helper.__name__
                injected[renames[name]] = helper
                if args:
                    extra[renames[name]] = args
        body = [batch_safety.substitute_helpers(s, renames, extra) for s in body]
    head = replace("_B = BATCH_SIZE(_g)", BATCH_SIZE=ast_util.name(batch_size))
    fdef = ast_util.function_def("batched_vjp_" + rule.name, ["_g", source.output] + source.params,
                                 head + body + [_returning(body, targets, source.diff_params)])
    return _build(source, fdef, injected, "batched rule %s" % rule.name)
