"""Probe: every row of the rule table (tests/rules/test_rules.py's CASES)
through forward mode op by op -- `op_by_op.jvp` and a `ForwardAccumulator`
around the plain call -- against central differences of the NumPy function
and the compiled `sg.jvp`. Not a test (minutes for the whole table): run

    PYTHONPATH=. python3 tests/tools/probe_forward_rules.py [substring ...]

It prints one line per mismatch and a summary. The first number of each
line is the largest relative difference found."""
import os
import sys
import time
import traceback
import warnings
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, ".."), os.path.join(HERE, "..", "rules")]

import srcgrad as sg  # noqa: E402
import test_rules  # noqa: E402
from rulecase import Static, _draw  # noqa: E402
from srcgrad import op_by_op  # noqa: E402


def args_of(case):
    rng = np.random.default_rng(zlib.crc32(("fwdprobe:" + case.name).encode()))
    args = [a.value if isinstance(a, Static) else _draw(rng, a) for a in case.inputs]
    w = rng.normal(size=np.shape(case.ref(*args)))
    vs = {i: rng.normal(size=np.shape(args[i])) for i in case.wrt}
    return args, w, vs


def loss_along(case, args, w, vs, h):
    def at(s):
        a = [x + s * vs[i] if i in vs else x for i, x in enumerate(args)]
        return float(np.real(case.fn(*a, w)))
    return (at(h) - at(-h)) / (2 * h)


def central(case, args, w, vs):
    """Central difference along vs; None where it is not stable (a kink)."""
    scale = max(1.0, max(float(np.max(np.abs(args[i]))) for i in vs))
    d1 = loss_along(case, args, w, vs, 1e-6 * scale)
    d2 = loss_along(case, args, w, vs, 1e-5 * scale)
    if not np.isfinite(d1) or abs(d1 - d2) > 1e-4 * (1 + abs(d1)):
        return None
    return d1


def rel(a, b):
    a, b = np.asarray(a, dtype=complex), np.asarray(b, dtype=complex)
    return float(np.max(np.abs(a - b) / (1e-8 + np.abs(b))))


def probe(case, active):
    args, w, vs = args_of(case)
    vs = {i: v for i, v in vs.items() if i in active}
    results = {}
    tangents = tuple(vs.get(i) for i in range(len(args))) + (None,)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            results["compiled"] = float(np.real(sg.jvp(case.fn, tuple(args) + (w,), tangents)[1]))
        except Exception as exc:
            results["compiled"] = "ERR %s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:150])
        try:
            results["op_by_op"] = float(np.real(op_by_op.jvp(case.fn, list(args) + [w], list(tangents))[1]))
        except Exception as exc:
            results["op_by_op"] = "ERR %s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:150])
        try:
            xs = [sg.constant(a) if i in vs else a for i, a in enumerate(args)]
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", sg.GradientPathWarning)
                with sg.ForwardAccumulator([xs[i] for i in vs], [vs[i] for i in vs]) as acc:
                    y = case.fn(*xs, w)
            if any(issubclass(c.category, sg.GradientPathWarning) for c in caught):
                raise sg.GradientPathWarning("warned (a cut path)")
            t = acc.jvp(y, unconnected_gradients="zero") if isinstance(y, sg.Tensor) else None
            results["accumulator"] = float(np.real(t.numpy())) if t is not None else "no tangent (%s)" % type(y)
        except Exception as exc:
            results["accumulator"] = "ERR %s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:150])
    fd = central(case, args, w, vs)
    return fd, results


def main(filters):
    cases = [c for c in test_rules.CASES if not filters or any(f in c.name for f in filters)]
    n = bad = err = 0
    t0 = time.time()
    for case in cases:
        actives = [tuple(case.wrt)] + ([(i,) for i in case.wrt] if len(case.wrt) > 1 else [])
        for active in actives:
            if not active:
                continue
            n += 1
            try:
                fd, res = probe(case, active)
            except Exception:
                print("PROBE-ERROR", case.name, active, traceback.format_exc().splitlines()[-1], flush=True)
                err += 1
                continue
            ref = res["compiled"] if isinstance(res["compiled"], float) else fd
            problems = []
            for path in ("op_by_op", "accumulator"):
                v = res[path]
                if isinstance(v, str):
                    problems.append("%s %s" % (path, v))
                    continue
                if fd is not None and rel(v, fd) > 1e-5 and abs(v - fd) > 1e-6:
                    problems.append("%s=%r fd=%r (%.2g)" % (path, v, fd, rel(v, fd)))
                if isinstance(res["compiled"], float) and rel(v, ref) > 1e-9 and abs(v - ref) > 1e-11:
                    problems.append("%s=%r compiled=%r (%.2g)" % (path, v, ref, rel(v, ref)))
            if isinstance(res["compiled"], str):
                problems.append("compiled " + res["compiled"])
            elif fd is not None and rel(res["compiled"], fd) > 1e-5 and abs(res["compiled"] - fd) > 1e-6:
                problems.append("compiled=%r fd=%r" % (res["compiled"], fd))
            if problems:
                bad += 1
                print("MISMATCH %s %s fd=%s :: %s" % (case.name, active, fd, " | ".join(problems)), flush=True)
    print("probed %d (case, inputs) pairs of %d cases: %d with problems, %d probe errors, %.0fs"
          % (n, len(cases), bad, err, time.time() - t0))


if __name__ == "__main__":
    main(sys.argv[1:])
