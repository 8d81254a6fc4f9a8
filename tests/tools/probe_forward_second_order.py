"""Probe: second derivatives op by op with forward mode, on every row of
the rule table that the tape runs (not `compiled_only`):

  ff: forward over forward, two nested accumulators with the same tangent
      v: outer.jvp(inner.jvp(y)) = v^T H v;
  fr: forward over reverse, an accumulator around a GradientTape:
      acc.jvp(tape.gradient(y, x)) = H v;
  rf: reverse over forward, a tape around an accumulator:
      tape.gradient(acc.jvp(y), x) = H v;

against central differences of the compiled gradient `sg.grad` along v.
Not a test: run

    PYTHONPATH=. python3 tests/tools/probe_forward_second_order.py [substring ...]
"""
import os
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from probe_forward_rules import args_of  # noqa: E402  (puts tests/ and tests/rules/ on the path)
import srcgrad as sg  # noqa: E402
import test_rules  # noqa: E402


def _hv_reference(case, args, w, vs):
    """H v, input by input, by central differences of sg.grad along v;
    None where they are not stable."""
    wrt = tuple(vs)

    def grad_at(s):
        a = [x + s * vs[i] if i in vs else x for i, x in enumerate(args)]
        g = sg.grad(case.fn, wrt=wrt)(*a, w)
        return [np.asarray(e) for e in (g if len(wrt) > 1 else (g,))]
    scale = max(1.0, max(float(np.max(np.abs(args[i]))) for i in vs))
    out = []
    for h in (1e-5 * scale, 1e-4 * scale):
        p, m = grad_at(h), grad_at(-h)
        out.append([(a - b) / (2 * h) for a, b in zip(p, m)])
    for a, b in zip(*out):
        if not np.allclose(a, b, rtol=1e-3, atol=1e-5):
            return None
    return out[0]


def _as_list(g, n):
    return list(g) if n > 1 else [g]


def second_orders(case, args, w, vs):
    wrt = tuple(vs)
    results = {}

    def watched():
        return [sg.constant(a) if i in vs else a for i, a in enumerate(args)]
    tangents = [sg.constant(vs[i]) for i in wrt]
    # forward over forward: v^T H v
    try:
        xs = watched()
        src = [xs[i] for i in wrt]
        with sg.ForwardAccumulator(src, tangents) as outer:
            with sg.ForwardAccumulator(src, tangents) as inner:
                y = case.fn(*xs, w)
            d = inner.jvp(y, unconnected_gradients="zero")
        dd = outer.jvp(d, unconnected_gradients="zero")
        results["ff"] = float(np.real(dd.numpy()))
    except Exception as exc:
        results["ff"] = "ERR %s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:140] if str(exc) else "")
    # forward over reverse: H v
    try:
        xs = watched()
        src = [xs[i] for i in wrt]
        with sg.ForwardAccumulator(src, tangents) as acc:
            with sg.GradientTape() as tape:
                tape.watch(src)
                y = case.fn(*xs, w)
            g = tape.gradient(y, src, unconnected_gradients="zero")
        results["fr"] = [np.asarray(acc.jvp(e, unconnected_gradients="zero").numpy()) for e in g]
    except Exception as exc:
        results["fr"] = "ERR %s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:140] if str(exc) else "")
    # reverse over forward: H v
    try:
        xs = watched()
        src = [xs[i] for i in wrt]
        with sg.GradientTape() as tape:
            tape.watch(src)
            with sg.ForwardAccumulator(src, tangents) as acc:
                y = case.fn(*xs, w)
            d = acc.jvp(y, unconnected_gradients="zero")
        g = tape.gradient(d, src, unconnected_gradients="zero")
        results["rf"] = [np.asarray(e.numpy()) for e in g]
    except Exception as exc:
        results["rf"] = "ERR %s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:140] if str(exc) else "")
    return results


def main(filters):
    cases = [c for c in test_rules.CASES if not c.meta.get("compiled_only")
             and (not filters or any(f in c.name for f in filters))]
    n = bad = 0
    t0 = time.time()
    for case in cases:
        if not case.wrt:
            continue
        args, w, vs = args_of(case)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                ref = _hv_reference(case, args, w, vs)
            except Exception as exc:
                print("NOREF", case.name, type(exc).__name__, str(exc).splitlines()[0][:120] if str(exc) else "")
                continue
            if ref is None:
                continue
            res = second_orders(case, args, w, vs)
        n += 1
        problems = []
        vhv = sum(float(np.sum(r * vs[i])) for r, i in zip(ref, vs))
        if isinstance(res["ff"], str):
            problems.append("ff " + res["ff"])
        elif abs(res["ff"] - vhv) > 1e-5 * (1 + abs(vhv)):
            problems.append("ff=%r vHv=%r" % (res["ff"], vhv))
        for path in ("fr", "rf"):
            got = res[path]
            if isinstance(got, str):
                problems.append(path + " " + got)
                continue
            for k, (a, b) in enumerate(zip(got, ref)):
                if np.shape(a) != np.shape(b) or not np.allclose(a, b, rtol=1e-5, atol=1e-5 * (1 + np.max(np.abs(b)))):
                    problems.append("%s input %d: max diff %.3g" % (path, k, float(np.max(np.abs(
                        np.broadcast_to(a, np.shape(b)) - b))) if np.size(a) == np.size(b) else -1))
        if problems:
            bad += 1
            print("MISMATCH", case.name, "::", " | ".join(problems), flush=True)
    print("probed %d cases: %d with problems, %.0fs" % (n, bad, time.time() - t0))


if __name__ == "__main__":
    main(sys.argv[1:])
