"""Issue 11, run-time items: the compiled-function cache frees dropped
functions; a watched Tensor converted to an ndarray inside a recording tape
warns (GradientPathWarning) naming the user's line; second order through
sg.custom_gradient whose grad_fn closes over the forward values; forward
mode around decorated functions; sg.insert_grad_of (compiler support
pending: strict xfails)."""
import gc
import weakref

import numpy as np
import pytest

import srcgrad as sg
from srcgrad.callables import as_function
from gradcheck import check_close, numerical_grad


# --------------------------------------------------------------- the cache

@pytest.fixture
def young_heap():
    """The objects alive before the test moved out of the collector's view
    (gc.freeze), so that a test's gc.collect() scans what the test made,
    not the whole suite's heap (seconds per collection late in a full run).
    Frozen objects still hold what they reference: a cache keeping a
    dropped function alive keeps it alive here too. Left frozen when the
    suite's conftest had frozen the heap already: unfreezing it would make
    the next collection scan everything (10-15 s late in a full run)."""
    was_frozen = gc.get_freeze_count()
    gc.freeze()
    yield
    if not was_frozen:
        gc.unfreeze()


def _collected(refs):
    gc.collect()
    return sum(r() is None for r in refs)


def test_dropped_functions_are_collected_with_their_generated_code(young_heap):
    refs = []
    for _ in range(12):
        def helper(x):
            return np.sin(x) * x

        def f(x):
            return np.sum(helper(x) ** 2)
        check_close(sg.grad(f)(np.ones(3)), numerical_grad(f, np.ones(3)))
        sg.hvp(f)(np.ones(3), np.ones(3))
        fn = as_function(f)
        programs = fn._programs.values()
        compiled = [c for p in programs for c in p._compiled.values()]
        assert compiled
        refs += [weakref.ref(o) for o in [f, helper, fn] + programs + compiled]
        refs += [weakref.ref(c.joint_fn) for c in compiled if hasattr(c, "joint_fn")]
        del f, helper, fn, programs, compiled
    assert _collected(refs) == len(refs)


def test_dropped_decorated_functions_are_collected_after_tape_use(young_heap):
    refs = []
    for _ in range(12):
        @sg.function
        def f(x):
            return np.sum(np.tanh(x) * x)
        x = sg.Variable(np.linspace(0.1, 1.0, 4))
        with sg.GradientTape() as tape:
            y = f(x)
        tape.gradient(y, x)
        refs += [weakref.ref(f), weakref.ref(f.python_function)]
        del f, tape, y
    assert _collected(refs) == len(refs)


def test_generated_source_leaves_linecache_with_its_function(young_heap):
    """Generated lines enter linecache when a traceback goes through them
    (an error in generated code), and leave it with their functions."""
    import linecache
    before = {k for k in linecache.cache if k.startswith("<srcgrad-generated")}

    def f(x):
        return np.sum(np.exp(x) * x @ np.ones((3, 3)))
    with pytest.raises(ValueError) as info:
        sg.grad(f)(np.ones(2))
    assert "test_runtime_items.py" in "".join(getattr(info.value, "__notes__", []))
    del info
    added = {k for k in linecache.cache if k.startswith("<srcgrad-generated")} - before
    assert added
    del f
    gc.collect()
    assert not (added & set(linecache.cache))


def _wrapped_pair():
    import functools

    def inner(x):
        return np.sum(x ** 2)
    sg.grad(inner)(np.ones(2))

    @functools.wraps(inner)         # copies inner.__dict__ (the cached Function) and sets __wrapped__
    def outer(x):
        return np.sum(x ** 3)
    return inner, outer


def test_a_function_copied_by_functools_wraps_is_not_taken_for_its_wrapper():
    inner, outer = _wrapped_pair()
    assert as_function(outer).python_function is outer
    assert as_function(inner).python_function is inner


def test_a_functools_wraps_wrapper_is_differentiated_from_its_own_source():
    """Was silently wrong: inspect.getsourcelines(func) follows __wrapped__,
    so the wrapper was compiled from the wrapped function's source (parse.py
    now reads the code object's)."""
    inner, outer = _wrapped_pair()
    check_close(sg.grad(outer)(np.full(2, 2.0)), np.full(2, 12.0))


def test_programs_per_function_are_bounded_and_evicted_ones_recompile(monkeypatch, young_heap):
    from srcgrad.function import ProgramCache
    monkeypatch.setattr(ProgramCache, "size", 16)      # (the bound is 64: the same logic, fewer compilations)

    @sg.function
    def apply(act, x):
        return np.sum(act(x))
    acts = []
    for k in range(40):
        def act(x, k=k):
            return np.sin(x) * (k + 1.0)
        acts.append(act)
    x0 = np.linspace(0.1, 1.0, 3)
    for k, act in enumerate(acts):
        check_close(sg.grad(apply, wrt=1)(act, x0), (k + 1.0) * np.cos(x0))
    assert len(apply._programs) <= 16
    # the first ones were evicted: compiled again, still right
    check_close(sg.grad(apply, wrt=1)(acts[0], x0), np.cos(x0))
    refs = [weakref.ref(a) for a in acts[1:20]]   # evicted (acts[0] was used again)
    del acts, act
    assert _collected(refs) == len(refs)


# ------------------------------------------- conversions that cut the path

import inspect     # noqa: E402
import warnings    # noqa: E402


def _line_of(marker):
    """The line number in this file of the line holding `marker`."""
    lines = inspect.getsource(inspect.getmodule(_line_of)).splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if marker in line and "_line_of(" not in line]
    assert len(hits) == 1, hits
    return hits[0]


def _cut_asarray(x):
    a = np.sin([x, x])[0]                       # CUT-asarray
    return np.sum(a * x)


def _recorded_asarray(x):
    a = np.asarray(x)                   # recorded: the user's own conversion, as autograd's and JAX's asarray
    b = np.array(x, dtype=np.float64)
    return np.sum(a * b * x)


def test_asarray_of_a_watched_tensor_warns_naming_the_users_function_file_and_line():
    """A list of Tensors reaching NumPy is converted (NumPy does not
    dispatch on a list's elements): the warning names the user's line."""
    x = sg.constant([1.0, 2.0, 3.0])
    with sg.GradientTape() as tape:
        tape.watch(x)
        with pytest.warns(sg.GradientPathWarning) as record:
            y = _cut_asarray(x)
    w = record[0]
    assert w.filename == __file__ and w.lineno == _line_of("# CUT-asarray")
    text = str(w.message)
    assert "_cut_asarray()" in text and "np.sin([x, x])" in text and "shape (3,)" in text
    # the gradient is indeed the one of a * x with a constant: the warning tells why
    check_close(tape.gradient(y, x), np.sin([1.0, 2.0, 3.0]))


def test_asarray_in_user_code_is_recorded():
    """np.asarray / np.array of a watched Tensor in the user's code is
    recorded (tape/scipy_calls.py), without a warning: d/dx sum(x^3) = 3x^2."""
    x = sg.constant([1.0, 2.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.GradientPathWarning)
        with sg.GradientTape() as tape:
            tape.watch(x)
            y = _recorded_asarray(x)
    check_close(tape.gradient(y, x), [3.0, 12.0, 27.0])


def test_a_trainable_variable_converted_before_any_op_warns():
    v = sg.Variable([1.0, 2.0, 3.0])
    with sg.GradientTape() as tape:
        with pytest.warns(sg.GradientPathWarning, match="watched Variable"):
            y = _cut_asarray(v)
    assert tape.gradient(y, v) is not None


def _cut_cases():
    import scipy.ndimage
    return {
        "np.sin of a list": lambda t: np.sin([t[0], t[1]]),
        "np.median of a list": lambda t: np.median([t[0], t[1]]),     # (np.max of a list is recorded)
        "scipy": lambda t: scipy.ndimage.gaussian_filter1d(t * 2.0, 1.0),
    }


# (np.full is recorded now: tape/scipy_calls.py)
@pytest.mark.parametrize("name", ["np.sin of a list", "np.median of a list", "scipy"])
def test_conversions_inside_numpy_and_scipy_name_the_users_line(name):
    fn = _cut_cases()[name]
    x = sg.constant([0.5, 1.5, 2.5])
    with sg.GradientTape() as tape:
        tape.watch(x)
        with pytest.warns(sg.GradientPathWarning) as record:
            fn(x)
    w = record[0]
    assert w.filename == __file__, w.filename
    assert w.lineno == _line_of('"%s": lambda' % name)


def test_error_mode_and_silencing():
    x = sg.constant(2.0)
    with sg.GradientTape() as tape:
        tape.watch(x)
        with warnings.catch_warnings():
            warnings.simplefilter("error", sg.GradientPathWarning)
            with pytest.raises(sg.GradientPathWarning, match="test_runtime_items.py"):
                np.sin([x, x])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.simplefilter("ignore", sg.GradientPathWarning)
            np.sin([x, x])


def test_inside_a_forward_accumulator_the_cut_warns():
    x = sg.constant([1.0, 2.0])
    with sg.ForwardAccumulator(x, [1.0, 0.0]):
        with pytest.warns(sg.GradientPathWarning):
            np.sin([x * 3.0])


@sg.function
def _decorated(x):
    return np.sum(x ** 2 * np.sin(x))


def test_no_false_alarms():
    x = sg.constant([1.0, 2.0, 3.0])
    other = sg.constant([4.0, 5.0])
    ints = sg.constant([1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.asarray(x)                               # no tape
        with sg.GradientTape(persistent=True) as outer:
            outer.watch(x)
            with sg.GradientTape(persistent=True) as tape:
                tape.watch(x)
                y = np.sum(np.sin(x) * x)
                np.asarray(other)                   # a Tensor no tape tracks
                np.asarray(ints * 2)                # integers
                np.asarray(x > 1.0)                 # booleans
                x.numpy(), y.numpy()                # the explicit conversion
                repr(y), str(y), "%s" % y, f"{y}", f"{y:.3f}", format(x), print(x, y)
                float(y), y.item(), x.tolist()
                with tape.stop_recording(), outer.stop_recording():
                    np.asarray(x)
                z = _decorated(x)                   # compiled code converts on purpose
                total = y + z
            g = tape.gradient(total, x)             # at higher order: on Tensors
            tape.jacobian(np.sin(x), x)
        assert outer.gradient(g, x) is not None
        sg.hvp(_plain_loss)(np.ones(3), np.ones(3))
        with sg.ForwardAccumulator(x, np.ones(3)) as acc:
            with sg.GradientTape() as t3:
                t3.watch(x)
                y3 = _decorated(x) + np.sum(x ** 3)
            g3 = t3.gradient(y3, x)
        assert acc.jvp(g3) is not None


def _plain_loss(x):
    return np.sum(x * np.tanh(x))


# -------------------------------- second order through sg.custom_gradient

@sg.custom_gradient
def _log1pexp(x):
    e = np.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))           # closes over e = exp(x)
    return np.log(1 + e), grad


@sg.custom_gradient
def _sigmoid(x):
    y = 1 / (1 + np.exp(-x))

    def grad(dy):
        return dy * y * (1 - y)                 # closes over its own output
    return y, grad


@sg.custom_gradient
def _scaled(x, w):
    p = x * w

    def grad(dy):
        return dy * w * np.cos(p), dy * x * np.cos(p)
    return np.sin(p), grad


def _custom_loss(x):
    return np.sum(_log1pexp(x) * _sigmoid(x) + _scaled(x, x[::-1]))


def _plain_loss_np(x):
    return np.sum(np.log1p(np.exp(x)) / (1 + np.exp(-x)) + np.sin(x * x[::-1]))


_X0 = np.array([0.3, -0.7, 1.2])
_V = np.array([1.0, 0.5, -2.0])


def _fd_hvp(x, v, eps=1e-5):
    """H v by central differences of the (finite-difference) gradient."""
    def g(z):
        return numerical_grad(_plain_loss_np, z, eps=1e-6)
    return (g(x + eps * v) - g(x - eps * v)) / (2 * eps)


def _autograd_hvp(x, v):
    ag = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def f(z):
        return anp.sum(anp.log1p(anp.exp(z)) / (1 + anp.exp(-z)) + anp.sin(z * z[::-1]))
    return ag.grad(lambda z: anp.dot(ag.grad(f)(z), v))(x)


def test_custom_gradient_first_order_is_the_grad_fns():
    x = sg.constant(_X0)
    with sg.GradientTape() as tape:
        tape.watch(x)
        y = _custom_loss(x)
    check_close(tape.gradient(y, x), numerical_grad(_plain_loss_np, _X0))


def test_custom_gradient_hvp_nested_tapes():
    x = sg.constant(_X0)
    with sg.GradientTape() as outer:
        outer.watch(x)
        with sg.GradientTape() as inner:
            inner.watch(x)
            y = _custom_loss(x)
        g = inner.gradient(y, x)
    hv = outer.gradient(g, x, output_gradients=sg.constant(_V))
    check_close(hv, _autograd_hvp(_X0, _V), rtol=1e-8, atol=1e-10)
    check_close(hv, _fd_hvp(_X0, _V), rtol=1e-4, atol=1e-5)


def test_custom_gradient_hvp_forward_over_reverse():
    x = sg.constant(_X0)
    with sg.ForwardAccumulator(x, _V) as acc:
        with sg.GradientTape() as tape:
            tape.watch(x)
            y = _custom_loss(x)
        g = tape.gradient(y, x)
    check_close(acc.jvp(g), _autograd_hvp(_X0, _V), rtol=1e-8, atol=1e-10)


def test_custom_gradient_third_order_nested_tapes():
    """d3/dx3 of log1pexp is sigmoid''(x) = s(1-s)(1-2s)."""
    x = sg.constant(0.4)
    with sg.GradientTape() as t3:
        t3.watch(x)
        with sg.GradientTape() as t2:
            t2.watch(x)
            with sg.GradientTape() as t1:
                t1.watch(x)
                y = _log1pexp(x)
            g1 = t1.gradient(y, x)
        g2 = t2.gradient(g1, x)
    s = 1 / (1 + np.exp(-0.4))
    check_close(g2, s * (1 - s))
    check_close(t3.gradient(g2, x), s * (1 - s) * (1 - 2 * s))


@sg.custom_gradient
def _wraps_a_function_without_rule(x):
    y = np.polymul(x, [3.0])                    # no adjoint rule (np.polymul): 3x

    def grad(dy):
        return dy * y / x
    return y, grad


def test_custom_gradient_body_without_rule_fails_only_at_higher_order():
    x = sg.constant([1.0, 2.0])
    with sg.GradientTape() as tape:
        tape.watch(x)
        y = _wraps_a_function_without_rule(x)
    check_close(tape.gradient(y, x), [3.0, 3.0])
    with sg.ForwardAccumulator(x, [1.0, 1.0]) as acc:
        y = _wraps_a_function_without_rule(x)
    check_close(acc.jvp(y), [3.0, 3.0])
    with pytest.raises(sg.NoRuleError, match="polymul") as info:
        with sg.GradientTape() as outer:
            outer.watch(x)
            with sg.GradientTape() as inner:
                inner.watch(x)
                y = _wraps_a_function_without_rule(x)
            g = inner.gradient(y, x)
        outer.gradient(g, x)
    assert "test_runtime_items.py" in str(info.value)
    with pytest.raises(sg.NoRuleError, match="polymul"):
        with sg.ForwardAccumulator(x, [1.0, 1.0]) as acc:
            with sg.GradientTape() as tape:
                tape.watch(x)
                y = _wraps_a_function_without_rule(x)
            g = tape.gradient(y, x)
        acc.jvp(g)


def test_conversion_inside_a_custom_body_is_recorded_at_higher_order():
    """`a = np.asarray(x)` in a custom_gradient body is recorded like the
    user's other operations (tape/scipy_calls.py), so grad_fn's dependence
    on x is kept: the second derivative of x^3 is 6x, with no warning."""
    @sg.custom_gradient
    def cube(x):
        a = np.asarray(x)

        def grad(dy):
            return dy * 3 * a ** 2
        return x ** 3, grad
    x = sg.constant(2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with sg.GradientTape() as tape:
            tape.watch(x)
            y = cube(x)
        check_close(tape.gradient(y, x), 12.0)
        with sg.GradientTape() as outer:
            outer.watch(x)
            with sg.GradientTape() as inner:
                inner.watch(x)
                y = cube(x)
            g = inner.gradient(y, x)
        check_close(outer.gradient(g, x), 12.0)


# ------------------------------------ forward mode around decorated functions

_W = np.array([[0.5, 0.1], [0.2, 0.3]])


def _fw_loop_int(x, n):
    y = x
    for i in range(n):
        y = np.sin(y) * x + i
    return np.sum(y)


def _fw_zero_init(x, n):
    total = 0
    for i in range(n):
        total = total + x[i] * x[i]
    return total


def _fw_while(x, n):
    while n > 0:
        x = np.sin(x)
        n -= 1
    return np.sum(x)


def _fw_int_first(n, x):
    h = np.zeros(2)
    for i in range(n):
        h = np.tanh(_W @ h + x)
    return np.sum(h)


def _fw_zero_tangent_matmul(A, x):
    h = np.zeros(2)             # a symbolic-zero tangent meets @
    for i in range(2):
        h = A @ h + x
    return np.sum(A @ np.ones(2) * 0.0 + h)


_FORWARD_CASES = [
    ("loop with an int argument", _fw_loop_int, ([0.3, 0.5], 3), 0),
    ("int zero initial value", _fw_zero_init, ([0.3, 0.5, 0.9], 3), 0),
    ("while counting an int down", _fw_while, ([0.3, 0.5], 3), 0),
    ("int first, zero state through @", _fw_int_first, (3, [0.3, 0.5]), 1),
    ("symbolic zero meets @, A active", _fw_zero_tangent_matmul, (_W, [0.3, 0.5]), 0),
    ("symbolic zero meets @, x active", _fw_zero_tangent_matmul, (_W, [0.3, 0.5]), 1),
]


@pytest.mark.parametrize("name,f,args,wrt", _FORWARD_CASES, ids=[c[0] for c in _FORWARD_CASES])
def test_forward_accumulator_around_decorated_functions(name, f, args, wrt):
    args = [np.array(a, dtype=float) if isinstance(a, (list, np.ndarray)) else a for a in args]
    v = np.linspace(1.0, -0.5, args[wrt].size).reshape(args[wrt].shape)

    def along(t):
        a = list(args)
        a[wrt] = args[wrt] + t * v
        return f(*a)
    expected = numerical_grad(lambda t: along(t[0]), np.zeros(1))[0]
    decorated = sg.function(f)
    tensors = [sg.constant(a) if isinstance(a, np.ndarray) else a for a in args]
    with sg.ForwardAccumulator(tensors[wrt], v) as acc:
        y = decorated(*tensors)
    assert acc.jvp(y) is not None
    check_close(acc.jvp(y), expected)
    tangents = [None] * len(args)
    tangents[wrt] = v
    check_close(sg.jvp(f, tuple(args), tuple(tangents))[1], expected)


# ------------------------------------------------------- sg.insert_grad_of

def test_insert_grad_of_outside_compiled_code_raises_clearly():
    x = sg.constant([1.0, -2.0])
    with pytest.raises(RuntimeError, match="only works inside a function srcgrad compiles"):
        with sg.GradientTape() as tape:
            tape.watch(x)
            with sg.insert_grad_of(x) as bx:
                bx = bx * 2
    with pytest.raises(RuntimeError, match="custom_gradient"):
        with sg.insert_grad_of(x):
            pass



def test_insert_grad_of_clips_the_final_adjoint_of_a_parameter():
    def f(x):
        with sg.insert_grad_of(x) as bx:    # at the top: runs last, on the whole gradient
            bx = np.clip(bx, -1.0, 1.0)
        return np.sum(x ** 3)
    x0 = np.array([0.2, -0.9, 1.5])
    check_close(sg.grad(f)(x0), np.clip(3 * x0 ** 2, -1.0, 1.0))
    fd = sg.function(f)
    x = sg.constant(x0)
    with sg.GradientTape() as tape:
        tape.watch(x)
        y = fd(x)
    check_close(tape.gradient(y, x), np.clip(3 * x0 ** 2, -1.0, 1.0))


def test_insert_grad_of_sees_the_adjoint_accumulated_after_the_block():
    seen = []

    def f(x):
        y = x * 2.0
        with sg.insert_grad_of(y) as by:
            seen.append(by)                 # inspect: only the code after the block has run
            by = by * 0.5
        z = np.sin(y)
        return np.sum(z + x)
    x0 = np.array([0.3, 0.7])
    g = sg.grad(f)(x0)
    check_close(seen[-1], np.cos(2 * x0))
    check_close(g, 0.5 * 2.0 * np.cos(2 * x0) + 1.0)


def test_insert_grad_of_in_a_loop_runs_once_per_iteration_in_reverse():
    seen = []

    def f(x, n):
        h = x
        for i in range(n):
            with sg.insert_grad_of(h) as bh:
                seen.append(i)
                bh = bh * 0.5
            h = np.sin(h)
        return np.sum(h)
    x0 = np.array([0.4])
    g = sg.grad(f)(x0, 3)
    h1 = np.sin(x0)
    h2 = np.sin(h1)
    exact = np.cos(h2) * np.cos(h1) * np.cos(x0)
    assert seen == [2, 1, 0]
    check_close(g, exact * 0.5 ** 3)


def test_insert_grad_of_is_skipped_in_the_forward_pass_and_without_tape():
    seen = []

    @sg.function
    def f(x):
        with sg.insert_grad_of(x) as bx:
            seen.append(bx)
        return np.sum(x * x)
    assert float(f(np.array([1.0, 2.0]))) == 5.0       # untransformed call: the block is skipped
    assert "seen" not in sg.source(f, mode="forward")
    assert seen == []


def test_insert_grad_of_body_reads_the_primal_at_its_place():
    """The body reads y as it is at the block, though y is reassigned after."""
    seen = []

    def f(x):
        y = x * 2.0
        with sg.insert_grad_of(y) as by:
            seen.append(y.copy())
            by = by * y
        y = np.sin(y)
        return np.sum(y)
    x0 = np.array([0.3, 0.7])
    check_close(sg.grad(f)(x0), 2.0 * np.cos(2 * x0) * 2 * x0, rtol=1e-12)
    check_close(seen[-1], 2 * x0)
    source = sg.source(f)
    assert "seen.append" in source and "Grad of: with sg.insert_grad_of(y) as by:" in source


def test_insert_grad_of_on_stacks_of_cotangents_runs_per_row():
    """Vectorised Jacobians (sg.jacobian, tape.jacobian) run the body once
    per cotangent: np.clip on each row."""
    def g(x):
        with sg.insert_grad_of(x) as bx:
            bx = np.clip(bx, -1.0, 1.0)
        return x ** 3
    x0 = np.array([0.2, -0.9, 1.5])
    expected = np.diag(np.clip(3 * x0 ** 2, -1.0, 1.0))
    check_close(sg.jacobian(g)(x0), expected, rtol=1e-12)
    x = sg.constant(x0)
    with sg.GradientTape() as tape:
        tape.watch(x)
        y = sg.function(g)(x)
    check_close(tape.jacobian(y, x), expected, rtol=1e-12)


def test_insert_grad_of_body_is_differentiated_at_second_order():
    """The body is generated code like any other: sg.grad(sg.grad(h)) with
    bx = bx * x in the block is d/dx (cos(x) x)."""
    def h(x):
        with sg.insert_grad_of(x) as bx:
            bx = bx * x
        return np.sum(np.sin(x))
    x0 = np.array([0.5, -1.2])
    check_close(sg.grad(h)(x0), np.cos(x0) * x0, rtol=1e-12)
    check_close(sg.grad(lambda v: np.sum(sg.grad(h)(v)))(x0), np.cos(x0) - x0 * np.sin(x0), rtol=1e-12)


def test_insert_grad_of_element_assignment_copies_the_adjoint():
    """bx[0] = 0 in the body acts on a copy: other cotangents that share the
    array are not changed."""
    def f(x):
        y = x * 1.0
        with sg.insert_grad_of(y) as by:
            by[0] = 0.0
        return np.sum(y * y) + np.sum(x)
    x0 = np.array([0.5, -1.5, 2.0])
    check_close(sg.grad(f)(x0), np.array([0.0, 2 * x0[1], 2 * x0[2]]) + 1.0, rtol=1e-12)


@pytest.mark.usefixtures("compiled_only")
def test_insert_grad_of_names_used_outside_the_block_are_rejected():
    def f(x):
        with sg.insert_grad_of(x) as bx:
            scale = 2.0
            bx = bx * scale
        return np.sum(x * scale)
    with pytest.raises(sg.UnsupportedSyntaxError, match="scale, assigned inside an insert_grad_of block"):
        sg.grad(f)


# ------------------- second order through custom_gradient in compiled code

def test_custom_gradient_hvp_and_hessian_through_generated_code():
    expected = _autograd_hvp(_X0, _V)
    check_close(sg.hvp(_custom_loss)(_X0, _V), expected, rtol=1e-8, atol=1e-10)
    check_close(sg.hessian(_custom_loss)(_X0) @ _V, expected, rtol=1e-8, atol=1e-10)


def test_custom_gradient_nested_grads_to_third_order():
    def g(x):
        return _log1pexp(x) * 2.0
    s = 1 / (1 + np.exp(-0.4))
    check_close(sg.grad(sg.grad(g))(0.4), 2 * s * (1 - s))
    check_close(sg.grad(sg.grad(sg.grad(g)))(0.4), 2 * s * (1 - s) * (1 - 2 * s))


def test_custom_gradient_in_a_decorated_function_at_second_order_on_tapes():
    decorated = sg.function(_custom_loss)
    expected = _autograd_hvp(_X0, _V)
    x = sg.constant(_X0)
    with sg.GradientTape() as outer:
        outer.watch(x)
        with sg.GradientTape() as inner:
            inner.watch(x)
            y = decorated(x)
        g = inner.gradient(y, x)
    check_close(outer.gradient(g, x, output_gradients=sg.constant(_V)), expected, rtol=1e-8, atol=1e-10)
    with sg.ForwardAccumulator(x, _V) as acc:
        with sg.GradientTape() as tape:
            tape.watch(x)
            y = decorated(x)
        g = tape.gradient(y, x)
    check_close(acc.jvp(g), expected, rtol=1e-8, atol=1e-10)
