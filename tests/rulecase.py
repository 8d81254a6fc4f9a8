"""The rule-test table's vocabulary, shared by tests/rules/test_rules.py and
the per-family case modules (tests/rules/cases_*.py).

A case module defines module-level case functions `f_<name>(inputs..., w)`
returning `np.sum(op(inputs) * w)` (real `def`s: srcgrad compiles them from
source) and a list `CASES` of `Case` rows; tests/rules/test_rules.py collects
every `cases_*.py` module and runs each row through all of srcgrad's paths.
"""
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import autograd.numpy as anp
import numpy as np


@dataclass(frozen=True)
class Arg:
    """An array input drawn at random. `domain`: "real" (standard normal),
    "pos" (uniform [0.5, 2], for log, sqrt, the base of **), "nonzero"
    (|x| in [0.5, 1.5], for divisors and kinks at 0) or "bool" (a mask).
    `diff`: whether the case differentiates it."""
    shape: tuple
    domain: str = "real"
    diff: bool = True


@dataclass(frozen=True)
class Static:
    """A non-differentiated Python value (axis, index array) passed as is."""
    value: Any


def R(*shape):
    return Arg(shape)


def P(*shape):
    return Arg(shape, "pos")


def NZ(*shape):
    return Arg(shape, "nonzero")


def B(*shape):
    return Arg(shape, "bool", diff=False)


def ND(*shape):
    """A float input the case does not differentiate."""
    return Arg(shape, "real", diff=False)


def _draw(rng, arg):
    if arg.domain == "real":
        return rng.normal(0.0, 1.0, arg.shape)
    if arg.domain == "pos":
        return rng.uniform(0.5, 2.0, arg.shape)
    if arg.domain == "nonzero":
        return rng.choice([-1.0, 1.0], arg.shape) * rng.uniform(0.5, 1.5, arg.shape)
    if arg.domain == "bool":
        return rng.random(arg.shape) > 0.5
    if arg.domain == "unit":
        return rng.uniform(-0.9, 0.9, arg.shape)
    if arg.domain == "prob":
        return rng.uniform(0.1, 0.9, arg.shape)
    if arg.domain == "gt1":
        return rng.uniform(1.2, 3.0, arg.shape)
    if arg.domain == "withnan":
        x = rng.normal(0.0, 1.0, arg.shape)
        x[rng.random(arg.shape) < 0.3] = np.nan
        return x
    raise ValueError(arg.domain)


def U(*shape):
    """uniform in (-0.9, 0.9): arcsin, arccos, arctanh."""
    return Arg(shape, "unit")


def PR(*shape):
    """uniform in (0.1, 0.9): probabilities (logit, ndtri, betainc's x)."""
    return Arg(shape, "prob")


def GT1(*shape):
    """uniform in (1.2, 3): arccosh."""
    return Arg(shape, "gt1")


def NAN(*shape):
    """standard normal with about 30 % NaN entries (nansum, nanmean, nanmax)."""
    return Arg(shape, "withnan")


@dataclass(eq=False)
class Case:
    """One row: `fn(*inputs, w)` is srcgrad's loss; `ref(*inputs)` is the
    operation written with autograd.numpy (the loss is sum(ref * w));
    `covers` is the NumPy callable whose registered rule the row exercises."""
    name: str
    fn: Callable
    ref: Callable
    inputs: tuple
    covers: Any
    meta: dict = field(default_factory=dict)

    @property
    def wrt(self):
        """Indices of the differentiated inputs."""
        return tuple(i for i, a in enumerate(self.inputs) if isinstance(a, Arg) and a.diff)

    def param_name(self, i):
        return list(inspect.signature(self.fn).parameters)[i]


def _ag_bcast(a, b):
    """`a` broadcast against `b` by adding zeros: autograd's where and
    broadcast_to do not sum broadcast cotangents back, its add does."""
    return a + anp.zeros(np.broadcast_shapes(anp.shape(a), anp.shape(b)))


def _ag_reduce(agf, axis, keepdims):
    def ref(x):
        return agf(x, axis=axis, keepdims=keepdims)
    return ref


# ---------------------------------------------------------------------------
# Matrix domains (linear algebra rows). Each draws a stack of matrices in the
# last two axes; appended as a wrapper of `_draw` so the domains above are
# unchanged.
# ---------------------------------------------------------------------------

def SPD(*shape):
    """Symmetric positive definite (..., n, n): Q diag(l) Q^T with
    eigenvalues about 1, 2, ..., n (well separated, condition <= ~n)."""
    return Arg(shape, "spd")


def SYM(*shape):
    """Symmetric (..., n, n) with well-separated eigenvalues of both signs
    (gaps about 1), for eigh."""
    return Arg(shape, "sym")


def WC(*shape):
    """Well-conditioned (..., m, n): U diag(s) V^T with distinct singular
    values about 1, 1.5, 2, ... (for inv, solve, det, svd, pinv)."""
    return Arg(shape, "wellcond")


def SQ(n, *batch):
    """A well-conditioned square n x n matrix (batch shape first)."""
    return Arg(tuple(batch) + (n, n), "wellcond")


def _orthogonal(rng, n):
    q, r = np.linalg.qr(rng.normal(0.0, 1.0, (n, n)))
    return q * np.sign(np.diag(r))


def _draw_matrix(rng, domain, m, n):
    if domain == "spd":
        q = _orthogonal(rng, n)
        lam = np.arange(1, n + 1) + rng.uniform(-0.2, 0.2, n)
        return (q * lam) @ q.T
    if domain == "sym":
        q = _orthogonal(rng, n)
        lam = np.arange(n) - (n - 1) / 2.0 + rng.uniform(-0.2, 0.2, n)
        return (q * lam) @ q.T
    if domain == "wellcond":
        k = min(m, n)
        s = 1.0 + 0.5 * np.arange(k)[::-1] + rng.uniform(-0.1, 0.1, k)
        return (_orthogonal(rng, m)[:, :k] * s) @ _orthogonal(rng, n)[:, :k].T
    raise ValueError(domain)


_draw_scalar_domains = _draw


def _draw(rng, arg):   # noqa: F811  (extends the domains above)
    if arg.domain in ("spd", "sym", "wellcond"):
        *batch, m, n = arg.shape
        out = np.empty(arg.shape)
        for idx in np.ndindex(*batch):
            out[idx] = _draw_matrix(rng, arg.domain, m, n)
        return out
    return _draw_scalar_domains(rng, arg)


def _raw(x):
    """The value inside an autograd box (to compute a permutation)."""
    while hasattr(x, "_value"):
        x = x._value
    return np.asarray(x)
