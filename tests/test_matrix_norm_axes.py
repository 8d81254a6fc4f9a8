"""np.linalg.norm's matrix norms with the axis pair in either order: the
pair is (row axis, column axis), so axis=(1, 0) is the norm of the
transpose. The rule once sorted the pair, and ord=1/-1/inf/-inf gave NaN
gradients (found by the second probe helper). Checked against central
differences for every matrix ord, both orders, 2-d and 3-d."""
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import numerical_grad

RNG = np.random.default_rng(1)
X2 = RNG.normal(size=(3, 4))
X3 = RNG.normal(size=(2, 3, 4))
ORDS = [1, -1, np.inf, -np.inf, "fro", "nuc", 2, -2]
AXES = [(0, 1), (1, 0), (-1, -2), (-2, -1)]


@pytest.mark.parametrize("ord", ORDS, ids=str)
@pytest.mark.parametrize("x, axis", [(X2, a) for a in AXES] + [(X3, a) for a in AXES + [(2, 0), (0, 2)]],
                         ids=lambda v: str(v) if isinstance(v, tuple) else "%dd" % np.ndim(v))
def test_matrix_norm_gradient_in_either_axis_order(ord, x, axis):
    def f(a):
        return np.sum(np.linalg.norm(a, ord, axis=axis))
    got = sg.grad(f)(x)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, numerical_grad(f, x), rtol=1e-5, atol=1e-6)
