"""Minimal reproducers of why issue 11's programs (tests/programs/) fail today.

Each `CAUSES` row is `(key, function, make_args, expected_gradient, what)`:
the smallest function showing one missing feature or bug of srcgrad, with its
gradient derived by hand. tests/test_programs.py checks each one through
`sg.grad` and marks it xfail(strict=True) while srcgrad lacks the feature, so
fixing a cause turns its row into an unexpected pass (then remove the mark,
and the programs' marks that name the same key).

NumPy and SciPy are module globals, as in the programs. The rows in
`VIA_TAPE` are checked through `sg.function(fn)` inside a GradientTape
instead of `sg.grad` (what the program does).
"""
import numpy as np
import scipy.integrate
import scipy.special
import scipy.stats

import srcgrad as sg

X2 = lambda: (np.array([0.3, -0.5]),)   # noqa: E731  (the inputs of most rows)


# -- syntax ------------------------------------------------------------------

def with_errstate(x):
    with np.errstate(divide="ignore"):
        y = np.log(x)
    return np.sum(y)


square = lambda a: a * a   # noqa: E731


def global_lambda(x):
    return np.sum(square(x))


def random_star_shape(x):
    rs = np.random.RandomState(0)
    return np.sum(x * rs.randn(*x.shape))


def _pairs(p):
    return [a for a, b in p], [b for a, b in p]


def zip_star(p):
    total = 0.0
    for a, b in zip(*_pairs(p)):
        total = total + np.sum(a * b)
    return total


def comprehension_local_def(x):
    def twice(k):
        return 2.0 * x[k]
    return np.sum(np.stack([twice(k) for k in range(2)]))


# -- SciPy functions without rules -------------------------------------------

def scipy_logsumexp(x):
    return scipy.special.logsumexp(x)


def scipy_norm_logpdf(x):
    return np.sum(scipy.stats.norm.logpdf(x, 0.0, 2.0))


def _decay(y, t, a):
    return -a * y


def odeint_args(a):
    """y' = -a y, y(0) = 1: y(1) = exp(-a), so d/da sum y(1) = -2 exp(-a) (two states)."""
    ys = scipy.integrate.odeint(_decay, np.ones(2), np.array([0.0, 1.0]), args=(a,), rtol=1e-12, atol=1e-12)
    return np.sum(ys[-1])


def odeint_y0(y0):
    ys = scipy.integrate.odeint(_decay, y0, np.array([0.0, 1.0]), args=(0.5,), rtol=1e-12, atol=1e-12)
    return np.sum(ys[-1])


# -- functions as values -----------------------------------------------------

class Quadratic:
    def __init__(self, c):
        self.c = c

    def value(self, x):
        return self.c * np.sum(x * x)


QUADRATIC = Quadratic(1.5)


def _call(fn, x):
    return fn(x)


def bound_method_argument(x):
    return _call(QUADRATIC.value, x)


def _apply(x, nonlinearity=np.tanh):
    return nonlinearity(x)


def ufunc_default_argument(x):
    return np.sum(_apply(x))


def ufunc_argument(x):
    return np.sum(_apply(x, np.sin))


def _cube(x):
    return np.sum(x ** 3)


def grad_inside(x):
    g = sg.grad(_cube)
    return np.sum(g(x))


def grad_inside_direct(x):
    return np.sum(sg.grad(_cube)(x))


# -- objects -----------------------------------------------------------------

class Scale:
    def __init__(self, s):
        self.s = s

    def __call__(self, x):
        return self.s * x

    def apply(self, x):
        return self.s * x


def object_built_inside(x):
    scale = Scale(3.0)
    return np.sum(scale.apply(x))


def objects_in_local_list(x):
    layers = [Scale(2.0), Scale(3.0)]
    for layer in layers:
        x = layer(x)
    return np.sum(x)


LAYERS = [Scale(2.0), Scale(3.0)]


def objects_in_global_list(x):
    for layer in LAYERS:
        x = layer(x)
    return np.sum(x)


class Net:
    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return self.w * x

    def loss(self, x):
        return np.sum(self(x))


NET = Net(np.array([1.5, -2.0]))


# -- recursion ---------------------------------------------------------------

def det_by_minors(A):
    n = A.shape[0]
    if n == 1:
        return A[0, 0]
    total = 0.0
    for j in range(n):
        minor = np.concatenate([A[1:, :j], A[1:, j + 1:]], axis=1)
        total = total + (-1.0) ** j * A[0, j] * det_by_minors(minor)
    return total


# -- containers passed to and returned by helpers ---------------------------

def _product_of_first_two(xs):
    return xs[0] * xs[1]


def list_display_to_helper(x):
    return np.sum(_product_of_first_two([x, 2.0 * x]))


def named_list_to_helper(x):
    ys = [x, 2.0 * x]
    return np.sum(_product_of_first_two(ys))


def _dict_product(d):
    return d["a"] * d["b"]


def dict_display_to_helper(x):
    return np.sum(_dict_product({"a": x, "b": 2.0 * x}))


def _exp_dict(p):
    return {"a": np.exp(p[0]), "b": np.exp(p[1])}


def dict_from_helper(p):
    d = _exp_dict(p)
    return d["a"] * d["b"]


def _scale_all(ws, x):
    for w in ws:
        x = x * w
    return x


def loop_over_list_in_helper(ws, x):
    return np.sum(_scale_all(ws, x))


def _middle_layers(params, x):
    for w in params[1:-1]:
        x = x * w
    return x * params[0]


def empty_loop_in_helper(params, x):
    return np.sum(_middle_layers(params, x))


def _trajectory(x):
    xs = [x]
    for i in range(2):
        xs.append(xs[i] * 2.0)
    return xs, x


def list_returned_by_helper(x):
    xs, y = _trajectory(x)
    total = 0.0
    for i in range(len(xs)):
        total = total + xs[i]
    return total * y


class ReadsDict:
    def __call__(self, params, x):
        return params["w"] * x


class IgnoresDict:
    def __call__(self, params, x):
        return np.mean(x)


READS, IGNORES = ReadsDict(), IgnoresDict()


def dict_to_object_that_ignores_it(params, x):
    return IGNORES(params, READS(params, x))


A3 = np.array([[2.0, 1.0, 0.5], [0.3, 3.0, -1.0], [0.2, 0.4, 1.5]])

# (key, function, make_args, expected gradient (hand-derived), what is missing)
CAUSES = [
    ("with", with_errstate, lambda: (np.array([0.5, 2.0]),), lambda: 1.0 / np.array([0.5, 2.0]),
     "`with` (np.errstate) is rejected at decoration"),
    ("lambda", global_lambda, X2, lambda: 2.0 * X2()[0],
     "a module-level lambda called in differentiated code is rejected"),
    ("star-args", random_star_shape, X2, lambda: np.random.RandomState(0).randn(2),
     "`f(*x.shape)`: *args in a call other than the function's own *args or a tuple display"),
    ("zip-star", zip_star, lambda: ([(np.array([1.0, 2.0]), np.array([3.0, 4.0]))],),
     lambda: [(np.array([3.0, 4.0]), np.array([1.0, 2.0]))],
     "`for a, b in zip(*f(p))`: a zip loop whose sequences come from a starred call"),
    ("comprehension-local-def", comprehension_local_def, X2, lambda: np.array([2.0, 2.0]),
     "a comprehension calling a local def with the comprehension variable: the name is not resolved"),
    ("scipy.special.logsumexp", scipy_logsumexp, X2,
     lambda: np.exp(X2()[0]) / np.sum(np.exp(X2()[0])),
     "scipy.special.logsumexp has no rule (only srcgrad.rules.scipy_special.logsumexp has): srcgrad "
     "transforms SciPy's source and stops at its `with np.errstate`"),
    ("scipy.stats.norm", scipy_norm_logpdf, X2, lambda: -X2()[0] / 4.0,
     "scipy.stats.norm.logpdf has no rule: srcgrad transforms scipy.stats' source and stops at an "
     "exec-generated helper (SourceNotFoundError)"),
    ("odeint-args", odeint_args, lambda: (np.array(0.5),), lambda: np.array(-2.0 * np.exp(-0.5)),
     "scipy.integrate.odeint has no rule: the gradient with respect to values passed in `args` is "
     "SILENTLY ZERO"),
    ("odeint-y0", odeint_y0, lambda: (np.array([1.0, 2.0]),), lambda: np.exp(-0.5) * np.ones(2),
     "scipy.integrate.odeint has no rule: srcgrad transforms odeint's source and stops at copy.copy"),
    ("bound-method-argument", bound_method_argument, X2, lambda: 3.0 * X2()[0],
     "calling a bound method received as an argument is rejected (a module function works)"),
    ("ufunc-default-argument", ufunc_default_argument, X2, lambda: 1.0 - np.tanh(X2()[0]) ** 2,
     "calling a NumPy ufunc received as a default argument (`nonlinearity=np.tanh`) is rejected"),
    ("ufunc-argument", ufunc_argument, X2, lambda: np.cos(X2()[0]),
     "calling a NumPy ufunc received as an argument is rejected"),
    ("grad-of-bound-method", QUADRATIC.value, X2, lambda: 3.0 * X2()[0],
     "sg.grad(obj.method)(x) binds x to `self` (TypeError: missing a required argument)"),
    ("grad-inside", grad_inside, X2, lambda: 6.0 * X2()[0],
     "calling the function sg.grad returned, inside differentiated code, is rejected"),
    ("grad-inside-direct", grad_inside_direct, X2, lambda: 6.0 * X2()[0],
     "`sg.grad(f)(x)` inside differentiated code: calling the result of an expression"),
    ("object-built-inside", object_built_inside, X2, lambda: 3.0 * np.ones(2),
     "a method call on an object built inside from constants is rejected"),
    ("objects-in-local-list", objects_in_local_list, X2, lambda: 6.0 * np.ones(2),
     "calling objects taken from a list built inside, in a loop, is rejected"),
    ("objects-in-global-list", objects_in_global_list, X2, lambda: 6.0 * np.ones(2),
     "calling objects taken from a module-level list in a loop is rejected"),
    ("call-self", NET.loss, X2, lambda: np.array([1.5, -2.0]),
     "sg.function(obj.method) where the method calls `self(x)` (the object's own __call__): calling "
     "self is rejected"),
    ("recursion-with-loop", det_by_minors, lambda: (A3.copy(),), lambda: np.linalg.det(A3) * np.linalg.inv(A3).T,
     "recursion whose body has a loop: the forward of the recursive call packs the loop variable into "
     "its residuals on the base-case path (UnboundLocalError)"),
    ("list-display-to-helper", list_display_to_helper, X2, lambda: 4.0 * X2()[0],
     "a list display passed to a helper that reads two elements: SILENTLY ZERO gradient"),
    ("named-list-to-helper", named_list_to_helper, X2, lambda: 4.0 * X2()[0],
     "a list passed to a helper that reads two elements: SILENTLY WRONG gradient (half); the helper's "
     "backward accumulates the list's cotangent with `+`, which concatenates lists"),
    ("dict-to-helper", dict_display_to_helper, X2, lambda: 4.0 * X2()[0],
     "a dict passed to a helper that reads two keys: the helper's backward adds dicts with `+` (TypeError)"),
    ("dict-from-helper", dict_from_helper, X2, lambda: np.exp(np.sum(X2()[0])) * np.ones(2),
     "a dict returned by a helper and read by two keys: dict + dict (TypeError)"),
    ("loop-over-list-in-helper", loop_over_list_in_helper, lambda: ([np.array([1.0, 2.0]), np.array([3.0, 4.0])],
                                                                   np.array([0.5, 0.25])),
     lambda: [np.array([1.5, 1.0]), np.array([0.5, 0.5])],
     "a for loop over a list argument inside a helper: its backward builds the list's cotangent with "
     "np.zeros_like(list) (ValueError; SILENTLY ZERO for a one-element list)"),
    ("one-element-loop-in-helper", loop_over_list_in_helper, lambda: ([np.array([1.0, 2.0])], np.array([0.5, 0.25])),
     lambda: [np.array([0.5, 0.25])],
     "a for loop over a ONE-element list argument inside a helper: SILENTLY ZERO gradient"),
    ("empty-loop-in-helper", empty_loop_in_helper, lambda: ([np.array([1.0, 2.0]), np.array([3.0, 4.0])],
                                                           np.array([0.5, 0.25])),
     lambda: [np.array([0.5, 0.25]), np.zeros(2)],
     "a loop that runs zero times inside a helper (`for W, b in params[1:-1]` with two layers): its "
     "backward reads the unbound loop index `_i` (UnboundLocalError)"),
    ("list-returned-by-helper", list_returned_by_helper, lambda: (np.array(0.5),), lambda: np.array(7.0),
     "a list returned by a helper and read by index in a loop: its cotangent starts as a float and the "
     "reads are added with `+` (float + None)"),
    ("dict-to-object-that-ignores-it", dict_to_object_that_ignores_it,
     lambda: ({"w": np.array([1.5])}, np.array([0.3, -0.5])), lambda: {"w": np.array([-0.1])},
     "a dict passed to two callable objects, the outer one not reading it: its zero cotangent is the "
     "int 0 and 0 + dict raises (TypeError)"),
]

VIA_TAPE = {"call-self"}
