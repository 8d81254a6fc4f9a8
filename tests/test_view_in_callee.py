"""A helper that writes into a view of its own buffer, called from
differentiated code: the write may change the buffer (NumPy's views), so
the buffer counts as varied (activity.py), the helper's generated code
runs its run-time view check, and the call is refused by name. It used
to look constant to the caller, which then ran the plain helper: a zero
derivative without a word."""
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_jacobian


def fill_row(v):
    out = np.ones((2, 3))
    row = out[1]
    row[0] = v[0]                   # NumPy writes into out
    return out * 2.0


def summed(v):
    return np.sum(fill_row(v))


def pick(a):
    return a.copy() if a.ndim > 1 else a


def fill_copy(v):
    out = np.ones((2, 3))
    row = pick(out)                 # a copy here, known at run time only
    row[0, 0] = v[0]
    return out * 2.0 + row * row


def summed_copy(v):
    return np.sum(fill_copy(v))


X = np.array([0.5, 1.0, 1.5])


@pytest.mark.parametrize("run", [
    lambda: sg.grad(summed)(X),
    lambda: sg.grad(lambda v: np.sum(fill_row(v) * 3.0))(X),
    lambda: sg.jvp(summed, (X,), (np.ones(3),)),
    lambda: sg.jacobian(fill_row)(X),
], ids=["grad", "grad_lambda", "jvp", "jacobian"])
def test_a_write_into_a_view_in_a_helper_is_refused_not_zero(run):
    with pytest.raises(sg.UnsupportedSyntaxError, match="may be a NumPy view of out"):
        run()


def test_a_copy_known_at_run_time_is_differentiated():
    g = sg.grad(summed_copy)(X)
    check_close(g, numerical_jacobian(summed_copy, X), rtol=1e-6, atol=1e-8)
    check_close(g, [2 * X[0], 0.0, 0.0], rtol=1e-14, atol=0)
