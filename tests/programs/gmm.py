"""A Gaussian mixture model: the log-likelihood of 2-D data under K diagonal
Gaussians with softmax mixing weights,

    log p(X) = sum_n log sum_k w_k N(x_n; mu_k, diag(sigma_k^2))

(Bishop, Pattern Recognition and Machine Learning, 2006, eq. 9.14), the sum
over components taken with a hand-written, max-shifted logsumexp, and fit
by gradient ascent.

Patterns: a comprehension calling a local def; a dict display passed to a
helper; a `with np.errstate(...)` block; a dict of parameters.
"""
import numpy as np

import srcgrad as sg


def my_logsumexp(a, axis):
    m = np.max(a, axis=axis, keepdims=True)
    return np.squeeze(m, axis) + np.log(np.sum(np.exp(a - m), axis=axis))


def diag_gaussian_logpdf(x, component):
    z = (x - component["mean"]) / np.exp(component["log_std"])
    return -0.5 * np.sum(z ** 2, axis=1) - np.sum(component["log_std"]) - 0.5 * x.shape[1] * np.log(2 * np.pi)


def log_likelihood(params, data):
    weights = np.exp(params["logits"]) / np.sum(np.exp(params["logits"]))
    with np.errstate(divide="ignore"):       # a weight that underflows to 0 is allowed: log gives -inf
        log_weights = np.log(weights)

    def component_loglik(k):
        return log_weights[k] + diag_gaussian_logpdf(
            data, {"mean": params["means"][k], "log_std": params["log_stds"][k]})

    per_component = np.stack([component_loglik(k) for k in range(params["means"].shape[0])], axis=1)
    return np.sum(my_logsumexp(per_component, 1))


def neg_log_likelihood(params, data):
    return -log_likelihood(params, data) / data.shape[0]


def make_args():
    rs = np.random.RandomState(2)
    data = np.concatenate([rs.randn(10, 2) * 0.5 + [1.0, 1.0], rs.randn(10, 2) * 0.7 - [1.0, 0.5]])
    params = {"logits": np.array([0.1, -0.2, 0.3]),
              "means": rs.randn(3, 2),
              "log_stds": 0.1 * rs.randn(3, 2)}
    return params, data


def main(steps=10, lr=0.2):
    params, data = make_args()
    grad_fn = sg.grad(neg_log_likelihood)
    for step in range(steps):
        g = grad_fn(params, data)
        params = {k: params[k] - lr * g[k] for k in params}
    return [params[k] for k in sorted(params)]


CHECKS = [("neg_log_likelihood", neg_log_likelihood, make_args, (0,))]
