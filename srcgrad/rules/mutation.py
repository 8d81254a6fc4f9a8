"""NumPy calls that write into an array argument.

srcgrad's compiled code is functional: `x[i] = v` becomes `x = setitem(x, i,
v)` (transforms/lower), so that the reverse sweep reads every value as it
was. A NumPy call that writes into one of its arguments (`np.exp(x, out=y)`,
`np.copyto(dst, src)`) changes an array behind the compiler's back: its
derivative would be silently wrong. Each is refused by name where it meets
differentiated code (transforms/anf.py), and on the op-by-op tape it warns
GradientPathWarning (the written array is a plain ndarray the tape cannot
follow). The list is explicit; a ufunc or function called with `out=` (or a
ufunc's positional output) is refused whatever it is.
"""
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
        return WRITES_INTO.get(fn)
    except TypeError:       # unhashable
        return None


def _add_random():
    """Add np.random's entries to WRITES_INTO (once numpy.random is imported)."""
    global _random_added
    random = sys.modules["numpy.random"]
    found = {getattr(random, name, None): entry for name, entry in _RANDOM_WRITES_INTO}
    if None not in found:       # (not while numpy.random is being imported)
        WRITES_INTO.update(found)
        _random_added = True
