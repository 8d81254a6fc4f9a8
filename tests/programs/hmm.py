"""A hidden Markov model with discrete emissions: the log-likelihood of an
observation sequence by the forward algorithm in log space,

    log alpha_1 = log pi + log B[:, o_1]
    log alpha_t = logsumexp_i(log alpha_{t-1}[i] + log A[i, :]) + log B[:, o_t]

(Rabiner, A Tutorial on Hidden Markov Models, 1989, eq. 19-21), with the
row-stochastic matrices parametrised by logits normalised with
scipy.special.logsumexp.

Patterns: a dict built from differentiated values; a loop over a Python list
of integer observations; scipy.special.logsumexp with axis and keepdims.
"""
import numpy as np
from scipy.special import logsumexp

import srcgrad as sg


def log_normalize(logits):
    return logits - logsumexp(logits, axis=-1, keepdims=True)


def forward_log_likelihood(params, observations):
    model = {"log_init": log_normalize(params["init"]),
             "log_trans": log_normalize(params["trans"]),
             "log_emit": log_normalize(params["emit"])}
    log_alpha = model["log_init"] + model["log_emit"][:, observations[0]]
    for o in observations[1:]:
        log_alpha = logsumexp(log_alpha[:, None] + model["log_trans"], axis=0) + model["log_emit"][:, o]
    return logsumexp(log_alpha)


def neg_log_likelihood(params, observations):
    return -forward_log_likelihood(params, observations) / len(observations)


def make_args():
    rs = np.random.RandomState(7)
    params = {"init": rs.randn(3), "trans": rs.randn(3, 3), "emit": rs.randn(3, 4)}
    observations = [0, 1, 1, 3, 2, 0, 0, 3, 1, 2, 2, 1]
    return params, observations


def main(steps=8, lr=0.5):
    params, observations = make_args()
    grad_fn = sg.grad(neg_log_likelihood)
    for step in range(steps):
        g = grad_fn(params, observations)
        params = {"init": params["init"] - lr * g["init"], "trans": params["trans"] - lr * g["trans"],
                  "emit": params["emit"] - lr * g["emit"]}
    return [params["init"], params["trans"], params["emit"]]


CHECKS = [("neg_log_likelihood", neg_log_likelihood, make_args, (0,))]
