"""A neural ODE (Chen et al., Neural Ordinary Differential Equations, 2018):
dy/dt = f(y; theta) with f a one-hidden-layer MLP, integrated with
scipy.integrate.odeint (LSODA), fit to a trajectory of a damped oscillator
by least squares on the states at the observation times.

Patterns: scipy.integrate.odeint with the parameters passed through `args`.
"""
import numpy as np
from scipy.integrate import odeint

import srcgrad as sg

# tight solver tolerances: the finite-difference oracle divides solver noise by its step
RTOL = ATOL = 1e-11


def dynamics(y, t, W1, b1, W2, b2):
    return np.tanh(y @ W1 + b1) @ W2 + b2


def trajectory_loss(W1, b1, W2, b2, y0, times, target):
    ys = odeint(dynamics, y0, times, args=(W1, b1, W2, b2), rtol=RTOL, atol=ATOL)
    return np.mean((ys - target) ** 2)


def make_args():
    rs = np.random.RandomState(3)
    times = np.linspace(0.0, 1.5, 6)
    target = np.stack([np.exp(-0.3 * times) * np.cos(2.0 * times),
                       -np.exp(-0.3 * times) * np.sin(2.0 * times)], axis=1)
    return (0.5 * rs.randn(2, 4), 0.1 * rs.randn(4), 0.5 * rs.randn(4, 2), np.zeros(2),
            np.array([1.0, 0.0]), times, target)


def main(steps=3, lr=0.5):
    args = list(make_args())
    grad_fn = sg.grad(trajectory_loss, wrt=(0, 1, 2, 3))
    for step in range(steps):
        g = grad_fn(*args)
        args[:4] = [p - lr * gp for p, gp in zip(args[:4], g)]
    return args[:4]


CHECKS = [
    ("parameters", trajectory_loss, make_args, (0, 1, 2, 3)),
    ("initial_state", trajectory_loss, make_args, (4,)),
]
