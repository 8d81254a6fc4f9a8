"""Probe: the complex rule rows (tests/rules/test_complex.py and
test_complex_linalg_fft.py) through forward mode op by op (`op_by_op.jvp`
and a ForwardAccumulator), all inputs and each alone, along complex
directions, against central differences of the real loss and the compiled
`sg.jvp`; and second order (forward over reverse, reverse over forward)
against central differences of the compiled gradient. Not a test: run

    PYTHONPATH=. python3 tests/tools/probe_forward_complex.py [substring ...]
"""
import os
import sys
import warnings
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, ".."), os.path.join(HERE, "..", "rules")]

import srcgrad as sg  # noqa: E402
import test_complex  # noqa: E402
import test_complex_linalg_fft  # noqa: E402
from srcgrad import op_by_op  # noqa: E402

EPS = 1e-6


def rows():
    for module in (test_complex, test_complex_linalg_fft):
        for row in module.CASES:
            yield module, row[0], row[1]


def main(filters):
    n = bad = 0
    for module, name, fn in rows():
        if filters and not any(f in name for f in filters):
            continue
        args, w = module._data(name)
        rng = np.random.default_rng(zlib.crc32(("vp" + name).encode()))
        vs_all = [rng.normal(size=np.shape(a)) + 1j * rng.normal(size=np.shape(a)) for a in args]
        actives = [tuple(range(len(args)))] + ([(i,) for i in range(len(args))] if len(args) > 1 else [])
        for active in actives:
            vs = [v if i in active else np.zeros_like(v) for i, v in enumerate(vs_all)]
            plus = [a + EPS * v for a, v in zip(args, vs)]
            minus = [a - EPS * v for a, v in zip(args, vs)]
            fd = (fn(*plus, w) - fn(*minus, w)) / (2 * EPS)
            res = {}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tans = [v if i in active else None for i, v in enumerate(vs)]
                try:
                    res["compiled"] = np.real(sg.jvp(fn, tuple(args) + (w,), tuple(tans) + (None,))[1])
                except Exception as exc:
                    res["compiled"] = "ERR %s %s" % (type(exc).__name__, str(exc)[:120])
                try:
                    res["op_by_op"] = np.real(op_by_op.jvp(fn, list(args) + [w], list(tans) + [None])[1])
                except Exception as exc:
                    res["op_by_op"] = "ERR %s %s" % (type(exc).__name__, str(exc)[:120])
                try:
                    xs = [sg.constant(a) if i in active else a for i, a in enumerate(args)]
                    with sg.ForwardAccumulator([xs[i] for i in active], [vs[i] for i in active]) as acc:
                        y = fn(*xs, w)
                    res["accumulator"] = np.real(acc.jvp(y, unconnected_gradients="zero").numpy())
                except Exception as exc:
                    res["accumulator"] = "ERR %s %s" % (type(exc).__name__, str(exc)[:120])
                # second order, all inputs active: H v by differences of the compiled gradient
                if len(active) == len(args):
                    wrt = tuple(range(len(args)))
                    try:
                        def grad_at(s):
                            g = sg.grad(fn, wrt=wrt)(*[a + s * v for a, v in zip(args, vs)], w)
                            return list(g) if len(args) > 1 else [g]
                        hv = [(p - m) / (2e-5) for p, m in zip(grad_at(1e-5), grad_at(-1e-5))]
                        xs = [sg.constant(a) for a in args]
                        with sg.ForwardAccumulator(xs, vs) as acc:
                            with sg.GradientTape() as tape:
                                tape.watch(xs)
                                y = fn(*xs, w)
                            g = tape.gradient(y, xs)
                        res["fr"] = [acc.jvp(e, unconnected_gradients="zero").numpy() for e in g]
                        xs = [sg.constant(a) for a in args]
                        with sg.GradientTape() as tape:
                            tape.watch(xs)
                            with sg.ForwardAccumulator(xs, vs) as acc:
                                y = fn(*xs, w)
                            d = np.real(acc.jvp(y, unconnected_gradients="zero"))
                        res["rf"] = [e.numpy() for e in tape.gradient(d, xs, unconnected_gradients="zero")]
                        res["hv"] = hv
                    except Exception as exc:
                        res["fr"] = "ERR %s %s" % (type(exc).__name__, str(exc)[:120])
            n += 1
            problems = []
            for path in ("compiled", "op_by_op", "accumulator"):
                v = res[path]
                if isinstance(v, str):
                    problems.append(path + " " + v)
                elif not np.allclose(v, fd, rtol=1e-5, atol=1e-6):
                    problems.append("%s=%r fd=%r" % (path, v, fd))
            for path in ("fr", "rf"):
                v = res.get(path)
                if v is None:
                    continue
                if isinstance(v, str):
                    problems.append(path + " " + v)
                    continue
                for k, (a, b) in enumerate(zip(v, res["hv"])):
                    if not np.allclose(a, b, rtol=1e-4, atol=1e-5):
                        problems.append("%s input %d: %s vs %s" % (path, k, np.round(np.ravel(a)[:3], 4),
                                                                   np.round(np.ravel(b)[:3], 4)))
            if problems:
                bad += 1
                print("MISMATCH", name, active, "::", " | ".join(problems)[:600], flush=True)
    print("probed %d (row, inputs) pairs: %d with problems" % (n, bad))


if __name__ == "__main__":
    main(sys.argv[1:])
