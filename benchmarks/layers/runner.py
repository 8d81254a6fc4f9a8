"""The child process: runs one repository's cases and writes their rows as
JSON (after every case, so a process that dies leaves what it finished).

    python -m benchmarks.layers.runner --repo numpy-ml --checkout /tmp/layers-src/numpy-ml --out rows.json
"""
import argparse
import json
import os
import sys
import time
import warnings

from . import cases as cases_mod
from .check import run_case
from .repos import Modules, apply_shims


def run_repository(repo, checkout, names=None, time_limit=None, progress=None):
    """Rows for the repository's cases (all, or those in `names`), in this process."""
    apply_shims(repo)
    mods = Modules(repo, checkout)
    rows = []
    for case in repo.cases:
        if names and case.name not in names:
            continue
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # import-time warnings of the repository (missing gym, ...)
            try:
                for alias in repo.modules:      # import errors are the reference's
                    mods[alias]
            except Exception as e:
                row = {"repo": repo.key, "case": case.name, "title": case.title, "via": case.via,
                       "group": case.group, "status": "reference-error", "stage": "import",
                       "error_class": type(e).__name__, "message": str(e).splitlines()[0] if str(e) else "",
                       "notes": []}
            else:
                row = None
        if row is None:
            row = run_case(case, mods, time_limit=time_limit, roots=[checkout])
        row["seconds"] = round(time.perf_counter() - t0, 3)
        rows.append(row)
        if progress:
            progress(row)
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.layers.runner")
    p.add_argument("--repo", required=True, choices=sorted(cases_mod.REPOSITORIES))
    p.add_argument("--checkout", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--cases", nargs="*")
    p.add_argument("--time-limit", type=float, default=120.0)
    args = p.parse_args(argv)
    repo = cases_mod.REPOSITORIES[args.repo]
    rows = []

    def progress(row):
        rows.append(row)
        with open(args.out + ".tmp", "w") as f:
            json.dump(rows, f, default=str)
        os.replace(args.out + ".tmp", args.out)
        print("  %-22s %-16s %s" % (row["case"], row["status"], row.get("message", "") or ""), flush=True)

    run_repository(repo, os.path.abspath(args.checkout), args.cases, args.time_limit, progress)
    if not rows:
        with open(args.out, "w") as f:
            json.dump([], f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
