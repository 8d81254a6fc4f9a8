"""Issue 16, "inputs and outputs": list and tuple arguments, lists of
parameters handed to scipy.integrate.odeint, and functions returning a tuple,
a dict or a list.

* `test_sequence_argument`: `sg.grad(f)([0.31, 0.77])` (and a tuple) must be
  the gradient, by central differences of f on the same values as an array.
  Accepted: an array of shape (2,), or a list/tuple of two scalars (as
  autograd returns for a list input), or a TypeError naming the list/tuple
  argument (not raised inside generated code). Zeros fail. Through sg.grad,
  sg.value_and_grad, sg.jvp (tangent a list) and @sg.function on a list of
  watched scalar Tensors in a GradientTape.
* `test_odeint_list_of_layer_parameters`: autograd's neural-ODE example
  (`odeint(nn_predict, y0, t, tuple((params,)))`, params a list of (W, b)),
  against central differences and autograd's odeint.
* `sg.grad` of a function returning a tuple must raise TypeError as
  sg.value_and_grad does; with `has_aux=True` it returns (grads, aux) as in
  JAX (value_and_grad: ((value, aux), grads)); a dict output raises a clear
  TypeError; a list output: sg.grad raises a clear TypeError, sg.jacobian
  returns the Jacobian (stacked rows or a list of rows) or a clear TypeError,
  sg.jvp returns the right tangents, and the tape gradient of the returned
  list (a list of targets is summed, as in TF) is the gradient of the sum.
"""
import functools

import autograd
import autograd.builtins
import autograd.numpy as anp
import numpy as np
import pytest
from autograd.scipy.integrate import odeint as ag_odeint
from scipy.integrate import odeint

import srcgrad as sg
from system_support import close, fd_grad, params, raised_in_generated_code, short_traceback

P = [0.31, 0.77]


def sum_sin(p):
    return np.sum(np.sin(p))


def dot_self(p):
    return np.dot(p, p)


def prod_tanh(p):
    return np.prod(np.tanh(p))


def square_plus_mean(p):
    return np.sum(np.square(p)) + np.mean(p)


def via_array(p):
    return np.sum(np.array(p) ** 2)


def unpacked(p):
    a, b = p
    return a * b + np.sin(a)


def looped(p):
    s = 0.0
    for v in p:
        s = s + v * v
    return s


def dot_in_loop(p):
    """Beyond the issue's list (found by the fuzzer): the list passed whole to
    np.dot inside a loop: sg.grad crashes in generated code."""
    x = np.stack(p)
    a = x * 1.0
    for k in range(2):
        a = a + 0.1 * np.dot(p, p)
    return np.sum(a * x)


def local_list_square(p):
    """A list built in the function and read whole by np.square (its rule's
    template multiplies the primal: 2.0 * q) and np.sin, then by element."""
    q = [p[0], p[1] * 2.0]
    return np.sum(np.square(q) * np.sin(q)) + q[1] * 0.5


def asarray_first(p):
    """The defensive first line `p = np.asarray(p)` (np.asarray has a rule)."""
    p = np.asarray(p)
    return np.sum(p ** 2 * np.cos(p))


def whole_in_loop(p):
    """The list read whole by np.square inside a loop over its own elements."""
    s = 0.0
    for v in p:
        s = s + np.sum(np.square(p)) * v
    return s


SEQ = {f.__name__: f for f in [sum_sin, dot_self, prod_tanh, square_plus_mean, dot_in_loop, via_array, unpacked,
                               looped, local_list_square, asarray_first, whole_in_loop]}
SEQ_MODES = ("grad", "value_and_grad", "jvp", "tape")


def check_sequence_gradient(g, expected):
    """An array (2,), or a list/tuple of 2 scalars, equal to `expected`."""
    if isinstance(g, (list, tuple)):
        assert len(g) == 2 and all(np.ndim(e) == 0 for e in g), g
        g = [float(np.asarray(e.numpy() if isinstance(e, sg.Tensor) else e)) for e in g]
    close(g, expected, what="gradient for a sequence argument")


def sequence_derivative(mode, fn, arg):
    if mode == "grad":
        return sg.grad(fn)(arg)
    if mode == "value_and_grad":
        value, g = sg.value_and_grad(fn)(arg)
        close(value, fn(arg), rtol=1e-12, atol=1e-12, what="value")
        return g
    if mode == "jvp":
        return sg.jvp(fn, (arg,), (type(arg)([1.0, 0.0]),))[1]
    ts = type(arg)(sg.constant(v) for v in arg)
    with sg.GradientTape() as tape:
        tape.watch(list(ts))
        y = sg.function(fn)(ts)
    return tape.gradient(y, list(ts))


IO = "io: "
BROKEN_SEQ, RAISES_SEQ = {}, {}


@pytest.mark.parametrize("kind", [list, tuple], ids=["list", "tuple"])
@pytest.mark.parametrize("name, mode", params(SEQ, SEQ_MODES, BROKEN_SEQ, RAISES_SEQ))
@short_traceback
def test_sequence_argument(name, mode, kind):
    fn = SEQ[name]
    expected = fd_grad(fn, np.array(P))
    try:
        g = sequence_derivative(mode, fn, kind(P))
    except TypeError as exc:
        if raised_in_generated_code(exc) or not any(w in str(exc).lower() for w in ("list", "tuple")):
            raise
        return      # a clear refusal
    if mode == "jvp":
        close(g, expected[0], what="jvp along [1, 0]")
    else:
        check_sequence_gradient(g, expected)


@pytest.mark.parametrize("name", ["local_list_square", "asarray_first", "whole_in_loop", "square_plus_mean"])
@short_traceback
def test_sequence_read_whole_second_order(name):
    """The Hessian of a function of an array that makes the list inside (the
    list read whole as one array at second order), against autograd."""
    fn = SEQ[name]
    x = np.array(P)
    ag = {"local_list_square": lambda p: anp.sum(anp.square(anp.array([p[0], p[1] * 2.0])) *
                                                 anp.sin(anp.array([p[0], p[1] * 2.0]))) + p[1],
          "asarray_first": lambda p: anp.sum(p ** 2 * anp.cos(p)),
          "whole_in_loop": lambda p: anp.sum(anp.square(p)) * (p[0] + p[1]),
          "square_plus_mean": lambda p: anp.sum(anp.square(p)) + anp.mean(p)}[name]
    close(sg.hessian(lambda v: fn([v[0], v[1]]))(x), autograd.hessian(ag)(x), what="Hessian")


# ------------------------------------------------------------------ odeint with a list of layers

def nn_predict(inputs, t, params):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs


def ode_pred(params, y0, t):
    return odeint(nn_predict, y0, t, tuple((params,)), rtol=1e-10, atol=1e-10)


Y0 = np.array([1.0, 0.0])
T = np.array([0.0, 0.5, 1.0])


def ode_loss(W1, b1, W2, b2):
    ys = ode_pred([(W1, b1), (W2, b2)], Y0, T)
    return np.sum(ys ** 2)


def ag_nn_predict(inputs, t, params):
    for W, b in params:
        outputs = anp.dot(inputs, W) + b
        inputs = anp.tanh(outputs)
    return outputs


def ag_ode_loss(params):
    """autograd's example: the list of layers is the differentiated argument, as a whole."""
    ys = ag_odeint(ag_nn_predict, Y0, T, autograd.builtins.tuple((params,)), rtol=1e-10, atol=1e-10)
    return anp.sum(ys ** 2)


def ode_params():
    rs = np.random.RandomState(0)
    return [0.5 * rs.randn(2, 3), 0.1 * rs.randn(3), 0.5 * rs.randn(3, 2), 0.1 * rs.randn(2)]


@functools.lru_cache(maxsize=None)
def ode_oracles():
    args = ode_params()
    # solver noise ~ 1e-10 relative: a step of 1e-4 keeps it below 1e-6 of the derivative
    fd = [fd_grad(lambda v, i=i: ode_loss(*(args[:i] + [v] + args[i + 1:])), args[i], eps=1e-4) for i in range(4)]
    (gW1, gb1), (gW2, gb2) = autograd.grad(ag_ode_loss)([(args[0], args[1]), (args[2], args[3])])
    return args, fd, [gW1, gb1, gW2, gb2]


@short_traceback
def test_odeint_oracles_agree():
    """Independently of srcgrad: autograd's adjoint odeint and central
    differences agree (to the solver's accuracy)."""
    _, fd, ag = ode_oracles()
    for a, b in zip(ag, fd):
        close(a, b, rtol=1e-5, atol=1e-6)


@short_traceback
def test_odeint_list_of_layer_parameters():
    args, fd, ag = ode_oracles()
    args = [a.copy() for a in args]
    grads = sg.grad(ode_loss, wrt=(0, 1, 2, 3))(*args)
    for g, e, a in zip(grads, fd, ag):
        close(g, e, rtol=1e-5, atol=1e-6, what="against central differences")
        close(g, a, rtol=1e-6, atol=1e-8, what="against autograd")


def ode_loss_list(params):
    return np.sum(ode_pred(params, Y0, T) ** 2)


@short_traceback
def test_odeint_list_argument():
    args, fd, _ = ode_oracles()
    args = [a.copy() for a in args]
    grads = sg.grad(ode_loss_list)([(args[0], args[1]), (args[2], args[3])])
    flat = [grads[0][0], grads[0][1], grads[1][0], grads[1][1]]
    for g, e in zip(flat, fd):
        close(g, e, rtol=1e-5, atol=1e-6, what="against central differences")


# ------------------------------------------------------------------ outputs

X = np.array([0.3, 0.7])


def two_outputs(x):
    return np.sum(x ** 2), x.mean()


def dict_output(x):
    return {"a": np.sum(x ** 2)}


def list_output(x):
    return [x[0] * x[1], np.sin(x[1])]


def list_jacobian(x):
    """d list_output / dx, by hand: rows d(x0 x1) and d sin(x1)."""
    return np.array([[x[1], x[0]], [0.0, np.cos(x[1])]])


def clear_type_error(thunk, words):
    """thunk raises a TypeError that names the problem (one of `words`), not from generated code."""
    with pytest.raises(TypeError) as info:
        thunk()
    assert not raised_in_generated_code(info.value), "TypeError from inside generated code: %s" % info.value
    assert any(w in str(info.value).lower() for w in words), str(info.value)


@short_traceback
def test_grad_of_tuple_output_raises():
    try:
        g = sg.grad(two_outputs)(X)
    except TypeError as exc:
        assert "output" in str(exc) or "returns" in str(exc), str(exc)
        return
    raise AssertionError("sg.grad of a two-output function returned %r instead of raising TypeError" % (g,))


@short_traceback
def test_value_and_grad_of_tuple_output_raises():
    clear_type_error(lambda: sg.value_and_grad(two_outputs)(X), ("output", "returns"))


@short_traceback
def test_grad_has_aux():
    grads, aux = sg.grad(two_outputs, has_aux=True)(X)
    close(grads, fd_grad(lambda v: two_outputs(v)[0], X))
    close(aux, X.mean(), rtol=1e-12, atol=1e-12)


@short_traceback
def test_value_and_grad_has_aux():
    (value, aux), grads = sg.value_and_grad(two_outputs, has_aux=True)(X)
    close(value, np.sum(X ** 2), rtol=1e-12, atol=1e-12)
    close(aux, X.mean(), rtol=1e-12, atol=1e-12)
    close(grads, fd_grad(lambda v: two_outputs(v)[0], X))


@short_traceback
def test_grad_of_dict_output_raises():
    clear_type_error(lambda: sg.grad(dict_output)(X), ("output", "returns", "dict"))


@short_traceback
def test_value_and_grad_of_dict_output_raises():
    clear_type_error(lambda: sg.value_and_grad(dict_output)(X), ("output", "returns", "dict"))


@short_traceback
def test_grad_of_list_output_raises():
    clear_type_error(lambda: sg.grad(list_output)(X), ("output", "returns", "list"))


@short_traceback
def test_jacobian_of_list_output():
    """The Jacobian (stacked, or a list of rows), or a clear TypeError."""
    try:
        J = sg.jacobian(list_output)(X)
    except TypeError as exc:
        assert not raised_in_generated_code(exc)
        assert "output" in str(exc) or "returns" in str(exc), str(exc)
        return
    if isinstance(J, (list, tuple)):
        J = np.stack([np.asarray(r) for r in J])
    close(J, list_jacobian(X))


@short_traceback
def test_jvp_of_list_output():
    v = np.array([1.0, 2.0])
    primal, tangent = sg.jvp(list_output, (X,), (v,))
    close(np.stack([np.asarray(p) for p in primal]), np.array(list_output(X)), rtol=1e-12, atol=1e-12)
    if isinstance(tangent, (list, tuple)):
        tangent = np.stack([np.asarray(t) for t in tangent])
    close(tangent, list_jacobian(X) @ v)


@short_traceback
def test_tape_gradient_of_list_output():
    """(@sg.function returning a list gave np.float64s, not Tensors: the tape
    recorded nothing.)"""
    xt = sg.constant(X)
    with sg.GradientTape() as tape:
        tape.watch(xt)
        ys = sg.function(list_output)(xt)
    assert all(isinstance(y, sg.Tensor) for y in ys), [type(y) for y in ys]
    close(tape.gradient(ys, xt), list_jacobian(X).sum(axis=0))


@short_traceback
def test_tape_gradient_of_tuple_output():
    """Control: a tuple output is recorded, and the targets are summed."""
    xt = sg.constant(X)
    with sg.GradientTape() as tape:
        tape.watch(xt)
        ys = sg.function(two_outputs)(xt)
    close(tape.gradient(list(ys), xt), 2 * X + 0.5)


def square_of_a_display(v):
    """A list display read whole by np.square (its rule's template multiplies
    the primal: 2.0 * [x, y] would repeat the list)."""
    x, y = v[0], v[1]
    return np.sum(np.square([x, y * 2.0]) * np.sin([y, x]))


@short_traceback
def test_list_display_read_whole():
    x = np.array(P)
    g = sg.grad(square_of_a_display)(x)
    close(g, fd_grad(square_of_a_display, x), what="against central differences")
    close(g, autograd.grad(lambda v: anp.sum(anp.square(anp.array([v[0], v[1] * 2.0])) *
                                             anp.sin(anp.array([v[1], v[0]]))))(x), what="against autograd")


@short_traceback
def test_nested_list_of_tensors_on_a_tape():
    """np.asarray / np.array of a nested list of watched Tensors is recorded
    (each leaf gets its entry of the cotangent)."""
    a, b = sg.constant(0.3), sg.constant(0.5)
    with sg.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        z = np.sum(np.asarray([[a, b], [b, a * 3.0]]) ** 2)
        w = np.sum(np.array([[a], [b]]) * np.array([[1.0], [2.0]]))
    close([float(g) for g in tape.gradient(z, [a, b])], [2 * 0.3 + 18 * 0.3, 4 * 0.5])
    close([float(g) for g in tape.gradient(w, [a, b])], [1.0, 2.0])


# -- containers through jvp, and gradients of containers differentiated again

RAGGED = [np.array([[0.3, -0.7, 1.1], [0.5, 0.2, -0.4]]), np.array([0.9, -1.3, 0.25, 0.6]), np.array([1.5, -0.5])]


def two_of_three(L):
    return np.sum(np.sin(L[0])) + np.sum(np.cos(L[1]) * L[1])


def a_two_of_three(L):
    return anp.sum(anp.sin(L[0])) + anp.sum(anp.cos(L[1]) * L[1])


def _ragged_tangent(seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(np.shape(a)) for a in RAGGED]


def _fd_along(f, xs, vs, eps=1e-6):
    plus = f([x + eps * v for x, v in zip(xs, vs)])
    minus = f([x - eps * v for x, v in zip(xs, vs)])
    if isinstance(plus, (list, tuple)):
        return [(p - m) / (2 * eps) for p, m in zip(plus, minus)]
    return (plus - minus) / (2 * eps)


@short_traceback
def test_jvp_of_a_ragged_list_argument():
    """sg.jvp with a list of arrays of different shapes as a primal and a
    list as its tangent (np.asarray of the list raised ValueError)."""
    v = _ragged_tangent(0)
    out, t = sg.jvp(two_of_three, (RAGGED,), (v,))
    close(out, two_of_three(RAGGED), rtol=1e-14)
    close(t, _fd_along(two_of_three, RAGGED, v), what="against central differences")
    ag = sum(np.sum(g * vi) for g, vi in zip(autograd.grad(a_two_of_three)(RAGGED), v))
    close(t, ag, rtol=1e-12, what="against autograd")


def grad_of_two_of_three(L):
    return sg.grad(two_of_three)(L)


@short_traceback
def test_jvp_of_the_gradient_of_a_list():
    """Forward over reverse of a list argument: the gradient is a list with
    zeros for the element the function does not read (it was None in
    compiled code, and its tangent an object array)."""
    v = _ragged_tangent(1)
    g, t = sg.jvp(grad_of_two_of_three, (RAGGED,), (v,))
    assert isinstance(g, list) and isinstance(t, list) and len(g) == len(t) == 3
    for gi, ti, a in zip(g, t, RAGGED):
        assert np.shape(gi) == np.shape(ti) == np.shape(a)
    close(g[2], np.zeros(2), atol=0, what="the unread element's gradient")
    close(t[2], np.zeros(2), atol=0, what="its tangent")
    hvp = autograd.grad(lambda L: sum(anp.sum(gi * vi) for gi, vi in zip(autograd.grad(a_two_of_three)(L), v)))
    for ti, ei in zip(t, hvp(RAGGED)):
        close(ti, ei, rtol=1e-12, what="against autograd's Hessian-vector product")


def sum_sin_of_inner_gradient(x):
    """autograd's test_tuple.py::test_nested_higher_order: sg.grad of a local
    function of a tuple holding x twice, inside differentiated code."""
    def inner(y):
        return y[0] * y[1]
    return np.sum(np.sin(np.array(sg.grad(inner)((x, x)))))


@short_traceback
def test_gradient_of_a_tuple_holding_one_value_twice():
    """The same Tensor at two places of a tuple is two arguments: the op-by-op
    gradient watched it once (both elements got the sum, 2x instead of x),
    and the compiled gradient of a tuple of Tensors read the elements as
    Variables (zeros)."""
    import warnings
    x = 5.0
    expected = 2 * np.cos(x)       # d/dx 2 sin(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        close(sg.grad(sum_sin_of_inner_gradient)(x), expected, rtol=1e-12, what="sg.grad")
        value, t = sg.jvp(sum_sin_of_inner_gradient, (x,), (1.0,))
        close(value, 2 * np.sin(x), rtol=1e-14)
        close(t, expected, rtol=1e-12, what="sg.jvp")
    xt = sg.constant(x)
    with sg.GradientTape() as tape:
        tape.watch(xt)
        g = sg.grad(lambda y: y[0] * y[1])((xt, xt))
        s = g[0] * 2.0 + g[1]
    close([float(e) for e in g], [x, x], rtol=1e-14, what="the inner gradient on the tape")
    close(tape.gradient(s, xt), 3.0, rtol=1e-14, what="its derivative")
    with sg.ForwardAccumulator(xt, 1.0) as acc:
        g = sg.grad(lambda y: y[0] * y[1])((xt, xt))
    close([float(e) for e in g], [x, x], rtol=1e-14)
    close([float(acc.jvp(e)) for e in g], [1.0, 1.0], rtol=1e-14, what="tangents in an accumulator")


# -- dict.get, and dicts through forward over reverse

def get_or_default(d, x):
    return d.get("item_1", x) ** 3 + np.sin(d.get("absent", x)) * 3.0


def a_get_or_default(a, x):
    return a ** 3 + anp.sin(x) * 3.0


@short_traceback
def test_dict_get_compiled_at_first_and_second_order():
    """d.get(key, default): the cotangent reaches the entry returned (the
    key's, or the default's). First order against autograd (on the same
    function spelled with the entry as an argument), second order (the
    gradient of a function of the gradient) too; compiled, no fallback."""
    import warnings
    d, x = {"item_1": 3.0}, 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        gd, gx = sg.grad(get_or_default, wrt=(0, 1))(d, x)
        close(gd["item_1"], autograd.grad(a_get_or_default, 0)(3.0, x), rtol=1e-12)
        close(gx, autograd.grad(a_get_or_default, 1)(3.0, x), rtol=1e-12)
        g = sg.grad(get_or_default, wrt=(0, 1))

        def combined(dd, xx):
            a, b = g(dd, xx)
            return a["item_1"] * 2.0 + b

        h = sg.grad(combined, wrt=(0, 1))(d, x)

        def a_combined(a, xx):
            return autograd.grad(a_get_or_default, 0)(a, xx) * 2.0 + autograd.grad(a_get_or_default, 1)(a, xx)
        close(h[0]["item_1"], autograd.grad(a_combined, 0)(3.0, x), rtol=1e-12)
        close(h[1], autograd.grad(a_combined, 1)(3.0, x), rtol=1e-12)
        _, t = sg.jvp(combined, (d, x), ({"item_1": 1.0}, 0.5))
        close(t, autograd.grad(a_combined, 0)(3.0, x) + 0.5 * autograd.grad(a_combined, 1)(3.0, x), rtol=1e-12)


def sin_cos_of_entries(D):
    return np.sum(np.sin(D["item_1"])) + np.sum(np.cos(D["item_2"]))


def scaled_entries(E, w):
    return sin_cos_of_entries(E) * w


GRAD_SCALED = sg.grad(scaled_entries)


def gradient_of_entries(D, u):
    return GRAD_SCALED(D, u)


def gradient_of_entries_op_by_op(D, u):
    return sg.grad(lambda E, w: sin_cos_of_entries(E) * w)(D, u)       # (a call of an expression: op by op)


@short_traceback
def test_jvp_of_the_gradient_of_a_dict():
    """Forward over reverse with a dict argument: the tangent is a dict with
    zeros for the entry the function does not read (it was a scalar)."""
    rng = np.random.default_rng(3)
    D = {"item_1": rng.normal(size=(2, 3)), "item_2": rng.normal(size=4), "item_X": rng.normal(size=2)}
    T = {k: rng.normal(size=np.shape(v)) for k, v in D.items()}
    eps = 1e-6
    plus = gradient_of_entries({k: D[k] + eps * T[k] for k in D}, 1.0 + 0.5 * eps)
    minus = gradient_of_entries({k: D[k] - eps * T[k] for k in D}, 1.0 - 0.5 * eps)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        for fn in (gradient_of_entries, gradient_of_entries_op_by_op):
            g, t = sg.jvp(fn, (D, 1.0), (T, 0.5))
            assert isinstance(t, dict) and set(t) == set(D)
            close(t["item_X"], np.zeros(2), atol=0)
            for k in D:
                close(t[k], (plus[k] - minus[k]) / (2 * eps), what="%s: entry %s against central differences"
                      % (fn.__name__, k))
