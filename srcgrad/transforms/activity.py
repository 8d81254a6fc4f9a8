"""Activity analysis: which variables carry derivatives.

Requires: anf. A variable is *varied* when it depends differentiably on an
active input, and *useful* when an output depends differentiably on it;
*active* = varied and useful (Hascoet & Pascual, "The Tapenade automatic
differentiation tool", 2013, sec. 3). Integer indices, shapes, comparison
results and other non-differentiable values are never active, so they get no
adjoint code. The analysis is flow-insensitive (a name is varied if any of
its assignments is), which is conservative and exact for SSA'd straight-line
code.

Generated code transformed again (higher orders) holds push(S, x) and
t = pop(S) on stacks: a stack is varied when a varied value is pushed, a
value popped from a varied stack is varied, and usefulness flows back from
the pops to the pushes. Names do not pair pushes with pops (ANF names a
nested `pop` afresh), so the derivative code keeps a stack's pushes and pops
in step as a whole (`active_stacks`).

An element assignment into a name that may be a NumPy view of others (a
run-time `check_not_shared`, lower/views.py) varies those others too: the
write may change them (NumPy's semantics), and the check must run in the
generated code for it to refuse the view. (Left out, `row = out[1]; row[0]
= v` in a called helper made its result `out` look constant: the caller
ran the plain helper and got a zero derivative without a word.)
"""
import gast

from ..rules.python import containers
from ..runtime import syntax as runtime_syntax
from ..syntax import ast_util
from ..syntax.anno import Anno


def _assignments_and_pushes(body):
    """The ANF assignments and the push statements in `body`, in one walk."""
    assigns, pushes = [], []
    for s in body:
        for n in ast_util.walk(s):
            if isinstance(n, gast.Assign):
                if Anno.OP.exists(n):
                    assigns.append(n)
            elif isinstance(n, gast.Expr) and Anno.OP.of(n) is not None and Anno.OP.of(n).kind == "push":
                pushes.append(n)
    return assigns, pushes


def _targets(stmt):
    t = stmt.targets[0]
    return [e.id for e in t.elts] if isinstance(t, gast.Tuple) else [t.id]


_SETITEMS = (containers.setitem, containers.array_setitem)


def _view_aliases(fdef, ops):
    """[("alias", None, others, written)]: for each run-time view check
    `check_not_shared(x, (o1, o2), ...)` the names the element assignments
    into x define (`x_1 = setitem(x, i, v)`), which vary o1, o2."""
    out = []
    for n in ast_util.statements(fdef.body):
        if not (type(n) is gast.Expr and type(n.value) is gast.Call and type(n.value.func) is gast.Name
                and Anno.CALLEE.of(n.value.func, None) is runtime_syntax.check_not_shared):
            continue
        args = n.value.args
        if len(args) < 2 or not isinstance(args[0], gast.Name) or not isinstance(args[1], gast.Tuple):
            continue
        others = [e.id for e in args[1].elts if isinstance(e, gast.Name)]
        written = [t for kind, op, targets, _ in ops if kind == "rule" and op.rule.primitive in _SETITEMS
                   and isinstance(op.bindings.get("x"), gast.Name) and op.bindings["x"].id == args[0].id
                   for t in targets]
        if others and written:
            out.append(("alias", None, others, written))
    return out


def transform(fdef, ctx):
    """Fill `ctx.active` (the active names) and `ctx.facts.active_stacks`
    (the stacks of generated code that carry derivatives) for `fdef` (ANF),
    whose active inputs are those of `ctx.inputs` that `ctx.mask` selects.
    Returns fdef."""
    active_inputs = [n for n, m in zip(ctx.inputs, ctx.mask) if m]
    ctx.active = analyze(fdef, ctx, active_inputs, seeded_outputs(fdef, ctx))
    return fdef


def seeded_outputs(fdef, ctx):
    """The returned names of `fdef` given cotangents (ctx.seeded: the
    positions of the outputs seeded; the others' cotangents are zero)."""
    outputs = ast_util.returned_names(fdef)
    if ctx.seeded is None:
        return outputs
    return [o for k, o in enumerate(outputs) if k in ctx.seeded]


def analyze(fdef, ctx, active_inputs, outputs):
    """Return the set of active names; set `ctx.facts.active_stacks`, the
    stacks of generated code that carry derivatives.

    active_inputs: names of the inputs being differentiated. outputs: the
    returned names. ctx.callee_outputs(op, varied_mask) -> tuple of bools,
    which outputs of a user call are varied given which arguments are.
    """
    callee_outputs = ctx.callee_outputs
    # Each op as (kind, op, targets, operands), with use and definition maps:
    # both propagations are worklists, linear in the size of the code.
    ops = []
    assigns, push_stmts = _assignments_and_pushes(fdef.body)
    for s in assigns:
        op = Anno.OP.of(s)
        if op.kind in ("copy", "rule", "opaque", "call"):
            operands = op.operand_names()
        elif op.kind in ("unpack", "pack"):
            operands = [n.id for n in ast_util.walk(s.value) if isinstance(n, gast.Name)]
        elif op.kind == "pop":
            operands = [op.args[0].id]
        else:
            continue
        ops.append((op.kind, op, _targets(s), operands))
    pushes = [Anno.OP.of(p).args for p in push_stmts]
    for stack, x in pushes:
        if isinstance(x, gast.Name):
            ops.append(("push", None, [stack.id], [x.id]))
    ops += _view_aliases(fdef, ops)
    users, producers = {}, {}
    for k, (_, _, targets, operands) in enumerate(ops):
        for n in set(operands):
            users.setdefault(n, []).append(k)
        for t in targets:
            producers.setdefault(t, []).append(k)

    varied = set()
    work = list(active_inputs)
    fired = set()

    def vary(names):
        for t in names:
            if t not in varied:
                varied.add(t)
                work.append(t)
    vary(list(active_inputs))
    while work:
        name = work.pop()
        for k in users.get(name, ()):
            kind, op, targets, _ = ops[k]
            if kind == "call":
                mask = tuple(isinstance(a, gast.Name) and a.id in varied
                             for a in list(op.args) + list(op.keywords.values()))
                outs = callee_outputs(op, mask)
                # one output per target; a single output unpacked into several targets (a list the
                # callee built, `W, b = unflatten(v)`) or several kept whole vary together
                vary([t for t, o in zip(targets, outs) if o] if len(targets) == len(outs) else
                     (targets if any(outs) else []))
            elif k not in fired:
                fired.add(k)
                vary(targets)

    useful = set(n for n in outputs if n in varied)
    work = list(useful)
    while work:
        name = work.pop()
        for k in producers.get(name, ()):
            for n in ops[k][3]:
                if n in varied and n not in useful:
                    useful.add(n)
                    work.append(n)
    active = varied & useful
    # The stacks that carry derivatives. Every push onto and pop from such a
    # stack moves a tangent (forward mode; None for an inactive value) or a
    # cotangent (reverse; None for a symbolic zero), so the derivative stack
    # stays in step with the primal one.
    stacks = {stack.id for stack, _ in pushes}
    ctx.facts.active_stacks = active & stacks
    return active - stacks


def varied_type_check(fdef, active_inputs, facts=None):
    """The first `isinstance(x, ...)` or `type(x)` call in `fdef` (ANF)
    whose `x` depends on an active input by data flow, as
    (source text, origin), or None.

    On a tape, such an `x` is a Tensor in the plain call and when run op by
    op, but a NumPy value (an ndarray, or an np.float64 for a 0-d Tensor) in
    the compiled sweeps: the check could answer differently there and take
    the other branch (function.py runs such code op by op). The dependence
    is flow-insensitive, as `analyze`'s varied names. `facts`: the
    compilation's Facts, which may hold the walk of `fdef`."""
    import builtins
    nodes = facts.walk(fdef) if facts is not None else ast_util.walk(fdef)
    checks = [n for n in nodes if isinstance(n, gast.Call) and n.args
              and Anno.CALLEE.of(n.func) in (builtins.isinstance, builtins.type)]
    if not checks:
        return None
    varied = set(active_inputs)
    steps = []              # (names the targets bind, names the value reads)
    for n in nodes:
        if isinstance(n, gast.Assign):
            targets, value = n.targets, n.value
        elif isinstance(n, (gast.For, gast.AugAssign, gast.AnnAssign)) and getattr(n, "value", None) is not None:
            targets, value = [n.target], n.value
        elif isinstance(n, gast.For):
            targets, value = [n.target], n.iter
        else:
            continue
        steps.append(([e.id for t in targets for e in ast_util.walk(t) if isinstance(e, gast.Name)],
                      {e.id for e in ast_util.walk(value) if isinstance(e, gast.Name)}))
    changed = True
    while changed:
        changed = False
        for targets, read in steps:
            if read.isdisjoint(varied):
                continue
            for name in targets:
                if name not in varied:
                    varied.add(name)
                    changed = True
    for n in checks:
        if any(isinstance(e, gast.Name) and e.id in varied for e in ast_util.walk(n.args[0])):
            return ast_util.to_source(n).strip(), Anno.ORIGIN.of(n)
    return None
