"""Train a one-hidden-layer MLP on scikit-learn's handwritten digits.

The 8x8 digit images ship with scikit-learn (`load_digits`, no download).
The parameters are `sg.Variable`s, the loss is a plain-NumPy softmax
cross-entropy compiled by `@sg.function`, and each step asks a
`sg.GradientTape` for the gradient and applies an Adam update written out
below.

    python examples/digits.py --epochs 30 --seed 0

The last line printed is `test accuracy: 0.xxx` on the held-out 25 %.
"""
import argparse
import os
import sys

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

try:
    import srcgrad as sg
except ImportError:  # running from a source checkout without installing
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import srcgrad as sg

HIDDEN = 64
BATCH = 64
L2 = 1e-4


@sg.function
def loss_fn(W1, b1, W2, b2, x, y_onehot):
    """Mean softmax cross-entropy of the MLP on a batch, plus a small L2 term."""
    h = np.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_norm = np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    log_probs = shifted - log_norm
    nll = -np.mean(np.sum(y_onehot * log_probs, axis=1))
    return nll + L2 * (np.sum(W1 * W1) + np.sum(W2 * W2))


def predict(params, x):
    """Class predictions, in plain NumPy on the parameters' current values."""
    W1, b1, W2, b2 = (p.numpy() for p in params)
    return np.argmax(np.tanh(x @ W1 + b1) @ W2 + b2, axis=1)


class Adam:
    """Adam (Kingma & Ba, 2015) on a list of `sg.Variable`s."""

    def __init__(self, params, lr=1e-2, beta1=0.9, beta2=0.999, eps=1e-8):
        self.params, self.lr, self.beta1, self.beta2, self.eps = params, lr, beta1, beta2, eps
        self.m = [np.zeros(p.shape) for p in params]
        self.v = [np.zeros(p.shape) for p in params]
        self.t = 0

    def apply(self, grads):
        self.t += 1
        scale = self.lr * np.sqrt(1 - self.beta2 ** self.t) / (1 - self.beta1 ** self.t)
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            g = np.asarray(g)
            m += (1 - self.beta1) * (g - m)
            v += (1 - self.beta2) * (g * g - v)
            p.assign_sub(scale * m / (np.sqrt(v) + self.eps))


def load():
    digits = load_digits()
    x = digits.data / 16.0
    y = digits.target
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.25, random_state=0, stratify=y)
    return x_train, x_test, y_train, y_test


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30, help="passes over the training set")
    parser.add_argument("--seed", type=int, default=0, help="seed of initialisation and shuffling")
    parser.add_argument("--lr", type=float, default=1e-2, help="Adam learning rate")
    args = parser.parse_args(argv)

    x_train, x_test, y_train, y_test = load()
    n_in, n_out = x_train.shape[1], 10
    onehot_train = np.eye(n_out)[y_train]

    rng = np.random.default_rng(args.seed)
    W1 = sg.Variable(rng.normal(0.0, 1.0 / np.sqrt(n_in), (n_in, HIDDEN)), name="W1")
    b1 = sg.Variable(np.zeros(HIDDEN), name="b1")
    W2 = sg.Variable(rng.normal(0.0, 1.0 / np.sqrt(HIDDEN), (HIDDEN, n_out)), name="W2")
    b2 = sg.Variable(np.zeros(n_out), name="b2")
    params = [W1, b1, W2, b2]
    optimizer = Adam(params, lr=args.lr)

    n = len(x_train)
    bar = tqdm(range(args.epochs), desc="training", unit="epoch")
    for _ in bar:
        order = rng.permutation(n)
        total = 0.0
        for start in range(0, n, BATCH):
            idx = order[start:start + BATCH]
            with sg.GradientTape() as tape:
                loss = loss_fn(W1, b1, W2, b2, x_train[idx], onehot_train[idx])
            grads = tape.gradient(loss, params)
            optimizer.apply(grads)
            total += float(loss) * len(idx)
        bar.set_postfix(loss="%.4f" % (total / n))
    bar.close()

    train_acc = float(np.mean(predict(params, x_train) == y_train))
    accuracy = float(np.mean(predict(params, x_test) == y_test))
    print("train accuracy: %.3f" % train_acc)
    print("test accuracy: %.3f" % accuracy)
    return accuracy


if __name__ == "__main__":
    main()
