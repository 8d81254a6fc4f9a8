"""autograd's own test suite (its tests/test_*.py), run through srcgrad:
the files rewritten by rewrite.py (autograd.numpy -> numpy, `grad` ->
sg.grad, `check_grads` -> the shim's, which checks srcgrad's derivatives
against finite differences), each test run by pytest in a child process
(testrun.py), and the same files run unchanged with autograd as the
baseline (a test that fails or is skipped with autograd is not counted).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

from .examples import HERE, ROOT, SRCGRAD_DIR
from .rewrite import rewrite_source

#: tests that exercise autograd's own machinery rather than differentiation
#: (counted apart: "n/a"); nodeid (file::function) -> why
NOT_APPLICABLE = {
    **{"test_vspaces.py::" + t: "autograd's vector-space objects (autograd.core.vspace), not differentiation"
       for t in ("test_array_vspace", "test_array_vspace_0_dim", "test_array_vspace_complex", "test_list_vspace",
                 "test_tuple_vspace", "test_dict_vspace", "test_mixed_vspace")},
    "test_misc.py::test_const_graph": "autograd.misc.const_graph caches autograd's trace of a function",
    "test_misc.py::test_const_graph_args": "autograd.misc.const_graph caches autograd's trace of a function",
    "test_logic.py::test_unimplemented_falseyness": "removes a rule from autograd's registry "
                                                    "(autograd.core.primitive_vjps)",
    "test_wrappers.py::test_wrapped_name_and_docs": "the names and docstrings autograd gives the functions "
                                                   "its transforms return",
    "test_wrappers.py::test_custom_where": "autograd.numpy.where's own wrapper (keyword arguments), no derivative",
    "test_wrappers.py::test_custom_where_dtypes": "autograd.numpy.where's own wrapper (dtype of scalar results), "
                                                  "no derivative",
}

#: grouping of failures by cause: message text that varies between instances
_NORMALIZE = [
    (re.compile(r"<compat-generated-\d+>"), "<generated>"),
    (re.compile(r"<srcgrad-generated[^>]*>"), "<srcgrad-generated>"),
    (re.compile(r"0x[0-9a-fA-F]+"), "0x…"),
    (re.compile(r"(?<![\w.])[-+]?\d+(\.\d+)?(e[-+]?\d+)?j?(?![\w])"), "N"),
    (re.compile(r"\s+"), " "),
]


def normalize(message):
    first = (message or "").strip().splitlines()[0] if (message or "").strip() else ""
    first = first.split("  at ")[0]
    for pattern, repl in _NORMALIZE:
        first = pattern.sub(repl, first)
    return first.strip()[:220]


def stage(autograd_src, work):
    src = os.path.join(autograd_src, "tests")
    if not os.path.isdir(src):
        raise SystemExit("no tests/ under %s" % autograd_src)
    dirs = {}
    for kind in ("autograd", "srcgrad"):
        dst = os.path.join(work, "tests_" + kind)
        if os.path.exists(dst):
            shutil.rmtree(dst)
        shutil.copytree(src, dst)
        with open(os.path.join(dst, "pytest.ini"), "w") as f:
            f.write("[pytest]\n")
        dirs[kind] = dst
    for fname in os.listdir(dirs["srcgrad"]):
        if fname.endswith(".py"):
            path = os.path.join(dirs["srcgrad"], fname)
            text = open(path).read()
            new, _ = rewrite_source(text, fname)
            with open(path, "w") as f:
                f.write(new)
    files = sorted(f for f in os.listdir(src) if f.startswith("test_") and f.endswith(".py"))
    return dirs, files


def run_file(directory, fname, out, per_test, file_limit, log=print):
    """Run one test file; relaunch after a crash or the file's time limit,
    without the tests already done (the test that was running is marked)."""
    if os.path.exists(out):
        os.remove(out)
    results, done = {}, []
    na = ["%s=%s" % (k, v) for k, v in NOT_APPLICABLE.items() if k.startswith(fname + "::")]
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["MPLBACKEND"] = "Agg"
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    for attempt in range(20):
        cmd = [sys.executable, "-m", "benchmarks.compat.testrun", "--dir", directory, "--file", fname,
               "--out", out, "--per-test", str(per_test), "--na", *na, "--deselect", *done]
        start = time.time()
        status = "ok"
        try:
            subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=file_limit)
        except subprocess.TimeoutExpired:
            status = "file time limit"
        started = None
        for line in open(out) if os.path.exists(out) else []:
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if obj["event"] == "collect-error":
                COLLECT_ERRORS[os.path.join(directory, fname)] = obj["message"]
                continue
            if obj["event"] == "start":
                started = obj["nodeid"]
            else:
                results[obj["nodeid"]] = obj
                if started == obj["nodeid"]:
                    started = None
        if started is None:
            break
        results[started] = {"nodeid": started, "outcome": "failed", "exc_type": "ProcessDied" if status == "ok"
                            else "FileTimeLimit", "message": "the test process %s during this test" % (
                                "died" if status == "ok" else "reached the file's time limit (%ss)" % file_limit),
                            "frames": [], "seconds": round(time.time() - start, 1)}
        done = list(results)
        log("    %s: relaunching after %s in %s" % (fname, results[started]["exc_type"], started))
    return results


#: staged test file -> pytest's report of an error while collecting it
COLLECT_ERRORS = {}

#: the staged test directories (set by run_suite): a failure's location is its innermost line there
TEST_DIRS = []


def _in_srcgrad(filename):
    return filename.startswith(SRCGRAD_DIR + os.sep) or filename.startswith("<srcgrad-generated")


def _in_shim(filename):
    return filename.startswith(HERE + os.sep) or filename.startswith("<compat-generated")


def cause_of(info, check=None):
    """(category, cause key, location) of one failure (a test's exception or a
    failed sub-check of check_grads)."""
    exc = info.get("exc_type", "?")
    msg = info.get("message", "")
    frames = info.get("frames") or []
    inner = frames[-1] if frames else None
    where = ""
    for f in reversed(frames):
        if TEST_DIRS and any(f[0].startswith(d + os.sep) for d in TEST_DIRS):
            where = "%s:%s: %s" % (os.path.basename(f[0]), f[1], (f[3] or "").strip())
            break
    sub = (" [%s]" % check) if check else ""
    if exc in ("TestTimeLimit", "FileTimeLimit"):
        return "timeout", "time limit", where
    if exc == "ProcessDied":
        return "crash", "process died", where
    if exc == "AssertionError" and inner and _in_shim(inner[0]) and inner[2] == "check_equivalent":
        return "different result", "check_equivalent: srcgrad's result differs from the test's expected value " \
            "(%s)" % ("structure/shape/dtype" if "VSpace mismatch" in msg else "value"), where
    if exc == "AssertionError" and inner and _in_shim(inner[0]):
        kind = "VJP" if "(VJP)" in msg or "VJP of" in msg else "JVP" if "(JVP)" in msg or "JVP of" in msg else ""
        what = "wrong shape/type" if "VSpace mismatch" in msg else "wrong value"
        path = check or ""
        return "wrong", "derivative check failed: %s %s%s" % (kind, what, " at order 2 (%s)" % path
                                                                if ">" in path else ""), where
    if info.get("srcgrad_error"):
        return "refused", "%s: %s" % (exc, normalize(msg)), where
    if inner and _in_srcgrad(inner[0]):
        deliberate = (inner[3] or "").lstrip().startswith("raise") and exc in (
            "TypeError", "ValueError", "NotImplementedError")
        return ("refused" if deliberate else "crash"), "%s: %s%s" % (exc, normalize(msg), "" if deliberate else
                                                                      " (inside srcgrad)"), where
    if any(_in_srcgrad(f[0]) for f in frames):
        return "crash", "%s: %s (raised in code srcgrad called)" % (exc, normalize(msg)), where
    if exc == "Failed" and "DID NOT RAISE" in msg:
        return "different behaviour", "expected error not raised: %s" % normalize(msg), where
    if inner and _in_shim(inner[0]):
        return "harness", "%s: %s (in the compat shim)" % (exc, normalize(msg)), where
    if exc == "AssertionError":
        return "assertion", "assertion in the test failed%s" % (": " + normalize(msg) if msg.strip() else ""), where
    return "error", "%s: %s%s" % (exc, normalize(msg), sub), where


def run_suite(autograd_src, work, files=None, per_test=60.0, file_limit=1800.0, log=print):
    dirs, all_files = stage(autograd_src, work)
    TEST_DIRS[:] = list(dirs.values())
    files = files or all_files
    out_dir = os.path.join(work, "test_results")
    os.makedirs(out_dir, exist_ok=True)
    per_file = []
    tests = []
    for fname in files:
        t0 = time.time()
        base = run_file(dirs["autograd"], fname, os.path.join(out_dir, fname + ".autograd.jsonl"),
                        per_test, file_limit, log)
        t1 = time.time()
        mine = run_file(dirs["srcgrad"], fname, os.path.join(out_dir, fname + ".srcgrad.jsonl"),
                        per_test, file_limit, log)
        t2 = time.time()
        counts = {"file": fname, "collected": 0, "applicable": 0, "passed": 0, "failed": 0, "na": 0,
                  "autograd_skipped_or_failed": 0, "autograd_seconds": round(t1 - t0, 1),
                  "srcgrad_seconds": round(t2 - t1, 1)}
        for nodeid in sorted(set(base) | set(mine)):
            b = base.get(nodeid, {"outcome": "missing"})
            m = mine.get(nodeid, {"outcome": "missing", "exc_type": "NotCollected",
                                  "message": "not collected in the srcgrad run: %s" % (COLLECT_ERRORS.get(
                                      os.path.join(dirs["srcgrad"], fname), "?").strip().splitlines() or ["?"])[-1]})
            counts["collected"] += 1
            entry = {"nodeid": nodeid, "file": fname, "autograd": b["outcome"], "srcgrad": m["outcome"],
                     "seconds": m.get("seconds")}
            reason = NOT_APPLICABLE.get(nodeid.split("[")[0])
            if reason:
                counts["na"] += 1
                entry["status"] = "n/a"
                entry["reason"] = reason
            elif b["outcome"] != "passed":
                counts["autograd_skipped_or_failed"] += 1
                entry["status"] = "n/a"
                entry["reason"] = "%s with autograd%s" % (b["outcome"], (": " + str(b.get("reason", "")
                                                                                or b.get("message", ""))[:150]))
            else:
                counts["applicable"] += 1
                if m["outcome"] == "passed":
                    counts["passed"] += 1
                    entry["status"] = "pass"
                else:
                    counts["failed"] += 1
                    entry["status"] = "fail"
                    causes = []
                    if m["outcome"] == "skipped":
                        causes.append(("error", "skipped in the srcgrad run: %s" % normalize(
                            str(m.get("reason", ""))), ""))
                    subs = m.get("subchecks") or []
                    for s in subs:
                        causes.append(cause_of(s, s.get("check")))
                    if m["outcome"] == "failed" and not (subs and m.get("message") == subs[0].get("message")):
                        causes.insert(0, cause_of(m))
                    if not causes:
                        causes.append(("error", "%s: %s" % (m.get("exc_type", "?"), normalize(m.get("message"))),
                                       ""))
                    entry["causes"] = [list(c) for c in causes]
                    entry["message"] = (m.get("message") or "")[:500]
                    entry["exc_type"] = m.get("exc_type")
            tests.append(entry)
        per_file.append(counts)
        log("  %-24s %3d/%-3d passed  (n/a %d, autograd skip/fail %d)  %4.0fs + %4.0fs" % (
            fname, counts["passed"], counts["applicable"], counts["na"], counts["autograd_skipped_or_failed"],
            t1 - t0, t2 - t1))
    return per_file, tests
