"""Rows for tests/test_forward.py's tangent table (its format: name, case
function, input specs (shape, domain), primitives covered) for the tangent
rules added in issue 11 and audit 11: the constructors (full, full_like,
linspace, copy), the joining functions (vstack, hstack, dstack,
column_stack, append, row_stack, block), np.insert, np.ptp and
np.linalg.eigvals; np.choose, np.interp, np.convolve, np.correlate,
np.nancumsum, np.trapezoid, np.cov, np.corrcoef (cast back to the input's
dtype: np.cov computes in float64), np.polyval, np.vander (float64 for float32 x in NumPy: cast back), np.unwrap,
np.ediff1d, sliding_window_view, np.i0 and its derivative bessel_i1, and scipy.special's softmax and
log_softmax (compiled only: a ForwardAccumulator does not replace SciPy's
functions by recording wrappers, as a recording tape does); sequence_as_array
and np.array, asarray, asanyarray, ascontiguousarray, asfortranarray (compiled
only: a ForwardAccumulator records no conversion of a Tensor, as a
recording tape does). (np.fft's rows
are in cases_fft.py.) np.interp computes in float64 whatever its inputs:
its rows cast back to x's dtype (the float32 test keeps float32).
"""
import numpy as np
import scipy.special

from numpy.lib.stride_tricks import sliding_window_view
from srcgrad.rules.helpers.elementwise import bessel_i1
from srcgrad.rules.python.containers import sequence_as_array

def c_full(v): return np.full((2, 3), v) * 2.0                            # noqa: E704
def c_full_like(x, v): return np.full_like(x, v) * x                      # noqa: E704
def c_linspace(a, b): return np.linspace(a, b, 4, axis=-1)                # noqa: E704
def c_copy(x): return np.copy(x) * x                                      # noqa: E704
# (NumPy's arange and bincount give float64 for float32 values: cast back, for the float32 rows)
def c_arange(a, s): return np.arange(a, a + 2.05, 0.3 + 0.1 * np.tanh(s)).astype(a.dtype)  # noqa: E704
def c_bincount(w): return np.bincount(np.array([0, 2, 0, 3, 2]), weights=w, minlength=5).astype(w.dtype)  # noqa: E704,E501
def c_vstack(x, y): return np.vstack([x, y])                              # noqa: E704
def c_vstack_array(x): return np.vstack(x * 2.0)                          # noqa: E704
def c_hstack(x, y): return np.hstack((x, y, np.ones(1, x.dtype)))        # noqa: E704
def c_dstack(x, y): return np.dstack([x, y])                              # noqa: E704
def c_column_stack(x, y): return np.column_stack([x, y])                  # noqa: E704
def c_column_stack_array(x): return np.column_stack(x)                    # noqa: E704
def c_append(x, y): return np.append(x, y, axis=0)                        # noqa: E704
def c_append_flat(x, y): return np.append(x, y)                           # noqa: E704
def c_ptp(x): return np.ptp(x, axis=1)                                    # noqa: E704
def c_row_stack(x, y): return np.row_stack((x, y))                         # noqa: E704
def c_eigvals(a): return np.imag(np.linalg.eigvals(a)) + np.real(np.linalg.eigvals(a))  # noqa: E704
def c_block(x, y): return np.block([[x, 2.0 * x], [y, np.ones((1, 3), x.dtype)]])  # noqa: E704
def c_insert(x, y): return np.insert(x, [1, 3], [y[0], 2.0])                 # noqa: E704
def c_insert_axis(x, y): return np.insert(x, 1, y, axis=0)                 # noqa: E704


_CHOOSE_A = np.array([[0, 2, 1], [1, 0, 2]])
_CHOOSE_WRAP = np.array([[3, -1, 1], [5, 0, -2]])
_XP = np.array([-1.0, -0.2, 0.4, 1.1])


def c_choose(x, y): return np.choose(_CHOOSE_A, [x, y, 2.0 * x])            # noqa: E704
def c_choose_array(c): return np.choose(_CHOOSE_WRAP, c, mode="wrap") * 2.0  # noqa: E704
def c_interp(x, fp, left): return np.interp(2.0 * x, _XP, fp, left=left, right=1.5).astype(x.dtype)  # noqa: E704
def c_interp_xp(x, steps, fp): return np.interp(2.0 * x, np.cumsum(steps) - 2.5, fp).astype(x.dtype)  # noqa: E704
def c_interp_period(x, fp): return np.interp(3.0 * x, _XP, fp, period=2.5).astype(x.dtype)  # noqa: E704
def c_convolve(a, v): return np.convolve(a, v, "same") * 2.0               # noqa: E704
def c_convolve_full(a, v): return np.convolve(a, v)                        # noqa: E704
def c_correlate(a, v): return np.correlate(a, v, "same")                   # noqa: E704
def c_correlate_valid(a, v): return np.correlate(a, v * v)                 # noqa: E704
_NANS = np.array([[False, True, False, False], [True, False, False, True], [False, False, True, False]])
_FW = np.array([2, 1, 1, 3, 1])


def c_nancumsum(x): return np.nancumsum(np.where(_NANS, np.nan, x), axis=1)  # noqa: E704
def c_nancumsum_flat(x): return np.nancumsum(np.where(_NANS, np.nan, x * x))  # noqa: E704
def c_trapezoid(y): return np.trapezoid(y, axis=0)                          # noqa: E704
def c_trapezoid_x(y, x): return np.trapezoid(y, x)                          # noqa: E704
def c_trapezoid_xnd(y, x): return np.trapezoid(y, x=x, axis=0)              # noqa: E704
def c_trapezoid_dx(y, dx): return np.trapezoid(y, dx=dx)                    # noqa: E704
def c_cov(m): return np.cov(m).astype(m.dtype)                             # noqa: E704
def c_cov_y(m, y): return np.cov(m, y, rowvar=False, bias=True).astype(m.dtype)  # noqa: E704
def c_cov_fweights(m): return np.cov(m, fweights=_FW, ddof=0).astype(m.dtype)  # noqa: E704
def c_corrcoef(x): return np.corrcoef(x).astype(x.dtype)                   # noqa: E704
def c_corrcoef_y(x, y): return np.corrcoef(x, y).astype(x.dtype)           # noqa: E704
def c_polyval(p, x): return np.polyval(p, x)                               # noqa: E704
def c_polyval_list(a, x): return np.polyval([a, 1.5, a * a], x).astype(x.dtype)  # noqa: E704
def c_polyval_x(x): return np.polyval(np.array([0.5, -1.0, 2.0], x.dtype), x)  # noqa: E704
def c_vander(x): return np.vander(x).astype(x.dtype)                       # noqa: E704
def c_vander_increasing(x): return np.vander(x * x, 5, increasing=True).astype(x.dtype)  # noqa: E704
def c_unwrap(x): return np.unwrap(3.0 * x, axis=0)                         # noqa: E704
def c_unwrap_period(x, per): return np.unwrap(2.0 * x, period=3.0 + per)   # noqa: E704
def c_ediff1d(x): return np.ediff1d(x * x)                                   # noqa: E704
def c_ediff1d_ends(x, e, b): return np.ediff1d(x, to_end=e, to_begin=b)      # noqa: E704
def c_ediff1d_const_end(x): return np.ediff1d(x, np.array([1.0, 2.0], x.dtype))  # noqa: E704
def c_swv(x): return sliding_window_view(x, (2, 3)) * 2.0                    # noqa: E704
def c_swv_axis(x): return sliding_window_view(x, 3, axis=0)                  # noqa: E704
def c_i0(x): return np.i0(x) * x                                           # noqa: E704
def c_bessel_i1(x): return bessel_i1(2.0 * x)                              # noqa: E704
def c_softmax(x): return scipy.special.softmax(x, axis=1) * x              # noqa: E704
def c_softmax_all(x): return scipy.special.softmax(x)                      # noqa: E704
def c_log_softmax(x): return scipy.special.log_softmax(x, axis=(0, 2))     # noqa: E704
def c_seq_as_array(x, y): return sequence_as_array([x, 2.0 * y, x * y]) * x  # noqa: E704
def c_seq_as_array_nested(x, y): return sequence_as_array(((x, y), [y, x]))  # noqa: E704
def c_asarray(x): return np.asarray(x) * x                                # noqa: E704
def c_asarray_list(x, y): return np.asarray([x, y, 1.5], x.dtype) * y      # noqa: E704
def c_asarray_nested(x, y): return np.asarray([[x, y], (2.0, x * y)], x.dtype)  # noqa: E704
def c_asarray_dtype(x): return np.asarray(x, dtype=x.dtype) * 2.0           # noqa: E704
def c_asanyarray(x, y): return np.asanyarray((x, y)) * x                   # noqa: E704
def c_ascontiguousarray(x): return np.ascontiguousarray(x.T) * 2.0          # noqa: E704
def c_asfortranarray(x, y): return np.asfortranarray([y, x]) * x           # noqa: E704
def c_array_copy(x): return np.array(x) * x                                 # noqa: E704
def c_array_nested(x, y): return np.array([[x, 1.0], (2.0 * y, x * y)], x.dtype)  # noqa: E704
def c_array_ndmin(x): return np.array(x * x, ndmin=3)                       # noqa: E704


TANGENT_CASES = [
    ("full_like", c_full_like, (((2, 3), "real"), ((3,), "real")), np.full_like),
    ("linspace", c_linspace, (((2,), "real"), ((), "real")), np.linspace),
    ("copy", c_copy, (((3, 2), "real"),), (np.copy, np.multiply)),
    ("arange", c_arange, (((), "real"), ((), "real")), np.arange),
    ("bincount", c_bincount, (((5,), "real"),), np.bincount),
    ("vstack", c_vstack, (((3,), "real"), ((2, 3), "real")), np.vstack),
    ("vstack_array", c_vstack_array, (((2, 3), "real"),), np.vstack),
    ("hstack", c_hstack, (((2,), "real"), ((3,), "real")), np.hstack),
    ("dstack", c_dstack, (((2, 3), "real"), ((2, 3), "real")), np.dstack),
    ("column_stack", c_column_stack, (((3,), "real"), ((3, 2), "real")), np.column_stack),
    ("column_stack_array", c_column_stack_array, (((2, 4), "real"),), np.column_stack),
    ("append", c_append, (((2, 3), "real"), ((1, 3), "real")), np.append),
    ("append_flat", c_append_flat, (((2, 2), "real"), ((3,), "real")), np.append),
    ("ptp", c_ptp, (((3, 4), "real"),), np.ptp),
    ("eigvals", c_eigvals, (((3, 3), "real"),), np.linalg.eigvals),
    ("block", c_block, (((2, 3), "real"), ((1, 3), "real")), (np.block, np.multiply)),
    ("insert", c_insert, (((5,), "real"), ((2,), "real")), np.insert),
    ("insert_axis", c_insert_axis, (((2, 3), "real"), ((3,), "real")), np.insert),
    ("choose", c_choose, (((2, 3), "real"), ((3,), "real")), (np.choose, np.multiply)),
    ("choose_array", c_choose_array, (((3, 1, 3), "real"),), (np.choose, np.multiply)),
    ("interp", c_interp, (((3, 4), "real"), ((4,), "real"), ((), "real")), np.interp),
    ("interp_xp", c_interp_xp, (((7,), "real"), ((4,), "pos"), ((4,), "real")), (np.interp, np.cumsum)),
    ("interp_period", c_interp_period, (((7,), "real"), ((4,), "real")), np.interp),
    ("convolve", c_convolve, (((3,), "real"), ((5,), "real")), (np.convolve, np.multiply)),
    ("convolve_full", c_convolve_full, (((4,), "real"), ((2,), "real")), np.convolve),
    ("correlate", c_correlate, (((4,), "real"), ((6,), "real")), np.correlate),
    ("correlate_valid", c_correlate_valid, (((6,), "real"), ((3,), "real")), (np.correlate, np.multiply)),
    ("nancumsum", c_nancumsum, (((3, 4), "real"),), np.nancumsum),
    ("nancumsum_flat", c_nancumsum_flat, (((3, 4), "real"),), (np.nancumsum, np.multiply)),
    ("trapezoid", c_trapezoid, (((4, 3), "real"),), np.trapezoid),
    ("trapezoid_x", c_trapezoid_x, (((2, 5), "real"), ((5,), "real")), np.trapezoid),
    ("trapezoid_xnd", c_trapezoid_xnd, (((4, 3), "real"), ((4, 1), "real")), np.trapezoid),
    ("trapezoid_dx", c_trapezoid_dx, (((2, 5), "real"), ((), "pos")), np.trapezoid),
    ("cov", c_cov, (((3, 5), "real"),), np.cov),
    ("cov_y", c_cov_y, (((5, 2), "real"), ((5,), "real")), np.cov),
    ("cov_fweights", c_cov_fweights, (((2, 5), "real"),), np.cov),
    ("corrcoef", c_corrcoef, (((3, 6), "real"),), np.corrcoef),
    ("corrcoef_y", c_corrcoef_y, (((6,), "real"), ((6,), "real")), np.corrcoef),
    ("polyval", c_polyval, (((4,), "real"), ((2, 3), "real")), np.polyval),
    ("polyval_list", c_polyval_list, (((), "real"), ((5,), "real")), (np.polyval, np.multiply)),
    ("polyval_x", c_polyval_x, (((3, 2), "real"),), np.polyval),
    ("vander", c_vander, (((4,), "real"),), np.vander),
    ("vander_increasing", c_vander_increasing, (((3,), "real"),), (np.vander, np.multiply)),
    ("unwrap", c_unwrap, (((6, 2), "real"),), np.unwrap),
    ("unwrap_period", c_unwrap_period, (((8,), "real"), ((), "pos")), np.unwrap),
    ("ediff1d", c_ediff1d, (((2, 3), "real"),), (np.ediff1d, np.multiply)),
    ("ediff1d_ends", c_ediff1d_ends, (((4,), "real"), ((2,), "real"), ((), "real")), np.ediff1d),
    ("ediff1d_const_end", c_ediff1d_const_end, (((5,), "real"),), np.ediff1d),
    ("sliding_window_view", c_swv, (((3, 4), "real"),), (sliding_window_view, np.multiply)),
    ("sliding_window_view_axis", c_swv_axis, (((5, 2), "real"),), sliding_window_view),
    ("i0", c_i0, (((3, 4), "real"),), (np.i0, np.multiply)),
    ("bessel_i1", c_bessel_i1, (((5,), "real"),), bessel_i1),
]
if hasattr(np, "row_stack"):
    TANGENT_CASES.append(("row_stack", c_row_stack, (((3,), "real"), ((2, 3), "real")), np.row_stack))
# np.full(shape, tensor) is not dispatched to srcgrad op by op (see CASES)
COMPILED_ONLY_TANGENT_CASES = [
    ("full", c_full, (((), "real"),), np.full),
    ("softmax", c_softmax, (((3, 4), "real"),), scipy.special.softmax),
    ("softmax_all", c_softmax_all, (((3, 4), "real"),), scipy.special.softmax),
    ("log_softmax", c_log_softmax, (((2, 3, 4), "real"),), scipy.special.log_softmax),
    ("sequence_as_array", c_seq_as_array, (((3,), "real"), ((3,), "real")), sequence_as_array),
    ("sequence_as_array_nested", c_seq_as_array_nested, (((), "real"), ((), "real")), sequence_as_array),
    ("asarray", c_asarray, (((2, 3), "real"),), (np.asarray, np.multiply)),
    ("asarray_list", c_asarray_list, (((), "real"), ((), "real")), (np.asarray, np.multiply)),
    ("asarray_nested", c_asarray_nested, (((), "real"), ((), "real")), np.asarray),
    ("asarray_dtype", c_asarray_dtype, (((3,), "real"),), np.asarray),
    ("asanyarray", c_asanyarray, (((3,), "real"), ((3,), "real")), np.asanyarray),
    ("ascontiguousarray", c_ascontiguousarray, (((2, 3), "real"),), (np.ascontiguousarray, np.transpose)),
    ("asfortranarray", c_asfortranarray, (((2, 3), "real"), ((2, 3), "real")), np.asfortranarray),
    ("array_copy", c_array_copy, (((2, 3), "real"),), (np.array, np.multiply)),
    ("array_nested", c_array_nested, (((), "real"), ((), "real")), np.array),
    ("array_ndmin", c_array_ndmin, (((3,), "real"),), np.array),
]
