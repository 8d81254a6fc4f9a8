"""GradientTape semantics of API.md (tf.GradientTape, with NumPy), each test
comparing real numbers: watching, structures of targets and sources, options,
errors, jacobians, nested tapes to third order (op by op and through
@sg.function), thread-locality, and the Tensor/Variable protocol."""
import operator
import threading
import warnings

import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad, numerical_jacobian

RNG = np.random.default_rng(1234)


def rand(*shape):
    return RNG.normal(size=shape)


def val(t):
    """The ndarray of a Tensor result (refusing None and non-Tensors)."""
    assert t is not None, "gradient is None"
    assert isinstance(t, sg.Tensor), type(t)
    return t.numpy()


def quiet_gradient(tape, *args, **kwargs):
    """tape.gradient without failing on TF's efficiency warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tape.gradient(*args, **kwargs)


# ============================================================== watching

def test_watch_tensor():
    x = sg.constant(3.0)
    with sg.GradientTape() as t:
        t.watch(x)
        y = x * x * x
    check_close(val(t.gradient(y, x)), 27.0)


def test_watch_variable_with_auto_watch_off():
    v = sg.Variable(2.0)
    with sg.GradientTape(watch_accessed_variables=False) as t:
        t.watch(v)
        y = v ** 3
    check_close(val(t.gradient(y, v)), 12.0)


@pytest.mark.parametrize("container", [list, tuple])
def test_watch_nested_list_and_tuple(container):
    a, b, c = sg.constant(1.5), sg.constant([1.0, -2.0]), sg.constant([[0.5]])
    with sg.GradientTape() as t:
        t.watch(container([a, container([b, [c]])]))
        y = a * np.sum(b * b) + np.sum(c) * 3.0
    ga, gb, gc = t.gradient(y, [a, b, c])
    check_close(val(ga), 5.0)
    check_close(val(gb), 2 * 1.5 * np.array([1.0, -2.0]))
    check_close(val(gc), [[3.0]])


def test_watch_dict():
    a, b = sg.constant(2.0), sg.constant(5.0)
    with sg.GradientTape() as t:
        t.watch({"first": a, "second": [b]})
        y = a * b * b
    ga, gb = t.gradient(y, (a, b))
    check_close(val(ga), 25.0)
    check_close(val(gb), 20.0)


def test_watch_empty_list_watches_nothing():
    # the API page's Dense-before-build note: watching [] is allowed, nothing is watched
    x = sg.constant(2.0)
    with sg.GradientTape() as t:
        t.watch([])
        y = x * x
    assert t.gradient(y, []) == []


def test_unwatched_tensor_gets_none():
    x, z = sg.constant(3.0), sg.constant(4.0)
    with sg.GradientTape() as t:
        t.watch(x)
        y = x * z
    gx, gz = t.gradient(y, [x, z])
    check_close(val(gx), 4.0)
    assert gz is None


def test_non_trainable_variable_gets_none_unless_watched():
    v = sg.Variable(3.0, trainable=False)
    w = sg.Variable(3.0, trainable=False)
    assert v.trainable is False
    with sg.GradientTape() as t:
        t.watch(w)
        y = v * v + w * w * w
    gv, gw = t.gradient(y, [v, w])
    assert gv is None
    check_close(val(gw), 27.0)


def test_trainable_variable_watched_automatically():
    v = sg.Variable([1.0, 2.0, 3.0])
    assert v.trainable is True
    with sg.GradientTape() as t:
        y = np.sum(np.sin(v) * v)
    xv = np.array([1.0, 2.0, 3.0])
    check_close(val(t.gradient(y, v)), np.cos(xv) * xv + np.sin(xv))


def test_watch_accessed_variables_false():
    a, b = sg.Variable(3.0), sg.Variable(2.0)
    with sg.GradientTape(persistent=True, watch_accessed_variables=False) as t:
        t.watch(a)
        y = a ** 2
        z = b ** 3
        u = a * b
    check_close(val(t.gradient(y, a)), 6.0)
    assert t.gradient(z, b) is None
    gu = t.gradient(u, [a, b])
    check_close(val(gu[0]), 2.0)
    assert gu[1] is None
    assert list(t.watched_variables()) == [a]


def test_watch_integer_tensor_warns_and_gives_none():
    x = sg.constant(3)
    assert x.dtype.kind == "i"
    with sg.GradientTape() as t:
        with pytest.warns(UserWarning):
            t.watch(x)
        y = x * x
    assert t.gradient(y, x) is None


def test_watch_integer_in_a_list_still_watches_the_floats():
    i, f = sg.constant([1, 2]), sg.constant(2.0)
    with sg.GradientTape() as t:
        with pytest.warns(UserWarning):
            t.watch([i, f])
        y = f * f
    gi, gf = t.gradient(y, [i, f])
    assert gi is None
    check_close(val(gf), 4.0)


@pytest.mark.parametrize("bad", ["a string", object(), [sg.constant(1.0), "nested string"]])
def test_watch_non_tensor_raises_value_error(bad):
    with sg.GradientTape() as t:
        with pytest.raises(ValueError):
            t.watch(bad)


# ====================================================== targets and sources

def _three():
    a = sg.constant(1.5)
    b = sg.constant([0.5, -1.0, 2.0])
    c = sg.Variable([[0.3, -0.7], [1.1, 0.2]])
    return a, b, c


def _three_loss(a, b, c):
    return a * np.sum(b ** 2) + np.sum(np.sin(c)) * a


def _three_expected(a, b, c):
    a_, b_, c_ = a.numpy(), b.numpy(), c.numpy()
    return (np.sum(b_ ** 2) + np.sum(np.sin(c_)), 2 * a_ * b_, a_ * np.cos(c_))


def test_sources_single_list_tuple_dict_nested():
    a, b, c = _three()
    ea, eb, ec = _three_expected(a, b, c)
    with sg.GradientTape(persistent=True) as t:
        t.watch([a, b])
        y = _three_loss(a, b, c)

    check_close(val(t.gradient(y, b)), eb)

    g = t.gradient(y, [a, b, c])
    assert type(g) is list and len(g) == 3
    for got, exp in zip(g, (ea, eb, ec)):
        check_close(val(got), exp)

    g = t.gradient(y, (c, a))
    assert type(g) is tuple and len(g) == 2
    check_close(val(g[0]), ec)
    check_close(val(g[1]), ea)

    g = t.gradient(y, {"z": c, "a": a, "m": b})
    assert type(g) is dict and list(g) == ["z", "a", "m"]
    check_close(val(g["z"]), ec)
    check_close(val(g["a"]), ea)
    check_close(val(g["m"]), eb)

    g = t.gradient(y, {"outer": (b, [c, {"deep": a}]), "x": [a]})
    assert type(g) is dict and set(g) == {"outer", "x"}
    assert type(g["outer"]) is tuple and type(g["outer"][1]) is list and type(g["outer"][1][1]) is dict
    assert type(g["x"]) is list
    check_close(val(g["outer"][0]), eb)
    check_close(val(g["outer"][1][0]), ec)
    check_close(val(g["outer"][1][1]["deep"]), ea)
    check_close(val(g["x"][0]), ea)


def test_same_source_twice():
    x = sg.constant(2.0)
    with sg.GradientTape() as t:
        t.watch(x)
        y = x ** 3
    g1, g2 = t.gradient(y, [x, x])
    check_close(val(g1), 12.0)
    check_close(val(g2), 12.0)


def test_gradient_has_source_shape_and_dtype():
    x = sg.constant(rand(2, 3))
    with sg.GradientTape() as t:
        t.watch(x)
        y = np.sum(np.exp(x) * 2.0)
    g = t.gradient(y, x)
    assert g.shape == (2, 3) and g.dtype == np.float64
    check_close(val(g), 2 * np.exp(x.numpy()))


def test_list_of_targets_is_summed():
    x = sg.constant([0.1, 0.2, 0.3])
    with sg.GradientTape() as t:
        t.watch(x)
        y1 = np.sum(x ** 2)
        y2 = np.sum(np.exp(x))
        y3 = x[0] * x[2]
    g = t.gradient([y1, y2, y3], x)
    xv = x.numpy()
    check_close(val(g), 2 * xv + np.exp(xv) + np.array([xv[2], 0.0, xv[0]]))


def test_nested_targets_are_summed():
    x = sg.constant(2.0)
    with sg.GradientTape() as t:
        t.watch(x)
        targets = {"p": x ** 2, "q": (x ** 3, [np.sin(x)])}
    check_close(val(t.gradient(targets, x)), 4.0 + 12.0 + np.cos(2.0))


def test_non_scalar_target_is_differentiated_as_its_sum():
    x = sg.constant(rand(2, 3))
    with sg.GradientTape() as t:
        t.watch(x)
        y = np.tanh(x) * 3.0
    check_close(val(t.gradient(y, x)), 3.0 * (1 - np.tanh(x.numpy()) ** 2))


def test_target_equal_to_source_gives_ones():
    x = sg.constant([1.0, 2.0])
    with sg.GradientTape() as t:
        t.watch(x)
    check_close(val(t.gradient(x, x)), [1.0, 1.0])


def test_variable_target_raises_value_error():
    v = sg.Variable(1.0)
    with sg.GradientTape() as t:
        _ = v * 2.0
    with pytest.raises(ValueError):
        t.gradient(v, v)


def test_gradient_matches_finite_differences():
    A = rand(4, 3)
    x0 = rand(3)

    def f(x):
        return np.sum(np.tanh(A @ x) ** 2) + np.sum(np.sin(x) * x)

    x = sg.constant(x0)
    with sg.GradientTape() as t:
        t.watch(x)
        y = f(x)
    check_close(val(t.gradient(y, x)), numerical_grad(f, x0))


def test_matmul_and_broadcast_gradients():
    W = sg.Variable(rand(3, 2))
    b = sg.Variable(rand(2))
    x = rand(5, 3)
    with sg.GradientTape() as t:
        y = x @ W + b                       # b is broadcast over 5 rows
        loss = np.mean(y ** 2)
    gW, gb = t.gradient(loss, [W, b])
    yv = x @ W.numpy() + b.numpy()
    dy = 2 * yv / yv.size
    check_close(val(gW), x.T @ dy)
    check_close(val(gb), dy.sum(axis=0))


def test_indexing_gradient_scatters():
    x = sg.constant(np.arange(6.0).reshape(2, 3))
    with sg.GradientTape() as t:
        t.watch(x)
        y = x[0, 1] * 2.0 + np.sum(x[1, ::2] ** 2) + np.sum(x[:, 2])
    expected = np.zeros((2, 3))
    expected[0, 1] += 2.0
    expected[1, 0] += 2 * 3.0
    expected[1, 2] += 2 * 5.0
    expected[:, 2] += 1.0
    check_close(val(t.gradient(y, x)), expected)


# ================================================================ persistent

def test_persistent_allows_many_gradients():
    x = sg.constant(3.0)
    with sg.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        z = y * y
    check_close(val(t.gradient(z, x)), 108.0)
    check_close(val(t.gradient(y, x)), 6.0)
    check_close(val(t.gradient(z, x)), 108.0)
    check_close(val(t.jacobian(z, x)), 108.0)


def test_non_persistent_second_gradient_raises_runtime_error():
    x = sg.constant(3.0)
    with sg.GradientTape() as t:
        t.watch(x)
        y = x * x
    check_close(val(t.gradient(y, x)), 6.0)
    with pytest.raises(RuntimeError):
        t.gradient(y, x)


def test_non_persistent_jacobian_after_gradient_raises_runtime_error():
    x = sg.constant([1.0, 2.0])
    with sg.GradientTape() as t:
        t.watch(x)
        y = x * x
    t.gradient(y, x)
    with pytest.raises(RuntimeError):
        t.jacobian(y, x)


def test_non_persistent_second_jacobian_raises_runtime_error():
    x = sg.constant([1.0, 2.0])
    with sg.GradientTape() as t:
        t.watch(x)
        y = x * x
    check_close(val(t.jacobian(y, x)), [[2.0, 0.0], [0.0, 4.0]])
    with pytest.raises(RuntimeError):
        t.jacobian(y, x)


# ========================================================== output_gradients

def test_output_gradients_single_target():
    x = sg.constant([1.0, 2.0, 3.0])
    w = np.array([0.5, -1.0, 2.0])
    with sg.GradientTape() as t:
        t.watch(x)
        y = x * x
    check_close(val(t.gradient(y, x, output_gradients=w)), 2 * x.numpy() * w)


def test_output_gradients_as_tensor_and_list_of_targets():
    x = sg.constant([1.0, 2.0])
    with sg.GradientTape() as t:
        t.watch(x)
        y1 = x * x                 # (2,)
        y2 = np.sum(x) * 3.0       # ()
    g = t.gradient([y1, y2], x, output_gradients=[sg.constant([1.0, 10.0]), sg.constant(2.0)])
    check_close(val(g), 2 * x.numpy() * np.array([1.0, 10.0]) + 6.0)


def test_output_gradients_dict_targets_matched_by_key():
    x = sg.constant(2.0)
    with sg.GradientTape() as t:
        t.watch(x)
        targets = {"b": x ** 3, "a": x * 5.0}
    g = t.gradient(targets, x, output_gradients={"b": np.array(2.0), "a": np.array(7.0)})
    check_close(val(g), 2.0 * 12.0 + 7.0 * 5.0)


def test_output_gradients_shape_mismatch_names_both_shapes():
    x = sg.constant(rand(2, 3))
    with sg.GradientTape() as t:
        t.watch(x)
        y = x * 2.0
    with pytest.raises(ValueError) as err:
        t.gradient(y, x, output_gradients=np.ones((3, 2)))
    msg = str(err.value)
    assert "(2, 3)" in msg and "(3, 2)" in msg, msg


def test_output_gradients_structure_mismatch_raises():
    x = sg.constant([1.0, 2.0])
    with sg.GradientTape(persistent=True) as t:
        t.watch(x)
        y1, y2 = x * 2.0, x * 3.0
    with pytest.raises(ValueError):
        t.gradient([y1, y2], x, output_gradients=[np.ones(2)])
    with pytest.raises(ValueError):
        t.gradient(y1, x, output_gradients=[np.ones(2), np.ones(2)])


# ===================================================== unconnected_gradients

@pytest.mark.parametrize("mode", [sg.UnconnectedGradients.ZERO, "zero"])
def test_unconnected_zero(mode):
    x = sg.constant(3.0)
    z = sg.constant([[1.0, 2.0, 3.0]], dtype=np.float32)
    with sg.GradientTape() as t:
        t.watch([x, z])
        y = x * x
    gx, gz = t.gradient(y, [x, z], unconnected_gradients=mode)
    check_close(val(gx), 6.0)
    assert gz.shape == (1, 3) and gz.dtype == np.float32
    np.testing.assert_array_equal(val(gz), np.zeros((1, 3)))


@pytest.mark.parametrize("mode", [sg.UnconnectedGradients.NONE, "none", None])
def test_unconnected_none(mode):
    x, z = sg.constant(3.0), sg.constant(4.0)
    with sg.GradientTape() as t:
        t.watch([x, z])
        y = x * x
    kwargs = {} if mode is None else {"unconnected_gradients": mode}
    gx, gz = t.gradient(y, [x, z], **kwargs)
    check_close(val(gx), 6.0)
    assert gz is None


@pytest.mark.parametrize("bad", ["zeros", "None", 0, "ZERO_"])
def test_unconnected_bad_value_raises_value_error(bad):
    x = sg.constant(3.0)
    with sg.GradientTape() as t:
        t.watch(x)
        y = x * x
    with pytest.raises(ValueError):
        t.gradient(y, x, unconnected_gradients=bad)


def test_unconnected_gradients_enum_values():
    assert sg.UnconnectedGradients.NONE.value == "none"
    assert sg.UnconnectedGradients.ZERO.value == "zero"


# ===================================================================== reset

def test_reset_forgets_what_was_recorded():
    x = sg.Variable(3.0)
    with sg.GradientTape() as t:
        loss = 2.0 * x * x
        t.reset()
        loss = loss + x * x * x
    check_close(val(t.gradient(loss, x)), 27.0)     # 3 x^2 only, not + 4 x


def test_reset_is_like_a_new_tape_for_watched_tensors():
    x = sg.constant(3.0)
    with sg.GradientTape() as t:
        t.watch(x)
        y = x * x
        t.reset()
        z = x * 4.0            # x is no longer watched after reset
        t.watch(x)
        w = x * 5.0
    gy, gz, gw = quiet_gradient(t, [y, z, w], [x, x, x])
    check_close(val(gy), 5.0)
    check_close(val(gz), 5.0)
    check_close(val(gw), 5.0)


def test_reset_in_control_flow():
    x = sg.Variable(2.0)
    with sg.GradientTape() as t:
        loss = x ** 3
        if loss > 5.0:
            t.reset()
            loss = x ** 2
    check_close(val(t.gradient(loss, x)), 4.0)


# ============================================================ stop_recording

def test_stop_recording_ops_inside_are_not_recorded():
    x = sg.Variable(3.0)
    with sg.GradientTape(persistent=True) as t:
        y = x * x
        with t.stop_recording():
            z = x * 10.0
            check_close(val(quiet_gradient(t, y, x)), 6.0)   # the gradient computation is not traced
        w = y + z                    # recorded again after the block
        u = x * 7.0
    check_close(val(t.gradient(w, x)), 6.0)     # z contributes nothing
    assert t.gradient(z, x) is None
    check_close(val(t.gradient(u, x)), 7.0)


def test_stop_recording_never_entered_raises_runtime_error():
    t = sg.GradientTape()
    with pytest.raises(RuntimeError):
        with t.stop_recording():
            pass


def test_stop_recording_after_exit_raises_value_error():
    x = sg.constant(1.0)
    with sg.GradientTape() as t:
        t.watch(x)
        _ = x * x
    with pytest.raises(ValueError, match="Tape is not recording."):
        with t.stop_recording():
            pass


def test_nested_stop_recording_of_same_tape_raises_value_error():
    x = sg.constant(2.0)
    with sg.GradientTape() as t:
        t.watch(x)
        with t.stop_recording():
            with pytest.raises(ValueError, match="Tape is not recording."):
                with t.stop_recording():
                    pass
        y = x * x                    # the outer block restored recording
    check_close(val(t.gradient(y, x)), 4.0)


def test_stop_recording_one_tape_leaves_the_other_recording():
    x = sg.constant(2.0)
    with sg.GradientTape() as outer:
        outer.watch(x)
        with sg.GradientTape() as inner:
            inner.watch(x)
            with inner.stop_recording():
                y = x ** 3
    assert inner.gradient(y, x) is None
    check_close(val(outer.gradient(y, x)), 12.0)


# ========================================================= watched_variables

def test_watched_variables_in_order_of_construction():
    v1 = sg.Variable(1.0, name="v1")
    v2 = sg.Variable(2.0, name="v2")
    v3 = sg.Variable(3.0, name="v3")
    c = sg.constant(4.0)
    frozen = sg.Variable(5.0, trainable=False)
    with sg.GradientTape() as t:
        t.watch(c)                      # a Tensor is not a variable
        y = v3 * v1 * c * frozen        # read v3 before v1
        y = y + v3
    watched = list(t.watched_variables())
    assert len(watched) == 2 and watched[0] is v1 and watched[1] is v3


def test_watched_variables_explicit_watch():
    v1 = sg.Variable(1.0)
    v2 = sg.Variable(2.0, trainable=False)
    with sg.GradientTape(watch_accessed_variables=False) as t:
        t.watch(v2)
        t.watch(v1)
    watched = list(t.watched_variables())
    assert len(watched) == 2 and watched[0] is v1 and watched[1] is v2


def test_watched_variables_empty():
    v = sg.Variable(1.0)
    with sg.GradientTape(watch_accessed_variables=False) as t:
        _ = v * 2.0
    assert list(t.watched_variables()) == []


# ================================================ gradient inside the context

def test_gradient_inside_own_context_non_persistent():
    x = sg.constant(3.0)
    with sg.GradientTape() as t:
        t.watch(x)
        y = x ** 3
        g = quiet_gradient(t, y, x)
    check_close(val(g), 27.0)


def test_gradient_inside_own_context_persistent_can_be_differentiated_again():
    x = sg.constant(3.0)
    with sg.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x ** 3
        g = quiet_gradient(t, y, x)        # recorded on t itself
    check_close(val(g), 27.0)
    check_close(val(t.gradient(g, x)), 18.0)   # 6 x


# ================================================================== jacobian

def test_jacobian_shape_and_values_vector():
    A = rand(2, 3)
    x0 = rand(3)

    def f(x):
        return np.tanh(A @ x) * np.sum(x ** 2)

    x = sg.constant(x0)
    with sg.GradientTape() as t:
        t.watch(x)
        y = f(x)
    j = t.jacobian(y, x)
    assert j.shape == (2, 3)
    check_close(val(j), numerical_jacobian(f, x0))


def test_jacobian_shape_and_values_matrix():
    W = rand(3, 4)
    x0 = rand(2, 3)

    def f(x):
        return np.sin(x @ W)

    x = sg.constant(x0)
    with sg.GradientTape() as t:
        t.watch(x)
        y = f(x)
    j = t.jacobian(y, x)
    assert j.shape == (2, 4, 2, 3)
    check_close(val(j), numerical_jacobian(f, x0))


def test_jacobian_of_scalar_target_is_the_gradient():
    x0 = rand(2, 2)
    x = sg.constant(x0)
    with sg.GradientTape() as t:
        t.watch(x)
        y = np.sum(np.exp(x))
    j = t.jacobian(y, x)
    assert j.shape == (2, 2)
    check_close(val(j), np.exp(x0))


def test_jacobian_list_of_sources_and_unconnected():
    x0, w0 = rand(3), rand(3)
    x, w, u = sg.constant(x0), sg.Variable(w0), sg.constant(rand(2))
    with sg.GradientTape(persistent=True) as t:
        t.watch([x, u])
        y = x * w * 2.0
    jx, jw, ju = t.jacobian(y, [x, w, u])
    assert jx.shape == (3, 3) and jw.shape == (3, 3)
    check_close(val(jx), np.diag(2 * w0))
    check_close(val(jw), np.diag(2 * x0))
    assert ju is None
    jd = t.jacobian(y, {"u": u, "x": x}, unconnected_gradients="zero")
    assert set(jd) == {"u", "x"}
    assert jd["u"].shape == (3, 2)
    np.testing.assert_array_equal(val(jd["u"]), np.zeros((3, 2)))
    check_close(val(jd["x"]), np.diag(2 * w0))
    jz = t.jacobian(y, u, unconnected_gradients=sg.UnconnectedGradients.ZERO)
    np.testing.assert_array_equal(val(jz), np.zeros((3, 2)))
    assert t.jacobian(y, u, unconnected_gradients=sg.UnconnectedGradients.NONE) is None
    with pytest.raises(ValueError):
        t.jacobian(y, u, unconnected_gradients="zeros")


def test_jacobian_without_pfor():
    x = sg.constant([1.0, 2.0])
    with sg.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x ** 3
    check_close(val(t.jacobian(y, x, experimental_use_pfor=False)), np.diag([3.0, 12.0]))
    with sg.GradientTape() as t2:
        t2.watch(x)
        y = x ** 3
    with pytest.raises(RuntimeError):
        t2.jacobian(y, x, experimental_use_pfor=False)


# ============================================================ batch_jacobian

def test_batch_jacobian_document_example():
    with sg.GradientTape() as g:
        x = sg.constant([[1.0, 2.0], [3.0, 4.0]])
        g.watch(x)
        y = x * x
    bj = g.batch_jacobian(y, x)
    assert bj.shape == (2, 2, 2)
    check_close(val(bj), [[[2, 0], [0, 4]], [[6, 0], [0, 8]]])


def test_batch_jacobian_values_vs_per_example_finite_differences():
    W = rand(3, 2)
    x0 = rand(4, 3)

    def f1(xi):                      # one example: (3,) -> (2,)
        return np.tanh(xi @ W) * np.sum(xi ** 2)

    x = sg.constant(x0)
    with sg.GradientTape() as t:
        t.watch(x)
        y = np.tanh(x @ W) * np.sum(x ** 2, axis=1, keepdims=True)
    bj = t.batch_jacobian(y, x)
    assert bj.shape == (4, 2, 3)
    expected = np.stack([numerical_jacobian(f1, x0[i]) for i in range(4)])
    check_close(val(bj), expected)


def test_batch_jacobian_higher_rank():
    x0 = rand(3, 2, 2)

    c = np.array([1.0, -2.0, 0.5])

    def f1(xi):                      # (2, 2) -> (2, 2, 3)
        return (xi @ xi)[..., None] * c + np.sin(xi)[..., None]

    x = sg.constant(x0)
    with sg.GradientTape() as t:
        t.watch(x)
        y = (x @ x)[..., None] * c + np.sin(x)[..., None]
    bj = t.batch_jacobian(y, x)
    assert bj.shape == (3, 2, 2, 3, 2, 2)
    expected = np.stack([numerical_jacobian(f1, x0[i]) for i in range(3)])
    check_close(val(bj), expected)


def test_batch_jacobian_mismatched_first_dimension_raises():
    x = sg.constant(rand(3, 2))
    with sg.GradientTape() as t:
        t.watch(x)
        y = x[:2] * 2.0
    with pytest.raises(ValueError):
        t.batch_jacobian(y, x)


def test_batch_jacobian_unconnected_target_gives_zeros():
    x = sg.constant(rand(4, 3))
    z = sg.constant(rand(4, 2))
    with sg.GradientTape() as t:
        t.watch([x, z])
        y = z * 2.0
    bj = t.batch_jacobian(y, x)
    assert bj.shape == (4, 2, 3)
    np.testing.assert_array_equal(val(bj), np.zeros((4, 2, 3)))


# ============================================================== nested tapes

def _quartic(x):
    return x ** 4


def _sinx(x):
    return np.sin(x) * x


QUARTIC = (_quartic,
           lambda x: 4 * x ** 3, lambda x: 12 * x ** 2, lambda x: 24 * x)
SINX = (_sinx,
        lambda x: np.cos(x) * x + np.sin(x),
        lambda x: -np.sin(x) * x + 2 * np.cos(x),
        lambda x: -np.cos(x) * x - 3 * np.sin(x))


@sg.function
def quartic_fn(x):
    return x ** 4


def _sin_helper(x):                 # not decorated: transformed because quartic/sinx_fn call it
    return np.sin(x)


@sg.function
def sinx_fn(x):
    s = _sin_helper(x)
    return s * x


def _third_order(f, x0):
    x = sg.constant(x0)
    with sg.GradientTape() as t1:
        t1.watch(x)
        with sg.GradientTape() as t2:
            t2.watch(x)
            with sg.GradientTape() as t3:
                t3.watch(x)
                y = f(x)
            d1 = t3.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t1.gradient(d2, x)
    return y, d1, d2, d3


@pytest.mark.parametrize("spec", [QUARTIC, SINX], ids=["x**4", "sin(x)*x"])
@pytest.mark.parametrize("x0", [1.5, np.array([-0.7, 0.3, 2.0])], ids=["scalar", "vector"])
def test_third_order_op_by_op(spec, x0):
    f, f1, f2, f3 = spec
    y, d1, d2, d3 = _third_order(f, x0)
    check_close(val(y), f(np.asarray(x0)))
    check_close(val(d1), f1(np.asarray(x0)))
    check_close(val(d2), f2(np.asarray(x0)))
    check_close(val(d3), f3(np.asarray(x0)))


@pytest.mark.parametrize("spec", [(quartic_fn,) + QUARTIC[1:], (sinx_fn,) + SINX[1:]],
                         ids=["x**4", "sin(x)*x"])
@pytest.mark.parametrize("x0", [1.5, np.array([-0.7, 0.3, 2.0])], ids=["scalar", "vector"])
def test_third_order_through_function(spec, x0):
    f, f1, f2, f3 = spec
    y, d1, d2, d3 = _third_order(f, x0)
    ref = QUARTIC[0] if f is quartic_fn else SINX[0]
    assert isinstance(y, sg.Tensor)
    check_close(val(y), ref(np.asarray(x0)))
    check_close(val(d1), f1(np.asarray(x0)))
    check_close(val(d2), f2(np.asarray(x0)))
    check_close(val(d3), f3(np.asarray(x0)))


def _cube(v):
    return v ** 3


@pytest.mark.parametrize("f", [_cube, sg.function(_cube)], ids=["op", "function"])
def test_higher_order_with_a_variable(f):
    v = sg.Variable(2.0)
    with sg.GradientTape() as t1:
        with sg.GradientTape() as t2:
            with sg.GradientTape() as t3:
                y = f(v)
            d1 = t3.gradient(y, v)
        d2 = t2.gradient(d1, v)
    d3 = t1.gradient(d2, v)
    check_close(val(d1), 12.0)     # 3 v^2
    check_close(val(d2), 12.0)     # 6 v
    check_close(val(d3), 6.0)


def test_mixed_second_partials():
    x, y = sg.constant(1.5), sg.constant(-0.5)
    with sg.GradientTape(persistent=True) as outer:
        outer.watch([x, y])
        with sg.GradientTape() as inner:
            inner.watch([x, y])
            f = x ** 2 * y ** 3 + np.sin(x * y)
        fx, fy = inner.gradient(f, [x, y])
    fxx, fxy = outer.gradient(fx, [x, y])
    fyx, fyy = outer.gradient(fy, [x, y])
    a, b = 1.5, -0.5
    check_close(val(fx), 2 * a * b ** 3 + b * np.cos(a * b))
    check_close(val(fy), 3 * a ** 2 * b ** 2 + a * np.cos(a * b))
    check_close(val(fxx), 2 * b ** 3 - b * b * np.sin(a * b))
    check_close(val(fxy), 6 * a * b ** 2 + np.cos(a * b) - a * b * np.sin(a * b))
    check_close(val(fyx), val(fxy))
    check_close(val(fyy), 6 * a ** 2 * b - a * a * np.sin(a * b))


def test_hessian_by_jacobian_of_gradient():
    A = rand(3, 3)
    x0 = rand(3)

    def f(x):
        return np.sum(np.tanh(A @ x) ** 2)

    def grad_f(x):
        return numerical_grad(f, x)

    x = sg.constant(x0)
    with sg.GradientTape() as outer:
        outer.watch(x)
        with sg.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
    h = outer.jacobian(g, x)
    assert h.shape == (3, 3)
    check_close(val(g), numerical_grad(f, x0))
    check_close(val(h), numerical_jacobian(grad_f, x0, eps=1e-4), rtol=1e-4, atol=1e-5)
    check_close(val(h), val(h).T, rtol=1e-10, atol=1e-12)


# ===================================================== @sg.function on a tape

class _Affine:
    def __init__(self):
        self.kernel = sg.Variable([[1.0, -2.0], [0.5, 3.0]])
        self.bias = sg.Variable([0.1, -0.2])

    @sg.function
    def __call__(self, x):
        return np.tanh(x @ self.kernel + self.bias)


def test_function_reads_attribute_variables_as_inputs():
    layer = _Affine()
    x0 = np.array([[0.3, -0.4], [1.0, 0.2]])
    with sg.GradientTape() as t:
        y = np.sum(layer(sg.constant(x0)) ** 2)
    gk, gb = t.gradient(y, [layer.kernel, layer.bias])
    k0, b0 = layer.kernel.numpy(), layer.bias.numpy()
    check_close(val(gk), numerical_grad(lambda k: np.sum(np.tanh(x0 @ k + b0) ** 2), k0))
    check_close(val(gb), numerical_grad(lambda b: np.sum(np.tanh(x0 @ k0 + b) ** 2), b0))


def test_function_reads_closure_variable_as_input():
    w = sg.Variable([2.0, -1.0])

    @sg.function
    def f(x):
        return np.sum(np.sin(x * w))

    x0 = np.array([0.5, 1.5])
    with sg.GradientTape() as t:
        y = f(sg.constant(x0))
    check_close(val(t.gradient(y, w)), x0 * np.cos(x0 * w.numpy()))


def test_function_inside_tape_with_unwatched_inputs_gives_none():
    x = sg.constant(2.0)
    with sg.GradientTape() as t:
        y = quartic_fn(x)
    check_close(val(y), 16.0)
    assert t.gradient(y, x) is None


# ============================================================ thread-locality

def test_tape_does_not_record_ops_of_another_thread():
    x = sg.constant(3.0)
    v = sg.Variable(2.0)
    out = {}

    def worker():
        out["z"] = x * x * x
        out["w"] = v * v

    with sg.GradientTape(persistent=True) as t:
        t.watch(x)
        th = threading.Thread(target=worker)
        th.start()
        th.join()
        y = x * 5.0
    check_close(val(t.gradient(y, x)), 5.0)
    assert t.gradient(out["z"], x) is None
    assert t.gradient(out["w"], v) is None
    assert list(t.watched_variables()) == []     # v was read in the other thread only


def test_concurrent_tapes_in_two_threads_are_independent():
    x = sg.constant(1.5)
    barrier = threading.Barrier(2, timeout=10)
    results, errors = {}, []

    def run(name, f):
        try:
            with sg.GradientTape(persistent=True) as t:
                t.watch(x)
                barrier.wait()          # both tapes are recording now
                y = f(x)
                barrier.wait()          # both have computed
                results[name] = (t, y)
        except Exception as e:          # pragma: no cover - reported below
            errors.append(e)

    ths = [threading.Thread(target=run, args=("cube", lambda x: x ** 3)),
           threading.Thread(target=run, args=("sin", np.sin))]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    assert not errors, errors
    tc, yc = results["cube"]
    ts, ys = results["sin"]
    check_close(val(tc.gradient(yc, x)), 3 * 1.5 ** 2)
    check_close(val(ts.gradient(ys, x)), np.cos(1.5))
    assert tc.gradient(ys, x) is None
    assert ts.gradient(yc, x) is None


# ============================================================ dtypes

def test_float32_input_gives_float32_gradient():
    x = sg.constant([1.0, 2.0, 3.0], dtype=np.float32)
    assert x.dtype == np.float32
    with sg.GradientTape() as t:
        t.watch(x)
        y = np.sum(x * x * 2.0)
    g = t.gradient(y, x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(val(g), [4.0, 8.0, 12.0], rtol=1e-6)


def test_float32_variable_gives_float32_gradient():
    v = sg.Variable([0.5, -1.0], dtype=np.float32)
    assert v.dtype == np.float32
    with sg.GradientTape() as t:
        y = np.sum(np.exp(v))
    g = t.gradient(y, v)
    assert g.dtype == np.float32
    np.testing.assert_allclose(val(g), np.exp([0.5, -1.0]), rtol=1e-6)


def test_complex_gradient_follows_tensorflow_convention():
    z0 = 1.0 + 2.0j
    z = sg.constant(z0)
    assert z.dtype == np.complex128
    with sg.GradientTape() as t:
        t.watch(z)
        y = np.abs(z) ** 2
    check_close(val(t.gradient(y, z)), 2 * z0)      # abs(z)**2 -> 2 z (not its conjugate)


# ============================================================ Tensor basics

def test_tensor_repr():
    assert repr(sg.constant(6.0)) == "srcgrad.Tensor(6.0, shape=(), dtype=float64)"
    r = repr(sg.constant([1.0, 2.0]))
    assert r.startswith("srcgrad.Tensor(") and "shape=(2,)" in r and "dtype=float64" in r


def test_tensor_protocol():
    a0 = np.arange(6.0).reshape(2, 3)
    a = sg.constant(a0)
    assert isinstance(a, sg.Tensor)
    assert isinstance(a.numpy(), np.ndarray)
    np.testing.assert_array_equal(a.numpy(), a0)
    assert a.shape == (2, 3) and a.ndim == 2 and a.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(a), a0)
    s = sg.constant(2.5)
    assert s.shape == () and s.ndim == 0 and s.numpy() == 2.5
    assert sg.constant([1, 2]).dtype.kind == "i"
    assert sg.constant(1.0, dtype=np.float32).dtype == np.float32
    assert sg.constant(np.array([1, 2]), dtype=np.float64).dtype == np.float64


def test_constant_copies_its_input():
    arr = np.array([1.0, 2.0])
    c = sg.constant(arr)
    arr[0] = 100.0
    np.testing.assert_array_equal(c.numpy(), [1.0, 2.0])


BINOPS = [operator.add, operator.sub, operator.mul, operator.truediv,
          operator.floordiv, operator.mod, operator.pow]


@pytest.mark.parametrize("op", BINOPS, ids=lambda o: o.__name__)
def test_tensor_arithmetic_operators(op):
    a0 = np.array([[1.5, 2.0, 3.25], [4.0, 5.5, 0.75]])
    b0 = np.array([[0.5, 1.5, 2.0], [3.0, 0.25, 1.25]])
    a, b = sg.constant(a0), sg.constant(b0)
    for got, exp in [(op(a, b), op(a0, b0)), (op(a, 2.0), op(a0, 2.0)),
                     (op(3.0, b), op(3.0, b0)), (op(a, b0), op(a0, b0)), (op(a0, b), op(a0, b0))]:
        assert isinstance(got, sg.Tensor), type(got)
        np.testing.assert_allclose(got.numpy(), exp)


def test_tensor_matmul_and_unary():
    a0, w0 = rand(2, 3), rand(3, 4)
    a, w = sg.constant(a0), sg.constant(w0)
    for got, exp in [(a @ w, a0 @ w0), (a @ w0, a0 @ w0), (a0 @ w, a0 @ w0), (-a, -a0), (abs(a), np.abs(a0))]:
        assert isinstance(got, sg.Tensor)
        np.testing.assert_allclose(got.numpy(), exp)


@pytest.mark.parametrize("op", [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne],
                         ids=lambda o: o.__name__)
def test_tensor_comparisons(op):
    a0 = np.array([1.0, 2.0, 3.0])
    b0 = np.array([2.0, 2.0, 1.0])
    a = sg.constant(a0)
    np.testing.assert_array_equal(np.asarray(op(a, sg.constant(b0))), op(a0, b0))
    np.testing.assert_array_equal(np.asarray(op(a, 2.0)), op(a0, 2.0))
    assert bool(op(sg.constant(1.0), 2.0)) == op(1.0, 2.0)


def test_tensor_indexing():
    a0 = np.arange(12.0).reshape(3, 4)
    a = sg.constant(a0)
    for index in [1, (1, 2), slice(1, None), (slice(None), slice(None, None, 2)), (Ellipsis, -1),
                  [0, 2], a0 > 5.0]:
        got = a[index]
        assert isinstance(got, sg.Tensor)
        np.testing.assert_array_equal(got.numpy(), a0[index])


def test_numpy_dispatch_returns_tensors():
    a0, w0 = rand(2, 3), rand(3, 2)
    a, w = sg.constant(a0), sg.constant(w0)
    for got, exp in [(np.sin(a), np.sin(a0)), (np.sum(a, axis=0), np.sum(a0, axis=0)),
                     (a @ w, a0 @ w0), (np.exp(a), np.exp(a0)), (np.mean(a), np.mean(a0)),
                     (np.maximum(a, 0.0), np.maximum(a0, 0.0)), (np.dot(a, w), a0 @ w0),
                     (np.reshape(a, (3, 2)), a0.reshape(3, 2)), (np.transpose(a), a0.T)]:
        assert isinstance(got, sg.Tensor), type(got)
        np.testing.assert_allclose(got.numpy(), exp)


def test_variable_assign_methods():
    v = sg.Variable([1.0, 2.0], name="weights")
    assert v.name == "weights" and v.trainable is True
    v.assign([3.0, 4.0])
    np.testing.assert_array_equal(v.numpy(), [3.0, 4.0])
    v.assign_add(sg.constant([0.5, 0.5]))
    np.testing.assert_array_equal(v.numpy(), [3.5, 4.5])
    v.assign_sub(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(v.numpy(), [2.5, 2.5])
    assert isinstance(v, sg.Variable) and v.shape == (2,) and v.dtype == np.float64


def test_variable_assign_after_tape_uses_recorded_value():
    v = sg.Variable(3.0)
    with sg.GradientTape() as t:
        y = v * v
    v.assign(10.0)
    check_close(val(t.gradient(y, v)), 6.0)     # the value read when recorded
    check_close(v.numpy(), 10.0)


def test_op_on_variable_returns_tensor_not_variable():
    v = sg.Variable([1.0, 2.0])
    for r in [v + 1.0, v * v, np.sin(v), -v, v[0], v @ np.ones(2), np.sum(v)]:
        assert isinstance(r, sg.Tensor) and not isinstance(r, sg.Variable), type(r)
    np.testing.assert_allclose((v * 3.0).numpy(), [3.0, 6.0])


def test_gradient_descent_with_assign_sub():
    # a Keras-free training loop: minimise (w - 3)^2 with repeated tapes
    w = sg.Variable(0.0)
    for _ in range(50):
        with sg.GradientTape() as t:
            loss = (w - 3.0) ** 2
        w.assign_sub(0.1 * t.gradient(loss, w))
    check_close(w.numpy(), 3.0 * (1 - 0.8 ** 50), rtol=1e-10)


def test_target_computed_before_the_tape_is_unconnected():
    x = sg.constant(2.0)
    y = x * x                           # not recorded: no tape yet
    with sg.GradientTape(persistent=True) as t:
        t.watch(x)
        z = y * x
    assert t.gradient(y, x) is None
    check_close(val(t.gradient(z, x)), 4.0)     # y is a constant to this tape


SCALE = 2.0


@sg.function
def _scaled_product(x, y):
    return SCALE * x * y


def test_repeated_calls_follow_argument_kinds_and_rebinding():
    # call_on_tape's fast path (a plan per argument kinds): each call still gets the code for its
    # own kinds (array, 0-d float64 Variable run as a scalar, complex, Python float, plain array),
    # and a rebound global or a replaced __code__ is seen at the next call
    global SCALE

    def grad_of(x, y, wrt_y=False):
        with sg.GradientTape() as t:
            t.watch([v for v in (x, y) if isinstance(v, sg.Tensor)])
            out = _scaled_product(x, y)
            loss = np.sum(np.real(out * np.conj(out))) if np.iscomplexobj(out.numpy()) else np.sum(out)
        return t.gradient(loss, y if wrt_y else x)

    a, b = np.array([1.0, -2.0, 0.5]), np.array([3.0, 0.25, -1.0])
    for _ in range(3):          # (the later calls take the fast path)
        check_close(grad_of(sg.Variable(a), b).numpy(), 2.0 * b)
        check_close(grad_of(sg.Variable(1.5), sg.Variable(b), wrt_y=True).numpy(), 2.0 * 1.5 * np.ones(3))
        check_close(grad_of(sg.Variable(0.5), 4.0).numpy(), 8.0)
        z = np.array([1.0 + 2.0j, -0.5j])
        # d/dx of sum |2 x z|^2 = 8 x |z|^2 (TF's convention: the conjugate of the Wirtinger derivative, x2)
        check_close(grad_of(sg.Variable(np.array([0.5, 2.0])), z).numpy(), 8.0 * np.array([0.5, 2.0]) * abs(z) ** 2)
    try:
        SCALE = 3.0
        check_close(grad_of(sg.Variable(a), b).numpy(), 3.0 * b)
    finally:
        SCALE = 2.0
    check_close(grad_of(sg.Variable(a), b).numpy(), 2.0 * b)
    original = _scaled_product.python_function.__code__
    try:
        _scaled_product.python_function.__code__ = (lambda x, y: 5.0 * x * y).__code__
        check_close(grad_of(sg.Variable(a), b).numpy(), 5.0 * b)
    finally:
        _scaled_product.python_function.__code__ = original
    check_close(grad_of(sg.Variable(a), b).numpy(), 2.0 * b)


def _noise_of(n):
    return np.random.normal(size=n)


@sg.function
def _cubic_with_noise(x):
    return np.sum(x ** 3 * _noise_of(3))


@sg.function
def _cubic_with_generator(x, rng):
    return np.sum(x ** 3 * rng.normal(size=3))


def test_a_call_drawing_random_numbers_is_not_run_again_for_its_derivatives():
    # tape.jacobian's vectorised code and nested tapes re-run a call's forward sweep: for a function
    # drawing random numbers (in a helper, or from a Generator argument) that drew others, and the
    # Jacobian was taken at other values than the call's, silently (found after a probe)
    x = np.array([0.5, -0.4, 1.1])
    v = sg.Variable(x)
    np.random.seed(0)
    with sg.GradientTape(persistent=True) as tape:
        y = _cubic_with_noise(v)
    after = np.random.rand()
    np.random.seed(0)
    noise = np.random.normal(size=3)
    check_close(tape.jacobian(y, v).numpy(), 3 * x ** 2 * noise)
    check_close(tape.gradient(y, v).numpy(), 3 * x ** 2 * noise)
    assert after == np.random.rand()            # (nothing drawn again)
    with sg.GradientTape(persistent=True) as tape:
        y = _cubic_with_generator(v, np.random.default_rng(5))
    check_close(tape.jacobian(y, v).numpy(), 3 * x ** 2 * np.random.default_rng(5).normal(size=3))
    with sg.GradientTape() as outer:
        with sg.GradientTape() as inner:
            y = _cubic_with_noise(v)
        with pytest.raises(NotImplementedError, match="draws random numbers"):
            inner.gradient(y, v)
