"""A-normal form: one primitive operation per statement, then SSA names for
straight-line code.

Requires: resolve. Guarantees, for the returned body:
- every assignment is `name = op` or `a, b = user_call(...)`, where the
  operands of `op` are names, constants, or tuples of them, and the
  assignment carries `Anno.OP` (an `Op` saying which rule, callee or
  non-differentiable operation it is);
- `if` tests are names; `for` loops iterate over `range(...)` of names;
- the function ends with `return name` or `return a, b` (distinct names);
- a name assigned only at the top level is assigned once (later versions are
  `x_1`, `x_2`); a name assigned inside a branch or loop ("stacked") is never
  read by the operation that assigns it.
"""
import collections
import operator

import gast
import numpy as np

from .. import runtime
from ..errors import UnsupportedSyntaxError
from ..rules import registry
from ..rules.python import containers
from ..syntax import ast_util
from ..syntax.anno import Anno
from .anf_calls import _DISPLAYS, _SHAPE_ATTRS, CallForms, _names_in
from .ops import Op

_BINOPS = {
    gast.Add: (np.add, "add"), gast.Sub: (np.subtract, "sub"), gast.Mult: (np.multiply, "mul"),
    gast.Div: (np.true_divide, "div"), gast.Pow: (np.power, "pow"), gast.MatMult: (np.matmul, "matmul"),
    gast.Mod: (np.remainder, "mod"), gast.FloorDiv: (np.floor_divide, "floordiv"),
}
_UNARY = {gast.USub: (np.negative, "neg"), gast.UAdd: (np.positive, "pos")}

class _ANF(CallForms):
    def __init__(self, ctx):
        self.ctx = ctx
        self.free = {}          # the resolution's free names -> objects (transform sets it)
        self.parsed = ctx.parsed
        self.namer = ctx.namer
        self.temps = set()
        self.packs = {}        # name -> the tuple/dict display assigned to it (names bound once)
        self.once = set()      # the names the function binds once (transform sets it)
        self.stacks = set()    # stacks of generated code being transformed again

    def fail(self, node, construct, hint=None, op_by_op=True):
        filename, lineno, col = self.parsed.origin(node)
        raise UnsupportedSyntaxError(construct, filename, lineno, col, hint, op_by_op)

    # -- statements
    def block(self, stmts):
        out = []
        for s in stmts:
            out.extend(self.stmt(s))
        return out

    def stmt(self, s):
        if isinstance(s, gast.Expr):
            if Anno.GRAD_OF.of(s) is not None:
                return [s]  # an insert_grad_of block: the reverse sweep runs its body
            if isinstance(s.value, gast.Constant):
                return []  # docstring, comment or bare constant
            if self._stack_op(s.value) is runtime.push:
                return self.push(s)
            if self._stack_op(s.value) is runtime.pop:
                # a pop whose value is dropped (keeping a derivative stack in step) is still a
                # pop: its own derivative code must move one value too
                new = ast_util.copy_location(ast_util.assign(self.namer.fresh("_dropped"), s.value), s)
                return self.stmt(new)
            if isinstance(s.value, gast.Call):
                self.check_mutation(s.value)
                self.check_called_for_effect(s.value)
            Anno.FORWARD_ONLY.add_to(s, True)
            return [s]
        if isinstance(s, gast.Pass):
            return []
        if isinstance(s, (gast.Assert, gast.Raise)):
            Anno.FORWARD_ONLY.add_to(s, True)
            return [s]
        if isinstance(s, gast.AugAssign):
            value = ast_util.binop(ast_util.name(s.target.id), s.op, s.value)
            new = ast_util.copy_location(ast_util.assign(s.target.id, value), s)
            return self.stmt(new)
        if isinstance(s, gast.AnnAssign):
            return self.stmt(ast_util.copy_location(ast_util.assign(s.target, s.value), s))
        if isinstance(s, gast.Assign):
            out = []
            if len(s.targets) != 1:
                self.fail(s, "chained assignment (a = b = ...)")
            target = s.targets[0]
            if isinstance(target, gast.List):
                target = ast_util.set_store(ast_util.tuple_(target.elts))
            if isinstance(target, gast.Tuple):
                return out + self.unpack(target, s.value, s)
            hint = target.id if isinstance(target, gast.Name) else None
            value, op = self.top(s.value, out, hint)
            if op.kind == "call" and op.n_outputs > 1:
                # out = f(x) with f returning a tuple: out_0, out_1 = f(x); out = (out_0, out_1)
                temps = [self.namer.fresh("%s_%d" % (hint or "out", k)) for k in range(op.n_outputs)]
                first = self._assign(ast_util.tuple_([ast_util.name(t, True) for t in temps], store=True),
                                     value, op, s)
                out.append(first)
                pack = ast_util.tuple_([ast_util.name(t) for t in temps])
                new = self._assign(target, pack, Op("pack", source=hint or "t", args=list(pack.elts)), s)
                Anno.ASSIGNED_ONCE.add_to(new, Anno.ASSIGNED_ONCE.of(s, False))
                out.append(new)
                if target.id in self.once:
                    self.packs[target.id] = pack
                return out
            new = ast_util.copy_location(ast_util.assign(target, value), s)
            Anno.OP.add_to(new, op)
            Anno.ASSIGNED_ONCE.add_to(new, Anno.ASSIGNED_ONCE.of(s, False))     # (a return value: lower/exits.py)
            out.append(new)
            if op.kind == "pack" and isinstance(target, gast.Name) and target.id in self.once:
                self.packs[target.id] = value
            return out
        if isinstance(s, gast.While):
            out = []
            count = self.namer.fresh("_trips")
            out.append(self._assign(count, ast_util.const(0), Op("nondiff", source="n"), s))
            cond = self.namer.fresh("cond")
            self.condition(ast_util.clone(s.test), cond, out, s)
            body = self.block(s.body)
            increment = self._assign(count, ast_util.quote_expr("%s + 1" % count), Op("nondiff"), s)
            Anno.NO_SAVE.add_to(increment, True)     # the reverse sweep reads only the final count
            body.append(increment)
            self.condition(s.test, cond, body, s)
            new = ast_util.copy_location(gast.While(test=ast_util.name(cond), body=body, orelse=[]), s)
            Anno.COUNT.add_to(new, count)
            out.append(new)
            return out
        if isinstance(s, gast.If):
            out = []
            cond = self.namer.fresh("cond")
            self.condition(s.test, cond, out, s)
            test = ast_util.name(cond)
            new = ast_util.if_(test, self.block(s.body), self.block(s.orelse))
            ast_util.copy_location(new, s)
            out.append(new)
            return out
        if isinstance(s, gast.For):
            out = []
            it = s.iter
            args = [self.simple(a, out, "n") for a in it.args]
            assigned = {n.id for n in ast_util.walk(ast_util.module(s.body))
                        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
            for k, a in enumerate(args):
                if isinstance(a, gast.Name) and a.id in assigned:
                    # range() reads its bounds once: keep them from the body's assignments
                    tmp = self.namer.fresh(a.id)
                    out.append(self._assign(tmp, ast_util.name(a.id), Op("nondiff", source="n"), s))
                    args[k] = ast_util.name(tmp)
            new = ast_util.for_(ast_util.set_store(ast_util.clone(s.target)),
                                ast_util.call(ast_util.clone(it.func), args), self.block(s.body))
            ast_util.copy_location(new, s)
            if Anno.CHECKPOINTED.exists(s):     # (sg.checkpointed: reversed by transforms/checkpointed.py)
                Anno.CHECKPOINTED.add_to(new, Anno.CHECKPOINTED.of(s))
            out.append(new)
            return out
        if isinstance(s, gast.Return):
            out = []
            elts = s.value.elts if isinstance(s.value, gast.Tuple) else [s.value]
            names = []
            for e in elts:
                n = self.simple(e, out, None, force_name=True, name="out")
                if n.id in names:
                    tmp = self.namer.fresh(n.id + "_out")
                    a = ast_util.copy_location(ast_util.assign(tmp, ast_util.name(n.id)), s)
                    Anno.OP.add_to(a, Op("copy", args=[ast_util.name(n.id)]))
                    out.append(a)
                    n = ast_util.name(tmp)
                names.append(n.id)
            value = ast_util.tuple_([ast_util.name(n) for n in names]) if isinstance(s.value, gast.Tuple) \
                else ast_util.name(names[0])
            out.append(ast_util.copy_location(ast_util.return_(value), s))
            return out
        self.fail(s, type(s).__name__ + " statement")

    def _stack_op(self, e):
        """runtime.push or runtime.pop when `e` calls one, else None."""
        if isinstance(e, gast.Call):
            obj = Anno.CALLEE.of(e.func)
            if obj is runtime.push or obj is runtime.pop:
                return obj
        return None

    def stack_name(self, e, call):
        if not isinstance(e, gast.Name):
            self.fail(call, "push/pop on something other than a stack variable")
        self.stacks.add(e.id)
        return e

    def push(self, s):
        """push(S, x) in generated code being transformed again."""
        call = s.value
        if len(call.args) != 2 or call.keywords:
            self.fail(s, "this call of push")
        out = []
        stack = self.stack_name(call.args[0], s)
        x = self.simple(call.args[1], out, "t", force_name=True)
        call.args = [stack, x]
        Anno.OP.add_to(s, Op("push", args=[stack, x], source="push"))
        out.append(s)
        return out

    def _assign(self, target, value, op, where):
        a = ast_util.copy_location(ast_util.assign(target, value), where)
        Anno.OP.add_to(a, op)
        return a

    def condition(self, test, name, out, where):
        """`name = test`, evaluated as written (short-circuit and all): a
        condition is never differentiated."""
        out.append(self._assign(name, test, Op("nondiff", source="cond"), where))

    def unpack(self, target, value, s):
        """`a, b = value`: a user call keeps its tuple target; a tuple
        display is a parallel assignment; anything else is read by index
        (`a = t[0]`, `*rest = t[1:]`), for arrays and containers alike."""
        out = []
        elts = target.elts
        starred = [i for i, e in enumerate(elts) if isinstance(e, gast.Starred)]
        if isinstance(value, (gast.Tuple, gast.List)) and not starred and len(value.elts) == len(elts) and \
                not any(isinstance(e, gast.Starred) for e in value.elts):
            temps = []
            for e in value.elts:
                v, op = self.top(e, out, "t")
                tmp = self.namer.fresh("_" + (elts[len(temps)].id if isinstance(elts[len(temps)], gast.Name)
                                              else "t"))
                self.temps.add(tmp)
                out.append(self._assign(tmp, v, op, s))
                temps.append(tmp)
            for t, tmp in zip(elts, temps):
                out.extend(self.stmt(ast_util.copy_location(ast_util.assign(t, ast_util.name(tmp)), s)))
            return out
        v, op = self.top(value, out, None)
        if op.custom:
            op.n_outputs = len(elts)
        if op.kind in ("call", "nondiff") and not starred and all(isinstance(e, gast.Name) for e in elts):
            new = self._assign(target, v, op, s)
            return out + [new]
        tmp = self.namer.fresh("_seq")
        self.temps.add(tmp)
        out.append(self._assign(tmp, v, op, s))
        n = len(elts)
        for i, e in enumerate(elts):
            if starred and i == starred[0]:
                lo, hi = i, i - n + 1
                index = "%s[%d:%s]" % (tmp, lo, hi if hi < 0 else "")
                out.extend(self.stmt(ast_util.copy_location(
                    ast_util.assign(e.value, ast_util.quote_expr(index)), s)))
                continue
            k = i if not starred or i < starred[0] else i - n
            out.extend(self.stmt(ast_util.copy_location(
                ast_util.assign(e, ast_util.quote_expr("%s[%d]" % (tmp, k))), s)))
        return out

    # -- expressions
    def simple(self, e, out, hint, force_name=False, name=None):
        """Flatten `e` into statements appended to `out`; return a Name or
        Constant. A new temporary is called `name` if given, else after the op."""
        if isinstance(e, gast.Name) or (isinstance(e, gast.Constant) and not force_name):
            return e
        if isinstance(e, (gast.Tuple, gast.List)) and not force_name and \
                not any(isinstance(x, gast.Starred) for x in e.elts):
            e.elts = [self.simple(x, out, hint, force_name=isinstance(x, _DISPLAYS)) for x in e.elts]
            return e
        known = Anno.VALUE.of(e)       # a function or object passed on (resolve.py)
        value, op = self.top(e, out, hint)
        if isinstance(value, gast.Constant) and op.kind == "nondiff" and not force_name:
            return value            # a folded constant (-9.81)
        tmp = self.namer.fresh(name or op.source or hint or "t")
        self.temps.add(tmp)
        a = ast_util.copy_location(ast_util.assign(tmp, value), e)
        Anno.OP.add_to(a, op)
        out.append(a)
        result = ast_util.name(tmp)
        if known is not None:
            Anno.VALUE.add_to(result, known)
        return result

    def check_called_for_effect(self, call):
        """`g(a, b)` as a statement, g a user function writing into a
        parameter (`arr[1] = ...`, `arr += ...`): NumPy changes the caller's
        array, which neither compiled code nor the tape's immutable Tensors
        would see; refused by name."""
        obj = Anno.CALLEE.of(call.func)
        if obj is None or Anno.METHOD.exists(call.func) or not self._user_callee(call.func):
            return
        info = self.ctx.callee(obj)
        if info is not None and info.writes:
            self.fail(call, "calling %s for its effect on its argument (it writes into its parameter %s: NumPy "
                      "changes the caller's array, which compiled code does not see)"
                      % (getattr(obj, "__name__", "a function"), info.writes[0]),
                      "return the new value instead: %s = ..." % info.writes[0], op_by_op=False)
        if info is not None and info.grows:
            # a list or dict of the caller's changed in place: right op by op (op_by_op.py)
            self.fail(call, "calling %s for its effect on its argument (it changes its parameter %s, a list or "
                      "dict of the caller's, in place)" % (getattr(obj, "__name__", "a function"), info.grows[0]),
                      "return the new list or dict instead: %s = ..." % info.grows[0])

    def _user_callee(self, func):
        """Does `func` call a user function (or a custom_gradient function)
        that srcgrad compiles, rather than a primitive with a rule?"""
        obj = Anno.CALLEE.of(func)
        if obj is None or Anno.METHOD.exists(func):
            return False
        if getattr(obj, "__srcgrad_custom__", None) is not None:
            return True
        try:
            if registry.adjoint_rule(obj) is not None or registry.is_nondiff(obj):
                return False
        except TypeError:
            return False
        return self.ctx.callee(obj) is not None

    def base(self, n):
        """A user's variable name to name a temporary after, or None."""
        if isinstance(n, gast.Name) and not n.id.startswith("_") and n.id not in self.temps:
            return n.id
        return None

    def _index(self, sl, out):
        if isinstance(sl, gast.Slice):
            for f in ("lower", "upper", "step"):
                v = getattr(sl, f)
                if v is not None:
                    setattr(sl, f, self.simple(v, out, "i"))
            return sl
        if isinstance(sl, gast.Tuple):
            sl.elts = [self._index(x, out) for x in sl.elts]
            return sl
        return self.simple(sl, out, "i")

    def top(self, e, out, hint=None):
        """Flatten the operands of `e`; return (e with simple operands, Op)."""
        base = self.base

        if isinstance(e, (gast.Name, gast.Constant)):
            return e, Op("copy" if isinstance(e, gast.Name) else "nondiff", args=[e], source=hint or "t")
        if isinstance(e, gast.BinOp) and isinstance(e.op, gast.Add) and (
                isinstance(e.left, (gast.List, gast.Tuple)) or isinstance(e.right, (gast.List, gast.Tuple))):
            # hs + [h]: list concatenation
            args = [self.simple(x, out, hint, force_name=True) for x in (e.left, e.right)]
            call = ast_util.call(ast_util.name("list_extend"), args)
            Anno.CALLEE.add_to(call.func, containers.list_extend)
            Anno.HELPER.add_to(call.func, True)
            return call, self.classify_fn(containers.list_extend, args, {}, e, hint or "cat")
        if isinstance(e, gast.BinOp):
            # (a display operand is named: `[x] * n` may be list repetition, kinds.py)
            e.left = self.simple(e.left, out, hint, force_name=isinstance(e.left, _DISPLAYS))
            e.right = self.simple(e.right, out, hint, force_name=isinstance(e.right, _DISPLAYS))
            fn, nm = _BINOPS.get(type(e.op), (None, "op"))
            src = nm + ("_" + base(e.left) if base(e.left) else "")
            return e, self.classify_fn(fn, [e.left, e.right], {}, e, src)
        if (isinstance(e, gast.UnaryOp) and isinstance(e.op, (gast.USub, gast.UAdd))
                and isinstance(e.operand, gast.Constant) and isinstance(e.operand.value, (int, float, complex))
                and not isinstance(e.operand.value, bool)):
            value = -e.operand.value if isinstance(e.op, gast.USub) else e.operand.value
            return ast_util.const(value), Op("nondiff", source=hint or "c")
        if isinstance(e, gast.UnaryOp):
            e.operand = self.simple(e.operand, out, hint)
            if type(e.op) in _UNARY:
                fn, nm = _UNARY[type(e.op)]
                suffix = "_" + base(e.operand) if base(e.operand) else ""
                return e, self.classify_fn(fn, [e.operand], {}, e, nm + suffix)
            return e, Op("nondiff", source="not")
        if isinstance(e, gast.Compare):
            e.left = self.simple(e.left, out, hint)
            e.comparators = [self.simple(c, out, hint) for c in e.comparators]
            return e, Op("nondiff", source="cond")
        if isinstance(e, gast.Subscript):
            e.value = self.simple(e.value, out, hint)
            e.slice = self._index(e.slice, out)
            rule = registry.adjoint_rule(operator.getitem)
            src = (base(e.value) or "item") + "_i"
            return e, Op("rule", rule=rule, bindings={"x": e.value, "index": ast_util.slice_to_expr(e.slice)},
                         source=src)
        if isinstance(e, gast.Attribute):
            e.value = self.simple(e.value, out, hint)
            src = (base(e.value) + "_" if base(e.value) else "") + e.attr
            if e.attr == "T":
                return e, self.classify_fn(np.transpose, [e.value], {}, e, src)
            if e.attr == "flat":
                # x.flat[i] reads np.ravel(x)[i] (a read: writes through .flat are assignment targets)
                call = ast_util.copy_location(ast_util.call(ast_util.name("ravel"), [e.value]), e)
                Anno.CALLEE.add_to(call.func, np.ravel)
                Anno.HELPER.add_to(call.func, True)
                return call, self.classify_fn(np.ravel, [e.value], {}, call, src)
            if e.attr in ("real", "imag"):
                fn = np.real if e.attr == "real" else np.imag
                if registry.adjoint_rule(fn) is not None:
                    return e, self.classify_fn(fn, [e.value], {}, e, src)
                return e, Op("opaque", obj="ndarray." + e.attr, source=src, args=_names_in(e))
            if e.attr in _SHAPE_ATTRS:
                return e, Op("nondiff", source=src)
            # another attribute of a local value: fine unless the value is differentiated
            return e, Op("opaque", obj="attribute ." + e.attr, source=src, args=_names_in(e))
        if isinstance(e, (gast.Tuple, gast.List)):
            if any(isinstance(x, gast.Starred) for x in e.elts):
                return self.starred_display(e, out, hint)
            e.elts = [self.simple(x, out, hint, force_name=isinstance(x, _DISPLAYS)) for x in e.elts]
            return e, Op("pack", source=hint or "t", args=list(e.elts))
        if isinstance(e, gast.Dict):
            if any(k is None for k in e.keys):
                self.fail(e, "** in a dict display")
            e.keys = [self.simple(k, out, hint) for k in e.keys]
            e.values = [self.simple(v, out, hint, force_name=isinstance(v, _DISPLAYS)) for v in e.values]
            return e, Op("pack", source=hint or "d", args=list(e.values))
        if isinstance(e, gast.IfExp):
            tmp = self.namer.fresh(hint or "t")
            cond = self.namer.fresh("cond")
            self.condition(e.test, cond, out, e)
            body, orelse = [], []
            for branch, expr in ((body, e.body), (orelse, e.orelse)):
                v, op = self.top(expr, branch, hint)
                branch.append(self._assign(tmp, v, op, e))
            out.append(ast_util.copy_location(ast_util.if_(ast_util.name(cond), body, orelse), e))
            return ast_util.name(tmp), Op("copy", args=[ast_util.name(tmp)], source=hint or "t")
        if isinstance(e, gast.BoolOp):
            # a and b -> t = a; if t: t = b   (the value, short-circuit kept)
            tmp = self.namer.fresh(hint or "t")
            v, op = self.top(e.values[0], out, hint)
            out.append(self._assign(tmp, v, op, e))
            block = out
            for value in e.values[1:]:
                cond = self.namer.fresh("cond")
                test = ("bool(%s)" if isinstance(e.op, gast.And) else "not %s") % tmp
                self.condition(ast_util.quote_expr(test), cond, block, e)
                inner = []
                v, op = self.top(value, inner, hint)
                inner.append(self._assign(tmp, v, op, e))
                block.append(ast_util.copy_location(ast_util.if_(ast_util.name(cond), inner, []), e))
                block = inner
            return ast_util.name(tmp), Op("copy", args=[ast_util.name(tmp)], source=hint or "t")
        if isinstance(e, gast.JoinedStr):
            return e, Op("nondiff", source="s")
        if isinstance(e, gast.Call):
            if self._stack_op(e) is runtime.pop:
                if len(e.args) != 1 or e.keywords:
                    self.fail(e, "this call of pop")
                e.args = [self.stack_name(e.args[0], e)]
                return e, Op("pop", args=list(e.args), source=hint or "t")
            return self.call(e, out, hint)
        if isinstance(e, gast.Lambda):
            self.fail(e, "a lambda defined inside the differentiated function and used as a value (passed on, "
                         "stored, returned)", "srcgrad inlines a local lambda or def where it is called; define "
                                              "it at module level to pass it on")
        self.fail(e, type(e).__name__ + " expression")

def transform(resolution, ctx):
    """Put `resolution.node`'s body in A-normal form (in place), then give
    top-level reassignments fresh SSA names. Returns the FunctionDef, and
    fills `ctx.facts`: `stacked` (names assigned inside a branch or loop),
    `inputs`, `stacks` (stack variables of generated code), `containers`
    (parameters that hold lists, tuples or dicts) and `scalar_params`."""
    node = resolution.node
    namer = ctx.namer
    t = _ANF(ctx)
    t.free = {**resolution.free, **resolution.examples}    # known objects (x.astype(int) is a cast)
    # a display's name is expanded at `f(*name)` only when the name is bound once (`dims = []`, then
    # `dims = list_append(dims, v)` in a loop, is not the empty display)
    counts = collections.Counter(n.id for n in ast_util.walk(node) if isinstance(n, gast.Name)
                                 and isinstance(n.ctx, gast.Store))
    t.once = {name for name, k in counts.items() if k == 1} - set(resolution.params)
    body = t.block(node.body)
    parsed = ctx.parsed
    if not body or not isinstance(body[-1], gast.Return):
        raise UnsupportedSyntaxError("a function without a return value", parsed.filename,
                                     parsed.firstlineno, None, "return the value to differentiate")
    defined = set(resolution.params) | {leaf.name for leaf in resolution.leaves}
    node.body = _ssa(body, set(defined), namer)
    facts = ctx.facts
    facts.stacked = stacked_names(node.body)
    facts.inputs = sorted(defined)
    facts.containers = {p for p, v in resolution.examples.items()
                        if isinstance(v, (list, tuple, dict))} | set(resolution.containers)
    # a differentiated value of the user's own vector space: its cotangents are kept and added as they come
    # (None for none yet), as a container's
    facts.vector_inputs = {p for p, m in zip(ctx.inputs, ctx.mask)
                           if m and runtime.vector_object(resolution.examples.get(p))}
    facts.containers |= facts.vector_inputs
    facts.scalar_params = set(resolution.scalars)
    facts.shape_params = dict(resolution.patterns)
    facts.stacks = t.stacks
    node.body = _no_self_reference(node.body, facts.stacked, namer)
    return node


def stacked_names(body):
    """Names assigned inside a branch or loop."""
    names = set()
    for s in body:
        if isinstance(s, (gast.If, gast.For, gast.While)):
            for inner in ast_util.walk(s):
                if isinstance(inner, gast.Name) and isinstance(inner.ctx, gast.Store):
                    names.add(inner.id)
    return names


def _ssa(body, defined, namer):
    stacked = stacked_names(body)
    current = {}
    out = []
    for s in body:
        ast_util.substitute_loads(s, current)
        if isinstance(s, gast.Assign):
            targets = s.targets[0].elts if isinstance(s.targets[0], gast.Tuple) else [s.targets[0]]
            for tgt in targets:
                n = tgt.id
                if n in stacked:
                    continue
                if n in defined:
                    new = namer.fresh(n)
                    current[n] = new
                    tgt.id = new
                defined.add(n)
        out.append(s)
    return out


def _no_self_reference(body, stacked, namer):
    out = []
    for s in body:
        if isinstance(s, gast.If):
            s.body = _no_self_reference(s.body, stacked, namer)
            s.orelse = _no_self_reference(s.orelse, stacked, namer)
        elif isinstance(s, (gast.For, gast.While)):
            s.body = _no_self_reference(s.body, stacked, namer)
        elif isinstance(s, gast.Assign) and Anno.OP.exists(s):
            targets = ast_util.names_stored(s.targets[0])
            if Anno.NO_SAVE.of(s, False):
                pass
            elif targets & stacked and targets & ast_util.names_loaded(s.value):
                # t = f(t) becomes tmp = f(t); t = tmp (also for a, b = g(a, b))
                target = s.targets[0]
                names = [e.id for e in target.elts] if isinstance(target, gast.Tuple) else [target.id]
                temps = [namer.fresh((Anno.OP.of(s).source or "t") if len(names) == 1 else n + "_new")
                         for n in names]
                new_target = ast_util.tuple_([ast_util.name(t, True) for t in temps], store=True) \
                    if isinstance(target, gast.Tuple) else temps[0]
                first = ast_util.copy_location(ast_util.assign(new_target, s.value), s)
                Anno.OP.add_to(first, Anno.OP.of(s))
                out.append(first)
                for n, tmp in zip(names, temps):
                    copy_ = ast_util.copy_location(ast_util.assign(n, ast_util.name(tmp)), s)
                    Anno.OP.add_to(copy_, Op("copy", args=[ast_util.name(tmp)]))
                    out.append(copy_)
                stacked.update(temps)
                continue
        out.append(s)
    return out
