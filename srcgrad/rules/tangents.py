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

A linear primitive needs no template: `register_linear(np.reshape)` writes
it, `t[z] = np.reshape(t[x], shape=shape, ...)`, as autograd's
`defjvp(f, "same")` and JAX's `deflinear2` do (below).

Symbolic zeros. The tangent of an input that has none (a constant, an
inactive value) is a symbolic zero, and the inliner (transforms/
instantiate.py) simplifies it away (JAX's
`Zero`): a product or matrix product with a zero factor is zero, a sum drops
its zero terms, `-0` is zero, and a function linear in its tangent argument
(np.sum, np.reshape, unbroadcast, ...: `linear_kind`) maps zero to zero. A
zero that cannot be simplified away is materialized (`np.zeros_like(x)`).
This never folds a *value* times zero (that would hide NaN and inf): only
tangents that do not exist are dropped. If the whole right-hand side is zero
the output has no tangent (None).

The compiler inlines a template after each primal statement
(transforms/forward.py); the tape compiles it once per set of inputs that
have tangents into a JVP function (`instantiate.jvp`), as `instantiate.vjp`
does for adjoints. A primitive with an adjoint rule but no tangent rule is
differentiated in forward mode by transposing its VJP (srcgrad/forward.py,
`transpose_jvp`), unless it is a ufunc whose adjoint template is a
product with the cotangent: `derived_tangent` then writes its tangent rule
(`d[x] = unbroadcast(d[z] * F, x)` gives the term `t[x] * F`), generated
code that is differentiated again like any template.
"""
import inspect
import threading

import gast

from ..syntax import ast_util
from ..syntax.templates import is_d, is_t
from .registry import Template, adjoint_rule, load_lazy, spelling

_TANGENTS = {}
_lock = threading.Lock()

# Functions that map a zero tangent to zero, by how they are linear:
#   "first": linear in the first argument (the others are static),
#   "any":   multilinear (a zero in any array argument gives zero),
#   (i, j):  jointly linear in these positions (zero only when all are zero),
#   frozenset({i, j}): linear in each of these positions, the others fixed (a zero in any
#            of them gives zero: matmul_adjoint_x(g, x, y) = g y^T in g and y).
# Filled by register_linear and declare_linear, next to each family's rules.
_LINEAR = {}
LINEAR_METHODS = {"sum", "mean", "reshape", "transpose", "swapaxes", "squeeze", "conj", "ravel",
                  "flatten", "copy", "cumsum", "diagonal", "trace", "take"}
LINEAR_ATTRS = {"T", "real", "imag", "mT"}


def linear_kind(obj):
    """How `obj` maps symbolic zero tangents: "first", "any", a tuple of
    jointly linear positions, a frozenset of positions it is linear in
    each of, or None (not declared linear)."""
    try:
        return _LINEAR.get(obj)
    except TypeError:   # unhashable
        return None


def declare_linear(function, kind="first"):
    """Declare `function` linear in its first argument ("first"),
    multilinear ("any"), jointly linear in the argument positions of a
    tuple, or linear in each position of a frozenset separately, so the
    simplifier maps symbolic zero tangents through it to zero. For the
    helpers tangent templates call (broadcast_like, ...) and for
    primitives whose tangent rule is written by hand (np.multiply,
    np.add); `register_linear` declares and writes the tangent rule."""
    with _lock:
        _LINEAR[function] = kind


class TangentRule(Template):
    """A tangent rule: a parsed template plus its compiled JVPs.

    Attributes: `primitive`, `name`, `output` (the primal-output parameter),
    `params` (the others, in order), `tangent_params` (those read as
    `t[p]`), `tree` (the template's gast FunctionDef), `defaults`.
    """

    def __init__(self, primitive, template, name=None, doc=None, constants=None, tree=None):
        super().__init__(primitive, template, name=name, doc=doc, constants=constants, tree=tree)

    @property
    def tangent_params(self):
        """The parameters read as `t[p]` (parses the template)."""
        return self.tree and self._tangent_params

    def _parsed(self):
        where = "tangent rule %s" % self.name
        read, assigned = [], 0
        for stmt in self._tree.body:
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
        self._tangent_params = tuple(p for p in self.params if p in read)

    def __repr__(self):
        return "<tangent rule %s for %s>" % (self.name, getattr(self.primitive, "__name__", self.primitive))


def register_tangent(primitive, *, name=None, constants=None):
    """Decorator registering the tangent (JVP) rule of `primitive`.

    The template's first parameter is the primal output, the others mirror
    `primitive`'s signature. In the body, `t[x]` reads input `x`'s tangent
    and `t[z] = expr` (once) defines the output's; any other assignment is a
    temporary. Write the expression for *all* inputs having tangents: the
    terms of inputs without one are dropped (symbolic zeros). The result
    should have the output's shape (use `broadcast_like(expr, z)` when a term
    may be smaller). The same template is inlined by the compiler (generated
    JVP code) and compiled into JVP functions for ForwardAccumulator.
    name, constants: the rule's name (default: the template's) and the
    values of a parametrised template's placeholders (registry.Template),
    for a template that serves several primitives. Raises ValueError for a
    malformed template. Returns the template.
    """
    def decorator(template):
        _add(TangentRule(primitive, template, name=name, constants=constants))
        return template
    return decorator


def _add(rule):
    with _lock:
        _TANGENTS[rule.primitive] = rule


# ------------------------------------------------------------ linear primitives

def register_linear(primitive, kind="first", static=None):
    """Declare `primitive` linear and write its tangent rule from its
    adjoint rule's signature (autograd's `defjvp(f, "same")` / `def_linear`,
    JAX's `deflinear2`): one registration gives the tangent rule and the
    zero behaviour (`declare_linear`).

    kind: "first" (linear in the first parameter; the tangent applies the
      primitive to it: `t[z] = f(t[x], ...)`), a tuple of parameter
      positions (jointly linear: `t[z] = f(t[x], ..., t[v])`), or "any"
      (multilinear in the parameters without a default: the product rule,
      `t[z] = f(t[a], b) + f(a, t[b])`).
    static: the names of the other parameters the tangent passes through
      (default: all but `out`, which would write the tangent into the
      primal's array). Parameters without a default are passed positionally,
      the others as `p=p` (left out of generated code where the call site
      uses the default).

    The rule is named after the adjoint template (`<name>_tangent`) and reads
    its module's globals: the primitive is spelled as that module spells it
    (`np.fft.fft`, `unbroadcast`, `runtime.densify`). Raises ValueError when
    `primitive` has no adjoint rule or cannot be spelled there (srcgrad's
    own linear primitives, whose adjoint templates are in srcgrad, have
    their tangent rules written, and checked, when first used). Replaces a
    tangent rule registered before. Returns `primitive`.
    """
    adjoint = adjoint_rule(primitive)
    if adjoint is None:
        raise ValueError("register_linear(%r): register its adjoint rule first (the tangent rule "
                         "takes its signature)" % (primitive,))
    writer = _LinearWriter(primitive, adjoint, kind, static)
    if not (getattr(adjoint.template, "__module__", "") or "").startswith("srcgrad."):
        writer.write()  # (a user's rule is checked now; srcgrad's own are written when first used)
    declare_linear(primitive, kind)
    _add(TangentRule(primitive, adjoint.template, name=adjoint.name.rstrip("_") + "_tangent",
                     tree=writer.tree, doc=writer.doc))
    return primitive


class _LinearWriter:
    """Writes register_linear's tangent template from the adjoint rule's
    signature, once, when it is first needed (the ~70 linear NumPy
    primitives are not parsed at import)."""

    def __init__(self, primitive, adjoint, kind, static):
        self.primitive, self.adjoint, self.kind, self.static = primitive, adjoint, kind, static
        self.line = None

    def tree(self):
        """The tangent template's FunctionDef (fresh nodes)."""
        adjoint = self.adjoint
        line = self.write()
        return ast_util.function_def(adjoint.name.rstrip("_") + "_tangent", [adjoint.output] + adjoint.params,
                                     ast_util.quote(line))

    def doc(self):
        """The tangent rule's docstring."""
        return "Linear (register_linear): %s." % self.write()

    def write(self):
        """The template's one statement, `t[z] = f(t[x], ...)`. Raises
        ValueError for a primitive register_linear cannot write."""
        if self.line is None:
            self.line = self._write()
        return self.line

    def _write(self):
        primitive, adjoint, kind, static = self.primitive, self.adjoint, self.kind, self.static
        params = adjoint.signature.parameters
        names = adjoint.params
        if adjoint.varargs:
            raise ValueError("register_linear(%r): a *%s parameter" % (primitive, adjoint.varargs[0]))
        if kind == "any":
            linear = [p for p in names if params[p].default is inspect.Parameter.empty]
        elif kind == "first":
            linear = names[:1]
        else:
            linear = [names[i] for i in kind]
        if static is None:
            static = [p for p in names if p not in linear and p != "out"]
        func = spelling(primitive, adjoint.globals, "register_linear(%r)" % (primitive,))

        last = max(i for i, p in enumerate(names) if p in linear or
                   (p in static and params[p].default is inspect.Parameter.empty))
        skipped = [p for p in names[:last] if p not in linear and p not in static]
        if skipped:
            raise ValueError("register_linear(%r): %s comes before a parameter passed by position"
                             % (primitive, skipped[0]))

        def call(tangent_of):
            args = []
            for i, p in enumerate(names):
                if i <= last and (p in linear or p in static):
                    args.append("t[%s]" % p if p == tangent_of or (kind != "any" and p in linear) else p)
                elif i > last and p in static:
                    args.append("%s=%s" % (p, p))
            return "%s(%s)" % (func, ", ".join(args))

        terms = [call(p) for p in linear] if kind == "any" else [call(None)]
        return "t[%s] = %s" % (adjoint.output, " + ".join(terms))


def registered_tangent(fn):
    """The TangentRule registered for `fn` itself (not derived from an
    adjoint rule), or None: what forward mode uses in place of
    transforming the source of a helper of srcgrad's that has one."""
    try:
        found = _TANGENTS.get(fn)
        if found is None and load_lazy():
            found = _TANGENTS.get(fn)
        return found
    except TypeError:       # (an unhashable callee)
        return None


def tangent_rule(primitive):
    """The TangentRule registered for `primitive` (or derived from its
    adjoint rule: `derived_tangent`), or None."""
    try:
        found = _TANGENTS.get(primitive)
        if found is None and load_lazy():
            found = _TANGENTS.get(primitive)
        if found is None and primitive not in _UNDERIVABLE:
            found = _DERIVED.get(primitive)
            if found is None:
                found = derived_tangent(primitive)
                if found is None:
                    _UNDERIVABLE.add(primitive)
                else:
                    _DERIVED[primitive] = found
        return found
    except TypeError:
        return None


_UNDERIVABLE = set()
_DERIVED = {}           # primitive -> the TangentRule derived_tangent wrote (not in tangent_rules())
_ELEMENTWISE_WRAPPERS = ("unbroadcast", "cast_like")


def _factor(expr, output):
    """F such that `expr` is `d[z] * F`, for a product or quotient chain
    with `d[z]` once in a numerator (`d[z] * z * (1 - z)`, `-d[z] * g`,
    `d[z] * x / y`), wrapped in `unbroadcast(., x)` or `cast_like(., x)`;
    None for any other form."""
    while isinstance(expr, gast.Call) and isinstance(expr.func, gast.Name) and \
            expr.func.id in _ELEMENTWISE_WRAPPERS and len(expr.args) == 2 and not expr.keywords:
        expr = expr.args[0]
    if is_d(expr) == output:
        return gast.Constant(value=1.0, kind=None)
    if isinstance(expr, gast.UnaryOp) and isinstance(expr.op, gast.USub):
        inner = _factor(expr.operand, output)
        return None if inner is None else gast.UnaryOp(op=gast.USub(), operand=inner)
    if isinstance(expr, gast.BinOp) and isinstance(expr.op, (gast.Mult, gast.Div)):
        left, right = expr.left, expr.right
        if _reads_d(left) and not _reads_d(right):
            inner = _factor(left, output)
            return None if inner is None else gast.BinOp(left=inner, op=expr.op, right=right)
        if isinstance(expr.op, gast.Mult) and _reads_d(right) and not _reads_d(left):
            inner = _factor(right, output)
            return None if inner is None else gast.BinOp(left=left, op=gast.Mult(), right=inner)
    return None


def _reads_d(node):
    return any(is_d(n) is not None for n in ast_util.walk(node))


class _NoConj(ast_util.NodeTransformer):
    """conj(e) -> e: the adjoint's conjugation (TF's complex convention)
    has no place in a tangent (the JVP of a holomorphic function)."""

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, gast.Name) and node.func.id == "conj" and len(node.args) == 1:
            return node.args[0]
        return node


def derived_tangent(primitive):
    """The tangent rule of a NumPy or SciPy ufunc written from its adjoint
    template, or None. A ufunc is elementwise, so an adjoint whose every
    statement is a temporary or `d[x] = unbroadcast(d[z] * F, x)` (F free
    of cotangents) has the Jacobian diag(F) in x: the tangent is
    `t[z] = t[x] * F + t[y] * G + ...`, with the adjoint's conjugations
    dropped. Other forms (transposed products, reductions, control flow)
    give None: those stay with transpose_jvp."""
    import numpy as np
    if not isinstance(primitive, np.ufunc):
        return None
    adjoint = adjoint_rule(primitive)
    if adjoint is None or adjoint.varargs or adjoint.sequence_output:
        return None
    body, terms = [], []
    stmts = [s for s in adjoint.tree.body
             if not (isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant))]
    for stmt in stmts:
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1):
            return None
        p = is_d(stmt.targets[0])
        if p is None:
            if not isinstance(stmt.targets[0], gast.Name) or _reads_d(stmt.value):
                return None
            body.append(_NoConj().visit(ast_util.clone(stmt)))
            continue
        factor = _factor(stmt.value, adjoint.output)
        if factor is None or any(p == q for q, _ in terms):
            return None
        terms.append((p, _NoConj().visit(ast_util.clone(factor))))
    if not terms:
        return None
    rhs = " + ".join("t[%s] * (%s)" % (p, ast_util.to_source(f).strip()) for p, f in terms)
    body += ast_util.quote("t[%s] = %s" % (adjoint.output, rhs))
    name = adjoint.name.rstrip("_") + "_tangent"
    tree = ast_util.function_def(name, [adjoint.output] + list(adjoint.params), body)
    doc = "Derived from the adjoint rule %s (an elementwise product with the cotangent)." % adjoint.name
    try:
        return TangentRule(primitive, adjoint.template, name=name, tree=tree, doc=doc)
    except ValueError:
        return None


def tangent_rules():
    """A copy of the registry: {primitive: TangentRule} (every optional
    library's rules included)."""
    load_lazy(everything=True)
    return dict(_TANGENTS)
