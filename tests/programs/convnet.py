"""A small convolutional classifier: convolution (written as explicit loops
over output positions, each an np.einsum over a patch), ReLU, 2x2 mean
pooling and a dense softmax layer, on 6x6 single-channel images; the loss is
the mean cross-entropy (Goodfellow, Bengio & Courville, Deep Learning, 2016,
ch. 9).

Patterns: layer objects with `__call__`; the network is a list of layer
objects built inside the loss from constants, and its layers' methods are
called in a loop; a second model holds its weights in attributes
(`self.kernel`) and is differentiated with respect to them on the tape.
"""
import numpy as np

import srcgrad as sg


class Conv:
    def __init__(self, name, size):
        self.name = name
        self.size = size

    def __call__(self, params, x):
        w = params[self.name]
        k = self.size
        rows = []
        for i in range(x.shape[1] - k + 1):
            cols = []
            for j in range(x.shape[2] - k + 1):
                cols.append(np.einsum("bhwc,hwcd->bd", x[:, i:i + k, j:j + k, :], w))
            rows.append(np.stack(cols, axis=1))
        return np.stack(rows, axis=1)


class Relu:
    def __call__(self, params, x):
        return np.maximum(x, 0.0)


class MeanPool:
    def __init__(self, size):
        self.size = size

    def __call__(self, params, x):
        b, h, w, c = x.shape
        s = self.size
        return np.mean(x.reshape(b, h // s, s, w // s, s, c), axis=(2, 4))


class Dense:
    def __init__(self, name):
        self.name = name

    def __call__(self, params, x):
        W, b = params[self.name]
        return x.reshape(x.shape[0], -1) @ W + b


def cross_entropy(logits, labels):
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(log_probs * labels, axis=1))


def loss(params, images, labels):
    layers = [Conv("conv", 3), Relu(), MeanPool(2), Dense("dense")]
    x = images
    for layer in layers:
        x = layer(params, x)
    return cross_entropy(x, labels)


class Model:
    """Keras style: the layers hold their weights."""

    def __init__(self, kernel, W, b):
        self.kernel = kernel
        self.W = W
        self.b = b

    def conv(self, x):
        return Conv("conv", 3)({"conv": self.kernel}, x)

    def __call__(self, images):
        h = np.maximum(self.conv(images), 0.0)
        return Dense("dense")({"dense": (self.W, self.b)}, MeanPool(2)(None, h))

    def loss(self, images, labels):
        return cross_entropy(self(images), labels)


def make_args():
    rs = np.random.RandomState(6)
    images = rs.randn(5, 6, 6, 1)
    labels = np.eye(3)[rs.randint(0, 3, size=5)]
    params = {"conv": 0.5 * rs.randn(3, 3, 1, 2), "dense": (0.5 * rs.randn(8, 3), np.zeros(3))}
    return params, images, labels


def make_model():
    params, images, labels = make_args()
    return Model(params["conv"], *params["dense"]), images, labels


def main(steps=4, lr=0.5):
    params, images, labels = make_args()
    grad_fn = sg.grad(loss)
    for step in range(steps):
        g = grad_fn(params, images, labels)
        params = {"conv": params["conv"] - lr * g["conv"],
                  "dense": (params["dense"][0] - lr * g["dense"][0], params["dense"][1] - lr * g["dense"][1])}
    return [params["conv"], params["dense"][0], params["dense"][1]]


CHECKS = [("loss", loss, make_args, (0,))]
