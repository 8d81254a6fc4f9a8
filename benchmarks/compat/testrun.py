"""Child process: run one file of autograd's test suite with pytest (the
original, or the copy rewritten for srcgrad), writing one JSON line per
test (benchmarks/compat/suite.py starts it and reads the lines).

    python -m benchmarks.compat.testrun --dir STAGED_TESTS --file test_x.py --out RESULTS.jsonl
        [--per-test S] [--deselect NODEID ...] [--na NODEID=REASON ...]
"""
import argparse
import json
import linecache
import os
import signal
import sys
import time
import traceback

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class TestTimeLimit(BaseException):
    pass


def exception_info(exc):
    frames = []
    for fs in traceback.extract_tb(exc.__traceback__):
        line = fs.line or linecache.getline(fs.filename, fs.lineno).strip()
        frames.append([fs.filename, fs.lineno, fs.name, line])
    try:
        from srcgrad.errors import SrcgradError
        srcgrad_error = isinstance(exc, SrcgradError)
    except ImportError:
        srcgrad_error = False
    return {"exc_type": type(exc).__name__, "message": str(exc)[:2000], "frames": frames[-40:],
            "srcgrad_error": srcgrad_error}


class Plugin:
    def __init__(self, out, per_test, na):
        self.out = out
        self.per_test = per_test
        self.na = na

    def pytest_collection_modifyitems(self, items):
        for item in items:
            reason = self.na.get(item.nodeid) or self.na.get(item.nodeid.split("[")[0])
            if reason:
                item.add_marker(pytest.mark.skip(reason="n/a: " + reason))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self._write({"event": "start", "nodeid": item.nodeid})
        self.current = {"nodeid": item.nodeid, "outcome": "passed", "seconds": 0.0}
        self.start = time.time()
        yield
        self.current["seconds"] = round(time.time() - self.start, 3)
        self.current["event"] = "end"
        self._write(self.current)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        try:
            from benchmarks.compat import shim
            shim.CHECK_FAILURES.clear()
        except ImportError:
            shim = None

        def on_alarm(signum, frame):
            raise TestTimeLimit("test time limit of %gs reached" % self.per_test)
        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, self.per_test)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            if shim is not None and shim.CHECK_FAILURES:
                self.current["subchecks"] = [dict(exception_info(e), check=kind, function=name)
                                             for kind, name, e in shim.CHECK_FAILURES]
                shim.CHECK_FAILURES.clear()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        rep = outcome.get_result()
        if rep.skipped and call.when in ("setup", "call"):
            self.current["outcome"] = "skipped"
            longrepr = rep.longrepr
            self.current["reason"] = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)[:300]
        elif rep.failed:
            if self.current["outcome"] != "failed":
                self.current["outcome"] = "failed"
                self.current["when"] = call.when
                if call.excinfo is not None:
                    self.current.update(exception_info(call.excinfo.value))
                    self.current["excinfo_type"] = call.excinfo.typename

    def pytest_collectreport(self, report):
        if report.failed:
            self._write({"event": "collect-error", "nodeid": report.nodeid,
                         "message": str(report.longrepr)[-3000:]})

    def _write(self, obj):
        with open(self.out, "a") as f:
            f.write(json.dumps(obj, default=str) + "\n")


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    p.add_argument("--file", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--per-test", type=float, default=60.0)
    p.add_argument("--deselect", nargs="*", default=[])
    p.add_argument("--na", nargs="*", default=[])
    args = p.parse_args(argv)
    na = dict(item.split("=", 1) for item in args.na)
    sys.path[:0] = [args.dir, ROOT]
    os.chdir(args.dir)
    import matplotlib
    matplotlib.use("Agg")
    pytest_args = [args.file, "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:xdist",
                   "-p", "no:cov", "--rootdir", args.dir, "-c", os.path.join(args.dir, "pytest.ini"),
                   "-W", "ignore::DeprecationWarning", "--tb=no", "--no-header"]
    for d in args.deselect:
        pytest_args += ["--deselect", d]
    pytest.main(pytest_args, plugins=[Plugin(args.out, args.per_test, na)])
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
