"""The op-by-op fallback (srcgrad/op_by_op.py) and the user's state.

1. After sg.grad / sg.jit run a function op by op, what it stored on the
   user's objects (a callable global, state nested at any depth, a class
   attribute, slots, tuples, cycles) is a plain ndarray, and a later plain
   call returns ndarrays.
2. Buffers made by np.zeros_like / ones_like / empty_like / full_like of a
   Tensor are recorded op by op (element writes work); a refused write does
   not claim that sg.grad supports it.
3. A helper updating the caller's parameter dict runs op by op, right.

Values against central differences (tests/gradcheck.py) and autograd.
"""

import numpy as np
import pytest

import srcgrad as sg
from srcgrad import op_by_op
from gradcheck import check_close, numerical_grad

pytestmark = pytest.mark.filterwarnings("ignore::srcgrad.errors.PerformanceWarning")


# ---- 1. Tensors left in the user's objects ---------------------------------------------------------------

class Mem:
    """A callable global whose call stores its argument on itself."""

    def __init__(self):
        self.prev = np.array([1., 2., 3.])

    def __call__(self, x):
        out = x * self.prev
        self.seen = x
        return out


MEM = Mem()


def uses_callable(x):
    return np.sum(MEM(x) + MEM(x * 2))


class Lin:
    def __init__(self, w):
        self.w, self.cache = w, None

    def fwd(self, x):
        self.cache = x
        return x * self.w


class Block:
    def __init__(self):
        self.layers = [Lin(2.0), Lin(3.0)]
        self.log = {"deep": [{"deeper": [None]}]}


class Model:
    registry = []       # a class attribute the method appends to

    def __init__(self):
        self.blocks = [Block()]
        self.me = self      # a cycle

    def fwd(self, x):
        for b in self.blocks:
            for layer in b.layers:
                x = layer.fwd(x)
        self.blocks[0].log["deep"][0]["deeper"][0] = x
        Model.registry.append(x)
        return x


MODEL = Model()


def deep_loss(x):
    return np.sum(np.sin(MODEL.fwd(x)))


class Slotted:
    __slots__ = ("value", "pair")

    def __init__(self):
        self.value, self.pair = None, None


SLOTS = Slotted()


def slots_loss(x):
    y = np.exp(x)
    SLOTS.value = y
    SLOTS.pair = (y, [y * 2])       # a tuple holding a Tensor and a list holding one
    return np.sum(y)


def _plain(value):
    return type(value) is np.ndarray


def _deep_places():
    b = MODEL.blocks[0]
    return [b.layers[0].cache, b.layers[1].cache, b.log["deep"][0]["deeper"][0]] + list(Model.registry)


@pytest.mark.parametrize("wrap", ["grad", "jit"])
def test_callable_global_state_is_plain_after_fallback(wrap):
    x = np.array([0.5, 1., 2.])
    g = sg.grad(uses_callable) if wrap == "grad" else sg.jit(sg.grad(uses_callable))
    got = g(x)      # (checked before the plain calls of the central differences overwrite the state)
    assert _plain(MEM.seen) and _plain(MEM.prev)
    assert type(MEM(x)) is np.ndarray
    check_close(got, numerical_grad(uses_callable, x))


@pytest.mark.parametrize("wrap", ["grad", "jit"])
def test_deep_and_class_attribute_state_is_plain_after_fallback(wrap):
    Model.registry.clear()
    x = np.array([0.1, 0.2])
    g = sg.grad(deep_loss) if wrap == "grad" else sg.jit(sg.grad(deep_loss))
    got = g(x)
    assert Model.registry and all(_plain(v) for v in _deep_places())
    assert type(MODEL.fwd(x)) is np.ndarray
    check_close(got, 6 * np.cos(6 * x))
    check_close(got, numerical_grad(deep_loss, x))


def test_slots_and_tuples_are_plain_after_fallback():
    x = np.array([0.3, -0.4])
    got = sg.grad(slots_loss)(x)
    assert _plain(SLOTS.value) and _plain(SLOTS.pair[0]) and _plain(SLOTS.pair[1][0])
    check_close(got, numerical_grad(slots_loss, x))


def test_argument_object_state_is_plain_after_fallback():
    layer = Lin(np.array([1.5, -2.0]))

    def f(x, layer):
        layer.extra = {"x": [x * 2]}
        return np.sum(np.tanh(layer.fwd(x)))

    x = np.array([0.2, 0.7])
    check_close(sg.grad(f)(x, layer), numerical_grad(lambda v: f(v, Lin(layer.w)), x))
    assert _plain(layer.cache) and _plain(layer.extra["x"][0])
    assert type(layer.fwd(x)) is np.ndarray


def test_detach_limit():
    """The search looks at every value to any depth, and stops after `limit`."""
    big = [[float(i)] for i in range(50)]
    assert op_by_op._detach([big], 0, limit=10) < 60
    assert op_by_op._detach([big], 0) == 100


# ---- 2. buffers made from a Tensor, op by op ---------------------------------------------------------------

def masked_square(x):
    try:        # (try/except: the compiler refuses, sg.grad runs it op by op)
        out = np.zeros_like(x)
        out[x > 0] = x[x > 0] ** 2
    except FloatingPointError:
        out = x
    return np.sum(out)


def repeated_index_update(x):
    try:
        out = np.zeros(3)
        out[[0, 0, 2]] += x ** 2        # NumPy: out[0] = x[1] ** 2 (the last write), out[2] = x[2] ** 2
    except FloatingPointError:
        out = x
    return np.sum(out * np.array([1., 2., 3.]))


def like_buffers(x):
    try:
        a = np.ones_like(x)
        a[0] = x[1] * 3
        b = np.empty_like(x)
        b[...] = x
        b[2] = np.sin(x[0])
        c = np.full_like(x, x[2])       # a Tensor fill value: its gradient flows
        c[1] = x[0] ** 2
        d = np.full(2, x[1])
        d[0] = 1.0
    except FloatingPointError:
        a = b = c = d = x
    return np.sum(a * b) + np.sum(c ** 2) + np.sum(d * x[0])


@pytest.mark.parametrize("f", [masked_square, repeated_index_update, like_buffers])
def test_buffers_made_from_tensors_are_recorded_op_by_op(f):
    x = np.array([0.5, -1.5, 2.0])
    expected = numerical_grad(f, x)
    check_close(sg.grad(f)(x), expected)
    check_close(sg.jit(sg.grad(f))(x), expected)
    v = sg.Variable(x)
    with sg.GradientTape() as tape:
        y = f(v)
    check_close(tape.gradient(y, v).numpy(), expected)


def test_buffer_values_against_autograd():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def ag(x):      # repeated_index_update's value, without writes (autograd refuses them)
        out = anp.stack([x[1] ** 2, 0. * x[0], x[2] ** 2])
        return anp.sum(out * anp.array([1., 2., 3.]))
    x = np.array([0.5, -1.5, 2.0])
    check_close(sg.grad(repeated_index_update)(x), autograd.grad(ag)(x))


def write_into_tensor(x):
    try:
        y = x * 2.0
        y.T[0] = 0.0
    except FloatingPointError:
        pass
    return np.sum(y)


def test_refused_tensor_write_in_fallback_says_so():
    with pytest.raises(TypeError) as info:
        sg.grad(write_into_tensor)(np.array([1.0, 2.0]))
    text = str(info.value)
    assert "or sg.grad) it is supported" not in text
    assert "op by op" in text and "compiler refused" in text
    assert "test_fallback_state.py:%d" % (write_into_tensor.__code__.co_firstlineno + 3) in text


def write_through_transpose(x):
    Y = np.outer(x, x)
    Y.T[0] = 0.0
    return np.sum(Y * np.arange(4.).reshape(2, 2))


def test_write_through_transpose_is_named(compiled_only):
    with pytest.raises(sg.UnsupportedSyntaxError) as info:
        sg.grad(write_through_transpose)(np.array([1.0, 2.0]))
    text = str(info.value)
    assert "through Y.T" in text and "Y[:, i] = v" in text and "attribute's element" not in text
    assert "test_fallback_state.py:%d" % (write_through_transpose.__code__.co_firstlineno + 2) in text

# ---- 3. a helper updating the caller's parameter dict -------------------------------------------------------

_RNG = np.random.default_rng(2)
X_DATA, Y_DATA = _RNG.normal(size=(6, 2)), _RNG.normal(size=6)


def sgd_steps(params, lr):
    """Three gradient steps on params["w"], in place (numpy-ml / CS231n optimiser style)."""
    for _ in range(3):
        err = X_DATA @ params["w"] - Y_DATA
        params["w"] = params["w"] - lr * X_DATA.T @ err / 6


def trained_loss(w0):
    p = {"w": w0}
    sgd_steps(p, 0.1)
    return np.sum((X_DATA @ p["w"] - Y_DATA) ** 2)


def zero_first(a):
    a[0] = 0.0


def array_written_by_helper(x):
    y = x * 2.0
    zero_first(y)
    return np.sum(y)


def test_helper_updating_callers_dict_runs_op_by_op():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def ag_loss(w0):
        w = w0
        for _ in range(3):
            w = w - 0.1 * anp.dot(X_DATA.T, anp.dot(X_DATA, w) - Y_DATA) / 6
        return anp.sum((anp.dot(X_DATA, w) - Y_DATA) ** 2)
    w0 = np.array([0.2, -0.1])
    expected = autograd.grad(ag_loss)(w0)
    check_close(expected, numerical_grad(trained_loss, w0))
    check_close(sg.grad(trained_loss)(w0), expected)
    check_close(sg.jit(sg.grad(trained_loss))(w0), expected)
    v = sg.Variable(w0)
    with sg.GradientTape() as tape:
        y = sg.function(trained_loss)(v)
    check_close(tape.gradient(y, v).numpy(), expected)


def test_helper_updating_callers_dict_refusal_names_a_dict(compiled_only):
    with pytest.raises(sg.UnsupportedSyntaxError) as info:
        sg.grad(trained_loss)(np.array([0.2, -0.1]))
    text = str(info.value)
    assert info.value.op_by_op and "dict" in text and "caller's array" not in text
    assert "test_fallback_state.py:%d" % (trained_loss.__code__.co_firstlineno + 2) in text


def test_helper_writing_into_callers_array_is_still_refused():
    with pytest.raises(sg.UnsupportedSyntaxError) as info:
        sg.grad(array_written_by_helper)(np.array([1.0, 2.0]))
    assert not info.value.op_by_op and "caller's array" in str(info.value)
