"""Temporary elision (transforms/inplace.py `elide_temporaries`,
rules/helpers/elementwise.py `binop_into`): the generated code's `t = x @ W;
y = t + b`, where nothing reads the product again, writes the sum into the
product's buffer, as NumPy does for `x @ W + b` written as one expression.

Checked: the rewrite happens where the product is dead and not where it is
read again; the helper writes in place only for large writeable float arrays
whose shape and dtype the result keeps (else the plain operator, with the
same value and dtype); gradients equal central differences and autograd's
with the helper writing in place; the caller's arrays are untouched; second
order through the rewritten code (the operator it stands for, resolve.py);
a persistent tape's two gradients; sg.jit's linked source has the operator
back."""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from srcgrad.rules.helpers import elementwise
from srcgrad.rules.helpers.elementwise import ELIDE_BYTES, binop_into

from gradcheck import check_close, numerical_grad

N_BIG = 96      # a 96 x 384 float64 product is 288 KiB: over NumPy's elision size


def layer(W, b, x):
    h = np.tanh(x @ W + b)
    return np.mean(h * h)


def layer_reread(W, b, x):
    m = x @ W
    y = m + b
    return np.mean(y * m)       # m read again: no elision


def two_layers(W1, W2, x):
    h = np.tanh(x @ W1)
    return np.mean(np.sin(h @ W2 - 0.5))


def _autograd_of(f):
    return type(f)(f.__code__, dict(f.__globals__, np=anp), f.__name__)


def _data(seed=0, n=N_BIG, k=384):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((8, k)) / 3, rng.standard_normal(k), rng.standard_normal((n, 8))


def _gradients_leaving_the_arguments(f, W, b, x):
    """sg.grad of f in all three arguments, checking that the caller's
    arrays are as they were (what is written in place is the generated
    code's own)."""
    copies = [W.copy(), b.copy(), x.copy()]
    grads = sg.grad(f, wrt=(0, 1, 2))(W, b, x)
    for arg, copy in zip((W, b, x), copies):
        np.testing.assert_array_equal(arg, copy)
    return grads


# ----------------------------------------------------------------------- the helper

@pytest.mark.parametrize("op", ["+", "-", "*", "/"])
@pytest.mark.parametrize("k", [0, 1])
def test_helper_writes_in_place_for_large_arrays(op, k):
    rng = np.random.default_rng(1)
    t = rng.standard_normal((200, 200)) + 3.0            # 320 KB, held by this name only
    other = rng.standard_normal(200) + 3.0
    before = t.copy()
    expected = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide}[op](
        *((before, other) if k == 0 else (other, before)))
    out = binop_into(op, t, other, 0) if k == 0 else binop_into(op, other, t, 1)
    assert out is t
    np.testing.assert_array_equal(out, expected)


def test_an_array_held_elsewhere_is_not_written():
    # what the compiler takes for a new array may be kept by someone else (a user's __matmul__
    # returning an array it holds): the reference count tells
    t = np.random.default_rng(2).standard_normal((200, 200))
    holder = [t]
    before = t.copy()
    out = binop_into("+", t, 1.0, 0)
    assert out is not t and holder[0] is t
    np.testing.assert_array_equal(t, before)
    np.testing.assert_array_equal(out, before + 1.0)


def test_helper_keeps_the_operator_elsewhere():
    rng = np.random.default_rng(2)
    big = rng.standard_normal((200, 200))
    small = rng.standard_normal((10, 10))
    cases = [
        (small, 1.0),                                       # under the elision size
        (big.astype(np.float32), big),                      # the result is float64
        (np.ones((40000, 1)), np.ones((1, 2))),             # the result is larger
        (big.T, 1.0),                                       # a view
        (np.arange(40000).reshape(200, 200), 2),            # integers
        (big.copy(), [1.0] * 200),                          # a list: the operator's dispatch
    ]
    frozen = big.copy()
    frozen.flags.writeable = False
    cases.append((frozen, 1.0))
    for t, other in cases:
        before = np.array(t, copy=True)
        out = binop_into("+", t, other, 0)
        expected = before + other
        assert out is not t
        assert out.dtype == expected.dtype and out.shape == expected.shape
        np.testing.assert_array_equal(out, expected)
        np.testing.assert_array_equal(t, before)            # the operand is as it was
    assert big.nbytes >= ELIDE_BYTES


# ----------------------------------------------------------------------- the pass

def test_the_rewrite_happens_where_the_product_is_dead():
    W, b, x = _data()
    source = sg.source(layer, wrt=(0, 1), args=(W, b, x))
    assert "binop_into('+', matmul_x, b, 0)" in source
    assert "binop_into" not in sg.source(layer_reread, wrt=(0, 1), args=(W, b, x)).split("# Reverse sweep")[0]


@pytest.mark.parametrize("f", [layer, layer_reread])
def test_gradients_with_the_write_in_place(f, monkeypatch):
    W, b, x = _data(3)
    hits = []
    real = elementwise.binop_into

    def spy(op, a, b_, k):
        out = real(op, a, b_, k)
        hits.append(out is (b_ if k else a))
        return out
    monkeypatch.setattr(elementwise, "binop_into", spy)
    # (the spy's own parameter is one more reference to the temporary than the generated code holds)
    monkeypatch.setattr(elementwise, "_TEMPORARY_REFS", elementwise._TEMPORARY_REFS + 1)
    grads = _gradients_leaving_the_arguments(f, W, b, x)
    if f is layer:
        assert hits and all(hits)                           # it did write in place
    expected = autograd.grad(_autograd_of(f), argnum=(0, 1, 2))(W, b, x)
    for g, e in zip(grads, expected):
        check_close(g, e, rtol=1e-10, atol=1e-12)
    check_close(grads[1], numerical_grad(lambda v: f(W, v, x), b), rtol=1e-5, atol=1e-6)


def test_two_layers_against_central_differences():
    rng = np.random.default_rng(4)
    W1, W2, x = rng.standard_normal((8, 300)) / 3, rng.standard_normal((300, 4)) / 10, rng.standard_normal((120, 8))
    source = sg.source(two_layers, wrt=(0, 1), args=(W1, W2, x))
    assert "binop_into('-', matmul_h, 0.5, 0)" in source and "binop_into('*'" in source
    g1, g2 = sg.grad(two_layers, wrt=(0, 1))(W1, W2, x)
    e1, e2 = autograd.grad(_autograd_of(two_layers), argnum=(0, 1))(W1, W2, x)
    check_close(g1, e1, rtol=1e-10, atol=1e-12)
    check_close(g2, e2, rtol=1e-10, atol=1e-12)
    check_close(g2[:2], numerical_grad(lambda v: two_layers(W1, np.concatenate([v, W2[2:]]), x), W2[:2]))


def test_second_order_through_the_rewritten_code():
    # the gradient's code holds binop_into; differentiated again it is the operator
    rng = np.random.default_rng(5)
    W, b, x = rng.standard_normal((3, 4)) / 2, rng.standard_normal(4), rng.standard_normal((5, 3))
    assert "binop_into" in sg.source(layer, wrt=0, args=(W, b, x))
    hessian = sg.hessian(layer, wrt=0)(W, b, x)
    expected = autograd.hessian(_autograd_of(layer), argnum=0)(W, b, x)
    check_close(hessian, expected, rtol=1e-9, atol=1e-11)
    check_close(hessian, numerical_grad(lambda v: sg.grad(layer, wrt=0)(v, b, x), W), rtol=1e-5, atol=1e-6)


def test_persistent_tape_twice():
    W, b, x = _data(6)
    fn = sg.function(layer)
    Wv, bv = sg.Variable(W), sg.Variable(b)
    with sg.GradientTape(persistent=True) as tape:
        y = fn(Wv, bv, x)
    first = tape.gradient(y, [Wv, bv])
    second = tape.gradient(y, [Wv, bv])
    expected = autograd.grad(_autograd_of(layer), argnum=(0, 1))(W, b, x)
    for g1, g2, e in zip(first, second, expected):
        check_close(g1, e, rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(g1, g2)


def test_sg_jit_compiles_the_operator():
    pytest.importorskip("numba")
    W, b, x = _data(7)
    assert "binop_into" in sg.source(layer, wrt=(0, 1), args=(W, b, x))
    lowered = sg.source(layer, wrt=(0, 1), args=(W, b, x), jit=True)
    assert "binop_into" not in lowered and "matmul_x + b" in lowered
    gW, gb = sg.jit(sg.grad(layer, wrt=(0, 1)))(W, b, x)
    eW, eb = autograd.grad(_autograd_of(layer), argnum=(0, 1))(W, b, x)
    check_close(gW, eW, rtol=1e-10, atol=1e-12)
    check_close(gb, eb, rtol=1e-10, atol=1e-12)


def rnn(W, U, xs):
    h = np.zeros((xs.shape[1], U.shape[0]))
    for x in xs:
        h = np.tanh(x @ W + h @ U)
    return np.mean(h * h)


def test_in_a_loop_and_on_a_tape():
    # 128 x 300 products (300 KiB) at each step: written into in place in the loop, on a tape too
    rng = np.random.default_rng(8)
    W, U, xs = rng.standard_normal((6, 300)) / 3, rng.standard_normal((300, 300)) / 30, rng.standard_normal((3, 128, 6))
    source = sg.source(rnn, wrt=(0, 1), args=(W, U, xs))
    loop = source[source.index("for "):source.index("# Reverse sweep")]
    assert "binop_into('+'" in loop
    expected = autograd.grad(_autograd_of(rnn), argnum=(0, 1))(W, U, xs)
    grads = sg.grad(rnn, wrt=(0, 1))(W, U, xs)
    for g, e in zip(grads, expected):
        check_close(g, e, rtol=1e-10, atol=1e-12)
    Wv, Uv = sg.Variable(W), sg.Variable(U)
    with sg.GradientTape() as tape:
        y = sg.function(rnn)(Wv, Uv, xs)
    for g, e in zip(tape.gradient(y, [Wv, Uv]), expected):
        check_close(g, e, rtol=1e-10, atol=1e-12)
    check_close(grads[0][:1], numerical_grad(lambda v: rnn(np.concatenate([v, W[1:]]), U, xs), W[:1]))


# ----------------------------------------------------------------------- ufuncs (ufunc_into)

def test_ufunc_into_writes_in_place_for_large_arrays():
    rng = np.random.default_rng(11)
    for f in sorted(elementwise.UNARY_INTO, key=lambda u: u.__name__):
        t = rng.uniform(0.5, 1.5, (200, 200))      # 320 KB, held by this name only (in every ufunc's domain)
        expected = f(t.copy())
        out = elementwise.ufunc_into(f, t)
        assert out is t, f
        np.testing.assert_array_equal(out, expected)


def test_ufunc_into_keeps_the_call_elsewhere():
    rng = np.random.default_rng(12)
    big = rng.standard_normal((200, 200))
    frozen = big.copy()
    frozen.flags.writeable = False
    cases = [(np.tanh, big[:10, :10].copy()),                       # under the elision size
             (np.tanh, big.T),                                      # a view
             (np.tanh, frozen),                                     # read-only
             (np.tanh, np.arange(40000).reshape(200, 200)),         # integers: tanh gives floats
             (np.abs, big + 1j * big),                              # complex -> float: not in UNARY_INTO
             (np.floor, big.copy())]                                # not in UNARY_INTO
    for f, t in cases:
        before = np.array(t, copy=True)
        out = elementwise.ufunc_into(f, t)
        expected = f(before)
        assert out is not t
        assert out.dtype == expected.dtype
        np.testing.assert_array_equal(out, expected)
        np.testing.assert_array_equal(t, before)
    held = big.copy()
    holder = [held]
    out = elementwise.ufunc_into(np.exp, held)
    assert out is not held and holder[0] is held
    np.testing.assert_array_equal(held, big)


def layer_exp(W, b, x):
    h = np.tanh(x @ W + b)
    e = np.exp(0.1 * (x @ W))       # a ufunc of an elided product's result: into the product's buffer too
    return np.mean(h * e)


def layer_tanh_reread(W, b, x):
    z = x @ W + b
    return np.mean(np.tanh(z) * z)      # z read again: no write into it


@pytest.mark.parametrize("f", [layer, layer_exp, layer_tanh_reread])
def test_a_ufunc_of_a_dead_product_writes_into_it(f, monkeypatch):
    W, b, x = _data(13)
    reread = f is layer_tanh_reread
    f = type(f)(f.__code__, f.__globals__, f.__name__)     # (a new function: compiled with the spy below)
    source = sg.source(f, wrt=(0, 1), args=(W, b, x))
    forward = source.split("# Reverse sweep")[0]
    if reread:
        assert "ufunc_into" not in forward, forward
    else:
        assert "h = ufunc_into(np.tanh, add)" in forward, forward
    if f.__name__ == "layer_exp":
        assert "ufunc_into(np.exp, mul)" in forward and "binop_into('*', 0.1, matmul_x_1, 1)" in forward, \
            forward
    hits = []
    real = elementwise.ufunc_into

    def spy(fn, a):
        big = a.nbytes >= ELIDE_BYTES
        out = real(fn, a)
        hits.append(big and out is a)
        return out
    monkeypatch.setattr(elementwise, "ufunc_into", spy)
    # (the spy's parameter is one more reference to the temporary than the generated code holds)
    monkeypatch.setattr(elementwise, "_UNARY_TEMPORARY_REFS", elementwise._UNARY_TEMPORARY_REFS + 1)
    grads = _gradients_leaving_the_arguments(f, W, b, x)
    assert (hits and all(hits)) if not reread else not hits
    expected = autograd.grad(_autograd_of(f), argnum=(0, 1, 2))(W, b, x)
    for g, e in zip(grads, expected):
        check_close(g, e, rtol=1e-10, atol=1e-12)
    check_close(grads[1], numerical_grad(lambda v: f(W, v, x), b), rtol=1e-5, atol=1e-6)
    # the op-by-op tape (no rewrite): the same bits
    Wv, bv = sg.Variable(W), sg.Variable(b)
    with sg.GradientTape() as tape:
        y = f(Wv, bv, x)
    for g, t in zip(grads, tape.gradient(y, [Wv, bv])):
        np.testing.assert_array_equal(g, t)


def test_second_order_and_jit_through_ufunc_into():
    W, b, x = _data(14, n=N_BIG, k=300)
    assert "ufunc_into(np.exp" in sg.source(layer_exp, wrt=0, args=(W, b, x))
    v = np.random.default_rng(15).standard_normal(W.shape)
    hv = sg.hvp(layer_exp, wrt=0)(W, b, x, v)
    expected = autograd.hessian_vector_product(_autograd_of(layer_exp), 0)(W, b, x, v)
    check_close(hv, expected, rtol=1e-9, atol=1e-12)
    pytest.importorskip("numba")
    lowered = sg.source(layer_exp, wrt=(0, 1), args=(W, b, x), jit=True)
    assert "ufunc_into" not in lowered and "np.exp(0.1 * matmul_x_1)" in lowered, lowered
    gW, gb = sg.jit(sg.grad(layer_exp, wrt=(0, 1)))(W, b, x)
    eW, eb = autograd.grad(_autograd_of(layer_exp), argnum=(0, 1))(W, b, x)
    check_close(gW, eW, rtol=1e-10, atol=1e-12)
    check_close(gb, eb, rtol=1e-10, atol=1e-12)
