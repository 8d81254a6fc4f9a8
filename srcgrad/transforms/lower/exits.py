"""Lowering: `break`, `continue` and early `return` become flags.

Requires: mutations (the last of the other lowerings: this one guards the
statements they leave). Guarantees: no `break` or `continue` is left, and
one `return`, the function's last statement (the AutoGraph/Tangent
construction: Moldovan et al., "AutoGraph: Imperative-style Coding with
Graph-based Performance", 2019):
- `break` and `continue` set a flag (`_break`, `_continue`), `return e`
  assigns e to `_retval` (`_retval0, _retval1, ...` when every return gives
  a k-tuple) and sets `_return`;
- the statements after one that may set a flag run under `if not (flags):`;
- a loop that can be left early is a `while` loop testing the flags (a
  `for i in range(...)` loop becomes `_range = range(...); _k = 0; while
  _k < len(_range) and not (flags): i = _range[_k]; _k = _k + 1; ...`);
- the function ends with `return _retval`.
The tests it generates carry CONDITION.
"""
import gast

from ...errors import fail
from ...syntax import ast_util
from ...syntax.anno import Anno
from ...syntax.templates import replace, replace_expr
from ..base import inherit_origin
from .common import Block


def _jumps(stmts, kinds):
    """Does `stmts` contain a statement of `kinds` (not counting break and
    continue inside nested loops)?"""
    def walk(s, in_loop):
        if isinstance(s, gast.Return) and gast.Return in kinds:
            return True
        if isinstance(s, (gast.Break, gast.Continue)) and type(s) in kinds and not in_loop:
            return True
        if isinstance(s, (gast.For, gast.While)):
            return any(walk(c, True) for c in s.body)
        if isinstance(s, gast.If):
            return any(walk(c, in_loop) for c in s.body + s.orelse)
        return False
    return any(walk(s, False) for s in stmts)


def _none_of(flags):
    """The test `not (a or b ...)` of the flag names `flags`, in order."""
    names = [ast_util.name(f) for f in flags]
    return replace_expr("not FLAGS", FLAGS=names[0] if len(names) == 1 else ast_util.bool_op(gast.Or(), names))


class _Exits(Block):
    """Exits in one block: `ret` = (flag, value names) when the function
    returns early, else None; `loop` = (break flag, continue flag) of the
    loop whose body this is (a flag None when unused), else None."""

    def __init__(self, ctx, ret, loop=None):
        super().__init__(ctx)
        self.ret, self.loop = ret, loop

    def visit_block(self, stmts):
        out = []
        for k, s in enumerate(stmts):
            ends = self.ends(s)
            new = self.visit(s)
            out.extend(new if isinstance(new, list) else [new])
            if ends and k + 1 < len(stmts):
                rest = self.visit_block(stmts[k + 1:])
                test = Anno.CONDITION.add_to(_none_of(sorted(ends)), True)
                guard = inherit_origin(ast_util.if_(test, [], []), stmts[k + 1])
                guard.body = rest
                out.append(guard)
                return out
        return out

    def ends(self, s):
        """The flags statement `s` may set, ending its block."""
        loop, ret = self.loop, self.ret
        if isinstance(s, gast.Break):
            return {loop[0]} if loop is not None else set()
        if isinstance(s, gast.Continue):
            return {loop[1]}
        if isinstance(s, gast.Return):
            return {ret[0]} if ret is not None else set()
        if isinstance(s, gast.If):
            flags = set()
            if loop is not None:
                if _jumps([s], {gast.Break}):
                    flags.add(loop[0])
                if _jumps([s], {gast.Continue}):
                    flags.add(loop[1])
            if ret is not None and _jumps([s], {gast.Return}):
                flags.add(ret[0])
            return flags
        if isinstance(s, (gast.For, gast.While)):
            return {ret[0]} if ret is not None and _jumps(s.body, {gast.Return}) else set()
        return set()

    def visit_Break(self, node):
        if self.loop is None:
            fail(self.ctx.parsed, node, "break outside a loop")
        return replace("FLAG = True", FLAG=ast_util.name(self.loop[0]))

    def visit_Continue(self, node):
        return replace("FLAG = True", FLAG=ast_util.name(self.loop[1]))

    def visit_Return(self, node):
        if self.ret is None:
            return node
        flag, values = self.ret
        if node.value is None:
            fail(self.ctx.parsed, node, "return without a value")
        parts = node.value.elts if len(values) > 1 else [node.value]
        new = [a for v, e in zip(values, parts) for a in replace("V = E", V=ast_util.name(v), E=e)]
        for a in new:
            # (the reverse sweep need not restore None, which sg.jit could not keep on a typed stack)
            Anno.ASSIGNED_ONCE.add_to(a, True)
        return new + replace("FLAG = True", FLAG=ast_util.name(flag))

    def visit_While(self, node):
        return self.visit_loop(node)

    visit_For = visit_While

    def visit_loop(self, node):
        namer, ret = self.ctx.namer, self.ret
        has_break = _jumps(node.body, {gast.Break})
        has_cont = _jumps(node.body, {gast.Continue})
        has_ret = ret is not None and _jumps(node.body, {gast.Return})
        brk = namer.fresh("_break") if has_break else None
        cont = namer.fresh("_continue") if has_cont else None
        body = _Exits(self.ctx, ret, (brk, cont)).visit_block(node.body)
        if cont:
            body = inherit_origin(replace("FLAG = False", FLAG=ast_util.name(cont)), node) + body
        flags = [f for f in (brk, ret[0] if has_ret else None) if f]
        pre = replace("FLAG = False", FLAG=ast_util.name(brk)) if brk else []
        if not flags:
            node.body = body
            return pre + [node] if pre else node
        if isinstance(node, gast.While):
            test = replace_expr("NOT_ENDED and TEST", NOT_ENDED=_none_of(flags), TEST=node.test)
            return pre + [ast_util.while_(Anno.CONDITION.add_to(test, True), body)]
        # for i in range(...) that can be left early: an index loop as a while loop
        r, k = ast_util.name(namer.fresh("_range")), ast_util.name(namer.fresh("_k"))
        pre += replace("R = RANGE\nK = 0", R=r, RANGE=node.iter, K=k)
        head = replace("T = R[K]\nK = K + 1", T=node.target, R=r, K=k)
        test = replace_expr("K < len(R) and NOT_ENDED", K=k, R=r, NOT_ENDED=_none_of(flags))
        return pre + [ast_util.while_(Anno.CONDITION.add_to(test, True), head + body)]


def transform(fdef, ctx):
    body = fdef.body
    last = body[-1] if body else None
    early = [n for s in body[:-1] for n in ast_util.walk(s) if isinstance(n, gast.Return)]
    if isinstance(last, (gast.If, gast.For, gast.While)):
        early += [n for n in ast_util.walk(last) if isinstance(n, gast.Return)]
    if not early:
        fdef.body = _Exits(ctx, None).visit_block(body)
        return fdef
    returns = early + ([last] if isinstance(last, gast.Return) else [])
    arity = {len(r.value.elts) if isinstance(r.value, gast.Tuple) else None for r in returns
             if r.value is not None}
    if len(arity) == 1 and None not in arity:     # every return gives a k-tuple
        values = [ctx.namer.fresh("_retval%d" % i) for i in range(arity.pop())]
    else:
        values = [ctx.namer.fresh("_retval")]
    flag = ctx.namer.fresh("_return")
    names = [ast_util.name(v) for v in values]
    result = replace("return VALUE", VALUE=ast_util.tuple_(names) if len(names) > 1 else names[0])
    fdef.body = (replace("FLAG = False", FLAG=ast_util.name(flag)) + _Exits(ctx, (flag, values)).visit_block(body)
                 + inherit_origin(result, last if last is not None else fdef))
    return fdef
