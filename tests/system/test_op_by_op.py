"""The op-by-op fallback (srcgrad/op_by_op.py): programs in the style of
published code that the compiler refuses (closures made by factories and
called, generators, map/partial, layers caching on self, a helper updating a
parameter dict, a computed index into a list of layers, dict and list
methods) are differentiated op by op on the tape, once, with a
PerformanceWarning. Each is checked against autograd (the same program on
autograd.numpy) and central finite differences, at first order through
sg.grad, value_and_grad, jvp and the tape, and at second order; user code
runs once per derivative (its random draws and appends as in the plain call).
"""
import functools
import warnings

import numpy as np
import pytest

import srcgrad as sg

ag = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")


# ------------------------------------------------------------------ programs, written once for both libraries

def programs(np):
    """The programs, over the NumPy module `np` (numpy or autograd.numpy)."""

    def flatten(params):                       # autograd.misc.flatten's shape: a closure returned
        shapes = [p.shape for p in params]

        def unflatten(vector):
            out, start = [], 0
            for s in shapes:
                n = int(np.prod(s)) if s else 1
                out.append(np.reshape(vector[start:start + n], s))
                start += n
            return out
        return np.concatenate([np.ravel(p) for p in params]), unflatten

    def mlp_loss_flat(flat):
        W, b = unflatten_wb(flat)
        return np.sum(np.tanh(np.dot(X_IN, W) + b) ** 2)

    _, unflatten_wb = flatten([np.ones((3, 2)), np.ones(2)])

    def layers(w):                              # a generator consumed by a for loop
        for i in range(3):
            yield np.sin(w[i]) * (i + 1.0)

    def generator_loss(w):
        total = 0.0
        for a in layers(w):
            total = total + a * a
        return total

    def log_partition(natural, x):
        return np.log(np.sum(np.exp(natural * x)))

    def map_partial_loss(natural):              # hmm_em's map(partial(...), data)
        return sum(map(functools.partial(log_partition, natural), [1.0, 2.0, 0.5]))

    class Dense:                                # a CS231n / ML-From-Scratch layer caching on self
        def __init__(self, W):
            self.W = W
            self.calls = 0

        def forward(self, x):
            self.layer_input = x
            self.calls += 1
            return np.tanh(np.dot(x, self.W))

    def layer_loss(W):
        layer = Dense(W)
        h = layer.forward(X_IN)
        return np.sum(layer.forward(h @ np.ones((2, 3)) * 0.1) ** 2) + layer.calls

    def batchnorm(x, gamma, bn_param):          # updates the caller's dict, which the caller reads
        mu = np.mean(x, axis=0)
        bn_param["running_mean"] = 0.9 * bn_param["running_mean"] + 0.1 * mu
        return gamma * (x - mu) / np.sqrt(np.var(x, axis=0) + 1e-5)

    def batchnorm_loss(gamma):
        bn_param = {"running_mean": np.zeros(2)}
        out = batchnorm(X_IN @ np.ones((3, 2)) + gamma, gamma, bn_param)
        return np.sum(out ** 2 * np.arange(1.0, 5.0)[:, None]) + np.sum(bn_param["running_mean"] * gamma)

    ACTS = [np.tanh, np.sin, lambda z: z * z]

    def computed_index_loss(w):                 # LAYERS[i](x) with a computed i
        total = 0.0
        for i in range(3):
            total = total + np.sum(ACTS[(2 * i + 1) % 3](w * (i + 1)))
        return total

    def dict_methods_loss(w):
        d = {}
        d.setdefault("a", w * 2.0)
        d.update(b=np.sin(w))
        first = d.pop("a")
        xs = [w, w * 3.0]
        xs.insert(0, first)
        xs.reverse()
        return np.sum(xs[0] * d.get("b") + xs[-1] ** 2)

    return {f.__name__: f for f in (mlp_loss_flat, generator_loss, map_partial_loss, layer_loss,
                                    batchnorm_loss, computed_index_loss, dict_methods_loss)}


X_IN = np.array([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6], [0.7, -0.1, 0.2], [0.05, 0.3, -0.4]])
SG, AG = programs(np), programs(anp)
POINTS = {"mlp_loss_flat": np.linspace(-0.5, 0.6, 8), "generator_loss": np.array([0.3, -0.7, 1.1]),
          "map_partial_loss": 0.4, "layer_loss": np.array([[0.3, -0.2], [0.1, 0.5], [-0.4, 0.2]]),
          "batchnorm_loss": np.array([0.7, 1.3]), "computed_index_loss": np.array([0.2, -0.4]),
          "dict_methods_loss": np.array([0.3, 0.9])}
NAMES = sorted(SG)
# what the compiler refuses today (the others are compiled: mlp_loss_flat's closure is a known global)
OP_BY_OP = {"generator_loss", "map_partial_loss", "layer_loss", "computed_index_loss", "dict_methods_loss"}


def _fd_grad(f, x, h=1e-6):
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


@pytest.mark.parametrize("name", NAMES)
def test_grad_runs_op_by_op_and_agrees_with_autograd(name):
    x = POINTS[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", sg.PerformanceWarning)
        g = sg.grad(SG[name])(x)
    if name in OP_BY_OP:
        assert any("op by op" in str(w.message) for w in caught), name
    np.testing.assert_allclose(g, ag.grad(AG[name])(x), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g, _fd_grad(SG[name], x), rtol=1e-5, atol=1e-7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        value, g2 = sg.value_and_grad(SG[name])(x)
    assert np.isclose(value, SG[name](x)) and np.allclose(g2, g)


@pytest.mark.parametrize("name", NAMES)
def test_the_tape_and_jvp_agree(name):
    x = POINTS[name]
    g = ag.grad(AG[name])(x)
    v = sg.Variable(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        with sg.GradientTape() as tape:
            y = SG[name](v)
        np.testing.assert_allclose(tape.gradient(y, v).numpy(), g, rtol=1e-10, atol=1e-12)
        direction = np.ones_like(np.asarray(x, dtype=float)) * 0.5
        _, t = sg.jvp(SG[name], (x,), (direction,))
    np.testing.assert_allclose(t, np.sum(g * direction), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["generator_loss", "computed_index_loss", "dict_methods_loss", "mlp_loss_flat"])
def test_second_order(name):
    x = POINTS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        gg = sg.grad(lambda x: np.sum(sg.grad(SG[name])(x) ** 2))(x)
        H = sg.hessian(SG[name])(x) if np.ndim(x) == 1 else None
    expected = ag.grad(lambda x: anp.sum(ag.grad(AG[name])(x) ** 2))(x)
    np.testing.assert_allclose(gg, expected, rtol=1e-8, atol=1e-10)
    if H is not None:
        np.testing.assert_allclose(H, ag.hessian(AG[name])(x), rtol=1e-8, atol=1e-10)


def test_user_code_runs_once_op_by_op():
    """A helper drawing random numbers and appending, in a function the
    compiler refuses (a generator): one derivative, one run."""
    log = []

    def noisy(w):
        for i in range(2):
            log.append(i)
            yield w[i] * np.random.randn()

    def loss(w):
        return sum(np.sin(a) for a in noisy(w))

    w = np.array([0.2, 0.5])
    np.random.seed(3)
    plain = loss(w)
    state_plain, appended = np.random.get_state()[1].copy(), len(log)
    log.clear()
    np.random.seed(3)
    draws = np.random.randn(2)
    np.random.seed(3)
    with pytest.warns(sg.PerformanceWarning):
        value, g = sg.value_and_grad(loss)(w)
    assert np.isclose(value, plain) and len(log) == appended
    assert np.array_equal(np.random.get_state()[1], state_plain)
    np.testing.assert_allclose(g, np.cos(w * draws) * draws, rtol=1e-12)


def test_refusals_raise_when_performance_warnings_are_errors():
    """`warnings.simplefilter("error", sg.PerformanceWarning)`: compiled
    code or the compiler's refusal, naming the user's line."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        with pytest.raises(sg.UnsupportedSyntaxError, match="yield"):
            sg.grad(SG["generator_loss"])(POINTS["generator_loss"])


def test_what_the_tape_cannot_do_either_stays_refused():
    def writes_out(x):
        y = x * 2.0
        np.exp(x, out=y)
        return np.sum(y)

    with pytest.raises(sg.UnsupportedSyntaxError, match="writing into"):
        sg.grad(writes_out)(np.ones(2))


def test_container_arguments_op_by_op():
    """A list of (W, b) layers (autograd's neural-net examples), through a
    helper returning a local function (refused, so op by op): the gradient
    has the argument's structure."""
    def flatten(value):
        def unflatten(v):
            return v
        return np.concatenate([np.ravel(w) for layer in value for w in layer]), unflatten

    def objective(params, t):
        flat, _ = flatten(params)
        return np.sum(np.sin(flat) ** 2) * (t + 1)

    params = [(np.array([[0.1, 0.2], [0.3, 0.4]]), np.array([0.5, 0.6])), (np.array([[0.7], [0.8]]), np.array([0.9]))]
    with pytest.warns(sg.PerformanceWarning):
        g = sg.grad(objective)(params, 1)
    assert isinstance(g, list) and all(isinstance(layer, tuple) for layer in g)
    for (gw, gb), (w, b) in zip(g, params):
        np.testing.assert_allclose(gw, 2 * 2 * np.sin(w) * np.cos(w), rtol=1e-12)
        np.testing.assert_allclose(gb, 2 * 2 * np.sin(b) * np.cos(b), rtol=1e-12)
