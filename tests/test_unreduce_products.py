"""A reduction's cotangent multiplied by a value of the reduced operand's
shape is multiplied as it is, NumPy's broadcasting doing what `unreduce`
did (transforms/optimize.py, `unreduces_in_products`): `np.sum(W * W)`'s
`unreduce(g, W, None, False) * (2.0 * W)` is `(2.0 * W) * g`, log-softmax's
`unreduce(g, s, 1, True) * e` is `e * g`. Checked: the generated code, the
values against autograd and central differences (float64 bit for bit as
before), float32 operands, and the products the rewrite must leave alone
(an operand of another shape, an axis removed without keepdims)."""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg

from gradcheck import check_close, numerical_grad


def softmax_l2(W, x, y, l2):
    logits = x @ W
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(y * log_probs, axis=1)) + l2 * np.sum(W * W)


def row_weights(x, w):
    return np.sum(x * w)            # w of shape (n,), x (m, n): the cotangent of w is summed over rows


def axis_dropped(x):
    s = np.sum(x, axis=0)           # keepdims False: the cotangent needs an axis inserted
    return np.sum(s * s) + np.sum(x * x)


def _data(dtype=np.float64):
    rng = np.random.default_rng(3)
    W = rng.normal(size=(5, 4)).astype(dtype)
    x = rng.normal(size=(6, 5)).astype(dtype)
    y = np.eye(4)[rng.integers(0, 4, size=6)].astype(dtype)
    return W, x, y


def _swapped(fn):
    return {"softmax_l2": lambda W, x, y, l2: (
        -anp.mean(anp.sum(y * ((x @ W) - anp.max(x @ W, axis=1, keepdims=True)
                               - anp.log(anp.sum(anp.exp((x @ W) - anp.max(x @ W, axis=1, keepdims=True)),
                                                 axis=1, keepdims=True))), axis=1))
        + l2 * anp.sum(W * W)),
        "row_weights": lambda x, w: anp.sum(x * w),
        "axis_dropped": lambda x: anp.sum(anp.sum(x, axis=0) ** 2) + anp.sum(x * x)}[fn.__name__]


def test_the_generated_code_multiplies_the_cotangents_as_they_are():
    W, x, y = _data()
    code = sg.source(softmax_l2, args=(W, x, y, 1e-3))
    assert "unreduce(" not in code, code
    assert "max_chooser(logits, max_logits, 1, True)" in code


def test_values_against_autograd_and_central_differences():
    W, x, y = _data()
    got = sg.grad(softmax_l2)(W, x, y, 1e-3)
    check_close(got, autograd.grad(_swapped(softmax_l2))(W, x, y, 1e-3), rtol=1e-12, atol=1e-14)
    check_close(got, numerical_grad(lambda w: softmax_l2(w, x, y, 1e-3), W), rtol=1e-6, atol=1e-8)
    # the op-by-op tape (its own rules, no rewrite): the same values bit for bit
    Wv = sg.Variable(W)
    with sg.GradientTape() as tape:
        loss = softmax_l2(Wv, x, y, 1e-3)
    np.testing.assert_array_equal(tape.gradient(loss, Wv), got)


def test_float32_operands_keep_their_dtype_and_values():
    W, x, y = _data(np.float32)
    got = sg.grad(softmax_l2)(W, x, y, 1e-3)
    assert got.dtype == np.float32
    expected = autograd.grad(_swapped(softmax_l2))(W.astype(np.float64), x.astype(np.float64),
                                                   y.astype(np.float64), 1e-3)
    check_close(got, expected, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("fn, args", [
    (row_weights, (np.arange(12.0).reshape(3, 4) / 7, np.linspace(-1, 1, 4))),
    (axis_dropped, (np.arange(12.0).reshape(3, 4) / 5 - 1,)),
])
def test_products_of_another_shape_are_left_alone(fn, args):
    wrt = tuple(range(len(args)))
    got = sg.grad(fn, wrt=wrt)(*args)
    got = got if isinstance(got, tuple) else (got,)
    expected = autograd.grad(_swapped(fn), argnum=wrt)(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for g, e in zip(got, expected):
        check_close(g, e, rtol=1e-12, atol=1e-14)
    for i, a in enumerate(args):
        check_close(got[i], numerical_grad(lambda v: fn(*args[:i], v, *args[i + 1:]), a), rtol=1e-6, atol=1e-8)
    if fn is row_weights:
        # w's cotangent: the broadcast of the sum's cotangent times x (of the product's shape), summed
        # over the rows; x's: times w, of another shape, which stays an unreduce
        assert "unreduce(" in sg.source(fn, args=args, wrt=wrt)


def test_hessian_of_the_rewritten_code():
    """Generated code transformed again (the Hessian differentiates the
    gradient's code, with its products rewritten)."""
    W, x, y = _data()
    w0 = W.ravel()

    def flat(w):
        return softmax_l2(np.reshape(w, (5, 4)), x, y, 1e-3)
    got = sg.hessian(flat)(w0)
    expected = autograd.hessian(lambda w: _swapped(softmax_l2)(anp.reshape(w, (5, 4)), x, y, 1e-3))(w0)
    check_close(got, expected, rtol=1e-10, atol=1e-12)


# ------------------------------------------------ an axis removed (keepdims False)

def nearest_centre(points, centres):
    """k-means' cost (GradBench's kmeans): the cotangent of the axis-2 sum
    needs its axis put back, and the square's adjoint is a doubling."""
    dists = np.sum((points[:, None, :] - centres[None, :, :]) ** 2, axis=2)
    return np.sum(np.min(dists, axis=1))


def last_axis_weighted(x, w):
    return np.sum(np.sum(x ** 2, axis=-1) * w)      # a negative axis


def cubes_by_rows(x):
    return np.sum(np.sum(x ** 3, axis=1) ** 2)      # its adjoint's `3 * x ** 2`: not known to be x's shape


def _axis_cases():
    rng = np.random.default_rng(5)
    points = rng.normal(size=(40, 3))
    return [
        (nearest_centre, (points, points[-4:] + 0.1), 1,
         lambda p, c: anp.sum(anp.min(anp.sum((p[:, None, :] - c[None, :, :]) ** 2, axis=2), axis=1))),
        (last_axis_weighted, (rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5))), (0, 1),
         lambda x, w: anp.sum(anp.sum(x ** 2, axis=-1) * w)),
        (cubes_by_rows, (rng.normal(size=(4, 6)),), 0, lambda x: anp.sum(anp.sum(x ** 3, axis=1) ** 2)),
    ]


@pytest.mark.parametrize("fn, args, wrt, reference", _axis_cases(), ids=lambda c: getattr(c, "__name__", ""))
def test_an_axis_removed_is_put_back_by_expand_dims(fn, args, wrt, reference):
    """`unreduce(g, X, axis, False) * Y` is `Y * np.expand_dims(g, axis)`:
    no array of X's shape for the broadcast; a doubling of Y moves onto g.
    The values are those of the op-by-op tape bit for bit (doubling is
    exact, products commute), autograd's and central differences'."""
    code = sg.source(fn, args=args, wrt=wrt if isinstance(wrt, tuple) else (wrt,))
    if fn is cubes_by_rows:
        assert "unreduce(bsum_1, x, 1, False)" in code, code      # (left alone)
    else:
        assert "expand_dims(" in code, code
        assert ", 2, False)" not in code and ", -1, False)" not in code, code
    if fn is nearest_centre:
        # (the product then read by the unbroadcast alone: one contraction, optimize.unbroadcast_products)
        assert "-unbroadcast_product(sub, expand_dims(bdists, 2) * 2, centres_i)" in code, code
    got = sg.grad(fn, wrt=wrt)(*args)
    got = got if isinstance(got, tuple) else (got,)
    expected = autograd.grad(reference, argnum=wrt)(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    wrts = wrt if isinstance(wrt, tuple) else (wrt,)
    variables = [sg.Variable(a) for a in args]
    with sg.GradientTape() as tape:
        out = fn(*variables)
    taped = tape.gradient(out, [variables[i] for i in wrts])
    for g, e, t, i in zip(got, expected, taped, wrts):
        check_close(g, e, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(g, t)
        check_close(g, numerical_grad(lambda v: fn(*args[:i], v, *args[i + 1:]), args[i]), rtol=1e-6, atol=1e-7)


def test_an_axis_put_back_keeps_float32():
    points = np.random.default_rng(2).normal(size=(30, 2)).astype(np.float32)
    centres = points[:3] + np.float32(0.05)
    got = sg.grad(nearest_centre, wrt=1)(points, centres)
    assert got.dtype == np.float32
    expected = autograd.grad(_axis_cases()[0][3], 1)(points.astype(np.float64), centres.astype(np.float64))
    check_close(got, expected, rtol=1e-5, atol=1e-5)


def test_forward_over_reverse_through_expand_dims():
    """The rewritten gradient differentiated again: sg.jvp of sg.grad (the
    Hessian-vector product GradBench's kmeans asks for), and sg.hessian."""
    fn, args, _, reference = _axis_cases()[0]
    points, centres = args
    v = np.random.default_rng(8).normal(size=centres.shape)
    J, Hv = sg.jvp(sg.grad(fn, wrt=1), (points, centres), (None, v))
    check_close(J, autograd.grad(reference, 1)(points, centres), rtol=1e-12, atol=1e-12)
    expected = autograd.hessian_vector_product(reference, 1)(points, centres, v)
    check_close(Hv, expected, rtol=1e-12, atol=1e-12)
    x, w = _axis_cases()[1][1]
    H = sg.hessian(lambda x: last_axis_weighted(x, w))(x)
    check_close(H, autograd.hessian(lambda x: anp.sum(anp.sum(x ** 2, axis=-1) * w))(x), rtol=1e-12, atol=1e-12)


def log_sum_exp_rows(v):
    return np.log(np.sum(np.exp(v), axis=-1))       # a 1-d v: the sum's cotangent is a float


def test_sg_jit_compiles_the_axis_put_back_on_a_float():
    """GradBench's gmm: `expand_dims(g, -1)` of a full reduction's float
    cotangent; Numba's np.expand_dims takes arrays only (the linker gives
    it np.asarray(g)). Compiled, not run in CPython with a warning."""
    pytest.importorskip("numba")
    import warnings
    v = np.linspace(-1.0, 2.0, 7)
    assert "expand_dims(" in sg.source(log_sum_exp_rows, args=(v,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # (a PerformanceWarning: it fell back to CPython)
        jitted = sg.jit(sg.grad(log_sum_exp_rows))
        got = jitted(v)
    lowered = sg.source(log_sum_exp_rows, args=(v,), jit=True)
    assert "expand_dims(asarray(" in lowered, lowered
    check_close(got, autograd.grad(lambda v: anp.log(anp.sum(anp.exp(v), axis=-1)))(v), rtol=1e-12, atol=1e-14)
