"""Liveness of names in structured code: which names are read later.

Computes, for a list of statements (the compound statements are if, for
and while only: the code the lowering and anf.py leave), the names live
before them (`live_in`, `live_in_stmt`) and after each of them
(`live_after`), given the names live after the list. A backward dataflow
analysis (Aho et al., Compilers, 2nd ed., sec. 9.2.5): on the statement
list, live before s = (live after s - kill(s)) | gen(s), gen the names s
reads, kill those it writes or deletes (`Sets` keeps both per statement);
an `if` joins its two branches, and a loop iterates its body to a fixed
point (a `for` target is killed by each iteration, its `iter` read once
before the loop; a `while` test is read before every iteration).

Requires: nothing but the tree. Used by optimize.py (copy propagation,
freeing dead values, collapsing temporaries) and inplace.py.
"""
import gast

from ..syntax import ast_util


def uses(node):
    """The names read in `node`."""
    return {n.id for n in ast_util.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def defs(node):
    """The names written or deleted in `node`."""
    return {n.id for n in ast_util.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del))}


def _uses_defs(node):
    """(names read, names written or deleted) in `node`, in one walk."""
    read, written = set(), set()
    for n in ast_util.walk(node):
        if n.__class__ is gast.Name:
            (read if n.ctx.__class__ is gast.Load else written).add(n.id)
    return read, written


def uses_defs(node):
    """(uses(node), defs(node)), in one walk."""
    read, written = set(), set()
    for n in ast_util.walk(node):
        if isinstance(n, gast.Name):
            if isinstance(n.ctx, gast.Load):
                read.add(n.id)
            elif isinstance(n.ctx, (gast.Store, gast.Del)):
                written.add(n.id)
    return read, written


class Sets:
    """uses/defs of statements, computed once per statement object (a
    rewritten statement is a new object, or is dropped with `forget`). The
    sets do not depend on where a statement sits, so one Sets can serve
    every pass over one artefact's trees (whose sweeps share statements)."""

    def __init__(self):
        self.cache = {}

    def get(self, s):
        found = self.cache.get(id(s))
        if found is None or found[0] is not s:
            found = self.cache[id(s)] = (s,) + _uses_defs(s)
        return found[1], found[2]

    def forget(self, s):
        self.cache.pop(id(s), None)


def live_in(stmts, live_out, sets=None):
    """The names read before being written in `stmts` (structured code:
    if, for and while are the only compound statements), given the names
    live after them. A backward dataflow analysis (Aho et al., Compilers,
    sec. 9.2.5), with a fixed point at each loop."""
    sets = sets or Sets()
    cached = sets.cache.get     # (Sets.get's entries, read here without a call each)
    live = set(live_out)
    for s in reversed(stmts):
        if isinstance(s, _COMPOUND):
            live = live_in_stmt(s, live, sets)
        else:
            found = cached(id(s))
            if found is None or found[0] is not s:
                found = (s,) + sets.get(s)
            live -= found[2]        # (live_in_stmt's, on the set this pass owns)
            live |= found[1]
    return live


def live_after(stmts, live_out, sets, memo=None):
    """after[k]: the names live after statement k (one backward pass).
    `memo`: a dict the caller keeps while the compound statements of
    `stmts` do not change, which remembers what is live before each of them
    for what is live after it."""
    after = [None] * len(stmts)
    cached = sets.cache.get     # (Sets.get's entries, read here without a call each)
    live = set(live_out)
    for k in range(len(stmts) - 1, -1, -1):
        after[k] = live
        s = stmts[k]
        if isinstance(s, _COMPOUND):
            live = live_before(s, live, sets, memo)
        else:
            found = cached(id(s))
            if found is None or found[0] is not s:
                found = (s,) + sets.get(s)
            live = live - found[2]
            live |= found[1]
    return after


_COMPOUND = (gast.If, gast.For, gast.While)


def live_before(s, live, sets=None, memo=None):
    """live_in_stmt(s, live, sets); for an if/for/while, remembered in
    `memo` (a dict kept while `s` does not change: see live_after), whose
    entry live_after may have made already."""
    if memo is None or not isinstance(s, _COMPOUND):
        return live_in_stmt(s, live, sets)
    key = (id(s), frozenset(live))
    found = memo.get(key)
    if found is None:
        found = memo[key] = (s, live_in_stmt(s, live, sets))
    return set(found[1])


def live_in_stmt(s, live, sets=None):
    """The names live before statement `s`, given those live after it."""
    sets = sets or Sets()
    if isinstance(s, gast.If):
        return uses(s.test) | live_in(s.body, live, sets) | live_in(s.orelse, live, sets)
    if isinstance(s, gast.For):
        target = defs(s.target)
        head = set(live)
        while True:
            new = set(live) | (live_in(s.body, head, sets) - target)
            if new <= head:
                break
            head |= new
        return uses(s.iter) | head
    if isinstance(s, gast.While):
        head = set(live) | uses(s.test)
        while True:
            new = set(live) | uses(s.test) | live_in(s.body, head, sets)
            if new <= head:
                break
            head |= new
        return head
    read, written = sets.get(s)
    return (live - written) | read
