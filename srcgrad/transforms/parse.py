"""Parse a Python function into a gast FunctionDef, stamped with its origin.

Guarantees: the returned node has no decorators, and every node carries
`_sg_origin = (filename, lineno, col)` pointing at the user's real file and
line (so errors and generated comments name them).
"""
import inspect
import linecache
import textwrap
from dataclasses import dataclass, field

import gast

from ..errors import SourceNotFoundError, UnsupportedSyntaxError
from . import ast_util


@dataclass
class Parsed:
    func: object
    node: gast.FunctionDef
    filename: str
    firstlineno: int
    params: list = field(default_factory=list)

    def origin(self, node):
        return getattr(node, "_sg_origin", (self.filename, self.firstlineno, None))

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


def parse(func, tree=None):
    """Parse `func` (a plain Python function), or take `tree`, the kept AST
    of generated code. Raises SourceNotFoundError when the source is
    unavailable (built-ins, C extensions, exec'd code) and
    UnsupportedSyntaxError for lambdas."""
    if tree is not None:
        return _from_tree(func, tree)
    code = getattr(func, "__code__", None)
    name = getattr(func, "__qualname__", repr(func))
    if code is None:
        raise SourceNotFoundError("srcgrad can only transform Python functions; %r is %s"
                                  % (name, type(func).__name__))
    filename = code.co_filename
    try:
        lines, firstlineno = inspect.getsourcelines(func)
    except (OSError, TypeError) as exc:
        raise SourceNotFoundError(
            "srcgrad could not find the source of %s (defined in %s): %s. Define it in a file "
            "or a notebook cell, not with exec/eval." % (name, filename, exc)) from None
    src = textwrap.dedent("".join(lines))
    if code.co_name == "<lambda>":
        raise UnsupportedSyntaxError("lambda", filename, firstlineno, None,
                                     "define the function with def")
    try:
        module = gast.parse(src)
    except SyntaxError as exc:
        raise SourceNotFoundError("could not parse the source of %s: %s" % (name, exc)) from None
    node = module.body[0]
    if not isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
        raise SourceNotFoundError("the source of %s is not a function definition" % name)
    indent = len(lines[0]) - len(lines[0].lstrip())
    for n in gast.walk(node):
        if hasattr(n, "lineno"):
            n._sg_origin = (filename, n.lineno + firstlineno - 1,
                            (n.col_offset + indent) if hasattr(n, "col_offset") else None)
    node.decorator_list = []
    parsed = Parsed(func, node, filename, firstlineno)
    parsed.params = [a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
    parsed.n_positional = len(node.args.posonlyargs) + len(node.args.args)
    return parsed
