"""Probe: reverse over forward through compiled code -- a GradientTape
around a ForwardAccumulator around `sg.function(f)`, for each idiom of
probe_forward_idioms.py: the accumulator runs f's generated JVP code on
Tensors, which the tape must record whole. tape.gradient(<acc.jvp(y), w>)
against central differences of the compiled JVP's <., w>. Not a test: run

    PYTHONPATH=. python3 tests/tools/probe_forward_compiled_under_tape.py [substring ...]
"""
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import probe_forward_idioms as P  # noqa: E402
import srcgrad as sg  # noqa: E402

X, T = P.X, P.T


def main(filters):
    good = n = 0
    for f in P.IDIOMS:
        if filters and not any(s in f.__name__ for s in filters):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                w = np.random.default_rng(1).normal(size=P.as_flat(f(X)).shape)

                def s(x):
                    return float(np.real(np.sum(P.as_flat(sg.jvp(f, (x,), (T,))[1]) * w)))
                u = np.random.default_rng(2).normal(size=X.shape)
                fd = (s(X + 1e-6 * u) - s(X - 1e-6 * u)) / 2e-6
                fd2 = (s(X + 1e-5 * u) - s(X - 1e-5 * u)) / 2e-5
                if abs(fd - fd2) > 1e-4 * (1 + abs(fd)):
                    continue
            except Exception:
                continue
            n += 1
            F = sg.function(f)
            try:
                x = sg.constant(X)
                with sg.GradientTape() as tape:
                    tape.watch(x)
                    with sg.ForwardAccumulator(x, sg.constant(T)) as acc:
                        y = F(x)
                    jv = acc.jvp(y, unconnected_gradients="zero")
                    parts = [jv[k] for k in sorted(jv)] if isinstance(jv, dict) else list(jv) if isinstance(
                        jv, (list, tuple)) else [jv]
                    total = sum(np.sum(np.real(np.ravel(p)) * wp) for p, wp in zip(
                        parts, np.split(w, np.cumsum([np.size(p) for p in parts])[:-1])))
                g = tape.gradient(total, x)
                got = 0.0 if g is None else float(np.sum(g.numpy() * u))
            except Exception as exc:
                print("ERR", f.__name__, type(exc).__name__, str(exc).splitlines()[0][:150] if str(exc) else "")
                continue
        if abs(got - fd) > 1e-5 * (1 + abs(fd)):
            print("MISMATCH", f.__name__, got, fd, "(no gradient)" if g is None else "", flush=True)
        else:
            good += 1
    print("probed %d idioms: %d agree" % (n, good))


if __name__ == "__main__":
    main(sys.argv[1:])
