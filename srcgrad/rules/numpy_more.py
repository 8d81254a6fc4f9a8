"""Adjoint and tangent rules for NumPy functions beyond the core families
(see numpy_adjoints.py and numpy_tangents.py for the notation): constructors
with a differentiated value (full, full_like, linspace), np.copy, the
builtin sorted, order statistics (ptp, median, quantile, percentile and
their nan- variants), nanprod, nanvar, nanstd, block, insert, row_stack, and
tangent rules for the joining functions (vstack, hstack, dstack,
column_stack, append), whose transposed VJP did not handle an array passed
where they take a sequence. Linear algebra (eig, eigvals, lstsq, qr) is in
numpy_linalg_more.py, the FFT in numpy_fft.py; run-time helpers in
helpers_more.py.

Section banners name the family each rule is listed under in
docs/supported.md (catalog.py reads them).
"""
import builtins

import numpy as np

from .containers import seq_cotangent
from .helpers import max_chooser, unbroadcast, unreduce
from .helpers_linalg import promoted_concatenate_adjoint
from .helpers_math import cast_like, prod_others
from .helpers_more import (block_adjoint, block_on_tensors, block_tangent,
                           insert_adjoint, insert_tangent, linspace_adjoint, linspace_tangent,
                           median_adjoint, nan_mask, nan_to_one, nanstd_adjoint, nanvar_adjoint,
                           percentile_adjoint, ptp_adjoint, quantile_adjoint, sorted_adjoint)
from .numpy_tangents import broadcast_like
from .registry import register_adjoint, register_tape_form
from .tangents import register_linear, register_tangent

# ---------------------------------------------------------- shape and indexing


@register_adjoint(np.full)
def full(z, shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    """z = fill_value broadcast to `shape`: d fill_value is the cotangent
    summed back to fill_value's shape (the shape is not differentiated)."""
    d[fill_value] = unbroadcast(d[z], fill_value)


@register_adjoint(np.full_like)
def full_like(z, a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """z = fill_value broadcast to a's shape (a's values are not read): d
    fill_value is the cotangent summed back to fill_value's shape."""
    d[fill_value] = unbroadcast(d[z], fill_value)


@register_adjoint(np.linspace)
def linspace(z, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """z_i = (1 - t_i) start + t_i stop, t_i = i / (num - 1) (i / num without
    the endpoint), along `axis`: d start = sum_i (1 - t_i) g_i,
    d stop = sum_i t_i g_i. retstep=True is refused."""
    d[start] = linspace_adjoint(d[z], start, stop, num, endpoint, retstep, axis, False)
    d[stop] = linspace_adjoint(d[z], start, stop, num, endpoint, retstep, axis, True)


@register_adjoint(np.copy)
def copy_(z, a, order="K", subok=False):
    """A copy: the cotangent passes through."""
    d[a] = d[z]


@register_adjoint(builtins.sorted)
def sorted_(z, iterable, key=None, reverse=False):
    """The builtin sorted (a list of arrays or numbers, or the rows of an
    array) is a permutation: each element gets the cotangent of the place
    it was sorted to (Python's sort is stable, and is redone with the same
    key to find the permutation)."""
    d[iterable] = sorted_adjoint(d[z][:], iterable, key, reverse)


@register_adjoint(np.block)
def block(z, arrays):
    """np.block assembles nested lists of arrays: each leaf's cotangent is
    d[z] read where its elements went (nested-list structure kept)."""
    d[arrays] = block_adjoint(d[z], arrays)


@register_tangent(np.block)
def block_tangent_(z, arrays):
    """np.block is linear: the block of the leaves' tangents (zeros for
    leaves without one)."""
    t[z] = block_tangent(t[arrays], arrays)


register_linear(block_tangent)
register_tape_form(np.block, block_on_tensors)


@register_adjoint(np.insert)
def insert(z, arr, obj, values, axis=None):
    """arr's elements are moved and values' copied (broadcast) into the
    output: each gets the cotangents of the positions it went to."""
    d[arr] = insert_adjoint(d[z], arr, obj, values, axis, True)
    d[values] = insert_adjoint(d[z], arr, obj, values, axis, False)


@register_tangent(np.insert)
def insert_tangent_(z, arr, obj, values, axis=None):
    """np.insert is linear in arr and values jointly."""
    t[z] = insert_tangent(t[arr], t[values], arr, obj, values, axis)


register_linear(insert_tangent, (0, 1))


if hasattr(np, "row_stack"):      # deprecated in NumPy 2.0, a function of its own
    @register_adjoint(np.row_stack)
    def row_stack(z, tup, *, dtype=None, casting="same_kind"):
        """np.vstack (concatenate along axis 0 of the operands made at least
        2-d): pieces reshaped back."""
        d[tup] = seq_cotangent(promoted_concatenate_adjoint(d[z], tup, "2d", 0), tup)

# ----------------------------------------------------------------- reductions


@register_adjoint(np.ptp)
def ptp(y, a, axis=None, out=None, keepdims=False):
    """ptp = max - min: the cotangent goes to the maximal entries and,
    negated, to the minimal ones (ties split evenly)."""
    d[a] = ptp_adjoint(d[y], a, axis, keepdims)


@register_adjoint(np.median)
def median(y, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The middle entry (odd count) or the mean of the two middle ones gets
    the cotangent (np.quantile(a, 0.5)'s rule)."""
    d[a] = median_adjoint(d[y], a, axis, False)


@register_adjoint(np.nanmedian)
def nanmedian(y, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """As median over the non-NaN entries; NaN entries get 0."""
    d[a] = median_adjoint(d[y], a, axis, True)


@register_adjoint(np.quantile)
def quantile(y, a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    """method='linear': y = (1 - f) x_(lo) + f x_(hi) at the virtual index
    (n - 1) q of the sorted entries (Hyndman & Fan's type 7): d a goes to
    the two order statistics, d q = g (n - 1) (x_(hi) - x_(lo)). Other
    methods and weights are refused."""
    d[a] = quantile_adjoint(d[y], a, q, axis, False, False, method, weights)
    d[q] = quantile_adjoint(d[y], a, q, axis, False, True, method, weights)


@register_adjoint(np.nanquantile)
def nanquantile(y, a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    """As quantile over the non-NaN entries of each slice; NaN entries get 0."""
    d[a] = quantile_adjoint(d[y], a, q, axis, True, False, method, weights)
    d[q] = quantile_adjoint(d[y], a, q, axis, True, True, method, weights)


@register_adjoint(np.percentile)
def percentile(y, a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    """np.quantile(a, q / 100)'s rule (d q divided by 100)."""
    d[a] = percentile_adjoint(d[y], a, q, axis, False, False, method, weights)
    d[q] = percentile_adjoint(d[y], a, q, axis, False, True, method, weights)


@register_adjoint(np.nanpercentile)
def nanpercentile(y, a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    """np.nanquantile(a, q / 100)'s rule (d q divided by 100)."""
    d[a] = percentile_adjoint(d[y], a, q, axis, True, False, method, weights)
    d[q] = percentile_adjoint(d[y], a, q, axis, True, True, method, weights)


@register_adjoint(np.nanprod)
def nanprod(y, a, axis=None, dtype=None, out=None, keepdims=False, initial=None):
    """prod with NaN read as 1: d a_i = the product of the other non-NaN
    entries (prod's zero-safe rule), 0 at NaNs."""
    d[a] = (unreduce(d[y], a, axis, keepdims) * prod_others(nan_to_one(a), axis, initial)
            * nan_mask(a))


@register_adjoint(np.nanvar)
def nanvar(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, mean=None,
           correction=None):
    """var over the n non-NaN entries: d a = 2 (a - m) / (n - ddof) there, 0 at
    NaNs (real input)."""
    d[a] = nanvar_adjoint(d[y], a, axis, keepdims, ddof, correction)


@register_adjoint(np.nanstd)
def nanstd(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, mean=None,
           correction=None):
    """std over the n non-NaN entries: d a = (a - m) / ((n - ddof) std) there,
    0 at NaNs (real input)."""
    d[a] = nanstd_adjoint(d[y], y, a, axis, keepdims, ddof, correction)


# ------------------------------------------------------------ tangent rules
# (the adjoint rules of vstack, hstack, dstack, column_stack and append are
# in numpy_shapes.py)


@register_tangent(np.full)
def full_tangent(z, shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    t[z] = broadcast_like(t[fill_value], z)


@register_tangent(np.full_like)
def full_like_tangent(z, a, fill_value, dtype=None, order="K", subok=True, shape=None, *,
                      device=None):
    t[z] = broadcast_like(t[fill_value], z)


@register_tangent(np.linspace)
def linspace_tangent_(z, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
                      device=None):
    """linspace is linear in (start, stop)."""
    t[z] = linspace_tangent(t[start], t[stop], num, endpoint, retstep, axis)


register_linear(linspace_tangent, (0, 1))


@register_tangent(np.copy)
def copy_tangent(z, a, order="K", subok=False):
    t[z] = t[a]


@register_tangent(np.vstack)
def vstack_tangent(z, tup, *, dtype=None, casting="same_kind"):
    """Joining is linear: the tangents joined the same way (a list, or an
    array whose rows are the operands), in z's dtype (a constant operand's
    zero tangent is float64)."""
    t[z] = cast_like(np.vstack(t[tup]), z)


@register_tangent(np.hstack)
def hstack_tangent(z, tup, *, dtype=None, casting="same_kind"):
    t[z] = cast_like(np.hstack(t[tup]), z)


@register_tangent(np.dstack)
def dstack_tangent(z, tup):
    t[z] = cast_like(np.dstack(t[tup]), z)


@register_tangent(np.column_stack)
def column_stack_tangent(z, tup):
    t[z] = cast_like(np.column_stack(t[tup]), z)


@register_tangent(np.append)
def append_tangent(z, arr, values, axis=None):
    """np.append is concatenate, jointly linear in (arr, values)."""
    t[z] = cast_like(np.append(t[arr], t[values], axis=axis), z)


if hasattr(np, "row_stack"):
    register_tangent(np.row_stack)(vstack_tangent)

for _f in (np.vstack, np.hstack, np.dstack, np.column_stack):
    register_linear(_f)
register_linear(np.append, (0, 1))
register_linear(cast_like)


@register_tangent(np.ptp)
def ptp_tangent(y, a, axis=None, out=None, keepdims=False):
    """The mean tangent over the maximal entries minus that over the minimal
    ones (ties split evenly, as the adjoint)."""
    t[y] = (np.sum(t[a] * max_chooser(a, np.max(a, axis=axis, keepdims=True), axis, True),
                   axis=axis, keepdims=keepdims)
            - np.sum(t[a] * max_chooser(a, np.min(a, axis=axis, keepdims=True), axis, True),
                     axis=axis, keepdims=keepdims))
