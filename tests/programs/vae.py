"""A variational autoencoder (Kingma & Welling, Auto-Encoding Variational
Bayes, 2014, eq. 10 and appendix B) on binary 6-pixel vectors: a Gaussian
encoder MLP, a Bernoulli decoder MLP, one reparameterised sample per data
point with fixed draws, and the analytic KL term

    KL(N(mu, sigma^2) || N(0, 1)) = 1/2 sum(sigma^2 + mu^2 - 1 - log sigma^2).

Patterns: a function passed as a default argument (`nonlinearity=np.tanh`)
and as an argument; `rs.randn(*mu.shape)` with a RandomState; MLPs over
lists of (W, b) tuples.
"""
import numpy as np

import srcgrad as sg

LATENT = 2


def softplus(x):
    return np.logaddexp(0.0, x)


def mlp(params, x, nonlinearity=np.tanh):
    for W, b in params[:-1]:
        x = nonlinearity(x @ W + b)
    W, b = params[-1]
    return x @ W + b


def bernoulli_loglik(x, logits):
    return np.sum(x * logits - np.logaddexp(0.0, logits), axis=1)


def neg_elbo(encoder, decoder, x, seed=0):
    out = mlp(encoder, x)
    mu, log_std = out[:, :LATENT], out[:, LATENT:]
    rs = np.random.RandomState(seed)
    z = mu + np.exp(log_std) * rs.randn(*mu.shape)
    logits = mlp(decoder, z, softplus)
    kl = 0.5 * np.sum(np.exp(2.0 * log_std) + mu ** 2 - 1.0 - 2.0 * log_std, axis=1)
    return -np.mean(bernoulli_loglik(x, logits) - kl)


def init_mlp(rs, sizes):
    return [(rs.randn(m, n) / np.sqrt(m), np.zeros(n)) for m, n in zip(sizes[:-1], sizes[1:])]


def make_args():
    rs = np.random.RandomState(10)
    x = (rs.uniform(size=(8, 6)) < 0.4).astype(float)
    return init_mlp(rs, [6, 4, 2 * LATENT]), init_mlp(rs, [LATENT, 4, 6]), x


def main(steps=5, lr=0.1):
    encoder, decoder, x = make_args()
    grad_fn = sg.grad(neg_elbo, wrt=(0, 1))
    for step in range(steps):
        ge, gd = grad_fn(encoder, decoder, x, step)
        encoder = [(W - lr * gW, b - lr * gb) for (W, b), (gW, gb) in zip(encoder, ge)]
        decoder = [(W - lr * gW, b - lr * gb) for (W, b), (gW, gb) in zip(decoder, gd)]
    return [a for layer in encoder + decoder for a in layer]


CHECKS = [("neg_elbo", neg_elbo, make_args, (0, 1))]
