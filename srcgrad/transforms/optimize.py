"""Rewrites of generated code, for readability and memory.

Requires: reverse or forward (inlined rules); the three rewrites that need
to know what is read later use liveness.py. The rewrites:
- `fold`: arithmetic on constants (`2 - 1` becomes `1`) and `x ** 1` to `x`.
  Never folds `x * 0` to 0 (that would hide NaN and inf, as JAX's symbolic
  zeros also refuse to). Run on each inlined rule (reverse.py, forward.py);
- `propagate_copies`: after `a = b`, read `b` for `a`, and drop the copy
  once `a` is dead (the reverse sweep, codegen.py);
- `free_dead`: `del` of the values the reverse sweep no longer reads,
  right after their last reader (the assembled function, function.py);
- `collapse_temporaries`: `t = e; x = t` to `x = e` where `t` is read
  nowhere after (the assembled function, function.py);
- `MathFunctions`: `np.cos(x)` to `math.cos(x)` in the derivative of a
  math-module call, whose operands are Python floats;
- `ElideShapeHelper`: `unbroadcast(g, x)` (`broadcast_like(t, x)`) to `g`
  (`t`) where `x` is known to be 0-d, or to have g's shape (shapes.py).
Each keeps what the code computes.
"""
import math
import operator

import gast
import numpy as np

from ..syntax import ast_util
from ..syntax.anno import Anno
from . import liveness
from .liveness import Sets, live_after, live_in_stmt

_FOLD = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul}
_COMPARE = {gast.Eq: operator.eq, gast.NotEq: operator.ne}


def _fold(node):
    """`node` with constant arithmetic folded, in place (a new node where
    a BinOp folds)."""
    d = node.__dict__
    for field in ast_util.child_fields(node.__class__):     # (not the Load/Store contexts)
        value = d.get(field)
        if type(value) is list:
            for k, v in enumerate(value):
                if isinstance(v, gast.AST):
                    value[k] = _fold(v)
        elif isinstance(value, gast.AST):
            setattr(node, field, _fold(value))
    if (type(node) is gast.Compare and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE
            and isinstance(node.left, gast.Constant) and isinstance(node.comparators[0], gast.Constant)
            and _number(node.left.value) and _number(node.comparators[0].value)):
        # (y != 0 of a literal y, as the power rule writes it): an int, for the arithmetic around it
        return ast_util.const(int(_COMPARE[type(node.ops[0])](node.left.value, node.comparators[0].value)))
    if type(node) is gast.BinOp:
        left, right = node.left, node.right
        if (isinstance(left, gast.Constant) and isinstance(right, gast.Constant)
                and type(node.op) in _FOLD and _number(left.value) and _number(right.value)):
            return ast_util.const(_FOLD[type(node.op)](left.value, right.value))
        if isinstance(node.op, gast.Pow) and isinstance(right, gast.Constant) and right.value == 1 \
                and not isinstance(right.value, bool):
            return left
    return node


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def fold(stmts):
    """Simplify the statements in place; returns them."""
    return [_fold(s) for s in stmts]


# ------------------------------------------------------ copy propagation

class _Rename(ast_util.NodeTransformer):
    def __init__(self, old, new):
        self.old, self.new = old, new

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id == self.old:
            return ast_util.copy_location(ast_util.name(self.new), node)
        return node


def _is_copy(s):
    return (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.Name))


def propagate_copies(stmts, live_out, sets=None):
    """Assignment propagation: after `a = b`, read `b` for `a` until either
    is written again, and drop the copy when `a` is then dead. Returns the
    new statement list (nested blocks are done too). `live_out`: the names
    read after `stmts` (the returned values). Linear in the block's length
    per pass; passes repeat while a pass changes something."""
    sets = sets or Sets()
    stmts = list(stmts)
    after = live_after(stmts, live_out, sets)
    for k, s in enumerate(stmts):         # inner blocks first, each with what is live after it
        if isinstance(s, gast.If):
            s.body = propagate_copies(s.body, after[k], sets) or [gast.Pass()]
            s.orelse = propagate_copies(s.orelse, after[k], sets)
        elif isinstance(s, (gast.For, gast.While)):
            s.body = propagate_copies(s.body, live_in_stmt(s, after[k], sets), sets) or [gast.Pass()]
    compound = {}       # id -> (names read or written, names written) of an if/for/while here (not rewritten below)
    memo = {}           # (their liveness, for live_after)
    while True:
        changed = False
        after = live_after(stmts, live_out, sets, memo)
        out = []
        k = 0
        while k < len(stmts):
            s = stmts[k]
            if s is None:
                k += 1
                continue
            if _is_copy(s) and s.targets[0].id == s.value.id:
                k += 1
                changed = True
                continue                    # a = a
            if not _is_copy(s):
                out.append(s)
                k += 1
                continue
            a, b = s.targets[0].id, s.value.id
            j = k + 1
            while j < len(stmts):
                t = stmts[j]
                if t is None:
                    j += 1
                    continue
                if isinstance(t, (gast.If, gast.For, gast.While)):
                    found = compound.get(id(t))
                    if found is None:
                        written = liveness.defs(t)
                        found = compound[id(t)] = (liveness.uses(t) | written, written)
                    if a in found[0] or b in found[1]:
                        break
                    j += 1
                    continue
                uses, defs = sets.get(t)
                if a in uses:
                    t = stmts[j] = _Rename(a, b).visit(t)
                    sets.forget(t)
                    if _is_copy(t) and t.targets[0].id == t.value.id:
                        stmts[j] = None             # b = b: no statement at all
                        j += 1
                        continue
                    uses, defs = sets.get(t)
                if {a, b} & defs:
                    j += 1
                    break
                j += 1
            last = j - 1
            while last > k and stmts[last] is None:
                last -= 1
            ends = stmts[last] if last > k and isinstance(stmts[last], gast.Assign) else None
            if a not in after[last] or (ends is not None and a in sets.get(ends)[1] and a not in sets.get(ends)[0]):
                changed = True              # the copy is dead now (or `a` is written, not read, where it ends)
                k += 1
                continue
            out.append(s)
            k += 1
        stmts = out
        if not changed:
            return [s for s in stmts if not isinstance(s, gast.Pass)]


# ------------------------------------------------------------ freeing

def _is_reverse_marker(s):
    return (isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant)
            and isinstance(s.value.value, str) and s.value.value.startswith(ast_util.COMMENT_PREFIX + "Reverse sweep"))


def free_dead(body, params, sets=None):
    """`body` (a function's statements) with `del` statements freeing the
    values the rest of the function no longer reads, right after their last
    reader at the top level: an adjoint's temporaries (cotangents of whole
    arrays, the residuals it has consumed) would otherwise live until the
    function returns, and the peak memory is their sum. Only names bound by
    a top-level assignment before that point are freed (so they are bound
    on every path), never the parameters; in the reverse sweep only (after
    its `# Reverse sweep` comment; the forward one frees at its end)."""
    sets = sets or Sets()
    after = live_after(body, set(), sets)
    bound = set()
    out = []
    start = next((k for k, s in enumerate(body) if _is_reverse_marker(s)), len(body))
    for k, s in enumerate(body):
        out.append(s)
        if k < start:
            if isinstance(s, gast.Assign):
                bound |= {n.id for n in ast_util.walk(s.targets[0]) if isinstance(n, gast.Name)}
            elif isinstance(s, gast.Delete):
                bound -= {n.id for n in s.targets if isinstance(n, gast.Name)}
            continue
        if isinstance(s, gast.Return):
            continue
        before = live_in_stmt(s, after[k], sets)
        dead = sorted((before - after[k]) & bound - set(params))
        if isinstance(s, gast.Assign):
            bound |= {n.id for n in ast_util.walk(s.targets[0]) if isinstance(n, gast.Name)}
            dead += sorted({n.id for n in ast_util.walk(s.targets[0]) if isinstance(n, gast.Name)}
                           - after[k] - set(params) - set(dead))     # assigned and never read
        if dead and not isinstance(s, gast.Delete):
            out.append(ast_util.delete(dead))
    return out


def _hoistable_push(s, temp, value):
    """Is `s` a forward sweep's `push(S, x)` (or `push(S, ShapeOf(x))`) that
    may run before `temp = value` instead of after it: it does not read
    `temp`, and `value` does not read the stack (a pop). (Pushing a name
    before an in-place write into its buffer pushes the same buffer.)"""
    if not (isinstance(s, gast.Expr) and Anno.PUSH.of(s) is not None and isinstance(s.value, gast.Call)
            and len(s.value.args) == 2 and isinstance(s.value.args[0], gast.Name)):
        return False
    pushed = liveness.uses(s.value)
    return temp not in pushed and s.value.args[0].id not in liveness.uses(value) \
        and not any(isinstance(n, gast.NamedExpr) for n in ast_util.walk(value))


def _pair_at(stmts, k):
    """The index of the copy `x = t` that pairs with `t = e` at k (right
    after it, or after one push that may move before it), or None."""
    s = stmts[k]
    if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
        return None
    t = s.targets[0].id
    if k + 1 < len(stmts) and _is_copy(stmts[k + 1]) and stmts[k + 1].value.id == t:
        return k + 1
    if (k + 2 < len(stmts) and _is_copy(stmts[k + 2]) and stmts[k + 2].value.id == t
            and _hoistable_push(stmts[k + 1], t, s.value)):
        return k + 2
    return None


def _pairs_anywhere(stmts):
    """Is there a `t = e; x = t` pair in `stmts` or a block nested in them?"""
    for k, s in enumerate(stmts):
        if _pair_at(stmts, k) is not None:
            return True
        if isinstance(s, gast.If) and (_pairs_anywhere(s.body) or _pairs_anywhere(s.orelse)):
            return True
        if isinstance(s, (gast.For, gast.While)) and _pairs_anywhere(s.body):
            return True
    return False


def collapse_temporaries(stmts, live_out, sets=None, deleted=None):
    """`t = e; x = t` -> `x = e` where t is read nowhere after (ANF names
    every value; a loop's `setitem_H = setitem(H, ...); H = setitem_H`
    otherwise keeps the old array alive in `setitem_H` after the loop);
    also `t = e; push(S, ShapeOf(x)); x = t` -> `push(S, ShapeOf(x)); x = e`
    (the push of the old x, placed before the assignment to x).
    Nested blocks too; returns the new list."""
    if not _pairs_anywhere(stmts):
        return stmts            # (nothing to collapse: no liveness to compute)
    sets = sets or Sets()
    if deleted is None:         # (a name a `del` frees must stay assigned)
        deleted = {n.id for s in stmts if isinstance(s, gast.Delete) or hasattr(s, "body")
                   for n in ast_util.walk(s)              # (only a `del` has Del names)
                   if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Del)}
    after = live_after(stmts, live_out, sets)
    for k, s in enumerate(stmts):
        if isinstance(s, gast.If):
            s.body = collapse_temporaries(s.body, after[k], sets, deleted)
            s.orelse = collapse_temporaries(s.orelse, after[k], sets, deleted)
        elif isinstance(s, (gast.For, gast.While)):
            s.body = collapse_temporaries(s.body, live_in_stmt(s, after[k], sets), sets, deleted)
    out = []
    k = 0
    while k < len(stmts):
        s = stmts[k]
        j = _pair_at(stmts, k)
        nxt = stmts[j] if j is not None else None
        if (nxt is not None and nxt.value.id not in after[j]
                and nxt.targets[0].id != nxt.value.id and nxt.value.id not in deleted):
            new = ast_util.assign(nxt.targets[0].id, s.value)
            ast_util.copy_location(new, s)
            out.extend(stmts[k + 1:j])      # (a push that moves before the assignment)
            out.append(new)
            k = j + 1
            continue
        out.append(s)
        k += 1
    return out


# ------------------------------------------------ specialisation to 0-d values

MATH_UFUNCS = {n for n in ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "sinh", "cosh", "expm1", "log1p",
                           "arctan", "arcsin", "arccos", "log10", "log2", "erf")
               if hasattr(np, n)}
MATH_NAMES = {"arctan": "atan", "arcsin": "asin", "arccos": "acos"}


class MathFunctions:
    """np.cos(x) -> math.cos(x) in the adjoint or tangent of a math-module
    call (whose operands are Python floats): `visit(node)` rewrites."""

    def __init__(self, np_aliases, math_alias):
        self.np_aliases, self.math_alias = np_aliases, math_alias

    def visit(self, node):
        """`node` rewritten (in place where its parents stay)."""
        return ast_util.rewrite_calls(node, self.call)

    def call(self, node):
        f = node.func
        if (isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name) and f.value.id in self.np_aliases
                and f.attr in MATH_UFUNCS and len(node.args) == 1 and not node.keywords
                and hasattr(math, MATH_NAMES.get(f.attr, f.attr))):
            node.func = gast.Attribute(value=ast_util.name(self.math_alias), attr=MATH_NAMES.get(f.attr, f.attr),
                                       ctx=gast.Load())
        return node


class ElideShapeHelper:
    """unbroadcast(g, x) -> g (broadcast_like(t, x) -> t in tangent code)
    where x is among `scalars` (known to be 0-d, and so is g; or known to
    have the shape g has: shapes.py), the calls named `aliases`:
    `visit(node)` rewrites."""

    def __init__(self, aliases, scalars):
        self.aliases = aliases
        self.scalars = scalars

    def visit(self, node):
        """`node` rewritten (in place where its parents stay)."""
        return ast_util.rewrite_calls(node, self.call)

    def call(self, node):
        if (isinstance(node.func, gast.Name) and node.func.id in self.aliases and len(node.args) == 2
                and isinstance(node.args[1], gast.Name) and node.args[1].id in self.scalars):
            return node.args[0]
        return node
