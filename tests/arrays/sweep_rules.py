"""Run every row of the rule table (tests/rules/test_rules.py CASES) on
another library's arrays and sort the rules by what happens:

    kept      the gradient (and, for array-API namespaces, the value) is an
              array of that library, nothing was converted on the way (Dask:
              nothing computed), and it equals the gradient on NumPy arrays
    converts  something converted an array to NumPy (Dask computed inside
              the gradient call), or the gradient came back as NumPy
    wrong     kept, but different from NumPy's gradient
    error     the call raised (the message's first line is printed)
    n/a       (array-API namespaces) the row's function itself fails on these
              arrays (x.sum() on array_api_strict): not code for them; or it
              calls a SciPy function beside the rule, refused there

    python tests/arrays/sweep_rules.py [--namespace dask|strict|torch] [--markdown]
    python tests/arrays/sweep_rules.py --write-support
    python tests/arrays/sweep_rules.py --docs     (the lists of docs/arrays.md)

Its output is the NumPy-only list of docs/arrays.md: for Dask,
srcgrad.rules.arrays NUMPY_ONLY is the set of rules whose every row is not
`kept`; for arrays without NumPy dispatch (array_api_strict, PyTorch),
`--write-support` writes the rules kept in every row to
srcgrad/rules/array_api_support.py (a program calling another rule is
refused on those arrays before it runs).
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
import srcgrad.rules.arrays as sg_rule_arrays  # noqa: E402
from srcgrad.rules.arrays import rule_label  # noqa: E402
import test_rules as T  # noqa: E402
from rulecase import Arg  # noqa: E402


class Computed(Exception):
    pass


def _refuse(dsk, keys, **kwargs):
    raise Computed("dask computed inside the gradient call")


_label = rule_label


class _Everything:
    def __contains__(self, item):
        return True


def _measure_all():
    """Let every rule run on array-API arrays (the support list is what
    this sweep measures)."""
    sg_rule_arrays.support_list = lambda namespace: _Everything()


def _dask_convert(a):
    return da.from_array(a, chunks=2)


def _kept_dask(g):
    return isinstance(g, da.Array)


def _value_dask(g):
    return g.compute(scheduler="synchronous")


def _namespace(name):
    """(convert, is_kept, to_numpy, context) for the library `name`."""
    import contextlib
    if name == "dask":
        return _dask_convert, _kept_dask, _value_dask, lambda: dask.config.set(scheduler=_refuse)
    if name == "strict":
        import array_api_strict as xs
        return (xs.asarray, lambda g: isinstance(g, type(xs.asarray(0.0))), lambda g: np.asarray(g),
                contextlib.nullcontext)
    if name == "torch":
        import torch
        return (torch.from_numpy, lambda g: isinstance(g, torch.Tensor), lambda g: g.numpy(),
                contextlib.nullcontext)
    raise SystemExit("unknown namespace %r (dask, strict, torch)" % name)


def run(case, namespace="dask"):
    convert, kept, to_numpy, context = _namespace(namespace)
    args, w = T._data(case.name)
    wrt = case.wrt
    ref = sg.grad(case.fn, wrt=wrt)(*args, w)
    dargs = [convert(np.array(a)) if isinstance(spec, Arg) and np.asarray(a).dtype != bool
             else (convert(np.asarray(a)) if isinstance(spec, Arg) else a)
             for spec, a in zip(case.inputs, args)]
    dw = convert(np.array(w))
    if namespace != "dask":
        # the row's own code run in the namespace (NumPy's names as the array API's): when it
        # fails (x.sum() on an array_api_strict array, x[i] of a matrix), the program is not
        # code for these arrays, and srcgrad fails on it as plainly: not counted against the rule
        from srcgrad.runtime import namespaces
        facade = namespaces.facade_for(dargs + [dw])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                facade.twin(case.fn)(*dargs, dw)
        except Exception as e:
            return "n/a", "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:100] if str(e) else "")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with context():
                value, g = sg.value_and_grad(case.fn, wrt=wrt)(*dargs, dw)
    except Computed:
        return "converts", ""
    except sg.ForeignArrayError as e:
        if namespace != "dask" and "is NumPy-only" in str(e):
            return "n/a", "another rule of the row is refused there: %s" % str(e).splitlines()[0][:80]
        return "error", "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:100])
    except Exception as e:
        return "error", "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:100] if str(e) else "")
    if namespace != "dask" and not kept(value):      # the forward itself left the namespace
        return "converts", "the value came back as %s" % type(value).__name__
    gs = g if len(wrt) > 1 else (g,)
    refs = ref if len(wrt) > 1 else (ref,)
    for gi, ri in zip(gs, refs):
        if isinstance(gi, list):
            continue
        if not kept(gi):
            return "converts", "returned %s" % type(gi).__name__
        try:
            val = to_numpy(gi)
        except Exception as e:
            return "error", "at compute: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:100])
        if not np.allclose(val, ri, rtol=1e-9, atol=1e-12):
            return "wrong", ""
    return "kept", ""


def sweep(namespace, verbose=False):
    """{rule label: [(case name, outcome, why)]} over every row."""
    _measure_all()
    by_rule = {}
    for case in T.CASES:
        try:
            outcome, why = run(case, namespace)
        except Exception:
            outcome, why = "error", "NumPy reference failed: " + traceback.format_exc().splitlines()[-1]
        covers = case.covers if isinstance(case.covers, tuple) else (case.covers,)
        for f in covers:
            by_rule.setdefault(_label(f), []).append((case.name, outcome, why))
        if verbose:
            print("%-40s %-9s %s" % (case.name, outcome, why), flush=True)
    return by_rule


def kept(by_rule):
    """The rules with a row kept and every row kept or not applicable."""
    return sorted(r for r, rows in by_rule.items()
                  if any(o == "kept" for _, o, _ in rows) and all(o in ("kept", "n/a") for _, o, _ in rows))


SUPPORT = os.path.join(os.path.dirname(os.path.dirname(HERE)), "srcgrad", "rules", "array_api_support.py")


def _scipy(label):
    # (SciPy's functions convert other arrays to NumPy, PyTorch's back: refused there whatever the sweep
    # measures, rules/arrays.py; a scipy.special ufunc's label is its bare name)
    return label.startswith("scipy.") or "." not in label


def write_support():
    lists = {ns: [r for r in kept(sweep(ns)) if not _scipy(r)] for ns in ("strict", "torch")}
    with open(SUPPORT, "w") as out:
        out.write('"""Generated by `python tests/arrays/sweep_rules.py --write-support`: the rules\n'
                  'whose every row of the rule table gives NumPy\'s gradient on array_api_strict\n'
                  'arrays ("strict") and on PyTorch CPU tensors ("torch"), with nothing converted\n'
                  'to NumPy (%d and %d rules; SciPy\'s are left out: they convert). srcgrad refuses\n'
                  'a program calling another rule on such arrays (rules/arrays.py). Do not edit."""\n' % (len(lists["strict"]), len(lists["torch"])))
        both = [r for r in lists["strict"] if r in lists["torch"]]
        out.write("_BOTH = frozenset([\n")
        for name in both:
            out.write("    %r,\n" % name)
        out.write("])\n")
        out.write("ARRAY_API_RULES = {\n")
        for ns, names in lists.items():
            out.write("    %r: _BOTH | frozenset([\n" % ns)
            for name in names:
                if name not in both:
                    out.write("        %r,\n" % name)
            out.write("    ]),\n")
        out.write("}\n")
    print("wrote %s: strict %d rules, torch %d rules" % (SUPPORT, len(lists["strict"]), len(lists["torch"])))


def docs_lists():
    """Markdown for docs/arrays.md: which rules of the rule table run on
    PyTorch tensors and array_api_strict arrays (the support lists), and
    which NumPy rules are refused there."""
    from srcgrad.rules.array_api_support import ARRAY_API_RULES
    labels = sorted({_label(f) for case in T.CASES
                     for f in (case.covers if isinstance(case.covers, tuple) else (case.covers,))})
    numpy_labels = [x for x in labels if x.startswith("np.")]
    strict, torch = ARRAY_API_RULES["strict"], ARRAY_API_RULES["torch"]

    def names(xs):
        return ", ".join("`%s`" % x for x in xs) or "none"
    both = [x for x in numpy_labels if x in strict and x in torch]
    print("- NumPy functions whose rules run on both (%d): %s" % (len(both), names(both)))
    print("- on PyTorch tensors only: %s" % names([x for x in numpy_labels if x in torch and x not in strict]))
    print("- on array_api_strict arrays only: %s" % names([x for x in numpy_labels if x in strict and x not in torch]))
    refused = [x for x in numpy_labels if x not in strict and x not in torch]
    print("- NumPy-only there (refused on both, %d): %s" % (len(refused), names(refused)))


def main():
    if "--write-support" in sys.argv:
        return write_support()
    if "--docs" in sys.argv:
        return docs_lists()
    markdown = "--markdown" in sys.argv
    namespace = sys.argv[sys.argv.index("--namespace") + 1] if "--namespace" in sys.argv else "dask"
    by_rule = sweep(namespace, verbose=not markdown)
    good = kept(by_rule)
    bad = sorted(r for r in by_rule if r not in good)
    print()
    print("kept on %s (%d rules):" % (namespace, len(good)))
    print(", ".join(good))
    print()
    print("not kept on %s (%d rules):" % (namespace, len(bad)))
    for r in bad:
        rows = by_rule[r]
        print("- %s: %s" % (r, "; ".join("%s %s%s" % (n, o, (" (%s)" % w) if w else "")
                                        for n, o, w in rows if o not in ("kept", "n/a"))))


if __name__ == "__main__":
    main()
