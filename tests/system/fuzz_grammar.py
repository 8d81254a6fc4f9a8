"""The grammar and the checks of the differential fuzzer (tests/system/test_fuzz.py).

A program is a module (written to a real file: srcgrad compiles from source)
with one differentiated function `f(x)` (x of shape (3,)), or `f(p)` (p a
list or tuple of 3 floats) for the list/tuple categories, and module-level
state the program owns: a generator `RS` (np.random.RandomState), a log
`LOG`, an object `BOX` with a function-valued attribute, a global function
`GACT`, a dict of functions `ACTS`, a global float `SCALE`, and helpers (pure,
drawing, printing, logging, mutating their arguments).

The body of `f` mixes baseline statements (bounded arithmetic and NumPy
elementwise ops on `a`, `b`, `x`; `if` on data; `for` loops over fresh
names; pure helper calls; nested to depth 2) with statements of ONE category
(`CATEGORIES`), at least one of them. Values stay bounded (tanh, sin, convex
combinations), so central differences are well conditioned.

`check_program` runs a program and compares srcgrad with two oracles:

(a) the program executed as plain Python: the value, and the side effects
    (the generator state, the printed text, the log) after ONE derivative
    call (sg.grad, sg.jvp, @sg.function in a GradientTape, the second-order
    call) equal those after one plain call; the caller's input is not
    mutated;
(b) central differences, the generator reseeded before every evaluation: the
    gradient (sg.grad, the tape) and the directional derivative (sg.jvp) at
    first order; at second order sg.hvp or sg.hessian (times v) against
    central differences of the first derivative (sg.grad) along v.

For the rebinding categories, the program is then changed (`prog.rebinds`,
executed in the module) and the same sg.grad object, the same sg.function
object (in a tape) and a new sg.grad must give the changed program's
derivative.

Central differences are taken at two steps (1e-6 and 1e-4 for the first
derivative, 1e-5 and 1e-4 for the second); when they disagree (a branch or
break flips within the step) the program is ill-conditioned and `Unstable`
is raised (the hypothesis test `assume`s it away). An
sg.UnsupportedSyntaxError is acceptable only for the mutation categories
(`MUTATION`), where `check_program` returns "refused"; anywhere else it
propagates and fails the test.

Programs are drawn through a small interface (`int`, `choice`, `coin`) with
two implementations: `HypothesisDraw` (for @given, so hypothesis can shrink)
and `RandomDraw(seed)` (the fixed-seed programs of the known-broken tests).
"""
import contextlib
import dataclasses
import importlib.util
import io
import itertools
import random

import numpy as np
from hypothesis import strategies as st

import srcgrad as sg
from gradcheck import numerical_grad
from system_support import gen_state

RTOL, ATOL = 1e-5, 1e-6           # first order against central differences
HVP_RTOL, HVP_ATOL = 1e-4, 1e-5   # second order against differences of the gradient
VALUE_RTOL = 1e-9                 # srcgrad's value against the plain call (same ops, maybe reordered)
GEN_SEED = 1234                   # the program's generator is reseeded to this before every evaluation


class Unstable(Exception):
    """Central differences at two steps disagree: a kink within the step."""


# ------------------------------------------------------------------ drawing

class _Fresh:
    def fresh(self, prefix):
        """A name not used before in this program."""
        self.names = getattr(self, "names", 0) + 1
        return "%s%d" % (prefix, self.names)


class RandomDraw(_Fresh):
    def __init__(self, seed):
        self.r = random.Random(seed)

    def int(self, lo, hi):
        return self.r.randint(lo, hi)

    def choice(self, seq):
        seq = list(seq)
        return seq[self.r.randrange(len(seq))]

    def coin(self):
        return self.r.random() < 0.5


class HypothesisDraw(_Fresh):
    def __init__(self, draw):
        self.draw = draw

    def int(self, lo, hi):
        return self.draw(st.integers(lo, hi))

    def choice(self, seq):
        return self.draw(st.sampled_from(list(seq)))

    def coin(self):
        return self.draw(st.booleans())


# ------------------------------------------------------------------ the module around f

PRELUDE = '''import numpy as np

RS = np.random.RandomState(0)
LOG = []
MASK = np.array([True, False, True])


class Box:
    def __init__(self):
        self.act = np.tanh

    def method(self, v):
        return np.tanh(v * 1.1)


BOX = Box()
GACT = np.tanh
ACTS = {"k": np.tanh}
SCALE = 0.7


def _other_method(self, v):
    return np.sin(v * 1.1)


def h_pure(v, scale=1.0):
    w = np.tanh(v * scale)
    return w * 0.5 + v * 0.25


def h_rand(v):
    return v + 0.3 * RS.randn(3)


def h_dropout(v):
    keep = RS.rand(3) > 0.3
    return v * keep / 0.7


def h_print(v):
    print("h_print called")
    return np.tanh(v) * 0.9


def h_log(v):
    LOG.append("h_log")
    return np.sin(v) * 0.9


def h_append(terms, v):
    terms.append(np.tanh(v))


def h_write(arr, v):
    arr[1] = np.sin(np.sum(v))


def h_iadd(arr, v):
    arr += np.tanh(v) * 0.5

'''

UNARY = ["np.sin({0})", "np.tanh({0})", "np.cos({0})", "({0} * 0.5)", "np.exp(np.tanh({0}))",
         "{0} / (2.0 + np.tanh({0}))", "np.mean({0}) + {0} * 0.5", "np.sqrt({0} * {0} + 1.0) - 1.0", "-{0}"]
BINARY = ["np.tanh({} + {})", "np.sin({} - {})", "np.tanh({} * {})", "{} * 0.9 + {} * 0.1"]
VARS = ("x", "a", "b")
TARGETS = ("a", "b")
THRESHOLDS = ("-0.5", "0.0", "0.5")


def expr(d):
    u, v = d.choice(VARS), d.choice(VARS)
    kind = d.int(0, 2)
    if kind == 0:
        return d.choice(UNARY).format(u)
    if kind == 1:
        return d.choice(BINARY).format(u, v)
    return d.choice(UNARY).format("(%s)" % d.choice(BINARY).format(u, v))


# ------------------------------------------------------------------ categories

def _t(d):
    return d.choice(TARGETS)


def _u(d):
    return d.choice(VARS)


def cat_loop_read_after(d, ind):
    """A loop variable (a name no other loop uses) read after its loop."""
    n, t, u, t2, u2, j = d.int(1, 3), _t(d), _u(d), _t(d), _u(d), d.fresh("j")
    return ["%sfor %s in range(%d):" % (ind, j, n),
            "%s    %s = np.tanh(%s * x[%s] + %s)" % (ind, t, t, j, u),
            "%s%s = np.tanh(%s + x[%s] * %s)" % (ind, t2, t2, j, u2)]


def cat_loop_sequential_reuse(d, ind):
    """A loop variable read after its loop, then the name reused by a second
    loop (no break): beyond the issue's list, found by this fuzzer."""
    t, u, t2, t3, u3 = _t(d), _u(d), _t(d), _t(d), _u(d)
    lines = ["%sfor j in range(%d):" % (ind, d.int(1, 3)),
             "%s    %s = np.tanh(%s * x[j] + %s)" % (ind, t, t, u),
             "%s%s = np.tanh(%s + x[j])" % (ind, t2, t2),
             "%sfor j in range(%d):" % (ind, d.int(1, 3)),
             "%s    %s = np.tanh(%s + x[j] * %s)" % (ind, t3, t3, u3)]
    if d.coin():
        lines.append("%s%s = np.tanh(%s * x[j])" % (ind, t2, t2))
    return lines


def cat_loop_nested(d, ind):
    """Nested loops: the inner loop reuses the outer loop's name, or its own
    variable is read after it, inside the outer loop."""
    n1, n2 = d.int(1, 3), d.int(1, 3)
    inner = d.choice(["i", "m"])
    t, u, t2, u2 = _t(d), _u(d), _t(d), _u(d)
    lines = ["%sfor i in range(%d):" % (ind, n1)]
    if d.coin():
        lines.append("%s    %s = np.tanh(%s + x[i] * 0.5)" % (ind, t2, t2))
    lines += ["%s    for %s in range(%d):" % (ind, inner, n2),
              "%s        %s = np.tanh(%s + x[%s] * %s)" % (ind, t, t, inner, u),
              "%s    %s = np.tanh(%s * x[%s] + %s)" % (ind, t2, t2, d.choice(["i", inner]), u2)]
    return lines


def cat_loop_reassigned(d, ind):
    """The loop variable is reassigned in the body."""
    t, u, t2 = _t(d), _u(d), _t(d)
    lines = ["%sfor j in range(3):" % ind,
             "%s    j = %s" % (ind, d.choice(["2 - j", "(j + 1) % 3", "(j + 2) % 3"])),
             "%s    %s = np.tanh(%s * x[j] + %s)" % (ind, t, t, u)]
    if d.coin():
        lines.append("%s%s = np.tanh(%s + x[j])" % (ind, t2, t2))
    return lines


def _breaking_loop(d, ind, exit_stmt):
    t, u = _t(d), _u(d)
    return ["%sfor i in range(3):" % ind,
            "%s    %s = np.tanh(%s + x[i] * %s)" % (ind, t, t, u),
            "%s    if np.sum(%s) > %s:" % (ind, t, d.choice(THRESHOLDS + ("1.0",))),
            "%s        %s" % (ind, exit_stmt)]


def cat_break_read(d, ind):
    """A loop left by break; its variable read after it."""
    t2, u2 = _t(d), _u(d)
    return _breaking_loop(d, ind, "break") + ["%s%s = np.tanh(%s * x[i] + %s)" % (ind, t2, t2, u2)]


def cat_early_return(d, ind):
    """A return inside a loop."""
    return _breaking_loop(d, ind, "return np.sum(%s * x + b)" % _t(d))


def cat_break_then_reuse(d, ind):
    """A break or an early return in a first loop, then a second loop reusing
    the name, the variable read between or after them."""
    exit_stmt = d.choice(["break", "return np.sum(a * x + b)"])
    lines = _breaking_loop(d, ind, exit_stmt)
    if d.coin():
        t, u = _t(d), _u(d)
        lines.append("%s%s = np.tanh(%s * x[i] + %s)" % (ind, t, t, u))
    t3, u3 = _t(d), _u(d)
    lines += ["%sfor i in range(%d):" % (ind, d.int(1, 3)),
              "%s    %s = np.tanh(%s + x[i] * %s)" % (ind, t3, t3, u3)]
    if d.coin():
        t4 = _t(d)
        lines.append("%s%s = np.tanh(%s + x[i])" % (ind, t4, t4))
    return lines


def cat_inplace_out(d, ind):
    """NumPy calls writing into an array: out=, positional out, copyto, put,
    putmask, place, ufunc.at."""
    t, u, w = _t(d), _u(d), _u(d)
    form = d.choice([
        "np.tanh({u}, out={t})", "np.sin({u}, {t})", "np.multiply({u}, {w}, out={t})",
        "np.negative({u}, out={t})", "np.copyto({t}, np.sin({u}))", "np.put({t}, [0, 2], {u}[:2] * 0.5)",
        "np.putmask({t}, MASK, np.cos({u}))", "np.place({t}, MASK, np.sin({u})[:2])",
        "np.add.at({t}, [0, 0, 2], {u} * 0.5)"])
    return [ind + form.format(t=t, u=u, w=w)]


def cat_views(d, ind):
    """Writes through views (slices, reversal, reshape, .flat)."""
    t, u = _t(d), _u(d)
    form = d.choice([
        ["vw = {t}[:2]", "vw[0] = np.tanh({u}[1])"],
        ["vw = {t}[::-1]", "vw[1] = np.sin({u}[0])"],
        ["vw = {t}.reshape(3, 1)", "vw[2, 0] = np.tanh({u}[0])"],
        ["{t}.flat[1] = np.sin({u}[0])"]])
    return [ind + line.format(t=t, u=u) for line in form]


def cat_split_view(d, ind):
    """A write into a piece returned by np.split (a view)."""
    t, u = _t(d), _u(d)
    return [ind + "p0, p1, p2 = np.split(%s, 3)" % t, ind + "p%d[0] = np.sin(%s[2])" % (d.int(0, 2), u)]


def cat_duplicate_index(d, ind):
    """Element assignment with repeated indices."""
    t, u = _t(d), _u(d)
    form = d.choice(["{t}[[0, 0]] = {u}[1:] * 0.5", "{t}[[0, 0]] += {u}[:2] * 0.5",
                     "{t}[[1, 1, 2]] = np.sin({u})", "{t}[[2, 0, 2]] += np.tanh({u})"])
    return [ind + form.format(t=t, u=u)]


def cat_helper_mutates_args(d, ind):
    """Helpers appending to a list argument or writing into an array argument."""
    t, u, w = _t(d), _u(d), _u(d)
    form = d.choice([
        ["lst = [{u} * 1.0]", "h_append(lst, {w})", "{t} = np.tanh(lst[0] + lst[-1])"],
        ["lst = [{u} * 1.0, {w} * 0.5]", "for q in lst:", "    if len(lst) < 4:", "        lst.append(np.sin(q))",
         "{t} = np.tanh(np.sum(np.stack(lst), axis=0))"],
        ["h_write({t}, {u})"],
        ["h_iadd({t}, {u})"]])
    return [ind + line.format(t=t, u=u, w=w) for line in form]


def cat_helper_random(d, ind):
    """A helper drawing from the program's generator."""
    return ["%s%s = %s(%s)" % (ind, _t(d), d.choice(["h_rand", "h_dropout"]), _u(d))]


def cat_inline_random(d, ind):
    """Draws from the program's generator in f itself (no helper)."""
    t = _t(d)
    form = d.choice(["{t} = {t} + 0.3 * RS.randn(3)", "{t} = {t} * (RS.rand(3) > 0.3) / 0.7"])
    return [ind + form.format(t=t)]


def cat_helper_print(d, ind):
    return ["%s%s = h_print(%s)" % (ind, _t(d), _u(d))]


def cat_helper_log(d, ind):
    return ["%s%s = h_log(%s)" % (ind, _t(d), _u(d))]


def cat_list_elementwise(d, ind):
    """A list/tuple argument read by element or iterated."""
    t, u = _t(d), _u(d)
    form = d.choice([["{t} = np.tanh({t} + p[%d] * {u})" % d.int(0, 2)],
                     ["for q in p:", "    {t} = np.tanh({t} + q * {u})"],
                     ["{t} = {t} * np.tanh(p[0] * p[2])"]])
    return [ind + line.format(t=t, u=u) for line in form]


def cat_list_whole(d, ind):
    """A list/tuple argument passed whole to a NumPy function."""
    t = _t(d)
    form = d.choice(["{t} = {t} * np.tanh(np.sum(np.sin(p)))", "{t} = {t} + 0.1 * np.dot(p, p)",
                     "{t} = {t} * np.prod(np.tanh(p))"])
    return [ind + form.format(t=t)]


def cat_rebind_value(d, ind):
    """A global float, rebound after compiling."""
    return ["%s%s = np.tanh(%s * SCALE)" % (ind, _t(d), _u(d))]


def cat_rebind_function(d, ind):
    """A function-valued attribute, global, dict entry or method, rebound after compiling."""
    t, u = _t(d), _u(d)
    form = d.choice(["{t} = BOX.act({u} * 0.7)", "{t} = GACT({u}) * 0.9", "{t} = ACTS['k']({u} + 0.1)",
                     "{t} = BOX.method({u})"])
    return [ind + form.format(t=t, u=u)]


@dataclasses.dataclass(frozen=True)
class Category:
    statement: object                  # (draw, indent) -> lines, or None (baseline)
    mutation: bool = False             # may srcgrad refuse it (sg.UnsupportedSyntaxError)?
    sequence_argument: bool = False    # f takes a list/tuple p
    rebinds: tuple = ()                # statements run in the module after compiling
    nestable: bool = True              # may it appear inside baseline if/for blocks?


CATEGORIES = {
    "baseline": Category(None),
    "loop_read_after": Category(cat_loop_read_after, nestable=False),
    "loop_sequential_reuse": Category(cat_loop_sequential_reuse),
    "loop_nested": Category(cat_loop_nested),
    "loop_reassigned": Category(cat_loop_reassigned),
    "break_read": Category(cat_break_read),
    "early_return": Category(cat_early_return),
    "break_then_reuse": Category(cat_break_then_reuse),
    "inplace_out": Category(cat_inplace_out, mutation=True),
    "views": Category(cat_views, mutation=True),
    "split_view": Category(cat_split_view, mutation=True),
    "duplicate_index": Category(cat_duplicate_index, mutation=True),
    "helper_mutates_args": Category(cat_helper_mutates_args, mutation=True),
    "helper_random": Category(cat_helper_random),
    "inline_random": Category(cat_inline_random),
    "helper_print": Category(cat_helper_print),
    "helper_log": Category(cat_helper_log),
    "list_elementwise": Category(cat_list_elementwise, sequence_argument=True),
    "list_whole": Category(cat_list_whole, sequence_argument=True),
    "rebind_value": Category(cat_rebind_value, rebinds=("SCALE = 1.3",)),
    "rebind_function": Category(cat_rebind_function, rebinds=(
        "BOX.act = np.sin", "GACT = np.sin", "ACTS['k'] = np.sin", "Box.method = _other_method")),
}
MUTATION = {name for name, c in CATEGORIES.items() if c.mutation}


# ------------------------------------------------------------------ programs

@dataclasses.dataclass
class Program:
    category: str
    body: str              # `def f...` (the module is PRELUDE + body)
    arg_kind: str          # "array", "list" or "tuple"
    x: np.ndarray
    v: np.ndarray
    second: str            # "", "hvp" or "hessian"

    @property
    def source(self):
        return PRELUDE + "\n" + self.body

    def pack(self, values):
        values = np.asarray(values, dtype=np.float64)
        if self.arg_kind == "array":
            return values.copy()
        seq = [float(e) for e in values]
        return seq if self.arg_kind == "list" else tuple(seq)

    def __repr__(self):
        return "Program(%s, %s, x=%r, v=%r, second=%r), with fuzz_grammar.PRELUDE:\n%s" % (
            self.category, self.arg_kind, self.x.tolist(), self.v.tolist(), self.second, self.body)


@dataclasses.dataclass(frozen=True)
class Shape:
    """How big programs get: nesting depth of baseline if/for blocks, and the
    second-order check drawn per program ("" = first order only)."""
    max_depth: int = 1
    second_order: tuple = ("", "", "", "", "", "", "hvp", "hessian")


SMALL = Shape()                                                  # the default run and the fixed-seed programs
LARGE = Shape(max_depth=2, second_order=("", "hvp", "hessian"))  # --fuzz


def base_statement(d, ind, depth, category, shape):
    kind = d.int(0, 5 if depth < shape.max_depth else 1)
    if kind <= 1:
        return ["%s%s = %s" % (ind, _t(d), expr(d))]
    if kind == 2:
        lines = ["%sif np.sum(%s) > %s:" % (ind, _u(d), d.choice(THRESHOLDS))]
        lines += block(d, ind + "    ", depth + 1, category, shape)
        if d.coin():
            lines.append("%selse:" % ind)
            lines += block(d, ind + "    ", depth + 1, category, shape)
        return lines
    if kind == 3:
        k = "k%d" % depth
        t, u = _t(d), _u(d)
        lines = ["%sfor %s in range(%d):" % (ind, k, d.int(1, 3)),
                 "%s    %s = np.tanh(%s + x[%s %% 3] * %s)" % (ind, t, t, k, u)]
        return lines + block(d, ind + "    ", depth + 1, category, shape)
    if kind == 4:
        return ["%s%s = h_pure(%s, scale=%s)" % (ind, _t(d), _u(d), d.choice(["0.5", "2.0"]))]
    return ["%s%s = %s" % (ind, _t(d), expr(d))]


def block(d, ind, depth, category, shape, counter=None):
    cat = CATEGORIES[category]
    lines = []
    for _ in range(d.int(1, 3 if depth == 0 else 2)):
        if cat.statement is not None and (depth == 0 or cat.nestable) and d.coin():
            lines += cat.statement(d, ind)
            if counter is not None:
                counter.append(1)
        else:
            lines += base_statement(d, ind, depth, category, shape)
    return lines


def make_program(d, categories, shape=SMALL):
    category = d.choice(sorted(categories))
    cat = CATEGORIES[category]
    placed = []
    body = block(d, "    ", 0, category, shape, placed)
    if cat.statement is not None and not placed:
        # statements nested in if/for blocks are not counted: make sure one is at the top level
        body += cat.statement(d, "    ")
    if cat.sequence_argument:
        head = "def f(p):\n    x = np.stack(p)\n"
        arg_kind = d.choice(["list", "tuple"])
    else:
        head = "def f(x):\n"
        arg_kind = "array"
    text = head + "    a = x * 1.0\n    b = x * 0.5 + 0.1\n" + "\n".join(body) + "\n    return np.sum(a * b + x)\n"
    rng = np.random.default_rng(d.int(0, 2 ** 16))
    x = np.round(rng.uniform(-1.0, 1.0, size=3), 3)
    v = np.round(rng.normal(size=3), 3)
    second = "" if cat.sequence_argument else d.choice(shape.second_order)
    return Program(category, text, arg_kind, x, v, second)


@st.composite
def programs(draw, categories, shape=SMALL):
    return make_program(HypothesisDraw(draw), categories, shape)


def program_from_seed(category, seed):
    """The fixed program of `seed` in `category` (independent of hypothesis)."""
    return make_program(RandomDraw(seed), [category], SMALL)


# ------------------------------------------------------------------ running

_counter = itertools.count()


def load(tmp_path, source):
    name = "fuzzprog_%d" % next(_counter)
    path = tmp_path / (name + ".py")
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Runner:
    """Runs thunks on a program module from a reset state, capturing effects."""

    def __init__(self, module):
        self.module = module

    def reset(self):
        self.module.RS.seed(GEN_SEED)
        del self.module.LOG[:]

    def run(self, thunk):
        """(result, effects): effects = (printed text, log, generator state)."""
        self.reset()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            result = thunk()
        return result, (out.getvalue(), list(self.module.LOG), gen_state(self.module.RS))


def as_array(g):
    if isinstance(g, sg.Tensor):
        g = g.numpy()
    if isinstance(g, (list, tuple)):
        g = [e.numpy() if isinstance(e, sg.Tensor) else e for e in g]
    return np.asarray(g, dtype=np.float64)


def check_close(actual, expected, rtol, atol, what, prog):
    actual = as_array(actual)
    expected = np.asarray(expected, dtype=np.float64)
    ok = actual.shape == expected.shape and np.allclose(actual, expected, rtol=rtol, atol=atol)
    if not ok:
        with np.printoptions(precision=6, suppress=True):
            raise AssertionError("%s: got %s, expected %s\n%r" % (what, actual, expected, prog))


def check_effects(effects, plain, what, prog):
    names = ("printed text", "log", "generator state")
    for name, a, b in zip(names, effects, plain):
        if a != b:
            shown = (a, b) if name != "generator state" else ("(differs)", "")
            raise AssertionError("%s after %s differs from one plain call: %r != %r\n%r"
                                 % (name, what, shown[0], shown[1], prog))


def stable_fd(fun, x, reset, eps=(1e-6, 1e-4), rtol=1e-4, atol=1e-6):
    def f(v):
        reset()
        return fun(v)
    with contextlib.redirect_stdout(io.StringIO()):
        fine, coarse = [numerical_grad(f, x, eps=e) for e in eps]
    if not (np.all(np.isfinite(fine)) and np.allclose(fine, coarse, rtol=rtol, atol=atol)):
        raise Unstable("central differences at two steps disagree")
    return fine


def tape_gradient(prog, compiled, values):
    if prog.arg_kind == "array":
        xt = sg.constant(np.asarray(values, dtype=np.float64))
        with sg.GradientTape() as tape:
            tape.watch(xt)
            y = compiled(xt)
        return y, tape.gradient(y, xt)
    ts = [sg.constant(float(e)) for e in values]
    arg = ts if prog.arg_kind == "list" else tuple(ts)
    with sg.GradientTape() as tape:
        tape.watch(ts)
        y = compiled(arg)
    return y, tape.gradient(y, ts)


def check_program(prog, tmp_path):
    """Check one program against both oracles; "ok" or "refused" (only for
    mutation categories). Raises AssertionError on a wrong value or effect,
    Unstable when the oracle is ill-conditioned."""
    module = load(tmp_path, prog.source)
    runner = Runner(module)
    try:
        return _check(prog, module, runner)
    except sg.UnsupportedSyntaxError:
        if prog.category in MUTATION:
            return "refused"
        raise


def _first_order(prog, module, runner, G, F, label):
    f = module.f
    x, v = prog.x, prog.v

    def call(values):
        return f(prog.pack(values))
    value, plain = runner.run(lambda: call(x))
    if not np.isfinite(value):
        raise Unstable("non-finite value")
    fd = stable_fd(call, x, runner.reset)
    arg = prog.pack(x)
    before = np.array(as_array(arg))
    g, effects = runner.run(lambda: G(arg))
    check_effects(effects, plain, "sg.grad" + label, prog)
    check_close(g, fd, RTOL, ATOL, "sg.grad" + label, prog)
    assert np.array_equal(as_array(arg), before), "sg.grad mutated the caller's input\n%r" % prog
    (y, t), effects = runner.run(lambda: sg.jvp(f, (prog.pack(x),), (prog.pack(v),)))
    check_effects(effects, plain, "sg.jvp" + label, prog)
    check_close(y, value, VALUE_RTOL, 0, "value of sg.jvp" + label, prog)
    check_close(t, fd @ v, RTOL, ATOL, "sg.jvp" + label, prog)
    (y, gt), effects = runner.run(lambda: tape_gradient(prog, F, x))
    check_effects(effects, plain, "the tape" + label, prog)
    check_close(y, value, VALUE_RTOL, 0, "value on the tape" + label, prog)
    check_close(gt, fd, RTOL, ATOL, "the tape" + label, prog)
    return value, plain


def _second_order(prog, module, runner, plain):
    f = module.f
    x, v = prog.x, prog.v
    G2 = sg.grad(f)

    def directional(h):
        runner.reset()
        gp = as_array(G2(x + h * v))
        runner.reset()
        gm = as_array(G2(x - h * v))
        return (gp - gm) / (2 * h)
    with contextlib.redirect_stdout(io.StringIO()):
        fine, coarse = directional(1e-5), directional(1e-4)
    if not np.allclose(fine, coarse, rtol=1e-4, atol=1e-5):
        raise Unstable("differences of the gradient at two steps disagree")
    if prog.second == "hvp":
        hv, effects = runner.run(lambda: sg.hvp(f)(x.copy(), v))
    else:
        H, effects = runner.run(lambda: sg.hessian(f)(x.copy()))
        hv = as_array(H) @ v
    check_effects(effects, plain, "sg.%s" % prog.second, prog)
    check_close(hv, fine, HVP_RTOL, HVP_ATOL, "sg.%s" % prog.second, prog)


def _check(prog, module, runner):
    G, F = sg.grad(module.f), sg.function(module.f)
    _, plain = _first_order(prog, module, runner, G, F, "")
    if prog.second:
        _second_order(prog, module, runner, plain)
    rebinds = CATEGORIES[prog.category].rebinds
    if rebinds:
        for stmt in rebinds:
            exec(stmt, module.__dict__)
        # the same sg.grad and sg.function objects, then a new sg.grad
        _first_order(prog, module, runner, G, F, " after rebinding")
        _first_order(prog, module, runner, sg.grad(module.f), sg.function(module.f), " (new) after rebinding")
    return "ok"
