"""The base of the compiler's tree transformers: replacements inherit their origin.

`Transformer` is a NodeTransformer (ast_util.NodeTransformer) whose `visit` gives the nodes of
a replacement that have no ORIGIN annotation the ORIGIN of the node it
replaces (TF AutoGraph's `pyct/transformer.py`, `Base.visit`). A visit
method returns the node, a new node, a list of statements or None; the
code it builds from templates then points at the user's line it came from,
with no hand-written location copying. The stamping stops at a node that
has an origin: code the visit moved into its replacement (the user's
statements of a block, a nested replacement, visited first) keeps its own,
closer origin, and what it holds is left as it is. It does not enter the
test, range or target of a compound statement the replacement builds (a
flag test, an index loop's range): that is control logic of the compiler's
own, which no user line wrote (the statement itself gets the origin, so
comments and error notes name the user's line where one exists).

`visit_block` visits the statements of a block in order and splices the
lists visit methods return (None drops a statement).
"""
import gast

from ..syntax import ast_util
from ..syntax.anno import Anno

_COMPOUND = (gast.If, gast.For, gast.While)


def inherit_origin(new, old):
    """Give the nodes of `new` (a node or a list) without an ORIGIN the
    ORIGIN of `old`, if it has one, down to the nodes that have one (whose
    subtrees are left as they are) and not into the headers of compound
    statements; returns `new`."""
    if not Anno.ORIGIN.exists(old):
        return new
    origin = Anno.ORIGIN.of(old)
    todo = list(new) if isinstance(new, list) else [new]
    while todo:
        n = todo.pop()
        if Anno.ORIGIN.exists(n):
            continue
        Anno.ORIGIN.add_to(n, origin)
        if isinstance(n, _COMPOUND):
            todo.extend(n.body + n.orelse)      # (not its test, range or target)
        else:
            todo.extend(ast_util.children(n))
    return new


class Transformer(ast_util.NodeTransformer):
    """A NodeTransformer whose replacements inherit the replaced node's ORIGIN."""

    def visit(self, node):
        result = super().visit(node)
        if result is not node and result is not None:
            inherit_origin(result, node)
        return result

    def visit_block(self, stmts):
        """The statements `stmts` visited in order, the lists visit methods
        return spliced (None drops the statement)."""
        out = []
        for s in stmts:
            new = self.visit(s)
            out.extend(new if isinstance(new, list) else () if new is None else (new,))
        return out
