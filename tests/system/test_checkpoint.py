"""sg.checkpoint(f): a call of f in differentiated code is reversed by
re-running f (its generated VJP), not by reading residuals its forward
sweep kept. Checked: the same derivatives as without it (first and second
order, compiled and on the tape, against central differences), f running
twice per gradient with it and once without (user code runs once unless
the user asks for rematerialisation), and the generated code calling f's
VJP on f's arguments."""
import numpy as np

import srcgrad as sg
from gradcheck import check_close, numerical_grad

CALLS = []


def block(x, w):
    CALLS.append(1)
    h = np.tanh(x * w)
    for _ in range(3):
        h = np.sin(h) * w + h
    return h


remat = sg.checkpoint(block)


def loss(x, w):
    return np.sum(remat(x, w) ** 2)


def loss_plain(x, w):
    return np.sum(block(x, w) ** 2)


X = np.array([0.3, -0.5, 0.8])
W = 0.7


def test_checkpointed_gradient_equals_the_plain_one():
    g = sg.grad(loss)(X, W)
    check_close(g, sg.grad(loss_plain)(X, W), rtol=1e-12)
    check_close(g, numerical_grad(lambda v: loss(v, W), X))
    check_close(sg.grad(loss, wrt=1)(X, W), numerical_grad(lambda v: loss(X, v), np.array(W)))


def test_checkpointed_second_order():
    check_close(sg.hessian(loss)(X, W), sg.hessian(loss_plain)(X, W), rtol=1e-10, atol=1e-12)
    v = np.array([1.0, -2.0, 0.5])
    check_close(sg.hvp(loss)(X, W, v), sg.hvp(loss_plain)(X, W, v), rtol=1e-10, atol=1e-12)


def test_checkpointed_on_the_tape():
    x = sg.constant(X)
    with sg.GradientTape() as tape:
        tape.watch(x)
        y = sg.function(loss)(x, W)
    check_close(tape.gradient(y, x).numpy(), sg.grad(loss_plain)(X, W), rtol=1e-12)


def test_checkpoint_reruns_and_the_default_runs_once():
    del CALLS[:]
    sg.grad(loss_plain)(X, W)
    assert len(CALLS) == 1                  # user code runs once per derivative
    del CALLS[:]
    sg.grad(loss)(X, W)
    assert len(CALLS) == 2                  # asked for: re-run in the reverse sweep
    assert remat(X, W).shape == X.shape and len(CALLS) == 3     # calling it calls block


def test_generated_code_calls_the_vjp_on_the_arguments():
    src = sg.source(loss)
    assert "= remat(x, w)" in src and "block_vjp(x, w, " in src
    assert "block_fwd" not in src and "_res" not in src
