"""Common views: a repeated basic-slicing read of an array parameter is
computed once (common-subexpression elimination, restricted to reads
whose result is a view).

Requires: anf (SSA names at the top level, `ctx.facts.stacked`,
`ctx.facts.shape_params`). Guarantees: of two top-level ANF assignments
`a = x[s]` and, later, `b = x[s]` with the same index, the second is
dropped and `b` reads `a` in every statement after it.

`x[1:] - x[:-1] ** 2 + (1.0 - x[:-1]) ** 2` (Rosenbrock) reads `x[:-1]`
twice. Each read gets a cotangent, and the reverse sweep scatters each
one back into a cotangent of x's shape (`unindex`): two scatters and one
full-size addition where one scatter of the summed cotangents does. The
Hessian runs that sweep on a stack of n cotangents, so each scatter costs
O(n^2).

Which reads are merged, and why the merge cannot change a value:

- `x` is an array parameter (`facts.shape_params`: given an ndarray for
  this Program) that the code does not rebind (an SSA name at the top
  level, assigned in no loop or branch);
- the index is basic and its result a view: a slice (`x[1:]`), or a tuple
  of slices, integer constants, `None` and `...` holding a slice or `...`,
  or fewer integers than x has axes (`x[0]` of a matrix). A view reads
  x's buffer whenever it is read, so two views of the same part of the
  same buffer hold the same values at every point of the program, writes
  into x through any call included (an integer read of a vector copies
  the element: not merged);
- the bounds of the slices are constants or names assigned once;
- both assignments are at the top level (the first runs before the second
  whenever the second runs), and `b` is not returned (two outputs stay two
  arrays).
"""
import gast

from ..syntax import ast_util
from ..syntax.anno import Anno


def transform(fdef, ctx):
    """Drop repeated view reads from the top level of the ANF `fdef` (in
    place); returns fdef."""
    arrays = ctx.facts.shape_params
    if not arrays:
        return fdef
    stacked = ctx.facts.stacked
    returned = ast_util.names_loaded(fdef.body[-1]) if fdef.body and isinstance(fdef.body[-1], gast.Return) \
        else set()
    first = {}          # the index's source -> the name of the first read
    renamed = {}
    body = []
    for s in fdef.body:
        if renamed:
            ast_util.substitute_loads(s, renamed)
        key = _view_read(s, arrays, stacked)
        if key is not None:
            target = s.targets[0].id
            if key in first and target not in returned:
                renamed[target] = first[key]
                continue
            first.setdefault(key, target)
        body.append(s)
    fdef.body = body
    return fdef


def _view_read(s, arrays, stacked):
    """The source text of `s`'s subscript when `s` is `t = x[index]`, a view
    read that may be merged (the module docstring's conditions), else None."""
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.Subscript)):
        return None
    op = Anno.OP.of(s, None)
    if op is None or op.kind != "rule" or s.targets[0].id in stacked:
        return None
    e = s.value
    if not (isinstance(e.value, gast.Name) and e.value.id in arrays and e.value.id not in stacked):
        return None
    parts = e.slice.elts if isinstance(e.slice, gast.Tuple) else [e.slice]
    ints = 0
    view = False
    for p in parts:
        if isinstance(p, gast.Slice):
            if not all(b is None or _fixed(b, stacked) for b in (p.lower, p.upper, p.step)):
                return None
            view = True
        elif isinstance(p, gast.Constant) and p.value is Ellipsis:
            view = True
        elif isinstance(p, gast.Constant) and p.value is None:
            pass
        elif _fixed(p, ()) and not isinstance(p, gast.Name) and not (isinstance(p, gast.Constant) and p.value is None):
            ints += 1         # (an int constant, maybe negative)
        else:
            return None
    if not (view or ints < len(arrays[e.value.id])):
        return None
    return ast_util.to_source(e)


def _fixed(e, stacked):
    """Is the slice bound `e` a constant (an int or None) or a name assigned once?"""
    if isinstance(e, gast.Constant):
        return e.value is None or type(e.value) is int
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub):
        return isinstance(e.operand, gast.Constant) and type(e.operand.value) is int
    return isinstance(e, gast.Name) and e.id not in stacked
