"""Functions whose outputs carry no derivative, in one place.

Integer-, boolean- and shape-valued results (argmax, comparisons, floor,
shape, zeros_like, random draws) pass through both paths with no adjoint.
np.full, np.full_like and np.linspace are differentiable in their fill
value and end points (rules in numpy/constructors.py).
"""
import builtins
import math
import operator

import numpy as np

from .helpers import broadcast, elementwise, reductions, shapes
from .registry import register_nondiff

register_nondiff(
    # comparisons and logic
    np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
    np.logical_and, np.logical_or, np.logical_not, np.logical_xor, np.isfinite, np.isnan, np.isinf,
    np.all, np.any, np.array_equal, np.allclose, np.isclose,
    operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne, operator.not_,
    # integer-valued
    np.argmax, np.argmin, np.argsort, np.sign, np.floor, np.ceil, np.round, np.rint, np.trunc,
    np.floor_divide, np.count_nonzero, np.nonzero, np.flatnonzero, np.searchsorted,
    # shapes and constructors
    np.shape, np.ndim, np.size, np.zeros, np.ones, np.empty, np.eye, np.identity,
    np.zeros_like, np.ones_like, np.empty_like,
    np.result_type, np.issubdtype,
    # piecewise-constant and integer-valued elementwise functions (zero derivative
    # almost everywhere, as autograd's nograd_functions and TF's Floor/Round/Sign)
    np.heaviside, np.around, np.fix, np.signbit, np.spacing, np.nextafter, np.isneginf,
    np.isposinf, np.isreal, np.iscomplex, np.iscomplexobj, np.isrealobj, np.isscalar,
    np.argwhere, np.argpartition, np.array_equiv, np.digitize,
    np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert, np.left_shift, np.right_shift,
    np.gcd, np.lcm,
    # index and mask constructors
    np.lexsort, np.tril_indices, np.triu_indices, np.tril_indices_from, np.triu_indices_from,
    np.diag_indices, np.diag_indices_from, np.indices, np.unravel_index, np.ravel_multi_index,
    np.mask_indices, np.isin, np.linalg.matrix_rank, np.argsort,
    # helpers
    broadcast.reduction_size, reductions.max_chooser, elementwise.balanced_eq, shapes.inverse_axes,
    elementwise.sign,
    elementwise.clip_inside, elementwise.clip_below, elementwise.clip_above,
    elementwise.sign_product, elementwise.is_finite, reductions.is_not_nan,
    reductions.degrees_of_freedom, reductions.nan_mean_weights,
    reductions.uniform_weights, reductions.norm_chooser, reductions.abs_chooser,
    # builtins
    builtins.len, builtins.range, builtins.int, builtins.bool, builtins.print, builtins.isinstance,
    builtins.round,     # (round(x, n) on an array is np.round, piecewise constant as np.round above)
    # (zip, enumerate, reversed, list, tuple and dict carry derivatives: lowered in for loops,
    #  containers.as_list/as_tuple/as_dict as values, NoRuleError otherwise)
    builtins.str, builtins.type, builtins.callable, builtins.hasattr,
    math.floor, math.ceil, math.isnan, math.isinf, math.isfinite,
    # NumPy's integer and boolean scalar types called as casts (np.int64(W[:, -1]) used as indices, as
    # x.astype(int): TF's cast to an integer type has no gradient)
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.intp, np.uintp,
    np.bool_,
)
