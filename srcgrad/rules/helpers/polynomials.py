"""Run-time helpers of np.polyval's and np.vander's rules
(rules/numpy/polynomials.py).

Both are sums of powers of x: polyval(p, x) = sum_i p[i] x^(N-1-i) (NumPy's
polyval, Horner's scheme, numpy/lib/_polynomial_impl.py) and
vander(x, N)[:, j] = x^(N-1-j) (x^j when increasing; numpy/lib/
_twodim_base_impl.py). Their derivatives are sums of powers too:
d/dx x^k = k x^(k-1), the textbook rule. The powers are built by repeated
multiplication (`powers`), never as x ** k: x ** 0's derivative,
0 x^(-1), is NaN at x = 0, a product's is not. Every helper is written
with operations that have rules (np.polyval's included), so the rules are
differentiated again.
"""
import numpy as np

from ...runtime import nondiff_helper
from ..python.containers import sequence_as_array
from .broadcast import unbroadcast
from .complex import conj, inexact_dtype


@nondiff_helper
def _ones(x):
    return np.ones(np.shape(x), dtype=inexact_dtype(x))


def powers(x, n):
    """[x^0, x^1, ..., x^(n-1)], each shaped like x, by repeated products."""
    out = []
    p = _ones(x)
    for _ in range(n):
        out.append(p)
        p = p * x
    return out


@nondiff_helper
def _derivative_weights(p):
    """N-1, N-2, ..., 1 shaped to scale p[:-1] along its first axis."""
    n = np.shape(p)[0]
    return np.reshape(np.arange(n - 1, 0, -1, dtype=np.float64), (n - 1,) + (1,) * (np.ndim(p) - 1))


def polyder_coefficients(p):
    """The coefficients of p's derivative, (N-1-i) p[i] for i < N-1 (as
    np.polyder, which NumPy writes for poly1d; written here with
    operations that have rules). A list is read as an array (recorded
    when it holds Tensors: np.asarray here, srcgrad's own call, dropped
    them from the tape, and the second derivatives of
    np.polyval([a, b], x) lost every term through a and b)."""
    p = sequence_as_array(p)
    return p[:-1] * _derivative_weights(p)


def polyval_derivative(p, x):
    """d/dx polyval(p, x) = polyval(p', x) (0 for a constant polynomial)."""
    return np.polyval(polyder_coefficients(p), x)


def polyval_p_adjoint(g, p, x):
    """z = sum_i p[i] x^(N-1-i) is linear in p: d p[i] = g conj(x^(N-1-i)),
    summed back to p[i]'s shape. A list, one entry per coefficient
    (seq_cotangent stacks it for an array p)."""
    n = len(p)
    pw = powers(x, n)
    return [unbroadcast(g * conj(pw[n - 1 - i]), p[i]) for i in range(n)]


def polyval_p_tangent(tp, p, x):
    """np.polyval is linear in p: polyval of the coefficients' tangents (a
    list with None for a coefficient without one: zeros). Linear in tp."""
    if isinstance(tp, (list, tuple)):
        tp = np.stack([np.zeros(np.shape(c), dtype=inexact_dtype(c)) if t is None else t
                       for t, c in zip(tp, p)])
    return np.polyval(tp, x)


def vander_derivative(x, N, increasing):
    """The (len(x), N) matrix of d/dx x^k = k x^(k-1) in vander's column
    order (0 for k = 0)."""
    n = np.shape(x)[0] if N is None else int(N)
    if n == 0:
        return np.zeros((np.shape(x)[0], 0), dtype=inexact_dtype(x))
    pw = powers(x, n - 1)
    columns = [0.0 * _ones(x)] + [float(k + 1) * pw[k] for k in range(n - 1)]
    table = np.stack(columns, axis=1)
    return table if increasing else table[:, ::-1]


def vander_adjoint(g, x, N, increasing):
    """d x_i = sum_j g[i, j] conj(k_j x_i^(k_j - 1))."""
    return np.sum(g * conj(vander_derivative(x, N, increasing)), axis=1)
