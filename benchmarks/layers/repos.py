"""The repositories the harness reads, and how their modules are imported
from a checkout at run time (nothing of them is stored in this repository).

A repository's modules are named either by a file path in the checkout
(loaded under a module name of the harness's own, `_layers_<key>_<alias>`,
so that two CS231n checkouts, each with its own `cs231n` package, can be
loaded side by side) or by a dotted name (the checkout goes on `sys.path`
and the package is imported as its own code imports it).

The compatibility shims below make old code import and run on today's
Python and NumPy. They are applied before anything of the repository is
imported, so the reference run and srcgrad's run see the same modules; none
of them changes a line of a forward or a backward pass.
"""
import collections
import collections.abc
import importlib
import importlib.util
import os
import subprocess
import sys
import types
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Repository:
    key: str                      # the name used on the command line and in the report
    url: str                      # where to clone it from (README)
    dirname: str                  # its directory under --src
    modules: dict                 # alias -> "path/in/checkout.py" or "dotted.module.name"
    shims: tuple = ()             # names of COMPAT shims applied before importing
    sys_path: tuple = (".",)      # checkout-relative directories put on sys.path for dotted modules
    note: str = ""
    cases: list = field(default_factory=list)   # filled by cases.py


class _Inert(types.ModuleType):
    """A stand-in for a display-only dependency that is not installed
    (ML-From-Scratch's progress bar and text tables): every attribute is a
    callable returning another stand-in."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _InertValue()


class _InertValue:
    def __call__(self, *args, **kwargs):
        return _InertValue()

    def __getattr__(self, name):
        return _InertValue()


def _shim_collections_abc():
    """Python 3.10 removed the ABC aliases in `collections` (numpy-ml imports
    `collections.Hashable`): restore them as the `collections.abc` classes."""
    for name in ("Hashable", "Iterable", "Mapping", "MutableMapping", "Sequence", "Callable"):
        if not hasattr(collections, name):
            setattr(collections, name, getattr(collections.abc, name))


def _shim_numpy_aliases():
    """NumPy 1.24 removed `np.int`, `np.float`, ... (aliases of the builtins
    since forever): restore them as those builtins."""
    for name, value in (("int", int), ("float", float), ("complex", complex), ("object", object), ("str", str)):
        if name not in np.__dict__:
            setattr(np, name, value)


def _shim_inert(*names):
    def apply():
        for name in names:
            try:
                importlib.import_module(name)
            except ImportError:
                sys.modules[name] = _Inert(name)
    apply.__doc__ = "display-only modules %s replaced by inert stand-ins when not installed" % ", ".join(names)
    return apply


SHIMS = {
    "collections-abc": _shim_collections_abc,
    "numpy-aliases": _shim_numpy_aliases,
    "inert-progressbar": _shim_inert("progressbar", "terminaltables"),
}

SHIM_NOTES = {
    "collections-abc": "`collections.Hashable` & co. (removed in Python 3.10) restored as the "
                       "`collections.abc` classes",
    "numpy-aliases": "`np.int`, `np.float`, ... (removed in NumPy 1.24) restored as the builtins they were aliases of",
    "inert-progressbar": "`progressbar`, `terminaltables` (training display only) replaced by inert stand-ins "
                         "when not installed",
}


class Modules:
    """The loaded modules of one repository: `mods.a2`, `mods["layers"]`."""

    def __init__(self, repo, checkout):
        self.repo = repo
        self.checkout = os.path.abspath(checkout)
        self._mods = {}

    def __getitem__(self, alias):
        if alias not in self._mods:
            self._mods[alias] = load_module(self.repo, self.checkout, alias)
        return self._mods[alias]

    def __getattr__(self, alias):
        if alias.startswith("_"):
            raise AttributeError(alias)
        try:
            return self[alias]
        except KeyError:
            raise AttributeError(alias)


def apply_shims(repo):
    for name in repo.shims:
        SHIMS[name]()


def load_module(repo, checkout, alias):
    spec_text = repo.modules[alias]
    if spec_text.endswith(".py"):
        path = os.path.join(checkout, spec_text)
        if not os.path.exists(path):
            raise FileNotFoundError("%s: no %s in the checkout %s" % (repo.key, spec_text, checkout))
        name = "_layers_%s_%s" % (repo.key.replace("-", "_"), alias)
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        return module
    for rel in repo.sys_path:
        path = os.path.normpath(os.path.join(checkout, rel))
        if path not in sys.path:
            sys.path.insert(0, path)
    return importlib.import_module(spec_text)


def revision(checkout):
    """`<short hash> (<date>)` of the checkout's HEAD, or None."""
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%h (%ad)", "--date=short"], cwd=checkout,
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None
