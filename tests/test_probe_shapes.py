"""Adversarial probes of the shape analysis (transforms/shapes.py), the
shape sources and dead-code pruning (codegen.py), batched Hessians and the
source parser: every derivative is checked against central differences and
autograd (Hessians against differences of the gradient)."""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad, numerical_jacobian, numpy_swapped

RNG = np.random.default_rng(11)


def _check(f, args, wrt, tape=True, ag=True):
    """sg.grad of f against central differences and (with `ag`) autograd;
    with `tape`, op-by-op recording on a GradientTape too."""
    wrt = wrt if isinstance(wrt, tuple) else (wrt,)
    got = sg.grad(f, wrt=wrt)(*args)
    got = got if isinstance(got, tuple) else (got,)
    if ag:
        with numpy_swapped(__name__, anp):
            ag = autograd.grad(f, argnum=wrt)(*args)
        ag = ag if isinstance(ag, tuple) else (ag,)
    else:
        ag = (None,) * len(wrt)
    for k, g, a in zip(wrt, got, ag):
        def along(v, k=k):
            xs = list(args)
            xs[k] = v
            return f(*xs)
        check_close(g, numerical_grad(along, np.asarray(args[k], dtype=np.float64)), rtol=1e-5, atol=1e-7)
        if a is not None:
            check_close(g, a, rtol=1e-10, atol=1e-12)
    if tape:
        xs = [sg.constant(a) for a in args]
        with sg.GradientTape() as t:
            for k in wrt:
                t.watch(xs[k])
            y = f(*xs)
        taped = t.gradient(y, [xs[k] for k in wrt])
        for g, h in zip(got, taped):
            check_close(np.asarray(h), g, rtol=1e-10, atol=1e-12)


# --- a dimension symbol standing for different lengths -------------------------------------------

def loop_fresh_dim(x, y):
    # u = z[::3] has length 1 in the first iteration (z = x, length 2) and 2 in the second
    # (z = y, length 5): one unknown-dimension symbol for both, so `u * up` "proved" up of u's
    # shape and its unbroadcast was left out (ValueError in the reverse sweep)
    z = x
    acc = 0.0
    for t in range(2):
        if t >= 0:
            u = z[::3]
            if t > 0:
                acc = acc + np.sum(u * up)
            up = u * 1.0
        z = y
    return acc


def joined_then_sliced(x, y):
    # z joins x (length 2) and y (length 5) as a length "not 1"; z[1:] is length 1 or 4
    z = x
    if x[0] > 100.0:
        z = x
    if x[0] > -100.0:
        s1 = z[1:] * 1.0
    z = y
    if x[0] > -100.0:
        s2 = z[1:]
        out = np.sum(s2 * s1)
    return out


def while_fresh_dim(x, y):
    z = x
    acc = 0.0
    t = 0
    while t < 2:
        if t >= 0:
            u = z[::3]
            if t > 0:
                acc = acc + np.sum(u * up)
            up = u * 1.0
        z = y
        t = t + 1
    return acc


@pytest.mark.parametrize("f", [loop_fresh_dim, while_fresh_dim])
def test_unknown_dimension_in_a_loop_is_not_one_length(f):
    _check(f, (RNG.normal(size=2), RNG.normal(size=5)), (0, 1))


def test_slice_of_a_joined_dimension():
    _check(joined_then_sliced, (RNG.normal(size=2), RNG.normal(size=5)), (0, 1))


# --- batched reverse sweeps (Hessians, Jacobians): an int apart from an index array ---------------

IDX3 = np.array([0, 2, 1])
IDX8 = np.array([0, 1, 0, 1, 1, 0, 0, 1])


def int_apart_from_array(x):
    # x[IDX8, :, 0]: NumPy puts the advanced axes first (the int counts as advanced); with the
    # batch axis in front the batched scatter put them before it. 8 rows of the Hessian and 8
    # indices: the shapes agree and the result was silently transposed
    return np.sum(np.sin(x[IDX8, :, 0]) ** 3 * np.arange(2.0))


def int_apart_vector(x):
    return np.sin(x[IDX3, :, 0]) ** 3


def _hessian_by_differences(f, x, eps=1e-5):
    g = sg.grad(f)
    return numerical_jacobian(lambda v: np.asarray(g(v)), x, eps)


def test_hessian_int_apart_from_index_array():
    x = RNG.normal(size=(2, 2, 2))
    check_close(sg.hessian(int_apart_from_array)(x), _hessian_by_differences(int_apart_from_array, x),
                rtol=1e-5, atol=1e-6)
    with numpy_swapped(__name__, anp):
        ag = autograd.hessian(int_apart_from_array)(x)
    check_close(sg.hessian(int_apart_from_array)(x), ag, rtol=1e-9, atol=1e-10)


def test_jacobian_int_apart_from_index_array():
    x = RNG.normal(size=(3, 2, 2))
    want = numerical_jacobian(int_apart_vector, x)
    check_close(sg.jacobian(int_apart_vector)(x), want, rtol=1e-5, atol=1e-6)
    xt = sg.constant(x)
    with sg.GradientTape() as t:
        t.watch(xt)
        y = sg.function(int_apart_vector)(xt)
    check_close(np.asarray(t.jacobian(y, xt)), want, rtol=1e-5, atol=1e-6)


# --- element assignment to a view the check did not see (lower/views.py) -------------------------
# NumPy writes through b into a; the functional setitem did not, and the derivative was silently
# wrong. Now refused (a view for sure) or checked at run time.

def view_by_ifexp(x):
    a = x * 1.0
    c = x * 2.0
    b = a if x[0] > -100.0 else c
    b[0] = b[0] * 3.0
    return np.sum(a * a * x) + np.sum(b * x)


def view_by_method_chain(x):
    a = x * 1.0
    b = a[None].squeeze(0)
    b[0] = b[0] * 3.0
    return np.sum(a * a * x) + np.sum(b * x)


def view_by_reshape_chain(x):
    a = x * 1.0
    b = a[:].reshape(-1)
    b[0] = b[0] * 3.0
    return np.sum(a * a * x) + np.sum(b * x)


def element_of_a_display(x):
    a = x * 1.0
    b = [a][0]
    b[0] = b[0] * 3.0
    return np.sum(a * a * x) + np.sum(b * x)


def copy_by_ifexp(x):
    a = x * 1.0
    c = x * 2.0
    b = a if x[0] > 100.0 else c      # (c at run time: no view of a)
    b[0] = b[0] * 3.0
    return np.sum(a * a * x) + np.sum(b * x)


def copy_by_chain(x):
    a = x * 1.0
    b = a[[0, 1, 2]].reshape(-1)      # (advanced indexing copies)
    b[0] = b[0] * 3.0
    return np.sum(a * a * x) + np.sum(b * x)


@pytest.mark.parametrize("f", [view_by_ifexp, view_by_method_chain, view_by_reshape_chain,
                               element_of_a_display])
def test_element_assignment_to_a_hidden_view_is_refused(f):
    with pytest.raises(sg.UnsupportedSyntaxError, match="view of a"):
        sg.grad(f)(RNG.normal(size=3))


@pytest.mark.parametrize("f", [copy_by_ifexp, copy_by_chain])
def test_element_assignment_to_a_copy_still_works(f):
    _check(f, (RNG.normal(size=3),), 0, tape=False, ag=False)     # (autograd: no item assignment)


# --- probes that held: loops, slices of length 1, x.shape-built arrays, keepdims ------------------

def rnn_filled(x, w):
    n = x.shape[0]
    H = np.zeros((n, w.shape[0]))
    h = np.zeros(w.shape[0])
    for t in range(n):
        h = np.tanh(x[t] * w + h)
        H[t] = h
    return np.sum(H * H)


def differences(x, w):
    d = x[1:] - x[:-1]
    return np.sum(d * w)


def centred(x, w):
    m = np.mean(x, axis=1, keepdims=True)
    c = x - m
    s = np.sum(c * c, axis=0, keepdims=True)
    return np.sum(s * w)


def shrinking(x, w):
    y = x
    for t in range(2):
        y = y[1:] * w
    return np.sum(y)


def filled_from_shape(x, w):
    n = x.shape[-1]
    o = np.full((x.shape[0], n), 2.0)
    z = np.zeros(x.shape[0])
    z = z + np.sum(o * x * w, axis=1)
    return np.sum(z * z)


def neighbours(x, w):
    a = x * w
    b = a[1:] * a[:-1]
    c = b * x[0]
    return np.sum(c ** 2)


def helper(a, w):
    y = a * w
    z = y[1:] * y[:-1]
    return np.sum(z * w)


def helper_twice(x, w):
    # one user function called on three shapes (axes of length 1 or not) in one derivative
    return helper(x, w) + helper(x[:2], w) + helper(x[:, :1], w[:1])


def growing_prefix(x, w):
    acc = 0.0
    for t in range(x.shape[0]):
        acc = acc + helper(x[: t + 1], w)
    return acc


SETITEM = {rnn_filled, "filled_rows"}     # (autograd has no item assignment: differences only)
CASES = [
    (rnn_filled, [((4, 3), (3,)), ((4, 1), (1,)), ((1, 3), (3,)), ((4, 1), (3,))]),
    (differences, [((4,), (3,)), ((4,), (1,)), ((2,), (1,)), ((2,), (5,)), ((4, 3), (3, 1)), ((4, 3), (1, 3))]),
    (centred, [((4, 3), (3,)), ((4, 3), (1,)), ((1, 3), (3,)), ((4, 1), (5,)), ((4, 3), (2, 1, 3))]),
    (shrinking, [((4,), (1,)), ((3,), (1,)), ((3,), (2,)), ((4, 2), (1, 2))]),
    (filled_from_shape, [((3, 2), (2,)), ((3, 1), (2,)), ((3, 2), (1,)), ((1, 1), (3,))]),
    (neighbours, [((3,), (3,)), ((3,), (1,)), ((2,), (1,)), ((1,), (1,)), ((2, 2), (1,))]),
    (helper_twice, [((3, 2), (2,)), ((3, 2), (1,)), ((3, 1), (1,)), ((2, 2), (1, 2))]),
    (growing_prefix, [((3, 2), (2,)), ((3, 1), (1,)), ((1, 2), (2,))]),
]


@pytest.mark.parametrize("f,shapes", CASES, ids=[c[0].__name__ for c in CASES])
def test_shapes_in_both_orders(f, shapes):
    """Each function on several patterns of axes of length 1, in both
    orders (the code of one pattern must not serve another)."""
    for order in (shapes, shapes[::-1]):
        for sx, sw in order:
            _check(f, (RNG.normal(size=sx), RNG.normal(size=sw)), (0, 1), ag=f not in SETITEM)


def curve(x):
    d = x[1:] - x[:-1]
    return np.sum(d ** 4) + np.sum(x) ** 2


def centred_exp(x):
    m = np.mean(x, axis=-1, keepdims=True)
    return np.sum((x - m) ** 3 * np.exp(m))


def recurrent(x):
    h = np.zeros(x.shape[-1])
    for t in range(x.shape[0]):
        h = np.tanh(x[t] + h * x[0])
    return np.sum(h * h)


def filled_rows(x):
    n = x.shape[0]
    H = np.zeros((n,) + x.shape[1:])
    h = x[0] * 0.0
    for t in range(n):
        h = np.sin(h + x[t]) * x[t]
        H[t] = h
    return np.sum(H ** 2) + np.prod(x)


def rows_read_twice(x):
    y = x
    a = y[0] * x[1]
    b = x[0] * y[1]
    return np.sum(a * b * y) + np.sum(x[2] ** 3)


HESSIANS = [(curve, [(3,), (2,), (1,), (3, 2), (2, 1)]), (centred_exp, [(2, 3), (2, 1), (1, 3)]),
            (recurrent, [(3, 2), (3, 1), (1, 2)]), (filled_rows, [(3, 2), (3, 1), (1, 2), (1,)]),
            (rows_read_twice, [(3, 2), (3, 1)])]


@pytest.mark.parametrize("f,shapes", HESSIANS, ids=[c[0].__name__ for c in HESSIANS])
def test_hessians_in_both_orders(f, shapes):
    for order in (shapes, shapes[::-1]):
        for s in order:
            x = RNG.normal(size=s)
            got = sg.hessian(f)(x)
            check_close(got, _hessian_by_differences(f, x), rtol=1e-5, atol=1e-6)
            if f.__name__ not in SETITEM:
                with numpy_swapped(__name__, anp):
                    want = autograd.hessian(f)(x)
                check_close(got, want, rtol=1e-9, atol=1e-10)


# --- source parsing ---------------------------------------------------------------------------------

def test_source_edited_after_import_is_not_differentiated(tmp_path, monkeypatch):
    import importlib
    import os
    import time
    path = tmp_path / "edited_after_import.py"
    path.write_text("import numpy as np\n\n\ndef f(x):\n    return np.sum(x ** 2)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("edited_after_import")
    path.write_text("import numpy as np\n\n\ndef f(x):\n    return np.sum(x ** 3)\n")
    later = time.time() + 5
    os.utime(path, (later, later))
    x = np.array([1.0, 2.0])
    # parse read the CURRENT file at co_firstlineno (linecache rereads an edited file): the new text was
    # differentiated while the old code ran (3x**2 for 2x; a test file edited during a suite run even
    # had one function's tests run another's code). Now the text is checked against the code object
    # and the function runs op by op (the code that runs), with a warning saying why
    with pytest.warns(sg.PerformanceWarning, match="not the code that runs"):
        got = sg.grad(module.f)(x)
    check_close(got, numerical_grad(module.f, x))      # the code that runs: 2x


# --- an array element set from a list or tuple of values (value_cotangent) ---------------------------

def rows_from_lists(x):
    # value_cotangent returned the row bH[t], a view, and zero_at_in_place(bH, t) then zeroed it:
    # the gradient was silently 0
    H = np.zeros((3, 2))
    for t in range(3):
        H[t] = [x[0] * t, x[1] * x[0]]
    return np.sum(np.sin(H))


def rows_from_tuples(x):
    H = np.zeros((3, 2))
    for t in range(3):
        H[t] = (x[0] * t, x[1] * x[0])
    return np.sum(np.sin(H))


def list_broadcast(x):
    # NumPy broadcasts the one-element list over the three entries: its element gets their sum
    H = np.zeros(3)
    H[:] = [x[0] * 2.0]
    return np.sum(np.sin(H) * x[1])


def list_row_broadcast(x):
    H = np.zeros((2, 3))
    H[:] = [x[0] * 2.0, x[1], x[0] * x[1]]
    return np.sum(np.sin(H) * x[1])


def nested_lists(x):
    H = np.zeros((2, 2))
    H[:] = [[x[0], x[1]], [x[1] * x[0], 2.0 * x[0]]]
    return np.sum(np.sin(H))


LIST_VALUES = [rows_from_lists, rows_from_tuples, list_broadcast, list_row_broadcast, nested_lists]


@pytest.mark.parametrize("f", LIST_VALUES, ids=[f.__name__ for f in LIST_VALUES])
def test_element_set_from_a_list(f):
    x = np.array([0.3, -0.5])
    _check(f, (x,), 0, tape=False, ag=False)
    xt = sg.constant(x)
    with sg.GradientTape() as t:
        t.watch(xt)
        y = sg.function(f)(xt)
    check_close(np.asarray(t.gradient(y, xt)), numerical_grad(f, x), rtol=1e-5, atol=1e-7)
    # the batched reverse sweep of the gradient stacked the list's cotangent, an array, on the batch
    # axis and took example k for element k: an asymmetric, wrong Hessian
    check_close(sg.hessian(f)(x), _hessian_by_differences(f, x), rtol=1e-5, atol=1e-6)
    check_close(sg.jacobian(sg.grad(f))(x), _hessian_by_differences(f, x), rtol=1e-5, atol=1e-6)


def test_element_set_from_a_tuple_jit():
    pytest.importorskip("numba")
    x = np.array([0.3, -0.5])
    check_close(sg.jit(sg.grad(rows_from_tuples))(x), numerical_grad(rows_from_tuples, x), rtol=1e-5, atol=1e-7)
