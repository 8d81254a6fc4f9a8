"""transforms/shapes.py: the adjoint leaves out `unbroadcast(g, x)` where
the argument kinds prove x has the shape of the result (axes of length 1
are part of the key, and broadcasting two axes that are not 1 proves them
equal). The code generated for one pattern of axes of length 1 is never
run on another: each call below is checked against central differences
and autograd, in both orders of patterns, through sg.grad, a tape and
sg.jit."""
import os
import sys
import types

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad, numpy_swapped

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:   # `pytest` run without `python -m`: the checkout's benchmarks/ (the RNN's two forms)
    sys.path.insert(0, ROOT)


def chain(x, w):
    for i in range(3):
        x = x + 0.1 * np.sin(x * w)
    return np.sum(x)


def layer(x, W, b):
    h = np.tanh(x @ W + b)
    m = np.max(h, axis=1, keepdims=True)
    return np.sum((h - m) ** 2) + np.sum(W * W)


def branches(x, w, flag):
    if flag > 0:
        y = x * w
    else:
        y = x + 1.0
    z = y * w
    return np.sum(z * z)


RNG = np.random.default_rng(3)


def _check(f, args, wrt):
    got = sg.grad(f, wrt=wrt)(*args)
    got = got if isinstance(got, tuple) else (got,)
    with numpy_swapped(__name__, anp):
        ag = autograd.grad(f, argnum=wrt)(*args)
    ag = ag if isinstance(ag, tuple) else (ag,)
    for k, g, a in zip(wrt if isinstance(wrt, tuple) else (wrt,), got, ag):
        def along(v, k=k):
            xs = list(args)
            xs[k] = v
            return f(*xs)
        check_close(g, numerical_grad(along, np.asarray(args[k], dtype=np.float64)), rtol=1e-5, atol=1e-7)
        check_close(g, a, rtol=1e-10, atol=1e-12)


def test_elementwise_chain_has_no_unbroadcast_and_is_right():
    x, w = RNG.normal(size=4), RNG.normal(size=4)
    text = sg.source(chain, wrt=(0, 1), args=(x, w))
    assert "unbroadcast" not in text and "ShapeOf" not in text, text
    _check(chain, (x, w), (0, 1))


@pytest.mark.parametrize("order", [(4, 1), (1, 4), (1, 1, 4)])
def test_axes_of_length_one_have_their_own_code(order):
    """w of shape (1,) broadcasts: its cotangent is summed; the code made for
    shape (4,) (where it is not) must not be reused for it, nor the reverse."""
    f = types.FunctionType(chain.__code__, globals())     # (chain itself, with caches of its own)
    for n in order:
        _check(f, (RNG.normal(size=4), RNG.normal(size=n)), (0, 1))
    _check(f, (RNG.normal(size=1), RNG.normal(size=4)), (0, 1))
    _check(f, (RNG.normal(size=1), RNG.normal(size=1)), (0, 1))
    x1, w1 = RNG.normal(size=4), RNG.normal(size=1)
    assert "unbroadcast(bmul_x * x, w)" in sg.source(chain, wrt=(0, 1), args=(x1, w1))


def test_layer_keeps_the_sums_it_needs():
    x, W, b = RNG.normal(size=(5, 3)), RNG.normal(size=(3, 4)), RNG.normal(size=4)
    text = sg.source(layer, wrt=(0, 1, 2), args=(x, W, b))
    assert "unbroadcast(badd, b)" in text and "unbroadcast(bsub_h, m)" in text, text
    assert "unbroadcast(badd, matmul_x)" not in text, text
    _check(layer, (x, W, b), (0, 1, 2))
    _check(layer, (x, W, RNG.normal(size=(1, 4))), (0, 1, 2))
    _check(layer, (RNG.normal(size=(1, 3)), RNG.normal(size=(3, 1)), RNG.normal(size=1)), (0, 1, 2))


@pytest.mark.parametrize("flag", [1.0, -1.0])
@pytest.mark.parametrize("wshape", [(3,), (1,)])
def test_branches(flag, wshape):
    x, w = RNG.normal(size=3), RNG.normal(size=wshape)
    _check(lambda x, w: branches(x, w, flag), (x, w), (0, 1))


def test_tape_and_jit_key_the_pattern():
    compiled = sg.function(chain)
    jitted = sg.jit(sg.grad(chain, wrt=(0, 1)))
    for n in (4, 1, 4):
        x, w = RNG.normal(size=4), RNG.normal(size=n)
        with numpy_swapped(__name__, anp):
            want = autograd.grad(chain, argnum=(0, 1))(x, w)
        vx, vw = sg.Variable(x), sg.Variable(w)
        with sg.GradientTape() as tape:
            y = compiled(vx, vw)
        for g, a in zip(tape.gradient(y, [vx, vw]), want):
            check_close(g, a, rtol=1e-10, atol=1e-12)
        for g, a in zip(jitted(x, w), want):
            check_close(g, a, rtol=1e-10, atol=1e-12)


B = np.array([2.0])


def from_global_or_argument(x, flag):
    if flag > 0:
        y = x * 2.0
    else:
        y = B * 3.0         # a global array: its shape is not known, and may broadcast
    z = y + x
    return np.sum(z * z)


def loop_over_global(x):
    acc = x * 1.0
    for i in range(3):
        acc = acc * 0.5 + B
    return np.sum(acc * x)


@pytest.mark.parametrize("flag", [1.0, -1.0])
def test_names_read_from_globals_have_unknown_shapes(flag):
    x = RNG.normal(size=3)
    _check(from_global_or_argument, (x, flag), (0,))
    _check(loop_over_global, (x,), 0)


def unknown_shape_times_scalars(x, y):
    z = np.concatenate([x, y])[1:]      # a shape the analysis does not spell out
    w = z ** 2 * 3.0 - 1.0              # elementwise with 0-d operands: w has z's shape
    return np.sum(np.tanh(w) * z) + np.sum(w * w)


def test_an_operand_with_only_0d_partners_keeps_its_shape():
    x, y = RNG.normal(size=3), RNG.normal(size=2)
    text = sg.source(unknown_shape_times_scalars, wrt=(0, 1), args=(x, y))
    # z is assigned once: its shape, unknown, is still one shape, which w and tanh(w) have too
    assert "unbroadcast" not in text, text
    assert "bw = w * (bout * 2.0)" in text and "bpow_z = bw * 3.0" in text and "btanh_w = bmul_1 * z" in text, text
    _check(unknown_shape_times_scalars, (x, y), (0, 1))
    _check(unknown_shape_times_scalars, (RNG.normal(size=1), RNG.normal(size=1)), (0, 1))


def reassigned_in_a_loop(x, y):
    z = np.concatenate([x, y])
    for i in range(2):
        z = z[1:] * 2.0         # assigned in a loop: one name, several shapes
        w = z * 3.0
    return np.sum(w * z) + np.sum(z)


def test_a_name_assigned_in_a_loop_has_no_single_shape():
    _check(reassigned_in_a_loop, (RNG.normal(size=3), RNG.normal(size=2)), (0, 1))


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def slices_2d(x, w):
    d = x[:, 1:] - x[:, :-1]                   # one length: n - 1 on axis 1
    e = x[1:-1, 2:] * x[2:, :-2]               # n - 2 on both axes
    return np.sum(d * d * w[1:]) + np.sum(np.sin(e))


def short_slices(x):
    a = x[:1] * x[1:]                          # x[:1] has length 1: it broadcasts
    b = x[-2:] * x[:2] ** 2                    # a negative start: no symbol
    return np.sum(a) + np.sum(b)


@pytest.mark.parametrize("n", [2, 3, 7])
def test_constant_slices_have_one_length(n):
    x = RNG.normal(size=n)
    _check(rosen, (x,), 0)
    text = sg.source(rosen, args=(x,))
    assert "unbroadcast" not in text, text


def test_slices_of_two_axes():
    x, w = RNG.normal(size=(5, 6)), RNG.normal(size=6)
    _check(slices_2d, (x, w), (0, 1))
    text = sg.source(slices_2d, wrt=(0, 1), args=(x, w))
    unbroadcast = [line.strip() for line in text.splitlines() if "unbroadcast(" in line]
    # only for the product with w[1:], whose length the analysis cannot tie to x's axis 1
    assert unbroadcast and all("mul" in line for line in unbroadcast), text


@pytest.mark.parametrize("n", [2, 3, 5])
def test_slices_that_may_broadcast_keep_their_unbroadcast(n):
    x = RNG.normal(size=n)
    _check(short_slices, (x,), 0)
    assert "unbroadcast(" in sg.source(short_slices, args=(x,))


@pytest.mark.parametrize("n", [2, 3, 10])
def test_hessian_of_slices_is_the_closed_form(n):
    x = RNG.uniform(-1.5, 1.5, n)
    with numpy_swapped(__name__, anp):
        ag = autograd.hessian(rosen)(x)
    check_close(sg.hessian(rosen)(x), ag, rtol=1e-12, atol=1e-9)
    check_close(sg.jacobian(sg.grad(rosen))(x), ag, rtol=1e-12, atol=1e-9)


def test_hessian_generates_no_adjoint_for_the_value():
    """sg.hessian differentiates output 1 (the gradient) of value_and_grad:
    the batched sweep is compiled with the value's cotangent a symbolic
    zero, so no code reads it, and it unbroadcasts nothing it proved."""
    from srcgrad import functional
    x = RNG.uniform(-1.5, 1.5, 6)
    sg.hessian(rosen)(x)
    vg = functional._function_and_self(sg.grad(rosen, wrt=(0,), preserve_result=True))[0]
    program = vg.program_for(vg.bind((x,), {}))
    artefact = program.compile((True,), "batched@1")
    bwd = artefact.trees.get(artefact._split[1].name) or artefact._split[1]
    from srcgrad.syntax import ast_util
    text = ast_util.to_source(bwd)
    value_seed = bwd.args.args[1].id
    assert text.count(value_seed) == 2, text       # (the parameter and batch_size's tuple only)
    unbroadcast = [line.strip() for line in text.splitlines() if "unbroadcast" in line]
    assert len(unbroadcast) == 1 and unbroadcast[0].startswith(bwd.args.args[2].id + " = "), text   # (the seed's)


def rnn(Wx, Wh, b, xs):
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
    return np.sum(h ** 2)


def rnn_iterated(Wx, Wh, b, xs):
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    for x in xs:
        h = np.tanh(x @ Wx + h @ Wh + b)
    return np.sum(h ** 2)


def grows(x, w):
    h = np.zeros(1)                 # length 1, then x's length: broadcast in the first step
    for i in range(3):
        h = h * w + x
    return np.sum(h * h)


def constant_zeros(x):
    acc = np.zeros((3, 4))
    for i in range(2):
        acc = acc + np.sin(x) * acc + x
    return np.sum(acc)


@pytest.mark.parametrize("f", [rnn, rnn_iterated])
@pytest.mark.parametrize("sizes", [(4, 3, 2, 5), (1, 3, 2, 5), (4, 1, 2, 5), (4, 3, 1, 1), (2, 2, 2, 2)])
def test_loop_carried_states_of_one_shape(f, sizes):
    """h starts as np.zeros((xs.shape[1], Wh.shape[0])) and is then the
    loop's tanh: both lengths are not 1 when the arguments' are not (their
    pattern), so the adjoint of the loop's sums needs no unbroadcast but
    b's; the patterns with axes of 1 get code of their own."""
    T, batch, features, hidden = sizes
    args = (RNG.normal(size=(features, hidden)), RNG.normal(size=(hidden, hidden)) / hidden,
            RNG.normal(size=hidden), RNG.normal(size=(T, batch, features)))
    _check(f, args, (0, 1, 2))
    if 1 not in sizes:
        text = sg.source(f, wrt=(0, 1, 2), args=args)
        unbroadcast = [line.strip() for line in text.splitlines() if "unbroadcast(" in line]
        assert len(unbroadcast) == 1 and "bb" in unbroadcast[0], text
        assert "push(_stack, ShapeOf" not in text, text      # (no shapes saved per step)


@pytest.mark.parametrize("n", [1, 4])
def test_a_state_that_broadcasts_in_its_first_step_keeps_its_unbroadcast(n):
    x, w = RNG.normal(size=n), RNG.normal(size=n)
    _check(grows, (x, w), (0, 1))
    if n == 4:
        assert "unbroadcast(" in sg.source(grows, wrt=(0, 1), args=(x, w))


@pytest.mark.parametrize("shape", [(3, 4), (4,), (1, 4)])
def test_constant_lengths(shape):
    x = RNG.normal(size=shape)
    _check(constant_zeros, (x,), 0)


def shape_of_opaque(x, W):
    H = np.stack([np.tanh(x @ W), np.sin(x @ W)])       # (np.stack: a shape the analysis does not spell)
    n = H.shape[0]
    m = H.shape[-1]
    return np.sum(H ** 2) / n + np.sum(np.zeros((m,)) + H[0, 0])


def test_shape_of_a_value_of_unknown_shape():
    x, W = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 5))
    _check(shape_of_opaque, (x, W), (0, 1))


@pytest.mark.parametrize("sizes", [(4, 3, 2, 5), (1, 3, 2, 5), (4, 1, 2, 5), (4, 3, 1, 1)])
def test_states_written_into_a_preallocated_array(sizes):
    """The RNN benchmark's H[t] = h form against autograd on its list
    form (autograd cannot write H[t])."""
    from benchmarks.workloads import rnn as R
    T, batch, features, hidden = sizes
    (Wx, Wh, b), xs, target = R.make_data(T, hidden, batch, features, seed=sum(sizes))
    args = (Wx, Wh, b, xs, target)
    got = sg.grad(R.rnn_loss_setitem, wrt=(0, 1, 2))(*args)
    with numpy_swapped(R.__name__, anp):
        expected = autograd.grad(R.rnn_loss, argnum=(0, 1, 2))(*args)
    for k, (g, e) in enumerate(zip(got, expected)):
        def along(v, k=k):
            xs_ = list(args)
            xs_[k] = v
            return R.rnn_loss_setitem(*xs_)
        check_close(g, numerical_grad(along, args[k]), rtol=1e-5, atol=1e-7)
        check_close(g, e, rtol=1e-10, atol=1e-12)
    if 1 not in sizes:
        text = sg.source(R.rnn_loss_setitem, wrt=(0, 1, 2), args=args)
        unbroadcast = [line.strip() for line in text.splitlines() if "unbroadcast(" in line]
        assert len(unbroadcast) == 1 and "bb" in unbroadcast[0], text


def softmax_loss(W, b, x, y):
    logits = np.tanh(x @ W) + b
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(y * log_probs, axis=1)) + 1e-3 * np.sum(W * W)


def test_the_joint_code_computes_no_dead_value():
    """sg.grad's code computes what the reverse sweep reads, not the loss
    itself (np.mean of the sums, the L2 term): the reverse sweep reads the
    shapes of such values from names of the same shape (or 0.0 for a 0-d
    one). sg.value_and_grad still computes the value."""
    W, b = RNG.normal(size=(5, 4)), RNG.normal(size=4)
    x, y = RNG.normal(size=(6, 5)), np.eye(4)[RNG.integers(0, 4, 6)]
    _check(softmax_loss, (W, b, x, y), (0, 1))
    text = sg.source(softmax_loss, wrt=(0, 1), args=(W, b, x, y))
    forward = text.split("# Reverse sweep")[0]
    assert "np.mean" not in forward and "W * W" not in forward, text
    value, grads = sg.value_and_grad(softmax_loss, wrt=(0, 1))(W, b, x, y)
    assert value == pytest.approx(softmax_loss(W, b, x, y), rel=1e-14)
    check_close(grads[0], sg.grad(softmax_loss, wrt=(0, 1))(W, b, x, y)[0], rtol=1e-14, atol=1e-15)
    with numpy_swapped(__name__, anp):
        H = autograd.hessian(lambda b: softmax_loss(W, b, x, y))(b)
    check_close(sg.hessian(lambda b: softmax_loss(W, b, x, y))(b), H, rtol=1e-9, atol=1e-12)


def scaled_counts(x, k):
    y = k * x                       # (an int array times a float one: y's shape is k's, its dtype is not)
    return np.sum(np.sin(y)) + np.mean(y * 0.5)


@pytest.mark.parametrize("shape", [(3,), (1,), (2, 3)])
def test_a_shape_source_of_another_dtype(shape):
    x, k = RNG.normal(size=shape), RNG.integers(1, 4, size=shape)
    _check(scaled_counts, (x, k), 0)
    with sg.GradientTape() as tape:
        v = sg.Variable(x)
        out = sg.function(scaled_counts)(v, k)
    check_close(tape.gradient(out, v), sg.grad(scaled_counts)(x, k), rtol=1e-14, atol=1e-15)
