"""Kinds: which names may hold a list, tuple or dict (a container).

Requires: anf. Guarantees `ctx.facts.dynamic`, the set of names that may hold
a container, and for each call of a user function `op.arg_dynamic` (which
arguments may be containers; the callee is compiled for those kinds).

A container's cotangent (and tangent) is a container of its elements'
cotangents, kept sparse: an element without one is None. So the generated
code adds such cotangents with `add_cotangents`, not `+` (which would
concatenate lists), and starts them at `sparse_zeros`, not `np.zeros_like`.
The analysis is a may-analysis (a fixed point over the assignments): a
name is a container if it is a parameter given a container, or is assigned
a display, a copy, element or slice of a container, the result of a rule
that returns a sequence (list_append, np.split, ...) or of a container
helper (unindex/densify/add_cotangents on containers), or a result of a
user function that returns a container (`ctx.callee_dynamic`). Other rule
outputs are arrays. In generated code transformed again (it has stacks), a
name that starts at None (the values a loop saves before its first trip)
counts as a container too, and so does a value popped from a stack such a
name is pushed onto: its cotangent may be None, which `add_cotangents`
adds as zero and `+` cannot. Being conservative costs speed (a helper call for an
addition), never correctness.
"""
import builtins
import operator

import gast
import numpy as np

from .. import runtime
from ..rules import registry
from ..rules.helpers import broadcast as helpers
from ..rules.helpers import shapes as shape_helpers
from ..rules.python import containers
from ..syntax import ast_util
from ..syntax.anno import Anno
from ..runtime import syntax as runtime_syntax
from .anf_calls import injected
from .ops import Op


def _targets(stmt):
    t = stmt.targets[0]
    return [e.id for e in t.elts] if isinstance(t, gast.Tuple) else [t.id]


def _is_dynamic(e, dynamic):
    return (isinstance(e, gast.Name) and e.id in dynamic) or isinstance(e, (gast.List, gast.Tuple, gast.Dict))


_BY_ARGUMENT = {
    containers.setitem: ("x",), operator.getitem: ("x",), helpers.unindex: ("x",),
    runtime.add_cotangents: ("a", "b"), runtime.densify: ("x",), runtime.densify_tree: ("x",),
    runtime.as_input_tree: ("x",),
    shape_helpers.array_adjoint: ("obj",),      # (np.array's adjoint: a list for a list; met at second order)
}


_CONTAINER_RESULTS = {containers.as_list, containers.as_tuple, containers.as_dict,
                      containers.list_append, containers.list_extend, containers.get_cotangent,
                      containers.seq_repeat, containers.repeat_cotangent, containers.repeat_list}


def transform(fdef, ctx):
    """Fill `ctx.facts.dynamic` and `ctx.facts.scalar` for `fdef` (ANF);
    returns the dynamic set."""
    nodes = ast_util.walk(fdef)         # (the passes below read the tree unchanged until _sequence_operators)
    assigns = [n for n in nodes if isinstance(n, gast.Assign) and Anno.OP.exists(n)]
    ops = [Anno.OP.of(n) for n in nodes if isinstance(n, gast.Expr) and Anno.OP.of(n) is not None]
    pushes = [op.args for op in ops if op.kind == "push"]
    # (generated code transformed again: the names that start at None before a loop only may be
    # containers; the user's code was checked when it was compiled the first time)
    generated = bool(ctx.facts.stacks) or any(Anno.OP.exists(n) and Anno.OP.of(n).kind in ("push", "pop")
                                             for n in nodes)
    sequence_ops = set()        # `xs * n`, `xs + ys` on names that surely hold lists or tuples
    ints = _int_names(assigns, ctx)
    while True:
        dynamic = _may_hold_containers(assigns, pushes, ctx, sequence_ops)
        definite = _definite(assigns, dynamic, ctx, sequence_ops, ints)
        sure = _definite(assigns, dynamic, ctx, sequence_ops, ints, calls=False)
        more = {s for s in assigns if _sequence_operator(s, sure, ints) is not None} - sequence_ops
        if not more:
            break
        sequence_ops |= more
    changed = _sequence_operators(fdef, ctx, sequence_ops, dynamic, sure, ints, generated)
    for s in assigns:        # the final kinds of the arguments of each call
        op = Anno.OP.of(s)
        if op.kind == "call":
            op.arg_dynamic = tuple(_is_dynamic(a, dynamic) for a in op.args)
    changed = _containers_read_as_arrays(fdef, ctx, definite) or changed
    ctx.facts.walked = (fdef, ast_util.walk(fdef) if changed else nodes)     # (for the passes up to reverse)
    ctx.facts.dynamic = dynamic
    ctx.facts.scalar = scalars(fdef, ctx.facts.scalar_params, assigns, dynamic,
                               {p: len(pattern) for p, pattern in ctx.facts.shape_params.items()})
    return dynamic


def _sequence_operator(s, names, ints=None):
    """For `t = a * b` or `t = a + b` (Python's operators, not a call of
    np.multiply): (the operator's type, a, b) when it is a sequence
    operation on the names of `names`: `*` with an operand in names and the
    other an int constant or a name of `ints`, `+` with both operands in
    names. `ints` None: `*` with an operand in names and the other anything
    but a float constant (it may be a repetition). Else None."""
    if not isinstance(s.value, gast.BinOp) or not isinstance(s.value.op, (gast.Mult, gast.Add)):
        return None
    op = Anno.OP.of(s)
    if op.kind != "rule" or op.rule.primitive not in (np.multiply, np.add):
        return None
    a, b = s.value.left, s.value.right
    ins = [isinstance(e, gast.Name) and e.id in names for e in (a, b)]
    if isinstance(s.value.op, gast.Add):
        return (gast.Add, a, b) if all(ins) else None
    if not any(ins):
        return None
    other = b if ins[0] else a
    if isinstance(other, gast.Constant):
        return (gast.Mult, a, b) if isinstance(other.value, int) else None
    if ints is None or (isinstance(other, gast.Name) and other.id in ints):
        return (gast.Mult, a, b)
    return None


def _int_names(assigns, ctx):
    """Names that hold Python ints, shapes or other values without a
    derivative (where `xs * n` repeats a list): parameters given Python
    numbers, and names every assignment of which is non-differentiable
    (`n = len(x)`, `n = 3`)."""
    by_target = {}
    for s in assigns:
        for t in _targets(s):
            by_target.setdefault(t, []).append(s)
    ints = set(ctx.facts.scalar_params)
    ints |= {t for t, ss in by_target.items() if all(Anno.OP.of(s).kind == "nondiff" for s in ss)}

    def integral(e):
        return (isinstance(e, gast.Constant) and type(e.value) is int) or (isinstance(e, gast.Name) and e.id in ints)
    def int_valued(v):
        if isinstance(v, gast.BinOp):
            return isinstance(v.op, _INT_OPS) and integral(v.left) and integral(v.right)
        if isinstance(v, gast.Call) and Anno.CALLEE.of(v.func, None) in (builtins.max, builtins.min):
            return bool(v.args) and not v.keywords and all(integral(a) for a in v.args)
        return False
    changed = True
    while changed:         # (`n = nd - len(reps)`, `nd = max(n, m)`: integer arithmetic on such names)
        changed = False
        for t, ss in by_target.items():
            if t not in ints and all(int_valued(s.value) for s in ss):
                ints.add(t)
                changed = True
    return ints


_INT_OPS = (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)


def _may_hold_containers(assigns, pushes, ctx, sequence_ops):
    """The may-analysis of the module docstring (a fixed point over the
    assignments and the pushes, (stack, value) pairs); the statements of
    `sequence_ops` give containers."""
    dynamic = set(ctx.facts.containers)
    if pushes:
        dynamic |= {t for s in assigns if isinstance(s.value, gast.Constant) and s.value.value is None
                    for t in _targets(s)}
    changed = True
    while changed:
        changed = False
        for s in assigns:
            op = Anno.OP.of(s)
            targets = _targets(s)
            new = []
            if op.kind == "pack":
                new = targets
            elif op.kind == "copy":
                new = targets if _is_dynamic(op.args[0], dynamic) else []
            elif op.kind == "rule":
                params = _BY_ARGUMENT.get(op.rule.primitive)
                if op.rule.primitive in _CONTAINER_RESULTS or s in sequence_ops:
                    hit = True
                elif op.rule.primitive is ctx.transpose_jvp and ctx.transpose_jvp is not None:
                    # the tangent of a primitive's output by the transpose trick: a list for a list output
                    hit = _is_dynamic(op.bindings.get("z"), dynamic)
                elif params is not None:
                    hit = any(_is_dynamic(op.bindings.get(p), dynamic) for p in params)
                else:
                    hit = op.rule.sequence_output
                new = targets if hit else []
            elif op.kind == "pop":
                new = targets if op.args[0].id in dynamic else []
            elif op.kind == "call" and op.custom:
                # a custom_gradient function given a list, tuple or dict may return one (the VJP that
                # custom.CustomCallee makes returns the argument's gradient: the same structure)
                new = targets if any(_is_dynamic(a, dynamic) for a in op.args) else []
            elif op.kind == "call" and not op.custom and ctx.callee_dynamic is not None:
                op.arg_dynamic = tuple(_is_dynamic(a, dynamic) for a in op.args)
                outs = ctx.callee_dynamic(op)
                if len(targets) == 1 and len(outs) > 1:
                    new = targets       # a tuple kept whole
                else:
                    new = [t for t, o in zip(targets, outs) if o]
            for t in new:
                if t not in dynamic:
                    dynamic.add(t)
                    changed = True
        for stack, x in pushes:       # (a stack is marked by its name)
            if _is_dynamic(x, dynamic) and stack.id not in dynamic:
                dynamic.add(stack.id)
                changed = True
    return dynamic


def _sequence_operators(fdef, ctx, sequence_ops, dynamic, definite, ints, generated):
    """Python's `*` and `+` on lists and tuples: each statement of
    `sequence_ops` (an operand surely a container) becomes seq_repeat(xs,
    n) or list_extend(xs, ys), container rules (the cotangent of each
    element is the sum of its copies'). Where an operand only may be a
    container (an element of one), the NumPy rule stays, after a check at
    run time that refuses a list or tuple result at the user's line (not in
    `generated` code, transformed again). Returns whether a statement
    changed or was added."""
    repeat = registry.adjoint_rule(containers.seq_repeat)
    extend = registry.adjoint_rule(containers.list_extend)
    changed = False

    def block(stmts):
        nonlocal changed
        out = []
        for st in stmts:
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(st, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    setattr(st, field, block(inner))
            if isinstance(st, gast.Assign) and st in sequence_ops:
                changed = True
                kind, a, b = _sequence_operator(st, definite, ints)
                if kind is gast.Mult:
                    if not (isinstance(a, gast.Name) and a.id in definite):
                        a, b = b, a
                    fn, rule, names = containers.seq_repeat, repeat, ("xs", "n")
                else:
                    fn, rule, names = containers.list_extend, extend, ("xs", "ys")
                st.value = ast_util.copy_location(ast_util.call(injected(fn, fn.__name__), [a, b]), st.value)
                Anno.OP.add_to(st, Op("rule", rule=rule, bindings=dict(zip(names, (a, b))),
                                      source=Anno.OP.of(st).source))
            elif isinstance(st, gast.Assign) and Anno.OP.exists(st) and not generated and \
                    _sequence_operator(st, dynamic) is not None:
                check = ast_util.call(injected(runtime_syntax.check_numeric_result, "check_numeric_result"),
                                      [ast_util.name(st.targets[0].id),
                                       injected(tuple(ctx.parsed.origin(st.value)), "origin")])
                guard = ast_util.copy_location(gast.Expr(value=check), st)
                Anno.FORWARD_ONLY.add_to(guard, True)
                out.append(st)
                out.append(guard)
                changed = True
                continue
            out.append(st)
        return out

    fdef.body = block(fdef.body)
    return changed


# NumPy functions whose array arguments may be sequences of arrays of different shapes (np.asarray of
# the sequence would fail or change the meaning): a list or tuple reaches them as it is
_TAKE_SEQUENCES = {getattr(np, n) for n in (
    "stack", "concatenate", "hstack", "vstack", "dstack", "column_stack", "row_stack", "block", "array",
    "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "select", "choose", "einsum",
    "broadcast_arrays", "meshgrid", "piecewise", "unstack", "concat", "atleast_1d", "atleast_2d", "atleast_3d",
    "append", "insert") if hasattr(np, n)}
_TAKE_SEQUENCES.add(np.linalg.multi_dot)
# (not scipy.linalg: cho_solve((c, lower), b) takes a pair)
_ARRAY_MODULES = ("numpy", "scipy.special", "scipy.stats", "scipy._lib")


def _reads_as_array(rule):
    """Does this primitive read a list argument as one array (np.sin(p) is
    np.sin(np.asarray(p)))? NumPy's and SciPy's array functions do; those of
    _TAKE_SEQUENCES, srcgrad's container helpers and pytree-taking rules
    (odeint's args) do not."""
    prim = getattr(rule.primitive, "__srcgrad_raw__", rule.primitive)
    if prim in _TAKE_SEQUENCES or prim in _BY_ARGUMENT or prim in _CONTAINER_RESULTS:
        return False
    if isinstance(prim, np.ufunc):
        return True
    module = getattr(prim, "__module__", None) or ""
    return module.startswith(_ARRAY_MODULES)


def _definite(assigns, dynamic, ctx, sequence_ops=(), ints=(), calls=True):
    """The names of `dynamic` that surely hold a list, tuple or dict:
    parameters given one, and names every assignment of which is a display,
    a container rule's result, a user function's container result or a
    copy of such a name (not an element of a container, nor a value popped
    from a stack in generated code: those may be arrays)."""
    by_target = {}
    for s in assigns:
        for t in _targets(s):
            by_target.setdefault(t, []).append(s)
    params = set(ctx.facts.containers)
    definite = {t for t in dynamic if t in by_target or t in params}

    def sure(s, t):
        op = Anno.OP.of(s)
        if op.kind == "pack":
            return True
        if op.kind == "copy":
            return isinstance(op.args[0], (gast.List, gast.Tuple, gast.Dict)) or (
                isinstance(op.args[0], gast.Name) and op.args[0].id in definite)
        if op.kind == "rule":
            return op.rule.primitive in _CONTAINER_RESULTS or (
                s in sequence_ops and _sequence_operator(s, definite, ints) is not None)
        # (calls=False: a user function's result only may be a container, as the callee's kinds say: not
        # sure enough to compile `r * 2` as a list repetition)
        return calls and op.kind == "call" and t in dynamic and not op.custom
    changed = True
    while changed:
        changed = False
        for t in sorted(definite):
            if t in params and t not in by_target:
                continue
            if not all(sure(s, t) for s in by_target.get(t, ())):
                definite.discard(t)
                changed = True
    return definite


def _containers_read_as_arrays(fdef, ctx, dynamic):
    """A list or tuple read whole as one array by a NumPy function
    (`np.square(p)`, `np.dot(p, p)` with `p = [a, b]`): the call gets
    `p_arr = sequence_as_array(p)` instead (np.asarray of a list or tuple),
    so that its rule sees an array (the template `d[x] * (2.0 * x)` would
    multiply the list) and the cotangent goes back to the list's elements
    through its rule (one per element, as autograd and JAX treat a list
    passed to a NumPy function). Names that only may hold a container get
    the same: anything else passes through unchanged. Returns whether a
    statement changed or was added."""
    rule = registry.adjoint_rule(containers.sequence_as_array)
    changed = False

    def block(stmts, nested):
        nonlocal changed
        out = []
        for st in stmts:
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(st, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    setattr(st, field, block(inner, True))
            op = Anno.OP.of(st) if isinstance(st, gast.Assign) else None
            # (a call: `p + q` concatenates lists, as Python means)
            if op is not None and op.kind == "rule" and isinstance(st.value, gast.Call) and _reads_as_array(op.rule):
                for p in op.rule.diff_params:
                    e = op.bindings.get(p)
                    if isinstance(e, gast.Name) and e.id in dynamic:
                        out.append(_as_array(st, op, e, rule, ctx))
                        changed = True
                    elif isinstance(e, (gast.List, gast.Tuple)) and p not in op.rule.varargs and \
                            all(isinstance(x, gast.Name) for x in e.elts):
                        out.append(_display_as_array(st, op, p, e, rule, ctx))      # np.square([x, y])
                        changed = True
                        if nested:      # (saved per trip, as anf's other names in a loop or branch)
                            ctx.facts.stacked.add(out[-1].targets[0].id)
            if op is not None and op.kind == "rule" and isinstance(st.value, gast.Call):
                for k, display in _einsum_operand_displays(op):
                    out.append(_display_as_array(st, op, "operands", display, rule, ctx, k))
                    changed = True
                    if nested:
                        ctx.facts.stacked.add(out[-1].targets[0].id)
            out.append(st)
        return out

    fdef.body = block(fdef.body, False)
    return changed


def _as_array(st, op, name, rule, ctx):
    """`tmp = sequence_as_array(name)` before `st`, whose bindings and call
    arguments `name` become tmp."""
    tmp = ctx.namer.fresh(name.id + "_arr")
    call = ast_util.call(injected(containers.sequence_as_array, "sequence_as_array"), [ast_util.name(name.id)])
    bound = rule.signature.bind(ast_util.name("_z"), ast_util.name(name.id))
    bound.apply_defaults()
    bindings = {k: v if isinstance(v, gast.AST) else ast_util.const(v)
                for k, v in bound.arguments.items() if k != rule.output}
    new = ast_util.copy_location(ast_util.assign(tmp, call), st)
    Anno.OP.add_to(new, Op("rule", rule=rule, bindings=bindings, source="sequence_as_array"))
    for k, v in list(op.bindings.items()):
        if isinstance(v, gast.Name) and v.id == name.id:
            op.bindings[k] = ast_util.name(tmp)
    for n in ast_util.walk(st.value):
        if isinstance(n, gast.Name) and n.id == name.id and isinstance(n.ctx, gast.Load):
            n.id = tmp
    return new


def _einsum_operand_displays(op):
    """(position, display) of the list or tuple displays of names among
    np.einsum's operands (`np.einsum("i,i", [a, b], y)`, or interleaved,
    `np.einsum([a, b], [0], y, [0])`): each is read as one array
    (np.asarray), which the rule needs to see. (einsum takes sequences,
    _TAKE_SEQUENCES, for the interleaved form's sublists; its displays of
    operands were left as they were, and the compiled derivative had no
    term through them: a wrong gradient and JVP without a word.)"""
    if getattr(op.rule.primitive, "__srcgrad_raw__", op.rule.primitive) is not np.einsum:
        return []
    operands = op.bindings.get("operands")
    if not isinstance(operands, gast.Tuple) or not operands.elts:
        return []
    elts = operands.elts
    if isinstance(elts[0], gast.Constant) and isinstance(elts[0].value, str):
        positions = range(1, len(elts))
    else:       # the interleaved form op0, sublist0, op1, sublist1, ..., [output sublist]
        positions = range(0, len(elts) - 1, 2)
    return [(k, elts[k]) for k in positions if isinstance(elts[k], (gast.List, gast.Tuple))
            and elts[k].elts and all(isinstance(x, gast.Name) for x in elts[k].elts)]


def _display_as_array(st, op, param, display, rule, ctx, position=None):
    """`tmp = sequence_as_array([x, y])` before `st`, whose binding of
    `param` (the display; for a *parameter, its element at `position`)
    and the display in its call become tmp."""
    tmp = ctx.namer.fresh("seq_arr")
    held = ast_util.clone(display)
    call = ast_util.call(injected(containers.sequence_as_array, "sequence_as_array"), [held])
    bound = rule.signature.bind(ast_util.name("_z"), ast_util.clone(display))
    bound.apply_defaults()
    bindings = {k: v if isinstance(v, gast.AST) else ast_util.const(v)
                for k, v in bound.arguments.items() if k != rule.output}
    new = ast_util.copy_location(ast_util.assign(tmp, call), st)
    Anno.OP.add_to(new, Op("rule", rule=rule, bindings=bindings, source="sequence_as_array"))
    if position is None:
        op.bindings[param] = ast_util.name(tmp)
    else:
        elts = list(op.bindings[param].elts)
        elts[position] = ast_util.name(tmp)
        op.bindings[param] = gast.Tuple(elts=elts, ctx=gast.Load())
    for node in ast_util.walk(st.value):
        for field in ("args", "elts"):
            items = getattr(node, field, None)
            if isinstance(items, list) and any(i is display for i in items):
                setattr(node, field, [ast_util.name(tmp) if i is display else i for i in items])
        for kw in getattr(node, "keywords", None) or ():
            if kw.value is display:
                kw.value = ast_util.name(tmp)
    return new


# reductions whose result is 0-d with axis=None and keepdims=False
_FULL_REDUCTIONS = {np.sum, np.mean, np.max, np.min, np.amax, np.amin, np.prod, np.var, np.std}


def scalars(fdef, scalar_params, assigns, dynamic, ranks=None):
    """Names whose values are known to be 0-d (Python floats and ints,
    NumPy scalars): parameters given Python scalars, numbers, elementwise
    operations (ufuncs, the math module) of 0-d values, full reductions,
    an element `x[i]` or `x[i, j]` of an array parameter of that rank
    (`ranks`: {array parameter: its rank}, from the cache key) never
    reassigned, at indices that hold Python ints (`_index_ints`), and
    copies of those. A name assigned anything else anywhere is not. Their
    cotangents need no unbroadcast, and their zeros are 0.0 (Tapenade-
    style specialisation to what the cache key knows)."""
    candidates = set(scalar_params)
    known = {}
    for s in assigns:
        for t in _targets(s):
            known.setdefault(t, []).append(s)
    arrays = {p: r for p, r in (ranks or {}).items() if p not in known and p not in dynamic}
    ints = _index_ints(fdef, assigns) if arrays else set()
    result = set(candidates) | set(known)
    result -= dynamic
    # a parameter not known to be 0-d is not, whatever it is reassigned
    # (x = mean(x) + x * 0.5 keeps x an array)
    params = {a.id for a in fdef.args.args + fdef.args.kwonlyargs if isinstance(a, gast.Name)}
    params |= {a.id for a in (fdef.args.vararg, fdef.args.kwarg) if isinstance(a, gast.Name)}
    result -= params - candidates
    changed = True
    while changed:
        changed = False
        for name in sorted(result):      # (a scalar parameter reassigned an array is not)
            if not all(_scalar_op(s, result) or _element_op(s, arrays, ints) for s in known.get(name, ())):
                result.discard(name)
                changed = True
    return result


def _index_ints(fdef, assigns):
    """Names that surely hold Python ints: every definition of which is a
    `for` over `range(...)`, an int constant, `len(...)`, or integer
    arithmetic (+ - * // %) of such names and int constants (the greatest
    such set: a definition reading only names of the set)."""
    defs = {}
    for node in ast_util.walk(fdef):
        if isinstance(node, gast.For) and isinstance(node.target, gast.Name):
            ranged = isinstance(node.iter, gast.Call) and Anno.CALLEE.of(node.iter.func, None) is builtins.range
            defs.setdefault(node.target.id, []).append(True if ranged else None)
        elif isinstance(node, gast.For):
            for n in ast_util.names_stored(node.target):
                defs.setdefault(n, []).append(None)
    for s in assigns:
        for t in _targets(s):
            defs.setdefault(t, []).append(s.value if len(_targets(s)) == 1 else None)
    for a in fdef.args.args + fdef.args.kwonlyargs:
        if isinstance(a, gast.Name):
            defs.setdefault(a.id, []).append(None)       # (a parameter: any value)
    ints = set(defs)

    def int_valued(e):
        if e is True:
            return True
        if isinstance(e, gast.Constant):
            return type(e.value) is int
        if isinstance(e, gast.Name):
            return e.id in ints
        if isinstance(e, gast.BinOp):
            return isinstance(e.op, _INT_OPS) and int_valued(e.left) and int_valued(e.right)
        if isinstance(e, gast.Call):
            return Anno.CALLEE.of(e.func, None) is builtins.len
        return False
    changed = True
    while changed:
        changed = False
        for name in sorted(ints):
            if not all(int_valued(e) for e in defs[name]):
                ints.discard(name)
                changed = True
    return ints


def _element_op(s, arrays, ints):
    """Is `s` a read `x[i]` / `x[i, j, ...]` of one element of an array
    parameter of `arrays` ({name: rank}) at indices of `ints`?"""
    op = Anno.OP.of(s)
    if not arrays or op.kind != "rule" or op.rule.primitive is not operator.getitem or len(_targets(s)) != 1:
        return False
    x, index = op.bindings.get("x"), op.bindings.get("index")
    if not (isinstance(x, gast.Name) and x.id in arrays):
        return False
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    return len(parts) == arrays[x.id] and all(
        isinstance(p, gast.Name) and p.id in ints or isinstance(p, gast.Constant) and type(p.value) is int
        for p in parts)


def _is_scalar(e, scalars):
    if isinstance(e, gast.Constant):
        return isinstance(e.value, (int, float, complex)) and not isinstance(e.value, bool) or e.value is None
    return isinstance(e, gast.Name) and e.id in scalars


def _scalar_op(s, scalars):
    op = Anno.OP.of(s)
    if len(_targets(s)) != 1:
        return False
    if op.kind == "copy":
        return _is_scalar(op.args[0], scalars)
    if op.kind == "nondiff":
        value = s.value
        return isinstance(value, gast.Constant) and isinstance(value.value, (int, float)) and \
            not isinstance(value.value, bool)
    if op.kind == "rule":
        prim = op.rule.primitive
        if op.python_float:
            return True
        if isinstance(prim, np.ufunc):
            args = [op.bindings.get(p) for p in op.rule.params if p not in ("out", "dtype", "where", "casting",
                                                                           "order", "subok", "signature")]
            return all(a is None or _is_scalar(a, scalars) for a in args)
        if prim in _FULL_REDUCTIONS:
            axis, keepdims = op.bindings.get("axis"), op.bindings.get("keepdims")
            return (isinstance(axis, gast.Constant) and axis.value is None
                    and (keepdims is None or isinstance(keepdims, gast.Constant) and keepdims.value is False))
    return False
