"""Run srcgrad's benchmarks: every workload of issues 9 and 10, side by side.

    python -m benchmarks                  # everything, 1-2 minutes on 2 cores
    python benchmarks/run.py              # the same
    python -m benchmarks --quick          # few repeats (a smoke run)
    python -m benchmarks --only mlp rnn   # some workloads (names: --list)
    python -m benchmarks --threads 1      # BLAS, PyTorch, XLA on one thread (a loaded machine)
    python -m benchmarks --without jax    # as if JAX were not installed
    python -m benchmarks --json out.json  # where the numbers go (default benchmarks/results.json)
    python -m benchmarks --markdown       # also print Markdown tables (for the README)
    python -m benchmarks --from-json benchmarks/results.json --markdown   # re-render, no run

Each workload prints one table (path, median time, ratio to the
hand-written NumPy derivative, peak memory where measured, notes), then the
goals of the issues with their measured values. How each number is
measured is in `benchmarks/harness.py`; what each workload computes, and
why, in its module under `benchmarks/workloads/`. The JSON file holds every
number (all repeats), the machine and the versions, so the README table can
be regenerated from it (`--from-json ... --markdown`).
"""
import argparse
import datetime
import gc
import importlib
import json
import os
import platform
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if __package__ in (None, ""):   # `python benchmarks/run.py`: make the package importable
    sys.path[:0] = [ROOT]
    __package__ = "benchmarks"   # noqa: A001

from benchmarks import harness  # noqa: E402

# Issue 10's workloads, then issue 9's, in the order of the issues; then issue 19's and 18's.
WORKLOADS = ["pendulum", "mlp", "rnn", "smallops", "digits", "transform", "overhead",
             "jacobian", "hessian", "checkpoint", "constants", "elements", "arrays", "gradbench"]
ALIASES = {"gpu": "arrays"}     # (--only gpu: the CuPy row runs where a GPU exists)
DEFAULT_JSON = os.path.join(HERE, "results.json")
OPTIONAL_LIBRARIES = ["jax", "torch", "autograd", "numba"]


def _version(module_name, dist_name=None):
    """The version of the module the benchmarks import; for a library
    disabled by --without, the installed distribution's (not imported)."""
    if module_name in OPTIONAL_LIBRARIES and not harness.optional(module_name):
        try:
            from importlib.metadata import version as dist_version
            return dist_version(dist_name or module_name) + " (not used)"
        except Exception:   # noqa: BLE001
            return None
    module = harness.optional(module_name)
    if module is None:
        return None
    version = getattr(module, "__version__", None)
    if version is None:
        try:
            from importlib.metadata import version as dist_version
            version = dist_version(dist_name or module_name)
        except Exception:   # noqa: BLE001
            version = "?"
    return version


def machine_info():
    """CPU, cores, load and the versions of everything timed."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    try:
        load = list(os.getloadavg())
    except OSError:
        load = None
    commit = None
    try:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, timeout=5).stdout.strip() or None
    except Exception:   # noqa: BLE001
        pass
    info = {
        "cpu": cpu, "cores": os.cpu_count(), "usable_cores": usable, "load_average": load,
        "platform": platform.platform(), "python": platform.python_version(),
        "numpy": _version("numpy"), "srcgrad": _version("srcgrad"), "srcgrad_commit": commit,
        "srcgrad_path": os.path.dirname(harness.optional("srcgrad").__file__),
        "autograd": _version("autograd"), "jax": _version("jax"), "torch": _version("torch"),
        "numba": _version("numba"),
        "disabled": sorted(harness.disabled()),
        "scipy": _version("scipy"), "scikit-learn": _version("sklearn", "scikit-learn"),
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
    }
    torch = harness.torch_module() if info["torch"] else None
    if torch is not None:
        info["torch_threads"] = torch.get_num_threads()
    tpc = harness.optional("threadpoolctl")
    if tpc is not None:
        try:
            info["blas"] = [{"api": p.get("internal_api"), "threads": p.get("num_threads"),
                             "version": p.get("version")} for p in tpc.threadpool_info()]
        except Exception:   # noqa: BLE001
            pass
    return info


# ---------------------------------------------------------------- output
def fmt_time(seconds):
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return "%.1f us" % (seconds * 1e6)
    if seconds < 1:
        return "%.2f ms" % (seconds * 1e3)
    return "%.2f s" % seconds


def fmt_bytes(n):
    if n is None:
        return ""
    if n < 2 ** 20:
        return "%.0f kB" % (n / 2 ** 10)
    return "%.2f MB" % (n / 2 ** 20)


def fmt_ratio(r):
    if r is None:
        return ""
    return "%.0fx" % r if r >= 100 else "%.1fx" % r if r >= 10 else "%.2fx" % r


def _row_cells(row):
    status = row["status"]
    if status == harness.OK:
        time_cell, ratio_cell = fmt_time(row["median_s"]), fmt_ratio(row["ratio"])
    else:
        time_cell, ratio_cell = status, ""
    mem = fmt_bytes(row["peak_bytes"])
    if mem and row["memory_ratio"] is not None:
        mem += " (%s)" % fmt_ratio(row["memory_ratio"])
    notes = [row["notes"]] if row["notes"] else []
    if row["error"]:
        notes.append(row["error"])
    return [row["path"], time_cell, ratio_cell, mem, "; ".join(notes)]


def _target_line(t):
    value = "n/a" if t["value"] is None else "%.3g" % t["value"]
    verdict = {True: "met", False: "NOT MET", None: "not measured"}[t["met"]]
    return "%s: %s = %s (target %s %g, %s): %s" % (t["workload"], t["what"], value, t["op"],
                                                     t["bound"], t["source"], verdict)


def print_workload(result, title, out=None):
    out = out or sys.stdout
    rows = [["path", "median", "vs hand", "peak memory", "notes"]]
    rows += [_row_cells(r) for r in result["rows"]]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    print("\n== %s: %s" % (result["name"], title), file=out)
    params = ", ".join("%s=%s" % kv for kv in result["params"].items())
    if params:
        print("   %s" % params, file=out)
    if result.get("checked_against"):
        print("   checked against %s: np.allclose(rtol=%g, atol=%g) before timing"
              % (result["checked_against"], result["rtol"], result["atol"]), file=out)
    for i, r in enumerate(rows):
        line = "  ".join(c.ljust(w) if j == 0 else c.rjust(w)
                         for j, (c, w) in enumerate(zip(r[:4], widths)))
        print("   " + line + ("  " + r[4] if r[4] else ""), file=out)
        if i == 0:
            print("   " + "-" * (sum(widths) + 8), file=out)
    for n in result["notes"]:
        print("   note: %s" % n, file=out)
    if result.get("error"):
        print("   WORKLOAD FAILED: %s" % result["error"], file=out)
    for t in result["targets"]:
        print("   goal  " + _target_line(t), file=out)


def _shown_argv(argv):
    """The command line without where its JSON went."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--json":
            skip = True
        elif not a.startswith("--json="):
            out.append(a)
    return out


def markdown(results):
    """The README's tables, from a results dictionary (as in the JSON file)."""
    m = results["machine"]
    threads = results["settings"].get("threads")
    lines = ["Measured with `python -m benchmarks%s` on %s (%s cores, load %s), Python %s, "
             "NumPy %s, srcgrad %s%s, autograd %s, JAX %s, PyTorch %s; %s; float64; median "
             "of %d repeats, ratios to the hand-written NumPy derivative in the same run."
             % ("".join(" " + a for a in _shown_argv(results.get("argv") or [])),
                m["cpu"], m["cores"],
                "%.1f" % m["load_average"][0] if m.get("load_average") else "?",
                m["python"], m["numpy"], m["srcgrad"],
                " (%s)" % m["srcgrad_commit"] if m.get("srcgrad_commit") else "",
                m["autograd"], m["jax"] or "not installed", m["torch"] or "not installed",
                "each library's default threads" if threads is None
                else "%d thread(s) for BLAS, PyTorch and XLA" % threads,
                results["settings"]["repeat"]), ""]
    for w in results["workloads"]:
        lines.append("**%s** — %s" % (w["name"], w.get("title", "")))
        lines.append("")
        lines.append("| path | median | vs hand-written | peak memory | notes |")
        lines.append("|---|---|---|---|---|")
        for r in w["rows"]:
            cells = _row_cells(r)
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        lines.append("")
    lines.append("| goal | measured | target | source | |")
    lines.append("|---|---|---|---|---|")
    for w in results["workloads"]:
        for t in w["targets"]:
            lines.append("| %s: %s | %s | %s %g | %s | %s |" % (
                t["workload"], t["what"], "n/a" if t["value"] is None else "%.3g" % t["value"],
                t["op"], t["bound"], t["source"],
                {True: "met", False: "**not met**", None: "not measured"}[t["met"]]))
    return "\n".join(lines)


# ---------------------------------------------------------------- running
def run_workload(name, settings, verbose=True):
    module = importlib.import_module("benchmarks.workloads." + name)
    bench = harness.Bench(name, settings, log=harness.log_to_stderr if verbose else None)
    t0 = time.perf_counter()
    error = None
    skipped = None
    try:
        module.run(bench)
    except harness.WorkloadSkipped as exc:
        skipped = str(exc)
        bench.note("workload skipped: %s" % exc)
    except Exception as exc:   # noqa: BLE001  (report, and go on with the next workload)
        error = "%s: %s" % (type(exc).__name__, exc)
        bench.note("workload stopped early:\n" + traceback.format_exc())
    result = bench.finish()
    result["title"] = module.TITLE
    result["checked_against"] = bench.checked_against or next(
        (r["path"] for r in result["rows"] if r["kind"] == "reference"), None)
    result["error"] = error
    result["skipped"] = skipped
    result["seconds"] = time.perf_counter() - t0
    return result


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="few repeats, short budgets")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="workloads to run (comma or space separated): " + ", ".join(WORKLOADS))
    parser.add_argument("--json", metavar="PATH", default=DEFAULT_JSON,
                        help="write every number here (default: benchmarks/results.json); "
                             "'-' for none")
    parser.add_argument("--repeat", type=int, help="timed repeats per path (default 7, quick 3)")
    parser.add_argument("--threads", type=int, metavar="N",
                        help="run BLAS, PyTorch and XLA on N threads (default: each library's "
                             "own choice); --threads 1 steadies the numbers on a loaded machine")
    parser.add_argument("--without", nargs="+", metavar="LIB", choices=OPTIONAL_LIBRARIES,
                        default=[], help="treat these libraries as absent: "
                        + ", ".join(OPTIONAL_LIBRARIES))
    parser.add_argument("--small", action="store_true",
                        help="tiny problem sizes (for the smoke test; the numbers mean nothing)")
    parser.add_argument("--markdown", action="store_true", help="also print Markdown tables")
    parser.add_argument("--from-json", metavar="PATH",
                        help="print the tables of an earlier run's JSON file; run nothing")
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
    if args.only:
        names = [ALIASES.get(n, n) for item in args.only for n in item.split(",") if n]
        unknown = sorted(set(names) - set(WORKLOADS))
        if unknown:
            parser.error("unknown workload(s) %s; choose from %s"
                         % (", ".join(unknown), ", ".join(WORKLOADS)))
        args.only = [n for n in WORKLOADS if n in names]
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.list:
        for name in WORKLOADS:
            module = importlib.import_module("benchmarks.workloads." + name)
            print("%-10s %s" % (name, module.TITLE))
        return 0
    if args.from_json:
        with open(args.from_json) as f:
            results = json.load(f)
        for w in results["workloads"]:
            print_workload(w, w.get("title", ""))
        if args.markdown:
            print("\n" + markdown(results))
        return 0

    settings = harness.Settings(quick=args.quick, repeat=args.repeat, small=args.small,
                                threads=args.threads)
    harness.limit_threads(args.threads)   # before torch or jax is imported
    harness.disable(*args.without)
    info = machine_info()   # imports every library timed
    # Everything imported so far (JAX's and PyTorch's large object graphs)
    # goes to the permanent generation: a gc.collect() then costs
    # milliseconds, not a third of a second, and the collector's pauses
    # during timing are about the objects the paths themselves create.
    was_frozen = gc.get_freeze_count()
    gc.collect()
    gc.freeze()
    try:
        return _run(args, settings, info)
    finally:
        if not was_frozen:      # run in-process (the smoke test): leave the collector as it was
            gc.unfreeze()       # (a heap frozen before stays frozen: a full scan would cost seconds)


def _run(args, settings, info):
    print("srcgrad benchmarks: %s, %s cores (%s usable), load %s" % (
        info["cpu"], info["cores"], info["usable_cores"],
        " ".join("%.2f" % x for x in info["load_average"]) if info["load_average"] else "?"))
    print("Python %s, NumPy %s, srcgrad %s%s, autograd %s, JAX %s, PyTorch %s, SciPy %s" % (
        info["python"], info["numpy"], info["srcgrad"],
        " (%s)" % info["srcgrad_commit"] if info["srcgrad_commit"] else "",
        info["autograd"] or "not installed", info["jax"] or "not installed",
        info["torch"] or "not installed", info["scipy"] or "not installed"))
    print("threads: %s" % ("each library's default" if args.threads is None
                           else "%d (BLAS, PyTorch, XLA)" % args.threads))
    print("float64 throughout; median of %d repeats (loops of >= %g s), after %d warm-up calls; "
          "ratios to the hand-written NumPy derivative"
          % (settings.repeat, settings.min_time, settings.warmup))

    started = time.perf_counter()
    results = {"machine": info, "settings": settings.as_dict(), "argv": sys.argv[1:],
               "workloads": []}
    for name in args.only or WORKLOADS:
        if not args.quiet:
            harness.log_to_stderr("[%s]" % name)
        result = run_workload(name, settings, verbose=not args.quiet)
        results["workloads"].append(result)
        print_workload(result, result["title"])
        sys.stdout.flush()
    results["seconds"] = time.perf_counter() - started
    results["machine"]["load_average_end"] = (list(os.getloadavg())
                                              if hasattr(os, "getloadavg") else None)

    targets = [t for w in results["workloads"] for t in w["targets"]]
    if targets:
        print("\n== goals (issues 9, 10, 18 and 19)")
        for t in targets:
            print("   " + _target_line(t))
    bad = [(w["name"], r["path"], r["status"], r["error"]) for w in results["workloads"]
           for r in w["rows"] if r["status"] in (harness.WRONG, harness.FAILED)]
    bad += [(w["name"], "(workload)", "FAILED", w["error"]) for w in results["workloads"]
            if w["error"]]
    if bad:
        print("\n== paths that failed or disagree with the hand-written derivative")
        for workload, path, status, error in bad:
            print("   %s / %s: %s %s" % (workload, path, status, error))
    print("\ntotal %.1f s" % results["seconds"])
    if args.markdown:
        print("\n" + markdown(results))
    if args.json and args.json != "-":
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, default=float)
            f.write("\n")
        print("numbers written to %s" % os.path.relpath(args.json))
    return 0


if __name__ == "__main__":
    sys.exit(main())
