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
    if not isinstance(structure, (dict, list, tuple)):
        return next(iter(leaves))
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


def leaf_paths(structure, path=()):
    """[(path, leaf)] of a nested list/tuple/dict structure, in flatten's
    order; a path is the tuple of indices and keys leading to the leaf."""
    if isinstance(structure, dict):
        return [p for k in sorted(structure) for p in leaf_paths(structure[k], path + (k,))]
    if isinstance(structure, (list, tuple)):
        return [p for i, s in enumerate(structure) for p in leaf_paths(s, path + (i,))]
    return [(path, structure)]


def at_path(structure, path):
    """The element of `structure` at `path` (leaf_paths), or None where a
    level is None (a symbolic zero for a whole container)."""
    for k in path:
        if structure is None:
            return None
        structure = structure[k]
    return structure
