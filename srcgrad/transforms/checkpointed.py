"""Reverse a `for t in sg.checkpointed(range(n), snapshots=s):` loop by
binomial checkpointing (Griewank & Walther, "Algorithm 799: Revolve", ACM
TOMS 26(1), 2000; the schedule is srcgrad/runtime/revolve.py).

Requires: the loop lowered and in ANF, carrying Anno.CHECKPOINTED (the
snapshots expression; lower/for_loops.py), and a ReverseGenerator that has
prepared its calls (reverse.py calls `forward` from its forward sweep and
`reverse` from its reverse sweep, for a loop that `applies`). Guarantees:

- the forward sweep runs the schedule's actions up to the first turn: the
  loop's *state* (the names its body assigns and reads before assigning:
  what one step carries to the next) is kept in a dict of snapshots at
  the steps Revolve chooses, the steps in between run unrecorded (the
  body without pushes), and the last step runs recorded (the body with the
  pushes of an ordinary loop's forward sweep);
- the reverse sweep runs the rest: each turn reverses one step with the
  ordinary loop's reversed body (adjoints accumulated across steps as in a
  reversed loop, from the same fixed point), after re-running it recorded
  ("youturn"; the first turn was recorded by the forward sweep), and the
  steps between snapshots are run again, unrecorded;
- the names the body assigns that the reverse sweep reads after the loop
  are saved before it and restored after its reversal (the pushes of the
  loop's own steps restore them only to the last re-run's values).

Memory: the snapshots and one step's record instead of n steps' records.
The generated code is plain Python over a lazy schedule (a sequence of
actions, non-differentiable), so it can be differentiated again (second
order, nested tapes): there, it is an ordinary program with loops and
branches, reversed by recording.
"""
import gast

from ..runtime import revolve
from ..syntax import ast_util
from ..syntax.anno import Anno
from ..syntax.templates import replace, replace_expr
from . import liveness

FORWARD_TEMPLATE = '''
for ACTION, STEP, END, SLOT in SCHEDULE(ITERATIONS, SNAPSHOTS):
    if ACTION == "advance":
        pass
    elif ACTION == "takeshot":
        pass
    else:
        pass
'''

REVERSE_TEMPLATE = '''
for ACTION, STEP, END, SLOT in SCHEDULE(ITERATIONS, SNAPSHOTS):
    if ACTION == "advance":
        pass
    elif ACTION == "takeshot":
        pass
    elif ACTION == "restore":
        pass
    else:
        pass
'''


class Loop:
    """One checkpointed loop's names in the generated code (set by
    `forward`, read by `reverse`)."""

    def __init__(self, gen, s):
        self.state = sorted(liveness.defs(ast_util.module(s.body)) & liveness.live_in(s.body, set()))
        assigned = liveness.defs(ast_util.module(s.body)) - liveness.defs(s.target)
        self.saved = sorted(assigned & gen.stacked)
        fresh = gen.namer.fresh
        self.snapshots = fresh("_snapshots")
        self.action, self.step, self.end, self.slot = fresh("_action"), fresh("_step"), fresh("_end"), fresh("_slot")


def applies(gen, s):
    """Is `s` a checkpointed loop with something to reverse (a name its
    body assigns is active)? Another loop is reversed as usual."""
    if not Anno.CHECKPOINTED.exists(s):
        return False
    return bool(liveness.defs(ast_util.module(s.body)) & set(gen.active))


def _names(names):
    return [ast_util.name(n) for n in names]


def _state(loop):
    """The state as one expression: `x`, or `(x, y)` (None: no state)."""
    if not loop.state:
        return None
    return ast_util.name(loop.state[0]) if len(loop.state) == 1 else ast_util.tuple_(_names(loop.state))


def _without_pushes(stmts):
    """A copy of forward-sweep statements without their pushes: a step run
    unrecorded."""
    out = []
    for s in stmts:
        if Anno.PUSH.of(s) is not None:
            continue
        s = ast_util.clone(s)
        if isinstance(s, (gast.If, gast.For, gast.While)):
            s.body = _without_pushes(s.body) or [ast_util.pass_()]
            if isinstance(s, gast.If):
                s.orelse = _without_pushes(s.orelse)
        out.append(s)
    return out


def _simple_range(s):
    """Is the loop's iter `range(n)` or `range(0, n)`: is step k's target k?"""
    args = s.iter.args
    return len(args) == 1 or (len(args) == 2 and isinstance(args[0], gast.Constant) and args[0].value == 0)


def _schedule_loop(gen, s, loop, template, schedule):
    """The `for action, step, end, slot in schedule(range(...), s)` loop of
    `template`, its branches still `pass`."""
    snapshots = Anno.CHECKPOINTED.of(s)
    return replace(template, ACTION=ast_util.name(loop.action), STEP=ast_util.name(loop.step),
                   END=ast_util.name(loop.end), SLOT=ast_util.name(loop.slot),
                   SCHEDULE=gen.helper(schedule), ITERATIONS=ast_util.clone(s.iter),
                   SNAPSHOTS=ast_util.clone(snapshots))[0]


def _advance(s, loop, plain):
    """`for t in range(step, end): body` (steps step..end-1, unrecorded)."""
    if _simple_range(s):
        it = ast_util.call(ast_util.clone(s.iter.func), _names([loop.step, loop.end]))
    else:
        it = replace_expr("R[A:B]", R=ast_util.clone(s.iter), A=ast_util.name(loop.step), B=ast_util.name(loop.end))
    return [ast_util.copy_location(ast_util.for_(ast_util.clone(s.target), it, plain), s)]


def _target(s, loop):
    """`t = step` (`t = range(...)[step]`): the loop variable of one turn
    (nothing when the body does not read it)."""
    if s.target.id not in liveness.uses(ast_util.module(s.body)):
        return []
    value = ast_util.name(loop.step) if _simple_range(s) else replace_expr(
        "R[K]", R=ast_util.clone(s.iter), K=ast_util.name(loop.step))
    return [ast_util.assign(s.target.id, value)]


def _take(loop, state):
    """`snapshots[slot] = state`."""
    return replace("S[K] = STATE", S=ast_util.name(loop.snapshots), K=ast_util.name(loop.slot), STATE=state)


def _branches(stmt):
    """The bodies of the if/elif chain of a schedule loop, in order."""
    out, node = [], stmt.body[0]
    while True:
        out.append(node)
        if len(node.orelse) == 1 and isinstance(node.orelse[0], gast.If):
            node = node.orelse[0]
        else:
            return out


def forward(gen, s):
    """The forward sweep of the checkpointed loop `s`: the saves of what
    the reverse sweep restores after it, the empty snapshots, and the
    schedule up to and including the first turn."""
    loop = gen.checkpointed_loops[id(s)] = Loop(gen, s)
    recorded = loop.recorded = gen.fwd_block(s.body)
    plain = _without_pushes(recorded)
    gen.dynamic = gen.dynamic | {loop.snapshots}
    state = _state(loop)
    stmt = _schedule_loop(gen, s, loop, FORWARD_TEMPLATE, revolve.revolve_forward)
    advance, takeshot = _branches(stmt)
    advance.body = _advance(s, loop, plain)
    if state is not None:
        takeshot.body = _take(loop, state)
    takeshot.orelse = [ast_util.comment("firstturn: the last step, recorded")] + _target(s, loop) + recorded
    head = [ast_util.comment("Revolve (Griewank & Walther 2000): the state %s kept at the steps the schedule "
                             "chooses" % (", ".join(loop.state) or "(none)"))]
    loop.top = any(x is s for x in gen.fdef.body)
    post = []
    if loop.top:
        gen.first_defined.add(loop.snapshots)       # (a residual with no value to start from None)
    else:       # (a loop in a loop or branch: each run's snapshots kept for its reversal)
        post = [gen.push(loop.snapshots)]
    pre = loop.saves = [gen.push(n) for n in loop.saved]
    pre.append(ast_util.assign(loop.snapshots, gast.Dict(keys=[], values=[])))
    return [ast_util.copy_location(x, s) for x in pre + head + [stmt] + post]


def reverse(gen, s, nz):
    """The reverse sweep of the checkpointed loop `s` (after `forward`):
    the rest of the schedule, each turn the reversed body of an ordinary
    loop (`nz`, the possibly nonzero adjoints, updated as for one), then
    the names saved before the loop restored."""
    loop = gen.checkpointed_loops[id(s)]
    reversed_loop = gen.rev_loop(s, nz)
    restore = [gen.pop(n) for n in reversed(loop.saved)]
    loop.restores = list(restore)
    if not reversed_loop or not isinstance(reversed_loop[-1], gast.For):
        return reversed_loop + restore     # (nothing to reverse in the body)
    pre, body = reversed_loop[:-1], reversed_loop[-1].body
    recorded = ast_util.clone(loop.recorded)      # (fresh pushes: the stack pruning rewrites them in place)
    plain = _without_pushes(recorded)
    state = _state(loop)
    stmt = _schedule_loop(gen, s, loop, REVERSE_TEMPLATE, revolve.revolve_reverse)
    advance, takeshot, restoring = _branches(stmt)
    advance.body = _advance(s, loop, plain)
    turn = _target(s, loop) + replace('if A == "youturn":\n    pass', A=ast_util.name(loop.action))
    turn[-1].body = recorded
    turn += body
    if state is not None:
        takeshot.body = _take(loop, state)
        restoring.body = replace("STATE = S[K]", S=ast_util.name(loop.snapshots), K=ast_util.name(loop.slot),
                                 STATE=ast_util.clone(state))
    restoring.orelse = [ast_util.comment("firstturn (recorded by the forward sweep) or youturn")] + turn
    gen.rev_locals |= {loop.action, loop.step, loop.end, loop.slot}
    comment = gen.origin_comment(s, "Grad of: ")
    # the reverse sweep takes snapshots of its own: into a copy (a persistent tape reverses twice)
    copy = replace("S = DICT(S)", S=ast_util.name(loop.snapshots), DICT=ast_util.name(gen.inject("dict", dict)))
    if not loop.top:
        copy = [gen.pop(loop.snapshots)] + copy
    return pre + comment + [ast_util.copy_location(x, s) for x in copy + [stmt]] + restore


def prune_saves(gen, fwd_body, rev_body):
    """Drop the saves before a checkpointed loop (and their restores after
    its reversal) of names the reverse sweep does not read after the
    restore: the temporaries of the body, mostly. Only for a loop at the
    top level of the function; `fwd_body`, `rev_body` changed in place."""
    for loop in gen.checkpointed_loops.values():
        for push, pop in zip(getattr(loop, "saves", []), reversed(getattr(loop, "restores", []))):
            at = [k for k, x in enumerate(rev_body) if x is pop]
            if not at or Anno.PUSH.of(push) in ast_util.names_loaded(ast_util.module(rev_body[at[0] + 1:])):
                continue
            rev_body[:] = [x for x in rev_body if x is not pop]
            fwd_body[:] = [x for x in fwd_body if x is not push]
