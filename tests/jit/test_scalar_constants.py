"""Module-level float and int constants read by a function are specialised
like literals (scalar code: no unbroadcast, zeros 0.0), and rebinding one
recompiles (the program's rebinding guard). No Numba needed."""
import math

import numpy as np

import srcgrad as sg

C = 0.5


def damped(theta0, c):
    theta, omega = theta0, 0.0
    for i in range(30):
        omega = omega + 0.01 * (-9.81 * math.sin(theta) - C * c * omega)
        theta = theta + 0.01 * omega
    return theta


def _by_differences(theta0, c, eps=1e-6):
    return ((damped(theta0 + eps, c) - damped(theta0 - eps, c)) / (2 * eps),
            (damped(theta0, c + eps) - damped(theta0, c - eps)) / (2 * eps))


def test_global_float_gets_scalar_code():
    text = sg.source(damped, wrt=(0, 1), args=(0.5, 0.3))
    assert "unbroadcast" not in text and "zeros_like" not in text


def test_rebinding_the_constant_recompiles():
    global C
    g = sg.grad(damped, wrt=(0, 1))
    try:
        for value in (0.5, 0.25, 2.0):
            C = value
            got = g(0.5, 0.3)
            for a, e in zip(got, _by_differences(0.5, 0.3)):
                np.testing.assert_allclose(a, e, rtol=1e-6)
    finally:
        C = 0.5
