"""Peephole simplification of generated code, for readability.

Requires: reverse (inlined rules). Folds arithmetic on constants (`2 - 1`
becomes `1`) and `x ** 1` to `x`. Never folds `x * 0` to 0 (that would hide
NaN and inf, as JAX's symbolic zeros also refuse to).
"""
import operator

import gast

from . import ast_util

_FOLD = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul}


class _Fold(gast.NodeTransformer):
    def visit_BinOp(self, node):
        self.generic_visit(node)
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
    f = _Fold()
    return [f.visit(s) for s in stmts]


# ------------------------------------------------------------ liveness

def _uses(node):
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _defs(node):
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del))}


def live_in(stmts, live_out):
    """The names read before being written in `stmts` (structured code:
    if, for and while are the only compound statements), given the names
    live after them. A backward dataflow analysis (Aho et al., Compilers,
    sec. 9.2.5), with a fixed point at each loop."""
    live = set(live_out)
    for s in reversed(stmts):
        live = _live_in_stmt(s, live)
    return live


def _live_in_stmt(s, live):
    if isinstance(s, gast.If):
        return _uses(s.test) | live_in(s.body, live) | live_in(s.orelse, live)
    if isinstance(s, gast.For):
        target = _defs(s.target)
        head = set(live)
        while True:
            new = set(live) | (live_in(s.body, head) - target)
            if new <= head:
                break
            head |= new
        return _uses(s.iter) | head
    if isinstance(s, gast.While):
        head = set(live) | _uses(s.test)
        while True:
            new = set(live) | _uses(s.test) | live_in(s.body, head)
            if new <= head:
                break
            head |= new
        return head
    return (live - _defs(s)) | _uses(s)


# ------------------------------------------------------ copy propagation

class _Rename(gast.NodeTransformer):
    def __init__(self, old, new):
        self.old, self.new = old, new

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id == self.old:
            return ast_util.copy_location(ast_util.name(self.new), node)
        return node


def _is_copy(s):
    return (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.Name))


def propagate_copies(stmts, live_out):
    """Assignment propagation: after `a = b`, read `b` for `a` until either
    is written again, and drop the copy when `a` is then dead. Returns the
    new statement list (nested blocks are done too). `live_out`: the names
    read after `stmts` (the returned values)."""
    stmts = list(stmts)
    # inner blocks first, each with what is live after it
    for k, s in enumerate(stmts):
        after = live_in(stmts[k + 1:], live_out)
        if isinstance(s, gast.If):
            s.body = propagate_copies(s.body, after) or [gast.Pass()]
            s.orelse = propagate_copies(s.orelse, after)
        elif isinstance(s, (gast.For, gast.While)):
            s.body = propagate_copies(s.body, _live_in_stmt(s, after)) or [gast.Pass()]
    out = []
    k = 0
    while k < len(stmts):
        s = stmts[k]
        if _is_copy(s) and s.targets[0].id == s.value.id:
            k += 1
            continue                    # a = a
        if _is_copy(s):
            a, b = s.targets[0].id, s.value.id
            j = k + 1
            replaced = []
            while j < len(stmts):
                t = stmts[j]
                compound = isinstance(t, (gast.If, gast.For, gast.While))
                names = _uses(t) | _defs(t)
                if compound and (a in names or b in _defs(t)):
                    break
                if a in _uses(t):
                    t = stmts[j] = _Rename(a, b).visit(t)
                    replaced.append(j)
                    if _is_copy(t) and t.targets[0].id == t.value.id:
                        stmts[j] = gast.Pass()      # b = b: no statement at all
                        j += 1
                        continue
                if {a, b} & _defs(t):
                    j += 1
                    break
                j += 1
            if a not in live_in(stmts[j:], live_out) and not (
                    j - 1 > k and a in _defs(stmts[j - 1]) and a in _uses(stmts[j - 1])):
                k += 1
                continue                # the copy is dead now
            out.append(s)
            k += 1
            continue
        out.append(s)
        k += 1
    return [s for s in out if not isinstance(s, gast.Pass)]
