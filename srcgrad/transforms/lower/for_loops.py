"""Lowering: `for` loops over sequences become index loops.

Requires: comprehensions (no comprehension is left to lower). Guarantees:
every `for` loop iterates over `range(...)` with a Name target. A loop over
a sequence (array rows, list, tuple), `zip`, `enumerate`, `reversed`,
`zip(*seqs)` or `dict.items()/keys()/values()` becomes
`_seq = seq; for _i in range(len(_seq)): t = _seq[_i]; ...`, so the read of
an element is differentiated like any indexing; `zip` and `enumerate` are
taken apart, each sequence indexed directly (`for a, b in zip(*seqs)` reads
`seqs[0][i]`, `seqs[1][i]`), and a loop over a name that may hold a dict or a
set is checked at run time (`check_loop_sequence`). `for i in
reversed(range(...))` (generated reverse sweeps) is a range with reversed
bounds. A loop variable assigned elsewhere too, or read after its loop, is
assigned from a counter of the loop's own (`for _i in range(n): i = _i`),
so that its values are saved and restored as any assignment's. A loop over
sequences carries the OVER annotation (the names holding the sequences, also
those of zip and enumerate), so that resolve.py can unroll it over a known
list of objects.
"""
import builtins

import gast

from ...errors import fail
from ...runtime import revolve
from ...runtime import syntax as runtime_syntax
from ...syntax import ast_util
from ...syntax.anno import Anno
from ...syntax.templates import replace, replace_expr
from ..base import inherit_origin
from .common import Block, builtin_call, helper, is_range


class _ForLoops(Block):

    def __init__(self, ctx, fdef):
        super().__init__(ctx)
        # how often each name is stored and loaded in the whole function (loop variables below)
        self.stores, self.loads = {}, {}
        for n in ast_util.walk(fdef):
            if isinstance(n, gast.Name):
                table = self.loads if isinstance(n.ctx, gast.Load) else self.stores
                table[n.id] = table.get(n.id, 0) + 1

    def shared_target(self, node):
        """Is the loop variable of `for i in range(...)` assigned anywhere
        else (another loop, the body, a parameter) or read after the loop?
        Then the loop iterates a counter of its own and assigns `i = _i`,
        an assignment the reverse sweep saves and restores like any other:
        the adjoint of `x[i]` after an inner loop that reused `i` reads the
        inner loop's last value, as Python does."""
        name = node.target.id
        inside = sum(1 for n in ast_util.walk(node) if isinstance(n, gast.Name) and n.id == name
                     and isinstance(n.ctx, gast.Load))
        if not self.loads.get(name, 0):
            return False        # (never read: its values do not matter)
        return self.stores.get(name, 0) > 1 or self.loads.get(name, 0) > inside or name in self.ctx.parsed.params

    def visit_For(self, node):
        snapshots = self.checkpointed(node)
        if snapshots is not None:
            return self.checkpointed_loop(node, snapshots)
        self.generic_visit(node)
        it = node.iter
        if is_range(it, self.ctx) and isinstance(node.target, gast.Name) and not it.keywords:
            if self.shared_target(node):
                counter = ast_util.name(self.ctx.namer.fresh("_" + node.target.id))
                node.body = replace("T = C", T=node.target, C=counter) + node.body
                node.target = ast_util.name(counter.id, store=True)
            return node
        if (builtin_call(self.ctx, it, "reversed") and len(it.args) == 1 and is_range(it.args[0], self.ctx)
                and isinstance(node.target, gast.Name) and not it.args[0].keywords and not it.keywords):
            # for i in reversed(range(...)) (generated reverse sweeps): a range with reversed bounds
            r = ast_util.name(self.ctx.namer.fresh("_reversed"))
            pre = replace("R = RANGE[::-1]", R=r, RANGE=it.args[0])
            node.iter = replace_expr("RANGE(R.start, R.stop, R.step)", RANGE=_range(self.ctx), R=r)
            return pre + [node]
        return _IndexLoop(self.ctx, node).lower()


    def checkpointed(self, node):
        """`for t in sg.checkpointed(it, snapshots=s)`: the snapshots
        expression (after taking the call off the loop: `for t in it`), or
        None for another loop."""
        it = node.iter
        if not (isinstance(it, gast.Call) and isinstance(it.func, (gast.Name, gast.Attribute))
                and self.ctx.static(it.func) is revolve.checkpointed):
            return None
        bound = dict(zip(("iterable", "snapshots"), it.args))
        for k in it.keywords:
            if k.arg in bound or k.arg not in ("iterable", "snapshots"):
                bound = {}
                break
            bound[k.arg] = k.value
        if len(it.args) > 2 or "iterable" not in bound or any(isinstance(a, gast.Starred) for a in it.args):
            fail(self.ctx.parsed, node, "this form of sg.checkpointed() in a for loop",
                 "write `for t in sg.checkpointed(iterable, snapshots=s):`")
        node.iter = bound["iterable"]
        return bound.get("snapshots", ast_util.const(None))

    def checkpointed_loop(self, node, snapshots):
        """The loop lowered as any other, its (index) loop annotated with
        CHECKPOINTED: the snapshots constant, a name the function never
        assigns (a parameter), or else a fresh name assigned the expression
        before the loop (evaluated once, as the call's argument would be;
        anf.py may rename the names the function assigns, not the
        annotation)."""
        pre = []
        params = set(self.ctx.parsed.params)
        if isinstance(snapshots, gast.Name) and self.stores.get(snapshots.id, 0) <= (snapshots.id in params):
            pass        # a parameter or a free name the function never assigns: read as it is
        elif not isinstance(snapshots, gast.Constant):
            name = self.ctx.namer.fresh("n_snapshots")
            pre = replace("S = E", S=ast_util.name(name, store=True), E=snapshots)
            snapshots = ast_util.name(name)
        lowered = self.visit_For(node)
        lowered = lowered if isinstance(lowered, list) else [lowered]
        Anno.CHECKPOINTED.add_to(lowered[-1], snapshots)
        return pre + lowered


class _IndexLoop:
    """`for target in it: body` as a loop over indices (one loop)."""

    def __init__(self, ctx, loop):
        self.ctx, self.loop = ctx, loop
        self.pre = []           # statements before the loop
        self.reads = []         # (target, the element read at the index)
        self.lengths = []       # the lengths of the sequences read
        self.sequences = []     # the names holding them

    def lower(self):
        s, namer = self.loop, self.ctx.namer
        it = s.iter
        i = ast_util.name(namer.fresh("_i"))
        if builtin_call(self.ctx, it, "reversed") and len(it.args) == 1 and not it.keywords:
            inner = it.args[0]
            seq = ast_util.name(namer.fresh("_seq"))
            listed = builtin_call(self.ctx, inner, "zip", "enumerate", "range")
            self.pre += replace("S = list(A)" if listed else "S = A",
                                S=seq, A=inner)
            self.lengths.append(replace_expr("len(S)", S=seq))
            index = replace_expr("len(S) - 1 - I", S=seq, I=i)
            self.reads.append((s.target, replace_expr("S[K]", S=seq, K=index)))
        else:
            self.read(s.target, it, i)
        count = self.lengths[0] if len(self.lengths) == 1 else ast_util.call(ast_util.name("min"), self.lengths)
        body = [r for t, value in self.reads for r in replace("T = V", T=t, V=value)] + s.body
        loop = ast_util.for_(ast_util.name(i.id, store=True),
                             replace_expr("RANGE(N)", RANGE=_range(self.ctx), N=count), body)
        if self.sequences and len(self.sequences) == len(self.lengths) and not builtin_call(self.ctx, it, "reversed"):
            Anno.OVER.add_to(loop, list(self.sequences))     # for t in seq (zip, enumerate): t = seq[i]
        return self.pre + [loop]

    def read(self, target, it, index):
        """What `for target in it` reads at position `index` (zip and
        enumerate taken apart, so each sequence is indexed directly)."""
        parsed, namer, s = self.ctx.parsed, self.ctx.namer, self.loop
        if builtin_call(self.ctx, it, "zip") and not it.keywords and any(isinstance(a, gast.Starred) for a in it.args):
            # zip(*seqs): the sequences are the elements of seqs
            if len(it.args) != 1:
                fail(parsed, s, "zip() of a starred argument and other arguments in a for loop")
            if not isinstance(target, gast.Tuple) or any(isinstance(e, gast.Starred) for e in target.elts):
                fail(parsed, s, "a zip(*...) loop whose target does not unpack every sequence")
            seqs = ast_util.name(namer.fresh("_zipped"))
            n = len(target.elts)
            check = replace("S = A\nif len(S) != N:\n    raise ValueError(MESSAGE % len(S))", S=seqs,
                            A=it.args[0].value, N=ast_util.const(n),
                            MESSAGE=ast_util.const("zip(*...) in a for loop: %%d sequences for %d targets" % n))
            inherit_origin(check[1].test, s)      # (a check of the user's loop, not control flow of ours)
            self.pre += check
            for k, t in enumerate(target.elts):
                self.read(t, replace_expr("S[K]", S=seqs, K=ast_util.const(k)), index)
            return
        if builtin_call(self.ctx, it, "zip") and not it.keywords and isinstance(target, gast.Name):
            # for pair in zip(a, b): each sequence read into a temporary, pair = (a_i, b_i)
            parts = [namer.fresh("_item") for _ in it.args]
            for t, a in zip(parts, it.args):
                self.read(ast_util.name(t, store=True), a, index)
            self.reads.append((target, ast_util.tuple_([ast_util.name(t) for t in parts])))
            return
        if builtin_call(self.ctx, it, "zip") and not it.keywords:
            if not isinstance(target, gast.Tuple) or len(target.elts) != len(it.args):
                fail(parsed, s, "a zip loop whose target does not unpack every sequence")
            for t, a in zip(target.elts, it.args):
                self.read(t, a, index)
            return
        if builtin_call(self.ctx, it, "enumerate") and len(it.args) == 1 and \
                [k.arg for k in it.keywords] in ([], ["start"]):
            if not isinstance(target, gast.Tuple) or len(target.elts) != 2:
                fail(parsed, s, "an enumerate loop whose target is not (index, value)")
            start = it.keywords[0].value if it.keywords else ast_util.const(0)
            self.reads.append((target.elts[0], replace_expr("I + START", I=index, START=start)))
            self.read(target.elts[1], it.args[0], index)
            return
        if (isinstance(it, gast.Call) and isinstance(it.func, gast.Attribute) and not it.args
                and it.func.attr in ("items", "keys", "values")):
            seq, keys = ast_util.name(namer.fresh("_dict")), ast_util.name(namer.fresh("_keys"))
            self.pre += replace("S = A\nK = list(S)", S=seq, A=it.func.value, K=keys)
            self.lengths.append(replace_expr("len(K)", K=keys))
            key = replace_expr("K[I]", K=keys, I=index)
            if it.func.attr == "items":
                if not isinstance(target, gast.Tuple) or len(target.elts) != 2:
                    fail(parsed, s, "an items() loop whose target is not (key, value)")
                self.reads.append((target.elts[0], key))
                self.reads.append((target.elts[1], replace_expr("S[K]", S=seq, K=target.elts[0])))
            elif it.func.attr == "keys":
                self.reads.append((target, key))
            else:
                self.reads.append((target, replace_expr("S[KEY]", S=seq, KEY=key)))
            return
        if isinstance(it, gast.Call) and builtin_call(self.ctx, it, "zip", "enumerate", "reversed"):
            fail(parsed, s, "this form of %s() in a for loop" % it.func.id)
        seq = ast_util.name(namer.fresh("_seq"))
        self.pre += replace("S = list(A)" if is_range(it, self.ctx) else "S = A", S=seq, A=it)
        if isinstance(it, (gast.Name, gast.Attribute)):
            # a name may hold a dict or a set, which the index loop cannot follow
            filename, lineno, col = parsed.origin(s)       # (a tuple of its own: one helper per check)
            self.pre += replace("CHECK(S, ORIGIN)", S=seq,
                                CHECK=helper(runtime_syntax.check_loop_sequence, "check_loop_sequence"),
                                ORIGIN=helper((filename, lineno, col), "loop_origin"))
        self.lengths.append(replace_expr("len(S)", S=seq))
        self.reads.append((target, replace_expr("S[I]", S=seq, I=index)))
        self.sequences.append(seq.id)


def _range(ctx):
    """The Name an index loop calls to iterate: `range`, or the builtin
    itself under another name where the function's `range` is not it (a
    local, a parameter, a global shadowing it)."""
    if "range" in ctx.local_fns:
        fail(ctx.parsed, ctx.parsed.node, "a local function named range (it shadows the builtin the compiled "
             "loop is written with)", "rename the local function")
    if "range" in ctx.locals or ctx.static(ast_util.name("range")) is not builtins.range:
        return helper(builtins.range, "range")
    ctx.parsed.assumed_builtins.add("range")      # (a global range later makes the parse stale)
    return ast_util.name("range")


def transform(fdef, ctx):
    fdef.body = _ForLoops(ctx, fdef).visit_block(fdef.body)
    return fdef
