"""The compiler: `@sg.function`, `sg.grad`, `sg.value_and_grad`, `sg.source`.

Every gradient is checked by value against three oracles:

* central finite differences of the plain NumPy function (gradcheck.py);
* autograd running the same code: `anp_twin(f)` is `f` (and every module
  function it calls) with `np` rebound to `autograd.numpy`;
* srcgrad's op-by-op path: the same function, undecorated, run on Tensors
  inside a `GradientTape`, which must agree with the compiled path to
  round-off.

The functions under test are real module-level `def`s, since srcgrad
compiles from source (`inspect.getsource`).
"""
import builtins
import functools
import inspect
import os
import re
import types
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad

# these tests pin what the compiler does and its refusals: no op-by-op fallback (conftest.py)
pytestmark = pytest.mark.usefixtures("compiled_only")

THIS_FILE = os.path.basename(__file__)
RNG = np.random.default_rng(1234)


def rand(*shape, scale=1.0):
    return RNG.normal(0.0, scale, shape)


# ---------------------------------------------------------------------------
# The functions under test (plain NumPy; none is decorated unless stated).
# ---------------------------------------------------------------------------

def straight_line(x, W):
    h = np.tanh(x @ W)
    logits = h * 2.0 - 1.0
    return np.sum(np.exp(-logits * logits)) / 3.0


def reassign(x):
    x = x * 2
    x = np.sin(x)
    x = x * x + x
    return np.sum(x)


def branches(x):
    if np.sum(x) > 1.0:
        y = np.sin(x) * np.sum(x)
    elif np.sum(x) > -1.0:
        y = x * x * x
    else:
        y = np.exp(x) / 2.0
    return np.sum(y * x)


def if_without_else(x):
    y = x * 3.0
    if np.max(x) > 0.5:
        y = y * x
    return np.sum(y)


def rnn(h, W, b, n):
    for i in range(n):
        h = np.tanh(h @ W + b)
    return np.sum(h * h)


def rnn_inputs(h, W, U, xs, n):
    for i in range(n):
        h = np.tanh(h @ W + xs[i] @ U)
    return np.mean(h)


def range_start_stop(x, a, b):
    y = x
    for i in range(a, b):
        y = np.sin(y * x) + i * 0.1
    return np.sum(y)


def range_step(x, a, b, step):
    acc = np.sum(x) * 0.0
    for i in range(a, b, step):
        acc = acc + np.tanh(x[i]) * x[i + 1]
    return acc


def loop_with_branch(x, n):
    y = x
    for i in range(n):
        if np.sum(y) > 0.0:
            y = np.sin(y) * (1.0 + 0.1 * i) - 0.3
        else:
            y = y * y + 0.4
    return np.sum(y * x)


def _square_plus(u, c):
    return u * u + c


def _layer(x, W):
    z = x @ W
    return np.tanh(_square_plus(z, 0.5) - 1.0)


def uses_helpers(x, W):
    a = _layer(x, W)
    b = _layer(a, W.T)
    return np.sum(b * a)


def _scaled(u, scale=1.0, power=2):
    return scale * u ** power


def keyword_args(x, w):
    s = np.sum(x * w, axis=0, keepdims=True)
    m = np.mean(x, axis=1, keepdims=True)
    return np.sum(_scaled(s, power=3, scale=0.5)) + np.sum(_scaled(m * s))


def keyword_params(x, w, scale=1.0, shift=0.0):
    s = np.sum(np.tanh(x * w + shift), axis=0, keepdims=True)
    return np.sum(s * s) * scale


def float_constants(x):
    y = 0.5 * x ** 2 + 1.5 * x - 2.25
    z = y / 4.0 + 1e-3 - x ** 3 / 7.0
    return np.sum(z * 3.0 + 2.0 ** x)


PROJ = np.linspace(-1.0, 1.0, 12).reshape(4, 3)


def uses_global_array(x):
    return np.sum(np.tanh(x @ PROJ) ** 2)


def two_outputs(x, W):
    h = np.tanh(x @ W)
    s = np.sum(h * h, axis=1)
    return h, s


def combine(h, s):
    return np.sum(h * 2.0) + np.sum(s * s)


def combined_target(x, W):
    h, s = two_outputs(x, W)
    return combine(h, s)


def two_args(x, y):
    return np.sum(np.sin(x) * y + x * x * 0.5) + np.mean(y ** 2)


def mlp_loss(x, W1, W2):
    h = np.tanh(x @ W1)
    logits = h @ W2
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    return np.mean(np.log(np.sum(np.exp(shifted), axis=1)))


@sg.function
def decorated_mlp_loss(x, W1, W2):
    h = np.tanh(x @ W1)
    logits = h @ W2
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    return np.mean(np.log(np.sum(np.exp(shifted), axis=1)))


def elementwise(x):
    return np.tanh(x) * 2.0 + x


def dense_forward(kernel, bias, x):
    return np.tanh(x @ kernel + bias)


class Dense:
    """A layer whose Variables the compiled methods read as attributes."""

    def __init__(self, kernel, bias):
        self.kernel = sg.Variable(kernel, name="kernel")
        self.bias = sg.Variable(bias, name="bias")

    @sg.function
    def __call__(self, x):
        return np.tanh(x @ self.kernel + self.bias)

    @sg.function
    def loss(self, x, t):
        y = np.tanh(x @ self.kernel + self.bias)
        return np.mean((y - t) ** 2)

    def plain_loss(self, x, t):
        y = np.tanh(x @ self.kernel + self.bias)
        return np.mean((y - t) ** 2)


GLOBAL_W = sg.Variable(np.linspace(-0.5, 0.5, 6).reshape(3, 2), name="global_w")


@sg.function
def reads_global_variable(x):
    return np.sum(np.tanh(x @ GLOBAL_W) ** 2)


def uses_nancumprod(x):
    y = np.nancumprod(x) * x
    return np.sum(y)


def nancumprod_on_constant(x, c):
    return np.sum(np.nancumprod(c) * x)


# Unsupported constructs. Each appends to SIDE first, so a test can see
# whether the user's body ran before the error.
SIDE = []
_COUNTER = 0.0


def bad_del(x):
    SIDE.append("del")
    ys = [x * 2.0, x]
    del ys[0]
    return np.sum(ys[0])


def del_name_frees_memory(x):
    y = x * 2.0
    z = y * y
    del y
    return np.sum(z)


def bad_try(x):
    SIDE.append("try")
    try:
        y = np.sin(x)
    except ValueError:
        y = x
    return np.sum(y)


def bad_with(x):
    SIDE.append("with")
    with warnings.catch_warnings():
        return np.sum(np.sin(x))      # a with block srcgrad cannot lower: it returns


def bad_yield(x):
    SIDE.append("yield")
    yield np.sum(x)


def bad_global(x):
    SIDE.append("global")
    global _COUNTER
    _COUNTER = np.sum(x)
    return np.sum(x) * 2.0


# ---------------------------------------------------------------------------
# Oracles and the common check.
# ---------------------------------------------------------------------------

def anp_twin(f):
    """`f` with `np` -> `autograd.numpy` in its globals, and every function
    of this module rebound to those globals (so helpers are twinned too)."""
    g = dict(f.__globals__)
    g["np"] = anp
    for name, value in list(g.items()):
        if isinstance(value, types.FunctionType) and value.__module__ == f.__module__:
            g[name] = types.FunctionType(value.__code__, g, value.__name__,
                                         value.__defaults__, value.__closure__)
    return g[f.__name__]


def _with(args, i, value):
    args = list(args)
    args[i] = value
    return args


def fd_grads(f, args, wrt):
    return [numerical_grad(lambda xi, i=i: f(*_with(args, i, xi)), args[i]) for i in wrt]


def as_list(g, n):
    if n == 1 and not isinstance(g, (tuple, list)):
        return [g]
    assert isinstance(g, tuple), type(g)
    assert len(g) == n
    return list(g)


def tape_grads(f, args, wrt):
    """Gradient of f(*args) w.r.t. args[wrt] through a GradientTape; f is
    either a compiled (`sg.function`) or a plain function (op-by-op)."""
    with sg.GradientTape() as tape:
        ts = list(args)
        for i in wrt:
            ts[i] = sg.constant(args[i])
            tape.watch(ts[i])
        y = f(*ts)
    assert isinstance(y, sg.Tensor), type(y)
    grads = tape.gradient(y, [ts[i] for i in wrt])
    return y, grads


def check_function(f, args, wrt=(0,), autograd_ok=True, rtol=1e-5, atol=1e-6):
    """All four paths agree: compiled tape, op-by-op tape, sg.grad, and the
    references (finite differences, autograd)."""
    args = tuple(args)
    value = f(*args)
    expected = fd_grads(f, args, wrt)

    if autograd_ok:
        twin = anp_twin(f)
        ag = autograd.grad(twin, argnum=wrt if len(wrt) > 1 else wrt[0])(*args)
        for a, e in zip(as_list(ag, len(wrt)), expected):
            check_close(a, e, rtol=rtol, atol=atol)  # the oracles agree
    else:
        ag = None

    compiled = sg.function(f)
    y_c, g_c = tape_grads(compiled, args, wrt)
    check_close(y_c.numpy(), value, rtol=1e-12, atol=1e-12)
    for g, e in zip(g_c, expected):
        check_close(g, e, rtol=rtol, atol=atol)
    if ag is not None:
        for g, a in zip(g_c, as_list(ag, len(wrt))):
            check_close(g, a, rtol=1e-9, atol=1e-12)

    y_o, g_o = tape_grads(f, args, wrt)
    check_close(y_o.numpy(), value, rtol=1e-12, atol=1e-12)
    for go, gc in zip(g_o, g_c):
        check_close(go, gc, rtol=1e-9, atol=1e-12)

    g_s = as_list(sg.grad(f, wrt=tuple(wrt))(*args), len(wrt))
    for gs, gc in zip(g_s, g_c):
        assert isinstance(gs, np.ndarray) and not isinstance(gs, sg.Tensor), type(gs)
        check_close(gs, gc, rtol=1e-9, atol=1e-12)
    return [np.asarray(g) for g in g_c]


def statement_line(f, prefix):
    """Line number (in this file) of the first statement of f starting with prefix."""
    lines, start = inspect.getsourcelines(f)
    for offset, text in enumerate(lines):
        if text.strip().startswith(prefix):
            return start + offset
    raise AssertionError("%s not found in %s" % (prefix, f.__name__))


# ---------------------------------------------------------------------------
# Constructs.
# ---------------------------------------------------------------------------

def test_straight_line():
    check_function(straight_line, (rand(3, 4), rand(4, 2, scale=0.5)), wrt=(0, 1))


def test_variable_reassignment():
    check_function(reassign, (rand(2, 3),))


@pytest.mark.parametrize("total, branch", [(3.0, "if"), (0.2, "elif"), (-3.0, "else")])
def test_if_elif_else_each_branch(total, branch):
    x = rand(5, scale=0.3)
    x = x - x.mean() + total / 5.0
    assert np.isclose(x.sum(), total)
    g = check_function(branches, (x,))
    # the branch really decides the gradient
    formulas = {
        "if": total * (np.sin(x) + x * np.cos(x)) + np.sum(np.sin(x) * x),
        "elif": 4 * x ** 3,
        "else": (np.exp(x) + x * np.exp(x)) / 2.0,
    }
    check_close(g[0], formulas[branch])


@pytest.mark.parametrize("peak", [0.9, 0.1])
def test_if_without_else(peak):
    x = np.array([peak, -0.4, 0.05])
    g = check_function(if_without_else, (x,))
    check_close(g[0], 6.0 * x if peak > 0.5 else np.full(3, 3.0))


def test_for_loop_rnn_recurrence():
    h0, W, b = rand(2, 3), rand(3, 3, scale=0.6), rand(3, scale=0.3)
    check_function(rnn, (h0, W, b, 4), wrt=(0, 1, 2))


def test_for_loop_rnn_zero_iterations():
    h0, W, b = rand(2, 3), rand(3, 3), rand(3)
    g = check_function(rnn, (h0, W, b, 0), wrt=(0,))
    check_close(g[0], 2.0 * h0)


def test_for_loop_indexing_inputs():
    h0, W, U, xs = rand(2, 3), rand(3, 3, scale=0.5), rand(4, 3, scale=0.5), rand(5, 2, 4)
    check_function(rnn_inputs, (h0, W, U, xs, 5), wrt=(0, 1, 2, 3))


@pytest.mark.parametrize("a, b", [(0, 3), (2, 5), (4, 4)])
def test_range_start_stop(a, b):
    check_function(range_start_stop, (rand(4, scale=0.5), a, b))


@pytest.mark.parametrize("a, b, step", [(0, 7, 2), (1, 7, 3), (6, 0, -2)])
def test_range_start_stop_step(a, b, step):
    check_function(range_step, (rand(8), a, b, step))


def test_if_nested_in_for():
    x = np.array([0.3, -0.1, 0.2])
    # both branches are taken along the way
    y, taken = x, []
    for i in range(5):
        taken.append(np.sum(y) > 0.0)
        y = np.sin(y) * (1.0 + 0.1 * i) - 0.3 if taken[-1] else y * y + 0.4
    assert any(taken) and not all(taken), taken
    check_function(loop_with_branch, (x, 5))


def test_undecorated_helpers_helper_calling_helper_called_twice():
    check_function(uses_helpers, (rand(3, 4, scale=0.5), rand(4, 4, scale=0.5)), wrt=(0, 1))


def test_keyword_arguments_and_keepdims():
    check_function(keyword_args, (rand(3, 4), rand(3, 4)), wrt=(0, 1))


def test_decorated_function_called_with_keywords():
    x, w = rand(3, 4), rand(3, 4)
    compiled = sg.function(keyword_params)
    value = keyword_params(x, w, scale=2.5, shift=0.1)
    expected = numerical_grad(lambda wi: keyword_params(x, wi, scale=2.5, shift=0.1), w)
    w_t = sg.constant(w)
    with sg.GradientTape() as tape:
        tape.watch(w_t)
        y = compiled(x, w=w_t, shift=0.1, scale=2.5)
    check_close(y.numpy(), value)
    check_close(tape.gradient(y, w_t), expected)
    with sg.GradientTape() as tape:  # defaults used
        tape.watch(w_t)
        y = compiled(x, w_t)
    check_close(tape.gradient(y, w_t), numerical_grad(lambda wi: keyword_params(x, wi), w))


def test_python_float_constants():
    check_function(float_constants, (rand(2, 3),))


def test_global_ndarray_constant():
    check_function(uses_global_array, (rand(2, 4),))


def test_tuple_return():
    x, W = rand(3, 4), rand(4, 2)
    expected = fd_grads(combined_target, (x, W), (0, 1))
    ag = autograd.grad(anp_twin(combined_target), argnum=(0, 1))(x, W)
    compiled = sg.function(two_outputs)
    results = {}
    for name, f in [("compiled", compiled), ("op-by-op", two_outputs)]:
        xt, Wt = sg.constant(x), sg.constant(W)
        with sg.GradientTape() as tape:
            tape.watch([xt, Wt])
            h, s = f(xt, Wt)
            target = combine(h, s)
        assert isinstance(h, sg.Tensor) and isinstance(s, sg.Tensor)
        check_close(h.numpy(), two_outputs(x, W)[0])
        check_close(s.numpy(), two_outputs(x, W)[1])
        results[name] = tape.gradient(target, [xt, Wt])
        for g, e, a in zip(results[name], expected, ag):
            check_close(g, e)
            check_close(g, a, rtol=1e-9, atol=1e-12)
    for gc, go in zip(results["compiled"], results["op-by-op"]):
        check_close(gc, go, rtol=1e-9, atol=1e-12)
    # only one of the outputs as the target: the other gets no gradient
    xt = sg.constant(x)
    with sg.GradientTape() as tape:
        tape.watch(xt)
        h, s = compiled(xt, W)
    check_close(tape.gradient(s, xt), numerical_grad(lambda xi: np.sum(two_outputs(xi, W)[1]), x))
    # a compiled function that unpacks a helper's tuple
    check_function(combined_target, (x, W), wrt=(0, 1))


def test_grad_wrt_two_args_returns_tuple():
    x, y = rand(3), rand(3)
    g = sg.grad(two_args, wrt=(0, 1))(x, y)
    assert isinstance(g, tuple) and len(g) == 2
    gx, gy = g
    check_close(gx, np.cos(x) * y + x)
    check_close(gy, np.sin(x) + 2.0 * y / 3.0)
    g1 = sg.grad(two_args, wrt=(1,))(x, y)
    assert isinstance(g1, np.ndarray)
    check_close(g1, gy)
    g0 = sg.grad(two_args)(x, y)
    check_close(g0, gx)


def test_preserve_result_and_value_and_grad():
    x, y = rand(3), rand(3)
    value = two_args(x, y)
    result, g = sg.grad(two_args, wrt=(0, 1), preserve_result=True)(x, y)
    check_close(result, value, rtol=1e-12)
    check_close(g[0], np.cos(x) * y + x)
    check_close(g[1], np.sin(x) + 2.0 * y / 3.0)
    result, g = sg.value_and_grad(two_args)(x, y)
    check_close(result, value, rtol=1e-12)
    assert isinstance(g, np.ndarray)
    check_close(g, np.cos(x) * y + x)
    result, g = sg.value_and_grad(two_args, wrt=(0, 1))(x, y)
    check_close(result, value, rtol=1e-12)
    check_close(g[1], np.sin(x) + 2.0 * y / 3.0)


def test_decorated_with_decorator_syntax():
    x, W1, W2 = rand(4, 3), rand(3, 5, scale=0.5), rand(5, 3, scale=0.5)
    expected = fd_grads(mlp_loss, (x, W1, W2), (1, 2))
    ag = autograd.grad(anp_twin(mlp_loss), argnum=(1, 2))(x, W1, W2)
    v1, v2 = sg.Variable(W1), sg.Variable(W2)
    with sg.GradientTape() as tape:
        loss = decorated_mlp_loss(x, v1, v2)
    g = tape.gradient(loss, [v1, v2])  # Variables are watched automatically
    check_close(loss.numpy(), mlp_loss(x, W1, W2), rtol=1e-12)
    for gi, e, a in zip(g, expected, ag):
        check_close(gi, e)
        check_close(gi, a, rtol=1e-9, atol=1e-12)
    with sg.GradientTape() as tape:
        loss_o = mlp_loss(x, v1, v2)
    for gi, go in zip(g, tape.gradient(loss_o, [v1, v2])):
        check_close(gi, go, rtol=1e-9, atol=1e-12)
    check_function(mlp_loss, (x, W1, W2), wrt=(0, 1, 2))


def test_method_reading_variables_as_attributes():
    kernel, bias, x, t = rand(4, 3, scale=0.5), rand(3, scale=0.2), rand(5, 4), rand(5, 3)
    layer = Dense(kernel, bias)

    def np_loss(k, b):
        return np.mean((dense_forward(k, b, x) - t) ** 2)

    expected = [numerical_grad(lambda k: np_loss(k, bias), kernel),
                numerical_grad(lambda b: np_loss(kernel, b), bias)]
    ag_forward = anp_twin(dense_forward)
    ag = autograd.grad(lambda k, b: anp.mean((ag_forward(k, b, x) - t) ** 2),
                       argnum=(0, 1))(kernel, bias)
    for a, e in zip(ag, expected):
        check_close(a, e)

    with sg.GradientTape() as tape:
        loss = layer.loss(x, t)
    grads = tape.gradient(loss, [layer.kernel, layer.bias])
    check_close(loss.numpy(), np_loss(kernel, bias), rtol=1e-12)
    for g, e, a in zip(grads, expected, ag):
        check_close(g, e)
        check_close(g, a, rtol=1e-9, atol=1e-12)

    with sg.GradientTape() as tape:  # __call__, target formed outside
        y = layer(x)
        loss = np.mean((y - t) ** 2)
    for g, e in zip(tape.gradient(loss, [layer.kernel, layer.bias]), expected):
        check_close(g, e)

    with sg.GradientTape() as tape:  # op-by-op: same body, undecorated
        loss_o = layer.plain_loss(x, t)
    for g, go in zip(grads, tape.gradient(loss_o, [layer.kernel, layer.bias])):
        check_close(g, go, rtol=1e-9, atol=1e-12)

    # after an update the compiled method reads the new values (not cached)
    layer.kernel.assign_sub(0.1 * np.asarray(grads[0]))
    new_kernel = layer.kernel.numpy()
    assert not np.allclose(new_kernel, kernel)
    with sg.GradientTape() as tape:
        loss = layer.loss(x, t)
    check_close(loss.numpy(), np_loss(new_kernel, bias), rtol=1e-12)
    check_close(tape.gradient(loss, layer.kernel),
                numerical_grad(lambda k: np_loss(k, bias), new_kernel))
    # outside a tape the method just runs
    check_close(np.asarray(layer.loss(x, t)), np_loss(new_kernel, bias), rtol=1e-12)


def test_global_variable_is_an_input():
    x = rand(4, 3)
    w0 = GLOBAL_W.numpy().copy()
    with sg.GradientTape() as tape:
        y = reads_global_variable(x)
    g = tape.gradient(y, GLOBAL_W)
    check_close(g, numerical_grad(lambda w: np.sum(np.tanh(x @ w) ** 2), w0))


# ---------------------------------------------------------------------------
# Calling conventions and value types.
# ---------------------------------------------------------------------------

def test_call_outside_tape_returns_plain_value():
    x = rand(2, 3)
    compiled = sg.function(elementwise)
    out = compiled(x)
    assert isinstance(out, np.ndarray) and not isinstance(out, sg.Tensor), type(out)
    np.testing.assert_array_equal(out, elementwise(x))
    s = sg.function(straight_line)(x, rand(3, 2))
    assert not isinstance(s, sg.Tensor)


def test_call_inside_tape_returns_tensor():
    x = rand(2, 3)
    compiled = sg.function(elementwise)
    xt = sg.constant(x)
    with sg.GradientTape() as tape:
        tape.watch(xt)
        out = compiled(xt)
    assert isinstance(out, sg.Tensor), type(out)
    check_close(out.numpy(), elementwise(x), rtol=1e-12)
    # non-scalar target: the gradient of its sum
    check_close(tape.gradient(out, xt), 2.0 * (1.0 - np.tanh(x) ** 2) + 1.0)


def test_call_inside_tape_with_nothing_watched():
    x = rand(2, 3)
    compiled = sg.function(elementwise)
    xt = sg.constant(x)
    with sg.GradientTape() as tape:
        out_t = compiled(xt)
        out_a = compiled(x)
    assert isinstance(out_t, sg.Tensor), type(out_t)
    check_close(out_t.numpy(), elementwise(x), rtol=1e-12)
    assert not isinstance(out_a, sg.Tensor)
    check_close(out_a, elementwise(x), rtol=1e-12)
    assert tape.gradient(out_t, xt) is None


def test_second_call_uses_cache():
    x, W = rand(3, 4), rand(4, 2)
    compiled = sg.function(straight_line)
    src1 = sg.source(straight_line)
    _, g1 = tape_grads(compiled, (x, W), (0, 1))

    counts = {"compile": 0, "exec": 0, "getsource": 0}
    real = {"compile": builtins.compile, "exec": builtins.exec,
            "getsource": inspect.getsource}

    def counting(name):
        def wrapper(*a, **k):
            counts[name] += 1
            return real[name](*a, **k)
        return wrapper

    builtins.compile, builtins.exec = counting("compile"), counting("exec")
    inspect.getsource = counting("getsource")
    try:
        _, g2 = tape_grads(compiled, (x * 0.5, W), (0, 1))
    finally:
        builtins.compile, builtins.exec = real["compile"], real["exec"]
        inspect.getsource = real["getsource"]
    assert counts == {"compile": 0, "exec": 0, "getsource": 0}, counts
    check_close(g2[0], numerical_grad(lambda xi: straight_line(xi, W), x * 0.5))
    assert sg.source(straight_line) == src1


# ---------------------------------------------------------------------------
# Generated source.
# ---------------------------------------------------------------------------

def test_source_is_readable_python():
    src = sg.source(mlp_loss, wrt=(1, 2))
    assert isinstance(src, str) and src.strip()
    compile(src, "<srcgrad source>", "exec")
    assert re.search(r"\bh\b", src), src
    assert re.search(r"\blogits\b", src), src
    assert re.search(r"\bbh\w*\b", src) or re.search(r"\bblogits\w*\b", src), src
    src0 = sg.source(mlp_loss)
    compile(src0, "<srcgrad source>", "exec")


def test_source_of_decorated_function():
    src = sg.source(decorated_mlp_loss, wrt=(1,))
    compile(src, "<srcgrad source>", "exec")
    assert re.search(r"\blogits\b", src), src


def test_forward_mode_source_is_tangent_code():
    src = sg.source(straight_line, wrt=(0,), mode="forward")
    assert "def " in src and src != sg.source(straight_line, wrt=(0,))
    with pytest.raises(ValueError):
        sg.source(straight_line, wrt=(0,), mode="sideways")


def test_show_prints(capsys):
    sg.show(mlp_loss)
    out = capsys.readouterr().out
    assert out.strip()
    assert "logits" in out


# ---------------------------------------------------------------------------
# Errors.
# ---------------------------------------------------------------------------

UNSUPPORTED = [
    (bad_del, "del", "del "),
    (bad_try, "try", "try:"),
    (bad_with, "with", "return np.sum(np.sin"),
    (bad_yield, "yield", "yield "),
    (bad_global, "global", "global "),
]


def check_unsupported(excinfo, f, keyword, prefix):
    err = excinfo.value
    lineno = statement_line(f, prefix)
    message = str(err)
    assert keyword in message, message
    assert THIS_FILE in message, message
    assert re.search(r"\b%d\b" % lineno, message), (lineno, message)
    assert os.path.basename(err.filename) == THIS_FILE, err.filename
    assert err.lineno == lineno, (err.lineno, lineno)


def good_gradient_still_works():
    x, W = rand(3, 4), rand(4, 2)
    compiled = sg.function(straight_line)
    _, g = tape_grads(compiled, (x, W), (0, 1))
    for gi, e in zip(g, fd_grads(straight_line, (x, W), (0, 1))):
        check_close(gi, e)


def test_del_of_a_name_is_supported():
    """`del x` only frees memory (generated code uses it): it is allowed;
    deleting an element (a mutation) is not."""
    x = rand(3)
    check_close(sg.grad(del_name_frees_memory)(x), 8.0 * x)


@pytest.mark.parametrize("f, keyword, prefix", UNSUPPORTED, ids=[u[1] for u in UNSUPPORTED])
def test_unsupported_syntax_in_function(f, keyword, prefix):
    SIDE.clear()
    x = sg.constant(rand(3))
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        compiled = sg.function(f)
        with sg.GradientTape() as tape:
            tape.watch(x)
            compiled(x)
    assert SIDE == [], "the user's body ran before the error"
    check_unsupported(excinfo, f, keyword, prefix)
    good_gradient_still_works()


@pytest.mark.parametrize("f, keyword, prefix", UNSUPPORTED, ids=[u[1] for u in UNSUPPORTED])
def test_unsupported_syntax_in_grad(f, keyword, prefix):
    SIDE.clear()
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.grad(f)(rand(3))
    assert SIDE == [], "the user's body ran before the error"
    check_unsupported(excinfo, f, keyword, prefix)
    # a second attempt raises again (nothing half-built is cached)
    with pytest.raises(sg.UnsupportedSyntaxError):
        sg.grad(f)(rand(3))
    assert SIDE == []
    good_gradient_still_works()


def test_unsupported_syntax_in_helper():
    SIDE.clear()
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.grad(calls_bad_helper)(rand(3))
    assert SIDE == []
    check_unsupported(excinfo, bad_try, "try", "try:")


def calls_bad_helper(x):
    return bad_try(x * 2.0) + np.sum(x)


def test_tape_keeps_working_after_unsupported_syntax():
    x, W = rand(3, 4), rand(4, 2)
    good = sg.function(straight_line)
    xt = sg.constant(x)
    with sg.GradientTape(persistent=True) as tape:
        tape.watch(xt)
        y1 = good(xt, W)
        with pytest.raises(sg.UnsupportedSyntaxError):
            sg.function(bad_try)(xt)
        y2 = good(xt, W) * 2.0
        y3 = np.sum(np.sin(xt))
        target = y1 + y2  # formed inside the context, so recorded
    check_close(tape.gradient(target, xt),
                3.0 * numerical_grad(lambda xi: straight_line(xi, W), x))
    check_close(tape.gradient(y3, xt), np.cos(x))
    good_gradient_still_works()


def test_no_rule_compiled():
    x = rand(4, scale=0.5)
    xt = sg.constant(x)
    with pytest.raises(Exception, match="register_adjoint"):
        with sg.GradientTape() as tape:
            tape.watch(xt)
            sg.function(uses_nancumprod)(xt)
    with pytest.raises(Exception, match="register_adjoint"):
        sg.grad(uses_nancumprod)(x)
    good_gradient_still_works()


def test_no_rule_message_names_function_file_and_line():
    with pytest.raises(Exception) as excinfo:
        sg.grad(uses_nancumprod)(rand(4))
    message = str(excinfo.value)
    assert "nancumprod" in message, message
    assert THIS_FILE in message, message
    assert re.search(r"\b%d\b" % statement_line(uses_nancumprod, "y = np.nancumprod"), message), message


def test_no_rule_op_by_op():
    xt = sg.constant(rand(4, scale=0.5))
    with pytest.raises(Exception, match="register_adjoint"):
        with sg.GradientTape() as tape:
            tape.watch(xt)
            uses_nancumprod(xt)
    good_gradient_still_works()


def test_no_rule_on_constant_is_fine():
    x, c = rand(4), rand(4, scale=0.5)
    g = check_function(nancumprod_on_constant, (x, c), wrt=(0,), autograd_ok=False)
    check_close(g[0], np.nancumprod(c))


class TwoLayer:
    """A model whose decorated method calls helper methods."""

    def __init__(self, seed=0):
        r = np.random.default_rng(seed)
        self.W = sg.Variable(r.normal(size=(3, 4)))
        self.V = sg.Variable(r.normal(size=(4, 2)))
        self.scale = 0.5

    def act(self, h):
        return np.tanh(h) * self.scale       # reads a plain attribute: fine

    def reads_variable(self, h):
        return h @ self.V                    # reads a Variable inside a helper

    @sg.function
    def __call__(self, x):
        return np.sum(self.act(x @ self.W) ** 2)

    @sg.function
    def uses_reads_variable(self, x):
        return np.sum(self.reads_variable(self.act(x @ self.W)))


def test_method_calling_a_helper_method():
    model = TwoLayer()
    x = rand(5, 3)
    with sg.GradientTape() as tape:
        y = model(x)
    gW = tape.gradient(y, model.W)
    W = model.W.numpy()
    check_close(gW.numpy(), numerical_grad(lambda w: np.sum((np.tanh(x @ w) * 0.5) ** 2), W))
    with sg.GradientTape() as tape:
        y2 = TwoLayer.__call__.python_function(model, x)
    check_close(tape.gradient(y2, model.W).numpy(), gW.numpy(), rtol=1e-12)


def test_helper_method_reading_a_variable_is_a_clear_error():
    model = TwoLayer()
    with pytest.raises(sg.UnsupportedSyntaxError, match="self.V"):
        with sg.GradientTape():
            model.uses_reads_variable(rand(5, 3))
    with sg.GradientTape() as tape:       # the model and the tape still work
        y = model(rand(5, 3))
    assert tape.gradient(y, model.W) is not None


def rotate(u, v):
    s = np.sin(u + v)
    return s * u, np.cos(v) - s


def loop_carried_tuple(x, y):
    for i in range(3):
        x, y = rotate(x, y)       # targets are also the arguments, in a loop
    return np.sum(x * y)


def test_tuple_assignment_whose_targets_are_its_arguments():
    x, y = rand(3), rand(3)
    check_function(loop_carried_tuple, (x, y), wrt=(0, 1))


def dense_tanh(x, W, b):
    return np.sum(np.tanh(x @ W + b))


def test_split_forward_keeps_only_the_shape_of_shape_only_residuals():
    from srcgrad.callables import as_function
    from srcgrad.runtime import ShapeOf
    x, W, b = rand(5, 3), rand(3, 4), rand(4)
    compiled = as_function(dense_tanh).program_for(None).compile([False, True, True])
    *outputs, residuals = compiled.fwd(x, W, b)
    saved = dict(zip(compiled.residuals, residuals))
    # x @ W is only needed for its shape (to unbroadcast b's cotangent); tanh's output is needed
    assert isinstance(saved["matmul_x"], ShapeOf) and saved["matmul_x"].shape == (5, 4)
    assert isinstance(saved["tanh"], np.ndarray)
    gW, gb = compiled.bwd(residuals, 1.0)
    check_close(gW, numerical_grad(lambda w: dense_tanh(x, w, b), W))
    check_close(gb, numerical_grad(lambda v: dense_tanh(x, W, v), b))


# Staleness two calls deep: outer -> middle -> inner, then inner is rebound.

def _stale_inner(x):
    return np.sin(x)


def _stale_inner_square(x):
    return x * x


def _stale_middle(x):
    return _stale_inner(x) * 2.0


def stale_outer(x):
    return np.sum(_stale_middle(x))


def test_rebinding_a_global_two_calls_deep_recompiles():
    x = np.array([0.1, -0.4, 0.7])
    g = sg.grad(stale_outer)
    check_close(g(x), 2 * np.cos(x), rtol=1e-12)
    saved = globals()["_stale_inner"]
    globals()["_stale_inner"] = _stale_inner_square
    try:
        check_close(g(x), 4 * x, rtol=1e-12)          # not the stale sin code
        xt = sg.constant(x)
        with sg.GradientTape() as tape:
            tape.watch(xt)
            y = sg.function(stale_outer)(xt)
        check_close(tape.gradient(y, xt).numpy(), 4 * x, rtol=1e-12)
    finally:
        globals()["_stale_inner"] = saved
    check_close(g(x), 2 * np.cos(x), rtol=1e-12)


# -- scalar specialisation must not take an array for a 0-d value

def _param_reassigned_in_branch(x):
    if np.sum(x) > 0.0:
        x = np.mean(np.tanh(x + x)) + np.tanh(x + x) * 0.5
    return np.sum(x * x)


def _scalar_param_becomes_array(x):
    if x > 0.0:
        x = x * np.arange(1.0, 4.0) + np.mean(np.ones(3) * x)
    return np.sum(x * x)


def test_parameter_reassigned_in_branch_stays_an_array():
    """Was silently wrong (found by test_random_programs): the 0-d analysis
    took the array parameter x for 0-d because all its assignments were
    elementwise operations of names on a cycle through x, so the cotangent of
    mean(...) lost its sum (bmean = bx)."""
    x = np.array([0.3, 0.2, -0.1])
    expected = autograd.grad(lambda v: anp.sum((anp.mean(anp.tanh(v + v)) + anp.tanh(v + v) * 0.5) ** 2))(x)
    check_close(sg.grad(_param_reassigned_in_branch)(x), expected, rtol=1e-10, atol=1e-12)
    check_close(sg.grad(_param_reassigned_in_branch)(x), numerical_grad(_param_reassigned_in_branch, x))


def test_scalar_parameter_reassigned_an_array():
    """A parameter given a Python float and reassigned an array is not 0-d."""
    g = sg.grad(_scalar_param_becomes_array)(0.7)
    assert isinstance(g, float) or np.ndim(g) == 0
    expected = autograd.grad(lambda v: anp.sum((v * anp.arange(1.0, 4.0) + anp.mean(anp.ones(3) * v)) ** 2))(0.7)
    check_close(g, expected, rtol=1e-10)


def _doubled(f):
    @functools.wraps(f)
    def wrapper(x):
        return 2.0 * f(x)
    return wrapper


@_doubled
def _doubled_square(x):
    return np.sum(x * x)


def test_functools_wraps_wrapper_is_its_own_source():
    """Was silently wrong: inspect.getsourcelines follows __wrapped__, so
    the wrapper was compiled as the function it wraps (gradient 2x, not 4x)."""
    x = np.array([1.0, 2.0])
    check_close(sg.grad(_doubled_square)(x), 4.0 * x, rtol=1e-12)
    check_close(sg.grad(_doubled_square)(x), numerical_grad(_doubled_square, x))
