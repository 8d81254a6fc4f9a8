"""Small generated functions with real source, for the shim.

The shim builds a few functions per call it translates (autograd's
`check_grads` differentiates `lambda x: fun(*subs(x), **kwargs)`; the shim
builds `def unary(x): return _fun(x, 2.0, axis=0)` instead). srcgrad reads
the source of what it differentiates, so each generated function gets its
text registered in `linecache` under a name of its own (as a notebook cell
is), with the line numbers its code object carries. Constants that print
as Python literals (ints, floats, strings, None, tuples of them) are
written into the code; anything else (arrays, functions) is a global of
the generated function, as a closure value would be.
"""
import itertools
import linecache
import math

import numpy as np

import srcgrad as sg

_COUNTER = itertools.count(1)
PREFIX = "<compat-generated-"


def literal(value):
    """Python source for `value` when it round-trips as a literal, else None."""
    if value is None or isinstance(value, (bool, str)):
        return repr(value)
    if type(value) is int:
        return repr(value)
    if type(value) is float:
        if math.isfinite(value):
            return repr(value)
        return None
    if type(value) in (tuple, list):
        parts = [literal(v) for v in value]
        if any(p is None for p in parts):
            return None
        if type(value) is tuple:
            return "(%s)" % "".join(p + ", " for p in parts) if parts else "()"
        return "[%s]" % ", ".join(parts)
    return None


class Source:
    """Text written into generated code as is (a parameter's name)."""

    def __init__(self, text):
        self.text = text


class Builder:
    """Collects globals while code is written: `ref(value)` returns the
    source text naming `value` (a literal, or a new global)."""

    def __init__(self):
        self.env = {"np": np, "_sg": sg}
        self._n = 0

    def ref(self, value, hint="c"):
        if isinstance(value, Source):
            return value.text
        text = literal(value)
        if text is not None:
            return text
        for name, v in self.env.items():
            if v is value and name.startswith("_"):
                return name
        self._n += 1
        name = "_%s%d" % (hint, self._n)
        self.env[name] = value
        return name

    def build(self, source, name):
        """Compile `source` (which defines `name`) and return that function."""
        filename = "%s%d>" % (PREFIX, next(_COUNTER))
        lines = source.splitlines(True)
        linecache.cache[filename] = (len(source), None, lines, filename)
        code = compile(source, filename, "exec")
        namespace = dict(self.env)
        exec(code, namespace)
        return namespace[name]


def call_text(builder, fun_ref, args_text, kwargs):
    """`fun(a, b, key=value...)` with kwargs written through the builder."""
    parts = list(args_text)
    for k, v in kwargs.items():
        parts.append("%s=%s" % (k, builder.ref(v, "k")))
    return "%s(%s)" % (fun_ref, ", ".join(parts))


def is_array_like(x):
    return isinstance(x, (np.ndarray, np.generic, float, int, complex)) and not isinstance(x, bool)


def inner_text(example, u, r):
    """Source of the real inner product <u, r> for values shaped like
    `example` (an array, a number, or tuples/lists/dicts of them):
    sum(real(conj(u) * r)) per floating leaf, integer leaves left out."""
    terms = []

    def walk(value, path):
        if isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                walk(v, path + "[%d]" % i)
        elif isinstance(value, dict):
            for k in value:
                walk(value[k], path + "[%r]" % (k,))
        else:
            a = np.asarray(value)
            if a.dtype.kind == "c":
                terms.append("np.sum(np.real(np.conj(%s%s) * %s%s))" % (u, path, r, path))
            elif a.dtype.kind == "f":
                terms.append("np.sum(%s%s * %s%s)" % (u, path, r, path))

    walk(example, "")
    return " + ".join(terms) if terms else "0.0"
