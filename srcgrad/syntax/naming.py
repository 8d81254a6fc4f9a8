"""One deterministic namer per generated function.

Seeded with every name already in use; a collision gets `_1`, `_2`, ... No
randomness, so generated source is stable (golden files, `sg.source`).
"""
import keyword
import re


class Namer:
    def __init__(self, used=()):
        self.used = set(used)

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
