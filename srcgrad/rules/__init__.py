"""Adjoint rules: one registry serving the compiler and the tape."""
from . import registry  # noqa: F401
from . import helpers  # noqa: F401
from . import numpy_adjoints  # noqa: F401  (registers the rules)
from . import numpy_elementwise  # noqa: F401
from . import numpy_reductions  # noqa: F401
from . import numpy_linalg  # noqa: F401
from . import numpy_shapes  # noqa: F401
from . import containers  # noqa: F401
from . import nondiff  # noqa: F401
from . import tangents  # noqa: F401  (forward mode: tangent rules)
from . import numpy_tangents  # noqa: F401
from . import runtime_rules  # noqa: F401  (rules for what generated code calls)


def _scipy_special():
    from . import scipy_special, scipy_special_python  # noqa: F401


def _scipy_linalg():
    from . import scipy_linalg  # noqa: F401


def _scipy_stats():
    from . import scipy_stats  # noqa: F401


# SciPy is optional, and its rules are imported when the program has imported
# the SciPy module they cover (registry.register_lazy): `import srcgrad` does
# not pay for scipy.stats.
registry.register_lazy("scipy.special", _scipy_special)
registry.register_lazy("scipy.linalg", _scipy_linalg)
registry.register_lazy("scipy.stats", _scipy_stats)
# (scipy.integrate's rules call the AD engine: srcgrad/integrate.py, registered by srcgrad/__init__.py)
from . import numpy_more  # noqa: F401  (after nondiff: full, full_like, linspace become differentiable)
from . import numpy_fft  # noqa: F401
from . import numpy_linalg_more  # noqa: F401
