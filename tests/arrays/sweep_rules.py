"""Run every row of the rule table (tests/rules/test_rules.py CASES) on Dask
arrays and sort the rules by what happens:

    lazy      the gradient is a Dask array, nothing was computed on the way,
              and it equals the gradient on NumPy arrays
    computes  something converted a Dask array to NumPy (dask computed inside
              the gradient call), or the gradient came back as NumPy
    wrong     lazy, but different from NumPy's gradient
    error     the call raised (the message's first line is printed)

    python tests/arrays/sweep_rules.py [--markdown]

Its output is the NumPy-only list of docs/arrays.md (srcgrad.rules.arrays
NUMPY_ONLY is the set of rules whose every row is not `lazy`).
"""
import os
import sys
import traceback
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), os.path.join(os.path.dirname(HERE), "rules"), os.path.dirname(os.path.dirname(HERE))]

import dask  # noqa: E402
import dask.array as da  # noqa: E402
import numpy as np  # noqa: E402

import srcgrad as sg  # noqa: E402
import test_rules as T  # noqa: E402
from rulecase import Arg  # noqa: E402


class Computed(Exception):
    pass


def _refuse(dsk, keys, **kwargs):
    raise Computed("dask computed inside the gradient call")


def _label(f):
    mod = getattr(f, "__module__", None) or ""
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", repr(f))
    if mod.startswith("numpy"):
        mod = "np" + mod[5:].replace("._core.umath", "").replace("._core.fromnumeric", "").replace(
            "._core.multiarray", "").replace("._core.numeric", "").replace(".lib._function_base_impl", "")
    return "%s.%s" % (mod, name) if mod else name


def run(case):
    args, w = T._data(case.name)
    wrt = case.wrt
    ref = sg.grad(case.fn, wrt=wrt)(*args, w)
    dargs = [da.from_array(a, chunks=2) if isinstance(spec, Arg) else a
             for spec, a in zip(case.inputs, args)]
    dw = da.from_array(w, chunks=2)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with dask.config.set(scheduler=_refuse):
                g = sg.grad(case.fn, wrt=wrt)(*dargs, dw)
    except Computed:
        return "computes", ""
    except Exception as e:
        return "error", "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:100] if str(e) else "")
    gs = g if len(wrt) > 1 else (g,)
    refs = ref if len(wrt) > 1 else (ref,)
    for gi, ri in zip(gs, refs):
        if isinstance(gi, list):
            continue
        if not isinstance(gi, da.Array):
            return "computes", "returned %s" % type(gi).__name__
        try:
            val = gi.compute(scheduler="synchronous")
        except Exception as e:
            return "error", "at compute: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:100])
        if not np.allclose(val, ri, rtol=1e-9, atol=1e-12):
            return "wrong", ""
    return "lazy", ""


def main():
    markdown = "--markdown" in sys.argv
    by_rule = {}
    for case in T.CASES:
        try:
            outcome, why = run(case)
        except Exception:
            outcome, why = "error", "NumPy reference failed: " + traceback.format_exc().splitlines()[-1]
        covers = case.covers if isinstance(case.covers, tuple) else (case.covers,)
        for f in covers:
            by_rule.setdefault(_label(f), []).append((case.name, outcome, why))
        if not markdown:
            print("%-40s %-9s %s" % (case.name, outcome, why), flush=True)
    print()
    good = sorted(r for r, rows in by_rule.items() if all(o == "lazy" for _, o, _ in rows))
    bad = sorted(r for r, rows in by_rule.items() if not all(o == "lazy" for _, o, _ in rows))
    print("lazy on Dask (%d rules):" % len(good))
    print(", ".join(good))
    print()
    print("not lazy on Dask (%d rules):" % len(bad))
    for r in bad:
        rows = by_rule[r]
        print("- %s: %s" % (r, "; ".join("%s %s%s" % (n, o, (" (%s)" % w) if w else "")
                                        for n, o, w in rows if o != "lazy")))


if __name__ == "__main__":
    main()
