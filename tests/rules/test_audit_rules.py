"""Regression tests for the rule failures of audit 11 (each failed before
its fix):
  - sg.hvp of x[i] ** (i + 1) with a negative x[i] was NaN: the power's
    tangent multiplied log(x) by the exponent's (zero) tangent, which the
    loop's generated gradient code carries (power_exponent_tangent);
  - np.block: op by op the gradient was silently None (its Tensors sit in
    nested lists, deeper than a tape entry's list parameters), and sg.jvp
    crashed in transpose_jvp (now a tangent rule);
  - np.insert with a list of indices and a list of values: sg.jvp and
    sg.hessian failed (the values' cotangent is now a list, and a tangent
    rule);
  - np.percentile with a list q failed at first order (`list / 100.0`);
  - second order through np.median / np.quantile raised TypeError ("list +
    tuple": `(-1,) + shape` lowered to list_extend, which returned a list);
  - scipy.special.logsumexp(..., return_sign=True) raised a broadcast error
    (now differentiated: d log|S| = s b exp(a - r));
  - second order through np.einsum raised UnsupportedSyntaxError (its
    adjoint passed *args of a list); third order is refused by name.

Oracles: autograd where it runs the function (an equivalent spelling where
it lacks one: np.block as nested concatenates, np.insert as a concatenate,
median/quantile through np.sort), else central differences
(tests/gradcheck.py), with gradcheck's default tolerances.
"""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest
import scipy.special

import srcgrad as sg
from srcgrad.rules.scipy.special import logsumexp as sg_logsumexp

from gradcheck import check_close, numerical_grad, numerical_jacobian

TIGHT = dict(rtol=1e-10, atol=1e-12)


def tape_hvp(f, x, v):
    """H v of the scalar f on nested tapes (op by op, or through a compiled
    function if f is one)."""
    var = sg.Variable(x)
    with sg.GradientTape() as outer:
        with sg.GradientTape() as inner:
            y = f(var)
        g = inner.gradient(y, var)
        s = np.sum(g * v)
    return g.numpy(), outer.gradient(s, var).numpy()


def accumulator_jvp(f, x, v):
    var = sg.Variable(x)
    with sg.ForwardAccumulator(var, v) as acc:
        y = f(var)
    return np.asarray(acc.jvp(y).numpy())


# ------------------------------------------------- 2. power, integer exponent

X6 = np.array([0.5, 1.5, -0.7, -1.3, 0.8, -0.4])
V6 = np.array([1.0, -0.5, 0.7, 0.3, -1.1, 0.9])


def pow_loop(x):
    s = 0.0
    for i in range(6):
        s = s + x[i] ** (i + 1)
    return s


def pow_loop_ag(x):
    return sum(x[i] ** (i + 1) for i in range(6))


def pow_helper(x):
    def p(v, k):
        return v ** k
    return np.sum(np.array([p(x[i], i + 1) for i in range(3)]))


def pow_helper_ag(x):
    return anp.sum(anp.array([x[i] ** (i + 1) for i in range(3)]))


@pytest.mark.parametrize("f, fa", [(pow_loop, pow_loop_ag), (pow_helper, pow_helper_ag)])
def test_hvp_integer_power_negative_base(f, fa):
    want = autograd.hessian(fa)(X6) @ V6
    got = sg.hvp(f)(X6, V6)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, want, **TIGHT)
    np.testing.assert_allclose(sg.hessian(f)(X6), autograd.hessian(fa)(X6), **TIGHT)


def pow_both(x, y):
    return np.sum(x ** y)


def test_power_tangent_with_a_differentiated_exponent():
    """The exponent's term is still there where its tangent is nonzero."""
    x = np.array([0.5, 1.5, 2.0])
    y = np.array([1.3, -0.4, 2.5])
    tx, ty = np.array([0.3, -0.2, 0.1]), np.array([0.7, 0.0, -1.2])
    want = numerical_grad(lambda a: pow_both(a, y), x) @ tx + numerical_grad(lambda b: pow_both(x, b), y) @ ty
    check_close(sg.jvp(pow_both, (x, y), (tx, ty))[1], want)


# ------------------------------------------------------------------ 3. block

BX = np.arange(12.0).reshape(3, 4) / 7 + 0.1
BV = np.cos(BX)
BC = np.ones((3, 2))


def block_loss(x):
    return np.sum(np.sin(np.block([[x, BC], [x ** 2, 2.0 * BC]])) ** 2)


def block_loss_ag(x):
    top = anp.concatenate([x, BC], 1)
    bottom = anp.concatenate([x ** 2, 2.0 * BC], 1)
    return anp.sum(anp.sin(anp.concatenate([top, bottom], 0)) ** 2)


def test_block_op_by_op_gradient():
    var = sg.Variable(BX)
    with sg.GradientTape() as tape:
        y = block_loss(var)
    g = tape.gradient(y, var)
    assert g is not None
    np.testing.assert_allclose(g.numpy(), autograd.grad(block_loss_ag)(BX), **TIGHT)


def test_block_forward_mode():
    want = np.sum(autograd.grad(block_loss_ag)(BX) * BV)
    np.testing.assert_allclose(sg.jvp(block_loss, (BX,), (BV,))[1], want, **TIGHT)
    np.testing.assert_allclose(accumulator_jvp(block_loss, BX, BV), want, **TIGHT)


def test_block_second_order():
    hess = autograd.hessian(block_loss_ag)(BX)
    hv = np.tensordot(hess, BV, 2)
    np.testing.assert_allclose(sg.hessian(block_loss)(BX), hess, **TIGHT)
    np.testing.assert_allclose(sg.hvp(block_loss)(BX, BV), hv, **TIGHT)
    g, tape_hv = tape_hvp(block_loss, BX, BV)
    np.testing.assert_allclose(g, autograd.grad(block_loss_ag)(BX), **TIGHT)
    np.testing.assert_allclose(tape_hv, hv, **TIGHT)


# ----------------------------------------------------------------- 4. insert

IW = np.arange(8.0)


def insert_loss(x):
    return np.sum(np.sin(np.insert(x, [1, 3], [x[0], 2.0])) ** 2 * IW)


def insert_loss_ag(x):
    y = anp.concatenate([x[:1], x[:1], x[1:3], anp.array([2.0]), x[3:]])
    return anp.sum(anp.sin(y) ** 2 * IW)


def test_insert_list_index_forward_and_second_order():
    grad = autograd.grad(insert_loss_ag)(X6)
    hess = autograd.hessian(insert_loss_ag)(X6)
    np.testing.assert_allclose(sg.grad(insert_loss)(X6), grad, **TIGHT)
    np.testing.assert_allclose(sg.jvp(insert_loss, (X6,), (V6,))[1], grad @ V6, **TIGHT)
    np.testing.assert_allclose(accumulator_jvp(insert_loss, X6, V6), grad @ V6, **TIGHT)
    np.testing.assert_allclose(sg.hessian(insert_loss)(X6), hess, **TIGHT)
    np.testing.assert_allclose(sg.hvp(insert_loss)(X6, V6), hess @ V6, **TIGHT)
    np.testing.assert_allclose(tape_hvp(insert_loss, X6, V6)[1], hess @ V6, **TIGHT)


# ------------------------------------------------------------- 5. percentile

def percentile_list_q(x):
    return np.sum(np.percentile(x, [10, 50, 90]) ** 2)


def quantile_list_q(x):
    return np.sum(np.quantile(x, [0.1, 0.5, 0.9]) ** 2)


def test_percentile_with_a_list_q():
    got = sg.grad(percentile_list_q)(X6)
    check_close(got, numerical_grad(percentile_list_q, X6))
    np.testing.assert_allclose(got, sg.grad(quantile_list_q)(X6), **TIGHT)


# ------------------------------------------------- 6. median/quantile, order 2

def median_squared(x):
    return np.median(x) ** 2


def median_squared_ag(x):
    s = anp.sort(x)
    return (0.5 * (s[2] + s[3])) ** 2          # 6 entries: the mean of ranks 2 and 3


def quantile_squared(x):
    return np.quantile(x, 0.3) ** 2


def quantile_squared_ag(x):
    s = anp.sort(x)
    return (0.5 * s[1] + 0.5 * s[2]) ** 2      # h = 5 * 0.3 = 1.5


@pytest.mark.parametrize("f, fa", [(median_squared, median_squared_ag),
                                   (quantile_squared, quantile_squared_ag)])
def test_order_statistics_second_order(f, fa):
    hess = autograd.hessian(fa)(X6)
    np.testing.assert_allclose(sg.hessian(f)(X6), hess, **TIGHT)
    np.testing.assert_allclose(sg.grad(lambda z: np.sum(sg.grad(f)(z) * V6))(X6), hess @ V6, **TIGHT)
    check_close(sg.hessian(f)(X6), numerical_jacobian(sg.grad(f), X6))


def test_tuple_plus_tuple_stays_a_tuple():
    from srcgrad.rules.python.containers import list_extend
    assert list_extend((-1,), (2, 3)) == (-1, 2, 3)
    assert list_extend([1], (2,)) == [1, 2]


# ------------------------------------------------ 7. logsumexp(return_sign=)

LA = np.array([[0.3, 1.2, 2.5], [0.1, -0.4, 0.7]])
LB = np.array([[1.0, -0.5, 2.0], [-1.0, 0.2, 0.1]])
LW = np.array([[1.0], [2.0]])


def lse_sign(a, b):
    r, s = scipy.special.logsumexp(a, axis=1, b=b, keepdims=True, return_sign=True)
    return np.sum(np.sin(r) * s * LW)


def lse_sign_tape(a, b):
    r, s = sg_logsumexp(a, axis=1, b=b, keepdims=True, return_sign=True)
    return np.sum(np.sin(r) * s * LW)


def lse_sign_ag(a, b):
    total = anp.sum(b * anp.exp(a), axis=1, keepdims=True)
    return anp.sum(anp.sin(anp.log(anp.abs(total))) * anp.sign(total) * LW)


def lse_value_only(a):
    r, s = scipy.special.logsumexp(a, b=np.array([1.0, -0.5, 2.0]), return_sign=True)
    return r


def test_logsumexp_return_sign():
    ga = numerical_grad(lambda a: lse_sign(a, LB), LA)
    gb = numerical_grad(lambda b: lse_sign(LA, b), LB)
    check_close(ga, autograd.grad(lse_sign_ag, 0)(LA, LB))
    np.testing.assert_allclose(sg.grad(lse_sign, 0)(LA, LB), autograd.grad(lse_sign_ag, 0)(LA, LB), **TIGHT)
    np.testing.assert_allclose(sg.grad(lse_sign, 1)(LA, LB), autograd.grad(lse_sign_ag, 1)(LA, LB), **TIGHT)
    check_close(sg.grad(lse_sign, 1)(LA, LB), gb)
    x = LA[0]
    check_close(sg.grad(lse_value_only)(x), numerical_grad(lse_value_only, x))


def test_logsumexp_return_sign_tape_forward_and_second_order():
    a, b = sg.Variable(LA), sg.Variable(LB)
    with sg.GradientTape(persistent=True) as tape:
        y = lse_sign_tape(a, b)
    ga, gb = tape.gradient(y, [a, b])
    np.testing.assert_allclose(ga.numpy(), autograd.grad(lse_sign_ag, 0)(LA, LB), **TIGHT)
    np.testing.assert_allclose(gb.numpy(), autograd.grad(lse_sign_ag, 1)(LA, LB), **TIGHT)
    v = np.cos(LA)
    want = np.sum(autograd.grad(lse_sign_ag, 0)(LA, LB) * v)
    np.testing.assert_allclose(sg.jvp(lse_sign, (LA, LB), (v, None))[1], want, **TIGHT)
    hess = autograd.hessian(lse_sign_ag, 0)(LA, LB)
    np.testing.assert_allclose(sg.hessian(lse_sign)(LA, LB), hess, **TIGHT)
    np.testing.assert_allclose(sg.hvp(lse_sign)(LA, LB, v), np.tensordot(hess, v, 2), **TIGHT)


# ----------------------------------------------------------------- 8. einsum

EX = np.arange(12.0).reshape(3, 4) / 7 - 0.6
EY = np.cos(np.arange(8.0)).reshape(4, 2)
EV = np.sin(np.arange(12.0)).reshape(3, 4)
EW = np.cos(np.arange(12.0)).reshape(3, 4)


def einsum_gram(x):
    return np.sum(np.einsum('ij,kj->ik', x, x) ** 2)


def einsum_gram_ag(x):
    return anp.sum(anp.einsum('ij,kj->ik', x, x) ** 2)


def einsum_product(x):
    return np.sum(np.sin(np.einsum('ij,jk->ik', x, EY)))


def einsum_product_ag(x):
    return anp.sum(anp.sin(anp.einsum('ij,jk->ik', x, EY)))


def einsum_interleaved(x):
    return np.sum(np.einsum(x, [0, 1], x, [0, 1], [0]) ** 2)


def einsum_interleaved_ag(x):
    return anp.sum(anp.einsum('ij,ij->i', x, x) ** 2)


def einsum_diagonal(x):
    return np.sum(np.einsum('ii->i', x[:, :3] ** 3))


def einsum_diagonal_ag(x):
    return anp.sum(anp.stack([x[i, i] ** 3 for i in range(3)]))


@pytest.mark.parametrize("f, fa", [(einsum_gram, einsum_gram_ag), (einsum_product, einsum_product_ag),
                                   (einsum_interleaved, einsum_interleaved_ag),
                                   (einsum_diagonal, einsum_diagonal_ag)])
def test_einsum_second_order(f, fa):
    hess = autograd.hessian(fa)(EX)
    hv = np.tensordot(hess, EV, 2)
    np.testing.assert_allclose(sg.hessian(f)(EX), hess, **TIGHT)
    np.testing.assert_allclose(sg.hvp(f)(EX, EV), hv, **TIGHT)
    np.testing.assert_allclose(sg.grad(lambda z: np.sum(sg.grad(f)(z) * EV))(EX), hv, **TIGHT)
    np.testing.assert_allclose(tape_hvp(f, EX, EV)[1], hv, **TIGHT)


def einsum_gram_hv(x):
    return np.sum(sg.grad(einsum_gram)(x) * EV)


def einsum_gram_hvw(x):
    return np.sum(sg.grad(einsum_gram_hv)(x) * EW)


def test_einsum_third_order_runs_op_by_op():
    """The compiler refuses the third order by name (never a silently wrong
    value); sg.grad then runs it op by op on the tape, right."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        with pytest.raises(sg.UnsupportedSyntaxError, match="np.einsum"):
            sg.grad(einsum_gram_hvw)(EX)
    with pytest.warns(sg.PerformanceWarning, match="np.einsum"):
        got = sg.grad(einsum_gram_hvw)(EX)
    hv = lambda x: anp.sum(autograd.grad(einsum_gram_ag)(x) * EV)    # noqa: E731
    want = autograd.grad(lambda x: anp.sum(autograd.grad(hv)(x) * EW))(EX)
    np.testing.assert_allclose(got, want, **TIGHT)


def test_einsum_third_order_on_tapes():
    var = sg.Variable(EX)
    with sg.GradientTape() as t3:
        with sg.GradientTape() as t2:
            with sg.GradientTape() as t1:
                y = einsum_gram(var)
            s1 = np.sum(t1.gradient(y, var) * EV)
        s2 = np.sum(t2.gradient(s1, var) * EW)
    hv = lambda x: anp.sum(autograd.grad(einsum_gram_ag)(x) * EV)    # noqa: E731
    want = autograd.grad(lambda x: anp.sum(autograd.grad(hv)(x) * EW))(EX)
    np.testing.assert_allclose(t3.gradient(s2, var).numpy(), want, **TIGHT)
