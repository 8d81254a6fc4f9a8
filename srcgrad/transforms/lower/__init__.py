"""Lowering: rewrite everyday Python into the core the differentiator handles.

Requires: parse, check. Runs once per function, on syntax alone (before
names are resolved; the only object it looks up is `sg.insert_grad_of`).
One converter per construct, each a `common.Block` with a module-level
`transform(fdef, ctx)` whose docstring states what it guarantees; together,
for the returned body:
- `for` loops iterate over `range(...)` with a Name target (for_loops.py);
- `break`, `continue` and `return` before the end are gone: they set
  flags, and the function ends with one `return` (exits.py);
- `np.add.at(a, i, b)` and `np.subtract.at` statements are element
  assignments `a[...] = add_at(a, i, b)` (ufunc_at.py);
- element assignment and `xs.append`/`xs.extend` are functional updates
  (mutations.py), checked against NumPy views (views.py);
- local functions are inlined where they are called (local_functions.py),
  list comprehensions are loops (comprehensions.py);
- a `with` block is its body between `with_enter` and `with_exit`, and
  `with sg.insert_grad_of(x) as bx:` one marker statement (withs.py);
- `sg.jvp(f, (p, ...), (t, ...))` is a call of f's JVP function
  (jvp_calls.py);
- `a = b = v` is `_chain = v; a = _chain; b = _chain` (chained.py);
- `del x` is gone (deletes.py); docstrings and `pass` stay (anf.py drops
  them); `print`, `assert` stay (forward only).
"""
from ...syntax import ast_util
from . import (chained, comprehensions, deletes, exits, for_loops, jvp_calls, local_functions, mutations, ufunc_at,
               views, withs)
from .common import Lowering


def _lower_body(fdef, ctx):
    """Run the converters on `fdef`'s body, in place: the function's own,
    or a local function's where it is inlined (`ctx.top` False)."""
    fdef = deletes.transform(fdef, ctx)
    fdef = chained.transform(fdef, ctx)
    # with blocks next: their bodies join the enclosing block, where a local def is then found
    fdef = withs.transform(fdef, ctx)
    fdef = jvp_calls.transform(fdef, ctx)
    # local functions are taken out of the body before anything inlines them
    fdef = local_functions.transform(fdef, ctx)
    # np.add.at(a, i, b) -> a[...] = add_at(a, i, b): an element assignment from here on
    fdef = ufunc_at.transform(fdef, ctx)
    if ctx.top:      # (before inlining and setitem rewrite the element assignments)
        nodes = ast_util.walk(ast_util.module(fdef.body))
        ctx.parsed.writes_params = mutations.written_params(fdef.body, ctx.parsed.params, nodes)
        ctx.parsed.grows_params = mutations.grown_params(fdef.body, ctx.parsed.params, nodes)
        ctx.parsed.keyed_params = mutations.keyed_params(fdef.body, ctx.parsed.writes_params, nodes)
    fdef = comprehensions.transform(fdef, ctx)
    # index loops before the view check: it reads the rows a loop takes as `t = _seq[_i]`
    fdef = for_loops.transform(fdef, ctx)
    if ctx.top:      # (once, on the function with its local functions inlined)
        fdef = views.transform(fdef, ctx)
    # element assignment after the view check, whose VIEW_CHECK it reads
    fdef = mutations.transform(fdef, ctx)
    # exits last: the statements after a jump are guarded as the other converters left them
    fdef = exits.transform(fdef, ctx)
    return fdef


def lower(parsed):
    """Lower `parsed.node` in place (see the module docstring); returns `parsed`."""
    _lower_body(parsed.node, Lowering.of(parsed, _lower_body))
    return parsed
