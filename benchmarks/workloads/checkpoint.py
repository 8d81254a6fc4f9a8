"""Workload (issue 19): binomial checkpointing of a long loop,
`sg.checkpointed(range(n), snapshots=s)`.

The loop is n = 10^5 explicit Euler steps of a 100-vector,

    x <- x + dt * sin(x) * w

and the gradient of sum(x_n) with respect to x_0 and w. The plain
`sg.grad` records every step (the old x of each step is kept for the
reverse sweep: memory grows with n); the checkpointed loop keeps `s` states
and runs the steps in between again, by Revolve's schedule (Griewank &
Walther, ACM TOMS 26(1), 2000). Paths: the plain gradient (the reference:
ratio 1, memory ratio 1), `snapshots=50` and `snapshots=None` (r <= 2
re-runs per step, about sqrt(2n) = 446 snapshots). Each path's peak memory
is tracemalloc's peak during one call.

Goals (issue 19): snapshots=50 within 1/100 of the plain gradient's
memory in at most 3x its time; snapshots=None within 1/20 of its memory in
at most 2x its time.
"""
import numpy as np

import srcgrad as sg
from srcgrad.runtime import revolve

NAME = "checkpoint"
TITLE = "10^5-step loop, plain gradient vs sg.checkpointed (Revolve)"

STEPS = 100_000
DIM = 100
DT = 1e-3


def euler(x, w, dt, n):
    for t in range(n):
        x = x + dt * np.sin(x) * w
    return np.sum(x)


def euler_checkpointed(x, w, dt, n, snapshots):
    for t in sg.checkpointed(range(n), snapshots=snapshots):
        x = x + dt * np.sin(x) * w
    return np.sum(x)


def run(bench):

    steps, dim = (200, 10) if bench.settings.small else (STEPS, DIM)
    bench.params = {"steps": steps, "dim": dim, "dt": DT}
    bench.tolerance(1e-10, 1e-12)
    rng = np.random.default_rng(0)
    x0, w = rng.normal(size=dim), rng.normal(size=dim)

    plain = sg.grad(euler, wrt=(0, 1))
    checkpointed = sg.grad(euler_checkpointed, wrt=(0, 1))
    bench.reference("srcgrad sg.grad, plain loop", lambda: plain(x0, w, DT, steps), memory=True,
                    notes="records every step")
    bench.path("sg.checkpointed, snapshots=50", lambda: checkpointed(x0, w, DT, steps, 50), memory=True)
    bench.path("sg.checkpointed, snapshots=None", lambda: checkpointed(x0, w, DT, steps, None), memory=True,
               notes="%d snapshots" % revolve.snapshots_used(steps, None))

    for name, bound_t, bound_m in (("snapshots=50", 3, 1 / 100), ("snapshots=None", 2, 1 / 20)):
        path = "sg.checkpointed, " + name
        bench.target("%s time / plain gradient" % name,
                     lambda p=path: bench.ratio(p, "srcgrad sg.grad, plain loop"), "<=", bound_t, "issue 19")
        bench.target("%s memory / plain gradient" % name,
                     lambda p=path: bench.memory_ratio(p, "srcgrad sg.grad, plain loop"), "<=", bound_m,
                     "issue 19")
