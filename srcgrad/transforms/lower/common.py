"""What the lowering converters share: their context, block recursion, and
small tests on syntax.

`Lowering` is the context of one function's lowering, passed to every
converter's `transform(fdef, ctx)`: explicit fields, no state stacks. An
inlined local function's body is lowered by the same converters with its
own context (`Lowering.inlined`), which shares the function's namer.

`Block` is the base of the converters: a `transforms.base.Transformer`
(replacements inherit the origin of what they replace) that visits
statements only, and recurses into the blocks of `if`, `for` and `while`
(a converter may add `with`), never into expressions nor into a local
function's definition (its body is lowered where it is inlined).
"""
import builtins
from dataclasses import dataclass, field

import gast

from ...errors import fail
from ...syntax import ast_util
from ...syntax.anno import Anno
from ...syntax.naming import Namer
from ..base import Transformer
from ..namespace import Namespace


@dataclass
class Lowering:
    """The context of lowering one function (or an inlined body)."""
    parsed: object              # parse.Parsed; for an inlined body a copy whose node holds that body
    namer: Namer                # one per function: inlined bodies share it
    locals: set                 # the parameters and the names the function assigns (+ an inlined body's)
    aliases: dict               # `a = b`: a -> b and b -> a (element assignment would change both)
    lower_body: object          # (fdef, ctx) -> fdef: the whole lowering, for an inlined body (__init__.py)
    top: bool = True            # the function itself, not an inlined body
    local_fns: dict = field(default_factory=dict)        # name -> local def or lambda (local_functions.py)
    grad_of_blocks: list = field(default_factory=list)   # (with statement, the names its body assigns)
    namespace: Namespace = None                          # the function's names, when first needed

    @classmethod
    def of(cls, parsed, lower_body):
        """The context of lowering `parsed`'s function."""
        walked, parsed.walked = parsed.walked, None     # (the parse's walk: the fence changes nothing)
        tree = walked[1] if walked is not None and walked[0] is parsed.node else ast_util.walk(parsed.node)
        names = {n.id for n in tree if isinstance(n, gast.Name)}
        stored = {n.id for n in tree if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        aliases = {}
        for n in tree:
            if (isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], gast.Name)
                    and isinstance(n.value, gast.Name)):
                a, b = n.targets[0].id, n.value.id
                aliases.setdefault(a, b)
                aliases.setdefault(b, a)
        return cls(parsed, Namer(names | set(parsed.params) | set(dir(builtins))), set(parsed.params) | stored,
                   aliases, lower_body)

    def inlined(self, parsed, renamed):
        """The context of lowering a local function's body, `parsed`'s node,
        whose names were renamed to `renamed`."""
        return Lowering(parsed, self.namer, self.locals | renamed, self.aliases, self.lower_body, top=False,
                        local_fns=dict(self.local_fns), namespace=self.namespace)

    def static(self, e):
        """The object the Name or module attribute chain `e` denotes before
        the function runs (a global, a closure cell, a builtin), or None
        (a local name; anything else)."""
        if self.namespace is None:
            self.namespace = Namespace(self.parsed.func)
        return self.namespace.static(e, self.locals)


class Block(Transformer):
    """A lowering converter: statements only, into the blocks of `compound`."""

    compound = (gast.If, gast.For, gast.While)

    def __init__(self, ctx):
        super().__init__()
        self.ctx = ctx

    def generic_visit(self, node):
        if isinstance(node, self.compound):
            for name in ("body", "orelse"):
                stmts = getattr(node, name, None)
                if stmts:
                    setattr(node, name, self.visit_block(stmts) or self.emptied())
        return node

    def emptied(self):
        """What a block the converter emptied becomes."""
        return []


def helper(fn, name):
    """A Name calling srcgrad helper `fn`, resolved already (no lookup)."""
    n = ast_util.name(name)
    Anno.CALLEE.add_to(n, fn)
    Anno.HELPER.add_to(n, True)
    return n


def call_of(node, *names):
    """Is `node` a call of a plain name in `names` (`zip(...)`)?"""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id in names


def builtin_call(ctx, node, *names):
    """Is `node` a call of the builtin function named one of `names`
    (range, zip, enumerate, reversed), not shadowed by a local, a
    parameter, a global or a closure cell? The lowering rewrites such calls
    by what the builtin does; the names it relied on are recorded
    (`Parsed.assumed_builtins`), so that rebinding one later makes the
    function's parse stale (Function.is_stale)."""
    if not call_of(node, *names):
        return False
    name = node.func.id
    if name in ctx.local_fns:
        fail(ctx.parsed, node, "a local function named %s (it shadows the builtin the compiled loop is written "
             "with)" % name, "rename the local function")
    if name in ctx.locals or ctx.static(node.func) is not getattr(builtins, name):
        return False
    ctx.parsed.assumed_builtins.add(name)
    return True


def is_range(node, ctx=None):
    return builtin_call(ctx, node, "range") if ctx is not None else call_of(node, "range")


def subscript_base(t):
    """The name `x` of an element target `x[i][j]`, or None."""
    while isinstance(t, gast.Subscript):
        t = t.value
    return t.id if isinstance(t, gast.Name) else None


def mutated(s):
    """The names `s` assigns elements of (or updates with `x += v`, which
    NumPy does in place for an array)."""
    if not isinstance(s, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
        return []
    if isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name):
        return [s.target.id]
    targets = s.targets if isinstance(s, gast.Assign) else [s.target]
    out = []
    for t in targets:
        for e in (t.elts if isinstance(t, (gast.Tuple, gast.List)) else [t]):
            if isinstance(e, gast.Subscript) and subscript_base(e) is not None:
                out.append(subscript_base(e))
    return out
