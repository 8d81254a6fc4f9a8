"""Update in place: element assignment without the copy.

Requires: codegen (an assembled function: the joint sweeps, or one of the
split ones). The compiler's element assignment is functional: `x[i] = v`
is `x = setitem(x, i, v)`, a copy of x, and its adjoint zeroes the
cotangent's entries by `zero_at(g, i)`, a copy of g. Copying costs the size
of the array at every write: a loop filling an array row by row costs
O(T * size). Where the old value cannot be read again, the copy is
unobservable and the write can be made in place (`setitem_in_place`,
`zero_at_in_place`, rules/containers.py): O(size of the write). This is the
update-in-place optimisation of functional array languages (Hudak & Bloss,
"The aggregate update problem in functional programming systems", POPL
1985; Futhark's uniqueness types play the same role).

The old value cannot be read again when no name that may share its buffer
is live after the statement (besides the statement's own target), and the
buffer is not one of the function's arguments (the caller's arrays, the
seeds, a tape's residuals: a persistent tape runs a backward twice).
Sharing is a conservative, flow-insensitive may-share relation over names
(union-find): a copy `a = b`, a view or element `a = b[i]`, a container
holding b, a stack b is pushed onto, and any call not known to return a new
array relate the names involved. Known to return new arrays: arithmetic on
arrays (BinOp, UnaryOp, Compare), NumPy ufuncs called without `out=`, the
array constructors and joins, reductions, and the adjoint helpers listed
in `_FRESH`; helpers that may return an argument itself (unbroadcast,
densify) relate the result to that argument only (`_RETURNS_ARG`).

The same proof lets a reverse sweep add a cotangent scattered by `unindex`
into the accumulated one (`a + unindex(g, x, i)`, the adjoint of reading
x[i] once more) in place: `unindex_add` (in loops, where a read per step
cost two arrays of x's size per step) and, batched, `unindex_add_b` (any
such sum), which also check at run time that `a` is a writable array of
its own. And it finds,
for sg.jit's linker, the accumulations in loops, `a = a + e` (a reverse
sweep's `bW = bW + ...` for a weight read at every step), whose old `a`
nothing reads again and whose `e` reads no name that may share a's buffer
(`loop_accumulations_in_place`): sg.jit's code adds into `a` there
(containers.add_into's Numba twin: no allocation per step). CPython keeps
`+` (checking at run time that `a` is an array of e's shape costs more
than the allocation), and so do the cotangents of names known to be 0-d.

Temporary elision (`elide_temporaries`) is the same idea for the large new
arrays of matrix products: `m = x @ W; y = m + b`, where that statement is
the only one reading m's value, writes the sum into m's buffer
(`binop_into`, checked at run time: NumPy's own elision of `x @ W + b`).
"""
import copy

import gast
import numpy as np

from .. import runtime
from ..rules.helpers import broadcast as helpers
from ..rules.helpers import elementwise
from ..rules.python import containers
from ..rules.helpers import batched as rules_batched
from ..syntax import ast_util
from . import liveness

_IN_PLACE = {containers.setitem: containers.setitem_in_place, containers.zero_at: containers.zero_at_in_place,
             rules_batched.zero_at_b: rules_batched.zero_at_in_place_b}
# acc + U(g, x, index) -> the helper adding g into acc at index (unindex_add is that sum again when
# generated code is transformed again: resolve.py; batched sweeps are not)
_ACCUMULATE = {rules_batched.unindex_b: rules_batched.unindex_add_b, helpers.unindex: helpers.unindex_add}
_REWRITTEN = {id(fn) for fn in list(_IN_PLACE) + list(_ACCUMULATE)}

# functions whose result never shares memory with their arguments (given no
# `out=`; not np.einsum: 'ii->i' and 'ij->ji' return writeable views)
_FRESH = {np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like, np.full_like,
          np.array, np.copy, np.stack, np.concatenate, np.vstack, np.hstack, np.dot, np.matmul, np.outer,
          np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.var, np.std,
          np.tensordot, np.where, np.linspace, np.arange, np.eye, np.identity,
          helpers.matmul_adjoint_x, helpers.matmul_adjoint_y, helpers.reduction_size, helpers.unindex,
          rules_batched.unindex_b, rules_batched.value_cotangent_b,
          runtime.ShapeOf, runtime.zeros_tree, runtime.sparse_zeros, len, range}

# functions whose result may be (a view of) the arguments at these positions only
_RETURNS_ARG = {helpers.unbroadcast: (0,), helpers.unreduce: (0,), runtime.densify: (0,),
                runtime.densify_tree: (0,), runtime.add_cotangents: (0, 1), runtime.as_input: (0,),
                runtime.as_input_tree: (0,),
                containers.value_cotangent: (0,), containers.setitem: (0,), containers.zero_at: (0,),
                containers.setitem_in_place: (0,), containers.zero_at_in_place: (0,),
                containers.cast_back: (0,), rules_batched.unbroadcast_b: (0,), rules_batched.unreduce_b: (0,),
                rules_batched.unindex_add_b: (0,), helpers.unindex_add: (0,),
                rules_batched.zero_at_b: (0,),
                rules_batched.zero_at_in_place_b: (0,), rules_batched.add_cotangents_b: (0, 1)}


class _Sharing:
    """Union-find over names: may two names hold the same buffer?"""

    def __init__(self):
        self.parent = {}

    def find(self, a):
        parent = self.parent
        root = a
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(a, a) != root:
            parent[a], a = root, parent[a]
        return root

    def union(self, names):
        names = list(names)
        if len(names) < 2:
            return
        root = self.find(names[0])
        for n in names[1:]:
            other = self.find(n)
            if other != root:
                self.parent[other] = root


def _callee(func, lookup):
    """The object a call's func (a Name or module attribute chain) denotes:
    NumPy's own function where a recording tape has put its wrapper in
    numpy's namespace (`__srcgrad_recorded__`: np.zeros, np.array), as
    the compiler resolves it (a function compiled inside a tape's body
    read `np.zeros` as the wrapper, which is not known to return a new
    array: `H[t] = h` copied H at every step)."""
    if isinstance(func, gast.Name):
        obj = lookup(func.id)
    elif isinstance(func, gast.Attribute):
        base = _callee(func.value, lookup)
        obj = getattr(base, func.attr, None) if base is not None and type(base).__name__ == "module" else None
    else:
        return None
    return getattr(obj, "__srcgrad_recorded__", obj)


def _names(e):
    return {n.id for n in ast_util.walk(e) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _may_share(e, lookup, dynamic):
    """The names whose buffers the value of expression `e` may share."""
    if isinstance(e, gast.Name):
        return {e.id}
    if isinstance(e, gast.Constant):
        return set()
    if isinstance(e, gast.BinOp):
        # arithmetic gives a new array; a list's + shares its operands' elements (what they may share: not
        # the names an operand's call only reads, as the index of `acc + unindex(g, x, (rows[0], j))`)
        return (_may_share(e.left, lookup, dynamic) | _may_share(e.right, lookup, dynamic)) & dynamic
    if isinstance(e, (gast.UnaryOp, gast.Compare)):
        return _names(e) & dynamic
    if isinstance(e, gast.Call):
        if isinstance(e.func, gast.Attribute) and e.func.attr == "copy" and not e.args and not e.keywords \
                and isinstance(e.func.value, gast.Name) and e.func.value.id not in dynamic:
            return set()            # x.copy() of an array
        obj = _callee(e.func, lookup)
        if obj is not None:
            try:
                fresh = (obj in _FRESH or isinstance(obj, np.ufunc)) and not any(k.arg == "out" for k in e.keywords)
            except TypeError:       # unhashable callee
                fresh = False
            if fresh and not (obj is np.array and any(k.arg == "copy" for k in e.keywords)):
                return set()
            if obj is containers.value_cotangent and e.args and isinstance(e.args[0], gast.Name) \
                    and e.args[0].id not in dynamic:
                return set()        # an array's part is copied
            positions = _RETURNS_ARG.get(obj) if not isinstance(obj, np.ufunc) else None
            if positions is not None:
                out = set()
                for i in positions:
                    if i < len(e.args):
                        out |= _may_share(e.args[i], lookup, dynamic)
                return out
    return _names(e)


def _shape_pushed(fdef, lookup):
    """The names every push of which is `push(S, ShapeOf(x))`: popping one
    back (`x = pop(S)`; the generated code pops a value into the name it
    pushed) gives a ShapeOf, which shares no buffer."""
    shape, full = set(), set()
    for n in ast_util.walk(fdef):
        if (isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and lookup(n.func.id) is runtime.push
                and len(n.args) == 2):
            arg = n.args[1]
            if (isinstance(arg, gast.Call) and isinstance(arg.func, gast.Name)
                    and lookup(arg.func.id) is runtime.ShapeOf and len(arg.args) == 1
                    and isinstance(arg.args[0], gast.Name)):
                shape.add(arg.args[0].id)
            else:
                full |= _names(arg)
    return shape - full


def _relate(stmts, sharing, lookup, dynamic, shape_pushed=frozenset()):
    for s in stmts:
        if isinstance(s, gast.Assign):
            targets = [n.id for n in ast_util.walk(s.targets[0]) if isinstance(n, gast.Name)]
            value = s.value
            if (len(targets) == 1 and targets[0] in shape_pushed and isinstance(value, gast.Call)
                    and isinstance(value.func, gast.Name) and lookup(value.func.id) is runtime.pop):
                continue        # x = pop(S) of an x pushed as ShapeOf(x) only
            sharing.union(targets + sorted(_may_share(s.value, lookup, dynamic)))
        elif isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
            # push(stack, x), xs.append(x): the receiver holds x
            call = s.value
            receiver = _names(call.func.value) if isinstance(call.func, gast.Attribute) else set()
            sharing.union(sorted(receiver | set().union(*[_may_share(a, lookup, dynamic) for a in call.args])))
        elif isinstance(s, (gast.If, gast.For, gast.While)):
            if isinstance(s, gast.For):
                sharing.union([n.id for n in ast_util.walk(s.target) if isinstance(n, gast.Name)]
                              + sorted(_names(s.iter)))
            _relate(s.body, sharing, lookup, dynamic, shape_pushed)
            _relate(getattr(s, "orelse", []), sharing, lookup, dynamic, shape_pushed)


class _Proof:
    """Which buffer a statement of the generated FunctionDef `fdef` may
    write into: the may-share relation over its names (_relate), the
    caller's buffers (its arguments, and the names it reads without
    assigning them: globals, closure cells, injected objects) and the
    liveness sets (ShapeOf's reads do not keep a buffer alive)."""

    def __init__(self, fdef, lookup, dynamic, callees, sets=None):
        self.dynamic = dynamic
        self.sharing = _Sharing()
        _relate(fdef.body, self.sharing, lookup, dynamic, _shape_pushed(fdef, lookup))
        loaded, stored = ast_util.names_loaded_and_stored(fdef)
        outside = {a.id for a in fdef.args.args} | (loaded - stored)
        self.param_roots = {self.sharing.find(p) for p in outside}
        sets = sets if sets is not None else liveness.Sets()
        shape_of = {alias for alias in callees if lookup(alias) is runtime.ShapeOf}
        self.sets = _MetadataReads(sets, shape_of) if shape_of else sets

    def visit(self, stmts, live_out, on_statement):
        """Call `on_statement(stmts, k, live)` for each statement stmts[k]
        outside branches and loops, in blocks at any depth, `live` the names
        live after it (branches and loop bodies are visited with what is
        live after them, a loop's body with what its next trip reads)."""
        sets = self.sets
        after = liveness.live_after(stmts, live_out, sets)
        for k, s in enumerate(stmts):
            if isinstance(s, gast.If):
                self.visit(s.body, after[k], on_statement)
                self.visit(s.orelse, after[k], on_statement)
            elif isinstance(s, (gast.For, gast.While)):
                self.visit(s.body, liveness.live_in_stmt(s, after[k], sets), on_statement)
            else:
                on_statement(stmts, k, after[k])

    def dead(self, old, target, live):
        """May `old`'s buffer be written into by the statement assigning
        `target`, `live` the names live after it?"""
        find = self.sharing.find
        root = find(old)
        if root in self.param_roots or old in self.dynamic:
            return False
        return not any(n != target and find(n) == root for n in live)


def update_in_place(fdef, lookup, inject, dynamic=(), sets=None, denoted=None):
    """Rewrite, in the generated FunctionDef `fdef`, each functional update
    `t = setitem(x, i, v)` / `t = zero_at(g, i)` whose old value cannot be
    read again into its in-place helper, and each accumulation `t = a +
    unindex_b(g, x, i)` whose `a` cannot be read again into
    `unindex_add_b(a, g, x, i)` (g added into a at i). `lookup(name)` gives the object a
    name of the generated code denotes (its injected helpers, the user's
    globals); `inject(name, obj)` gives a name for a new helper; `dynamic`:
    names that may hold lists, tuples or dicts; `sets`: a liveness.Sets
    to share with other passes; `denoted`: every object `lookup` may give,
    or None (then the calls are looked up: with neither a functional
    update nor a scatter among them, there is nothing to find). Returns the
    number of updates made in place."""
    if denoted is not None and not any(id(obj) in _REWRITTEN for obj in denoted):
        return 0
    callees = _callee_names(fdef, lookup)
    aliases = {alias for alias in callees if lookup(alias) in _IN_PLACE}
    accumulate = {alias for alias in callees if lookup(alias) in _ACCUMULATE}
    if not aliases and not accumulate:
        return 0
    # unindex's accumulations only in loops: each saves two arrays of x's size per step there (O(n) per
    # read), one allocation at the top level, which does not pay for the proof's time in the transform
    looped = _in_loops(fdef) if accumulate else set()

    def wanted(s):
        found = _accumulation(s.value, accumulate)
        return found is not None and (lookup(found[1].func.id) is not helpers.unindex or id(s) in looped)
    if not aliases and not any(isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name) and wanted(n)
                               for n in ast_util.walk(fdef)):
        return 0        # (no accumulation to add in place: the proof would find nothing)
    dynamic = set(dynamic)
    proof = _Proof(fdef, lookup, dynamic, callees, sets)
    dead = proof.dead
    count = 0

    def update(stmts, k, live):
        nonlocal count
        s = stmts[k]
        if (isinstance(s, gast.Assign) and isinstance(s.value, gast.Call)
                and isinstance(s.value.func, gast.Name) and s.value.func.id in aliases
                and s.value.args and isinstance(s.value.args[0], gast.Name)
                and isinstance(s.targets[0], gast.Name)):
            if not dead(s.value.args[0].id, s.targets[0].id, live):
                return
            fn = _IN_PLACE[lookup(s.value.func.id)]
            new = ast_util.clone(s)         # (the split and joint sweeps share statements)
            new.value.func = ast_util.name(inject(fn.__name__, fn))
            stmts[k] = new
            count += 1
        elif isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and accumulate:
            if not wanted(s):
                return
            acc, call = _accumulation(s.value, accumulate)
            if not dead(acc.id, s.targets[0].id, live):
                return
            fn = _ACCUMULATE[lookup(call.func.id)]
            new = ast_util.clone(s)
            new.value = ast_util.call(ast_util.name(inject(fn.__name__, fn)),
                                      [ast_util.clone(acc)] + [ast_util.clone(a) for a in call.args])
            stmts[k] = new
            count += 1

    proof.visit(fdef.body, set(), update)
    return count


# the producers of elision's candidates: matrix products (their results are the large new arrays of a
# layer; an elementwise op on a smaller array gains less than binop_into's check costs)
_PRODUCTS = {np.matmul, np.dot, np.tensordot, np.outer, helpers.matmul_adjoint_x, helpers.matmul_adjoint_y}
_ELIDED = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/"}
_ADJOINTS_OF_PRODUCTS = {id(f) for f in (helpers.matmul_adjoint_x, helpers.matmul_adjoint_y, helpers.dot_adjoint,
                                          rules_batched.matmul_adjoint_x_b, rules_batched.matmul_adjoint_y_b)}


def elide_temporaries(fdef, lookup, inject, injected, dynamic=(), scalars=()):
    """Rewrite, in the generated FunctionDef `fdef`, each `t = m op e` or
    `t = e op m` (op +, -, * or /) whose operand `m` holds a matrix
    product's result (`m = x @ W`, `m = matmul_adjoint_x(...)`, assigned
    last in the same block) into `t = binop_into(op, m, e, 0)` (or `e, m,
    1`): the result written into m's buffer where its shape and dtype allow
    (rules/helpers/elementwise.py). This is NumPy's temporary elision,
    which `x @ W + b` gets as one expression and the generated code's
    three-address form lost.

    The proof is the one of a temporary that dies where it is read: that
    statement is the only one reading the product's value (reading its
    shape, `ShapeOf(m)`, does not count), so no other name can hold m's
    buffer and nothing reads it after (a residual, a value pushed or
    returned is a read). The value is visible from its assignment to the
    next one in the block (the generated code's `m = ShapeOf(m)`), or, with
    none, everywhere: then no other statement of the function may read m.
    Stricter than update_in_place's liveness, and a walk of the tree
    instead of its fixed point: this runs on every function with a
    product. `lookup`, `inject`, `dynamic` as for
    update_in_place; `scalars`: names known to hold 0-d values (left
    alone). Returns the number of statements rewritten; the tree
    transformed again reads binop_into as the operator (resolve.py)."""
    if not any(id(obj) in _ADJOINTS_OF_PRODUCTS for obj in injected):
        return 0        # (no product's adjoint: no active product, the case worth the walk below)
    has_product = False
    shape_of = set()        # ids of the Names read by ShapeOf only
    reads = {}              # name -> how many Loads of it (outside ShapeOf)
    callees = {}            # a call's func (a name, or a module and attribute) -> what it denotes

    def callee(func):
        key = func.id if func.__class__ is gast.Name else (
            (func.value.id, func.attr) if func.__class__ is gast.Attribute and func.value.__class__ is gast.Name
            else None)
        if key is None:
            return _callee(func, lookup)
        if key not in callees:
            callees[key] = _callee(func, lookup)
        return callees[key]
    for n in ast_util.walk(fdef):
        cls = n.__class__
        if cls is gast.Name:
            if n.ctx.__class__ is gast.Load and id(n) not in shape_of:
                reads[n.id] = reads.get(n.id, 0) + 1
        elif cls is gast.BinOp:
            has_product = has_product or n.op.__class__ is gast.MatMult
        elif cls is gast.Call:
            obj = callee(n.func)
            if obj is runtime.ShapeOf and len(n.args) == 1 and n.args[0].__class__ is gast.Name:
                shape_of.add(id(n.args[0]))     # (walk is breadth first: the Call comes before its argument)
            has_product = has_product or obj in _PRODUCTS
    if not has_product:
        return 0
    excluded = set(dynamic) | set(scalars)

    def product(value):
        if isinstance(value, gast.BinOp):
            return isinstance(value.op, gast.MatMult)
        return isinstance(value, gast.Call) and not value.keywords and callee(value.func) in _PRODUCTS

    edits = {}          # id(block) -> {position: new statement}
    helper_names = {}

    def helper(name, fn):
        if name not in helper_names:
            helper_names[name] = inject(name, fn)
        return helper_names[name]

    counted = {}        # id(statement) -> {name: its Loads there (outside ShapeOf)}

    def reads_in(s, name):
        found = counted.get(id(s))
        if found is None:
            found = counted[id(s)] = {}
            for n in ast_util.walk(s):
                if n.__class__ is gast.Name and n.ctx.__class__ is gast.Load and id(n) not in shape_of:
                    found[n.id] = found.get(n.id, 0) + 1
        return found.get(name, 0)

    def dies_here(stmts, j, k, name, here):
        # is statement k (reading the name `here` times) the only one reading the value stmts[j] assigned?
        if any(reads_in(stmts[i], name) for i in range(j + 1, k)):
            return False
        for i in range(k + 1, len(stmts)):
            s = stmts[i]
            if reads_in(s, name):
                return False
            if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name) \
                    and s.targets[0].id == name:
                return True         # (the next value: `m = ShapeOf(m)`)
        return reads.get(name) == here

    def scan(stmts):
        # (returns the names the block stores)
        last = {}       # name -> the position of its assignment by a product (the last in this block)
        stored = set()
        for k, s in enumerate(stmts):
            if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name):
                value = s.value
                elided = False
                if isinstance(value, gast.BinOp) and type(value.op) in _ELIDED:
                    operands = (value.left, value.right)
                    for side, e in enumerate(operands):
                        if (isinstance(e, gast.Name) and e.id not in excluded and last.get(e.id) is not None
                                and dies_here(stmts, last[e.id], k, e.id,
                                              sum(isinstance(o, gast.Name) and o.id == e.id for o in operands))):
                            new = ast_util.clone(s)
                            new.value = ast_util.copy_location(ast_util.call(
                                ast_util.name(helper("binop_into", elementwise.binop_into)),
                                [ast_util.const(_ELIDED[type(value.op)]), ast_util.clone(value.left),
                                 ast_util.clone(value.right), ast_util.const(side)]), value)
                            edits.setdefault(id(stmts), {})[k] = new
                            elided = True
                            break
                elif (isinstance(value, gast.Call) and len(value.args) == 1 and not value.keywords
                      and isinstance(value.args[0], gast.Name) and value.args[0].id not in excluded
                      and last.get(value.args[0].id) is not None
                      and callee(value.func) in elementwise.UNARY_INTO
                      and dies_here(stmts, last[value.args[0].id], k, value.args[0].id, 1)):
                    # `h = np.tanh(m)`: into m's buffer too (ufunc_into)
                    new = ast_util.clone(s)
                    new.value = ast_util.copy_location(ast_util.call(
                        ast_util.name(helper("ufunc_into", elementwise.ufunc_into)),
                        [ast_util.clone(value.func), ast_util.clone(value.args[0])]), value)
                    edits.setdefault(id(stmts), {})[k] = new
                    elided = True
                # (a value written into a product's buffer is such a temporary in turn: `x @ W + b`, then tanh)
                last[s.targets[0].id] = k if elided or product(value) else None
                stored.add(s.targets[0].id)
            elif not isinstance(s, (gast.Expr, gast.Pass, gast.Return)):
                if isinstance(s, (gast.For, gast.While, gast.If)):
                    inner = scan(s.body) | scan(s.orelse)
                    if isinstance(s, gast.For):
                        inner |= ast_util.names_stored(s.target)
                else:
                    inner = ast_util.names_stored(s)
                for name in inner:
                    last[name] = None
                stored |= inner
        return stored
    scan(fdef.body)
    if edits:
        fdef.body = _copy_on_write(fdef.body, edits)
    return sum(len(e) for e in edits.values())


def _copy_on_write(stmts, edits):
    """`stmts` with the statements `edits` ({id(block): {position: new}})
    replaced, in new lists and new (shallow-copied) compound statements
    wherever a block below changes: the split and joint sweeps share
    statements and loop blocks, and the joint's tree, compiled before the
    split sweeps' passes run, must stay the code it was compiled from (it
    is transformed again for higher derivatives)."""
    mine = edits.get(id(stmts), {})
    out = None
    for k, s in enumerate(stmts):
        new = mine.get(k)
        if new is None and isinstance(s, (gast.If, gast.For, gast.While)):
            body, orelse = _copy_on_write(s.body, edits), _copy_on_write(s.orelse, edits)
            if body is not s.body or orelse is not s.orelse:
                new = copy.copy(s)
                new.body, new.orelse = body, orelse
        if new is not None:
            if out is None:
                out = list(stmts)
            out[k] = new
    return stmts if out is None else out


def loop_accumulations_in_place(fdef, lookup, dynamic=(), scalar_cotangents=()):
    """The accumulations `a = a + e` in loops of the generated FunctionDef
    `fdef` (as update_in_place left it), and `a = a + unindex(g, x, i)`
    anywhere, that may add into `a`: nothing reads the old `a` again, `a`
    is not the caller's, and `e` reads no name that may share a's buffer. sg.jit's linker runs this on its copy of the
    tree and writes them `add_into(a, e)` (no allocation per step under
    Numba; in CPython a run-time check would cost more than it saves, and
    the compiler does not pay for the proof). `lookup`, `dynamic` as for
    update_in_place; `scalar_cotangents`: cotangents of 0-d values (left
    alone). Returns the Assign nodes, a list."""
    excluded = set(dynamic) | set(scalar_cotangents)
    loops = _loop_accumulations(fdef, excluded)
    callees = _callee_names(fdef, lookup)
    scatter = {alias for alias in callees if lookup(alias) is helpers.unindex}
    scattered = _scattered_accumulations(fdef, scatter, excluded) if scatter else {}
    if not loops and not scattered:
        return []
    proof = _Proof(fdef, lookup, set(dynamic), callees)
    found = []

    def check(stmts, k, live):
        s = stmts[k]
        if id(s) in loops or id(s) in scattered:
            acc = s.targets[0].id
            root = proof.sharing.find(acc)
            added = scattered[id(s)].args if id(s) in scattered else [s.value.right]
            if proof.dead(acc, acc, live) and not any(proof.sharing.find(n) == root
                                                      for e in added for n in _names(e)):
                found.append(s)

    proof.visit(fdef.body, set(), check)
    return found


def _scattered_accumulations(fdef, aliases, excluded):
    """{id: the unindex call} of the statements `a = a + unindex(g, x, i)`
    outside loops (update_in_place leaves them: in CPython one allocation
    does not pay for the proof; under Numba, in a callee called per step,
    it does: GradBench's ode), `a` not in `excluded`."""
    found = {}
    for s in ast_util.walk(fdef):
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name) \
                and s.targets[0].id not in excluded:
            hit = _accumulation(s.value, aliases)
            if hit is not None and hit[0].id == s.targets[0].id:
                found[id(s)] = hit[1]
    return found


def _in_loops(fdef):
    """The ids of the statements inside loops (at any depth) of `fdef`."""
    found = set()

    def visit(stmts, in_loop):
        for s in stmts:
            if in_loop:
                found.add(id(s))
            if isinstance(s, (gast.For, gast.While)):
                visit(s.body, True)
            elif isinstance(s, gast.If):
                visit(s.body, in_loop)
                visit(s.orelse, in_loop)
    visit(fdef.body, False)
    return found


def _loop_accumulations(fdef, excluded):
    """The ids of the statements `a = a + e` inside loops (at any depth) of
    a name `a` not in `excluded`."""
    found = set()

    def visit(stmts, in_loop):
        for s in stmts:
            if isinstance(s, (gast.For, gast.While)):
                visit(s.body, True)
            elif isinstance(s, gast.If):
                visit(s.body, in_loop)
                visit(s.orelse, in_loop)
            elif (in_loop and isinstance(s, gast.Assign) and len(s.targets) == 1
                  and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.BinOp)
                  and isinstance(s.value.op, gast.Add) and isinstance(s.value.left, gast.Name)
                  and s.value.left.id == s.targets[0].id and s.targets[0].id not in excluded):
                found.add(id(s))
    visit(fdef.body, False)
    return found


def _accumulation(e, aliases):
    """(acc, the call) for `acc + U(g, x, index)` or `U(g, x, index) + acc`,
    U one of `aliases` called with three positional arguments; else None."""
    if not (isinstance(e, gast.BinOp) and isinstance(e.op, gast.Add)):
        return None
    for acc, call in ((e.left, e.right), (e.right, e.left)):
        if (isinstance(acc, gast.Name) and isinstance(call, gast.Call) and isinstance(call.func, gast.Name)
                and call.func.id in aliases and len(call.args) == 3 and not call.keywords):
            return acc, call
    return None


class _MetadataReads(liveness.Sets):
    """The statements' uses and defs without the names read only as the
    argument of ShapeOf (`push(_stack, ShapeOf(x))`, `x = ShapeOf(x)`):
    ShapeOf reads the shape and dtype, which writing into the buffer in
    place does not change, so such a read does not keep the old value
    alive."""

    def __init__(self, base, shape_of):
        super().__init__()
        self.base, self.shape_of = base, shape_of

    def get(self, s):
        found = self.cache.get(id(s))
        if found is None or found[0] is not s:
            read, written = self.base.get(s)
            if any(isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id in self.shape_of
                   for n in ast_util.walk(s)):
                read = _names_outside_shape_of(s, self.shape_of)
            found = self.cache[id(s)] = (s, read, written)
        return found[1], found[2]


def _names_outside_shape_of(s, shape_of):
    """The names `s` reads other than as the argument of ShapeOf."""
    out = set()

    def visit(n):
        if (isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id in shape_of
                and len(n.args) == 1 and isinstance(n.args[0], gast.Name)):
            return
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            out.add(n.id)
        for child in gast.iter_child_nodes(n):
            visit(child)
    visit(s)
    return out


def _callee_names(fdef, lookup):
    return {n.func.id for n in ast_util.walk(fdef) if isinstance(n, gast.Call) and isinstance(n.func, gast.Name)}


def own_list_updates(fdef, lookup, inject):
    """Rewrite, in the generated FunctionDef `fdef`, each `xs =
    list_append(xs, v)` into `xs = list_append_own(xs, v)` and each `xs =
    xs[:-1]` into `xs = drop_last_own(xs)` (rules/python/containers.py):
    statements that rebind the name they read, so that where nothing else
    holds the list (checked at run time by its reference count) the append
    or the pop is made in place, and a loop building a list of T values and
    its reverse loop cost O(T) instead of O(T^2). Returns the number of
    statements rewritten."""
    count = 0

    def rewrite(stmts):
        nonlocal count
        for k, node in enumerate(stmts):
            for field in ("body", "orelse"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    rewrite(inner)
            if not (isinstance(node, gast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], gast.Name)):
                continue
            name, value = node.targets[0].id, node.value
            if (isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and len(value.args) == 2
                    and not value.keywords and isinstance(value.args[0], gast.Name) and value.args[0].id == name
                    and lookup(value.func.id) is containers.list_append):
                fn = containers.list_append_own
                call = ast_util.call(ast_util.name(inject(fn.__name__, fn)), [ast_util.clone(a) for a in value.args])
            elif (isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) and value.value.id == name
                  and _drops_last(value.slice)):
                fn = containers.drop_last_own
                call = ast_util.call(ast_util.name(inject(fn.__name__, fn)), [ast_util.name(name)])
            else:
                continue
            new = ast_util.clone(node)          # (the split and joint sweeps share statements)
            new.value = ast_util.copy_location(call, value)
            stmts[k] = new
            count += 1

    rewrite(fdef.body)
    return count


def _drops_last(index):
    """Is the index `[:-1]`?"""
    if not isinstance(index, gast.Slice) or index.lower is not None or index.step is not None:
        return False
    upper = index.upper
    if isinstance(upper, gast.UnaryOp) and isinstance(upper.op, gast.USub):
        upper = upper.operand
        return isinstance(upper, gast.Constant) and type(upper.value) is int and upper.value == 1
    return isinstance(upper, gast.Constant) and type(upper.value) is int and upper.value == -1
