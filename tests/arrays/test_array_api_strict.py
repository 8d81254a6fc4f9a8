"""array_api_strict arrays: the runtime helpers generated code calls.

array_api_strict implements neither __array_function__ nor __array_ufunc__:
srcgrad runs generated code on it by the array API's names
(test_array_api.py). The runtime helpers that build arrays (zeros,
scatters, the returned gradient) work in the array's own namespace, and
are tested here on strict arrays directly.
"""
import numpy as np
import pytest

from srcgrad.runtime import arrays, core
from srcgrad.rules.helpers.broadcast import unindex_array

xp = pytest.importorskip("array_api_strict")


def test_strict_is_another_array_without_dispatch():
    x = xp.ones((2, 3))
    assert arrays.is_other_array(x) and not arrays.dispatches(x)
    assert arrays.dtype_kind(x) == "f" and arrays.dtype_kind(xp.ones(2, dtype=xp.int32)) == "i"
    assert not arrays.is_other_array(np.ones(3)) and not arrays.is_other_array(1.0)


def test_zeros_in_the_strict_namespace():
    x = xp.ones((2, 3), dtype=xp.float32)
    z = core.zeros_tree(x)
    assert type(z) is type(x) and z.shape == (2, 3) and z.dtype == xp.float32
    zi = core.zeros_tree(xp.ones(3, dtype=xp.int64))
    assert type(zi) is type(x) and zi.dtype == xp.float64
    s = core.sparse_zeros(core.ShapeOf(x))
    assert type(s) is type(x) and s.shape == (2, 3)


def test_as_input_keeps_strict_arrays():
    x = xp.ones((2, 3), dtype=xp.float32)
    g = core.as_input(1.0, x)          # a Python number broadcast into x's namespace
    assert type(g) is type(x) and g.shape == (2, 3) and g.dtype == xp.float32
    # a NumPy array as the gradient of a strict array: a value left the namespace on the way
    with pytest.raises(arrays.ForeignArrayError, match="came out as a NumPy array"):
        core.as_input(np.ones(3), x)
    g = core.as_input(xp.ones((2, 3), dtype=xp.float64), x)
    assert g.dtype == xp.float32


def test_scatter_in_the_strict_namespace():
    x = xp.ones((4, 3))
    g = xp.ones((3, 3))
    out = unindex_array(g, x, np.array([0, 2, 0]))
    assert type(out) is type(x)
    np.testing.assert_array_equal(np.asarray(out), [[2] * 3, [0] * 3, [1] * 3, [0] * 3])
    out = unindex_array(xp.ones(3), x, 1)
    np.testing.assert_array_equal(np.asarray(out), [[0] * 3, [1] * 3, [0] * 3, [0] * 3])
    out = unindex_array(xp.ones((2, 2)), x, (slice(1, 3), slice(0, 2)))
    assert float(xp.sum(out)) == 4.0
