"""The reverse-mode generator's adjoints of calls of user functions (a mixin
of reverse.py's ReverseGenerator).

Requires: the generator's fields (`ctx`, `active`, `stacked`, `namer`,
`inject`, ...). Guarantees: a call of a user function is reversed in split
mode (`g_out, g_res = g_fwd(...)` in the forward sweep, `bx, = g_bwd(g_res,
by)` in the reverse sweep: user code is never re-run), a custom_gradient or
sg.checkpoint call jointly by its VJP (`g(...)` in the forward sweep,
`bx = g_vjp(..., by)` in the reverse sweep), and so is a recursive call
when the context asks for it (`ctx.joint_recursion`: sg.jit's code, in
which split residuals holding those of a call of the same function would
be a recursive type; Tapenade's joint call-tree reversal).
"""

import gast

from .. import runtime
from ..rules.helpers import batched as rules_batched
from ..syntax import ast_util
from ..syntax.anno import Anno
from . import ops


def _as_load(e):
    return ast_util.set_load(ast_util.clone(e)) if isinstance(e, gast.AST) else e


def _targets(stmt):
    t = stmt.targets[0]
    return [e.id for e in t.elts] if isinstance(t, gast.Tuple) else [t.id]


class CallAdjoints:
    def prepare_calls(self, body):
        """Each call of a user function with active arguments and an active
        result is reversed in split mode: the forward sweep calls the
        callee's split forward, which returns its outputs and its residuals
        (`y, g_res = g_fwd(x)`), and the reverse sweep hands the residuals
        to its split adjoint (`bx, = g_bwd(g_res, by)`). The callee's code
        runs once, in the forward sweep. (A custom_gradient function is
        reversed jointly through its VJP, as is a function wrapped in
        sg.checkpoint: re-run on purpose; and, under `ctx.joint_recursion`
        (sg.jit), a call whose split residuals would hold those of a call
        of the same function: `recursive_residuals` of its artefact, or
        the Pending of a recursion. Other such calls set
        `facts.recursive_residuals`.) `body` is changed in place."""
        out = []
        for s in body:
            if isinstance(s, gast.If):
                self.prepare_calls(s.body)
                self.prepare_calls(s.orelse)
            elif isinstance(s, (gast.For, gast.While)):
                self.prepare_calls(s.body)
            elif isinstance(s, gast.Assign) and Anno.OP.of(s).kind == "call":
                op = Anno.OP.of(s)
                mask = tuple(isinstance(e, gast.Name) and e.id in self.active for e in op.args)
                targets = _targets(s)
                if any(mask) and any(t in self.active for t in targets):
                    base = getattr(op.callee, "__name__", "g")
                    base = "lambda" if base == "<lambda>" else base
                    Anno.MASK.add_to(s, mask)
                    callee = None if op.custom or op.checkpoint else self.ctx.split_callee(op, mask)
                    recursive = getattr(callee, "recursive_residuals", False)
                    if callee is None or recursive and self.ctx.joint_recursion:
                        # (custom_gradient; sg.checkpoint(f): f is re-run in the reverse sweep by its
                        # joint VJP, trading time for the memory of its residuals; for sg.jit, a call
                        # whose residuals would hold a recursive call's: their type would contain itself)
                        Anno.VJP.add_to(s, self.ctx.vjp_callee(op, mask))
                        Anno.VJP_NAME.add_to(s, self.inject(base + "_vjp", Anno.VJP.of(s)))
                    else:
                        if recursive:
                            self.ctx.facts.recursive_residuals = True
                        out.extend(self.split_call(s, op, mask, targets, base, callee))
            out.append(s)
        body[:] = out

    def split_call(self, s, op, mask, targets, base, callee):
        """Rewrite the call statement `s` to call the split forward of
        `callee` (the callee's artefact, see prepare_calls); returns the
        statements to put before it (one, when `s` keeps its targets as a
        glue assignment)."""
        fwd = self.inject(base + "_fwd", callee.fwd)
        Anno.VJP.add_to(s, callee.bwd_fn)
        Anno.VJP_NAME.add_to(s, self.inject(base + "_bwd", callee.bwd_fn))
        res = self.namer.fresh(base + "_res")
        Anno.RESIDUALS.add_to(s, res)
        self.dynamic = self.dynamic | {res}
        if any(t in self.stacked for t in targets):
            self.stacked.add(res)
        call = ast_util.call(ast_util.name(fwd), [_as_load(ast_util.clone(a)) for a in op.args])
        if len(targets) == op.n_outputs:
            s.targets = [ast_util.tuple_([ast_util.name(t, True) for t in targets + [res]], store=True)]
            s.value = call
            return []
        # the callee's outputs do not match the targets one to one (a k-tuple kept whole):
        # `o_1, ..., o_k, g_res = g_fwd(...)`, then `z = (o_1, ..., o_k)` (`z = o_1`)
        outs = [self.namer.fresh("%s_out" % base) for _ in range(op.n_outputs)]
        first = ast_util.copy_location(ast_util.assign(
            ast_util.tuple_([ast_util.name(t, True) for t in outs + [res]], store=True), call), s)
        Anno.OP.add_to(first, ops.Op("nondiff", source=base))
        if any(t in self.stacked for t in targets):
            self.stacked.update(outs)
        s.value = ast_util.name(outs[0]) if len(outs) == 1 else ast_util.tuple_([ast_util.name(o) for o in outs])
        return [first]

    def call_code(self, s, op, targets, nz):
        """The adjoint of a call of a user function: its split adjoint on the
        residuals its split forward returned (prepare_calls), or the VJP of
        a custom_gradient function."""
        if not Anno.VJP.exists(s):
            return []
        res = Anno.RESIDUALS.of(s)
        targets = [t for t in targets if t != res]
        cots = [self.cotangent_or_zeros(tname, nz) for tname in targets]
        if len(targets) == 1 and op.n_outputs > 1:
            # a k-tuple kept whole (z = pair(x, y), read z[0]): its cotangent is a list of k,
            # passed on one output cotangent each (zeros where None)
            whole, t = cots[0], targets[0]
            cots = []
            for k in range(op.n_outputs):
                read = self.entry(ast_util.clone(whole), ast_util.const(k))
                like = ast_util.item(ast_util.name(t), k)
                cots.append(ast_util.call(self.helper(rules_batched.densify_b), [read, like, ast_util.name(
                    self.batch)]) if self.batched else ast_util.call(self.helper(runtime.densify), [read, like]))
        elif len(targets) > 1 and op.n_outputs == 1:
            # one list or tuple returned (not a display) and unpacked by the caller (W, b = unflatten(v)):
            # its cotangent is the list of the targets' cotangents
            cots = [ast_util.list_(cots) if hasattr(ast_util, "list_") else gast.List(elts=cots, ctx=gast.Load())]
        active_params = [e for e, m in zip(op.args, Anno.MASK.of(s)) if m]
        temps = [self.namer.fresh("_" + self.adjoint(e.id)) for e in active_params]
        self.rev_locals |= set(temps)
        if res is not None:     # split: g_bwd(g_res, *cotangents) -> a tuple, one per active input
            call = ast_util.call(ast_util.name(Anno.VJP_NAME.of(s)), [ast_util.name(res)] + cots)
            code = [ast_util.assign(ast_util.tuple_([ast_util.name(t, True) for t in temps], store=True), call)]
        else:                   # joint: g_vjp(*args, *cotangents) -> the one cotangent, or a tuple
            call = ast_util.call(ast_util.name(Anno.VJP_NAME.of(s)),
                                 [_as_load(ast_util.clone(a)) for a in op.args] + cots)
            code = [ast_util.assign(temps[0], call) if len(temps) == 1 else
                    ast_util.assign(ast_util.tuple_([ast_util.name(t, True) for t in temps], store=True), call)]
        for e, tmp in zip(active_params, temps):
            code.append(self.accumulate(e.id, ast_util.name(tmp), nz))
        return code
