"""Checking one layer: srcgrad's gradient of the repository's forward pass
against the repository's own backward pass.

A case is turned into a `Problem` at run time: the differentiated values
(`wrt`), a plain forward (`outputs`), the repository's backward
(`reference`), and srcgrad's gradient (`srcgrad`). `run_case` then

1. runs the forward and the repository's backward on plain NumPy arrays
   with a random upstream gradient G per output (NumPy's global generator
   seeded the same way before every forward: dropout draws the same mask);
2. runs srcgrad on the same forward, unchanged: `sg.value_and_grad` of
   `sum(forward(...) * G)` for functions and stateless objects (the
   objective is generated Python with real source, as a user would write
   it), or a `GradientTape` around the method call for layer objects (their
   parameters put in the layer's own slots as `sg.Variable`s, the input a
   watched Tensor);
3. compares the gradients input by input (relative error, tolerance
   `TOL`); if they differ, central finite differences of the same forward
   along a random direction tell which side is right: a reference whose
   backward is not the derivative of its forward is the reference's error,
   not srcgrad's.
"""
import copy
import itertools
import linecache
import os
import re
import signal
import sys
import time
import traceback
import warnings
import zlib
from dataclasses import dataclass
from typing import Callable

import numpy as np

TOL = 1e-6          # relative error allowed between srcgrad's gradient and the reference
FD_TOL = 1e-5       # agreement of a directional derivative with finite differences
FD_STEP = 1e-6

STATUSES = ("agree", "wrong", "refused", "timeout", "reference-error", "harness-error", "skipped")


@dataclass
class Case:
    repo: str
    name: str
    title: str            # what is compared, e.g. "affine_forward / affine_backward"
    via: str              # "grad" (sg.value_and_grad) or "tape" (GradientTape around a method call)
    make: Callable        # (mods, rng, seed) -> Problem
    group: str = ""       # for the report: "layers", "activations", "losses", ...
    notes: str = ""

    @property
    def seed(self):
        return zlib.crc32(("%s/%s" % (self.repo, self.name)).encode()) % (2 ** 31)


class CaseTimeout(BaseException):
    """Raised by the alarm when srcgrad's run of a case exceeds its time."""


# --------------------------------------------------------------------------------------------
# generated code with real source (srcgrad reads the source of what it differentiates)

_COUNTER = itertools.count(1)


def generate(source, name, env):
    """Compile `source`, registered in linecache under a name of its own,
    with globals `env`; return its function `name`."""
    filename = "<layers-generated-%d>" % next(_COUNTER)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = dict(env)
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


def objective_source(params, call, outputs):
    """`def objective(x, w): out = f(x, w, p); return np.sum(out[0] * _G0) ...`"""
    terms = " + ".join("np.sum(%s * _G%d)" % (o, i) for i, o in enumerate(outputs))
    return ("def objective(%s):\n    out = %s\n    return %s\n" % (", ".join(params), call, terms))


def outputs_source(params, call, outputs):
    return ("def outputs(%s):\n    out = %s\n    return [%s]\n" % (", ".join(params), call, ", ".join(outputs)))


# --------------------------------------------------------------------------------------------
# problems

class Problem:
    """What `run_case` needs. `wrt` maps names to the differentiated arrays
    (order kept); the methods take a dict of values for them."""
    via = "grad"
    wrt = None

    def outputs(self, values):          # plain forward: list of output arrays
        raise NotImplementedError

    def reference(self, values, Gs):    # the repository's backward: {name: gradient}
        raise NotImplementedError

    def srcgrad(self, values, Gs):      # (value of sum(out * G), {name: gradient or None})
        raise NotImplementedError

    def objective(self, values, Gs):    # the plain value of sum(out * G), for finite differences
        return float(sum(np.sum(np.asarray(o) * G) for o, G in zip(self.outputs(values), Gs)))


class GradProblem(Problem):
    """A forward called as an expression of generated code, differentiated
    with `sg.value_and_grad`.

    env(mods) -> the globals the call needs (the repository's functions and
    objects), built afresh for every run; `data` holds every array and
    parameter of the call (the `wrt` ones become the objective's parameters,
    the others its globals, deep-copied per run: a forward may write into
    its parameter dict); `call` is the forward as source text, and
    `outputs` the differentiated outputs as expressions of `out`.
    `reference(env, data, Gs)` runs the forward and the repository's
    backward on a fresh copy of `data` and returns {name: gradient}.
    """

    def __init__(self, mods, seed, env, data, wrt, call, outputs, reference):
        self.mods, self.seed = mods, seed
        self.env_fn, self.data, self.call, self.out_exprs = env, data, call, list(outputs)
        self.reference_fn = reference
        self.wrt = {name: data[name] for name in wrt}
        self.params = list(wrt)

    def _globals(self, values, Gs=()):
        env = {"np": np}
        env.update(self.env_fn(self.mods))
        for k, v in self.data.items():
            if k not in self.wrt:
                env[k] = copy.deepcopy(v)
        for i, G in enumerate(Gs):
            env["_G%d" % i] = G
        return env

    def _fresh_data(self, values):
        data = {k: (values[k] if k in values else v) for k, v in self.data.items()}
        return copy.deepcopy(data)

    def outputs(self, values):
        fn = generate(outputs_source(self.params, self.call, self.out_exprs), "outputs", self._globals(values))
        np.random.seed(self.seed)
        return fn(*[copy.deepcopy(values[p]) for p in self.params])

    def objective(self, values, Gs):
        fn = generate(objective_source(self.params, self.call, self.out_exprs), "objective", self._globals(values, Gs))
        np.random.seed(self.seed)
        return float(fn(*[copy.deepcopy(values[p]) for p in self.params]))

    def reference(self, values, Gs):
        env = self._globals(values)
        np.random.seed(self.seed)
        return self.reference_fn(env, self._fresh_data(values), [np.copy(G) for G in Gs])

    def srcgrad(self, values, Gs):
        import srcgrad as sg
        fn = generate(objective_source(self.params, self.call, self.out_exprs), "objective", self._globals(values, Gs))
        args = [copy.deepcopy(values[p]) for p in self.params]
        np.random.seed(self.seed)
        value, grads = sg.value_and_grad(fn, wrt=tuple(range(len(args))))(*args)
        if len(args) == 1:
            grads = (grads,)
        return value, dict(zip(self.params, grads))


def _get_slot(obj, path):
    parts = path.split(".")
    for p in parts[:-1]:
        obj = obj[p] if isinstance(obj, dict) else getattr(obj, p)
    return obj[parts[-1]] if isinstance(obj, dict) else getattr(obj, parts[-1])


def _set_slot(obj, path, value):
    parts = path.split(".")
    for p in parts[:-1]:
        obj = obj[p] if isinstance(obj, dict) else getattr(obj, p)
    if isinstance(obj, dict):
        obj[parts[-1]] = value
    else:
        setattr(obj, parts[-1], value)


class TapeProblem(Problem):
    """A layer object: `build(mods)` makes it (its weights drawn from
    NumPy's global generator, seeded), `forward(layer, **inputs)` calls its
    forward method, `backward(layer, Gs)` its backward method after that and
    returns {name: gradient} for inputs and parameters. `params` maps a
    parameter's name to its slot in the layer (`"W"` an attribute,
    `"parameters.W"` a key of the attribute `parameters`)."""
    via = "tape"

    def __init__(self, mods, seed, build, inputs, wrt, params, forward, backward):
        self.mods, self.seed = mods, seed
        self.build, self.inputs, self.params = build, inputs, dict(params)
        self.forward_fn, self.backward_fn = forward, backward
        np.random.seed(seed)
        layer = build(mods)
        self.wrt = {name: inputs[name] for name in wrt}
        for name, slot in self.params.items():
            if name in self.wrt:
                raise ValueError("parameter %r has the name of an input" % name)
            self.wrt[name] = np.array(_get_slot(layer, slot), dtype=float, copy=True)

    def _layer(self, values, wrap=None):
        np.random.seed(self.seed)
        layer = self.build(self.mods)
        for name, slot in self.params.items():
            v = np.array(values[name], copy=True)
            _set_slot(layer, slot, wrap(v) if wrap else v)
        return layer

    def _inputs(self, values):
        return {k: copy.deepcopy(values[k] if k in values else v) for k, v in self.inputs.items()}

    def _run(self, layer, inputs):
        np.random.seed(self.seed + 1)
        out = self.forward_fn(layer, **inputs)
        return list(out) if isinstance(out, tuple) else [out]

    def outputs(self, values):
        return self._run(self._layer(values), self._inputs(values))

    def reference(self, values, Gs):
        layer = self._layer(values)
        self._run(layer, self._inputs(values))
        return self.backward_fn(layer, [np.copy(G) for G in Gs])

    def srcgrad(self, values, Gs):
        import srcgrad as sg
        variables = {}

        def wrap(v):
            var = sg.Variable(v)
            variables[id(var)] = var
            return var
        layer = self._layer(values, wrap)
        inputs = self._inputs(values)
        sources = {}
        for name in self.wrt:
            if name in self.params:
                sources[name] = _get_slot(layer, self.params[name])
            else:
                inputs[name] = sources[name] = sg.constant(inputs[name])
        with sg.GradientTape() as tape:
            for name, t in sources.items():
                if name not in self.params:
                    tape.watch(t)
            outs = self._run(layer, inputs)
            y = None
            for o, G in zip(outs, Gs):
                term = np.sum(o * G)
                y = term if y is None else y + term
        names = list(sources)
        grads = tape.gradient(y, [sources[n] for n in names])
        return float(np.asarray(y)), dict(zip(names, grads))


# --------------------------------------------------------------------------------------------
# comparing

def _as_array(g):
    if g is None:
        return None
    if hasattr(g, "numpy"):
        g = g.numpy()
    return np.asarray(g, dtype=float) if not np.iscomplexobj(g) else np.asarray(g)


def compare(mine, ref, wrt):
    """{name: relative error} and notes (shapes, None gradients). The error
    of an input is max|a - b| / max(max|a|, max|b|, 1e-8 * S), S the largest
    magnitude over all of the case's gradients (an exactly-zero reference
    then accepts rounding-level values)."""
    notes = []
    pairs = {}
    for name, x in wrt.items():
        a, b = _as_array(mine.get(name)), _as_array(ref.get(name))
        if b is None:
            notes.append("the reference gives no gradient for %s" % name)
            continue
        if a is None:
            notes.append("srcgrad gives None for %s" % name)
            a = np.zeros_like(b)
        if a.shape != b.shape:
            if a.size == b.size:
                notes.append("%s: shape %s, reference %s" % (name, a.shape, b.shape))
                b = b.reshape(a.shape)
            else:
                notes.append("%s: shape %s, reference %s (sizes differ)" % (name, a.shape, b.shape))
                pairs[name] = None
                continue
        pairs[name] = (a, b)
    scale = max([float(np.max(np.abs(v))) for p in pairs.values() if p for v in p if v.size] + [0.0])
    errors = {}
    for name, p in pairs.items():
        if p is None:
            errors[name] = float("inf")
            continue
        a, b = p
        if a.size == 0:
            errors[name] = 0.0
            continue
        diff = float(np.max(np.abs(a - b)))
        denom = max(float(np.max(np.abs(a))), float(np.max(np.abs(b))), 1e-8 * scale, 1e-300)
        errors[name] = diff / denom if diff else 0.0
        if not np.all(np.isfinite(a)):
            errors[name] = float("inf")
    return errors, notes


def _dot(g, v):
    g = _as_array(g)
    if g is None:
        return float("nan")
    return float(np.sum(g.reshape(v.shape) * v)) if g.size == v.size else float("nan")


def adjudicate(problem, values, Gs, mine, ref, names, rng):
    """Central finite differences of the plain forward along a random
    direction, for each input in `names`: which of srcgrad and the
    reference gives the directional derivative?"""
    out = {}
    for name in names:
        x = np.asarray(values[name], dtype=float)
        v = rng.standard_normal(x.shape)
        h = FD_STEP * max(1.0, float(np.max(np.abs(x))) if x.size else 1.0)
        fp = problem.objective({**values, name: x + h * v}, Gs)
        fm = problem.objective({**values, name: x - h * v}, Gs)
        fd = (fp - fm) / (2 * h)
        da = _dot(mine.get(name), v) if mine.get(name) is not None else 0.0    # None: no gradient, zero
        db = _dot(ref.get(name), v)
        scale = max(abs(fd), abs(da) if np.isfinite(da) else 0, abs(db) if np.isfinite(db) else 0, 1e-12)
        out[name] = {"fd": fd, "srcgrad": da, "reference": db,
                     "srcgrad_ok": bool(abs(da - fd) <= FD_TOL * scale),
                     "reference_ok": bool(abs(db - fd) <= FD_TOL * scale)}
    return out


# --------------------------------------------------------------------------------------------
# running a case

def _first_line(e):
    text = str(e).strip()
    return text.splitlines()[0] if text else ""


def _where(tb, roots):
    """The innermost frame of the traceback in the repository's files or the
    generated objective: `path:line: code`."""
    found = None
    for frame in traceback.extract_tb(tb):
        fn = frame.filename
        if fn.startswith("<layers-generated"):
            found = "objective: %s" % (frame.line or linecache.getline(fn, frame.lineno).strip())
        for root in roots:
            if root and fn.startswith(root + os.sep):
                found = "%s:%d: %s" % (os.path.relpath(fn, root), frame.lineno, (frame.line or "").strip())
    return found


def _where_in_text(text, roots):
    """`path:line` of the first location in the checkout that a message names."""
    for root in roots:
        m = re.search(re.escape(root + os.sep) + r"([^\s:]+):(\d+)", text or "")
        if m:
            line = linecache.getline(os.path.join(root, m.group(1)), int(m.group(2))).strip()
            return "%s:%s: %s" % (m.group(1), m.group(2), line)
    return None


def _relative(text, roots):
    for root in roots:
        text = text.replace(root + os.sep, "")
    return text


def _srcgrad_frames(tb):
    """The innermost frame inside srcgrad's package (for harness triage)."""
    last = None
    for frame in traceback.extract_tb(tb):
        if os.sep + "srcgrad" + os.sep in frame.filename:
            last = "%s:%d" % (frame.filename.split(os.sep + "srcgrad" + os.sep, 1)[1], frame.lineno)
    return last


class _Alarm:
    def __init__(self, seconds):
        self.seconds = seconds

    def _fire(self, signum, frame):
        raise CaseTimeout("more than %g s" % self.seconds)

    def __enter__(self):
        if self.seconds:
            self.old = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    def __exit__(self, *exc):
        if self.seconds:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.old)
        return False


def run_case(case, mods, time_limit=None, roots=()):
    """Run one case; return its result row (a JSON-able dict)."""
    row = {"repo": case.repo, "case": case.name, "title": case.title, "via": case.via, "group": case.group,
           "status": None, "notes": [case.notes] if case.notes else []}
    roots = [os.path.abspath(r) for r in roots if r]
    rng = np.random.RandomState(case.seed)
    try:
        problem = case.make(mods, rng, case.seed)
        values = dict(problem.wrt)
    except Exception as e:          # building the inputs runs the repository's constructors
        where = _where(sys.exc_info()[2], roots)
        status = "reference-error" if where else "harness-error"
        row.update(status=status, stage="setup", error_class=type(e).__name__, message=_first_line(e),
                   where=where)
        return row

    # 1. the repository: forward and its own backward, on plain arrays
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs = problem.outputs(values)
            Gs = [rng.standard_normal(np.shape(o)) if np.ndim(o) else float(rng.standard_normal()) for o in outs]
            ref = problem.reference(values, Gs)
            ref_value = problem.objective(values, Gs)
    except Exception as e:
        row.update(status="reference-error", stage="reference", error_class=type(e).__name__,
                   message=_relative(_first_line(e), roots), where=_where(sys.exc_info()[2], roots))
        return row
    row["reference_seconds"] = round(time.perf_counter() - t0, 4)
    row["inputs"] = {k: list(np.shape(v)) for k, v in values.items()}

    # 2. srcgrad on the same forward
    t0 = time.perf_counter()
    caught = []
    try:
        with warnings.catch_warnings(record=True) as caught, _Alarm(time_limit):
            warnings.simplefilter("always")
            value, mine = problem.srcgrad(values, Gs)
    except CaseTimeout as e:
        row.update(status="timeout", stage="srcgrad", error_class="timeout", message=str(e))
        return row
    except Exception as e:
        tb = sys.exc_info()[2]
        row.update(status="refused", stage="srcgrad", error_class=type(e).__name__,
                   message=_relative(_first_line(e), roots), full_message=_relative(str(e)[:2000], roots),
                   where=_where(tb, roots) or _where_in_text(str(e), roots), srcgrad_frame=_srcgrad_frames(tb))
        return row
    finally:
        row["srcgrad_seconds"] = round(time.perf_counter() - t0, 4)
        seen = []
        for w in caught:
            text = _relative("%s: %s" % (w.category.__name__, _first_line(w.message)), roots)
            if text not in seen and not issubclass(w.category, DeprecationWarning):
                seen.append(text)
        row["warnings"] = seen[:6]
        row["op_by_op"] = any(t.startswith("PerformanceWarning") for t in seen)
        row["path_cut"] = any(t.startswith("GradientPathWarning") for t in seen)

    # 3. compare
    errors, notes = compare(mine, ref, values)
    row["notes"] += notes
    row["errors"] = {k: (v if np.isfinite(v) else "inf") for k, v in errors.items()}
    row["max_error"] = max([v for v in errors.values()] + [0.0])
    if not np.isfinite(row["max_error"]):
        row["max_error"] = "inf"
    value = float(np.asarray(value))
    value_ok = abs(value - ref_value) <= TOL * max(1.0, abs(ref_value))
    row["value"], row["reference_value"] = value, ref_value
    bad = [k for k, v in errors.items() if not v <= TOL]
    if not value_ok:
        row["notes"].append("value of sum(out * G) differs: srcgrad %.10g, plain forward %.10g" % (value, ref_value))
    if not bad and value_ok:
        row["status"] = "agree"
        return row

    # 4. they differ: finite differences decide who is right
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fd = adjudicate(problem, values, Gs, mine, ref, bad, np.random.RandomState(case.seed + 7))
    except Exception as e:
        fd = None
        row["notes"].append("finite differences failed: %s: %s" % (type(e).__name__, _first_line(e)))
    row["fd"] = fd
    if fd and value_ok and all(d["srcgrad_ok"] for d in fd.values()) and \
            not all(d["reference_ok"] for d in fd.values()):
        row["status"] = "reference-error"
        row["stage"] = "backward"
        row["error_class"] = "backward is not the derivative of the forward"
        row["message"] = "finite differences agree with srcgrad, not with the reference, for %s" % \
            ", ".join(k for k, d in fd.items() if not d["reference_ok"])
    else:
        row["status"] = "wrong"
        if fd and all(d["srcgrad_ok"] and d["reference_ok"] for d in fd.values()):
            row["notes"].append("finite differences cannot tell them apart along a random direction")
        row["message"] = ", ".join("%s rel. error %.3g" % (k, errors[k]) for k in bad) or "value differs"
        if fd:
            row["message"] += "; finite differences side with " + ", ".join(
                "%s: %s" % (k, "srcgrad" if d["srcgrad_ok"] and not d["reference_ok"] else
                            "the reference" if d["reference_ok"] and not d["srcgrad_ok"] else
                            "both" if d["srcgrad_ok"] else "neither") for k, d in fd.items())
    return row

