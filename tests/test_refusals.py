"""What srcgrad refuses rather than differentiate wrongly (issue 11: a
silent wrong derivative is worse than any error).

Each function here used to give a wrong gradient without a word: methods
that change a list or dict in place other than append/extend (the
value-semantics IR dropped them), appending to a list through a second name
(the functional list_append rebound one name only), a loop directly over a
dict (lowered to an index loop), a local function passed on as a value.
Each now raises UnsupportedSyntaxError naming the construct, the file and
the line; a correct neighbour of each is checked by value.
"""
import os
import warnings

import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close, numerical_grad

FILE = os.path.abspath(__file__)
X = np.array([0.3, 0.5])


def insert_front(x):
    xs = [x, x * 3]
    xs.insert(0, x * 2)
    return np.sum(xs[0] * xs[2])


def reverse_list(x):
    xs = [x * 2, x]
    xs.reverse()
    return np.sum(xs[0] ** 3)


def dict_setdefault(x):
    d = {}
    d.setdefault("a", x * 2)
    return np.sum(d["a"] ** 2)


def dict_update(x):
    d = {"a": x}
    d.update(b=x * 2)
    return np.sum(d["b"] ** 2)


def list_pop(x):
    xs = [x, x * 2]
    last = xs.pop()
    return np.sum(last * xs[0])


def array_sort(x):
    y = x * 1.0
    y.sort()
    return np.sum(y * np.arange(2.0))


def append_through_alias(x):
    xs = [x * 1.0, x * 2.0]
    ys = xs
    ys.append(x * 5)
    return np.sum(xs[-1] ** 2)


def loop_over_dict(x):
    d = {"a": x, "c": x * 2.0}
    s = 0.0
    for k in d:
        s = s + np.sum(d[k] ** 3)
    return s


def helper_apply(fn, x):
    return fn(x) * x


def local_def_passed_on(x):
    def sq(z):
        return np.sin(z)
    return np.sum(helper_apply(sq, x))


def lambda_passed_on(x):
    return np.sum(helper_apply(lambda z: np.sin(z), x))


def loop_over_items(x):           # the supported spelling of loop_over_dict
    d = {"a": x, "c": x * 2.0}
    s = 0.0
    for k, v in d.items():
        s = s + np.sum(v ** 3)
    return s


def new_list_instead(x):          # the supported spelling of insert_front
    xs = [x, x * 3]
    xs = [x * 2] + xs
    return np.sum(xs[0] * xs[2])


def _line_of(f, text):
    lines = open(FILE).read().splitlines()
    start = f.__code__.co_firstlineno
    for k in range(start - 1, len(lines)):
        if text in lines[k]:
            return k + 1
    raise AssertionError(text)


@pytest.mark.parametrize("f, text", [
    (array_sort, "y.sort"), (loop_over_dict, "for k in d"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_refused_at_the_users_line(f, text):
    assert_refused_at(f, text)


@pytest.mark.parametrize("f, text", [
    (insert_front, "xs.insert"), (reverse_list, "xs.reverse"), (dict_setdefault, "d.setdefault"),
    (dict_update, "d.update"), (list_pop, "xs.pop"), (append_through_alias, "ys.append"),
    (local_def_passed_on, "helper_apply(sq, x)"), (lambda_passed_on, "helper_apply(lambda z"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_what_the_compiler_refuses_runs_op_by_op(f, text):
    """Container methods and local functions passed on: the compiler
    refuses them, and sg.grad runs f op by op on the tape instead (once),
    with a PerformanceWarning naming the construct's line (op_by_op.py)."""
    with pytest.warns(sg.PerformanceWarning, match="op by op.*%s:%d" % (FILE.rsplit("/", 1)[-1], _line_of(f, text))):
        g = sg.grad(f)(X)
    check_close(g, numerical_grad(f, X.copy()), rtol=1e-6, atol=1e-8)
    v = sg.Variable(X)
    with pytest.warns(sg.PerformanceWarning):
        with sg.GradientTape() as tape:
            y = sg.function(f)(v)
    check_close(tape.gradient(y, v).numpy(), g, rtol=1e-12, atol=1e-14)


def assert_refused_at(f, text):
    """sg.grad(f) raises UnsupportedSyntaxError at f's line holding `text`."""
    with pytest.raises(sg.UnsupportedSyntaxError) as info:
        sg.grad(f)(X)
    assert info.value.filename == FILE
    assert info.value.lineno == _line_of(f, text)
    return info.value


@pytest.mark.parametrize("f", [loop_over_items, new_list_instead], ids=lambda f: f.__name__)
def test_the_supported_spelling_is_right(f):
    check_close(sg.grad(f)(X), numerical_grad(f, X.copy()), rtol=1e-6, atol=1e-8)
    v = sg.Variable(X)
    with sg.GradientTape() as tape:
        y = sg.function(f)(v)
    check_close(tape.gradient(y, v).numpy(), sg.grad(f)(X), rtol=1e-12, atol=1e-14)


def dict_copy_then_set(x):
    d = {"a": x, "b": x * 2}
    d2 = d.copy()
    d2["a"] = d["a"] * 3
    return np.sum(d2["a"] * d2["b"]) + np.sum(d["a"])


def dict_of_dict_then_set(x):
    d = {"a": x, "b": x * 2}
    d2 = dict(d)
    d2["a"] = d["a"] * 3
    return np.sum(d2["a"] * d2["b"]) + np.sum(d["a"])


def row_of_list_then_set(x):
    M = [x * 1.0, x * 2.0]
    row = M[0]
    row[1] = 5.0                  # NumPy changes M[0] too
    return np.sum(M[0] * x)


@pytest.mark.parametrize("f", [dict_copy_then_set, dict_of_dict_then_set], ids=lambda f: f.__name__)
def test_element_assignment_to_a_container_copy_is_not_a_view(f):
    """Assigning an entry of a copied dict replaces the entry: the original
    is unchanged, so no view error (the run-time check once looked inside
    the containers' arrays)."""
    check_close(sg.grad(f)(X), 12 * X + 1, rtol=1e-12, atol=1e-14)


def test_element_assignment_to_an_array_held_by_a_list_is_refused():
    with pytest.raises(sg.UnsupportedSyntaxError) as info:
        sg.grad(row_of_list_then_set)(X)
    assert info.value.lineno == _line_of(row_of_list_then_set, "row[1] = 5.0")


# -- writes NumPy would make through another name (found by the stress tests)

def write_into_array_a_list_holds(x):
    a = x * 1.0
    zs = [a]
    a[1] = np.sin(x[0])           # NumPy: zs[0] changes too
    return np.sum(zs[0] ** 2)


def write_into_array_appended(x):
    a = x * 1.0
    zs = []
    zs.append(a)
    a[1] = 2.0
    return np.sum(zs[0] ** 2)


def augmented_through_alias(x):
    a = x * 1.0
    b = a
    b += 1.0                      # NumPy: a changes too
    return np.sum(a ** 2)


def augmented_into_array_a_dict_holds(x):
    a = x * 1.0
    d = {"k": a}
    a *= 2.0
    return np.sum(d["k"] ** 2)


def augmented_float_is_fine(x):
    s = 0.0
    t = s
    for i in range(3):
        s += np.sum(x * i)
    return s + t


def item_is_differentiated(v):
    return v[0].item() * np.sum(v)


def tolist_of_differentiated(v):
    return sum(v.tolist()) * v[0]


@pytest.mark.parametrize("f, text", [
    (write_into_array_a_list_holds, "a[1] = np.sin"), (write_into_array_appended, "a[1] = 2.0"),
    (augmented_through_alias, "b += 1.0"), (augmented_into_array_a_dict_holds, "a *= 2.0"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_writes_numpy_would_make_through_another_name_are_refused(f, text):
    assert_refused_at(f, text)


def test_augmented_assignment_of_a_float_alias_is_fine():
    f = augmented_float_is_fine
    check_close(sg.grad(f)(X), numerical_grad(f, X.copy()), rtol=1e-6, atol=1e-8)


def test_item_is_differentiated_and_tolist_is_refused():
    v = np.array([0.3, 0.8])
    check_close(sg.grad(item_is_differentiated)(v), numerical_grad(item_is_differentiated, v.copy()),
                rtol=1e-6, atol=1e-8)
    with pytest.raises(sg.NoRuleError, match="tolist"):
        sg.grad(tolist_of_differentiated)(v)


def writes_its_argument(v):
    v[0] = 7.0 * v[1]
    return v[0]


def calls_a_writer(x):
    a = x * 1.0
    s = writes_its_argument(a)
    return s + np.sum(a)              # NumPy: a[0] was changed by the call


def copies_then_writes(v):
    v = v.copy()
    v[0] = 7.0 * v[1]
    return v[0]


def calls_a_copier(x):
    a = x * 1.0
    s = copies_then_writes(a)
    return s + np.sum(a)


def test_a_called_function_writing_into_its_parameter_is_refused():
    with pytest.raises(sg.UnsupportedSyntaxError) as info:
        sg.grad(calls_a_writer)(X)
    assert info.value.lineno == _line_of(writes_its_argument, "v[0] = 7.0")
    check_close(sg.grad(calls_a_copier)(X), numerical_grad(calls_a_copier, X.copy()), rtol=1e-6, atol=1e-8)


def write_through_a_view_of_a_view(x):
    a = x * 1.0
    b = a[None][0]                # a view of a view of a
    b[0] = 3.0 * x[1]
    return np.sum(a ** 2)


def test_a_view_of_a_view_is_checked():
    error = assert_refused_at(write_through_a_view_of_a_view, "b[0] = 3.0")
    assert "make a copy" in error.hint


def test_a_library_function_that_converts_its_argument_is_never_a_zero_gradient():
    # SciPy >= 1.15 writes scipy.optimize.rosen with the array API (array_namespace, xp_promote: its
    # argument converted to an ndarray). The compiler refuses `xp.sum(..., axis=0, dtype=...)`, op by op
    # the conversion cut the path inside SciPy, and sg.grad returned zeros, silently. The right gradient
    # or GradientPathError naming SciPy's line: never a wrong value.
    scipy_optimize = pytest.importorskip("scipy.optimize")
    x = np.array([0.3, -0.8, 1.2, 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        try:
            g = sg.grad(scipy_optimize.rosen)(x)
        except sg.GradientPathError as exc:
            assert "_optimize.py" in str(exc) and "rosen" in str(exc)
            return
    check_close(g, scipy_optimize.rosen_der(x), rtol=1e-10)


def _apply(fn, x):
    return fn(x)


def test_float_of_a_differentiated_value_run_op_by_op_is_refused_not_cut():
    # a lambda passed on runs op by op; float(z[0]) and z[0].item() gave Python floats the tape cannot
    # follow, and sg.grad returned the gradient without that path ([0.5, 0.5, 0.5] for [2, 0.5, 0.5]).
    # autograd and JAX refuse float() of a traced value; so does srcgrad, naming the line
    x = np.array([0.5, 2.0, -1.0])
    for convert in ("float", "item"):
        if convert == "float":
            def f(x):
                return _apply(lambda z: np.sum(z) * float(z[0]), x)
        else:
            def f(x):
                return _apply(lambda z: np.sum(z) * z[0].item(), x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sg.PerformanceWarning)
            with pytest.raises(sg.GradientPathError, match=r"test_refusals\.py:\d+"):
                sg.grad(f)(x)
            with pytest.raises(sg.GradientPathError):
                sg.jacobian(f)(x)
    # on a tape float(t) stays a conversion on purpose (TF's float(tensor)): no warning, the value
    v = sg.Variable(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.GradientPathWarning)
        with sg.GradientTape() as tape:
            y = np.sum(v) * float(v[0])
    check_close(tape.gradient(y, v).numpy(), [0.5, 0.5, 0.5])


def test_arrays_of_python_objects_and_mixed_results_are_refused_not_cut():
    # (found by a probe) v.astype(object), np.array([...], dtype=object), np.frompyfunc and
    # scipy.linalg.cho_factor's (c, lower) left the tape or had no derivative: partial gradients, silently
    x = np.array([0.3, 0.7, 1.2])
    with pytest.raises(sg.NoRuleError, match=r"astype\(object\)"):
        sg.grad(lambda v: np.sum((v.astype(object) ** 2).astype(float)) + np.sum(v))(x)
    square = np.frompyfunc(lambda a: a * a, 1, 1)
    op_by_op = [lambda z: np.sum((z.astype(object) ** 2).astype(float)),
                lambda z: np.sum(np.array([z[0], z[1] * z[1]], dtype=object).astype(float)),
                lambda z: np.sum(square(z).astype(float))]
    for inner in op_by_op:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sg.PerformanceWarning)
            try:        # (compiled or op by op: the right gradient or a refusal, never a cut path)
                g = sg.grad(lambda v: _apply(inner, v) + np.sum(v))(x)
            except (sg.GradientPathError, sg.NoRuleError):
                pass
            else:
                check_close(g, numerical_grad(lambda v: inner(v) + np.sum(v), x), rtol=1e-6)
        v = sg.Variable(x)
        with pytest.warns(sg.GradientPathWarning, match="Python objects"):
            with sg.GradientTape():
                inner(v)
    sl = pytest.importorskip("scipy.linalg")
    B = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, 0.2], [0.1, 0.2, 1.0]])

    def solve_spd(v):
        return np.sum(sl.cho_solve(sl.cho_factor(B + np.diag(v)), np.ones(3)))
    eps = 1e-6
    fd = np.array([(solve_spd(x + eps * u) - solve_spd(x - eps * u)) / (2 * eps) for u in np.eye(3)])
    check_close(sg.grad(solve_spd)(x), fd, rtol=1e-6)          # compiled: a rule for the pair
    with pytest.warns(sg.GradientPathWarning, match="cho_factor"):      # op by op: (c, lower) is not recorded
        with sg.GradientTape():
            solve_spd(sg.Variable(x))


_MASK = np.array([True, False, True])


def _sum_where(x):
    return np.sum(x ** 2, where=_MASK)


def _mean_where(x):
    return np.mean(x ** 2, where=_MASK)


def _max_where(x):
    return np.max(x, initial=-np.inf, where=_MASK)


@pytest.mark.parametrize("f", [_sum_where, _mean_where, _max_where])
def test_reductions_with_where_are_refused_not_differentiated_wrongly(f):
    """np.sum/mean/max's rules do not model where= (the derivative ignored
    it, silently: found by the probe helper): the call is refused with the
    workaround, on every path."""
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="where= is not modelled"):
        sg.grad(f)(x)
    v = sg.Variable(x)
    with pytest.raises(TypeError, match="where= is not modelled"):
        with sg.GradientTape():
            f(v)
