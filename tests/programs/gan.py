"""A small generative adversarial network (Goodfellow et al. 2014) on 1-D
data: a generator MLP maps noise to samples, a discriminator MLP scores them,
and the two are trained in alternation by SGD steps written in the program.
The generator's non-saturating loss is also differentiated through k
unrolled discriminator updates (Metz et al., Unrolled Generative Adversarial
Networks, 2017), which differentiates through `sg.grad`.

Losses use log sigmoid(a) = -logaddexp(0, -a).

Patterns: parameters as lists of (W, b) tuples; a training loop that calls
sg.grad; a gradient of a function that itself calls sg.grad.
"""
import numpy as np

import srcgrad as sg


def mlp(params, x):
    for W, b in params[:-1]:
        x = np.tanh(x @ W + b)
    W, b = params[-1]
    return x @ W + b


def discriminator_loss(dparams, gparams, real, noise):
    real_logits = mlp(dparams, real)
    fake_logits = mlp(dparams, mlp(gparams, noise))
    return np.mean(np.logaddexp(0.0, -real_logits)) + np.mean(np.logaddexp(0.0, fake_logits))


def generator_loss(gparams, dparams, noise):
    return np.mean(np.logaddexp(0.0, -mlp(dparams, mlp(gparams, noise))))


def sgd(params, grads, lr):
    return [(W - lr * gW, b - lr * gb) for (W, b), (gW, gb) in zip(params, grads)]


def unrolled_generator_loss(gparams, dparams, real, noise, k=2, lr=0.1):
    dgrad = sg.grad(discriminator_loss)
    for i in range(k):
        dparams = sgd(dparams, dgrad(dparams, gparams, real, noise), lr)
    return generator_loss(gparams, dparams, noise)


def init_mlp(rs, sizes, scale=0.6):
    return [(scale * rs.randn(m, n), 0.1 * rs.randn(n)) for m, n in zip(sizes[:-1], sizes[1:])]


def make_data():
    rs = np.random.RandomState(4)
    real = 1.5 + 0.3 * rs.randn(8, 1)
    noise = rs.randn(8, 1)
    return rs, real, noise


def make_disc_args():
    rs, real, noise = make_data()
    gparams, dparams = init_mlp(rs, [1, 4, 1]), init_mlp(rs, [1, 5, 1])
    return dparams, gparams, real, noise


def make_gen_args():
    dparams, gparams, real, noise = make_disc_args()
    return gparams, dparams, noise


def make_unrolled_args():
    dparams, gparams, real, noise = make_disc_args()
    return gparams, dparams, real, noise


def main(steps=4, lr=0.1):
    dparams, gparams, real, noise = make_disc_args()
    dgrad, ggrad = sg.grad(discriminator_loss), sg.grad(generator_loss)
    rs = np.random.RandomState(5)
    for step in range(steps):
        noise = rs.randn(*noise.shape)
        dparams = sgd(dparams, dgrad(dparams, gparams, real, noise), lr)
        gparams = sgd(gparams, ggrad(gparams, dparams, noise), lr)
    return [a for layer in gparams + dparams for a in layer]


CHECKS = [
    ("discriminator_loss", discriminator_loss, make_disc_args, (0, 1)),
    ("generator_loss", generator_loss, make_gen_args, (0,)),
    ("unrolled_generator_loss", unrolled_generator_loss, make_unrolled_args, (0,)),
]
