"""GradientTape semantics (API.md, ../shared/seeds): structures, options,
errors, jacobians and nested tapes, each checked on real values."""
import threading
import warnings

import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad, numerical_jacobian

RNG = np.random.default_rng(42)


def rand(*shape):
    return RNG.normal(size=shape)


# ------------------------------------------------------------------ structures

def test_sources_structure_is_mirrored():
    a, b, c = sg.constant(1.5), sg.constant(rand(3)), sg.Variable(rand(2, 2))
    with sg.GradientTape(persistent=True) as t:
        t.watch([a, b])
        y = a * np.sum(b ** 2) + np.sum(np.sin(c))
    g = t.gradient(y, {"a": a, "nested": (b, [c])})
    assert set(g) == {"a", "nested"} and isinstance(g["nested"], tuple) and isinstance(g["nested"][1], list)
    check_close(g["a"].numpy(), np.sum(b.numpy() ** 2))
    check_close(g["nested"][0].numpy(), 2 * a.numpy() * b.numpy())
    check_close(g["nested"][1][0].numpy(), np.cos(c.numpy()))
    assert list(t.gradient(y, {"z": c, "a": a})) == ["z", "a"]


def test_list_of_targets_is_summed():
    x = sg.constant(rand(3))
    with sg.GradientTape() as t:
        t.watch(x)
        y1, y2 = np.sum(x ** 2), np.sum(np.exp(x))
    g = t.gradient([y1, y2], x)
    check_close(g.numpy(), 2 * x.numpy() + np.exp(x.numpy()))


def test_non_scalar_target_gradient_is_of_its_sum():
    x = sg.constant(rand(2, 3))
    with sg.GradientTape() as t:
        t.watch(x)
        y = x * x
    check_close(t.gradient(y, x).numpy(), 2 * x.numpy())


def test_output_gradients_weight_the_targets():
    x = sg.constant(rand(3))
    w = rand(3)
    with sg.GradientTape() as t:
        t.watch(x)
        y = np.sin(x)
    check_close(t.gradient(y, x, output_gradients=w).numpy(), w * np.cos(x.numpy()))


def test_output_gradients_shape_mismatch_names_both_shapes():
    x = sg.constant(rand(3))
    with sg.GradientTape() as t:
        t.watch(x)
        y = x * 2.0
    with pytest.raises(ValueError, match=r"\(2,\).*\(3,\)"):
        t.gradient(y, x, output_gradients=np.ones(2))


def test_output_gradients_count_mismatch():
    x = sg.constant(rand(3))
    with sg.GradientTape() as t:
        t.watch(x)
        y = x * 2.0
    with pytest.raises(ValueError):
        t.gradient([y, y], x, output_gradients=[np.ones(3)])


# --------------------------------------------------------------------- options

def test_non_persistent_second_gradient_raises_runtime_error():
    x = sg.constant(2.0)
    with sg.GradientTape() as t:
        t.watch(x)
        y = x ** 3
    assert t.gradient(y, x).numpy() == 12.0
    with pytest.raises(RuntimeError):
        t.gradient(y, x)


def test_persistent_allows_many_gradients():
    x = sg.constant(2.0)
    with sg.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x ** 3
        z = np.exp(y)
    assert t.gradient(y, x).numpy() == 12.0
    check_close(t.gradient(z, x).numpy(), 12.0 * np.exp(8.0), rtol=1e-12)
    assert t.gradient(y, x).numpy() == 12.0


def test_unconnected_gradients_none_and_zero():
    x, u = sg.constant(rand(3)), sg.constant(rand(2))
    with sg.GradientTape(persistent=True) as t:
        t.watch([x, u])
        y = np.sum(x * x)
    assert t.gradient(y, u) is None
    assert t.gradient(y, u, unconnected_gradients=sg.UnconnectedGradients.NONE) is None
    for value in (sg.UnconnectedGradients.ZERO, "zero"):
        g = t.gradient(y, u, unconnected_gradients=value)
        np.testing.assert_array_equal(g.numpy(), np.zeros(2))
    assert t.gradient(y, u, unconnected_gradients="none") is None
    with pytest.raises(ValueError):
        t.gradient(y, u, unconnected_gradients="nothing")


def test_non_trainable_variable_and_unwatched_tensor_get_none():
    v = sg.Variable(2.0, trainable=False)
    c = sg.constant(2.0)
    w = sg.Variable(2.0)
    with sg.GradientTape() as t:
        y = v * c * w
    gv, gc, gw = t.gradient(y, [v, c, w])
    assert gv is None and gc is None and gw.numpy() == 4.0


def test_watched_variables_in_order_of_construction():
    a, b, c = sg.Variable(1.0), sg.Variable(2.0), sg.Variable(3.0, trainable=False)
    with sg.GradientTape() as t:
        t.watch(c)
        y = b * a
    watched = t.watched_variables()
    assert len(watched) == 3 and all(v is w for v, w in zip(watched, (a, b, c)))
    with sg.GradientTape(watch_accessed_variables=False) as t2:
        y = a * b
    assert t2.watched_variables() == ()
    assert t2.gradient(y, a) is None


def test_watch_integer_warns_and_gives_none():
    n = sg.constant(3)
    with sg.GradientTape() as t:
        with pytest.warns(UserWarning):
            t.watch(n)
        y = n * 2
    assert t.gradient(y, n) is None


def test_watch_non_tensor_raises_value_error():
    with sg.GradientTape() as t:
        with pytest.raises(ValueError):
            t.watch("x")
        with pytest.raises(ValueError):
            t.watch([sg.constant(1.0), 3.0])


def test_variable_target_raises():
    v = sg.Variable(1.0)
    with sg.GradientTape() as t:
        pass
    with pytest.raises(ValueError):
        t.gradient(v, v)


def test_reset_forgets_what_was_recorded():
    x = sg.Variable(3.0)
    with sg.GradientTape() as t:
        loss = x ** 3
        t.reset()
        loss = loss + x * x
    assert t.gradient(loss, x).numpy() == 6.0


def test_stop_recording():
    x = sg.constant(2.0)
    with sg.GradientTape() as t:
        t.watch(x)
        y = x * x
        with t.stop_recording():
            z = x * x * x
        w = y + z
    assert t.gradient(w, x).numpy() == 4.0


def test_stop_recording_errors():
    t = sg.GradientTape()
    with pytest.raises(RuntimeError):
        with t.stop_recording():
            pass
    with t:
        with t.stop_recording():
            with pytest.raises(ValueError, match="Tape is not recording."):
                with t.stop_recording():
                    pass
    with pytest.raises(ValueError, match="Tape is not recording."):
        with t.stop_recording():
            pass


def test_gradient_inside_own_context_works():
    x = sg.constant(3.0)
    with sg.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x * x
        with pytest.warns(UserWarning):
            dy = t.gradient(y, x)
    assert dy.numpy() == 27.0
    assert t.gradient(dy, x).numpy() == 18.0   # the persistent tape recorded its own backward


def test_tapes_are_thread_local():
    x = sg.constant(2.0)
    results = {}
    with sg.GradientTape(persistent=True) as t:
        t.watch(x)

        def other():
            results["y"] = x * x      # another thread: not recorded on t

        th = threading.Thread(target=other)
        th.start()
        th.join()
        z = x * 5.0
    assert t.gradient(results["y"], x) is None
    assert t.gradient(z, x).numpy() == 5.0


def test_float32_sources_get_float32_gradients():
    x = sg.constant(rand(3).astype(np.float32))
    with sg.GradientTape() as t:
        t.watch(x)
        y = np.sum(np.tanh(x) * 2.0)
    g = t.gradient(y, x)
    assert g.dtype == np.float32
    check_close(g.numpy(), 2 * (1 - np.tanh(x.numpy().astype(np.float64)) ** 2), rtol=1e-5)


# ------------------------------------------------------------------- jacobians

def test_jacobian_matches_finite_differences():
    xv = rand(3)
    W = rand(2, 3)
    x = sg.constant(xv)
    with sg.GradientTape() as t:
        t.watch(x)
        y = np.tanh(W @ x)
    J = t.jacobian(y, x)
    assert J.shape == (2, 3)
    check_close(J.numpy(), numerical_jacobian(lambda v: np.tanh(W @ v), xv))


def test_jacobian_of_several_sources_and_unconnected():
    a, b, u = sg.constant(rand(2)), sg.constant(rand(2, 2)), sg.constant(rand(4))
    with sg.GradientTape() as t:
        t.watch([a, b, u])
        y = b @ a
    Ja, Jb, Ju = t.jacobian(y, [a, b, u])
    check_close(Ja.numpy(), b.numpy())
    expected = np.zeros((2, 2, 2))
    for i in range(2):
        expected[i, i, :] = a.numpy()
    check_close(Jb.numpy(), expected)
    assert Ju is None
    with sg.GradientTape() as t:
        t.watch([a, u])
        y = a * 2.0
    assert t.jacobian(y, u, unconnected_gradients="zero").numpy().shape == (2, 4)


def test_batch_jacobian_values_and_errors():
    xv = rand(4, 3)
    W = rand(3, 2)
    x = sg.constant(xv)
    with sg.GradientTape(persistent=True) as t:
        t.watch(x)
        y = np.tanh(x @ W)
        u = sg.constant(rand(4, 2)) * 1.0
    bj = t.batch_jacobian(y, x)
    assert bj.shape == (4, 2, 3)
    for i in range(4):
        check_close(bj.numpy()[i], numerical_jacobian(lambda v: np.tanh(v @ W), xv[i]))
    np.testing.assert_array_equal(t.batch_jacobian(u, x).numpy(), np.zeros((4, 2, 3)))
    with pytest.raises(ValueError):
        t.batch_jacobian(y, sg.constant(rand(5, 3)))


# ----------------------------------------------------------- nested tapes (order 3)

@sg.function
def compiled_quartic_sin(x):
    return x ** 4 + np.sin(x) * x


def quartic_sin(x):
    return x ** 4 + np.sin(x) * x


def derivatives(x):
    return (4 * x ** 3 + np.cos(x) * x + np.sin(x),
            12 * x ** 2 - np.sin(x) * x + 2 * np.cos(x),
            24 * x - np.cos(x) * x - 3 * np.sin(x))


@pytest.mark.parametrize("fn", [quartic_sin, compiled_quartic_sin], ids=["op_by_op", "compiled"])
def test_third_order_nested_tapes(fn):
    xv = 0.7
    x = sg.constant(xv)
    with sg.GradientTape() as t3:
        t3.watch(x)
        with sg.GradientTape() as t2:
            t2.watch(x)
            with sg.GradientTape() as t1:
                t1.watch(x)
                y = fn(x)
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    for got, want in zip((d1, d2, d3), derivatives(xv)):
        check_close(got.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("fn", [quartic_sin, compiled_quartic_sin], ids=["op_by_op", "compiled"])
def test_second_order_of_a_variable_vector(fn):
    v = sg.Variable(rand(3))
    with sg.GradientTape() as outer:
        with sg.GradientTape() as inner:
            y = np.sum(fn(v))
        g = inner.gradient(y, v)
    H = outer.jacobian(g, v)
    check_close(H.numpy(), np.diag(derivatives(v.numpy())[1]), rtol=1e-10, atol=1e-12)


def test_hessian_by_nested_jacobians_matches_finite_differences():
    xv = rand(3)

    def f(x):
        return np.sum(np.sin(x) * x[0])

    x = sg.constant(xv)
    with sg.GradientTape() as outer:
        outer.watch(x)
        with sg.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
    H = outer.jacobian(g, x)
    check_close(H.numpy(), numerical_jacobian(lambda v: numerical_grad(f, v, 1e-5), xv, 1e-5),
                rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------- values

def test_tensor_protocol():
    t = sg.constant(6.0)
    assert repr(t) == "srcgrad.Tensor(6.0, shape=(), dtype=float64)"
    a = sg.constant([[1.0, 2.0], [3.0, 4.0]])
    assert a.shape == (2, 2) and a.ndim == 2 and a.dtype == np.float64
    for r in (np.sin(a), np.sum(a, axis=0), a @ a, a + 1, 1 - a, a * a, a / 2, 2 ** a, -a, a[0], a.T):
        assert type(r) is sg.Tensor
    np.testing.assert_array_equal((a // 2).numpy(), [[0, 1], [1, 2]])
    np.testing.assert_array_equal((a % 2).numpy(), [[1, 0], [1, 0]])
    np.testing.assert_array_equal((a > 2).numpy(), [[False, False], [True, True]])


def test_variable_assign_and_ops():
    v = sg.Variable([1.0, 2.0], name="v")
    assert v.name == "v" and v.trainable
    v.assign([3.0, 4.0])
    v.assign_add([1.0, 1.0])
    v.assign_sub([0.5, 0.5])
    np.testing.assert_array_equal(v.numpy(), [3.5, 4.5])
    assert type(v * 2) is sg.Tensor
    with pytest.raises(ValueError):
        v.assign([1.0, 2.0, 3.0])
