"""Run-time helpers of the constructor rules (rules/numpy/constructors.py):
np.linspace's weights. z_i = (1 - t_i) start + t_i stop is linear in
(start, stop) (numpy/_core/function_base.py). np.arange(start, stop, step)
is z_i = start + i step for i < ceil((stop - start) / step): linear in start
and step, piecewise constant in stop (which sets only the count).
"""
import numpy as np

from ...runtime import nondiff_helper
from .broadcast import unbroadcast
from .complex import inexact_dtype


@nondiff_helper
def linspace_weights(num, endpoint, axis, g):
    """t_i = i / (num - 1) (i / num without the endpoint; 0 for num == 1), the
    weight of `stop` in linspace's sample i (that of `start` is 1 - t_i),
    shaped to broadcast along `axis` of the output `g`, in g's dtype."""
    ndim = np.ndim(g)
    t = np.astype(np.linspace(0.0, 1.0, num, endpoint=endpoint), inexact_dtype(g))
    shape = [1] * ndim
    shape[axis % ndim] = num
    return np.reshape(t, shape)


def _refuse_retstep(retstep):
    if retstep:
        raise NotImplementedError(
            "srcgrad: np.linspace(..., retstep=True) returns a tuple; differentiate "
            "np.linspace and compute the step as (stop - start) / (num - 1)")


def linspace_adjoint(g, start, stop, num, endpoint, retstep, axis, wrt_stop):
    """z_i = start + (stop - start) t_i = (1 - t_i) start + t_i stop along
    `axis` (array start/stop broadcast against each other), so
    d start = sum_i (1 - t_i) g_i and d stop = sum_i t_i g_i, summed back to
    each one's shape."""
    _refuse_retstep(retstep)
    t = linspace_weights(num, endpoint, axis, g)
    w = t if wrt_stop else 1.0 - t
    total = np.sum(g * w, axis=axis % np.ndim(g))
    return unbroadcast(total, stop if wrt_stop else start)


def linspace_tangent(t_start, t_stop, num, endpoint, retstep, axis):
    """The tangent of np.linspace: linspace is linear in (start, stop), so
    it is np.linspace of the tangents."""
    _refuse_retstep(retstep)
    return np.linspace(t_start, t_stop, num, endpoint=endpoint, axis=axis)


def arange_adjoint(g, start, stop, step, wrt_step):
    """d start = sum_i g_i, d step = sum_i i g_i for z = np.arange(start,
    stop, step), in the differentiated argument's shape. With one
    argument, np.arange(stop) (bound to `start` here: stop is None), z_i = i
    does not depend on it: 0."""
    like = step if wrt_step else start
    if stop is None:
        return np.zeros(np.shape(like), dtype=inexact_dtype(like))
    if wrt_step:
        g = g * np.arange(np.shape(g)[0], dtype=inexact_dtype(g))
    return unbroadcast(np.sum(g), like)


def arange_tangent(z, start, stop, step, t_start, t_step):
    """The tangent of z = np.arange(start, stop, step): t_start + i t_step
    (0 for np.arange(stop), whose `start` here is the stop)."""
    if stop is None:
        return np.zeros(np.shape(z), dtype=inexact_dtype(z))
    i = np.arange(np.shape(z)[0], dtype=inexact_dtype(z))
    return np.zeros(np.shape(z), dtype=inexact_dtype(z)) + t_start + i * t_step
