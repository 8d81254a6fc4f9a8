"""sg.check: srcgrad's derivatives of a function, checked against central
finite differences and against each other.

Like autograd's `check_grads` and `torch.autograd.gradcheck`. Per
differentiated argument `x` (u, v, w random, fixed seed):

    rev vs finite differences   sg.grad(f) (the generated joint code; the
                                gradient of sum(f) for an array output)
                                against central differences, element by
                                element (along random directions for large x)
    fwd vs finite differences   sg.jvp(f) along v against the central
                                difference (f(x + hv) - f(x - hv)) / 2h
    rev/fwd dot product         <u, J v> (forward) against <J^T u, v> (the
                                split reverse code on a tape, cotangent u)
    fwd over rev (hvp) vs FD    sg.jvp(sg.grad(f)) along w against the
                                central difference of sg.grad(f) along w
    rev over rev vs FD          nested tapes: the gradient of <grad f, w>
                                against the same difference

The step is h = eps^(1/3) max(1, |x|) for the argument's dtype (float64:
6e-6, float32: 5e-3), the step that balances truncation against rounding
in a central difference (Nocedal & Wright, Numerical Optimization, 8.1).
"""
import numpy as np

from .. import display
from ..callables import as_function
from ..errors import api_boundary
from ..functional import grad, jvp, wrt_indices
from ..tape import GradientTape
from ..tensor import Tensor, constant

#: default tolerances: (rtol, atol) against finite differences, and for the
#: dot-product test (two generated codes, equal up to rounding)
_TOLERANCES = {
    np.dtype(np.float64): ((1e-5, 1e-6), (1e-8, 1e-10)),
    np.dtype(np.float32): ((2e-2, 2e-3), (1e-3, 1e-4)),
}
_MODES = ("rev", "fwd")
_FULL_FD_MAX = 256          # larger arguments are checked along random directions
_DIRECTIONS = 4


class _Row:
    """One check: what was compared, its errors and whether it passed."""

    def __init__(self, which, argument, actual, expected, rtol, atol):
        actual = np.asarray(actual, dtype=np.float64) if np.isrealobj(actual) else np.asarray(actual)
        expected = np.asarray(expected, dtype=actual.dtype)
        self.which, self.argument = which, argument
        self.rtol, self.atol = rtol, atol
        if actual.shape != expected.shape:
            self.abs_err = self.rel_err = float("inf")
            self.ok = False
            self.note = "shape %s, expected %s" % (actual.shape, expected.shape)
            return
        self.note = ""
        diff = np.abs(actual - expected)
        finite = np.isfinite(actual) & np.isfinite(expected)
        same_nonfinite = (actual == expected) | (np.isnan(actual) & np.isnan(expected))
        diff = np.where(finite, diff, np.where(same_nonfinite, 0.0, np.inf))
        self.abs_err = float(np.max(diff)) if diff.size else 0.0
        scale = float(np.max(np.abs(np.where(finite, expected, 0.0)))) if diff.size else 0.0
        self.rel_err = self.abs_err / scale if scale > 0 else (0.0 if self.abs_err == 0 else float("inf"))
        self.ok = bool(np.all(diff <= atol + rtol * np.abs(np.where(finite, expected, 0.0))))

    def cells(self):
        return [self.which, self.argument, "%.3g" % self.abs_err, "%.3g" % self.rel_err,
                "rtol=%.0e atol=%.0e" % (self.rtol, self.atol), ("ok" if self.ok else "FAIL") +
                (" (%s)" % self.note if self.note else "")]


def _float_argument(a, position):
    """A differentiated argument as srcgrad differentiates it: a Python
    float, or a floating ndarray (integers promoted to float64)."""
    if isinstance(a, Tensor):
        a = a.numpy()
    if type(a) in (int, float):
        return float(a)
    if isinstance(a, (list, tuple, dict)):
        raise TypeError("sg.check: argument %d is a %s; it checks array and scalar arguments (pass the "
                        "containers' arrays as separate arguments)" % (position, type(a).__name__))
    a = np.asarray(a)
    if a.dtype.kind not in "fc":
        a = a.astype(np.float64)
    if a.dtype.kind == "c":
        raise TypeError("sg.check: argument %d is complex; it checks real arguments" % position)
    return a


def _dtype(x):
    return np.dtype(np.float64) if type(x) is float else x.dtype


def _step(x):
    """The central-difference step for `x`: eps^(1/3) scaled by its size."""
    eps = np.finfo(_dtype(x) if _dtype(x) in _TOLERANCES else np.float64).eps
    return float(np.cbrt(eps)) * max(1.0, float(np.max(np.abs(x))) if np.size(x) else 1.0)


def _with(args, i, value):
    out = list(args)
    out[i] = value
    return out


def _shift(x, h, v):
    """x + h v, as x's kind (a Python float stays one)."""
    if type(x) is float:
        return float(x + h * float(v))
    return (x + h * v).astype(x.dtype)


def _value(y):
    if isinstance(y, Tensor):
        y = y.numpy()
    if isinstance(y, (tuple, list, dict)):
        raise TypeError("sg.check needs a function with one array output; it returned a %s" % type(y).__name__)
    return np.asarray(y)


def _central(fun, args, i, v, h):
    """(fun(x + h v) - fun(x - h v)) / 2h, x = args[i]."""
    x = args[i]
    plus = _value(fun(*_with(args, i, _shift(x, h, v))))
    minus = _value(fun(*_with(args, i, _shift(x, -h, v))))
    return (plus.astype(np.float64) - minus.astype(np.float64)) / (2.0 * h)


def _tape_vjp(fn, args, wrt, u, second=None):
    """J^T u for the arguments `wrt` through the split generated code on a
    tape; with `second` = {i: w}, the gradient of sum_i <grad_i f, w_i>
    through nested tapes instead (reverse over reverse)."""
    ts = [constant(a) if i in wrt else a for i, a in enumerate(args)]
    sources = [ts[i] for i in wrt]
    if second is None:
        with GradientTape() as tape:
            for t in sources:
                tape.watch(t)
            y = fn(*ts)
        gs = tape.gradient(y, sources, output_gradients=u)
    else:
        with GradientTape() as outer:
            for t in sources:
                outer.watch(t)
            with GradientTape() as inner:
                for t in sources:
                    inner.watch(t)
                y = fn(*ts)
            g1 = inner.gradient(y, sources)
            s = sum(np.sum(g * second[i]) for g, i in zip(g1, wrt) if g is not None)
        gs = outer.gradient(s, sources) if isinstance(s, Tensor) else [None] * len(sources)
    return [np.zeros(np.shape(args[i])) if g is None else np.asarray(g.numpy() if isinstance(g, Tensor) else g)
            for g, i in zip(gs, wrt)]


def _directions(rng, x, k):
    """k random directions of x's shape and dtype, scaled to max |v| = 1."""
    out = []
    for _ in range(k):
        v = rng.standard_normal(np.shape(x))
        v = v / max(float(np.max(np.abs(v))), 1e-300) if np.size(v) else v
        out.append(float(v) if type(x) is float else v.astype(_dtype(x)))
    return out


@api_boundary
def check(f, *args, wrt=(0,), order=2, modes=("rev", "fwd"), rtol=None, atol=None):
    """Check srcgrad's derivatives of `f` at `args` against central finite
    differences and against each other.

    First order, per argument in `wrt`: the reverse-mode gradient
    (`sg.grad`; of `sum(f)` for an array output) against finite differences
    element by element (along four random directions for arguments of more
    than 256 elements); the forward-mode JVP (`sg.jvp`) along a random
    direction against the finite difference along it; and the dot-product
    test `<u, J v> == <J^T u, v>` between forward mode and reverse mode
    (the split code a tape runs) for random `u`, `v`. Second order
    (`order=2`): the Hessian-vector product forward over reverse
    (`sg.jvp(sg.grad(f))`) and reverse over reverse (nested tapes), each
    against the finite difference of the gradient along a random direction.
    Random vectors come from a fixed seed, so a check is reproducible.

    The step is `h = eps**(1/3) * max(1, max|x|)` for the argument's dtype
    (6e-6 for float64, 5e-3 for float32). An element passes when
    `|actual - expected| <= atol + rtol * |expected|`.

    Args:
        f: a function srcgrad can differentiate, returning one float array
            or scalar (any shape). Called as `f(*args)` for the finite
            differences, so it must be deterministic.
        *args: its positional arguments. The differentiated ones are float
            arrays or Python floats (integer arrays are promoted to float64,
            as `sg.grad` does); the others are passed as given.
        wrt: the index, or tuple of indices, of the arguments to check.
        order: 1 (first derivatives) or 2 (also second derivatives).
        modes: which of "rev" and "fwd" to check; the dot-product test and
            forward over reverse need both, second order needs "rev".
        rtol, atol: tolerances for every check. Default: for float64
            arguments 1e-5 and 1e-6 against finite differences, 1e-8 and
            1e-10 for the dot-product test; for float32, 2e-2 and 2e-3, and
            1e-3 and 1e-4.

    Returns:
        None, when every check passes.

    Raises:
        AssertionError: when a check disagrees; its message is a table with
            one row per check (which check, which argument, the maximum
            absolute error, the maximum error relative to the largest
            expected value, the tolerance, and ok/FAIL).
        ValueError: for an unknown mode, an order other than 1 or 2, or a
            `wrt` out of range.
        TypeError: for a tuple, list or dict output or argument in `wrt`, or
            an output or argument that is not real floating point.
    """
    wrt = wrt_indices(wrt)
    modes = (modes,) if isinstance(modes, str) else tuple(modes)
    unknown = [m for m in modes if m not in _MODES]
    if unknown or not modes:
        raise ValueError("sg.check: modes must be a subset of %s, got %r" % (_MODES, modes))
    if order not in (1, 2):
        raise ValueError("sg.check: order must be 1 or 2, got %r" % (order,))
    for i in wrt:
        if not 0 <= i < len(args):
            raise ValueError("sg.check: wrt index %d out of range for %d arguments" % (i, len(args)))
    args = [_float_argument(a, i) if i in wrt else a for i, a in enumerate(args)]
    rng = np.random.default_rng(0)
    y = _value(f(*args))
    if y.dtype.kind != "f":
        raise TypeError("sg.check: %s returns %s values; it checks real floating outputs" % (_name(f), y.dtype))
    fn = as_function(f)
    rows = []
    gradients = None
    if "rev" in modes:
        g = grad(f, wrt=wrt)(*args)
        gradients = dict(zip(wrt, g if len(wrt) > 1 else (g,)))
    for i in wrt:
        x = args[i]
        (fd_rtol, fd_atol), (dot_rtol, dot_atol) = _TOLERANCES.get(_dtype(x), _TOLERANCES[np.dtype(np.float64)])
        if rtol is not None:
            fd_rtol = dot_rtol = rtol
        if atol is not None:
            fd_atol = dot_atol = atol
        h = _step(x)
        name = "%d (%s)" % (i, _shape_text(x))

        def total(*a):
            return np.sum(_value(f(*a)).astype(np.float64))
        if "rev" in modes:
            g = np.asarray(gradients[i], dtype=np.float64)
            if np.size(x) <= _FULL_FD_MAX:
                fd = np.zeros(np.shape(x))
                for k in np.ndindex(np.shape(x)):
                    e = np.zeros(np.shape(x))
                    e[k] = 1.0
                    fd[k] = _central(total, args, i, e if np.ndim(x) else 1.0, h)
                rows.append(_Row("rev vs finite differences", name, g, fd, fd_rtol, fd_atol))
            else:
                vs = _directions(rng, x, _DIRECTIONS)
                actual = [np.sum(g * v) for v in vs]
                expected = [_central(total, args, i, v, h) for v in vs]
                rows.append(_Row("rev vs finite differences (%d directions)" % len(vs), name,
                                 actual, expected, fd_rtol, fd_atol))
        v = _directions(rng, x, 1)[0]
        u = rng.standard_normal(y.shape).astype(y.dtype)
        if "fwd" in modes:
            tangents = [v if j == i else None for j in range(len(args))]
            _, jv = jvp(f, tuple(args), tuple(tangents))
            jv = np.asarray(jv, dtype=np.float64)
            rows.append(_Row("fwd vs finite differences", name, jv, _central(f, args, i, v, h), fd_rtol, fd_atol))
            if "rev" in modes:
                (jtu,) = _tape_vjp(fn, args, (i,), u)
                rows.append(_Row("rev/fwd dot product <u,Jv> = <J^T u,v>", name, np.sum(u * jv),
                                 np.sum(np.asarray(jtu, dtype=np.float64) * v), dot_rtol, dot_atol))
        if order < 2 or "rev" not in modes:
            continue
        w = _directions(rng, x, 1)[0]
        gradient = grad(f, wrt=(i,))
        fd2 = _central(gradient, args, i, w, h)
        if "rev" in modes and "fwd" in modes:
            tangents = [w if j == i else None for j in range(len(args))]
            _, hw = jvp(gradient, tuple(args), tuple(tangents))
            rows.append(_Row("fwd over rev (hvp) vs finite differences", name, hw, fd2, fd_rtol, fd_atol))
        if "rev" in modes:
            (hw,) = _tape_vjp(fn, args, (i,), None, second={i: w})
            rows.append(_Row("rev over rev vs finite differences", name, hw, fd2, fd_rtol, fd_atol))
    failed = [r for r in rows if not r.ok]
    if failed:
        table = display.text_table(["check", "argument", "max abs err", "max rel err", "tolerance", "result"],
                                   [r.cells() for r in rows], indent="  ")
        raise AssertionError("sg.check: %d of %d checks of %s disagree:\n%s"
                             % (len(failed), len(rows), _name(f), table))
    return None


def _name(f):
    return getattr(f, "__name__", None) or type(f).__name__


def _shape_text(x):
    if type(x) is float:
        return "float"
    return "%s %s" % (x.dtype, "x".join(map(str, x.shape)) or "scalar")
