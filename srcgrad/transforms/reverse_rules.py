"""The reverse-mode generator's adjoints of primitives with rules, and of
opaque values (a mixin of reverse.py's ReverseGenerator).

Requires: the generator's fields. Guarantees: a rule's template is inlined
at its statement (batched: a batch-safe template or a twin, or the rule's
VJP looped per example); an opaque value met on a differentiated path is
refused by name.
"""
import math

import gast
import numpy as np

from .. import runtime
from ..errors import NoRuleError
from ..rules import registry
from ..rules.helpers import batched as rules_batched
from ..rules.helpers import broadcast as helpers
from ..rules.helpers import complex as helpers_math
from ..rules.python import containers
from ..syntax import ast_util
from . import batch_safety, instantiate, ops, optimize


def _as_load(e):
    return ast_util.set_load(ast_util.clone(e)) if isinstance(e, gast.AST) else e


class _StripCalls:
    """f(x) -> x for the functions named in `names` (conj on real values)."""

    def __init__(self, names):
        self.names = names

    def visit(self, node):
        return ast_util.rewrite_calls(node, self.call)

    def call(self, node):
        if isinstance(node.func, gast.Name) and node.func.id in self.names and len(node.args) == 1:
            return node.args[0]
        return node


def _squared(rule, bindings):
    """`z = x * x` differentiated as `np.square(x)`: (np.square's rule,
    its bindings), else (rule, bindings). One product `g * (2.0 * x)`
    instead of two and their sum, `g * x + g * x`: the same bits (doubling
    is exact; overflow aside), the same dtype (a Python float's)."""
    x, y = bindings.get("x"), bindings.get("y")
    if not (type(x) is gast.Name and type(y) is gast.Name and x.id == y.id):
        return rule, bindings
    if any(type(bindings.get(k)) is not gast.Constant or bindings[k].value is not None
           for k in ("out", "dtype") if k in bindings):
        return rule, bindings
    return registry.adjoint_rule(np.square), {k: v for k, v in bindings.items() if k != "y"}


class RuleAdjoints:
    def rule_code(self, s, op, t, nz):
        rule, bindings = op.rule, op.bindings
        if rule.primitive is np.multiply:
            rule, bindings = _squared(rule, bindings)
        tmap = {}
        spread = []         # (list display, name of its cotangent list)
        for p in rule.diff_params:
            e = bindings.get(p)
            if isinstance(e, gast.Name) and e.id in self.active:
                tmap[p] = self.adjoint(e.id)
            elif isinstance(e, (gast.List, gast.Tuple)):
                # (nested displays too: einsum's operands ('i,i', [a, 2.0], b) hold a list)
                if any(isinstance(n, gast.Name) and n.id in self.active for n in ast_util.walk(e)):
                    tmap[p] = self.namer.fresh("_b" + p)
                    spread.append((e, tmap[p]))
            elif e is not None and not isinstance(e, (gast.Name, gast.Constant)):
                if any(isinstance(n, gast.Name) and n.id in self.active for n in ast_util.walk(e)):
                    self.fail(s, "a nested structure of differentiated values passed to %s" % rule.name)
        if not tmap:
            return []
        extra = {}
        looped = False
        if self.batched:
            brule = registry.batched_rule(rule.primitive)
            if brule is not None:
                rule = brule
            elif not batch_safety.batchable(rule):
                looped = True
        gmap = {}
        for n in instantiate.free_names(rule):
            obj = rule.globals[n]
            twin = batch_safety.batched_twin(obj) if self.batched else None
            if twin is not None:
                batched, args = twin
                gmap[n] = self.inject(batched.__name__, batched)
                extra[gmap[n]] = args
            else:
                gmap[n] = self.inject(n, obj)
        if self.batched and "_B" in instantiate.all_free_names(rule):
            gmap["_B"] = self.batch
        pre = []
        if rule.sequence_output and t in self.dynamic and \
                getattr(rule.primitive, "__module__", "") != containers.__name__:
            # a tuple output's cotangent, with zeros for its symbolic-zero elements
            bt = self.adjoint(t)
            if self.batched:
                dense = ast_util.call(self.helper(rules_batched.densify_tree_b),
                                      [ast_util.name(bt), ast_util.name(t), ast_util.name(self.batch)])
            else:
                dense = ast_util.call(self.helper(runtime.densify_tree), [ast_util.name(bt), ast_util.name(t)])
            pre = [ast_util.assign(bt, dense)]
        if looped:
            return pre + self.looped_rule_code(s, op, t, tmap, spread, nz)
        # which adjoints hold a value already: inline accumulates into those
        held = {self.adj[n] for n in nz if n in self.adj}
        before = set(held)
        code = pre + instantiate.inline_adjoint(rule.tree, t, self.adjoint(t), bindings, tmap, held,
                            self.namer, gmap, accumulate=self.add_expr)
        for n, a in list(self.adj.items()):
            if a in held and a not in before:
                nz.add(n)
        if self.real_only:
            conj_names = {alias for n, alias in gmap.items() if rule.globals.get(n) is helpers_math.conj}
            if conj_names:
                code = [_StripCalls(conj_names).visit(c) for c in code]
        if not self.batched and t in self.scalar:
            # a 0-d output: its operands are 0-d too where they are scalars; no unbroadcast
            aliases = {a for n, a in gmap.items() if rule.globals.get(n) is helpers.unbroadcast}
            if aliases:
                code = [optimize.ElideShapeHelper(aliases, self.scalar).visit(c) for c in code]
        same = self.same_shape.get(id(s))
        if same:
            # operands of the result's shape (transforms/shapes.py): their unbroadcast is the identity,
            # batched too (a stack of cotangents has shape (B,) + the name's shape)
            aliases = {a for n, a in gmap.items() if rule.globals.get(n) is helpers.unbroadcast}
            if aliases:
                code = [optimize.ElideShapeHelper(aliases, same).visit(c) for c in code]
        if extra:
            code = [batch_safety.substitute_helpers(c, {}, extra) for c in code]
        if not self.batched and op.python_float:
            # math.sin(x) on a Python float: its adjoint stays in the math module (no NumPy scalars)
            np_aliases = {a for n, a in gmap.items() if rule.globals.get(n) is np}
            if np_aliases:
                code = [optimize.MathFunctions(np_aliases, self.inject("math", math)).visit(c) for c in code]
        code = optimize.fold(code)
        for e, tmp in spread:
            code += self.spread_adjoints(s, ast_util.name(tmp), e, nz, rule.name)
        return code

    def spread_adjoints(self, s, read, e, nz, rule_name):
        """The cotangent `read` of the list or tuple display `e` passed to
        a rule, accumulated into its active names entry by entry, and into
        the entries of the displays nested in it (einsum's operands
        ('i,i', [a, 2.0], b): left out, a's cotangent was dropped, a wrong
        gradient without a word)."""
        code = []
        for k, elt in enumerate(e.elts):
            entry = self.entry(ast_util.clone(read), ast_util.const(k))
            if isinstance(elt, gast.Name) and elt.id in self.active:
                code.append(self.accumulate(elt.id, self.densify_call(entry, elt.id), nz))
            elif isinstance(elt, (gast.List, gast.Tuple)):
                code += self.spread_adjoints(s, entry, elt, nz, rule_name)
            elif any(isinstance(n, gast.Name) and n.id in self.active for n in ast_util.walk(elt)):
                self.fail(s, "a nested structure of differentiated values passed to %s" % rule_name)
        return code

    def looped_rule_code(self, s, op, t, tmap, spread, nz):
        """A rule that cannot run on a stack of cotangents: its VJP once per
        example (rules/batched.batch_vjp), results stacked."""
        rule = op.rule
        needed = [p for p in rule.diff_params if p in tmap]
        vjp = self.inject("vjp_" + rule.name.strip("_"), instantiate.vjp(rule, needed))
        args = [ast_util.name(vjp), ast_util.name(self.adjoint(t)), ast_util.name(t)]
        args += [_as_load(ast_util.clone(op.bindings.get(p, ast_util.const(rule.defaults.get(p)))))
                 for p in rule.params]
        temps = [self.namer.fresh("_b" + p) for p in rule.diff_params]
        code = [ast_util.assign(ast_util.tuple_([ast_util.name(x, True) for x in temps] + [], store=True)
                                if len(temps) > 1 else temps[0],
                                ast_util.call(self.helper(rules_batched.batch_vjp), args)
                                if len(temps) > 1 else
                                ast_util.item(ast_util.call(self.helper(rules_batched.batch_vjp), args), 0))]
        spread_tmps = dict((id(e), tmp) for e, tmp in spread)
        for p, tmp in zip(rule.diff_params, temps):
            if p not in tmap:
                continue
            e = op.bindings.get(p)
            if isinstance(e, gast.Name):
                code.append(self.accumulate(e.id, ast_util.name(tmp), nz))
            elif isinstance(e, (gast.List, gast.Tuple)):
                code += self.spread_adjoints(s, ast_util.name(tmp), e, nz, rule.name)
        del spread_tmps
        return code

    def opaque(self, s, op):
        active_in = [n.id for n in ast_util.walk(s.value) if isinstance(n, gast.Name) and n.id in self.active]
        if not active_in:
            return
        if isinstance(op.obj, str) and op.obj.startswith("attribute"):
            self.fail(s, "reading the %s of an object that holds differentiated values" % op.obj,
                      "objects built inside differentiated code are not supported: pass their arrays")
        if op.obj is None:
            self.fail(s, *ops.unknown_receiver_refusal())
        if isinstance(op.obj, type):
            self.fail(s, "constructing a %s from differentiated values" % op.obj.__name__,
                      "objects built inside differentiated code are not supported: build them outside")
        if getattr(op.obj, "__self__", None) is not None and self.ctx.callee(
                getattr(op.obj, "__func__", None)) is not None:
            self.fail(s, "a call of the method %s on a differentiated value"
                      % getattr(op.obj, "__qualname__", op.obj),
                      "call a module-level function instead, passing what it reads as arguments")
        filename, lineno, _ = self.parsed.origin(s)
        raise NoRuleError(op.obj, filename, lineno)
