"""autograd's example programs, run side by side: as written with autograd,
and rewritten for srcgrad (rewrite.py + shim.py); their gradient calls
compared (record.py).

Every liberty the harness takes with a program is in EXAMPLES below: the
exact text it replaces (in both runs: the autograd run executes the same
patched text), why, and the program's time limit or call budget.
"""
import os
import pickle
import shutil
import subprocess
import sys
import time

import numpy as np

from . import record
from .rewrite import apply_patches, rewrite_source

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SRCGRAD_DIR = os.path.join(ROOT, "srcgrad")

DEFAULT_RTOL = 1e-6
DEFAULT_TIME_LIMIT = 150.0

ITERS = "iterations reduced (the loop body, where the gradient is used, is unchanged)"

#: name (path under examples/, without .py) -> what the harness does with it.
#:   patches:   [(old text, new text, why)], applied to both runs
#:   max_calls: stop the program (both runs) after this many gradient calls
#:   mnist:     replace data_mnist.mnist() (a download) by synthetic uint8 images
#:   rtol:      tolerance of the gradient comparison, with the reason when not 1e-6
#:   skip:      why the program is not run through srcgrad
EXAMPLES = {
    "bayesian_neural_net": {
        "patches": [("num_iters=1000", "num_iters=3", ITERS)],
    },
    "bayesian_optimization": {
        "patches": [("num_iters=20, callback=None", "num_iters=2, callback=None", ITERS)],
        "max_calls": 40,
    },
    "black_box_svi": {
        "patches": [("num_iters=2000", "num_iters=3", ITERS)],
    },
    "convnet": {
        "patches": [("num_epochs = 50", "num_epochs = 1", ITERS),
                    ("rs = npr.RandomState()", "rs = npr.RandomState(0)",
                     "unseeded generator: the two runs must start from the same weights")],
        "mnist": True,
        "max_calls": 3,
    },
    "deep_gaussian_process": {
        "patches": [('method="CG", callback=callback)',
                     'method="CG", callback=callback, options={"maxiter": 2})', ITERS)],
    },
    "define_gradient": {},
    "dot_graph": {"skip": "draws autograd's trace graph (autograd.tracer.Node, trace): autograd internals, "
                          "no gradient computed; srcgrad shows its generated code instead (sg.source)"},
    "fixed_points": {},
    "gaussian_process": {
        "patches": [('method="CG", callback=callback)',
                     'method="CG", callback=callback, options={"maxiter": 2})', ITERS)],
    },
    "generative_adversarial_net": {
        "patches": [("num_epochs = 50", "num_epochs = 1", ITERS)],
        "mnist": True,
    },
    "gmm": {
        "patches": [("        callback=callback,\n", "        callback=callback, options={'maxiter': 2},\n",
                     ITERS)],
    },
    "gplvm": {
        "patches": [('method="CG", callback=callback)',
                     'method="CG", callback=callback, options={"maxiter": 2})', ITERS)],
    },
    "hmm_em": {
        "max_calls": 4,
    },
    "ica": {
        "patches": [('method="CG", callback=callback)',
                     'method="CG", callback=callback, options={"maxiter": 2})', ITERS)],
    },
    "logistic_regression": {},
    "lstm": {
        "patches": [("num_iters=1000", "num_iters=3", ITERS)],
    },
    "mixture_variational_inference": {
        "patches": [("num_iters=2000", "num_iters=3", ITERS)],
    },
    "natural_gradient_black_box_svi": {
        "patches": [("num_iters = 200", "num_iters = 3", ITERS)],
    },
    "negative_binomial_maxlike": {
        "atol": (1e-9, "the last call is the gradient at the maximum-likelihood point, zero up to rounding "
                       "(|g| ~ 1e-12 from sums of 1000 terms of size ~1): compared with an absolute tolerance"),
    },
    "neural_net": {
        "patches": [("num_epochs = 5", "num_epochs = 1", ITERS)],
        "mnist": True,
    },
    "neural_net_regression": {
        "patches": [("num_iters=1000", "num_iters=3", ITERS)],
    },
    "ode_net": {
        "patches": [("num_iters=1000", "num_iters=3", ITERS)],
        "rtol": (2e-2, "odeint(rtol=0.01) in the program: autograd integrates the adjoint ODE with the "
                       "program's tolerances, srcgrad with its own method; both are accurate to about the "
                       "solver tolerance"),
    },
    "print_trace": {"skip": "prints autograd's trace (autograd.tracer.Node, trace): autograd internals, "
                            "no srcgrad counterpart (sg.source shows the generated code)"},
    "rkhs": {},
    "rnn": {
        "patches": [("num_iters=1000", "num_iters=3", ITERS)],
    },
    "rosenbrock": {},
    "sinusoid": {},
    "tanh": {},
    "variational_autoencoder": {
        "patches": [("num_epochs = 15", "num_epochs = 1", ITERS)],
        "mnist": True,
    },
    "fluidsim/fluidsim": {
        "patches": [('options={"maxiter": 25, "disp": True}', 'options={"maxiter": 1, "disp": True}', ITERS),
                    ("simulation_timesteps = 100", "simulation_timesteps = 10",
                     "a 10-step simulation instead of 100 (the same step function; time)"),
                    ("ax, render=True)", "ax, render=False)", "no PNG frames written at the end")],
        "max_calls": 2,
    },
    "fluidsim/wing": {
        "patches": [('options={"maxiter": 50, "disp": True}', 'options={"maxiter": 1, "disp": True}', ITERS),
                    ("ax, render=True)", "ax, render=False)", "no PNG frames written at the end")],
        "max_calls": 2,
    },
}

#: helper modules of the examples: staged (rewritten) but not run as programs
HELPERS = {"data", "data_mnist", "__init__"}
#: autograd's "27 example programs": examples/*.py less the helpers and the two tracer demos
TOP27 = sorted(n for n in EXAMPLES if "/" not in n and n not in ("dot_graph", "print_trace"))


def stage(autograd_src, work):
    """Copy examples/ three times under `work`: orig/ (as is: data files,
    __file__), autograd/ (patched), srcgrad/ (patched and rewritten)."""
    src = os.path.join(autograd_src, "examples")
    if not os.path.isdir(src):
        raise SystemExit("no examples/ under %s" % autograd_src)
    notes = {}
    for kind in ("orig", "autograd", "srcgrad"):
        dst = os.path.join(work, kind)
        if os.path.exists(dst):
            shutil.rmtree(dst)
        shutil.copytree(src, dst)
    for dirpath, _, files in os.walk(os.path.join(work, "orig")):
        for fname in files:
            if not fname.endswith(".py"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, fname), os.path.join(work, "orig"))
            name = rel[:-3]
            text = open(os.path.join(dirpath, fname)).read()
            patches = EXAMPLES.get(name, {}).get("patches", [])
            try:
                patched = apply_patches(text, [(p[0], p[1]) for p in patches])
            except Exception as e:      # autograd changed the program: say so, run it unpatched
                notes[name] = "patch failed: %s" % e
                patched = text
            with open(os.path.join(work, "autograd", rel), "w") as f:
                f.write(patched)
            try:
                rewritten, _ = rewrite_source(patched, rel)
            except SyntaxError as e:
                notes[name] = "rewrite failed: %s" % e
                rewritten = patched
            with open(os.path.join(work, "srcgrad", rel), "w") as f:
                f.write(rewritten)
    return notes


def run_one(work, name, mode, time_limit, keep, max_calls, mnist):
    rel = name + ".py"
    out = os.path.join(work, "results", "%s.%s.pkl" % (name.replace("/", "__"), mode))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    cwd = os.path.join(work, "cwd", name.replace("/", "__"), mode)
    os.makedirs(cwd, exist_ok=True)
    cmd = [sys.executable, "-m", "benchmarks.compat.runner", "--mode", mode,
           "--script", os.path.join(work, mode, rel), "--file", os.path.join(work, "orig", rel),
           "--out", out, "--time-limit", str(time_limit), "--keep", str(keep)]
    if max_calls:
        cmd += ["--max-calls", str(max_calls)]
    if mnist:
        cmd += ["--mnist"]
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["MPLBACKEND"] = "Agg"
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("MKL_NUM_THREADS", "1")
    start = time.time()
    log = os.path.join(work, "results", "%s.%s.log" % (name.replace("/", "__"), mode))
    with open(log, "w") as logf:
        try:
            proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=logf, stderr=subprocess.STDOUT,
                                  timeout=time_limit + 60)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            rc = "killed"
    wall = time.time() - start
    if os.path.exists(out):
        with open(out, "rb") as f:
            result = pickle.load(f)
        os.remove(out)
    else:
        tail = open(log, errors="replace").read()[-2000:]
        result = {"mode": mode, "status": "died", "message": "process ended without a result (rc=%s): %s"
                  % (rc, tail), "records": [], "counts": {}, "total_calls": 0}
    result["wall"] = wall
    result["log"] = log
    return result


# ---------------------------------------------------------------- classify
def _in_srcgrad(filename):
    return filename.startswith(SRCGRAD_DIR + os.sep) or filename.startswith("<srcgrad-generated")


def _in_shim(filename):
    return filename.startswith(HERE + os.sep) or filename.startswith("<compat-generated")


def user_line(frames, user_dirs):
    """The innermost frame of the program itself (its files), as 'file:line: code'."""
    for filename, lineno, name, line in reversed(frames or []):
        if any(filename.startswith(d + os.sep) for d in user_dirs):
            return "%s:%d: %s" % (os.path.basename(filename), lineno, (line or "").strip())
    return ""


def classify_exception(result):
    """(status, error class) of a run that raised: refused (srcgrad's own
    error, or a TypeError/ValueError srcgrad raises on purpose), crash
    (anything else raised in srcgrad or its generated code, or raised by the
    program on what srcgrad returned), skip (the shim lacks an autograd API)."""
    frames = result.get("frames") or []
    exc = result.get("exc_type", "?")
    if exc in ("ImportError", "ModuleNotFoundError") and "benchmarks.compat.shim" in result.get("message", ""):
        return "skip", "needs autograd API the shim does not map"
    if result.get("srcgrad_error"):
        return "refused", exc
    inner = frames[-1] if frames else None
    if inner and _in_srcgrad(inner[0]):
        deliberate = (inner[3] or "").lstrip().startswith("raise") and exc in (
            "TypeError", "ValueError", "NotImplementedError")
        return ("refused" if deliberate else "crash"), exc
    if any(_in_srcgrad(f[0]) for f in frames):
        return "crash", exc
    if inner and _in_shim(inner[0]):
        return "harness-error", exc
    return "crash", exc + " (in the program, on srcgrad's result)"


def compare_runs(ag, sg, rtol, atol=0.0):
    """Pair the recorded calls (label, index) and compare arguments, then results."""
    by_key = {(r["label"], r["index"]): r for r in ag.get("records", [])}
    pairs = []
    for r in sg.get("records", []):
        a = by_key.get((r["label"], r["index"]))
        entry = {"label": r["label"], "index": r["index"]}
        if a is None:
            entry["outcome"] = "no autograd call with this label"
        elif "error" in r:
            entry["outcome"] = "raised: " + r["error"]
        elif "error" in a:
            entry["outcome"] = "autograd raised: " + a["error"]
        elif "result" not in r:
            entry["outcome"] = "did not return"
        else:
            diff_in = record.compare(r["args"], a["args"], 1e-8, "arguments") or \
                record.compare(r["kwargs"], a["kwargs"], 1e-8, "keyword arguments")
            if diff_in:
                entry["outcome"] = "inputs differ"
                entry["detail"] = diff_in
            else:
                # each array within rtol of the largest magnitude in the whole gradient (a bias gradient
                # of size 1e-21 next to weights' of size 1 is zero at this precision, in either library)
                leaves = [np.abs(np.asarray(v, dtype=complex)) for v in record._leaves(a["result"])
                          if np.size(v) and np.all(np.isfinite(np.asarray(v, dtype=complex)))]
                overall = max((float(np.max(v)) for v in leaves), default=0.0)
                d = record.compare(r["result"], a["result"], rtol, "gradient", atol + rtol * overall)
                entry["rel_error"] = record.relative_error(r["result"], a["result"])
                entry["outcome"] = "agree" if d is None else "wrong"
                if d:
                    entry["detail"] = d
        pairs.append(entry)
    sg_keys = {(r["label"], r["index"]) for r in sg.get("records", [])}
    missing = [k for k in by_key if k not in sg_keys]
    return pairs, missing


def classify(name, ag, sg, cfg, user_dirs):
    row = {"example": name, "autograd_seconds": round(ag.get("wall", 0), 1),
           "srcgrad_seconds": round(sg.get("wall", 0), 1) if sg else None}
    if ag["status"] not in ("finished", "stopped", "time-limit"):
        row.update(status="skip", error_class="fails with autograd",
                   message=(ag.get("exc_type", "") + ": " + ag.get("message", "")).strip(": ")[:300],
                   user_line=user_line(ag.get("frames"), user_dirs))
        return row
    rtol = cfg.get("rtol", (DEFAULT_RTOL, ""))[0]
    atol = cfg.get("atol", (0.0, ""))[0]
    pairs, missing = compare_runs(ag, sg, rtol, atol)
    row["calls"] = pairs
    row["calls_missing"] = ["%s#%d" % k for k in missing]
    n_agree = sum(p["outcome"] == "agree" for p in pairs)
    wrong = [p for p in pairs if p["outcome"] == "wrong"]
    row["compared"] = "%d/%d" % (n_agree, len([p for p in pairs if p["outcome"] in ("agree", "wrong")]))
    errs = [p["rel_error"] for p in pairs if "rel_error" in p]
    row["max_rel_error"] = max(errs) if errs else None
    row["rtol"] = rtol
    if atol:
        row["atol"] = atol
    row["autograd_calls"] = ag.get("total_calls")
    row["srcgrad_calls"] = sg.get("total_calls")
    if wrong:
        w = wrong[0]
        row.update(status="wrong", error_class="different gradient",
                   message="%s call %d: %s" % (w["label"], w["index"] + 1, w.get("detail", "")), user_line="")
        if sg["status"] == "exception":
            st, ec = classify_exception(sg)
            row["then"] = "%s %s: %s" % (st, ec, sg.get("message", "").splitlines()[0][:200])
        return row
    if sg["status"] in ("exception", "died"):
        if sg["status"] == "died":
            row.update(status="crash", error_class="process died", message=sg["message"][:300], user_line="")
            return row
        st, ec = classify_exception(sg)
        row.update(status=st, error_class=ec, message=sg.get("message", "")[:600],
                   user_line=user_line(sg.get("frames"), user_dirs), traceback=sg.get("traceback", "")[-3000:])
        return row
    if sg["status"] == "time-limit" and ag["status"] != "time-limit" and missing:
        row.update(status="timeout", error_class="time limit",
                   message="%s; %d of autograd's %d recorded calls made" % (
                       sg.get("message", ""), len(sg.get("records", [])), len(ag.get("records", []))),
                   user_line=user_line(sg.get("frames"), user_dirs))
        return row
    compared = [p for p in pairs if p["outcome"] == "agree"]
    if not compared:
        row.update(status="diverged", error_class="no comparable call",
                   message="; ".join(sorted({p["outcome"] + (": " + p["detail"] if p.get("detail") else "")
                                             for p in pairs}))[:300] or "no gradient call recorded",
                   user_line="")
        return row
    row.update(status="agree", error_class="", message="", user_line="")
    if missing:
        row["message"] = "%d autograd call(s) not made by the srcgrad run" % len(missing)
    return row


def run_examples(autograd_src, work, names=None, keep=3, time_limit=None, log=print):
    notes = stage(autograd_src, work)
    names = names or list(EXAMPLES)
    rows = []
    user_dirs = [os.path.join(work, k) for k in ("orig", "autograd", "srcgrad")]
    for name in names:
        cfg = EXAMPLES.get(name, {})
        if cfg.get("skip"):
            rows.append({"example": name, "status": "skip", "error_class": "not applicable",
                         "message": cfg["skip"], "user_line": ""})
            log("%-32s skip" % name)
            continue
        limit = time_limit or cfg.get("time_limit", DEFAULT_TIME_LIMIT)
        t0 = time.time()
        ag = run_one(work, name, "autograd", limit, keep, cfg.get("max_calls"), cfg.get("mnist"))
        sg = run_one(work, name, "srcgrad", limit, keep, cfg.get("max_calls"), cfg.get("mnist"))
        row = classify(name, ag, sg, cfg, user_dirs)
        if name in notes:
            row["note"] = notes[name]
        row["liberties"] = [p[2] for p in cfg.get("patches", [])]
        rows.append(row)
        log("%-32s %-9s %-6s %5.0fs  %s" % (name, row["status"], row.get("compared", ""), time.time() - t0,
                                             (row.get("message") or "").splitlines()[0][:100] if row.get("message")
                                             else ""))
    return rows
