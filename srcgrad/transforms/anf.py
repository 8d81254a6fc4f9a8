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
import builtins
import inspect
import math
import operator
from dataclasses import dataclass, field

import gast
import numpy as np

from .. import runtime
from ..errors import UnsupportedSyntaxError
from ..rules import mutation, registry
from ..rules.python import containers
from ..syntax import ast_util
from ..syntax.anno import Anno

_BINOPS = {
    gast.Add: (np.add, "add"), gast.Sub: (np.subtract, "sub"), gast.Mult: (np.multiply, "mul"),
    gast.Div: (np.true_divide, "div"), gast.Pow: (np.power, "pow"), gast.MatMult: (np.matmul, "matmul"),
    gast.Mod: (np.remainder, "mod"), gast.FloorDiv: (np.floor_divide, "floordiv"),
}
_UNARY = {gast.USub: (np.negative, "neg"), gast.UAdd: (np.positive, "pos")}

# ndarray methods -> (NumPy function, how positional arguments pack)
_METHODS = {
    "sum": (np.sum, None), "mean": (np.mean, None), "max": (np.max, None), "min": (np.min, None),
    "reshape": (np.reshape, "shape"), "transpose": (np.transpose, "axes"), "dot": (np.dot, None),
    "squeeze": (np.squeeze, None), "swapaxes": (np.swapaxes, None),
    "prod": (np.prod, None), "var": (np.var, None), "std": (np.std, None), "cumsum": (np.cumsum, None),
    "cumprod": (np.cumprod, None), "clip": (np.clip, None), "conj": (np.conj, None),
    "conjugate": (np.conj, None), "trace": (np.trace, None), "diagonal": (np.diagonal, None),
    "repeat": (np.repeat, None), "take": (np.take, None), "flatten": (np.ravel, None),
    "ravel": (np.ravel, None),
}
_COPY_METHODS = {"copy", "astype", "numpy"}
_SHAPE_ATTRS = {"shape", "ndim", "size", "dtype", "nbytes", "itemsize", "flags", "strides"}
_DISPLAYS = (gast.List, gast.Tuple, gast.Dict)
_NONDIFF_ATTRS = {"shape", "ndim", "size", "dtype", "nbytes", "itemsize", "argmax", "argmin",
                  "tolist", "nonzero", "all", "any", "item"}


# math-module functions on Python floats use the NumPy function's rule
_MATH_TO_NUMPY = {f: getattr(np, n) for n, f in vars(math).items()
                  if callable(f) and callable(getattr(np, n, None)) and not n.startswith("_")}
_MATH_TO_NUMPY.update({math.atan2: np.arctan2, math.asin: np.arcsin, math.acos: np.arccos,
                       math.atan: np.arctan, math.asinh: np.arcsinh, math.acosh: np.arccosh,
                       math.atanh: np.arctanh, math.fabs: np.absolute, math.pow: np.power})


#: the kinds of Op, and what each computes
OP_KINDS = {
    "copy": "t = a (a name or a constant)",
    "rule": "a primitive with an adjoint rule (`rule`, `bindings` {param: expression})",
    "call": "a user function, transformed recursively (`callee`, `args`, `keywords`)",
    "nondiff": "a value with no derivative (an int, a flag, a shape, a comparison)",
    "opaque": "a callable srcgrad knows nothing about (`obj`): refused where its result is active",
    "pack": "a tuple, list or dict display of names (`args`)",
    "push": "an expression statement pushing `args[1]` on the stack `args[0]` (generated code)",
    "pop": "t = pop(stack) (generated code transformed again; `args[0]` the stack)",
}


@dataclass
class Op:
    """What the right-hand side of an ANF assignment computes (OP_KINDS)."""
    kind: str                       # a key of OP_KINDS
    rule: object = None             # "rule": the registry.Rule
    bindings: dict = field(default_factory=dict)   # "rule": {param: gast expression}
    callee: object = None           # "call": the user function (or custom_gradient function)
    args: list = field(default_factory=list)       # operands, in order
    keywords: dict = field(default_factory=dict)   # "call": {name: gast expression}
    obj: object = None              # "opaque": what was called or read
    source: str = ""                # a short name for temporaries and messages
    receiver: object = None         # "call" of a method: the example instance (`self`)
    custom: bool = False            # "call" of a custom_gradient function
    spec: tuple = None              # "call": (n extra positional, keyword names) for *args/**kwargs
    examples: dict = field(default_factory=dict)   # "call": {param: object} known at the call
    n_outputs: int = 1              # "call": 1, or k for a callee returning a k-tuple
    node: object = None             # "call": the gast Call
    python_float: bool = False      # "rule": a math-module function on Python floats
    checkpoint: bool = False        # "call" of sg.checkpoint(f): reversed by re-running f (joint)
    arg_dynamic: tuple = ()         # "call" (kinds.py): which arguments may be containers

    def __post_init__(self):
        if self.kind not in OP_KINDS:
            raise ValueError("unknown Op kind %r" % (self.kind,))

    def operand_names(self):
        """Names whose cotangents this op contributes to, per differentiable operand."""
        if self.kind == "copy":
            return [self.args[0].id] if isinstance(self.args[0], gast.Name) else []
        if self.kind == "rule":
            out = []
            for p in self.rule.diff_params:
                e = self.bindings.get(p)
                if isinstance(e, gast.Name):
                    out.append(e.id)
                elif isinstance(e, (gast.List, gast.Tuple)):
                    out.extend(x.id for x in e.elts if isinstance(x, gast.Name))
            return out
        if self.kind == "pack":
            return [n.id for n in self.args if isinstance(n, gast.Name)]
        if self.kind == "call":
            return [a.id for a in list(self.args) + list(self.keywords.values()) if isinstance(a, gast.Name)]
        if self.kind == "opaque":
            # no rule: tracked so that a differentiated use can be reported
            return [n.id for n in self.args if isinstance(n, gast.Name)]
        return []


class _ANF:
    def __init__(self, ctx):
        self.ctx = ctx
        self.free = {}          # the resolution's free names -> objects (transform sets it)
        self.parsed = ctx.parsed
        self.namer = ctx.namer
        self.temps = set()
        self.packs = {}        # name -> the tuple/dict display assigned to it
        self.stacks = set()    # stacks of generated code being transformed again

    def fail(self, node, construct, hint=None):
        filename, lineno, col = self.parsed.origin(node)
        raise UnsupportedSyntaxError(construct, filename, lineno, col, hint)

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
                out.append(new)
                self.packs[target.id] = pack
                return out
            new = ast_util.copy_location(ast_util.assign(target, value), s)
            Anno.OP.add_to(new, op)
            out.append(new)
            if op.kind == "pack" and isinstance(target, gast.Name):
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
            e.left = self.simple(e.left, out, hint)
            e.right = self.simple(e.right, out, hint)
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
                return e, self.classify_fn(fn, [e.operand], {}, e, nm + ("_" + base(e.operand) if base(e.operand) else ""))
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

    def _casts_to_non_float(self, e):
        """Is `e`, a call x.astype(dtype), a cast to a dtype known at transform
        time (a constant, a global or builtin such as int, np.int64) that is
        neither floating nor complex?"""
        arg = e.args[0] if e.args else next((k.value for k in e.keywords if k.arg == "dtype"), None)
        if isinstance(arg, gast.Constant):
            value = arg.value
        else:
            chain = []
            while isinstance(arg, gast.Attribute):
                chain.append(arg.attr)
                arg = arg.value
            if not isinstance(arg, gast.Name) or arg.id not in self.free:
                return False
            value = self.free[arg.id]
            for attr in reversed(chain):
                value = getattr(value, attr, None)
        try:
            return value is not None and np.dtype(value).kind not in "fc"
        except TypeError:
            return False

    def call(self, e, out, hint):
        func = e.func
        casts = Anno.METHOD.of(func) == "astype" and self._casts_to_non_float(e)   # (read before ANF)
        if Anno.METHOD.exists(func):
            func.value = self.simple(func.value, out, hint)
        args = []
        starred = None
        for a in e.args:
            if isinstance(a, gast.Starred):
                pack = self.packs.get(a.value.id) if isinstance(a.value, gast.Name) else None
                if isinstance(pack, (gast.Tuple, gast.List)):
                    args.extend(ast_util.clone(pack.elts))
                    continue
                if isinstance(a.value, (gast.Tuple, gast.List)) and \
                        not any(isinstance(x, gast.Starred) for x in a.value.elts):
                    args.extend(a.value.elts)       # f(*(a, b))
                    continue
                # f(*sizes): kept starred; allowed into what is not differentiated (see below)
                a.value = self.simple(a.value, out, hint)
                starred = starred or a
                args.append(a)
            else:
                args.append(a)
        # a list, tuple or dict display passed to a user function is a value of its own (a name):
        # the call's activity and the callee's cotangents follow names
        user = self._user_callee(func)
        e.args = [a if isinstance(a, gast.Starred)
                  else self.simple(a, out, hint, force_name=user and isinstance(a, _DISPLAYS)) for a in args]
        keywords = []
        for k in e.keywords:
            if k.arg is None:
                pack = self.packs.get(k.value.id) if isinstance(k.value, gast.Name) else None
                if not isinstance(pack, gast.Dict) or not all(isinstance(x, gast.Constant) for x in pack.keys):
                    self.fail(k.value, "**kwargs in a call, unless kwargs is the function's own **kwargs "
                                       "or a dict display")
                keywords.extend(gast.keyword(arg=key.value, value=ast_util.clone(v))
                                for key, v in zip(pack.keys, pack.values))
            else:
                keywords.append(k)
        e.keywords = keywords
        for k in e.keywords:
            k.value = self.simple(k.value, out, hint, force_name=user and isinstance(k.value, _DISPLAYS))
        kwargs = {k.arg: k.value for k in e.keywords}
        if starred is not None:
            return e, self.starred_call(e, starred, hint)
        if Anno.METHOD.exists(func):
            m = Anno.METHOD.of(func)
            recv = func.value
            src = m + ("_" + self.base(recv) if self.base(recv) else "")
            if casts:       # x.astype(int): integers or booleans carry no derivative (TF's cast)
                return e, Op("nondiff", source=src)
            if m in _COPY_METHODS or (m == "item" and not e.args and not e.keywords):
                return e, Op("copy", args=[recv], source=src)      # (x.item(): its one value, as float(x))
            if m in ("item", "tolist"):
                # the values leave NumPy: differentiated, they would silently cut the derivative
                return e, Op("opaque", obj="ndarray." + m, source=src, args=_names_in(e))
            if m in _NONDIFF_ATTRS:
                return e, Op("nondiff", source=src)
            if m in ("ravel", "flatten") and registry.adjoint_rule(np.ravel) is None:
                return e, self.classify_fn(np.reshape, [recv, ast_util.const(-1)], {}, e, src)
            if m not in _METHODS:
                return e, Op("opaque", obj="ndarray." + m, source=src, args=_names_in(e))
            fn, pack = _METHODS[m]
            args = list(e.args)
            if pack and (len(args) > 1 or (len(args) == 1 and isinstance(args[0], gast.Constant)
                                            and isinstance(args[0].value, int))):
                args = [ast_util.tuple_(args)]
            if pack == "axes" and not args:
                args = []
            return e, self.classify_fn(fn, [recv] + args, kwargs, e, src)
        obj = Anno.CALLEE.of(func)
        if obj in (builtins.list, builtins.tuple, builtins.dict) and not e.args and not e.keywords:
            display = gast.Dict(keys=[], values=[]) if obj is builtins.dict else \
                ast_util.tuple_([]) if obj is builtins.tuple else gast.List(elts=[], ctx=gast.Load())
            return display, Op("pack", source=hint or "c", args=[])
        if obj is builtins.dict and not e.args and e.keywords:
            # dict(a=a, b=b) is the display {"a": a, "b": b}
            display = gast.Dict(keys=[ast_util.const(k.arg) for k in e.keywords],
                                values=[k.value for k in e.keywords])
            return display, Op("pack", source=hint or "d", args=list(display.values))
        name = getattr(obj, "__name__", None) or "call"
        if name == "<lambda>":
            name = func.id if isinstance(func, gast.Name) else func.attr if isinstance(func, gast.Attribute) \
                else "lambda"
        if e.args and self.base(e.args[0]):
            name = name + "_" + self.base(e.args[0])
        if obj is not None and (registry.adjoint_rule(obj) is not None or registry.is_nondiff(obj)):
            # a primitive, however it is reached (scipy.stats.norm.logpdf is a bound method with a rule)
            return e, self.classify_fn(obj, list(e.args), kwargs, e, name)
        args = list(e.args)
        call = getattr(type(obj), "__call__", None)
        if (obj is not None and not isinstance(obj, type) and not callable(getattr(obj, "__code__", None))
                and not inspect.ismethod(obj) and self.ctx.callee(obj) is None and call is not None
                and self.ctx.callee(call) is not None):
            # an instance of the user's class called: obj(x) is type(obj).__call__(obj, x)
            if not isinstance(func, gast.Name):
                # self.layer(x), layers[0](x): the receiver is evaluated once, then called
                receiver = self.simple(func, out, hint, force_name=True)
                e.func = ast_util.name(receiver.id)
                Anno.CALLEE.add_to(e.func, obj)
                func = e.func
            op = self.classify_fn(call, [ast_util.name(func.id)] + args, kwargs, e, name)
            op.receiver = obj
            return e, op
        if Anno.OPAQUE_METHOD.of(func, False) and self.ctx.callee(getattr(obj, "__func__", obj)) is None:
            return e, Op("opaque", obj=obj, source=name, args=_names_in(e))
        if inspect.ismethod(obj) and isinstance(func, gast.Attribute) and self.ctx.callee(obj.__func__) is not None:
            # a bound method of the user's (self.helper(x)): the receiver is its first argument
            func.value = self.simple(func.value, out, hint)
            args = [func.value] + args
            receiver = obj.__self__
            op = self.classify_fn(obj.__func__, args, kwargs, e, name)
            op.receiver = receiver      # the example `self`, so the callee resolves self.attr exactly
            return e, op
        return e, self.classify_fn(obj, args, kwargs, e, name)

    def starred_display(self, e, out, hint):
        """`(*a, b, *c)`: as_tuple(list_extend(list_extend(as_list(a), [b]),
        as_list(c))) (a list display without the as_tuple): container
        helpers with rules, so differentiated elements keep their
        derivatives, and shapes (`np.zeros((*x.shape, 2))`) are plain values."""
        parts, run = [], []
        for x in e.elts + [None]:
            if (x is None or isinstance(x, gast.Starred)) and run:
                display = ast_util.copy_location(gast.List(elts=run, ctx=gast.Load()), e)
                parts.append(self.simple(display, out, hint, force_name=True))
                run = []
            if isinstance(x, gast.Starred):
                v = self.simple(x.value, out, hint, force_name=True)
                parts.append(self.helper_call(containers.as_list, "as_list", [v], out, hint, e))
            elif x is not None:
                run.append(x)
        acc = parts[0]
        for p in parts[1:]:
            acc = self.helper_call(containers.list_extend, "list_extend", [acc, p], out, hint, e)
        if isinstance(e, gast.List):
            if len(parts) == 1:      # [*a]: a new list
                return self.helper_top(containers.as_list, "as_list", [acc], hint, e)
            return acc, Op("copy", args=[acc], source=hint or "t")
        return self.helper_top(containers.as_tuple, "as_tuple", [acc], hint, e)

    def helper_top(self, fn, name, args, hint, where):
        call = ast_util.copy_location(ast_util.call(_injected(fn, name), args), where)
        return call, self.classify_fn(fn, args, {}, where, hint or name)

    def helper_call(self, fn, name, args, out, hint, where):
        call, op = self.helper_top(fn, name, args, hint, where)
        tmp = self.namer.fresh(hint or name)
        self.temps.add(tmp)
        out.append(self._assign(tmp, call, op, where))
        return ast_util.name(tmp)

    def starred_call(self, e, starred, source):
        """`f(*seq)` with `seq` not a display: the arguments are known only at
        run time, so `f` must have no derivative (a shape, a random draw:
        nondiff, or opaque, which raises NoRuleError if a differentiated
        value reaches it)."""
        func = e.func
        obj = Anno.CALLEE.of(func)
        what = ast_util.to_source(func) if not Anno.METHOD.exists(func) else "." + Anno.METHOD.of(func)
        if Anno.METHOD.exists(func):
            if Anno.METHOD.of(func) in _NONDIFF_ATTRS:
                return Op("nondiff", source=source)
            self.fail(starred, "*args into the array method %s" % what, "pass the arguments one by one")
        if obj is not None and registry.is_nondiff(obj):
            return Op("nondiff", source=source)
        if obj is not None and (registry.adjoint_rule(obj) is not None or self.ctx.callee(obj) is not None
                                or self.ctx.callee(getattr(type(obj), "__call__", None)) is not None):
            self.fail(starred, "*args of a sequence into %s, which is differentiated" % what,
                      "pass the arguments one by one, or as a tuple display: f(*(a, b))")
        return Op("opaque", obj=obj, source=source, args=_names_in(e))

    def check_mutation(self, call, fn=None, n_args=None, keywords=None):
        """Refuse a NumPy call that writes into an array argument (out=,
        np.copyto, ... : rules/mutation.py) or an in-place ndarray method:
        the compiled code, functional, would not see the write."""
        if fn is None:
            fn = Anno.CALLEE.of(call.func)
            method = Anno.METHOD.of(call.func)
            n_args = len(call.args)
            keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
            if method is not None:
                if method in mutation.IN_PLACE_METHODS:
                    self.fail(call, "the in-place array method .%s()" % method,
                              "write it functionally: " + mutation.IN_PLACE_METHODS[method])
                fn = getattr(np, method, None)
        names = [k for k, v in (keywords or {}).items() if not (isinstance(v, gast.Constant) and v.value is None)]
        found = mutation.writes_into(fn, n_args, names) if fn is not None else None
        if found is not None:
            written, hint = found
            self.fail(call, "%s writing into %s (compiled code is functional: the derivative would not see "
                      "the write)" % ("np." + fn.__name__ if getattr(fn, "__module__", "") in ("numpy", None)
                                      or isinstance(fn, np.ufunc) else getattr(fn, "__name__", fn), written),
                      hint)

    def classify_fn(self, fn, args, kwargs, node, source):
        if isinstance(node, gast.Call):
            self.check_mutation(node, fn, len(args), kwargs)
        if fn is builtins.abs:
            fn = np.absolute
        elif fn in (builtins.max, builtins.min) and len(args) == 2 and not kwargs:
            fn = np.maximum if fn is builtins.max else np.minimum
        elif fn is builtins.float and len(args) == 1:
            return Op("copy", args=[args[0]], source=source)
        elif fn is builtins.list and len(args) == 1:
            fn = containers.as_list
        elif fn is builtins.tuple and len(args) == 1:
            fn = containers.as_tuple
        elif fn is builtins.dict and len(args) == 1 and not kwargs:
            fn = containers.as_dict
        if getattr(fn, "__srcgrad_custom__", None) is not None:
            if kwargs:
                self.fail(node, "keyword arguments to a custom_gradient function")
            op = Op("call", callee=fn, args=list(args), source=source)
            op.custom, op.node = True, node
            return op
        rule = registry.adjoint_rule(fn)
        python_float = False
        if rule is None and fn in _MATH_TO_NUMPY:
            rule = registry.adjoint_rule(_MATH_TO_NUMPY[fn])   # math.exp(a): np.exp's rule
            python_float = True                                 # (a Python float result)
        if rule is not None:
            try:
                bound = rule.signature.bind(ast_util.name("_z"), *args, **kwargs)
            except TypeError as exc:
                self.fail(node, "this call of %s (%s)" % (getattr(fn, "__name__", fn), exc))
            bound.apply_defaults()
            bindings = {}
            for p, v in bound.arguments.items():
                if p == rule.output:
                    continue
                if isinstance(v, (tuple, list)) and any(isinstance(x, gast.AST) for x in v):
                    v = ast_util.tuple_([x if isinstance(x, gast.AST) else ast_util.const(x) for x in v])
                bindings[p] = v if isinstance(v, gast.AST) else ast_util.const(v)
            op = Op("rule", rule=rule, bindings=bindings, source=source)
            op.python_float = python_float
            return op
        if registry.is_nondiff(fn):
            return Op("nondiff", source=source)
        info = self.ctx.callee(fn) if fn is not None else None
        if info is not None:
            user = info.function
            try:
                sig = info.signature
                bound = sig.bind(*args, **kwargs)
            except TypeError as exc:
                self.fail(node, "this call of %s (%s)" % (getattr(user, "__name__", user), exc))
            given = set(bound.arguments)
            bound.apply_defaults()
            ordered, extra, kw = [], [], {}
            for p, v in bound.arguments.items():
                kind = sig.parameters[p].kind
                if kind is inspect.Parameter.VAR_POSITIONAL:
                    extra = list(v)
                elif kind is inspect.Parameter.VAR_KEYWORD:
                    kw = dict(v)
                elif p not in given and not _literal(v):
                    # a default value that is an object (nonlinearity=np.tanh): the VJP receives it (the call
                    # passes it too, so that the code generators inject the name)
                    v = bound.arguments[p] = _injected(v, p)
                    if kind is inspect.Parameter.POSITIONAL_ONLY:
                        node.args.append(v)
                    else:
                        node.keywords.append(gast.keyword(arg=p, value=v))
                    ordered.append(v)
                else:
                    ordered.append(v if isinstance(v, gast.AST) else ast_util.const(v))
            spec = None
            if any(k.kind in (k.VAR_POSITIONAL, k.VAR_KEYWORD) for k in sig.parameters.values()):
                # the callee specialized to this call's shape (Function.specialize)
                n_pos = sum(1 for k in sig.parameters.values()
                            if k.kind in (k.POSITIONAL_ONLY, k.POSITIONAL_OR_KEYWORD))
                names = sorted(kw)
                ordered = ordered[:n_pos] + [a if isinstance(a, gast.AST) else ast_util.const(a) for a in extra] \
                    + ordered[n_pos:] + [kw[k] for k in names]
                spec = (len(extra), tuple(names))
            # Variables the callee reads as globals: passed on (Program._hoist_callee_leaves)
            ordered += [ast_util.name(n) for n in self.ctx.callee_leaves.get(user, ())]
            op = Op("call", callee=user, args=ordered, source=source)
            op.spec = spec
            op.checkpoint = bool(getattr(fn, "__srcgrad_checkpoint__", False))
            # functions passed as arguments are known to the callee (its Program's examples)
            names = list(sig.parameters)
            op.examples = {p: Anno.VALUE.of(bound.arguments[p]) for p in names if p in bound.arguments
                           and isinstance(bound.arguments[p], gast.AST)
                           and Anno.VALUE.of(bound.arguments[p]) is not None}
            # (the VJP call copies its arguments: without the objects, which need not be copyable)
            op.args = [_without_value(a) for a in op.args]
            op.n_outputs = info.n_outputs
            op.node = node
            if info.primal is not None:
                # the callee holds insert_grad_of blocks, which Python cannot skip: the
                # forward sweep runs its compiled primal
                node.func = _injected(info.primal, (getattr(user, "__name__", None) or "callee") + "_primal")
            return op
        return Op("opaque", obj=fn, source=source, args=_names_in(node))


def _literal(v):
    """A value generated code may spell as a constant."""
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
        return True
    return isinstance(v, tuple) and all(_literal(x) for x in v)


def _injected(value, name):
    """A Name standing for `value` in generated code (injected as a closure
    cell by the code generators), carrying it as `Anno.VALUE` for callees."""
    n = ast_util.name(name)
    Anno.CALLEE.add_to(n, value)
    Anno.HELPER.add_to(n, True)
    if not isinstance(value, (np.ndarray, np.generic)):
        Anno.VALUE.add_to(n, value)
    return n


def _without_value(node):
    """`node`, or a copy of a Name without its `Anno.VALUE` (an injected
    name is kept: the code generators rename it in place)."""
    if isinstance(node, gast.Name) and Anno.VALUE.exists(node) and not Anno.HELPER.of(node, False):
        node = ast_util.copy_location(ast_util.name(node.id), node)
    return node


def _names_in(node):
    return [n for n in ast_util.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)]


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
    facts.scalar_params = set(resolution.scalars)
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
