"""Run-time helpers of np.cov's and np.corrcoef's rules
(rules/numpy/reductions.py).

np.cov (numpy/lib/_function_base_impl.py) stacks its variables as the rows
of X (m, then y; transposed when rowvar is False), centres each row on its
(frequency-weighted) mean and returns

    C = Xc W Xc^H / f,    Xc = X - mean(X),    W = diag(w),

squeezed, with f = N - ddof (ddof = 1 unless bias; with fweights w,
f = sum(w) - ddof, or sum(w) when ddof is 0). Since the weighted rows of Xc
sum to zero, the centring needs no adjoint of its own:

    d X = (G + G^H) Xc W / f,    G = d C,

(TF's complex convention: the cotangent of X Y^H in X is G Y, in Y G^H X),
and the tangent is (tXc W Xc^H + Xc W tXc^H) / f, tXc the centred tangent.
The frequency weights are integer counts: no cotangent. aweights are
refused (NotImplementedError).

np.corrcoef is R = C / (s s^T), s = sqrt(real(diag(C))) (NumPy's
corrcoef; its clipping to [-1, 1] only removes round-off): with V = 1 /
(s s^T), d C = G V + diag(d s / (2 s)), d s_i = -(sum_j H_ij + sum_j H_ji)
/ s_i for H = real(G conj(C)) V, and the tangent is tC V + C tV,
tV_ij = -V_ij (ts_i / s_i + ts_j / s_j), ts = real(diag(tC)) / (2 s).

Everything is written with operations that have rules (np.cov's included),
so the rules are differentiated again.
"""
import numpy as np

from ...runtime import nondiff_helper
from .complex import conj, inexact_dtype


def _refuse(aweights):
    if aweights is not None:
        raise NotImplementedError(
            "srcgrad: np.cov(..., aweights=...) has no rule (the normalisation depends on the weights); "
            "differentiate np.cov without aweights, or write the weighted covariance with np.average "
            "and np.matmul")


def cov_rows(m, y, rowvar):
    """X as np.cov builds it: m's variables as rows (a 1-d m is one
    variable; transposed when rowvar is False), then y's."""
    X = np.atleast_2d(m)
    if not rowvar and np.ndim(m) != 1:
        X = np.transpose(X)
    if y is not None:
        Y = np.atleast_2d(y)
        if not rowvar and np.shape(Y)[0] != 1:
            Y = np.transpose(Y)
        X = np.concatenate((X, Y), axis=0)
    return X


@nondiff_helper
def cov_weights(m, y, rowvar, bias, ddof, fweights, aweights):
    """(w, f): the frequency weights as a row broadcast against X (1.0
    without them) and np.cov's normalisation f."""
    _refuse(aweights)
    n = np.shape(cov_rows(m, y, rowvar))[1]
    if ddof is None:
        ddof = 0 if bias else 1
    if fweights is None:
        return 1.0, n - ddof
    w = np.asarray(fweights, dtype=float)
    total = float(np.sum(w))
    return w, (total if ddof == 0 else total - ddof)


def _centred(X, w):
    """X minus its (weighted) row means."""
    return X - np.sum(X * w, axis=1, keepdims=True) / np.sum(np.broadcast_to(w, np.shape(X)[1:]))


@nondiff_helper
def _rows(m, rowvar):
    """How many rows of X are m's variables."""
    return np.shape(cov_rows(m, None, rowvar))[0]


def _split(dX, m, y, rowvar):
    """The rows of dX back to m's and y's shapes (the inverse of cov_rows)."""
    k = _rows(m, rowvar)
    dm = dX[:k]
    if not rowvar and np.ndim(m) != 1:
        dm = np.transpose(dm)
    dm = np.reshape(dm, np.shape(m))
    if y is None:
        return dm, None
    dy = dX[k:]
    if not rowvar and np.shape(np.atleast_2d(y))[0] != 1:
        dy = np.transpose(dy)
    return dm, np.reshape(dy, np.shape(y))


def cov_adjoint(g, m, y, rowvar, bias, ddof, fweights, aweights, wrt_m):
    """d m (wrt_m) or d y: d X = (G + G^H) Xc W / f, split back to m and y."""
    w, f = cov_weights(m, y, rowvar, bias, ddof, fweights, aweights)
    X = cov_rows(m, y, rowvar)
    k = np.shape(X)[0]
    G = np.reshape(g, (k, k))
    dX = np.matmul(G + conj(np.transpose(G)), _centred(X, w) * w) / f
    dm, dy = _split(dX, m, y, rowvar)
    return dm if wrt_m else dy


def _tangent_rows(tm, ty, m, y, rowvar):
    """The tangent of X: cov_rows of the tangents (zeros for a missing one)."""
    if tm is None:
        tm = np.zeros(np.shape(m), dtype=inexact_dtype(m))
    if y is not None and ty is None:
        ty = np.zeros(np.shape(y), dtype=inexact_dtype(y))
    return cov_rows(tm, ty if y is not None else None, rowvar)


def cov_tangent(tm, ty, z, m, y, rowvar, bias, ddof, fweights, aweights):
    """(tXc W Xc^H + Xc W tXc^H) / f in z's shape. Jointly linear in tm, ty."""
    w, f = cov_weights(m, y, rowvar, bias, ddof, fweights, aweights)
    Xc = _centred(cov_rows(m, y, rowvar), w)
    tXc = _centred(_tangent_rows(tm, ty, m, y, rowvar), w)
    t = (np.matmul(tXc * w, conj(np.transpose(Xc))) + np.matmul(Xc * w, conj(np.transpose(tXc)))) / f
    return np.reshape(t, np.shape(z))


# ------------------------------------------------------------------ corrcoef

def _scales(c):
    """V = 1 / (s s^T), s = sqrt(real(diag(C))), and s."""
    s = np.sqrt(np.real(np.diagonal(c)))
    return 1.0 / (s[:, None] * s[None, :]), s


def corrcoef_cov_cotangent(g, c):
    """The cotangent of C = np.cov(...) in R = C V: G V plus, through s,
    diag(d s / (2 s)), d s_i = -(sum_j H_ij + sum_j H_ji) / s_i with
    H = real(G conj(C)) V."""
    k = np.shape(c)[0]
    G = np.reshape(g, (k, k))
    V, s = _scales(c)
    H = np.real(G * conj(c)) * V
    ds = -(np.sum(H, axis=1) + np.sum(H, axis=0)) / s
    return G * V + np.diag(ds / (2.0 * s))


def corrcoef_tangent(tc, c, z):
    """tR = tC V + C tV, tV_ij = -V_ij (ts_i / s_i + ts_j / s_j),
    ts = real(diag(tC)) / (2 s), in z's shape. Linear in tc."""
    V, s = _scales(c)
    r = np.real(np.diagonal(tc)) / (2.0 * s * s)
    tV = -V * (r[:, None] + r[None, :])
    return np.reshape(tc * V + c * tV, np.shape(z))


def corrcoef_adjoint(g, x, y, rowvar, wrt_x):
    """d x (wrt_x) or d y of np.corrcoef: the cotangent of the covariance
    (np.cov with NumPy's defaults), then np.cov's adjoint. A single variable
    gives R = C / C = 1: no cotangent."""
    c = np.atleast_2d(np.cov(x, y, rowvar))
    if np.shape(c)[0] == 1:
        return np.zeros(np.shape(x if wrt_x else y), dtype=inexact_dtype(x if wrt_x else y))
    return cov_adjoint(corrcoef_cov_cotangent(g, c), x, y, rowvar, False, None, None, None, wrt_x)


def corrcoef_tangent_(tx, ty, z, x, y, rowvar):
    """The tangent of np.corrcoef: np.cov's tangent, then corrcoef_tangent
    (zero for a single variable). Jointly linear in tx, ty."""
    c = np.atleast_2d(np.cov(x, y, rowvar))
    if np.shape(c)[0] == 1:
        return np.zeros(np.shape(z), dtype=inexact_dtype(z))
    tc = cov_tangent(tx, ty, c, x, y, rowvar, False, None, None, None)
    return corrcoef_tangent(tc, c, z)
