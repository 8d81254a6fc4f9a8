"""Property test: random programs differentiate the same through the compiled
path, the op-by-op tape and central finite differences.

Programs come from a small grammar: assignments of arithmetic and NumPy
elementwise ops, `if` on data, `for` loops over range with overwrites of
loop-carried variables, `while` loops with data-dependent conditions,
`break`, element and slice assignment (`a[1] = ...`, `b[0:2] += ...`,
`a[i % 3] = ...` in loops), helper calls, nested up to depth 2. Each is
written to a real module file (srcgrad compiles from source) and imported.

The op-by-op tape cannot run `a[i] = v` on Tensors (they are immutable, as
in TF), so the op-by-op reference is the same program with each element
assignment written functionally, `a = setitem(a, i, v)`: srcgrad's rule for
it is recorded op by op, independently of the compiler's lowering.

NumPy views: `b = x[::-1]` followed by `b[1] = v` changes x too in NumPy,
which the functional reference does not. srcgrad must raise
UnsupportedSyntaxError (naming the view) for such a program wherever NumPy's
result differs from the functional one (`numpy_differs`), and may raise it
only for a program that assigns elements of a name holding a view.
"""
import importlib.util
import itertools
import re

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import srcgrad as sg
from gradcheck import check_close, numerical_grad

VARS = ["x", "y", "a", "b"]
UNARY = ["np.sin({0})", "np.tanh({0})", "np.cos({0})", "({0} * 0.5)", "np.exp(np.tanh({0}))",
         "np.maximum({0}, 0.1)", "{0} / (2.0 + np.tanh({0}))", "{0}[::-1]", "np.where({0} > 0, {0}, 0.5 * {0})",
         "np.mean({0}) + {0} * 0.5", "np.sqrt({0} * {0} + 1.0)", "-{0}"]
# bounded, so that loops cannot blow values up beyond what finite differences resolve
BINARY = ["np.tanh({} + {})", "np.sin({} - {})", "np.tanh({} * {})", "{} * 0.9 + {} * 0.1"]


@st.composite
def expressions(draw):
    u = draw(st.sampled_from(VARS))
    v = draw(st.sampled_from(VARS))
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return draw(st.sampled_from(UNARY)).format(u)
    if kind == 1:
        return draw(st.sampled_from(BINARY)).format(u, v)
    return draw(st.sampled_from(UNARY)).format("(%s)" % draw(st.sampled_from(BINARY)).format(u, v))


@st.composite
def blocks(draw, depth=0, indent="    ", in_for=False):
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        choice = draw(st.integers(0, 7 if depth < 2 else 1))
        if choice == 1 and draw(st.booleans()):
            # element / slice assignment (a[...] = ... and a[...] += ...)
            target = draw(st.sampled_from(["a", "b"]))
            index, source = draw(st.sampled_from(INDEXES + LOOP_INDEXES if in_for else INDEXES))
            op = draw(st.sampled_from(["=", "+="]))
            lines.append("%s%s[%s] %s %s" % (indent, target, index, op,
                                             source.format("(%s)" % draw(expressions()))))
        elif choice <= 2:
            lines.append("%s%s = %s" % (indent, draw(st.sampled_from(VARS)), draw(expressions())))
        elif choice == 5:
            # a while loop with a data-dependent condition and at most 3 trips
            k = "k%d" % depth
            var, bound = draw(st.sampled_from(VARS)), draw(st.sampled_from(["-5.0", "0.0", "1.0"]))
            lines.append("%s%s = 0" % (indent, k))
            lines.append("%swhile %s < 3 and np.sum(%s) > %s:" % (indent, k, var, bound))
            lines += draw(blocks(depth + 1, indent + "    ", in_for))
            lines.append("%s    %s = %s + 1" % (indent, k, k))
        elif choice == 6:
            # a for loop left early by break
            lines.append("%sfor i in range(4):" % indent)
            lines += draw(blocks(depth + 1, indent + "    ", True))
            var, bound = draw(st.sampled_from(VARS)), draw(st.sampled_from(["0.0", "0.5"]))
            lines.append("%s    if np.sum(%s) > %s:" % (indent, var, bound))
            lines.append("%s        break" % indent)
        elif choice in (4, 7) and draw(st.booleans()):
            # a call of a helper defined in the module (transformed recursively)
            u, v = draw(st.sampled_from(VARS)), draw(st.sampled_from(VARS))
            if draw(st.booleans()):
                t1, t2 = draw(st.sampled_from(VARS)), draw(st.sampled_from(VARS))
                if t1 != t2:
                    lines.append("%s%s, %s = pair(%s, %s)" % (indent, t1, t2, u, v))
                    continue
            lines.append("%s%s = helper(%s, scale=%s)" % (indent, draw(st.sampled_from(VARS)), u,
                                                          draw(st.sampled_from(["0.5", "2.0"]))))
        elif choice == 3:
            test = "np.sum(%s) > %s" % (draw(st.sampled_from(VARS)), draw(st.sampled_from(["0.0", "0.5", "-0.5"])))
            lines.append("%sif %s:" % (indent, test))
            lines += draw(blocks(depth + 1, indent + "    ", in_for))
            if draw(st.booleans()):
                lines.append("%selse:" % indent)
                lines += draw(blocks(depth + 1, indent + "    ", in_for))
        else:
            start, stop, step = draw(st.sampled_from([(0, 2, 1), (1, 4, 1), (0, 5, 2), (3, 0, -1)]))
            lines.append("%sfor i in range(%d, %d, %d):" % (indent, start, stop, step))
            lines += draw(blocks(depth + 1, indent + "    ", True))
    return lines


# (index, how the value is read from an expression of shape (3,))
INDEXES = [("1", "np.sum({}) * 0.3"), ("-1", "{}[0]"), ("0:2", "{}[1:3]"), ("::2", "{}[::2] * 0.5"),
           ("[0, 2]", "{}[[1, 1]]")]
LOOP_INDEXES = [("i % 3", "{}[(i + 1) % 3]")]


_counter = itertools.count()
_ASSIGN = re.compile(r"^(\s*)([ab])\[(.+?)\] (\+?)= (.*)$")


def functional(lines):
    """The op-by-op reference: `a[i] = v` -> `a = setitem(a, i, v)`."""
    out = []
    for line in lines:
        m = _ASSIGN.match(line)
        if m:
            ind, name, index, plus, value = m.groups()
            if ":" in index:
                parts = (index.split(":") + [""])[:3]
                index = "slice(%s)" % ", ".join(p or "None" for p in parts)
            if plus:
                value = "%s[%s] + (%s)" % (name, index, value)
            line = "%s%s = setitem(%s, %s, %s)" % (ind, name, name, index, value)
        out.append(line)
    return out

HELPERS = """import numpy as np
from srcgrad.rules.python.containers import setitem


def helper(v, scale=1.0):
    w = np.tanh(v * scale)
    if np.sum(w) > 0.0:
        w = w * 0.5
    return w


def pair(u, v):
    s = np.sin(u + v)
    return s * u, np.cos(v) - s
"""


def load(tmp_dir, lines):
    """(f, its op-by-op reference, the source)."""
    body = "\n\ndef %s(x, y):\n    a = x * 1.0\n    b = y * 1.0\n%s\n    return np.sum(a * b + x)\n"
    src = HELPERS + body % ("f", "\n".join(lines)) + body % ("f_op", "\n".join(functional(lines)))
    path = tmp_dir / ("prog_%d.py" % next(_counter))
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f, module.f_op, src


_VIEW = re.compile(r"^\s*([abxy]) = .*\b[abxy]\[::-1\]$", re.M)


def numpy_differs(f, f_op, x, y):
    """Does NumPy's result (views shared) differ from the functional one?"""
    return not np.array_equal(np.asarray(f(x.copy(), y.copy())), np.asarray(f_op(x.copy(), y.copy())))


def views_rejected(f, f_op, x, y, src):
    """True when srcgrad rightly refuses the program for its views (then
    nothing else is checked); fails when it refuses a program without views,
    or accepts one whose NumPy result depends on views."""
    try:
        sg.function(f)
        sg.grad(f, wrt=(0, 1))(x, y)
    except sg.UnsupportedSyntaxError as exc:
        assert "NumPy view" in str(exc) and "make a copy" in str(exc), (str(exc), src)
        assert _VIEW.search(src) and re.search(r"^\s*[ab]\[", src, re.M), (str(exc), src)
        return True
    assert not numpy_differs(f, f_op, x, y), "NumPy's views change the result, srcgrad did not say so:\n" + src
    return False


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=blocks(), seed=st.integers(0, 2 ** 16))
def test_random_program(tmp_path, lines, seed):
    f, f_op, src = load(tmp_path, lines)
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=3), rng.normal(size=3)
    x0, y0 = x.copy(), y.copy()
    if views_rejected(f, f_op, x, y, src):
        return
    # compiled, fused (sg.grad)
    gx, gy = sg.grad(f, wrt=(0, 1))(x, y)
    # compiled, split (one tape entry)
    xt, yt = sg.constant(x), sg.constant(y)
    with sg.GradientTape() as t:
        t.watch([xt, yt])
        out = sg.function(f)(xt, yt)
    # zeros for unconnected sources: whether a source is connected can differ
    # between the static (compiled) and the dynamic (op-by-op) view of a branch
    cx, cy = t.gradient(out, [xt, yt], unconnected_gradients="zero")
    # op by op
    with sg.GradientTape() as t:
        t.watch([xt, yt])
        out_op = f_op(xt, yt)
    ox, oy = t.gradient(out_op, [xt, yt], unconnected_gradients="zero")
    assert np.isclose(float(out), float(out_op), rtol=1e-12), src
    for a, b in [(gx, ox), (gy, oy), (cx.numpy(), ox), (cy.numpy(), oy)]:
        np.testing.assert_allclose(a, b.numpy() if isinstance(b, sg.Tensor) else b, rtol=1e-9, atol=1e-12,
                                   err_msg=src)
    check_close(gx, numerical_grad(lambda v: f(v, y), x), rtol=1e-5, atol=1e-6)
    check_close(gy, numerical_grad(lambda v: f(x, v), y), rtol=1e-5, atol=1e-6)
    # the derivative code never mutates the caller's arrays
    assert np.array_equal(x, x0) and np.array_equal(y, y0), src


def second_order(fn, x, y, v):
    """Hessian-vector product d/dx <grad_x fn(x, y), v> by nested tapes."""
    xt, yt = sg.constant(x), sg.constant(y)
    with sg.GradientTape() as outer:
        outer.watch(xt)
        with sg.GradientTape() as inner:
            inner.watch([xt, yt])
            out = fn(xt, yt)
        g = inner.gradient(out, xt, unconnected_gradients="zero")
        gv = np.sum(g * v)
    return outer.gradient(gv, xt, unconnected_gradients="zero")


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=blocks(), seed=st.integers(0, 2 ** 16))
def test_random_program_second_order(tmp_path, lines, seed):
    f, f_op, src = load(tmp_path, lines)
    rng = np.random.default_rng(seed)
    x, y, v = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    if views_rejected(f, f_op, x, y, src):
        return
    hv_compiled = second_order(sg.function(f), x, y, v)
    hv_op = second_order(f_op, x, y, v)
    np.testing.assert_allclose(hv_compiled.numpy(), hv_op.numpy(), rtol=1e-9, atol=1e-12, err_msg=src)
    # and against finite differences of the (compiled) gradient
    grad_x = sg.grad(f, wrt=0)
    fd = smooth_numerical_grad(lambda w: np.sum(grad_x(w, y) * v), x)
    if fd is not None:
        check_close(hv_op.numpy(), fd, rtol=1e-4, atol=1e-5)


def smooth_numerical_grad(fun, x):
    """Central differences at two step sizes, or None when they disagree: a
    kink (np.where, a branch) inside the stencil makes the difference
    quotient of a piecewise-smooth function meaningless there (the two
    derivative paths above are still compared with each other)."""
    coarse = numerical_grad(fun, x)
    fine = numerical_grad(fun, x, eps=EPS_FINE)
    if not np.allclose(coarse, fine, rtol=1e-3, atol=1e-4):
        return None
    return coarse


EPS_FINE = 1e-7
