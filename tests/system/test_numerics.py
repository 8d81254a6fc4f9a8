"""Issue 16, "numerics": derivatives that come out NaN (or wrong) where the
mathematics gives a finite number.

* Second derivatives of piecewise-linear code (Tangent's corpus functions
  `overwrite_if` and `while_big`, and an array version of overwrite_if):
  finite, and 0 away from the kinks, by central differences of central
  differences (the first derivative is constant between kinks). Through
  sg.hessian, sg.jacobian(sg.grad(f)), sg.hvp and sg.grad(sg.grad(f)).
* `d/dn sum(x ** n)` at x = [0, 2], n = 2: 4 ln 2 (0 ** n contributes
  n-derivative 0 ln 0 := 0, as JAX does), by central differences in n;
  the second derivative 4 ln(2)^2 by differences of differences.
* `x ** 0.0` at x = 0: gradient 0 (JAX's convention 0 ** 0 = 1 with
  derivative 0; central differences give 0 too, since (+-h) ** 0.0 = 1).
* `np.sum(x.astype(int) * x)`: astype(int) is piecewise constant, so the
  gradient is trunc(x), by central differences away from integers.
"""
import warnings

import numpy as np
import pytest

import srcgrad as sg
from system_support import HVP_ATOL, HVP_RTOL, close, fd_grad, fd_hvp, params, tape_grad, short_traceback

# the NaNs being pinned come with NumPy's "invalid value" warnings
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def overwrite_if(a):
    if a > 0:
        a = a * 3.0
    else:
        a = a * 2.0
    return a


def while_big(a):
    while np.abs(a) > 0.1:
        a = a * 0.5
    return a


def overwrite_if_array(x):
    if np.sum(x) > 0:
        x = x * 3.0
    else:
        x = x * 2.0
    return np.sum(x)


PIECEWISE = {
    # name: (program, inputs away from the kinks)
    "overwrite_if": (overwrite_if, [1.3, -0.7]),
    "while_big": (while_big, [1.3, -0.7]),
    "overwrite_if_array": (overwrite_if_array, [np.array([0.3, 0.5]), np.array([-0.4, 0.1])]),
}
SECOND = ("hessian", "jacobian_of_grad", "hvp", "grad_grad")
BROKEN_PW = {}     # (fixed: batched zeros of an input restored by its shape are zeros, not None)


def second(mode, fn, x):
    """The second derivative as a dense array of shape x.shape + x.shape."""
    v_shape = np.shape(x)
    if mode == "hessian":
        return np.asarray(sg.hessian(fn)(x))
    if mode == "jacobian_of_grad":
        return np.asarray(sg.jacobian(sg.grad(fn))(x))
    if mode == "hvp":
        if v_shape == ():
            return np.asarray(sg.hvp(fn)(x, 1.0))
        eye = np.eye(np.size(x))
        return np.stack([np.asarray(sg.hvp(fn)(x, e)) for e in eye])
    if v_shape == ():
        return np.asarray(sg.grad(sg.grad(fn))(x))
    g = sg.grad(fn)
    return np.stack([np.asarray(sg.grad(lambda w, e=e: np.sum(g(w) * e))(x)) for e in np.eye(np.size(x))])


def fd_second(fn, x):
    x = np.asarray(x, dtype=np.float64)
    f = (lambda v: fn(float(v))) if x.shape == () else fn
    if x.shape == ():
        return fd_hvp(f, x, np.array(1.0))
    return np.stack([fd_hvp(f, x, e) for e in np.eye(x.size)])


@pytest.mark.parametrize("name, mode", params(PIECEWISE, SECOND, BROKEN_PW))
@short_traceback
def test_piecewise_linear_second_derivative(name, mode):
    fn, inputs = PIECEWISE[name]
    for x in inputs:
        expected = fd_second(fn, x)
        close(expected, np.zeros_like(expected), rtol=0, atol=HVP_ATOL, what="oracle: piecewise linear")
        close(second(mode, fn, x), expected, rtol=HVP_RTOL, atol=HVP_ATOL, what="%s at %s" % (mode, x))


# ------------------------------------------------------------------ d/dn x ** n at x = 0

def power_sum(n, x):
    return np.sum(x ** n)


XP = np.array([0.0, 2.0])


@short_traceback
def test_power_exponent_oracle():
    """Central differences in n give 4 ln 2 (the x = 0 term is constant 0 in n > 0)."""
    close(fd_grad(lambda n: power_sum(float(n), XP), np.array(2.0)), 4 * np.log(2.0))


# (d/dn of 0 ** n was 0 * log(0) = NaN instead of 0: the base is replaced by 1 where it is 0, as autograd does)

@short_traceback
def test_power_exponent_grad():
    close(sg.grad(power_sum)(2.0, XP), fd_grad(lambda n: power_sum(float(n), XP), np.array(2.0)), what="d/dn")


@short_traceback
def test_power_exponent_jvp():
    _, t = sg.jvp(lambda n: power_sum(n, XP), (2.0,), (1.0,))
    close(t, fd_grad(lambda n: power_sum(float(n), XP), np.array(2.0)), what="jvp in n")


@short_traceback
def test_power_exponent_second_derivative():
    expected = fd_hvp(lambda n: power_sum(float(n), XP), np.array(2.0), np.array(1.0))
    close(expected, 4 * np.log(2.0) ** 2, rtol=HVP_RTOL, atol=HVP_ATOL, what="oracle")
    close(sg.grad(sg.grad(power_sum))(2.0, XP), expected, rtol=HVP_RTOL, atol=HVP_ATOL, what="d2/dn2")


@short_traceback
def test_power_base_gradient_at_zero():
    """Control: the gradient in x at x = [0, 2] (n = 2) is 2x."""
    close(sg.grad(power_sum, wrt=(1,))(2.0, XP), fd_grad(lambda v: power_sum(2.0, v), XP))


# ------------------------------------------------------------------ x ** 0.0 at 0

def zero_power(x):
    return np.sum(x ** 0.0)


def zero_power_times_x(x):
    return np.sum(x ** 0.0 * x)


X0 = np.array([0.0, 1.5])
ZERO = {"zero_power": zero_power, "zero_power_times_x": zero_power_times_x}
ZERO_MODES = ("grad", "jvp", "tape")
# (d/dx x ** 0.0 at x = 0 was 0 * 0 ** -1 = NaN, ZeroDivisionError on Python floats: the power rule
# now raises x to y - (y != 0), 0 where y is 0)
BROKEN_ZERO = {}


def first(mode, fn, x, v):
    if mode == "grad":
        return sg.grad(fn)(x)
    if mode == "jvp":
        return sg.jvp(fn, (x,), (v,))[1]
    return tape_grad(fn, x)[1]


@pytest.mark.parametrize("name, mode", params(ZERO, ZERO_MODES, BROKEN_ZERO))
@short_traceback
def test_zero_power_at_zero(name, mode):
    fn = ZERO[name]
    v = np.array([1.0, -0.5])
    expected = fd_grad(fn, X0)
    got = first(mode, fn, X0.copy(), v)
    close(got, expected @ v if mode == "jvp" else expected, what="%s of %s" % (mode, name))


# ------------------------------------------------------------------ astype(int)

def astype_int(x):
    return np.sum(x.astype(int) * x)


def astype_int64(x):
    return np.sum(x.astype(np.int64) * x)


def floor_control(x):
    return np.sum(np.floor(x) * x)


XA = np.array([0.3, 1.7, -2.4])
def np_int64_cast(x):
    return np.sum(np.int64(x) * x)      # (autograd's test_cast_to_int: np.int64 called on the array)


CAST = {"astype_int": astype_int, "astype_int64": astype_int64, "np_int64_cast": np_int64_cast,
        "floor_control": floor_control}
# (x.astype(int) was differentiated as the identity, gradient x + trunc(x): fixed in anf.py, a cast to a
# non-floating dtype known at transform time has no derivative)


@pytest.mark.parametrize("name, mode", params(CAST, ZERO_MODES, {}))
@short_traceback
def test_integer_cast_is_piecewise_constant(name, mode):
    fn = CAST[name]
    if name == "np_int64_cast" and mode == "tape":
        # np.int64(t) reads the Tensor's values as integers: no derivative, so no warning of a cut path
        warnings.simplefilter("error", sg.GradientPathWarning)
    v = np.array([1.0, -0.5, 2.0])
    expected = fd_grad(fn, XA)
    close(expected, np.trunc(XA) if name != "floor_control" else np.floor(XA), what="oracle")
    got = first(mode, fn, XA.copy(), v)
    close(got, expected @ v if mode == "jvp" else expected, what="%s of %s" % (mode, name))
