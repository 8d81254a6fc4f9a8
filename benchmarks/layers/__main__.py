"""`python -m benchmarks.layers --src DIR`: srcgrad's gradients of the layer
code of public NumPy-from-scratch repositories (two CS231n solution sets,
numpy-ml, ML-From-Scratch), forward passes unchanged, against each
repository's own hand-written backward passes; writes
benchmarks/layers/results/layers.md and layers.json.

DIR holds one checkout per repository, in the directories named in
README.md (`DIR/numpy-ml`, `DIR/ML-From-Scratch`, `DIR/cs231n-mantasu`,
`DIR/cs231n-burton2000`); a checkout may also be given on its own with
`--repo KEY=PATH`.

    python -m benchmarks.layers --src /tmp/layers-src
    python -m benchmarks.layers --src /tmp/layers-src --only numpy-ml --cases Conv2D Pool2D
    python -m benchmarks.layers --from-json benchmarks/layers/results/layers.json   # re-render layers.md
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

from . import report
from .cases import REPOSITORIES
from .repos import SHIM_NOTES, revision

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
ROOT = os.path.dirname(os.path.dirname(HERE))


def _versions():
    out = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count()}
    import numpy
    out["numpy"] = numpy.__version__
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "srcgrad"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
        out["srcgrad"] = rev + (" (srcgrad/ modified)" if dirty else "")
    except OSError:
        pass
    return out


def run_child(repo, checkout, cases, time_limit, repo_time_limit, work):
    """One repository's cases in a child process; rows for cases it did not
    finish (it died or ran out of time) are harness errors."""
    out = os.path.join(work, repo.key + ".json")
    cmd = [sys.executable, "-m", "benchmarks.layers.runner", "--repo", repo.key, "--checkout", checkout,
           "--out", out, "--time-limit", str(time_limit)]
    if cases:
        cmd += ["--cases", *cases]
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    problem = None
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, timeout=repo_time_limit, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            lines = [l for l in proc.stderr.strip().splitlines() if l.strip()]
            problem = "child process exited with %d: %s" % (proc.returncode, lines[-1] if lines else "")
    except subprocess.TimeoutExpired:
        problem = "the repository's cases took more than %g s" % repo_time_limit
    rows = json.load(open(out)) if os.path.exists(out) else []
    done = {r["case"] for r in rows}
    for case in repo.cases:
        if (not cases or case.name in cases) and case.name not in done:
            rows.append({"repo": repo.key, "case": case.name, "title": case.title, "via": case.via,
                         "group": case.group, "status": "harness-error", "error_class": "harness",
                         "message": problem or "not run", "notes": []})
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.layers", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--src", help="directory holding one checkout per repository (see README.md)")
    p.add_argument("--repo", action="append", default=[], metavar="KEY=PATH",
                   help="a repository's checkout elsewhere (repeatable)")
    p.add_argument("--only", nargs="*", choices=sorted(REPOSITORIES), help="these repositories only")
    p.add_argument("--cases", nargs="*", help="these case names only")
    p.add_argument("--time-limit", type=float, default=120.0, help="seconds for srcgrad per case (120)")
    p.add_argument("--repo-time-limit", type=float, default=1800.0, help="seconds per repository (1800)")
    p.add_argument("--out", default=RESULTS, help="where layers.md and layers.json go")
    p.add_argument("--no-reproducers", action="store_true", help="do not run the reproducers")
    p.add_argument("--from-json", help="re-render the Markdown from a JSON report, run nothing")
    args = p.parse_args(argv)

    if args.from_json:
        data = json.load(open(args.from_json))
        path = os.path.join(os.path.dirname(os.path.abspath(args.from_json)), "layers.md")
        with open(path, "w") as f:
            f.write(report.markdown(data))
        print("wrote", path)
        return 0
    overrides = dict(item.split("=", 1) for item in args.repo)
    for key in overrides:
        if key not in REPOSITORIES:
            p.error("unknown repository %r (known: %s)" % (key, ", ".join(sorted(REPOSITORIES))))
    if not args.src and not overrides:
        p.error("--src DIR (or --repo KEY=PATH) is required: see benchmarks/layers/README.md")

    start = time.time()
    work = tempfile.mkdtemp(prefix="srcgrad-layers-")
    data = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "versions": _versions(),
            "command": "python -m benchmarks.layers " + " ".join(argv if argv is not None else sys.argv[1:]),
            "settings": {"time_limit": args.time_limit, "tolerance": 1e-6},
            "checkouts": {}, "rows": [], "seconds": {}, "shims": {}}
    for key, repo in REPOSITORIES.items():
        if args.only and key not in args.only:
            continue
        checkout = overrides.get(key) or os.path.join(args.src or "", repo.dirname)
        checkout = os.path.abspath(checkout)
        present = os.path.isdir(checkout)
        data["checkouts"][key] = {"url": repo.url, "path": checkout, "present": present, "note": repo.note,
                                  "revision": revision(checkout) if present else None}
        data["shims"][key] = [SHIM_NOTES[s] for s in repo.shims]
        if not present:
            print("%s: no checkout at %s (git clone %s %s): skipped" % (key, checkout, repo.url, checkout))
            data["rows"] += [{"repo": key, "case": c.name, "title": c.title, "via": c.via, "group": c.group,
                              "status": "skipped", "message": "no checkout", "notes": []}
                             for c in repo.cases if not args.cases or c.name in args.cases]
            continue
        print("%s (%s):" % (key, checkout), flush=True)
        t0 = time.time()
        data["rows"] += run_child(repo, checkout, args.cases, args.time_limit, args.repo_time_limit, work)
        data["seconds"][key] = round(time.time() - t0, 1)
    data["total_seconds"] = round(time.time() - start, 1)
    if not args.no_reproducers:
        print("reproducers:")
        data["reproducers"] = report.run_reproducers()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "layers.json"), "w") as f:
        json.dump(data, f, indent=1, default=str)
    with open(os.path.join(args.out, "layers.md"), "w") as f:
        f.write(report.markdown(data))
    print(report.summary(data))
    print("wrote %s and %s (%.0f s)" % (os.path.join(args.out, "layers.md"), os.path.join(args.out, "layers.json"),
                                        time.time() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
