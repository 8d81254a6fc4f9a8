"""Shared oracles for the test suite: central finite differences.

`numerical_grad(f, x)` returns the gradient of a scalar function `f` at the
float64 array `x` by central differences, (f(x + h e_i) - f(x - h e_i)) / 2h,
one coordinate at a time (Nocedal & Wright, Numerical Optimization, 8.1).
`numerical_jacobian(f, x)` does the same for array-valued `f` and returns
shape `f(x).shape + x.shape`.
"""
import contextlib
import sys

import numpy as np

EPS = 1e-6


def numerical_jacobian(f, x, eps=EPS):
    """Central-difference Jacobian of `f` at `x`; shape out.shape + x.shape."""
    x = np.array(x, dtype=np.float64)
    out = np.asarray(f(x.copy()), dtype=np.float64)
    jac = np.zeros(out.shape + x.shape)
    flat = x.reshape(-1)
    for i in range(flat.size):
        xp = flat.copy()
        xm = flat.copy()
        xp[i] += eps
        xm[i] -= eps
        fp = np.asarray(f(xp.reshape(x.shape)), dtype=np.float64)
        fm = np.asarray(f(xm.reshape(x.shape)), dtype=np.float64)
        jac.reshape(out.shape + (flat.size,))[..., i] = (fp - fm) / (2 * eps)
    return jac


def numerical_grad(f, x, eps=EPS):
    """Central-difference gradient of scalar `f` at `x`; shape x.shape."""
    return numerical_jacobian(f, x, eps)


def check_close(actual, expected, rtol=1e-5, atol=1e-6):
    """assert_allclose that also refuses None and shape mismatches."""
    assert actual is not None, "gradient is None"
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


@contextlib.contextmanager
def numpy_swapped(module_name, replacement):
    """`np` -> `replacement` (autograd.numpy, say) in module `module_name`
    for the block: the module's functions read `np` as a global, so the
    same source runs on the other library."""
    module = sys.modules[module_name]
    saved = module.np
    module.np = replacement
    try:
        yield
    finally:
        module.np = saved
