"""The rules: one registry of adjoint and tangent rules serving the compiler
and the tapes.

    registry.py      Template, Rule, register_adjoint and the lookups
    tangents.py      TangentRule, register_tangent, register_linear
    numpy/           NumPy's rules, one module per family (elementwise,
                     piecewise, complex, reductions, linalg, shapes, indexing,
                     fft, constructors), both modes side by side
    python/          lists, tuples, dicts, element assignment; sum, sorted
    scipy/           scipy.special, scipy.stats, scipy.linalg (loaded lazily)
    generated_code.py  the rules of what generated code calls (unbroadcast,
                     densify...), so that it can be differentiated again
    nondiff.py       every non-differentiable function, in one place
    mutation.py      the NumPy calls that write into an argument (refused by name)
    helpers/         the run-time helpers the templates call
    catalog.py       docs/supported.md, generated from the registry

Importing this package registers the NumPy and Python rules.
"""
from . import registry
from . import tangents  # noqa: F401  (forward mode: tangent rules)
from . import nondiff  # noqa: F401  (first: the rule modules may make a function differentiable)
from . import numpy, python  # noqa: F401  (registers the rules)
from . import generated_code  # noqa: F401


def _scipy_special():
    from .scipy import special  # noqa: F401


def _scipy_linalg():
    from .scipy import linalg  # noqa: F401


def _scipy_stats():
    from .scipy import stats  # noqa: F401


# SciPy is optional, and its rules are imported when the program has imported
# the SciPy module they cover (registry.register_lazy): `import srcgrad` does
# not pay for scipy.stats.
registry.register_lazy("scipy.special", _scipy_special)
registry.register_lazy("scipy.linalg", _scipy_linalg)
registry.register_lazy("scipy.stats", _scipy_stats)
# (scipy.integrate's rules call the AD engine: srcgrad/integrate.py, registered by srcgrad/__init__.py)
