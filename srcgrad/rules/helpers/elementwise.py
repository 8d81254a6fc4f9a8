"""Run-time helpers of the elementwise rules (rules/numpy/elementwise.py,
piecewise.py): the masks of the piecewise-linear functions (ties of
maximum/minimum split evenly, autograd's convention; np.clip's bounds
included, as TF's clip_by_value), the exponent's term of the power's
tangent, and the modified Bessel function I1 (np.i0's derivative; a
primitive with its own rule).
"""
import operator
import sys

import numpy as np

from ...runtime import nondiff_helper, primitive


@nondiff_helper
def sign(x):
    return np.sign(x)


@nondiff_helper
def balanced_eq(x, z, y):
    """1 where x alone attains z = maximum(x, y), 1/2 where x == y, else 0
    (autograd's convention for maximum/minimum ties)."""
    x = np.asarray(x)
    dtype = np.result_type(x, np.float32) if np.issubdtype(x.dtype, np.inexact) else np.float64
    eq = np.astype(x == z, dtype)
    return eq / (1 + np.astype(x == y, dtype))


def _clip_masks(a, a_min, a_max, min, max):
    """(inside, below, above) for np.clip(a, lo, hi) = minimum(maximum(a, lo), hi):
    `above` where the upper bound is the result, `below` where the lower
    bound is, `inside` where `a` passes through (bounds included, as TF's
    clip_by_value gradient). The bounds come positionally or by keyword."""
    lo = a_min if a_min is not None else min
    hi = a_max if a_max is not None else max
    a = np.asarray(a)
    above = np.zeros(np.shape(a), dtype=bool) if hi is None else (
        (a if lo is None else np.maximum(a, lo)) > hi)
    below = np.zeros(np.shape(a), dtype=bool) if lo is None else (a < lo) & ~above
    return ~(above | below), below, above


@nondiff_helper
def clip_inside(a, a_min=None, a_max=None, min=None, max=None):
    """1 where `a` passes through np.clip unchanged, else 0."""
    return _clip_masks(a, a_min, a_max, min, max)[0]


@nondiff_helper
def clip_below(a, a_min=None, a_max=None, min=None, max=None):
    """1 where np.clip's result is the lower bound, else 0."""
    return _clip_masks(a, a_min, a_max, min, max)[1]


@nondiff_helper
def clip_above(a, a_min=None, a_max=None, min=None, max=None):
    """1 where np.clip's result is the upper bound, else 0."""
    return _clip_masks(a, a_min, a_max, min, max)[2]


@nondiff_helper
def sign_product(x, y):
    """d copysign(x, y) / dx = sign(x) sign(y), with the sign bit (so +-0
    count as +-1)."""
    return np.copysign(1.0, x) * np.copysign(1.0, y)


@nondiff_helper
def is_finite(x):
    return np.isfinite(x)


def power_exponent_tangent(ty, z, x):
    """The exponent's term of d(x ** y): dy x**y log(x), zero where dy is
    zero. A direction that keeps y fixed needs no y-derivative, which x ** y
    lacks for a base x <= 0 (log(x) is nan or -inf there); an integer
    exponent computed in a loop (`x[i] ** (i + 1)`) may carry a zero tangent
    in generated code. The base is replaced by 1 where dy is zero (the
    double-where trick), so that derivatives of this term are finite too;
    and where x is 0 (z = 0 ** y is 0 for y > 0: the term's limit is 0, as
    autograd's replace_zero). Linear in `ty`."""
    safe = np.where((ty == 0) | (x == 0), 1.0, x)
    return ty * z * np.log(safe)



# ------------------------------------------------------------ Bessel I0, I1

_I1_SERIES_TERMS = 64           # enough for |x| <= 20 (the terms then fall below 1e-40 of the sum)
_I1_ASYMPTOTIC_TERMS = 30       # for |x| > 20 the smallest term is about e^(-2|x|) < 1e-17
_I1_SWITCH = 20.0


def _i1_series(x):
    """I1(x) = sum_k (x/2)^(2k+1) / (k! (k+1)!) (DLMF 10.25.2 with nu = 1):
    positive terms, summed from the first (no cancellation)."""
    half = x / 2.0
    q = half * half
    term = half
    total = term
    for k in range(1, _I1_SERIES_TERMS):
        term = term * q / (k * (k + 1.0))
        total = total + term
    return total


def _i1_asymptotic(x):
    """I1(x) ~ e^x / sqrt(2 pi x) sum_k (-1)^k a_k / x^k for large x > 0,
    a_k = prod_{j=1..k} (4 - (2j - 1)^2) / (k! 8^k) (the Hankel expansion,
    DLMF 10.40.1 with nu = 1); the exponential is split, exp(x / 2)^2, so
    that I1 overflows where NumPy's i0 does, not before."""
    term = np.ones_like(x)
    total = term
    for k in range(1, _I1_ASYMPTOTIC_TERMS):
        term = -term * (4.0 - (2.0 * k - 1.0) ** 2) / (8.0 * k * x)
        total = total + term
    half = np.exp(x / 2.0)
    return half * (half / np.sqrt(2.0 * np.pi * x)) * total


@primitive
def bessel_i1(x):
    """The modified Bessel function of the first kind of order 1, I1(x) =
    I0'(x) (DLMF 10.29.3), which NumPy lacks (np.i0's derivative): the power
    series for |x| <= 20, the Hankel asymptotic expansion beyond, to about
    1e-15 relative (checked against scipy.special.i1 in the tests); odd in
    x. Real x; float32 stays float32. Its rule is in rules/numpy/
    elementwise.py."""
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    x = x.astype(np.float64)
    ax = np.abs(x)
    small = ax <= _I1_SWITCH
    out = np.where(small, _i1_series(np.where(small, x, 0.0)), 0.0)
    with np.errstate(over="ignore"):
        large = np.sign(x) * _i1_asymptotic(np.where(small, 2.0 * _I1_SWITCH, ax))
    out = np.where(small, out, large)
    return out.astype(dtype)


def bessel_i1_derivative(x):
    """I1'(x) = I0(x) - I1(x) / x (DLMF 10.29.2 with nu = 1), 1/2 at x = 0
    (I1(x) / x -> 1/2). Written with np.i0 and bessel_i1, which have rules:
    differentiated again."""
    zero = np.equal(x, 0.0)
    safe = np.where(zero, 1.0, x)
    return np.where(zero, 0.5, np.i0(x) - bessel_i1(safe) / safe)


# ---------------------------------------------------------------------- unwrap

@nondiff_helper
def unwrap_periods(p, z, period):
    """k with np.unwrap(p) = p + k period: the whole number of periods NumPy
    added to each entry (a cumulative sum of corrections that are
    multiples of the period, numpy/lib/_function_base_impl.py), read back
    from the output, in the output's dtype."""
    z = np.asarray(z)
    k = np.round((z - np.asarray(p)) / np.asarray(period))
    return k.astype(z.dtype if z.dtype.kind == "f" else np.float64)


# NumPy's own threshold for eliding a temporary (NPY_MIN_ELIDE_BYTES, numpy/_core/src/multiarray/temp_elide.c):
# below it a new array costs less than the checks
ELIDE_BYTES = 1 << 18
_BINOPS = {"+": (operator.add, np.add), "-": (operator.sub, np.subtract), "*": (operator.mul, np.multiply),
           "/": (operator.truediv, np.true_divide)}
_OPERATORS = {symbol: pair[0] for symbol, pair in _BINOPS.items()}


def _references_of_a_temporary(op, a, b, k):
    t = b if k else a
    return sys.getrefcount(t)


def _count_temporary_references():
    """The reference count binop_into sees for an array only a local name of
    its caller holds (measured, not assumed: it depends on the
    interpreter's calling convention)."""
    temporary = np.empty(1)
    return _references_of_a_temporary("+", temporary, 1.0, 0)


# (at most CPython 3.11's 4: a count taken under a tracer that holds the frame's locals would be higher,
# and would let an array held once more elsewhere pass; a lower count only writes in place less often)
_TEMPORARY_REFS = min(_count_temporary_references(), 4)
_PLAIN_SCALARS = frozenset({float, int, np.float64, np.float32, np.int64})


def binop_into(op, a, b, k):
    """`a op b` (op one of "+", "-", "*", "/": a string literal of the
    generated code), written into the array `(a, b)[k]` where the
    compiler proved that nothing reads that operand again and that it is
    a new array of the generated code's own (a matrix product's result:
    transforms/inplace.py `elide_temporaries`). This is NumPy's temporary
    elision (numpy/_core/src/multiarray/temp_elide.c), which applies to
    `x @ W + b` written as one expression but not to the generated code's
    `t = x @ W; y = t + b`: a new array of a product's size costs its
    allocation and a pass over memory that is no longer in cache (0.3 ms
    of the 784-256-10 MLP's 5 ms gradient).

    Written in place only where the result is the same as `a op b`'s: the
    operand is a writeable float or complex ndarray owning its memory of at
    least NumPy's elision size (256 KiB) that nothing but the caller's
    name refers to (its reference count, NumPy's own test: a `__matmul__`
    of the user's returning an array it keeps is left alone), the other
    operand a plain ndarray or number broadcasting to its shape, and the
    result dtype its dtype. Otherwise (other types, smaller arrays, another shape or dtype)
    the plain operator, with its dispatch. Returns the result; raises what
    `a op b` raises."""
    t = b if k else a
    if type(t) is not np.ndarray or t.nbytes < ELIDE_BYTES:
        return _OPERATORS[op](a, b)         # (small arrays first: the check costs more than they save)
    plain, ufunc = _BINOPS[op]
    if t.base is None and t.flags.writeable and t.dtype.kind in "fc" and sys.getrefcount(t) <= _TEMPORARY_REFS:
        o = a if k else b
        to = type(o)
        if to in _PLAIN_SCALARS:
            same = np.result_type(t.dtype, o) == t.dtype
        elif to is np.ndarray:
            same = (o.shape == t.shape or np.broadcast_shapes(o.shape, t.shape) == t.shape) \
                and np.result_type(t.dtype, o.dtype) == t.dtype
        else:
            same = False
        if same:
            return ufunc(a, b, out=t)
    return plain(a, b)


# ufuncs of one operand whose result has a float or complex operand's dtype (np.abs does not: a complex
# operand gives floats), and which compute each entry from that entry alone
UNARY_INTO = frozenset({np.tanh, np.exp, np.expm1, np.log, np.log1p, np.log2, np.log10, np.sqrt, np.cbrt,
                        np.sin, np.cos, np.tan, np.sinh, np.cosh, np.arctan, np.arcsinh, np.square,
                        np.reciprocal, np.negative, np.positive})


def _references_of_a_unary_temporary(f, a):
    return sys.getrefcount(a)


def _count_unary_temporary_references():
    """The reference count ufunc_into sees for an array only a local name
    of its caller holds (as _count_temporary_references)."""
    temporary = np.empty(1)
    return _references_of_a_unary_temporary(np.tanh, temporary)


_UNARY_TEMPORARY_REFS = min(_count_unary_temporary_references(), 4)


def ufunc_into(f, a):
    """`f(a)` for a ufunc `f` of UNARY_INTO, written into `a`'s buffer
    where the compiler proved that nothing reads `a` again and that it is
    a new array of the generated code's own (a matrix product's result, or
    binop_into's: transforms/inplace.py `elide_temporaries`), as
    binop_into does for an operator: `h = np.tanh(x @ W + b)` then makes
    no array beside the product's. NumPy elides no temporary for a
    function call; this beats a hand-written `np.tanh(x @ W + b)` by an
    allocation of the layer's size (and its page faults).

    Written in place only where the result is the same as `f(a)`'s: `a` a
    writeable float or complex ndarray owning its memory, of at least
    NumPy's elision size (256 KiB), that nothing but the caller's name
    refers to (its reference count, as binop_into), and `f` one of
    UNARY_INTO (the result's dtype is the operand's). Otherwise `f(a)`.
    Returns the result; raises (and warns) what `f(a)` does."""
    if type(a) is not np.ndarray or a.nbytes < ELIDE_BYTES or f not in UNARY_INTO:
        return f(a)
    if a.base is None and a.flags.writeable and a.dtype.kind in "fc" \
            and sys.getrefcount(a) <= _UNARY_TEMPORARY_REFS:
        return f(a, out=a)
    return f(a)
