"""Tangent's corpus, read from a checkout at run time: which function is
tested in which mode, with which argument values.

Tangent's tests (tests/conftest.py) parametrize every test that takes a
`func` argument over the functions of tests/functions.py whose parameter
names equal the test's other arguments (less motion, optimized,
preserve_result), minus conftest's `blacklisted` list, and parametrize the
arguments by name: a, b, c over ten scalars, n over 1..3, x over random
vectors of sizes 3, 5, 10, sqm over random 1x1 and 5x5 matrices; the
TensorFlow fixtures (t, t1, timage, mat1, ...) come from tfe_utils.py. This
module reproduces that selection by reading the test files' signatures
(`ast`), conftest's blacklist and test_reverse_mode.py's dedicated tests
(`from functions import ...`), whose argument values are built here as
those tests build them. test_hessian_vector_products.py's functions (its
`_test_hvp(func, ...)` calls) are read from that file.

"Tangent's selection" is what those tests run in each mode. "The whole
corpus" is every NumPy function of functions.py (and the HVP functions) in
every mode that applies, with arguments chosen by the same naming rule.
"""
import ast
import importlib.util
import itertools
import os
import sys
import types

import numpy as np

from . import tangent_shim

MODES = ("reverse", "forward", "second")
MODE_TEST_FILES = {
    "reverse": "test_reverse_mode.py",
    "forward": "test_forward_mode.py",
    "second": "test_reverse_over_reverse.py",
}
HVP_TEST_FILE = "test_hessian_vector_products.py"
# conftest.py: parameters of a test that are not function arguments
NOT_ARGUMENTS = ("func", "motion", "optimized", "preserve_result")
# conftest.py's parametrization by name (the values of pytest_generate_tests, default and --short)
SCALARS = [-2.0, -1.5, -1.0, -0.5, -0.1, 0.1, 0.5, 1.0, 1.5, 2.0]
SCALARS_SHORT = [2.0]
INTEGERS = [1, 2, 3]
INTEGERS_SHORT = [1]
VECTOR_SIZES = (3, 5, 10)
VECTOR_SIZES_SHORT = (3,)
SQUARE_SIZES = ((1, 1), (5, 5))
SQUARE_SIZES_SHORT = ((3, 3),)
NUMPY_FIXTURES = ("a", "b", "c", "n", "x", "sqm")
# the literal text of conftest.py these values were read from (checked at run time)
CONFTEST_LITERALS = ("-2., -1.5, -1., -0.5, -0.1, 0.1, 0.5, 1., 1.5, 2.", "[1] if short else [1, 2, 3]",
                     "((3,) if short else (3, 5, 10))", "(((3, 3),) if short else ((1, 1), (5, 5)))")
# parameter names beyond Tangent's naming rule, for the functions no parametrized test selects
# (used for "the whole corpus" only): how test_reverse_mode.py's dedicated tests build such values
EXTRA_PARAMETERS = {
    "abc_packed_in_tuple": "tuple of a, b, c (as test_unpacking_args_saxpy)",
    "val": "dict(a=a, b=b, c=c) (as test_dict_saxpy)",
    "p": "dict(i=dict(j=3.0, k=4.0)) (as test_nested_dict)",
    "i": "an index 0, 1, 2",
}
# functions whose argument is iterated although named `a` (blacklisted in conftest: `for i in a`)
ITERATED_A = ("listcomp",)


class Case:
    """One argument set of one function: `args` (a tuple, copied before each call), `wrt`
    (indices of the differentiated arguments), `label` (the values, short)."""

    def __init__(self, args, wrt, label):
        self.args, self.wrt, self.label = args, tuple(wrt), label


class Entry:
    """One function of the corpus and how each mode tests it."""

    def __init__(self, name, func, ag_func, source):
        self.name, self.func, self.ag_func, self.source = name, func, ag_func, source
        self.tests = {m: [] for m in MODES}    # Tangent's tests selecting it, per mode
        self.cases = None                      # list of Case (all modes)
        self.primary = 0                       # the argument of second-order derivatives (Tangent: 0)
        self.skip = {}                         # mode -> reason it is not measured
        self.reference = None                  # a reference gradient other than finite differences
        self.tf = False
        self.hvp_test = False                  # a function of test_hessian_vector_products.py

    def selected(self, mode):
        return bool(self.tests[mode])


def _signatures(path):
    """{test name: argument names} of the module-level tests taking `func`."""
    tree = ast.parse(open(path).read(), path)
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            names = [a.arg for a in node.args.args]
            if "func" in names:
                out[node.name] = tuple(n for n in names if n not in NOT_ARGUMENTS)
    return out


def _dedicated(path):
    """Names test_reverse_mode.py imports from functions (its dedicated tests), with the test using each."""
    tree = ast.parse(open(path).read(), path)
    names = [a.name for node in tree.body if isinstance(node, ast.ImportFrom) and node.module == "functions"
             for a in node.names]
    tests = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            for name in names:
                if name in used:
                    tests.setdefault(name, node.name)
    return tests


def _blacklist(path):
    tree = ast.parse(open(path).read(), path)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "blacklisted" for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise ValueError("no `blacklisted = [...]` in %s" % path)


def load_functions(tests_dir):
    """Import tests/functions.py from the checkout (TensorFlow absent: its `tf` is None), with the
    shim as `tangent` during the import. Returns the module."""
    path = os.path.join(tests_dir, "functions.py")
    saved = sys.modules.get("tangent")
    sys.modules["tangent"] = tangent_shim
    try:
        spec = importlib.util.spec_from_file_location("tangent_tests_functions", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    finally:
        if saved is None:
            sys.modules.pop("tangent", None)
        else:
            sys.modules["tangent"] = saved
    return module


def load_hvp_functions(tests_dir):
    """The functions test_hessian_vector_products.py passes to `_test_hvp`, and the module-level
    functions they call, compiled from that file (its line numbers kept, so their source is found)
    in a namespace whose np is NumPy. Returns ({name: function}, [tested names])."""
    path = os.path.join(tests_dir, HVP_TEST_FILE)
    if not os.path.exists(path):
        return {}, []
    tree = ast.parse(open(path).read(), path)
    tested = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "_test_hvp" and node.args:
            if isinstance(node.args[0], ast.Name) and node.args[0].id not in tested:
                tested.append(node.args[0].id)
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and not n.decorator_list
            and not n.name.startswith(("test_", "_test"))
            and not any(a.arg == "tf" for a in n.args.args)]
    namespace = {"np": np, "__name__": "tangent_tests_hvp"}
    exec(compile(ast.Module(body=defs, type_ignores=[]), path, "exec"), namespace)
    return {n.name: namespace[n.name] for n in defs}, tested


def autograd_twins(funcs):
    """Copies of `funcs` (functions sharing globals) whose globals are a copy of theirs with np
    rebound to autograd.numpy, the functions they call rebound too. None without autograd."""
    try:
        import autograd.numpy as anp
    except ImportError:
        return None
    twins, spaces = {}, {}
    for name, f in funcs.items():
        g = f.__globals__
        space = spaces.get(id(g))
        if space is None:
            space = spaces[id(g)] = dict(g)
            space["np"] = anp
            for key, value in g.items():
                if isinstance(value, types.FunctionType) and value.__globals__ is g:
                    space[key] = types.FunctionType(value.__code__, space, value.__name__, value.__defaults__,
                                                    value.__closure__)
        twins[name] = space[name]
    return twins


def _uses_tf(func, module):
    """Whether the function reaches TensorFlow (reads the global `tf`, or calls a function that does)."""
    seen = set()

    def walk(f):
        if f in seen:
            return False
        seen.add(f)
        names = f.__code__.co_names
        if "tf" in names:
            return True
        return any(isinstance(getattr(module, n, None), types.FunctionType) and walk(getattr(module, n))
                   for n in names)
    return walk(func)


def _scalar_label(values):
    return ", ".join("%s=%g" % kv if isinstance(kv[1], float) else "%s=%s" % kv for kv in values)


def argument_cases(names, rng, short, iterated=False):
    """Cases for parameters named by Tangent's rule (and EXTRA_PARAMETERS): the product of each
    name's values, as pytest's stacked parametrizations give."""
    scalars = SCALARS_SHORT if short else SCALARS
    integers = INTEGERS_SHORT if short else INTEGERS
    per_name = []
    for name in names:
        if name in ("a", "b", "c") and not iterated:
            per_name.append([(float(s), "%s=%g" % (name, s)) for s in scalars])
        elif name == "n":
            per_name.append([(k, "n=%d" % k) for k in integers])
        elif name == "i":
            per_name.append([(k, "i=%d" % k) for k in (0, 1, 2)])
        elif name == "x" or (name == "a" and iterated):
            per_name.append([(rng.randn(k), "%s=randn(%d)" % (name, k))
                             for k in (VECTOR_SIZES_SHORT if short else VECTOR_SIZES)])
        elif name == "sqm":
            per_name.append([(rng.randn(*s), "sqm=randn%s" % (s,))
                             for s in (SQUARE_SIZES_SHORT if short else SQUARE_SIZES)])
        elif name == "abc_packed_in_tuple":
            per_name.append([((a, b, c), "(%g, %g, %g)" % (a, b, c))
                             for a, b, c in itertools.product(scalars, repeat=3)])
        elif name == "val":
            per_name.append([(dict(a=a, b=b, c=c), "dict(a=%g, b=%g, c=%g)" % (a, b, c))
                             for a, b, c in itertools.product(scalars, repeat=3)])
        elif name == "p":
            per_name.append([(dict(i=dict(j=3.0, k=4.0)), "dict(i=dict(j=3, k=4))")])
        else:
            return None
    cases = []
    for combo in itertools.product(*per_name):
        args = tuple(v for v, _ in combo)
        wrt = tuple(k for k, v in enumerate(args) if not isinstance(v, (int, bool)))     # n and i: counts
        cases.append(Case(args, wrt, ", ".join(lbl for _, lbl in combo)))
    return cases


# test_reverse_mode.py's dedicated tests: the argument values and wrt each builds
def _logistic_regression(rng, short):
    w, b, input_ = rng.randn(3, 5), rng.randn(5), rng.rand(3)
    label = np.zeros(5)
    label[1] = 1
    return [Case((input_, label, w, b), (2, 3), "input=rand(3), label=e1, W=randn(3, 5), b=randn(5)")]


def _rnn(rng, short):
    w, inputs = rng.randn(2, 3), rng.randn(3, 2)
    return [Case((inputs, w), (0, 1), "inputs=randn(3, 2), W=randn(2, 3)")]


def _bilinear(rng, short):
    d = 3
    x, h, u, w, b = rng.randn(1, d), rng.randn(1, d), rng.randn(d, d), rng.randn(d, d), rng.randn(1, d)
    return [Case((x, h, u, w, b), (0,), "x, h: randn(1, 3), U, W: randn(3, 3), b: randn(1, 3)")]


def _abc_product(wrap):
    def build(rng, short):
        scalars = SCALARS_SHORT if short else SCALARS
        return [Case((wrap(a, b, c),), (0,), "a=%g, b=%g, c=%g" % (a, b, c))
                for a, b, c in itertools.product(scalars, repeat=3)]
    return build


def _nested_dict(rng, short):
    return [Case((dict(i=dict(j=3.0, k=4.0)),), (0,), "p=dict(i=dict(j=3, k=4))")]


def _scalars_a(rng, short):
    return [Case((float(a),), (0,), "a=%g" % a) for a in (SCALARS_SHORT if short else SCALARS)]


DEDICATED = {
    "logistic_regression": (_logistic_regression, 2),
    "rnn": (_rnn, 0),
    "bilinear": (_bilinear, 0),
    "inlining_contextmanager": (_scalars_a, 0),
    "dict_saxpy": (_abc_product(lambda a, b, c: dict(a=a, b=b, c=c)), 0),
    "unpacking_args_saxpy": (_abc_product(lambda a, b, c: (a, b, c)), 0),
    "nested_dict": (_nested_dict, 0),
}
REFERENCES = {
    # test_inlining_contextmanager asserts Tangent's gradient `2.9 * a**2`: the block scales the
    # adjoint of a accumulated after it (from c = b * a: b = a**2) by 0.9, then b = a * a adds 2 a**2
    "inlining_contextmanager": ("Tangent's test asserts 2.9 * a**2 (the with block rescales a's adjoint)",
                                lambda a: 2.9 * a ** 2),
}
# reverse-only constructs: no forward or second-order meaning to compare with finite differences
REVERSE_ONLY = {
    "inlining_contextmanager": "insert_grad_of acts on the reverse sweep only (Tangent tests it in reverse mode)",
}


class Corpus:
    def __init__(self, entries, notes, module, tests_dir):
        self.entries, self.notes, self.module, self.tests_dir = entries, notes, module, tests_dir

    def names(self):
        return [e.name for e in self.entries]


def load(src, short=False, seed=0, only=None):
    """The corpus of the checkout at `src`: Entries with their cases, Tangent's test selection per
    mode, and what is skipped and why. `only`: restrict to these function names."""
    tests_dir = os.path.join(src, "tests")
    if not os.path.isfile(os.path.join(tests_dir, "functions.py")):
        raise FileNotFoundError("%s has no tests/functions.py: pass a checkout of google/tangent" % src)
    notes = []
    conftest = os.path.join(tests_dir, "conftest.py")
    conftest_text = open(conftest).read() if os.path.exists(conftest) else ""
    missing = [lit for lit in CONFTEST_LITERALS if lit not in conftest_text]
    if missing:
        notes.append("conftest.py's argument values differ from the ones this harness uses (%s)" % missing)
    blacklisted = _blacklist(conftest) if conftest_text else []
    module = load_functions(tests_dir)
    funcs = {k: v for k, v in vars(module).items() if callable(v) and isinstance(v, types.FunctionType)}
    # conftest: funcs = [f for f in functions.__dict__.values() if callable(f)]; whitelist = not blacklisted
    whitelist = [f for f in vars(module).values() if callable(f) and getattr(f, "__name__", None) not in blacklisted]
    signatures = {m: _signatures(os.path.join(tests_dir, MODE_TEST_FILES[m]))
                  for m in MODES if os.path.exists(os.path.join(tests_dir, MODE_TEST_FILES[m]))}
    dedicated = _dedicated(os.path.join(tests_dir, MODE_TEST_FILES["reverse"]))
    hvp_funcs, hvp_tested = load_hvp_functions(tests_dir)
    twins = autograd_twins(funcs) or {}
    hvp_twins = autograd_twins(hvp_funcs) or {}
    rng = np.random.RandomState(seed)
    entries = []

    def add(name, func, ag_func, source):
        e = Entry(name, func, ag_func, source)
        entries.append(e)
        return e

    for name, f in funcs.items():
        if f.__module__ != module.__name__ or name == "insert_grad_of":
            continue
        e = add(name, f, twins.get(name), "functions.py")
        e.tf = _uses_tf(f, module)
        params = f.__code__.co_varnames[:f.__code__.co_argcount]
        for mode, sigs in signatures.items():
            for test, args in sigs.items():
                if args and f in whitelist and params == args:
                    e.tests[mode].append(test)
        if name in dedicated:
            e.tests["reverse"].append(dedicated[name])
    for name in hvp_tested:
        if name in hvp_funcs:
            e = add(name, hvp_funcs[name], hvp_twins.get(name), HVP_TEST_FILE)
            e.tests["second"].append("test_hvp_%s" % name.replace("f_", ""))
            e.hvp_test = True
    for e in entries:
        if only and e.name not in only:
            e.skip = {m: "not requested (--funcs)" for m in MODES}
            continue
        if e.tf:
            reason = "TensorFlow-only: calls tf.* ops on tf.Tensor arguments (TensorFlow is not installed)"
            e.skip = {m: reason for m in MODES}
            continue
        params = e.func.__code__.co_varnames[:e.func.__code__.co_argcount]
        if e.name in DEDICATED:
            build, e.primary = DEDICATED[e.name]
            e.cases = build(rng, short)
        elif e.source == HVP_TEST_FILE:
            # _test_hvp: np.random.seed(0); a = normal(size=(300,)) (float32 there; float64 here); v = a
            a = np.random.RandomState(0).normal(scale=1, size=(300,))
            e.cases = [Case((a,), (0,), "a=normal(size=300), v=a")]
        else:
            e.cases = argument_cases(params, rng, short, iterated=e.name in ITERATED_A)
            if e.cases is None:
                e.skip = {m: "parameters %s: no argument rule" % (params,) for m in MODES}
                continue
        if e.name in REFERENCES:
            e.reference = REFERENCES[e.name]
        if e.name in REVERSE_ONLY:
            e.skip["forward"] = e.skip["second"] = REVERSE_ONLY[e.name]
    return Corpus(entries, notes, module, tests_dir)
