"""sg.jacobian in forward mode, chosen by the sizes (API.md: "forward or
reverse mode chosen by the sizes"): for a tall Jacobian (few inputs, many
outputs), the Jacobian of u -> J^T u (the VJP transposed), by the batched
reverse sweep of the generated VJP code with in.size rows. f runs once per
call in both modes. Checked against central differences, autograd and
reverse mode."""
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_jacobian
from srcgrad import jacobians
from srcgrad.errors import PerformanceWarning

RNG = np.random.default_rng(1129)
W = RNG.normal(size=(160, 6))


def tall(x):
    h = np.tanh(W @ x)
    return np.sin(h) * np.sum(x ** 2) + h[::-1]


def tall_matrix(x):
    m = np.stack([np.cos(x[0]) * x, np.sin(x[1]) * x ** 2])          # (2, 6)
    out = np.zeros((40, 6))
    for k in range(40):
        out[k] = m[k % 2] * (k + 1) + W[k] * x[2]
    return out


def rotations(x):
    c, s = np.cos(x[0]), np.sin(x[0])
    R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) * x[1]
    return (R @ W[:, :3].T).T + x[2:5]


FUNCTIONS = [(tall, 6), (tall_matrix, 6), (rotations, 5)]


@pytest.fixture
def spy(monkeypatch):
    calls = []
    real = jacobians._jacobian_transposed

    def counting(*args):
        out = real(*args)
        calls.append(out is not None)
        return out
    monkeypatch.setattr(jacobians, "_jacobian_transposed", counting)
    return calls


def _autograd_jacobian(fn, x):
    import test_jacobian_forward as me
    saved = me.np
    me.np = anp
    try:
        return autograd.jacobian(fn)(x)
    except Exception:
        return None
    finally:
        me.np = saved


@pytest.mark.parametrize("fn, n", FUNCTIONS, ids=[f.__name__ for f, _ in FUNCTIONS])
def test_forward_mode_values(fn, n, spy):
    x0 = RNG.normal(size=n) * 0.6 + 0.2
    jac = sg.jacobian(fn)
    reverse = jac(x0)                   # the first call: reverse mode, learns the output's shape
    assert spy == []
    forward = jac(x0)
    assert spy == [True]
    assert forward.shape == fn(x0).shape + x0.shape and forward.dtype == np.float64
    check_close(forward, numerical_jacobian(fn, x0), rtol=1e-6, atol=1e-7)
    check_close(forward, reverse, rtol=1e-12, atol=1e-12)
    expected = _autograd_jacobian(fn, x0)
    if expected is not None:
        check_close(forward, expected, rtol=1e-12, atol=1e-12)


def test_small_or_square_jacobians_stay_in_reverse_mode(spy):
    jac = sg.jacobian(lambda x: np.tanh(W[:20, :6] @ x))      # 20 outputs: below FORWARD_MIN_OUT
    x0 = RNG.normal(size=6)
    jac(x0)
    jac(x0)
    square = sg.jacobian(lambda x: np.sin(x) * x[0])
    square(RNG.normal(size=200))
    square(RNG.normal(size=200))
    assert spy == []


def test_forward_mode_runs_f_once_per_call():
    """Random draws and appends happen once per Jacobian, as in the plain
    call, and the Jacobian is the one at the draws made."""
    log = []
    gen = np.random.default_rng(7)

    def noisy(x):
        noise = gen.normal(size=160)
        log.append(1)
        return np.tanh(W @ x) * noise
    jac = sg.jacobian(noisy)
    x0 = RNG.normal(size=6)
    for call in range(3):
        state = gen.bit_generator.state
        j = jac(x0)
        assert len(log) == call + 1
        twin = np.random.default_rng(7)
        twin.bit_generator.state = state
        noise = twin.normal(size=160)
        np.testing.assert_array_equal(twin.bit_generator.state["state"]["state"],
                                      gen.bit_generator.state["state"]["state"])
        expected = (1 - np.tanh(W @ x0) ** 2)[:, None] * W * noise[:, None]
        check_close(j, expected, rtol=1e-12, atol=1e-13)


def test_output_size_that_changes_runs_reverse_mode_with_a_warning():
    """A mask of the same shape with fewer entries set: the output (same
    argument shapes) is smaller than the one forward mode was chosen for;
    f runs again in reverse mode, with a PerformanceWarning, and the
    Jacobian is right."""
    def picked(x, m):
        return np.outer(np.sin(x)[m], np.arange(10.0)) * x[0]
    jac = sg.jacobian(picked)
    x0 = RNG.normal(size=20) * 0.1 + 0.3
    mask = np.ones(20, dtype=bool)
    jac(x0, mask)                                       # 200 outputs: forward mode next time
    fewer = mask.copy()
    fewer[::2] = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        j = jac(x0, fewer)                              # same shapes, 100 outputs
    assert any(issubclass(w.category, PerformanceWarning) and "second time" in str(w.message) for w in caught)
    assert j.shape == (10, 10, 20)
    check_close(j, numerical_jacobian(lambda x: picked(x, fewer), x0), rtol=1e-6, atol=1e-7)


def test_forward_mode_float32_and_extra_arguments():
    W32 = W.astype(np.float32)

    def f(x, scale, n):
        return np.tanh(W32[:n] @ x) * scale
    jac = sg.jacobian(f)
    x0 = RNG.normal(size=6).astype(np.float32)
    a = jac(x0, 2.0, 150)
    b = jac(x0, 2.0, 150)
    assert b.dtype == a.dtype == np.float32 and b.shape == (150, 6)
    check_close(b, a, rtol=1e-5, atol=1e-6)
    c = jac(x0, 2.0, 40)                # another n: another signature (reverse mode, then learned)
    assert c.shape == (40, 6)
    check_close(c, a[:40], rtol=1e-5, atol=1e-6)


@pytest.fixture
def always_forward(monkeypatch):
    """Forward mode for every Jacobian seen once (whatever the sizes)."""
    monkeypatch.setattr(jacobians, "FORWARD_MIN_OUT", 0)
    monkeypatch.setattr(jacobians, "FORWARD_BELOW", float("inf"))


def _vector_functions():
    import test_jacobians
    return test_jacobians.VECTOR_FUNCTIONS


@pytest.mark.parametrize("index", range(len(_vector_functions())),
                         ids=[f.__name__ for f, _ in _vector_functions()])
def test_forward_mode_on_the_reverse_mode_corpus(index, always_forward, spy):
    """Every vector function of test_jacobians (elementwise, broadcasting,
    reductions, matmul, indexing, reshapes, where/clip, loops, lists, a
    helper) by forward mode: the reverse-mode Jacobian's values, and
    autograd's."""
    import test_jacobians
    fn, n = _vector_functions()[index]
    x0 = RNG.normal(size=n) * 0.7 + 0.05
    jac = sg.jacobian(fn)
    reverse = jac(x0)
    forward = jac(x0)
    assert spy == [True]
    check_close(forward, reverse, rtol=1e-12, atol=1e-12)
    check_close(forward, test_jacobians._autograd_jacobian(fn, x0), rtol=1e-10, atol=1e-12)


def test_several_arguments_in_one_sweep():
    """wrt=(0, 1): f runs once, and both Jacobians are at the same random
    draws (each used to be computed by its own run of f); a repeated
    index gives the same Jacobian twice."""
    gen = np.random.default_rng(3)
    calls = []

    def noisy(x, y):
        calls.append(1)
        return np.sin(x) * y[:3] * gen.normal(size=3)
    x, y = np.array([0.1, 0.2, 0.3]), np.arange(1.0, 5.0)
    state = gen.bit_generator.state
    jx, jy = sg.jacobian(noisy, wrt=(0, 1))(x, y)
    assert len(calls) == 1
    twin = np.random.default_rng(3)
    twin.bit_generator.state = state
    noise = twin.normal(size=3)
    check_close(jx, np.diag(np.cos(x) * y[:3] * noise), rtol=1e-14, atol=1e-15)
    expected_y = np.zeros((3, 4))
    expected_y[:, :3] = np.diag(np.sin(x) * noise)
    check_close(jy, expected_y, rtol=1e-14, atol=1e-15)

    def smooth(x, y):
        return np.tanh(x * y[:3]) + np.sum(y) * x
    a, b, c = sg.jacobian(smooth, wrt=(1, 0, 1))(x, y)
    assert a.shape == c.shape == (3, 4) and b.shape == (3, 3)
    np.testing.assert_array_equal(a, c)
    check_close(a, numerical_jacobian(lambda v: smooth(x, v), y), rtol=1e-6, atol=1e-8)
    check_close(b, numerical_jacobian(lambda v: smooth(v, y), x), rtol=1e-6, atol=1e-8)


M44 = RNG.normal(size=(4, 4)) + 4 * np.eye(4)


@sg.custom_gradient
def _clipped(x):
    def grad_fn(g):
        return g * 0.5
    return np.clip(x, -1.0, 1.0), grad_fn


def with_custom_gradient(x):
    return _clipped(W[:, :4] @ x) * 2.0


def with_while(x):
    y = W[:, :4] @ x
    k = 0
    while k < 3:
        y = np.sin(y) + x[1]
        k += 1
    return y


def with_solve(x):
    return np.exp(W[:, :4] @ np.linalg.solve(M44, x) * 0.3)


def with_checkpointed_loop(x):
    h = W[:, :4] @ x
    for t in sg.checkpointed(range(4), snapshots=2):
        h = np.tanh(h) * 0.9 + 0.1
    return h


def with_grad_hook(x):
    y = W[:, :4] @ x
    with sg.insert_grad_of(y) as by:
        by = by * 2.0
    return np.sin(y)


PROGRAMS = [with_custom_gradient, with_while, with_solve, with_checkpointed_loop, with_grad_hook]


@pytest.mark.parametrize("fn", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
def test_forward_mode_agrees_with_reverse_mode_on_programs(fn, always_forward, spy):
    """Custom gradients, while loops, linear solves, checkpointed loops and
    gradient hooks: the transposed VJP gives reverse mode's Jacobian (the
    custom gradient's and the hook's, not the plain derivative)."""
    x0 = RNG.normal(size=4) * 0.3
    jac = sg.jacobian(fn)
    reverse = jac(x0)
    forward = jac(x0)
    assert spy == [True]
    check_close(forward, reverse, rtol=1e-13, atol=1e-14)
    if fn is with_solve or fn is with_while or fn is with_checkpointed_loop:
        check_close(forward, numerical_jacobian(fn, x0), rtol=1e-6, atol=1e-8)


def test_a_python_float_input_at_other_values_takes_forward_mode(spy):
    """The signature holds a float's type, not its value: a trajectory's
    Jacobian in a scalar parameter goes forward from the second call on."""
    jac = sg.jacobian(lambda t: np.sin(t * np.arange(200.0)))
    for t in (0.3, 0.4, 0.5):
        check_close(jac(t), np.cos(t * np.arange(200.0)) * np.arange(200.0), rtol=1e-14, atol=1e-14)
    assert spy == [True, True]


def test_an_output_dtype_that_changes_runs_reverse_mode_with_a_warning():
    complex_out = [False]

    def f(x):
        y = np.sin(np.outer(x, np.arange(50.0)))
        return y * 1j if complex_out[0] else y
    jac = sg.jacobian(f)
    x0 = np.array([0.1, 0.2, 0.3])
    jac(x0)
    jac(x0)                             # forward mode from here
    complex_out[0] = True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = jac(x0)
    assert any(issubclass(w.category, PerformanceWarning) and "complex128" in str(w.message) for w in caught)
    np.testing.assert_array_equal(got, sg.jacobian(f)(x0))     # reverse mode's, from a fresh jacobian
