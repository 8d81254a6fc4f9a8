"""Parse a Python function into a gast FunctionDef, stamped with its origin.

Guarantees: the returned node has no decorators, and every node carries
the ORIGIN annotation `(filename, lineno, col)` (syntax/anno.py) pointing at the user's real file and
line (so errors and generated comments name them).

A lambda becomes the function `def name(params): return <body>`, named after
the variable it is assigned to (`square = lambda a: a * a` is `square`), else
`lambda_`. Its node is found in the source of its file (or notebook cell) by
the code object's positions (Python 3.11 `co_positions()`: line and column
spans of its instructions), so that several lambdas on one line, or a lambda
inside a dict display or a call spanning lines, are told apart.
"""
import __future__
import ast
import inspect
import linecache
import textwrap
import threading
import types
from collections import OrderedDict
from dataclasses import dataclass, field

import gast

from ..errors import SourceNotFoundError
from ..syntax import ast_util
from ..syntax.anno import Anno


@dataclass
class Parsed:
    """A parsed function: its gast tree with origins, and what the passes
    run at decoration learn about it."""
    func: object                    # the Python function (or a namespace standing for one)
    node: gast.FunctionDef
    filename: str
    firstlineno: int
    params: list = field(default_factory=list)      # parameter names, positional first
    n_positional: int = 0                           # how many of params are positional
    grad_of: bool = False           # lowering: the body holds `with sg.insert_grad_of(x)` blocks
    writes_params: dict = field(default_factory=dict)   # lowering: parameter -> a statement writing into it
    grows_params: dict = field(default_factory=dict)    # lowering: parameter -> its xs.append/extend/insert/...
    keyed_params: set = field(default_factory=set)      # lowering: parameters written only as d["key"] = v
    assumed_builtins: set = field(default_factory=set)   # lowering: builtins it rewrote calls of (range, zip)
    walked: tuple = None            # parse: (node, its walk), for the lowering's first look (which clears it)

    def origin(self, node):
        return Anno.ORIGIN.of(node, (self.filename, self.firstlineno, None))

    def line_text(self, lineno, filename=None):
        return linecache.getline(filename or self.filename, lineno).strip()


def _from_tree(func, tree):
    """A Parsed for generated code: `tree` is the gast FunctionDef the
    compiler generated (its nodes keep the origin of the user's lines they
    came from; the others point at the user's def line)."""
    node = ast_util.clone(tree, annotations=False)
    origin = getattr(func, "__srcgrad_origin__", None) or (func.__code__.co_filename, 1)
    parsed = Parsed(func, node, origin[0], origin[1])
    args = node.args
    parsed.params = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
    parsed.n_positional = len(args.posonlyargs) + len(args.args)
    node.decorator_list = []
    return parsed


def _source_lines(func, code):
    """The lines from `func`'s definition on and its first line number, read from
    its code object: inspect.getsourcelines(func) follows __wrapped__ (a
    functools.wraps wrapper would be read as the function it wraps), and
    inspect.getsourcelines(code) searches sys.modules (tens of ms). The
    cache is checked first, as inspect.getsource does: a file edited and
    reloaded (importlib.reload, notebook autoreload) is read anew."""
    linecache.checkcache(code.co_filename)
    lines = linecache.getlines(code.co_filename, getattr(func, "__globals__", None))
    if not lines:
        raise OSError("could not get source code")
    start = code.co_firstlineno - 1
    if not 0 <= start < len(lines):
        raise OSError("the source of %s does not reach line %d" % (code.co_filename, start + 1))
    return lines[start:], start + 1


def parse(func, tree=None):
    """Parse `func` (a plain Python function), or take `tree`, the kept AST
    of generated code. Raises SourceNotFoundError when the source is
    unavailable (built-ins, C extensions, exec'd code)."""
    if tree is not None:
        return _from_tree(func, tree)
    code = getattr(func, "__code__", None)
    name = getattr(func, "__qualname__", repr(func))
    if code is None:
        raise SourceNotFoundError("srcgrad can only transform Python functions; %r is %s"
                                  % (name, type(func).__name__))
    if code.co_name == "<lambda>":
        return _parse_lambda(func, code, name)
    filename = code.co_filename
    try:
        lines, firstlineno = _source_lines(func, code)
    except (OSError, TypeError) as exc:
        raise SourceNotFoundError(
            "srcgrad could not find the source of %s (defined in %s): %s. Define it in a file "
            "or a notebook cell, not with exec/eval." % (name, filename, exc)) from None
    try:
        module, lines = ast_util.parse_definition(lines)
    except SyntaxError as exc:
        raise SourceNotFoundError("could not parse the source of %s: %s" % (name, exc)) from None
    node = module.body[0]
    if not isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
        raise SourceNotFoundError("the source of %s is not a function definition" % name)
    _mangle_private_names(node, getattr(code, "co_qualname", name))
    if not _runs_this_source(code, node, lines):
        raise SourceNotFoundError(
            "the source of %s in %s (line %d) is not the code that runs: the file changed since the function "
            "was defined. Reload the module (importlib.reload) or define the function again."
            % (name, filename, firstlineno))
    indent = len(lines[0]) - len(lines[0].lstrip())
    node.decorator_list = []
    nodes = ast_util.walk(node)
    for n in nodes:
        if hasattr(n, "lineno"):
            Anno.ORIGIN.add_to(n, (filename, n.lineno + firstlineno - 1,
                                   (n.col_offset + indent) if hasattr(n, "col_offset") else None))
    parsed = Parsed(func, node, filename, firstlineno, walked=(node, nodes))
    parsed.params = [a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
    parsed.n_positional = len(node.args.posonlyargs) + len(node.args.args)
    return parsed


def _enclosing_class(qualname):
    """The name of the innermost class around the function `qualname`
    ("A.m", "A.m.<locals>.f": A), or None."""
    parts = qualname.split(".")[:-1]
    i = len(parts) - 1
    while i >= 0:
        if parts[i] == "<locals>":
            i -= 2          # (a function's locals: the function is not a class)
            continue
        return parts[i]
    return None


def _mangle_private_names(node, qualname):
    """Python's private name mangling, which the class statement applied to
    the running code: in a method of class `_A`, `self.__x` is
    `self._A__x` (and a name or keyword `__x` is `_A__x`). The generated
    code is compiled outside the class, so its text gets the mangled names
    here (Python reference, 6.2.1 "Identifiers")."""
    cls = _enclosing_class(qualname)
    prefix = "_" + cls.lstrip("_") if cls and cls.lstrip("_") else None
    if prefix is None:
        return

    def private(n):
        return isinstance(n, str) and n.startswith("__") and not n.endswith("__")
    for n in ast_util.walk(node):
        if isinstance(n, gast.Attribute) and private(n.attr):
            n.attr = prefix + n.attr
        elif isinstance(n, gast.Name) and private(n.id):
            n.id = prefix + n.id
        elif isinstance(n, gast.keyword) and private(n.arg):
            n.arg = prefix + n.arg


def _same_code(a, b):
    """Do code objects `a` and `b` name the same globals, attributes and
    locals and hold the same constants, their nested functions' too? (Not
    the bytecode: two compilations of one text may spell a method call
    differently.)"""
    if a.co_names != b.co_names or a.co_varnames != b.co_varnames or len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts):
        if isinstance(x, types.CodeType) or isinstance(y, types.CodeType):
            if not (isinstance(x, types.CodeType) and isinstance(y, types.CodeType) and _same_code(x, y)):
                return False
        elif type(x) is not type(y) or x != y and not (x != x and y != y):
            return False
    return True


def _runs_this_source(code, node, lines):
    """Is the definition read from the file (`node`, the gast FunctionDef of
    the text `lines`) the code object `code` that runs? linecache rereads a
    file edited since the module was imported, and co_firstlineno then
    points at other text (another function, or this one changed). The name
    and parameters are compared; for a function without free variables
    (its text compiles alone to the same names), the names and constants of
    the compiled text too. A heuristic against stale text, not a proof."""
    args = node.args
    params = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
    n = code.co_argcount + code.co_kwonlyargcount
    if node.name != code.co_name or params != list(code.co_varnames[:n]):
        return False
    if code.co_freevars:
        return True
    flags = code.co_flags & _FUTURE_FLAGS
    try:
        module = compile(textwrap.dedent("".join(lines)), code.co_filename, "exec", flags=flags, dont_inherit=True)
    except (SyntaxError, ValueError):
        return True
    found = [c for c in module.co_consts if isinstance(c, types.CodeType) and c.co_name == code.co_name]
    if len(found) != 1 or _private_names(found[0]):
        return True         # (a class's `self.__x` is `_Cls__x` in its code, `__x` compiled alone)
    return _same_code(found[0], code)


def _private_names(code):
    """Does `code` (or a function nested in it) name a private attribute or
    variable (`__x`), which the class around it would have mangled?"""
    if any(n.startswith("__") and not n.endswith("__") for n in code.co_names + code.co_varnames):
        return True
    return any(isinstance(c, types.CodeType) and _private_names(c) for c in code.co_consts)


_FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag


# ------------------------------------------------------------------ lambdas

_TREES = OrderedDict()          # (filename, source) -> (ast.Module, {id(Lambda): name}); a few files
_TREES_LOCK = threading.Lock()
_TREES_MAX = 16


def _module_tree(filename, module_globals):
    """The parsed source of `filename` (a file or a notebook cell registered
    in linecache), and the names lambdas in it are assigned to."""
    linecache.checkcache(filename)
    lines = linecache.getlines(filename, module_globals)
    if not lines:
        return None
    src = "".join(lines)
    key = (filename, src)
    with _TREES_LOCK:
        found = _TREES.get(key)
        if found is not None:
            _TREES.move_to_end(key)
            return found
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return None
    names = {}
    for n in ast.walk(tree):
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and isinstance(n.value, ast.Lambda):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                names[id(n.value)] = targets[0].id
        elif isinstance(n, ast.keyword) and isinstance(n.value, ast.Lambda) and n.arg:
            names[id(n.value)] = n.arg
    with _TREES_LOCK:
        _TREES[key] = (tree, names)
        while len(_TREES) > _TREES_MAX:
            _TREES.popitem(last=False)
    return tree, names


def _param_names(args):
    """In the code object's order: positional, keyword-only, *args, **kwargs."""
    out = [a.arg for a in args.posonlyargs + args.args] + [a.arg for a in args.kwonlyargs]
    if args.vararg is not None:
        out.append(args.vararg.arg)
    if args.kwarg is not None:
        out.append(args.kwarg.arg)
    return out


def _code_params(code):
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return list(code.co_varnames[:n])


def _find_lambda(code, tree):
    """The ast.Lambda whose code object is `code`: it starts on the code's
    first line, has its parameters, and its body's span contains every
    instruction's source position; the innermost such lambda (an enclosing
    lambda's body contains the inner one's positions too, but the inner
    body does not contain the enclosing code's MAKE_FUNCTION)."""
    positions = [(line, col, end_line, end_col) for line, end_line, col, end_col in code.co_positions()
                 if line is not None and col is not None and end_line is not None and end_col is not None
                 and (line, col) != (end_line, end_col)]
    params = _code_params(code)

    def contains(body, p):
        return ((body.lineno, body.col_offset) <= (p[0], p[1])
                and (p[2], p[3]) <= (body.end_lineno, body.end_col_offset))

    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno
             and _param_names(n.args) == params and all(contains(n.body, p) for p in positions)]
    if not found:
        return None
    return min(found, key=lambda n: (n.body.end_lineno - n.body.lineno, n.body.end_col_offset - n.body.col_offset
                                     if n.body.end_lineno == n.body.lineno else 0, -n.col_offset))


def _parse_lambda(func, code, name):
    """Parse a lambda as `def <name>(<params>): return <body>` (see the module
    docstring). Raises SourceNotFoundError when its source is unavailable."""
    filename = code.co_filename
    found = _module_tree(filename, getattr(func, "__globals__", None))
    node = _find_lambda(code, found[0]) if found is not None else None
    if node is None:
        raise SourceNotFoundError(
            "srcgrad could not find the source of the lambda %s (defined in %s, line %d). Define it in a "
            "file or a notebook cell, not with exec/eval." % (name, filename, code.co_firstlineno))
    fname = found[1].get(id(node), "lambda_")
    ret = ast.Return(value=node.body)
    ast.copy_location(ret, node.body)
    fdef = ast.FunctionDef(name=fname, args=node.args, body=[ret], decorator_list=[], returns=None,
                           type_comment=None)
    ast.copy_location(fdef, node)
    fdef.end_lineno, fdef.end_col_offset = node.end_lineno, node.end_col_offset
    gnode = ast_util.from_ast(fdef)
    for n in ast_util.walk(gnode):
        if hasattr(n, "lineno"):
            Anno.ORIGIN.add_to(n, (filename, n.lineno, getattr(n, "col_offset", None)))
    parsed = Parsed(func, gnode, filename, code.co_firstlineno)
    args = gnode.args
    parsed.params = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
    parsed.n_positional = len(args.posonlyargs) + len(args.args)
    return parsed
