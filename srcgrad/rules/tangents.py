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
inactive value) is a symbolic zero, and the inliner (transforms/
instantiate.py) simplifies it away (JAX's
`Zero`): a product or matrix product with a zero factor is zero, a sum drops
its zero terms, `-0` is zero, and a function linear in its tangent argument
(np.sum, np.reshape, unbroadcast, ..., see `_LINEAR`) maps zero to zero. A
zero that cannot be simplified away is materialized (`np.zeros_like(x)`).
This never folds a *value* times zero (that would hide NaN and inf): only
tangents that do not exist are dropped. If the whole right-hand side is zero
the output has no tangent (None).

The compiler inlines a template after each primal statement
(transforms/forward.py); the tape compiles it once per set of inputs that
have tangents into a JVP function (`instantiate.jvp`), as `instantiate.vjp`
does for adjoints. A primitive with an adjoint rule but no tangent rule is
differentiated in forward mode by transposing its VJP (srcgrad/forward.py,
`transpose_jvp`).
"""
import threading

import gast
import numpy as np

from ..syntax import ast_util
from ..syntax.templates import is_t
from .helpers import broadcast
from .registry import Template, load_lazy

_TANGENTS = {}
_lock = threading.Lock()


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
    broadcast.unbroadcast: "first", broadcast.unreduce: "first", broadcast.unindex: "first",
    broadcast.matmul_adjoint_x: "first", broadcast.matmul_adjoint_y: "first", broadcast.dot_adjoint: "first",
    np.multiply: "any", np.matmul: "any", np.dot: "any", np.tensordot: "any", np.inner: "any",
    np.outer: "any", np.kron: "any", np.vdot: "any", np.cross: "any", np.einsum: "any",
    np.add: (0, 1), np.subtract: (0, 1), np.where: (1, 2),
}
LINEAR_METHODS = {"sum", "mean", "reshape", "transpose", "swapaxes", "squeeze", "conj", "ravel",
                  "flatten", "copy", "cumsum", "diagonal", "trace", "take"}
LINEAR_ATTRS = {"T", "real", "imag", "mT"}


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
