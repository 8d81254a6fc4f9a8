"""Nested structures of Tensors: flatten and rebuild (lists, tuples, dicts,
in order), as TF's `tf.nest` does for tape sources and targets."""


def flatten(structure):
    """Leaves of a nested list/tuple/dict structure, dicts in sorted-key order."""
    if isinstance(structure, dict):
        out = []
        for k in sorted(structure):
            out.extend(flatten(structure[k]))
        return out
    if isinstance(structure, (list, tuple)):
        out = []
        for s in structure:
            out.extend(flatten(s))
        return out
    return [structure]


def pack_as(structure, leaves):
    """Rebuild `structure` with `leaves` (inverse of flatten)."""
    it = iter(leaves)

    def build(s):
        if isinstance(s, dict):
            values = {k: build(s[k]) for k in sorted(s)}   # leaves come in sorted-key order
            return {k: values[k] for k in s}                # the caller's key order
        if isinstance(s, tuple) and hasattr(s, "_fields"):
            return type(s)(*[build(e) for e in s])
        if isinstance(s, (list, tuple)):
            return type(s)(build(e) for e in s)
        return next(it)
    return build(structure)
