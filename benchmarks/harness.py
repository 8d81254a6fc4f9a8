"""The measuring harness shared by every workload: check, then time.

A workload module (``benchmarks/workloads/*.py``) defines ``run(bench)``
and talks to one `Bench` object:

    bench.reference("hand-written NumPy", fn)     # the derivative everything is checked against
    bench.path("srcgrad sg.grad", fn, memory=True)
    bench.jit_paths("JAX jit (steady state)", "JAX jit first call", make_fn)
    bench.target("sg.grad / hand-written", lambda: bench.ratio(a, b), "<=", 1.25, "issue 10")

How a path is measured (`Bench.path`):

1. **Checked before it is timed.** ``fn()`` is called once (this is also
   the first warm-up call) and its result, flattened to a list of float64
   arrays, must have the reference's shapes and satisfy
   ``np.allclose(result, reference, rtol, atol)`` with the workload's
   stated tolerance. A path that disagrees is reported ``WRONG`` (with the
   largest absolute and relative error) and is never timed, so a fast wrong
   answer cannot win; a path that raises is reported ``FAILED`` with the
   exception (the traceback goes to the JSON file).
2. **Warm-up:** ``warmup`` more calls (caches, JIT, allocator); a path
   whose first call took more than a tenth of its budget counts as warmed
   up by the check. One more timed call chooses the loop count ``number``
   so that one repeat lasts at least ``min_time`` seconds.
3. **Timing, interleaved** (`Bench.time_pending`, after every path of the
   workload has been checked): in rounds, each round timing one repeat of
   ``number`` calls of every path still running, in a shuffled order (a
   seeded generator), with `time.perf_counter`. A change of machine load
   during the workload hits all paths alike, and no path always follows
   the same one (PyTorch's and OpenMP's worker threads spin for a while
   after a call and slow down whatever runs next). The garbage collector
   stays on, as in real use. A path stops after ``repeat`` repeats, or after
   3 once it has used ``budget`` seconds, so a slow path (autograd on 1000
   scalar steps, JAX eager) cannot blow the run's time. The reported time
   is the **median** of the per-call times of the repeats; all of them go
   to the JSON file.
4. **Memory** (NumPy-based paths only, when asked): the peak of
   `tracemalloc` during one call, above what was allocated before it.
   NumPy reports its buffers to tracemalloc; PyTorch and XLA allocate
   outside its view, so their memory is not measured.

The ratio printed for each path is its median over the reference's median
(hand-written NumPy = 1).

``jit_paths`` measures what happens once per function, besides the steady
state: the first call of a fresh function from ``make_fn()`` (new closure,
so JAX's trace and compile caches, keyed by the function object, miss),
the median over up to ``repeat`` fresh functions (within ``budget``).
"""
import gc
import math
import os
import random
import statistics
import sys
import time
import traceback
import tracemalloc

import numpy as np

OK, WRONG, FAILED, SKIPPED, INFO = "ok", "WRONG", "FAILED", "skipped", "info"


class WorkloadSkipped(Exception):
    """Raised by a workload that cannot run here (a library it needs is
    missing); the runner reports the reason and goes on."""


class Settings:
    """How hard to measure. `quick` is for smoke runs and tests."""

    def __init__(self, quick=False, repeat=None, min_time=None, budget=None, warmup=None,
                 subprocesses=None, small=False, threads=None):
        self.quick = quick
        self.threads = threads   # None: each library's default
        self.small = small   # tiny sizes (the smoke test): the numbers mean nothing
        self.repeat = repeat if repeat is not None else (3 if quick else 7)
        self.min_time = min_time if min_time is not None else (0.003 if quick else 0.02)
        self.budget = budget if budget is not None else (0.3 if quick else 2.0)
        self.warmup = warmup if warmup is not None else (1 if quick else 2)
        if subprocesses is None:
            subprocesses = 1 if small else 2 if quick else 5
        self.subprocesses = subprocesses

    def as_dict(self):
        return {"quick": self.quick, "small": self.small, "repeat": self.repeat,
                "min_time_s": self.min_time, "budget_s": self.budget, "warmup": self.warmup,
                "subprocesses": self.subprocesses, "threads": self.threads}


def flatten(value):
    """A gradient result (array, float, Tensor, torch tensor, JAX array, or
    nested tuples/lists/dicts of them) as a flat list of float64 ndarrays."""
    if isinstance(value, dict):
        return [a for k in sorted(value) for a in flatten(value[k])]
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in flatten(v)]
    if hasattr(value, "detach"):               # torch.Tensor
        value = value.detach().cpu().numpy()
    elif hasattr(value, "numpy") and not isinstance(value, np.ndarray):   # sg.Tensor
        value = value.numpy()
    return [np.asarray(value, dtype=np.float64)]


def compare(got, expected, rtol, atol):
    """None when `got` matches `expected` (same shapes, np.allclose), else
    a short description of the first mismatch."""
    got, expected = flatten(got), flatten(expected)
    if len(got) != len(expected):
        return "%d arrays returned, %d expected" % (len(got), len(expected))
    for i, (g, e) in enumerate(zip(got, expected)):
        if g.shape != e.shape:
            return "array %d: shape %s, expected %s" % (i, g.shape, e.shape)
        if not np.allclose(g, e, rtol=rtol, atol=atol):
            err = np.abs(g - e)
            rel = err / np.maximum(np.abs(e), np.finfo(float).tiny)
            return ("array %d: max abs error %.3g, max rel error %.3g (rtol=%g, atol=%g)"
                    % (i, float(np.max(err)), float(np.max(rel)), rtol, atol))
    return None


def calibrate(fn, settings):
    """The loop count that makes one repeat of `fn` last >= settings.min_time."""
    t0 = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - t0
    return max(1, int(math.ceil(settings.min_time / max(elapsed, 1e-9)))), elapsed


def time_repeat(fn, number):
    """Seconds per call over one repeat of `number` calls."""
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def peak_memory(fn):
    """Peak bytes traced by tracemalloc during one call of `fn`, above the
    bytes allocated before it (`fn` has run before, so caches are warm)."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def _error_text(exc):
    text = "%s: %s" % (type(exc).__name__, exc)
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return first if len(first) <= 200 else first[:197] + "..."


class Bench:
    """One workload's rows: the reference, the paths, the goals.

    Paths are checked (and warmed up) when they are added; the timing
    itself happens in `finish`, interleaved across paths."""

    def __init__(self, name, settings, rtol=1e-7, atol=1e-9, log=None):
        self.name = name
        self.settings = settings
        self.rtol, self.atol = rtol, atol
        self.rows = []
        self.targets = []
        self.notes = []
        self.params = {}
        self.expected = None
        self.log = log or (lambda text: None)
        self._by_name = {}
        self._pending = []   # (row, fn, number, memory) waiting to be timed
        self.show_ratios = True   # False where a ratio to the reference means nothing
        self.checked_against = None   # overrides the reference's name in the table header

    # ---- rows
    def _row(self, name, kind, notes=""):
        row = {"path": name, "kind": kind, "status": None, "median_s": None, "times_s": [],
               "number": None, "ratio": None, "peak_bytes": None, "memory_ratio": None,
               "notes": notes, "error": None, "traceback": None}
        self.rows.append(row)
        self._by_name[name] = row
        return row

    def tolerance(self, rtol, atol):
        """The np.allclose tolerance every path is checked with."""
        self.rtol, self.atol = rtol, atol

    def reference(self, name, fn, memory=False, notes=""):
        """The hand-written NumPy derivative: its result is what every path
        must reproduce, its median is ratio 1."""
        row = self._row(name, "reference", notes)
        t0 = time.perf_counter()
        self.expected = fn()
        self._prepare(row, fn, memory, time.perf_counter() - t0)
        return row

    def path(self, name, fn, memory=False, notes="", check=True, costly_start=False):
        """Check `fn()` against the reference, warm it up, and queue it for
        timing. `check=False` only for rows that compute no derivative (a
        plain forward pass): they are marked `info`. `costly_start`: the
        first call costs seconds whatever the size (JAX eager compiles every
        primitive on first use), so the path is skipped at --small sizes."""
        if costly_start and self.settings.small:
            return self.skip(name, "not run at --small sizes (seconds of compilation)")
        row = self._row(name, "path" if check else "info", notes)
        self.log("  %s ..." % name)
        try:
            t0 = time.perf_counter()
            out = fn()
            first = time.perf_counter() - t0
            if check:
                problem = compare(out, self.expected, self.rtol, self.atol)
                if problem:
                    row["status"], row["error"] = WRONG, problem
                    return row
            self._prepare(row, fn, memory, first)
        except Exception as exc:   # noqa: BLE001  (a failing path is a result)
            row["status"], row["error"] = FAILED, _error_text(exc)
            row["traceback"] = traceback.format_exc()
        return row

    def _prepare(self, row, fn, memory, first_elapsed):
        # A call slower than a tenth of the budget was warmed up by the check.
        slow = first_elapsed > self.settings.budget / 10
        number = 1
        if not slow:
            for _ in range(self.settings.warmup):
                fn()
            number, _ = calibrate(fn, self.settings)
        row["number"] = number
        self._pending.append((row, fn, number, memory))

    def jit_paths(self, steady_name, first_name, make_fn, notes="",
                  first_notes="trace + compile + run"):
        """A just-in-time compiled path, as two rows: `first_name`, the first
        call of a fresh function from `make_fn()` (tracing and compilation
        included), and `steady_name`, the same function afterwards (timed
        like any path). The first compiled function serves both rows; more
        fresh functions (new closures, so JAX's caches, keyed by the
        function object, miss) are built only for more first-call samples,
        up to `repeat` within the budget. Each result is checked."""
        first = self._row(first_name, "first call", first_notes)
        self.log("  %s ..." % first_name)
        times = []
        fn = None
        while len(times) < self.settings.repeat:
            try:
                t0 = time.perf_counter()
                candidate = make_fn()
                out = candidate()
                elapsed = time.perf_counter() - t0
            except Exception as exc:   # noqa: BLE001
                first["status"], first["error"] = FAILED, _error_text(exc)
                first["traceback"] = traceback.format_exc()
                break
            problem = compare(out, self.expected, self.rtol, self.atol)
            if problem:
                first["status"], first["error"] = WRONG, problem
                break
            fn = fn or candidate
            times.append(elapsed)
            if sum(times) > self.settings.budget:
                break
        if times and first["status"] is None:
            first["status"], first["times_s"], first["number"] = OK, times, 1
            first["median_s"] = statistics.median(times)
        if fn is None:   # the first call failed: so does the steady state
            steady = self._row(steady_name, "path", notes)
            steady["status"], steady["error"] = first["status"], "see " + first_name
        else:
            self.path(steady_name, fn, notes=notes)
        self.rows.remove(first)   # the steady-state row reads first
        self.rows.append(first)

    def measured(self, name, seconds, times=None, notes="", peak_bytes=None, kind="path"):
        """A row measured by the workload itself (a subprocess, a difference)."""
        row = self._row(name, kind, notes)
        row["status"], row["median_s"] = OK, seconds
        row["times_s"] = list(times) if times is not None else [seconds]
        row["peak_bytes"] = peak_bytes
        return row

    def derived(self, name, value, notes="", kind="derived"):
        """A row whose time is computed from other rows after timing:
        `value` is a zero-argument callable returning seconds (or None)."""
        row = self._row(name, kind, notes)
        row["status"] = "pending"
        row["_value"] = value
        return row

    def failed(self, name, exc, notes=""):
        """A path that raised outside `path` (in its set-up)."""
        row = self._row(name, "path", notes)
        row["status"], row["error"] = FAILED, _error_text(exc)
        row["traceback"] = "".join(traceback.format_exception(exc))
        return row

    def wrong(self, name, problem, notes=""):
        row = self._row(name, "path", notes)
        row["status"], row["error"] = WRONG, problem
        return row

    def skip(self, name, why):
        row = self._row(name, "path", why)
        row["status"] = SKIPPED
        return row

    def time_pending(self):
        """Time every queued path, in rounds: each round times one repeat of
        each path still running, so a change of machine load during the
        workload hits every path alike. A path stops after `repeat`
        repeats, or after 3 once it has used its budget."""
        pending = [[row, fn, number, memory, [], 0.0]
                   for row, fn, number, memory in self._pending]
        self._pending = []
        if pending:
            self.log("  timing %d paths ..." % len(pending))
        gc.collect()
        order = random.Random(0)
        while True:
            active = [p for p in pending
                      if len(p[4]) < self.settings.repeat
                      and not (len(p[4]) >= 3 and p[5] > self.settings.budget)]
            if not active:
                break
            order.shuffle(active)   # no path always runs right after the same one
            for p in active:
                try:
                    per_call = time_repeat(p[1], p[2])
                except Exception as exc:   # noqa: BLE001  (passed its check, failed later)
                    p[0]["status"], p[0]["error"] = FAILED, _error_text(exc)
                    p[0]["traceback"] = traceback.format_exc()
                    pending.remove(p)
                    continue
                p[4].append(per_call)
                p[5] += per_call * p[2]
        for row, fn, number, memory, times, _ in pending:
            row["times_s"], row["median_s"], row["status"] = times, statistics.median(times), OK
            if memory:
                try:
                    row["peak_bytes"] = peak_memory(fn)
                except Exception as exc:   # noqa: BLE001
                    row["error"] = "peak memory: " + _error_text(exc)

    # ---- results (valid after time_pending)
    def median(self, name):
        row = self._by_name.get(name)
        return row["median_s"] if row and row["status"] == OK else None

    def peak(self, name):
        row = self._by_name.get(name)
        return row["peak_bytes"] if row and row["status"] == OK else None

    def ratio(self, a, b):
        """median(a) / median(b), or None when either is missing."""
        ta, tb = self.median(a), self.median(b)
        return ta / tb if ta is not None and tb else None

    def memory_ratio(self, a, b):
        pa, pb = self.peak(a), self.peak(b)
        return pa / pb if pa is not None and pb else None

    def note(self, text):
        self.notes.append(text)

    def target(self, what, value, op, bound, source):
        """A goal from the issues: `value op bound` (op "<=" or ">=").
        `value` may be a zero-argument callable, evaluated after timing;
        None (a path failed or was skipped) counts as not measured."""
        self.targets.append({"workload": self.name, "what": what, "value": value, "op": op,
                             "bound": bound, "met": None, "source": source})

    def finish(self):
        """Time what is queued, compute ratios and goals; the JSON record."""
        self.time_pending()
        for row in self.rows:
            value = row.pop("_value", None)
            if value is not None:
                try:
                    row["median_s"] = value()
                    row["status"] = OK if row["median_s"] is not None else SKIPPED
                except Exception as exc:   # noqa: BLE001
                    row["status"], row["error"] = FAILED, _error_text(exc)
        ref = next((r for r in self.rows if r["kind"] == "reference" and r["status"] == OK), None)
        for row in self.rows:
            if ref is not None and row["median_s"] is not None and self.show_ratios:
                row["ratio"] = row["median_s"] / ref["median_s"]
            if ref is not None and ref["peak_bytes"] and row["peak_bytes"] is not None:
                row["memory_ratio"] = row["peak_bytes"] / ref["peak_bytes"]
        for t in self.targets:
            if callable(t["value"]):
                try:
                    t["value"] = t["value"]()
                except Exception as exc:   # noqa: BLE001
                    t["value"], t["error"] = None, _error_text(exc)
            v = t["value"]
            if v is not None:
                t["met"] = v <= t["bound"] if t["op"] == "<=" else v >= t["bound"]
        return {"name": self.name, "params": self.params, "rtol": self.rtol, "atol": self.atol,
                "rows": self.rows, "targets": self.targets, "notes": self.notes}


_THREAD_LIMIT = {"n": None, "blas": None}


def limit_threads(n):
    """Run every library on `n` threads: OpenBLAS/MKL through threadpoolctl
    (and the environment, for subprocesses), PyTorch through
    `torch.set_num_threads` (in `torch_module`), XLA's CPU backend through
    XLA_FLAGS (one thread only; must happen before JAX starts its backend).
    On a loaded machine, `n = 1` removes most of the noise of threads
    waiting for each other; the default (None) leaves each library's own
    choice, which is what users get."""
    if n is None:
        return
    _THREAD_LIMIT["n"] = n
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)
    if n == 1:
        flags = os.environ.get("XLA_FLAGS", "")
        os.environ["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1").strip()
    tpc = optional("threadpoolctl")
    if tpc is not None:
        _THREAD_LIMIT["blas"] = tpc.threadpool_limits(limits=n)   # kept alive: stays in force


_DISABLED = set()


def disable(*libraries):
    """Treat these optional libraries, and only these, as absent (the
    runner's --without)."""
    _DISABLED.clear()
    _DISABLED.update(libraries)


def disabled():
    return set(_DISABLED)


def unavailable(library):
    """Why a path of `library` is skipped: the note in the table."""
    if library in _DISABLED:
        return "%s disabled (--without)" % library
    return "%s not importable" % library


def optional(module_name):
    """Import an optional library (jax, torch, autograd), or None."""
    if module_name.split(".")[0] in _DISABLED:
        return None
    try:
        return __import__(module_name, fromlist=["_"])
    except Exception:   # noqa: BLE001  (ImportError, or a broken install)
        return None


SG_JIT_STEADY, SG_JIT_FIRST = "srcgrad sg.jit (steady state)", "srcgrad sg.jit first call"
#: the rows of @sg.function(jit=True) on a tape (sg_jit_paths with these names)
TAPE_JIT_STEADY, TAPE_JIT_FIRST = ("srcgrad @sg.function(jit=True) on tape (steady state)",
                                   "srcgrad @sg.function(jit=True) on tape, first call")


def sg_jit_paths(bench, make_fn, notes="", steady_name=SG_JIT_STEADY, first_name=SG_JIT_FIRST):
    """The two rows of srcgrad's `sg.jit` (Numba), as `Bench.jit_paths`:
    `make_fn()` returns a call of a fresh `sg.jit(sg.grad(...))` (its first
    call links, lowers and compiles the generated code). Skipped when Numba
    is missing (or --without numba) and at --small sizes (Numba compiles
    for seconds). A call that fell back to CPython (a PerformanceWarning)
    is FAILED: it would time CPython, not Numba."""
    if optional("numba") is None:
        for name in (steady_name, first_name):
            bench.skip(name, unavailable("numba"))
        return
    if bench.settings.small:
        for name in (steady_name, first_name):
            bench.skip(name, "not run at --small sizes (Numba compiles for seconds)")
        return
    import warnings

    import srcgrad

    def strict():
        fn = make_fn()
        checked = []

        def call():
            if checked:
                return fn()
            with warnings.catch_warnings():
                warnings.simplefilter("error", srcgrad.PerformanceWarning)
                out = fn()
            checked.append(True)
            return out
        return call
    bench.jit_paths(steady_name, first_name, strict, notes=notes,
                    first_notes="link + lower + Numba compile + run")


def sg_jit_reason(bench, make_fn, name=SG_JIT_STEADY):
    """The sg.jit row of a workload whose transform sg.jit does not compile
    (what sg.jacobian and sg.hessian return run in CPython under sg.jit):
    `make_fn()` returns a call of `sg.jit(...)`, run once; the row is
    skipped with the PerformanceWarning's reason, or timed as
    sg_jit_paths does when it compiled after all."""
    if optional("numba") is None or bench.settings.small:
        sg_jit_paths(bench, make_fn, steady_name=name, first_name=name + " first call")
        return
    import warnings

    import srcgrad
    call = make_fn()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", srcgrad.PerformanceWarning)
        call()
    reasons = [str(w.message) for w in caught if issubclass(w.category, srcgrad.PerformanceWarning)]
    if reasons:
        bench.skip(name, reasons[0])
    else:
        sg_jit_paths(bench, make_fn, steady_name=name, first_name=name + " first call")


#: the row of sg_jit_cached_first
SG_JIT_CACHED = "srcgrad sg.jit first call, new process, warm disk cache"


def sg_jit_cached_first(bench, module_name, name=SG_JIT_CACHED):
    """The first call of `sg.jit(..., cache=True)` in a new process whose
    on-disk cache another process filled: `module_name`'s
    `sg_jit_case(cache=True)` run twice in fresh interpreters
    (workloads/_jit_cache_child.py) sharing a temporary SRCGRAD_CACHE_DIR;
    the second one's time is the row (the first one's, which compiled, is
    in its notes). The results are checked. Skipped as sg_jit_paths is."""
    if optional("numba") is None:
        bench.skip(name, unavailable("numba"))
        return
    if bench.settings.small:
        bench.skip(name, "not run at --small sizes (Numba compiles for seconds)")
        return
    import json
    import subprocess
    import tempfile
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    runs = []
    bench.log("  %s (two fresh processes) ..." % name)
    with tempfile.TemporaryDirectory(prefix="srcgrad-cache-") as folder:
        env = dict(os.environ, SRCGRAD_CACHE_DIR=folder)
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        for _ in range(2):
            proc = subprocess.run([sys.executable, "-m", "benchmarks.workloads._jit_cache_child", module_name],
                                  cwd=root, env=env, capture_output=True, text=True, timeout=1800)
            if proc.returncode != 0:
                bench.failed(name, RuntimeError("the child process failed:\n" + proc.stderr[-2000:]))
                return
            runs.append(json.loads(proc.stdout))
    for run in runs:
        got = run["result"]     # (JSON: a tuple of arrays came back as a list of nested lists)
        got = [np.asarray(g) for g in got] if isinstance(got, list) else np.asarray(got)
        problem = compare(got, bench.expected, bench.rtol, bench.atol)
        if problem:
            bench.wrong(name, problem)
            return
    bench.measured(name, runs[1]["first_call_s"],
                   notes="transform + lower + load the machine code + run; the process that compiled and "
                         "filled the cache took %.2f s" % runs[0]["first_call_s"])


def jax_modules():
    """(jax, jax.numpy) with float64 enabled, or (None, None)."""
    jax = optional("jax")
    if jax is None:
        return None, None
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    return jax, jnp


def torch_module():
    """torch, on the thread count of `limit_threads` if one was set, or None."""
    torch = optional("torch")
    if torch is not None and _THREAD_LIMIT["n"] is not None:
        torch.set_num_threads(_THREAD_LIMIT["n"])
    return torch


def log_to_stderr(text):
    print(text, file=sys.stderr, flush=True)
