"""Issue 11's Python patterns, through the front end (parse, check, lower,
resolve, anf): lambdas, `with` blocks, starred arguments, function values,
objects built inside the differentiated code, np.r_ / np.c_, and element
assignment to NumPy views.

Every gradient is checked against central finite differences and, where
autograd can run the function (`np` rebound to autograd.numpy in this
module, as tests/test_corpus.py does), against autograd, through `sg.grad`
and through `sg.function` on a GradientTape (`check`). What srcgrad cannot do
raises an error naming the construct, the file and the line. The corpus
(tests/corpus_funcs.py, "issue 11's Python patterns") runs the same patterns
through every path as well.
"""
import contextlib
import dataclasses
import inspect
import linecache
import os
import sys
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad
from srcgrad.errors import SourceNotFoundError

THIS_FILE = os.path.basename(__file__)
RTOL, ATOL = 1e-5, 1e-6            # against finite differences
AG_RTOL, AG_ATOL = 1e-8, 1e-10     # against autograd


@contextlib.contextmanager
def autograd_numpy():
    """`np` -> autograd.numpy in this module (the functions read it as a global)."""
    module = sys.modules[__name__]
    saved = module.np
    module.np = anp
    try:
        yield
    finally:
        module.np = saved


def fd(fn, args, i):
    args = [np.array(a, dtype=np.float64, copy=True) if isinstance(a, np.ndarray) else a for a in args]

    def f(x):
        a = list(args)
        a[i] = x
        return float(np.sum(fn(*[v.copy() if isinstance(v, np.ndarray) else v for v in a])))
    return numerical_grad(f, np.asarray(args[i], dtype=np.float64))


def check(fn, args, wrt=(0,), autograd_ok=True, tape=True):
    """sg.grad and the compiled tape entry against finite differences and
    autograd; the caller's arrays are left as they were."""
    saved = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    expected = [fd(fn, args, i) for i in wrt]
    g = sg.grad(fn, wrt=wrt)(*args)
    g = list(g) if len(wrt) > 1 else [g]
    for gi, e in zip(g, expected):
        check_close(gi, e, RTOL, ATOL)
    if autograd_ok:
        with autograd_numpy():
            ag = autograd.grad(lambda *a: anp.sum(fn(*a)), wrt if len(wrt) > 1 else wrt[0])(*args)
        for gi, a in zip(g, list(ag) if len(wrt) > 1 else [ag]):
            check_close(gi, a, AG_RTOL, AG_ATOL)
    if tape:
        ts = list(args)
        for i in wrt:
            ts[i] = sg.constant(args[i])
        with sg.GradientTape() as t:
            for i in wrt:
                t.watch(ts[i])
            y = sg.function(fn)(*ts)
        gt = t.gradient(y, [ts[i] for i in wrt])
        for gi, e in zip(gt, expected):
            check_close(gi.numpy(), e, RTOL, ATOL)
    for a, s in zip(args, saved):
        if isinstance(s, np.ndarray):
            np.testing.assert_array_equal(a, s, err_msg="an argument was mutated")
    return g


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return start + k
    raise AssertionError(text)


def check_error(excinfo, construct_part, fn, line_text):
    err = excinfo.value
    assert construct_part in str(err), str(err)
    assert os.path.basename(err.filename) == THIS_FILE, err.filename
    assert err.lineno == line_of(fn, line_text), (err.lineno, str(err))


X3 = np.array([0.3, -0.5, 0.8])


@pytest.fixture(autouse=True)
def compiled_only():
    """These tests pin what the compiler does and the refusals it gives:
    with PerformanceWarning as an error, a refusal is raised instead of
    running op by op (op_by_op.py; test_refused_programs_run_op_by_op
    below checks that path)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        yield


# ===========================================================================
# 1. Lambdas
# ===========================================================================

cube, wave = lambda a: np.sum(a ** 3), lambda a: np.sum(np.sin(a) * a)  # noqa: E731
twice_on_a_line = {"sq": lambda u: u * u, "tanh": lambda u: np.tanh(u)}  # noqa: E731
multi_line = lambda a, b: np.sum(  # noqa: E731
    np.exp(-0.5 * (a - b) ** 2) * a)
with_defaults = lambda x, k=2.0, *rest, scale=1.5: np.sum(scale * x ** k)  # noqa: E731


def _make_affine(w, c):
    return lambda x: np.sum(np.tanh(w * x + c))


affine = _make_affine(np.array([0.5, -1.0, 2.0]), 0.25)


def test_two_lambdas_on_one_line_are_told_apart():
    check(cube, [X3])
    check(wave, [X3])
    check_close(sg.grad(cube)(X3), 3 * X3 ** 2)
    check_close(sg.grad(wave)(X3), np.cos(X3) * X3 + np.sin(X3))
    assert "cube" in sg.source(cube) and "wave" in sg.source(wave)


def test_lambdas_in_a_dict_display():
    check(lambda x: np.sum(twice_on_a_line["sq"](x) * twice_on_a_line["tanh"](x)), [X3])
    check_close(sg.grad(lambda x: np.sum(twice_on_a_line["tanh"](x)))(X3), 1 - np.tanh(X3) ** 2)


def test_lambda_spanning_lines_and_of_two_arguments():
    b = np.array([0.1, 0.2, -0.4])
    check(multi_line, [X3, b], wrt=(0, 1))


def test_lambda_with_defaults_rest_and_keyword_only():
    check(with_defaults, [X3])
    check_close(sg.grad(with_defaults)(X3, 3.0), 1.5 * 3 * X3 ** 2)
    check_close(sg.grad(with_defaults)(X3, 2.0, scale=0.5), 0.5 * 2 * X3)


def test_lambda_returned_by_a_factory_reads_its_closure_cells():
    check(affine, [X3])
    w = np.array([0.5, -1.0, 2.0])
    check_close(sg.grad(affine)(X3), w * (1 - np.tanh(w * X3 + 0.25) ** 2))


def test_lambda_default_argument_and_lambda_argument():
    def apply(f, x):
        return f(x) * 2.0

    def outer(x, f=lambda u: np.sin(u) * u):
        return np.sum(apply(f, x))
    check(outer, [X3])


def test_gp_regression_kernel_lambda():
    from programs import gp_regression
    X, y = gp_regression.make_data()

    def gram(ell_amp):
        K = gp_regression.kernel(X, X, ell_amp[0], ell_amp[1])
        return np.sum(K * np.outer(y, y))
    args = [np.array([0.7, 1.3])]
    g = sg.grad(gram)(*args)
    check_close(g, fd(gram, args, 0), RTOL, ATOL)
    saved = gp_regression.np
    gp_regression.np = anp
    try:
        ag = autograd.grad(gram)(*args)
    finally:
        gp_regression.np = saved
    check_close(g, ag, AG_RTOL, AG_ATOL)
    assert "def dkernelda" in sg.source(gp_regression.kernel, wrt=(0,))


def test_lambda_in_a_notebook_cell():
    """IPython registers each cell's source in linecache under the cell's
    file name and compiles the cell with it; a lambda defined there (two on
    a line) is found by its code positions."""
    filename = "<ipython-input-7-frontend-lambda>"
    src = "import numpy as np\nf, g = lambda x: np.sum(x ** 4), lambda x: np.sum(np.exp(x))\n"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = {}
    exec(compile(src, filename, "exec"), namespace)
    check_close(sg.grad(namespace["f"])(X3), 4 * X3 ** 3)
    check_close(sg.grad(namespace["g"])(X3), np.exp(X3))


def test_lambda_without_source_names_itself():
    namespace = {"np": np}
    exec("h = lambda x: np.sum(x * x)", namespace)
    with pytest.raises(SourceNotFoundError, match="lambda"):
        sg.grad(namespace["h"])(X3)


def test_local_lambda_capturing_a_differentiated_value_passed_on_raises():
    def apply(f, x):
        return f(x)

    def passes_closure(x):
        return np.sum(apply(lambda u: u * x, x))  # the lambda reads x
    with pytest.raises(sg.UnsupportedSyntaxError, match="lambda defined inside") as excinfo:
        sg.grad(passes_closure)(X3)
    check_error(excinfo, "lambda", passes_closure, "apply(lambda u")


# ===========================================================================
# 2. with blocks
# ===========================================================================

def log_in_errstate(x):
    with np.errstate(divide="raise"):
        y = np.log(x)
    return np.sum(y * y)


def test_with_runs_the_body_inside_the_context_manager_in_the_forward_sweep():
    src = sg.source(log_in_errstate)
    forward, reverse = src.split("# Reverse sweep")
    lines = [line.strip() for line in forward.splitlines()]
    enter = next(k for k, line in enumerate(lines) if "with_enter(" in line)
    log = next(k for k, line in enumerate(lines) if "np.log(x)" in line)
    exit_ = next(k for k, line in enumerate(lines) if "with_exit(" in line)
    assert enter < log < exit_, forward
    assert "with_enter" not in reverse and "with_exit" not in reverse and "errstate" not in reverse
    check(log_in_errstate, [np.array([0.5, 2.0, 3.0])])


def test_with_errstate_raises_in_the_forward_sweep_and_is_exited():
    before = np.geterr()
    with pytest.raises(FloatingPointError):
        sg.grad(log_in_errstate)(np.array([0.0, 1.0]))
    assert np.geterr() == before, "the errstate of the failed forward sweep leaked"
    x = sg.constant(np.array([0.0, 1.0]))
    with sg.GradientTape() as t:
        t.watch(x)
        with pytest.raises(FloatingPointError):
            sg.function(log_in_errstate)(x)
    assert np.geterr() == before


def suppresses(x):
    with contextlib.suppress(FloatingPointError), np.errstate(divide="raise"):
        y = np.log(x)
    return np.sum(x)


def test_a_context_manager_that_would_suppress_an_exception_is_reported():
    with pytest.raises(RuntimeError, match="suppress"):
        sg.grad(suppresses)(np.array([0.0, 1.0]))
    check_close(sg.grad(suppresses)(np.array([1.0, 2.0])), np.ones(2))


def catches_warnings(x):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = np.sqrt(x)
        n = len(caught)
    return np.sum(y) + 0.0 * n


def test_with_target_and_warnings_kept_inside_the_block():
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # a warning escaping the block would raise here
        g = sg.grad(catches_warnings)(np.array([-1.0, 4.0]))
    check_close(g[1], 0.25)
    check(catches_warnings, [np.array([1.0, 4.0])])


class Recorder:
    def __init__(self, value):
        self.value = value

    def __enter__(self):
        return self.value

    def __exit__(self, *exc):
        return False


def with_target_from_a_differentiated_value(x):
    with Recorder(x) as v:
        y = v * 2.0
    return np.sum(y)


def context_manager_of_a_differentiated_value_unused(x):
    with Recorder(x):                # entered, never read: nothing to differentiate
        y = np.sin(x)
    return np.sum(y)


def with_returns(x):
    with np.errstate(all="ignore"):
        return np.sum(np.log(x))


def with_break(x):
    for i in range(3):
        with np.errstate(all="ignore"):
            if i == 1:
                break
        x = x * 2.0
    return np.sum(x)


def test_what_a_with_block_cannot_do_raises_naming_the_line():
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.grad(with_target_from_a_differentiated_value)(X3)
    check_error(excinfo, "with-statement target (with ... as v) from differentiated values",
                with_target_from_a_differentiated_value, "with Recorder(x)")
    check(context_manager_of_a_differentiated_value_unused, [X3], autograd_ok=False)
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.function(with_returns)
    check_error(excinfo, "a return inside a with block", with_returns, "return np.sum")
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.function(with_break)
    check_error(excinfo, "a break out of a with block", with_break, "        break")


# ===========================================================================
# 3. Starred arguments
# ===========================================================================

def star_into_user_function(x, sizes):
    return np.sum(x * _cube_sum(*sizes))


def _cube_sum(a, b):
    return a ** 3 + b


def star_into_rule(x, pair):
    return np.sum(np.maximum(*pair) * x)


def star_display_and_tuple(x):
    a, b = 2.0 * x, np.sin(x)
    return np.sum(np.add(*(a, b)) * np.ones((*x.shape,)))


def test_starred_tuple_display_and_shape():
    check(star_display_and_tuple, [X3])


def test_starred_sequence_into_differentiated_callees_raises():
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.grad(star_into_rule)(X3, (X3, X3 * 2))
    check_error(excinfo, "*args of a sequence into np.maximum", star_into_rule, "np.maximum(*pair)")
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.grad(star_into_user_function)(X3, (1.0, 2.0))
    check_error(excinfo, "*args of a sequence into _cube_sum", star_into_user_function, "_cube_sum(*sizes)")


# ===========================================================================
# 4. Function values that are not user functions
# ===========================================================================

class Quadratic:
    def __init__(self, c):
        self.c = c

    def value(self, x, y):
        return self.c * np.sum(x * x * y)

    def twice(self, x):
        return 2.0 * self.value(x, x)

    @classmethod
    def make(cls, x):
        return np.sum(x ** 2) * cls.SCALE

    SCALE = 3.0


Q = Quadratic(1.5)


def test_grad_of_a_bound_method_differentiates_its_arguments_not_self():
    y = np.array([1.0, 2.0, -1.0])
    check(Q.value, [X3, y], wrt=(0, 1))
    check_close(sg.grad(Q.value, wrt=(1, 0))(X3, y)[0], 1.5 * X3 * X3)
    check(Q.twice, [X3])
    check(Quadratic.make, [X3])                 # a classmethod: cls is bound
    assert "def dvaluedx(x, y" in sg.source(Q.value)


def test_bound_methods_are_cached_per_instance_and_keyed_by_function_and_instance():
    assert sg.function(Q.value) is not sg.function(Q.value)       # the decorator makes a new one
    from srcgrad.callables import as_function
    assert as_function(Q.value) is as_function(Q.value)
    other = Quadratic(2.0)
    assert as_function(other.value) is not as_function(Q.value)
    check_close(sg.grad(other.twice)(X3), 2.0 * 2.0 * 3 * X3 ** 2)

    def call(fn, x):
        return np.sum(fn(x))
    f = sg.function(call)
    x = sg.constant(X3)
    for _ in range(3):
        with sg.GradientTape() as t:
            t.watch(x)
            out = f(Q.twice, x)            # a new bound method object at each access
        check_close(t.gradient(out, x).numpy(), 1.5 * 2.0 * 3 * X3 ** 2)
    assert len(f._programs) == 1, "a bound method must not compile a program per access"


def apply_function(x, fn):
    return np.sum(fn(x))


def test_ufuncs_and_methods_passed_as_arguments():
    check(lambda x: apply_function(x, np.sin), [X3])
    check(lambda x: apply_function(x, Q.twice), [X3])
    check(lambda x: apply_function(x, sg.grad(cube)), [X3], autograd_ok=False)


def call_unknown(x, fns):
    f = fns[0]
    return np.sum(f(x))


def test_a_function_value_unknown_when_compiling_raises_naming_it():
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.grad(call_unknown)(X3, [np.sin])
    check_error(excinfo, "calling f", call_unknown, "return np.sum(f(x))")


# ===========================================================================
# 5. Objects
# ===========================================================================

class Layer:
    def __init__(self, scale, shift=0.0):
        self.scale = scale
        self.shift = shift

    def __call__(self, x):
        return np.tanh(self.scale * x + self.shift)

    @property
    def gain(self):
        return self.scale * 2.0


LAYERS = [Layer(1.5), Layer(-0.5, 0.2)]


def through_global_layers(x):
    for layer in LAYERS:
        x = layer(x) * layer.gain
    return np.sum(x)


def through_local_layers(x):
    layers = [Layer(0.5), Layer(2.0, shift=-0.1)]
    total = 0.0
    for layer in layers:
        x = layer(x)
        total = total + np.sum(x) * layer.scale
    return total


def test_loops_over_lists_of_objects_are_unrolled():
    check(through_global_layers, [X3])
    check(through_local_layers, [X3])
    src = sg.source(through_global_layers)
    assert "check_unrolled" in src and "for " not in src.split("# Reverse sweep")[0]


def test_a_global_list_changed_after_compiling():
    global LAYERS
    saved = LAYERS
    try:
        g0 = sg.grad(through_global_layers)(X3)
        LAYERS.append(Layer(3.0))
        with pytest.raises(RuntimeError, match="changed"):
            sg.grad(through_global_layers)(X3)
        LAYERS = [Layer(1.5), Layer(-0.5, 0.2), Layer(3.0)]      # rebound: recompiled
        check(through_global_layers, [X3])
        LAYERS = [Layer(1.5), Layer(-0.5, 0.2)]
        check_close(sg.grad(through_global_layers)(X3), g0, 1e-12, 0.0)
    finally:
        saved[:] = saved[:2]
        LAYERS = saved


def object_from_differentiated_value(x):
    layer = Layer(x)                 # a plain data holder: a record of its fields
    return np.sum(layer(x) * layer.gain)


class Computes:
    def __init__(self, scale):
        self.scale = np.abs(scale)   # not a plain data holder

    def __call__(self, x):
        return self.scale * x


def object_computing_in_init(x):
    c = Computes(x)
    return np.sum(c(x))


def test_an_object_built_from_differentiated_values():
    check(object_from_differentiated_value, [X3])
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.grad(object_computing_in_init)(X3)
    check_error(excinfo, "calling c, an object or function built inside", object_computing_in_init,
                "return np.sum(c(x))")


# ===========================================================================
# 6. np.r_ and np.c_
# ===========================================================================

def r_items(a, b):
    return np.sum(np.r_[a, 2.0, b, a[:1]] * np.arange(1.0, 10.0))


def r_matrices(A, B):
    return np.sum(np.r_[A, B] * np.arange(12.0).reshape(6, 2))


def r_slice(a):
    return np.sum(np.r_[0:3, a] * np.arange(6.0))


def c_mixed(a, M):
    return np.sum(np.c_[a, M, a * 2.0] ** 2)


def c_three_d(T, U):
    return np.sum(np.c_[T, U] * np.arange(24.0).reshape(2, 3, 4))


def test_r_and_c():
    A, B = np.arange(6.0).reshape(3, 2) / 7.0, np.ones((3, 2)) * 0.3
    check(r_items, [X3, np.array([1.0, 2.0, 3.0, 4.0])], wrt=(0, 1), tape=False)
    check(r_matrices, [A, B], wrt=(0, 1), tape=False)
    check(r_slice, [X3], tape=False)
    check(c_mixed, [X3, A], wrt=(0, 1), tape=False)
    T = np.arange(12.0).reshape(2, 3, 2) / 10.0
    check(c_three_d, [T, T + 1.0], wrt=(0, 1), tape=False)


def test_r_and_c_forward_mode():
    A = np.arange(6.0).reshape(3, 2) / 7.0
    v, w = np.array([1.0, -2.0, 0.5]), np.ones((3, 2))
    _, t = sg.jvp(c_mixed, (X3, A), (v, w))
    expected = np.sum(fd(lambda a, M: c_mixed(a, M), [X3, A], 0) * v) + \
        np.sum(fd(lambda a, M: c_mixed(a, M), [X3, A], 1) * w)
    check_close(t, expected, RTOL, ATOL)


def r_directive(a, b):
    return np.sum(np.r_["0,2", a, b])


def test_r_with_a_string_directive_raises():
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.grad(r_directive)(X3, X3)
    check_error(excinfo, "np.r_ with a string directive", r_directive, "np.r_[")


# ===========================================================================
# 7. Element assignment to NumPy views
# ===========================================================================

def reversed_view_assigned(x):
    y = x * 1.0
    a = y[::-1]
    a[1] = 0.0
    return np.sum(a * y)


def base_assigned_while_transpose_used(x):
    M = np.outer(x, x)
    T = M.T
    M[0, 1] = 5.0
    return np.sum(T * x[:, None])


def view_not_used_again(x):
    y = x * 2.0
    a = y[::-1]
    a[1] = 0.0
    return np.sum(a * a)


def row_swap(M):
    M = M * 1.0
    tmp = M[0]
    M[0] = M[1]
    M[1] = tmp
    return np.sum(M * np.arange(6.0).reshape(2, 3))


def element_swap(v):
    v = v * 1.0
    tmp = v[0]
    v[0] = v[1]
    v[1] = tmp
    return np.sum(v * np.arange(3.0))


def rows_of_a_loop(M):
    M = M * 1.0
    for row in M:
        row[0] = 0.0
    return np.sum(M ** 2)


def test_element_assignment_to_a_view_raises_at_decoration():
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.function(reversed_view_assigned)
    check_error(excinfo, "element assignment to a, which may be a NumPy view of y", reversed_view_assigned,
                "a[1] = 0.0")
    assert "make a copy: a = y[::-1].copy()" in str(excinfo.value)
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.function(base_assigned_while_transpose_used)
    check_error(excinfo, "element assignment to M while T", base_assigned_while_transpose_used,
                "M[0, 1] = 5.0")
    assert "make a copy: T = M.T.copy()" in str(excinfo.value)


def test_views_that_change_nothing_are_fine():
    check(view_not_used_again, [X3], autograd_ok=False, tape=False)
    check(element_swap, [X3], autograd_ok=False, tape=False)     # tmp = v[0] is a copy of an element


def test_a_view_known_only_at_run_time_raises_there():
    M = np.arange(6.0).reshape(2, 3) / 5.0
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.grad(row_swap)(M)                 # tmp = M[0] is a view of the row: NumPy's swap copies row 1 twice
    check_error(excinfo, "element assignment to M while tmp, which may be a NumPy view of it", row_swap,
                "M[0] = M[1]")
    assert "make a copy: tmp = M[0].copy()" in str(excinfo.value)
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.grad(rows_of_a_loop)(M)
    check_error(excinfo, "NumPy view", rows_of_a_loop, "row[0] = 0.0")


def enumerate_and_zip_layers(x, weights):
    total = 0.0
    for k, layer in enumerate(LAYERS):
        x = layer(x) + k
    for layer, w in zip([Layer(0.3), Layer(1.1, 0.5)], weights):
        x = layer(x * w)
        total = total + np.sum(x)
    return total


def test_enumerate_and_zip_over_objects_are_unrolled():
    ws = [np.array([1.0, 2.0, 0.5]), np.array([0.3, -0.2, 1.0])]
    check(enumerate_and_zip_layers, [X3, np.stack(ws)], wrt=(0, 1))
    with pytest.raises(ValueError, match="only 1 elements"):
        sg.grad(enumerate_and_zip_layers)(X3, np.stack(ws[:1]))


def test_lambdas_in_real_notebook_cells():
    """A Jupyter kernel (IPython registers each cell in linecache): lambdas
    defined in cells, two on one line, one called by a function of another
    cell, differentiated there against finite differences."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    cells = [
        "import numpy as np\nimport srcgrad as sg",
        "square, wave = lambda a: a * a, lambda a: np.sin(a) * a\nkernel = lambda a, b: np.exp(-(a - b) ** 2)",
        "def loss(x):\n    return np.sum(square(x) + wave(x) * kernel(x, 0.5))",
        "x = np.array([0.3, -0.7, 1.1])\n"
        "g = sg.grad(loss)(x)\n"
        "fd = np.array([(loss(x + e) - loss(x - e)) / 2e-6 for e in np.eye(3) * 1e-6])\n"
        "gw = sg.grad(wave)(x)\n"
        "print('errors', np.max(np.abs(g - fd)), np.max(np.abs(gw - (np.cos(x) * x + np.sin(x)))))",
    ]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"], outputs
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    errors = [float(v) for v in text.split("errors")[1].split()[:2]]
    assert errors[0] < 1e-6 and errors[1] < 1e-12, text


def _tail(v):
    return v[1:]


def view_returned_by_a_helper(x):
    y = x * 1.0
    t = _tail(y)
    t[0] = 5.0
    return np.sum(y * x)


def array_taken_from_a_list(x):
    xs = [x * 1.0, x * 2.0]
    row = xs[0]
    row[1] = 5.0
    return np.sum(xs[0] * x)


def new_array_from_a_call(x):
    y = x * 1.0
    h = np.tanh(y)
    h[0] = 0.0
    return np.sum(h * y)


def test_views_made_by_calls_and_lists_are_checked_at_run_time():
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.grad(view_returned_by_a_helper)(X3)
    check_error(excinfo, "element assignment to t, which may be a NumPy view of y", view_returned_by_a_helper,
                "t[0] = 5.0")
    assert "make a copy: t = _tail(y).copy()" in str(excinfo.value)
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.grad(array_taken_from_a_list)(X3)
    check_error(excinfo, "NumPy view", array_taken_from_a_list, "row[1] = 5.0")
    check(new_array_from_a_call, [X3], autograd_ok=False, tape=False)


# -- objects of plain data-holder classes built from differentiated values

class Affine:
    SCALE = 2.0

    def __init__(self, W, b, slope=1.0):
        self.W = W
        self.b = b
        self.slope = slope

    def __call__(self, x):
        return np.tanh(self.slope * (x @ self.W) + self.b)

    def loss(self, x, t):
        return np.mean((self(x) - t) ** 2) * self.SCALE + self.penalty(0.1)

    def penalty(self, c):
        return c * self.norm

    @property
    def norm(self):
        return np.sum(self.W ** 2)

    @staticmethod
    def square(u):
        return u * u


@dataclasses.dataclass
class Normal:
    mu: np.ndarray
    sigma: float

    def logpdf(self, x):
        return -0.5 * ((x - self.mu) / self.sigma) ** 2 - np.log(self.sigma)


XS = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
TS = np.linspace(-0.5, 0.5, 8).reshape(2, 4)


def affine_record(W, b):
    layer = Affine(W, b, slope=0.5)
    return layer.loss(XS, TS) + np.sum(layer.b * layer.W[0]) + np.sum(layer.square(layer.b))


def affine_in_a_loop(W, b):
    total = 0.0
    for k in range(3):
        layer = Affine(W * (k + 1.0), b)
        total = total + np.sum(layer(XS))
    return total


def normal_dataclass(mu, sigma):
    d = Normal(mu, sigma)
    return np.sum(d.logpdf(np.array([0.1, 0.2, 0.3])))


def record_passed_on(W, b):
    layer = Affine(W, b)
    return np.sum(apply_function(XS, layer))


class Particle:
    def __init__(self, pos, vel):
        self.pos = pos
        self.vel = vel

    def step(self, dt):
        return Particle(self.pos + dt * self.vel, self.vel - dt * np.sin(self.pos))


def particle_steps(pos, vel):
    p = Particle(pos, vel)
    p = p.step(0.1)
    return np.sum(p.pos)


def test_objects_of_plain_data_holders_built_from_differentiated_values():
    W, b = np.linspace(-0.8, 0.8, 12).reshape(3, 4), np.linspace(-0.2, 0.2, 4)
    check(affine_record, [W, b], wrt=(0, 1))
    check(affine_in_a_loop, [W, b], wrt=(0, 1))
    check(normal_dataclass, [np.array([0.0, 0.5, -0.2]), 0.7], wrt=(0, 1))
    src = sg.source(affine_record, wrt=(0, 1))
    assert "layer_W = W" in src and "Affine" not in src.split("# Forward sweep")[1].split("\n")[1]


def test_objects_from_differentiated_values_used_otherwise_raise():
    W, b = np.linspace(-0.8, 0.8, 12).reshape(3, 4), np.linspace(-0.2, 0.2, 4)
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.grad(record_passed_on)(W, b)
    check_error(excinfo, "using layer, an object of Affine built from differentiated values", record_passed_on,
                "apply_function(XS, layer)")
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.grad(particle_steps)(X3, X3)        # a method returning a new object: p is not a record
    check_error(excinfo, "reading the attribute .pos of an object that holds differentiated values",
                particle_steps, "return np.sum(p.pos)")


def alias_rebound_before_write(x):
    a = x * 1.0
    b = a            # b is a ...
    b = b + 1.0      # ... no longer: a new array
    a[0] = 3.0       # NumPy changes a only
    return np.sum(a * b)


def view_rebound_before_write(x):
    a = x * 1.0
    v = a[1:]
    v = v * 2.0      # a new array, no longer a view of a
    a[0] = 5.0
    return np.sum(a) + np.sum(v * v)


def alias_in_some_iterations(x):
    a = x * 1.0
    b = x * 2.0
    for i in range(3):
        if i == 1:
            b = a        # from here b is a again
        else:
            b = b + 1.0
        a[0] = a[0] * 2.0
    return np.sum(a * b)


def test_a_name_rebound_after_aliasing_is_not_an_alias():
    """`b = a` then `b = b + 1`: b is a new array before `a[0] = ...`, so
    NumPy changes a only, and srcgrad differentiates it (the link is tested
    at run time, since the analysis is not flow-sensitive)."""
    check(alias_rebound_before_write, [X3], autograd_ok=False)
    check(view_rebound_before_write, [X3], autograd_ok=False)


def test_an_alias_made_in_a_loop_raises_when_it_holds():
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.grad(alias_in_some_iterations)(X3)
    check_error(excinfo, "element assignment to a while b, another name for the same array (b = a)",
                alias_in_some_iterations, "a[0] = a[0] * 2.0")
    assert "make a copy: b = a.copy()" in str(excinfo.value)


def tuple_row_swap(X):
    X = X * 1.0
    X[0], X[1] = X[1], X[0]         # NumPy: both rows end as the old row 1 (the right side holds views)
    return np.sum(X * np.array([[1.0, 2.0], [3.0, 5.0]]))


def tuple_row_swap_copied(X):
    X = X * 1.0
    X[0], X[1] = X[1].copy(), X[0].copy()
    return np.sum(X * np.array([[1.0, 2.0], [3.0, 5.0]]))


def tuple_element_swap(v):
    v = v * 1.0
    v[0], v[1] = v[1], v[0]         # elements of a vector are copies: a real swap
    return np.sum(v * np.arange(3.0))


def test_a_tuple_assignment_reading_views_of_its_target_raises():
    """`X[0], X[1] = X[1], X[0]` on rows: NumPy assigns one by one and the
    second item, a view of row 0, sees the first write; the functional
    lowering would swap (found by the second probe helper). Checked at run
    time: copies and scalar elements swap as they do in NumPy."""
    M = np.array([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.grad(tuple_row_swap)(M)
    check_error(excinfo, "assigning X[0] in a tuple assignment whose right side", tuple_row_swap,
                "X[0], X[1] = X[1], X[0]")
    assert "X[1].copy(), X[0].copy()" in str(excinfo.value)
    check(tuple_row_swap_copied, [M], autograd_ok=False)
    check(tuple_element_swap, [X3], autograd_ok=False)


def write_through_list(x):
    y = x * 1.0
    zs = [y]
    zs[0][0] = 10.0 * x[1]          # NumPy: zs[0] is y, so y changes too
    return np.sum(y * y)


def augmented_dict_element(x):
    y = x * 1.0
    d = {"m": y}
    d["m"] *= 2.0                   # NumPy: the array's *= changes y in place
    return np.sum(y * y)


def write_through_list_not_read_again(x):
    y = x * 1.0
    zs = [y]
    zs[0][0] = 10.0 * x[1]
    return np.sum(zs[0] * zs[0])


def write_into_a_copy_in_a_list(x):
    y = x * 1.0
    zs = [y.copy()]
    zs[0][0] = 10.0 * x[1]
    return np.sum(y * y) + np.sum(zs[0])


@pytest.mark.parametrize("fn, shown", [(write_through_list, "zs[0][0] = 10.0 * x[1]"),
                                       (augmented_dict_element, 'd["m"] *= 2.0')])
def test_a_write_through_a_container_element_another_name_holds_raises(fn, shown):
    """Writing into an array through a list's or dict's element while
    another name for it is still read: NumPy changes both, the functional
    lowering only the container's element (found by the second probe
    helper): refused at run time, naming the element."""
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.grad(fn)(np.array([1.0, 2.0]))
    check_error(excinfo, "which is y or shares its memory, while y is still used", fn, shown)


def test_writes_through_container_elements_nobody_else_sees_are_differentiated():
    check(write_through_list_not_read_again, [np.array([1.0, 2.0])], autograd_ok=False, tape=False)
    check(write_into_a_copy_in_a_list, [np.array([1.0, 2.0])], autograd_ok=False, tape=False)


def write_through_tuple_element(x):
    y = x * 1.0
    t = (y, 1)
    t[0][1] = 3.0 * x[0]            # the array t[0] changes; the tuple holds it still
    return np.sum(t[0] * t[0]) * t[1]


def test_a_write_into_an_array_a_tuple_holds_is_differentiated():
    """t[0][i] = v with t a tuple: the array is rewritten and put back in a
    new tuple (it raised ValueError from the array setitem: found by the
    second probe helper)."""
    check(write_through_tuple_element, [np.array([1.0, 2.0])], autograd_ok=False, tape=False)
