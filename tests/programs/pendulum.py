"""A damped pendulum, theta'' = -(g / l) sin(theta) - c theta', simulated by
semi-implicit (symplectic) Euler on Python floats with math.sin, and
differentiated with respect to its initial conditions (and the damping):
the sensitivity of the final state (Hairer, Lubich & Wanner, Geometric
Numerical Integration, 2006, I.1.1), as used to aim a shot or fit an initial
state to an observation.

Patterns: Python floats in and out; the math module; a user-class object
built inside the function from constants; a list of states indexed in a
loop, each entry read twice, so its cotangents sum.
"""
import math

import srcgrad as sg


class Pendulum:
    def __init__(self, length, gravity=9.81):
        self.length = length
        self.gravity = gravity

    def acceleration(self, theta, omega, damping):
        return -self.gravity / self.length * math.sin(theta) - damping * omega


def simulate(theta0, omega0, damping, dt=0.02, steps=120):
    pendulum = Pendulum(1.5)
    thetas = [theta0]
    omega = omega0
    for i in range(steps):
        omega = omega + dt * pendulum.acceleration(thetas[i], omega, damping)
        thetas.append(thetas[i] + dt * omega)
    return thetas, omega


def miss_distance(theta0, omega0, damping):
    """Squared distance of the bob from a target point after the run, plus
    the time-averaged height (to keep every state in the objective)."""
    thetas, omega = simulate(theta0, omega0, damping)
    x = 1.5 * math.sin(thetas[-1])
    y = -1.5 * math.cos(thetas[-1])
    height = 0.0
    for i in range(len(thetas)):
        height = height - 1.5 * math.cos(thetas[i])
    return (x - 0.5) ** 2 + (y + 1.2) ** 2 + 0.01 * height / len(thetas) + 0.1 * omega ** 2


def make_args():
    return 0.9, -0.4, 0.3


def main(steps=5, lr=0.1):
    """Aim: adjust the initial angle and velocity by gradient descent."""
    theta0, omega0, damping = make_args()
    grad_fn = sg.grad(miss_distance, wrt=(0, 1))
    for step in range(steps):
        g_theta, g_omega = grad_fn(theta0, omega0, damping)
        theta0 = theta0 - lr * float(g_theta)
        omega0 = omega0 - lr * float(g_omega)
    return [theta0, omega0]


CHECKS = [("miss_distance", miss_distance, make_args, (0, 1, 2))]
