"""Assemble the generated functions, print them and compile them.

Requires: reverse. Produces three functions from one forward sweep and one
reverse sweep:
  f_fwd(*inputs) -> (*outputs, residuals)           split forward (tape entry)
  f_bwd(residuals, *output_cotangents) -> tuple      split adjoint (tape backward)
  dfdx(*inputs, *output_cotangents=1.0) -> grads     fused, what sg.source shows

The generated code shares the user function's live globals and closure cells
(it is built as a closure, never by copying or mutating the namespace), and
its source is registered in `linecache`, so tracebacks through it show real
lines.
"""
import itertools
import linecache
import types
import weakref

import gast
import numpy as np

from .. import runtime
from ..runtime import syntax as runtime_syntax
from ..errors import UnsupportedSyntaxError, source_name
from ..rules.helpers import batched as rules_batched
from ..rules.helpers import broadcast as helpers
from ..rules.helpers import reductions
from ..rules.python import containers
from ..syntax import ast_util
from . import optimize, shapes
from ..syntax.anno import Anno
from ..syntax.naming import ALIAS_PREFIX

_counter = itertools.count()
_FACTORY = ALIAS_PREFIX + "factory"     # the function whose closure cells the generated code reads


class _Names:
    """The Names of each statement in walk order, and whether it defines a
    function, lambda or class or declares a name global or nonlocal (see
    free_early), found by one walk per statement: assemble reads its
    forward sweep several times and changes none of its statements."""

    def __init__(self):
        self.cache = {}

    def of(self, s):
        """(the Names in `s` in walk order, does it define a scope?)"""
        found = self.cache.get(id(s))
        if found is None or found[0] is not s:
            nodes = ast_util.walk(s)
            found = self.cache[id(s)] = (s, [n for n in nodes if n.__class__ is gast.Name],
                                         any(isinstance(n, _SCOPES) for n in nodes))
        return found[1], found[2]


def _names_in_order(body, ctx, names=None):
    """Names read (ctx=gast.Load) or written (gast.Store) in `body`, in order
    of first appearance. `names`: a _Names to read the statements from."""
    names = names or _Names()
    seen = {}
    for s in body:
        for n in names.of(s)[0]:
            if n.ctx.__class__ is ctx:
                seen.setdefault(n.id, None)
    return list(seen)


# helper -> positions of the arguments it reads only the shape of
_SHAPE_ARGS = {helpers.unbroadcast: (1,), helpers.unreduce: (1,), helpers.reduction_size: (0, 1),
               helpers.unbroadcast_product: (2,),
               containers.value_cotangent: (3,), rules_batched.unbroadcast_b: (1,), rules_batched.unreduce_b: (1,),
               helpers.reduced_shape: (0,), rules_batched.value_cotangent_b: (3,)}
# ... of which it reads neither the values nor the dtype
_SHAPE_ONLY_ARGS = {helpers.unbroadcast: (1,), helpers.unreduce: (1,), helpers.reduction_size: (0, 1),
                    helpers.unbroadcast_product: (2,),
                    rules_batched.unbroadcast_b: (1,), rules_batched.unreduce_b: (1,)}


def _read_shape_sources(walks, sources, injected, inputs, inject=None):
    """In the reverse sweep whose statements' walks are `walks`, read a
    name's shape from its source (shapes.py: a parameter or name of the
    same shape, or the literal 0.0 for a 0-d value) where
    the sweep reads only its shape: the forward sweep then need not keep
    the name, and the joint code need not compute it (_prune_dead).
    Returns the positions of the statements where a read changed (their
    walks, and the uses a liveness.Sets holds for the statements in them,
    are stale)."""
    fns = {alias: _SHAPE_ONLY_ARGS[obj] for alias, obj in injected.items()
           if callable(obj) and obj in _SHAPE_ONLY_ARGS}
    if not fns or not sources:
        return set()
    shape_reads = []        # (call, position, statement position)
    for k, nodes in enumerate(walks):
        for n in nodes:
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id in fns:
                shape_reads += [(n, i, k) for i in fns[n.func.id]
                                if i < len(n.args) and isinstance(n.args[i], gast.Name) and n.args[i].id in sources]
    at_shape = {id(call.args[i]) for call, i, _ in shape_reads}
    read = {n.id for nodes in walks for n in nodes       # (the values the sweep reads)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and id(n) not in at_shape}
    changed = set()
    for call, i, k in shape_reads:
        name = call.args[i].id
        if name in read:
            continue            # (its value is kept anyway)
        source = sources[name]
        if type(source) is shapes.Reduced:
            if inject is None:
                continue
            # (the reduction's shape, from a name of its operand's shape: helpers.reduced_shape)
            arg = ast_util.name(next((o for o in source.names if o in inputs or o in read), source.names[0]))
            call.args[i] = ast_util.call(ast_util.name(inject("reduced_shape", helpers.reduced_shape)),
                                         [arg, ast_util.const(source.axis), ast_util.const(source.keepdims)])
            changed.add(k)
            continue
        changed.add(k)
        if source == ():
            call.args[i] = ast_util.const(0.0)
            continue
        # (a parameter, else a name whose value the sweep reads anyway, else the first)
        call.args[i] = ast_util.name(next((o for o in source if o in inputs or o in read), source[0]))
    return changed


def _pure(stmt):
    """Is `stmt` an assignment of a NumPy ufunc's result (no out=), a
    reduction's or a name's, which the joint code can leave out when
    nothing reads its value? (Nothing else happens: no user code runs.
    Not a method, x.sum(): another library's array may lack it, and the
    call raises as the plain one does.)"""
    op = Anno.OP.of(stmt) if isinstance(stmt, gast.Assign) else None
    if op is None or isinstance(stmt.value, gast.Call) and Anno.METHOD.of(stmt.value.func, None) is not None:
        return False
    if op.kind == "copy":
        return True
    if op.kind != "rule" or op.python_float:
        return False
    b = op.bindings
    if any(not (b.get(p) is None or isinstance(b.get(p), gast.Constant) and b.get(p).value is None)
           for p in ("out", "where")):
        return False
    prim = op.rule.primitive
    return isinstance(prim, np.ufunc) or prim in _PURE


_PURE = {np.sum, np.mean, np.max, np.min, np.amax, np.amin, np.prod, np.var, np.std}


def _prune_dead(body, live, injected, names=None):
    """The top-level statements of the forward sweep `body` without the
    pure ones (_pure) whose targets nothing after them reads, `live` the
    names read after `body`. Not inside a `with` block (np.errstate: a
    floating-point error the plain call raises is raised here too), so
    none when the code enters one (`injected`: its helpers). `names`: a
    _Names to read the statements from."""
    if any(obj is runtime_syntax.with_enter for obj in injected.values()):
        return list(body)
    names = names or _Names()
    live = set(live)
    out = []
    for s in reversed(body):
        if isinstance(s, gast.Assign) and all(isinstance(t, gast.Name) for t in s.targets):
            targets = {t.id for t in s.targets}
            if not targets & live and _pure(s):
                continue
            live -= targets
            live |= {n.id for n in names.of(s)[0] if n.ctx.__class__ is gast.Load}
        else:
            live |= {n.id for n in names.of(s)[0]}
        out.append(s)
    return out[::-1]


def _shape_only(nodes, injected, names):
    """The names in `names` that the nodes `nodes` (a walk of the reverse
    sweep) read only as shape arguments."""
    shape_fns = {}
    for alias, obj in injected.items():
        for fn, positions in _SHAPE_ARGS.items():
            if obj is fn:
                shape_fns[alias] = positions
    shape_reads = set()
    for n in nodes:
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id in shape_fns:
            for i in shape_fns[n.func.id]:
                if i < len(n.args) and isinstance(n.args[i], gast.Name):
                    shape_reads.add(id(n.args[i]))
    all_reads, only_shape = set(), set(names)
    for n in nodes:
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in only_shape:
            all_reads.add(n.id)
            if id(n) not in shape_reads:
                only_shape.discard(n.id)
    return only_shape & all_reads


_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef, gast.Global, gast.Nonlocal)


def free_early(body, free, keep, scalar=(), names=None):
    """The forward sweep `body` with the statements of `free` (`del a, b`
    and `n = ShapeOf(n)`, what the joint code drops between the sweeps)
    moved up to just after the last top-level statement of `body` that
    mentions each name, so that a temporary the rest of the forward sweep
    does not read is released when it dies, not at the end: a lower peak
    (the glibc heap then keeps its pages: a 784-256-10 MLP's gradient took
    870 fresh pages a call when its forward temporaries died together).
    Names in `keep` (the outputs, read after the forward sweep) stay at
    the end, as do 0-d values (`scalar`: no memory to speak of, and the
    code users read stays uncluttered), and so does everything when the forward sweep defines a
    function, lambda or class (a closure reads its names when called) or
    declares a name global or nonlocal. `names`: a _Names to read the
    statements from. Returns (body, what stays at the end)."""
    names = names or _Names()
    last, computed = {}, set()
    for i, stmt in enumerate(body):
        found, scoped = names.of(stmt)
        if scoped:
            return body, free
        for n in found:
            last[n.id] = i
        if isinstance(stmt, gast.Assign) and isinstance(stmt.value, (gast.BinOp, gast.UnaryOp, gast.Call)):
            computed.update(t.id for t in stmt.targets if isinstance(t, gast.Name))
    # (only computed values, which may be large arrays: a shape, an item or an alias stays to the end,
    # where it does not clutter the code users read)
    last = {k: v for k, v in last.items() if k in computed and k not in keep and k not in scalar}
    after = {}
    late = []
    for stmt in free:
        if isinstance(stmt, gast.Delete):
            stay = [t.id for t in stmt.targets if t.id not in last]
            if stay:
                late.append(ast_util.delete(stay))
            for t in stmt.targets:
                if t.id in last:
                    after.setdefault(last[t.id], []).append(t.id)
        elif isinstance(stmt, gast.Assign) and stmt.targets[0].id in last:
            after.setdefault(last[stmt.targets[0].id], []).append(stmt)
        else:
            late.append(stmt)
    out = []
    for i, stmt in enumerate(body):
        out.append(stmt)
        dels = [x for x in after.get(i, ()) if isinstance(x, str)]
        if dels:
            out.append(ast_util.delete(dels))
        out.extend(x for x in after.get(i, ()) if not isinstance(x, str))
    return out, late


def _residual_test(sweeps):
    """`cheap(name)`: is `name` not computed from the seeds in the reverse
    sweep (a residual or a value computed from residuals only), so that in
    a batched sweep it has no batch axis?"""
    derived = set(sweeps.seeds.values())
    changed = True
    while changed:          # (a loop may carry a cotangent into a name read before it)
        changed = False
        for s in ast_util.walk(ast_util.function_def("_", [], sweeps.rev_body)):
            if isinstance(s, (gast.Assign, gast.AugAssign, gast.For)):
                value = s.iter if isinstance(s, gast.For) else s.value
                reads = {n.id for n in ast_util.walk(value) if isinstance(n, gast.Name)}
                if reads & derived:
                    targets = s.targets if isinstance(s, gast.Assign) else [s.target]
                    new = {n.id for t in targets for n in ast_util.walk(t) if isinstance(n, gast.Name)} - derived
                    if new:
                        derived |= new
                        changed = True
    return lambda name: name not in derived


def assemble(name, inputs, active_inputs, sweeps, sets=None):
    """Build the three FunctionDefs from `sweeps` (reverse.Sweeps). Returns
    (fwd, bwd, joint, residual names, connected), where connected[i] says
    whether active input i has a (possibly) nonzero cotangent. `sets`: the
    liveness.Sets the later passes over these trees share."""
    outputs = sweeps.outputs
    seeds = [sweeps.seeds[o] for o in outputs]
    stack = sweeps.stack
    stack_init = [ast_util.assign(stack, gast.List(elts=[], ctx=gast.Load()))] if stack else []
    fwd_core = stack_init + sweeps.fwd_body     # (+ preinit, below)

    def grad_of(x):
        if x in sweeps.final:
            return ast_util.name(sweeps.adjoints[x])
        if sweeps.batched:
            return sweeps.zeros(x)
        # an unconnected input (possibly a container the caller passed in): zeros of its structure
        return ast_util.call(ast_util.name(sweeps.inject("sparse_zeros", runtime.sparse_zeros)), [ast_util.name(x)])

    grads = [grad_of(x) for x in active_inputs]
    connected = tuple(x in sweeps.final for x in active_inputs)
    # assignment propagation in the reverse sweep (adjoint copies such as badd = bx)
    returned = set().union(*[{n.id for n in ast_util.walk(g) if isinstance(n, gast.Name)} for g in grads])
    sweeps.rev_body = optimize.propagate_copies(sweeps.rev_body, returned, sets)
    cheap = _residual_test(sweeps) if sweeps.batched else None
    sweeps.rev_body = optimize.fold_scalings(sweeps.rev_body, returned, cheap, sets)
    if sweeps.batched:
        sweeps.rev_body = optimize.factor_products(sweeps.rev_body, cheap, sets)
    sweeps.rev_body = optimize.merge_unreduces(
        sweeps.rev_body, returned, {alias for alias, obj in sweeps.injected.items()
                                    if obj is helpers.unreduce or obj is rules_batched.unreduce_b}, sets)
    if not sweeps.batched:
        sweeps.rev_body = optimize.unreduces_in_products(
            sweeps.rev_body, returned, {alias for alias, obj in sweeps.injected.items() if obj is helpers.unreduce},
            {alias for alias, obj in sweeps.injected.items() if obj is reductions.max_chooser},
            lambda x: {x, *sweeps.shape_sources[x]} if type(sweeps.shape_sources.get(x)) is tuple else {x}, sets,
            lambda: sweeps.inject("expand_dims", np.expand_dims))
        sweeps.rev_body = optimize.unbroadcast_products(
            sweeps.rev_body, returned, {alias for alias, obj in sweeps.injected.items() if obj is helpers.unbroadcast},
            lambda: sweeps.inject("unbroadcast_product", helpers.unbroadcast_product), sets)
    rev_walks = [ast_util.walk(s) for s in sweeps.rev_body]
    for k in _read_shape_sources(rev_walks, sweeps.shape_sources, sweeps.injected, set(inputs), sweeps.inject):
        if sets:
            for n in rev_walks[k]:
                if isinstance(n, gast.stmt):
                    sets.forget(n)
        rev_walks[k] = ast_util.walk(sweeps.rev_body[k])
    names = _Names()        # (of the forward sweep's statements, which nothing below changes)
    stored_fwd = _names_in_order(sweeps.fwd_body, gast.Store, names)
    defined = set(inputs) | set(stored_fwd) | ({stack} if stack else set()) | sweeps.free_arrays
    rev_nodes = [n for nodes in rev_walks for n in nodes] + ast_util.walk(ast_util.return_(ast_util.tuple_(grads)))
    loads = {}
    for n in rev_nodes:
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            loads.setdefault(n.id, None)
    # (in the forward sweep's order, not the reverse's: a batched sweep's optimisations reorder its reads,
    # and a tape's Jacobian reuses the plain split forward's residuals when the two forward sweeps match)
    residuals = [n for n in dict.fromkeys(list(inputs) + stored_fwd + [n for n in loads if n in defined])
                 if n in loads and n not in sweeps.rev_locals]
    # Names first assigned inside a branch or loop may have no value where
    # they are pushed or returned as residuals: start them at None.
    preinit = [ast_util.assign(n, ast_util.const(None))
               for n in sorted((sweeps.pushed | set(residuals)) - set(inputs) - sweeps.first_defined - {stack}
                               - sweeps.free_arrays)]
    fwd_core = stack_init + preinit + sweeps.fwd_body
    sweeps.fwd_core = fwd_core
    # Residuals the adjoint reads only for their shape are saved as ShapeOf.
    shape_only = _shape_only(rev_nodes, sweeps.injected, residuals) - sweeps.dynamic
    shape_of = sweeps.inject("ShapeOf", helpers.ShapeOf) if shape_only else None
    res_tuple = ast_util.tuple_([
        ast_util.call(ast_util.name(shape_of), [ast_util.name(n)]) if n in shape_only else ast_util.name(n)
        for n in residuals])
    res_param = sweeps.namer.fresh("_residuals")

    fwd = ast_util.function_def(
        name + "_fwd", inputs,
        [ast_util.comment("Forward sweep of %s: returns the outputs and the residuals" % name)]
        + _prune_dead(fwd_core, set(residuals) | set(outputs), sweeps.injected, names)
        + [ast_util.return_(ast_util.tuple_([ast_util.name(o) for o in outputs] + [res_tuple]))])
    unpack = []
    if residuals:
        unpack.append(ast_util.unpack(residuals, ast_util.name(res_param)))
    if stack in residuals:
        # the reverse sweep pops: give it its own copy, so a persistent tape can run it again
        unpack.append(ast_util.assign(stack, ast_util.call(ast_util.name("list"), [ast_util.name(stack)])))
    bwd = ast_util.function_def(
        name + "_bwd", [res_param] + seeds,
        [ast_util.comment("Reverse sweep of %s: output cotangents -> input cotangents" % name)]
        + unpack + sweeps.rev_body + [ast_util.return_(ast_util.tuple_(grads))])
    wrt = active_inputs[0] if active_inputs else "x"
    jname = "d%sd%s" % (name, wrt)
    # The joint code leaves out what neither the reverse sweep nor (for
    # sg.value_and_grad) the outputs read; between the sweeps, it drops
    # what the reverse sweep does not read (as the split forward does by
    # returning only the residuals).
    read = set(loads)
    sweeps.fwd_early, sweeps.free = _between_sweeps(
        _prune_dead(fwd_core, read, sweeps.injected, names), sweeps, inputs, residuals, shape_only, shape_of,
        set(), names)
    sweeps.fwd_early_all, sweeps.free_all = _between_sweeps(
        _prune_dead(fwd_core, read | set(outputs), sweeps.injected, names), sweeps, inputs, residuals,
        shape_only, shape_of, set(outputs), names)
    early, free = sweeps.fwd_early, sweeps.free
    jbody = ([ast_util.comment("Forward sweep")] + early + free
             + [ast_util.comment("Reverse sweep")] + sweeps.rev_body)
    jret = grads[0] if len(grads) == 1 else ast_util.tuple_(grads)
    joint = ast_util.function_def(jname, list(inputs) + seeds, jbody + [ast_util.return_(jret)],
                                  defaults=[ast_util.const(1.0) for _ in seeds])
    return fwd, bwd, joint, residuals, connected


def _between_sweeps(core, sweeps, inputs, residuals, shape_only, shape_of, outputs, names=None):
    """(the joint code's forward sweep `core` with its dead temporaries
    released early, what it frees at its end): see free_early. `names`: a
    _Names to read the statements from."""
    names = names or _Names()
    free = []
    stack = sweeps.stack
    defined_once = sweeps.first_defined - set(inputs)
    stored = _names_in_order(core, gast.Store, names)
    dead = [n for n in dict.fromkeys(([stack] if stack and stack in stored else []) + stored)
            if n in defined_once and n not in residuals]
    if dead:
        free.append(ast_util.delete(dead))
    for n in residuals:
        if n in shape_only and n in defined_once:
            free.append(ast_util.assign(n, ast_util.call(ast_util.name(shape_of), [ast_util.name(n)])))
    early, free = free_early(core, free, outputs, sweeps.scalar, names)
    if free:
        free.insert(0, ast_util.comment("Keep only what the reverse sweep reads"))
    return early, free


def gradient_def(sweeps, name, inputs, active_inputs, order, preserve_result, has_aux=False):
    """The generated gradient function of `sg.grad`: the joint sweeps seeded
    with ones, returning the gradients of the inputs in `order` (names among
    `active_inputs`), each cast to its input's shape and dtype (as_input),
    after the output's value with preserve_result. With has_aux the function
    returns (value, aux): only the value is seeded (aux's cotangent is zero)
    and the result is (gradients, aux), or ((value, aux), gradients) with
    preserve_result, as JAX's. A FunctionDef of `inputs`; its injected names
    are the sweeps' plus `as_input`."""
    as_input = sweeps.inject("as_input", runtime.as_input)
    as_input_tree = sweeps.inject("as_input_tree", runtime.as_input_tree)
    seeded = sweeps.outputs[:1] if has_aux else sweeps.outputs
    body = [ast_util.comment("Gradient of %s with respect to %s" % (name, ", ".join(order)))]
    body += [ast_util.assign(sweeps.seeds[o], ast_util.const(1.0)) for o in seeded]
    every = preserve_result or has_aux          # (the outputs' values are read: their computation stays)
    body += ast_util.clone(sweeps.fwd_early_all if every else sweeps.fwd_early)
    body += [ast_util.assign(sweeps.seeds[o], sweeps.zeros(o)) for o in sweeps.outputs if o not in seeded]
    value = aux = None
    if preserve_result:
        value = sweeps.namer.fresh("value")
        body.append(ast_util.assign(value, ast_util.name(sweeps.outputs[0])))
    if has_aux:
        aux = sweeps.namer.fresh("aux")
        body.append(ast_util.assign(aux, ast_util.name(sweeps.outputs[1])))
    body += ast_util.clone(sweeps.free_all if every else sweeps.free)
    body += [ast_util.comment("Reverse sweep")] + ast_util.clone(sweeps.rev_body)
    grads = []
    for x in order:
        g = ast_util.name(sweeps.adjoints[x]) if x in sweeps.final else sweeps.zeros(x)
        g = ast_util.call(ast_util.name(as_input_tree if x in sweeps.dynamic else as_input), [g, ast_util.name(x)])
        grads.append(g)
    result = grads[0] if len(grads) == 1 else ast_util.tuple_(grads)
    if preserve_result and has_aux:
        result = ast_util.tuple_([ast_util.tuple_([ast_util.name(value), ast_util.name(aux)]), result])
    elif preserve_result:
        result = ast_util.tuple_([ast_util.name(value), result])
    elif has_aux:
        result = ast_util.tuple_([result, ast_util.name(aux)])
    fname = "grad_%s" % name
    return ast_util.function_def(fname, list(inputs), body + [ast_util.return_(result)])


def build(fdefs, injected, func, title, defaults, user_origin=None):
    """Compile `fdefs` (gast FunctionDefs) as closures over the cells of
    `func` (the user's function, or generated code being transformed
    again) plus the `injected` {name: object}. Returns {name: function},
    each with `__srcgrad_trees__` (the FunctionDefs compiled together) and
    `__srcgrad_origin__` the (file, line) of the user's function.

    The AST is compiled directly (no source text: unparsing is a good part
    of a transformation's time), one line per statement; a listing of
    those lines goes to `linecache` when a traceback needs it (`annotate`),
    and sg.source unparses the tree when asked."""
    code = func.__code__
    cells = dict(zip(code.co_freevars, func.__closure__ or ()))
    factory_params = list(code.co_freevars) + [n for n in injected if n not in cells]
    names = [f.name for f in fdefs]
    factory = ast_util.function_def(_FACTORY, factory_params,
                                    list(fdefs) + [ast_util.return_(ast_util.tuple_(
                                        [ast_util.name(n) for n in names]))])
    tree, rows = ast_util.to_numbered_ast(ast_util.module([factory]))
    filename = "<srcgrad-generated %s #%d>" % (title, next(_counter))
    module_code = compile(tree, filename, "exec")
    fcode = next(c for c in module_code.co_consts if isinstance(c, types.CodeType) and c.co_name == _FACTORY)
    out = {}
    for c in fcode.co_consts:
        if isinstance(c, types.CodeType) and c.co_name in names:
            closure = tuple(cells[n] if n in cells else _cell(injected[n]) for n in c.co_freevars)
            fn = types.FunctionType(c, func.__globals__, c.co_name, defaults.get(c.co_name), closure)
            fn.__srcgrad_filename__ = filename
            fn.__srcgrad_trees__ = fdefs
            fn.__srcgrad_rows__ = rows
            fn.__srcgrad_origin__ = user_origin
            out[c.co_name] = fn
    for fn in out.values():
        _LISTINGS[filename] = fn
    return out


def _cell(obj):
    """A closure cell holding the injected `obj`; an object that stands for
    a function not compiled yet (artefact.Deferred: a recursive call) is
    told the cell, to put the function there once it exists."""
    cell = types.CellType(obj)
    bind = getattr(type(obj), "__srcgrad_bind_cell__", None)     # (on the type: no user __getattr__ runs)
    if bind is not None:
        bind(obj, cell)
    return cell


# generated filename -> one of its functions (whose __srcgrad_rows__ list its lines), weakly
_LISTINGS = weakref.WeakValueDictionary()


def _listing(rows):
    """The text of the generated lines (for tracebacks): one per row."""
    return ["    " * depth + _header(stmt) + "\n" for depth, stmt in rows]


def _header(stmt):
    if isinstance(stmt, gast.FunctionDef):
        return "def %s(%s):" % (stmt.name, ", ".join(a.id for a in stmt.args.args))
    if isinstance(stmt, gast.For):
        return "for %s in %s:" % (ast_util.to_source(stmt.target), ast_util.to_source(stmt.iter))
    if isinstance(stmt, gast.While):
        return "while %s:" % ast_util.to_source(stmt.test)
    if isinstance(stmt, gast.If):
        return "if %s:" % ast_util.to_source(stmt.test)
    return ast_util.to_source(stmt).split("\n")[0]


def register_listing(filename):
    """Put the generated lines of `filename` in linecache (for a traceback)."""
    fn = _LISTINGS.get(filename)
    if fn is not None and filename not in linecache.cache:
        lines = _listing(fn.__srcgrad_rows__)
        linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)


def annotate(exc, fn):
    """Add a note to `exc`, raised inside generated function `fn`, naming the
    user's file and line the failing generated statement came from."""
    filename = getattr(fn, "__srcgrad_filename__", None)
    if filename is None or not hasattr(exc, "add_note") or isinstance(exc, UnsupportedSyntaxError):
        return exc          # (a refusal checked at run time names the user's line itself)
    tb = exc.__traceback__
    lineno = None
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name.startswith("<srcgrad-generated"):
            register_listing(name)          # the generated lines, for the printed traceback
        if name == filename:
            lineno = tb.tb_lineno
        tb = tb.tb_next
    if lineno is None:
        return exc
    rows = fn.__srcgrad_rows__
    stmt = rows[lineno - 1][1] if 0 < lineno <= len(rows) else None
    text = _header(stmt).strip() if stmt is not None else ""
    origin = Anno.ORIGIN.of(stmt)
    if origin is not None:
        user_file, user_line, _ = origin
        exc.add_note("srcgrad: raised in code generated for %s, line %d:\n    %s"
                     % (source_name(user_file), user_line, linecache.getline(user_file, user_line).strip()))
    else:
        exc.add_note("srcgrad: raised in generated code: %s" % text)
    return exc
