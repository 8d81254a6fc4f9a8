"""The report: failure causes grouped across examples and tests, the
reproducers run, the Markdown (results/compat.md) and a console summary."""
import os
import re
import subprocess
import sys
import tempfile

from . import examples as examples_mod
from .reproducers import REPRODUCERS
from .suite import normalize

ROOT = examples_mod.ROOT
BAD = ("wrong", "refused", "crash", "timeout", "diverged", "harness-error")


def example_cause(row):
    st = row.get("status")
    if st == "wrong":
        return "wrong", "different gradient from autograd (silently)"
    if st in ("refused", "crash", "harness-error"):
        ec = row.get("error_class", "?").split(" ")[0]
        category = {"refused": "refused", "crash": "crash", "harness-error": "harness"}[st]
        suffix = " (in the program, on srcgrad's result)" if "in the program" in row.get("error_class", "") else ""
        return category, "%s: %s%s" % (ec, normalize(row.get("message", "")), suffix)
    if st == "timeout":
        return "timeout", "time limit"
    if st == "diverged":
        return "diverged", "no comparable gradient call"
    return None


def _reproducer_for(key):
    for rep in REPRODUCERS:
        if any(re.search(m, key) for m in rep["match"]):
            return rep["id"]
    return None


def causes(data):
    table = {}

    def entry(category, key):
        e = table.get(key)
        if e is None:
            e = table[key] = {"key": key, "category": category, "examples": [], "tests_first": 0, "tests_any": 0,
                              "tests_only": 0, "some_tests": [], "where": "", "reproducer": _reproducer_for(key)}
        return e

    for row in data.get("examples", []):
        c = example_cause(row)
        if c is None or row.get("status") == "skip":
            continue
        e = entry(*c)
        e["examples"].append(row["example"])
        if not e["where"] and row.get("user_line"):
            e["where"] = row["user_line"]
    for t in data.get("tests", []):
        if t.get("status") != "fail":
            continue
        cs = t.get("causes") or []
        keys = []
        for category, key, where in cs:
            e = entry(category, key)
            if key not in keys:
                keys.append(key)
                e["tests_any"] += 1
                if len(e["some_tests"]) < 6:
                    e["some_tests"].append(t["nodeid"])
                if not e["where"] and where:
                    e["where"] = where
        if keys:
            table[keys[0]]["tests_first"] += 1
            if len(keys) == 1:
                table[keys[0]]["tests_only"] += 1
    rows = list(table.values())
    rows.sort(key=lambda e: (-(len(e["examples"]) + e["tests_first"]), -e["tests_any"], e["key"]))
    return rows


def run_reproducers(timeout=120):
    """Run each reproducer in a fresh interpreter: 'fails' (raises: the cause is
    still there) or 'passes' (it asserts srcgrad's correct answer: fixed)."""
    out = []
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    tmp = tempfile.mkdtemp(prefix="compat-reproducers-")
    for rep in REPRODUCERS:
        path = os.path.join(tmp, rep["id"].replace("-", "_") + ".py")
        with open(path, "w") as f:          # (a file: srcgrad reads the source of what it differentiates)
            f.write(rep["code"].lstrip())
        try:
            proc = subprocess.run([sys.executable, path], cwd=ROOT, env=env, capture_output=True,
                                  text=True, timeout=timeout)
            if proc.returncode == 0:
                result = {"id": rep["id"], "outcome": "passes (fixed?)", "detail": ""}
            else:
                lines = [l for l in proc.stderr.strip().splitlines() if l.strip()]
                result = {"id": rep["id"], "outcome": "fails", "detail": lines[-1][:300] if lines else ""}
        except subprocess.TimeoutExpired:
            result = {"id": rep["id"], "outcome": "fails", "detail": "timed out after %ss" % timeout}
        out.append(result)
        print("  %-28s %s  %s" % (rep["id"], result["outcome"], result["detail"][:100]))
    return out


# ----------------------------------------------------------------- counting
def counts(data):
    c = {}
    rows = data.get("examples", [])
    top = [r for r in rows if r["example"] in examples_mod.TOP27]
    extra = [r for r in rows if "/" in r["example"]]
    c["examples_top"] = (sum(r["status"] == "agree" for r in top), len(examples_mod.TOP27), len(top))
    c["examples_extra"] = (sum(r["status"] == "agree" for r in extra), len(extra))
    c["example_status"] = {}
    for r in rows:
        c["example_status"][r["status"]] = c["example_status"].get(r["status"], 0) + 1
    tests = data.get("tests", [])
    app = [t for t in tests if t.get("status") in ("pass", "fail")]
    c["tests"] = (sum(t["status"] == "pass" for t in app), len(app), len(tests))
    sc = [t for t in app if t["file"] == "test_scipy.py"]
    c["scipy"] = (sum(t["status"] == "pass" for t in sc), len(sc))
    c["na"] = sum(t.get("status") == "n/a" for t in tests)
    return c


def _pct(a, b):
    return "%.1f %%" % (100.0 * a / b) if b else "-"


def summary(data):
    c = counts(data)
    lines = []
    if "examples" in data:
        lines.append("examples: %d/%d of autograd's 27 programs agree (fluidsim: %d/%d); statuses: %s" % (
            c["examples_top"][0], c["examples_top"][1], c["examples_extra"][0], c["examples_extra"][1],
            ", ".join("%s %d" % kv for kv in sorted(c["example_status"].items()))))
    if "tests" in data:
        lines.append("tests: %d/%d passed (%s) of the tests that pass with autograd; %d collected, %d n/a; "
                     "scipy: %d/%d" % (c["tests"][0], c["tests"][1], _pct(c["tests"][0], c["tests"][1]),
                                       c["tests"][2], c["tests"][2] - c["tests"][1], c["scipy"][0], c["scipy"][1]))
    return "\n".join(lines)


# ----------------------------------------------------------------- Markdown
def _cell(text, n=None):
    text = (text or "").replace("|", "\\|").replace("\n", " ")
    text = re.sub(r"\s+", " ", text).strip()
    if n and len(text) > n:
        text = text[:n - 1] + "…"
    return text


def markdown(data):
    c = counts(data)
    out = ["# srcgrad on autograd's own programs and tests", ""]
    out.append("Generated by `%s` (%s); %s." % (data.get("command", "python -m benchmarks.compat"), data.get("date"),
                                               ", ".join("%s %s" % kv for kv in data.get("versions", {}).items())))
    out.append("How it works and every liberty taken: [README.md](../README.md). Full data: "
               "[compat.json](compat.json).")
    out.append("")
    out.append("## Counts")
    out.append("")
    if "examples" in data:
        out.append("- **Examples: %d of autograd's %d example programs agree** (gradients equal to autograd's "
                   "at the same points); fluidsim/: %d of %d. Statuses: %s." % (
                       c["examples_top"][0], c["examples_top"][1], c["examples_extra"][0], c["examples_extra"][1],
                       ", ".join("%s %d" % kv for kv in sorted(c["example_status"].items()))))
    if "tests" in data:
        out.append("- **Test suite: %d of %d tests pass (%s)** — the tests that pass with autograd, run through "
                   "srcgrad; %d collected, %d not counted (n/a: autograd internals, or skipped/failing with "
                   "autograd itself)." % (c["tests"][0], c["tests"][1], _pct(c["tests"][0], c["tests"][1]),
                                          c["tests"][2], c["tests"][2] - c["tests"][1]))
        out.append("- **SciPy tests (test_scipy.py): %d of %d pass (%s).**" % (
            c["scipy"][0], c["scipy"][1], _pct(c["scipy"][0], c["scipy"][1])))
    timing = []
    for k, label in (("examples_seconds", "examples"), ("tests_seconds", "tests"), ("total_seconds", "total")):
        if k in data:
            timing.append("%s %d min %02d s" % (label, data[k] // 60, data[k] % 60))
    if timing:
        out.append("- Run time: %s." % ", ".join(timing))
    out.append("")

    if "examples" in data:
        out.append("## Examples")
        out.append("")
        out.append("Status: `agree` (every compared gradient call equal to autograd's), `wrong` (a gradient "
                   "differs: silently wrong), `refused` (srcgrad raised its own error or a deliberate "
                   "TypeError/ValueError), `crash` (any other exception from srcgrad, its generated code, or the "
                   "program on what srcgrad returned), `timeout`, `skip` (needs something unavailable). "
                   "*Calls*: gradient calls equal / compared (the first %d calls of each gradient function)."
                   % data.get("settings", {}).get("keep", 3))
        out.append("")
        out.append("| example | status | calls | error class | user line | message |")
        out.append("|---|---|---|---|---|---|")
        for r in data["examples"]:
            out.append("| %s | %s | %s | %s | %s | %s |" % (
                r["example"], "**%s**" % r["status"] if r["status"] in BAD else r["status"], r.get("compared", ""),
                _cell(r.get("error_class")), "`%s`" % _cell(r.get("user_line"), 90) if r.get("user_line") else "",
                _cell(r.get("message"), 160)))
        out.append("")

    if "tests" in data:
        out.append("## autograd's test suite, per file")
        out.append("")
        out.append("| file | passed | applicable | n/a | skipped/failing with autograd |")
        out.append("|---|---|---|---|---|")
        for f in data["test_files"]:
            out.append("| %s | %d | %d | %d | %d |" % (f["file"], f["passed"], f["applicable"], f["na"],
                                                      f["autograd_skipped_or_failed"]))
        out.append("")

    cs = data.get("causes") or []
    reps = {r["id"]: r for r in REPRODUCERS}
    ran = {r["id"]: r for r in data.get("reproducers", [])}
    if cs:
        out.append("## Failure causes, by what they block")
        out.append("")
        out.append("One row per cause (error type and normalised message). *Examples*: programs that fail with "
                   "it. *Tests: first*: failing tests where it is the first failure; *any*: where it occurs at "
                   "all (check_grads runs all its sub-checks and records each); *only*: where it is the only "
                   "cause (fixing it alone would make them pass). Reproducers are below.")
        out.append("")
        out.append("| # | category | cause | examples | tests: first | any | only | reproducer | e.g. |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for i, e in enumerate(cs, 1):
            eg = ", ".join(e["examples"]) if e["examples"] else (e["some_tests"][0] if e["some_tests"] else "")
            out.append("| %d | %s | %s | %d | %d | %d | %d | %s | %s |" % (
                i, e["category"], _cell(e["key"], 200), len(e["examples"]), e["tests_first"], e["tests_any"],
                e["tests_only"], "[%s](#%s)" % (e["reproducer"], e["reproducer"]) if e["reproducer"] else "",
                _cell(eg, 80)))
        out.append("")

    if reps:
        out.append("## Reproducers")
        out.append("")
        out.append("Each is plain NumPy through srcgrad's API, asserting the right answer; "
                   "`benchmarks/compat/reproducers.py` holds them and the harness runs each in a fresh "
                   "interpreter (*now*: `fails` while the cause is there).")
        out.append("")
        blocked = {}
        for e in cs:
            if e["reproducer"]:
                b = blocked.setdefault(e["reproducer"], [0, 0, 0, []])
                b[0] += len(e["examples"])
                b[1] += e["tests_first"]
                b[2] += e["tests_any"]
                b[3] += e["examples"]
        order = sorted(REPRODUCERS, key=lambda r: (-(blocked.get(r["id"], [0, 0])[0] + blocked.get(r["id"], [0, 0])[1]),
                                                   -blocked.get(r["id"], [0, 0, 0])[2]))
        for rep in order:
            b = blocked.get(rep["id"], [0, 0, 0, []])
            now = ran.get(rep["id"], {})
            out.append('<a id="%s"></a>' % rep["id"])
            out.append("### %s — %s" % (rep["id"], rep["title"]))
            out.append("")
            out.append("Blocks %d example(s)%s and %d test(s) (first failure; occurs in %d). Now: **%s**%s." % (
                b[0], " (%s)" % ", ".join(b[3]) if b[3] else "", b[1], b[2], now.get("outcome", "not run"),
                (" — `%s`" % _cell(now.get("detail"), 200)) if now.get("detail") else ""))
            if rep.get("note"):
                out.append("")
                out.append(rep["note"])
            out.append("")
            out.append("```python")
            out.append(rep["code"].strip())
            out.append("```")
            out.append("")

    if "examples" in data:
        out.append("## Liberties taken with the examples")
        out.append("")
        out.append("Applied identically to the autograd and the srcgrad run (the text replaced, exactly):")
        out.append("")
        for name, cfg in examples_mod.EXAMPLES.items():
            items = []
            for p in cfg.get("patches", []):
                items.append("`%s` → `%s` (%s)" % (_cell(p[0]).strip(), _cell(p[1]).strip(), p[2]))
            if cfg.get("max_calls"):
                items.append("stopped after %d gradient calls" % cfg["max_calls"])
            if cfg.get("mnist"):
                items.append("synthetic MNIST-shaped data (512 train, 128 test images; no download)")
            if cfg.get("rtol"):
                items.append("rtol %g: %s" % cfg["rtol"])
            if cfg.get("atol"):
                items.append("atol %g: %s" % cfg["atol"])
            if items:
                out.append("- **%s**: %s." % (name, "; ".join(items)))
        out.append("")
    return "\n".join(out) + "\n"
