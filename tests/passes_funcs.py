"""Small functions for tests/test_passes.py (one compiler pass each).

They live in a file of their own so that the parse and check tests can
find their lines: a statement a test points at carries a `# <-name` marker
comment, and `line_of("name")` is its line number in this file.
"""
import functools
import itertools
import math
import warnings

import numpy as np

import srcgrad as sg

_HERE = __file__


def line_of(marker):
    """The line number of the line of this file ending in `# <-marker`."""
    with open(_HERE) as f:
        for k, text in enumerate(f, 1):
            if text.rstrip().endswith("# <-" + marker):
                return k
    raise LookupError(marker)


# ------------------------------------------------------------------ parse

@sg.function
def decorated(x):  # <-decorated-def
    y = np.sin(x)  # <-decorated-sin
    return np.sum(y * x)


class Holder:
    def method(self, x):  # <-method-def
        return np.sum(np.cos(x) * 2.0)  # <-method-body


square = lambda a: a * a  # noqa: E731  # <-square
pair = (lambda a: a + 1.0, lambda a: a * 3.0)  # <-pair


TABLE = {
    "double": lambda a: a * 2.0,  # <-table-double
    "shift": lambda a: a - 1.0,  # <-table-shift
}


def _keep(fn, other=None):
    return fn


kept = _keep(
    fn=lambda a: a + 5.0,  # <-keyword-lambda
)


def _doubling(f):
    @functools.wraps(f)
    def wrapper(x):  # <-wrapper
        return 2.0 * f(x)
    return wrapper


@_doubling
def wrapped(x):
    return np.sum(x * x)


# ------------------------------------------------------------------ check

CALLS = []


def bad_try(x):
    CALLS.append("ran")
    try:  # <-try
        y = x
    except ValueError:
        y = x
    return y


def bad_yield(x):
    yield x  # <-yield


def bad_global(x):
    global CALLS  # <-global
    return x


def bad_import(x):
    import os  # noqa: F401  # <-import
    return x


def bad_class(x):
    class Inner:  # <-class
        pass
    return x


def bad_attribute(x):
    x.value = 1.0  # <-attribute
    return x


def bad_setcomp(x):
    return {v for v in x}  # <-setcomp


def bad_walrus(x):
    if (n := len(x)) > 1:  # <-walrus
        return x * n
    return x


def bad_del_item(x):
    y = x.copy()
    del y[0]  # <-delitem
    return y


def bad_for_else(x):
    for i in range(3):  # <-forelse
        x = x + i
    else:
        x = x * 2.0
    return x


def bad_with_return(x):
    with warnings.catch_warnings():
        return x * 2.0  # <-withreturn


def bad_eval(x):
    return eval("x")  # <-eval


def supported_misc(x):
    first, *rest = x
    assert x.shape[0] > 1, "short"
    if first > 100.0:
        raise ValueError("big")
    del rest
    return first * 2.0 + np.sum(x)


# ------------------------------------------------------------------ lower

def jumps(x, n):
    s = 0.0
    for i in range(n):
        if i > 3:
            break
        if i == 1:
            continue
        s = s + x * i
    return s


def early_return(x):
    """A docstring."""
    if np.sum(x) > 0:
        return x * 2.0
    pass
    y = np.sin(x)
    return y


def sequences(xs, ys):
    s = 0.0
    for a in xs:
        s = s + a
    for i, a in enumerate(xs):
        s = s + a * i
    for a, b in zip(xs, ys):
        s = s + a * b
    return s


def elements(x):
    y = np.zeros(3)
    y[0] = x[1] * 2.0
    y[1] += x[0]
    ys = []
    ys.append(y)
    ys.append(x)
    return np.sum(ys[0] * ys[1])


def local_functions(x):
    def twice(a):
        return a * 2.0
    cube = lambda a: a * a * a  # noqa: E731
    zs = [np.sin(v) for v in x]
    return np.sum(twice(x) + cube(x)) + zs[0]


def with_block(x):
    with np.errstate(divide="ignore"):
        y = np.log(x)
    return np.sum(y)


def dict_loop(d):
    s = 0.0
    for k in d:
        s = s + d[k] * 2.0
    return s


def items_loop(d):
    s = 0.0
    for k, v in d.items():
        s = s + v * 3.0
    return s


def view_write(x):
    a = x[::-1]
    a[0] = 1.0  # <-view
    return np.sum(a * x)


# ------------------------------------------------------------------ resolve

W = sg.Variable(np.array([[1.0, 0.5], [-0.25, 2.0]]))
PARAMS = {"W": sg.Variable(np.array([[2.0, 0.0], [0.0, 3.0]]))}
SCALE = 3.0


HELPER_CALLS = itertools.count()     # next() of it counts the calls of helper


def helper(a):
    next(HELPER_CALLS)
    return a * 2.0


def reads_globals(x):
    y = W @ x
    z = helper(y) * SCALE
    return np.sum(z) + x.sum()


def reads_chain(x):
    return np.sum(PARAMS["W"] @ x)


def scale2(a):
    return a * 2.0


def shift1(a):
    return a + 1.0


STEPS = [scale2, shift1, np.sin]


def unrolled(x):
    for step in STEPS:
        x = step(x)
    return np.sum(x)


# ------------------------------------------------------------------ anf

def nested(x, y):
    z = np.sum(np.sin(x * y) + np.exp(-x)) * 2.0
    z = z + np.max(x) * y[0]
    z = z * z
    w = x
    for i in range(3):
        w = w * 0.5 + x
    return z + np.sum(w)


def boolean(x):
    t = x if np.sum(x) > 0 else -x
    return np.sum(t)


# ------------------------------------------------------------------ activity

def activity_mix(x, y):
    n = x.shape[0]            # a shape: inactive
    k = 0
    for i in range(n):        # an integer counter: inactive
        k = k + 1
    j = int(np.argmax(x))     # an index computed from x: not differentiable
    z = np.sin(x)             # input -> output: active
    w = np.cos(x)             # varied, not useful: inactive
    c = y * 2.0               # useful, not varied (y is not active): inactive
    unused = np.sum(w)        # varied, not useful
    out = np.sum(z * c) + k + x[j]
    return out


# ------------------------------------------------------------------ reverse

def tanh_loop(x):
    h = x
    c = 2.0
    for t in range(3):
        h = np.tanh(h * c)
    return np.sum(h)


def scalar_loop(x, n):
    s = 0.0
    y = x
    for i in range(n):
        if i % 2 == 0:
            y = y * 0.9
        s = s * 0.5 + math.sin(y) * 3.0
    return s


def two_uses(x):
    return np.sum(np.sin(x) * np.cos(x))


def calls_helper(x):
    return np.sum(helper(np.sin(x)) * x)


# ------------------------------------------------------------------ forward

def becomes_active(x):
    s = 0.0
    for i in range(3):
        s = s + x * (i + 1.0)
    return np.sum(s * s)


def two_outputs(x):
    return np.sin(x), np.sum(x * x)


def one_tangent(x, y):
    return x * 2.0, y * 3.0


# ------------------------------------------------------------------ codegen

def fails_forward(x):
    y = np.sin(x)
    assert np.all(y > 10.0), "too small"  # <-assert
    return np.sum(y)


def scalar_poly(x):
    return math.sin(x) * x * x + 3.0 * x


# ------------------------------------------------------------------ more lower / anf / kinds

def find_first(x):
    for i in range(5):
        if x[i] > 0:
            return x[i] * 2.0
    return x[0]


def nested_jumps(x):
    s = 0.0
    for i in range(3):
        for j in range(3):
            if j > i:
                break
            s = s + x[i] * x[j]
        if s > 100.0:
            continue
        s = s * 1.1
    k = 0
    while k < 4:
        k = k + 1
        if k == 2:
            continue
        if x[0] > 10.0:
            return s
        s = s + x[1]
    return s


def same_twice(x):
    y = x * 2.0
    return y, y


def containers_fn(xs, y):
    t = (y, y * 2.0)
    a = xs[0] * t[1]
    return np.sum(a)


# ------------------------------------------------------------------ in place

def einsum_view(x):
    y = np.sum(np.sin(x))
    d = np.einsum("ii->i", x)       # a writeable view of x's diagonal
    d[0] = 0.0
    return y + np.sum(d * d)


# ------------------------------------------------------------------ closure

_tanh_grad = sg.grad(tanh_loop)
V = np.array([0.3, -0.7, 0.2])


def directional(x):
    return np.sum(_tanh_grad(x) * V)
