"""Private name mangling: in a method of class A, `self.__w` is the
attribute `_A__w`, and a name or keyword `__k` is `_A__k`. The generated
code is compiled outside the class, so the compiler mangles the names of
the parsed text as the class statement mangled the running code (before,
`self.__w` raised AttributeError in generated code; and the check that the
parsed text is the running code must not take the mangled names for an
edit)."""
import warnings

import numpy as np

import srcgrad as sg
from gradcheck import check_close, numerical_grad


class Layer:
    def __init__(self, w):
        self.__w = w

    def loss(self, x):
        return np.sum(np.tanh(x * self.__w))


class _Private:
    def __init__(self):
        self.__scale = 2.0

    def f(self, x, __k=3.0):
        def inner(y):
            return y * self.__scale
        return np.sum(inner(x) ** 2) * __k


X = np.array([0.1, -0.2, 0.3])


def test_private_attribute_of_self():
    layer = Layer(np.array([1.0, 2.0, 3.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)     # (compiled: not op by op)
        g = sg.grad(layer.loss)(X)
    check_close(g, numerical_grad(layer.loss, X), rtol=1e-6, atol=1e-8)


def test_private_parameter_and_nested_function_on_a_tape():
    obj = _Private()
    expected = 2 * X * 4.0 * 3.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        check_close(sg.grad(obj.f)(X), expected, rtol=1e-12, atol=0)
        v = sg.Variable(X)
        f = sg.function(obj.f)
        with sg.GradientTape() as tape:
            y = f(v)
        check_close(tape.gradient(y, v).numpy(), expected, rtol=1e-12, atol=0)
    check_close(float(y.numpy()), obj.f(X), rtol=1e-14, atol=0)
