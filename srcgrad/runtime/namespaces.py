"""Generated code run in another array namespace (layer 0).

srcgrad's generated code is NumPy source (`np.tanh(x)`, `np.sum(g, axis=0)`),
and so are the runtime helpers it calls (`unbroadcast`, `unreduce`). Arrays
that implement NumPy's dispatch protocols (Dask, CuPy) keep their type
through it. Arrays that do not (PyTorch tensors, `array_api_strict`) would be
converted to NumPy by the first `np.*` call: a hidden conversion.

For those, the same compiled functions run with NumPy's names bound to the
inputs' array-API namespace (`array_api_compat.array_namespace`): `twin(fn,
facade)` is `fn` (same code object, so the same lines in tracebacks) whose
globals and closure cells see a `NumpyFacade` where they held the `numpy`
module or a NumPy function. `facade.tanh` is `xp.tanh`, `facade.arccos` is
`xp.acos`, `facade.concatenate` is `xp.concat`, `facade.transpose(x, axes)`
is `xp.permute_dims(x, axes)`, and so on (the table below follows the
array API standard, 2023.12 and later: data-apis.org/array-api). The
functions a twin calls (srcgrad's helpers, the user's functions) are
twinned in turn when looked up, so the whole computation stays in the
namespace. A NumPy name with no array-API counterpart raises
ForeignArrayError naming it (never a conversion).

Which derivative rules this runs correctly is measured, not assumed:
tests/arrays/sweep_rules.py runs every row of the rule table in each
namespace against NumPy's result, and rules/arrays.py refuses the rest
before anything runs.
"""
import functools
import math
import types
import weakref

import numpy as np

from . import arrays
from .arrays import ForeignArrayError

#: NumPy's name -> the array API's, where only the name differs
_RENAMED = {
    "arccos": "acos", "arcsin": "asin", "arctan": "atan", "arctan2": "atan2", "arccosh": "acosh",
    "arcsinh": "asinh", "arctanh": "atanh", "power": "pow", "absolute": "abs", "conjugate": "conj",
    "concatenate": "concat", "invert": "bitwise_invert", "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift", "true_divide": "divide", "amax": "max", "amin": "min",
    "fabs": "abs",
}

#: the array API standard's functions (2025.12; array_api_strict's namespace): only these are
#: looked up in the namespace, whose other names (torch.split, ...) may mean something else
_STANDARD = frozenset("""
abs acos acosh add all any arange argmax argmin argsort asarray asin asinh astype atan atan2 atanh
bitwise_and bitwise_invert bitwise_left_shift bitwise_or bitwise_right_shift bitwise_xor broadcast_arrays
broadcast_shapes broadcast_to can_cast ceil clip concat conj copysign cos cosh count_nonzero cumulative_prod
cumulative_sum diff divide empty empty_like equal exp expand_dims expm1 eye finfo flip floor floor_divide
full full_like greater greater_equal hypot iinfo imag isdtype isfinite isin isinf isnan less less_equal
linspace log log10 log1p log2 logaddexp logical_and logical_not logical_or logical_xor matmul
matrix_transpose max maximum mean meshgrid min minimum moveaxis multiply negative nextafter nonzero
not_equal ones ones_like permute_dims positive pow prod real reciprocal remainder repeat reshape
result_type roll round searchsorted sign signbit sin sinh sort sqrt square squeeze stack std subtract sum
take take_along_axis tan tanh tensordot tile tril triu trunc unique_all unique_counts unique_inverse
unique_values unstack var vecdot where zeros zeros_like""".split())
_STANDARD_LINALG = frozenset("""
cholesky cross det diagonal eigh eigvalsh inv matmul matrix_norm matrix_power matrix_rank matrix_transpose
outer pinv qr slogdet solve svd svdvals tensordot trace vecdot vector_norm""".split())
_STANDARD_FFT = frozenset("""
fft fftfreq fftn fftshift hfft ifft ifftn ifftshift ihfft irfft irfftn rfft rfftfreq rfftn""".split())
_STANDARD_BY_SUB = {"": _STANDARD, "linalg": _STANDARD_LINALG, "fft": _STANDARD_FFT}

#: numbers and markers NumPy and the array API share (kept as NumPy's)
_CONSTANTS = {"pi": np.pi, "e": np.e, "inf": np.inf, "nan": np.nan, "newaxis": None,
              "euler_gamma": np.euler_gamma}

_NUMPY_MODULES = {}        # id(module) -> the facade attribute naming it ("linalg", "fft", "" for numpy)


def _numpy_modules():
    if not _NUMPY_MODULES:
        _NUMPY_MODULES.update({id(np): "", id(np.linalg): "linalg", id(np.fft): "fft"})
    return _NUMPY_MODULES


_NUMPY_NAMES = {}          # id(NumPy function) -> (submodule, name), built on first use


def _numpy_function_names():
    if not _NUMPY_NAMES:
        for sub, module in (("", np), ("linalg", np.linalg), ("fft", np.fft)):
            for name in dir(module):
                obj = getattr(module, name, None)
                if callable(obj) and not isinstance(obj, type) and not name.startswith("_"):
                    _NUMPY_NAMES.setdefault(id(obj), (sub, name, obj))
    return _NUMPY_NAMES


def _axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


class NumpyFacade:
    """NumPy's names over the array-API namespace `xp`.

    `facade.name` is looked up once and cached: `xp`'s function of the
    same name in the array API standard, its renamed counterpart
    (`_RENAMED`), or an adapter written here for a NumPy signature the
    standard spells differently (`sum` with a list of axes, `transpose`,
    `dot`, `outer`, `ndim`, `shape`, `squeeze` without an axis) -- each
    called on the namespace's arrays, NumPy's own function otherwise
    (`_on_arrays`). NumPy's type objects stay NumPy's (`np.ndarray`,
    `np.float64`: isinstance tests, and dtype arguments, which become
    `xp`'s dtypes where an array is made: `xp_dtype`); `np.random` stays
    NumPy's. A name the standard lacks raises ForeignArrayError when called
    on the namespace's arrays. `facade.linalg` and `facade.fft` are facades
    over `xp.linalg` and `xp.fft`."""

    def __init__(self, xp, sub="", root=None):
        self._xp = xp
        self._sub = sub
        self._root = root or self
        # (on the root only) function -> its twin, held no longer than the function; module id -> twin
        self._function_twins = weakref.WeakKeyDictionary() if root is None else None
        self._module_twins = {} if root is None else None
        self.__name__ = "numpy-on-%s" % getattr(xp, "__name__", type(xp).__name__)

    def __repr__(self):
        return "<NumPy names over %s>" % getattr(self._xp, "__name__", self._xp)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = self._resolve(name)
        setattr(self, name, value)
        return value

    # ------------------------------------------------------------ lookup

    def _resolve(self, name):
        xp = self._xp
        if not self._sub:
            if name in ("linalg", "fft"):
                inner = getattr(xp, name, None)
                if inner is None:
                    return _Missing(self, name)
                return NumpyFacade(inner, name, self._root)
            if name == "random":
                return np.random
            if name in _CONSTANTS:
                return _CONSTANTS[name]
            adapter = _ADAPTERS.get(name)
            if adapter is not None:
                return _on_arrays(_bound(adapter, self._root), getattr(np, name, None), name, self._root)
            numpy_attr = getattr(np, name, None)
            if isinstance(numpy_attr, type):
                return numpy_attr       # np.ndarray, np.integer, np.floating: isinstance tests
        else:
            adapter = (_LINALG_ADAPTERS if self._sub == "linalg" else _FFT_ADAPTERS).get(name)
            if adapter is not None:
                return _on_arrays(_bound(adapter, self._root), getattr(getattr(np, self._sub), name, None), name,
                                  self._root)
        standard = _RENAMED.get(name, name) if not self._sub else name
        target = getattr(xp, standard, None) if standard in _STANDARD_BY_SUB[self._sub] else None
        numpy_module = getattr(np, self._sub) if self._sub else np
        if callable(target):
            return _on_arrays(_dtype_translating(target, self._root), getattr(numpy_module, name, None), name,
                              self._root)
        return _on_arrays(_Missing(self, name), getattr(numpy_module, name, None), name, self._root)

    @property
    def xp(self):
        """The array-API namespace the names resolve in."""
        return self._root._xp

    def dtype(self, d):
        """`np.dtype(d)` for code running in the namespace: NumPy's dtype
        for a dtype of the namespace (xp.float64 -> float64) or an array's,
        so that `.kind`, comparisons and np.result_type read as in NumPy.
        Creation functions turn it back into the namespace's (`xp_dtype`)."""
        return numpy_dtype(d)

    def xp_dtype(self, d):
        """The namespace's dtype for a NumPy dtype specifier (np.float64,
        np.dtype('float32'), float, 'float64'); other values unchanged."""
        if d is None or d is float:
            return None if d is None else self.xp.float64
        if d is int:
            return self.xp.int64
        if d is complex:
            return self.xp.complex128
        if d is bool:
            return self.xp.bool
        try:
            found = np.dtype(d)
        except TypeError:
            return d        # already the namespace's
        return getattr(self.xp, found.name)

    # ------------------------------------------------------------ twins

    def twin(self, obj):
        """`obj` as code running in this namespace sees it: the facade for
        the `numpy` module (its `linalg`/`fft` for theirs), the facade's
        function for a NumPy function, a twin for a Python function that
        reads NumPy through its globals (srcgrad's helpers, the user's
        functions), `obj` itself otherwise."""
        root = self._root
        if isinstance(obj, types.FunctionType):
            hit = root._function_twins.get(obj)
            if hit is not None:
                return obj if hit is _SAME else hit
            if _reads_numpy(obj):
                return _twin_function(obj, root)
            root._function_twins[obj] = _SAME
            return obj
        hook = getattr(type(obj), "__srcgrad_twin__", None)
        if hook is not None:            # (srcgrad's callable objects: a recursive call's Deferred)
            return hook(obj, root)
        if isinstance(obj, types.ModuleType):
            hit = root._module_twins.get(id(obj))
            if hit is None:
                result = obj
                sub = _numpy_modules().get(id(obj))
                if sub is not None:
                    result = root if sub == "" else getattr(root, sub)
                elif obj.__name__.split(".")[0] == "srcgrad" or (
                        getattr(obj, "__file__", None) and _is_own_code(obj.__file__, obj.__name__)):
                    result = _TwinModule(obj, root)
                hit = root._module_twins[id(obj)] = (obj, result)     # (modules live as long as the process)
            return hit[1]
        if isinstance(obj, np.ufunc) or (callable(obj) and getattr(obj, "__module__", None) and
                                         obj.__module__.split(".")[0] == "numpy"):
            entry = _numpy_function_names().get(id(obj))
            if entry is not None:
                sub, name, _ = entry
                return getattr(getattr(root, sub) if sub else root, name)     # (cached as an attribute)
            return obj
        if isinstance(obj, types.MethodType) and isinstance(obj.__func__, types.FunctionType):
            func = self.twin(obj.__func__)
            return obj if func is obj.__func__ else types.MethodType(func, obj.__self__)
        if isinstance(obj, functools.partial):
            func = self.twin(obj.func)
            return obj if func is obj.func else functools.partial(func, *obj.args, **obj.keywords)
        return obj      # (data, the user's objects: seen as they are, and not held here)


_SAME = object()        # a function that is its own twin (a library's)


def original(obj):
    """The object `obj` is the twin of (itself when it is none's)."""
    ref = getattr(obj, "__srcgrad_twin_of__", None)
    if ref is None:
        return obj
    return ref() if isinstance(ref, weakref.ref) else ref


class _Missing:
    """A NumPy name the namespace lacks: calling it raises ForeignArrayError."""

    def __init__(self, facade, name):
        self.facade, self.name = facade, name

    def __call__(self, *args, **kwargs):
        prefix = "np.%s." % self.facade._sub if self.facade._sub else "np."
        raise ForeignArrayError(
            "srcgrad: %s%s has no counterpart in %s, the array namespace of the inputs: srcgrad runs "
            "NumPy code on these arrays by the array API's names and does not convert them to NumPy "
            "(docs/arrays.md)" % (prefix, self.name, getattr(self.facade.xp, "__name__", self.facade.xp)))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Missing(self.facade, self.name + "." + name)



_LIBRARY_DIRS = None


def _library_dirs():
    """The directories of installed libraries and the standard library."""
    global _LIBRARY_DIRS
    if _LIBRARY_DIRS is None:
        import sysconfig
        paths = sysconfig.get_paths()
        dirs = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
        _LIBRARY_DIRS = tuple(sorted(d.rstrip("/") + "/" for d in dirs if d))
    return _LIBRARY_DIRS


def _is_own_code(filename, module=""):
    """Is the code of `filename` (module `module`) srcgrad's, generated,
    or the user's, so that its NumPy names are the namespace's? An
    installed library's or the standard library's code is left as it is
    (NumPy's own functions are mapped by name instead)."""
    if module.split(".")[0] == "srcgrad" or not filename or filename.startswith("<"):
        return True
    return not filename.startswith(_library_dirs())


def _reads_numpy(fn):
    """Is `fn` code whose NumPy names should be the namespace's: srcgrad's
    helpers, generated code, the user's functions (`_is_own_code`)?"""
    return _is_own_code(fn.__code__.co_filename, getattr(fn, "__module__", None) or "")


class _TwinModule:
    """A module of srcgrad's or the user's as twinned code sees it: its
    functions twinned (`elementwise.sign(x)` in a helper)."""

    def __init__(self, module, facade):
        self.__module, self.__facade = module, facade

    def __getattr__(self, name):
        return self.__facade.twin(getattr(self.__module, name))


def _twin_function(fn, facade):
    """A copy of `fn` with `_TwinGlobals` and its closure cells' contents
    twinned (registered before the cells are filled: a function whose
    closure holds itself, a recursive helper, twins once)."""
    closure = fn.__closure__
    cells = tuple(types.CellType() for _ in closure) if closure else None
    twin = types.FunctionType(fn.__code__, _TwinGlobals(fn.__globals__, facade), fn.__name__,
                              fn.__defaults__, cells)
    twin.__kwdefaults__ = fn.__kwdefaults__
    twin.__dict__.update(fn.__dict__)
    twin.__srcgrad_twin_of__ = weakref.ref(fn)      # (weakly: the cache must not keep fn alive)
    facade._function_twins[fn] = twin
    for new, old in zip(cells or (), closure or ()):
        try:
            new.cell_contents = facade.twin(old.cell_contents)
        except ValueError:          # an empty cell (a name assigned later)
            pass
    return twin


class _TwinGlobals(dict):
    """A function's globals as its twin sees them: empty itself, every
    lookup goes to the original module dict (so a later rebinding is seen)
    and is twinned. Writes (a `global` statement) go to the module."""

    __slots__ = ("module", "facade")

    def __init__(self, module, facade):
        super().__init__()
        self.module = module
        self.facade = facade
        if "__builtins__" in module:
            dict.__setitem__(self, "__builtins__", module["__builtins__"])

    def __missing__(self, name):
        return self.facade.twin(self.module[name])

    def __setitem__(self, name, value):
        self.module[name] = value


#: adapters about dtypes (NumPy's dtypes answer for the namespace's): never NumPy's own function
_DTYPE_QUERIES = {"result_type", "issubdtype", "finfo", "iscomplexobj", "isrealobj", "ndim", "shape", "size"}


def _any_array(values):
    for v in values:
        if _is_array(v):
            return True
        if type(v) in (list, tuple) and any(_is_array(e) for e in v):
            return True
    return False


def _on_arrays(xp_function, numpy_function, name, facade):
    """Call `xp_function` when an argument (or an element of a list or
    tuple argument) is an array of the namespace, else NumPy's own
    `numpy_function`: helpers compute on shapes, axes and Python lists with
    NumPy (np.cumsum(sizes), np.argsort(axes)), as NumPy's dispatch would
    leave them. A floating or boolean result of NumPy's is lifted into the
    namespace (np.broadcast_to(1.0, shape): the seed of a cotangent;
    np.zeros(shape, bool): a mask, which PyTorch would otherwise combine as
    uint8), a NumPy floating scalar becomes a Python number (weakly typed,
    as NumPy's scalars are not for other arrays); integer results (sizes,
    axes, permutations, indices) stay NumPy's. Creation functions without arrays are
    the same as NumPy's after the lift (np.zeros(n): the namespace's
    float64 zeros; np.arange(n): NumPy's integers, an index)."""
    if numpy_function is None or name in _DTYPE_QUERIES:
        return xp_function

    def call(*args, **kwargs):
        if _any_array(args) or _any_array(kwargs.values()):
            return xp_function(*args, **kwargs)
        return _lift_result(facade, numpy_function(*args, **kwargs))
    call.__name__ = name
    call.__srcgrad_twin_of__ = numpy_function
    return call


def _lift_result(facade, r):
    if isinstance(r, np.ndarray):
        if r.dtype.kind not in "fcb":
            return r
        return facade.xp.asarray(r if r.flags.writeable else np.array(r))   # (a broadcast view: its values)
    if isinstance(r, np.floating):
        return float(r)
    if isinstance(r, np.complexfloating):
        return complex(r)
    if type(r) in (tuple, list) and any(isinstance(e, np.ndarray) for e in r):
        return type(r)(_lift_result(facade, e) for e in r)
    return r


def _bound(adapter, facade):
    def call(*args, **kwargs):
        return adapter(facade, *args, **kwargs)
    call.__name__ = adapter.__name__
    return call


def _dtype_translating(fn, facade):
    """`fn` with its `dtype=` keyword translated to the namespace's dtype."""
    def call(*args, **kwargs):
        if "dtype" in kwargs:
            kwargs["dtype"] = facade.xp_dtype(kwargs["dtype"])
        return fn(*args, **kwargs)
    call.__name__ = getattr(fn, "__name__", "function")
    return call


# ---------------------------------------------------------------- adapters
# NumPy signatures the array API spells differently. Each takes the facade first.

def _is_array(x):
    return hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (np.ndarray, np.generic))


def _lift(f, x):
    """`x` as an array of the namespace: arrays of it unchanged; Python
    numbers, lists of them and NumPy constants with NumPy's dtype (a
    Python float is float64, as in NumPy, not the namespace's default:
    PyTorch's is float32)."""
    if _is_array(x):
        return x
    return f.xp.asarray(np.asarray(x))


def _asarray(f, x, dtype=None, copy=None, **_):
    xp = f.xp
    if isinstance(x, (list, tuple)) and any(_is_array(e) for e in x):
        out = xp.stack([_lift(f, e) for e in x])
    else:
        out = _lift(f, x)
    if dtype is not None:
        out = xp.astype(out, f.xp_dtype(dtype))
    return out


def _array(f, x, dtype=None, copy=True, **kw):
    out = _asarray(f, x, dtype)
    return f.xp.asarray(out, copy=True) if copy and out is x else out


def _ndim(f, x):
    return len(x.shape) if _is_array(x) else np.ndim(x)


def _shape(f, x):
    return tuple(x.shape) if _is_array(x) else np.shape(x)


def _size(f, x, axis=None):
    if not _is_array(x):
        return np.size(x, axis)
    return math.prod(x.shape) if axis is None else x.shape[axis]


def _reduction(name):
    def adapter(f, x, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        if out is not None:
            raise ForeignArrayError("srcgrad: np.%s(..., out=...) on array-API arrays" % name)
        x = _lift(f, x)
        kw = {"axis": _axis(axis), "keepdims": keepdims}
        if dtype is not None:
            kw["dtype"] = f.xp_dtype(dtype)
        if "ddof" in kwargs:
            kw["correction"] = kwargs.pop("ddof")
        return getattr(f.xp, name)(x, **kw, **kwargs)
    adapter.__name__ = name
    return adapter


def _minmax(name):
    def adapter(f, x, axis=None, out=None, keepdims=False, **kwargs):
        x = _lift(f, x)
        return getattr(f.xp, name)(x, axis=_axis(axis), keepdims=keepdims)
    adapter.__name__ = name
    return adapter


def _transpose(f, x, axes=None):
    ndim = len(x.shape)
    axes = tuple(range(ndim))[::-1] if axes is None else tuple(a % ndim for a in axes)
    return f.xp.permute_dims(x, axes)


def _swapaxes(f, x, a, b):
    ndim = len(x.shape)
    order = list(range(ndim))
    order[a % ndim], order[b % ndim] = order[b % ndim], order[a % ndim]
    return f.xp.permute_dims(x, tuple(order))


def _dot(f, a, b, out=None):
    xp = f.xp
    if not _is_array(a) or not _is_array(b) or len(a.shape) == 0 or len(b.shape) == 0:
        return a * b
    if len(b.shape) <= 2:
        return xp.matmul(a, b)
    return xp.tensordot(a, b, axes=([len(a.shape) - 1], [len(b.shape) - 2]))


def _outer(f, a, b, out=None):
    xp = f.xp
    return xp.reshape(a, (-1, 1)) * xp.reshape(b, (1, -1))


def _inner(f, a, b):
    xp = f.xp
    if len(a.shape) == 0 or len(b.shape) == 0:
        return a * b
    return xp.tensordot(a, b, axes=([len(a.shape) - 1], [len(b.shape) - 1]))


def _tensordot(f, a, b, axes=2):
    if isinstance(axes, (list, tuple)):
        axes = tuple(tuple(x) if isinstance(x, (list, tuple)) else (x,) for x in axes)
    return f.xp.tensordot(a, b, axes=axes)


def _squeeze(f, x, axis=None):
    if axis is None:
        axis = tuple(i for i, s in enumerate(x.shape) if s == 1)
    return f.xp.squeeze(x, axis=_axis(axis))


def _expand_dims(f, x, axis):
    xp = f.xp
    if isinstance(axis, (tuple, list)):
        ndim = len(x.shape) + len(axis)
        for a in sorted(a % ndim for a in axis):
            x = xp.expand_dims(x, axis=a)
        return x
    return xp.expand_dims(x, axis=axis)


def _c_order(name, order):
    if order not in ("C", "A", "K"):
        raise ForeignArrayError("srcgrad: np.%s(..., order=%r) on array-API arrays, which have C order only"
                                % (name, order))


def _reshape(f, x, shape, order="C", **kw):
    _c_order("reshape", order)
    x = _lift(f, x)
    return f.xp.reshape(x, tuple(shape) if isinstance(shape, (list, tuple)) else (shape,))


def _ravel(f, x, order="C"):
    _c_order("ravel", order)
    return f.xp.reshape(x, (-1,))


def _sorting(name):
    def adapter(f, x, axis=-1, kind=None, order=None, stable=None, descending=False):
        if order is not None:
            raise ForeignArrayError("srcgrad: np.%s(..., order=...) (structured arrays) on array-API arrays" % name)
        if axis is None:
            x, axis = f.xp.reshape(x, (-1,)), -1
        stable = kind in ("stable", "mergesort") if stable is None else stable
        return getattr(f.xp, name)(x, axis=axis, stable=stable, descending=descending)
    adapter.__name__ = name
    return adapter


def _split(f, x, indices_or_sections, axis=0):
    """np.split by slices (the array API has no split)."""
    n = x.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        if n % indices_or_sections:
            raise ValueError("array split does not result in an equal division")
        step = n // indices_or_sections
        points = [step * i for i in range(1, indices_or_sections)]
    else:
        points = [int(i) for i in indices_or_sections]
    bounds = [0] + points + [n]
    lead = (slice(None),) * (axis % len(x.shape))
    return [x[lead + (slice(a, max(a, b)), ...)] for a, b in zip(bounds[:-1], bounds[1:])]


def _diagonal(f, a, offset=0, axis1=0, axis2=1):
    """np.diagonal (axes 0 and 1 by default) by the array API's
    linalg.diagonal (the last two axes): those axes moved there first."""
    xp = f.xp
    nd = len(a.shape)
    moved = xp.moveaxis(a, (axis1 % nd, axis2 % nd), (nd - 2, nd - 1))
    return xp.linalg.diagonal(moved, offset=offset)


def _trace(f, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    if out is not None:
        raise ForeignArrayError("srcgrad: np.trace(..., out=...) on array-API arrays")
    d = _diagonal(f, a, offset, axis1, axis2)
    return f.xp.sum(d, axis=-1, dtype=f.xp_dtype(dtype))


def _take(f, x, indices, axis=None, out=None, mode="raise"):
    if mode != "raise" or out is not None:
        raise ForeignArrayError("srcgrad: np.take(..., mode=%r) on array-API arrays" % mode)
    xp = f.xp
    if axis is None:
        x, axis = xp.reshape(x, (-1,)), 0
    scalar = isinstance(indices, (int, np.integer))
    idx = indices if _is_array(indices) else xp.asarray(np.asarray(indices).reshape(-1))
    out = xp.take(x, idx, axis=axis)
    if scalar:
        return xp.squeeze(out, axis=axis)
    shape = np.shape(indices) if not _is_array(indices) else tuple(indices.shape)
    if len(shape) != 1:
        ax = axis % len(x.shape)
        out = xp.reshape(out, tuple(x.shape[:ax]) + tuple(shape) + tuple(x.shape[ax + 1:]))
    return out


def _where(f, cond, a=None, b=None):
    xp = f.xp
    cond = _lift(f, cond)
    if a is None and b is None:
        return xp.nonzero(cond)
    like = a if _is_array(a) else b
    # (a Python number beside an array takes its dtype, as NumPy's weak scalars do)
    if not _is_array(a):
        a = xp.asarray(a, dtype=like.dtype) if _is_array(like) and isinstance(a, (int, float)) else _lift(f, a)
    if not _is_array(b):
        b = xp.asarray(b, dtype=like.dtype) if _is_array(like) and isinstance(b, (int, float)) else _lift(f, b)
    return xp.where(cond, a, b)


def _creation(name):
    def adapter(f, shape, dtype=float, **kwargs):
        kwargs.pop("order", None)
        shape = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
        return getattr(f.xp, name)(shape, dtype=f.xp_dtype(dtype), **kwargs)
    adapter.__name__ = name
    return adapter


def _full(f, shape, fill_value, dtype=None, **kwargs):
    shape = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
    if _is_array(fill_value):       # (the array API fills with Python numbers only)
        fill_value = fill_value if dtype is None else f.xp.astype(fill_value, f.xp_dtype(dtype))
        return f.xp.zeros(shape, dtype=fill_value.dtype) + fill_value
    return f.xp.full(shape, fill_value, dtype=f.xp_dtype(dtype))


def _full_like(f, x, fill_value, dtype=None, **kwargs):
    shape = kwargs.get("shape") or tuple(x.shape)
    return _full(f, shape, fill_value, dtype=x.dtype if dtype is None else dtype)


def _triangle(name):
    def adapter(f, m, k=0):
        return getattr(f.xp, name)(m, k=k)
    adapter.__name__ = name
    return adapter


def _norm(f, x, ord=None, axis=None, keepdims=False):
    """np.linalg.norm by the array API's vector_norm and matrix_norm (which
    reduces the last two axes: others are moved there and back)."""
    xp = f.xp
    nd = len(x.shape)
    if axis is None:
        if ord is None:
            return xp.linalg.vector_norm(x, ord=2, axis=None, keepdims=keepdims)
        axis = tuple(range(nd))
    axis = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(axis) == 1:
        return xp.linalg.vector_norm(x, ord=2 if ord is None else ord, axis=axis[0], keepdims=keepdims)
    a, b = axis[0] % nd, axis[1] % nd
    moved = xp.moveaxis(x, (a, b), (nd - 2, nd - 1))
    out = xp.linalg.matrix_norm(moved, ord="fro" if ord is None else ord, keepdims=keepdims)
    return xp.moveaxis(out, (nd - 2, nd - 1), (a, b)) if keepdims else out


def _like(name):
    def adapter(f, x, *args, dtype=None, **kwargs):
        kwargs.pop("subok", None)
        kwargs.pop("order", None)
        shape = kwargs.pop("shape", None)
        x = _lift(f, x)
        out = getattr(f.xp, name)(x, *args, dtype=f.xp_dtype(dtype), **kwargs)
        return out if shape is None else f.xp.reshape(out, shape)
    adapter.__name__ = name
    return adapter


def _cumulative(name):
    def adapter(f, x, axis=None, dtype=None, out=None):
        xp = f.xp
        if axis is None:
            x, axis = xp.reshape(x, (-1,)), 0
        return getattr(xp, name)(x, axis=axis, dtype=f.xp_dtype(dtype))
    adapter.__name__ = name
    return adapter


def numpy_dtype(d):
    """NumPy's dtype for `d`: a NumPy dtype specifier, another library's
    dtype (torch.float64, array_api_strict.float32: by name) or an array
    of any library (its dtype)."""
    if hasattr(d, "dtype") and not isinstance(d, (type, np.dtype)):
        d = d.dtype
    try:
        return np.dtype(d)
    except TypeError:
        return np.dtype(str(d).rsplit(".", 1)[-1])


def _issubdtype(f, a, b):
    return np.issubdtype(numpy_dtype(a), b if isinstance(b, type) and issubclass(b, np.generic) else numpy_dtype(b))


def _finfo(f, d):
    return np.finfo(numpy_dtype(d))


def _iscomplexobj(f, x):
    return f.xp.isdtype(x.dtype, "complex floating") if _is_array(x) else np.iscomplexobj(x)


def _result_type(f, *args):
    """NumPy's result_type (a NumPy dtype) of arrays and dtypes of the
    namespace and Python numbers, by their NumPy equivalents."""
    return np.result_type(*[a if isinstance(a, (int, float, complex)) or (
        isinstance(a, type) and issubclass(a, np.generic)) else numpy_dtype(a) for a in args])


def _moveaxis(f, x, source, destination):
    return f.xp.moveaxis(x, source, destination)


def _broadcast_to(f, x, shape):
    x = _lift(f, x)
    return f.xp.broadcast_to(x, tuple(shape))


def _stack(f, arrays, axis=0, **kw):
    return f.xp.stack([_lift(f, a) for a in arrays], axis=axis)


def _concatenate(f, arrays, axis=0, **kw):
    return f.xp.concat([_lift(f, a) for a in arrays], axis=axis)


def _astype(f, x, dtype, copy=True):
    return f.xp.astype(x, f.xp_dtype(dtype), copy=copy)


def _square(f, x):
    return x * x


def _reciprocal(f, x):
    return 1.0 / x


def _clip(f, x, a_min=None, a_max=None, **kw):
    return f.xp.clip(x, a_min, a_max)


def _diff(f, x, n=1, axis=-1):
    return f.xp.diff(x, n=n, axis=axis)


def _flip(f, x, axis=None):
    return f.xp.flip(x, axis=_axis(axis))


def _roll(f, x, shift, axis=None):
    return f.xp.roll(x, shift, axis=_axis(axis))


def _isscalar(f, x):
    return np.isscalar(x)


def _copy(f, x, **kw):
    return f.xp.asarray(x, copy=True)


_ADAPTERS = {
    "asarray": _asarray, "asanyarray": _asarray, "array": _array, "ndim": _ndim, "shape": _shape, "size": _size,
    "sum": _reduction("sum"), "mean": _reduction("mean"), "prod": _reduction("prod"),
    "std": _reduction("std"), "var": _reduction("var"),
    "max": _minmax("max"), "min": _minmax("min"), "amax": _minmax("max"), "amin": _minmax("min"),
    "transpose": _transpose, "swapaxes": _swapaxes, "dot": _dot, "outer": _outer, "inner": _inner,
    "tensordot": _tensordot, "squeeze": _squeeze, "expand_dims": _expand_dims, "reshape": _reshape,
    "ravel": _ravel, "where": _where, "zeros": _creation("zeros"), "ones": _creation("ones"),
    "empty": _creation("empty"), "full": _full, "zeros_like": _like("zeros_like"),
    "ones_like": _like("ones_like"), "empty_like": _like("empty_like"), "full_like": _full_like,
    "tril": _triangle("tril"), "triu": _triangle("triu"), "sort": _sorting("sort"),
    "argsort": _sorting("argsort"), "take": _take, "split": _split, "diagonal": _diagonal,
    "trace": _trace,
    "cumsum": _cumulative("cumulative_sum"), "cumprod": _cumulative("cumulative_prod"),
    "iscomplexobj": _iscomplexobj, "result_type": _result_type, "moveaxis": _moveaxis,
    "broadcast_to": _broadcast_to, "stack": _stack, "concatenate": _concatenate, "astype": _astype,
    "square": _square, "reciprocal": _reciprocal, "clip": _clip, "diff": _diff, "flip": _flip, "roll": _roll,
    "isscalar": _isscalar, "copy": _copy, "issubdtype": _issubdtype, "finfo": _finfo,
}


_LINALG_ADAPTERS = {"norm": _norm}


def _shift(name):
    def adapter(f, x, axes=None):
        return getattr(f.xp.fft, name)(x, axes=axes)
    adapter.__name__ = name
    return adapter


_FFT_ADAPTERS = {"fftshift": _shift("fftshift"), "ifftshift": _shift("ifftshift")}


_FACADES = {}       # id(namespace) -> (namespace, its NumpyFacade)


def facade_for(values):
    """The NumpyFacade to run generated code on `values` (arguments,
    possibly nested in lists/tuples/dicts) when they hold arrays without
    NumPy dispatch (PyTorch tensors, array_api_strict arrays), else None
    (NumPy, Dask and CuPy arrays run the code as it is). One facade per
    namespace, kept with its twins. Raises ForeignArrayError (from
    array_api_compat) for arrays of different libraries mixed."""
    others = []
    _collect(values, others)
    if not others or all(arrays.dispatches(x) for x in others):
        return None
    xp = arrays.namespace(*others)
    hit = _FACADES.get(id(xp))
    if hit is None:
        hit = _FACADES[id(xp)] = (xp, NumpyFacade(xp))
    return hit[1]


def _collect(values, out):
    for v in values:
        if type(v) in (list, tuple):
            _collect(v, out)
        elif type(v) is dict:
            _collect(v.values(), out)
        elif arrays.is_other_array(v):
            out.append(v)
