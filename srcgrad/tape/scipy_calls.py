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
replaced in the globals of the module whose code the tape records (the
module that entered the tape; for the op-by-op fallback, the function's);
imported into a third module, it is not: call it through its module there,
or inside `@sg.function`/`sg.grad`, where compiled code differentiates it
by its rule.
"""
import contextlib
import importlib
import inspect
import sys
import threading

import numpy as np

from ..errors import public_name
from ..rules import registry
from ..tensor import Tensor
from . import nested, recording

_lock = threading.RLock()      # (re-entered from the profile hook of everywhere())
_depth = 0
_patched = []           # (owner, name, the attribute it had or _MISSING)
_MISSING = object()
_found = {}             # the number of rules when _targets last ran -> its targets (a cache)
_by_primitive = {}      # id(primitive) -> (primitive, its wrapper)
_names = []             # (namespace dict, name, primitive) replaced in a module's globals


def _replace_names(namespace):
    for name, value in list(namespace.items()):
        found = _by_primitive.get(id(value))
        if found is not None and found[0] is value:
            namespace[name] = found[1]
            _names.append((namespace, name, value))


#: NumPy functions with rules that do not dispatch on a differentiable
#: argument (np.full's fill value reaches the array through np.copyto)
NUMPY_NON_DISPATCHING = ("full", "full_like", "array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray")


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


def _wrapper(prim):
    def recorded(*args, **kwargs):
        if any(isinstance(a, Tensor) for a in nested.flatten([list(args), list(kwargs.values())])):
            return recording.apply(prim, args, kwargs)
        return prim(*args, **kwargs)
    recorded.__srcgrad_raw__ = prim
    recorded.__srcgrad_recorded__ = prim        # (what the compiler resolves it to: syntax/anno.py)
    recorded.__name__ = getattr(prim, "__name__", "scipy_function")
    recorded.__qualname__ = getattr(prim, "__qualname__", recorded.__name__)
    recorded.__doc__ = getattr(prim, "__doc__", None)
    return recorded


def enter(namespace=None):
    """A tape begins recording: the first one installs the wrappers; each
    also replaces the primitives bound to names in `namespace` (the globals
    of the code the tape records: `from scipy.special import logsumexp`)."""
    global _depth
    with _lock:
        _depth += 1
        key = (registry.rule_count(), "scipy" in sys.modules)      # (cheap: no lazy loading)
        if key not in _found:
            _found.clear()
            _found[key] = [(owner, name, prim, _wrapper(prim)) for owner, name, prim in _targets()]
            _by_primitive.clear()
            _by_primitive.update({id(prim): (prim, w) for _, _, prim, w in _found[key]})
        if namespace is not None and _by_primitive:
            _replace_names(namespace)
        if _depth > 1:
            return
        for owner, name, prim, wrapper in _found[key]:
            before = owner.__dict__.get(name, _MISSING) if hasattr(owner, "__dict__") else _MISSING
            try:
                setattr(owner, name, wrapper)
            except (AttributeError, TypeError):
                continue
            _patched.append((owner, name, before))


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
        while _names:
            namespace, name, prim = _names.pop()
            if namespace.get(name) is _by_primitive.get(id(prim), (None, None))[1]:
                namespace[name] = prim
        while _patched:
            owner, name, before = _patched.pop()
            if before is _MISSING:
                try:
                    delattr(owner, name)
                except AttributeError:
                    pass
            else:
                setattr(owner, name, before)
