"""Lowering: `del x` dropped.

Requires: check (which lets only `del` of names through). Guarantees: no
`del` statement is left; a block it emptied holds `pass`. Deleting a name
frees memory only, which the generated code does on its own (optimize.py's
`free_dead`).
"""
from ...syntax import ast_util
from .common import Block


class _Deletes(Block):

    def visit_Delete(self, node):
        return None

    def emptied(self):
        return [ast_util.pass_()]


def transform(fdef, ctx):
    fdef.body = _Deletes(ctx).visit_block(fdef.body)
    return fdef
