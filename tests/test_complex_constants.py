"""A complex constant the differentiated code reads from a global, a
closure cell, an object's attribute or a dict passed in makes complex
values the argument kinds do not show: the adjoints keep TF's conj()
(docs/semantics.md's convention for complex intermediates of a real
function). The real-only code dropped it, and |sum(C x)|^2 had the
gradient [-2, 4] instead of [2, 4] (found by the second probe helper).
Checked against central differences and against the same function with
the constant passed as an argument."""
import numpy as np

import srcgrad as sg
from gradcheck import check_close, numerical_grad

C = np.array([1j, 1.0])
X = np.array([1.0, 2.0])


def from_global(x):
    return np.abs(np.sum(C * x)) ** 2


def _closure():
    K = np.array([1j, 1.0])

    def from_closure(x):
        return np.abs(np.sum(K * x)) ** 2
    return from_closure


class _Holder:
    def __init__(self):
        self.c = np.array([0.5 - 2j, 1.0 + 1j])


def from_attribute(m, x):
    return np.abs(np.sum(m.c * x)) ** 2


def from_dict(d, x):
    return np.abs(np.sum(d["c"] * x)) ** 2


def as_argument(c, x):
    return np.abs(np.sum(c * x)) ** 2


def test_complex_constants_keep_the_conjugate():
    want = numerical_grad(from_global, X)
    check_close(sg.grad(from_global)(X), want, rtol=1e-6, atol=1e-8)
    check_close(sg.grad(as_argument, wrt=1)(C, X), want, rtol=1e-6, atol=1e-8)
    f = _closure()
    check_close(sg.grad(f)(X), numerical_grad(f, X), rtol=1e-6, atol=1e-8)
    holder = _Holder()
    check_close(sg.grad(from_attribute, wrt=1)(holder, X),
                numerical_grad(lambda x: from_attribute(holder, x), X), rtol=1e-6, atol=1e-8)
    d = {"c": holder.c}
    check_close(sg.grad(from_dict, wrt=1)(d, X), numerical_grad(lambda x: from_dict(d, x), X),
                rtol=1e-6, atol=1e-8)
    v = sg.Variable(X)
    with sg.GradientTape() as tape:
        y = sg.function(from_global)(v)
    check_close(tape.gradient(y, v), want, rtol=1e-6, atol=1e-8)


class _Model:
    def __init__(self, c):
        self.c = c

    def loss(self, x):
        return np.abs(np.sum(self.c * x)) ** 2


def test_an_attribute_turned_complex_after_compiling_recompiles():
    """A real attribute rebound to a complex array after the first gradient:
    the compiled real-only code is stale (chains.same_resolution), not
    reused without conj()."""
    m = _Model(np.array([1.0, 2.0]))
    through_object = lambda x: m.loss(x)      # noqa: E731
    check_close(sg.grad(through_object)(X), numerical_grad(through_object, X), rtol=1e-6, atol=1e-8)
    m.c = np.array([1j, 1.0])
    check_close(sg.grad(through_object)(X), numerical_grad(through_object, X), rtol=1e-6, atol=1e-8)
    m.c = np.array([3.0, -1.0])     # and back
    check_close(sg.grad(through_object)(X), numerical_grad(through_object, X), rtol=1e-6, atol=1e-8)


def test_a_container_argument_with_complex_contents_has_its_own_program():
    """The same function given a dict (list) of real arrays, then of complex
    ones: the argument kinds differ (function._kind_of), so the second call
    does not reuse the real-only code."""
    real, cplx = {"c": np.array([1.0, 2.0])}, {"c": np.array([1j, 1.0])}
    for d in (real, cplx, real):
        want = numerical_grad(lambda x: from_dict(d, x), X)
        check_close(sg.grad(from_dict, wrt=1)(d, X), want, rtol=1e-6, atol=1e-8)

    def from_list(cs, x):
        return np.abs(np.sum(cs[0] * x)) ** 2
    for cs in ([np.array([1.0, 2.0])], [np.array([1j, 1.0])]):
        want = numerical_grad(lambda x: from_list(cs, x), X)
        check_close(sg.grad(from_list, wrt=1)(cs, X), want, rtol=1e-6, atol=1e-8)
