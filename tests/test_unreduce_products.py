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
