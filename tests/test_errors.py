"""Bad input: clear errors naming the user's file and line, and nothing left
half-done (the tape, the caches and other functions keep working)."""
import os

import numpy as np
import pytest

import srcgrad as sg
from srcgrad.errors import ResolutionError, SourceNotFoundError
from gradcheck import check_close

THIS_FILE = os.path.basename(__file__)


def line_of(func, text):
    import inspect
    lines, start = inspect.getsourcelines(func)
    for i, line in enumerate(lines):
        if text in line:
            return start + i
    raise AssertionError(text)


def uses_undefined(x):
    return np.sum(x * undefined_scale)  # noqa: F821


def shape_mismatch(x, W):
    h = np.tanh(x @ W)
    return np.sum(h)


def good(x):
    return np.sum(np.sin(x) * x)


def test_unresolvable_name_names_file_line_and_name():
    with pytest.raises(ResolutionError) as info:
        sg.grad(uses_undefined)(np.ones(3))
    message = str(info.value)
    assert "undefined_scale" in message and THIS_FILE in message
    assert str(line_of(uses_undefined, "undefined_scale")) in message
    check_close(sg.grad(good)(np.ones(3)), np.cos(1.0) + np.sin(1.0) + np.zeros(3))


def test_function_without_source():
    namespace = {}
    exec("def made_by_exec(x):\n    return x * 2\n", {"np": np}, namespace)
    with pytest.raises(SourceNotFoundError, match="made_by_exec"):
        sg.source(namespace["made_by_exec"])
    # differentiated, it runs op by op on the tape (op_by_op.py), with a PerformanceWarning
    f = sg.function(namespace["made_by_exec"])
    x = sg.Variable(np.ones(3))
    with pytest.warns(sg.PerformanceWarning, match="made_by_exec"):
        with sg.GradientTape() as tape:
            y = f(x)
    check_close(tape.gradient(y, x).numpy(), 2.0 * np.ones(3))
    with pytest.warns(sg.PerformanceWarning):
        check_close(sg.grad(namespace["made_by_exec"])(np.ones(3)), 2.0 * np.ones(3))


def test_error_inside_generated_code_points_at_the_users_line():
    x = sg.constant(np.ones((2, 3)))
    f = sg.function(shape_mismatch)
    with sg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        with pytest.raises(ValueError) as info:
            f(x, np.ones((4, 2)))          # 3 != 4: the user's shapes are wrong
        y = f(x, np.ones((3, 2)))           # the same function still works
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert THIS_FILE in notes and str(line_of(shape_mismatch, "h = np.tanh")) in notes
    assert "h = np.tanh(x @ W)" in notes
    g = tape.gradient(y, x)
    check_close(g.numpy(), (1 - np.tanh(np.ones((2, 3)) @ np.ones((3, 2))) ** 2) @ np.ones((2, 3)))


def test_unsupported_syntax_error_is_a_syntax_error_with_location():
    def local_with(x):
        with np.errstate(all="ignore"):
            return x * 2

    with pytest.raises(sg.UnsupportedSyntaxError) as info:
        sg.source(local_with)
    with pytest.warns(sg.PerformanceWarning, match="a return inside a with block"):
        check_close(sg.grad(local_with)(np.ones(2)), 2.0 * np.ones(2))
    err = info.value
    assert isinstance(err, SyntaxError)
    assert err.construct == "a return inside a with block"
    assert err.filename.endswith(THIS_FILE) and err.lineno == line_of(local_with, "return x * 2")
    assert "return x * 2" in str(err)


def test_grad_rejects_out_of_range_wrt():
    with pytest.raises(ValueError, match="wrt"):
        sg.grad(good, wrt=(1,))(np.ones(3))


@pytest.mark.parametrize("wrt", ["x", ("x",), 0.5, (0, "y"), True])
def test_wrt_must_be_indices(wrt):
    """A parameter's name (or anything but indices) is a TypeError saying
    so, for grad, the Jacobians and the tools, before anything runs."""
    def f(x, y):
        return np.sum(x * y)
    for make in (sg.grad, sg.value_and_grad, sg.jacobian, sg.hessian):
        with pytest.raises(TypeError, match="wrt must be a positional index"):
            make(f, wrt=wrt)(np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="wrt must be a positional index"):
        sg.explain(f, np.ones(2), np.ones(2), wrt=wrt)


def test_grad_of_a_complex_output_is_a_type_error():
    """As autograd's and JAX's grad: a complex output raises TypeError (a
    real function of it is differentiated, Wirtinger/TF's convention)."""
    def f(x):
        return np.sum(np.exp(1j * x))

    def g(z):
        return np.sum(np.abs(z) ** 2)
    with pytest.raises(TypeError, match="real-valued output"):
        sg.grad(f)(np.array([0.1, 0.2]))
    with pytest.raises(TypeError, match="real-valued output"):
        sg.value_and_grad(f)(np.array([0.1, 0.2]))
    z = np.array([1 + 2j, 0.5j])
    check_close(sg.grad(g)(z), 2 * z)          # TF's convention: 2z for |z|^2
    check_close(sg.grad(lambda x: np.real(f(x)))(np.array([0.1, 0.2])), -np.sin([0.1, 0.2]))


def test_variable_target_and_bad_sources():
    v = sg.Variable(1.0)
    with sg.GradientTape() as t:
        y = v * 2.0
    with pytest.raises(ValueError):
        t.gradient(y, [v, "not a tensor"])
