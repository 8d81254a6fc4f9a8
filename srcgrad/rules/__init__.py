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
try:
    import scipy.special  # noqa: F401
except ImportError:       # SciPy is optional: no scipy.special rules without it
    pass
else:
    from . import scipy_special  # noqa: F401
    from . import scipy_special_python  # noqa: F401
    from . import scipy_stats  # noqa: F401
    from . import scipy_linalg  # noqa: F401
    from . import scipy_integrate  # noqa: F401
from . import numpy_more  # noqa: F401  (after nondiff: full, full_like, linspace become differentiable)
from . import numpy_fft  # noqa: F401
from . import numpy_linalg_more  # noqa: F401
