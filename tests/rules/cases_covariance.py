"""Rule-test rows for np.cov and np.corrcoef (srcgrad/rules/numpy/reductions.py,
rules/helpers/covariance.py): variables in rows and in columns (rowvar),
a second set of variables y (2-d, 1-d), a 1-d m (a 0-d result), bias and
ddof, integer frequency weights (fweights), and np.corrcoef of one and of
two sets of variables.

autograd has no rule for either: `ref` computes NumPy's definition with
autograd operations, C = Xc Xc^T / f (X the variables as rows, Xc centred
on the weighted means, f = N - ddof or sum(fweights) - ddof), and
R = C / sqrt(diag(C) diag(C)^T).
"""
import autograd.numpy as anp
import numpy as np
from rulecase import Case, ND, R, Static

C = Case

_FW = np.array([1, 3, 2, 1, 1, 2])


def f_cov(m, w):
    return np.sum(np.cov(m) * w)


def f_cov_y(m, y, w):
    return np.sum(np.cov(m, y) * w)


def f_cov_cols(m, w):
    return np.sum(np.cov(m, rowvar=False) * w)


def f_cov_cols_y(m, y, w):
    return np.sum(np.cov(m, y, False) * w)


def f_cov_bias(m, w):
    return np.sum(np.cov(m, bias=True) * w)


def f_cov_ddof(m, w):
    return np.sum(np.cov(m, ddof=2) * w)


def f_cov_fweights(m, fw, w):
    return np.sum(np.cov(m, fweights=fw) * w)


def f_cov_fweights_ddof0(m, fw, w):
    return np.sum(np.cov(m, fweights=fw, ddof=0) * w)


def f_corrcoef(x, w):
    return np.sum(np.corrcoef(x) * w)


def f_corrcoef_y(x, y, w):
    return np.sum(np.corrcoef(x, y) * w)


def f_corrcoef_cols(x, w):
    return np.sum(np.corrcoef(x, rowvar=False) * w)


def _ag_rows(m, y=None, rowvar=True):
    X = anp.reshape(m, (1, -1)) if anp.ndim(m) == 1 else m
    if not rowvar and anp.ndim(m) != 1:
        X = anp.transpose(X)
    if y is not None:
        Y = anp.reshape(y, (1, -1)) if anp.ndim(y) == 1 else y
        if not rowvar and Y.shape[0] != 1:
            Y = anp.transpose(Y)
        X = anp.concatenate([X, Y], axis=0)
    return X


def _ag_cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None):
    X = _ag_rows(m, y, rowvar)
    if ddof is None:
        ddof = 0 if bias else 1
    w = np.ones(X.shape[1]) if fweights is None else np.asarray(fweights, dtype=float)
    f = X.shape[1] - ddof if fweights is None else (w.sum() - ddof if ddof else w.sum())
    Xc = X - anp.sum(X * w, axis=1, keepdims=True) / w.sum()
    c = anp.dot(Xc * w, anp.transpose(Xc)) / f
    return anp.reshape(c, ()) if c.shape == (1, 1) else c


def _ag_corrcoef(x, y=None, rowvar=True):
    c = _ag_cov(x, y, rowvar)
    s = anp.sqrt(anp.diag(c))
    return c / (anp.reshape(s, (-1, 1)) * anp.reshape(s, (1, -1)))


CASES = [
    C("cov", f_cov, _ag_cov, (R(3, 6),), np.cov),
    C("cov_1d", f_cov, _ag_cov, (R(7),), np.cov),
    C("cov_y_2d", f_cov_y, _ag_cov, (R(2, 6), R(3, 6)), np.cov),
    C("cov_y_1d", f_cov_y, _ag_cov, (R(6), R(6)), np.cov),
    C("cov_y_const", f_cov_y, _ag_cov, (R(2, 5), ND(5)), np.cov),
    C("cov_rowvar_false", f_cov_cols, lambda m: _ag_cov(m, rowvar=False), (R(6, 3),), np.cov),
    C("cov_rowvar_false_y", f_cov_cols_y, lambda m, y: _ag_cov(m, y, rowvar=False), (R(5, 2), R(5, 3)),
      np.cov),
    C("cov_rowvar_false_1d_y", f_cov_cols_y, lambda m, y: _ag_cov(m, y, rowvar=False), (R(5), R(5)), np.cov),
    C("cov_bias", f_cov_bias, lambda m: _ag_cov(m, bias=True), (R(3, 5),), np.cov),
    C("cov_ddof", f_cov_ddof, lambda m: _ag_cov(m, ddof=2), (R(2, 6),), np.cov),
    C("cov_fweights", f_cov_fweights, lambda m, fw: _ag_cov(m, fweights=fw), (R(3, 6), Static(_FW)), np.cov),
    C("cov_fweights_ddof0", f_cov_fweights_ddof0, lambda m, fw: _ag_cov(m, ddof=0, fweights=fw),
      (R(2, 6), Static(_FW)), np.cov),
    C("corrcoef", f_corrcoef, _ag_corrcoef, (R(3, 6),), np.corrcoef),
    C("corrcoef_y_1d", f_corrcoef_y, _ag_corrcoef, (R(6), R(6)), np.corrcoef),
    C("corrcoef_y_2d", f_corrcoef_y, _ag_corrcoef, (R(2, 5), R(2, 5)), np.corrcoef),
    C("corrcoef_rowvar_false", f_corrcoef_cols, lambda x: _ag_corrcoef(x, rowvar=False), (R(7, 3),),
      np.corrcoef),
    C("corrcoef_one_variable", f_corrcoef, lambda x: 0.0 * anp.sum(x) + 1.0, (R(5),), np.corrcoef),
]
