"""Rule-test rows for scipy.integrate's odeint and solve_ivp
(srcgrad/integrate.py), on y' = -k y, whose solution
y0 exp(-k (t - t0)) is the autograd reference (written with
autograd.numpy: exact gradients). The solves use rtol = atol = 1e-12, so
that the adjoint sweep agrees with the exact gradient to the table's
tolerances; the reference's value is shifted by the solver's integration
error (a constant), see `_with_solver_value`.

The rows are `compiled_only` (SciPy converts Tensors with np.asarray). The
adjoint sweep's primitives (odeint_vjp, solve_ivp_vjp) run in these rows'
backward passes; their own rules, which refuse second derivatives, are
tested in tests/test_scipy_integrate.py with the nonlinear ODEs (finite
differences, autograd's odeint) and forward mode.
"""
import autograd.numpy as anp
import numpy as np
import scipy.integrate as si
from rulecase import Case, P, R

from srcgrad.integrate import odeint_vjp, solve_ivp_vjp

C = Case
CO = {"compiled_only": True}
TS = np.array([0.0, 0.3, 0.8])
TEVAL = np.array([0.25, 0.6, 1.0])


def decay(y, t, k):
    return -k * y


def decay_ivp(t, y, k):
    return -k * y


def f_odeint(y0, k, w):
    return np.sum(si.odeint(decay, y0, TS, args=(k,), rtol=1e-12, atol=1e-12) * w)


def f_odeint_times(dt, w):
    # increasing output times after t0 = 0 (odeint needs monotonic t; the derivative in t0,
    # an exact cancellation, is checked against the closed form in test_scipy_integrate.py)
    t = np.concatenate([np.zeros(1), np.cumsum(dt)])
    return np.sum(si.odeint(decay, np.array([1.0, -2.0]), t, (np.array([0.7, 1.2]),),
                            rtol=1e-12, atol=1e-12) * w)


def f_solve_ivp(y0, k, w):
    sol = si.solve_ivp(decay_ivp, (0.0, 1.0), y0, method="DOP853", t_eval=TEVAL, args=(k,),
                       rtol=1e-12, atol=1e-12)
    return np.sum(sol["y"] * w)


def _value(a):
    while hasattr(a, "_value"):
        a = a._value
    return np.asarray(a)


def _with_solver_value(exact, solved):
    """The exact solution, shifted by the constant (not differentiated)
    integration error of SciPy's solve, so the table's value check (1e-12)
    compares like with like while the gradient is the exact one."""
    return exact + (solved - _value(exact))


def _ag_decay(y0, k, t):
    exact = y0 * anp.exp(-anp.outer(t - t[0], k))
    solved = si.odeint(decay, _value(y0), _value(t), args=(_value(k),), rtol=1e-12, atol=1e-12)
    return _with_solver_value(exact, solved)


def _ag_decay_ivp(y0, k):
    exact = anp.transpose(y0 * anp.exp(-anp.outer(TEVAL, k)))
    solved = si.solve_ivp(decay_ivp, (0.0, 1.0), _value(y0), method="DOP853", t_eval=TEVAL,
                          args=(_value(k),), rtol=1e-12, atol=1e-12).y
    return _with_solver_value(exact, solved)


CASES = [
    C("si_odeint", f_odeint, lambda y0, k: _ag_decay(y0, k, TS), (R(3), P(3)),
      (si.odeint, odeint_vjp), meta=CO),
    C("si_odeint_times", f_odeint_times,
      lambda dt: _ag_decay(np.array([1.0, -2.0]), np.array([0.7, 1.2]), anp.concatenate([np.zeros(1), anp.cumsum(dt)])),
      (P(4),), si.odeint, meta=CO),
    C("si_solve_ivp", f_solve_ivp,
      _ag_decay_ivp, (R(2), P(2)),
      (si.solve_ivp, solve_ivp_vjp), meta=CO),
]
