"""The checks: srcgrad's derivatives of one function at one argument set,
against central finite differences (float64) and autograd.

Statuses of a check, worst first:
  refused   srcgrad raised (exception class and first line kept)
  wrong     a number differs from the reference beyond the tolerance
  nan       srcgrad's derivative is nan/inf where the reference is finite
  undefined no derivative at this point: f is nan/inf there, or a one-sided
            difference is (outside the domain, or an infinite slope); not a
            failure
  kink      f is not differentiable here (its left and right one-sided
            differences differ: a branch boundary); srcgrad's value equals one
            of them (the derivative of the branch taken); not a failure
  agree     equal to central differences (and to autograd, for second order)

Finite differences: for each coordinate j of the flattened inputs, with
step h, the central difference (F(x + h e_j) - F(x - h e_j)) / 2h and the
second-order one-sided ones (-3 F(x) + 4 F(x + h e_j) - F(x + 2h e_j)) / 2h
and (3 F(x) - 4 F(x - h e_j) + F(x - 2h e_j)) / 2h. An entry whose one-sided
differences differ by more than KINK_RTOL (relative) is a kink, otherwise
the central difference is the reference. Agreement is NumPy's isclose:
|srcgrad - reference| <= atol + rtol * |reference|, elementwise.
"""
import contextlib
import copy
import linecache
import signal
import threading
import warnings
import zlib

import numpy as np

STEP = 1e-6
RTOL1, ATOL1 = 1e-5, 1e-6      # first order (reverse, forward)
RTOL2, ATOL2 = 1e-4, 1e-6      # second order
KINK_RTOL, KINK_ATOL = 1e-3, 1e-5   # (only to classify a point as a kink)
ORDER = ("harness-error", "refused", "wrong", "nan", "undefined", "kink", "agree")
PASSING = ("agree", "kink", "undefined")
CASE_TIME_LIMIT = 120


# ---------------------------------------------------------------------------
# nested values <-> flat float vectors


def is_leaf(v):
    return isinstance(v, (float, np.floating)) or (isinstance(v, np.ndarray) and v.dtype.kind == "f")


def flatten(obj):
    """(float64 vector of the float leaves of obj, unflatten). Leaves: Python and NumPy floats, float
    arrays (0-d arrays too); tuples, lists and dicts (sorted keys) are walked; ints, bools and None
    are not leaves and are kept as they are."""
    parts = []

    def walk(v):
        if is_leaf(v):
            parts.append(np.asarray(v, dtype=np.float64).ravel())
            kind = "a" if isinstance(v, np.ndarray) else ("f" if isinstance(v, float) else "g")
            return (kind, np.shape(v), len(parts) - 1)
        if isinstance(v, (tuple, list)):
            return (type(v), [walk(e) for e in v])
        if isinstance(v, dict):
            return (dict, [(k, walk(v[k])) for k in sorted(v, key=repr)])
        return ("const", v)

    spec = walk(obj)
    sizes = [p.size for p in parts]
    flat = np.concatenate(parts) if parts else np.zeros(0)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)

    def unflatten(vec):
        def build(s):
            if s[0] in ("a", "f", "g"):
                kind, shape, k = s
                chunk = np.asarray(vec[offsets[k]:offsets[k + 1]], dtype=np.float64)
                if kind == "a":
                    return chunk.reshape(shape).copy()
                return float(chunk[0]) if kind == "f" else np.float64(chunk[0])
            if s[0] is dict:
                return {k: build(e) for k, e in s[1]}
            if s[0] in (tuple, list):
                return s[0](build(e) for e in s[1])
            return s[1]
        return build(spec)

    return flat, unflatten


def leaves_flat(obj):
    """The float leaves of a result (gradients: arrays, 0-d arrays, floats; None kept as nan marks
    of a missing gradient), flattened; None when it has no float leaf at all."""
    parts = []

    def walk(v):
        if v is None:
            parts.append(np.array([np.nan]))
        elif isinstance(v, (tuple, list)):
            for e in v:
                walk(e)
        elif isinstance(v, dict):
            for k in sorted(v, key=repr):
                walk(v[k])
        else:
            parts.append(np.asarray(v, dtype=np.float64).ravel())
    walk(obj)
    return np.concatenate(parts) if parts else np.zeros(0)


def structure_has_none(obj):
    if obj is None:
        return True
    if isinstance(obj, (tuple, list)):
        return any(structure_has_none(e) for e in obj)
    if isinstance(obj, dict):
        return any(structure_has_none(e) for e in obj.values())
    return False


def random_like(obj, rng):
    """A random value of obj's structure (normal entries): output weights and tangents."""
    flat, unflatten = flatten(obj)
    return unflatten(rng.randn(flat.size))


def seed_for(*parts):
    return zlib.crc32("/".join(str(p) for p in parts).encode()) & 0x7FFFFFFF


# ---------------------------------------------------------------------------
# finite differences and the verdict


class FD:
    def __init__(self, f0, central, left, right):
        self.f0, self.central, self.left, self.right = f0, central, left, right


def fd_jacobian(F, x0, h=STEP):
    """Central and one-sided difference Jacobians (m, n) of F: R^n -> R^m (flat vectors) at x0."""
    with np.errstate(all="ignore"):
        f0 = np.asarray(F(x0.copy()), dtype=np.float64).ravel()
        n, m = x0.size, f0.size
        central, left, right = (np.zeros((m, n)) for _ in range(3))
        for j in range(n):
            e = np.zeros(n)
            e[j] = h
            fp1, fm1 = (np.asarray(F(x0 + s * e), dtype=np.float64).ravel() for s in (1, -1))
            fp2, fm2 = (np.asarray(F(x0 + s * e), dtype=np.float64).ravel() for s in (2, -2))
            central[:, j] = (fp1 - fm1) / (2 * h)
            right[:, j] = (-3 * f0 + 4 * fp1 - fp2) / (2 * h)
            left[:, j] = (3 * f0 - 4 * fm1 + fm2) / (2 * h)
    return FD(f0, central, left, right)


def _fmt(v):
    return "%.6g" % v


def judge(actual, fd, rtol, atol):
    """Status and detail of srcgrad's `actual` (flat, the entries of fd's Jacobian in row-major
    order) against the finite differences `fd`."""
    actual = np.asarray(actual, dtype=np.float64).ravel()
    central, left, right = fd.central.ravel(), fd.left.ravel(), fd.right.ravel()
    if actual.size != central.size:
        return "wrong", {"message": "%d numbers where finite differences give %d (structure differs)"
                         % (actual.size, central.size)}
    if not np.all(np.isfinite(fd.f0)):
        return "undefined", {"message": "f is not finite at this point (outside its domain)",
                             "srcgrad_finite": bool(np.all(np.isfinite(actual)))}
    with np.errstate(all="ignore"):
        smooth = np.isfinite(left) & np.isfinite(right) & np.isclose(left, right, KINK_RTOL, KINK_ATOL)
        ok = np.where(smooth, np.isclose(actual, central, rtol, atol),
                      np.isclose(actual, left, rtol, atol) | np.isclose(actual, right, rtol, atol))
        bad = ~ok
        ref_clean = smooth & np.isfinite(central)
        undefined = bad & ~ref_clean & (~np.isfinite(actual) | ~np.isfinite(central))
        nan = bad & ref_clean & ~np.isfinite(actual)
        wrong = bad & ~undefined & ~nan
    if wrong.any():
        ref = np.where(smooth, central, np.where(np.abs(actual - left) < np.abs(actual - right), left, right))
        diff = np.abs(actual - ref)
        k = int(np.argmax(np.where(wrong, diff, -1)))
        rel = diff[k] / max(abs(ref[k]), 1e-300)
        message = "srcgrad %s, finite differences %s%s (entry %d of %d; max abs difference %s, relative %s)" % (
            _fmt(actual[k]), _fmt(ref[k]), "" if smooth[k] else " (a one-sided difference: kink)", k,
            actual.size, _fmt(np.max(diff[wrong])), _fmt(rel))
        return "wrong", {"message": message, "max_abs": float(np.max(diff[wrong])), "rel": float(rel)}
    if nan.any():
        k = int(np.argmax(nan))
        return "nan", {"message": "srcgrad %s where finite differences give %s (entry %d)"
                       % (_fmt(actual[k]), _fmt(central[k]), k)}
    if undefined.any():
        return "undefined", {"message": "no finite derivative here (a one-sided difference is not finite); "
                             "srcgrad gives %s" % _fmt(actual[int(np.argmax(undefined))])}
    if (~smooth).any():
        k = int(np.argmax(~smooth))
        return "kink", {"message": "not differentiable here (one-sided differences %s and %s); srcgrad %s is the "
                        "derivative of one side" % (_fmt(left[k]), _fmt(right[k]), _fmt(actual[k]))}
    return "agree", {}


def compare_exact(actual, reference, rtol, atol, what):
    """Status of srcgrad against another derivative (autograd's, or a stated value)."""
    a = np.asarray(actual, dtype=np.float64).ravel()
    r = np.asarray(reference, dtype=np.float64).ravel()
    if a.size != r.size:
        return "wrong", {"message": "%d numbers where %s gives %d (structure differs)" % (a.size, what, r.size)}
    with np.errstate(all="ignore"):
        ok = np.isclose(a, r, rtol, atol, equal_nan=True)
    if ok.all():
        return "agree", {}
    diff = np.where(ok, -1.0, np.abs(a - r))
    k = int(np.argmax(diff))
    return "wrong", {"message": "srcgrad %s, %s %s (entry %d of %d; max abs difference %s)"
                     % (_fmt(a[k]), what, _fmt(r[k]), k, a.size, _fmt(np.nanmax(np.abs(a - r))))}


def worst(statuses):
    statuses = [s for s in statuses if s in ORDER]
    return min(statuses, key=ORDER.index) if statuses else "agree"


def refusal(exc):
    lines = [l for l in str(exc).splitlines() if l.strip()]
    return "%s: %s" % (type(exc).__name__, lines[0].strip() if lines else "(no message)")


class CaseTimeout(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds):
    if seconds is None or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGALRM"):
        yield
        return

    def handler(signum, frame):
        raise CaseTimeout("case took more than %d s" % seconds)
    old = signal.signal(signal.SIGALRM, handler)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# ---------------------------------------------------------------------------
# wrappers with the function's own arity (srcgrad compiles a fixed signature; *args into a
# differentiated call would run op by op, which is not what is measured)

_WRAPPER_COUNT = [0]


def make_wrapper(name, params, body, namespace):
    """def name(params): body — compiled with its source in linecache (srcgrad reads it)."""
    _WRAPPER_COUNT[0] += 1
    filename = "<tangent_corpus %s %d>" % (name, _WRAPPER_COUNT[0])
    src = "def %s(%s):\n%s\n" % (name, ", ".join(params), "\n".join("    " + l for l in body))
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = dict(namespace)
    exec(compile(src, filename, "exec"), ns)
    return ns[name]


def weighted(f, n_args, output, xp):
    """f's output reduced to a scalar by a weight passed as the last argument `w_`:
    sum(w_ * y), or for a tuple/list output sum_k sum(w_[k] * y[k])."""
    params = ["a%d" % k for k in range(n_args)]
    if isinstance(output, (tuple, list)):
        body = ["y_ = f_(%s)" % ", ".join(params),
                "return " + " + ".join("np.sum(w_[%d] * y_[%d])" % (k, k) for k in range(len(output)))]
    else:
        body = ["return np.sum(w_ * f_(%s))" % ", ".join(params)]
    return make_wrapper("weighted", params + ["w_"], body, {"np": xp, "f_": f})


# ---------------------------------------------------------------------------
# the three modes


def _scalarize(y, w):
    if w is None:
        return float(np.asarray(y, dtype=np.float64))
    if isinstance(y, (tuple, list)):
        return float(sum(np.sum(np.asarray(wk) * np.asarray(yk)) for wk, yk in zip(w, y)))
    return float(np.sum(np.asarray(w) * np.asarray(y)))


def is_scalar_output(y):
    return not isinstance(y, (tuple, list, dict)) and np.ndim(y) == 0


class Runner:
    """Runs the checks of one function (an Entry of corpus.py); keeps its wrappers, so that srcgrad
    compiles each once."""

    def __init__(self, entry, sg, ag=None, time_limit_s=CASE_TIME_LIMIT):
        self.e, self.sg, self.ag, self.limit = entry, sg, ag, time_limit_s
        self.wrappers = {}
        self.op_by_op = set()        # modes in which srcgrad warned PerformanceWarning (op by op)

    def call(self, mode, fn):
        """Run srcgrad code: (value, None) or (None, refusal text); notes op-by-op warnings."""
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always", self.sg.PerformanceWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            try:
                with time_limit(self.limit):
                    out = fn()
            except Exception as exc:        # (a refusal, or any crash: both recorded)
                return None, refusal(exc)
        if any(issubclass(r.category, self.sg.PerformanceWarning) for r in rec):
            self.op_by_op.add(mode)
        return out, None

    def primal(self, args):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.e.func(*copy.deepcopy(args))

    def _ag(self, fn):
        """autograd's result, or (None, reason)."""
        if self.ag is None or self.e.ag_func is None:
            return None, "autograd not installed"
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return fn(), None
        except Exception as exc:
            return None, refusal(exc)

    # -- reverse --------------------------------------------------------------------------------

    def reverse(self, case, rng):
        sg, args, wrt = self.sg, case.args, case.wrt
        y0 = self.primal(args)
        w = None if is_scalar_output(y0) else random_like(y0, rng)
        if w is None:
            target, ag_target, extra = self.e.func, self.e.ag_func, ()
        else:
            if "weighted" not in self.wrappers:
                self.wrappers["weighted"] = weighted(self.e.func, len(args), y0, np)
                self.wrappers["ag_weighted"] = (None if self.e.ag_func is None else
                                                weighted(self.e.ag_func, len(args), y0, self.ag.numpy))
            target, ag_target, extra = self.wrappers["weighted"], self.wrappers["ag_weighted"], (w,)
        out = {"checks": {}}
        g, err = self.call("reverse", lambda: sg.grad(target, wrt=wrt)(*copy.deepcopy(args + extra)))
        if err:
            out["checks"]["grad"] = ("refused", {"message": err})
            return out
        vg, err = self.call("reverse", lambda: sg.grad(target, wrt=wrt, preserve_result=True)(
            *copy.deepcopy(args + extra)))
        g = g if len(wrt) > 1 else (g,)
        wrt_args = tuple(args[k] for k in wrt)
        x0, unflatten = flatten(wrt_args)

        def F(vec):
            full = list(copy.deepcopy(args))
            for k, v in zip(wrt, unflatten(vec)):
                full[k] = v
            return _scalarize(self.e.func(*full), w)

        if self.e.reference is not None:
            what, ref = self.e.reference
            status, detail = compare_exact(leaves_flat(g), ref(*args), RTOL1, ATOL1, "reference (%s)" % what)
        else:
            status, detail = judge(leaves_flat(g), fd_jacobian(F, x0), RTOL1, ATOL1)
            if structure_has_none(g):
                status, detail = "wrong", {"message": "a gradient is None (srcgrad returns zeros of the "
                                           "argument's shape for an unconnected argument): %r" % (g,)}
        out["checks"]["grad"] = (status, detail)
        if err:
            out["checks"]["preserve_result"] = ("refused", {"message": err})
        else:
            value, g2 = vg
            g2 = g2 if len(wrt) > 1 else (g2,)
            s = compare_exact(leaves_flat(g2), leaves_flat(g), 1e-12, 1e-12, "preserve_result=False")
            if s[0] == "agree":
                s = compare_exact(value, _scalarize(y0, w), RTOL1, ATOL1, "f")
                if s[0] != "agree":
                    s = ("wrong", {"message": "value returned with preserve_result: " + s[1]["message"]})
            else:
                s = ("wrong", {"message": "gradient with preserve_result=True: " + s[1]["message"]})
            out["checks"]["preserve_result"] = s
        ag, why = self._ag(lambda: self.ag.grad(ag_target, argnum=wrt if len(wrt) > 1 else wrt[0])(
            *copy.deepcopy(args + extra)))
        if why:
            out["autograd"] = "n/a (%s)" % why
        else:
            ag = ag if len(wrt) > 1 else (ag,)
            s, d = compare_exact(leaves_flat(g), leaves_flat(ag), RTOL1, ATOL1, "autograd")
            out["autograd"] = "=" if s == "agree" else "differs: " + d["message"]
        return out

    # -- forward --------------------------------------------------------------------------------

    def forward(self, case, rng):
        sg, args, wrt = self.sg, case.args, case.wrt
        y0 = self.primal(args)
        tangents = [random_like(a, rng) if k in wrt else None for k, a in enumerate(args)]
        out = {"checks": {}}
        res, err = self.call("forward", lambda: sg.jvp(self.e.func, tuple(copy.deepcopy(args)),
                                                       tuple(copy.deepcopy(tangents))))
        if err:
            out["checks"]["jvp"] = ("refused", {"message": err})
            return out
        value, t = res

        def F(s):
            full = [a if k not in wrt else flatten(a)[1](flatten(a)[0] + s[0] * flatten(tangents[k])[0])
                    for k, a in enumerate(copy.deepcopy(args))]
            return leaves_flat(self.e.func(*full))

        out["checks"]["jvp"] = judge(leaves_flat(t), fd_jacobian(F, np.zeros(1)), RTOL1, ATOL1)
        s = compare_exact(leaves_flat(value), leaves_flat(y0), RTOL1, ATOL1, "f")
        out["checks"]["value"] = s if s[0] == "agree" else ("wrong", {"message": "primal output of sg.jvp: "
                                                                      + s[1]["message"]})
        return out

    # -- second order ---------------------------------------------------------------------------

    def second(self, case, rng):
        sg, args, wrt, p = self.sg, case.args, case.wrt, self.e.primary
        out = {"checks": {}}
        P = args[p]
        if not (isinstance(P, (float, np.floating)) or (isinstance(P, np.ndarray) and P.dtype.kind == "f")):
            out["skip"] = "the argument of second-order derivatives is a %s (sg.hessian takes arrays)" % type(
                P).__name__
            return out
        y0 = self.primal(args)
        if not is_scalar_output(y0):
            out["skip"] = "f has a non-scalar output"
            return out
        n_args, f = len(args), self.e.func
        params = ["a%d" % k for k in range(n_args)]
        G = sg.grad(f, wrt=(p,))
        if "dot" not in self.wrappers:
            self.wrappers["dot"] = make_wrapper("grad_dot_v", params + ["v_"],
                                                ["return np.sum(G_(%s) * v_)" % ", ".join(params)],
                                                {"np": np, "G_": G})
            if n_args == 1:
                self.wrappers["jdot"] = make_wrapper("jvp_of_f", params + ["v_"],
                                                     ["return sg.jvp(f_, (a0,), (v_,))[1]"], {"sg": sg, "f_": f})
        scalar = np.ndim(P) == 0
        v = random_like(P, rng)
        Pflat, unflatP = flatten(P)
        nP = Pflat.size

        def grad_at(full):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return leaves_flat(G(*full))

        def G_of_P(vec):
            full = list(copy.deepcopy(args))
            full[p] = unflatP(vec)
            return grad_at(full)

        def G_along_v(s):
            return G_of_P(Pflat + s[0] * flatten(v)[0])

        # the references: finite differences of srcgrad's first-order gradient
        _, err = self.call("second", lambda: G(*copy.deepcopy(args)))
        if err:
            out["checks"]["first-order gradient"] = ("refused", {"message": err})
            return out
        try:
            fd_H = fd_jacobian(G_of_P, Pflat)            # (nP, nP)
            fd_Hv = fd_jacobian(G_along_v, np.zeros(1))  # (nP, 1)
        except Exception as exc:
            out["checks"]["first-order gradient"] = ("refused", {"message": "at a point near the argument: "
                                                                 + refusal(exc)})
            return out
        ag_H, why = (None, "autograd not installed") if self.ag is None else self._ag(
            lambda: self.ag.hessian(self.e.ag_func, argnum=p)(*copy.deepcopy(args)))
        if ag_H is not None:
            ag_H = np.asarray(ag_H, dtype=np.float64).reshape(nP, nP)
        out["autograd"] = "ran" if why is None else "n/a (%s)" % why

        def check(name, fn, fd, ag_ref, extra=False):
            res, err = self.call("second", fn)
            where = out.setdefault("extra", {}) if extra else out["checks"]
            if err:
                where[name] = ("refused", {"message": err})
                return
            status, detail = judge(leaves_flat(res), fd, RTOL2, ATOL2)
            if ag_ref is not None and status in ("agree", "kink"):
                s2, d2 = compare_exact(leaves_flat(res), ag_ref, RTOL2, ATOL2, "autograd")
                if s2 != "agree":
                    status, detail = "wrong", {"message": "vs autograd: " + d2["message"]}
            where[name] = (status, detail)

        vflat = flatten(v)[0]
        ag_Hv = None if ag_H is None else ag_H @ vflat
        check("hessian", lambda: sg.hessian(f, wrt=p)(*copy.deepcopy(args)), fd_H,
              None if ag_H is None else ag_H.ravel())
        if scalar:
            # Tangent's tangent.grad(tangent.grad(f)), here with respect to every float argument
            x0, unflatten = flatten(tuple(args[k] for k in wrt))

            def G_of_all(vec):
                full = list(copy.deepcopy(args))
                for k, a in zip(wrt, unflatten(vec)):
                    full[k] = a
                return grad_at(full)

            ag_gg, why = (None, "") if self.ag is None else self._ag(lambda: [
                self.ag.grad(self.ag.grad(self.e.ag_func, p), k)(*copy.deepcopy(args)) for k in wrt])
            try:
                fd_all = fd_jacobian(G_of_all, x0)
            except Exception as exc:
                out["checks"]["first-order gradient"] = ("refused", {"message": "at a point near the argument: "
                                                                     + refusal(exc)})
                return out
            check("grad of grad", lambda: sg.grad(G, wrt=wrt)(*copy.deepcopy(args)), fd_all,
                  None if ag_gg is None else leaves_flat(ag_gg))
        else:
            # the gradient is an array: grad of its product with v (reverse over reverse H v)
            check("grad of grad (H v)", lambda: sg.grad(self.wrappers["dot"], wrt=(p,))(*copy.deepcopy(args), v),
                  fd_Hv, ag_Hv)
        # Tangent's HVP tests (test_hessian_vector_products.py) also run forward over reverse and reverse
        # over forward: counted for their functions, extra (reported apart) for the others
        extra = not self.e.hvp_test
        check("hvp (fwd over rev)", lambda: sg.hvp(f, wrt=p)(*copy.deepcopy(args), v), fd_Hv, ag_Hv, extra)
        if "jdot" in self.wrappers:
            check("rev over fwd (H v)", lambda: sg.grad(self.wrappers["jdot"], wrt=(0,))(*copy.deepcopy(args), v),
                  fd_Hv, ag_Hv, extra)
        return out
