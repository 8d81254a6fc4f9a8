"""Numba twins of srcgrad's run-time helpers (`sg.jit`).

Generated derivative code calls helpers (`unbroadcast`, `unreduce`,
`as_input`, ...) that dispatch at run time on shapes and types. Under
Numba, the type of every argument (dtype, rank, scalar or array, None) is
known when the function is compiled, so each twin here is a
`numba.extending.overload` that chooses its implementation at
specialisation time and leaves only the shape arithmetic to run time.

`TWINS` maps a helper (by module and qualified name) to the stub the
lowered module binds in its place; a helper without a twin is compiled
from its own source by `numba.njit`, and if that fails the whole function
runs in CPython (a PerformanceWarning says why).

The stubs are plain Python; `install()` imports Numba and registers the
overloads, once, on the first call of an `sg.jit` function (importing
srcgrad does not import Numba).

The twins are the same code for every program, so their specialisations
are compiled with Numba's on-disk cache (`cache=True`): a new process
loads their machine code instead of typing and optimising them again
(seconds of an array gradient's first call). The files go to
`<sg.jit's cache directory>/twins/opt<NUMBA_OPT>` (`_TwinCacheLocator`:
the optimisation level, which Numba's own cache key omits, picks the
folder); Numba validates them against this file's contents and its own
version. Where that directory cannot be written, the twins are compiled
without a cache.
"""
import operator
import os
import threading

import numpy as np

from . import diskcache

# Numba's names, bound by install()
types = TypingError = to_fixed_tuple = _unoptional = numba_register_jitable = numba_objmode = None
_OVERLOADS = []         # (stub, implementation, prefer_literal)
_installed = []
_install_lock = threading.Lock()


def overload(stub, prefer_literal=False):
    """Register `implementation` as the Numba overload of `stub` (applied
    by install())."""
    def register(implementation):
        _OVERLOADS.append((stub, implementation, prefer_literal))
        return implementation
    return register


def install():
    """Import Numba and register the twins' overloads (once). Raises
    ImportError when Numba is not installed."""
    global types, TypingError, to_fixed_tuple, _broadcast_sum, _padded_jit, _unoptional, _tail_equal_jit, _prod_jit, \
        _sum_rows_jit, _choose_jit, _choose_over_jit, numba_register_jitable, numba_objmode, _extent_jit, _apart_jit, \
        _small_matmul
    if _installed:
        return
    with _install_lock:
        if _installed:
            return
        import numba
        from numba.core.errors import TypingError as typing_error
        from numba.extending import overload as numba_overload
        from numba.np.unsafe.ndarray import to_fixed_tuple as fixed_tuple
        types, TypingError, to_fixed_tuple = numba.types, typing_error, fixed_tuple
        options = {"cache": True} if _cache_locator_installed() else {}
        jitable = numba.extending.register_jitable(**options) if options else numba.extending.register_jitable
        numba_register_jitable = numba.extending.register_jitable
        numba_objmode = numba.objmode
        # (register_jitable, not njit: a dispatcher read as a global is a dynamic address in the machine
        # code, and Numba does not cache code holding one: sg.jit(f, cache=True), diskcache.py)
        _broadcast_sum = jitable(_broadcast_sum_py)
        _unoptional = numba.extending.intrinsic(_unoptional_intrinsic)
        _padded_jit = jitable(_padded)
        _prod_jit = jitable(_prod)
        _tail_equal_jit = jitable(_tail_equal)
        _sum_rows_jit = jitable(_sum_rows)
        _choose_jit = numba.extending.register_jitable(error_model="numpy", **options)(_choose)
        _choose_over_jit = jitable(_choose_over)
        _extent_jit = jitable(_extent_py)
        _apart_jit = jitable(_apart_py)
        _small_matmul = jitable(_small_matmul_py)
        for stub, implementation, prefer_literal in _OVERLOADS:
            # (an overload that may return code made by exec is not cached: Numba's cache finds no
            # source file for it, and its index keys code by bytecode, not by the constants and
            # names that tell two generated kernels apart)
            cached = options if stub.__name__ not in _EXEC_MADE else {}
            numba_overload(stub, prefer_literal=prefer_literal, jit_options=dict(cached))(implementation)
        numba_overload(operator.getitem, jit_options=dict(options))(_range_item)
        _installed.append(True)


def _cache_folder():
    """Where the twins' machine code is cached (a str; not created here)."""
    from numba.core import config
    return os.path.join(diskcache.directory(), "twins", "opt%d" % config.OPT)


_private_folder = []     # a temporary folder of this process, where _cache_folder() cannot be written


def _private_cache_folder():
    """A folder of this process's own (removed at exit): the twins'
    cache when the shared one cannot be written (no file outlives the
    process)."""
    if not _private_folder:
        import atexit
        import shutil
        import tempfile
        folder = tempfile.mkdtemp(prefix="srcgrad-twins-")
        atexit.register(shutil.rmtree, folder, True)
        _private_folder.append(folder)
    return _private_folder[0]


#: the stubs whose overloads are never cached on disk: those that build their implementation with exec,
#: and vector_ufunc, whose object-mode block is a Python function object (Numba caches no code holding one)
_EXEC_MADE = {"unindex", "concatenate_adjoint", "stack_adjoint", "einsum", "einsum_adjoint", "vector_ufunc", "stand_in",
              "check_not_shared"}


def _cache_locator_installed():
    """Make Numba cache the twins' specialisations in `_cache_folder()`
    (a locator placed first in Numba's list, answering for this file
    only; a private temporary folder when that one cannot be written, as
    when SRCGRAD_CACHE_DIR changes to such a place later). Returns whether
    the twins can be cached at all (else they are compiled without a
    cache, and never in Numba's default places)."""
    from numba.core import caching

    class TwinCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        """Numba's cache locator for the functions of twins.py."""

        def __init__(self, py_func, py_file, folder):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = folder

        def get_cache_path(self):
            """The folder of the cache files."""
            return self._cache_path

        @classmethod
        def from_function(cls, py_func, py_file):
            """A locator for `py_func` if it is defined in this file, else None."""
            if os.path.abspath(py_file) != os.path.abspath(__file__):
                return None
            for folder in (_cache_folder, _private_cache_folder):
                try:
                    self = cls(py_func, py_file, folder())
                    self.ensure_cache_path()
                    return self
                except OSError:
                    continue
            return None

    classes = caching.CacheImpl._locator_classes
    if not any(getattr(c, "__qualname__", "").endswith("TwinCacheLocator") for c in classes):
        classes.insert(0, TwinCacheLocator)
    return TwinCacheLocator.from_function(_prod, __file__) is not None


def _array(t):
    return isinstance(t, types.Array)


def _scalar(t):
    return isinstance(t, (types.Number, types.Boolean))


def _scalar_tuple(t):
    """A homogeneous tuple of numbers (`(a,)`, `(a, b)`), possibly
    Optional (a loop's value that starts at None)?"""
    if not isinstance(t, types.UniTuple):
        return False
    e = t.dtype.type if isinstance(t.dtype, types.Optional) else t.dtype
    return _scalar(e)


def _none(t):
    return isinstance(t, (types.NoneType, types.Omitted)) or t is None


def _literal(t, default=None):
    """The compile-time value of a literal argument type (None for None,
    `default` for an omitted argument). An argument whose value is not
    known when compiling (a variable axis, a tuple of axes) raises
    TypingError: the function then runs in CPython."""
    if isinstance(t, types.Omitted):
        return default if t.value is None else t.value
    if _none(t):
        return None
    if isinstance(t, types.Literal):
        return t.literal_value
    raise TypingError("srcgrad.jit: an argument of type %s whose value must be known when compiling" % (t,))


# ------------------------------------------------------------------ stubs
# (the names the lowered module binds; their bodies run only in CPython)

def unbroadcast(g, x):
    """Twin of srcgrad's unbroadcast: `g` summed (or broadcast) to x's
    shape (an array of x's rank, or a scalar for a scalar `x`)."""
    raise NotImplementedError("a Numba twin")


def unreduce(g, x, axis=None, keepdims=False):
    """Twin of srcgrad's unreduce: the cotangent of a reduction of `x` over
    `axis` broadcast back to x's shape (a new array)."""
    raise NotImplementedError("a Numba twin")


def reduced_shape(x, axis=None, keepdims=False):
    """Twin: the shape tuple of `np.sum(x, axis, keepdims)` (axis an int
    known when compiling); the unbroadcast/unreduce/reduction_size twins
    take a shape tuple where srcgrad's helpers take a ShapeOf."""
    raise NotImplementedError("a Numba twin")


def reduction_size(x, y):
    """Twin of srcgrad's reduction_size: x.size // max(y.size, 1) (int)."""
    raise NotImplementedError("a Numba twin")


def shape_value(v):
    """The shape a shape stack saves for `v` (lower._shape_stacks): v.shape
    for an array, () for a number, zeros of v's rank for the None a
    temporary starts at before its loop (restored after the loop's last
    adjoint step, where nothing reads it)."""
    raise NotImplementedError("a Numba twin")


def as_input(g, x):
    """Twin of srcgrad's as_input: `g` with x's shape and floating dtype (a
    new or the same array; a float for a scalar `x`)."""
    raise NotImplementedError("a Numba twin")


def matmul_adjoint_x(g, x, y):
    """Twin: the cotangent of x in z = x @ y (x, y of rank 1 or 2)."""
    raise NotImplementedError("a Numba twin")


def matmul_adjoint_y(g, x, y):
    """Twin: the cotangent of y in z = x @ y (x, y of rank 1 or 2)."""
    raise NotImplementedError("a Numba twin")


def check_loop_sequence(seq, origin):
    """Twin: nothing to check (Numba iterates arrays by position)."""
    raise NotImplementedError("a Numba twin")


def densify(g, x):
    """Twin of srcgrad's densify: `g`, or zeros like `x` where `g` is None."""
    raise NotImplementedError("a Numba twin")


def zeros_like_value(x):
    """Twin of zeros_tree / sparse_zeros: float zeros shaped like `x`."""
    raise NotImplementedError("a Numba twin")


def zeros_for(value, cotangent):
    """Twin of srcgrad's zeros_for: zeros shaped like `value` (like
    `cotangent` while `value` is None)."""
    raise NotImplementedError("a Numba twin")


def max_chooser(x, y, axis=None, keepdims=False):
    """Twin of srcgrad's max_chooser: 1/k at each of the k positions of `x`
    where it attains its reduced max/min `y`, 0 elsewhere."""
    raise NotImplementedError("a Numba twin")


def setitem_in_place(x, index, v):
    """Twin: `x[index] = v`, returning `x` (the compiler proved the old `x`
    is not read again)."""
    raise NotImplementedError("a Numba twin")


def zero_at_in_place(g, index):
    """Twin: `g[index] = 0`, returning `g`."""
    raise NotImplementedError("a Numba twin")


def add_into(a, b):
    """Twin of srcgrad's add_into: `a += b` (returning `a`) for a writeable
    C-contiguous array `a` of b's rank and dtype when the shapes are equal
    at run time, else `a + b`."""
    raise NotImplementedError("a Numba twin")


def value_cotangent(g, index, v, x=None):
    """Twin of srcgrad's value_cotangent for an array `g`: a copy of
    g[index] summed back to v's shape (zeros when `x`, the array written
    into, has an integer or bool dtype)."""
    raise NotImplementedError("a Numba twin")


def value_tangent(tv, z):
    """Twin of srcgrad's value_tangent: `tv`, or zeros shaped like it when
    `z`, the array written into, has an integer or bool dtype."""
    raise NotImplementedError("a Numba twin")


def array_tangent(tobj, obj):
    """Twin of srcgrad's array_tangent (the tangent of np.array(obj)) for
    an array, or a homogeneous list or tuple of numbers, of arrays of one
    shape, or of such sequences: the entries' tangents stacked as float64
    (or the arrays' dtype); `tobj` None gives zeros of an array obj's
    shape."""
    raise NotImplementedError("a Numba twin")


def cast_like(g, x):
    """Twin of srcgrad's cast_like: the array `g` in x's floating dtype
    (float64 for an integer or bool x)."""
    raise NotImplementedError("a Numba twin")


def check_slot_not_shared(container, index, origin):
    """Twin of srcgrad's check_slot_not_shared: nothing to check for an
    array or a list of numbers; for a list of arrays, slot `index`'s
    array must lie apart in memory from the other slots' (an overlap
    raises NotImplementedError: CPython's exact test decides)."""
    raise NotImplementedError("a Numba twin")


def balanced_eq(x, z, y):
    """Twin of srcgrad's balanced_eq (np.maximum's and np.minimum's
    derivative in x): 1 where x alone attains z, 1/2 where x == y, else 0,
    as float32 for a float32 x, else float64."""
    raise NotImplementedError("a Numba twin")


def broadcast_like(tangent, z):
    """Twin of srcgrad's broadcast_like: `tangent` broadcast to z's shape
    (a number for a number z; a new array where the shapes differ)."""
    raise NotImplementedError("a Numba twin")


def unindex(g, x, index):
    """Twin of srcgrad's unindex for an array `x` and a basic index (an
    integer, a slice, or a tuple of them, an Ellipsis, None): zeros of x's shape with `g` at
    `index` (the positions are distinct: an assignment)."""
    raise NotImplementedError("a Numba twin")


def unindex_add(acc, g, x, index):
    """Twin of srcgrad's unindex_add: `acc + unindex(g, x, index)`, added
    into `acc` itself where it is a writeable C-contiguous array of x's
    shape and of unindex's dtype and `index` integers and slices
    (distinct positions)."""
    raise NotImplementedError("a Numba twin")


def concatenate_adjoint(g, arrays, axis):
    """Twin of srcgrad's concatenate_adjoint for an int `axis` known when
    compiling: the pieces of `g` along `axis`, one per operand of
    `arrays` (a tuple of arrays: a tuple of views of g; a list, as
    generated code passes them: a list)."""
    raise NotImplementedError("a Numba twin")


def stack_adjoint(g, arrays, axis):
    """Twin of srcgrad's stack_adjoint for an int `axis` known when
    compiling: operand i's cotangent is g's slice i along that axis (a
    view), without np.moveaxis (whose Numba implementation, sorting its
    axes, took ~9 s of the RNN's first call to compile)."""
    raise NotImplementedError("a Numba twin")


def seq_cotangent(g, x):
    """Twin of srcgrad's seq_cotangent for a tuple or list `x`: `g` itself
    (the pieces a join's adjoint gave, none of them a symbolic zero)."""
    raise NotImplementedError("a Numba twin")


def check_numeric_result(value, origin):
    """Twin of srcgrad's check_numeric_result for a value that is not a
    list or tuple (an array or a number, what Numba's `*` and `+` give
    arrays) or is a list of integers (indices): nothing to check. A list
    of floats has no twin: the function runs in CPython, whose check
    raises."""
    raise NotImplementedError("a Numba twin")


def check_not_shared(array, others, views):
    """Twin of srcgrad's check_not_shared (before an element assignment
    lowered to a functional setitem: NumPy would change every other name
    sharing the array's memory): nothing to check for a number, nor
    against numbers; against arrays, their memory bounds (np.may_share_
    memory's test): apart, they share nothing; overlapping, the call raises
    NotImplementedError and sg.jit runs the gradient in CPython, whose
    exact test (np.shares_memory) raises at the user's line or passes. No
    twin for containers among `others` (CPython then)."""
    raise NotImplementedError("a Numba twin")


def add_cotangents(a, b):
    """Twin of srcgrad's add_cotangents: `a + b`, None a zero; for two
    lists (dense list cotangents: `_list_zeros`), element by element."""
    raise NotImplementedError("a Numba twin")


def setitem(x, index, v):
    """Twin of srcgrad's setitem (x[index] = v as a new value): for a
    list, a copy of it with element `index` (an int) set to `v`; for an
    array, a copy of it written at `index`."""
    raise NotImplementedError("a Numba twin")


def list_append(xs, v):
    """Twin of srcgrad's list_append: a new list, `xs` followed by `v`
    (`xs` a typed list; a comprehension's empty one is lowered to
    `xs.append(v)`: lower._appends_in_place)."""
    raise NotImplementedError("a Numba twin")


def einsum(subscripts, operands):
    """`np.einsum(subscripts, *operands)` for subscripts known when
    compiling (no ellipsis, no label repeated within an operand) and real
    floating arrays: a loop nest (Numba has no np.einsum; lowered code
    calls it as lower.EINSUM_NAME)."""
    raise NotImplementedError("a Numba twin")


def einsum_adjoint(g, operands):
    """Twin of srcgrad's einsum_adjoint for `operands` = (subscripts known
    when compiling, arrays...) as `einsum` takes them: a tuple (None, then
    the cotangent of each array, an einsum of g with the others)."""
    raise NotImplementedError("a Numba twin")


def zero_at(g, index):
    """Twin of srcgrad's zero_at for an array `g`: a copy with the
    entries at `index` zeroed."""
    raise NotImplementedError("a Numba twin")


def stack_value(v):
    """Twin for the stacks of split sweeps (lowered code only): `v` with
    its Optional type removed; where `v` is None, an empty stand-in of
    its type (see `_stack_value`)."""
    raise NotImplementedError("a Numba twin")


def reduce(x, op, axis=None, keepdims=False):
    """`np.<op>(x, axis=axis, keepdims=keepdims)` for op in sum, max, min,
    mean, prod; axis None or one int (the forms Numba lacks)."""
    raise NotImplementedError("a Numba twin")


#: per ufunc of lower.VECTOR_UFUNCS: the size from which a float array goes to NumPy's own loop. Numba
#: compiles np.tanh of an array to one libm call per entry (9.4 us for 1,024 float64 entries on this
#: project's benchmark machine; no SVML in its LLVM); NumPy's SIMD loop, called from object mode, takes
#: 3.0 us with the 1.4 us of the object-mode call. Each size is where the two cost the same there. Only
#: the functions where libm is 2.7-3.9x slower than NumPy's loop: the object-mode block costs 0.15-0.3 s
#: of compiling per function, dtype and rank in every new process (Numba does not cache it), which exp
#: and log (1.8-1.9x) would take tens of thousands of calls to earn back.
VECTOR_FROM = {"tanh": 192, "arctan": 192, "sinh": 192, "cosh": 256}


def vector_ufunc(x, name):
    """`np.<name>(x)` for a ufunc `name` of VECTOR_FROM (a literal): for a
    real floating array of at least VECTOR_FROM[name] entries, NumPy's
    own (SIMD) loop run in Numba's object mode, a C-contiguous array of
    x's dtype, NumPy's values bit for bit; otherwise Numba's compiled
    ufunc."""
    raise NotImplementedError("a Numba twin")


def matmul(a, b):
    """`a @ b` (lowered code only): Numba's own matmul of 1-d and 2-d
    arrays, compiled in a twin, so that its machine code is cached on
    disk (Numba compiles its np.dot implementation again in every
    process, ~0.5 s)."""
    raise NotImplementedError("a Numba twin")


def zeros(shape):
    """`np.zeros(shape)` (float64; lowered code only), cached as matmul is."""
    raise NotImplementedError("a Numba twin")


def zeros_like(x):
    """`np.zeros_like(x)` (lowered code only), cached as matmul is."""
    raise NotImplementedError("a Numba twin")


def real_part(g):
    """Twin of srcgrad's real_part: the real part of a complex cotangent,
    a real one as it is."""
    raise NotImplementedError("a Numba twin")


def complex_sign(x):
    """Twin of srcgrad's sign (the derivative of |x|): np.sign of a real
    x; x / |x| (0 at 0) of a complex one."""
    raise NotImplementedError("a Numba twin")


def stack_list(xs):
    """`np.stack(xs)` of a list (lowered code only; Numba's np.stack takes
    a tuple): arrays of one shape, or numbers, along a new first axis.
    Raises ValueError as NumPy does (no element; shapes that differ)."""
    raise NotImplementedError("a Numba twin")


# ------------------------------------------------------------- overloads

def _broadcast_sum_py(g, gs, xs, out):
    """out (flat, x's size) += g (flat) summed or broadcast from shape `gs`
    to shape `xs` (int64 arrays of one length: the shapes padded with
    leading 1s), over their broadcast shape. Plain loops: quick to
    compile for every rank."""
    nd = gs.shape[0]
    same = True
    for i in range(nd):
        same = same and gs[i] == xs[i]
    if same:            # (the common case, one flat loop: the general one indexes every entry per axis)
        for k in range(out.shape[0]):
            out[k] += g[k]
        return out
    bs = np.maximum(gs, xs)
    total = 1
    for i in range(nd):
        total *= bs[i]
    idx = np.zeros(nd, dtype=np.int64)
    for k in range(total):
        gi = 0
        xi = 0
        for i in range(nd):
            gi = gi * gs[i] + (idx[i] if gs[i] != 1 else 0)
            xi = xi * xs[i] + (idx[i] if xs[i] != 1 else 0)
        out[xi] += g[gi]
        i = nd - 1
        while i >= 0:
            idx[i] += 1
            if idx[i] < bs[i]:
                break
            idx[i] = 0
            i -= 1
    return out


_broadcast_sum = None       # its jitable form, bound by install()


def _padded(shape, nd):
    """`shape` (a tuple) as an int64 array of length nd, leading 1s."""
    out = np.ones(nd, dtype=np.int64)
    k = len(shape)
    for i in range(k):
        out[nd - k + i] = shape[i]
    return out


_padded_jit = None


def _prod(shape):
    """The number of elements of an array of shape `shape` (a tuple)."""
    n = 1
    for s in shape:
        n *= s
    return n


_prod_jit = None


def _tail_equal(gshape, xshape, lead):
    """Is `xshape` the trailing part of `gshape` (after `lead` axes)?"""
    for i in range(len(xshape)):
        if gshape[lead + i] != xshape[i]:
            return False
    return True


def _sum_rows(g, m):
    """The flat `g` summed over rows of length `m` (a sum over leading axes,
    in a loop LLVM vectorises: the general _broadcast_sum indexes per
    element)."""
    out = np.zeros(m, dtype=g.dtype)
    if m == 0:
        return out
    for r in range(g.size // m):
        base = r * m
        for j in range(m):
            out[j] += g[base + j]
    return out


_tail_equal_jit = _sum_rows_jit = _choose_jit = _choose_over_jit = _extent_jit = _apart_jit = None


def _shape_tuple(t):
    """Is `t` a shape (a tuple of integers: a shape stack's value), and
    its rank?"""
    if isinstance(t, types.BaseTuple) and all(isinstance(e, types.Integer) for e in t):
        return len(t)
    return None


#: matrix products with at most this many multiply-adds run as plain loops under Numba (BLAS's call and
#: Numba's contiguity copies cost more for 3x3 and 4x4 matrices: hand tracking's bones)
SMALL_MATMUL = 512


def _small_matmul_py(a, b, out):
    """out = a @ b for 2-d a (m, k), b (k, n), by loops."""
    m, k = a.shape
    n = b.shape[1]
    for i in range(m):
        for j in range(n):
            out[i, j] = 0.0
        for l in range(k):
            ail = a[i, l]
            for j in range(n):
                out[i, j] += ail * b[l, j]
    return out


_small_matmul = None        # its jitable form, bound by install()


@overload(matmul)
def _matmul(a, b):
    if not (_array(a) and _array(b) and a.dtype == b.dtype and isinstance(a.dtype, types.Float)):
        return lambda a, b: a @ b
    dtype = np.dtype(str(a.dtype))
    if a.ndim == 2 and b.ndim == 2:
        def two(a, b):
            if a.shape[1] != b.shape[0]:
                raise ValueError("matmul: mismatch in its core dimension")
            if a.shape[0] * a.shape[1] * b.shape[1] <= SMALL_MATMUL:
                return _small_matmul(a, b, np.empty((a.shape[0], b.shape[1]), dtype=dtype))
            return a @ b
        return two
    if a.ndim == 3 and b.ndim == 2:
        # a stack of matrices times one matrix (Numba's @ takes ranks 1 and 2): one product of the stack's
        # rows, as NumPy broadcasts
        def stack_matrix(a, b):
            n, p, q = a.shape
            if q != b.shape[0]:
                raise ValueError("matmul: mismatch in its core dimension")
            flat = np.ascontiguousarray(a).reshape((n * p, q))
            return (flat @ np.ascontiguousarray(b)).reshape((n, p, b.shape[1]))
        return stack_matrix
    if max(a.ndim, b.ndim) == 3 and min(a.ndim, b.ndim) >= 2:
        na, nb = a.ndim, b.ndim

        def stacked(a, b):      # (one product per matrix of the stacks; a stack of 1 broadcast)
            la = a.shape[0] if na == 3 else 1
            lb = b.shape[0] if nb == 3 else 1
            if la != lb and la != 1 and lb != 1:
                raise ValueError("matmul: stacks of different lengths")
            if a.shape[-1] != b.shape[-2]:
                raise ValueError("matmul: mismatch in its core dimension")
            m = max(la, lb)
            out = np.empty((m, a.shape[-2], b.shape[-1]), dtype=dtype)
            a3 = a.reshape((la, a.shape[-2], a.shape[-1])) if na == 2 else a
            b3 = b.reshape((lb, b.shape[-2], b.shape[-1])) if nb == 2 else b
            for i in range(m):
                out[i] = np.ascontiguousarray(a3[min(i, la - 1)]) @ np.ascontiguousarray(b3[min(i, lb - 1)])
            return out
        return stacked
    return lambda a, b: a @ b


@overload(zeros)
def _zeros(shape):
    return lambda shape: np.zeros(shape)


@overload(zeros_like)
def _zeros_like(x):
    if isinstance(x, (types.Float, types.Integer, types.Complex)):
        # (a number: its zero, not NumPy's 0-d array, which Numba would not unify with the number a branch
        # gives the same name: a callee compiled for arrays, called on a float, `br = zeros_like(r)`)
        zero = np.zeros((), dtype=str(x))[()]
        return lambda x: zero
    if _none(x):
        # (typing sees the stack of such a variable first as a list of None only: None, which the Optional
        # below then unifies with)
        return lambda x: None
    if isinstance(x, types.Optional) and _array(x.type):
        # a loop variable's value before the loop (None), restored by the reverse sweep's last pop: the
        # cotangent of that None, which nothing reads after the loop, stands in as an empty array of the
        # loop's type (NumPy's zeros_like(None) is an object array Numba has no type for)
        empty = (0,) * x.type.ndim
        dtype = np.dtype(str(x.type.dtype))

        def optional(x):
            if x is None:
                return np.zeros(empty, dtype=dtype)
            return np.zeros_like(_unoptional(x))
        return optional
    return lambda x: np.zeros_like(x)


@overload(real_part)
def _real_part(g):
    t = g.dtype if _array(g) else g
    if isinstance(t, types.Complex):
        return lambda g: np.real(g)
    if _array(g) or _scalar(g):
        return lambda g: g
    return None


@overload(complex_sign)
def _complex_sign(x):
    t = x.dtype if _array(x) else x
    if isinstance(t, types.Complex):
        if _array(x):
            def arrays(x):
                a = np.abs(x)
                return x / np.where(a == 0, 1.0, a)
            return arrays

        def number(x):
            a = abs(x)
            return x / (1.0 if a == 0 else a)
        return number
    if _array(x) or _scalar(x):
        return lambda x: np.sign(x)
    return None


@overload(stack_list)
def _stack_list(xs):
    if isinstance(xs, types.BaseTuple):
        return lambda xs: np.stack(xs)
    if not isinstance(xs, (types.List, types.ListType)):
        return None
    item = xs.dtype if isinstance(xs, types.List) else xs.item_type
    if _array(item):
        dtype = np.dtype(str(item.dtype))

        def arrays(xs):
            n = len(xs)
            if n == 0:
                raise ValueError("need at least one array to stack")
            first = xs[0]
            out = np.empty((n,) + first.shape, dtype=dtype)
            for k in range(n):
                if xs[k].shape != first.shape:
                    raise ValueError("all input arrays must have the same shape")
                out[k] = xs[k]
            return out
        return arrays
    if isinstance(item, (types.Float, types.Integer, types.Complex, types.Boolean)):
        dtype = np.dtype(str(item))

        def numbers(xs):
            n = len(xs)
            if n == 0:
                raise ValueError("need at least one array to stack")
            out = np.empty(n, dtype=dtype)
            for k in range(n):
                out[k] = xs[k]
            return out
        return numbers
    return None


@overload(shape_value)
def _shape_value(v):
    if _none(v):
        return None
    t = v.type if isinstance(v, types.Optional) else v
    if _array(t):
        if isinstance(v, types.Optional):
            zeros = (0,) * t.ndim

            def shape_or_zeros(v):
                if v is None:
                    return zeros
                return _unoptional(v).shape
            return shape_or_zeros
        return lambda v: v.shape
    if _scalar(t):
        return lambda v: ()
    return None


@overload(unbroadcast, prefer_literal=True)
def _unbroadcast(g, x):
    if isinstance(x, types.Optional):
        x = x.type
    if _shape_tuple(x) is not None:      # (a shape stack's value: the shape itself)
        return _unbroadcast_to_shape(g, x)
    if isinstance(g, types.Optional):
        return None
    if _scalar(x):
        if _scalar(g):
            return lambda g, x: g
        if _array(g):
            return lambda g, x: np.sum(g)
        return None
    if not _array(x):
        return None
    if _scalar(g):
        return lambda g, x: np.full(x.shape, g)
    if not _array(g):
        return None
    nd = max(g.ndim, x.ndim)
    same_rank = g.ndim == x.ndim
    lead = g.ndim - x.ndim      # (> 0: maybe a sum over leading axes only, as a bias's cotangent)
    if same_rank and nd > 1:
        return _unbroadcast_leading_ones(nd)

    def impl(g, x):
        if same_rank and g.shape == x.shape:
            return g
        if lead > 0 and _tail_equal_jit(g.shape, x.shape, lead):
            return _sum_rows_jit(np.ascontiguousarray(g).ravel(), x.size).reshape(x.shape)
        out = np.zeros(x.size, dtype=g.dtype)
        _broadcast_sum(np.ascontiguousarray(g).ravel(), _padded_jit(g.shape, nd), _padded_jit(x.shape, nd), out)
        return out.reshape(x.shape)
    return impl


def _unbroadcast_to_shape(g, shape):
    """unbroadcast's implementation for `x` given as its shape."""
    rank = _shape_tuple(shape)
    if rank == 0:
        if _scalar(g):
            return lambda g, x: g
        if _array(g):
            return lambda g, x: np.sum(g)
        return None
    if _scalar(g):
        return lambda g, x: np.full(x, g)
    if not _array(g):
        return None
    nd = max(g.ndim, rank)
    same_rank = g.ndim == rank
    lead = g.ndim - rank

    def impl(g, x):
        if same_rank and g.shape == x:
            return g
        size = 1
        for s in x:
            size *= s
        if lead > 0 and _tail_equal_jit(g.shape, x, lead):
            return _sum_rows_jit(np.ascontiguousarray(g).ravel(), size).reshape(x)
        out = np.zeros(size, dtype=g.dtype)
        _broadcast_sum(np.ascontiguousarray(g).ravel(), _padded_jit(g.shape, nd), _padded_jit(x, nd), out)
        return out.reshape(x)
    return impl


@overload(unreduce, prefer_literal=True)
def _unreduce(g, x, axis=None, keepdims=False):
    if isinstance(x, types.Optional):
        x = x.type
    if _shape_tuple(x) is not None:
        return _unreduce_to_shape(g, x, axis, keepdims)
    ax = _literal(axis)
    if not _array(x):
        if _scalar(x):
            return lambda g, x, axis=None, keepdims=False: g
        return None
    nd = x.ndim
    if _scalar(g):
        return lambda g, x, axis=None, keepdims=False: np.full(x.shape, g)
    if not _array(g) or (ax is not None and not isinstance(ax, int)):
        return None
    insert = ax is not None and not _literal(keepdims, False) and g.ndim == nd - 1
    a = ax % nd if ax is not None else 0
    if ax is not None and (insert or g.ndim == nd):
        return _unreduce_one_axis(nd, a, insert)

    general = numba_register_jitable(_unreduce_general_py)

    def impl(g, x, axis=None, keepdims=False):
        return general(g, x, nd, a, insert)
    return impl


def _unreduce_general_py(g, x, nd, a, insert):
    """unreduce's general path: g broadcast to x's shape (rank nd), axis a
    reinserted with length 1 first when `insert` (a reduction without
    keepdims), by _broadcast_sum's plain loops."""
    xs = _padded_jit(x.shape, nd)
    if insert:
        gs = xs.copy()
        gs[a] = 1
    else:
        gs = _padded_jit(g.shape, nd)
    out = np.zeros(x.size, dtype=g.dtype)
    _broadcast_sum(np.ascontiguousarray(g).ravel(), gs, xs, out)
    return out.reshape(x.shape)


def _spread_axis_py(g, shape, a):
    """The flat C-order array of `shape` whose entries along axis `a`
    repeat g (contiguous, of `shape` without axis a, or with 1 there):
    out[p, i, q] = g[p, q], p over the axes before a, q after."""
    pre = 1
    for k in range(a):
        pre *= shape[k]
    post = 1
    for k in range(a + 1, len(shape)):
        post *= shape[k]
    n = shape[a]
    gf = np.ascontiguousarray(g).ravel()
    out = np.empty(pre * n * post, dtype=gf.dtype)
    for p in range(pre):
        for i in range(n):
            base = (p * n + i) * post
            for q in range(post):
                out[base + q] = gf[p * post + q]
    return out


def _reduced_from_py(gshape, xshape, a, insert):
    """Is `gshape` the shape of a reduction of `xshape` over axis a (without
    the axis when `insert`, else with length 1 there)?"""
    j = 0
    for k in range(len(xshape)):
        if k == a:
            if not insert:
                if gshape[j] != 1:
                    return False
                j += 1
            continue
        if gshape[j] != xshape[k]:
            return False
        j += 1
    return True


def _unreduce_one_axis(nd, a, insert):
    """unreduce's implementation for an array `x` (rank nd) reduced over
    the one axis `a` into `g` of the reduced shape: g repeated along the
    axis by a plain loop (the general path indexes per element, tens of
    ns each: kmeans' (n, k, d) distances); any other g is broadcast by
    the general path."""
    spread, reduced_from = numba_register_jitable(_spread_axis_py), numba_register_jitable(_reduced_from_py)
    general = numba_register_jitable(_unreduce_general_py)

    def impl(g, x, axis=None, keepdims=False):
        if reduced_from(g.shape, x.shape, a, insert):
            return spread(g, x.shape, a).reshape(x.shape)
        return general(g, x, nd, a, insert)
    return impl


def _leading_ones_py(gshape, xshape):
    """The number m > 0 of leading axes where `xshape` (of gshape's rank)
    has length 1 and agrees with gshape after them, else 0."""
    m = 0
    while m < len(xshape) and xshape[m] == 1:
        m += 1
    for k in range(m, len(xshape)):
        if gshape[k] != xshape[k]:
            return 0
    return m


def _unbroadcast_leading_ones(nd):
    """unbroadcast's implementation for `g` and an array `x` of one rank
    nd > 1: g itself when the shapes agree; summed over its leading axes
    by rows when x has length 1 there and g's shape after them
    (centroids[None, :, :]'s cotangent); else the general path."""
    leading_ones = numba_register_jitable(_leading_ones_py)

    def impl(g, x):
        if g.shape == x.shape:
            return g
        if leading_ones(g.shape, x.shape) > 0:
            return _sum_rows_jit(np.ascontiguousarray(g).ravel(), x.size).reshape(x.shape)
        out = np.zeros(x.size, dtype=g.dtype)
        _broadcast_sum(np.ascontiguousarray(g).ravel(), _padded_jit(g.shape, nd), _padded_jit(x.shape, nd), out)
        return out.reshape(x.shape)
    return impl


def _unreduce_to_shape(g, shape, axis, keepdims):
    """unreduce's implementation for `x` given as its shape."""
    nd = _shape_tuple(shape)
    ax = _literal(axis)
    if nd == 0:
        return lambda g, x, axis=None, keepdims=False: g
    if _scalar(g):
        return lambda g, x, axis=None, keepdims=False: np.full(x, g)
    if not _array(g) or (ax is not None and not isinstance(ax, int)):
        return None
    insert = ax is not None and not _literal(keepdims, False) and g.ndim == nd - 1
    a = ax % nd if ax is not None else 0

    def impl(g, x, axis=None, keepdims=False):
        xs = _padded_jit(x, nd)
        if insert:
            gs = xs.copy()
            gs[a] = 1
        else:
            gs = _padded_jit(g.shape, nd)
        size = 1
        for s in x:
            size *= s
        out = np.zeros(size, dtype=g.dtype)
        _broadcast_sum(np.ascontiguousarray(g).ravel(), gs, xs, out)
        return out.reshape(x)
    return impl


def _size(t):
    if _array(t):
        return lambda v: v.size
    if isinstance(t, types.Optional):
        return None
    return lambda v: 1


@overload(reduced_shape, prefer_literal=True)
def _reduced_shape(x, axis=None, keepdims=False):
    nd = x.ndim if _array(x) else _shape_tuple(x)
    ax, keep = _literal(axis), _literal(keepdims, False)
    if nd is None or type(ax) is not int or not -nd <= ax < nd:
        return None
    a = ax % nd
    out_nd = nd if keep else nd - 1
    as_array = _array(x)

    def impl(x, axis=None, keepdims=False):
        shp = np.array(x.shape if as_array else x)
        if keep:
            shp[a] = 1
            return to_fixed_tuple(shp, out_nd)
        oshp = np.empty(max(out_nd, 1), dtype=np.int64)
        k = 0
        for i in range(nd):
            if i != a:
                oshp[k] = shp[i]
                k += 1
        return to_fixed_tuple(oshp, out_nd)
    return impl


@overload(reduction_size)
def _reduction_size(x, y):
    if isinstance(x, types.Optional):
        x = x.type
    if isinstance(y, types.Optional):
        y = y.type
    xa, ya = _array(x), _array(y)
    xt, yt = bool(_shape_tuple(x)), bool(_shape_tuple(y))     # (shape stacks' values; () has one element)

    def impl(x, y):
        nx = x.size if xa else (_prod_jit(x) if xt else 1)
        ny = y.size if ya else (_prod_jit(y) if yt else 1)
        return nx // max(ny, 1)
    return impl


@overload(as_input)
def _as_input(g, x):
    if _scalar(x):
        if _scalar(g):
            return lambda g, x: float(g)
        if _array(g):
            return lambda g, x: float(np.sum(g)) if g.size == 1 else np.nan
        return None
    if not _array(x):
        return None
    dtype = np.dtype(str(x.dtype)) if isinstance(x.dtype, (types.Float, types.Complex)) else np.dtype(np.float64)
    if _scalar(g):
        return lambda g, x: np.full(x.shape, g, dtype)
    if not _array(g):
        return None
    if g.dtype == x.dtype and g.ndim == x.ndim:
        def same(g, x):
            if g.shape == x.shape:
                return g
            return np.broadcast_to(g, x.shape).copy()
        return same
    if isinstance(g.dtype, types.Complex) and not isinstance(x.dtype, types.Complex):
        return lambda g, x: np.ascontiguousarray(np.broadcast_to(g.real, x.shape)).astype(dtype)
    return lambda g, x: np.ascontiguousarray(np.broadcast_to(g, x.shape)).astype(dtype)


def _swap_last(nd):
    """A jitable transposing the last two axes of an array of rank nd (2 or 3)."""
    if nd == 2:
        return lambda a: a.T
    return lambda a: np.transpose(a, (0, 2, 1))


def _stack_product(g, x, y):
    """Do matmul's adjoints of these types involve a stack of matrices (rank
    3, the others of rank 2 or 3)?"""
    return all(_array(t) for t in (g, x, y)) and max(x.ndim, y.ndim) == 3 and min(x.ndim, y.ndim) >= 2


@overload(matmul_adjoint_x)
def _matmul_adjoint_x(g, x, y):
    if _stack_product(g, x, y):
        # g @ y^T per matrix, summed back over the stack where x is one matrix (NumPy broadcast it)
        swap = numba_register_jitable(_swap_last(y.ndim))
        return lambda g, x, y: unbroadcast(matmul(g, np.ascontiguousarray(swap(y))), x)
    if not (_array(x) and _array(y)) or x.ndim > 2 or y.ndim > 2:
        return None
    if x.ndim == 2 and y.ndim == 2:
        return lambda g, x, y: g @ y.T
    if x.ndim == 1 and y.ndim == 2:
        return lambda g, x, y: y @ g
    if x.ndim == 2 and y.ndim == 1:
        return lambda g, x, y: np.outer(g, y)
    return lambda g, x, y: g * y


@overload(matmul_adjoint_y)
def _matmul_adjoint_y(g, x, y):
    if _stack_product(g, x, y):
        swap = numba_register_jitable(_swap_last(x.ndim))
        return lambda g, x, y: unbroadcast(matmul(np.ascontiguousarray(swap(x)), g), y)
    if not (_array(x) and _array(y)) or x.ndim > 2 or y.ndim > 2:
        return None
    if x.ndim == 2 and y.ndim == 2:
        return lambda g, x, y: x.T @ g
    if x.ndim == 1 and y.ndim == 2:
        return lambda g, x, y: np.outer(x, g)
    if x.ndim == 2 and y.ndim == 1:
        return lambda g, x, y: x.T @ g
    return lambda g, x, y: g * x


@overload(check_loop_sequence)
def _check_loop_sequence(seq, origin):
    return lambda seq, origin: None


def _zeros_impl(t):
    """zeros_like_value's implementation for type `t` (its parameter is
    `x`, as the stub's: Numba refuses an implementation whose argument
    names differ), or None."""
    if isinstance(t, types.Optional):
        t = t.type
    if _array(t):
        if isinstance(t.dtype, (types.Float, types.Complex)):
            return lambda x: np.zeros_like(x)
        return lambda x: np.zeros(x.shape)
    if _scalar(t):
        return lambda x: 0.0
    if isinstance(t, types.BaseTuple) and not isinstance(t, types.NamedTuple) \
            and 1 <= len(t.types) <= len(_TUPLE_ZEROS) and all(_zeros_impl(e) is not None for e in t.types):
        # (a tuple of arrays: srcgrad's zeros are a list, typed here as a tuple of the elements' zeros)
        return _TUPLE_ZEROS[len(t.types) - 1]
    return None


_TUPLE_ZEROS = (lambda x: (zeros_like_value(x[0]),),
                lambda x: (zeros_like_value(x[0]), zeros_like_value(x[1])),
                lambda x: (zeros_like_value(x[0]), zeros_like_value(x[1]), zeros_like_value(x[2])),
                lambda x: (zeros_like_value(x[0]), zeros_like_value(x[1]), zeros_like_value(x[2]),
                           zeros_like_value(x[3])))


@overload(zeros_like_value)
def _zeros_like_value(x):
    if isinstance(x, types.List):
        return _list_zeros(x)
    return _zeros_impl(x)


@overload(zeros_for)
def _zeros_for(value, cotangent):
    target = cotangent if _none(value) else value
    return None if _zeros_impl(target) is None else (
        (lambda value, cotangent: zeros_like_value(cotangent)) if _none(value)
        else (lambda value, cotangent: zeros_like_value(value)))


@overload(densify)
def _densify(g, x):
    if _none(g):
        return lambda g, x: zeros_like_value(x)
    if isinstance(g, types.Optional):
        def impl(g, x):
            if g is None:
                return zeros_like_value(x)
            return g
        return impl
    if _array(g) and _array(x) and g.ndim == x.ndim:
        def checked(g, x):
            if g.shape != x.shape:
                # (an element of a dense list cotangent still zero, shaped like another value of the element,
                # where srcgrad's is None: CPython's sweep gives zeros of x's shape)
                raise NotImplementedError("srcgrad.jit: a cotangent of another shape than its value")
            return g
        return checked
    return lambda g, x: g


@overload(vector_ufunc, prefer_literal=True)
def _vector_ufunc(x, name):
    ufunc = getattr(np, _literal(name))
    if not (_array(x) and isinstance(x.dtype, types.Float) and x.ndim > 0):
        return lambda x, name: ufunc(x)     # (numbers, 0-d and complex arrays: Numba's own)
    start = VECTOR_FROM[_literal(name)]
    result = types.Array(x.dtype, x.ndim, "C")

    def impl(x, name):
        if x.size < start:
            return np.ascontiguousarray(ufunc(x))
        with numba_objmode(out=result):
            out = ufunc(x, order="C")
        return out
    return impl


@overload(reduce, prefer_literal=True)
def _reduce(x, op, axis=None, keepdims=False):
    name = _literal(op)
    ax = _literal(axis)
    keep = bool(_literal(keepdims, False))
    if name not in ("sum", "max", "min", "mean", "prod") or not _array(x):
        raise TypingError("srcgrad.jit: np.%s(axis=%r, keepdims=%r) of a %s has no twin" % (name, ax, keep, x))
    if ax is not None and not isinstance(ax, int):
        raise TypingError("srcgrad.jit: np.%s over a tuple of axes has no twin" % name)
    nd = x.ndim
    f = {"sum": np.sum, "max": np.max, "min": np.min, "mean": np.mean, "prod": np.prod}[name]
    if ax is None:
        ones = (1,) * nd
        if keep:
            return lambda x, op, axis=None, keepdims=False: np.full(ones, f(x))
        return lambda x, op, axis=None, keepdims=False: f(x)
    a = ax % nd
    last = a == nd - 1
    odt = np.dtype(str(x.dtype)) if name in ("max", "min") or isinstance(x.dtype, types.Float) \
        else np.dtype(np.float64)
    out_nd = nd if keep else nd - 1
    if not last and name in ("sum", "mean", "prod"):
        # over an inner axis: x as (before, n, after), each output entry accumulated along n in order (the
        # order NumPy adds in along a strided axis), without moving the axis last (a transposing copy)
        mean, product = name == "mean", name == "prod"
        start = 1.0 if product else 0.0

        def inner(x, op, axis=None, keepdims=False):
            shp = np.array(x.shape)
            n = shp[a]
            before = 1
            for i in range(a):
                before *= shp[i]
            after = 1
            for i in range(a + 1, nd):
                after *= shp[i]
            flat = np.ascontiguousarray(x).reshape((before, n, after))
            acc = np.full((before, after), start, dtype=odt)
            for p in range(before):
                for i in range(n):
                    for q in range(after):
                        if product:
                            acc[p, q] *= flat[p, i, q]
                        else:
                            acc[p, q] += flat[p, i, q]
            if mean:
                acc /= n
            # (the result's shape, written out as impl's below: a jitable helper shared by the two, a closure
            # over keep and out_nd, made this twin uncached, +1.5 s on the MLP's first sg.jit call)
            if keep:
                shp[a] = 1
                return acc.reshape(to_fixed_tuple(shp, out_nd))
            k = 0
            oshp = np.empty(max(out_nd, 1), dtype=np.int64)
            for i in range(nd):
                if i != a:
                    oshp[k] = shp[i]
                    k += 1
            return acc.reshape(to_fixed_tuple(oshp, out_nd))
        return inner

    def impl(x, op, axis=None, keepdims=False):
        shp = np.array(x.shape)
        n = shp[a]
        moved = x if last else np.moveaxis(x, a, -1)
        rows = np.ascontiguousarray(moved).reshape((-1, n))
        m = rows.shape[0]
        out = np.empty(m, dtype=odt)
        for i in range(m):
            out[i] = f(rows[i])
        if keep:
            shp[a] = 1
            return out.reshape(to_fixed_tuple(shp, out_nd))
        k = 0
        oshp = np.empty(max(out_nd, 1), dtype=np.int64)
        for i in range(nd):
            if i != a:
                oshp[k] = shp[i]
                k += 1
        return out.reshape(to_fixed_tuple(oshp, out_nd))
    return impl


@overload(max_chooser, prefer_literal=True)
def _max_chooser(x, y, axis=None, keepdims=False):
    if not _array(x):
        return None
    ax = _literal(axis)
    if ax is not None and not isinstance(ax, int):
        return None
    nd = x.ndim
    if ax is None:
        def impl_all(x, y, axis=None, keepdims=False):
            mask = (x == np.max(np.asarray(y))).astype(np.float64) if nd else (x == y) * 1.0
            return mask / np.sum(mask)
        return impl_all
    a = ax % nd
    if isinstance(y, types.Optional):
        def impl_optional(x, y, axis=None, keepdims=False):
            if y is None:
                raise TypeError("srcgrad.jit: max_chooser of None")
            return _choose_over_jit(x, _unoptional(y), a)
        return impl_optional
    return lambda x, y, axis=None, keepdims=False: _choose_over_jit(x, y, a)


def _choose_over(x, y, a):
    """max_chooser's values for `x` reduced over axis `a` to `y` (of
    keepdims' shape or not: only its elements are read), by _choose."""
    shape = x.shape
    pre = post = 1
    for d in range(x.ndim):
        if d < a:
            pre *= shape[d]
        elif d > a:
            post *= shape[d]
    out = np.empty((pre, shape[a], post))
    _choose_jit(np.ascontiguousarray(x).reshape((pre, shape[a], post)),
                np.ascontiguousarray(y).reshape((pre, post)), out)
    return out.reshape(shape)


def _choose(x3, y2, out):
    """max_chooser's values for x viewed as (pre, n, post), reduced over
    its middle axis to y2 (pre, post): into `out`, float64 (pre, n, post),
    as NumPy computes `mask / mask.sum(1, keepdims=True)`, mask = (x3 ==
    y2[:, None, :]) as float64: the division by a count of 0 (y NaN) is
    0 / 0 (compiled with NumPy's error model). One specialisation per
    dtype, for every rank."""
    pre, n, post = x3.shape
    for i in range(pre):
        for k in range(post):
            yv = y2[i, k]
            count = 0.0
            for j in range(n):
                if x3[i, j, k] == yv:
                    count += 1.0
            for j in range(n):
                out[i, j, k] = (1.0 if x3[i, j, k] == yv else 0.0) / count
    return out


@overload(setitem_in_place)
def _setitem_in_place(x, index, v):
    if not _array(x):
        return None
    if isinstance(index, types.Integer) and x.layout == "C" and x.ndim > 1 and _scalar_tuple(v):
        # x[t] = (a, b): NumPy broadcasts the tuple as an array (a 1-tuple across the whole row); Numba's
        # setitem does not
        nd = x.ndim
        n = v.count

        def tuple_row(x, index, v):
            va = np.empty(n, dtype=x.dtype)
            for k in range(n):
                va[k] = v[k]
            row = x[index]
            flat = row.reshape(row.size)
            flat[:] = 0
            _broadcast_sum(va, _padded_jit(va.shape, nd - 1), _padded_jit(row.shape, nd - 1), flat)
            return x
        return tuple_row
    if isinstance(index, types.Integer) and x.ndim == 1 and _scalar(v):
        def element(x, index, v):        # (one entry of a vector: x[index] is a number, not a row)
            x[index] = v
            return x
        return element
    if isinstance(index, types.Integer) and x.layout == "C" and (_array(v) or _scalar(v)):
        # x[t] = v by plain loops: Numba's own setitem compiles its shape-error message (seconds)
        nd = x.ndim
        if _scalar(v):
            def fill(x, index, v):
                row = x[index]
                flat = row.reshape(row.size)
                for k in range(flat.size):
                    flat[k] = v
                return x
            return fill

        def rows(x, index, v):
            row = x[index]
            flat = row.reshape(row.size)
            flat[:] = 0
            _broadcast_sum(np.ascontiguousarray(v).ravel(), _padded_jit(v.shape, nd - 1),
                           _padded_jit(row.shape, nd - 1), flat)
            return x
        return rows

    def impl(x, index, v):
        x[index] = v
        return x
    return impl


@overload(add_into)
def _add_into(a, b):
    if not (_array(a) and _array(b) and a.ndim == b.ndim and a.ndim > 0 and a.dtype == b.dtype and a.layout == "C"
            and a.mutable):
        return lambda a, b: a + b       # (numbers, 0-d arrays (Numba's a + b is a number), other types)

    def impl(a, b):
        if a.shape == b.shape:
            a += b
            return a
        return a + b
    return impl


@overload(zero_at_in_place)
def _zero_at_in_place(g, index):
    if isinstance(g, types.List):
        if not (_list_of_arrays(g) and isinstance(index, types.Integer)):
            return None

        def zero_element(g, index):
            out = list(g)
            out[index] = np.zeros_like(out[index])
            return out
        return zero_element
    if not _array(g):
        return None
    if _optional_parts(index):
        return lambda g, index: zero_at_in_place(g, plain_index(index))

    def impl(g, index):
        g[index] = 0.0
        return g
    return impl


def _optional_parts(index):
    """Is `index` (a type) Optional, or a tuple with an Optional part (names
    that start at None before the branch assigning them)?"""
    parts = index.types if isinstance(index, types.BaseTuple) else (index,)
    return any(isinstance(p, types.Optional) for p in parts)


def _basic(index):
    """Is `index` (a type) a basic index: ints, slices, an Ellipsis, or a
    tuple of them (Optional ints too)?"""
    parts = index.types if isinstance(index, types.BaseTuple) else (index,)
    return all(isinstance(p.type if isinstance(p, types.Optional) else p,
                          (types.Integer, types.SliceType, types.EllipsisType)) for p in parts)


@overload(value_cotangent)
def _value_cotangent(g, index, v, x=None):
    if _array(g) and isinstance(index, types.BaseTuple) and any(_array(p) for p in index.types):
        return _value_cotangent_arrays(g, index, v, x)
    if _array(g) and _optional_parts(index) and _basic(index):
        return lambda g, index, v, x=None: value_cotangent(g, plain_index(index), v, x)
    if _array(g) and _array(index) and isinstance(index.dtype, types.Integer):
        return lambda g, index, v, x=None: value_cotangent(g, (index,), v, x)     # (the tuple form's rule)
    if _array(g) and _array(index) and isinstance(index.dtype, types.Boolean) and index.ndim == g.ndim \
            and (_array(v) or _scalar(v)) and isinstance(g.dtype, (types.Float, types.Complex)):
        return lambda g, index, v, x=None: unbroadcast(g[index], v)     # (a mask names each entry once)
    if _array(g) and isinstance(index, types.EllipsisType) and (_array(v) or _scalar(v)) \
            and isinstance(g.dtype, (types.Float, types.Complex)):
        return lambda g, index, v, x=None: unbroadcast(g.copy(), v)     # (y[...] = v: all of g)
    if _array(g) and not isinstance(index, types.Integer) and _basic(index) and (_array(v) or _scalar(v)):
        # a slice, an Ellipsis, a tuple of ints and slices (`y[...] = v`, `Y[:, 1:] = V`): g's entries
        # there, summed back to v's shape (NumPy broadcast v); none through an integer or bool x
        xt = x.type if isinstance(x, types.Optional) else x
        if _array(xt) and not isinstance(xt.dtype, (types.Float, types.Complex)):
            if _array(v):
                return lambda g, index, v, x=None: np.zeros(v.shape, dtype=g.dtype)
            return lambda g, index, v, x=None: np.zeros(1, dtype=g.dtype)[0]
        return lambda g, index, v, x=None: unbroadcast(g[index].copy(), v)
    if isinstance(g, types.List):
        if not (_list_of_arrays(g) and isinstance(index, types.Integer)):
            return None
        if _array(g.dtype):
            # (summed back to v's shape, as srcgrad's: an entry still the zeros of sparse_zeros may be shaped
            # like an earlier value of the element)
            return lambda g, index, v, x=None: unbroadcast(g[index].copy(), v)
        return lambda g, index, v, x=None: g[index]
    if not _array(g) or not isinstance(index, types.Integer):
        return None
    if isinstance(x, types.Optional):
        x = x.type
    if _array(x) and not isinstance(x.dtype, (types.Float, types.Complex)):
        # NumPy truncated v to store it into an integer or bool array: no derivative passes
        if _array(v):
            return lambda g, index, v, x=None: np.zeros(v.shape, dtype=g.dtype)
        return lambda g, index, v, x=None: np.zeros(1, dtype=g.dtype)[0]
    if _array(v):
        return lambda g, index, v, x=None: unbroadcast(g[index].copy(), v)
    if g.ndim > 1 and _scalar_tuple(v):
        # (a row of g for a tuple of values, summed back to the tuple's length: NumPy broadcast a 1-tuple
        # across the row; a new array, g's entries may then be zeroed in place)
        n = v.count
        return lambda g, index, v, x=None: unbroadcast(g[index].copy(), np.zeros(n))
    if g.ndim > 1:
        return lambda g, index, v, x=None: g[index].copy()
    return lambda g, index, v, x=None: g[index]


@overload(value_tangent)
def _value_tangent(tv, z):
    zt = z.type if isinstance(z, types.Optional) else z
    if _none(tv) or not _array(zt) or isinstance(zt.dtype, (types.Float, types.Complex)):
        return lambda tv, z: tv
    if _array(tv):
        return lambda tv, z: np.zeros(tv.shape)
    if _scalar(tv):
        return lambda tv, z: 0.0
    return None


def _homogeneous(t):
    """The element type of a list, or of a tuple whose elements have one
    type; None otherwise."""
    if isinstance(t, (types.List, types.UniTuple)):
        return t.dtype
    return None


@overload(array_tangent)
def _array_tangent(tobj, obj):
    if _array(tobj):
        return lambda tobj, obj: tobj
    if _none(tobj):
        return (lambda tobj, obj: np.zeros(obj.shape)) if _array(obj) else None
    item = _homogeneous(tobj)
    if item is None:
        return None
    if _scalar(item):
        dtype = np.dtype(str(item)) if isinstance(item, types.Complex) else np.dtype(np.float64)

        def numbers(tobj, obj):
            out = np.empty(len(tobj), dtype=dtype)
            for k in range(len(tobj)):
                out[k] = tobj[k]
            return out
        return numbers
    inner = _homogeneous(item)
    if inner is not None and _scalar(inner):
        entry = np.dtype(str(inner)) if isinstance(inner, types.Complex) else np.dtype(np.float64)

        def matrix(tobj, obj):   # (rows of numbers: filled in place, no array per row; rows that differ raise)
            n = len(tobj)
            m = len(tobj[0]) if n else 0
            out = np.empty((n, m), dtype=entry)
            for k in range(n):
                row = tobj[k]
                if len(row) != m:
                    raise ValueError("np.array: rows of different lengths")
                for j in range(m):
                    out[k, j] = row[j]
            return out
        return matrix
    if _array(item) or inner is not None:
        def rows(tobj, obj):     # (each entry's tangent (an array) is row k; shapes that differ raise, as NumPy)
            n = len(tobj)
            first = array_tangent(tobj[0], obj[0])
            out = np.empty((n,) + first.shape, dtype=first.dtype)
            for k in range(n):
                row = array_tangent(tobj[k], obj[k])
                if row.shape != first.shape:
                    raise ValueError("np.array: entries of different shapes")
                out[k] = row
            return out
        return rows
    return None


@overload(cast_like)
def _cast_like(g, x):
    xt = x.dtype if _array(x) else x
    if not _array(g) or not isinstance(xt, (types.Number, types.Boolean)):
        return None
    target = xt if isinstance(xt, (types.Float, types.Complex)) else types.float64
    if g.dtype == target:
        return lambda g, x: g
    dtype = np.dtype(str(target))
    return lambda g, x: g.astype(dtype)


@overload(balanced_eq)
def _balanced_eq(x, z, y):
    kinds = [t.dtype if _array(t) else t for t in (x, z, y)]
    if not all(isinstance(k, (types.Float, types.Integer, types.Boolean)) for k in kinds):
        return None         # (complex: NumPy orders them lexically; CPython's helper)
    if not any(_array(t) for t in (x, z, y)):
        return lambda x, z, y: (1.0 if x == z else 0.0) / (1.0 + (1.0 if x == y else 0.0))
    dtype = np.float32 if kinds[0] == types.float32 else np.float64

    def impl(x, z, y):
        eq = np.asarray(np.equal(x, z)).astype(dtype)
        tie = np.asarray(np.equal(x, y)).astype(dtype)
        return eq / (1.0 + tie)
    return impl


@overload(broadcast_like)
def _broadcast_like(tangent, z):
    if _scalar(z) and _scalar(tangent):
        return lambda tangent, z: tangent
    if not _array(z) or not (_array(tangent) or _scalar(tangent)):
        return None
    nd = z.ndim
    if _array(tangent) and tangent.ndim == nd:
        def same_rank(tangent, z):
            if tangent.shape == z.shape:
                return tangent
            return tangent + np.zeros(z.shape, dtype=tangent.dtype)
        return same_rank
    if _array(tangent) and tangent.ndim > nd:
        return None

    def wider(tangent, z):      # (a number or a lower-rank array: NumPy's broadcast, as a new array)
        return tangent + np.zeros(z.shape)
    return wider


@overload(unindex)
def _unindex(g, x, index):
    if isinstance(x, types.Optional):
        x = x.type
    if isinstance(x, types.List):
        return _list_unindex(g, x, index)
    if isinstance(x, types.UniTuple):
        return _tuple_unindex(g, x, index)
    parts = index.types if isinstance(index, types.BaseTuple) else (index,)
    if _array(x) and isinstance(index, types.BaseTuple) and any(_none(p) for p in parts):
        return _unindex_newaxis(g, x, parts)
    if _array(x) and _array(index) and _array(g):
        return _unindex_array(g, x, index)
    if _array(x) and x.ndim == 2 and _array(g) and g.ndim == 2 and isinstance(index, types.BaseTuple) \
            and len(parts) == 2 and sum(_array(p) for p in parts) == 1 \
            and all(isinstance(p, types.SliceType) or _array(p) and p.ndim == 1 and isinstance(p.dtype, types.Integer)
                    for p in parts):
        return _unindex_matrix_positions(x, _array(parts[1]))
    if any(isinstance(p, types.Optional) for p in parts):
        # (an index read from names that start at None before the branch assigning them: their values)
        return lambda g, x, index: unindex(g, x, plain_index(index))
    if not _array(x) or not parts \
            or not all(isinstance(p, (types.Integer, types.SliceType, types.EllipsisType)) for p in parts):
        return None
    dtype = x.dtype if isinstance(x.dtype, (types.Float, types.Complex)) else types.float64

    def impl(g, x, index):
        out = np.zeros(x.shape, dtype=dtype)
        out[index] = g
        return out
    return impl


def _unindex_matrix_positions(x, columns):
    """unindex of `X[s, cols]` (`columns`) or `X[rows, s]` for a matrix X, a
    slice s and a 1-d integer array: zeros of X's shape with g's column
    (row) j added at position j of the array (np.add.at: a position
    named twice gets the sum)."""
    dtype = x.dtype if isinstance(x.dtype, (types.Float, types.Complex)) else types.float64
    if columns:
        def by_column(g, x, index):
            out = np.zeros(x.shape, dtype=dtype)
            s, cols = index
            for j in range(cols.shape[0]):
                view = out[s, cols[j]]
                view += g[:, j]
            return out
        return by_column

    def by_row(g, x, index):
        out = np.zeros(x.shape, dtype=dtype)
        rows, s = index
        for j in range(rows.shape[0]):
            view = out[rows[j], s]
            view += g[j, :]
        return out
    return by_row


def _unindex_array(g, x, index):
    """unindex for one index array: a boolean mask of x's shape (g the
    1-d array of the entries it selects, in C order), or a 1-d integer
    array of positions along x's first axis (g one entry or row per
    position; a position named twice gets the sum, as np.add.at)."""
    dtype = x.dtype if isinstance(x.dtype, (types.Float, types.Complex)) else types.float64
    if isinstance(index.dtype, types.Boolean) and index.ndim == x.ndim and g.ndim == 1:
        def masked(g, x, index):
            out = np.zeros(x.shape, dtype=dtype)
            flat, chosen = out.reshape(-1), index.ravel()
            j = 0
            for k in range(chosen.shape[0]):
                if chosen[k]:
                    flat[k] = g[j]
                    j += 1
            return out
        return masked
    if isinstance(index.dtype, types.Integer) and index.ndim == 1 and g.ndim == x.ndim:
        def gathered(g, x, index):
            out = np.zeros(x.shape, dtype=dtype)
            for k in range(index.shape[0]):
                out[index[k]] += g[k]
            return out
        return gathered
    return None


@overload(unindex_add)
def _unindex_add(acc, g, x, index):
    # (a value popped from a stack that started at None is Optional: its value is read, as is each
    # Optional part of an index tuple: plain_index)
    def plain(t):
        return t.type if isinstance(t, types.Optional) else t
    index_t = plain(index)
    g_t = plain(g)
    parts = tuple(plain(p) for p in index_t.types) if isinstance(index_t, types.BaseTuple) else (index_t,)
    if isinstance(x, types.Optional):
        x = x.type
    dtype = x.dtype if _array(x) and isinstance(x.dtype, (types.Float, types.Complex)) else types.float64
    if not (_array(acc) and _array(x) and acc.mutable and acc.layout == "C" and acc.ndim == x.ndim
            and acc.dtype == dtype and parts and all(isinstance(p, (types.Integer, types.SliceType)) for p in parts)
            and (_scalar(g_t) or _array(g_t) and g_t.dtype == dtype)
            and not (isinstance(g_t, types.Complex) and not isinstance(dtype, types.Complex))):
        return lambda acc, g, x, index: acc + unindex(g, x, plain_index(index))

    def impl(acc, g, x, index):
        i = plain_index(index)
        if acc.shape == x.shape:
            acc[i] += value_of(g)
            return acc
        return acc + unindex(g, x, i)
    return impl


def plain_index(index):
    """Twin helper (lowered code only): `index` with the value of each
    Optional part read (a tuple of up to 3 parts; value_of otherwise)."""
    raise NotImplementedError("a Numba twin")


@overload(plain_index)
def _plain_index(index):
    if isinstance(index, types.Optional):
        return lambda index: _unoptional(index)
    if not isinstance(index, types.BaseTuple) or not any(isinstance(p, types.Optional) for p in index.types):
        return lambda index: index
    n = len(index.types)
    if n == 1:
        return lambda index: (value_of(index[0]),)
    if n == 2:
        return lambda index: (value_of(index[0]), value_of(index[1]))
    if n == 3:
        return lambda index: (value_of(index[0]), value_of(index[1]), value_of(index[2]))
    return None


def value_of(v):
    """Twin helper (lowered code only): the value of an Optional `v`, which
    is not None there; `v` itself otherwise."""
    raise NotImplementedError("a Numba twin")


@overload(value_of)
def _value_of(v):
    if isinstance(v, types.Optional):
        return lambda v: _unoptional(v)
    return lambda v: v


def _jitable_from_source(text, name, filename, **names):
    """The function `name` that the Python source `text` defines (its
    globals: np and `names`), made jitable (numba's register_jitable,
    uncached: written per argument types, it has no file for a cache of
    its own; the twin that calls it is compiled with it)."""
    ns = dict(np=np, **names)
    exec(compile(text, filename, "exec"), ns)
    return numba_register_jitable(ns[name])


def _unindex_newaxis(g, x, parts):
    """unindex's implementation for a basic index tuple with None
    (np.newaxis) among integers and slices (`points[:, None, :]`,
    `w[:, None]`): `g`, shaped like x[index], has a length-1 axis at each
    None; it is read at 0 there and written into zeros of x's shape at the
    index without its Nones. Written as source per index pattern (Numba
    indexes a heterogeneous tuple only by constants). None (no
    implementation) for other index parts, or a `g` of another rank."""
    if not all(_none(p) or isinstance(p, (types.Integer, types.SliceType)) for p in parts):
        return None
    kept = [k for k, p in enumerate(parts) if not _none(p)]
    n_int = sum(1 for p in parts if isinstance(p, types.Integer))
    rank = x.ndim - n_int + (len(parts) - len(kept))
    if len(kept) > x.ndim:
        return None
    dtype = x.dtype if isinstance(x.dtype, (types.Float, types.Complex)) else types.float64
    if _scalar(g):
        read = "g"
    elif _array(g) and g.ndim == rank:
        # g's axes: one per slice or None (in the index's order), then x's axes the index leaves whole
        axes = ["0" if _none(p) else ":" for p in parts if not isinstance(p, types.Integer)]
        read = "g[%s]" % ", ".join(axes + [":"] * (rank - len(axes))) if any(a == "0" for a in axes) else "g"
    else:
        return None
    where = ", ".join("index[%d]" % k for k in kept) if kept else "..."
    text = ("def kernel(g, x, index):\n"
            "    out = np.zeros(x.shape, dtype=dtype)\n"
            "    out[%s] = %s\n"
            "    return out\n" % (where, read))
    kernel = _jitable_from_source(text, "kernel", "<srcgrad.jit unindex twin>", dtype=dtype)

    def impl(g, x, index):
        return kernel(g, x, index)
    return impl


@overload(concatenate_adjoint, prefer_literal=True)
def _concatenate_adjoint(g, arrays, axis):
    ax = _literal(axis)
    if not _array(g) or type(ax) is not int or not -g.ndim <= ax < g.ndim:
        return None
    a = ax % g.ndim
    lead = ":, " * a
    if isinstance(arrays, types.BaseTuple):
        if not all(_array(t) and t.ndim == g.ndim for t in arrays.types):
            return None
        lines = ["def kernel(g, arrays, axis):", "    o0 = 0"]
        for k in range(len(arrays.types)):
            lines.append("    o%d = o%d + arrays[%d].shape[%d]" % (k + 1, k, k, a))
        pieces = ["g[%so%d:o%d]" % (lead, k, k + 1) for k in range(len(arrays.types))]
        lines.append("    return (%s)" % "".join(p + ", " for p in pieces))
    elif isinstance(arrays, types.List) and _array(arrays.dtype) and arrays.dtype.ndim == g.ndim:
        # (generated code passes the operands as a list display: a list of views of g)
        lines = ["def kernel(g, arrays, axis):",
                 "    out = [g[%s0:0] for _ in range(0)]" % lead,
                 "    o = 0",
                 "    for x in arrays:",
                 "        n = x.shape[%d]" % a,
                 "        out.append(g[%so:o + n])" % lead,
                 "        o += n",
                 "    return out"]
    else:
        return None
    kernel = _jitable_from_source("\n".join(lines) + "\n", "kernel", "<srcgrad.jit concatenate_adjoint twin>")

    def impl(g, arrays, axis):
        return kernel(g, arrays, axis)
    return impl


def _stack_adjoint_moved(g, arrays, axis):
    """srcgrad's own stack_adjoint, as Numba compiles it (np.moveaxis):
    the twin's other cases (a list of numbers, an axis known only when
    running)."""
    gm = np.moveaxis(g, axis, 0)
    return [gm[i, ...] for i in range(len(arrays))]


@overload(stack_adjoint, prefer_literal=True)
def _stack_adjoint(g, arrays, axis):
    if not _array(g):
        return None
    ax = axis.literal_value if isinstance(axis, types.IntegerLiteral) else None
    lead = ":, " * (ax % g.ndim) if type(ax) is int and -g.ndim <= ax < g.ndim else None
    if lead is not None and isinstance(arrays, types.BaseTuple) \
            and all(_array(t) and t.ndim == g.ndim - 1 for t in arrays.types):
        pieces = "".join("g[%s%d], " % (lead, k) for k in range(len(arrays.types)))
        lines = ["def kernel(g, arrays, axis):", "    return (%s)" % pieces]
    elif lead is not None and isinstance(arrays, (types.List, types.ListType)) and _array(arrays.dtype) \
            and arrays.dtype.ndim == g.ndim - 1:
        lines = ["def kernel(g, arrays, axis):",
                 "    out = [g[%s0] for _ in range(0)]" % lead,
                 "    for k in range(len(arrays)):",
                 "        out.append(g[%sk])" % lead,
                 "    return out"]
    else:
        moved = numba_register_jitable(_stack_adjoint_moved)
        return lambda g, arrays, axis: moved(g, arrays, axis)
    kernel = _jitable_from_source("\n".join(lines) + "\n", "kernel", "<srcgrad.jit stack_adjoint twin>")

    def impl(g, arrays, axis):
        return kernel(g, arrays, axis)
    return impl


@overload(seq_cotangent)
def _seq_cotangent(g, x):
    if isinstance(x, (types.BaseTuple, types.List)) and isinstance(g, (types.BaseTuple, types.List)):
        return lambda g, x: g
    return None


# -- lists of arrays (dense list cotangents). srcgrad's reverse sweep starts the cotangent of a list as a
# list of None (symbolic zeros, sparse_zeros); Numba's lists hold one type, so here it is a list of zeros of
# the elements' shapes, and the helpers that take list cotangents (unindex, add_cotangents, value_cotangent,
# zero_at_in_place) read and write zeros where srcgrad's read and write None: the same sums.

def _list_of_arrays(t):
    """Is `t` a Numba list of floating arrays (or floats)?"""
    if not isinstance(t, types.List):
        return False
    e = t.dtype
    return (_array(e) and isinstance(e.dtype, (types.Float, types.Complex))) or isinstance(e, types.Float)


def _list_zeros(t):
    """An implementation `x -> [zeros like each element of x]`, or None."""
    if not _list_of_arrays(t):
        return None
    if _array(t.dtype):
        return lambda x: [np.zeros_like(e) for e in x]
    return lambda x: [0.0 for e in x]


def _as_element(t):
    """A function giving a value the type of a list's element type `t`
    (a C-contiguous array for an array of layout C)."""
    if _array(t) and t.layout == "C":
        return lambda v: np.ascontiguousarray(v)
    return lambda v: v


def _list_unindex(g, x, index):
    if _list_of_arrays(x) and isinstance(index, types.SliceType) and isinstance(g, types.List) \
            and g.dtype == x.dtype:
        def sliced(g, x, index):     # (`xs[a:b]`'s cotangent: g's entries at the positions the slice names)
            out = zeros_like_value(x)
            start, stop, step = index.indices(len(x))
            j = 0
            for k in range(start, stop, step):
                out[k] = g[j]
                j += 1
            return out
        return sliced
    if not (_list_of_arrays(x) and isinstance(index, types.Integer)):
        return None
    e = x.dtype
    if _array(e) != _array(g) or (_array(g) and g.ndim != e.ndim):
        return None
    element = numba_register_jitable(_as_element(e))

    def impl(g, x, index):
        out = zeros_like_value(x)
        out[index] = element(g)
        return out
    return impl


def _tuple_unindex(g, x, index):
    """unindex of `t[k]` for a tuple of arrays of one type: a tuple (as
    zeros_like_value's zeros of a tuple: zeros where srcgrad's has None)
    of zeros shaped like each entry, `g` at k."""
    if not (_array(x.dtype) and isinstance(index, types.Integer) and _array(g) and g.ndim == x.dtype.ndim
            and g.dtype == x.dtype.dtype and isinstance(g.dtype, (types.Float, types.Complex))):
        return None
    n = x.count
    entries = ", ".join("np.ascontiguousarray(g) if k == %d else np.zeros(x[%d].shape, dtype=g.dtype)" % (j, j)
                        for j in range(n))
    namespace = {"np": np}
    exec("def impl(g, x, index):\n    k = index %% %d\n    return (%s,)\n" % (n, entries), namespace)
    return namespace["impl"]


@overload(check_numeric_result)
def _check_numeric_result(value, origin):
    if _array(value) or _scalar(value):
        return lambda value, origin: None
    if isinstance(value, (types.List, types.ListType)) and isinstance(
            value.dtype if isinstance(value, types.List) else value.item_type, (types.Integer, types.Boolean)):
        return lambda value, origin: None       # (indices: `cols[:j] + cols[j + 1:]`, no derivative)
    return None     # (floats: CPython's check raises at the user's line)


def _extent_py(a):
    """The memory bounds [lo, hi) of array `a`'s elements (addresses)."""
    lo = np.int64(a.ctypes.data)
    hi = lo
    for k in range(a.ndim):
        if a.shape[k] == 0:
            return lo, lo
        span = np.int64((a.shape[k] - 1) * a.strides[k])
        if span < 0:
            lo += span
        else:
            hi += span
    return lo, hi + a.itemsize


def _apart_py(a, b):
    """Are the memory bounds of arrays `a` and `b` disjoint (or one empty)?"""
    lo_a, hi_a = _extent_jit(a)
    lo_b, hi_b = _extent_jit(b)
    return lo_a == hi_a or lo_b == hi_b or hi_a <= lo_b or hi_b <= lo_a


@overload(check_not_shared)
def _check_not_shared(array, others, views):
    if _scalar(array):
        return lambda array, others, views: None
    parts = others.types if isinstance(others, types.BaseTuple) else None
    if not _array(array) or parts is None or not all(_array(t) or _scalar(t) for t in parts):
        return None
    checks = ["    if not _apart(array, others[%d]):\n        raise NotImplementedError(%r)\n" % (k, _SHARED)
              for k, t in enumerate(parts) if _array(t)]
    namespace = {"_apart": _apart_jit}
    exec("def check(array, others, views):\n%s    return None\n" % "".join(checks), namespace)
    return namespace["check"]


@overload(check_slot_not_shared)
def _check_slot_not_shared(container, index, origin):
    if _array(container) or isinstance(container, types.List) and _scalar(container.dtype):
        return lambda container, index, origin: None
    if not (isinstance(container, types.List) and _array(container.dtype) and isinstance(index, types.Integer)):
        return None

    def check(container, index, origin):
        n = len(container)
        if not -n <= index < n:
            return None         # (the write itself raises IndexError)
        k = index % n
        for j in range(n):
            if j != k and not _apart_jit(container[k], container[j]):
                raise NotImplementedError(_SHARED)
        return None
    return check


_SHARED = ("an element assignment writes into an array whose memory bounds overlap another name's still used: "
           "CPython's exact test decides (np.shares_memory)")


_TUPLE_SUMS = {
    1: lambda a, b: (add_cotangents(a[0], b[0]),),
    2: lambda a, b: (add_cotangents(a[0], b[0]), add_cotangents(a[1], b[1])),
    3: lambda a, b: (add_cotangents(a[0], b[0]), add_cotangents(a[1], b[1]), add_cotangents(a[2], b[2])),
    4: lambda a, b: (add_cotangents(a[0], b[0]), add_cotangents(a[1], b[1]), add_cotangents(a[2], b[2]),
                     add_cotangents(a[3], b[3])),
}


@overload(add_cotangents)
def _add_cotangents(a, b):
    if _none(a):
        return lambda a, b: b
    if _none(b):
        return lambda a, b: a
    if isinstance(a, types.UniTuple) and isinstance(b, types.UniTuple) and a.count == b.count \
            and _array(a.dtype) and _array(b.dtype):
        # (the cotangents of a tuple of arrays: entry by entry, zeros standing for srcgrad's None; written
        # out, not made by exec, so that this twin stays cached)
        return _TUPLE_SUMS.get(a.count)
    if isinstance(a, types.List) and isinstance(b, types.List):
        if not (_list_of_arrays(a) and _list_of_arrays(b)):
            return None
        if _array(a.dtype) and _array(b.dtype):
            def arrays(a, b):
                for k in range(len(a)):
                    if a[k].shape != b[k].shape:
                        # (one is a zero standing for srcgrad's None, shaped like another value of the element:
                        # which one cannot be told here; CPython's sweep knows)
                        raise NotImplementedError("srcgrad.jit: list cotangents of different shapes")
                return [a[k] + b[k] for k in range(len(a))]
            return arrays
        return lambda a, b: [a[k] + b[k] for k in range(len(a))]
    ta = a.type if isinstance(a, types.Optional) else a
    tb = b.type if isinstance(b, types.Optional) else b
    if (_array(ta) or _scalar(ta)) and (_array(tb) or _scalar(tb)):
        def impl(a, b):
            if a is None:
                return b
            if b is None:
                return a
            return a + b
        return impl
    return None


@overload(setitem)
def _setitem(x, index, v):
    if isinstance(x, types.List) and isinstance(index, types.Integer):
        element = numba_register_jitable(_as_element(x.dtype))

        def copy_list(x, index, v):
            out = list(x)
            out[index] = element(v)
            return out
        return copy_list
    if _array(x) and isinstance(index, types.Integer) and x.ndim > 1 and _scalar_tuple(v):
        def copy_tuple_row(x, index, v):       # (the tuple broadcast as NumPy does: setitem_in_place's)
            return setitem_in_place(np.ascontiguousarray(x.copy()), index, v)
        return copy_tuple_row
    if _array(x):
        def copy_array(x, index, v):
            out = x.copy()
            out[index] = v
            return out
        return copy_array
    return None


@overload(list_append)
def _list_append(xs, v):
    if not isinstance(xs, types.List):
        return None

    def impl(xs, v):
        out = list(xs)
        out.append(v)
        return out
    return impl


# -- einsum: loop nests written per subscripts

def _einsum_parse(spec, n):
    """(input label strings, output labels) of einsum subscripts `spec` for
    n operands, or None for what the loop nests do not take (an ellipsis,
    a label repeated within an operand or in the output, an output label
    no input has, a count of operands that differs)."""
    if not isinstance(spec, str) or "." in spec:
        return None
    spec = spec.replace(" ", "")
    if "->" in spec:
        ins, out = spec.split("->")
    else:
        ins = spec
        counts = {}
        for c in ins.replace(",", ""):
            counts[c] = counts.get(c, 0) + 1
        out = "".join(sorted(c for c, k in counts.items() if k == 1))
    ins = ins.split(",")
    if len(ins) != n or any(len(set(t)) != len(t) for t in ins) or len(set(out)) != len(out) \
            or not set(out) <= set("".join(ins)) or not all(c.isalpha() for c in "".join(ins) + out):
        return None
    return ins, out


def _einsum_kernel(ins, out, like=None):
    """A jitable function of len(ins) arrays: their einsum into `out` (a
    new array; a float for no output label), by loops over the output
    labels, then a sum over the others. Each label's length is its first
    operand's; an operand whose length differs (NumPy broadcasts a length
    1) raises NotImplementedError: sg.jit then runs the gradient in
    CPython. `like`: the labels of one more array argument, read only for
    the lengths of its axes (an adjoint's operand, whose labels g and the
    other operands may lack)."""
    args = ["a%d" % k for k in range(len(ins))]
    sized = list(ins)
    if like is not None:
        args.append("a%d" % len(ins))
        sized.append(like)
    first = {}
    for k, labels in enumerate(sized):
        for pos, c in enumerate(labels):
            first.setdefault(c, "a%d.shape[%d]" % (k, pos))
    lines = ["def kernel(%s):" % ", ".join(args)]
    lines += ["    n_%s = %s" % (c, first[c]) for c in first]
    for k, labels in enumerate(sized):
        for pos, c in enumerate(labels):
            lines.append("    if a%d.shape[%d] != n_%s:" % (k, pos, c))
            lines.append("        raise NotImplementedError('srcgrad.jit: einsum operands broadcast')")
    summed = [c for c in first if c not in out]
    if out:
        lines.append("    out = np.zeros((%s,), dtype=np.float64)" % ", ".join("n_" + c for c in out))
    else:
        lines.append("    out = 0.0")
    depth = 1
    for c in out:
        lines.append("    " * depth + "for i_%s in range(n_%s):" % (c, c))
        depth += 1
    lines.append("    " * depth + "acc = 0.0")
    inner = depth
    for c in summed:
        lines.append("    " * depth + "for i_%s in range(n_%s):" % (c, c))
        depth += 1
    product = " * ".join("a%d[%s]" % (k, ", ".join("i_" + c for c in labels)) if labels else "a%d" % k
                         for k, labels in enumerate(ins))
    lines.append("    " * depth + "acc += " + product)
    if out:
        lines.append("    " * inner + "out[%s] = acc" % ", ".join("i_" + c for c in out))
    else:
        lines.append("    " * inner + "out = acc")
    lines.append("    return out")
    return _jitable_from_source("\n".join(lines) + "\n", "kernel", "<srcgrad.jit einsum %s->%s>" % (",".join(ins), out))


def _real_arrays(ts):
    return all(_array(t) and isinstance(t.dtype, types.Float) for t in ts)


@overload(einsum, prefer_literal=True)
def _einsum(subscripts, operands):
    if not isinstance(subscripts, types.StringLiteral) or not isinstance(operands, types.BaseTuple):
        return None
    parsed = _einsum_parse(subscripts.literal_value, len(operands.types))
    if parsed is None or not _real_arrays(operands.types) \
            or any(t.ndim != len(labels) for t, labels in zip(operands.types, parsed[0])):
        return None
    kernel = _einsum_kernel(*parsed)
    text = "def call(operands):\n    return kernel(%s)\n" % ", ".join(
        "operands[%d]" % k for k in range(len(operands.types)))
    call = _jitable_from_source(text, "call", "<srcgrad.jit einsum twin>", kernel=kernel)

    def impl(subscripts, operands):
        return call(operands)
    return impl


@overload(einsum_adjoint, prefer_literal=True)
def _einsum_adjoint(g, operands):
    if not isinstance(operands, types.BaseTuple) or not operands.types \
            or not isinstance(operands.types[0], types.StringLiteral):
        return None
    arrays = operands.types[1:]
    parsed = _einsum_parse(operands.types[0].literal_value, len(arrays))
    if parsed is None or not _real_arrays(arrays) or not (_array(g) or _scalar(g)):
        return None
    ins, out = parsed
    if any(t.ndim != len(labels) for t, labels in zip(arrays, ins)) or (_array(g) and g.ndim != len(out)):
        return None
    kernels, calls = {}, []
    for i in range(len(arrays)):
        # operand i's cotangent: einsum(out, others -> labels_i) of g and the other operands
        others = [k for k in range(len(arrays)) if k != i]
        kernels["k%d" % i] = _einsum_kernel([out] + [ins[k] for k in others], ins[i], like=ins[i])
        calls.append("k%d(g, %soperands[%d])" % (i, "".join("operands[%d], " % (k + 1) for k in others), i + 1))
    text = "def call(g, operands):\n    return (None, %s)\n" % "".join(c + ", " for c in calls)
    call = _jitable_from_source(text, "call", "<srcgrad.jit einsum_adjoint twin>", **kernels)

    def impl(g, operands):
        return call(g, operands)
    return impl


def _last_writes_py(shape, index):
    """For x[index] = v (x of `shape`, `index` with integer arrays): 1.0
    where the entry of x[index] names its element of x for the last time,
    0.0 where a later entry names it again (NumPy wrote that one last)."""
    size = 1
    for s in shape:
        size *= s
    positions = np.arange(size).reshape(shape)[index]
    flat = positions.ravel()
    keep = np.ones(flat.size, dtype=np.float64)
    seen = np.zeros(size, dtype=np.bool_)
    for k in range(flat.size - 1, -1, -1):
        if seen[flat[k]]:
            keep[k] = 0.0
        seen[flat[k]] = True
    return keep.reshape(positions.shape)


def _value_cotangent_arrays(g, index, v, x):
    """value_cotangent's implementation for an index tuple with integer
    arrays (Q[:, rows, cols] = l): g[index] (a copy), with the entries an
    element named again later zeroed (only NumPy's last write of an element
    stays), summed back to v's shape; zeros when x has an integer or bool
    dtype."""
    if isinstance(x, types.Optional):
        x = x.type
    if _array(x) and not isinstance(x.dtype, (types.Float, types.Complex)):
        if _array(v):
            return lambda g, index, v, x=None: np.zeros(v.shape, dtype=g.dtype)
        return lambda g, index, v, x=None: np.zeros(1, dtype=g.dtype)[0]
    if not (_array(v) or _scalar(v)):
        return None
    last_writes = numba_register_jitable(_last_writes_py)

    def impl(g, index, v, x=None):
        part = g[index] * last_writes(g.shape, index)
        return unbroadcast(part, v)
    return impl


@overload(zero_at)
def _zero_at(g, index):
    if _none(g):
        return lambda g, index: None
    if not _array(g):
        return None
    if _optional_parts(index):
        return lambda g, index: zero_at(g, plain_index(index))

    def impl(g, index):
        out = g.copy()
        out[index] = 0.0
        return out
    return impl


def _unoptional_intrinsic(typingctx, x):
    """Numba intrinsic: an Optional(T) value as a T (it must not be None:
    the callers test first). The cast borrows the optional's payload, so
    the result is given its own reference."""
    if not isinstance(x, types.Optional):
        return None
    sig = x.type(x)

    def codegen(context, builder, signature, args):
        out = context.cast(builder, args[0], signature.args[0], signature.return_type)
        context.nrt.incref(builder, signature.return_type, out)
        return out
    return sig, codegen


@overload(stack_value)
def _stack_value(v):
    """A value pushed on a stack that passes from the split forward sweep
    to the reverse sweep (a Numba typed list: one element type, no
    None), or kept as a residual. Generated code starts a temporary at
    None before the loop that assigns it, and pushes its previous value
    at each step: the None pushed first is restored by the reverse sweep
    after the loop's last adjoint step, where nothing reads it (the
    primal code before the loop never had the temporary), so an empty
    array of its rank and dtype (0 for a number) stands in for it (the
    lowering refuses reverse sweeps that test a value against None).
    Typed while `v` is still only None: no implementation yet (Numba
    retries once the variable's other assignments are typed)."""
    if _none(v):
        return None
    if isinstance(v, types.Optional):
        t = v.type
        if _array(t) and t.layout == "C":
            empty_shape, dtype = (0,) * t.ndim, np.dtype(str(t.dtype)).type     # (np.float64: Numba types it)

            def empty_array(v):
                if v is None:
                    return np.empty(empty_shape, dtype)
                return _unoptional(v)
            return empty_array
        if isinstance(t, (types.Float, types.Integer, types.Boolean, types.Complex)):
            zero = np.zeros((), dtype=str(t))[()]       # (a NumPy scalar: Numba types it as t)

            def empty_number(v):
                if v is None:
                    return zero
                return _unoptional(v)
            return empty_number
        if _stand_in(t, {}) is None:
            return None

        def empty_value(v):
            if v is None:
                return stand_in(v)
            return _unoptional(v)
        return empty_value
    return lambda v: v


def stand_in(v):
    """Twin for stack_value (lowered code only): an empty value of the
    type of the Optional `v` (see `_stand_in`)."""
    raise NotImplementedError("a Numba twin")


@overload(stand_in)
def _stand_in_of(v):
    if not isinstance(v, types.Optional):
        return None
    constants = {"np": np}
    made = _stand_in(v.type, constants)
    if made is None:
        return None
    namespace = dict(constants)
    exec("def empty(v):\n    return %s\n" % made, namespace)
    return namespace["empty"]


def _stand_in(t, constants):
    """The source of an expression Numba types as `t`, an empty value of
    it (stack_value's stand-in for None): an array of t's rank and dtype
    with no entries (C layout), 0 of a number type, an empty list of a
    Python list's item type, a tuple of stand-ins
    (a called function's residuals, None when its call's branch did not
    run), an empty typed list of t's item type; None for any other type
    (the lowered code then runs in CPython). The constants it reads are
    added to `constants` (plain values: the code that calls it stays
    cacheable)."""
    name = "_c%d" % len(constants)
    if _array(t) and t.layout == "C":
        constants[name] = ((0,) * t.ndim, np.dtype(str(t.dtype)).type)    # (np.float64: Numba types it)
        return "np.empty(%s[0], %s[1])" % (name, name)
    if isinstance(t, (types.Float, types.Integer, types.Boolean, types.Complex)):
        constants[name] = np.zeros((), dtype=str(t))[()]       # (a NumPy scalar: Numba types it as t)
        return name
    if isinstance(t, types.ListType):
        import numba
        constants[name] = t.item_type
        constants["_List"] = numba.typed.List
        return "_List.empty_list(%s)" % name
    if isinstance(t, types.List):       # (a Python list: a slice or a sum of lists of the user's)
        item = _stand_in(t.dtype, constants)
        if item is None:
            return None
        constants["_empty_list"] = numba_register_jitable(_empty_list_py)
        return "_empty_list(%s)" % item
    if isinstance(t, types.BaseTuple) and not isinstance(t, types.NamedTuple):
        parts = [_stand_in(e, constants) for e in t.types]
        if any(p is None for p in parts):
            return None
        return "(%s)" % "".join(p + ", " for p in parts)
    return None


def _empty_list_py(item):
    """An empty list of `item`'s type (a stand-in, `_stand_in`)."""
    out = [item]
    out.pop()
    return out


def _range_item(r, k):
    """`r[k]` for a range `r` and an integer `k`, which Numba does not
    type: a loop that may end early (break, return) is a while loop over
    `_range[_k]` (transforms/lower/exits.py). Raises IndexError out of
    range, as Python."""
    if not (isinstance(r, types.RangeType) and isinstance(k, types.Integer)):
        return None

    def impl(r, k):
        n = len(r)
        i = k + n if k < 0 else k
        if i < 0 or i >= n:
            raise IndexError("range object index out of range")
        return r.start + i * r.step
    return impl


def _helper_key(module, qualname):
    return module, qualname


#: (module, qualified name) of a srcgrad helper -> its twin
TWINS = {
    _helper_key("srcgrad.rules.helpers.broadcast", "unbroadcast"): unbroadcast,
    _helper_key("srcgrad.rules.helpers.broadcast", "unreduce"): unreduce,
    _helper_key("srcgrad.rules.helpers.broadcast", "reduction_size"): reduction_size,
    _helper_key("srcgrad.rules.helpers.broadcast", "reduced_shape"): reduced_shape,
    _helper_key("srcgrad.rules.helpers.broadcast", "unindex"): unindex,
    _helper_key("srcgrad.rules.helpers.broadcast", "unindex_add"): unindex_add,
    _helper_key("srcgrad.rules.helpers.broadcast", "matmul_adjoint_x"): matmul_adjoint_x,
    _helper_key("srcgrad.rules.helpers.broadcast", "matmul_adjoint_y"): matmul_adjoint_y,
    _helper_key("srcgrad.rules.helpers.reductions", "max_chooser"): max_chooser,
    _helper_key("srcgrad.runtime.core", "as_input"): as_input,
    _helper_key("srcgrad.runtime.core", "densify"): densify,
    _helper_key("srcgrad.runtime.core", "zeros_tree"): zeros_like_value,
    _helper_key("srcgrad.runtime.core", "sparse_zeros"): zeros_like_value,
    _helper_key("srcgrad.runtime.core", "zeros_for"): zeros_for,
    _helper_key("srcgrad.runtime.syntax", "check_loop_sequence"): check_loop_sequence,
    _helper_key("srcgrad.rules.python.containers", "setitem_in_place"): setitem_in_place,
    _helper_key("srcgrad.rules.python.containers", "zero_at_in_place"): zero_at_in_place,
    _helper_key("srcgrad.rules.python.containers", "add_into"): add_into,
    _helper_key("srcgrad.rules.python.containers", "value_cotangent"): value_cotangent,
    _helper_key("srcgrad.rules.python.containers", "value_tangent"): value_tangent,
    _helper_key("srcgrad.rules.helpers.broadcast", "broadcast_like"): broadcast_like,
    _helper_key("srcgrad.rules.helpers.elementwise", "balanced_eq"): balanced_eq,
    _helper_key("srcgrad.rules.helpers.shapes", "array_tangent"): array_tangent,
    _helper_key("srcgrad.rules.helpers.complex", "cast_like"): cast_like,
    _helper_key("srcgrad.runtime.core", "zero_tangent"): zeros_like_value,
    _helper_key("srcgrad.rules.python.containers", "seq_cotangent"): seq_cotangent,
    _helper_key("srcgrad.rules.python.containers", "zero_at"): zero_at,
    _helper_key("srcgrad.rules.helpers.products", "einsum_adjoint"): einsum_adjoint,
    _helper_key("srcgrad.rules.python.containers", "setitem"): setitem,
    _helper_key("srcgrad.rules.python.containers", "list_append"): list_append,
    _helper_key("srcgrad.runtime.core", "add_cotangents"): add_cotangents,
    _helper_key("srcgrad.runtime.syntax", "check_numeric_result"): check_numeric_result,
    _helper_key("srcgrad.runtime.syntax", "check_not_shared"): check_not_shared,
    _helper_key("srcgrad.runtime.syntax", "check_slot_not_shared"): check_slot_not_shared,
    _helper_key("srcgrad.rules.helpers.complex", "real_part"): real_part,
    _helper_key("srcgrad.rules.helpers.complex", "sign"): complex_sign,
    _helper_key("srcgrad.rules.helpers.shapes", "concatenate_adjoint"): concatenate_adjoint,
    _helper_key("srcgrad.rules.helpers.shapes", "stack_adjoint"): stack_adjoint,
}


def twin_of(obj):
    """The Numba twin standing for srcgrad helper `obj` (a function, or a
    primitive wrapper of one), or None."""
    raw = getattr(obj, "__srcgrad_raw__", obj)
    return TWINS.get(_helper_key(getattr(raw, "__module__", None), getattr(raw, "__qualname__", None)))
