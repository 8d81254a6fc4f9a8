"""Probe: the idioms of probe_forward_idioms.py at second order op by op --
forward over forward (nested accumulators: v^T H v of <f, w>), forward over
reverse and reverse over forward (H v) -- against central differences of
the compiled gradient of <f, w>. Not a test: run

    PYTHONPATH=. python3 tests/tools/probe_forward_idioms_second_order.py [substring ...]
"""
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import probe_forward_idioms as P  # noqa: E402
import srcgrad as sg  # noqa: E402

X, T = P.X, P.T


def loss_of(f, w):
    def loss(v):
        y = f(v)
        if isinstance(y, dict):
            y = [y[k] for k in sorted(y)]
        if isinstance(y, (list, tuple)):
            return sum(np.sum(np.real(np.ravel(e) * wi)) for e, wi in zip(y, w))
        return np.sum(np.real(np.ravel(y) * w[0]))
    return loss


def weights(f):
    y = f(X)
    parts = [y[k] for k in sorted(y)] if isinstance(y, dict) else list(y) if isinstance(y, (list, tuple)) else [y]
    rng = np.random.default_rng(5)
    return [rng.normal(size=np.size(p)) for p in parts]


def main(filters):
    good = n = 0
    for f in P.IDIOMS:
        if filters and not any(s in f.__name__ for s in filters):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                loss = loss_of(f, weights(f))
                g = sg.grad(loss)
                hv = (g(X + 1e-5 * T) - g(X - 1e-5 * T)) / 2e-5
                hv2 = (g(X + 1e-4 * T) - g(X - 1e-4 * T)) / 2e-4
                if not np.allclose(hv, hv2, rtol=1e-3, atol=1e-5):
                    continue
            except Exception:
                continue
            n += 1
            out = {}
            x = sg.constant(X)
            t = sg.constant(T)
            try:
                with sg.ForwardAccumulator(x, t) as outer:
                    with sg.ForwardAccumulator(x, t) as inner:
                        y = loss(x)
                    d = inner.jvp(y, unconnected_gradients="zero")
                out["ff"] = float(outer.jvp(d, unconnected_gradients="zero").numpy())
            except Exception as exc:
                out["ff"] = "ERR %s %s" % (type(exc).__name__, str(exc).splitlines()[0][:120] if str(exc) else "")
            try:
                with sg.ForwardAccumulator(x, t) as acc:
                    with sg.GradientTape() as tape:
                        tape.watch(x)
                        y = loss(x)
                    gr = tape.gradient(y, x, unconnected_gradients="zero")
                out["fr"] = acc.jvp(gr, unconnected_gradients="zero").numpy()
            except Exception as exc:
                out["fr"] = "ERR %s %s" % (type(exc).__name__, str(exc).splitlines()[0][:120] if str(exc) else "")
            try:
                with sg.GradientTape() as tape:
                    tape.watch(x)
                    with sg.ForwardAccumulator(x, t) as acc:
                        y = loss(x)
                    d = acc.jvp(y, unconnected_gradients="zero")
                out["rf"] = tape.gradient(d, x, unconnected_gradients="zero").numpy()
            except Exception as exc:
                out["rf"] = "ERR %s %s" % (type(exc).__name__, str(exc).splitlines()[0][:120] if str(exc) else "")
        problems = []
        if isinstance(out["ff"], str):
            problems.append("ff " + out["ff"])
        elif abs(out["ff"] - T @ hv) > 1e-5 * (1 + abs(T @ hv)):
            problems.append("ff %r vs %r" % (out["ff"], T @ hv))
        for k in ("fr", "rf"):
            if isinstance(out[k], str):
                problems.append(k + " " + out[k])
            elif not np.allclose(out[k], hv, rtol=1e-5, atol=1e-6):
                problems.append("%s %s vs %s" % (k, np.round(out[k], 4), np.round(hv, 4)))
        if problems:
            print("MISMATCH", f.__name__, "::", " | ".join(problems), flush=True)
        else:
            good += 1
    print("probed %d idioms at second order: %d agree" % (n, good))


if __name__ == "__main__":
    main(sys.argv[1:])
