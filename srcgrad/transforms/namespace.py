"""The names a function sees at transform time, looked up live.

One lookup serves every pass that needs the object a name denotes before
the function runs: resolve.py (callees, leaves, staleness) and the lowering
(`with sg.insert_grad_of(x)`, found before names are resolved).
"""
import builtins
import types

import gast


class Namespace:
    """The names a function sees: closure cells, globals, builtins (live)."""

    def __init__(self, func):
        self.func = func
        self.globals = func.__globals__
        code = func.__code__
        self.cells = dict(zip(code.co_freevars, func.__closure__ or ()))

    def lookup(self, name):
        if name in self.cells:
            try:
                return True, self.cells[name].cell_contents
            except ValueError:
                return False, None
        if name in self.globals:
            return True, self.globals[name]
        b = self.globals.get("__builtins__", builtins)
        b = b if isinstance(b, dict) else vars(b)
        if name in b:
            return True, b[name]
        return False, None

    def static(self, e, local_names=()):
        """The object a Name, or a chain of module attributes (`sg.insert_grad_of`),
        denotes, read without running any code; None for anything else,
        and for a name in `local_names` (a local variable of the function)."""
        if isinstance(e, gast.Attribute):
            base = self.static(e.value, local_names)
            return getattr(base, e.attr, None) if isinstance(base, types.ModuleType) else None
        if not isinstance(e, gast.Name) or e.id in local_names:
            return None
        return self.lookup(e.id)[1]

