"""Shared oracles and drivers for tests/system (issue 16, "No silent wrong
derivative").

Oracles (independent of srcgrad):

* `fd_grad(fn, x, reseed)`: central differences (tests/gradcheck.py) where
  `reseed()` runs before EVERY evaluation, so a program that draws random
  numbers sees the same draws at x + h e_i and x - h e_i (and in the call
  being checked, which is reseeded the same way);
* `fd_hvp(fn, x, v, reseed)`: d/dt grad f(x + t v) by central differences of
  central differences (as tests/test_corpus.py's `fd_hvp`);
* `gen_state(g)`: a comparable snapshot of a generator's state (the global
  NumPy generator, a `np.random.RandomState`, a `np.random.Generator`).

Drivers: `first_order(mode, fn, x, reseed, v)` checks srcgrad's first
derivative in a mode among MODES_1 (sg.grad, sg.value_and_grad, sg.jvp,
@sg.function inside a GradientTape) against `fd_grad`, and the value where
the mode returns one against the plain call; `second_order(mode, ...)` the
same for MODES_2 (sg.hvp, sg.hessian, sg.grad(sg.grad) as a Hessian-vector
product) against `fd_hvp`. A mismatch raises AssertionError with both
values on one line (`close`).

`params(names, modes, broken, raises)` builds the (name, mode) test
parameters, marking the broken ones xfail(strict=True, raises=...) with a
reason that starts with a category tag (runs-once, loop-vars, mutation,
stale, io, numerics, tape, crash). `short_traceback` keeps pytest from
formatting srcgrad's deep tracebacks for the hundreds of expected failures
(SRCGRAD_FULL_TRACEBACKS=1 turns it off).

`correct_or_refused(thunk, check, construct)`: for the cases where the issue
allows "refuse with a clear error" instead of the derivative: passes when
`check(thunk())` passes, or when `thunk` raises `sg.UnsupportedSyntaxError`
or `TypeError` whose message matches `construct` and that was not raised
from inside generated code (that is a crash, not a refusal).
"""
import functools
import importlib
import importlib.util
import itertools
import os
import re
import sys

import numpy as np
import pytest

import srcgrad as sg
from gradcheck import numerical_grad

RTOL, ATOL = 1e-5, 1e-6            # first order against central differences (h = 1e-6)
HVP_RTOL, HVP_ATOL = 1e-4, 1e-5    # second order against differences of differences

_counter = itertools.count()


# ---------------------------------------------------------------- modules

def load_source(tmp_path, source, stem="sysprog", register=False):
    """Write `source` to a fresh module file under tmp_path and import it
    (srcgrad compiles from real source). With `register`, the module is put
    in sys.modules under its name (needed by importlib.reload)."""
    name = "%s_%d" % (stem, next(_counter))
    path = tmp_path / (name + ".py")
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    if register:
        sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- generators

def gen_state(gen=None):
    """Comparable state of `gen` (None: NumPy's global generator)."""
    if gen is None:
        state = np.random.get_state()
    elif isinstance(gen, np.random.RandomState):
        state = gen.get_state()
    else:
        state = gen.bit_generator.state
    return _freeze(state)


def _freeze(s):
    if isinstance(s, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in s.items()))
    if isinstance(s, (list, tuple)):
        return tuple(_freeze(v) for v in s)
    if isinstance(s, np.ndarray):
        return ("array", s.dtype.str, s.tobytes())
    return s


def reseeder(gen=None, seed=0):
    """A function that puts `gen` (None: the global generator) back to the
    state of `seed`."""
    if gen is None:
        return lambda: np.random.seed(seed)
    if isinstance(gen, np.random.RandomState):
        return lambda: gen.seed(seed)
    start = np.random.default_rng(seed).bit_generator.state

    def reset():
        gen.bit_generator.state = start
    return reset


def no_reseed():
    pass


# ---------------------------------------------------------------- oracles

def fd_grad(fn, x, reseed=no_reseed, eps=1e-6):
    def f(v):
        reseed()
        return fn(v)
    return numerical_grad(f, np.asarray(x, dtype=np.float64), eps=eps)


def fd_hvp(fn, x, v, reseed=no_reseed, h=1e-4, eps=1e-5):
    x = np.asarray(x, dtype=np.float64)
    return (fd_grad(fn, x + h * v, reseed, eps) - fd_grad(fn, x - h * v, reseed, eps)) / (2 * h)


def close(actual, expected, rtol=RTOL, atol=ATOL, what=""):
    assert actual is not None, "%s: derivative is None" % what
    if isinstance(actual, sg.Tensor):
        actual = actual.numpy()
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
    if not np.allclose(actual, expected, rtol=rtol, atol=atol):     # (NaN is never close)
        with np.printoptions(precision=6, suppress=True):
            raise AssertionError("%s: got %s, expected %s (rtol=%g, atol=%g)"
                                 % (what, np.array2string(actual, separator=", ").replace("\n", ""),
                                    np.array2string(expected, separator=", ").replace("\n", ""), rtol, atol))


def direction(x, seed=7):
    return np.random.default_rng(seed).normal(size=np.shape(x))


# ---------------------------------------------------------------- drivers

MODES_1 = ("grad", "value_and_grad", "jvp", "tape")
MODES_2 = ("hvp", "hessian", "grad_grad")


def tape_grad(fn, x, compiled=None):
    """(value, gradient) of fn at x through `sg.function(fn)` called on a
    watched Tensor inside a GradientTape (one compiled tape entry)."""
    compiled = sg.function(fn) if compiled is None else compiled
    xt = sg.constant(np.asarray(x, dtype=np.float64))
    with sg.GradientTape() as tape:
        tape.watch(xt)
        y = compiled(xt)
    return y, tape.gradient(y, xt)


def derivative(mode, fn, x, v):
    """srcgrad's first derivative of scalar fn at x in `mode`: the gradient
    (grad, value_and_grad, tape) or the directional derivative along v (jvp),
    plus the value where the mode returns one."""
    if mode == "grad":
        return None, sg.grad(fn)(x)
    if mode == "value_and_grad":
        return sg.value_and_grad(fn)(x)
    if mode == "jvp":
        return sg.jvp(fn, (x,), (v,))
    if mode == "tape":
        y, g = tape_grad(fn, x)
        return y, g
    raise ValueError(mode)


def first_order(mode, fn, x, reseed=no_reseed, v=None):
    """Check srcgrad's first derivative of fn at x in `mode` against central
    differences (each evaluation reseeded), and its value against the plain
    call (reseeded)."""
    x = np.asarray(x, dtype=np.float64)
    v = direction(x) if v is None else v
    reseed()
    plain = fn(x.copy())
    expected = fd_grad(fn, x, reseed)
    reseed()
    value, got = derivative(mode, fn, x.copy(), v)
    if mode == "jvp":
        expected = np.sum(expected * v)
    close(got, expected, what="%s of %s" % (mode, getattr(fn, "__name__", fn)))
    if value is not None:
        close(value, plain, rtol=1e-12, atol=1e-12, what="value in %s" % mode)


def second_order(mode, fn, x, reseed=no_reseed, v=None):
    """Check srcgrad's second derivative (Hessian-vector product along v)
    against differences of differences."""
    x = np.asarray(x, dtype=np.float64)
    v = direction(x) if v is None else v
    expected = fd_hvp(fn, x, v, reseed)
    reseed()
    if mode == "hvp":
        got = sg.hvp(fn)(x.copy(), v)
    elif mode == "hessian":
        got = np.tensordot(np.asarray(sg.hessian(fn)(x.copy())), v, axes=v.ndim)
    elif mode == "grad_grad":
        gf = sg.grad(fn)
        got = sg.grad(lambda w: np.sum(gf(w) * v))(x.copy())
    else:
        raise ValueError(mode)
    close(got, expected, rtol=HVP_RTOL, atol=HVP_ATOL, what="%s of %s" % (mode, getattr(fn, "__name__", fn)))


# ---------------------------------------------------------------- refusals

def raised_in_generated_code(exc):
    """Was `exc` raised from srcgrad's generated code (a crash, not a refusal)?"""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith("<srcgrad-generated"):
            return True
        tb = tb.tb_next
    return any("generated" in note for note in getattr(exc, "__notes__", ()))


def correct_or_refused(thunk, check, construct):
    """Either `check(thunk())` passes (the correct derivative), or `thunk`
    refuses clearly: sg.UnsupportedSyntaxError or TypeError naming the
    construct (regex `construct`, case-insensitive), not raised inside
    generated code. Anything else propagates. Returns "refused" or "correct"."""
    try:
        result = thunk()
    except (sg.UnsupportedSyntaxError, TypeError) as exc:
        if raised_in_generated_code(exc) or not re.search(construct, str(exc), re.I):
            raise
        return "refused"
    check(result)
    return "correct"


# ---------------------------------------------------------------- tracebacks

def short_traceback(test):
    """Decorator for the tests of tests/system: an exception leaving the test
    keeps its type, message and srcgrad's notes, but not its traceback (nor
    its chained exceptions). pytest formats the traceback of every failure,
    also of expected ones (xfail), reading the source of each frame; through
    srcgrad's compiler that is dozens of frames, and it made these files
    several times slower. Set SRCGRAD_FULL_TRACEBACKS=1 to keep them."""
    if os.environ.get("SRCGRAD_FULL_TRACEBACKS"):
        return test

    @functools.wraps(test)
    def run(*args, **kwargs):
        try:
            return test(*args, **kwargs)
        except Exception as exc:        # (pytest's skip/fail/xfail outcomes are BaseExceptions: untouched)
            exc.__cause__ = None
            exc.__suppress_context__ = True
            raise exc.with_traceback(None)
    return run


# ---------------------------------------------------------------- parametrisation

def params(names, modes, broken, raises=AssertionError):
    """pytest params (name, mode) for every name and mode; those in `broken`
    (a dict (name, mode) -> reason, the reason starting with its category
    tag) are xfail(strict=True), so that a fix shows up as XPASS. `raises`
    is the exception the broken ones fail with today (a dict (name, mode) ->
    exception type overrides it per case), so that an xfail cannot pass for
    another reason."""
    out = []
    for name in names:
        for mode in modes:
            marks = []
            if (name, mode) in broken:
                exc = raises.get((name, mode), AssertionError) if isinstance(raises, dict) else raises
                marks = [pytest.mark.xfail(strict=True, raises=exc, reason=broken[(name, mode)])]
            out.append(pytest.param(name, mode, marks=marks, id="%s-%s" % (name, mode)))
    return out
