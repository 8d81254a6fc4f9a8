"""Gradient-based MCMC on a 2-D log-density (a correlated Gaussian times a
soft ring): one Hamiltonian Monte Carlo step (leapfrog integration of
H(q, p) = -log pi(q) + |p|^2 / 2, then a Metropolis test with a fixed
uniform draw; Neal, MCMC using Hamiltonian dynamics, 2011, fig. 2) and the
log acceptance ratio of a Metropolis-adjusted Langevin proposal (Roberts &
Tweedie 1996). Both need the gradient of the log density, taken with
sg.grad inside the program; the checks differentiate the step itself with
respect to the start point, the momentum and the step size (as in
gradient-based step-size adaptation), so they differentiate through sg.grad.

Patterns: a bound method passed as an argument; sg.grad called inside the
differentiated function; a Python float step size; an accept/reject branch.
"""
import numpy as np

import srcgrad as sg


class Target:
    def __init__(self, precision, radius):
        self.precision = precision
        self.radius = radius

    def log_density(self, q):
        ring = (np.sqrt(np.sum(q ** 2) + 1.0) - self.radius) ** 2
        return -0.5 * q @ self.precision @ q - 0.5 * ring


TARGET = Target(np.array([[1.0, 0.6], [0.6, 2.0]]), 1.2)


def leapfrog(q, p, step_size, n_steps, grad_log_density):
    p = p + 0.5 * step_size * grad_log_density(q)
    for i in range(n_steps - 1):
        q = q + step_size * p
        p = p + step_size * grad_log_density(q)
    q = q + step_size * p
    p = p + 0.5 * step_size * grad_log_density(q)
    return q, p


def hmc_step(q0, p0, step_size, log_u, log_density):
    q, p = leapfrog(q0, p0, step_size, 4, sg.grad(log_density))
    log_accept = log_density(q) - 0.5 * p @ p - log_density(q0) + 0.5 * p0 @ p0
    if log_u < log_accept:
        return q
    return q0


def hmc_objective(q0, p0, step_size):
    q = hmc_step(q0, p0, step_size, -0.5, TARGET.log_density)
    return np.sum(q ** 2)


def mala_log_accept(q, noise, step_size):
    """log pi(q') + log k(q | q') - log pi(q) - log k(q' | q), k the Langevin proposal."""
    grad_log_density = sg.grad(TARGET.log_density)
    forward_mean = q + step_size * grad_log_density(q)
    proposal = forward_mean + np.sqrt(2.0 * step_size) * noise
    backward_mean = proposal + step_size * grad_log_density(proposal)
    log_k_forward = -np.sum((proposal - forward_mean) ** 2) / (4.0 * step_size)
    log_k_backward = -np.sum((q - backward_mean) ** 2) / (4.0 * step_size)
    return TARGET.log_density(proposal) + log_k_backward - TARGET.log_density(q) - log_k_forward


def make_hmc_args():
    return np.array([0.4, -0.3]), np.array([0.8, 0.5]), 0.2


def make_mala_args():
    return np.array([0.4, -0.3]), np.array([0.3, -1.1]), 0.15


def main(n_samples=20, step_size=0.25):
    rs = np.random.RandomState(11)
    q = np.zeros(2)
    samples = []
    for i in range(n_samples):
        q = hmc_step(q, rs.randn(2), step_size, np.log(rs.uniform()), TARGET.log_density)
        samples.append(q)
    return np.stack(samples)


CHECKS = [
    ("hmc_step", hmc_objective, make_hmc_args, (0, 1, 2)),
    ("mala_log_accept", mala_log_accept, make_mala_args, (0, 2)),
]
