"""Three rewrites of the reverse sweep that keep its values (the same
bits as the generated code before them, and as the op-by-op tape):
- `x * x` differentiated as np.square: `g * (2.0 * x)`, not `g * x + g * x`;
- np.mean's adjoint divides before broadcasting: `unreduce(g / n, x, ...)`;
- a full reduction's cotangent broadcast twice (`np.mean(np.sum(a, axis=1))`)
  is broadcast once (optimize.merge_unreduces).
Checked against central differences, autograd and the tape's op-by-op
gradient, in float64 and float32."""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_jacobian

RNG = np.random.default_rng(11)


def l2_penalty(w, b):
    return 0.5 * np.sum(w * w) + np.sum(b * b) * 3.0


def mean_of_row_sums(p, y):
    return -np.mean(np.sum(y * np.log(p), axis=1))


def mean_over_axis(x):
    return np.sum(np.mean(np.tanh(x), axis=0) ** 2)


def nested_sums(x):
    return np.sum(np.sum(x * x, axis=1)) + np.mean(np.mean(np.sin(x), axis=0))


def square_in_loop(x):
    acc = 0.0
    for k in range(3):
        d = x - k
        acc = acc + np.sum(d * d)
    return acc


CASES = [
    ("l2_penalty", l2_penalty, lambda: (RNG.normal(size=(4, 3)), RNG.normal(size=3))),
    ("mean_of_row_sums", mean_of_row_sums, lambda: (RNG.uniform(0.2, 1.0, (5, 4)), RNG.uniform(size=(5, 4)))),
    ("mean_over_axis", mean_over_axis, lambda: (RNG.normal(size=(6, 3)),)),
    ("nested_sums", nested_sums, lambda: (RNG.normal(size=(3, 5)),)),
    ("square_in_loop", square_in_loop, lambda: (RNG.normal(size=4),)),
]


def _autograd(fn, args):
    import test_scalar_broadcasts as me
    saved = me.np
    me.np = anp
    try:
        return autograd.grad(fn)(*args)
    finally:
        me.np = saved


def _taped(fn, args, dtype):
    xs = [sg.constant(np.asarray(a, dtype=dtype)) for a in args]
    with sg.GradientTape() as tape:
        tape.watch(xs[0])
        y = fn(*xs)
    return tape.gradient(y, xs[0]).numpy()


@pytest.mark.parametrize("name, fn, make", CASES, ids=[c[0] for c in CASES])
def test_values_against_fd_autograd_and_the_tape(name, fn, make):
    args = make()
    g = sg.grad(fn)(*args)
    check_close(g, numerical_jacobian(lambda a: fn(a, *args[1:]), args[0]), rtol=1e-6, atol=1e-8)
    check_close(g, _autograd(fn, args), rtol=1e-14, atol=1e-15)
    check_close(g, _taped(fn, args, np.float64), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("name, fn, make", CASES, ids=[c[0] for c in CASES])
def test_float32_keeps_its_dtype(name, fn, make):
    args = [np.asarray(a, dtype=np.float32) for a in make()]
    g = sg.grad(fn)(*args)
    assert g.dtype == np.float32
    check_close(g, _taped(fn, args, np.float32), rtol=2e-6, atol=1e-6)


def test_the_generated_code_uses_the_rewrites():
    src = sg.source(l2_penalty, args=(np.ones((4, 3)), np.ones(3)))
    # (the doubling moved onto the 0-d cotangent: one pass over w, optimize._rewrite_product)
    assert "w * (bsum_1 * 2.0)" in src and "bmul_w * w" not in src, src
    src = sg.source(mean_of_row_sums, args=(np.ones((5, 4)), np.ones((5, 4))))
    # the mean's cotangent broadcast once, by the product with y (optimize.unreduces_in_products)
    assert "unreduce(" not in src and "y * (bmean / reduction_size(reduced_shape(y, 1, False), 0.0))" in src, src
    src = sg.source(mean_over_axis, args=(np.ones((6, 3)),))
    assert "unreduce(bmean / reduction_size(tanh_x, mean), tanh_x, 0, False)" in src, src


def test_square_bits_equal_the_product_rule():
    """g * (2.0 * x) and g * x + g * x are the same numbers (doubling is exact)."""
    x = RNG.normal(size=1000) * 10.0 ** RNG.integers(-30, 30, 1000)
    g = RNG.normal(size=1000)
    np.testing.assert_array_equal(g * (2.0 * x), g * x + g * x)
    compiled = sg.grad(lambda v: np.sum(v * v * g))(x)
    np.testing.assert_array_equal(compiled, _taped(lambda v: np.sum(v * v * g), [x], np.float64))
