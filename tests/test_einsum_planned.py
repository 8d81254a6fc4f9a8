"""Large adjoint contractions run planned (np.einsum's optimize="greedy":
BLAS) and small ones by NumPy's loop (products._contract): the same
derivatives either way, checked against autograd and central differences,
at first and second order."""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close
from srcgrad.rules.helpers import products

RNG = np.random.default_rng(5)


def mahalanobis(Q, xc):
    Qxc = np.einsum("kij,nkj->nki", Q, xc)
    return np.sum(np.tanh(Qxc) ** 2)


def mahalanobis_ag(Q, xc):
    return anp.sum(anp.tanh(anp.einsum("kij,nkj->nki", Q, xc)) ** 2)


@pytest.mark.parametrize("n", [3, 400], ids=["loop", "planned"])
def test_einsum_gradients_either_way(n, monkeypatch):
    Q, xc = RNG.normal(size=(5, 10, 10)) * 0.3, RNG.normal(size=(n, 5, 10))
    calls = []
    real = np.einsum

    def spy(*args, **kwargs):
        calls.append(kwargs.get("optimize", False))
        return real(*args, **kwargs)
    monkeypatch.setattr(products.np, "einsum", spy)
    gQ, gx = sg.grad(mahalanobis, wrt=(0, 1))(Q, xc)
    monkeypatch.setattr(products.np, "einsum", real)
    assert any(calls) == (n == 400), calls
    eQ, ex = autograd.grad(mahalanobis_ag, (0, 1))(Q, xc)
    check_close(gQ, eQ, rtol=1e-11, atol=1e-12)
    check_close(gx, ex, rtol=1e-11, atol=1e-12)
    k = (1, 2, 3)
    step = np.zeros_like(Q)
    step[k] = 1e-6
    fd = (mahalanobis(Q + step, xc) - mahalanobis(Q - step, xc)) / 2e-6
    check_close(gQ[k], fd, rtol=1e-6, atol=1e-8)


def test_planned_einsum_second_order():
    Q, xc = RNG.normal(size=(5, 10, 10)) * 0.3, RNG.normal(size=(100, 5, 10))
    v = RNG.normal(size=Q.shape)
    hv = sg.hvp(mahalanobis, wrt=0)(Q, xc, v)
    expected = autograd.grad(lambda q: anp.sum(autograd.grad(mahalanobis_ag)(q, xc) * v))(Q)
    check_close(hv, expected, rtol=1e-10, atol=1e-11)
