"""Tangent (JVP) rules: the forward-mode twin of registry.py.

A tangent rule is a template in the same notation as the adjoint rules, with
`t[x]` for the tangent of `x` (Tangent's and JAX's `jvp` notation):

    @register_tangent(np.multiply)
    def multiply(z, x, y, out=None, dtype=None):
        t[z] = t[x] * y + x * t[y]

The first parameter is the primal output, the others mirror the primitive's
signature; `t[p]` reads the tangent of input `p`, and the one statement
`t[z] = expr` defines the output's. Other assignments are temporaries; no
control flow on values. A keyword argument that passes a parameter through
(`axis=axis`) is left out of the generated code when the call site uses the
parameter's default.

Symbolic zeros. The tangent of an input that has none (a constant, an
inactive value) is a symbolic zero, and `inline` simplifies it away (JAX's
`Zero`): a product or matrix product with a zero factor is zero, a sum drops
its zero terms, `-0` is zero, and a function linear in its tangent argument
(np.sum, np.reshape, unbroadcast, ..., see `_LINEAR`) maps zero to zero. A
zero that cannot be simplified away is materialized (`np.zeros_like(x)`).
This never folds a *value* times zero (that would hide NaN and inf): only
tangents that do not exist are dropped. If the whole right-hand side is zero
the output has no tangent (None).

The compiler inlines a template after each primal statement
(transforms/forward.py); the tape compiles it once per set of inputs that
have tangents into a JVP function (`TangentRule.jvp`), as `Rule.vjp` does for
adjoints. A primitive with an adjoint rule but no tangent rule is
differentiated in forward mode by transposing its VJP (srcgrad/forward.py,
`transpose_jvp`).
"""
import copy
import threading

import gast
import numpy as np

from ..syntax import ast_util
from ..syntax.naming import Namer
from . import containers, helpers
from .registry import Template, load_lazy

_TANGENTS = {}
_lock = threading.Lock()


def is_t(node):
    """Is `node` the subscript `t[name]`? Returns the name or None."""
    if (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name)
            and node.value.id == "t" and isinstance(node.slice, gast.Name)):
        return node.slice.id
    return None


class Zero:
    """A symbolic zero tangent; `like` names the input whose shape a
    materialized zero takes (None: the scalar 0.0, broadcast by NumPy)."""

    __slots__ = ("like",)

    def __init__(self, like=None):
        self.like = like


# Functions that map a zero tangent to zero, by how they are linear:
#   "first": linear in the first argument (the others are static),
#   "any":   multilinear (a zero in any array argument gives zero),
#   (i, j):  jointly linear in these positions (zero only when all are zero).
_LINEAR = {
    np.sum: "first", np.mean: "first", np.reshape: "first", np.transpose: "first",
    np.swapaxes: "first", np.moveaxis: "first", np.expand_dims: "first", np.squeeze: "first",
    np.broadcast_to: "first", np.negative: "first", np.positive: "first", np.conj: "first",
    np.conjugate: "first", np.real: "first", np.imag: "first", np.cumsum: "first",
    np.diagonal: "first", np.trace: "first", np.tril: "first", np.triu: "first",
    np.ravel: "first", np.flip: "first", np.roll: "first", np.repeat: "first", np.tile: "first",
    np.take: "first", np.diag: "first", np.atleast_1d: "first", np.atleast_2d: "first",
    helpers.unbroadcast: "first", helpers.unreduce: "first", helpers.unindex: "first",
    helpers.matmul_adjoint_x: "first", helpers.matmul_adjoint_y: "first", helpers.dot_adjoint: "first",
    np.multiply: "any", np.matmul: "any", np.dot: "any", np.tensordot: "any", np.inner: "any",
    np.outer: "any", np.kron: "any", np.vdot: "any", np.cross: "any", np.einsum: "any",
    np.add: (0, 1), np.subtract: (0, 1), np.where: (1, 2),
}
_LINEAR_METHODS = {"sum", "mean", "reshape", "transpose", "swapaxes", "squeeze", "conj", "ravel",
                   "flatten", "copy", "cumsum", "diagonal", "trace", "take"}
_LINEAR_ATTRS = {"T", "real", "imag", "mT"}


def linear_kind(obj):
    try:
        return _LINEAR.get(obj)
    except TypeError:   # unhashable
        return None


def register_linear(function, kind="first"):
    """Declare `function` linear in its first argument ("first"), multilinear
    ("any"), or jointly linear in the argument positions of a tuple, so the
    simplifier maps symbolic zero tangents through it to zero."""
    with _lock:
        _LINEAR[function] = kind


class TangentRule(Template):
    """A tangent rule: a parsed template plus its compiled JVPs.

    Attributes: `primitive`, `name`, `output` (the primal-output parameter),
    `params` (the others, in order), `tangent_params` (those read as
    `t[p]`), `tree` (the template's gast FunctionDef), `defaults`.
    """

    def __init__(self, primitive, template):
        super().__init__(primitive, template)
        self._jvps = {}
        self._check()

    def _check(self):
        where = "tangent rule %s" % self.name
        read, assigned = [], 0
        for stmt in self.tree.body:
            if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant):
                continue
            if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1):
                raise ValueError("%s: only assignments are allowed in a template, got %s"
                                 % (where, type(stmt).__name__))
            target = is_t(stmt.targets[0])
            if target is not None:
                if target != self.output:
                    raise ValueError("%s assigns t[%s]; only the output's tangent t[%s] may be assigned"
                                     % (where, target, self.output))
                assigned += 1
            for n in ast_util.walk(stmt.value):
                p = is_t(n)
                if p is not None:
                    if p not in self.params:
                        raise ValueError("%s reads t[%s], which is not an input parameter" % (where, p))
                    if p not in read:
                        read.append(p)
        if assigned != 1:
            raise ValueError("%s must assign t[%s] exactly once" % (where, self.output))
        self.tangent_params = tuple(p for p in self.params if p in read)

    def __repr__(self):
        return "<tangent rule %s for %s>" % (self.name, getattr(self.primitive, "__name__", self.primitive))

    def jvp(self, needed):
        """The JVP function for the inputs in `needed` (those with tangents):
        `jvp(z, *tangents, **bound) -> tangent of z` (tangents in the order
        of `tangent_params`), or None when the output's tangent is a
        symbolic zero. Compiled once per `needed` set from the template."""
        key = tuple(p for p in self.tangent_params if p in needed)
        fn = self._jvps.get(key)
        if fn is None:
            fn = self._compile_jvp(key)
            self._jvps[key] = fn
        return fn

    def _compile_jvp(self, needed):
        namer = Namer(set(self.params) | {self.output, "t"} | set(self.globals))
        tnames = {p: namer.fresh("d" + p) for p in needed}
        bindings = {p: ast_util.name(p) for p in self.params}
        zeros = namer.fresh("_zeros_like")
        stmts, value = inline(self, self.output, bindings, tnames, namer, {}, zeros)
        ret = ast_util.const(None) if isinstance(value, Zero) else value
        fname = "jvp_" + self.name
        fdef = ast_util.function_def(fname, [self.output] + [tnames[p] for p in needed] + self.params,
                                     stmts + [ast_util.return_(ret)])
        factory = ast_util.function_def("_sg_factory", [zeros], [fdef, ast_util.return_(ast_util.name(fname))])
        src = ast_util.to_source(ast_util.module([factory]))
        namespace = {}
        exec(compile(src, "<srcgrad tangent rule %s>" % self.name, "exec"), self.globals, namespace)
        fn = namespace["_sg_factory"](containers.zeros_tree)
        fn.__srcgrad_source__ = ast_util.to_source(fdef)
        return fn


# ------------------------------------------------------------------ inlining

class _Inliner:
    """Substitutes a call site into a template's expressions, dropping
    symbolic zeros (see the module docstring)."""

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
            if isinstance(v, Zero) and node.attr in _LINEAR_ATTRS:
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
        kind = linear_kind(obj) if obj is not None else None
        zeros = [isinstance(a, Zero) for a in args]
        if kind == "first" and zeros and zeros[0]:
            return Zero()
        if kind == "any" and any(zeros):
            return Zero()
        if isinstance(kind, tuple) and all(zeros[i] for i in kind if i < len(zeros)) \
                and any(i < len(zeros) for i in kind):
            return Zero()
        if isinstance(func, gast.Attribute) and obj is None:
            recv = self.expr(func.value)
            if isinstance(recv, Zero) and func.attr in _LINEAR_METHODS:
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


def inline(rule, output, bindings, tnames, namer, globals_map, zeros_like):
    """Inline the tangent template of `rule` at a call site.

    output: the name of the primal output. bindings: {param: gast expression}.
    tnames: {param: name of its tangent, or a gast expression (a list of
    tangents for a list parameter)}, for the inputs that have one (the
    others are symbolic zeros). globals_map: {template global: name in the
    generated code}. zeros_like: the name generated code calls to
    materialize a zero. Returns (temporary statements, expression), the
    expression being a `Zero` when the output's tangent is symbolically zero.
    """
    temps = {}
    for stmt in rule.tree.body:
        if isinstance(stmt, gast.Assign) and is_t(stmt.targets[0]) is None:
            for n in ast_util.names_stored(stmt.targets[0]):
                temps.setdefault(n, namer.fresh("_" + n))
    inl = _Inliner(rule, output, bindings, tnames, temps, globals_map, zeros_like)
    stmts, value = [], Zero()
    for stmt in rule.tree.body:
        if not isinstance(stmt, gast.Assign):
            continue    # the docstring (_check allows nothing else)
        v = inl.expr(stmt.value)
        if is_t(stmt.targets[0]) is not None:
            value = v
            continue
        target = stmt.targets[0]
        if isinstance(v, Zero) and isinstance(target, gast.Name):
            inl.zero_temps.add(target.id)
            continue
        new_target = _rename_store(ast_util.clone(target), temps)
        stmts.append(ast_util.assign(new_target, inl.materialize(v)))
    live = ast_util.names_loaded(value) if not isinstance(value, Zero) else set()
    kept = []
    for s in reversed(stmts):
        stored = ast_util.names_stored(s)
        if stored and not (stored & live):
            continue
        live |= ast_util.names_loaded(s)
        kept.append(s)
    return kept[::-1], value


def _rename_store(node, renames):
    for n in ast_util.walk(node):
        if isinstance(n, gast.Name) and n.id in renames:
            n.id = renames[n.id]
    return node


def register_tangent(primitive):
    """Decorator registering the tangent (JVP) rule of `primitive`.

    The template's first parameter is the primal output, the others mirror
    `primitive`'s signature. In the body, `t[x]` reads input `x`'s tangent
    and `t[z] = expr` (once) defines the output's; any other assignment is a
    temporary. Write the expression for *all* inputs having tangents: the
    terms of inputs without one are dropped (symbolic zeros). The result
    should have the output's shape (use `broadcast_like(expr, z)` when a term
    may be smaller). The same template is inlined by the compiler (generated
    JVP code) and compiled into JVP functions for ForwardAccumulator.
    Raises ValueError for a malformed template. Returns the template.
    """
    def decorator(template):
        rule = TangentRule(primitive, template)
        with _lock:
            _TANGENTS[primitive] = rule
        return template
    return decorator


def tangent_rule(primitive):
    """The TangentRule registered for `primitive`, or None."""
    try:
        found = _TANGENTS.get(primitive)
        if found is None and load_lazy():
            found = _TANGENTS.get(primitive)
        return found
    except TypeError:
        return None


def tangent_rules():
    """A copy of the registry: {primitive: TangentRule} (every optional
    library's rules included)."""
    load_lazy(everything=True)
    return dict(_TANGENTS)
