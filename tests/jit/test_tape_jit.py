"""@sg.function(jit=True): a decorated function's tape calls run their split
forward and reverse sweeps compiled by Numba, with the values of the
CPython sweeps (and of central finite differences); a function Numba
cannot compile runs in CPython with a PerformanceWarning; arrays the
program writes to after the call do not change the gradient; the user's
code runs once per call (its random draws are the plain call's)."""
import warnings

import numpy as np
import pytest

numba = pytest.importorskip("numba")

import srcgrad as sg  # noqa: E402
from gradcheck import check_close, numerical_grad  # noqa: E402
from test_sg_jit import pendulum as _pendulum  # noqa: E402  (the loop on Python floats of sg.jit's tests)


def _chain(x, w, n):
    for i in range(n):
        x = x + 0.1 * np.sin(x * w)
    return np.sum(x * x)


def _two_outputs(x, y):
    s = np.tanh(x) * y
    return np.sum(s * s), s[0] * 2.0


chain_jit = sg.function(jit=True)(_chain)
chain_py = sg.function(_chain)
pendulum_jit = sg.function(jit=True)(_pendulum)
two_jit = sg.function(jit=True)(_two_outputs)


def _tape_gradient(fn, args, wrt, persistent=False):
    with sg.GradientTape(persistent=persistent) as tape:
        out = fn(*args)
    return out, tape.gradient(out, [args[i] for i in wrt]), tape


@pytest.fixture
def compiled_only():
    """PerformanceWarnings are errors: the calls must run compiled."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        yield


def test_loop_of_arrays_matches_cpython_and_finite_differences(compiled_only):
    rng = np.random.default_rng(0)
    for n in (5, 0, 3):         # (0: the stacks pass empty between the sweeps)
        x0, w = rng.normal(size=4), rng.normal(size=4)
        x, wv = sg.Variable(x0), sg.Variable(w)
        out, (gx, gw), _ = _tape_gradient(chain_jit, (x, wv, n), (0, 1))
        ref_out, (rx, rw), _ = _tape_gradient(chain_py, (sg.Variable(x0), sg.Variable(w), n), (0, 1))
        check_close(out.numpy(), ref_out.numpy(), rtol=1e-13)
        check_close(gx.numpy(), rx.numpy(), rtol=1e-12)
        check_close(gw.numpy(), rw.numpy(), rtol=1e-12)
        check_close(gx.numpy(), numerical_grad(lambda z: _chain(z, w, n), x0), rtol=1e-6)
        check_close(gw.numpy(), numerical_grad(lambda z: _chain(x0, z, n), w), rtol=1e-6)
    assert not chain_jit.jit.fallbacks


def test_scalar_loop_on_0d_variables(compiled_only):
    th, c = sg.Variable(0.5), sg.Variable(0.3)
    out, (g_th, g_c), _ = _tape_gradient(pendulum_jit, (th, c), (0, 1))
    expected = sg.grad(_pendulum, wrt=(0, 1))(0.5, 0.3)
    check_close(out.numpy(), _pendulum(0.5, 0.3), rtol=1e-13)
    check_close(g_th.numpy(), expected[0], rtol=1e-12)
    check_close(g_c.numpy(), expected[1], rtol=1e-12)
    check_close(g_c.numpy(), numerical_grad(lambda z: _pendulum(0.5, z), np.array(0.3)), rtol=1e-6)


def test_two_outputs_and_a_persistent_tape(compiled_only):
    x0, y0 = np.array([0.3, -1.2, 0.8]), np.array([1.5, 0.5, -2.0])
    x = sg.Variable(x0)
    with sg.GradientTape(persistent=True) as tape:
        a, b = two_jit(x, y0)
    # each output's cotangent, then both: the reverse sweep is run three times on the same residuals
    for target, f in ((a, lambda z: _two_outputs(z, y0)[0]), (b, lambda z: _two_outputs(z, y0)[1]),
                      ([a, b], lambda z: sum(_two_outputs(z, y0)))):
        check_close(tape.gradient(target, x).numpy(), numerical_grad(f, x0), rtol=1e-6)


def test_an_array_written_after_the_call_does_not_change_the_gradient(compiled_only):
    w = np.array([0.5, 1.5, -1.0])
    x0 = np.array([0.2, 0.4, -0.3])
    x = sg.Variable(x0)
    expected = numerical_grad(lambda z: _chain(z, w, 3), x0)
    with sg.GradientTape() as tape:
        out = chain_jit(x, w, 3)
    w[:] = 100.0        # the residuals hold the values at the call (TF's tape does the same)
    check_close(tape.gradient(out, x).numpy(), expected, rtol=1e-6)


def test_outside_tapes_it_runs_the_jitted_function():
    value = pendulum_jit(0.5, 0.3)
    assert value == pytest.approx(_pendulum(0.5, 0.3), rel=1e-14)
    assert pendulum_jit.jit.plain.signatures         # compiled by Numba, not the Python function


def _keyed(x, table):
    return x * table["scale"]


def test_a_function_numba_cannot_compile_runs_in_cpython_with_a_warning():
    keyed = sg.function(jit=True)(_keyed)
    x = sg.Variable(np.array([1.0, 2.0]))
    with pytest.warns(sg.PerformanceWarning, match="runs in CPython on the tape"):
        with sg.GradientTape() as tape:
            out = keyed(x, {"scale": 3.0})
    check_close(tape.gradient(out, x).numpy(), [3.0, 3.0])
    assert keyed.jit.fallbacks
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)      # (warned once per argument types)
        with sg.GradientTape() as tape:
            out = keyed(x, {"scale": 2.0})
    check_close(tape.gradient(out, x).numpy(), [2.0, 2.0])


def _noisy(x, rng):
    noise = rng.normal(size=x.shape)
    return np.sum((x + noise) ** 2), noise


def test_random_draws_happen_once_per_call():
    noisy = sg.function(jit=True)(_noisy)
    x0 = np.array([0.1, -0.2, 0.3])
    x = sg.Variable(x0)
    rng, twin = np.random.default_rng(7), np.random.default_rng(7)
    # (a Generator argument: CPython, whose draws are NumPy's; Numba's generators are its own)
    with pytest.warns(sg.PerformanceWarning, match="random"):
        with sg.GradientTape() as tape:
            value, noise = noisy(x, rng)
    drawn = twin.normal(size=3)
    check_close(noise.numpy(), drawn, rtol=0)
    check_close(tape.gradient(value, x).numpy(), 2 * (x0 + drawn), rtol=1e-12)
    check_close(rng.normal(), twin.normal(), rtol=0)        # nothing else drawn


def _filled(x):
    acc = np.zeros(x.shape[0])
    for i in range(3):
        acc = acc + np.sin(x * (i + 1)) * x
    return np.sum(acc * acc)


def test_numpy_allocations_compile_inside_the_tape(compiled_only):
    # (a recording tape replaces np.zeros and the other allocators with its own wrappers; Numba, which
    # compiles the sweeps at the call, inside the tape, is shown NumPy's)
    filled = sg.function(jit=True)(_filled)
    x0 = np.array([0.4, -1.1, 2.0, 0.7])
    x = sg.Variable(x0)
    with sg.GradientTape() as tape:
        out = filled(x)
    check_close(out.numpy(), _filled(x0), rtol=1e-13)
    check_close(tape.gradient(out, x).numpy(), numerical_grad(_filled, x0), rtol=1e-6)


WEIGHTS = np.array([1.0, 2.0, 3.0])


def _weighted(x):
    return np.sum(WEIGHTS * x * x)


class _Model:
    def __init__(self):
        self.w = np.array([0.5, -1.0, 2.0])

    def loss(self, x):
        return np.sum(self.w * np.sin(x))


def _closure_over(w):
    def loss(x):
        return np.sum(w * x * x)
    return loss


def test_arrays_the_program_writes_in_place_are_read_at_each_call():
    # Numba reads a global array when it compiles; the generated code reads it at each call (an optimiser
    # updating weights in place): the compiled code takes the array as an argument, or runs in CPython
    x0 = np.array([0.3, -0.7, 1.1])
    tape_jit = sg.function(jit=True)(_weighted)
    grad_jit = sg.jit(sg.grad(_weighted))
    closure = _closure_over(np.array([2.0, 0.5, -1.0]))
    closure_jit = sg.jit(sg.grad(closure))
    model = _Model()
    method_jit = sg.jit(sg.grad(model.loss))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)     # (the method: CPython)
        for step in range(2):
            x = sg.Variable(x0)
            with sg.GradientTape() as tape:
                out = tape_jit(x)
            check_close(tape.gradient(out, x).numpy(), 2 * WEIGHTS * x0, rtol=1e-13)
            check_close(grad_jit(x0), 2 * WEIGHTS * x0, rtol=1e-13)
            w = closure.__closure__[0].cell_contents
            check_close(closure_jit(x0), 2 * w * x0, rtol=1e-13)
            check_close(method_jit(x0), model.w * np.cos(x0), rtol=1e-13)
            check_close(tape_jit(x0), np.sum(WEIGHTS * x0 * x0), rtol=1e-13)   # (outside tapes: CPython)
            WEIGHTS[:] *= 3.0          # written in place between the calls
            w *= -2.0
            model.w += 1.0
    WEIGHTS[:] = [1.0, 2.0, 3.0]
    assert not tape_jit.jit.fallbacks and not grad_jit.fallbacks and not closure_jit.fallbacks
    assert "freeze" in next(iter(tape_jit.jit.plain.fallbacks.values()))
    assert any("freeze" in reason for reason in method_jit.fallbacks.values())


def _loop_with_draws(x):
    s = 0.0
    for i in range(3):
        s = s + (x + np.random.normal()) ** 2
    return s


def test_np_random_draws_are_numpys_under_jit():
    # Numba would draw from its own generator (seeded apart from NumPy's): the gradient would silently
    # differ from the plain call's; such code runs in CPython, with the reason
    np.random.seed(3)
    expected = np.sum(2 * (0.5 + np.random.normal(size=3)))
    np.random.seed(3)
    with pytest.warns(sg.PerformanceWarning, match="random"):
        got = sg.jit(sg.grad(_loop_with_draws))(0.5)
    check_close(got, expected, rtol=1e-13)
    np.random.seed(3)
    v = sg.Variable(0.5)
    with pytest.warns(sg.PerformanceWarning, match="random"):
        with sg.GradientTape() as tape:
            y = sg.function(jit=True)(_loop_with_draws)(v)
    check_close(tape.gradient(y, v).numpy(), expected, rtol=1e-13)


def _activation(u):
    return np.tanh(u)


def _with_helper(x):
    return np.sum(_activation(x) * x)


def test_a_helpers_residuals_stay_whole(compiled_only):
    # the helper's split sweeps return and take their own residual tuple; flattening the caller's
    # residuals once flattened that tuple too, and the helper's reverse sweep read a row of an array
    # for it: a wrong gradient, silently (found running issue 4's corpus through jit=True)
    x0 = np.array([0.4, -1.3, 0.9])
    x = sg.Variable(x0)
    with sg.GradientTape() as tape:
        out = sg.function(jit=True)(_with_helper)(x)
    check_close(tape.gradient(out, x).numpy(), np.tanh(x0) + x0 * (1 - np.tanh(x0) ** 2), rtol=1e-12)
