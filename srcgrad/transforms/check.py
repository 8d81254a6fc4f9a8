"""The fence: reject Python that srcgrad cannot differentiate, before any
transform runs and before any user code runs.

Requires: parse. Guarantees: what passes uses only the statements and
expressions the lowering (transforms/lower/) and anf.py know: assignments
(also to elements, and unpacking with a starred target), if/elif/else, for
and while loops (no else clause) with break and continue, return
anywhere, local def and lambda, list comprehensions, `with` blocks (the
context manager is not differentiated; the body may not return or break out
of the block), assert, raise and print. Not supported: try, yield, async,
global/nonlocal, del of elements, import, class definitions inside, exec,
eval, match, attribute assignment, set/dict comprehensions, :=.
"""
import gast

from ..errors import fail
from ..syntax import ast_util

_STATEMENTS = {
    gast.Try: "try statement",
    gast.AsyncWith: "async with statement",
    gast.AsyncFor: "async for loop",
    gast.AsyncFunctionDef: "async function",
    gast.Global: "global statement",
    gast.Nonlocal: "nonlocal statement",
    gast.Import: "import statement",
    gast.ImportFrom: "import statement",
    gast.ClassDef: "class definition",
}
if hasattr(gast, "Match"):
    _STATEMENTS[gast.Match] = "match statement"
if hasattr(gast, "TryStar"):
    _STATEMENTS[gast.TryStar] = "try statement"

_EXPRESSIONS = {
    gast.Yield: "yield",
    gast.YieldFrom: "yield from",
    gast.Await: "await",
    gast.SetComp: "set comprehension",
    gast.DictComp: "dict comprehension",
    gast.NamedExpr: "assignment expression (:=)",
    gast.Set: "set display",
}

_EXEC_NAMES = {"exec": "exec()", "eval": "eval()", "globals": "globals()", "locals": "locals()"}


def check(parsed):
    """Raise UnsupportedSyntaxError (construct, file, line) for the first
    unsupported construct in `parsed`'s function."""
    fdef = parsed.node
    if isinstance(fdef, gast.AsyncFunctionDef):
        fail(parsed, fdef, "async function")
    for stmt in fdef.body:
        _check_stmt(parsed, stmt)


def _check_stmt(parsed, stmt):
    for cls, construct in _STATEMENTS.items():
        if isinstance(stmt, cls):
            fail(parsed, stmt, construct)
    if isinstance(stmt, gast.Assign):
        for t in stmt.targets:
            _check_target(parsed, t)
        _check_expr(parsed, stmt.value)
    elif isinstance(stmt, gast.AugAssign):
        _check_target(parsed, stmt.target)
        _check_expr(parsed, stmt.value)
    elif isinstance(stmt, gast.AnnAssign):
        if stmt.value is None:
            return
        _check_target(parsed, stmt.target)
        _check_expr(parsed, stmt.value)
    elif isinstance(stmt, (gast.Expr, gast.Return, gast.Assert, gast.Raise)):
        for node in (getattr(stmt, f, None) for f in ("value", "test", "msg", "exc", "cause")):
            if node is not None:
                _check_expr(parsed, node)
    elif isinstance(stmt, gast.If):
        _check_expr(parsed, stmt.test)
        for s in stmt.body + stmt.orelse:
            _check_stmt(parsed, s)
    elif isinstance(stmt, (gast.For, gast.While)):
        if stmt.orelse:
            fail(parsed, stmt, "%s-else" % ("for" if isinstance(stmt, gast.For) else "while"))
        if isinstance(stmt, gast.For):
            _check_target(parsed, stmt.target)
            _check_expr(parsed, stmt.iter)
        else:
            _check_expr(parsed, stmt.test)
        for s in stmt.body:
            _check_stmt(parsed, s)
    elif isinstance(stmt, gast.With):
        for item in stmt.items:
            _check_expr(parsed, item.context_expr)
            if item.optional_vars is not None:
                if not all(isinstance(n, (gast.Name, gast.Tuple, gast.List)) for n in ast_util.walk(item.optional_vars)
                           if not isinstance(n, (gast.expr_context,))):
                    fail(parsed, item.optional_vars, "a with statement whose target is not a name (as %s)"
                         % type(item.optional_vars).__name__)
        for s in stmt.body:
            _check_stmt(parsed, s)
        _check_with_exits(parsed, stmt, stmt.body, in_loop=False)
    elif isinstance(stmt, gast.FunctionDef):
        if stmt.decorator_list:
            fail(parsed, stmt, "a decorated nested function")
        for s in stmt.body:
            _check_stmt(parsed, s)
    elif isinstance(stmt, (gast.Pass, gast.Break, gast.Continue)):
        pass
    elif isinstance(stmt, gast.Delete):
        # `del x` only frees memory (generated code frees dead values so); other deletions mutate
        for t in stmt.targets:
            if not isinstance(t, gast.Name):
                fail(parsed, stmt, "del of an element or attribute")
    else:
        fail(parsed, stmt, type(stmt).__name__ + " statement")


def _check_with_exits(parsed, with_stmt, stmts, in_loop):
    """A `with` body runs to its end in srcgrad (the exit is a statement
    after it): no return, and no break or continue that leaves the block."""
    for s in stmts:
        if isinstance(s, gast.Return):
            fail(parsed, s, "a return inside a with block", "assign the result, and return after the block")
        if isinstance(s, (gast.Break, gast.Continue)) and not in_loop:
            fail(parsed, s, "a %s out of a with block" % ("break" if isinstance(s, gast.Break) else "continue"),
                 "put the loop inside the with block")
        if isinstance(s, (gast.For, gast.While)):
            _check_with_exits(parsed, with_stmt, s.body, True)
        elif isinstance(s, (gast.If, gast.With)):
            _check_with_exits(parsed, with_stmt, s.body + getattr(s, "orelse", []), in_loop)


#: attributes of an array that are views of it: `a.T[i] = v` writes into `a` (NumPy's aliasing)
_VIEW_ATTRIBUTES = {"T": "its transpose", "mT": "its matrix transpose", "real": "its real part",
                    "imag": "its imaginary part", "flat": "its flat iterator"}


def refuse_element_target(parsed, node, inner):
    """Raise UnsupportedSyntaxError for an element assignment `node` whose
    base `inner` is not a variable: `obj.attr[i] = v` (a dict or list
    attribute runs right op by op), or a write through an array's view
    (`a.T[i] = v`: named as such, with the index into `a` to write
    instead; `.flat` does not run right op by op either)."""
    if isinstance(inner, gast.Attribute) and inner.attr in _VIEW_ATTRIBUTES:
        a = ast_util.to_source(inner.value).strip()
        instead = {"T": "%s[:, i] = v for %s.T[i] = v (a 2-d %s)" % (a, a, a),
                   "mT": "%s[..., i] = v for %s.mT[..., i, :] = v" % (a, a),
                   "flat": "%s = %s.ravel(); ...[i] = v (then reshape)" % (a, a),
                   "real": "%s = new_real + 1j * %s.imag" % (a, a),
                   "imag": "%s = %s.real + 1j * new_imag" % (a, a)}[inner.attr]
        fail(parsed, node, "an element assignment through %s.%s (NumPy writes into %s through %s)"
             % (a, inner.attr, a, _VIEW_ATTRIBUTES[inner.attr]), "write into %s itself: %s" % (a, instead),
             op_by_op=inner.attr != "flat")
    fail(parsed, node, "assignment to an attribute's element (obj.attr[i] = ...)")


def _check_target(parsed, t):
    if isinstance(t, gast.Name):
        return
    if isinstance(t, (gast.Tuple, gast.List)):
        for e in t.elts:
            _check_target(parsed, e.value if isinstance(e, gast.Starred) else e)
        return
    if isinstance(t, gast.Subscript):
        inner = t.value
        while isinstance(inner, gast.Subscript):
            inner = inner.value
        if not isinstance(inner, gast.Name):
            refuse_element_target(parsed, t, inner)
        return
    if isinstance(t, gast.Attribute):
        fail(parsed, t, "attribute assignment (obj.attr = ...)")
    fail(parsed, t, "assignment to " + type(t).__name__)


def _check_expr(parsed, expr):
    for node in ast_util.walk(expr):
        for cls, construct in _EXPRESSIONS.items():
            if isinstance(node, cls):
                fail(parsed, node, construct)
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id in _EXEC_NAMES:
            fail(parsed, node, _EXEC_NAMES[node.func.id])
