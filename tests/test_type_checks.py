"""Type checks of a differentiated argument take the plain call's branch.

srcgrad's rule is that the user's code runs as in the plain call: a
derivative of the branch the plain call does not take is a silent wrong
derivative. The differentiated code sees the argument's own type:

- sg.grad (value_and_grad, jvp, hessian, hvp, jacobian, sg.jit of a
  gradient): a Python float stays a Python float, a NumPy scalar stays a
  NumPy scalar (np.float64 subclasses float: `isinstance(x, float)` is True
  and `isinstance(x, np.ndarray)` False, as in the plain call; it used to
  become a 0-d array and take the other branch), an array stays an array.
- On a GradientTape, the plain call of a decorated function on a Variable
  sees a Tensor, which is neither a float nor an ndarray (as TF's and JAX's
  tracers). The compiled sweeps run on ndarrays (an np.float64 for a 0-d
  Tensor), so code that checks the type of a value computed from a watched
  Tensor runs op by op (a PerformanceWarning), where it sees the Tensor;
  the same under a ForwardAccumulator.

Each derivative is checked against central differences of the plain
function at arguments of the same type (tests/gradcheck.py) and against the
analytic derivative of the branch the plain call takes.
"""
import warnings

import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad


def is_float(a):
    if isinstance(a, float):
        return np.sum(np.sin(a) * 2.0)
    return np.sum(np.sin(a) * 3.0)


def is_number(a):
    if isinstance(a, (int, float)):
        return np.sum(np.sin(a) * 2.0)
    return np.sum(np.sin(a) * 3.0)


def is_ndarray(a):
    if isinstance(a, np.ndarray):
        return np.sum(np.sin(a) * 2.0)
    return np.sum(np.sin(a) * 3.0)


def type_is_float(a):
    if type(a) is float:
        return np.sum(np.sin(a) * 2.0)
    return np.sum(np.sin(a) * 3.0)


def computed_is_ndarray(a):
    b = a * 1.0         # (a 0-d array times a float is an np.float64, in the plain call and here)
    if isinstance(b, np.ndarray):
        return np.sum(np.sin(a) * 2.0)
    return np.sum(np.sin(a) * 3.0)


#: each function with its test, evaluated in Python on the argument the plain call gets
CASES = {
    is_float: lambda a: isinstance(a, float),
    is_number: lambda a: isinstance(a, (int, float)),
    is_ndarray: lambda a: isinstance(a, np.ndarray),
    type_is_float: lambda a: type(a) is float,
    computed_is_ndarray: lambda a: isinstance(a * 1.0, np.ndarray),
}

ARGS = {
    "float": 0.7,
    "np.float64": np.float64(0.7),
    "0-d array": np.array(0.7),
    "array": np.array([0.7, -0.3]),
}


def factor(fn, a):
    """The plain call's branch: sin(a) * 2 or sin(a) * 3."""
    return 2.0 if CASES[fn](a) else 3.0


def like(a):
    """A function giving a float64 array in the type of `a` (central
    differences perturb arrays; the plain function must see a's type)."""
    if type(a) is float:
        return float
    if isinstance(a, np.generic):
        return type(a)
    return np.asarray


def typed_numerical_grad(fn, a):
    cast = like(a)
    return numerical_grad(lambda x: fn(cast(x)), np.asarray(a, dtype=np.float64))


PAIRS = [(fn, name) for fn in CASES for name in ARGS]
IDS = ["%s-%s" % (fn.__name__, name) for fn, name in PAIRS]


@pytest.mark.parametrize("fn,name", PAIRS, ids=IDS)
def test_grad_takes_the_plain_calls_branch(fn, name):
    a = ARGS[name]
    c = factor(fn, a)
    g = sg.grad(fn)(a)
    check_close(g, c * np.cos(a))
    check_close(g, typed_numerical_grad(fn, a))
    value, g2 = sg.value_and_grad(fn)(a)
    check_close(value, fn(a))
    check_close(g2, g)


@pytest.mark.parametrize("fn,name", PAIRS, ids=IDS)
def test_second_order_and_forward_take_the_plain_calls_branch(fn, name):
    a = ARGS[name]
    c = factor(fn, a)
    shape = np.shape(a)
    v = np.full(shape, 0.5)
    second = np.diag(np.atleast_1d(-c * np.sin(a))).reshape(shape + shape)
    check_close(sg.hessian(fn)(a), second)
    check_close(sg.hvp(fn)(a, v), -c * np.sin(a) * v)
    out, t = sg.jvp(fn, (a,), (v,))
    check_close(out, fn(a))
    check_close(t, np.sum(c * np.cos(a) * v))
    check_close(sg.jacobian(fn)(a), typed_numerical_grad(fn, a))
    if shape == ():
        check_close(sg.grad(sg.grad(fn))(a), -c * np.sin(a))


@pytest.mark.parametrize("fn,name", PAIRS, ids=IDS)
def test_jit_of_grad_takes_the_plain_calls_branch(fn, name):
    a = ARGS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)     # (Numba does not compile type checks)
        g = sg.jit(sg.grad(fn))(a)
    check_close(g, factor(fn, a) * np.cos(a))


def test_the_reported_case():
    def f(a):
        if isinstance(a, float):
            return a * 2.0
        return a * 3.0
    assert f(np.float64(2.0)) == 4.0
    check_close(sg.grad(f)(np.float64(2.0)), 2.0)
    check_close(sg.grad(f)(2.0), 2.0)
    check_close(sg.grad(f)(np.array(2.0)), 3.0)


def test_numpy_scalar_gradient_is_a_0d_array():
    """What sg.grad returns for an np.float64 argument is unchanged: a 0-d
    float64 array, as for a 0-d array argument."""
    g = sg.grad(is_float)(np.float64(0.7))
    assert isinstance(g, np.ndarray) and g.shape == () and g.dtype == np.float64


def _tape_grad(f, value):
    x = sg.Variable(value)
    with sg.GradientTape() as tape:
        y = f(x)
    return tape.gradient(y, x), x


@pytest.mark.parametrize("fn,name", PAIRS, ids=IDS)
def test_tape_takes_the_plain_calls_branch(fn, name):
    """On a tape the argument is a Tensor: the decorated function (compiled,
    or op by op after the refusal) gives the derivative of the branch its
    plain call on the Variable takes, as the undecorated function on the
    tape does."""
    value = ARGS[name]
    decorated = sg.function(fn)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g, x = _tape_grad(decorated, value)
    c = factor(fn, x)                           # (the plain call's test on the Variable)
    check_close(sg.constant(g).numpy() if not hasattr(g, "numpy") else g.numpy(), c * np.cos(np.asarray(value)))
    undecorated, _ = _tape_grad(fn, value)
    check_close(g.numpy(), undecorated.numpy())
    if c != factor(fn, value):          # (a test the compiled sweeps would answer otherwise: op by op)
        assert any(issubclass(w.category, sg.PerformanceWarning) and "type check" in str(w.message)
                   for w in caught), [str(w.message) for w in caught]


def test_tensor_type_checks():
    """What srcgrad's Tensor answers (documented): not a float, not an
    ndarray, a Tensor; the same in the plain call, op by op and under a
    decorated function on a tape."""
    x = sg.Variable(0.7)
    assert not isinstance(x, float) and not isinstance(x, np.ndarray) and isinstance(x, sg.Tensor)
    assert type(x) is not float


def typed_scale(x, n):
    if isinstance(n, int):          # (a check of an argument that is not differentiated)
        return np.sum(np.sin(x) * n)
    return np.sum(np.sin(x))


def test_tape_check_of_an_undifferentiated_argument_stays_compiled():
    f = sg.function(typed_scale)
    x = sg.Variable(np.array([0.7, -0.3]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        with sg.GradientTape() as tape:
            y = f(x, 3)
        g = tape.gradient(y, x)
    check_close(g.numpy(), 3 * np.cos(x.numpy()))


@pytest.mark.parametrize("fn", list(CASES), ids=[fn.__name__ for fn in CASES])
def test_forward_accumulator_takes_the_plain_calls_branch(fn):
    value = np.array([0.7, -0.3])
    v = np.array([1.0, 0.5])
    decorated = sg.function(fn)
    x = sg.Variable(value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        with sg.ForwardAccumulator(x, v) as acc:
            y = decorated(x)
        t = acc.jvp(y)
    check_close(np.asarray(t.numpy() if hasattr(t, "numpy") else t), np.sum(factor(fn, x) * np.cos(value) * v))
