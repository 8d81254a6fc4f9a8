"""The representative functions whose generated derivative code is kept as
golden files (tests/golden/*.py.txt, checked by tests/test_golden.py).

Plain module-level `def`s, since srcgrad compiles from source. Each is kept
small so that its generated code can be read in one screen. The golden
files name this file and its line numbers in their `# Grad of:` comments:
editing a function here (or moving one) changes the golden files, which
then must be regenerated and reviewed.
"""
import math

import numpy as np

import srcgrad as sg  # noqa: F401  (the golden functions' module imports it, as users do)


# straight line: one tanh layer and a mean
def mlp_layer(W, b, x):
    h = np.tanh(x @ W + b)
    return np.mean(h ** 2)


# a branch on a data-dependent test
def branch(x):
    if np.sum(x) > 0.0:
        y = np.sin(x) * 2.0
    else:
        y = x * x
    return np.sum(y)


# a for loop: an RNN recurrence
def rnn(h, W, b, n):
    for i in range(n):
        h = np.tanh(h @ W + b)
    return np.sum(h)


# a while loop with a data-dependent condition
def while_halving(x):
    while np.sum(x * x) > 1.0:
        x = x * 0.5
    return np.sum(np.sin(x))


# a user function called twice
def softplus(z):
    return np.log1p(np.exp(z))


def two_calls(x, w):
    a = softplus(x * w)
    b = softplus(a - 1.0)
    return np.sum(b)


# a method reading attributes of a small class
class Affine:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def loss(self, x):
        return np.sum(np.tanh(x @ self.W + self.b) ** 2)


AFFINE = Affine(np.array([[0.5, -0.3], [0.2, 0.8], [-0.6, 0.1]]), np.array([0.1, -0.2]))


# a container: a list appended to in a loop, then stacked
def list_stack(x, n):
    hs = []
    h = x
    for i in range(n):
        h = np.sin(h) + x
        hs.append(h)
    return np.sum(np.stack(hs) ** 2)


# element assignment into np.zeros in a loop
def fill_rows(W, xs):
    T = xs.shape[0]
    H = np.zeros((T, W.shape[0]))
    h = np.zeros(W.shape[0])
    for t in range(T):
        h = np.tanh(W @ h + xs[t])
        H[t] = h
    return np.sum(H * H)


# a Python-float scalar loop: a damped pendulum, n explicit Euler steps
def pendulum(theta, omega, n):
    dt = 0.01
    for i in range(n):
        omega = omega - dt * (9.81 * math.sin(theta) + 0.1 * omega)
        theta = theta + dt * omega
    return theta


# second order: sg.grad(sg.grad(scalar_loop)) differentiates this gradient
def scalar_loop(x):
    y = x
    for i in range(3):
        y = np.sin(y) * x
    return y


# forward mode (JVP) and forward over reverse (Hessian-vector product)
def cubic_form(x, A):
    y = A @ x
    return np.sum(y * y * x)


# sg.checkpointed: a loop reversed by binomial checkpointing (Revolve)
def checkpointed_euler(x, w, n, s):
    for t in sg.checkpointed(range(n), snapshots=s):
        x = x + 0.1 * np.sin(x) * w
    return np.sum(x ** 2)
