"""Names in generated code, and one deterministic namer per generated
function.

The namer is seeded with every name already in use; a collision gets `_1`,
`_2`, ... No randomness, so generated source is stable (golden files,
`sg.source`). The patterns (Griewank & Walther's conventions, as in Tangent's
naming.py): the adjoint of `x` is `bx`, its tangent `dx`; an object the
generated code calls under another name than the user's gets an alias
starting with ALIAS_PREFIX.
"""
import keyword
import re

ADJOINT_PREFIX = "b"        # the adjoint (cotangent) of x: bx
TANGENT_PREFIX = "d"        # the tangent of x: dx
ALIAS_PREFIX = "_sg_"       # an injected object whose own name is taken: _sg_np, _sg_sum_1


class Namer:
    def __init__(self, used=()):
        self.used = set(used)

    def copy(self):
        """An independent Namer with the same names in use (copy.deepcopy's
        result, without its generic traversal)."""
        return Namer(self.used)

    def reserve(self, names):
        self.used.update(names)

    def fresh(self, base):
        base = re.sub(r"\W", "_", base) or "t"
        if base[0].isdigit():
            base = "_" + base
        if keyword.iskeyword(base) or keyword.issoftkeyword(base):
            base = base + "_"
        if base not in self.used:
            self.used.add(base)
            return base
        i = 1
        while "%s_%d" % (base, i) in self.used:
            i += 1
        name = "%s_%d" % (base, i)
        self.used.add(name)
        return name
