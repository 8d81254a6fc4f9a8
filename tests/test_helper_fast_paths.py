"""The run-time helpers' fast paths for small NumPy arrays (issue 18: per-call
overhead) give exactly what their general paths give: the same values, shape
and dtype, and the same errors."""
import numpy as np
import pytest

from srcgrad.rules.helpers import broadcast, reductions
from srcgrad.runtime import ShapeOf

CASES = [
    (np.arange(3.0), (4, 3)),
    (np.arange(4.0).reshape(4, 1), (4, 5)),
    (np.float32(2.5), (2, 3)),
    (2.5, (3,)),
    (np.array(1.5 + 2j), (2, 2)),
    (np.arange(3, dtype=np.float32), (2, 3)),
    (np.ones((1, 1)), (3, 1, 2)),
    (7, (2, 2)),
    (np.ones(3), ()),
]


@pytest.mark.parametrize("g, shape", CASES[:-1])
def test_broadcast_up_matches_broadcast_to(g, shape):
    got = broadcast.broadcast_up(g, shape)
    want = np.broadcast_to(g, shape)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_broadcast_up_refuses_what_broadcast_to_refuses():
    with pytest.raises(ValueError):
        np.broadcast_to(np.ones(3), (4, 2))
    with pytest.raises(ValueError):
        broadcast.broadcast_up(np.ones(3), (4, 2))
    g, shape = CASES[-1]
    with pytest.raises(ValueError):
        broadcast.broadcast_up(g, shape)


def test_broadcast_up_of_a_large_shape_is_a_view():
    g = np.arange(3.0)
    big = broadcast.broadcast_up(g, (broadcast.SMALL_BROADCAST, 3))
    assert np.shares_memory(big, g) and not big.flags.writeable
    small = broadcast.broadcast_up(g, (2, 3))
    assert not np.shares_memory(small, g)


def test_unreduce_and_unbroadcast_keep_their_values():
    x = np.zeros((4, 3))
    g = np.arange(4.0)
    np.testing.assert_array_equal(broadcast.unreduce(g, x, 1, False), np.repeat(g[:, None], 3, axis=1))
    np.testing.assert_array_equal(broadcast.unreduce(2.0, ShapeOf(x)), np.full((4, 3), 2.0))
    np.testing.assert_array_equal(broadcast.unbroadcast(np.ones(3), x), np.ones((4, 3)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("axis", [0, 1, (0, 1)])
def test_max_chooser_fast_path_matches_the_general_one(dtype, axis):
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0], [5.0, 4.0, 5.0]], dtype=dtype)
    y = np.max(x, axis=axis, keepdims=True)
    got = reductions.max_chooser(x, y, axis, True)
    general = reductions.max_chooser(x.tolist(), y, axis, True)     # a list takes the general path
    assert got.dtype == np.result_type(x, np.float32)
    np.testing.assert_array_equal(got, general.astype(got.dtype))
    # ties split evenly: each reduction's weights sum to one
    np.testing.assert_allclose(np.sum(got, axis=axis), 1.0)


def test_shape_of_size():
    assert ShapeOf(np.zeros((3, 4))).size == 12
    assert ShapeOf(np.zeros((0, 4))).size == 0
    assert ShapeOf(1.5).size == 1
    assert isinstance(ShapeOf(np.zeros((2, 2))).size, int)


def test_keep_values_copies_foreign_residuals_at_any_depth():
    """The tape's keep_values (a recorded call's residuals read at the call,
    as TF's tape): an array the caller also holds is copied wherever it sits
    in the nested residuals; containers without one are kept as they are."""
    from srcgrad.tape import entries

    held = np.arange(3.0)                   # the caller's array: must be copied
    fresh = lambda: np.ones(2)              # noqa: E731  (made by the call: held by the result only)
    untouched = (fresh(), [fresh(), 1.5])
    result = (fresh(), (untouched, [2.0, (held, fresh())], held))
    kept = entries.keep_values(result, set())
    assert kept[1][0] is untouched          # nothing foreign below: the same container
    assert type(kept[1][1]) is list and type(kept[1][1][1]) is tuple
    copies = kept[1][1][1][0], kept[1][2]
    for c in copies:
        assert c is not held and np.array_equal(c, held)
    assert copies[0] is copies[1]           # one copy per array, wherever it appears
    held[:] = -1.0                          # the caller writes into its array after the call
    assert np.array_equal(kept[1][2], np.arange(3.0))
    owned = entries.keep_values((fresh(), (held,)), {id(held)})     # a Tensor's array: not copied
    assert owned[1][0] is held


def _unbroadcast_reference(g, shape):
    """The sum of g over the axes NumPy broadcast to reach g's shape from
    `shape`, written out: leading axes, then axes where shape has 1."""
    lead = np.ndim(g) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and np.shape(g)[lead + i] != 1)
    return np.reshape(np.sum(g, axis=axes), shape)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_unbroadcast_fast_paths_sum_what_numpy_broadcast(dtype):
    """Every pair of shapes of rank <= 3 with lengths 1..3 that broadcast to
    g's shape: the fast paths (leading axes; keepdims axes) and the general
    one give the reference sum, in g's dtype, bit for bit."""
    import itertools
    rng = np.random.default_rng(0)
    checked = 0
    for gnd in range(1, 4):
        for gshape in itertools.product((1, 2, 3), repeat=gnd):
            g = rng.normal(size=gshape).astype(dtype)
            for xnd in range(0, gnd + 1):
                for xshape in itertools.product((1, 2, 3), repeat=xnd):
                    try:
                        if np.broadcast_shapes(gshape, xshape) != gshape:
                            continue
                    except ValueError:
                        continue
                    got = broadcast.unbroadcast(g, np.zeros(xshape))
                    want = _unbroadcast_reference(g, xshape)
                    assert np.shape(got) == xshape and np.asarray(got).dtype == dtype
                    np.testing.assert_array_equal(got, want)
                    checked += 1
    assert checked > 200


def test_unindex_of_a_float_into_a_float64_array_matches_the_general_path():
    from srcgrad.rules.helpers.broadcast import unindex_array
    x = np.zeros((3, 4))
    for g in (1.5, np.float64(-2.25)):
        for index in [(1, 2), (0, -1), 2, (slice(None), 1), (Ellipsis, 0), (np.int64(2), 3)]:
            fast = unindex_array(g, x, index)
            general = unindex_array(np.asarray(g), x, index)      # (a 0-d array: the general path)
            assert fast.dtype == general.dtype == np.float64
            np.testing.assert_array_equal(fast, general)
    np.testing.assert_array_equal(unindex_array(1.0, x, ([0, 0], [1, 1])), unindex_array(np.asarray(1.0), x, ([0, 0], [1, 1])))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_slice_fast_paths_of_unindex_and_its_batched_twins_match_the_general_ones(dtype):
    from srcgrad.rules.helpers import batched
    from srcgrad.rules.helpers.broadcast import unindex_array
    rng = np.random.default_rng(0)
    x = np.asarray(rng.standard_normal(7), dtype)
    for index in (slice(None, -1), slice(1, None), slice(None, None, 2), slice(5, 1, -1), slice(3, 3)):
        g = np.asarray(rng.standard_normal(x[index].shape), dtype)
        fast, general = broadcast.unindex(g, x, index), unindex_array(g, x, (index,))
        assert fast.dtype == general.dtype == dtype and fast.shape == x.shape
        np.testing.assert_array_equal(fast, general)
        gb = np.asarray(rng.standard_normal((3,) + x[index].shape), dtype)
        fast_b, general_b = batched.unindex_b(gb, x, index), batched.unindex_b(gb, x, (index,))
        assert fast_b.dtype == general_b.dtype == dtype
        np.testing.assert_array_equal(fast_b, general_b)
        np.testing.assert_array_equal(fast_b, np.stack([unindex_array(gk, x, index) for gk in gb]))
        h = np.asarray(rng.standard_normal((3,) + x.shape), dtype)
        np.testing.assert_array_equal(batched.gather_b(h, index), batched.gather_b(h, (index,)))
    # a float32 cotangent into a float64 array keeps the general path's promotion
    x64 = np.zeros(4)
    got = broadcast.unindex(np.ones(2, np.float32), x64, slice(0, 2))
    assert got.dtype == np.float64 and got.tolist() == [1.0, 1.0, 0.0, 0.0]
    assert batched.gather_b([1.0, 2.0, 3.0], slice(1, None)) == [2.0, 3.0]       # (a list: indexed as is)


def test_jacobians_and_hessians_are_writeable_arrays_of_their_own():
    import srcgrad as sg
    from tests.programs_jacobian_results import both, cubic, double
    h = sg.hessian(cubic)(np.arange(3.0))
    np.testing.assert_allclose(h, np.diag(6.0 * np.arange(3.0)))
    j = sg.jacobian(double)(np.ones(3))
    np.testing.assert_allclose(j, 2.0 * np.eye(3))
    a, b = sg.jacobian(both, wrt=(0, 1))(np.ones(3), np.ones(3))
    for m in (h, j, a, b):
        assert m.flags.writeable and m.flags.c_contiguous
    assert not np.shares_memory(a, b)
    a += 1.0
    np.testing.assert_allclose(b, np.eye(3))        # (x + y: the one cotangent, not shared)


def test_shape_of_an_element_or_none_and_unindex_of_an_element_match_the_general_paths():
    from srcgrad.rules.helpers.broadcast import unindex_array
    for v in (np.float64(2.5), None, 1.5):
        s = ShapeOf(v)
        assert s.shape == np.shape(v) == () and s.dtype == np.result_type(v) == np.float64 and s.like is None
    x = np.zeros((3, 4))
    for g in (1.5, np.float64(-2.25)):
        for index in [(1, 2), (0, -1), 2, (2,), (-1, 3)]:
            fast = broadcast.unindex(g, x, index)
            general = unindex_array(np.asarray(g), x, index)
            assert fast.dtype == general.dtype == np.float64
            np.testing.assert_array_equal(fast, general)
    # (not an element: the general path's own handling)
    for g, index in [(1.5, (np.int64(1), 2)), (1.5, (True, 1)), (1.5, ([0, 0], [1, 1])), (np.float32(2.0), (1, 2))]:
        np.testing.assert_array_equal(broadcast.unindex(g, x, index), unindex_array(np.asarray(g), x, index))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_max_chooser_fast_path_without_keepdims(dtype, axis):
    """An int axis removed (k-means' `np.min(dists, axis=1)`): the reduced
    axis put back, then the fast path; the general path's values, ties
    split evenly."""
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0], [5.0, 4.0, 5.0], [0.5, 0.5, 0.5]], dtype=dtype)
    y = np.max(x, axis=axis)
    got = reductions.max_chooser(x, y, axis, False)
    general = reductions.max_chooser(x.tolist(), y, axis, False)
    assert got.dtype == x.dtype and got.shape == x.shape
    np.testing.assert_array_equal(got, general.astype(got.dtype))
    np.testing.assert_allclose(np.sum(got, axis=axis), 1.0)
