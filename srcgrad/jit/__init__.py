"""sg.jit: srcgrad's generated derivative code compiled with Numba.

The top layer of srcgrad (it imports the functional transforms and the
linker of sg.export; nothing below imports it). `api` holds `jit` and the
`Jitted` callable, `lower` the rewriting of generated code for Numba,
`twins` (imported only when Numba is) the `@njit` twins of srcgrad's
run-time helpers.
"""
from .api import Jitted, jit

__all__ = ["jit", "Jitted"]
