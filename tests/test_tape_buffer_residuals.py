"""A decorated function's residuals on a tape hold the values at the call
(TF's tape): an array the user allocated inside the tape's body is a
Buffer (tape/buffers.py), and overwriting it before tape.gradient used to
change the recorded residual (keep_values copied plain ndarrays only): a
wrong gradient without a word. Another thread's allocations, made while
some thread records, are plain arrays (they were Buffers: the threads'
residuals were not copied either)."""
import threading

import numpy as np

import srcgrad as sg
from srcgrad.tape.buffers import Buffer


@sg.function
def scaled(x, y):
    return x * y


@sg.function
def weighted_sum(x, ys):
    return np.sum(x * ys[0]) + np.sum(x * x * ys[1])


def test_an_array_made_in_the_tape_and_overwritten_after_the_call():
    v = sg.Variable(np.array([1.0, 2.0, 3.0]))
    for _ in range(3):          # (the first call, then the planned fast path)
        with sg.GradientTape() as tape:
            y = np.zeros(3)
            y[:] = [4.0, 5.0, 6.0]
            out = scaled(v, y)
            y[:] = 0.0
        assert isinstance(y, Buffer)
        np.testing.assert_array_equal(tape.gradient(out, v).numpy(), [4.0, 5.0, 6.0])


def test_buffers_in_a_list_argument():
    v = sg.Variable(np.array([1.0, -2.0]))
    with sg.GradientTape() as tape:
        a = np.ones(2) * 3.0
        b = np.full(2, 0.5)
        out = weighted_sum(v, [a, b])
        a[:] = 0.0
        b[:] = 0.0
    np.testing.assert_allclose(tape.gradient(out, v).numpy(), 3.0 + 2 * 0.5 * v.numpy(), rtol=1e-15)


def test_other_threads_allocate_plain_arrays_while_a_tape_records():
    made = []
    started, done = threading.Event(), threading.Event()

    def record():
        with sg.GradientTape():
            started.set()
            done.wait(10)

    t = threading.Thread(target=record)
    t.start()
    started.wait(10)
    try:
        made.append(np.zeros(3))
        made.append(np.random.default_rng(0).normal(size=3))
    finally:
        done.set()
        t.join()
    assert [type(a) for a in made] == [np.ndarray, np.ndarray]


def copy_then_write(x):
    y = x.copy()
    y[0] = x[1] ** 2
    y[2] = y[2] * 3.0
    return np.sum(y * y)


def test_tensor_copy_is_writable_while_recording():
    """`y = x.copy(); y[i] = ...` op by op: the copy is a Buffer standing for
    x, whose element assignments are recorded (it raised TypeError: Tensors
    are immutable). Outside a tape, a Tensor's copy is itself."""
    x = np.array([0.5, 1.5, -0.7])
    expected = sg.grad(copy_then_write)(x)
    xt = sg.constant(x)
    with sg.GradientTape() as tape:
        tape.watch(xt)
        out = copy_then_write(xt)
    np.testing.assert_allclose(tape.gradient(out, xt).numpy(), expected, rtol=1e-14)
    np.testing.assert_allclose(expected, [0.0, 2 * x[1] ** 2 * 2 * x[1] + 2 * x[1], 18.0 * x[2]], rtol=1e-14)
    assert xt.copy() is xt
