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
