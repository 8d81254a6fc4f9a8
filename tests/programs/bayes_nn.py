"""A Bayesian neural network for 1-D regression: the unnormalised log
posterior (log joint) of the weights,

    log p(theta, y | x) = sum_l log N(W_l; 0, s_l^2) + log N(b_l; 0, s_l^2)
                          + sum_n log N(y_n; f(x_n; theta), sigma^2)

with s_l = 1/sqrt(fan-in) (Neal, Bayesian Learning for Neural Networks,
1996, ch. 2; MacKay 1992), maximised (MAP) by gradient ascent.

Patterns: parameters as a list of (W, b) tuples walked with
`params[0]`, `for W, b in params[1:-1]` (EMPTY for the 2-layer net) and
`params[-1]`; `for W, b, scale in zip(*prior_terms(params))`.
"""
import numpy as np

import srcgrad as sg


def predict(params, x):
    W, b = params[0]
    h = np.tanh(x @ W + b)
    for W, b in params[1:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    return h @ W + b


def prior_terms(params):
    return ([W for W, b in params], [b for W, b in params],
            [1.0 / np.sqrt(W.shape[0]) for W, b in params])


def gaussian_logpdf(x, scale):
    return -0.5 * np.sum((x / scale) ** 2) - x.size * (np.log(scale) + 0.5 * np.log(2 * np.pi))


def log_joint(params, x, y, noise=0.2):
    log_prior = 0.0
    for W, b, scale in zip(*prior_terms(params)):
        log_prior = log_prior + gaussian_logpdf(W, scale) + gaussian_logpdf(b, scale)
    return log_prior + gaussian_logpdf(y - predict(params, x), noise)


def neg_log_joint(params, x, y):
    return -log_joint(params, x, y)


def make_net(sizes):
    rs = np.random.RandomState(9)
    x = np.linspace(-2.0, 2.0, 10)[:, None]
    y = np.cos(1.5 * x) + 0.1 * rs.randn(10, 1)
    params = [(rs.randn(m, n) / np.sqrt(m), 0.1 * rs.randn(n)) for m, n in zip(sizes[:-1], sizes[1:])]
    return params, x, y


def make_deep():
    return make_net([1, 5, 4, 1])


def make_shallow():
    return make_net([1, 6, 1])


def main(steps=6, lr=0.002):
    params, x, y = make_deep()
    grad_fn = sg.grad(neg_log_joint)
    for step in range(steps):
        g = grad_fn(params, x, y)
        params = [(W - lr * gW, b - lr * gb) for (W, b), (gW, gb) in zip(params, g)]
    return [a for layer in params for a in layer]


CHECKS = [
    ("deep", neg_log_joint, make_deep, (0,)),
    ("shallow", neg_log_joint, make_shallow, (0,)),
]
