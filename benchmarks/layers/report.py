"""Counting, grouping the failures by cause, running the reproducers, and the
Markdown report (results/layers.md)."""
import os
import re
import subprocess
import sys
import tempfile

from .reproducers import REPRODUCERS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = (64, 69)       # issue 17: at least 64 of the 69 layers agree
FAILING = ("wrong", "refused", "timeout", "harness-error")

_NORMALIZE = [
    (re.compile(r" at (/|<)[^ ]*:\d+"), ""),             # " at /path/file.py:12" locations
    (re.compile(r"\(shape \([\d, ]*\)"), "(shape (...)"),
]


def cause_key(row):
    """The error class and the first line of its message, with locations and
    shapes normalised: rows with the same key failed for the same reason."""
    message = (row.get("message") or "").strip()
    for pattern, repl in _NORMALIZE:
        message = pattern.sub(repl, message)
    return "%s: %s" % (row.get("error_class", "?"), message[:300])


def _reproducers_for(texts):
    return [rep["id"] for rep in REPRODUCERS if any(re.search(m, t) for m in rep["match"] for t in texts)]


def causes(rows):
    """Failures of srcgrad (refused, wrong, timeout) grouped by cause."""
    table = {}
    for r in rows:
        if r.get("status") not in FAILING:
            continue
        key = cause_key(r)
        e = table.setdefault(key, {"key": key, "status": r["status"], "cases": [], "where": [],
                                   "warnings": [], "reproducers": []})
        e["cases"].append("%s/%s" % (r["repo"], r["case"]))
        if r.get("where") and r["where"] not in e["where"]:
            e["where"].append(r["where"])
        for w in r.get("warnings", []):
            if w not in e["warnings"]:
                e["warnings"].append(w)
        for rid in _reproducers_for([key] + r.get("warnings", [])):
            if rid not in e["reproducers"]:
                e["reproducers"].append(rid)
    return sorted(table.values(), key=lambda e: (-len(e["cases"]), e["key"]))


def counts(rows):
    c = {"total": len(rows), "status": {}, "repos": {}}
    for r in rows:
        c["status"][r["status"]] = c["status"].get(r["status"], 0) + 1
        per = c["repos"].setdefault(r["repo"], {"total": 0})
        per["total"] += 1
        per[r["status"]] = per.get(r["status"], 0) + 1
    c["agree"] = c["status"].get("agree", 0)
    c["reference_errors"] = c["status"].get("reference-error", 0)
    c["skipped"] = c["status"].get("skipped", 0)
    c["by_via"] = {}
    for r in rows:
        v = c["by_via"].setdefault(r["via"], [0, 0])
        v[1] += 1
        v[0] += r["status"] == "agree"
    c["op_by_op"] = sum(1 for r in rows if r["status"] == "agree" and r.get("op_by_op"))
    return c


def run_reproducers(timeout=120):
    """Each reproducer in a fresh interpreter: 'fails' (it raises: the cause is
    still there) or 'passes (fixed?)'."""
    out = []
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    tmp = tempfile.mkdtemp(prefix="layers-reproducers-")
    for rep in REPRODUCERS:
        path = os.path.join(tmp, rep["id"].replace("-", "_") + ".py")
        with open(path, "w") as f:          # a file: srcgrad reads the source of what it differentiates
            f.write(rep["code"].lstrip())
        try:
            proc = subprocess.run([sys.executable, "-W", "ignore", path], cwd=ROOT, env=env,
                                  capture_output=True, text=True, timeout=timeout)
            if proc.returncode == 0:
                result = {"id": rep["id"], "outcome": "passes (fixed?)", "detail": ""}
            else:
                lines = [l for l in proc.stderr.strip().splitlines() if l.strip()]
                errors = [i for i, l in enumerate(lines) if re.match(r"[\w.]+(Error|Exception|Warning)\b", l)]
                detail = " ".join(lines[errors[-1]:]) if errors else (lines[-1] if lines else "")
                detail = detail.split(" (srcgrad's internal frames")[0].replace(tmp + os.sep, "")
                detail = re.sub(r" at \S+\.py:\d+ .*$", "", detail).strip()
                result = {"id": rep["id"], "outcome": "fails", "detail": re.sub(r"\s+", " ", detail)[:300]}
        except subprocess.TimeoutExpired:
            result = {"id": rep["id"], "outcome": "fails", "detail": "timed out after %ss" % timeout}
        out.append(result)
        print("  %-28s %s  %s" % (rep["id"], result["outcome"], result["detail"][:100]))
    return out


def _duration(seconds):
    seconds = int(round(seconds or 0))
    return "%d min %d s" % divmod(seconds, 60) if seconds >= 60 else "%d s" % seconds


def _cell(text, limit=200):
    text = str(text or "").replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _err(row):
    e = row.get("max_error")
    if e is None:
        return ""
    if e == "inf":
        return "inf"
    return "%.1e" % e if e else "0"


def summary(data):
    c = counts(data["rows"])
    return ("%d of %d cases agree (target %d of %d); %s" %
            (c["agree"], c["total"], TARGET[0], TARGET[1],
             ", ".join("%s %d" % (k, v) for k, v in sorted(c["status"].items()))))


def markdown(data):
    rows = data["rows"]
    c = counts(rows)
    v = data.get("versions", {})
    out = ["# srcgrad on layer code from NumPy-from-scratch repositories", ""]
    out.append("Generated by `%s` (%s); %s." % (data.get("command", ""), data.get("date", ""),
                                               ", ".join("%s %s" % kv for kv in v.items())))
    out.append("How it works and every liberty taken: [README.md](../README.md). "
               "Full data: [layers.json](layers.json).")
    out += ["", "## Counts", ""]
    ref = c["reference_errors"]
    counted = c["total"] - c["skipped"]
    out.append("- **%d of %d layers agree** (issue 17's target: at least %d of %d): srcgrad's gradient of the "
               "repository's forward pass, unchanged, equals the repository's own backward pass (relative error "
               "at most 1e-6, float64)." % (c["agree"], counted, TARGET[0], TARGET[1]))
    out.append("- Statuses: %s." % ", ".join("%s %d" % (k, n) for k, n in sorted(c["status"].items())))
    if ref:
        out.append("- %d of the %d are errors of the reference itself (its forward or backward raises, or "
                   "finite differences side with srcgrad against its backward); without them: **%d of %d** "
                   "agree." % (ref, counted, c["agree"], counted - ref))
    via = c["by_via"]
    out.append("- Through `sg.value_and_grad` (functions, stateless objects): %d of %d agree; through a "
               "`GradientTape` around the layer's method: %d of %d." %
               (via.get("grad", [0, 0])[0], via.get("grad", [0, 0])[1],
                via.get("tape", [0, 0])[0], via.get("tape", [0, 0])[1]))
    out.append("- %d of the agreeing cases ran op by op (a `PerformanceWarning`: the compiler could not "
               "see them statically), listed below." % c["op_by_op"])
    out.append("- Run time: %s for the cases (each repository in its own process; srcgrad's time is mostly "
               "compiling), then the reproducers." % _duration(data.get("total_seconds")))
    out += ["", "## Repositories", "",
            "| repository | checkout | cases | agree | wrong | refused | reference error | other |",
            "|---|---|---|---|---|---|---|---|"]
    for key, info in data.get("checkouts", {}).items():
        p = c["repos"].get(key, {"total": 0})
        other = p["total"] - sum(p.get(s, 0) for s in ("agree", "wrong", "refused", "reference-error"))
        out.append("| [%s](%s) | %s | %d | %d | %d | %d | %d | %d |" % (
            key, info.get("url", ""), info.get("revision") or ("missing" if not info.get("present") else "?"),
            p["total"], p.get("agree", 0), p.get("wrong", 0), p.get("refused", 0), p.get("reference-error", 0),
            other))

    out += ["", "Status: `agree`; `wrong` (a gradient differs from the reference and finite differences do not "
            "side with srcgrad); `refused` (srcgrad raised: class and first line); `reference-error` (the "
            "repository's own code raises, or its backward is not the derivative of its forward); `timeout`; "
            "`skipped` (no checkout). *Error*: the largest relative error over the inputs. *Via*: `grad` is "
            "`sg.value_and_grad` of generated `sum(forward(...) * G)`, `tape` a `GradientTape` around the "
            "method call."]
    for key in data.get("checkouts", {}):
        sub = [r for r in rows if r["repo"] == key]
        if not sub:
            continue
        info = data["checkouts"][key]
        out += ["", "### %s" % key, "", info.get("note", ""), "",
                "| case | forward / backward | via | status | error | details |", "|---|---|---|---|---|---|"]
        for r in sub:
            details = []
            if r["status"] not in ("agree",):
                if r.get("error_class"):
                    details.append("%s: %s" % (r["error_class"], r.get("message", "")))
                elif r.get("message"):
                    details.append(r["message"])
                if r.get("where"):
                    details.append("at `%s`" % r["where"])
                cut = next((w for w in r.get("warnings", []) if w.startswith("GradientPathWarning")), None)
                if cut:
                    details.append("after " + cut.split(". What is computed")[0])
            if r.get("op_by_op"):
                details.append("op by op")
            details += [n for n in r.get("notes", []) if n]
            status = r["status"] if r["status"] == "agree" else "**%s**" % r["status"]
            out.append("| %s | `%s` | %s | %s | %s | %s |" % (r["case"], _cell(r["title"]), r["via"], status,
                                                             _err(r), _cell("; ".join(details), 400)))

    outcomes = {o["id"]: o for o in data.get("reproducers", [])}
    cs = causes(rows)
    out += ["", "## srcgrad's failures, grouped by cause", ""]
    if not cs:
        out.append("None.")
    for e in cs:
        out.append("- **%s** (%s) — %d: %s" % (_cell(e["key"], 300), e["status"], len(e["cases"]),
                                               ", ".join(e["cases"])))
        if e["where"]:
            out.append("  - where: %s" % "; ".join("`%s`" % w for w in e["where"][:3]))
        for w in e["warnings"][:2]:
            out.append("  - warning: %s" % _cell(w, 300))
        if e["reproducers"]:
            out.append("  - reproducers: " + ", ".join(
                "[%s](#%s)%s" % (rid, rid, " (%s)" % outcomes[rid]["outcome"] if rid in outcomes else "")
                for rid in e["reproducers"]))

    refs = [r for r in rows if r["status"] == "reference-error"]
    out += ["", "## Errors in the references", ""]
    if not refs:
        out.append("None.")
    for r in refs:
        line = "- %s/%s (`%s`): %s: %s" % (r["repo"], r["case"], r["title"], r.get("error_class", ""),
                                          r.get("message", ""))
        if r.get("where"):
            line += " at `%s`" % r["where"]
        out.append(line)
        for name, d in (r.get("fd") or {}).items():
            out.append("  - %s, along a random direction: finite differences %.10g, srcgrad %.10g, "
                       "reference %.10g" % (name, d["fd"], d["srcgrad"], d["reference"]))

    slow = [r for r in rows if r.get("op_by_op")]
    out += ["", "## Run op by op", "",
            "What made the compiler hand the case to the tape (the first `PerformanceWarning`):", ""]
    if not slow:
        out.append("None.")
    for r in slow:
        w = next((w for w in r.get("warnings", []) if w.startswith("PerformanceWarning")), "")
        out.append("- %s/%s (%s): %s" % (r["repo"], r["case"], r["status"],
                                         _cell(w.replace("PerformanceWarning: ", ""), 300)))

    out += ["", "## Reproducers", "",
            "Each runs in a fresh interpreter; `fails` means the cause is still there."]
    for rep in REPRODUCERS:
        o = outcomes.get(rep["id"], {})
        out += ["", '<a id="%s"></a>' % rep["id"], "### %s" % rep["id"], "", rep["title"] + ".",
                "", "Outcome: **%s**%s" % (o.get("outcome", "not run"),
                                           " (`%s`)" % _cell(o["detail"].strip(), 300) if o.get("detail") else ""), ""]
        if rep.get("note"):
            out += [rep["note"], ""]
        out += ["```python", rep["code"].strip(), "```"]

    shims = data.get("shims", {})
    if shims:
        out += ["", "## Compatibility shims applied (both runs)", ""]
        for key, notes in shims.items():
            for n in notes:
                out.append("- %s: %s" % (key, n))
    out.append("")
    return "\n".join(out)
