"""sg.jit's on-disk cache (`sg.jit(f, cache=True)`,
`@sg.function(jit=True, cache=True)`).

Numba spends seconds typing and optimising a generated gradient (the
first call of the 784-256-10 MLP's: about 20 s on this project's 2-core
benchmark machine), and a new process pays it again. Numba's own cache
(`njit(cache=True)`) keeps machine code across processes, but only for
functions defined in a file, and it trusts the file: it does not look at
the globals the code reads. So the cache here is keyed by the text Numba
compiles:

- the lowered module (the generated functions, the user's functions it
  calls, the constants it reads, all written out as source by the linker)
  is written to `<cache dir>/srcgrad_jit_<hash>.py`, where the hash covers
  that text, the source of srcgrad's Numba twins, lowering and
  optimisation level (linking.py), and the
  Python, NumPy and Numba versions. A different program, a changed
  constant or a new srcgrad gives another file; an existing file is never
  rewritten (its stamp is what Numba validates);
- the module is imported from that file under its own name (registered in
  `sys.modules`: Numba's cached code refers to its functions by module),
  and its functions are compiled with `cache=True`, so Numba keeps their
  machine code in the directory's `__pycache__`.

A new process still transforms and lowers (tens to hundreds of
milliseconds); it loads the machine code instead of compiling it. The
directory is `$SRCGRAD_CACHE_DIR/jit`, else `$XDG_CACHE_HOME/srcgrad/jit`,
else `~/.cache/srcgrad/jit`; deleting it empties the cache. Global arrays
the code reads are parameters of the compiled code (api._live_arrays), so
their values are never part of the cached code.
"""
import hashlib
import importlib.util
import os
import sys
import tempfile

import numpy as np

ENV = "SRCGRAD_CACHE_DIR"

_stamp = None


def directory():
    """The cache directory (a str; not created here)."""
    root = os.environ.get(ENV)
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "srcgrad")
    return os.path.join(root, "jit")


def _code_stamp():
    """What else the compiled code depends on: the source of the twins and
    of the lowering (read once per process), and the versions."""
    global _stamp
    if _stamp is None:
        import numba
        here = os.path.dirname(os.path.abspath(__file__))
        digest = hashlib.sha256()
        for name in ("twins.py", "lower.py", "api.py", "linking.py", "diskcache.py"):
            with open(os.path.join(here, name), "rb") as f:
                digest.update(f.read())
        digest.update(("%s|%s|%s" % (sys.version, np.__version__, numba.__version__)).encode())
        _stamp = digest.hexdigest()
    return _stamp


def module_namespace(text):
    """The namespace of the module whose source is `text`, run from its file
    in the cache directory (written when absent) and registered in
    `sys.modules`; the same module when this process loaded it already.

    Args:
      text: the module's Python source (a str).

    Returns:
      The module's `__dict__` (its `__name__` is `srcgrad_jit_<hash>`).

    Raises:
      OSError: the directory cannot be created or written.
      Exception: what running the module raises (it is then not registered).
    """
    digest = hashlib.sha256((_code_stamp() + "\n" + text).encode()).hexdigest()[:32]
    name = "srcgrad_jit_%s" % digest
    module = sys.modules.get(name)
    if module is not None:
        return module.__dict__
    folder = directory()
    path = os.path.join(folder, name + ".py")
    if not os.path.exists(path):
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".%s." % name, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)       # (atomic: another process writing the same text is harmless)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module.__dict__
