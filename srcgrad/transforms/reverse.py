"""Reverse mode: generate the forward sweep and the reverse (adjoint) sweep.

Requires: anf (one primitive per statement, SSA for straight-line code) and
activity. Guarantees, in the returned `Sweeps`:

- `fwd_body` computes the primal values, and before a statement inside a
  branch or loop overwrites a name that the reverse sweep reads, pushes the
  old value on the stack (`push(_stack, x)`); a name is saved only if the
  reverse sweep reads it (Tapenade's to-be-recorded analysis, at the
  granularity of names: Hascoet, Naumann & Pascual, "To be recorded analysis
  in reverse-mode automatic differentiation", FGCS 21(8), 2005);
- `rev_body` computes the adjoints `bx` of the active inputs from the
  output cotangents, popping saved values (`x = pop(_stack)`) so that each
  statement's rule sees the values it saw going forward.

Symbolic zeros. An adjoint is a symbolic zero until its first contribution,
which is an assignment, never `0 +` (JAX's `Zero`); after the adjoint code
of the statement that assigned `x`, `bx` is a symbolic zero again (the
cotangent of x's older value), with no code. The set of possibly nonzero
adjoints is tracked through branches (a zero is materialized at the end of
the branch that did not contribute) and loops (a fixed point at the loop
head: adjoints nonzero on entry to the reversed body are materialized before
the loop, and re-zeroed at the end of the body if the body consumed them).

Calls of user functions are reversed in split mode (Griewank & Walther,
"Evaluating Derivatives", 2nd ed., 2008, sec. 12.2): the forward sweep calls
the callee's split forward, which runs its code once and returns its outputs
and its residuals (`y, g_res = g_fwd(x)`: a tuple of the values its adjoint
reads, its stack included), and the reverse sweep calls its split adjoint on
them (`bx, = g_bwd(g_res, by)`). User code is never re-run: its random
draws, prints and appends happen once, as in the plain call (re-running is
what `sg.checkpoint` asks for). Both are generated functions the compiler
can transform again, and the residuals are a container value, so the
generated code stays closed under transformation.

Stacks of generated code being differentiated again (`push(S, x)`,
`x = pop(S)`): the adjoint of a push pops the cotangent stack `bS`, the
adjoint of a pop pushes on it, so cotangents come off `bS` in the order the
values went on `S`.
"""
from dataclasses import dataclass, field


import gast
import numpy as np

from .. import runtime
from ..rules.helpers import batched as rules_batched
from ..rules.helpers import broadcast as helpers
from ..rules.python import containers
from ..syntax import ast_util
from . import activity, checkpointed
from ..syntax.anno import Anno
from ..syntax.naming import ADJOINT_PREFIX
from .generator import Generator
from .reverse_calls import CallAdjoints, _targets
from .reverse_rules import RuleAdjoints


@dataclass
class Sweeps:
    """What `generate` returns: the two sweeps and what codegen needs to
    assemble the forward, reverse and joint functions."""
    fwd_body: list
    rev_body: list
    outputs: list                  # returned names
    seeds: dict                    # output name -> the name of its cotangent parameter
    adjoints: dict                 # primal name -> adjoint name
    final: set                     # names whose adjoint is possibly nonzero at the end
    rev_locals: set                # names the reverse sweep assigns
    injected: dict                 # name in code -> object
    stack: str = None              # the stack's name (when something is pushed)
    pushed: set = field(default_factory=set)
    first_defined: set = field(default_factory=set)
    zeros: object = None           # zeros(name) -> expression: a zero cotangent for name's value
    inject: object = None          # inject(name, obj) -> the name `obj` has in the generated code
    namer: object = None           # the artefact's namer (codegen names its parameters with it)
    dynamic: set = field(default_factory=set)   # names that may hold a list, tuple or dict
    batched: bool = False          # cotangents carry a leading batch axis
    free_arrays: set = field(default_factory=set)   # globals and cells holding ndarrays the code reads
    fwd_core: list = field(default_factory=list)    # codegen: the forward sweep as the functions run it
    scalar: set = field(default_factory=set)       # names known to be 0-d (kinds.py)
    fwd_early: list = field(default_factory=list)   # codegen: fwd_core, dead temporaries released early
    free: list = field(default_factory=list)        # codegen: what the joint frees between the sweeps
    shape_sources: dict = field(default_factory=dict)   # shapes.py: name -> names of its shape, or ()
    fwd_early_all: list = field(default_factory=list)   # codegen: fwd_early with the outputs' computation
    free_all: list = field(default_factory=list)        # codegen: free for that forward sweep


class ReverseGenerator(CallAdjoints, RuleAdjoints, Generator):
    """The reverse-mode generator: forward and reverse sweeps of one function
    (the adjoints of calls in reverse_calls.py, of rules in reverse_rules.py)."""

    def __init__(self, ctx, fdef, active, outputs):
        super().__init__(ctx)
        self.fdef = fdef
        self.active = active
        self.stacked = set(ctx.facts.stacked)
        self.stacks = set(ctx.facts.stacks)
        self.active_stacks = set(ctx.facts.active_stacks)   # (activity.py)
        self.outputs = outputs
        self.adj = {}
        self.stack = self.namer.fresh("_stack")    # values saved going forward, popped in reverse
        self.rev_locals = set()
        self.real_only = not ctx.complex_mode
        self.batched = ctx.batched          # cotangents carry a leading batch axis (batch_safety.py)
        self.batch = None                   # the name of the batch size in generated code
        self.checkpointed_loops = {}        # id(for loop) -> checkpointed.Loop (sg.checkpointed)

    # -- names
    def adjoint(self, name):
        found = self.adj.get(name)
        if found is None:
            found = self.derivative_name(self.adj, ADJOINT_PREFIX, name)
            self.rev_locals.add(found)
        return found

    # -- preparation
    def mark_first_definitions(self, body, inputs):
        """An assignment that defines a name for the first time needs no
        push: there is no earlier value to restore. At the top level such
        names are `first_defined` (surely defined after it); in a branch
        (not in a loop, whose next trip sees the value) the assignment is
        marked too, but the name may stay undefined (the code starts it at
        None). Saving that None would also give Numba a value of no type
        (sg.jit: a function's early return, then a loop)."""
        self._mark_first(body, set(inputs))
        self.first_defined = set()
        for s in body:
            self.first_defined |= Anno.FIRST.of(s, set())

    def _mark_first(self, body, seen):
        """mark_first_definitions on `body`, after which `seen` holds every
        name `body` may have defined."""
        for s in body:
            if isinstance(s, gast.Assign):
                names = set(_targets(s))
                Anno.FIRST.add_to(s, names - seen)
                seen |= names
            elif isinstance(s, gast.If):
                orelse = set(seen)
                self._mark_first(s.body, seen)
                self._mark_first(s.orelse, orelse)
                seen |= orelse
            else:
                for n in ast_util.walk(s):
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                        seen.add(n.id)

    # -- forward sweep
    def fwd_block(self, body):
        out = []
        for s in body:
            if isinstance(s, gast.Assign):
                for t in _targets(s):
                    if t in self.stacked and t not in Anno.FIRST.of(s, ()) \
                            and not Anno.NO_SAVE.of(s, False) and not Anno.ASSIGNED_ONCE.of(s, False):
                        out.append(self.push(t))
                out.append(s)
            elif isinstance(s, gast.If):
                out.append(ast_util.copy_location(
                    ast_util.if_(s.test, self.fwd_block(s.body), self.fwd_block(s.orelse)), s))
            elif isinstance(s, gast.For) and checkpointed.applies(self, s):
                out.extend(checkpointed.forward(self, s))       # sg.checkpointed: Revolve
            elif isinstance(s, gast.For):
                out.append(ast_util.copy_location(ast_util.for_(s.target, s.iter, self.fwd_block(s.body)), s))
            elif isinstance(s, gast.While):
                out.append(ast_util.copy_location(gast.While(test=s.test, body=self.fwd_block(s.body),
                                                             orelse=[]), s))
            elif isinstance(s, (gast.Expr, gast.Assert, gast.Raise)) and Anno.GRAD_OF.of(s) is None:
                out.append(s)
        return out

    def push(self, name):
        stmt = ast_util.expr_stmt(ast_util.call(self.helper(runtime.push),
                                                [ast_util.name(self.stack), ast_util.name(name)]))
        Anno.PUSH.add_to(stmt, name)
        return stmt

    def pop(self, name):
        stmt = ast_util.assign(name, ast_util.call(self.helper(runtime.pop), [ast_util.name(self.stack)]))
        Anno.POP.add_to(stmt, name)
        return stmt

    # -- reverse sweep
    def rev_block(self, body, nz):
        """The reversed statements of `body`; `nz` (the names whose adjoint
        is possibly nonzero) is updated in place."""
        out = []
        for s in reversed(body):
            out.extend(self.rev_stmt(s, nz))
        return out

    def comment(self, s):
        if not Anno.ORIGIN.exists(s):
            return []       # (statements without an origin of their own carry the def line)
        return self.origin_comment(s, "Grad of: ")

    def zeros(self, name, like=None):
        """A zero cotangent for `name`'s current value: np.zeros_like, or
        sparse_zeros for a (possible) container (batched: zeros_b)."""
        like = like or name
        if not self.batched and name in self.scalar:
            return ast_util.const(0.0)
        if self.batched:
            return ast_util.call(self.helper(rules_batched.zeros_b),
                                 [ast_util.name(like), ast_util.name(self.batch)])
        if name in self.dynamic:
            return ast_util.call(self.helper(runtime.sparse_zeros), [ast_util.name(like)])
        return ast_util.call(ast_util.quote_expr(self.np_name() + ".zeros_like"), [ast_util.name(like)])

    def materialize(self, names):
        return [ast_util.assign(self.adjoint(n), self.zeros(n)) for n in sorted(names)]

    def rev_stmt(self, s, nz):
        if isinstance(s, gast.Expr):
            if Anno.GRAD_OF.of(s) is not None:
                return self.grad_of(s, nz)
            op = Anno.OP.of(s)
            if op is not None and op.kind == "push":
                return self.push_adjoint(s, op, nz)
            return []
        if isinstance(s, gast.If):
            self.last_comment = None
            then_nz, else_nz = set(nz), set(nz)
            body = self.rev_block(s.body, then_nz)
            self.last_comment = None
            orelse = self.rev_block(s.orelse, else_nz)
            merged = then_nz | else_nz
            body += self.materialize(merged - then_nz)
            orelse += self.materialize(merged - else_nz)
            nz.clear()
            nz.update(merged)
            if not body and not orelse:
                return []
            return [ast_util.copy_location(ast_util.if_(s.test, body, orelse), s)]
        if isinstance(s, gast.For) and id(s) in self.checkpointed_loops:
            return checkpointed.reverse(self, s, nz)
        if isinstance(s, (gast.For, gast.While)):
            return self.rev_loop(s, nz)
        if not isinstance(s, gast.Assign):
            return []
        op = Anno.OP.of(s)
        targets = _targets(s)
        code = []
        if any(t in self.active and t in nz for t in targets) or (
                op.kind == "pop" and (op.args[0].id in self.active_stacks or op.args[0].id in self.active)) or \
                self.copied_stack(op, targets):
            code = self.adjoint_code(s, op, targets, nz)
            if code:
                code = self.comment(s) + code
        once = Anno.ASSIGNED_ONCE.of(s, False)
        for t in targets:          # the older value's cotangent is a symbolic zero
            if not once:
                nz.discard(t)
        for t in reversed(targets):
            if t in self.stacked and t not in Anno.FIRST.of(s, ()) and not Anno.NO_SAVE.of(s, False) \
                    and not once:
                code.append(self.pop(t))
        return code

    def rev_loop(self, s, nz):
        """A loop reversed: the reversed body runs as many times, from a
        fixed point of the possibly-nonzero set at its head."""
        snapshot = set(self.namer.used)
        # First guess: the entry set plus the active names the body reads
        # before it assigns them (their cotangents cross iterations); it is
        # the fixed point itself when every guessed name comes out of the
        # body nonzero, which saves generating the body twice.
        guess = {n for n in _exposed(s.body, set()) if n in self.active} - set(nz)
        entry = set(nz) | guess
        while True:
            self.last_comment = None
            state = set(entry)
            body = self.rev_block(s.body, state)
            if state <= entry and not (guess - state):
                break
            if guess - state:       # a guess that does not hold: the least fixed point from the entry set
                entry = set(nz)
                guess = set()
            else:
                entry |= state
            # regenerate with the same names
            self.namer.used = snapshot | set(self.adj.values()) | set(self.injected)
        pre = self.materialize(entry - nz)
        body += self.materialize(entry - state)
        nz.clear()
        nz.update(entry)
        self.last_comment = None
        if not body:
            return pre
        if isinstance(s, gast.For):
            it = ast_util.call(ast_util.name("reversed"), [s.iter])
            return pre + [ast_util.copy_location(ast_util.for_(s.target, it, body), s)]
        it = ast_util.call(ast_util.name("range"), [ast_util.name(Anno.COUNT.of(s))])
        return pre + [ast_util.copy_location(ast_util.for_(ast_util.name("_", store=True), it, body), s)]

    def add_expr(self, adjoint_name, value):
        """`b + value`, or add_cotangents(b, value) for a (possible) container
        (batched: add_cotangents_b, which also adds a list's (B, len, ...)
        array cotangent to its list form entry by entry)."""
        if adjoint_name in self.dynamic_adjoints:
            add = rules_batched.add_cotangents_b if self.batched else runtime.add_cotangents
            return ast_util.call(self.helper(add), [ast_util.name(adjoint_name), value])
        return ast_util.add(ast_util.name(adjoint_name), value)

    def accumulate(self, name, value, nz):
        a = self.adjoint(name)
        if name in nz:
            value = self.add_expr(a, value)
        else:
            nz.add(name)
        return ast_util.assign(a, value)

    def cotangent_or_zeros(self, name, nz):
        if name in self.active and name in nz:
            return ast_util.name(self.adjoint(name))
        return self.zeros(name)

    def densify_call(self, read, like):
        """densify(read, like): the cotangent or zeros (batched: densify_b)."""
        if self.batched:
            return ast_util.call(self.helper(rules_batched.densify_b),
                                 [read, ast_util.name(like), ast_util.name(self.batch)])
        return ast_util.call(self.helper(runtime.densify), [read, ast_util.name(like)])

    def entry(self, read, index):
        """`read[index]`, entry `index` (a constant) of a list's cotangent
        (batched: entry_b, which also reads the (B, len, ...) array a
        rule gives for a list operand)."""
        if self.batched:
            return ast_util.call(self.helper(rules_batched.entry_b), [read, _as_load(index)])
        return gast.Subscript(value=read, slice=_as_load(index), ctx=gast.Load())

    def stack_adjoint(self, stack):
        self.used_stacks.add(stack)
        return self.adjoint(stack)

    def grad_of(self, s, nz):
        """`with sg.insert_grad_of(x) as bx: body` reversed: the body runs
        on the adjoint of x accumulated so far (zeros if none), which is
        then what bx holds (a copy first if the body assigns elements; on a
        stack of cotangents, once per cotangent). Nothing for an inactive x."""
        x, target, body = Anno.GRAD_OF.of(s)
        if x not in self.active:
            return []
        a = self.adjoint(x)
        current = ast_util.name(a) if x in nz else self.zeros(x)
        user = target or self.namer.fresh("_bgrad")
        body = ast_util.clone(body)
        mutates = any(isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store)
                      for n in ast_util.walk(ast_util.module(body)))
        copy_fn = ast_util.quote_expr(self.np_name() + ".array")
        if self.batched:
            k, rows = self.namer.fresh("_k"), self.namer.fresh("_rows")
            read = ast_util.quote_expr("%s[%s]" % (a, k))
            loop = ast_util.for_(ast_util.name(k, store=True),
                                 ast_util.call(ast_util.name("range"), [ast_util.name(self.batch)]),
                                 [ast_util.assign(user, ast_util.call(copy_fn, [read]) if mutates else read)]
                                 + body + [ast_util.expr_stmt(ast_util.call(
                                     ast_util.quote_expr("%s.append" % rows), [ast_util.name(user)]))])
            code = [ast_util.assign(a, current), ast_util.assign(rows, gast.List(elts=[], ctx=gast.Load())),
                    loop, ast_util.assign(a, ast_util.call(ast_util.quote_expr(self.np_name() + ".stack"),
                                                           [ast_util.name(rows)]))]
        else:
            code = [ast_util.assign(user, ast_util.call(copy_fn, [current]) if mutates else current)]
            code += body + [ast_util.assign(a, ast_util.name(user))]
        nz.add(x)
        own = {id(c) for c in body}
        return self.comment(s) + [c if id(c) in own else ast_util.copy_location(c, s) for c in code]

    def copied_stack(self, op, targets):
        """Is this `S = list(res[k])` copying residuals handed in into a
        stack this code also pushes onto (a split reverse sweep re-running
        a checkpointed loop's steps recorded)? S carries cotangents as a
        stack (`active_stacks`), not as an active name; reversed, S's
        cotangent stack holds, element j, the cotangent of the j-th value
        of res[k], and flows on to the residuals through the copy's adjoint as
        for a stack only popped. (Left out, those cotangents were dropped:
        a Hessian through a helper holding a checkpointed loop was wrong
        without a word.)"""
        return (len(targets) == 1 and targets[0] in self.active_stacks and op.kind in ("rule", "copy")
                and any(n in self.active for n in op.operand_names()))

    def push_adjoint(self, s, op, nz):
        """push(S, x) reversed: x's cotangent comes off bS."""
        stack, x = op.args
        if stack.id not in self.active_stacks:
            return []
        read = ast_util.call(self.helper(runtime.pop), [ast_util.name(self.stack_adjoint(stack.id))])
        if not (isinstance(x, gast.Name) and x.id in self.active):
            return [ast_util.expr_stmt(read)]     # (keeps bS in step with S: see activity.py)
        return self.comment(s) + [self.accumulate(x.id, self.densify_call(read, x.id), nz)]

    def adjoint_code(self, s, op, targets, nz):
        t = targets[0]
        if op.kind == "pop":
            # x = pop(S) reversed: x's cotangent (None for a symbolic zero) goes on bS
            stack = op.args[0].id
            value = ast_util.name(self.adjoint(t)) if t in nz and t in self.active else ast_util.const(None)
            return [ast_util.expr_stmt(ast_util.call(self.helper(runtime.push),
                                                     [ast_util.name(self.stack_adjoint(stack)), value]))]
        if op.kind == "copy":
            src = op.args[0]
            if isinstance(src, gast.Name) and src.id in self.active:
                return [self.accumulate(src.id, ast_util.name(self.adjoint(t)), nz)]
            return []
        if op.kind == "rule":
            return self.rule_code(s, op, t, nz)
        if op.kind == "call":
            return self.call_code(s, op, targets, nz)
        if op.kind == "opaque":
            self.opaque(s, op)
            return []
        if op.kind == "pack":
            v = s.value
            pairs = zip(v.keys, v.values) if isinstance(v, gast.Dict) else (
                (ast_util.const(k), e) for k, e in enumerate(v.elts))
            code = []
            for key, elt in pairs:
                read = gast.Subscript(value=ast_util.name(self.adjoint(t)), slice=_as_load(key), ctx=gast.Load()) \
                    if isinstance(v, gast.Dict) else self.entry(ast_util.name(self.adjoint(t)), key)
                if isinstance(elt, gast.Name) and elt.id in self.active:
                    code.append(self.accumulate(elt.id, self.densify_call(read, elt.id), nz))
                elif isinstance(elt, gast.Name) and elt.id in self.active_stacks:
                    # a stack returned in a container (the residuals of a split forward): its cotangent
                    # stack starts as a copy of the cotangent list given for it, element k the cotangent
                    # of the k-th value pushed, so the pops reversing the pushes take them last first
                    copy = ast_util.call(self.helper(containers.as_list), [self.densify_call(read, elt.id)])
                    code.append(ast_util.assign(self.stack_adjoint(elt.id), copy))
            return code
        return []

def _as_load(e):
    return ast_util.set_load(e) if isinstance(e, gast.AST) else e


def transform(fdef, ctx):
    """Generate the forward and reverse sweeps of the ANF'd `fdef` for the
    active names `ctx.active`. Returns a `Sweeps`."""
    ret = fdef.body[-1]
    outputs = [e.id for e in ret.value.elts] if isinstance(ret.value, gast.Tuple) else [ret.value.id]
    gen = ReverseGenerator(ctx, fdef, ctx.active, outputs)
    for n in ctx.facts.walk(fdef):
        if Anno.HELPER.of(n, False):
            n.id = gen.inject(n.id, Anno.CALLEE.of(n))
    ctx.facts.walked = None     # (the sweeps below take its statements)
    gen.dynamic = ctx.facts.dynamic
    gen.scalar = ctx.facts.scalar
    gen.same_shape = ctx.facts.same_shape
    gen.dynamic_adjoints = {gen.adjoint(n) for n in gen.dynamic if n in ctx.active}
    gen.used_stacks = set()
    if gen.batched:
        gen.batch = gen.namer.fresh("_B")
    body = fdef.body[:-1]
    gen.prepare_calls(body)
    gen.mark_first_definitions(body, list(ctx.facts.inputs))
    fwd = gen.fwd_block(body)
    # A stack this code pops but never pushes (residuals handed in and copied, S = list(res[k]))
    # is active like any value: its cotangent stack starts empty, receives a cotangent (None for
    # a symbolic zero) for every value popped, and flows on to the residuals through the copy's
    # adjoint, element k the cotangent of the k-th value pushed. It is never a symbolic zero.
    popped = {Anno.OP.of(n).args[0].id for n in ast_util.statements(body)
              if isinstance(n, gast.Assign) and Anno.OP.of(n) is not None and Anno.OP.of(n).kind == "pop"}
    popped &= ctx.active
    gen.used_stacks |= popped
    seeded = set(activity.seeded_outputs(fdef, ctx))
    nz = {o for o in outputs if o in ctx.active and o in seeded} | popped
    seeds = {o: gen.adjoint(o) for o in outputs}
    rev = gen.rev_block(body, nz)
    # cotangent stacks of stacks being differentiated again start empty
    init = [ast_util.assign(gen.adjoint(s), gast.List(elts=[], ctx=gast.Load())) for s in sorted(gen.used_stacks)]
    # a seed in its output's shape (a default 1.0 for an array output), for
    # rules that read a cotangent's shape; a no-op for a seed of the right shape
    unbroadcast = gen.helper(rules_batched.unbroadcast_b if gen.batched else helpers.unbroadcast)
    shapes = [ast_util.assign(seeds[o], ast_util.call(unbroadcast, [ast_util.name(seeds[o]), ast_util.name(o)]))
              for o in outputs if o in ctx.active and o in seeded and o not in gen.dynamic
              and (gen.batched or o not in gen.scalar)]
    if gen.batched:     # the batch size, read off the seeds
        shapes.insert(0, ast_util.assign(gen.batch, ast_util.call(
            gen.helper(rules_batched.batch_size),
            [ast_util.tuple_([ast_util.name(seeds[o]) for o in outputs])])))
    rev = init + shapes + rev
    # the names the reverse sweep assigns that the forward sweep does not (adjoints, temporaries)
    stored_fwd = ast_util.names_stored(ast_util.module(fwd))
    rev_locals = ast_util.names_stored(ast_util.module(rev)) - stored_fwd
    sweeps = Sweeps(fwd, rev, outputs, seeds, gen.adj, nz, gen.rev_locals | rev_locals | set(seeds.values()),
                    gen.injected, first_defined=gen.first_defined)
    gen.np_name()           # the generated code may name `np` (zeros_like)
    sweeps.zeros, sweeps.inject, sweeps.namer = gen.zeros, gen.inject, gen.namer
    sweeps.dynamic, sweeps.batched, sweeps.scalar = gen.dynamic, gen.batched, set(gen.scalar)
    sweeps.shape_sources = dict(ctx.facts.shape_sources)
    # arrays read as globals or closure cells: the split forward returns them with the residuals (the
    # tape then keeps their values at the call, whatever the program writes into them afterwards)
    module = ast_util.module(fdef.body)
    loaded, stored = ast_util.names_loaded_and_stored(module)
    read = loaded - stored - set(ctx.inputs)
    for n in sorted(read):
        found, value = ctx.namespace.lookup(n)
        if found and type(value) is np.ndarray:
            sweeps.free_arrays.add(n)
    _container_writes_keep_no_dtype(sweeps.rev_body, gen)
    _prune_stack(sweeps, gen)
    return sweeps


def _container_writes_keep_no_dtype(stmts, gen):
    """value_cotangent(g, index, v, x) reads x only for its dtype (an
    integer array passes no derivative to v): where x may be a list or dict
    (a name of `gen.dynamic`, which is never saved as ShapeOf), the argument
    is dropped, so the reverse sweep does not keep every version of the
    container."""
    aliases = {alias for alias, obj in gen.injected.items() if obj is containers.value_cotangent}
    if not aliases or not gen.dynamic:
        return
    for s in stmts:
        for n in ast_util.walk(s):
            if (isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id in aliases
                    and len(n.args) == 4 and isinstance(n.args[3], gast.Name) and n.args[3].id in gen.dynamic):
                del n.args[3]


def _exposed(stmts, assigned):
    """The names `stmts` may read before assigning them (upward-exposed
    uses), given the names `assigned` before them."""
    out = set()
    assigned = set(assigned)
    for s in stmts:
        if isinstance(s, gast.If):
            out |= ast_util.names_loaded(s.test) - assigned
            out |= _exposed(s.body, assigned) | _exposed(s.orelse, assigned)
            assigned |= ast_util.names_stored(ast_util.module(s.body)) & ast_util.names_stored(
                ast_util.module(s.orelse))
        elif isinstance(s, (gast.For, gast.While)):
            header = s.iter if isinstance(s, gast.For) else s.test
            out |= ast_util.names_loaded(header) - assigned
            out |= _exposed(s.body, assigned)
        else:
            out |= ast_util.names_loaded(s) - assigned
            assigned |= ast_util.names_stored(s)
    return out


def _shape_positions(injected):
    """{alias: argument positions} of the helpers in generated code that
    read only the shape (and dtype) of those arguments."""
    table = {helpers.unbroadcast: (1,), helpers.unreduce: (1,), helpers.reduction_size: (0, 1),
             rules_batched.unbroadcast_b: (1,), rules_batched.unreduce_b: (1,), containers.value_cotangent: (3,),
             rules_batched.value_cotangent_b: (3,)}
    return {alias: table[obj] for alias, obj in injected.items() if callable(obj) and obj in table}


def _loads(s, shape_fns):
    """(names `s` reads, names it reads other than as a shape argument)."""
    shape_args = set()
    names, full = set(), set()
    for n in ast_util.walk(s):
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id in shape_fns:
            shape_args.update(id(n.args[i]) for i in shape_fns[n.func.id] if i < len(n.args))
        elif isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            names.add(n.id)
            if id(n) not in shape_args:
                full.add(n.id)
    return names, full


def _read_after_restore(stmts, shape_fns=None):
    """The names the reverse sweep reads where an older value of theirs may
    have been restored already: after a pop of the name, or anywhere in a
    loop that pops it. A read before any restore sees the final forward
    value, which needs no saving (to-be-recorded analysis, by position).
    Returns (those names, those of them read other than for their shape)."""
    needed, full = set(), set()
    shape_fns = shape_fns or {}

    def pops(s):        # (POP marks statements only)
        return {Anno.POP.of(n) for n in ast_util.statements([s]) if Anno.POP.of(n) is not None}

    def read(node, restored):
        names, whole = _loads(node, shape_fns)
        needed.update(names & restored)
        full.update(whole & restored)

    def scan(block, restored):
        restored = set(restored)
        for s in block:
            if isinstance(s, (gast.For, gast.While)):
                read(s.iter if isinstance(s, gast.For) else s.test, restored)
                inner = pops(s)
                scan(s.body, restored | inner)
                restored |= inner
            elif isinstance(s, gast.If):
                read(s.test, restored)
                scan(s.body, restored)
                scan(s.orelse, restored)
                restored |= pops(s)
            else:
                read(s, restored)
                popped = Anno.POP.of(s)
                if popped is not None:
                    restored.add(popped)
    scan(stmts, set())
    return needed, full


def _prune_stack(sweeps, gen):
    """Keep only the pushes and pops of names the reverse sweep reads after
    an older value may have been restored."""
    checkpointed.prune_saves(gen, sweeps.fwd_body, sweeps.rev_body)
    read, full = _read_after_restore(sweeps.rev_body, _shape_positions(gen.injected))

    def filt(stmts, anno):
        out = []
        for s in stmts:
            name = anno.of(s)
            if name is not None and name not in read:
                continue
            if anno is Anno.PUSH and name is not None and name not in full and name not in gen.dynamic:
                # read back only for its shape: save the shape, not the array
                s.value.args[1] = ast_util.call(gen.helper(helpers.ShapeOf), [ast_util.name(name)])
            if isinstance(s, gast.If):
                s.body = filt(s.body, anno) or [ast_util.pass_()]
                s.orelse = filt(s.orelse, anno)
                if all(isinstance(x, gast.Pass) for x in s.body) and not s.orelse and anno is Anno.POP:
                    continue
            elif isinstance(s, (gast.For, gast.While)):
                s.body = filt(s.body, anno) or [ast_util.pass_()]
                if all(isinstance(x, gast.Pass) for x in s.body) and anno is Anno.POP:
                    continue
            out.append(s)
        return out
    sweeps.rev_body = filt(filt(sweeps.rev_body, Anno.POP), Anno.PUSH)     # (steps re-recorded: checkpointed.py)
    sweeps.fwd_body = filt(sweeps.fwd_body, Anno.PUSH)
    pushed = set()
    for n in ast_util.statements(sweeps.fwd_body):      # (PUSH marks statements only)
        if Anno.PUSH.of(n) is not None:
            pushed.add(Anno.PUSH.of(n))
    sweeps.pushed = pushed
    sweeps.stack = gen.stack if pushed else None
