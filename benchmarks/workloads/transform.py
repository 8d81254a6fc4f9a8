"""Workload 6 (issue 10): how long srcgrad takes to differentiate a
realistic 50-line function the first time (parse, analyse, generate,
compile), with every cache cold.

The function is `benchmarks/workloads/model50.py`'s `gru_loss`: a GRU
encoder with a loop over time, two branches, two helper functions, a list,
attention pooling, and an L2 penalty (46 lines, 51 with its two helpers).
Each measurement runs `_transform_child.py` in a FRESH Python process, so
no srcgrad cache is warm (srcgrad's bytecode is compiled first, as
`pip install` does: a stale `.pyc`, after an edit under
PYTHONDONTWRITEBYTECODE, would time CPython compiling srcgrad's own
source, which a user pays once, not srcgrad): it times `sg.grad(gru_loss, wrt=all 9
parameters)` plus its first call, then the same call warm. The transform
time is first call - warm call (what the first call costs beyond running
the gradient); the median over `subprocesses` processes is reported.

Correctness: the child's gradient is checked against autograd on the same
source (np.allclose, rtol 1e-7, atol 1e-10) and against a central finite
difference of the loss along a random direction (rtol 1e-5), since a
hand-written derivative of this function would itself need checking.

Goals: transform <= 50 ms for a 50-line function (issue 10; Tangent takes
0.4-0.55 s); `import srcgrad` (after NumPy) <= 0.2 s (issue 18).
"""
import compileall
import json
import os
import statistics
import subprocess
import sys

import numpy as np

from benchmarks import harness
from benchmarks.workloads import model50
from benchmarks.workloads._swap import with_numpy

NAME = "transform"
TITLE = "first call of sg.grad on a 50-line function, fresh process (cold caches)"

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_child():
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, "-m", "benchmarks.workloads._transform_child"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError("transform child failed:\n" + proc.stderr[-3000:])
    return json.loads(proc.stdout)


def check(grads, args, bench):
    """None, or what is wrong with the child's gradient."""
    problem = None
    autograd = harness.optional("autograd")
    if autograd is not None:
        import autograd.numpy as anp
        ag = autograd.grad(with_numpy(model50.gru_loss, anp), argnum=tuple(range(model50.N_PARAMS)))
        problem = harness.compare(grads, ag(*args), 1e-7, 1e-10)
        if problem:
            return "vs autograd: " + problem
    rng = np.random.default_rng(1)
    params = args[:model50.N_PARAMS]
    direction = [rng.normal(size=np.shape(p)) for p in params]
    eps = 1e-6

    def at(sign):
        moved = [p + sign * eps * d for p, d in zip(params, direction)]
        return model50.gru_loss(*moved, *args[model50.N_PARAMS:])
    fd = (at(1) - at(-1)) / (2 * eps)
    ad = sum(float(np.sum(np.asarray(g) * d)) for g, d in zip(grads, direction))
    if not np.isclose(ad, fd, rtol=1e-5, atol=1e-8):
        return "directional derivative %.10g, central difference %.10g" % (ad, fd)
    bench.checked_against = ("autograd (same source) and a central difference"
                             if autograd is not None else "a central difference")
    return None


def run(bench):
    n = bench.settings.subprocesses
    bench.params = {"function": "model50.gru_loss", "lines": 50, "subprocesses": n}
    bench.tolerance(1e-7, 1e-10)
    compileall.compile_dir(os.path.join(ROOT, "srcgrad"), quiet=1)     # (as an install does)
    runs = []
    for i in range(n):
        bench.log("  fresh process %d/%d ..." % (i + 1, n))
        runs.append(run_child())
    args = model50.make_args()
    problem = check([np.asarray(g) for g in runs[0]["grads"]], args, bench)
    name = "sg.grad first call (transform + 1 gradient)"
    if problem:
        bench.wrong(name, problem)
        return
    first = [r["sg_grad_call_s"] + r["first_call_s"] for r in runs]
    transform = [f - r["warm_call_s"] for f, r in zip(first, runs)]
    bench.measured(name, statistics.median(first), first)
    bench.measured("transform (first call - warm call)", statistics.median(transform), transform)
    bench.measured("warm gradient call", statistics.median([r["warm_call_s"] for r in runs]),
                   [r["warm_call_s"] for r in runs], kind="measured")
    bench.measured("plain forward", statistics.median([r["forward_s"] for r in runs]),
                   [r["forward_s"] for r in runs], kind="info")
    bench.measured("import srcgrad (after NumPy)",
                   statistics.median([r["import_srcgrad_s"] for r in runs]),
                   [r["import_srcgrad_s"] for r in runs], kind="info")
    bench.target("import srcgrad, ms", lambda: 1e3 * bench.median("import srcgrad (after NumPy)"),
                 "<=", 200, "issue 18")
    bench.target("transform of a 50-line function, ms",
                 lambda: 1e3 * bench.median("transform (first call - warm call)"), "<=", 50,
                 "issue 10")
