"""SciPy functions with rules (and np.full), recorded op by op while a tape records.

NumPy reaches the tape through its dispatch protocols (`__array_ufunc__`,
`__array_function__`); SciPy's Python-level functions do not dispatch: they
call `np.asarray` on their inputs, and a watched Tensor passed to
`scipy.stats.norm.logpdf` would leave the tape (a cut derivative path). So,
while at least one GradientTape is recording (and only then: SciPy is
untouched for users who never record), each SciPy function or distribution
method that has an adjoint rule is replaced where it is looked up
(`scipy.stats.norm.logpdf` as an attribute of the `norm` object,
`scipy.linalg.solve` as an attribute of `scipy.linalg`; `np.full`, whose
fill value reaches the array through `np.copyto`) by a wrapper that
records the call with its rule (`recording.apply`) when a Tensor is among
its arguments, and calls SciPy otherwise. The wrapper carries the original
as `__srcgrad_raw__`, which the registry follows, so compiled code treats
it as the primitive. Leaving the last recording tape restores SciPy.

A function imported by name (`from scipy.special import logsumexp`) is
replaced in the globals of the module that entered the tape, and of every
user module loaded then (not NumPy's, SciPy's, srcgrad's, the standard
library's or an installed package's: `lib.py` beside the script that
defines the loss the tape records). The op-by-op fallback also replaces it
in every module the function calls into, when called (`everywhere`). A
library installed in site-packages that imported it by name still calls
SciPy's function on a watched Tensor, which converts it: that cut path
warns GradientPathWarning on a tape, as every conversion the tape cannot
see does (an error under sg.grad); call it through its module there, or
inside `@sg.function`/`sg.grad`, where compiled code differentiates it by
its rule.
"""
import collections
import contextlib
import importlib
import inspect
import itertools
import os
import sys
import threading

import numpy as np

from ..errors import public_name
from ..rules import registry
from ..tensor import Tensor, frame_kind, path_is_cut, warn_path_cut
from . import buffers, nested, recording

_lock = threading.RLock()      # (re-entered from the profile hook of everywhere())
_depth = 0
_installed = []         # the _Groups installed (restored by the last exit)
_MISSING = object()
_found = {}             # the number of rules when _targets last ran -> its targets (a cache)
_by_primitive = {}      # id(primitive) -> (primitive, its wrapper)
_names = []             # (namespace dict, name, primitive) replaced in a module's globals
_scanned = {}           # id(namespace) -> (its size when scanned, the names that held primitives)
_cells = []             # (closure cell, what it held) replaced by replace_cells


def _replace_names(namespace):
    """Replace the primitives bound to names in `namespace` (a module's
    globals). The names found are remembered by the namespace's size: a
    module's globals are scanned again only when names were added or
    removed."""
    known = _scanned.get(id(namespace))
    if known is None or known[0] != len(namespace):
        known = (len(namespace), [name for name, value in list(namespace.items())
                                  if type(value) is not type and id(value) in _by_primitive])
        _scanned[id(namespace)] = known
    for name in known[1]:
        value = namespace.get(name)
        found = _by_primitive.get(id(value))
        if found is not None and found[0] is value:
            namespace[name] = found[1]
            _names.append((namespace, name, value))
    return known[1]


#: [the user namespaces' list, their sizes, those with names that held primitives]
#: when _replace_user_names last scanned them
_user_scan = [None, None, ()]


def _replace_user_names():
    """_replace_names for the globals of the user's modules: only for those
    with names that held primitives, as long as no module was imported or
    removed and no module's globals changed size (then all are scanned
    again: one tuple of sizes per tape, however many modules)."""
    spaces = _user_namespaces()
    sizes = tuple(map(len, spaces))
    if _user_scan[0] is not spaces or _user_scan[1] != sizes:
        _user_scan[:] = [spaces, sizes, [ns for ns in spaces if _replace_names(ns)]]
        return
    for namespace in _user_scan[2]:
        _replace_names(namespace)


_user_modules = [-1, []]     # [len(sys.modules) when listed, the user modules' globals]


def _user_namespaces():
    """The globals of the user's modules loaded (listed again when modules
    were imported or removed): not NumPy's, SciPy's, srcgrad's, the standard
    library's or an installed package's."""
    if _user_modules[0] != len(sys.modules):
        found = []
        for name, module in list(sys.modules.items()):
            namespace = getattr(module, "__dict__", None)
            if isinstance(namespace, dict) and _is_user_module(name, module):
                found.append(namespace)
        _user_modules[:] = [len(sys.modules), found]
    return _user_modules[1]


def _is_user_module(name, module):
    top = name.partition(".")[0]
    if top in ("numpy", "scipy", "srcgrad") or top in sys.stdlib_module_names:
        return False
    filename = getattr(module, "__file__", None)
    if not isinstance(filename, str):
        return name == "__main__"
    return not ("site-packages" in filename or "dist-packages" in filename or filename.startswith(_SRCGRAD_DIR))


_SRCGRAD_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


#: NumPy functions with rules that do not dispatch on a differentiable
#: argument (np.full's fill value reaches the array through np.copyto), and
#: those that take a sequence of arrays, whose dispatch sees its elements
#: only: np.stack([[a, b], [c, d]]) or np.einsum("i,i", [a, b], y) of
#: Tensors converted them (a warning op by op, nothing at all from a
#: compiled function's JVP run on Tensors), as did the reductions of a list
#: (np.mean([a, 2 * b]), np.max([a, b, 0.3]): a cut path, a wrong gradient)
NUMPY_NON_DISPATCHING = ("full", "full_like", "array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray",
                         "arange", "stack", "vstack", "hstack", "dstack", "column_stack", "concatenate", "block",
                         "einsum", "sum", "mean", "prod", "max", "min", "amax", "amin", "interp")
#: of those, the conversions recorded only when the user's code calls them (`x = np.asarray(x)`, as autograd's
#: and JAX's asarray): a library converting its input (scipy.ndimage) gets an ndarray, the cut path warns
USERS_ONLY = ("array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray")


def numpy_wrapped():
    """Are the tape's wrappers in numpy's namespace now (what
    numpy_restored undoes)? A check without the context manager's cost."""
    return bool(buffers.ACTIVE[0] or _depth)


@contextlib.contextmanager
def numpy_restored():
    """NumPy's own functions in numpy's namespace for the block, the
    tape's wrappers back after it (np.zeros and np.asarray, say, while a
    tape records: buffers.py and this module): for Numba, which resolves
    `np.zeros` in the code it compiles, and in its own implementations of
    NumPy's functions, when it compiles (sg.jit inside a tape), and keeps
    what it typed."""
    if not buffers.ACTIVE[0] and not _depth:
        yield
        return
    namespace = vars(np)
    wrapped = {}
    for name in buffers.ALLOCATORS + NUMPY_NON_DISPATCHING:
        raw = getattr(namespace.get(name), "__srcgrad_raw__", None)
        if raw is not None:
            wrapped[name] = namespace[name]
            namespace[name] = raw
    try:
        yield
    finally:
        namespace.update(wrapped)


def _targets():
    """(owner, attribute name, primitive) for every SciPy primitive with a
    rule that is not a ufunc (ufuncs dispatch to the tape already), and the
    NumPy functions of NUMPY_NON_DISPATCHING."""
    out = [(np, name, getattr(np, name)) for name in NUMPY_NON_DISPATCHING
           if registry.adjoint_rule(getattr(np, name)) is not None]
    # (SciPy's rules only once SciPy is imported: a tape does not import it)
    for prim in registry.adjoint_rules() if "scipy" in sys.modules else registry.loaded_rules():
        if isinstance(prim, np.ufunc):
            continue
        if inspect.ismethod(prim):
            owner = prim.__self__
            if (type(owner).__module__ or "").startswith("scipy.") and not isinstance(owner, type):
                out.append((owner, prim.__name__, prim))
            continue
        if not (getattr(prim, "__module__", "") or "").startswith("scipy"):
            continue
        try:
            dotted = public_name(prim)
        except Exception:
            continue
        module_name, _, name = dotted.rpartition(".")
        module = sys.modules.get(module_name)
        if module is None:
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                continue
        if getattr(module, name, None) is prim:
            out.append((module, name, prim))
    return out


_PLAIN = (np.ndarray, float, int, bool, np.float64, np.float32, np.int64, str, type(None))


def _users_call(frame):
    """Is `frame` (the caller of a conversion, np.array say) the user's
    code: the user's own, or code srcgrad generated from it? A compiled
    function's JVP runs on Tensors under an outer tape (reverse over
    forward through an @sg.function), and its `np.array([a * b, c])` is
    the user's: not recording it cut the outer tape's path silently."""
    return frame_kind(frame) == "user" or frame.f_code.co_filename.startswith("<srcgrad-generated")


def _wrapper(prim):
    users_only = getattr(np, getattr(prim, "__name__", ""), None) is prim and prim.__name__ in USERS_ONLY

    def recorded(*args, **kwargs):
        if users_only and args and type(args[0]) in _PLAIN:
            return prim(*args, **kwargs)        # (np.asarray(ndarray): the common call, kept cheap)
        for a in args:
            if type(a) not in _PLAIN:
                break
        else:       # (np.sum(x, axis=1) on arrays, from compiled code run while a tape records: no search)
            for v in kwargs.values():
                if type(v) not in _PLAIN:
                    break
            else:
                return prim(*args, **kwargs)
        if kwargs.get("out") is not None:
            return prim(*args, **kwargs)        # (np.sum(t, out=buf): NumPy's dispatch, as before: buffers.py)
        if buffers.MADE[0]:         # (an array filled with Tensors stands for its Tensor: buffers.py)
            args = [buffers.plain(a) for a in args]
            kwargs = {k: buffers.plain(v) for k, v in kwargs.items()}
        tensors = [a for a in nested.flatten([list(args), list(kwargs.values())]) if isinstance(a, Tensor)]
        if tensors and users_only and not _users_call(sys._getframe(1)):
            for t in tensors:       # (a library converting: the cut path warns at the user's line, as before)
                if path_is_cut(t):
                    warn_path_cut(t)
            return prim(*args, **kwargs)
        if tensors:
            return recording.apply(prim, args, kwargs)
        return prim(*args, **kwargs)
    recorded.__srcgrad_raw__ = prim
    recorded.__srcgrad_recorded__ = prim        # (what the compiler resolves it to: syntax/anno.py)
    recorded.__name__ = getattr(prim, "__name__", "scipy_function")
    recorded.__qualname__ = getattr(prim, "__qualname__", recorded.__name__)
    recorded.__doc__ = getattr(prim, "__doc__", None)
    return recorded


class _Groups:
    """The replacements of `found` (owner, name, primitive, wrapper) by
    owner, laid out so that a tape's enter and exit are C loops: the
    owners' attribute dicts (`targets`) with {name: wrapper} to install
    (`wrappers`) and {name: what it held} to restore (`before`); the names
    a dict did not hold, removed at exit (`absent_targets[i]`'s
    `absent[i]`); and (owner, name, wrapper, what it held) to set one by
    one where the attribute dict is read-only (a class)."""

    def __init__(self, found):
        by_owner = {}
        for owner, name, prim, wrapper in found:
            entry = by_owner.setdefault(id(owner), (owner, {}))
            entry[1][name] = wrapper
        self.targets, self.wrappers, self.before = [], [], []
        self.absent_targets, self.absent, self.one_by_one = [], [], []
        for owner, wrappers in by_owner.values():
            namespace = getattr(owner, "__dict__", None)
            if isinstance(namespace, dict):
                self.targets.append(namespace)
                self.wrappers.append(wrappers)
                self.before.append({k: namespace[k] for k in wrappers if k in namespace})
                for k in wrappers:
                    if k not in namespace:
                        self.absent_targets.append(namespace)
                        self.absent.append(k)
            else:
                self.one_by_one.extend((owner, k, w, owner.__dict__.get(k, _MISSING)
                                        if hasattr(owner, "__dict__") else _MISSING)
                                       for k, w in wrappers.items())


_consume = collections.deque(maxlen=0).extend     # (runs an iterator to its end, in C)


def enter(namespace=None):
    """A tape begins recording: the first one installs the wrappers; each
    also replaces the primitives bound to names in `namespace` (the globals
    of the code the tape records: `from scipy.special import logsumexp`)."""
    global _depth
    with _lock:
        _depth += 1
        key = (registry.rule_count(), "scipy" in sys.modules)      # (cheap: no lazy loading)
        # (found only by the outermost tape: inside, the wrappers are installed and _targets would not see
        # the primitives they replace; a cache built then missed them, and every later tape with it)
        if key not in _found and _depth == 1:
            _found.clear()
            found = [(owner, name, prim, _wrapper(prim)) for owner, name, prim in _targets()]
            _found[key] = _Groups(found)
            _by_primitive.clear()
            _by_primitive.update({id(prim): (prim, w) for _, _, prim, w in found})
            _scanned.clear()
            _user_scan[0] = None
        if namespace is not None and _by_primitive:
            _replace_names(namespace)
        if _depth > 1:
            return
        if _by_primitive:
            _replace_user_names()      # (lib.py: from scipy.special import logsumexp)
        groups = _found[key]
        _consume(map(dict.update, groups.targets, groups.wrappers))
        for owner, name, wrapper, _ in groups.one_by_one:
            try:
                setattr(owner, name, wrapper)
            except (AttributeError, TypeError):
                pass
        _installed.append(groups)


def _method_wrapper(value):
    """The wrapper of a bound method equal to a primitive (`mvn.logpdf`
    taken before the tape began is another bound-method object than the
    registered one, but equal to it), or None."""
    if not inspect.ismethod(value):
        return None
    found = _by_primitive.get(id(value))
    if found is not None:
        return found[1]
    for prim, wrapper in _by_primitive.values():
        if inspect.ismethod(prim) and prim == value:
            return wrapper
    return None


def replace_cells(func, depth=3):
    """Replace the primitives held in the closure cells of `func` (and of
    the functions in them, `depth` levels down): `fun = mvn.logpdf` captured
    by a wrapper function before the tape began. Restored by the last exit.
    Use inside enter()/exit()."""
    if _is_wrapper(func):       # (a wrapper holds its primitive: never replaced)
        return
    with _lock:
        for cell in getattr(func, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:          # (an empty cell)
                continue
            found = _by_primitive.get(id(value))
            wrapper = found[1] if found is not None and found[0] is value else _method_wrapper(value)
            if wrapper is not None:
                _cells.append((cell, value))
                cell.cell_contents = wrapper
            elif depth > 0 and inspect.isfunction(value):
                replace_cells(value, depth - 1)


def replace_module_closures(namespace):
    """replace_cells for the functions with closures in `namespace` (a
    module's globals: `fun = symmetrize(mvn.logpdf)` at module level)."""
    for v in list((namespace or {}).values()):
        if getattr(v, "__closure__", None) and inspect.isfunction(v):
            replace_cells(v, 2)


def _is_wrapper(func):
    return getattr(func, "__srcgrad_raw__", None) is not None


@contextlib.contextmanager
def everywhere():
    """While the block runs (the op-by-op fallback running a function the
    compiler refused), every module whose code is called gets its imported
    primitives replaced too, when its first function is called (a profile
    hook on the current thread; restored after). Use inside enter()/exit()."""
    seen = set()
    previous = sys.getprofile()

    def hook(frame, event, arg):
        if event == "call":
            namespace = frame.f_globals
            if id(namespace) not in seen:
                seen.add(id(namespace))
                with _lock:
                    _replace_names(namespace)
                    replace_module_closures(namespace)
        if previous is not None:
            previous(frame, event, arg)
    sys.setprofile(hook)
    try:
        yield
    finally:
        sys.setprofile(previous)


def exit():
    """A tape stops recording: the last one restores SciPy."""
    global _depth
    with _lock:
        _depth -= 1
        if _depth > 0:
            return
        _depth = 0
        while _cells:
            cell, value = _cells.pop()
            cell.cell_contents = value
        while _names:
            namespace, name, prim = _names.pop()
            if namespace.get(name) is _by_primitive.get(id(prim), (None, None))[1]:
                namespace[name] = prim
        while _installed:
            groups = _installed.pop()
            _consume(map(dict.update, groups.targets, groups.before))
            _consume(map(dict.pop, groups.absent_targets, groups.absent, itertools.repeat(None)))
            for owner, name, _, held in groups.one_by_one:
                    try:
                        if held is _MISSING:
                            delattr(owner, name)
                        else:
                            setattr(owner, name, held)
                    except (AttributeError, TypeError):
                        pass
