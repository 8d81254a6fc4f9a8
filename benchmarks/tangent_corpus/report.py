"""Counts, failure causes and the Markdown report of a run (run.py's results)."""
import os
import re
import subprocess
import sys
import tempfile

from .reproducers import REPRODUCERS

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODES = ("reverse", "forward", "second")
MODE_TITLES = {"reverse": "reverse", "forward": "forward", "second": "grad of grad and Hessian"}
FAILING = ("harness-error", "refused", "wrong", "nan")


def counts(results, mode, view):
    """{selected, tf, skipped, measured, agree, statuses} of one mode. view "tangent": the functions
    Tangent's tests select for the mode; "all": every function of the corpus."""
    c = {"selected": 0, "tf": 0, "skipped": 0, "measured": 0, "agree": 0, "statuses": {}, "cases": {}}
    for fn in results["functions"]:
        if view == "tangent" and not fn["tests"][mode]:
            continue
        m = fn["modes"][mode]
        c["selected"] += 1
        if fn["tf"]:
            c["tf"] += 1
            continue
        if m["status"] == "skip":
            c["skipped"] += 1
            continue
        c["measured"] += 1
        c["agree"] += m["status"] == "agree"
        c["statuses"][m["status"]] = c["statuses"].get(m["status"], 0) + 1
        for s, k in m.get("cases", {}).items():
            c["cases"][s] = c["cases"].get(s, 0) + k
    return c


def _normalise(message):
    message = re.sub(r"(/[\w.\-]+)+\.py", "FILE.py", message)
    message = re.sub(r"line \d+", "line N", message)
    message = re.sub(r"0x[0-9a-f]+", "0x..", message)
    message = re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "N", message)
    return message[:160]


def cause_key(mode, check, status, message):
    if status in ("refused", "harness-error"):
        return "%s in %s / %s: %s" % (status, mode, check, _normalise(message))
    if message.startswith("vs autograd"):
        return "%s in %s / %s (vs autograd)" % (status, mode, check)
    if "structure differs" in message or "is None" in message:
        return "%s in %s / %s (structure)" % (status, mode, check)
    return "%s in %s / %s" % (status, mode, check)


def reproducer_for(key, names):
    text = key + " " + " ".join(names)
    for rep in REPRODUCERS:
        if any(re.search(m, text) for m in rep["match"]):
            return rep["id"]
    return None


def causes(results, extra=False):
    """Failing (function, mode) pairs grouped by cause: [{key, functions: {name: example}, cases, reproducer}].
    extra: the failures of the extra second-order checks (not counted) instead."""
    table = {}
    for fn in results["functions"]:
        for mode in MODES:
            m = fn["modes"][mode].get("extra", {}) if extra else fn["modes"][mode]
            if not m:
                continue
            if m["status"] not in FAILING:
                continue
            seen = set()
            for case in m.get("kept", []):
                if case["status"] not in FAILING:
                    continue
                for check, (status, message) in case["checks"].items():
                    if status not in FAILING:
                        continue
                    key = cause_key(mode, check, status, message)
                    if (key, fn["name"]) in seen:
                        continue
                    seen.add((key, fn["name"]))
                    e = table.setdefault(key, {"key": key, "functions": {}, "cases": 0})
                    e["functions"][fn["name"]] = {"case": case["label"], "message": message,
                                                  "failing_cases": sum(m["cases"].get(s, 0) for s in FAILING),
                                                  "cases": sum(m["cases"].values()),
                                                  "tangent_selected": bool(fn["tests"][mode])}
    out = sorted(table.values(), key=lambda e: -len(e["functions"]))
    for e in out:
        e["reproducer"] = reproducer_for(e["key"], list(e["functions"]))
    return out


def run_reproducers(timeout=300):
    """Run each reproducer in a fresh interpreter: 'fails' (it raises: the cause is still there) or
    'passes (fixed?)' (it asserts the right answer)."""
    out = []
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    tmp = tempfile.mkdtemp(prefix="tangent-corpus-reproducers-")
    for rep in REPRODUCERS:
        path = os.path.join(tmp, rep["id"].replace("-", "_") + ".py")
        with open(path, "w") as f:          # (a file: srcgrad reads the source of what it differentiates)
            f.write(rep["code"].lstrip())
        try:
            proc = subprocess.run([sys.executable, path], cwd=ROOT, env=env, capture_output=True, text=True,
                                  timeout=timeout)
            if proc.returncode == 0:
                result = {"id": rep["id"], "outcome": "passes (fixed?)", "detail": ""}
            else:
                lines = [l for l in proc.stderr.strip().splitlines() if l.strip()]
                errors = [l for l in lines if re.match(r"[\w.]+(Error|Exception)\b", l)]
                detail = (errors or lines or [""])[-1]
                result = {"id": rep["id"], "outcome": "fails", "detail": detail[:300]}
        except subprocess.TimeoutExpired:
            result = {"id": rep["id"], "outcome": "fails", "detail": "timed out after %ss" % timeout}
        out.append(result)
        print("  %-28s %s  %s" % (rep["id"], result["outcome"], result["detail"][:100]))
    return out


def _duration(s):
    s = float(s)
    return "%d min %d s" % (s // 60, s % 60) if s >= 60 else "%.1f s" % s


def summary(results):
    lines = []
    for mode in MODES:
        t, a = counts(results, mode, "tangent"), counts(results, mode, "all")
        lines.append("%-26s Tangent's selection %d/%d (of %d selected, %d TensorFlow-only)   whole corpus %d/%d"
                     % (MODE_TITLES[mode] + ":", t["agree"], t["measured"], t["selected"], t["tf"],
                        a["agree"], a["measured"]))
    lines.append("run time %s" % _duration(results["seconds"]["total"]))
    return "\n".join(lines)


def _cell(m):
    if m["status"] == "skip":
        return "skip"
    n = sum(m["cases"].values())
    good = sum(m["cases"].get(s, 0) for s in ("agree", "kink", "undefined"))
    text = "%s %d/%d" % (m["status"], good, n)
    notes = []
    if m["cases"].get("kink"):
        notes.append("%d kink" % m["cases"]["kink"])
    if m["cases"].get("undefined"):
        notes.append("%d undef." % m["cases"]["undefined"])
    if m.get("op_by_op"):
        notes.append("op by op")
    if m["status"] in FAILING:
        text = "**%s**" % text
    return text + (" (%s)" % ", ".join(notes) if notes else "")


def _esc(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def _render_causes(cs, ran, empty):
    out = []
    if not cs:
        out += [empty, ""]
    for e in cs:
        rid = e["reproducer"]
        out.append("### %s" % e["key"])
        out.append("")
        out.append("%d function(s)%s." % (len(e["functions"]), "; reproducer: [%s](#%s) (%s)" % (
            rid, rid, ran.get(rid, {}).get("outcome", "not run")) if rid else "; no reproducer matched"))
        out.append("")
        out.append("| function | failing cases | in Tangent's selection | example | message |")
        out.append("|---|---|---|---|---|")
        for name, d in sorted(e["functions"].items()):
            out.append("| %s | %d/%d | %s | %s | %s |" % (name, d["failing_cases"], d["cases"],
                                                          "yes" if d["tangent_selected"] else "no",
                                                          _esc(d["case"]), _esc(d["message"][:300])))
        out.append("")
    return out


def render(results):
    env = results["environment"]
    tol = results["tolerances"]
    out = ["# srcgrad on Tangent's corpus", ""]
    out.append("Generated by `%s` (%s); python %s, numpy %s, autograd %s, %s cpus; srcgrad %s%s; Tangent "
               "checkout %s. How it works: [README.md](../README.md). Full data: "
               "[tangent_corpus.json](tangent_corpus.json)."
               % (results["command"], results["date"], env["python"], env["numpy"], env["autograd"], env["cpus"],
                  env["srcgrad_commit"], " with uncommitted changes in srcgrad/" if env["srcgrad_uncommitted"] else "",
                  (env["tangent_commit"] or "?")[:12]))
    if results["options"].get("short") or results["options"].get("only"):
        out.append("")
        out.append("**Partial run** (options %s): not the full corpus." % results["options"])
    for note in results.get("notes", []):
        out.append("")
        out.append("Note: %s" % note)
    out += ["", "## Counts", ""]
    out.append("A function counts as agreeing in a mode when every one of its argument sets agrees (points "
               "where it is not differentiable, `kink`, or has no finite derivative, `undefined`, do not count "
               "against it; they are listed below). *Tangent's selection*: the functions Tangent's own tests run "
               "in that mode (test_reverse_mode.py, test_forward_mode.py, test_reverse_over_reverse.py with "
               "test_hessian_vector_products.py), with their argument values; the TensorFlow-only ones are "
               "skipped (TensorFlow is not installed, and srcgrad differentiates NumPy). *Whole corpus*: every "
               "NumPy function of tests/functions.py (and the two HVP test functions) in every mode that "
               "applies.")
    out.append("")
    out.append("| target | Tangent's selection: agree / measured | selected (TF-only skipped) | whole corpus: "
               "agree / measured | cases (Tangent's selection) |")
    out.append("|---|---|---|---|---|")
    for mode in MODES:
        t, a = counts(results, mode, "tangent"), counts(results, mode, "all")
        cases = ", ".join("%s %d" % kv for kv in sorted(t["cases"].items(), key=lambda kv: -kv[1]))
        out.append("| %s | **%d / %d** | %d (%d) | %d / %d | %s |" % (
            MODE_TITLES[mode], t["agree"], t["measured"], t["selected"], t["tf"], a["agree"], a["measured"], cases))
    secs = results["seconds"]
    sel = [counts(results, m, "tangent") for m in MODES]
    out.append("")
    out.append("The issues' targets (reverse 102/102, forward 101/101, grad of grad and Hessian 67/67) count "
               "functions; Tangent's files give %d / %d / %d NumPy functions for its selection (and %d / %d / %d "
               "for the whole corpus), so both views are shown (README.md)." % tuple(
                   [c["selected"] - c["tf"] for c in sel] + [counts(results, m, "all")["measured"] for m in MODES]))
    out.append("")
    out.append("Run time %s (reverse %s, forward %s, second order %s)." % (
        _duration(secs["total"]), _duration(secs.get("reverse", 0)), _duration(secs.get("forward", 0)),
        _duration(secs.get("second", 0))))
    out.append("")
    out.append("Tolerances: central differences with step %g in float64; first order rtol %g, atol %g; second "
               "order rtol %g, atol %g (NumPy's isclose against the reference); a point is a kink when its two "
               "one-sided differences differ by more than rtol %g." % (
                   tol["step"], tol["rtol1"], tol["atol1"], tol["rtol2"], tol["atol2"], tol["kink_rtol"]))
    ran = {r["id"]: r for r in results.get("reproducers", [])}
    out += ["", "## Failures, by cause", ""]
    out += _render_causes(causes(results), ran, "None: every measured function agrees in every mode.")
    extra = causes(results, extra=True)
    out += ["## Extra second-order checks (not counted)", ""]
    out.append("Beyond the targets' checks (Hessian and grad of grad), every function whose second-order "
               "argument is an array or a float is also run through `sg.hvp` (forward over reverse) and, for "
               "one-argument functions, reverse over forward (`sg.grad` of a function returning `sg.jvp`'s "
               "tangent), as Tangent's HVP tests do for their two functions (for those two they count). Failures "
               "of these extra checks:")
    out.append("")
    out += _render_causes(extra, ran, "None.")
    if REPRODUCERS:
        out += ["## Minimal reproducers", "",
                "Plain NumPy and srcgrad, asserting the right answer: each raises while its cause is there. "
                "Run with the report (outcome below); the code is [reproducers.py](../reproducers.py).", ""]
        for rep in REPRODUCERS:
            now = ran.get(rep["id"], {})
            out.append('<a id="%s"></a>' % rep["id"])
            out.append("### %s — %s" % (rep["id"], rep["title"]))
            out.append("")
            out.append("Outcome now: %s%s" % (now.get("outcome", "not run"),
                                              " (`%s`)" % _esc(now["detail"]) if now.get("detail") else ""))
            if rep.get("note"):
                out.append("")
                out.append(rep["note"])
            out += ["", "```python", rep["code"].strip(), "```", ""]
    # notes: kinks, undefined points, op by op, autograd
    out += ["## Points without a derivative (not failures)", ""]
    rows = []
    for fn in results["functions"]:
        for mode in MODES:
            m = fn["modes"][mode]
            for s in ("kink", "undefined"):
                if m.get("cases", {}).get(s):
                    ex = next((k for k in m.get("kept", []) if k["status"] == s), None)
                    msg = next(iter(ex["checks"].values()))[1] if ex and ex["checks"] else ""
                    rows.append("| %s | %s | %s %d | %s | %s |" % (fn["name"], mode, s, m["cases"][s],
                                                                   _esc(ex["label"] if ex else ""), _esc(msg[:200])))
    if rows:
        out.append("`kink`: a branch boundary at the point (the one-sided differences differ); srcgrad gives the "
                   "derivative of the branch taken. `undefined`: f or a one-sided difference is not finite there "
                   "(e.g. arccos outside [-1, 1]).")
        out.append("")
        out.append("| function | mode | points | example | detail |")
        out.append("|---|---|---|---|---|")
        out += rows
    else:
        out.append("None.")
    out += ["", "## Run op by op (PerformanceWarning), counted when the numbers agree", ""]
    obo = ["%s (%s)" % (fn["name"], ", ".join(m for m in MODES if fn["modes"][m].get("op_by_op")))
           for fn in results["functions"] if any(fn["modes"][m].get("op_by_op") for m in MODES)]
    out.append(", ".join(obo) if obo else "None.")
    out += ["", "## autograd", ""]
    out.append("First order is judged against finite differences; autograd's gradient (np rebound to "
               "autograd.numpy in a copy of the module's namespace) is compared as well, for information. "
               "Second order is judged against both. (inlining_contextmanager: autograd ignores the "
               "insert_grad_of block; arcsin/arccos at +-1: see the reproducer arcsin-arccos-boundary.)")
    out.append("")
    ag_rows = []
    for fn in results["functions"]:
        for mode in MODES:
            for key, note in fn["modes"][mode].get("autograd", {}).items():
                ag_rows.append("| %s | %s | %s | %d | %s |" % (fn["name"], mode, _esc(key[:80]), note["count"],
                                                             _esc(note["example"][:240])))
    if ag_rows:
        out.append("Where autograd differs from srcgrad or cannot run the function:")
        out.append("")
        out.append("| function | mode | autograd | cases | example |")
        out.append("|---|---|---|---|---|")
        out += ag_rows
    out += ["", "## Every function", ""]
    out.append("Cells: the function's status, and its argument sets that agree (or have no derivative) / all. "
               "*tests*: Tangent's tests that select it (none: measured for the whole corpus only).")
    out.append("")
    out.append("| function | source | tests | reverse | forward | second order |")
    out.append("|---|---|---|---|---|---|")
    for fn in results["functions"]:
        if fn["tf"]:
            continue
        tests = sorted({t for m in MODES for t in fn["tests"][m]})
        cells = [_cell(fn["modes"][m]) for m in MODES]
        out.append("| %s | %s | %s | %s |" % (fn["name"], fn["source"], ", ".join(tests) or "none", " | ".join(cells)))
    skipped = [fn for fn in results["functions"] if fn["tf"]]
    if skipped:
        out += ["", "## Skipped: TensorFlow-only (%d)" % len(skipped), ""]
        out.append("These call `tf.*` ops on `tf.Tensor` arguments (Tangent's tfe_utils fixtures); TensorFlow is not "
                   "installed and srcgrad differentiates NumPy: " + ", ".join(
                       "%s (%s)" % (fn["name"], ", ".join(sorted({t for m in MODES for t in fn["tests"][m]})) or
                                    "no test") for fn in skipped) + ".")
    other = [(fn["name"], m, fn["modes"][m]["skip_reason"]) for fn in results["functions"] if not fn["tf"]
             for m in MODES if fn["modes"][m]["status"] == "skip" and fn["modes"][m].get("skip_reason")]
    if other:
        out += ["", "## Other skips", "", "| function | mode | reason |", "|---|---|---|"]
        out += ["| %s | %s | %s |" % (n, m, _esc(r)) for n, m, r in other]
    return "\n".join(out) + "\n"
