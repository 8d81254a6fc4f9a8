"""What the reverse (adjoint) and forward (tangent) code generators share.

A generator writes one artefact's code into the namespace of the user's
function: it names derivatives after their primals (`bx`, `dx`), binds the
objects the generated code calls to names (`inject`: the user's own name
when it means the same object, else a fresh alias, naming.ALIAS_PREFIX), heads each
block with a comment pointing at the user's line, and raises
UnsupportedSyntaxError at the user's line for what it cannot differentiate.

Requires: a Context (context.py) whose passes up to activity have run.
"""
import numpy as np

from .. import runtime
from ..errors import UnsupportedSyntaxError, short
from ..syntax import ast_util
from ..syntax.naming import ALIAS_PREFIX


class Generator:
    """The base of ReverseGenerator (reverse.py) and ForwardGenerator
    (forward.py)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.parsed = ctx.parsed
        self.namer = ctx.namer
        self.ns = ctx.namespace
        self.active = ctx.active
        self.injected = {}              # name in the generated code -> object
        self.dynamic = set()            # names that may hold a list, tuple or dict (kinds.py)
        self.scalar = set()             # names known to be 0-d (kinds.py)
        self.same_shape = {}            # id(assignment) -> operands shaped like its result (shapes.py)
        self.last_comment = None

    def derivative_name(self, table, prefix, name):
        """The name of `name`'s derivative (`prefix` + name: `bx`, `dx`;
        `_bx` for a temporary `_x`), fresh, remembered in `table`."""
        found = table.get(name)
        if found is None:
            base = prefix + name if not name.startswith("_") else "_" + prefix + name.lstrip("_")
            found = table[name] = self.namer.fresh(base)
        return found

    def inject(self, name, value):
        """A name the generated code can use for `value` (bound in its
        closure): `name` itself when it is free or means `value` in the
        user's namespace, else an alias."""
        for alias, v in self.injected.items():
            if v is value and (alias == name or alias.startswith(ALIAS_PREFIX + name)):
                return alias
        found, current = self.ns.lookup(name)
        if name not in self.injected and (name not in self.namer.used or (found and current is value)):
            self.namer.reserve([name])
            self.injected[name] = value
            return name
        alias = self.namer.fresh(ALIAS_PREFIX + name)
        self.injected[alias] = value
        return alias

    def helper(self, fn):
        """A Name calling the run-time helper `fn` (injected)."""
        name = "push" if fn is runtime.push else "pop" if fn is runtime.pop else fn.__name__
        return ast_util.name(self.inject(name, fn))

    def np_name(self):
        return self.inject("np", np)

    def fail(self, node, construct, hint=None):
        """Raise UnsupportedSyntaxError for `construct` at `node`'s line."""
        filename, lineno, col = self.parsed.origin(node)
        raise UnsupportedSyntaxError(construct, filename, lineno, col, hint)

    def origin_comment(self, s, prefix=""):
        """`# <prefix><the user's line>  (file:line)` heading the code of
        statement `s`, once per user line in a row ([] for a repeat or an
        empty line)."""
        filename, lineno, _ = self.parsed.origin(s)
        if (filename, lineno) == self.last_comment or lineno is None:
            return []
        self.last_comment = (filename, lineno)
        text = self.parsed.line_text(lineno, filename)
        if not text:
            return []
        return [ast_util.comment("%s%s  (%s:%s)" % (prefix, text, short(filename), lineno))]
