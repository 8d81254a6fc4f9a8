"""Issue 9's definition of done: second and third derivatives agree with
finite differences and autograd through every construct of the language
corpus (tests/corpus_funcs.py), including `sg.grad(sg.grad(f))`, a tape
inside a tape over decorated functions, and a function that calls `sg.grad`.

1. Second order, for every corpus entry (and a nonlinear companion of each
   entry whose Hessian is identically zero, tests/higher_funcs.py), with
   respect to the entry's hvp argument x, through four compiled paths:
     grad_of_grad    sg.grad(sg.grad(f, wrt=(i,)), wrt=(i,))(*args) = H_sum . 1
                     (H_sum: the Hessian of sum(f));
     nested_tapes    a GradientTape inside a GradientTape over sg.function(f),
                     output weights w (test_corpus.output_weight), direction v:
                     H_w . v; the outer tape holds one CallEntry for the call
                     and one for the inner backward, and no OpEntry;
     forward_over_tape  a ForwardAccumulator(x, v) around a GradientTape: H_w . v
                     (srcgrad replays the decorated function op by op there
                     today: test_forward_over_tape_records_one_compiled_entry);
     jvp_of_grad     sg.jvp(sg.grad(f, wrt=(i,)), args, tangents): H_sum . v
                     (sg.hvp, which runs the same code, is checked in 4);
   against (i) autograd's Hessian-vector product (where autograd runs the
   entry) and (ii) central differences of srcgrad's FIRST-order gradient
   (sg.grad for H_sum, the compiled tape entry with output weights for H_w,
   both validated against finite differences and autograd by test_corpus);
   the path "oracles" checks that these agree with each other. A case's
   five tests run one after the other, then its compiled code is released.
2. Third order for a representative subset: sg.grad(sg.grad(sg.grad(f))),
   sg.jvp(sg.grad(sg.grad(f)), ...) and three nested tapes, against
   autograd and central differences of srcgrad's second-order result
   (validated by 1).
3. A function that calls sg.grad, differentiated by sg.grad and on a tape,
   and twice (sg.grad(sg.grad), sg.hvp, nested tapes); sg.grad(f) called on
   watched Tensors inside a recording tape;
   sg.source(sg.grad(f)) for a loop function.
4. sg.hessian, sg.jacobian(sg.grad(f)) and sg.hvp against autograd.hessian,
   and float32 preserved.

Failures srcgrad has today are strict xfails whose reason names a
reproducer test at the end of this file (test_repro_*), itself a strict
xfail with the function, inputs, expected and actual values.
"""
import contextlib
import zlib

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import corpus_funcs as cf
import higher_funcs as hf
import srcgrad as sg
import test_corpus as tc
from gradcheck import check_close, numerical_grad, numerical_jacobian
from srcgrad.tape import CallEntry

# autograd warns when a derivative is identically zero (the zero-Hessian entries)
pytestmark = pytest.mark.filterwarnings("ignore:Output seems independent of input:UserWarning")

# Tolerances.
#
# Against finite differences of srcgrad's first-order gradient g (exact up
# to rounding): central differences with step h give
# (g(x + h d) - g(x - h d)) / 2h = H(x) d + O(h^2 |g'''| / 6) + O(eps |g| / h).
# With h = 1e-5 the truncation term is ~2e-11 |g'''| and the rounding term
# ~2e-11 |g| (eps = 2.2e-16). Measured on the corpus: at most 2e-8 relative
# to 1 + |value| (nested_loop_carried, dict_loop_update, whose third
# derivatives reach ~1e3). rtol = atol = 1e-6 leaves a margin of 50 and
# still catches any wrong term (a missing or doubled contribution is of the
# order of the values).
FD_STEP = 1e-5
FD_RTOL, FD_ATOL = 1e-6, 1e-6
# Against autograd: both exact, they differ by rounding only (measured: at
# most 6e-15 relative, star_call_list_dict), so 1e-10 is generous.
AG_RTOL, AG_ATOL = 1e-10, 1e-12
# Third order against finite differences of srcgrad's second-order result
# (exact): the same analysis with the fourth derivatives, which are larger
# (measured: at most 7e-8).
FD3_RTOL, FD3_ATOL = 1e-5, 1e-5


@contextlib.contextmanager
def autograd_numpy():
    """`np` is autograd.numpy in the corpus modules and in higher_funcs."""
    saved = hf.np
    hf.np = anp
    try:
        with tc.autograd_numpy():
            yield
    finally:
        hf.np = saved


def _arg(x, like):
    """x as the argument at a position whose example value is `like`:
    a Python float for a float, an array otherwise (autograd boxes unchanged)."""
    if isinstance(like, float) and isinstance(x, (np.ndarray, np.generic, float)):
        return float(x)
    return x


def _with(args, i, x):
    args = list(args)
    args[i] = _arg(x, args[i])
    return args


def _x0(entry):
    args = entry.make_args()
    return np.asarray(args[entry.hvp_index], dtype=np.float64)


def fd_directional(g, x, d, h=FD_STEP):
    """Central difference of the array function g at x in direction d."""
    return (np.asarray(g(x + h * d), dtype=np.float64) - np.asarray(g(x - h * d), dtype=np.float64)) / (2 * h)


def assert_nontrivial(*values):
    assert max(np.max(np.abs(np.asarray(v))) for v in values) > 1e-3, "a zero derivative checks little"


# ---------------------------------------------------------------------------
# The cases: every corpus entry, and a nonlinear companion of each entry
# whose Hessian is identically zero at its inputs
# ---------------------------------------------------------------------------

# entry name -> (why its Hessian is zero, the companion in higher_funcs)
ZERO_HESSIAN = {
    "while_other_module": ("sum(newton_reciprocal(a) * a * a) = sum(a): linear",
                           hf.while_other_module_squared),
    "for_zero_trips": ("zero trips: 2 * sum(x), linear", hf.for_zero_trips_squared),
    "guard_clauses_negative": ("n < 0 returns -sum(x): linear", hf.guard_clauses_squared),
    "cumulative_sum": ("a cumulative sum is linear", hf.cumulative_sum_squared),
    "bubble_sort": ("sorting is piecewise linear", hf.bubble_sort_weighted_squares),
    "bubble_sort_tuple_swap": ("sorting is piecewise linear", hf.bubble_sort_tuple_swap_squared),
    "activity_int_counters": ("linear in x for a fixed sign pattern", hf.activity_int_counters_squared),
    "interp_searchsorted": ("piecewise-linear interpolation: linear in fp and in t within a bin",
                            hf.interp_searchsorted_squared),
    "softmax": ("sum(softmax(x)) = 1 (the weighted paths are nontrivial)", hf.softmax_squares),
    "r_and_c_index_tricks": ("np.r_ / np.c_ and weighted sums: linear", hf.r_and_c_index_tricks_squared),
}


def _companion(entry, fn):
    return cf.Entry(fn.__name__, entry.construct, fn, lambda r, e=entry: e.make_args(), entry.wrt,
                    tape_ok=False, autograd_ok=entry.autograd_ok, second_order=True, hvp_arg=entry.hvp_arg)


CASES = list(cf.CORPUS) + [_companion(e, ZERO_HESSIAN[e.name][1]) for e in cf.CORPUS if e.name in ZERO_HESSIAN]
BY_NAME = {e.name: e for e in CASES}
assert set(ZERO_HESSIAN) <= set(BY_NAME)


# ---------------------------------------------------------------------------
# Oracles, computed once per case
# ---------------------------------------------------------------------------

_MEMO = {}


def memo(fn):
    def wrapper(*key):
        k = (fn.__name__,) + key
        if k not in _MEMO:
            _MEMO[k] = fn(*key)
        return _MEMO[k]
    wrapper.__name__ = fn.__name__
    return wrapper


@memo
def decorated(name):
    """sg.function of the case (one object per case: it caches its compiled code)."""
    return sg.function(BY_NAME[name].fn)


@memo
def first_grad(name):
    """sg.grad of the case with respect to its hvp argument (one object per
    case, so its second-order code is compiled once)."""
    e = BY_NAME[name]
    return sg.grad(e.fn, wrt=(e.hvp_index,))


@memo
def weight(name):
    e = BY_NAME[name]
    return tc.output_weight(e, e.fn(*e.make_args()))


@memo
def direction(name, kind):
    if kind == "ones":
        return np.ones_like(_x0(BY_NAME[name]))
    return tc.hvp_direction(BY_NAME[name])


def tape_first_grad(entry, x, w):
    """The first-order gradient of sum(w * f) at x by the compiled tape entry."""
    args = _with(entry.make_args(), entry.hvp_index, x)
    i = entry.hvp_index
    xt = args[i] = sg.constant(args[i])
    with sg.GradientTape() as tape:
        tape.watch(xt)
        y = decorated(entry.name)(*args)
    og = None if np.shape(w) == () else sg.constant(w)
    return tc.to_numpy(tape.gradient(y, xt, output_gradients=og, unconnected_gradients="zero"))


@memo
def fd_hvp(name, weighted, kind, h=FD_STEP):
    """Central differences of srcgrad's first-order gradient of sum(f)
    (weighted=False) or sum(w * f) in the direction `kind`."""
    e = BY_NAME[name]
    args = e.make_args()
    i = e.hvp_index
    if weighted:
        w = weight(name)
        g = lambda x: tape_first_grad(e, x, w)       # noqa: E731
    else:
        grad = first_grad(name)
        g = lambda x: grad(*_with(args, i, x))      # noqa: E731
    return fd_directional(g, _x0(e), direction(name, kind), h)


@memo
def ag_hvp(name, weighted, kind):
    """autograd's Hessian-vector product of sum(f) or sum(w * f)."""
    e = BY_NAME[name]
    args = e.make_args()
    i = e.hvp_index
    w = weight(name) if weighted else 1.0
    d = direction(name, kind)

    def f(x):
        return anp.sum(e.fn(*_with(args, i, x)) * w)

    def gd(x):
        return anp.sum(autograd.grad(f)(x) * d)
    x0 = args[i] if isinstance(args[i], float) else _x0(e)
    with autograd_numpy():
        return np.reshape(np.asarray(autograd.grad(gd)(x0), dtype=np.float64), np.shape(d))


def check_against_oracles(actual, entry, weighted, kind):
    actual = tc.to_numpy(actual)
    check_close(actual, fd_hvp(entry.name, weighted, kind), rtol=FD_RTOL, atol=FD_ATOL)
    if entry.autograd_ok:
        check_close(actual, ag_hvp(entry.name, weighted, kind), rtol=AG_RTOL, atol=AG_ATOL)


# ---------------------------------------------------------------------------
# The oracles agree, with no compiled second-order code involved
# ---------------------------------------------------------------------------

def check_oracles(entry):
    """The oracles agree (run as the path "oracles" of test_second_order, so
    that each case's tests run together and its compiled code can be freed
    after them)."""
    for weighted, kind in [(False, "ones"), (False, "v"), (True, "v")]:
        fine = fd_hvp(entry.name, weighted, kind)
        if entry.autograd_ok:
            check_close(ag_hvp(entry.name, weighted, kind), fine, rtol=FD_RTOL, atol=FD_ATOL)
        else:
            # no independent oracle: at least the path taken does not change
            # within the steps (two steps agree)
            check_close(fd_hvp(entry.name, weighted, kind, 1e-4), fine, rtol=1e-5, atol=1e-5)
    # the Hessian of sum(f) (the paths grad_of_grad and hvp)
    nontrivial = max(np.max(np.abs(fd_hvp(entry.name, False, k))) for k in ["ones", "v"]) > 1e-3
    assert nontrivial == (entry.name not in ZERO_HESSIAN), \
        "update ZERO_HESSIAN: %s has %s Hessian" % (entry.name, "a nonzero" if nontrivial else "a zero")


# ---------------------------------------------------------------------------
# 1. Second order through the four compiled paths
# ---------------------------------------------------------------------------

PATHS = ["oracles", "grad_of_grad", "nested_tapes", "forward_over_tape", "jvp_of_grad"]

# The reproducers (tests at the end of this file) of the failures found
R_THIRD_BRANCH = "test_repro_third_order_if_else"

# (case, path) -> the reproducer of its failure
XFAIL = {}


def second_order_params():
    params = []
    for e in CASES:
        for path in PATHS:
            marks = []
            if (e.name, path) in XFAIL:
                marks = [pytest.mark.xfail(strict=True, reason=XFAIL[(e.name, path)])]
            params.append(pytest.param(e, path, id="%s-%s" % (e.name, path), marks=marks))
    return params


def nested_tapes_hvp(entry, fn, args, w, v, check_entries=True):
    """H_w . v by a tape inside a tape over the compiled fn."""
    i = entry.hvp_index
    saved = tc.snapshot(args)
    ts = list(args)
    x = ts[i] = sg.constant(args[i])
    with sg.GradientTape() as t2:
        t2.watch(x)
        with sg.GradientTape() as t1:
            t1.watch(x)
            y = fn(*ts)
        og = None if np.shape(w) == () else sg.constant(w)
        g = t1.gradient(y, x, output_gradients=og)
    kinds = [type(r).__name__ for r in t2._entries]
    hv = t2.gradient(g, x, output_gradients=sg.constant(v), unconnected_gradients="zero")
    if check_entries:
        # the forward call and the inner backward, each one compiled call
        # (no op-by-op replay of the backward's arithmetic)
        assert all(k == CallEntry.__name__ for k in kinds), kinds
        assert 1 <= len(kinds) <= 2, kinds
        if np.max(np.abs(tc.to_numpy(hv))) > 0:
            assert len(kinds) == 2, kinds
    tc.assert_unmutated(ts, saved, "Tensor argument")
    return hv


def release(name):
    """Drop the case's compiled objects once its last path ran: they keep
    their ASTs, and millions of live objects make the garbage collector's
    full passes a third of this file's run time."""
    for key in [("first_grad", name), ("decorated", name)]:
        _MEMO.pop(key, None)


@pytest.mark.parametrize("entry, path", second_order_params())
def test_second_order(entry, path):
    try:
        second_order(entry, path)
    finally:
        if path == PATHS[-1]:
            release(entry.name)


def second_order(entry, path):
    if path == "oracles":
        check_oracles(entry)
        return
    args = entry.make_args()
    saved = tc.snapshot(args)
    i = entry.hvp_index
    v = direction(entry.name, "v")
    w = weight(entry.name)
    if path == "grad_of_grad":
        actual = sg.grad(first_grad(entry.name), wrt=(i,))(*args)
        assert isinstance(actual, np.ndarray) and not isinstance(actual, sg.Tensor), type(actual)
        check_against_oracles(actual, entry, False, "ones")
    elif path == "nested_tapes":
        actual = nested_tapes_hvp(entry, decorated(entry.name), args, w, v)
        check_against_oracles(actual, entry, True, "v")
    elif path == "forward_over_tape":
        ts = list(args)
        x = ts[i] = sg.constant(args[i])
        with sg.ForwardAccumulator(x, sg.constant(v)) as acc:
            with sg.GradientTape() as tape:
                tape.watch(x)
                y = decorated(entry.name)(*ts)
            og = None if np.shape(w) == () else sg.constant(w)
            g = tape.gradient(y, x, output_gradients=og)
        actual = acc.jvp(g, unconnected_gradients="zero")
        check_against_oracles(actual, entry, True, "v")
    else:
        tangents = [v if k == i else None for k in range(len(args))]
        _, actual = sg.jvp(first_grad(entry.name), args, tangents)
        assert np.asarray(actual).dtype == np.float64
        check_against_oracles(actual, entry, False, "v")
    tc.assert_unmutated(args, saved)


def test_forward_over_tape_records_one_compiled_entry():
    """Forward over reverse on a tape: the tape inside the accumulator holds
    one compiled entry for the call of the decorated function (its forward
    through generated code), as a tape alone does, and no op-by-op replay."""
    e = BY_NAME["while_counter"]
    args = e.make_args()
    ts = list(args)
    x = ts[0] = sg.constant(args[0])
    with sg.ForwardAccumulator(x, sg.constant(direction(e.name, "v"))):
        with sg.GradientTape() as tape:
            tape.watch(x)
            decorated(e.name)(*ts)
    kinds = [type(r).__name__ for r in tape._entries]
    assert kinds == [CallEntry.__name__], kinds


# ---------------------------------------------------------------------------
# 2. Third order for a representative subset
# ---------------------------------------------------------------------------

def _dedicated(fn, construct, inputs, autograd_ok=True):
    return cf.Entry(fn.__name__, construct, fn, inputs, (0,), tape_ok=False, autograd_ok=autograd_ok,
                    second_order=True)


THIRD = [
    _dedicated(hf.straight_line, "straight line", lambda r: (r.normal(size=3),)),
    BY_NAME["conditional_expression"],          # branch (conditional expression)
    BY_NAME["and_condition"],                   # branch (if/else on `and`)
    BY_NAME["horner"],                          # for over reversed(array)
    BY_NAME["while_counter"],                   # while with a counter
    BY_NAME["other_module_imported_name"],      # call of a helper in another module
    BY_NAME["method_call"],                     # method of an object, __call__
    BY_NAME["list_indexing"],                   # list built and read by index
    BY_NAME["dict_cache"],                      # dict built by key assignment, read by key
    BY_NAME["recursion_power"],                 # recursion
    BY_NAME["math_functions"],                  # math module on a Python float
]
for _e in THIRD:
    BY_NAME.setdefault(_e.name, _e)

THIRD_PATHS = ["grad_of_grad_of_grad", "jvp_of_grad_of_grad", "three_tapes"]
XFAIL_THIRD = {}


def third_params():
    params = []
    for e in THIRD:
        for path in THIRD_PATHS:
            marks = []
            if (e.name, path) in XFAIL_THIRD:
                marks = [pytest.mark.xfail(strict=True, reason=XFAIL_THIRD[(e.name, path)])]
            params.append(pytest.param(e, path, id="%s-%s" % (e.name, path), marks=marks))
    return params


@memo
def second_grad(name):
    e = BY_NAME[name]
    return sg.grad(first_grad(name), wrt=(e.hvp_index,))


@memo
def third_direction(name):
    rng = np.random.default_rng(zlib.crc32(("third:" + name).encode()))
    return rng.normal(size=_x0(BY_NAME[name]).shape)


def three_tapes(entry, x, check_entries=False):
    """d/dx <u, d/dx <v, d/dx <w, f>>> by three nested tapes over the compiled f."""
    i = entry.hvp_index
    name = entry.name
    ts = _with(entry.make_args(), i, x)
    xt = ts[i] = sg.constant(ts[i])
    w = weight(name)
    with sg.GradientTape() as t3:
        t3.watch(xt)
        with sg.GradientTape() as t2:
            t2.watch(xt)
            with sg.GradientTape() as t1:
                t1.watch(xt)
                y = decorated(name)(*ts)
            g1 = t1.gradient(y, xt, output_gradients=None if np.shape(w) == () else sg.constant(w))
        g2 = t2.gradient(g1, xt, output_gradients=sg.constant(direction(name, "v")))
    if check_entries:
        # the call and each backward: one compiled entry each, at every order
        kinds = [type(r).__name__ for r in t3._entries]
        assert kinds == [CallEntry.__name__] * 3, kinds
    g3 = t3.gradient(g2, xt, output_gradients=sg.constant(third_direction(name)), unconnected_gradients="zero")
    return tc.to_numpy(g3)


def nested_tapes_at(entry, x):
    args = _with(entry.make_args(), entry.hvp_index, x)
    return tc.to_numpy(nested_tapes_hvp(entry, decorated(entry.name), args, weight(entry.name),
                                        direction(entry.name, "v"), check_entries=False))


@memo
def third_oracles(name, path):
    """(central differences of srcgrad's second-order result, autograd)."""
    e = BY_NAME[name]
    args = e.make_args()
    i = e.hvp_index
    x0 = args[i] if isinstance(args[i], float) else _x0(e)
    if path in ("grad_of_grad_of_grad", "jvp_of_grad_of_grad"):
        # d/dx sum(d/dx sum(d/dx sum(f))): the Jacobian of G2 = H_sum . 1 times 1
        # (third derivatives are symmetric, so J . 1 = J^T . 1); with jvp, times u
        gg = second_grad(name)
        d = direction(name, "ones") if path == "grad_of_grad_of_grad" else third_direction(name)
        fd = fd_directional(lambda x: gg(*_with(args, i, x)), _x0(e), d)
        ws = [1.0, direction(name, "ones"), d]
    else:
        fd = fd_directional(lambda x: nested_tapes_at(e, x), _x0(e), third_direction(name))
        ws = [weight(name), direction(name, "v"), third_direction(name)]

    def f0(x):
        return anp.sum(e.fn(*_with(args, i, x)) * ws[0])

    def f1(x):
        return anp.sum(autograd.grad(f0)(x) * ws[1])

    def f2(x):
        return anp.sum(autograd.grad(f1)(x) * ws[2])
    ag = None
    if e.autograd_ok:
        with autograd_numpy():
            ag = np.reshape(np.asarray(autograd.grad(f2)(x0), dtype=np.float64), np.shape(fd))
    return fd, ag


@pytest.mark.parametrize("entry, path", third_params())
def test_third_order(entry, path):
    args = entry.make_args()
    saved = tc.snapshot(args)
    i = entry.hvp_index
    if path == "grad_of_grad_of_grad":
        actual = sg.grad(second_grad(entry.name), wrt=(i,))(*args)
    elif path == "jvp_of_grad_of_grad":
        tangents = [third_direction(entry.name) if k == i else None for k in range(len(args))]
        _, actual = sg.jvp(second_grad(entry.name), args, tangents)
    else:
        actual = three_tapes(entry, args[i], check_entries=True)
    fd, ag = third_oracles(entry.name, path)
    check_close(actual, fd, rtol=FD3_RTOL, atol=FD3_ATOL)
    if ag is not None:
        check_close(ag, fd, rtol=FD3_RTOL, atol=FD3_ATOL)     # the oracles agree
        check_close(actual, ag, rtol=AG_RTOL, atol=AG_ATOL)
    assert_nontrivial(ag if ag is not None else fd)
    tc.assert_unmutated(args, saved)


# ---------------------------------------------------------------------------
# 3. A function that calls sg.grad; sg.grad inside a recording tape; source
# ---------------------------------------------------------------------------

def _ag_calls_grad(loss, outer):
    """autograd's gradient of x -> outer(grad(loss)(x), x)."""
    def f(x):
        return outer(autograd.grad(loss)(x), x)
    return autograd.grad(f)


CALLS_GRAD = [
    (hf.calls_grad_of_loop, hf.loop_loss, lambda g, x: anp.sum(g ** 2)),
    (hf.calls_grad_of_plain, hf.plain_loss, lambda g, x: anp.sum(anp.cos(g) * x)),
]


@pytest.mark.parametrize("fn, loss, outer", CALLS_GRAD, ids=[c[0].__name__ for c in CALLS_GRAD])
def test_function_calling_grad(fn, loss, outer):
    x = np.array([0.4, -0.7, 1.1])
    with autograd_numpy():
        expected = _ag_calls_grad(loss, outer)(x)
    # the oracles agree: finite differences of the function (which runs srcgrad's
    # first-order gradient, validated by test_corpus) and autograd
    check_close(numerical_grad(fn, x), expected, rtol=tc.RTOL, atol=tc.ATOL)
    assert_nontrivial(expected)
    # sg.grad of the function
    check_close(sg.grad(fn)(x), expected, rtol=AG_RTOL, atol=AG_ATOL)
    # on a tape: the decorated function (one compiled entry), and op by op
    # (the undecorated function, whose call of the gradient is recorded)
    for f in [sg.function(fn), fn]:
        xt = sg.constant(x)
        with sg.GradientTape() as tape:
            tape.watch(xt)
            y = f(xt)
        assert isinstance(y, sg.Tensor), type(y)
        check_close(tc.to_numpy(tape.gradient(y, xt)), expected, rtol=AG_RTOL, atol=AG_ATOL)


SECOND_OF_CALLS_GRAD = ["grad_of_grad", "hvp", "nested_tapes"]
XFAIL_CALLS_GRAD = {}


def calls_grad_params():
    params = []
    for fn, loss, outer in CALLS_GRAD:
        for path in SECOND_OF_CALLS_GRAD:
            reason = XFAIL_CALLS_GRAD.get((fn.__name__, path))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            params.append(pytest.param(fn, loss, outer, path, id="%s-%s" % (fn.__name__, path), marks=marks))
    return params


@pytest.mark.parametrize("fn, loss, outer, path", calls_grad_params())
def test_second_derivative_of_function_calling_grad(fn, loss, outer, path):
    """The Hessian of a function that calls sg.grad (a third derivative of
    the loss it differentiates), times 1 or v."""
    x = np.array([0.4, -0.7, 1.1])
    v = np.array([0.3, 1.0, -0.5])

    def f(x):
        return outer(autograd.grad(loss)(x), x)
    with autograd_numpy():
        hessian = autograd.hessian(f)(x)
    assert_nontrivial(hessian)
    # the oracles agree: central differences of sg.grad(fn) (validated above)
    check_close(numerical_jacobian(sg.grad(fn), x, eps=FD_STEP), hessian, rtol=FD_RTOL, atol=FD_ATOL)
    if path == "grad_of_grad":
        check_close(sg.grad(sg.grad(fn))(x), hessian @ np.ones(3), rtol=AG_RTOL, atol=AG_ATOL)
    elif path == "hvp":
        check_close(sg.hvp(fn)(x, v), hessian @ v, rtol=AG_RTOL, atol=AG_ATOL)
    else:
        xt = sg.constant(x)
        with sg.GradientTape() as t2:
            t2.watch(xt)
            with sg.GradientTape() as t1:
                t1.watch(xt)
                y = sg.function(fn)(xt)
            g = t1.gradient(y, xt)
        kinds = [type(r).__name__ for r in t2._entries]
        assert kinds == [CallEntry.__name__] * 2, kinds
        check_close(tc.to_numpy(t2.gradient(g, xt, output_gradients=sg.constant(v))), hessian @ v,
                    rtol=AG_RTOL, atol=AG_ATOL)


def test_grad_called_inside_recording_tape():
    """`with tape: y = np.sin(v @ sg.grad(fun)(x, w))`: the gradient is recorded
    (one compiled entry), so y is connected to x, w and v."""
    rng = np.random.default_rng(9)
    x0, w0, v0 = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    x, w, v = sg.constant(x0), sg.constant(w0), sg.constant(v0)
    with sg.GradientTape(persistent=True) as tape:
        tape.watch([x, w, v])
        g = sg.grad(hf.two_args)(x, w)
        y = np.sin(v @ g)
    assert isinstance(g, sg.Tensor) and isinstance(y, sg.Tensor), (type(g), type(y))
    kinds = [type(r).__name__ for r in tape._entries]
    assert kinds.count(CallEntry.__name__) == 1 and kinds[0] == CallEntry.__name__, kinds
    actual = [tc.to_numpy(d) for d in tape.gradient(y, [x, w, v])]

    def f(x, w, v):
        return anp.sin(anp.dot(v, autograd.grad(hf.two_args)(x, w)))
    with autograd_numpy():
        expected = [autograd.grad(f, k)(x0, w0, v0) for k in range(3)]
    for a, e in zip(actual, expected):
        check_close(a, e, rtol=AG_RTOL, atol=AG_ATOL)
    for k, arg in enumerate([x0, w0, v0]):    # and finite differences of the plain function
        def plain(a, k=k):
            args = [x0, w0, v0]
            args[k] = a
            return np.sin(args[2] @ sg.grad(hf.two_args)(args[0], args[1]))
        check_close(actual[k], numerical_grad(plain, arg), rtol=tc.RTOL, atol=tc.ATOL)


def test_source_of_second_order_code():
    """sg.source(sg.grad(f)) prints the second-order code of a loop function:
    valid Python, run-time primitives (push/pop) rather than list methods,
    comments pointing at the user's lines."""
    src = sg.source(sg.grad(hf.loop_loss))
    compile(src, "<second-order code>", "exec")
    assert "_stack.append" not in src and ".pop()" not in src, src
    assert "for i in" in src, src
    assert "# Grad of: h = np.tanh(0.8 * h + 0.3 * x)  (higher_funcs.py:" in src, src
    assert src.startswith("def dgrad_loop_lossdx(x"), src.splitlines()[0]


# ---------------------------------------------------------------------------
# 4. sg.hessian, sg.jacobian(sg.grad(f)) and sg.hvp against autograd.hessian
# ---------------------------------------------------------------------------

HESSIANS = [
    (hf.rosenbrock_loop, lambda: np.array([0.3, -0.4, 1.2, 0.8, -1.1])),
    (hf.branch_matrix, lambda: np.array([[0.3, -0.2, 0.5], [0.1, 0.4, -0.3]])),
    (hf.while_scalar_power, lambda: np.array([0.6, -0.9, 1.3])),
    (hf.straight_line, lambda: np.array([0.3, -1.2, 0.8])),
    (cf.newton_sqrt, lambda: np.array([0.5, -1.5, 0.2])),
]


@pytest.mark.parametrize("fn, make_x", HESSIANS, ids=[h[0].__name__ for h in HESSIANS])
def test_hessian_and_jacobian_of_grad(fn, make_x):
    x = make_x()
    with autograd_numpy():
        expected = autograd.hessian(fn)(x)
    assert expected.shape == x.shape + x.shape
    assert_nontrivial(expected)
    # the oracle against central differences of srcgrad's first-order gradient
    check_close(numerical_jacobian(sg.grad(fn), x, eps=FD_STEP), expected, rtol=FD_RTOL, atol=FD_ATOL)
    for name, h in [("hessian", sg.hessian(fn)), ("jacobian of grad", sg.jacobian(sg.grad(fn)))]:
        actual = h(x)
        assert actual.dtype == np.float64, (name, actual.dtype)
        check_close(actual, expected, rtol=AG_RTOL, atol=AG_ATOL)
        # float32 in, float32 out, and the same Hessian to float32 accuracy
        # (rounding of ~1e-7 relative per operation, amplified by the loops)
        actual32 = h(x.astype(np.float32))
        assert actual32.dtype == np.float32, (name, actual32.dtype)
        check_close(actual32, expected, rtol=1e-3, atol=1e-3 * np.max(np.abs(expected)))
    v = np.random.default_rng(zlib.crc32(fn.__name__.encode())).normal(size=x.shape)
    hv = sg.hvp(fn)(x, v)
    assert hv.dtype == np.float64
    check_close(hv, np.tensordot(expected, v, axes=v.ndim), rtol=AG_RTOL, atol=AG_ATOL)
    hv32 = sg.hvp(fn)(x.astype(np.float32), v.astype(np.float32))
    assert hv32.dtype == np.float32, hv32.dtype



# ---------------------------------------------------------------------------
# Reproducers of the failures found, now regression tests: each asserts the
# correct result; its docstring records what went wrong before the fix (a
# new failure gets a strict xfail here and an entry in XFAIL / XFAIL_THIRD).
# ---------------------------------------------------------------------------



def test_repro_jvp_with_default_argument():
    """f(x, scale=2.0) = sum(tanh(scale x)), called with x only.
    sg.jvp(f, (x,), (v,)), sg.jvp(sg.grad(f), ...), sg.hvp(f) and
    sg.hessian(f) raise TypeError: f_jvp() missing 1 required positional
    argument: 'dx' (srcgrad/functional.py, jvp: `values` holds the primals,
    not the bound parameters with their defaults)."""
    x = np.array([0.3, -0.5])
    v = np.array([1.0, 0.5])
    t = np.tanh(2.0 * x)
    _, jv = sg.jvp(hf.default_scale, (x,), (v,))
    check_close(jv, np.sum(2.0 * (1.0 - t ** 2) * v))
    check_close(sg.hvp(hf.default_scale)(x, v), -8.0 * t * (1.0 - t ** 2) * v)
    check_close(sg.hessian(hf.default_scale)(x), np.diag(-8.0 * t * (1.0 - t ** 2)))


def _acc_around_tape(fn, x0, v0):
    """(first-order gradient, its JVP) with a ForwardAccumulator around a tape."""
    x = sg.constant(x0)
    with sg.ForwardAccumulator(x, sg.constant(v0)) as acc:
        with sg.GradientTape() as tape:
            tape.watch(x)
            y = sg.function(fn)(x)
        g = tape.gradient(y, x)
    return tc.to_numpy(g), tc.to_numpy(acc.jvp(g))


def test_repro_forward_over_tape_assignment_into_new_array():
    """Was SILENTLY WRONG (fixed: a tape inside the accumulator records the
    call as one compiled entry, forward_mode.call_function). assign_into_zeros(x) builds
    M = np.zeros((2, 2)); M[i, j] = sin(x[i]) x[j]; returns sum(M @ x).
    x = [0.3, -0.5]: a tape alone and sg.grad give [0.21447121, 0.4822834];
    the same tape inside a ForwardAccumulator gives [-0.0551716, 0.09195267]
    (the path through M is lost) and acc.jvp(g) is None. Every corpus
    function assigning into an array it creates fails the same way
    (rnn_fill_rows, slice_assign, conv1d_valid, ... raise "target must be a
    Tensor ..., got 'float64'" when nothing reconnects the output)."""
    x0, v0 = np.array([0.3, -0.5]), np.array([1.0, 0.5])
    g, hv = _acc_around_tape(hf.assign_into_zeros, x0, v0)
    check_close(g, sg.grad(hf.assign_into_zeros)(x0), rtol=1e-12, atol=1e-12)
    check_close(hv, numerical_jacobian(sg.grad(hf.assign_into_zeros), x0, eps=FD_STEP) @ v0,
                rtol=FD_RTOL, atol=FD_ATOL)


def test_repro_forward_over_tape_element_assignment_raises():
    """setitem_on_copy(x): y = x.copy(); y[0] = y[0] * y[1]; sum(y * y).
    Decorated, on a tape inside a ForwardAccumulator: TypeError "srcgrad
    Tensors are immutable ..." (the decorated function is replayed op by
    op); alone on a tape, and by sg.grad/sg.hvp, it is supported."""
    x0, v0 = np.array([0.3, -0.5, 0.8]), np.array([1.0, 0.5, -0.2])
    g, hv = _acc_around_tape(hf.setitem_on_copy, x0, v0)
    check_close(g, sg.grad(hf.setitem_on_copy)(x0), rtol=1e-12, atol=1e-12)
    check_close(hv, sg.hvp(hf.setitem_on_copy)(x0, v0), rtol=1e-12, atol=1e-12)


def test_repro_forward_over_tape_math_module():
    """math_float(a) = math.sin(a) * a. Decorated, on a tape inside a
    ForwardAccumulator: the output is a Python float and tape.gradient
    raises ValueError "target must be a Tensor ..., got 'float'"."""
    a0, v0 = np.array(0.7), np.array(1.0)
    g, hv = _acc_around_tape(hf.math_float, a0, v0)
    check_close(g, np.sin(0.7) + 0.7 * np.cos(0.7), rtol=1e-12, atol=1e-12)
    check_close(hv, 2 * np.cos(0.7) - 0.7 * np.sin(0.7), rtol=1e-12, atol=1e-12)


def test_repro_third_order_if_else():
    """if_else_scalar(0.7) = 0.7 ** 2 sin(0.7). The third derivative is
    6 cos x - 6 x sin x - x ** 2 cos x = 1.5085661655...; sg.grad(sg.grad(
    sg.grad(f)))(0.7) raises TypeError: unsupported operand type(s) for +:
    'NoneType' and 'NoneType', at `by_2 = by_2 + densify(pop(_bstack_2), y)`
    in the generated code (also three nested tapes; the same in a recursion,
    recursion_power, and in and_condition). The second derivative is right.
    A conditional expression (`a if c else b`) works."""
    x = 0.7
    expected = 6 * np.cos(x) - 6 * x * np.sin(x) - x ** 2 * np.cos(x)
    check_close(sg.grad(sg.grad(hf.if_else_scalar))(x), 2 * np.sin(x) + 4 * x * np.cos(x) - x ** 2 * np.sin(x))
    check_close(sg.grad(sg.grad(sg.grad(hf.if_else_scalar)))(x), expected, rtol=1e-12)


def test_repro_third_order_loop():
    """cube_by_loop(0.7) = 0.7 ** 3 by `for i in range(2): y = y * x`.
    sg.grad(sg.grad(sg.grad(f)))(0.7) raised IndexError: pop from empty list
    at `bby_1 = densify(pop(_bbstack), by_1)` (expected 6.0): the cotangent
    stack was pushed by name, and ANF names a nested pop afresh. Fixed by
    stack-level activity (activity.py): every push and pop of a stack that
    carries derivatives moves one on its derivative stack."""
    check_close(sg.grad(sg.grad(hf.cube_by_loop))(0.7), 4.2, rtol=1e-12)
    check_close(sg.grad(sg.grad(sg.grad(hf.cube_by_loop)))(0.7), 6.0, rtol=1e-12)


def test_repro_jvp_of_second_order_loop():
    """Was SILENTLY WRONG (the pop `by_1_1 = pop(_bstack)` was inactive, so
    its tangent was zero; see test_repro_third_order_loop for the fix).
    cube_by_loop(x) = x ** 3 by `for i in range(2): y = y * x`.
    sg.jvp(sg.grad(sg.grad(f)), (0.7,), (1.0,)) returned the tangent 5.0
    (expected 6.0; the primal 4.2 is right); sg.jacobian(sg.grad(sg.grad(f)))
    gives 5.0 too. x ** 4 by three trips gives 14.0 (expected 16.8); the same
    code without a loop (y = x * x; y = y * x) gives 6.0; a while loop gives
    5.0. The primal (second-order) code is right; the generated JVP of it is
    not. It makes sg.hvp and sg.hessian of a function that calls sg.grad of
    a loop function wrong (calls_grad_of_loop: off by up to 2.2), and the
    corpus entries horner and while_counter wrong by 17-40% in the path
    jvp_of_grad_of_grad."""
    _, t = sg.jvp(sg.grad(sg.grad(hf.cube_by_loop)), (0.7,), (1.0,))
    check_close(t, 6.0, rtol=1e-12)
    check_close(sg.jacobian(sg.grad(sg.grad(hf.cube_by_loop)))(np.array([0.7, -1.3])),
                np.diag([6.0, 6.0]), rtol=1e-12, atol=1e-12)
