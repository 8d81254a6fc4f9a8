"""np.add.at and np.subtract.at (scatter-add, repeated indices accumulating)
differentiated: compiled (sg.grad, sg.jvp, sg.hessian, @sg.function on a
tape, sg.jit) and op by op on the tape, against central differences and
autograd; the other ufuncs' .at refused by name, in compiled code and op by
op; and a ufunc.at that would write into a Tensor or into an array the tape
does not follow raising TypeError, not writing raw memory."""
import importlib.util

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad, numerical_jacobian

X = np.array([0.3, -1.2, 0.7])
FILE = __file__


# ------------------------------------------------------------ the functions

def repeated(x):
    out = np.zeros(3)
    np.add.at(out, [0, 0, 2], x)
    return np.sum(out * out)


def subtract_repeated(x):
    out = np.empty(3)
    out[:] = np.sin(x)
    np.subtract.at(out, np.array([2, 2, 2]), x * x)
    return np.sum(out ** 3)


def two_d_tuple(x):
    a = np.zeros((3, 3))
    a[...] = np.outer(x, x)
    rows = np.array([0, 2, 0, 0])
    cols = np.array([1, 1, 1, 2])
    np.add.at(a, (rows, cols), np.concatenate([x, x[:1]]) ** 2)
    return np.sum(np.tanh(a))


def scalar_b(x):
    a = np.ones(3)
    a[:] = x
    np.add.at(a, [1, 1], x[0] ** 2)
    return np.sum(np.exp(a))


def into_a_computed_array(x):
    a = np.outer(x, x)          # (op by op a Tensor, immutable: np.add.at into it raises there)
    np.add.at(a, [1, 1], x[0] ** 2)
    return np.sum(np.exp(a))


def slice_and_array(x):
    a = np.zeros((3, 3))
    a[:, :] = np.outer(x, x)
    np.add.at(a, (slice(None), [0, 0]), x[:, None] * 2.0)
    return np.sum(a ** 2)


def int_index_row(x):
    a = np.zeros((3, 3))
    a[...] = np.outer(x, x)
    np.subtract.at(a, 1, x)     # a whole row, b broadcast along it
    return np.sum(np.cos(a))


def in_loop(x):
    a = np.zeros((3, 2))
    for k in range(3):
        np.subtract.at(a, (np.array([0, 0, k]), np.array([1, 1, 0])), x[k] * x)
    return np.sum(a ** 3)


def a_parameter(a, b):
    np.add.at(a, [0, 0, 2], b)
    return np.sum(np.sin(a) * a)


def alias_kept(x):
    a = np.zeros(3)
    v = a
    np.add.at(a, [0, 0, 2], x)
    return np.sum(v * x)


def alias_after_copy(x):
    a = np.zeros(3)
    v = a.copy()
    np.add.at(a, [0, 0, 2], x)
    return np.sum(v * x + a * a)


FUNCTIONS = [repeated, subtract_repeated, two_d_tuple, scalar_b, slice_and_array, int_index_row, in_loop,
             alias_after_copy]


def _ids(fs):
    return [f.__name__ for f in fs]


# ------------------------------------------------------ compiled and op by op

@pytest.mark.parametrize("f", FUNCTIONS, ids=_ids(FUNCTIONS))
def test_grad_matches_central_differences(f):
    check_close(sg.grad(f)(X.copy()), numerical_grad(f, X.copy()), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", FUNCTIONS, ids=_ids(FUNCTIONS))
def test_value_is_numpys(f):
    value, _ = sg.value_and_grad(f)(X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-14, abs=0)


@pytest.mark.parametrize("f", FUNCTIONS, ids=_ids(FUNCTIONS))
def test_compiled_on_tape_and_op_by_op_agree(f):
    """@sg.function on a GradientTape and plain NumPy on the tape, op by op
    (the arrays np.zeros, np.outer, ... allocate there are followed), give
    sg.grad's gradient."""
    g = sg.grad(f)(X.copy())
    v = sg.Variable(X)
    with sg.GradientTape() as tape:
        y = sg.function(f)(v)
    check_close(tape.gradient(y, v).numpy(), g, rtol=1e-12, atol=1e-14)
    with sg.GradientTape() as tape:
        y = f(v)
    assert y.numpy() == pytest.approx(f(X.copy()), rel=1e-14, abs=0)
    check_close(tape.gradient(y, v).numpy(), g, rtol=1e-12, atol=1e-14)
    check_close(v.numpy(), X, rtol=0, atol=0)      # (the Variable is not written into)


@pytest.mark.parametrize("f", FUNCTIONS, ids=_ids(FUNCTIONS))
def test_forward_mode_and_second_order(f):
    """The tangent rules (sg.jvp) and the rules of the rules (sg.hessian)."""
    direction = np.array([0.4, -0.1, 1.3])
    value, tangent = sg.jvp(f, (X.copy(),), (direction,))
    assert value == pytest.approx(f(X.copy()), rel=1e-14, abs=0)
    check_close(tangent, numerical_grad(f, X.copy()) @ direction, rtol=1e-6, atol=1e-8)
    check_close(sg.hessian(f)(X.copy()), numerical_jacobian(lambda z: sg.grad(f)(z), X.copy()),
                rtol=1e-6, atol=1e-7)


def test_into_a_computed_array():
    """Compiled, any array; op by op, np.outer's result is a Tensor, which
    is immutable: a TypeError naming the line and what to write instead."""
    check_close(sg.grad(into_a_computed_array)(X.copy()), numerical_grad(into_a_computed_array, X.copy()),
                rtol=1e-6, atol=1e-8)
    v = sg.Variable(X)
    with sg.GradientTape() as tape:
        y = sg.function(into_a_computed_array)(v)
    check_close(tape.gradient(y, v).numpy(), sg.grad(into_a_computed_array)(X.copy()), rtol=1e-12, atol=1e-14)
    with sg.GradientTape():
        with pytest.raises(TypeError, match=r"np\.add\.at at .*test_ufunc_at\.py:\d+.*writes into a Tensor.*"
                                            r"a = np\.zeros\(shape\); a\[\.\.\.\] = t; np\.add\.at\(a, i, v\)"):
            into_a_computed_array(v)


def test_the_first_operand_a_parameter():
    """Both arguments differentiated; the caller's arrays as NumPy leaves them
    in the derivative (compiled code does not write into them)."""
    a0, b0 = np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.1, 0.2])
    ga, gb = sg.grad(a_parameter, wrt=(0, 1))(a0.copy(), b0.copy())
    check_close(ga, numerical_grad(lambda a: a_parameter(a.copy(), b0.copy()), a0.copy()), rtol=1e-6, atol=1e-8)
    check_close(gb, numerical_grad(lambda b: a_parameter(a0.copy(), b), b0.copy()), rtol=1e-6, atol=1e-8)
    # repeated index 0: b[0] and b[1] land on the same element, so their gradients are equal
    assert gb[0] == gb[1]


def test_an_alias_kept_is_refused_compiled_and_followed_op_by_op():
    """`v = a; np.add.at(a, ...); use v`: NumPy changes v too. The compiler
    refuses it as it refuses `a[i] = ...` there (at the user's line); op by
    op, v is the buffer a is, and follows the write."""
    with pytest.raises(sg.UnsupportedSyntaxError, match="v = a") as info:
        sg.grad(alias_kept)(X.copy())
    assert "np.add.at(a, [0, 0, 2], x)" in str(info.value) and FILE.rsplit("/", 1)[-1] in str(info.value)
    v = sg.Variable(X)
    with sg.GradientTape() as tape:
        y = alias_kept(v)
    check_close(tape.gradient(y, v).numpy(), numerical_grad(alias_kept, X.copy()), rtol=1e-6, atol=1e-8)


def falls_back(x):
    xs = [0.0]
    xs.insert(0, 1.5)           # (refused by the compiler: sg.grad runs f op by op)
    a = np.zeros(3)
    np.add.at(a, [0, 0, 2], x * xs[0])
    np.subtract.at(a, [1, 1], x[2])
    return np.sum(a ** 2)


def test_sg_grad_falling_back_to_op_by_op():
    with pytest.warns(sg.PerformanceWarning, match="op by op"):
        g = sg.grad(falls_back)(X.copy())
    check_close(g, numerical_grad(falls_back, X.copy()), rtol=1e-6, atol=1e-8)


# ------------------------------------------------------------------ autograd

def _scatter_matrix(indices, n):
    """S (n, len(indices)): S @ b is b scattered to indices, repeats summed."""
    s = np.zeros((n, len(indices)))
    s[indices, np.arange(len(indices))] = 1.0
    return s


def test_against_autograd():
    """The same functions written with autograd (its arrays have no
    ufunc.at: the scatter-add as a matrix product)."""
    s = _scatter_matrix([0, 0, 2], 3)
    check_close(sg.grad(repeated)(X.copy()), autograd.grad(lambda x: anp.sum((s @ x) ** 2))(X.copy()),
                rtol=1e-12, atol=1e-14)
    s2 = _scatter_matrix([2, 2, 2], 3)
    check_close(sg.grad(subtract_repeated)(X.copy()),
                autograd.grad(lambda x: anp.sum((anp.sin(x) - s2 @ (x * x)) ** 3))(X.copy()),
                rtol=1e-12, atol=1e-14)
    flat = np.array([0 * 3 + 1, 2 * 3 + 1, 0 * 3 + 1, 0 * 3 + 2])     # (rows, cols) of two_d_tuple, raveled
    s3 = _scatter_matrix(flat, 9)

    def two_d_autograd(x):
        a = anp.reshape(anp.outer(x, x), (9,)) + s3 @ anp.concatenate([x, x[:1]]) ** 2
        return anp.sum(anp.tanh(a))
    check_close(sg.grad(two_d_tuple)(X.copy()), autograd.grad(two_d_autograd)(X.copy()), rtol=1e-12, atol=1e-14)


# ----------------------------------------------------------------------- jit

@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba is not installed")
@pytest.mark.filterwarnings("ignore::srcgrad.PerformanceWarning")
@pytest.mark.parametrize("f", [repeated, two_d_tuple, in_loop], ids=_ids([repeated, two_d_tuple, in_loop]))
def test_jit(f):
    """sg.jit gives sg.grad's gradient (Numba has no ufunc.at: it may run in CPython, with a warning)."""
    check_close(sg.jit(sg.grad(f))(X.copy()), sg.grad(f)(X.copy()), rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------ refused

def multiply_at(x):
    out = np.ones(3)
    np.multiply.at(out, [0, 0, 2], x)
    return np.sum(out)


def maximum_at(x):
    out = np.zeros(3)
    np.maximum.at(out, [0, 0, 2], x)
    return np.sum(out)


def add_at_into_an_element(x):
    out = [np.zeros(3)]
    np.add.at(out[0], [0, 0, 2], x)
    return np.sum(out[0])


def add_at_value_used(x):
    out = np.zeros(3)
    r = np.add.at(out, [0, 0, 2], x)
    return np.sum(out) + (r is None)


@pytest.mark.parametrize("f, text, hint", [
    (multiply_at, "np.multiply.at(out, [0, 0, 2], x)", r"np\.multiply\.at writing into its first argument.*"
                                                        r"a\[i\[k\]\] = np\.multiply\(a\[i\[k\]\], b\[k\]\)"),
    (maximum_at, "np.maximum.at(out, [0, 0, 2], x)", r"np\.maximum\.at writing into.*np\.add\.at and "
                                                      r"np\.subtract\.at only.*np\.maximum\(a\[i\[k\]\], b\[k\]\)"),
    (add_at_into_an_element, "np.add.at(out[0]", r"np\.add\.at writing into.*name the array first"),
    (add_at_value_used, "r = np.add.at(", r"np\.add\.at writing into.*do not use the call's value"),
], ids=["multiply", "maximum", "into_an_element", "value_used"])
def test_other_forms_are_refused_by_name_at_the_users_line(f, text, hint):
    with pytest.raises(sg.UnsupportedSyntaxError, match=hint) as info:
        sg.grad(f)(X.copy())
    message = str(info.value)
    assert "np.at " not in message and "reduceat" not in message
    assert text in message and "%s:" % FILE in message


def test_other_ufuncs_at_into_a_followed_array_raise_op_by_op():
    v = sg.Variable(X)
    with sg.GradientTape():
        with pytest.raises(TypeError, match=r"np\.multiply\.at\(a, \.\.\.\).*np\.multiply\(a\[i\[k\]\], v\[k\]\)"):
            multiply_at(v)


def test_ufunc_at_into_a_tensor_raises_and_writes_nothing():
    v = sg.Variable(X)
    with sg.GradientTape():
        w = v * 1.0
        with pytest.raises(TypeError, match=r"np\.add\.at at .*test_ufunc_at\.py:\d+.*writes into a Tensor"):
            np.add.at(w, [0, 0], 1.0)
        with pytest.raises(TypeError, match="writes into a Tensor"):
            np.subtract.at(v, [0], w[1])
    check_close(w.numpy(), X, rtol=0, atol=0)
    check_close(v.numpy(), X, rtol=0, atol=0)


def test_a_tensor_into_an_array_from_before_the_tape_raises():
    """An array allocated before the tape is not followed: writing a watched
    Tensor into it would cut the gradient path, so it raises (as `a *= t`)."""
    a = np.zeros(3)
    v = sg.Variable(X)
    with sg.GradientTape():
        with pytest.raises(TypeError, match=r"np\.add\.at at .*allocated outside the tape"):
            np.add.at(a, [0, 0], v[:2])
    assert not a.any()


def test_plain_arrays_and_integer_tensor_indices_run_as_numpy():
    a = np.zeros(3)
    np.add.at(a, sg.constant(np.array([0, 0, 2])), np.array([1.0, 2.0, 3.0]))
    check_close(a, np.array([3.0, 0.0, 3.0]), rtol=0, atol=0)
    v = sg.Variable(X)
    with sg.GradientTape():
        b = np.zeros(3)
        np.add.at(b, [1, 1], 2.0)       # (a buffer holding no Tensor: NumPy's)
    check_close(np.asarray(b), np.array([0.0, 4.0, 0.0]), rtol=0, atol=0)
    del v


# ------------------------------------------------ where= on the reductions

_MASK = np.array([True, False, True])


def _prod_where(x):
    return np.prod(x ** 2, where=_MASK)


def _var_where(x):
    return np.var(x ** 2, where=_MASK)


def _std_where(x):
    return np.std(x ** 2, where=_MASK)


def _nansum_where(x):
    return np.nansum(x ** 2, where=_MASK)


def _nanmean_where(x):
    return np.nanmean(x ** 2, where=_MASK)


def _nanvar_where(x):
    return np.nanvar(x ** 2, where=_MASK)


def _nanstd_where(x):
    return np.nanstd(x ** 2, where=_MASK)


def _nanprod_where(x):
    return np.nanprod(x ** 2, where=_MASK)


def _amax_where(x):
    return np.amax(x ** 2, where=_MASK, initial=0.0)


def _nanmin_where(x):
    return np.nanmin(x ** 2, where=_MASK, initial=0.0)


def _sum_where(x):
    return np.sum(x ** 2, where=_MASK)


def _mean_where(x):
    return np.mean(x ** 2, where=_MASK)


def _sum_where_method(x):
    return (x ** 2).sum(where=_MASK)


def _mean_where_method(x):
    return (x ** 2).mean(where=_MASK)


def _prod_where_method(x):
    return (x ** 2).prod(where=_MASK)


def _var_where_method(x):
    return (x ** 2).var(where=_MASK)


def _std_where_method(x):
    return (x ** 2).std(where=_MASK)


WHERE = {name[1:-len('_where')]: f for name, f in list(globals().items()) if name.endswith('_where')}
WHERE_METHODS = {name[1:-len('_where_method')]: f for name, f in list(globals().items())
                 if name.endswith('_where_method')}


WHERE_FUNCTIONS = ["prod", "var", "std", "nansum", "nanmean", "nanvar", "nanstd", "nanprod", "amax", "nanmin",
                   "sum", "mean"]
FILL = {"prod": r"np\.where\(mask, x, 1\)", "nanprod": r"np\.where\(mask, x, 1\)", "nansum": r"np\.where\(mask, x, 0\)",
        "sum": r"np\.where\(mask, x, 0\)", "amax": r"-np\.inf", "nanmin": r"np\.inf"}


@pytest.mark.parametrize("method", [False, True], ids=["function", "method"])
@pytest.mark.parametrize("fn", WHERE_FUNCTIONS)
def test_reductions_with_where_are_refused_with_the_right_workaround(fn, method):
    """where= is not modelled by these rules: refused (never a derivative
    that ignores it) on every path, with a workaround that is right for the
    reduction (the identity to mask with, or the selected values for the
    statistics that count their elements)."""
    if method and fn not in WHERE_METHODS:
        pytest.skip("not an ndarray method")
    f = (WHERE_METHODS if method else WHERE)[fn]
    hint = "where= is not modelled.*" + FILL.get(fn, r"np\.%s\(x\[mask\]\)" % fn)
    x = np.array([1.0, 2.0, 3.0])
    with pytest.warns(sg.PerformanceWarning, match=hint):        # (the compiler's refusal, then op by op's)
        with pytest.raises(TypeError, match=hint):
            sg.grad(f)(x)
    v = sg.Variable(x)
    with pytest.raises(TypeError, match=hint):
        with sg.GradientTape():
            f(v)
