"""A function compiled while a tape records (its first call on the tape)
reads `np.zeros` as the tape's allocator wrapper (tape/buffers.py): the
in-place pass now sees NumPy's own function behind it, as the compiler
does, so `H[t] = h` writes into H instead of copying it at every step
(an O(T^2) loop: the RNN written H[t] = h on the tape took 1.4x the list
form)."""
import numpy as np

import srcgrad as sg


def states(W, xs):
    H = np.zeros((xs.shape[0], W.shape[0]))
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
        H[t] = h
    return np.sum(H ** 2)


def test_element_assignment_in_place_when_compiled_inside_a_tape():
    W, xs = np.eye(3) * 0.5, np.ones((4, 3))
    with sg.GradientTape():
        text = sg.source(states, args=(W, xs))
    assert "setitem_in_place(H, t, h)" in text, text
    v = sg.Variable(W)
    with sg.GradientTape() as tape:
        out = sg.function(states)(v, xs)
    np.testing.assert_allclose(tape.gradient(out, v).numpy(), sg.grad(states)(W, xs), rtol=1e-14)
