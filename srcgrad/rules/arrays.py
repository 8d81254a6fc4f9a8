"""Which derivative rules are NumPy-only: on another library's array (a
Dask array) their adjoint or tangent would convert it to NumPy (NumPy
constructors, np.add.at, SciPy, LAPACK calls, Python loops over values)
or fails in that library (Dask's linalg and FFT need particular chunks).

The list comes from tests/arrays/sweep_rules.py, which runs every row of
the rule table on Dask arrays with computation forbidden; docs/arrays.md
prints it. A program compiled for such arrays that calls one of these
raises ForeignArrayError naming the line (Program.numpy_only_calls), before
anything runs. Everything not listed keeps the array's type through NumPy
dispatch and the runtime's array-API helpers (srcgrad.runtime.arrays).
"""
import numpy as np

from ..runtime.arrays import ForeignArrayError  # noqa: F401  (re-exported for the front end)
from . import registry
from .array_api_support import ARRAY_API_RULES
from .python import containers

_NAMES = [
    # reductions whose adjoints build NumPy masks, sort or loop
    "max", "min", "amax", "amin", "nanmax", "nanmin", "ptp", "median", "nanmedian", "quantile", "nanquantile",
    "percentile", "nanpercentile", "nanprod", "nanstd", "nanvar", "sort", "partition",
    "cumulative_sum", "cumulative_prod",
    # elementwise with NumPy masks
    "var", "std",
    "maximum", "minimum", "fmax", "fmin", "clip", "float_power", "real_if_close",
    # shapes and constructors
    "concatenate", "hstack", "vstack", "dstack", "column_stack", "row_stack", "block", "append",
    "insert", "delete", "split", "array_split", "hsplit", "vsplit", "dsplit", "unstack", "array", "copy",
    "pad", "take", "take_along_axis", "compress", "extract", "select", "resize", "repeat", "gradient",
    "linspace", "full", "full_like", "diag", "diagonal", "trace", "matrix_transpose",
    # products
    "einsum", "inner", "kron", "cross", "vdot", "vecdot",
]
_LINALG = ["cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "lstsq",
           "matmul", "matrix_norm", "matrix_power", "matrix_transpose", "multi_dot", "norm", "outer", "pinv",
           "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm"]


def _collect():
    out = {}
    for name in _NAMES:
        f = getattr(np, name, None)
        if f is not None:
            out[f] = "np." + name
    for name in _LINALG:
        f = getattr(np.linalg, name, None)
        if f is not None:
            out[f] = "np.linalg." + name
    for name in dir(np.fft):
        f = getattr(np.fft, name)
        if callable(f) and not name.startswith("_") and "freq" not in name and "shift" not in name:
            out[f] = "np.fft." + name
    return out


#: {callable: the name messages use}
NUMPY_ONLY = _collect()
NUMPY_ONLY[sorted] = "sorted"
NUMPY_ONLY[containers.array_setitem] = NUMPY_ONLY[containers.setitem] = "item assignment x[...] = v"

#: SciPy ufuncs whose derivatives call SciPy on NumPy values (the other scipy.special ufuncs dispatch)
_SCIPY_UFUNCS = {"psi", "iv", "ive", "jv", "yn", "yv", "polygamma", "multigammaln"}

#: modules whose every differentiable function is NumPy-only (SciPy's rules call SciPy on the values)
NUMPY_ONLY_MODULES = ("scipy.",)


def numpy_only(obj):
    """The public name of `obj` when its derivative rule is NumPy-only
    (a Dask array would be converted or fail), else None."""
    try:
        name = NUMPY_ONLY.get(obj)
    except TypeError:           # unhashable
        return None
    if name is not None:
        return name
    if isinstance(obj, np.ufunc):
        return "scipy.special." + obj.__name__ if obj.__name__ in _SCIPY_UFUNCS else None
    module = getattr(obj, "__module__", None) or ""
    if module.startswith(NUMPY_ONLY_MODULES) and callable(obj):
        if module.startswith("scipy.special") and getattr(obj, "__name__", "") not in _SCIPY_UFUNCS \
                and getattr(obj, "__name__", "") != "logsumexp":
            return None         # (scipy.special's elementwise functions dispatch)
        return "%s.%s" % (".".join(module.split(".")[:2]), getattr(obj, "__name__", "?"))
    return None


def rule_label(f):
    """The name the rule-table sweep (tests/arrays/sweep_rules.py) and the
    support lists use for the differentiable function `f`: `np.exp`,
    `np.linalg.norm`, `scipy.special._logsumexp.logsumexp`, a helper's
    module path."""
    mod = getattr(f, "__module__", None) or ""
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", repr(f))
    if mod.startswith("numpy"):
        mod = "np" + mod[5:].replace("._core.umath", "").replace("._core.fromnumeric", "").replace(
            "._core.multiarray", "").replace("._core.numeric", "").replace(".lib._function_base_impl", "")
    return "%s.%s" % (mod, name) if mod else name


def support_list(namespace):
    """The set of rule labels measured to run in the array namespace
    `namespace` (a module: array_api_strict, array_api_compat.torch, or
    another array-API library, which gets array_api_strict's list: the
    standard's functions only)."""
    name = getattr(namespace, "__name__", "") or ""
    return ARRAY_API_RULES["torch" if name.endswith("torch") else "strict"]


def array_api_unsupported(obj, namespace):
    """The label of `obj` when it is a differentiable function whose rule
    has not been measured to run in `namespace` (its rows in the rule table
    did not all give NumPy's gradient there: docs/arrays.md), else None.
    Non-differentiable functions and user functions are None."""
    try:
        rule = registry.adjoint_rule(obj)
    except Exception:
        return None
    if rule is None:
        return None
    label = rule_label(obj)
    if _other_library(obj) or label not in support_list(namespace):
        return label
    return None


def _other_library(obj):
    """Is `obj` SciPy's (a scipy.special ufunc, a scipy.linalg function)? It
    converts other arrays to NumPy (and PyTorch's back, through
    __array_wrap__): a conversion srcgrad does not make behind the user's
    back, so such rules are refused on array-API arrays."""
    if isinstance(obj, np.ufunc):
        return getattr(np, obj.__name__, None) is not obj
    module = getattr(obj, "__module__", None) or getattr(type(obj), "__module__", None) or ""
    return module.startswith("scipy")


#: array methods whose meaning in the array libraries srcgrad runs by the array API's names is
#: NumPy's, or which fail plainly where it is not (x.dot of matrices in PyTorch): others differ
#: silently -- PyTorch's x.std() and x.var() divide by n - 1, x.max(axis) returns (values,
#: indices), x.repeat(n) tiles -- while srcgrad differentiates NumPy's meaning
_ARRAY_API_METHODS = frozenset({"sum", "mean", "prod", "reshape", "squeeze", "swapaxes", "transpose", "conj",
                                "conjugate", "clip", "flatten", "ravel", "trace", "diagonal", "dot", "cumsum",
                                "cumprod"})


def array_api_method_unsupported(method):
    """`x.<method>(...)` as the message names it when the method's meaning
    on PyTorch tensors / array-API arrays may differ from NumPy's (whose
    derivative srcgrad computes), else None."""
    return None if method in _ARRAY_API_METHODS else "x.%s()" % method
