"""A character-level LSTM (Hochreiter & Schmidhuber 1997; the gate layout of
Graves, Generating Sequences With Recurrent Neural Networks, 2013, eq. 7-11)
run over a Python list of one-hot vectors; the loss is the mean negative
log-likelihood of the next symbol, normalised with scipy.special.logsumexp.

Patterns: a Python list of arrays as data; a dict of parameters; a list of
hidden states that grows with append and is indexed in a loop, each entry
read twice (by the next step and by the output layer), so its cotangents sum.
"""
import numpy as np
from scipy.special import logsumexp

import srcgrad as sg

VOCAB = 4
HIDDEN = 3


def sigmoid(x):
    return 0.5 * (np.tanh(0.5 * x) + 1.0)


def lstm_step(params, h, c, x):
    z = np.concatenate([x, h, np.ones(1)]) @ params["W"]
    n = h.shape[0]
    i = sigmoid(z[:n])
    f = sigmoid(z[n:2 * n])
    o = sigmoid(z[2 * n:3 * n])
    g = np.tanh(z[3 * n:])
    c = f * c + i * g
    return o * np.tanh(c), c


def sequence_nll(params, xs):
    hs = [params["h0"]]
    c = np.zeros(HIDDEN)
    for t in range(len(xs) - 1):
        h, c = lstm_step(params, hs[t], c, xs[t])
        hs.append(h)
    loss = 0.0
    for t in range(1, len(xs)):
        logits = hs[t - 1] @ params["W_out"] + hs[t] @ params["W_skip"] + params["b_out"]
        loss = loss - (logits @ xs[t] - logsumexp(logits))
    return loss / (len(xs) - 1)


def init_params(rs, scale=0.5):
    return {"W": scale * rs.randn(VOCAB + HIDDEN + 1, 4 * HIDDEN),
            "W_out": scale * rs.randn(HIDDEN, VOCAB),
            "W_skip": scale * rs.randn(HIDDEN, VOCAB),
            "b_out": np.zeros(VOCAB),
            "h0": 0.1 * rs.randn(HIDDEN)}


def one_hot_sequence(text):
    eye = np.eye(VOCAB)
    return [eye["abcd".index(ch)] for ch in text]


def make_args():
    return init_params(np.random.RandomState(1)), one_hot_sequence("abcabdacab")


def main(steps=5, lr=0.3):
    params, xs = make_args()
    grad_fn = sg.grad(sequence_nll)
    for step in range(steps):
        g = grad_fn(params, xs)
        params = {k: params[k] - lr * g[k] for k in params}
    return [params[k] for k in sorted(params)]


CHECKS = [("sequence_nll", sequence_nll, make_args, (0,))]
