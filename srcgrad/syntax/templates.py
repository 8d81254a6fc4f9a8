"""Code from quoted Python: `replace`, and the markers of rule templates.

Generated code is written as short Python strings with named placeholders
(TF AutoGraph's `pyct/templates.py` pattern), never as hand-built trees
nor as source built with `%`:

    replace("T = APPEND(T, E)", T=target, E=element)

parses the string once (cached), and substitutes a copy of each given node
for the Name of the same placeholder, with its context (load or store)
fixed to where the placeholder stands (pyct's ContextAdjuster): the node
itself, and the elements of a tuple or list (or a starred value) take the
placeholder's context; what is read inside it keeps its own (the object of
an attribute, the operands of a call, a comprehension's target).

Rule templates (srcgrad/rules/) mark cotangents as `d[x]` (Tangent's
notation, adjoint rules) and tangents as `t[x]` (JAX's jvp notation, tangent
rules); `marker_of` reads either.
"""
import gast

from . import ast_util

_SETS_CONTEXT = (gast.Name, gast.Attribute, gast.Subscript)
_SPREADS_CONTEXT = (gast.Tuple, gast.List)


def _set_context(node, ctx):
    """Give `node`, standing where a placeholder in context `ctx` (a
    gast.Load or gast.Store class) stood, that context."""
    if isinstance(node, _SPREADS_CONTEXT):
        node.ctx = ctx()
        for e in node.elts:
            _set_context(e, ctx)
    elif isinstance(node, gast.Starred):
        node.ctx = ctx()
        _set_context(node.value, ctx)
    elif isinstance(node, _SETS_CONTEXT):
        node.ctx = ctx()


class _Substitute(ast_util.NodeTransformer):
    def __init__(self, nodes):
        self.nodes = nodes

    def visit_Name(self, node):
        found = self.nodes.get(node.id)
        if found is None:
            return node
        new = ast_util.clone(found)
        _set_context(new, gast.Load if isinstance(node.ctx, gast.Load) else gast.Store)
        return new


def replace(src, **nodes):
    """The statements parsed from `src` (a list of gast statements, fresh
    nodes), with each Name in `nodes` replaced by a copy of the given node
    (annotations shared, as ast_util.clone) in the placeholder's context.
    Raises SyntaxError for invalid `src`."""
    stmts = ast_util.quote(src)
    if not nodes:
        return stmts
    sub = _Substitute(nodes)
    return [sub.visit(s) for s in stmts]


def replace_expr(src, **nodes):
    """`replace` for one expression: the gast expression node."""
    return replace(src, **nodes)[0].value


def marker_of(node, marker):
    """The name `x` when `node` is the subscript `<marker>[x]` (`d[x]`, `t[x]`), else None."""
    if (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name)
            and node.value.id == marker and isinstance(node.slice, gast.Name)):
        return node.slice.id
    return None


def is_d(node):
    """Is `node` the cotangent marker `d[name]`? Returns the name or None."""
    return marker_of(node, "d")


def is_t(node):
    """Is `node` the tangent marker `t[name]`? Returns the name or None."""
    return marker_of(node, "t")
