"""`python -m benchmarks.compat --autograd-src PATH`: run autograd's example
programs and test suite through srcgrad, side by side with autograd, and
write the report to benchmarks/compat/results/ (compat.md, compat.json).

    python -m benchmarks.compat --autograd-src /tmp/autograd-src
    python -m benchmarks.compat --autograd-src ... --only examples          # or: tests
    python -m benchmarks.compat --autograd-src ... --examples gmm tanh      # some programs
    python -m benchmarks.compat --autograd-src ... --test-files test_core.py test_scipy.py
    python -m benchmarks.compat --from-json benchmarks/compat/results/compat.json   # re-render compat.md

See benchmarks/compat/README.md for what is measured and every liberty taken.
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

from . import examples, report, suite

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")


def _versions(autograd_src):
    out = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count()}
    try:
        import numpy
        import scipy
        out["numpy"], out["scipy"] = numpy.__version__, scipy.__version__
    except ImportError:
        pass
    try:
        import autograd
        out["autograd (installed)"] = getattr(autograd, "__version__", "?")
    except ImportError:
        out["autograd (installed)"] = "missing"
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=examples.ROOT, capture_output=True,
                             text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "srcgrad"], cwd=examples.ROOT,
                               capture_output=True, text=True).stdout.strip()
        out["srcgrad"] = rev + (" (srcgrad/ modified)" if dirty else "")
    except OSError:
        pass
    pyproject = os.path.join(autograd_src, "pyproject.toml") if autograd_src else ""
    if pyproject and os.path.exists(pyproject):
        for line in open(pyproject):
            if line.startswith("version"):
                out["autograd checkout"] = line.split("=", 1)[1].strip().strip('"')
                break
    rev_file = os.path.join(autograd_src or "", ".compat-revision")
    if os.path.exists(rev_file):
        out["autograd checkout"] = "%s (%s)" % (out.get("autograd checkout", "?"), open(rev_file).read().strip())
    return out


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.compat", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--autograd-src", help="a checkout of github.com/HIPS/autograd (its examples/ and tests/)")
    p.add_argument("--only", choices=["examples", "tests"])
    p.add_argument("--examples", nargs="*", help="example names (default: all)")
    p.add_argument("--test-files", nargs="*", help="test files (default: all tests/test_*.py)")
    p.add_argument("--keep", type=int, default=3, help="gradient calls compared per gradient function (3)")
    p.add_argument("--example-time-limit", type=float, default=None,
                   help="seconds per run of an example (default %gs)" % examples.DEFAULT_TIME_LIMIT)
    p.add_argument("--per-test", type=float, default=60.0, help="seconds per test (60)")
    p.add_argument("--work", help="scratch directory (default: a new temporary one)")
    p.add_argument("--out", default=RESULTS, help="where compat.md and compat.json go")
    p.add_argument("--from-json", help="re-render the Markdown report from a JSON report, run nothing")
    args = p.parse_args(argv)

    if args.from_json:
        data = json.load(open(args.from_json))
        path = os.path.join(os.path.dirname(os.path.abspath(args.from_json)), "compat.md")
        with open(path, "w") as f:
            f.write(report.markdown(data))
        print("wrote", path)
        return 0
    if not args.autograd_src:
        p.error("--autograd-src is required (a checkout of github.com/HIPS/autograd)")
    src = os.path.abspath(args.autograd_src)
    work = args.work or tempfile.mkdtemp(prefix="srcgrad-compat-")
    os.makedirs(work, exist_ok=True)
    print("autograd checkout: %s\nscratch: %s" % (src, work))
    data = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "versions": _versions(src),
            "command": "python -m benchmarks.compat " + " ".join(argv if argv is not None else sys.argv[1:]),
            "settings": {"keep": args.keep, "per_test_seconds": args.per_test,
                         "example_seconds": args.example_time_limit or examples.DEFAULT_TIME_LIMIT}}
    start = time.time()
    if args.only != "tests":
        print("examples (autograd run, then srcgrad run, each):")
        t0 = time.time()
        data["examples"] = examples.run_examples(src, work, args.examples, keep=args.keep,
                                                 time_limit=args.example_time_limit)
        data["examples_seconds"] = round(time.time() - t0)
        data["example_config"] = {name: {k: v for k, v in cfg.items()} for name, cfg in examples.EXAMPLES.items()}
    if args.only != "examples":
        print("test suite (autograd baseline, then srcgrad, per file):")
        t0 = time.time()
        per_file, tests = suite.run_suite(src, work, args.test_files, per_test=args.per_test)
        data["test_files"] = per_file
        data["tests"] = tests
        data["tests_seconds"] = round(time.time() - t0)
    data["total_seconds"] = round(time.time() - start)
    print("reproducers:")
    data["causes"] = report.causes(data)
    data["reproducers"] = report.run_reproducers()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "compat.json"), "w") as f:
        json.dump(data, f, indent=1, default=str)
    with open(os.path.join(args.out, "compat.md"), "w") as f:
        f.write(report.markdown(data))
    print(report.summary(data))
    print("wrote %s and %s (%.0f s)" % (os.path.join(args.out, "compat.md"), os.path.join(args.out, "compat.json"),
                                        time.time() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
