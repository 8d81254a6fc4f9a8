"""sg.jit(sg.jacobian(f, wrt)) compiles f's generated JVP with Numba and
runs it once per column (forward mode, JAX's jacfwd): Jacobians equal to
the CPython sg.jacobian's, to autograd's and to central differences; code
whose reruns would show (prints, writes into an argument) and Jacobians
with fewer outputs than inputs run sg.jacobian itself, once. Also the
pieces this needed: np.array's tangent rule, the twins of array_tangent,
cast_like, broadcast_like, value_tangent, balanced_eq, stacked and small matrix
products and reductions over an inner axis, and list literals lowered as
tuples."""
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

pytest.importorskip("numba")

import srcgrad as sg  # noqa: E402

from gradcheck import check_close, numerical_jacobian, numpy_swapped  # noqa: E402


def rotation(a):
    """Rodrigues' rotation by the angle |a| about a, as nested lists."""
    n = np.sqrt(np.sum(a ** 2))
    x, y, z = a[0] / n, a[1] / n, a[2] / n
    s, c = np.sin(n), np.cos(n)
    return np.array([[x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s],
                     [x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s],
                     [x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c]])


def elbow(theta, base, points):
    """A small skinned chain: a rotation per bone from theta (3 angles per
    bone), chained by matrix products in a loop over a list, then applied
    to a stack of points (a 3-d @ 2-d product) and summed over the bones."""
    n = theta.shape[0] // 3
    frames = []
    for i in range(n):
        R = rotation(theta[3 * i:3 * i + 3])
        if i == 0:
            frames.append(R)
        else:
            frames.append(frames[i - 1] @ R)
    stack = np.stack(frames)                    # (bones, 3, 3)
    moved = stack @ points.T                     # (bones, 3, n_points)
    return np.sum(base[:, None, :] * moved, axis=0).T


def elbow_data():
    rng = np.random.default_rng(0)
    theta = rng.normal(0.0, 0.7, 9)
    base = rng.random((3, 40))
    base /= base.sum(axis=0)
    points = rng.normal(size=(40, 3))
    return theta, base, points


def strict(fn, *args):
    """fn(*args) with a PerformanceWarning (a fallback to CPython) an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        return fn(*args)


def test_a_tall_jacobian_compiles_and_agrees_with_sg_jacobian_autograd_and_central_differences():
    theta, base, points = elbow_data()
    jitted = sg.jit(sg.jacobian(elbow))
    got = strict(jitted, theta, base, points)
    assert got.shape == (40, 3, 9)
    assert "def jvp_elbow" in jitted.source
    check_close(got, sg.jacobian(elbow)(theta, base, points), rtol=1e-12, atol=1e-14)
    check_close(got, numerical_jacobian(lambda t: elbow(t, base, points), theta), rtol=1e-6, atol=1e-8)
    with numpy_swapped(__name__, anp):
        expected = autograd.jacobian(elbow)(theta, base, points)
    check_close(got, expected, rtol=1e-12, atol=1e-14)
    again = strict(jitted, theta * 0.5, base, points)      # (no new compile: the same kinds)
    check_close(again, sg.jacobian(elbow)(theta * 0.5, base, points), rtol=1e-12, atol=1e-14)
    assert len(jitted.signatures) == 1


def test_a_ufunc_and_a_float_argument():
    x = np.array([0.3, -1.0, 2.0])
    check_close(strict(sg.jit(sg.jacobian(np.sin)), x), np.diag(np.cos(x)), rtol=1e-15, atol=0)

    def curve(t, scale):
        return scale * np.array([np.cos(t), np.sin(t), t * t])
    got = strict(sg.jit(sg.jacobian(curve)), 0.7, 2.0)
    assert got.shape == (3,)
    check_close(got, 2.0 * np.array([-np.sin(0.7), np.cos(0.7), 1.4]), rtol=1e-14, atol=0)


def test_an_empty_argument_gives_sg_jacobians_empty_jacobian():
    def scaled(x, s):
        return np.concatenate([np.sin(x), np.array([s])]) * s
    got = sg.jit(sg.jacobian(scaled))(np.zeros(0), 2.0)
    assert got.shape == (1, 0)
    check_close(got, sg.jacobian(scaled)(np.zeros(0), 2.0), rtol=0, atol=0)
    x = np.array([0.4, -1.1])                  # (and a nonempty one of the same kinds, against differences)
    check_close(strict(sg.jit(sg.jacobian(scaled)), x, 2.0), numerical_jacobian(lambda v: scaled(v, 2.0), x),
                rtol=1e-6, atol=1e-8)


def test_a_matrix_argument_gives_out_shape_plus_its_shape():
    def project(W, v):
        return np.tanh(W @ v)
    rng = np.random.default_rng(1)
    W, v = rng.normal(size=(4, 2)), rng.normal(size=2)
    got = strict(sg.jit(sg.jacobian(project)), W, v)
    assert got.shape == (4, 4, 2)
    check_close(got, numerical_jacobian(lambda w: project(w, v), W), rtol=1e-6, atol=1e-8)


def test_a_wide_jacobian_runs_sg_jacobians_reverse_mode_with_the_reason():
    def pair(x):
        return np.array([np.sum(x ** 2), np.sum(np.sin(x[:3]))])
    x = np.linspace(0.1, 1.0, 40)
    jitted = sg.jit(sg.jacobian(pair))
    with pytest.warns(sg.PerformanceWarning, match="40 columns and 2 rows"):
        got = jitted(x)
    check_close(got, sg.jacobian(pair)(x), rtol=1e-14, atol=0)
    check_close(got, numerical_jacobian(pair, x), rtol=1e-6, atol=1e-8)
    with warnings.catch_warnings():         # (decided once for these argument kinds)
        warnings.simplefilter("error", sg.PerformanceWarning)
        check_close(jitted(2.0 * x), sg.jacobian(pair)(2.0 * x), rtol=1e-14, atol=0)


def talkative(x):
    print("evaluated")
    return np.sin(x) * 2.0


def test_code_that_prints_runs_in_cpython_and_prints_once(capsys):
    x = np.array([0.5, 1.0, 1.5, 2.0])
    jitted = sg.jit(sg.jacobian(talkative))
    with pytest.warns(sg.PerformanceWarning, match="prints"):
        got = jitted(x)
    check_close(got, np.diag(2.0 * np.cos(x)), rtol=1e-14, atol=0)
    assert capsys.readouterr().out.count("evaluated") == 1


def counting(x, counter):     # (x * 1 for the caller's counter at 0)
    counter[0] += 1.0
    return x * counter[0]


def test_element_assignment_to_an_argument_is_the_functions_own_copy_at_every_column():
    # (srcgrad's compiled code writes `x[i] = v` into a copy, never into the caller's array:
    # docs/supported-python.md; so each column sees the argument as given, as sg.jacobian's one sweep)
    x = np.array([0.5, 1.0, 1.5])
    counter = np.zeros(1)
    with warnings.catch_warnings():         # (compiled or not: Numba refuses a helper's f-string today)
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        got = sg.jit(sg.jacobian(counting))(x, counter)
    assert counter[0] == 0.0
    check_close(got, np.eye(3), rtol=1e-15, atol=0)
    check_close(sg.jacobian(counting)(x, counter), got, rtol=1e-15, atol=0)


# ------------------------------------------------------------------ the pieces

def packed(x):
    """np.array of nested lists of values and constants, with ndmin."""
    m = np.array([[1.0, x[0]], [x[1] * x[2], 2.0]])
    v = np.array(x[0] * x[1], ndmin=2)
    return np.sum(m @ m) + np.sum(v)


def test_np_array_has_a_tangent_rule():
    # (forward mode transposed np.array's VJP at run time before: code sg.jit could not compile)
    x = np.array([0.3, -0.8, 1.2])
    v = np.array([1.0, 0.5, -2.0])
    _, tangent = sg.jvp(packed, (x,), (v,))
    check_close(tangent, numerical_jacobian(packed, x) @ v, rtol=1e-7, atol=1e-9)
    assert "transpose_jvp" not in sg.source(packed, args=(x,), mode="forward")


def matrix_stacks(A, B, C, D):
    return np.sum((A @ B) * 1.5) + np.sum(np.tanh(A @ C)) + np.sum(D @ C)


def test_products_of_stacks_of_matrices_and_small_products():
    rng = np.random.default_rng(2)
    A = rng.normal(size=(5, 3, 4))        # a stack
    B = rng.normal(size=(4, 2))           # a matrix
    C = rng.normal(size=(5, 4, 3))        # a stack of the same length
    D = rng.normal(size=(2, 4))           # a matrix against the stack C
    grad = sg.grad(matrix_stacks, wrt=(0, 1, 2, 3))
    got = strict(sg.jit(grad), A, B, C, D)
    for g, e in zip(got, grad(A, B, C, D)):
        check_close(g, e, rtol=1e-12, atol=1e-13)


def inner_reductions(x):
    return (np.sum(np.sum(x, axis=0) ** 2) + np.sum(np.mean(x, axis=1) ** 3)
            + np.sum(np.sum(x, axis=1, keepdims=True) * x))


def test_reductions_over_an_inner_axis():
    x = np.random.default_rng(3).normal(size=(4, 3, 5))
    grad = sg.grad(inner_reductions)
    check_close(strict(sg.jit(grad), x), grad(x), rtol=1e-12, atol=1e-13)
    check_close(grad(x), numerical_jacobian(inner_reductions, x), rtol=1e-6, atol=1e-8)


def kept_rows(x):
    row = [x[0], x[1]]
    m = np.array([row, [x[1], x[2]]])
    row.append(x[0] * x[2])         # (also extended: stays a list, and so does the literal beside it)
    return m.ravel() * row[2]


def test_list_literals_read_only_by_np_array_become_tuples():
    x = np.array([0.5, 2.0, -1.0])
    jitted = sg.jit(sg.jacobian(kept_rows))
    check_close(strict(jitted, x), numerical_jacobian(kept_rows, x), rtol=1e-7, atol=1e-9)
    assert "np.array([row, " in jitted.source
    jitted = sg.jit(sg.jacobian(rotation))
    a = np.array([0.3, -0.2, 0.9])
    strict(jitted, a)
    assert "np.array((t, t_1, t_2))" in jitted.source and "    t = (" in jitted.source   # (rows as tuples)
    check_close(jitted(a), numerical_jacobian(rotation, a), rtol=1e-6, atol=1e-9)


def relu_mlp(W1, W2, x, y):
    h = np.maximum(x @ W1, 0.0)                     # (ReLU: np.maximum's derivative, balanced_eq)
    z = np.minimum(h @ W2, 3.0)
    leaky = np.maximum(z, 0.1 * z)
    return np.sum((leaky - y) ** 2)


def test_relu_networks_compile():
    rng = np.random.default_rng(4)
    W1, W2 = rng.normal(size=(5, 8)), rng.normal(size=(8, 2))
    x, y = rng.normal(size=(16, 5)), rng.normal(size=(16, 2))
    x[0, :] = 0.0                                   # (a tie at the kink: autograd's 1/2)
    grad = sg.grad(relu_mlp, wrt=(0, 1))
    got = strict(sg.jit(grad), W1, W2, x, y)
    with numpy_swapped(__name__, anp):
        expected = autograd.grad(relu_mlp, argnum=(0, 1))(W1, W2, x, y)
    for g, c, e in zip(got, grad(W1, W2, x, y), expected):
        check_close(g, c, rtol=1e-12, atol=1e-13)
        check_close(g, e, rtol=1e-12, atol=1e-13)


def phasor(x):
    v = np.array([np.exp(1j * x[0]) * x[1], x[1] * x[2] + 0.5j])      # (complex entries, and their tangents)
    return np.real(v * np.conj(v)) + np.imag(v)


def test_complex_entries_of_np_array_keep_their_imaginary_part():
    x = np.array([0.3, 1.2, -0.7])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)      # (compiled or not, the values)
        got = sg.jit(sg.jacobian(phasor))(x)
    check_close(got, numerical_jacobian(phasor, x), rtol=1e-6, atol=1e-8)
    check_close(got, sg.jacobian(phasor)(x), rtol=1e-12, atol=1e-14)
