"""Black-box variational inference: a diagonal Gaussian q(z) is fit to a
banana-shaped 2-D posterior by maximising the evidence lower bound

    ELBO = E_q[log p(z)] + H[q],   z = mean + exp(log_std) * eps,  eps ~ N(0, I)

estimated with fixed draws (the reparameterisation trick: Kingma & Welling
2014; black-box VI: Ranganath et al. 2014), the density written with
scipy.stats.norm.logpdf.

Patterns: scipy.stats; a RandomState made inside the objective; a bound
method passed as an argument; methods of an object read as a global.
"""
import numpy as np
from scipy.stats import norm

import srcgrad as sg


class Banana:
    """p(a, b) = N(a; 0, 1.5^2) N(b - c a^2; 0, 0.5^2)."""

    def __init__(self, curvature):
        self.curvature = curvature

    def log_density(self, z):
        a = z[:, 0]
        b = z[:, 1] - self.curvature * z[:, 0] ** 2
        return norm.logpdf(a, 0.0, 1.5) + norm.logpdf(b, 0.0, 0.5)


TARGET = Banana(0.7)


def gaussian_entropy(log_std):
    return 0.5 * log_std.shape[0] * (1.0 + np.log(2.0 * np.pi)) + np.sum(log_std)


def elbo(params, log_density, num_samples=25, seed=0):
    mean, log_std = params[:2], params[2:]
    rs = np.random.RandomState(seed)
    eps = rs.randn(num_samples, mean.shape[0])
    samples = mean + np.exp(log_std) * eps
    return np.mean(log_density(samples)) + gaussian_entropy(log_std)


def neg_elbo(params):
    return -elbo(params, TARGET.log_density)


def neg_elbo_seeded(params, seed):
    return -elbo(params, TARGET.log_density, 10, seed)


def make_args():
    return (np.array([0.3, -0.2, -0.5, -0.8]),)


def main(steps=6, lr=0.05):
    """Stochastic gradient ascent with a fresh seed each step."""
    grad_fn = sg.grad(neg_elbo_seeded)
    params = make_args()[0]
    for step in range(steps):
        params = params - lr * grad_fn(params, step)
    return params


CHECKS = [("neg_elbo", neg_elbo, make_args, (0,))]
