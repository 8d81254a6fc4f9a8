"""Forward mode op by op (`op_by_op.jvp`, `sg.ForwardAccumulator`): the
silent wrong tangents found by probing every rule row and program idioms
(tests/tools/probe_forward_rules.py, probe_forward_idioms.py) against
central differences, the compiled `sg.jvp` and autograd.

Each regression either checks the tangent's value against central
differences and the compiled JVP, or, where op by op cannot follow the
value (a result that is not an array), that the cut path is reported (an
error under `op_by_op.jvp`, a GradientPathWarning in a bare accumulator)
instead of a zero tangent."""

import warnings

import numpy as np
import pytest
import scipy.integrate as si
import scipy.linalg as sl

import srcgrad as sg
from srcgrad import op_by_op
from srcgrad.errors import GradientPathError
from srcgrad.tensor import GradientPathWarning

X = np.array([0.3, -0.7, 1.1, 0.45, -1.3, 0.9])
T = np.array([1.0, 0.5, -0.2, 0.3, -0.8, 0.6])


def _central(f, x, t, h=1e-6):
    return (np.asarray(f(x + h * t)) - np.asarray(f(x - h * t))) / (2 * h)


# ---------------------------------------------------------------------------
# Results that are not arrays: the cut path is reported, never a zero tangent
# (before: the accumulator only warned for a GradientTape watching the input,
# and a dict result -- solve_ivp's OdeResult -- was not checked at all)

def cho_factor_diag(v):
    c, lower = sl.cho_factor(np.diag(v[:3] ** 2 + 1.0))
    return np.diag(c)


def object_array(v):
    o = np.array([v[0], v[1]], dtype=object)
    return np.array([o[0] * 2.0, o[1]], dtype=float)


def _decay(t, y, k):
    return -k * y


def solve_ivp_y(v):
    sol = si.solve_ivp(_decay, (0.0, 1.0), v[:2], t_eval=[0.5, 1.0], args=(1.5,), rtol=1e-10, atol=1e-10)
    return sol["y"]


CUT = [cho_factor_diag, object_array, solve_ivp_y]


@pytest.mark.parametrize("f", CUT, ids=[f.__name__ for f in CUT])
def test_op_by_op_jvp_refuses_a_cut_path(f):
    """The values run op by op leave the tape inside f: an error naming the
    cut, not the zero tangent op_by_op.jvp returned."""
    assert np.any(_central(f, X, T) != 0.0)      # (f depends on the input: a zero tangent would be wrong)
    with pytest.raises(GradientPathError, match="whose result mixes arrays|Python objects"):
        op_by_op.jvp(f, [X], [T])


@pytest.mark.parametrize("f", CUT, ids=[f.__name__ for f in CUT])
def test_accumulator_warns_on_a_cut_path(f):
    """A bare ForwardAccumulator (no tape around it) warns where the tangent
    is lost, as a GradientTape does for the gradient."""
    x = sg.constant(X)
    with pytest.warns(GradientPathWarning):
        with sg.ForwardAccumulator(x, sg.constant(T)):
            f(x)


def test_tape_refuses_solve_ivp_op_by_op():
    """The same cut in reverse mode: op by op, a gradient through solve_ivp
    was zeros without a word."""
    with pytest.raises(GradientPathError, match="whose result mixes arrays"):
        op_by_op.gradient(lambda v: np.sum(solve_ivp_y(v)), [X], {}, (0,))


def test_compiled_jvp_of_the_cut_functions_is_right():
    """What the user should call instead: the compiled JVP follows them."""
    for f in (cho_factor_diag, solve_ivp_y):
        np.testing.assert_allclose(sg.jvp(f, (X,), (T,))[1], _central(f, X, T), rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------------
# Reverse over forward through an @sg.function: its generated JVP code runs on
# Tensors under the outer tape, which must see every operation of it (before:
# np.array([...]) in generated code, the list a NumPy function reads whole,
# and a list stored by element assignment were converted by srcgrad's own
# calls, unrecorded: a wrong or missing gradient of the JVP, without a word)

def array_of_products(v):
    return np.sum(np.square(np.array([v[0] * v[1], v[2]])) * v[3])


def list_read_whole(v):
    return np.sum(np.square([v[0] * v[1], v[2]]) * v[4])


def list_stored_in_rows(v):
    out = np.zeros((3, 2))
    for i, a in enumerate(v[:3]):
        out[i] = [a, a * v[i + 3]]
    return np.sum(out ** 2)


def array_with_dtype(v):
    return np.sum(np.array([v[0], v[1]], dtype=float) * v[2] * v[5])


REVERSE_OVER_FORWARD = [array_of_products, list_read_whole, list_stored_in_rows, array_with_dtype]


def _gradient_of_the_jvp(f, total=False):
    """(the JVP <grad f(X), T> of the compiled `f` on a ForwardAccumulator,
    its gradient by the tape around it); `total`: of the JVP's sum."""
    F = sg.function(f)
    x = sg.constant(X)
    with sg.GradientTape() as tape:
        tape.watch(x)
        with sg.ForwardAccumulator(x, sg.constant(T)) as acc:
            y = F(x)
        jv = acc.jvp(y)
        if total:
            jv = np.sum(jv)
    return jv, tape.gradient(jv, x)


@pytest.mark.parametrize("f", REVERSE_OVER_FORWARD, ids=[f.__name__ for f in REVERSE_OVER_FORWARD])
def test_gradient_of_the_jvp_of_a_compiled_function(f):
    """d/dx <grad f(x), t> = H t: the tape around the accumulator, against
    central differences of the compiled JVP and against sg.hessian."""
    jv, g = _gradient_of_the_jvp(f)
    np.testing.assert_allclose(jv.numpy(), sg.jvp(f, (X,), (T,))[1], rtol=1e-12)
    assert g is not None
    expected = sg.hessian(f)(X) @ T
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-10, atol=1e-12)
    fd = _central(lambda v: sg.grad(f)(v), X, T)
    np.testing.assert_allclose(g.numpy(), fd, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------------
# NumPy functions taking a sequence of arrays, given lists of Tensors (their
# dispatch sees the outer list's elements only): recorded with their rules.
# Before, NumPy converted the Tensors: a GradientPathWarning and a zero tangent
# from a bare accumulator, an error from op_by_op.jvp, and from a compiled
# function's JVP run on Tensors under a tape nothing at all (a wrong gradient)

def stack_rows(v):
    return np.stack([[v[0], v[1]], [v[2], v[3]]]) ** 2


def vstack_rows(v):
    return np.vstack([[v[0], v[1]], [v[2] * v[5], v[3]]]) ** 2


def hstack_mixed(v):
    return np.hstack([[v[0], 1.0], v[2:4]]) ** 2


def column_stack_rows(v):
    return np.column_stack([[v[0], v[1]], [v[2], v[3]]]) ** 2


def concatenate_lists(v):
    return np.concatenate([[v[0], v[1]], [v[2] * 2.0], v[3:]]) ** 2


def dstack_rows(v):
    return np.dstack([[v[0], v[1]], [v[2], v[3]]]) ** 2


SEQUENCE_FUNCTIONS = [stack_rows, vstack_rows, hstack_mixed, column_stack_rows, concatenate_lists, dstack_rows]


@pytest.mark.parametrize("f", SEQUENCE_FUNCTIONS, ids=[f.__name__ for f in SEQUENCE_FUNCTIONS])
def test_sequence_functions_of_lists_of_tensors(f):
    expected = _central(f, X, T)
    compiled = sg.jvp(f, (X,), (T,))[1]
    np.testing.assert_allclose(compiled, expected, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(op_by_op.jvp(f, [X], [T])[1], compiled, rtol=1e-12, atol=1e-14)
    x = sg.constant(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", GradientPathWarning)
        with sg.ForwardAccumulator(x, sg.constant(T)) as acc:
            y = f(x)
    np.testing.assert_allclose(acc.jvp(y).numpy(), compiled, rtol=1e-12, atol=1e-14)
    loss = lambda v: np.sum(f(v) * np.arange(1.0, 1.0 + f(X).size).reshape(f(X).shape))  # noqa: E731
    np.testing.assert_allclose(op_by_op.gradient(loss, [X], {}, (0,)), sg.grad(loss)(X), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("f", SEQUENCE_FUNCTIONS, ids=[f.__name__ for f in SEQUENCE_FUNCTIONS])
def test_gradient_of_the_jvp_of_a_compiled_sequence_function(f):
    _, g = _gradient_of_the_jvp(f, total=True)
    expected = _central(sg.grad(lambda v: np.sum(f(v))), X, T)     # (H t: sg.hessian raises here, a batched-adjoint bug)
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------------
# Second derivatives op by op of np.polyval with a list of Tensor coefficients:
# its rule's helper read the list with np.asarray (srcgrad's own call,
# unrecorded), so every term of the Hessian through the coefficients was lost

def polyval_list(v):
    return np.sum(np.polyval([v[0], 2.0, v[1], v[0] * v[1]], v[2:]))


def _second_orders(f):
    """v^T H v (forward over forward), H v (forward over reverse) and H v
    (reverse over forward), op by op."""
    x = sg.constant(X)
    t = sg.constant(T)
    with sg.ForwardAccumulator(x, t) as outer:
        with sg.ForwardAccumulator(x, t) as inner:
            y = f(x)
        d = inner.jvp(y)
    ff = outer.jvp(d).numpy()
    with sg.ForwardAccumulator(x, t) as acc:
        with sg.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        g = tape.gradient(y, x)
    fr = acc.jvp(g).numpy()
    with sg.GradientTape() as tape:
        tape.watch(x)
        with sg.ForwardAccumulator(x, t) as acc:
            y = f(x)
        d = acc.jvp(y)
    rf = tape.gradient(d, x).numpy()
    return ff, fr, rf


def test_second_derivatives_of_polyval_with_a_list_of_tensors_op_by_op():
    hv = _central(sg.grad(polyval_list), X, T)
    np.testing.assert_allclose(sg.hessian(polyval_list)(X) @ T, hv, rtol=1e-6, atol=1e-7)
    ff, fr, rf = _second_orders(polyval_list)
    np.testing.assert_allclose(ff, T @ hv, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(fr, hv, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(rf, hv, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------------
# Masks combined with | & ^ on Tensors (ndarray's operators): pow's tangent
# rule combines masks, so its second derivatives op by op raised TypeError,
# and so did user code combining comparisons of Tensors

def power_of_inputs(v):
    return np.sum(np.abs(v[:3]) ** v[3:] + v[:3] ** 3)


def combined_masks(v):
    return np.sum(np.where((v > 0.5) | (v < -1.0), v ** 2, np.sin(v)) + np.where((v > 0) & ~(v > 1.0), v, 0.0)
                  + np.where((v > 0) ^ (v[::-1] > 0), v ** 3, 0.0))


def test_second_derivatives_of_power_op_by_op():
    hv = _central(sg.grad(power_of_inputs), X, T)
    ff, fr, rf = _second_orders(power_of_inputs)
    np.testing.assert_allclose(ff, T @ hv, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(fr, hv, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(rf, hv, rtol=1e-6, atol=1e-7)


def test_masks_combined_op_by_op():
    expected = _central(combined_masks, X, T)
    compiled = sg.jvp(combined_masks, (X,), (T,))[1]
    np.testing.assert_allclose(compiled, expected, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(op_by_op.jvp(combined_masks, [X], [T])[1], compiled, rtol=1e-12)
    hv = _central(sg.grad(combined_masks), X, T)
    for got in _second_orders(combined_masks)[1:]:
        np.testing.assert_allclose(got, hv, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------------
# transpose_jvp on Tensors (generated JVP code run under a tape) gave None for
# an output whose tangent does not depend on the inputs (np.modf's integer
# part), and the generated code's `df + di` raised TypeError

def modf_sum(v):
    f, i = np.modf(v * 2.0)
    return np.sum(f * v + i * v[0])


def test_gradient_of_the_jvp_through_modf():
    d, g = _gradient_of_the_jvp(modf_sum)
    np.testing.assert_allclose(d.numpy(), _central(modf_sum, X, T), rtol=1e-7)
    np.testing.assert_allclose(g.numpy(), _central(sg.grad(modf_sum), X, T), rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------------
# A real output of a complex input: its tangent is real. The transpose trick's
# tangent of np.linalg.norm(z) has an imaginary part that means nothing; on
# Tensors (an accumulator inside a tape, or nested accumulators) it was kept,
# and a later product with a complex number moved it into the real part

Z = np.array([0.8 + 0.3j, -0.5 + 1.1j, 0.2 - 0.9j])
V = np.array([0.4 - 1.0j, 1.2 + 0.2j, -0.3 + 0.5j])
C = 0.8 - 0.6j


def norm_times_complex(z):
    return np.real(np.linalg.norm(z) * C) + np.real(np.sum(np.linalg.svd(np.outer(z, z[::-1]) + np.eye(3),
                                                                        compute_uv=False) * C))


def _complex_central(f, z, v, h=1e-6):
    return (f(z + h * v) - f(z - h * v)) / (2 * h)


def test_tangent_of_a_real_output_of_a_complex_input_is_real():
    x = sg.constant(Z)
    with sg.GradientTape() as tape:
        tape.watch(x)
        with sg.ForwardAccumulator(x, V) as acc:
            y = np.linalg.norm(x)
        d = acc.jvp(y)
    assert d.dtype == np.float64
    np.testing.assert_allclose(d.numpy(), _complex_central(np.linalg.norm, Z, V), rtol=1e-7)


def test_second_derivatives_through_a_real_output_of_a_complex_input():
    """H v (the TF convention: d/da + i d/db of the directional derivative)
    by reverse over forward and forward over reverse op by op, and v^T H v
    by forward over forward, against differences of the compiled gradient."""
    hv = _complex_central(sg.grad(norm_times_complex), Z, V)
    vhv = _complex_central(lambda z: _complex_central(norm_times_complex, z, V, 1e-5), Z, V, 1e-4)
    x = sg.constant(Z)
    with sg.GradientTape() as tape:
        tape.watch(x)
        with sg.ForwardAccumulator(x, V) as acc:
            y = norm_times_complex(x)
        d = acc.jvp(y)
    np.testing.assert_allclose(tape.gradient(d, x).numpy(), hv, rtol=1e-5, atol=1e-6)
    with sg.ForwardAccumulator(x, V) as acc:
        with sg.GradientTape() as tape:
            tape.watch(x)
            y = norm_times_complex(x)
        g = tape.gradient(y, x)
    np.testing.assert_allclose(acc.jvp(g).numpy(), hv, rtol=1e-5, atol=1e-6)
    with sg.ForwardAccumulator(x, V) as outer:
        with sg.ForwardAccumulator(x, V) as inner:
            y = norm_times_complex(x)
        d = inner.jvp(y)
    np.testing.assert_allclose(np.real(outer.jvp(d).numpy()), vhv, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------
# The compiled sg.jvp with a container argument whose tangent has None for a
# leaf (op by op: no tangent): the leaf's tangent was np.asarray(None,
# dtype=float), NaN, and so was the whole JVP

def dict_leaf(d):
    return d["a"] * 2.0 + d["c"] * d["a"] + np.sum(d["n"][0])


def list_leaf(lst):
    return lst[0] * 2.0 + lst[1]


@pytest.mark.parametrize("f, primal, tangent", [
    (dict_leaf, {"a": X[:3], "c": 1.5, "n": [X[3:], 2.0]}, {"a": T[:3], "c": None, "n": None}),
    (dict_leaf, {"a": X[:3], "c": 1.5, "n": [X[3:], 2.0]}, {"a": None, "c": 0.5, "n": [T[3:], None]}),
    (list_leaf, [X[:3], 1.0], [T[:3], None]),
    (list_leaf, [X[:3], X[3:]], [None, T[3:]]),
], ids=["dict_none_leaves", "dict_none_array", "list_none_float", "list_none_array"])
def test_jvp_of_a_container_with_a_leaf_without_tangent(f, primal, tangent):
    def filled(t, p):
        if isinstance(p, dict):
            return {k: filled(t.get(k) if t else None, v) for k, v in p.items()}
        if isinstance(p, list):
            return [filled(a if t else None, b) for a, b in zip(t or [None] * len(p), p)]
        return np.zeros_like(np.asarray(p, dtype=float)) if t is None else t

    def moved(h):
        tt = filled(tangent, primal)

        def add(p, t):
            if isinstance(p, dict):
                return {k: add(p[k], t[k]) for k in p}
            if isinstance(p, list):
                return [add(a, b) for a, b in zip(p, t)]
            return p + h * t
        return f(add(primal, tt))
    expected = (moved(1e-6) - moved(-1e-6)) / 2e-6
    compiled = sg.jvp(f, (primal,), (tangent,))[1]
    np.testing.assert_allclose(compiled, expected, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(op_by_op.jvp(f, [primal], [tangent])[1], compiled, rtol=1e-12, atol=1e-14)


def test_accumulator_with_a_none_tangent_watches_nothing():
    """ForwardAccumulator([x, y], [None, ty]): x has no tangent (it had a
    NaN one, np.asarray(None, dtype=float), for a 0-d x)."""
    x, y = sg.constant(2.0), sg.constant(X[:2])
    with sg.ForwardAccumulator([x, y], [None, T[:2]]) as acc:
        z = x * y + x ** 2
    np.testing.assert_allclose(acc.jvp(z).numpy(), 2.0 * T[:2], rtol=1e-15)
    assert acc.jvp(x) is None


# ---------------------------------------------------------------------------
# A backward pass run on Tensors (a tape inside an accumulator or another
# tape: forward over reverse, Hessians op by op) must give the gradient a
# plain tape gives: (1) `out[[0, 0, 2]] = v` wrote element 0 last with v[1],
# but every repeated entry got its cotangent (the mask of last writes was
# applied to ndarrays only); (2) a real source got a complex gradient, its
# imaginary part a leftover of the complex cotangent

def repeated_index(v):
    out = np.zeros(3)
    out[[0, 0, 2]] = v[:3]
    return np.sum(out * v[3:] ** 2)


def complex_inside(v):
    z = np.exp(1j * v[:3]) * v[3:]
    return np.sum(np.real(z) + np.imag(z) ** 2)


@pytest.mark.parametrize("f", [repeated_index, complex_inside], ids=["repeated_index", "complex_inside"])
def test_gradient_of_a_tape_inside_an_accumulator_or_a_tape(f):
    expected = sg.grad(f)(X)
    np.testing.assert_allclose(expected, [_central(f, X, e) for e in np.eye(6)], rtol=1e-6, atol=1e-7)
    x = sg.constant(X)
    with sg.GradientTape() as outer:
        outer.watch(x)
        with sg.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        g = tape.gradient(y, x)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-12, atol=1e-14)
    hv = _central(sg.grad(f), X, T)
    ff, fr, rf = _second_orders(f)
    np.testing.assert_allclose(ff, T @ hv, rtol=1e-6, atol=1e-7)
    assert fr.dtype == np.float64
    np.testing.assert_allclose(fr, hv, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(rf, hv, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------------
# Compiled: np.einsum with a list display as an operand (found by the idiom
# probe, where op by op refused it): the compiled JVP and gradient had no term
# through the list, silently

def einsum_display(v):
    return np.einsum("i,i->", [v[0], v[1]], [v[2], v[3]]) * v


def einsum_display_matrix(v):
    return np.einsum("ij,j->i", np.arange(6.0).reshape(3, 2), (v[0], v[1] * v[2]))


def einsum_interleaved_display(v):
    return np.einsum([v[0], v[1]], [0], [v[2], v[3]], [0], []) * v


def einsum_named_list(v):
    p = [v[0], v[1] * v[4]]
    return np.einsum("i,i->", p, p) * v


EINSUMS = [einsum_display, einsum_display_matrix, einsum_interleaved_display, einsum_named_list]


@pytest.mark.parametrize("f", EINSUMS, ids=[f.__name__ for f in EINSUMS])
def test_compiled_derivatives_of_einsum_of_a_list_display(f):
    expected = _central(f, X, T)
    np.testing.assert_allclose(sg.jvp(f, (X,), (T,))[1], expected, rtol=1e-7, atol=1e-8)
    w = np.arange(1.0, 1.0 + np.size(f(X))).reshape(np.shape(f(X)))
    np.testing.assert_allclose(sg.grad(lambda v: np.sum(f(v) * w))(X) @ T, np.sum(expected * w), rtol=1e-7)


@pytest.mark.parametrize("f", EINSUMS, ids=[f.__name__ for f in EINSUMS])
def test_einsum_of_lists_of_tensors_op_by_op(f):
    """np.einsum with a list of Tensors as an operand, op by op: recorded
    (its dispatch sees the list only: the Tensors were converted), and its
    tangent by the transpose trick seeds the list's one array cotangent
    with the entries' tangents stacked (they were taken for one seed each:
    a ValueError, in the compiled JVP too for a name holding a list)."""
    expected = _central(f, X, T)
    np.testing.assert_allclose(op_by_op.jvp(f, [X], [T])[1], expected, rtol=1e-7, atol=1e-8)
    x = sg.constant(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", GradientPathWarning)
        with sg.ForwardAccumulator(x, sg.constant(T)) as acc:
            y = f(x)
    np.testing.assert_allclose(acc.jvp(y).numpy(), expected, rtol=1e-7, atol=1e-8)
    w = np.arange(1.0, 1.0 + np.size(f(X))).reshape(np.shape(f(X)))
    loss = lambda v: np.sum(f(v) * w)  # noqa: E731
    np.testing.assert_allclose(op_by_op.gradient(loss, [X], {}, (0,)), sg.grad(loss)(X), rtol=1e-12, atol=1e-14)
    hv = _central(sg.grad(loss), X, T)
    ff, fr, rf = _second_orders(loss)
    np.testing.assert_allclose(ff, T @ hv, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(fr, hv, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(rf, hv, rtol=1e-6, atol=1e-7)
