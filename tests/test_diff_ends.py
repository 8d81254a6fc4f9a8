"""np.diff's prepend= and append= are differentiated: the differences are
of concatenate(prepend, a, append) along the axis, and a differentiated
end gets its slice of that array's cotangent (it was dropped silently:
found by the second probe helper). Gradients and JVPs against central
differences, scalar and array ends, n = 1 and 2, both axes."""
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import numerical_grad

RNG = np.random.default_rng(0)
V = RNG.normal(size=5)
M = RNG.normal(size=(3, 4))

CASES = {
    "prepend_last": (lambda x: np.sum(np.diff(x, prepend=x[-1]) ** 2), V),
    "append_scalar": (lambda x: np.sum(np.diff(x, append=2.0 * x[0]) ** 3), V),
    "second_difference_both_ends": (
        lambda x: np.sum(np.diff(x, n=2, prepend=x[:2] * 3.0, append=np.sin(x[-1])) ** 2), V),
    "rows_prepended": (lambda X: np.sum(np.diff(X, axis=0, prepend=X[-1:] ** 2) ** 2), M),
    "columns_appended": (lambda X: np.sum(np.diff(X, axis=1, append=np.tanh(X[:, :2])) ** 2), M),
    "scalar_end_of_a_matrix": (lambda X: np.sum(np.diff(X, axis=-1, prepend=X.sum()) ** 2), M),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_diff_ends_are_differentiated(name):
    f, x = CASES[name]
    want = numerical_grad(f, x)
    np.testing.assert_allclose(sg.grad(f)(x), want, rtol=1e-5, atol=1e-6)
    direction = RNG.normal(size=x.shape)
    _, tangent = sg.jvp(f, (x,), (direction,))
    np.testing.assert_allclose(tangent, np.sum(want * direction), rtol=1e-5, atol=1e-6)
    v = sg.Variable(x)
    with sg.GradientTape() as tape:
        y = f(v)
    np.testing.assert_allclose(tape.gradient(y, v), want, rtol=1e-5, atol=1e-6)
