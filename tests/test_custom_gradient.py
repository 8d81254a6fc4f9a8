"""sg.custom_gradient (tf.custom_gradient semantics) on every path: op by
op, compiled (sg.grad, @sg.function under a tape) and at second order."""
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad


@sg.custom_gradient
def log1pexp(x):
    """The TF documentation's example: a numerically stable gradient."""
    e = np.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))
    return np.log(1 + e), grad


@sg.custom_gradient
def scaled_product(x, y):
    """Deliberately not the true gradient: d/dx gets dy * 2, d/dy gets dy * 3."""
    def grad(dy):
        return dy * 2.0, dy * 3.0
    return x * y, grad


@sg.custom_gradient
def sin_and_cos(x):
    """Two outputs: grad receives one cotangent per output."""
    def grad(ds, dc):
        return ds * np.cos(x) - dc * np.sin(x)
    return (np.sin(x), np.cos(x)), grad


@sg.custom_gradient
def cube(x):
    """A grad_fn written with NumPy ops, so it is differentiable again."""
    def grad(dy):
        return dy * 3.0 * x * x
    return x ** 3, grad


def uses_all(x, y):
    s, c = sin_and_cos(x)
    return np.sum(log1pexp(x * 2.0) + scaled_product(x, y) + s * c)


def expected_uses_all(x, y):
    """The gradients the custom rules define, written out."""
    sig = 1 / (1 + np.exp(-2 * x))
    gx = 2 * sig + 2.0 + (np.cos(x) ** 2 - np.sin(x) ** 2)
    gy = 3.0 * np.ones_like(y)
    return gx, gy


def test_tf_documentation_example_is_stable():
    x = sg.constant(100.0)
    with sg.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    g = tape.gradient(y, x)
    assert float(g.numpy()) == 1.0          # not nan, as in the TF guide
    assert np.isfinite(float(y.numpy()))


@pytest.mark.parametrize("path", ["tape", "function", "grad"])
def test_custom_rules_used_on_every_path(path):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=3), rng.normal(size=3)
    ex, ey = expected_uses_all(x, y)
    if path == "grad":
        gx, gy = sg.grad(uses_all, wrt=(0, 1))(x, y)
    else:
        f = uses_all if path == "tape" else sg.function(uses_all)
        xt, yt = sg.constant(x), sg.constant(y)
        with sg.GradientTape() as tape:
            tape.watch([xt, yt])
            out = f(xt, yt)
        gx, gy = [g.numpy() for g in tape.gradient(out, [xt, yt])]
    check_close(gx, ex, rtol=1e-12, atol=1e-12)
    check_close(gy, ey, rtol=1e-12, atol=1e-12)


def test_value_unchanged_and_no_tape_needed():
    x = np.array([0.5, -1.0])
    check_close(log1pexp(x), np.log1p(np.exp(x)), rtol=1e-15, atol=0)
    s, c = sin_and_cos(x)
    check_close(s, np.sin(x), rtol=1e-15, atol=0)


def test_second_order_through_grad_fn():
    """d2/dx2 x^3 = 6x: the outer tape records grad_fn's NumPy ops."""
    x = sg.constant([0.5, -2.0])
    with sg.GradientTape() as outer:
        outer.watch(x)
        with sg.GradientTape() as inner:
            inner.watch(x)
            y = cube(x)
        g = inner.gradient(y, x)
    h = outer.gradient(g, x)
    check_close(g.numpy(), 3 * x.numpy() ** 2, rtol=1e-12)
    check_close(h.numpy(), 6 * x.numpy(), rtol=1e-12)


def test_true_gradient_rules_match_finite_differences():
    x = np.array([0.3, -0.7, 1.1])
    f = lambda v: np.sum(log1pexp(v) * np.cos(v))   # noqa: E731
    check_close(sg.grad(lambda_free_loss)(x), numerical_grad(lambda_free_loss, x))
    with sg.GradientTape() as tape:
        xt = sg.constant(x)
        tape.watch(xt)
        y = f(xt)
    check_close(tape.gradient(y, xt).numpy(), numerical_grad(f, x))


def lambda_free_loss(v):
    return np.sum(log1pexp(v) * np.cos(v))


def test_bad_return_is_a_clear_error():
    @sg.custom_gradient
    def no_grad_fn(x):
        return x * 2.0

    x = sg.constant([1.0])
    with sg.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(TypeError, match="must return \\(value, grad_fn\\)"):
            no_grad_fn(x)


def test_forward_mode_uses_the_transposed_grad_fn():
    """Inside a ForwardAccumulator the JVP comes from grad_fn (its
    transpose), not from the body: scaled_product's rule says 2 and 3."""
    x, y = sg.constant([1.0, 2.0]), sg.constant([0.5, -1.0])
    with sg.ForwardAccumulator([x, y], [sg.constant([1.0, 0.0]), sg.constant([0.0, 1.0])]) as acc:
        z = scaled_product(x, y)
    check_close(acc.jvp(z).numpy(), np.array([2.0, 3.0]), rtol=1e-12)


def _scaled(fn, x):
    y = fn(x)

    def grad_fn(g):
        return None, g * 3.0 * x * x        # d/dx of x**3: fn is not differentiated
    return y, grad_fn


_scaled_custom = sg.custom_gradient(_scaled)


def test_second_order_with_a_function_argument():
    """A custom_gradient function taking a function (autograd's
    fixed_point(f, a, ...)): at second order its VJP runs op by op with the
    function passed as it is, not as a Tensor."""
    cube = lambda x: x ** 3        # noqa: E731
    d2 = sg.grad(sg.grad(lambda x: _scaled_custom(cube, x)))(2.0)
    assert np.isclose(d2, 6.0 * 2.0)


# ------------------------------------------- list, tuple and dict arguments

@sg.custom_gradient
def pair_product(p, c):
    """A tuple argument: grad_fn returns its gradient as a tuple."""
    a, b = p

    def grad(dy):
        return (dy * b * c, dy * a * c), dy * a * b
    return a * b * c, grad


def _through_pair(x):
    return pair_product((np.sin(x), x ** 2), x)


def _through_pair_expected(x):
    return np.cos(x) * x ** 3 + 3.0 * np.sin(x) * x ** 2


def test_a_tuple_argument_op_by_op_first_and_second_order():
    """Was silently zero: the wrapper watched top-level Tensor arguments
    only, so a Tensor inside a tuple was not an input and the call was not
    recorded (fixed_point(f, (a, x, g), ...) of autograd's misc, second order)."""
    x = sg.Variable(1.3)
    with sg.GradientTape() as outer:
        with sg.GradientTape() as inner:
            y = pair_product((np.sin(x), x ** 2), x)
        g = inner.gradient(y, x)
    check_close(g.numpy(), _through_pair_expected(1.3))
    check_close(outer.gradient(g, x).numpy(), numerical_grad(_through_pair_expected, np.array(1.3)))


def test_a_tuple_argument_compiled_first_and_second_order():
    """Compiled: the custom VJP returns the tuple's gradient as a tuple (its
    adjoints were added as Python tuples, concatenated, at second order)."""
    check_close(sg.grad(_through_pair)(1.3), _through_pair_expected(1.3))
    check_close(sg.grad(sg.grad(_through_pair))(1.3), numerical_grad(_through_pair_expected, np.array(1.3)))


def test_a_tuple_argument_forward_mode():
    y, dy = sg.jvp(_through_pair, (1.3,), (1.0,))
    check_close(y, np.sin(1.3) * 1.3 ** 3)
    check_close(dy, _through_pair_expected(1.3))


def test_a_tuple_argument_agrees_with_autograd():
    autograd = pytest.importorskip("autograd")
    anp = autograd.numpy

    def plain(x):
        return anp.sin(x) * x ** 2 * x
    check_close(sg.grad(sg.grad(_through_pair))(0.7), autograd.grad(autograd.grad(plain))(0.7))
