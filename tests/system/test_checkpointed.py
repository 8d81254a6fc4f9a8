"""sg.checkpointed(range(n), snapshots=s): a loop in differentiated code
reversed by binomial checkpointing (Revolve; Griewank & Walther, ACM TOMS
26(1), 2000).

Checked: the gradient equals the plain loop's and central differences for
several n and s (s = 1, s >= n, typical, None), with several loop-carried
arrays and scalars, loops over other ranges and over a sequence; second
order (sg.hessian, sg.hvp, grad of grad); @sg.function on a tape and on
nested tapes; that the body runs exactly n + p(n, s) times, p Revolve's
optimal number of re-runs; the schedule against a brute-force optimum for
small n and s, and its snapshot slots; the generated code against a golden
file (tests/golden/checkpointed.py.txt, a case of tests/test_golden.py);
outside differentiation the iterable itself.
"""
import functools
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad
from srcgrad.runtime import revolve

def euler(x, w, n, s):
    for t in sg.checkpointed(range(n), snapshots=s):
        x = x + 0.1 * np.sin(x) * w
    return np.sum(x ** 2)


def euler_plain(x, w, n, s):
    for t in range(n):
        x = x + 0.1 * np.sin(x) * w
    return np.sum(x ** 2)


X = np.array([0.3, -0.5, 0.8])
W = np.array([1.0, 2.0, 0.5])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 16])
@pytest.mark.parametrize("s", [1, 2, 3, 5, 40, None])
def test_gradient_equals_plain_and_differences(n, s):
    gx, gw = sg.grad(euler, wrt=(0, 1))(X, W, n, s)
    px, pw = sg.grad(euler_plain, wrt=(0, 1))(X, W, n, s)
    check_close(gx, px, rtol=1e-12, atol=1e-14)
    check_close(gw, pw, rtol=1e-12, atol=1e-14)
    check_close(gx, numerical_grad(lambda v: euler(v, W, n, s), X))
    check_close(gw, numerical_grad(lambda v: euler(X, v, n, s), W))


def coupled(x, v, c, k, n):
    """Several loop-carried arrays (x, v) and a scalar (c); k is read only."""
    for t in sg.checkpointed(range(n), snapshots=3):
        a = -k * np.sin(x) - 0.1 * v * c
        v = v + 0.05 * a
        x = x + 0.05 * v
        c = 0.9 * c + 0.01 * np.sum(x * v)
    return np.sum(x * x) + np.sum(v) * c


def coupled_plain(x, v, c, k, n):
    for t in range(n):
        a = -k * np.sin(x) - 0.1 * v * c
        v = v + 0.05 * a
        x = x + 0.05 * v
        c = 0.9 * c + 0.01 * np.sum(x * v)
    return np.sum(x * x) + np.sum(v) * c


def test_several_carried_arrays_and_a_scalar():
    args = (X, np.array([0.1, 0.2, -0.3]), 0.5, np.array([1.5, 0.7, 1.1]), 11)
    got = sg.grad(coupled, wrt=(0, 1, 2, 3))(*args)
    want = sg.grad(coupled_plain, wrt=(0, 1, 2, 3))(*args)
    for g, p in zip(got, want):
        check_close(g, p, rtol=1e-12, atol=1e-14)
    check_close(got[1], numerical_grad(lambda v: coupled(args[0], v, *args[2:]), args[1]))
    check_close(got[2], numerical_grad(lambda c: coupled(*args[:2], float(c), *args[3:]), np.array(0.5)))


def indexed(x, w, rows):
    """The loop variable indexes arrays; a range with a start and a step."""
    for i in sg.checkpointed(range(1, 2 * rows, 2), snapshots=2):
        x = np.tanh(x * w[i] + w[i - 1])
    return np.sum(x)


def over_sequence(x, ws):
    for w in sg.checkpointed(ws, snapshots=2):
        x = np.sin(x * w) + x
    return np.sum(x)


def test_other_ranges_and_sequences():
    w = np.linspace(0.5, 1.5, 12)
    g = sg.grad(indexed)(X, w, 6)
    check_close(g, numerical_grad(lambda v: indexed(v, w, 6), X))
    gw = sg.grad(indexed, wrt=1)(X, w, 6)
    check_close(gw, numerical_grad(lambda v: indexed(X, v, 6), w))
    ws = [np.array([0.5, 1.0, 2.0]), np.array([1.5, -1.0, 0.3]), np.array([0.7, 0.2, 0.9])]
    check_close(sg.grad(over_sequence)(X, ws), numerical_grad(lambda v: over_sequence(v, ws), X))


def test_second_order():
    for n, s in [(0, 2), (1, 1), (6, 2), (9, None)]:
        h = sg.hessian(euler)(X, W, n, s)
        check_close(h, sg.hessian(euler_plain)(X, W, n, s), rtol=1e-10, atol=1e-12)
        g1 = numerical_grad(lambda v: sg.grad(euler)(v, W, n, s)[1], X)
        check_close(h[1], g1, rtol=1e-6, atol=1e-8)
    v = np.array([1.0, -2.0, 0.5])
    check_close(sg.hvp(euler)(X, W, 8, 3, v), sg.hvp(euler_plain)(X, W, 8, 3, v), rtol=1e-10, atol=1e-12)


def sines_and_sum(x):
    s = 0.0
    for t in sg.checkpointed(range(4), snapshots=2):
        x = np.sin(x)
        s = s + np.sum(x)       # (a scalar carried beside the array: its snapshot cotangent is 0.0 on some rows)
    return s


def sines_and_sum_plain(x):
    s = 0.0
    for t in range(4):
        x = np.sin(x)
        s = s + np.sum(x)
    return s


def test_hessian_of_a_loop_carrying_an_array_and_a_scalar():
    """The vectorised Jacobian of the gradient (sg.hessian, sg.jacobian of
    sg.grad) through the snapshots of a checkpointed loop whose carried
    values' cotangents are zero on some rows (found by the probe helper:
    np.stack of mixed shapes)."""
    x = np.array([0.1, 0.2, -0.4])
    want = sg.hessian(sines_and_sum_plain)(x)
    for i in range(len(x)):       # the plain loop's Hessian, row by row, against central differences of its gradient
        check_close(want[i], numerical_grad(lambda v: sg.grad(sines_and_sum_plain)(v)[i], x), rtol=1e-6, atol=1e-8)
    check_close(sg.hessian(sines_and_sum)(x), want, rtol=1e-10, atol=1e-12)
    check_close(sg.jacobian(sg.grad(sines_and_sum))(x), want, rtol=1e-10, atol=1e-12)


def scalar_loop(a, n):
    for t in sg.checkpointed(range(n), snapshots=2):
        a = a + 0.2 * np.sin(a)
    return a * a


def test_grad_of_grad():
    d2 = sg.grad(sg.grad(scalar_loop))(0.7, 7)
    want = (sg.grad(scalar_loop)(0.7 + 1e-6, 7) - sg.grad(scalar_loop)(0.7 - 1e-6, 7)) / 2e-6
    check_close(d2, want, rtol=1e-6)


def test_on_a_tape_and_nested_tapes():
    f, p = sg.function(euler), sg.function(euler_plain)
    x = sg.constant(X)
    with sg.GradientTape() as tape:
        tape.watch(x)
        y = f(x, W, 9, 3)
    check_close(tape.gradient(y, x).numpy(), sg.grad(euler_plain)(X, W, 9, 3), rtol=1e-12)

    def second(fn):
        with sg.GradientTape() as outer:
            outer.watch(x)
            with sg.GradientTape() as inner:
                inner.watch(x)
                y = fn(x, W, 9, 3)
            g = inner.gradient(y, x)
            z = g[0] * g[1]
        return outer.gradient(z, x).numpy()
    check_close(second(f), second(p), rtol=1e-10, atol=1e-12)


RUNS = []


def tick(t):
    RUNS.append(t)


def counted(x, n, s):
    for t in sg.checkpointed(range(n), snapshots=s):
        tick(t)
        x = x * np.cos(x) + 0.5
    return np.sum(x)


@pytest.mark.parametrize("n,s", [(1, 1), (5, 1), (10, 2), (30, 3), (30, 40), (100, 4), (100, None)])
def test_steps_run_as_often_as_revolve_says(n, s):
    del RUNS[:]
    sg.grad(counted)(X, n, s)
    # n recorded runs (the turns) and the optimal number of unrecorded ones
    assert len(RUNS) == n + revolve.optimal_advances(n, s)
    assert sorted(set(RUNS)) == list(range(n))
    del RUNS[:]
    counted(X, n, s)
    assert len(RUNS) == n          # outside differentiation, an ordinary loop


@functools.lru_cache(maxsize=None)
def brute_force(n, s):
    """The least number of unrecorded steps reversing n steps with s
    snapshots (one holding the initial state), by trying every first snapshot."""
    if n <= 1:
        return 0
    if s == 1:
        return n - 1 + brute_force(n - 1, 1)
    return min(m + brute_force(m, s) + brute_force(n - m, s - 1) for m in range(1, n))


def simulate(n, s):
    """Run the schedule on step numbers: (unrecorded steps, slots used)."""
    slots, state, advances, turns = {}, 0, 0, []
    part = [a[0] for a in revolve.revolve_forward(n, s)]
    assert part == [] if n == 0 else part[-1] == "firstturn" and "firstturn" not in part[:-1]
    actions = list(revolve.revolve_forward(n, s))[:-1] + list(revolve.revolve_reverse(n, s))
    for action, step, end, slot in actions:
        if action == "advance":
            assert state == step < end
            advances, state = advances + end - step, end
        elif action == "takeshot":
            assert state == step
            slots[slot] = step
        elif action == "restore":
            assert slots[slot] == step
            state = step
        else:
            assert state == step and end == step + 1
            assert action == ("firstturn" if not turns else "youturn")
            turns.append(step)
            state = None
    assert turns == list(range(n - 1, -1, -1))
    return advances, len(slots)


def test_schedule_is_optimal_against_brute_force():
    for n in range(0, 36):
        for s in range(1, 9):
            advances, used = simulate(n, s)
            assert advances == revolve.optimal_advances(n, s) == brute_force(n, min(s, max(n, 1))), (n, s)
            assert used <= s


def test_schedule_numbers():
    assert revolve.repetitions(1, 3) == 0 and revolve.repetitions(10, 3) == 2 and revolve.repetitions(11, 3) == 3
    assert revolve.optimal_advances(10, 1) == 45          # no free slot: quadratic
    assert revolve.optimal_advances(10, 9) == 9           # enough slots: the forward sweep only
    for n in (1, 10, 1000, 10 ** 5):
        s = revolve.auto_snapshots(n)
        assert revolve.repetitions(n, s) <= 2 and (s == 1 or revolve.repetitions(n, s - 1) > 2)
    sched = revolve.revolve_reverse(50, 3)
    assert len(sched) == len(list(sched)) and sched[3] == list(sched)[3] and sched[-1][0] == "youturn"


def test_outside_differentiation_and_errors():
    r = range(4)
    assert sg.checkpointed(r) is r and sg.checkpointed(r, snapshots=2) is r
    check_close(euler(X, W, 5, 2), euler_plain(X, W, 5, 2))
    for bad in (0, -1, 2.5, "3", True):
        with pytest.raises(ValueError):
            sg.checkpointed(r, snapshots=bad)
    with pytest.raises(ValueError):
        sg.grad(euler)(X, W, 5, 0)


def test_generated_code():
    """The generated code of a checkpointed loop (its full text is the
    golden file tests/golden/checkpointed.py.txt, tests/test_golden.py)."""
    text = sg.source(euler)
    assert "for _action, _step, _end, _slot in revolve_forward(range(n), s):" in text
    assert "for _action, _step, _end, _slot in revolve_reverse(range(n), s):" in text
    assert "_snapshots[_slot] = x" in text and "x = _snapshots[_slot]" in text
    assert text.count("for t in range(_step, _end):") == 2       # the unrecorded runs, in each sweep
    assert "reversed(" not in text                               # no recording of all n steps


def test_persistent_tape_reverses_twice():
    f = sg.function(euler)
    x = sg.constant(X)
    with sg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = f(x, W, 9, 2)
    want = sg.grad(euler_plain)(X, W, 9, 2)
    check_close(tape.gradient(y, x).numpy(), want, rtol=1e-12)
    check_close(tape.gradient(y, x).numpy(), want, rtol=1e-12)     # the snapshots are left as they were


def in_outer_loop(x, w):
    for k in range(3):
        for t in sg.checkpointed(range(5), snapshots=2):
            x = x + 0.1 * np.sin(x) * w
        x = x * 0.9
    return np.sum(x ** 2)


def nested(x, w):
    for k in sg.checkpointed(range(4), snapshots=2):
        for t in sg.checkpointed(range(3), snapshots=2):
            x = x + 0.1 * np.sin(x) * w
        x = x * 0.9
    return np.sum(x ** 2)


def helper(x, w):
    return np.tanh(x * w)


def control_flow(x, w, n):
    acc = 0.0
    for t in sg.checkpointed(range(n), snapshots=3):
        if np.sum(x) > 0:
            x = helper(x, w) + x
        else:
            x = x * 1.1
        k = 0
        while k < 2:
            x = x - 0.01 * x * x
            k = k + 1
        acc = acc + np.sum(x)
    return acc


def early_exit(x, w):
    for t in sg.checkpointed(range(10), snapshots=2):
        if np.sum(x) > 3.0:
            break
        x = x + 0.3 * np.sin(x) * w + 0.2
    return np.sum(x ** 2)


def caller(x, w):
    return euler(x, w, 6, 2) * 2.0


def test_loops_in_loops_branches_calls_and_exits():
    cases = [(in_outer_loop, (W,)), (nested, (W,)), (control_flow, (W, 7)), (early_exit, (W,)), (caller, (W,))]
    for f, rest in cases:
        for x in (X, -X):
            check_close(sg.grad(f)(x, *rest), numerical_grad(lambda v: f(v, *rest), x))


def vector_valued(x, w):
    for t in sg.checkpointed(range(6), snapshots=2):
        x = x + 0.1 * np.sin(x) * w
    return x


def test_jacobian_and_forward_mode():
    from gradcheck import numerical_jacobian
    check_close(sg.jacobian(vector_valued)(X, W), numerical_jacobian(lambda v: vector_valued(v, W), X))
    v = np.array([1.0, 0.5, -1.0])
    check_close(sg.jvp(euler, (X, W, 7, 2), (v, np.zeros(3), None, None))[1],
                sg.jvp(euler_plain, (X, W, 7, 2), (v, np.zeros(3), None, None))[1], rtol=1e-12)
    value, g = sg.value_and_grad(euler)(X, W, 7, 2)
    check_close(value, euler_plain(X, W, 7, 2), rtol=1e-14)


def test_second_order_of_loops_in_loops():
    from gradcheck import numerical_jacobian
    g = sg.grad(in_outer_loop)
    check_close(sg.hessian(in_outer_loop)(X, W), numerical_jacobian(lambda v: g(v, W), X), rtol=1e-6, atol=1e-8)
    v = np.array([1.0, -1.0, 0.5])
    g = sg.grad(nested)
    check_close(sg.hvp(nested)(X, W, v), numerical_jacobian(lambda u: g(u, W), X) @ v, rtol=1e-6, atol=1e-8)
    check_close(sg.grad(lambda u: sg.grad(nested)(u, W)[0])(X),
                numerical_grad(lambda u: sg.grad(nested)(u, W)[0], X), rtol=1e-6, atol=1e-8)


def nested_plain(x, w):
    for k in range(4):
        for t in range(3):
            x = x + 0.1 * np.sin(x) * w
        x = x * 0.9
    return np.sum(x ** 2)


def test_hessian_of_nested_checkpointed_loops():
    """Was a crash: sg.hessian (the batched VJP of the gradient) and nested
    tapes' jacobian met the symbolic-zero (None) cotangent of the inner
    loop's snapshot dict in batch_vjp. Now equal to the plain loops'
    Hessian, to finite differences of the gradient, and to autograd's."""
    from gradcheck import numerical_jacobian
    H = sg.hessian(nested)(X, W)
    check_close(H, sg.hessian(nested_plain)(X, W), rtol=1e-12, atol=1e-14)
    check_close(H, numerical_jacobian(lambda u: sg.grad(nested_plain)(u, W), X), rtol=1e-6, atol=1e-8)
    xv = sg.Variable(X)
    with sg.GradientTape() as outer:
        with sg.GradientTape() as inner:
            y = sg.function(nested)(xv, W)
        g = inner.gradient(y, xv)
    check_close(outer.jacobian(g, xv).numpy(), H, rtol=1e-12, atol=1e-14)
    autograd = pytest.importorskip("autograd")
    anp = autograd.numpy

    def nested_ag(x):
        for k in range(4):
            for t in range(3):
                x = x + 0.1 * anp.sin(x) * W
            x = x * 0.9
        return anp.sum(x ** 2)
    check_close(H, autograd.hessian(nested_ag)(X), rtol=1e-10, atol=1e-12)
