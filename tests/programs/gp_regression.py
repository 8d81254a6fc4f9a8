"""Gaussian-process regression: the hyperparameters of an RBF kernel are fit
by minimising the negative log marginal likelihood

    nll = 1/2 y^T K^-1 y + 1/2 log|K| + n/2 log(2 pi),   K = k(X, X) + s^2 I

(Rasmussen & Williams, Gaussian Processes for Machine Learning, 2006,
eq. 2.30 and Algorithm 2.1), with scipy.optimize.minimize and
`jac=sg.grad(nll)`.

Patterns: the kernel is a module-level lambda; a dict built from
differentiated values; a `with np.errstate(...)` block; Cholesky + triangular
solves, and the same likelihood with slogdet + solve.
"""
import numpy as np
import scipy.optimize

import srcgrad as sg

kernel = lambda a, b, ell, amp: amp ** 2 * np.exp(
    -0.5 * np.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=-1) / ell ** 2)


def hyperparameters(params):
    """Log-parametrised, so any real vector is valid."""
    return {"ell": np.exp(params[0]), "amp": np.exp(params[1]), "noise": np.exp(params[2])}


def covariance(params, X):
    hp = hyperparameters(params)
    return kernel(X, X, hp["ell"], hp["amp"]) + (hp["noise"] ** 2 + 1e-8) * np.eye(X.shape[0])


def nll(params, X, y):
    L = np.linalg.cholesky(covariance(params, X))
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    with np.errstate(divide="raise"):        # a zero pivot is a bug, not -inf
        half_logdet = np.sum(np.log(np.diag(L)))
    return 0.5 * y @ alpha + half_logdet + 0.5 * y.shape[0] * np.log(2 * np.pi)


def nll_slogdet(params, X, y):
    K = covariance(params, X)
    sign, logdet = np.linalg.slogdet(K)
    return 0.5 * y @ np.linalg.solve(K, y) + 0.5 * logdet + 0.5 * y.shape[0] * np.log(2 * np.pi)


def predict(params, X, y, Xstar):
    hp = hyperparameters(params)
    Ks = kernel(Xstar, X, hp["ell"], hp["amp"])
    return Ks @ np.linalg.solve(covariance(params, X), y)


def make_data():
    rs = np.random.RandomState(0)
    X = np.sort(rs.uniform(-2.0, 2.0, size=(12, 1)), axis=0)
    y = np.sin(2.0 * X[:, 0]) + 0.1 * rs.randn(12)
    return X, y


def make_args():
    X, y = make_data()
    return np.array([-0.3, 0.2, -1.5]), X, y


def fit(X, y, params0, iters=8):
    result = scipy.optimize.minimize(nll, params0, args=(X, y), jac=sg.grad(nll),
                                     method="BFGS", options={"maxiter": iters})
    return result.x


def main():
    params0, X, y = make_args()
    params = fit(X, y, params0)
    return params, predict(params, X, y, np.linspace(-2.0, 2.0, 5)[:, None])


CHECKS = [
    ("nll", nll, make_args, (0,)),
    ("nll_slogdet", nll_slogdet, make_args, (0,)),
]
