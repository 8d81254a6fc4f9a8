"""np.interp given lists (its x, xp and fp as Python lists holding
differentiated values): the rule's helpers read them as arrays (they
raised TypeError: a list minus a float, and np.result_type of a list).
Checked against central differences and the op-by-op tape."""
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_jacobian


def interp_fp_list(v):
    return np.sum(np.interp([0.25, 0.75], [0.0, 0.5, 1.0], [v[0], 1.0, v[1]]) * np.array([1.0, 3.0]))


def interp_x_list(v):
    return np.sum(np.interp([v[0], 0.6], [0.0, 0.5, 1.0], [0.0, v[1] ** 2, 2.0]))


def interp_xp_list(v):
    return np.sum(np.interp(np.array([0.3, 0.7]), [0.0, v[0], 1.0], [0.0, 1.0, v[1]]))


@pytest.mark.parametrize("f", [interp_fp_list, interp_x_list, interp_xp_list],
                         ids=["fp", "x", "xp"])
def test_interp_of_lists(f):
    x = np.array([0.35, 0.8])
    g = sg.grad(f)(x)
    check_close(g, numerical_jacobian(f, x), rtol=1e-6, atol=1e-8)
    xt = sg.constant(x)
    with sg.GradientTape() as tape:
        tape.watch(xt)
        out = f(xt)
    check_close(tape.gradient(out, xt).numpy(), g, rtol=1e-12, atol=1e-14)
    check_close(sg.jvp(f, (x,), (np.array([1.0, -2.0]),))[1], g @ np.array([1.0, -2.0]), rtol=1e-12, atol=1e-14)
