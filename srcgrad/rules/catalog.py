"""The catalogue of supported functions, generated from the rule registry.

    python3 -m srcgrad.rules.catalog > docs/supported.md

prints one markdown table per family (the primitive's qualified name and
other public spellings of the same object, the rule template, the
parameters that receive a cotangent, and the first line of the template's
docstring, with the rest of its opening paragraph), then the functions
registered as non-differentiable. A rule's family is where its template is
defined: the module's path below srcgrad/rules/ (`family`).
tests/rules/test_supported_doc.py fails when docs/supported.md differs from this
output. (Importing this module imports srcgrad, which registers every rule,
scipy.special's when SciPy is installed.)
"""
import importlib
import inspect
import sys

from . import registry

REGENERATE = "python3 -m srcgrad.rules.catalog > docs/supported.md"

# Where public spellings are looked up (and aliases found), in this order.
_NAMESPACES = ["numpy", "numpy.linalg", "numpy.fft", "scipy.special", "scipy.linalg", "scipy.stats",
               "scipy.integrate", "operator", "builtins", "math"]


def _modules():
    found = []
    for name in _NAMESPACES:
        try:
            found.append((name, importlib.import_module(name)))
        except ImportError:
            pass
    return found


def _spellings(obj, modules):
    """Every public `module.name` bound to `obj` in the namespaces above; the
    object's own `__module__.__qualname__` when none is. A bound method of a
    module-level object (scipy.stats.norm.logpdf) is named through that
    object."""
    owner = getattr(obj, "__self__", None)
    if type(owner).__name__ == "ufunc" and type(owner).__module__ == "numpy":   # np.add.reduce: a bound ufunc method
        return ["%s.%s" % (n, obj.__name__) for n in _spellings(owner, modules)]
    if inspect.ismethod(obj) and owner is not None:
        owners = [n for n in _spellings(owner, modules) if "." in n and not n.startswith("<")]
        if owners and "%s.%s" % (owner.__module__, type(owner).__qualname__) != owners[0]:
            return ["%s.%s" % (n, obj.__name__) for n in owners]
    names = []
    for modname, mod in modules:
        for attr, value in vars(mod).items():
            if value is obj and not attr.startswith("_"):
                names.append("%s.%s" % (modname, attr))
    own_mod = getattr(obj, "__module__", None)
    own = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if own_mod and own:
        qual = "%s.%s" % (own_mod, own)
        if qual in names:                       # the object's own name first
            names.remove(qual)
            names.insert(0, qual)
        elif not names:
            names.append(qual)
    if not names:
        names.append(repr(obj))
    return names


def family(rule):
    """The family heading a rule is listed under: the path of its template's
    module below srcgrad.rules (`numpy.elementwise`, `scipy.stats`,
    `python.containers`), or the module's full name for a rule registered
    from elsewhere (`srcgrad.integrate`)."""
    module = rule.template.__module__
    prefix = registry.__name__.rsplit(".", 1)[0] + "."   # srcgrad.rules.
    return module[len(prefix):] if module.startswith(prefix) else module


def _family_order(name):
    """The rules of a namespace (numpy, python, scipy) first, in path order;
    then the single modules (generated_code) and the rules from elsewhere."""
    return (name.count(".") == 0, name.startswith("srcgrad"), name)


def _first_line(doc):
    """The docstring's first line, continued to the end of its paragraph
    (docstrings wrap their opening sentence)."""
    if not doc:
        return ""
    para = inspect.cleandoc(doc).split("\n\n")[0]
    return " ".join(line.strip() for line in para.splitlines())


def _cell(text):
    return text.replace("|", "\\|")


def render():
    """The markdown document, as a string."""
    modules = _modules()
    rules = registry.adjoint_rules()
    by_family = {}
    for prim, rule in rules.items():
        names = _spellings(prim, modules)
        by_family.setdefault(family(rule), []).append((names[0].lower(), names, rule))
    families = sorted(by_family, key=_family_order)

    out = ["# Supported functions", "",
           "Generated from srcgrad's rule registry by `%s`; do not edit by hand "
           "(tests/rules/test_supported_doc.py checks it is current)." % REGENERATE, "",
           "%d primitives have adjoint rules; %d functions are registered as "
           "non-differentiable. Differentiable parameters are those the rule gives a "
           "cotangent (`d[p] = ...`). Complex inputs follow TensorFlow's convention "
           "(README, Rules)." % (len(rules), len(registry._NONDIFF)), ""]
    for fam in families:
        rows = sorted(by_family[fam], key=lambda r: r[0])
        out += ["## %s (%d)" % (fam, len(rows)), "",
                "| primitive | also spelled | rule | differentiable | identity |",
                "|---|---|---|---|---|"]
        for _, names, rule in rows:
            out.append("| `%s` | %s | `%s` | %s | %s |" % (
                names[0], ", ".join("`%s`" % n for n in names[1:]), rule.name,
                ", ".join("`%s`" % p for p in rule.diff_params),
                _cell(_first_line(rule.doc))))
        out.append("")

    nondiff = sorted({_spellings(f, modules)[0] for f in registry._NONDIFF}, key=str.lower)
    out += ["## Non-differentiable (%d)" % len(nondiff), "",
            "Their outputs carry no derivative (integer, boolean, shape or "
            "piecewise-constant results):", ""]
    by_module = {}
    for name in nondiff:
        mod, _, attr = name.rpartition(".")
        by_module.setdefault(mod, []).append(attr)
    out += ["| module | functions |", "|---|---|"]
    for mod in sorted(by_module, key=str.lower):
        out.append("| `%s` | %s |" % (mod, ", ".join("`%s`" % a for a in by_module[mod])))
    out.append("")
    return "\n".join(out)


def main():
    sys.stdout.write(render())


if __name__ == "__main__":
    main()
