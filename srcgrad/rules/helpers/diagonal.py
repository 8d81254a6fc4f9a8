"""A structured seed: the stack of the identity's rows, scaled, kept as its
diagonal.

A Jacobian by reverse mode seeds the batched reverse sweep with the rows of
the identity (one cotangent per output entry, jacobians.py), a Hessian the
sweep of the gradient's adjoint the same way. As a dense array that stack
costs m x m to build and every step of the sweep pays for it: `bout * x` is
m x m products, and the adjoint of `A @ x` a matrix product of m^3 flops,
although every row of the stack is zero but at one entry. While the steps
only scale entries (the cotangents of elementwise operations), the stack
stays `diag(d)`: `DiagonalStack` keeps d alone, each step costs O(m), and
the adjoint of a matrix product is `d[:, None] * A`, O(m n), where the dense
stack paid O(m^2 n) (the sparsity a hand-written Jacobian of an elementwise
layer uses: Griewank & Walther 2008, "Evaluating Derivatives", ch. 7-8, on
exploiting the structure of seed matrices).

It is exactly the dense stack: a step that keeps the structure computes
the entries the dense one does (NaN included: scaling by an infinite or
NaN factor, or dividing by a zero one, makes the zeros NaN in the dense
stack, so it densifies), and any other operation (a NumPy function, a
method, an index, a ufunc it does not know) gets the dense array, built
then (`__array__`), so generated code and helpers need not know the type.
"""
import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

# scalar types a structured stack may be scaled by, beside plain ndarrays (a list, a Tensor, a ShapeOf,
# an ndarray subclass with its own arithmetic, np.matrix or a masked array: densify)
_FACTORS = (np.generic, float, int, complex)


class DiagonalStack(NDArrayOperatorsMixin):
    """The stack G of shape (m,) + S, m = prod(S), whose row k is the k-th
    entry of `diagonal` (shape S) at its place in S and zeros elsewhere:
    G.reshape(m, m) == np.diag(diagonal.ravel()). dtype: the diagonal's.
    With `lead` = j > 0, S's first j axes (L, the examples of a
    batch_jacobian) are not part of the diagonal: m = prod(S[j:]) and row
    k holds, in every example, the k-th entry of its part of the
    diagonal (G.reshape(m, prod(L), m)[k, :, k] == diagonal.reshape(prod(L),
    m)[:, k], zeros elsewhere).

    Arithmetic that keeps the structure returns a DiagonalStack (O(m)):
    `-G`, `conj(G)`, `G * y` and `y * G` for a finite `y` of a shape that
    broadcasts within S (not along the batch axis), `G / y` for a finite
    nonzero one, `G1 op G2` for + - * of two stacks of one shape and lead.
    `G + D` and `G - D` for a dense D of G's shape return a dense copy of D
    with the diagonal added (no m^2 zeros built); `G @ B` for one axis of
    diagonal (S = L + (n,)) and a finite matrix B of n rows, row k of B
    scaled by each example's entry k (O(m prod(L) p), where the dense
    product is O(m prod(L) n p)). Anything
    else runs on the dense array (np.asarray(G)), so the result is always
    the dense stack's. Immutable: `out=` naming it returns a new array.
    Raises ValueError for a `lead` outside 0..diagonal.ndim.
    """

    __slots__ = ("diagonal", "lead", "shape", "dtype", "_identity", "densified")

    def __init__(self, diagonal, lead=0):
        d = np.asarray(diagonal)
        if not 0 <= lead <= d.ndim:
            raise ValueError("lead %d for a diagonal of rank %d" % (lead, d.ndim))
        self.diagonal = d
        self.lead = lead
        self.shape = (int(np.prod(d.shape[lead:], dtype=np.int64)),) + d.shape
        self.dtype = d.dtype
        self._identity = False
        self.densified = False      # (has an operation asked for this stack's dense array?)

    @classmethod
    def identity(cls, shape, dtype, lead=0):
        """The identity's rows for outputs of `shape` and `dtype` (the seed
        of a Jacobian; with `lead`, of a batch_jacobian, every example
        seeded at once): its dense array, when an operation needs it, is
        kept read-only and shared while small (IDENTITIES_KEPT), as the
        dense seeds were (a Hessian's sweep slices it at once)."""
        g = cls(np.ones(shape, dtype=dtype), lead)
        g._identity = True
        return g

    def _same(self, d):
        """A stack of this one's lead with diagonal `d`."""
        return DiagonalStack(d, self.lead)

    def _rows(self, out):
        """`out` (a C-contiguous array of this stack's shape) as (m, E, m),
        E the number of examples, and the diagonal as (E, m), transposed:
        rows[k, :, k] are row k's entries."""
        m = self.shape[0]
        e = self.diagonal.size // m if m else 0
        return out.reshape(m, e, m), self.diagonal.reshape(e, m).T

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return self.shape[0] * self.diagonal.size

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return "DiagonalStack(%r%s)" % (self.diagonal, ", lead=%d" % self.lead if self.lead else "")

    def dense(self, dtype=None):
        """The stack as an ndarray of shape (m,) + S (of `dtype`, default
        the diagonal's): a new one, or for the identity of at most
        IDENTITIES_KEPT entries a shared read-only one."""
        self.densified = True
        d = self.diagonal
        dtype = d.dtype if dtype is None else np.dtype(dtype)
        if self._identity and self.size <= IDENTITIES_KEPT:
            key = (self.shape, self.lead, dtype)
            found = _IDENTITIES.get(key)
            if found is None:
                if len(_IDENTITIES) > 32:
                    _IDENTITIES.clear()
                found = _IDENTITIES[key] = self._filled(dtype)
                found.flags.writeable = False
            return found
        return self._filled(dtype)

    def _filled(self, dtype):
        """A new array of this stack's shape: zeros, and the diagonal."""
        out = np.zeros(self.shape, dtype=dtype)
        rows, d = self._rows(out)
        place = np.arange(self.shape[0])
        rows[place, :, place] = d
        return out

    def __array__(self, dtype=None, copy=None):
        a = self.dense(dtype)
        return a.copy() if copy and not a.flags.writeable else a     # (np.array(G): never the shared identity)

    # ndarray's other attributes and methods (reshape, sum, T, copy, astype...): the dense array's
    def __getattr__(self, name):
        if name.startswith("__") or name in DiagonalStack.__slots__:
            raise AttributeError(name)
        return getattr(self.dense(), name)

    def __getitem__(self, index):
        return self.dense()[index]

    def __iter__(self):
        return iter(self.dense())

    def __bool__(self):
        return bool(self.dense())

    def __float__(self):
        return float(self.dense())

    def __complex__(self):
        return complex(self.dense())

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__" and not kwargs:
            found = _structured(ufunc, inputs)
            if found is not None:
                return found
        inputs = [x.dense() if isinstance(x, DiagonalStack) else x for x in inputs]
        out = kwargs.get("out")
        if out is not None and any(isinstance(o, DiagonalStack) for o in out):
            del kwargs["out"]       # (immutable: the result is a new array, as `G += y` rebinds G)
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if func in _OF_SHAPE and len(args) == 1 and not kwargs:
            return _OF_SHAPE[func](self)
        if func is np.result_type:
            return np.result_type(*[a.dtype if isinstance(a, DiagonalStack) else a for a in args])
        if func is np.sum and len(args) == 1 and set(kwargs) <= {"axis", "keepdims"}:
            found = self._summed(kwargs.get("axis"), kwargs.get("keepdims", False))
            if found is not None:
                return found
        return func(*_dense_tree(args), **_dense_tree(kwargs))

    def _summed(self, axis, keepdims):
        """np.sum of the stack over exactly the diagonal's axes (unbroadcast
        to an example's scalar: each row holds one entry per example), or
        None for other axes: row k, example e, is the diagonal's entry k of
        e (the dense sum adds zeros to it: the same value)."""
        inner = tuple(range(1 + self.lead, self.ndim))
        if not inner or type(keepdims) is not bool:
            return None
        try:
            axes = tuple(sorted(a % self.ndim for a in (axis if isinstance(axis, tuple) else (axis,))))
        except TypeError:
            return None
        if axes != inner:
            return None
        d = self.diagonal
        lead_shape = d.shape[:self.lead]
        out = np.moveaxis(d.reshape(lead_shape + (self.shape[0],)), -1, 0).copy()
        return out.reshape(out.shape + (1,) * len(inner)) if keepdims else out


# NumPy functions of an array's shape alone (the batched helpers ask for the batch size)
_OF_SHAPE = {np.shape: lambda g: g.shape, np.ndim: lambda g: len(g.shape), np.size: lambda g: g.size}


#: identities of at most this many entries keep their dense array (512 kB of float64, as jacobians.SEEDS_KEPT)
IDENTITIES_KEPT = 1 << 16
_IDENTITIES = {}        # ((m,) + S, dtype) -> the read-only dense identity


def _dense_tree(value):
    """`value` (a tuple, list or dict of arguments) with every
    DiagonalStack in it replaced by its dense array."""
    if isinstance(value, DiagonalStack):
        return value.dense()
    if type(value) in (tuple, list):
        return type(value)(_dense_tree(v) for v in value)
    if type(value) is dict:
        return {k: _dense_tree(v) for k, v in value.items()}
    return value


def _finite(y, nonzero=False):
    """Is every entry of `y` finite (and nonzero, if asked)? (0 * inf and
    0 / 0 are NaN: there the dense stack's zeros are not zeros.)"""
    y = np.asarray(y)
    if y.dtype.kind not in "fc":
        return y.dtype.kind in "iub" and (not nonzero or bool(np.all(y != 0)))
    ok = bool(np.all(np.isfinite(y)))
    return ok and (not nonzero or bool(np.all(y != 0)))


def _within(y, shape):
    """Does the factor `y` broadcast within the diagonal's `shape` (so that
    it scales each row of the stack the same way)?"""
    ys = np.shape(y)
    if len(ys) > len(shape):
        return False
    try:
        return np.broadcast_shapes(ys, shape) == shape
    except ValueError:
        return False


def _structured(ufunc, inputs):
    """The result of ufunc(*inputs) as the structure gives it (a
    DiagonalStack, or a dense array built without the m^2 zeros), or None
    when the ufunc or its operands do not keep it."""
    if len(inputs) == 1:
        (g,) = inputs
        if ufunc is np.negative or ufunc is np.positive or ufunc is np.conjugate:
            return g._same(ufunc(g.diagonal))
        return None
    if len(inputs) != 2:
        return None
    a, b = inputs
    sa, sb = isinstance(a, DiagonalStack), isinstance(b, DiagonalStack)
    if sa and sb:
        if a.shape == b.shape and a.lead == b.lead and ufunc in (np.add, np.subtract, np.multiply):
            return a._same(ufunc(a.diagonal, b.diagonal))
        return None
    g, y = (a, b) if sa else (b, a)
    if type(y) is not np.ndarray and not isinstance(y, _FACTORS):
        return None
    d = g.diagonal
    if ufunc is np.multiply or ufunc is np.divide and sa:
        if _within(y, d.shape) and _finite(y, nonzero=ufunc is np.divide):
            return g._same(ufunc(d, y) if sa else ufunc(y, d))
        return None
    if (ufunc is np.add or ufunc is np.subtract) and type(y) is np.ndarray and y.shape == g.shape:
        dtype = np.result_type(y.dtype, d.dtype)
        if dtype.kind not in "fc":
            return None
        out = np.array(y, dtype=dtype, order="C") if ufunc is np.add or not sa \
            else np.negative(y, dtype=dtype, order="C")
        rows, entries = g._rows(out)        # (a view: `out` is new and C-contiguous)
        place = np.arange(g.shape[0])
        if ufunc is np.subtract and not sa:
            rows[place, :, place] -= entries
        else:
            rows[place, :, place] += entries
        return out
    if ufunc is np.matmul and sa and d.ndim == g.lead + 1 and type(y) is np.ndarray and y.ndim == 2 \
            and y.shape[0] == d.shape[-1] and _finite(y):
        # row k of the product, in example e: d[e, k] * y[k, :]
        return np.moveaxis(d, -1, 0)[..., None] * y.reshape((y.shape[0],) + (1,) * g.lead + (y.shape[1],))
    return None
