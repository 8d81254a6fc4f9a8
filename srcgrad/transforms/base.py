"""The base of the compiler's tree transformers: replacements inherit their origin.

`Transformer` is a `gast.NodeTransformer` whose `visit` gives every node of
a replacement that has no ORIGIN annotation the ORIGIN of the node it
replaces (TF AutoGraph's `pyct/transformer.py`, `Base.visit`). A visit
method returns the node, a new node, a list of statements or None; the
new code it builds from templates then points at the user's line it came
from, with no hand-written location copying. Children are usually visited
first, so a nested replacement keeps its own, closer origin.

`visit_block` visits the statements of a block in order and splices the
lists visit methods return (None drops a statement).
"""
import gast

from ..syntax import ast_util
from ..syntax.anno import Anno


def inherit_origin(new, old):
    """Give every node of `new` (a node or a list) without an ORIGIN the
    ORIGIN of `old`, if it has one; returns `new`."""
    if not Anno.ORIGIN.exists(old):
        return new
    origin = Anno.ORIGIN.of(old)
    for top in (new if isinstance(new, list) else [new]):
        for n in ast_util.walk(top):
            if not Anno.ORIGIN.exists(n):
                Anno.ORIGIN.add_to(n, origin)
    return new


class Transformer(gast.NodeTransformer):
    """A NodeTransformer whose replacements inherit the replaced node's ORIGIN."""

    def visit(self, node):
        result = super().visit(node)
        if result is not node and result is not None:
            inherit_origin(result, node)
        return result

    def visit_block(self, stmts):
        """The statements `stmts` visited in order, lists spliced."""
        out = []
        for s in stmts:
            new = self.visit(s)
            if isinstance(new, list):
                out.extend(new)
            elif new is not None:
                out.append(new)
        return out
