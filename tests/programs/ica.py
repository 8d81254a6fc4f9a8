"""Independent component analysis by maximum likelihood: x = A s with
independent logistic sources, so for the unmixing matrix W = A^-1

    log p(X | W) = sum_n sum_i log p_s((W x_n)_i) + N log|det W|

(Bell & Sejnowski 1995; Hyvarinen, Karhunen & Oja, Independent Component
Analysis, 2001, eq. 9.15), log p_s(s) = -s - 2 log(1 + e^-s).  log|det W| is
taken from np.linalg.slogdet, and in a second objective from a determinant
computed by cofactor expansion along the first row (recursion whose body is
a loop).
"""
import numpy as np

import srcgrad as sg


def logistic_logpdf(s):
    return -s - 2.0 * np.logaddexp(0.0, -s)


def ica_nll(W, X):
    sources = X @ W.T
    sign, logdet = np.linalg.slogdet(W)
    return -(np.sum(logistic_logpdf(sources)) / X.shape[0] + logdet)


def det_by_minors(A):
    n = A.shape[0]
    if n == 1:
        return A[0, 0]
    total = 0.0
    for j in range(n):
        minor = np.concatenate([A[1:, :j], A[1:, j + 1:]], axis=1)
        total = total + (-1.0) ** j * A[0, j] * det_by_minors(minor)
    return total


def ica_nll_minors(W, X):
    sources = X @ W.T
    return -(np.sum(logistic_logpdf(sources)) / X.shape[0] + np.log(np.abs(det_by_minors(W))))


def make_args():
    rs = np.random.RandomState(8)
    sources = rs.logistic(size=(40, 3))
    mixing = np.array([[1.0, 0.5, 0.2], [0.3, 1.0, -0.4], [-0.2, 0.6, 1.0]])
    return np.eye(3) + 0.2 * rs.randn(3, 3), sources @ mixing.T


def main(steps=10, lr=0.1):
    W, X = make_args()
    grad_fn = sg.grad(ica_nll)
    for step in range(steps):
        W = W - lr * grad_fn(W, X)
    return W


CHECKS = [
    ("ica_nll", ica_nll, make_args, (0,)),
    ("ica_nll_minors", ica_nll_minors, make_args, (0,)),
]
