"""Minimal reproducers of the failure causes the harness finds: each a few
lines of plain NumPy through srcgrad's public API, asserting the right
answer (from a hand derivation, finite differences, or autograd's result).
While the cause is there the snippet raises; when srcgrad is fixed it
passes (the report then says "passes (fixed?)").

`match`: regular expressions over the cause keys of report.causes(): a
cause whose key matches is attributed to the reproducer.
"""

REPRODUCERS = [
    {
        "id": "jvp-not-differentiable",
        "title": "sg.jvp inside differentiated code: no rule for srcgrad.functional.jvp",
        "match": [r"no adjoint rule for srcgrad\.functional\.jvp"],
        "note": "autograd's check_grads (default modes fwd and rev, order 2) differentiates the JVP function "
                "again, in both modes. srcgrad composes sg.jvp over sg.grad, but nothing over sg.jvp.",
        "code": """
import numpy as np, srcgrad as sg
f = lambda x: np.sin(x) * x
def jvp_f(x, v):
    return sg.jvp(f, (x,), (v,))[1]          # J v = (cos(x) x + sin(x)) v
x, v = np.array([0.3, -0.5]), np.array([1.0, 2.0])
g = sg.grad(lambda x, v: np.sum(jvp_f(x, v)))(x, v)
assert np.allclose(g, (2 * np.cos(x) - np.sin(x) * x) * v)
""",
    },
    {
        "id": "complex-second-order",
        "title": "second derivatives of real functions of complex inputs are wrong",
        "match": [r"derivative check failed: VJP wrong value at order 2"],
        "note": "Grad of a function computing sg.grad (reverse over reverse) at a complex point: the imaginary "
                "part differs from the steepest-ascent direction that API.md promises (finite differences "
                "below). First-order complex gradients agree.",
        "code": """
import numpy as np, srcgrad as sg
u = 0.7 - 0.4j
G = lambda z: sg.grad(lambda z: np.abs(z))(z)            # z / |z|
L = lambda z: np.real(np.conj(u) * G(z))
z, h = 1.1 + 1.2j, 1e-6
fd = (L(z + h) - L(z - h)) / (2 * h) + 1j * (L(z + 1j * h) - L(z - 1j * h)) / (2 * h)
assert np.allclose(sg.grad(L)(z), fd, atol=1e-6), (sg.grad(L)(z), fd)
""",
    },
    {
        "id": "grad-of-ufunc",
        "title": "sg.grad(np.sqrt): a NumPy ufunc passed to sg.grad crashes (weak reference)",
        "match": [r"cannot create weak reference to 'numpy\.ufunc'"],
        "code": """
import numpy as np, srcgrad as sg
assert np.isclose(sg.grad(np.sqrt)(2.0), 0.5 / np.sqrt(2.0))
""",
    },
    {
        "id": "generator",
        "title": "a generator function (yield) consumed by a for loop in differentiated code",
        "match": [r"yield is not supported"],
        "code": """
import numpy as np, srcgrad as sg
def layers(w):
    for i in range(2):
        yield w[i] * 2.0
def f(w):
    total = 0.0
    for a in layers(w):
        total = total + np.sin(a)
    return total
w = np.array([0.1, 0.2])
assert np.allclose(sg.grad(f)(w), 2.0 * np.cos(2.0 * w))
""",
    },
    {
        "id": "closure-called-in-grad-fn",
        "title": "calling a function made at run time (vjp = make_vjp(ans, x); vjp(g)) in differentiated code",
        "match": [r"calling \w+, an object or function built inside the differentiated code",
                  r"calling the result of an expression"],
        "note": "autograd's defvjp takes VJP *makers* (ans, x) -> (g -> ...); ported to sg.custom_gradient the "
                "gradient function calls the function the maker returns. At first order grad_fn runs as "
                "written; at second order srcgrad compiles it and refuses.",
        "code": """
import numpy as np, srcgrad as sg
def exp_vjp(ans, x):
    return lambda g: g * ans
@sg.custom_gradient
def my_exp(x):
    ans = np.exp(x)
    def grad_fn(g):
        vjp = exp_vjp(ans, x)
        return vjp(g)
    return ans, grad_fn
x = np.array([0.3])
assert np.allclose(sg.grad(lambda x: np.sum(sg.grad(lambda x: np.sum(my_exp(x)))(x)))(x), np.exp(x))
""",
    },
    {
        "id": "complex-output-grad",
        "title": "sg.grad of a complex-valued function returns a value instead of raising TypeError",
        "match": [r"expected error not raised: DID NOT RAISE <class 'TypeError'>"],
        "note": "autograd (and JAX) refuse grad of a complex output (use holomorphic_grad); srcgrad returns "
                "something, so a user gets a number with no defined meaning.",
        "code": """
import numpy as np, srcgrad as sg
try:
    sg.grad(lambda x: x * (1.0 + 0.2j))(1.0)
except TypeError:
    pass
else:
    raise AssertionError("sg.grad of a complex output did not raise TypeError")
""",
    },
]
