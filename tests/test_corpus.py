"""Issue 4's definition of done: the corpus of user Python (tests/corpus_funcs.py)
differentiates correctly through every path srcgrad offers.

For each corpus entry:

1. `sg.grad(fn, wrt)` against central finite differences of the plain function;
2. `sg.function(fn)` inside a `GradientTape` (one compiled tape entry) against
   the same finite differences (with a fixed random output weight for array
   outputs), and against (1) to 1e-10;
3. where autograd can run the function (`np` rebound to autograd.numpy in the
   corpus modules), the compiled tape against autograd;
4. where `tape_ok`, the undecorated function op by op on watched Tensors;
5. where `second_order`, a Hessian-vector product through nested tapes against
   finite differences of finite differences;

and in every path the caller's arrays (and Tensors) are left unmutated. Then:
unsupported syntax raises `sg.UnsupportedSyntaxError` naming the construct,
file and line before any user code runs; activity analysis leaves integer,
boolean and shape values without adjoint code; a rebound global or closure
cell recompiles; print is kept in the forward sweep only.

`test_oracles` checks the oracles themselves, independently of srcgrad: the
plain function runs, its finite differences are stable under a change of step
(no branch or trip count flips within the step), autograd agrees with them,
and autograd's Hessian-vector product agrees with the second-order oracle.
"""
import contextlib
import copy
import os
import re
import zlib

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import corpus_funcs as cf
import corpus_other as co
import srcgrad as sg
from gradcheck import check_close, numerical_grad

# these tests pin what the compiler does and its refusals: no op-by-op fallback (conftest.py)
pytestmark = pytest.mark.usefixtures("compiled_only")

RTOL, ATOL = 1e-5, 1e-6            # against finite differences
EXACT_RTOL, EXACT_ATOL = 1e-10, 1e-12  # between srcgrad's own paths
AG_RTOL, AG_ATOL = 1e-8, 1e-10     # srcgrad against autograd
HVP_RTOL, HVP_ATOL = 1e-4, 1e-5    # second order against FD of FD


def entries(flag=None):
    return [pytest.param(e, id=e.name) for e in cf.CORPUS if flag is None or getattr(e, flag)]


# ---------------------------------------------------------------------------
# Oracles (independent of srcgrad)
# ---------------------------------------------------------------------------

def output_weight(entry, out):
    """1.0 for scalar outputs; a fixed random array of the output's shape otherwise."""
    shape = np.shape(np.asarray(out))
    if shape == ():
        return 1.0
    rng = np.random.default_rng(zlib.crc32(("weight:" + entry.name).encode()))
    return rng.normal(size=shape)


def replaced(args, i, value):
    args = list(args)
    args[i] = float(value) if isinstance(args[i], float) else value
    return args


def objective(entry, weight, args=None, i=None):
    """x -> sum(weight * fn(args with args[i] = x)) on the plain function."""
    base = entry.make_args() if args is None else args

    def f(x):
        out = entry.fn(*replaced(base, i, x))
        return np.sum(np.asarray(out, dtype=np.float64) * weight)
    return f


def plain_value(entry):
    return entry.fn(*entry.make_args())


_FD = {}


def fd_grads(entry, weighted, eps=1e-6):
    """Central differences of sum(fn) (weighted=False) or sum(weight * fn)."""
    key = (entry.name, weighted, eps)
    if key not in _FD:
        args = entry.make_args()
        weight = output_weight(entry, plain_value(entry)) if weighted else 1.0
        _FD[key] = [numerical_grad(objective(entry, weight, args, i), np.asarray(args[i], dtype=np.float64),
                                   eps=eps)
                    for i in entry.wrt]
    return _FD[key]


def fd_hvp(entry, v, h=1e-4, eps=1e-5):
    """d/dt grad_x sum(weight * fn)(x + t v) at t = 0, x = args[entry.hvp_index]:
    central differences of central differences."""
    args = entry.make_args()
    i = entry.hvp_index
    weight = output_weight(entry, plain_value(entry))
    x = np.asarray(args[i], dtype=np.float64)
    g = objective(entry, weight, args, i)
    return (numerical_grad(g, x + h * v, eps) - numerical_grad(g, x - h * v, eps)) / (2 * h)


def hvp_direction(entry):
    x = np.asarray(entry.make_args()[entry.hvp_index], dtype=np.float64)
    rng = np.random.default_rng(zlib.crc32(("direction:" + entry.name).encode()))
    return rng.normal(size=x.shape)


@contextlib.contextmanager
def autograd_numpy():
    """Rebind `np` to autograd.numpy in the corpus modules (their functions,
    methods, closures and helpers all read NumPy through that global)."""
    saved = cf.np, co.np
    cf.np = co.np = anp
    try:
        yield
    finally:
        cf.np, co.np = saved


def autograd_grads(entry):
    args = entry.make_args()
    weight = output_weight(entry, plain_value(entry))

    def f(*a):
        return anp.sum(entry.fn(*a) * weight)
    with autograd_numpy():
        g = autograd.grad(f, argnum=entry.wrt if len(entry.wrt) > 1 else entry.wrt[0])(*args)
    return [np.asarray(gi) for gi in (g if len(entry.wrt) > 1 else (g,))]


def autograd_hvp(entry, v):
    args = entry.make_args()
    i = entry.hvp_index
    weight = output_weight(entry, plain_value(entry))

    def f(x):
        return anp.sum(entry.fn(*replaced(args, i, x)) * weight)

    def gv(x):
        return anp.sum(autograd.grad(f)(x) * v)
    with autograd_numpy():
        return np.asarray(autograd.grad(gv)(np.asarray(args[i], dtype=np.float64)))


# ---------------------------------------------------------------------------
# Helpers for srcgrad's paths
# ---------------------------------------------------------------------------

def as_list(g, n):
    if n == 1:
        return [g]
    assert isinstance(g, (tuple, list)) and len(g) == n, g
    return list(g)


def snapshot(args):
    return copy.deepcopy([np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args])


def assert_unmutated(args, saved, what="argument"):
    for k, (a, s) in enumerate(zip(args, saved)):
        if isinstance(a, sg.Tensor):
            a = a.numpy()
        if isinstance(s, np.ndarray):
            np.testing.assert_array_equal(np.asarray(a), s,
                                          err_msg="%s %d was mutated by the derivative code" % (what, k))


def tensors(entry, args):
    ts = list(args)
    for i in entry.wrt:
        ts[i] = sg.constant(args[i])
    return ts


def to_numpy(g):
    assert g is not None, "gradient is None"
    return g.numpy() if isinstance(g, sg.Tensor) else np.asarray(g)


def compiled_tape_grads(entry):
    """(value, weighted grads, summed grads) of sg.function(fn) on a tape;
    checks that no input was mutated."""
    args = entry.make_args()
    saved = snapshot(args)
    f = sg.function(entry.fn)
    ts = tensors(entry, args)
    with sg.GradientTape(persistent=True) as tape:
        for i in entry.wrt:
            tape.watch(ts[i])
        y = f(*ts)
    assert isinstance(y, sg.Tensor), type(y)
    recorded = getattr(tape, "_entries", None)   # the tape's record, where it exposes one
    if recorded is not None:
        kinds = [type(e).__name__ for e in recorded]
        assert len(recorded) == 1 and kinds != ["OpEntry"], "expected one compiled entry, got %s" % kinds
    weight = output_weight(entry, y.numpy())
    sources = [ts[i] for i in entry.wrt]
    og = None if np.shape(weight) == () else sg.constant(weight)
    weighted = [to_numpy(g) for g in tape.gradient(y, sources, output_gradients=og)]
    summed = [to_numpy(g) for g in tape.gradient(y, sources)]
    assert_unmutated(args, saved)
    assert_unmutated(ts, saved, "Tensor argument")
    return y.numpy(), weighted, summed


# ---------------------------------------------------------------------------
# The oracles agree (no srcgrad involved): these must all pass today.
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("entry", entries())
def test_oracles(entry):
    args = entry.make_args()
    saved = snapshot(args)
    out = entry.fn(*args)
    assert np.all(np.isfinite(np.asarray(out, dtype=np.float64)))
    assert_unmutated(args, saved, "argument (by the plain function)")
    # the path taken does not change within the step: FD at two steps agree
    for fine, coarse in zip(fd_grads(entry, True), fd_grads(entry, True, eps=1e-4)):
        check_close(fine, coarse, rtol=RTOL, atol=ATOL)
    if entry.second_order:
        v = hvp_direction(entry)
        hv = fd_hvp(entry, v)
        assert np.max(np.abs(hv)) > 1e-3, "a trivial Hessian-vector product checks nothing"
        check_close(fd_hvp(entry, v, h=2e-4, eps=2e-5), hv, rtol=HVP_RTOL, atol=HVP_ATOL)
    if entry.autograd_ok:
        for a, e in zip(autograd_grads(entry), fd_grads(entry, True)):
            check_close(a, e, rtol=RTOL, atol=ATOL)
        if entry.second_order:
            check_close(autograd_hvp(entry, v), hv, rtol=HVP_RTOL, atol=HVP_ATOL)


# ---------------------------------------------------------------------------
# (1) sg.grad
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("entry", entries())
def test_grad(entry):
    args = entry.make_args()
    saved = snapshot(args)
    grad = sg.grad(entry.fn, wrt=entry.wrt)
    g = as_list(grad(*args), len(entry.wrt))
    assert_unmutated(args, saved)
    for gi, e in zip(g, fd_grads(entry, False)):
        assert isinstance(gi, np.ndarray) and not isinstance(gi, sg.Tensor), type(gi)
        check_close(gi, e, rtol=RTOL, atol=ATOL)
    # a second call (cached code) gives the same gradient: no state leaks between calls
    for gi, again in zip(g, as_list(grad(*args), len(entry.wrt))):
        np.testing.assert_array_equal(again, gi)
    assert_unmutated(args, saved)


# ---------------------------------------------------------------------------
# (2) the compiled tape entry
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("entry", entries())
def test_compiled_tape(entry):
    value, weighted, summed = compiled_tape_grads(entry)
    check_close(value, np.asarray(plain_value(entry), dtype=np.float64), rtol=1e-10, atol=1e-12)
    for g, e in zip(weighted, fd_grads(entry, True)):
        check_close(g, e, rtol=RTOL, atol=ATOL)
    # the tape's split forward/adjoint agrees with sg.grad's fused code
    fused = as_list(sg.grad(entry.fn, wrt=entry.wrt)(*entry.make_args()), len(entry.wrt))
    for g, f in zip(summed, fused):
        check_close(g, f, rtol=EXACT_RTOL, atol=EXACT_ATOL)


# ---------------------------------------------------------------------------
# (3) against autograd
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("entry", entries("autograd_ok"))
def test_autograd(entry):
    _, weighted, _ = compiled_tape_grads(entry)
    for g, a in zip(weighted, autograd_grads(entry)):
        check_close(g, a, rtol=AG_RTOL, atol=AG_ATOL)


# ---------------------------------------------------------------------------
# (4) op by op on the tape
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("entry", entries("tape_ok"))
def test_op_by_op(entry):
    args = entry.make_args()
    saved = snapshot(args)
    ts = tensors(entry, args)
    with sg.GradientTape() as tape:
        for i in entry.wrt:
            tape.watch(ts[i])
        y = entry.fn(*ts)
    assert isinstance(y, sg.Tensor), type(y)
    check_close(y.numpy(), np.asarray(plain_value(entry), dtype=np.float64), rtol=1e-10, atol=1e-12)
    weight = output_weight(entry, y.numpy())
    og = None if np.shape(weight) == () else sg.constant(weight)
    grads = tape.gradient(y, [ts[i] for i in entry.wrt], output_gradients=og)
    for g, e in zip(grads, fd_grads(entry, True)):
        check_close(to_numpy(g), e, rtol=RTOL, atol=ATOL)
    assert_unmutated(ts, saved, "Tensor argument")


# ---------------------------------------------------------------------------
# (5) second order through nested tapes
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("entry", entries("second_order"))
def test_second_order(entry):
    args = entry.make_args()
    saved = snapshot(args)
    i = entry.hvp_index
    v = hvp_direction(entry)
    weight = output_weight(entry, plain_value(entry))
    f = sg.function(entry.fn)
    ts = list(args)
    x = ts[i] = sg.constant(args[i])
    with sg.GradientTape() as t2:
        t2.watch(x)
        with sg.GradientTape() as t1:
            t1.watch(x)
            y = f(*ts)
        og = None if np.shape(weight) == () else sg.constant(weight)
        g = t1.gradient(y, x, output_gradients=og)
    hv = t2.gradient(g, x, output_gradients=sg.constant(v))
    check_close(to_numpy(hv), fd_hvp(entry, v), rtol=HVP_RTOL, atol=HVP_ATOL)
    assert_unmutated(args, saved)
    assert_unmutated(ts, saved, "Tensor argument")


# ---------------------------------------------------------------------------
# (6) what stays unsupported: raised at decoration, with construct, file
# and line, before any user code runs
# ---------------------------------------------------------------------------

def marker_lines(filename, key):
    path = os.path.join(os.path.dirname(__file__), filename)
    with open(path) as fh:
        return [n for n, line in enumerate(fh, 1) if line.rstrip().endswith("# unsupported: %s" % key)]


def check_unsupported_error(err, key, filename):
    lines = marker_lines(filename, key)
    assert lines, "no marker for %s" % key
    assert err.lineno in lines, (err.lineno, lines, str(err))
    assert err.filename is not None and os.path.basename(err.filename) == filename, err.filename
    construct = (getattr(err, "construct", "") or "") + " " + str(err)
    assert key.split("-")[0] in construct.lower(), construct
    assert filename in str(err), str(err)
    assert re.search(r"\b%d\b" % err.lineno, str(err)), str(err)


UNSUPPORTED_IDS = [u[1] for u in cf.UNSUPPORTED]


@pytest.mark.parametrize("fn, key, filename, make_args", cf.UNSUPPORTED, ids=UNSUPPORTED_IDS)
def test_unsupported_at_decoration(fn, key, filename, make_args):
    cf.SIDE.clear()
    calls = cf._CALLS
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.function(fn)
    assert cf.SIDE == [] and cf._CALLS == calls, "user code ran before the error"
    check_unsupported_error(excinfo.value, key, filename)


@pytest.mark.parametrize("fn, key, filename, make_args", cf.UNSUPPORTED, ids=UNSUPPORTED_IDS)
def test_unsupported_in_grad(fn, key, filename, make_args):
    cf.SIDE.clear()
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.grad(fn)(*make_args())
    assert cf.SIDE == [], "user code ran before the error"
    check_unsupported_error(excinfo.value, key, filename)
    with pytest.raises(sg.UnsupportedSyntaxError):   # nothing half-built was cached
        sg.grad(fn)(*make_args())
    assert cf.SIDE == []


@pytest.mark.parametrize("fn, key, filename, make_args", cf.UNSUPPORTED_AT_COMPILE,
                         ids=[u[0].__name__ for u in cf.UNSUPPORTED_AT_COMPILE])
def test_unsupported_when_compiled(fn, key, filename, make_args):
    """Decoration succeeds; compiling the derivative raises, naming the line,
    and nothing half-built is cached."""
    sg.function(fn)
    for _ in range(2):
        with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
            sg.grad(fn)(*make_args())
        check_unsupported_error(excinfo.value, key, filename)


def test_unsupported_in_helper_of_other_module():
    cf.SIDE.clear()
    co.SIDE.clear()
    x = np.array([0.5, -0.3])
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        sg.grad(cf.calls_helper_with_try)(x)
    assert cf.SIDE == [] and co.SIDE == [], "user code ran before the error"
    check_unsupported_error(excinfo.value, "try-in-helper", "corpus_other.py")
    xt = sg.constant(x)
    with pytest.raises(sg.UnsupportedSyntaxError) as excinfo:
        f = sg.function(cf.calls_helper_with_try)
        with sg.GradientTape() as tape:
            tape.watch(xt)
            f(xt)
    assert cf.SIDE == [] and co.SIDE == [], "user code ran before the error"
    check_unsupported_error(excinfo.value, "try-in-helper", "corpus_other.py")


# ---------------------------------------------------------------------------
# (7) activity: integer, boolean, shape and index values get no adjoint code
# ---------------------------------------------------------------------------

# (function, wrt, names that must have no adjoint, a name that must have one)
ACTIVITY = [
    (cf.activity_int_counters, (0,), ["i", "n", "count"], "x"),
    (cf.activity_flag, (0,), ["done", "steps"], "x"),
    (cf.activity_int_index, (0,), ["idx"], "x"),
    (cf.activity_shape_values, (0,), ["rows", "cols", "scale"], "X"),
    (cf.interp_searchsorted, (0, 1), ["i"], "fp"),
    (cf.for_enumerate, (0,), ["i"], "x"),
    (cf.while_counter, (0,), ["i", "n"], "x"),
    (cf.while_fixed_point, (0,), ["err"], "x"),
    (cf.math_shape_scale, (0, 1), ["d"], "q"),
    (cf.bubble_sort_tuple_swap, (0,), ["i", "j", "n"], "x"),
    (cf.rnn_fill_rows, (0, 1, 2), ["t", "T"], "W"),
]


@pytest.mark.parametrize("fn, wrt, inactive, active", ACTIVITY, ids=[a[0].__name__ for a in ACTIVITY])
def test_activity(fn, wrt, inactive, active):
    src = sg.source(fn, wrt=wrt)
    # the naming convention this test relies on: the adjoint of `v` is `bv`
    assert re.search(r"\bb%s(_\d+)?\b" % active, src), src
    for name in inactive:
        found = re.findall(r"\bb%s(?:_\d+)?\b" % name, src)
        assert not found, "adjoint code for the non-differentiable %r: %s\n%s" % (name, found, src)


# ---------------------------------------------------------------------------
# (8) a rebound global or closure cell recompiles instead of running stale code
# ---------------------------------------------------------------------------

def _fd(fn, x):
    return numerical_grad(lambda xi: np.sum(fn(xi)), x)


def _tape_grad(f, x):
    xt = sg.constant(x)
    with sg.GradientTape() as tape:
        tape.watch(xt)
        y = f(xt)
    return to_numpy(tape.gradient(y, xt))


def test_rebound_global_helper_recompiles(monkeypatch):
    x = np.array([0.3, -0.7, 1.1])
    fn = cf.module_global_helper
    grad = sg.grad(fn)
    compiled = sg.function(fn)
    check_close(grad(x), _fd(fn, x))
    check_close(_tape_grad(compiled, x), _fd(fn, x))
    monkeypatch.setattr(cf, "GLOBAL_ACT", cf._act_sin)
    expected = _fd(fn, x)
    check_close(expected, np.sin(x) + x * np.cos(x))
    check_close(grad(x), expected)
    check_close(_tape_grad(compiled, x), expected)


def test_rebound_global_float_recompiles(monkeypatch):
    x = np.array([0.3, -0.7, 1.1])
    fn = cf.module_global_float
    grad = sg.grad(fn)
    check_close(grad(x), 0.7 * np.cos(0.7 * x))
    monkeypatch.setattr(cf, "SCALE", 1.9)
    check_close(grad(x), 1.9 * np.cos(1.9 * x))
    check_close(_tape_grad(sg.function(fn), x), 1.9 * np.cos(1.9 * x))


def test_rebound_closure_cell_recompiles():
    x = np.array([0.3, -0.7, 1.1])
    fn = cf.closure_cell
    grad = sg.grad(fn)
    compiled = sg.function(fn)
    try:
        check_close(grad(x), np.tanh(x) + x * (1 - np.tanh(x) ** 2))
        fn.set_act(np.sin)
        check_close(grad(x), np.sin(x) + x * np.cos(x))
        check_close(_tape_grad(compiled, x), np.sin(x) + x * np.cos(x))
    finally:
        fn.set_act(np.tanh)


# ---------------------------------------------------------------------------
# Statements kept for their effects: print in the forward sweep only, assert
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("fn, lines", [(cf.with_print, 1), (cf.print_in_loop, 3)],
                         ids=["with_print", "print_in_loop"])
def test_print_runs_in_forward_sweep_only(capsys, fn, lines):
    x = np.array([0.3, -0.7, 1.1])
    capsys.readouterr()
    fn(x)
    plain = capsys.readouterr().out
    assert len(plain.splitlines()) == lines
    sg.grad(fn)(x)
    out = capsys.readouterr().out
    assert out == plain, (out, plain)
    _tape_grad(sg.function(fn), x)
    out = capsys.readouterr().out
    assert len(out.splitlines()) == lines, out


def test_failing_assert_still_raises():
    bad = np.ones((2, 2))
    with pytest.raises(AssertionError):
        cf.with_assert(bad)
    with pytest.raises(AssertionError):
        sg.grad(cf.with_assert)(bad)


# ---------------------------------------------------------------------------
# Closures over Variables: the captured Variable is an input on the tape
# ---------------------------------------------------------------------------

def test_closure_captured_variable_gets_a_gradient():
    fn = cf.closure_variable
    V = fn.variable
    W = V.numpy().copy()
    x = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    expected = numerical_grad(lambda w: np.sum(np.tanh(x @ w) ** 2), W)
    compiled = sg.function(fn)
    with sg.GradientTape() as tape:
        y = compiled(x)
    check_close(to_numpy(tape.gradient(y, V)), expected)
    with sg.GradientTape() as tape:   # op by op
        y = fn(x)
    check_close(to_numpy(tape.gradient(y, V)), expected)
    np.testing.assert_array_equal(V.numpy(), W)


# ---------------------------------------------------------------------------
# The corpus itself
# ---------------------------------------------------------------------------

def test_corpus_size_and_coverage():
    assert len(cf.CORPUS) >= 100
    assert sum(e.second_order for e in cf.CORPUS) >= 15
    constructs = {e.construct for e in cf.CORPUS}
    for c in [cf.WHILE, cf.FOR, cf.BREAK, cf.RETURN, cf.EXPR, cf.STMT, cf.CONTAINERS, cf.INDEX,
              cf.ASSIGN, cf.CLOSURE, cf.ARGS, cf.RECUR, cf.NESTED, cf.OTHER, cf.METHODS, cf.MATH,
              cf.ACTIVITY]:
        assert c in constructs, c
    second = {e.construct for e in cf.CORPUS if e.second_order}
    for c in [cf.WHILE, cf.FOR, cf.EXPR, cf.ASSIGN, cf.CONTAINERS]:
        assert c in second, c
