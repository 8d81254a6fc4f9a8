"""Op by op, every way of writing into an array the user's code allocated
on the tape (a Buffer, srcgrad/tape/buffers.py) is followed, with NumPy's
values and their derivatives, or raises TypeError naming what to write
instead; and a SciPy function imported by name in another user module is
recorded (srcgrad/tape/scipy_calls.py).

Values are checked against the same code run on plain ndarrays, gradients
against central finite differences (autograd cannot differentiate element
assignment)."""
import sys
import textwrap
import warnings

import numpy as np
import pytest

import srcgrad as sg
from gradcheck import numerical_grad as fd_grad

X = np.array([1.0, 2.0, 3.0])
M = np.array([[1.0, 2.0], [3.0, 4.0]])


def on_tape(f, x):
    """(value, gradient) of f at x, op by op on a GradientTape."""
    v = sg.Variable(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.GradientPathWarning)
        with sg.GradientTape() as tape:
            y = f(v)
        g = tape.gradient(y, v)
    return float(np.asarray(y.numpy() if isinstance(y, sg.Tensor) else y)), g.numpy()


def check(f, x):
    value, grad = on_tape(f, x)
    np.testing.assert_allclose(value, f(x), rtol=1e-12)
    np.testing.assert_allclose(grad, fd_grad(f, x), rtol=1e-6, atol=1e-8)
    return value, grad


# ------------------------------------------------------------------ writes through a view

def view_imul(x):
    out = np.zeros(3)
    out[:] = x
    v = out[1:]
    v *= 3.0                    # out is [x0, 3 x1, 3 x2]
    return np.sum(out ** 2)


def fill(x):
    out = np.zeros(3)
    out[:] = x
    out.fill(0.5)               # out is 0.5 everywhere: no gradient through out
    return np.sum(out ** 2) + np.sum(x)


def column_imul(X):
    out = np.ones((2, 2))
    for j in range(2):
        out[:, j] *= X[:, j]    # the view out[:, j] changed in place, then stored back
    return np.sum(out ** 2)


def row_iadd_tensor(X):
    out = np.zeros((2, 2))
    out[0] = X[1]
    for i in range(2):
        out[i] += X[i] * X[i]
    return np.sum(out * X)


def view_setitem(x):
    out = np.zeros((2, 3))
    row = out[1]
    row[:] = 2.0 * x            # written through the view into out[1]
    row[0] = x[2] ** 2
    return np.sum(out ** 2) + out[1, 0]


def view_of_view(x):
    out = np.zeros((2, 3))
    out[0] = x
    out[1] = x * x
    v = out[:, 1:]
    w = v[1]
    w *= x[0]                   # out[1, 1:] scaled
    return np.sum(np.sin(out))


def view_read_after_parent_write(x):
    out = np.zeros((2, 3))
    row = out[0]                # NumPy's view: it sees the later writes
    out[0] = x
    out[0, 1] = x[2] * x[0]
    return np.sum(row ** 2)


def transposed_read_after_write(x):
    out = np.zeros((3, 2))
    t = out.T
    r = out.reshape(-1)
    out[:, 0] = x
    out[:, 1] = np.exp(x)
    return np.sum(t[1] * t[0]) + np.sum(r ** 3) + np.sum(np.transpose(out)[0])


def ufunc_out(x):
    buf = np.empty(3)
    np.exp(x, out=buf)
    np.multiply(x, buf, out=buf)    # (the Tensor first: the Buffer's method writes)
    return np.sum(buf)


def function_out(X):
    buf = np.zeros(2)
    np.sum(X * X, axis=0, out=buf)
    return np.sum(buf * X[0])


def copyto(x):
    buf = np.zeros(3)
    np.copyto(buf, x * 2.0)
    np.copyto(buf, x ** 3, where=np.array([True, False, True]))
    return np.sum(buf * x)


def ufunc_where(x):
    buf = np.ones(3)
    buf[:] = x
    np.multiply(buf, x, out=buf, where=np.array([False, True, True]))
    return np.sum(buf ** 2)


def preallocated_loop(x):       # the common pattern, unchanged
    out = np.zeros((4, 3))
    for i in range(4):
        out[i] = np.sin(x * (i + 1))
    out[1, 2] = x[0] * x[1]
    return np.sum(out[1:] * out[:-1])


CASES = [
    (view_imul, X, 118.0),
    (fill, X, 0.75 + 6.0),
    (column_imul, M, 1.0 + 4 + 9 + 16),
    (row_iadd_tensor, M, None),
    (view_setitem, X, None),
    (view_of_view, X, None),
    (view_read_after_parent_write, X, 1.0 + 9 + 9),
    (transposed_read_after_write, X, None),
    (ufunc_out, X, float(np.sum(X * np.exp(X)))),
    (function_out, M, 10.0 * 1 + 20.0 * 2),
    (copyto, X, 1.0 + 8.0 + 81.0),
    (ufunc_where, X, 1.0 + 16 + 81),
    (preallocated_loop, X, None),
]


@pytest.mark.parametrize("f, x, expected", CASES, ids=[c[0].__name__ for c in CASES])
def test_writes_into_a_buffer_are_followed(f, x, expected):
    value, grad = check(f, x)
    if expected is not None:
        assert value == pytest.approx(expected)


def test_known_gradients():
    np.testing.assert_allclose(on_tape(view_imul, X)[1], [2.0, 36.0, 54.0])
    np.testing.assert_allclose(on_tape(fill, X)[1], [1.0, 1.0, 1.0])
    np.testing.assert_allclose(on_tape(column_imul, M)[1], 2 * M)


def test_a_view_returned_as_the_target():
    x = sg.Variable(X)
    with sg.GradientTape() as tape:
        out = np.zeros((2, 3))
        row = out[1]
        out[1] = x * x          # after the view was taken: the target reads it
    np.testing.assert_allclose(tape.gradient(row, x).numpy(), 2 * X)


def test_op_by_op_fallback_of_sg_grad():
    def f(x):
        try:                    # (try/except: the compiler refuses it, sg.grad runs it op by op)
            out = np.zeros(3)
            out[:] = x
            v = out[1:]
            v *= 3.0
            out[0] *= x[1]
        except KeyError:
            pass
        return np.sum(out ** 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        value, grad = sg.value_and_grad(f)(X)
    assert value == pytest.approx(f(X)) and value == pytest.approx(4.0 + 36 + 81)
    np.testing.assert_allclose(grad, fd_grad(f, X), rtol=1e-6)


def test_reads_of_a_buffer_after_the_tape_are_its_values():
    x = sg.Variable(X)
    with sg.GradientTape():
        out = np.zeros((2, 3))
        out[0] = x
        v = out[0]
        v *= 2.0
    np.testing.assert_array_equal(np.asarray(out), [[2.0, 4.0, 6.0], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(out[0] + 1.0, [3.0, 5.0, 7.0])


# ------------------------------------------------------------------ writes that are refused

def _sort(x):
    out = np.zeros(3)
    out[:] = x
    out.sort()


def _put(x):
    out = np.zeros(3)
    out[:] = x
    np.put(out, [0], 1.0)


def _putmask(x):
    out = np.zeros(3)
    np.putmask(out, np.array([True, False, True]), x)


def _multiply_at(x):
    out = np.zeros(3)
    out[:] = x
    np.multiply.at(out, [0, 0], 2.0)      # (np.add.at and np.subtract.at are recorded: test_ufunc_at.py)


def _into_transpose(x):
    out = np.zeros((3, 2))
    out.T[0] = x


def _into_reshape(x):
    out = np.zeros((3, 1))
    r = out.reshape(3)
    r *= x


def _method_partition(x):
    out = np.zeros(3)
    out[0] = x[0]
    out.partition(1)


REFUSED = [
    (_sort, r"out\.sort\(\.\.\.\).*np\.sort"),
    (_put, r"np\.put\(a, \.\.\.\).*unravel_index"),
    (_putmask, r"np\.putmask\(a, \.\.\.\).*np\.where\(mask, values, a\)"),
    (_multiply_at, r"np\.multiply\.at\(a, \.\.\.\).*a\[i\[k\]\] = np\.multiply\(a\[i\[k\]\], v\[k\]\)"),
    (_into_transpose, r"writing into out\.transpose\(\.\.\.\).*out\[i, j\] = v"),
    (_into_reshape, r"writing into out\.reshape\(\.\.\.\).*out\[i, j\] = v"),
    (_method_partition, r"out\.partition\(\.\.\.\).*np\.partition"),
]


@pytest.mark.parametrize("f, message", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_writes_not_followed_raise(f, message):
    x = sg.Variable(X)
    with sg.GradientTape():
        with pytest.raises(TypeError, match=message) as info:
            f(x)
    assert "not followed" in str(info.value)


def test_in_place_methods_on_plain_values_run_as_numpys():
    x = sg.Variable(X)
    with sg.GradientTape() as tape:
        out = np.zeros(3)
        out[:] = [3.0, 1.0, 2.0]
        out.sort()              # no Tensor in it: NumPy's sort
        np.put(out, [0], 5.0)
        y = np.sum(out * x)
    np.testing.assert_array_equal(np.asarray(out), [5.0, 2.0, 3.0])
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [5.0, 2.0, 3.0])


def test_in_place_update_of_a_plain_array_names_the_line():
    """`a[:, j] *= t` into an array allocated before the tape (not followed):
    the message names the operation and the user's line, and the fix."""
    before = np.ones((2, 2))
    x = sg.Variable(M)
    with sg.GradientTape():
        a = before.copy()
        with pytest.raises(TypeError) as info:
            a[:, 0] *= x[:, 0]
    message = str(info.value)
    assert "np.multiply" in message and "`a[:, 0] *= x[:, 0]`" in message
    assert "test_buffers_inplace.py:%d" % info.traceback[-1].lineno in message or \
        "test_buffers_inplace.py:%d" % (info.traceback[-1].lineno + 1) in message
    assert "a = a * t" in message and "out=" in message


# ------------------------------------------------------------------ SciPy imported by name in another module

def test_scipy_function_imported_by_name_in_another_module(tmp_path, monkeypatch):
    pytest.importorskip("scipy")
    (tmp_path / "srcgrad_test_lib_lse.py").write_text(textwrap.dedent("""
        import numpy as np
        from scipy.special import logsumexp
        def loss(w):
            return logsumexp(w * 2.0) + np.sum(w)
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    import srcgrad_test_lib_lse as lib
    try:
        w = np.array([0.1, 0.5, -0.3])
        p = np.exp(2 * w) / np.sum(np.exp(2 * w))
        v = sg.Variable(w)
        with warnings.catch_warnings():
            warnings.simplefilter("error", sg.GradientPathWarning)
            with sg.GradientTape() as tape:
                y = lib.loss(v)
            g = tape.gradient(y, v)
        np.testing.assert_allclose(g.numpy(), 2 * p + 1, rtol=1e-12)
        np.testing.assert_allclose(g.numpy(), fd_grad(lib.loss, w), rtol=1e-6)
        import scipy.special
        assert lib.logsumexp is scipy.special.logsumexp      # (restored after the tape)
    finally:
        sys.modules.pop("srcgrad_test_lib_lse", None)
