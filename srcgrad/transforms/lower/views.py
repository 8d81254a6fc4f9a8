"""Lowering: element assignment and NumPy views (a check, no rewrite).

Requires: for_loops (index loops: the rows a loop reads are `t = _seq[_i]`),
the function itself (not an inlined body). Guarantees: an element
assignment (or `x += v`, in place for an array) to a name that may share
memory with another name still read afterwards raises
UnsupportedSyntaxError when the other is a NumPy view for sure
(`a = x[::-1]; a[1] = v` changes x in NumPy, the functional
`a = setitem(a, 1, v)` of mutations.py does not); when it depends on the
array (`tmp = y[j]`: a copy of a vector's element, a view of a matrix's
row) the statement carries VIEW_CHECK, the names mutations.py tests at run
time (`check_not_shared`).
"""
import gast
import numpy as np

from ...errors import fail
from ...syntax import ast_util
from ...syntax.anno import Anno
from .common import mutated

# a view whatever the array: basic slicing, the transpose, ...
_VIEW_ATTRS = {"T", "mT", "real", "imag"}
# a list of views: `a, b = np.split(x, 2)` (the pieces of an ndarray are slices of it)
_SPLITS = {"split", "array_split", "hsplit", "vsplit", "dsplit", "unstack"}
_VIEW_CALLS = _SPLITS | {
    "transpose", "swapaxes", "squeeze", "view", "diagonal", "expand_dims", "moveaxis", "rollaxis", "asarray",
    "asanyarray", "atleast_1d", "atleast_2d", "atleast_3d", "flip", "fliplr", "flipud", "rot90", "broadcast_to",
    "real", "imag"}


# builtins whose result holds no array of their arguments
_NO_VIEW_BUILTINS = {"len", "range", "int", "float", "bool", "str", "abs", "round", "isinstance", "print", "hash",
                     "id", "type", "repr", "format", "callable", "hasattr", "divmod", "pow", "complex"}


def _advanced_index(sl):
    """An index that makes NumPy copy (a list display: advanced indexing)."""
    if isinstance(sl, gast.List):
        return True
    return isinstance(sl, gast.Tuple) and any(isinstance(e, gast.List) for e in sl.elts)


def _basic_slicing(sl):
    """An index with a slice, `...` or None: NumPy returns a view."""
    parts = sl.elts if isinstance(sl, gast.Tuple) else [sl]
    return any(isinstance(p, gast.Slice) or (isinstance(p, gast.Constant) and (p.value is None or p.value is Ellipsis))
               for p in parts)


def _view_chain_root(value):
    """{root name: False} for a chain of subscripts, attributes and calls
    rooted at a name (a[None][0], np.expand_dims(a, 0)[0], a.reshape(1, 3).T):
    a view or a copy, checked at run time."""
    while True:
        if isinstance(value, gast.Name):
            return {value.id: False}
        if isinstance(value, _DISPLAY_NODES):
            return {n: False for n in _held_names(value)}     # [a][0]: a itself
        if isinstance(value, (gast.Subscript, gast.Attribute)):
            value = value.value
        elif isinstance(value, gast.Call):
            out = {}
            for a in value.args:
                out.update(_view_chain_root(a))
            if isinstance(value.func, gast.Attribute):
                out.update(_view_chain_root(value.func.value))
            return out
        else:
            return {}


def _view_bases(value):
    """{name: definite} for the names whose array `value` may be a view of
    (NumPy shares the memory): definite for `x` itself, `x[1:]`, `x.T`,
    `np.transpose(x)`, ...; not definite (a view or a copy depending on the
    array, checked at run time) for `x[i]` and the arguments of any other
    call (`x.reshape(...)`, a helper returning `x[1:]`)."""
    if isinstance(value, gast.Name):
        return {value.id: True}
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
        if _advanced_index(value.slice):
            return {}
        return {value.value.id: _basic_slicing(value.slice)}
    if isinstance(value, (gast.Subscript, gast.Attribute)) and not isinstance(value.value, gast.Name):
        if isinstance(value, gast.Subscript) and _advanced_index(value.slice):
            return {}
        return _view_chain_root(value.value)         # a view of a view: checked at run time
    if isinstance(value, gast.Attribute) and value.attr in _VIEW_ATTRS and isinstance(value.value, gast.Name):
        return {value.value.id: True}
    if isinstance(value, gast.IfExp):
        # b = a if c else x[1:]: a view of what either branch may be a view of, checked at run time
        out = {n: False for n in _view_bases(value.body)}
        out.update({n: False for n in _view_bases(value.orelse)})
        return out
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and value.func.attr in _VIEW_CALLS:
        out = {}
        if isinstance(value.func.value, gast.Name):
            out[value.func.value.id] = True              # x.transpose()
        else:
            out.update(_view_chain_root(value.func.value))  # x[None].squeeze(0): checked at run time
        if value.args and isinstance(value.args[0], gast.Name):
            out[value.args[0].id] = True                 # np.transpose(x)
        return out
    if isinstance(value, gast.Call) and _numpy_ufunc(value.func):
        return {}                                   # np.sin(x): a ufunc returns a new array
    if isinstance(value, gast.Call) and not (isinstance(value.func, gast.Name) and value.func.id in _NO_VIEW_BUILTINS):
        # any other call may return a view of an argument (x.reshape(...), a helper returning x[1:]):
        # checked at run time
        out = {a.id: False for a in value.args if isinstance(a, gast.Name)}
        out.update({k.value.id: False for k in value.keywords if isinstance(k.value, gast.Name)})
        if isinstance(value.func, gast.Attribute) and isinstance(value.func.value, gast.Name):
            out[value.func.value.id] = False
        elif isinstance(value.func, gast.Attribute) and not _numpy_module(value.func.value):
            out.update(_view_chain_root(value.func.value))  # x[:].reshape(-1): a view of x's
        return out
    return {}


def _numpy_module(e):
    """Is `e` spelled np.<attr...> (np.linalg): a module, no array?"""
    while isinstance(e, gast.Attribute):
        e = e.value
    return isinstance(e, gast.Name) and e.id in ("np", "numpy")


def _numpy_ufunc(func):
    """Is `func` spelled `np.<ufunc>` / `numpy.<ufunc>` (np.sin, np.add)?
    A ufunc's result is a new array, never a view of its inputs."""
    return (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)
            and func.value.id in ("np", "numpy") and isinstance(getattr(np, func.attr, None), np.ufunc))


def _loads(node):
    return {n.id for n in ast_util.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


class _ViewCheck:
    """Element assignment and NumPy views: `a = x[::-1]; a[1] = v` changes
    x in NumPy, and `b = x.T; x[0] = v` changes b, but the functional
    `a = setitem(a, 1, v)` changes neither. For an element assignment to
    one of a group of names that may share memory (`_view_bases`, taken
    transitively) while another name of the group is still read afterwards
    (live: a backwards liveness analysis of the structured body, loops to
    their fixpoint): UnsupportedSyntaxError when the other is a view for
    sure; otherwise (`tmp = y[j]` is a copy of a vector's element, a view of
    a matrix's row) the statement gets VIEW_CHECK, the names to test at
    run time (`check_not_shared`; names unbound on some path to the
    statement are not tested).
    Conservative: a name that was a view once counts as one everywhere."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.links = {}         # name -> {other name: (the assignment that links them, definite)}
        self.made_by = {}       # (name, other) -> ids of every statement linking them

    def check(self, body):
        self.flows = {}         # id(node) -> (node, what the liveness reads of it): see flow
        self.stored = ast_util.names_stored(ast_util.module(body))
        self.locals = set(self.ctx.parsed.params) | self.stored
        self.snapshots = {}     # parameter rebound in the function -> the name holding the caller's object
        self.bindings = {}      # name -> ids of the statements binding it to a new object (=, for)
        self.place = {}         # id(statement) -> (its position in source order, the loops around it)
        self.number(body, ())
        for n in ast_util.walk(ast_util.module(body)):
            if isinstance(n, (gast.Assign, gast.AnnAssign, gast.For)):
                for t in (n.targets if isinstance(n, gast.Assign) else [n.target]):
                    for name in ast_util.names_stored(t):
                        self.bindings.setdefault(name, set()).add(id(n))
            if isinstance(n, gast.Assign) and len(n.targets) == 1:
                self.collect(n.targets[0], n.value, n)
            elif (isinstance(n, gast.Expr) and isinstance(n.value, gast.Call)
                  and isinstance(n.value.func, gast.Attribute) and n.value.func.attr in ("append", "extend")
                  and isinstance(n.value.func.value, gast.Name)):
                # xs.append(a): xs holds a (an element assignment to a changes xs's element too)
                for a in n.value.args:
                    for base in _held_names(a):
                        self.link(n.value.func.value.id, base, n, False)
        if self.links:
            self.assigned(body, set(self.ctx.parsed.params))
        # (liveness also tells which arguments of a call nobody reads afterwards: Anno.DEAD_ARGS)
        self.block(body, set(), True)
        # the caller's objects of rebound parameters, for the run-time checks of UNSHARED_ARGS
        body[:0] = [ast_util.copy_location(ast_util.assign(snap, ast_util.name(p)), body[0])
                    for p, snap in sorted(self.snapshots.items())]

    def collect(self, target, value, stmt):
        if isinstance(target, (gast.Tuple, gast.List)):
            if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts):
                for t, v in zip(target.elts, value.elts):
                    self.collect(t, v, stmt)
            else:                   # a, b = x: the rows of x; a, b = np.split(x, 2): views of x
                bases = {value.id: False} if isinstance(value, gast.Name) else _view_bases(value)
                for t in target.elts:
                    t = t.value if isinstance(t, gast.Starred) else t
                    if isinstance(t, gast.Name):
                        for base, definite in bases.items():
                            self.link(t.id, base, stmt, definite)
            return
        if isinstance(target, gast.Name):
            for base, definite in _view_bases(value).items():
                self.link(target.id, base, stmt, definite)
            if isinstance(value, _DISPLAY_NODES):
                for base in _held_names(value):        # zs = [a]: zs holds a
                    self.link(target.id, base, stmt, False)

    def link(self, view, base, stmt, definite):
        if base == view or base not in self.locals or view not in self.locals:
            return
        for a, b in ((view, base), (base, view)):
            self.made_by.setdefault((a, b), set()).add(id(stmt))
            old = self.links.setdefault(a, {}).get(b)
            if old is None or (definite and not old[1]):
                self.links[a][b] = (stmt, definite)

    def paths(self, name, without=None):
        """{other: True if some path of definite links joins them} (not
        through the links statement `without` made)."""
        best = {name: True}
        todo = [name]
        while todo:
            a = todo.pop()
            for b, (stmt, definite) in self.links.get(a, {}).items():
                if without is not None and self.made_by.get((a, b)) == {id(without)}:
                    continue
                d = best[a] and definite
                if b not in best or (d and not best[b]):
                    best[b] = d
                    todo.append(b)
        del best[name]
        return best

    # -- which names are assigned on every path to a statement
    def assigned(self, stmts, defined):
        for s in stmts:
            if mutated(s) or (isinstance(s, (gast.Assign, gast.Expr))
                              and any(isinstance(n, gast.Call) for n in ast_util.walk(s.value))):
                Anno.DEFINED.add_to(s, set(defined))
            if isinstance(s, gast.If):
                defined = self.assigned(s.body, set(defined)) & self.assigned(s.orelse, set(defined))
            elif isinstance(s, (gast.For, gast.While)):
                inner = set(defined)
                if isinstance(s, gast.For):
                    inner |= ast_util.names_stored(s.target)
                self.assigned(s.body, inner)
            else:
                defined |= ast_util.names_stored(s)
        return defined

    # -- liveness, backwards
    def block(self, stmts, live, report):
        for s in reversed(stmts):
            live = self.stmt(s, live, report)
        return live

    def flow(self, node):
        """(names killed, names read) by `node` (a simple statement), or the
        names read by `node` (an expression, or a return), once per node: the
        loops' fixpoints visit their statements again, unchanged."""
        found = self.flows.get(id(node))
        if found is None or found[0] is not node:
            found = self.flows[id(node)] = (node, self._flow(node))
        return found[1]

    @staticmethod
    def _flow(s):
        if not isinstance(s, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
            return _loads(s)
        targets = s.targets if isinstance(s, gast.Assign) else [s.target]
        kills = set()
        if not isinstance(s, gast.AugAssign):
            for t in targets:
                kills |= ast_util.names_stored(t)
        uses = _loads(s.value) if s.value is not None else set()
        for t in targets:
            uses |= _loads(t) | ({t.id} if isinstance(s, gast.AugAssign) and isinstance(t, gast.Name) else set())
        uses |= set(mutated(s))
        return kills, uses

    def stmt(self, s, live, report):
        if isinstance(s, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
            kills, uses = self.flow(s)
            if report:
                if self.links:
                    for name in mutated(s):
                        self.mutation(name, live, s)
                if s.value is not None:
                    self.dead_arguments(s, live - kills)
            return (live - kills) | uses
        if isinstance(s, gast.Return):
            return set(self.flow(s))
        if isinstance(s, gast.If):
            return self.flow(s.test) | self.block(s.body, set(live), report) | self.block(s.orelse, set(live), report)
        if isinstance(s, (gast.For, gast.While)):
            head = set(live) | self.flow(s.iter if isinstance(s, gast.For) else s.test)
            target = ast_util.names_stored(s.target) if isinstance(s, gast.For) else set()
            while True:
                new = head | (self.block(s.body, set(head), False) - target)
                if new == head:
                    break
                head = new
            if report:
                self.block(s.body, set(head), True)
            return head
        return set(live) | self.flow(s)

    def dead_arguments(self, s, live):
        """Mark the calls in statement `s`'s value with Anno.DEAD_ARGS: the
        arguments that are local names (not parameters) whose object no
        name in `live` (read after the statement, its own targets excluded)
        and no parameter may share (links made by `s` itself are left out:
        its targets hold what the call returns, the same in compiled code).
        An argument that may share it only through a call's result (a view
        or a copy: `v = helper(x)` is known at run time) is marked
        Anno.UNSHARED_ARGS instead, with the names to test before the call
        (a rebound parameter is also tested as the caller's object, held
        from the function's entry)."""
        params = set(self.ctx.parsed.params)
        defined = Anno.DEFINED.of(s, None)
        for call in ast_util.walk(s.value):
            if not isinstance(call, gast.Call):
                continue
            checked = {}

            def dead(a):
                if not isinstance(a, gast.Name) or a.id in params or a.id not in self.locals or a.id in live:
                    return False
                blockers = {o: d for o, d in self.paths(a.id, s).items() if o in live or o in params}
                if not blockers:
                    return True
                if not any(blockers.values()) and defined is not None and all(
                        o in defined or o in params for o in blockers):
                    checked[a.id] = self.unshared(a.id, sorted(blockers), call, s)
                return False
            positions = {i for i, a in enumerate(call.args) if dead(a)}
            keywords = {k.arg for k in call.keywords if k.arg is not None and dead(k.value)}
            if positions or keywords:
                Anno.DEAD_ARGS.add_to(call, (frozenset(positions), frozenset(keywords)))
            if checked:
                Anno.UNSHARED_ARGS.add_to(call, checked)

    def unshared(self, name, others, call, s):
        """(names, messages, origin) of the run-time test that argument
        `name` of `call` shares no memory with `others` (UNSHARED_ARGS)."""
        callee = ast_util.to_source(call.func).strip()
        names, messages = [], []
        for other in others:
            shown = [other]
            if other in self.ctx.parsed.params and other in self.stored:
                snap = self.snapshots.get(other)
                if snap is None:
                    snap = self.snapshots[other] = self.ctx.namer.fresh("_entry_" + other)
                shown.append(snap)
            for n in shown:
                what = ("%s, which may share its memory," % other if n == other else
                        "the array the caller passed as %s, which may share its memory," % other)
                names.append(n)
                messages.append((
                    "passing %s to %s, which writes into it, while %s is still used (NumPy would change "
                    "%s too, compiled code does not)" % (name, callee, what, other),
                    "pass a copy: %s.copy()" % name))
        return tuple(names), tuple(messages), self.ctx.parsed.origin(s)

    def mutation(self, name, live, s):
        # x += v: in place for an array, not for a float (x[i] += v is an element assignment)
        augmented = isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name)
        if name not in self.links:
            return
        runtime = []
        for other, definite in sorted(self.paths(name).items()):
            if other not in live:
                continue
            if definite and not augmented and self.rebound(name, other) and other in Anno.DEFINED.of(s, ()):
                definite = False        # (`b = a` made them one array, but either may be another one by now)
            if not definite or augmented:
                if other in Anno.DEFINED.of(s, ()):
                    runtime.append((other,) + view_message(name, other, self.links, s))
                continue        # (unbound on some path to here: not checked)
            self.fail(name, other, s)
        if runtime:
            Anno.VIEW_CHECK.add_to(s, runtime)

    def rebound(self, name, other):
        """Do statements other than those linking `name` and `other`
        directly (`b = a`, `v = x[1:]`) bind either name to another object
        (`b = b + 1`)? Then whether they still share memory at a statement
        is known at run time only (the analysis is not flow-sensitive)."""
        linking = self.made_by.get((name, other))
        if linking is None or any(k not in self.place for k in linking):     # (through a third name: not followed)
            return False
        first = min(self.place[k][0] for k in linking)
        loops = set().union(*(self.place[k][1] for k in linking))
        for k in (self.bindings.get(name, set()) | self.bindings.get(other, set())) - linking:
            position, around = self.place.get(k, (first + 1, ()))
            if position > first or loops & set(around):     # (after the link, or in a loop with it)
                return True
        return False

    def number(self, stmts, loops):
        """Fill self.place: each statement's position in source order and
        the ids of the loops around it."""
        for s in stmts:
            self.place[id(s)] = (len(self.place), loops)
            inner = loops + (id(s),) if isinstance(s, (gast.For, gast.While)) else loops
            for field in ("body", "orelse", "finalbody"):
                self.number(getattr(s, field, None) or [], inner)
            for handler in getattr(s, "handlers", None) or []:
                self.number(handler.body, inner)

    def fail(self, name, other, s):
        fail(self.ctx.parsed, s, *view_message(name, other, self.links, s), op_by_op=False)


def view_message(name, other, links, mutation=None):
    """(construct, hint) of the error for an element assignment (or `+=`)
    to `name` while `other`, which may share its memory, is still used."""
    stmt = links.get(name, {}).get(other, (None,))[0]
    augmented = isinstance(mutation, gast.AugAssign) and isinstance(mutation.target, gast.Name)
    what = ("%s %s= ... (in place for an array)" % (name, _OP_TEXT.get(type(mutation.op), "")) if
            augmented else "element assignment to %s" % name)
    if stmt is not None and (isinstance(stmt, gast.Expr) or isinstance(stmt.value, _DISPLAY_NODES)):
        holder, held = (name, other) if name in _held_in(stmt) else (other, name)
        return ("%s while %s, a list, tuple or dict holding it, is still used (NumPy would change the element "
                "%s holds too, srcgrad changes %s only)" % (what, holder, holder, name),
                "store a copy in the container (%s.copy()), or build a new array instead of writing into %s"
                % (held, name))
    if not augmented and stmt is not None and isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Name):
        return ("element assignment to %s while %s, another name for the same array (%s), is still used (NumPy "
                "would change %s too, srcgrad changes %s only)" % (name, other, ast_util.to_source(stmt).strip(),
                                                                   other, name),
                "make a copy: %s = %s.copy()" % (ast_util.names_stored(stmt.targets[0]).pop(), stmt.value.id))
    if augmented:
        return ("%s while %s, which may share its memory, is still used (NumPy would change %s too, "
                "srcgrad changes %s only)" % (what, other, other, name),
                "write %s = %s + ... (a new array), or make a copy first" % (name, name))
    if stmt is not None and other in _view_bases(stmt.value) and name in ast_util.names_stored(stmt):
        construct = ("element assignment to %s, which may be a NumPy view of %s (NumPy would change %s too, "
                     "srcgrad changes %s only)" % (name, other, other, name))
        view = name
    else:
        construct = ("element assignment to %s while %s, which may be a NumPy view of it, is still used "
                     "(NumPy would change %s too, srcgrad changes %s only)" % (name, other, other, name))
        view = other
    if stmt is None:        # linked through other names (h = H[t]; hs.append(h); H[t] = ...)
        return construct, ("copy the array where another name or a container takes it (h = H[t].copy(), "
                           "hs.append(h.copy()))")
    text = ast_util.to_source(stmt.value).strip()
    if isinstance(stmt.value, gast.IfExp):
        text = "(%s)" % text
    if ("_seq" in text or "_zipped" in text     # an element of a for loop
            or isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], (gast.Tuple, gast.List))):
        text = view                             # a piece of a tuple assignment (a, b = np.split(y, 2))
    elif (isinstance(stmt.value, gast.Call) and isinstance(stmt.value.func, gast.Attribute)
          and stmt.value.func.attr in _SPLITS):  # a list of views
        return construct, "copy the pieces: %s = [p.copy() for p in %s]" % (view, text)
    return construct, "make a copy: %s = %s.copy()" % (view, text)


_DISPLAY_NODES = (gast.List, gast.Tuple, gast.Set, gast.Dict)
_OP_TEXT = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**", gast.MatMult: "@",
            gast.FloorDiv: "//", gast.Mod: "%"}


def _held_in(stmt):
    """The names a linking statement stores elements into (its container)."""
    if isinstance(stmt, gast.Expr):
        return {stmt.value.func.value.id}
    return ast_util.names_stored(stmt)


def _held_names(value):
    """The names a display holds as elements (nested displays too): `[a, (b, c)]`."""
    if isinstance(value, gast.Name):
        return [value.id]
    if isinstance(value, gast.Dict):
        return [n for v in value.values for n in _held_names(v)]
    if isinstance(value, (gast.List, gast.Tuple, gast.Set)):
        return [n for e in value.elts for n in _held_names(e.value if isinstance(e, gast.Starred) else e)]
    return []


def transform(fdef, ctx):
    _ViewCheck(ctx).check(fdef.body)
    return fdef
