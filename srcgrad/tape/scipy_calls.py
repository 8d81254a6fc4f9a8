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
its arguments, and calls SciPy unchanged otherwise (so the wrappers stay:
installing and removing them at every tape would cost ~100 us a tape). The
wrapper carries the original as `__srcgrad_raw__`, which the registry
follows, so compiled code treats it as the primitive.

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
_installed = None       # the rule count when the wrappers were installed
_by_primitive = {}      # id(primitive) -> (primitive, its wrapper)
_namespaces = set()     # (id, size) of the module globals already searched


def _replace_names(namespace):
    for name, value in list(namespace.items()):
        found = _by_primitive.get(id(value))
        if found is not None and found[0] is value:
            namespace[name] = found[1]


#: NumPy functions with rules that do not dispatch on a differentiable
#: argument (np.full's fill value reaches the array through np.copyto)
NUMPY_NON_DISPATCHING = ("full", "full_like")


def _targets():
    """(owner, attribute name, primitive) for every SciPy primitive with a
    rule that is not a ufunc (ufuncs dispatch to the tape already), and the
    NumPy functions of NUMPY_NON_DISPATCHING."""
    out = [(np, name, getattr(np, name)) for name in NUMPY_NON_DISPATCHING
           if registry.adjoint_rule(getattr(np, name)) is not None]
    # (SciPy's rules only once SciPy is imported: the first tape does not import it)
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
    recorded.__name__ = getattr(prim, "__name__", "scipy_function")
    recorded.__qualname__ = getattr(prim, "__qualname__", recorded.__name__)
    recorded.__doc__ = getattr(prim, "__doc__", None)
    return recorded


def enter(namespace=None):
    """A tape begins recording: the first one ever installs the wrappers
    (they stay: without a Tensor argument they call SciPy unchanged); each
    replaces the primitives bound to names in `namespace` too (the globals
    of the code the tape records: `from scipy.special import logsumexp`),
    once per namespace and size."""
    with _lock:
        key = (registry.rule_count(), "scipy" in sys.modules)
        if key != _installed:
            _install(key)
        if namespace is not None:
            mark = (id(namespace), len(namespace))
            if mark not in _namespaces:
                _replace_names(namespace)
                _namespaces.add(mark)


def _install(key):
    global _installed
    for owner, name, prim in _targets():
        if id(prim) in _by_primitive:
            continue
        wrapper = _wrapper(prim)
        try:
            setattr(owner, name, wrapper)
        except (AttributeError, TypeError):
            continue
        _by_primitive[id(prim)] = (prim, wrapper)
    _installed = key


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
    """A tape stops recording (the wrappers stay installed: see enter)."""
