"""`python -m benchmarks.tangent_corpus --src DIR`: run every function of
Tangent's corpus in every mode (corpus.py, checks.py), write
results/tangent_corpus.json and results/tangent_corpus.md (report.py).
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

from . import checks, corpus, report

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RESULTS = os.path.join(HERE, "results")
KEEP_CASES = 5          # non-agreeing cases kept in full per (function, mode, status)
# per_case: one letter per argument set, in the order corpus.load gives them
CODES = {"agree": "a", "kink": "k", "undefined": "u", "wrong": "w", "nan": "n", "refused": "r",
         "harness-error": "h", "skip": "s"}


def _git(path, *args):
    try:
        return subprocess.run(["git", "-C", path, *args], capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception:
        return ""


def _version(package):
    try:
        from importlib.metadata import version
        return version(package)
    except Exception:
        return None


def function_status(statuses):
    """A function's status in a mode from its cases' statuses."""
    measured = [s for s in statuses if s != "skip"]
    if not measured:
        return "skip"
    w = checks.worst(measured)
    if w in checks.PASSING:
        return "agree" if any(s in ("agree", "kink") for s in measured) else "undefined"
    return w


def run_entry(entry, mode, runner, seed, log):
    """All cases of one function in one mode: its record."""
    counts, kept, autograd_notes, skips, per_case = {}, [], {}, [], []
    extra_counts, extra_kept = {}, []
    t0 = time.time()
    for i, case in enumerate(entry.cases):
        rng = np.random.RandomState(checks.seed_for(seed, entry.name, mode, i))
        try:
            runner.primal(case.args)
        except Exception as exc:
            status, out = "skip", {"skip": "f raises with NumPy: " + checks.refusal(exc)}
        else:
            try:
                out = getattr(runner, mode)(case, rng)
            except Exception as exc:
                out = {"checks": {"harness": ("harness-error", {"message": checks.refusal(exc)})}}
            status = "skip" if "skip" in out else checks.worst([s for s, _ in out["checks"].values()])
        if status == "skip":
            skips.append(out["skip"])
        if out.get("extra"):
            es = checks.worst([s for s, _ in out["extra"].values()])
            extra_counts[es] = extra_counts.get(es, 0) + 1
            if es not in checks.PASSING and sum(1 for k in extra_kept if k["status"] == es) < KEEP_CASES:
                extra_kept.append({"label": case.label, "status": es, "checks": {
                    name: [s, d.get("message", "")] for name, (s, d) in out["extra"].items() if s != "agree"}})
        counts[status] = counts.get(status, 0) + 1
        per_case.append(CODES[status])
        ag = out.get("autograd", "")
        if ag and ag not in ("=", "ran"):
            key = ag if ag.startswith("n/a") else "differs"
            note = autograd_notes.setdefault(key, {"count": 0, "example": None})
            note["count"] += 1
            note["example"] = note["example"] or "%s: %s" % (case.label, ag)
        if status not in ("agree", "skip") and sum(1 for k in kept if k["status"] == status) < KEEP_CASES:
            kept.append({"label": case.label, "status": status,
                         "checks": {name: [s, d.get("message", "")] for name, (s, d) in out["checks"].items()
                                    if s != "agree"}})
    statuses = [s for s, c in counts.items() for _ in range(c)]
    rec = {"status": function_status(statuses), "cases": counts, "per_case": "".join(per_case), "kept": kept,
           "seconds": round(time.time() - t0, 3), "op_by_op": mode in runner.op_by_op}
    if autograd_notes:
        rec["autograd"] = autograd_notes
    if skips:
        rec["skip_reason"] = skips[0]
    if extra_counts:
        rec["extra"] = {"status": function_status([s for s, c in extra_counts.items() for _ in range(c)]),
                        "cases": extra_counts, "kept": extra_kept}
    log("  %-32s %-8s %-10s %s" % (entry.name, mode, rec["status"], " ".join(
        "%s=%d" % kv for kv in sorted(counts.items()))))
    return rec


def run(src, short=False, only=None, modes=corpus.MODES, seed=0, log=print, time_limit=checks.CASE_TIME_LIMIT):
    """Measure the corpus of the checkout at `src`; returns the results (JSON-able dict)."""
    import srcgrad as sg
    try:
        import autograd
        import autograd.numpy  # noqa: F401
    except ImportError:
        autograd = None
    started = time.time()
    data = corpus.load(src, short=short, seed=seed, only=only)
    functions, mode_seconds = [], {m: 0.0 for m in modes}
    for e in data.entries:
        rec = {"name": e.name, "source": e.source, "tests": e.tests, "tf": e.tf, "modes": {}}
        if e.reference is not None:
            rec["reference"] = e.reference[0]
        runner = checks.Runner(e, sg, autograd, time_limit)
        for mode in corpus.MODES:
            if mode not in modes:
                rec["modes"][mode] = {"status": "skip", "skip_reason": "mode not requested"}
            elif mode in e.skip:
                rec["modes"][mode] = {"status": "skip", "skip_reason": e.skip[mode]}
            else:
                rec["modes"][mode] = run_entry(e, mode, runner, seed, log)
                mode_seconds[mode] += rec["modes"][mode]["seconds"]
        functions.append(rec)
    return {
        "command": "python -m benchmarks.tangent_corpus " + " ".join(sys.argv[1:]) if sys.argv[0].endswith(
            "__main__.py") else "benchmarks.tangent_corpus.run.run(%r)" % src,
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "environment": {
            "python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
            "numpy": np.__version__, "autograd": _version("autograd") if autograd else None,
            "srcgrad_commit": _git(ROOT, "rev-parse", "--short", "HEAD"),
            "srcgrad_uncommitted": bool(_git(ROOT, "status", "--porcelain", "--", "srcgrad")),
            "tangent_commit": _git(src, "rev-parse", "HEAD"),
        },
        "per_case_codes": CODES,
        "options": {"short": short, "only": only, "modes": list(modes), "seed": seed},
        "tolerances": {"step": checks.STEP, "rtol1": checks.RTOL1, "atol1": checks.ATOL1, "rtol2": checks.RTOL2,
                       "atol2": checks.ATOL2, "kink_rtol": checks.KINK_RTOL, "kink_atol": checks.KINK_ATOL},
        "notes": data.notes,
        "functions": functions,
        "seconds": {"total": round(time.time() - started, 1), **{m: round(s, 1) for m, s in mode_seconds.items()}},
    }


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.tangent_corpus", description=__doc__)
    ap.add_argument("--src", help="a checkout of google/tangent (its tests/ is read)")
    ap.add_argument("--out", help="output directory (default: results/ for a full run, a temporary "
                    "directory for a partial one)")
    ap.add_argument("--short", action="store_true", help="Tangent's --short values (one per argument)")
    ap.add_argument("--funcs", nargs="+", help="only these functions")
    ap.add_argument("--modes", nargs="+", choices=corpus.MODES, default=list(corpus.MODES))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=int, default=checks.CASE_TIME_LIMIT, help="seconds per case")
    ap.add_argument("--from-json", help="re-render the Markdown of a results JSON (and re-run the reproducers); "
                    "measure nothing")
    ap.add_argument("--no-reproducers", action="store_true", help="do not run reproducers.py's snippets")
    args = ap.parse_args(argv)
    if args.from_json:
        with open(args.from_json) as f:
            results = json.load(f)
        out = args.out or os.path.dirname(os.path.abspath(args.from_json))
        if not args.no_reproducers:
            print("reproducers:")
            results["reproducers"] = report.run_reproducers()
    else:
        if not args.src:
            ap.error("--src DIR is required (a checkout of google/tangent)")
        partial = args.short or args.funcs or set(args.modes) != set(corpus.MODES)
        out = args.out or (tempfile.mkdtemp(prefix="tangent-corpus-") if partial else RESULTS)
        results = run(os.path.abspath(args.src), short=args.short, only=args.funcs, modes=args.modes,
                      seed=args.seed, time_limit=args.time_limit)
        if not args.no_reproducers:
            print("reproducers:")
            results["reproducers"] = report.run_reproducers()
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "tangent_corpus.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    with open(os.path.join(out, "tangent_corpus.md"), "w") as f:
        f.write(report.render(results))
    print(report.summary(results))
    print("written: %s" % os.path.join(out, "tangent_corpus.md"))
    return 0
