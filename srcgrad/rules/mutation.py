"""NumPy calls that write into an array argument.

srcgrad's compiled code is functional: `x[i] = v` becomes `x = setitem(x, i,
v)` (transforms/lower), so that the reverse sweep reads every value as it
was. A NumPy call that writes into one of its arguments (`np.exp(x, out=y)`,
`np.copyto(dst, src)`) changes an array behind the compiler's back: its
derivative would be silently wrong. Each is refused by name where it meets
differentiated code (transforms/anf.py), and on the op-by-op tape it warns
GradientPathWarning (the written array is a plain ndarray the tape cannot
follow). The list is explicit; a ufunc or function called with `out=` (or a
ufunc's positional output) is refused whatever it is, and so is a NumPy
Generator's or RandomState's shuffle. `LIST_WRITES_INTO` lists the standard
library's functions that change a list in place (heapq, random.shuffle,
bisect.insort), and `RECEIVER_MUTATORS` the in-place methods the compiler
refuses by name on a receiver it does not know (`Y[0].sort()`).
"""
import bisect
import heapq
import random
import re
import sys

import numpy as np

#: function -> (the parameter it writes into, what to write instead)
#: (np.random's entries are added when a program has imported numpy.random:
#: NumPy imports it on first use, and `import srcgrad` does not pay for it)
WRITES_INTO = {
    np.copyto: ("dst", "dst = np.broadcast_to(src, dst.shape) * 1.0  (or np.where(where, src, dst))"),
    np.put: ("a", "a = a.copy(); a.flat[ind] = v  is an element assignment srcgrad differentiates: "
                  "a = a.copy(); a[np.unravel_index(ind, a.shape)] = v"),
    np.putmask: ("a", "a = np.where(mask, values, a)"),
    np.place: ("arr", "arr = arr.copy(); arr[mask] = vals"),
    np.fill_diagonal: ("a", "a = a + np.diag(val - np.diag(a)) (a square matrix)"),
    np.put_along_axis: ("arr", "arr = np.where(mask, values, arr) with a mask built from the indices "
                               "(np.put_along_axis on a boolean np.zeros_like(arr, bool)), or a loop of "
                               "element assignments arr[i] = v"),
}

#: standard-library functions that change a list argument in place: the
#: compiler does not follow them; run on a list of Tensors (the tape), they
#: are right (they only move the Tensors)
LIST_WRITES_INTO = {
    heapq.heappush: ("heap", "keep the values out of the heap (push (key, index) pairs of plain numbers "
                             "and read the values by index), or use sorted(values)"),
    heapq.heappop: ("heap", "keep the values out of the heap (push (key, index) pairs of plain numbers "
                            "and read the values by index), or use sorted(values)"),
    heapq.heapify: ("x", "use sorted(x), or keep the values out of the heap (heapify plain keys)"),
    heapq.heapreplace: ("heap", "use sorted(values), or keep the values out of the heap"),
    heapq.heappushpop: ("heap", "use sorted(values), or keep the values out of the heap"),
    bisect.insort: ("a", "a = sorted(a + [x])"),
    bisect.insort_left: ("a", "a = sorted(a + [x])"),
    bisect.insort_right: ("a", "a = sorted(a + [x])"),
}

#: methods that change their receiver in place, by name, for a receiver the
#: compiler does not know (`Y[0].sort()`, `d["a"].append(v)`, `y.reshape(2, 2).sort()`):
#: name -> (does the tape follow it on a list of Tensors, the functional spelling)
RECEIVER_MUTATORS = {
    "append": (True, "R = R + [v]  (or build the list first, then store it)"),
    "extend": (True, "R = R + list(vs)"),
    "insert": (True, "R = R[:i] + [v] + R[i:]"),
    "remove": (True, "build a new list without the value"),
    "reverse": (True, "R = R[::-1]"),
    "clear": (True, "R = []"),
    "pop": (True, "v = R[-1]; R = R[:-1]"),
    "popitem": (True, "build a new dict"),
    "update": (True, "R = {**R, **other}"),
    "setdefault": (True, "build a new dict"),
    "add": (True, "R = R | {v}"),
    "discard": (True, "R = R - {v}"),
    "shuffle": (False, "R = R[rng.permutation(len(R))]"),
}

_RANDOM_WRITES_INTO = (
    ("shuffle", ("x", "x = x[np.random.permutation(len(x))]")),
)
_random_added = False

#: ndarray methods that change the array in place, and the functional spelling
IN_PLACE_METHODS = {
    "sort": "x = np.sort(x)",
    "fill": "x = np.full_like(x, value)",
    "put": "x = x.copy(); x[np.unravel_index(ind, x.shape)] = v",
    "itemset": "x = x.copy(); x[index] = v",
    "resize": "x = np.resize(x, shape)",
    "partition": "x = np.partition(x, kth)",
    "setfield": "build a new array",
}


def receiver_mutator(method):
    """(does the tape follow it, the functional spelling with R for the
    receiver) for a method `method` that changes its receiver in place (an
    ndarray's .sort(), a list's .append, a Generator's .shuffle), else None."""
    if method in IN_PLACE_METHODS:
        # (list.sort too, ambiguous: the tape's Tensors have no in-place methods)
        return False, re.sub(r"\bx\b", "R", IN_PLACE_METHODS[method])
    return RECEIVER_MUTATORS.get(method)


def _is_random_shuffle(fn):
    """Is `fn` a bound shuffle of a NumPy Generator or RandomState, or of a
    Python random.Random (random.shuffle)?"""
    if getattr(fn, "__name__", None) != "shuffle":
        return False
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, random.Random):
        return True
    npr = sys.modules.get("numpy.random")
    return npr is not None and isinstance(owner, (npr.Generator, npr.RandomState))


def stdlib_module(fn):
    """The module a message names `fn` by: heapq for heapq.heappush (defined
    in _heapq), random for random.shuffle (a bound method)."""
    module = getattr(fn, "__module__", None) or type(getattr(fn, "__self__", None)).__module__
    return (module or "").lstrip("_")


def list_writes_into(fn):
    """(the written parameter, the hint) when `fn` is a standard-library
    function that changes a list argument in place (heapq.heappush,
    random.shuffle, bisect.insort: right op by op, on a list of Tensors),
    else None."""
    if _is_random_shuffle(fn) and isinstance(getattr(fn, "__self__", None), random.Random):
        return "x", "x = [x[i] for i in random.sample(range(len(x)), len(x))]  (a new list in a random order)"
    try:
        return LIST_WRITES_INTO.get(fn)
    except TypeError:       # unhashable
        return None


def ufunc_of_at(fn):
    """The ufunc whose `.at` method `fn` is (np.multiply for np.multiply.at),
    else None."""
    owner = getattr(fn, "__self__", None)
    return owner if getattr(fn, "__name__", None) == "at" and isinstance(owner, np.ufunc) else None


def display_name(fn):
    """How a message names `fn`: np.exp, np.multiply.at, np.copyto, or its
    own name for a function from elsewhere."""
    ufunc = ufunc_of_at(fn)
    if ufunc is not None:
        return "np.%s.at" % ufunc.__name__
    if isinstance(fn, np.ufunc) or getattr(fn, "__module__", "") in ("numpy", None):
        return "np." + getattr(fn, "__name__", str(fn))
    return getattr(fn, "__name__", str(fn))


def writes_into(fn, n_args, kwargs):
    """(the written parameter, the hint) when calling `fn` with `n_args`
    positional arguments and the keyword names `kwargs` writes into an
    argument, else None."""
    if "out" in kwargs:
        return "out", "use the result: y = %s(...) without out=" % getattr(fn, "__name__", "f")
    if isinstance(fn, np.ufunc) and n_args > fn.nin:
        return "its output argument", "use the result: y = np.%s(x) with no output argument" % fn.__name__
    ufunc = ufunc_of_at(fn)
    if ufunc is not None:
        name = ufunc.__name__
        if ufunc in (np.add, np.subtract):
            return "its first argument", (
                "srcgrad differentiates np.%s.at(a, indices, b) as a statement of its own whose first argument "
                "is a variable's name (a local array): name the array first (a = ...; np.%s.at(a, indices, b)), "
                "and do not use the call's value (None)" % (name, name))
        return "its first argument", (
            "srcgrad differentiates np.add.at and np.subtract.at only; write np.%s.at(a, i, b) as element "
            "assignments, one index at a time so that repeated indices compound as they do in np.%s.at: "
            "for k in range(len(i)): a[i[k]] = np.%s(a[i[k]], b[k])" % (name, name, name))
    if not _random_added and "numpy.random" in sys.modules:
        _add_random()
    try:
        found = WRITES_INTO.get(fn)
    except TypeError:       # unhashable
        return None
    if found is None and _is_random_shuffle(fn) and not isinstance(fn.__self__, random.Random):
        # (a Generator's or RandomState's own: rng.shuffle(x))
        return "x", "x = x[rng.permutation(len(x))]"
    return found


def _add_random():
    """Add np.random's entries to WRITES_INTO (once numpy.random is imported)."""
    global _random_added
    random = sys.modules["numpy.random"]
    found = {getattr(random, name, None): entry for name, entry in _RANDOM_WRITES_INTO}
    if None not in found:       # (not while numpy.random is being imported)
        WRITES_INTO.update(found)
        _random_added = True
