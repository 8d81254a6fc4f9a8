"""Issue 16, "crashes and unclear errors": constructs a tracing tool
differentiates that crash srcgrad's generated code or are refused.

* `itertools.product` in a generator expression under `sum(...)` (the
  issue's `TypeError: 'itertools.product' has no len()`) and in a for loop;
* a `functools.wraps` forwarding decorator (`*args, **kwargs`) applied to a
  helper called from differentiated code (positional and keyword calls); the
  same decorator without functools.wraps is the control.

Each through sg.grad, sg.jvp and @sg.function in a GradientTape against
central differences of the plain function; a crash or a refusal fails.

Beyond the issue's list (found by the fuzzer): sg.hvp of a function
multiplying by a boolean mask inside a loop crashes in generated code
(sg.hessian of the same function is right: both against differences of
differences).
"""
import functools
import itertools

import numpy as np
import pytest

from system_support import first_order, params, second_order, short_traceback

X = np.array([0.3, 0.7, 1.1])


def product_genexp(x):
    return sum(x[i] * x[j] for i, j in itertools.product(range(2), range(2)))


def product_loop(x):
    s = 0.0
    for i, j in itertools.product(range(2), range(3)):
        s = s + x[i] * np.sin(x[j])
    return s


def forwarding(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


def forwarding_no_wraps(fn):
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@forwarding
def _wrapped(v):
    return np.sin(v) * v


@forwarding_no_wraps
def _wrapped_no_wraps(v):
    return np.sin(v) * v


def calls_wrapped(x):
    return np.sum(_wrapped(x) * 2.0)


def calls_wrapped_by_keyword(x):
    return np.sum(_wrapped(v=x) * 2.0)


def calls_wrapped_no_wraps(x):
    return np.sum(_wrapped_no_wraps(x) * 2.0)


def mask_in_loop(x):
    """Beyond the issue's list (found by the fuzzer): a boolean mask multiplied
    in inside a loop; sg.hvp crashes (the tangent of the comparison is None)."""
    a = x * 1.0
    for k in range(2):
        a = np.tanh(a + x[k] * a)
        a = a * (x > 0.1) / 0.7
    return np.sum(a * a)


def starred_list_built_in_a_loop(x):
    """Found by autograd's convnet (a convolution over np.ndindex(*dims)): a
    list bound to [] and then appended to was expanded at `f(*dims)` as the
    empty display, silently: np.ndindex() instead of np.ndindex(3)."""
    dims = []
    for d in range(1):
        dims.append(x.shape[d])
    total = 0.0
    for idx in list(np.ndindex(*dims)):
        total = total + np.sin(x[idx]) * (idx[0] + 1.0)
    return total


PROGRAMS = {f.__name__: f for f in [product_genexp, product_loop, calls_wrapped, calls_wrapped_by_keyword,
                                     calls_wrapped_no_wraps, mask_in_loop, starred_list_built_in_a_loop]}
MODES = ("grad", "jvp", "tape")
SECOND = ("hvp", "hessian")
PRODUCT = "crash: itertools.product in differentiated code: TypeError 'itertools.product' has no len()"
WRAPS = ("crash: a functools.wraps forwarding decorator: UnsupportedSyntaxError '**kwargs in a call, unless "
         "kwargs is the function's own **kwargs' at the wrapper's `return fn(*args, **kwargs)`, although it is "
         "the wrapper's own **kwargs (the same wrapper without functools.wraps works)")
BROKEN, RAISES = {}, {}
for _m in MODES:
    for _n in ("product_genexp", "product_loop"):
        BROKEN[(_n, _m)], RAISES[(_n, _m)] = PRODUCT, TypeError
# (calls_wrapped, calls_wrapped_by_keyword: the compiler still refuses the functools.wraps forwarding
# call (WRAPS); the function runs op by op on the tape instead, right, with a PerformanceWarning)


# (mask_in_loop under sg.hvp: fixed, the zero tangent of a value read back from a stack is zero_tangent)


@pytest.mark.parametrize("name, mode", params(PROGRAMS, MODES, BROKEN, RAISES))
@short_traceback
def test_differentiates(name, mode):
    first_order(mode, PROGRAMS[name], X)


@pytest.mark.parametrize("name, mode", params(["mask_in_loop"], SECOND, BROKEN, RAISES))
@short_traceback
def test_second_order(name, mode):
    second_order(mode, PROGRAMS[name], X)
