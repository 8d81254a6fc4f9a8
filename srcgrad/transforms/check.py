"""The fence: reject Python that srcgrad cannot differentiate, before any
transform runs and before any user code runs.

Requires: parse. Guarantees: what passes uses only straight-line code,
if/elif/else, `for` over `range(...)`, one `return` at the end, calls,
operators, attribute and subscript reads, and tuple assignment.
"""
import gast

from ..errors import UnsupportedSyntaxError

_STATEMENTS = {
    gast.While: "while loop",
    gast.Try: "try statement",
    gast.With: "with statement",
    gast.AsyncWith: "async with statement",
    gast.AsyncFor: "async for loop",
    gast.AsyncFunctionDef: "async function",
    gast.Global: "global statement",
    gast.Nonlocal: "nonlocal statement",
    gast.Delete: "del statement",
    gast.Import: "import statement",
    gast.ImportFrom: "import statement",
    gast.ClassDef: "class definition",
    gast.FunctionDef: "nested function definition",
    gast.Raise: "raise statement",
    gast.Assert: "assert statement",
    gast.Break: "break statement",
    gast.Continue: "continue statement",
}
if hasattr(gast, "Match"):
    _STATEMENTS[gast.Match] = "match statement"
if hasattr(gast, "TryStar"):
    _STATEMENTS[gast.TryStar] = "try statement"

_EXPRESSIONS = {
    gast.Yield: "yield",
    gast.YieldFrom: "yield from",
    gast.Await: "await",
    gast.Lambda: "lambda",
    gast.IfExp: "conditional expression",
    gast.BoolOp: "and/or expression",
    gast.ListComp: "list comprehension",
    gast.SetComp: "set comprehension",
    gast.DictComp: "dict comprehension",
    gast.GeneratorExp: "generator expression",
    gast.NamedExpr: "assignment expression (:=)",
    gast.Dict: "dict display",
    gast.Set: "set display",
    gast.Starred: "starred expression",
}

_EXEC_NAMES = {"exec": "exec()", "eval": "eval()", "globals": "globals()", "locals": "locals()"}


def _fail(parsed, node, construct, hint=None):
    filename, lineno, col = parsed.origin(node)
    raise UnsupportedSyntaxError(construct, filename, lineno, col, hint)


def check(parsed):
    """Raise UnsupportedSyntaxError (construct, file, line) for the first
    unsupported construct in `parsed`'s function."""
    fdef = parsed.node
    args = fdef.args
    if args.vararg is not None:
        _fail(parsed, fdef, "*args parameter")
    if args.kwarg is not None:
        _fail(parsed, fdef, "**kwargs parameter")
    body = fdef.body
    returns = [n for n in gast.walk(fdef) if isinstance(n, gast.Return)]
    for stmt in body:
        _check_stmt(parsed, stmt)
    for r in returns:
        if r is not body[-1]:
            _fail(parsed, r, "return before the end of the function",
                  "return once, as the last statement")


def _check_stmt(parsed, stmt):
    for cls, construct in _STATEMENTS.items():
        if isinstance(stmt, cls):
            hint = None
            if cls is gast.While:
                hint = "use a for loop over range()"
            _fail(parsed, stmt, construct, hint)
    if isinstance(stmt, gast.Assign):
        for t in stmt.targets:
            _check_target(parsed, t)
        _check_expr(parsed, stmt.value)
    elif isinstance(stmt, gast.AugAssign):
        if not isinstance(stmt.target, gast.Name):
            _check_target(parsed, stmt.target)
        _check_expr(parsed, stmt.value)
    elif isinstance(stmt, gast.AnnAssign):
        if stmt.value is None:
            return
        _check_target(parsed, stmt.target)
        _check_expr(parsed, stmt.value)
    elif isinstance(stmt, gast.Expr):
        _check_expr(parsed, stmt.value)
    elif isinstance(stmt, gast.If):
        _check_expr(parsed, stmt.test)
        for s in stmt.body + stmt.orelse:
            _check_stmt(parsed, s)
    elif isinstance(stmt, gast.For):
        if stmt.orelse:
            _fail(parsed, stmt, "for-else")
        if not isinstance(stmt.target, gast.Name):
            _fail(parsed, stmt.target, "for loop with a tuple target")
        it = stmt.iter
        if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id == "range"
                and not it.keywords):
            _fail(parsed, stmt, "for loop over something other than range()",
                  "iterate over range(len(...)) and index")
        _check_expr(parsed, it)
        for s in stmt.body:
            _check_stmt(parsed, s)
    elif isinstance(stmt, gast.Return):
        if stmt.value is None:
            _fail(parsed, stmt, "return without a value")
        _check_expr(parsed, stmt.value)
    elif isinstance(stmt, gast.Pass):
        pass
    else:
        _fail(parsed, stmt, type(stmt).__name__ + " statement")


def _check_target(parsed, t):
    if isinstance(t, gast.Name):
        return
    if isinstance(t, (gast.Tuple, gast.List)):
        for e in t.elts:
            if not isinstance(e, gast.Name):
                construct = "starred assignment" if isinstance(e, gast.Starred) else "nested unpacking"
                _fail(parsed, e, construct)
        return
    if isinstance(t, gast.Subscript):
        _fail(parsed, t, "element assignment (x[i] = ...)")
    if isinstance(t, gast.Attribute):
        _fail(parsed, t, "attribute assignment (obj.attr = ...)")
    _fail(parsed, t, "assignment to " + type(t).__name__)


def _check_expr(parsed, expr):
    for node in gast.walk(expr):
        for cls, construct in _EXPRESSIONS.items():
            if isinstance(node, cls):
                _fail(parsed, node, construct)
        if isinstance(node, gast.keyword) and node.arg is None:
            _fail(parsed, expr, "**kwargs in a call")
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id in _EXEC_NAMES:
            _fail(parsed, node, _EXEC_NAMES[node.func.id])
