"""srcgrad's tools: reading and checking what the compiler does.

    show     the generated derivative code, highlighted (show.py)
    check    derivatives against finite differences and each other (check.py)
    explain  which values of a function carry derivatives, where paths are
             cut, what the reverse sweep saves (explain.py)
    export   a function's derivative as a standalone NumPy module (export.py)

A front-layer package: it uses the public transforms and the compiled
artefacts, and nothing below imports it.
"""
from .check import check
from .explain import explain
from .export import export
from .show import show

__all__ = ["check", "explain", "export", "show"]
