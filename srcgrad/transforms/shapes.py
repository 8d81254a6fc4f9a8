"""Shapes: which operands of an elementwise operation provably have the
shape of its result, so that the adjoint's `unbroadcast(g, x)` is `g`.

Requires: kinds (facts.scalar, facts.dynamic). Guarantees
`ctx.facts.same_shape`: {id(statement): the operand names whose shape is
the statement's result's} for the ANF assignments it could prove it for.

The argument kinds carry, per array parameter, which of its axes have
length 1 (function._kind_of: the Program is compiled per pattern). Each
axis of length other than 1 is a symbol; an axis of length 1 is ONE. The
analysis propagates shapes as tuples of such dimensions through the
operations whose result shape it knows (elementwise ufuncs, full and
axis reductions, matmul, transpose, copies), to a fixed point over every
assignment of a name (loops, branches); any other operation gives an
unknown shape. Broadcasting two dimensions that are both known not to be
1 proves them equal whenever the operation ran (NumPy raises otherwise):
that equality is used for that statement's own adjoint only, which runs
only if the statement did (a proof from one branch is never applied to
another). A dimension derived some other way may be 1, and broadcasting
it against a different one gives an unknown dimension.

Two facts need no dimensions at all: an elementwise operation whose
other operands are 0-d (`x * 2.0`, `tanh(x)`, `x * x`) gives its operand's
shape, whatever it is; and a name assigned once, outside loops and
branches, has one shape per call (`Opaque`), which values computed from it
that way share.

The cotangent of a name has the name's shape (the seeds are unbroadcast
to their outputs' shapes, reverse.py, and every rule's adjoint returns
its operands' shapes); the elision relies on it, so a name read by
anything but a rule or a copy (a call of a user function, a custom
gradient, a container display) is not trusted, nor is the code of a
function transformed again (its stacks), where cotangents flow through
pops. Any doubt leaves the `unbroadcast` in place: a call that costs a
shape comparison, never a wrong derivative.
"""
import operator

import typing

import gast
import numpy as np

from .. import runtime
from ..rules.helpers import broadcast as helpers
from ..rules.python import containers
from ..syntax import ast_util
from ..syntax.anno import Anno

ONE = 1
TOP = "?"       # an unknown shape


class Opaque:
    """The shape of the one value of a name assigned once, outside loops and
    branches (per call, a fixed shape the analysis cannot spell out):
    values computed from it elementwise with 0-d partners have it too."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return type(other) is Opaque and other.name == self.name

    def __hash__(self):
        return hash(("opaque", self.name))

    def __repr__(self):
        return "Opaque(%s)" % self.name

#: the array constructors from a shape (their first argument)
_FILLED = (np.zeros, np.ones, np.empty, np.full)
#: helpers of generated code whose result has the shape of their argument `x` (code transformed again)
_SHAPED_LIKE_X = (helpers.unbroadcast, helpers.unreduce, helpers.unindex, helpers.unindex_array, runtime.as_input)
_REDUCTIONS = {np.sum, np.mean, np.max, np.min, np.amax, np.amin, np.prod, np.var, np.std, np.nansum, np.nanmean}
_IGNORED = ("out", "dtype", "casting", "order", "subok", "signature")


def _targets(stmt):
    t = stmt.targets[0]
    return [e.id for e in t.elts] if isinstance(t, gast.Tuple) else [t.id]


def _not_one(d):
    """Is dimension symbol `d` known not to be 1: a parameter's axis the
    pattern says is not 1 ("p"), a constant length other than 1 ("k"), or
    the join of such dimensions over a name's assignments ("n")?"""
    return type(d) is tuple and d[0] in ("p", "k", "n")


class ShapeValue(tuple):
    """The value of `x.shape` (a tuple of ints, not an array): its
    dimension symbols."""


class DimValue(tuple):
    """An int that is the length of an axis (`x.shape[k]`): (its symbol,)."""


def _join(a, b, name):
    """The shape of `name` given two of its assignments' shapes: the same
    symbol where they agree; where both are known not to be 1 but differ,
    ("n", name, axis), a length known not to be 1 (an operand axis that is
    not 1 has its result's length whenever NumPy ran the operation, however
    long it is); otherwise an unknown shape."""
    if a == b and type(a) is type(b):
        return a
    if a == TOP or b == TOP or type(a) is not tuple or type(b) is not tuple or len(a) != len(b):
        return TOP
    out = []
    for k, (x, y) in enumerate(zip(a, b)):
        if x == y:
            out.append(x)
        elif _not_one(x) and _not_one(y):
            out.append(("n", name, k))
        else:
            return TOP
    return tuple(out)


def _length(e, dims):
    """The dimension symbol of an int expression used as a length: ONE
    for 1, ("k", c) for another constant c >= 0, the symbol of a name
    holding x.shape[k]; None if unknown."""
    c = _int(e)
    if c is not None:
        return ONE if c == 1 else (("k", c) if c >= 0 else None)
    if isinstance(e, gast.Name) and type(dims.get(e.id)) is DimValue:
        return dims[e.id][0]
    return None


def broadcast(a, b, fresh):
    """(the broadcast shape of shapes a and b, the pairs of dimensions it
    proves equal); `fresh(k)` names an unknown dimension at axis k."""
    n = max(len(a), len(b))
    a = (ONE,) * (n - len(a)) + tuple(a)
    b = (ONE,) * (n - len(b)) + tuple(b)
    out, merges = [], []
    for k, (x, y) in enumerate(zip(a, b)):
        if x == y or y == ONE:
            out.append(x)
        elif x == ONE:
            out.append(y)
        elif _not_one(x) and _not_one(y):
            out.append(x)
            merges.append((x, y))
        else:
            out.append(fresh(k))
    return tuple(out), merges


def _same(a, b, merges):
    if len(a) != len(b):
        return False
    classes = {}

    def find(d):
        while d in classes:
            d = classes[d]
        return d
    for x, y in merges:
        rx, ry = find(x), find(y)
        if rx != ry:
            classes[rx] = ry
    return all(x == y or find(x) == find(y) for x, y in zip(a, b))


def _int(e):
    """The value of an int constant expression (`3`, `-1`), else None."""
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub):
        v = _int(e.operand)
        return -v if v is not None else None
    if isinstance(e, gast.Constant) and type(e.value) is int:
        return e.value
    return None


def _slice_bounds(e):
    """(start, stop, step) of a `slice(a, b, c)` call with constant int or
    None bounds (slice_to_expr's spelling of `a:b:c`), else None."""
    if not (isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and e.func.id == "slice"
            and len(e.args) == 3 and not e.keywords):
        return None
    bounds = []
    for a in e.args:
        if isinstance(a, gast.Constant) and a.value is None:
            bounds.append(None)
        elif _int(a) is not None:
            bounds.append(_int(a))
        else:
            return None
    return tuple(bounds)


def _sliced(d, start, stop, step):
    """The dimension of a length-d axis sliced [start:stop:step], as a
    symbol: d itself for `:`, ("minus", base, k) for max(base - k, 0) (a
    leading `k:` and a trailing `:-j` remove k and j elements; x[1:] and
    x[:-1] have one length), or None when it cannot be spelled so."""
    if step not in (None, 1) or d == ONE or type(d) is tuple and d[0] == "n":
        return None         # (a join's length differs between the name's values: x[1:] of them may be 1 or not)
    head = 0 if start is None else start
    tail = 0 if stop is None else -stop
    if head < 0 or tail < 0 or (stop is not None and stop >= 0):
        return None
    if head + tail == 0:
        return d
    if type(d) is tuple and d[0] == "minus":
        return ("minus", d[1], d[2] + head + tail)
    return ("minus", d, head + tail)


def _constant(e):
    return isinstance(e, gast.Constant) and (e.value is None or isinstance(e.value, (bool, int, tuple)))


def _axes(e, ndim):
    """The reduced axes of an `axis` binding (a sorted tuple), or None."""
    if not isinstance(e, gast.Constant):
        return None
    axis = e.value
    if axis is None:
        return tuple(range(ndim))
    axis = axis if isinstance(axis, tuple) else (axis,)
    if not all(isinstance(a, int) and not isinstance(a, bool) and -ndim <= a < ndim for a in axis):
        return None
    return tuple(sorted(a % ndim for a in axis))


class _Pass:
    def __init__(self, shapes, scalars, ints=frozenset(), looped=frozenset()):
        self.shapes = shapes        # name -> shape (tuple), TOP, or absent (not yet known)
        self.scalars = scalars
        self.ints = ints            # names known to hold ints (a `for i in range(...)` loop's index)
        self.looped = looped        # ids of the statements inside loops

    def of(self, e):
        if isinstance(e, gast.Constant):
            v = e.value
            return () if isinstance(v, (int, float)) and not isinstance(v, bool) else TOP
        if isinstance(e, gast.Name):
            if e.id in self.scalars:
                return ()
            shape = self.shapes.get(e.id)
            if type(shape) is DimValue:
                return ()           # (an int)
            return TOP if type(shape) is ShapeValue else shape
        return TOP

    def result(self, s, index):
        """_result, but TOP for a statement inside a loop whose result has an
        unknown dimension ("u", index, k): that symbol stands for one length
        only where the statement runs once (in a loop, its values of two
        iterations may differ, one of them 1, and broadcast)."""
        r = self._result(s, index)
        if id(s) in self.looped and r not in (None, TOP) and type(r[0]) in (tuple, ShapeValue, DimValue) \
                and any(type(d) is tuple and d[:2] == ("u", index) for d in r[0]):
            return TOP
        return r

    def _result(self, s, index):
        """(the shape the statement `s` assigns, its merges, its operand
        names with that shape), TOP for an unknown shape, or None while an
        operand's shape is not known yet."""
        op = Anno.OP.of(s)

        def fresh(k):
            return ("u", index, k)
        if op.kind == "copy":
            a = op.args[0]
            if isinstance(a, gast.Name) and type(self.shapes.get(a.id)) in (DimValue, ShapeValue):
                return self.shapes[a.id], [], []        # (T = n of an n = x.shape[0])
            shape = self.of(a)
            return (shape, [], [op.args[0].id] if isinstance(op.args[0], gast.Name) else []) \
                if shape not in (None, TOP) else shape
        if op.kind == "nondiff" and isinstance(s.value, gast.Call) and \
                Anno.CALLEE.of(s.value.func, None) is runtime.ShapeOf and len(s.value.args) == 1:
            # ShapeOf(x) in generated code: stands for x where only its shape is read
            shape = self.of(s.value.args[0])
            return shape if shape in (None, TOP) else (shape, [], [])
        if op.kind == "nondiff" and isinstance(s.value, gast.Attribute) and s.value.attr == "shape" \
                and isinstance(s.value.value, gast.Name):
            shape = self.of(s.value.value)          # t = x.shape
            if shape is None or shape == TOP or type(shape) is Opaque:
                return shape if shape is None else TOP
            return ShapeValue(shape), [], []
        if op.kind == "nondiff" and isinstance(s.value, gast.Call) and \
                Anno.CALLEE.of(s.value.func, None) in _FILLED and s.value.args:
            return self.filled(s.value.args[0])     # np.zeros((n, m)), ...
        if op.kind != "rule":
            return TOP
        prim, b = op.rule.primitive, op.bindings
        if op.python_float:
            return (), [], []
        if any(prim is h for h in _SHAPED_LIKE_X):
            shape, g = self.of(b.get("x")), b.get("g")
            if shape in (None, TOP):
                return shape
            return shape, [], [g.id] if isinstance(g, gast.Name) and self.of(g) == shape else []
        if prim is containers.setitem:
            shape = self.of(b.get("x"))                # x with x[index] = v: x's shape (NumPy casts v)
            return shape if shape in (None, TOP) else (shape, [], [])
        if prim is operator.getitem:
            x, subscript = b.get("x"), b.get("index")
            if isinstance(x, gast.Name) and type(self.shapes.get(x.id)) is ShapeValue:
                k = _int(subscript)             # t = x.shape[k]
                axes = self.shapes[x.id]
                return (DimValue((axes[k],)), [], []) if k is not None and -len(axes) <= k < len(axes) else TOP
            return self.index(self.of(x), subscript, fresh)
        if any(not (b.get(p) is None or isinstance(b.get(p), gast.Constant) and b.get(p).value is None)
               for p in ("out", "where")):
            return TOP
        if isinstance(prim, np.ufunc):
            if prim.nout != 1:
                return TOP
            operands = [b.get(p) for p in op.rule.params if p not in _IGNORED and p != "where"][:prim.nin]
            shapes = [self.of(e) for e in operands]
            if TOP in shapes:
                return TOP
            if None in shapes:
                return None
            opaque = {sh for sh in shapes if type(sh) is Opaque}
            if opaque:
                # one opaque shape among 0-d partners (x * 2.0, tanh(x), x * y of x and y of that shape)
                if len(opaque) != 1 or any(sh != () and type(sh) is not Opaque for sh in shapes) \
                        or prim.signature is not None:
                    return TOP
                shape = opaque.pop()
                return shape, [], [e.id for e, sh in zip(operands, shapes) if sh == shape]
            if prim is np.matmul:
                return self.matmul(operands, shapes, fresh)
            if prim.signature is not None:
                return TOP
            shape, merges = shapes[0], []
            for other in shapes[1:]:
                shape, more = broadcast(shape, other, fresh)
                merges += more
            same = [e.id for e, sh in zip(operands, shapes) if isinstance(e, gast.Name) and _same(sh, shape, merges)]
            return shape, merges, same
        if prim in _REDUCTIONS:
            x = self.of(b.get("x"))
            if x in (None, TOP):
                return x
            if type(x) is Opaque:
                full = _axes(b.get("axis", gast.Constant(value=None)), 0) == () and \
                    (b.get("keepdims") is None or isinstance(b.get("keepdims"), gast.Constant)
                     and b.get("keepdims").value is False)
                return ((), [], []) if full else TOP
            axes = _axes(b.get("axis", gast.Constant(value=None)), len(x))
            keepdims = b.get("keepdims")
            if axes is None or not (keepdims is None or _constant(keepdims)):
                return TOP
            keep = keepdims is not None and bool(keepdims.value)
            if keep:
                return tuple(ONE if k in axes else d for k, d in enumerate(x)), [], []
            return tuple(d for k, d in enumerate(x) if k not in axes), [], []
        if prim is np.transpose:
            x = self.of(b.get("x"))
            axes = b.get("axes")
            if type(x) is Opaque:
                return TOP
            if x in (None, TOP) or not (axes is None or isinstance(axes, gast.Constant) and axes.value is None):
                return x if x is None else TOP
            return tuple(reversed(x)), [], []
        return TOP

    def filled(self, e):
        """The shape of np.zeros(e) (and ones, empty, full): e a length or a
        tuple of lengths (_length)."""
        items = e.elts if isinstance(e, gast.Tuple) else [e]
        if any(isinstance(d, gast.Name) and d.id not in self.shapes for d in items):
            return None             # (not known yet)
        dims = [_length(d, self.shapes) for d in items]
        if None in dims:
            return TOP
        return tuple(dims), [], []

    def index(self, x, index, fresh):
        """The shape of x[index] for basic indexing by constant ints and
        slices with constant bounds (x.shape known), else TOP."""
        if x is None or x == TOP or type(x) is Opaque:
            return x if x is None else TOP
        items = list(index.elts) if isinstance(index, gast.Tuple) else [index]
        if len(items) > len(x):
            return TOP
        out = []
        for k, (d, e) in enumerate(zip(x, items)):
            if _int(e) is not None or isinstance(e, gast.Name) and e.id in self.ints:
                continue            # (an int drops its axis)
            bounds = _slice_bounds(e)
            if bounds is None:
                return TOP
            out.append(_sliced(d, *bounds) or fresh(k))
        return tuple(out) + tuple(x[len(items):]), [], []

    def one_array_operand(self, s):
        """The operand name of an elementwise ufunc statement `s` whose
        other operands are 0-d (or the same name: x * x), whatever its
        shape: the result has that operand's shape (broadcasting against
        0-d values changes no shape). A fact of the statement alone, for
        operands of unknown shapes. None otherwise."""
        op = Anno.OP.of(s)
        if op.kind != "rule" or op.python_float or len(_targets(s)) != 1:
            return None
        prim, b = op.rule.primitive, op.bindings
        if not isinstance(prim, np.ufunc) or prim.nout != 1 or prim.signature is not None:
            return None
        if any(not (b.get(p) is None or isinstance(b.get(p), gast.Constant) and b.get(p).value is None)
               for p in ("out", "where")):
            return None
        operands = [b.get(p) for p in op.rule.params if p not in _IGNORED and p != "where"][:prim.nin]
        arrays = [e for e in operands if self.of(e) != ()]
        if not arrays or not all(isinstance(e, gast.Name) for e in arrays) or len({e.id for e in arrays}) != 1:
            return None
        return arrays[0].id

    def matmul(self, operands, shapes, fresh):
        a, b = shapes
        if type(a) is Opaque or type(b) is Opaque:
            return TOP
        if len(a) == 2 and len(b) == 2:
            inner = [(a[1], b[0])] if _not_one(a[1]) and _not_one(b[0]) else []
            return (a[0], b[1]), inner, []
        return TOP


def transform(fdef, ctx):
    """Fill ctx.facts.same_shape for `fdef` (ANF, after kinds)."""
    facts = ctx.facts
    facts.same_shape = {}
    facts.shape_sources = {}
    patterns = getattr(facts, "shape_params", None) or {}
    nodes = facts.walk(fdef)            # (this pass changes no node)
    assigns = [n for n in nodes if isinstance(n, gast.Assign) and Anno.OP.exists(n)]
    if facts.stacks or any(Anno.OP.of(n).kind in ("push", "pop") for n in nodes if Anno.OP.exists(n)):
        return          # (code transformed again: cotangents flow through its stacks)
    if not patterns and not facts.scalar:
        return
    shapes = {}
    for p, pattern in patterns.items():
        shapes[p] = tuple(ONE if one else ("p", p, k) for k, one in enumerate(pattern))
    params = {a.id for a in fdef.args.args + fdef.args.kwonlyargs if isinstance(a, gast.Name)}
    for p in params - set(shapes):
        if p not in facts.scalar:
            shapes[p] = TOP
    for name in facts.dynamic:
        shapes[name] = TOP
    # a name read but not assigned here (a global array, a leaf, a loop index): unknown
    assigned = {t for s in assigns for t in _targets(s)}
    for n in nodes:
        if isinstance(n, gast.Name) and n.id not in assigned and n.id not in shapes and n.id not in facts.scalar:
            shapes[n.id] = TOP
    index = {id(s): k for k, s in enumerate(assigns)}
    ints = _range_indices(nodes, set(assigned))
    looped = {id(n) for loop in nodes if isinstance(loop, (gast.For, gast.While)) for n in ast_util.walk(loop)}
    # names assigned once, outside loops and branches: one value per call, of one (maybe unknown) shape
    counts = {}
    for s in assigns:
        for t in _targets(s):
            counts[t] = counts.get(t, 0) + 1
    singles = {t for t, c in counts.items() if c == 1 and t not in facts.stacked and t not in params
               and t not in facts.dynamic}
    results = {}
    # the names whose shapes a statement's result reads (_Pass.of of its operands): a result is
    # computed again only when one of them changed since it was last computed (`stamp`: the
    # clock when a name's shape last changed; `seen`: the clock when a result was computed)
    reads = {}
    for s in assigns:
        op = Anno.OP.of(s)
        names = reads[id(s)] = {n.id for n in ast_util.walk(s.value) if isinstance(n, gast.Name)}
        for e in list(op.args) + list(op.bindings.values()):
            if e.__class__ is gast.Name and e.annotation is None:
                names.add(e.id)         # (most operands: a walk would find the one name)
            elif e.__class__ is not gast.Constant:
                names.update(n.id for n in ast_util.walk(e) if isinstance(n, gast.Name))
    stamp, seen, clock = {}, {}, 0
    changed = True
    while changed:
        changed = False
        current = _Pass(shapes, facts.scalar, ints, looped)     # (reads `shapes` as this pass updates it)
        for s in assigns:
            targets = _targets(s)
            last = seen.get(id(s))
            if last is None or any(stamp.get(n, 0) > last for n in reads[id(s)]):
                seen[id(s)] = clock
                r = current.result(s, index[id(s)]) if len(targets) == 1 else TOP
                if r == TOP and len(targets) == 1 and targets[0] in singles:
                    local = current.one_array_operand(s)
                    r = (Opaque(targets[0]), [], [local] if local is not None else [])
                results[id(s)] = r
            else:
                r = results[id(s)]
            if r is None:
                continue
            shape = r if r == TOP else r[0]
            for t in targets:       # (the join of its assignments' shapes; a parameter's joins its pattern's)
                old = shapes.get(t)
                new = shape if old is None else _join(old, shape, t)
                if new != old or type(new) is not type(old):
                    shapes[t] = new
                    changed = True
                    clock += 1
                    stamp[t] = clock
        if not changed:
            # a statement whose operands never got a shape (a cycle of names only assigned from each
            # other): its targets are unknown, and so is what reads them
            for s in assigns:
                if results.get(id(s)) is None:
                    for t in _targets(s):
                        if shapes.get(t) != TOP:
                            shapes[t] = TOP
                            changed = True
                            clock += 1
                            stamp[t] = clock
    trusted = _trusted(assigns, nodes, facts)
    final = _Pass(shapes, facts.scalar, ints, looped)
    for s in assigns:
        # (per statement: the operands' shapes hold for every value their names take, so the result's
        # shape and the operands proven to have it hold for this statement wherever it runs)
        r = results.get(id(s))
        same = set(r[2]) if r not in (None, TOP) else set()
        local = final.one_array_operand(s)
        if local is not None:
            same.add(local)
        if same and _targets(s)[0] in trusted:
            facts.same_shape[id(s)] = frozenset(same)
    facts.shape_sources = _sources(fdef, results, counts, params, singles)


def _sources(fdef, results, counts, params, singles):
    """{name: other names of its shape (parameters first), or () for a 0-d value}, for the
    names assigned once, at the top level of `fdef`: where the reverse
    sweep reads only their shape (codegen.assemble), it can read the
    source's, and the forward sweep need not keep (or, in the joint code,
    even compute) them. A source is a parameter never assigned, or
    another such name; its shape is the name's by the statement's proof
    (an operand of its result's shape)."""
    stable = {p for p in params if p not in counts} | singles
    out = {}
    for s in fdef.body:
        if not (isinstance(s, gast.Assign) and Anno.OP.exists(s)) or len(_targets(s)) != 1:
            continue
        t = _targets(s)[0]
        r = results.get(id(s))
        if t not in singles or r in (None, TOP):
            continue
        if type(r[0]) is tuple and r[0] == () and Anno.OP.of(s).kind == "rule":
            out[t] = ()
            continue
        candidates = [o for o in sorted(r[2]) if o in stable and o != t]
        if candidates:      # (parameters first: they are there anyway)
            out[t] = tuple(sorted(candidates, key=lambda o: o not in params))
            continue
        reduced = _reduced_source(Anno.OP.of(s), stable, out)
        if reduced is not None and t not in reduced.names:
            out[t] = reduced._replace(names=tuple(sorted(reduced.names, key=lambda o: o not in params)))
    return out


class Reduced(typing.NamedTuple):
    """A shape source of a reduction's result: the result of reducing any of
    `names` (each of the reduced operand's shape) over `axis` (None or an
    int), `keepdims` as given (helpers.reduced_shape)."""
    names: tuple
    axis: object
    keepdims: bool


def _reduced_source(op, stable, sources):
    """A Reduced for `np.sum(x, axis=k)` (a reduction of _REDUCTIONS with a
    constant int axis, a constant keepdims and no `out=`) whose operand x
    is stable or has same-shape sources; else None."""
    if op.kind != "rule" or op.rule.primitive not in _REDUCTIONS:
        return None
    b = op.bindings
    x, axis, keepdims = b.get("x"), b.get("axis"), b.get("keepdims")
    out = b.get("out")
    if not isinstance(x, gast.Name) or not (out is None or isinstance(out, gast.Constant) and out.value is None):
        return None
    if not (isinstance(axis, gast.Constant) and type(axis.value) is int):
        return None
    if not (keepdims is None or isinstance(keepdims, gast.Constant) and type(keepdims.value) is bool):
        return None
    names = [x.id] if x.id in stable else []
    found = sources.get(x.id)
    if type(found) is tuple:
        names += [n for n in found if n not in names]
    if not names:
        return None
    return Reduced(tuple(names), axis.value, bool(keepdims is not None and keepdims.value))


def _range_indices(nodes, assigned):
    """The names only ever assigned as the target of `for name in range(...)`
    (`nodes`: a walk of the function)."""
    targets = set()
    for n in nodes:
        if isinstance(n, gast.For) and isinstance(n.target, gast.Name):
            it = n.iter
            is_range = isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id == "range" \
                and Anno.CALLEE.of(it.func, range) is range
            (targets.add if is_range else assigned.add)(n.target.id)
    return targets - assigned


def _trusted(assigns, nodes, facts):
    """The names whose cotangents are known to have their shapes: not
    containers, and read only by rules, copies, nondifferentiable uses
    and the return (`nodes`: a walk of the function)."""
    untrusted = set(facts.dynamic)
    for n in nodes:
        if not Anno.OP.exists(n):
            continue
        op = Anno.OP.of(n)
        if op.kind in ("rule", "copy", "nondiff"):
            continue
        untrusted |= {x.id for x in ast_util.walk(n) if isinstance(x, gast.Name)
                      and isinstance(x.ctx, gast.Load)}
    names = {t for s in assigns for t in _targets(s)}
    return names - untrusted
