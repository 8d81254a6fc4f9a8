"""sg.explain: what the compiler makes of a function, line by line, for
given arguments.

It reads the compiler's own analyses rather than re-deriving them: the
function's Program for the arguments' kinds, its passes up to
differentiation (`Program.front`: ANF, kinds), then activity analysis
(`activity.transform`, the first step of `pipeline.differentiate`), which
fills `ctx.active`, the names that carry derivatives. Each ANF statement
keeps its `Op` (which rule, user function or non-differentiable operation
it is) and the user's line it came from.

A derivative path is *cut* where a statement reads a value that depends
differentiably on a differentiated input (*varied*, in activity analysis'
terms: `activity.analyze` with every name counted as useful) and produces
a value that does not: `int()`, `np.argmax`, `.astype(int)`, a comparison,
`np.floor`. What the reverse sweep saves is measured by running the
artefact's split forward (`Artefact.fwd`) on the arguments: the residuals
it returns, by name, with their sizes.
"""
import sys

import gast
import numpy as np

from .. import display, op_by_op
from ..callables import as_function
from ..errors import api_boundary, public_name, short
from ..functional import SERVICES, _grad_inputs, wrt_indices
from ..runtime import ShapeOf
from ..syntax import ast_util
from ..syntax.anno import Anno
from ..transforms import activity

# what a non-differentiable function's result is, by the function's name
_INDICES = {"argmax", "argmin", "argsort", "argwhere", "nonzero", "flatnonzero", "searchsorted", "digitize",
            "unravel_index", "ravel_multi_index", "argpartition", "lexsort", "bincount", "histogram"}
_STEPS = {"floor", "ceil", "round", "around", "rint", "trunc", "fix", "sign", "heaviside", "floor_divide",
          "remainder", "mod", "fmod"}
_PYTHON_INTS = {"int", "len", "bool", "round", "hash", "id", "ord"}
_SHAPES = {"shape", "ndim", "size", "dtype", "nbytes", "itemsize", "strides"}
# functions of a value's shape or dtype only: reading them does not cut a derivative path
_OF_SHAPE = _SHAPES | {"len", "zeros_like", "ones_like", "empty_like", "full_like", "result_type", "iscomplexobj",
                       "isrealobj", "broadcast_shapes", "shape_of"}


def _reads_shape_only(value):
    """Is `value` (an ANF right-hand side) a function of its operands' shapes
    or dtypes only (x.shape, len(x), np.zeros_like(x))?"""
    if isinstance(value, gast.Attribute):
        return value.attr in _SHAPES
    if isinstance(value, gast.Call):
        method = Anno.METHOD.of(value.func)
        obj = _callee(value)
        return (method or getattr(obj, "__name__", None)) in _OF_SHAPE
    return False


def _statements(body):
    """The statements of `body` in order, entering branches and loops."""
    for s in body:
        yield s
        for field in ("body", "orelse"):
            inner = getattr(s, field, None)
            if isinstance(s, (gast.If, gast.For, gast.While)) and inner:
                yield from _statements(inner)


def _targets(s):
    t = s.targets[0]
    return [e.id for e in t.elts if isinstance(e, gast.Name)] if isinstance(t, gast.Tuple) else \
        [t.id] if isinstance(t, gast.Name) else []


def _loads(node):
    return {n.id for n in ast_util.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _callee(value):
    """The object a call expression calls (Anno.CALLEE), or None."""
    return Anno.CALLEE.of(value.func) if isinstance(value, gast.Call) else None


def _why_cut(value):
    """Why statement value `value` (an ANF right-hand side) carries no
    derivative: a short phrase naming the construct."""
    if isinstance(value, gast.Compare):
        return "a comparison: booleans carry no derivative"
    if isinstance(value, gast.Attribute) and value.attr in _SHAPES:
        return "`.%s`: a shape, not a value" % value.attr
    if isinstance(value, gast.BinOp) and isinstance(value.op, (gast.FloorDiv, gast.Mod)):
        return "`%s`: piecewise constant, zero derivative" % ("//" if isinstance(value.op, gast.FloorDiv) else "%")
    if isinstance(value, gast.Call):
        method = Anno.METHOD.of(value.func)
        if method == "astype":
            arg = value.args[0] if value.args else next((k.value for k in value.keywords if k.arg == "dtype"), None)
            return "`.astype(%s)`: a cast to integers or booleans" % (ast_util.to_source(arg).strip() if arg else "")
        if method is not None:
            return "`.%s()`: %s" % (method, _what(method))
        obj = _callee(value)
        if obj is not None:
            name = public_name(obj)
            short_name = getattr(obj, "__name__", name)
            if getattr(obj, "__module__", None) == "builtins" or obj in (int, bool, float):
                return "%s(): %s" % (short_name, _what(short_name))
            return "%s: %s" % (name, _what(short_name))
    return "not differentiable"


def _what(name):
    if name in _INDICES:
        return "returns indices, integers carry no derivative"
    if name in _STEPS:
        return "piecewise constant, zero derivative"
    if name in _PYTHON_INTS:
        return "a Python int or bool, no derivative"
    if name in _SHAPES:
        return "a shape, not a value"
    if name.startswith("is") or name.startswith("logical_") or name in ("all", "any", "array_equal", "allclose"):
        return "booleans carry no derivative"
    return "registered as not differentiable"


def _call(op, s):
    """(name, kind) of what a statement calls: kind "compiled" (a user
    function, its own generated code), "custom gradient", "rule" (a
    primitive whose adjoint template is inlined), "not differentiable" or
    "no rule" (runs as is; its result must not be differentiated); None
    for a statement that calls nothing."""
    if op.kind == "call":
        name = getattr(op.callee, "__qualname__", None) or getattr(op.callee, "__name__", repr(op.callee))
        return name, "custom gradient" if op.custom else "compiled"
    if op.kind == "rule":
        name = public_name(op.rule.primitive)
        return name if not name.startswith("srcgrad.") else op.rule.primitive.__name__, "rule"
    if op.kind == "nondiff":
        obj = _callee(s.value)
        method = Anno.METHOD.of(s.value.func) if isinstance(s.value, gast.Call) else None
        if obj is None and method is None:
            return None
        return (public_name(obj) if obj is not None else "." + method), "not differentiable"
    if op.kind == "opaque":
        return (op.obj if isinstance(op.obj, str) else public_name(op.obj)), "no rule"
    return None


def _size(value):
    """Bytes held by a residual (ShapeOf stand-ins hold a shape only)."""
    if isinstance(value, ShapeOf) or value is None:
        return 0
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        return int(value.nbytes)
    if isinstance(value, (float, int, complex, bool)):
        return 8 if not isinstance(value, complex) else 16
    if isinstance(value, (tuple, list)):
        return sum(_size(v) for v in value)
    if isinstance(value, dict):
        return sum(_size(v) for v in value.values())
    nbytes = getattr(value, "nbytes", None)
    return int(nbytes) if isinstance(nbytes, (int, np.integer)) else sys.getsizeof(value)


def _describe(value):
    if isinstance(value, ShapeOf):
        return "shape %s %s only" % (tuple(value.shape), np.dtype(value.dtype).name)
    if isinstance(value, np.ndarray):
        return "array %s %s" % (value.shape, value.dtype)
    if isinstance(value, np.generic):
        return "%s scalar" % value.dtype
    if isinstance(value, (tuple, list)):
        return "%s of %d values" % ("stack" if isinstance(value, list) else "tuple", len(value))
    if value is None:
        return "None"
    return type(value).__name__


def _input_text(value):
    if isinstance(value, np.ndarray):
        return "%s %s" % (value.dtype, value.shape)
    if isinstance(value, (list, tuple, dict)):
        return "%s of %d" % (type(value).__name__, len(value))
    return type(value).__name__


class Explanation(display.Report):
    """What `sg.explain` returns: the report as text (a `str`), a table in a
    notebook. Attributes: `lines` (per line of the function: `lineno`,
    `source`, `active` and `inactive` names defined there, `calls`), `cuts`
    (`(lineno, source, names, reason)` per statement that cuts a derivative
    path), `residuals` (`(name, description, bytes)` per value the reverse
    sweep saves) and `active` (the set of names that carry derivatives)."""


def _analyse(fn, args, wrt):
    program, mask, raw = _grad_inputs(fn, tuple(args), {}, wrt)
    fdef, ctx = program.front("reverse", mask)
    active_inputs = [n for n, m in zip(ctx.inputs, mask) if m]
    everything = set(program.inputs)
    for s in _statements(fdef.body):
        if isinstance(s, gast.Assign):
            everything.update(_targets(s))
    # varied: depends differentiably on a differentiated input (every name counted as useful)
    varied = activity.analyze(fdef, ctx, active_inputs, sorted(everything)) | set(active_inputs)
    activity.transform(fdef, ctx)       # the compiler's activity: ctx.active
    return program, mask, raw, fdef, ctx, varied


def _op_by_op_report(f, exc):
    """The report for a function the compiler refuses: sg.grad runs it op
    by op on the tape (op_by_op.py); the refusal says what and where."""
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
    text = ("sg.explain: %s is not compiled: sg.grad, sg.jvp and the tape run it op by op on the tape "
            "(once, with the same rules; a PerformanceWarning says so), because\n  %s\n"
            "Every NumPy operation on a differentiated value is recorded; a conversion that cuts a "
            "derivative path warns with sg.GradientPathWarning when it runs." % (name, str(exc).replace("\n", "\n  ")))
    report = Explanation(text)
    report.lines, report.cuts, report.residuals, report.active = [], [], [], set()
    report.op_by_op = exc
    return report


@api_boundary
def explain(f, *args, wrt=(0,)):
    """Explain what srcgrad does with `f` for these arguments: which values
    carry derivatives, where a derivative path is cut and by what, which
    calls are compiled, inlined as rules or not differentiated, and what
    the reverse sweep saves.

    The analysis is the compiler's: the activity analysis of the code
    compiled for `sg.grad(f, wrt)(*args)` (a value is active when it
    depends differentiably on a differentiated input and an output depends
    differentiably on it). A *cut* is a statement that reads a value
    depending differentiably on a differentiated input and produces one
    that does not (`int()`, `np.argmax`, `.astype(int)`, a comparison,
    `np.floor`, a function registered as not differentiable): a gradient
    does not flow back through it. The residuals are measured by running
    the split forward sweep that a tape runs (so `f` runs once).

    Args:
        f: a function srcgrad can differentiate.
        *args: example arguments: the analysis is for their kinds (arrays,
            Python floats, containers) and the residual sizes for their
            shapes and dtypes.
        wrt: the index, or tuple of indices, of the arguments to
            differentiate.

    Returns:
        An `Explanation`: a `str` report (one table row per line of `f`
        that computes something, then the cuts, then the residuals, with
        their names, shapes, dtypes and sizes in bytes, then whether
        `sg.jit` compiles the gradient with Numba or why it runs in
        CPython) that displays as HTML tables in a notebook; its
        attributes `lines`, `cuts`, `residuals`, `active` and `jit` hold the
        same data.

    Raises:
        ValueError: for a `wrt` out of range.
        sg.UnsupportedSyntaxError, sg.NoRuleError: as `sg.grad(f)` would
            (what sg.grad runs op by op instead gets a report saying so, with
            the refusal, and its `op_by_op` attribute holds it).
    """
    wrt = wrt_indices(wrt)
    try:
        fn = as_function(f)
        program, mask, raw, fdef, ctx, varied = _analyse(fn, args, wrt)
    except Exception as exc:
        if not op_by_op.falls_back(exc):
            raise
        return _op_by_op_report(f, exc)
    active = set(ctx.active) | {n for n, m in zip(ctx.inputs, mask) if m}
    parsed = program.parsed
    lines, cuts, order = {}, [], []
    for s in _statements(fdef.body):
        origin = Anno.ORIGIN.of(s)
        if origin is None or origin[1] is None or not isinstance(s, (gast.Assign, gast.Return, gast.Expr)):
            continue            # (statements the compiler adds without a line of their own)
        filename, lineno, _ = origin
        key = (filename, lineno)
        row = lines.get(key)
        if row is None:
            row = lines[key] = {"lineno": lineno, "filename": filename,
                                "source": parsed.line_text(lineno, filename), "active": [], "inactive": [],
                                "calls": [], "cut": False}
            order.append(key)
        if isinstance(s, gast.Return):
            continue
        op = Anno.OP.of(s)
        targets = _targets(s) if isinstance(s, gast.Assign) else []
        active_targets = [t for t in targets if t in active]
        for t in targets:
            column = row["active"] if t in active else row["inactive"]
            if t not in column and not t.startswith("_"):       # (_names: the compiler's own)
                column.append(t)
        found = _call(op, s) if op is not None else None
        if found is not None:
            calls = row["calls"]
            kind = found[1] + ("" if active_targets or found[1] not in ("rule", "compiled", "custom gradient")
                               else ", not differentiated here")
            if found not in [c[:2] for c in calls]:
                calls.append((found[0], found[1], kind))
            elif active_targets:        # differentiated at one of its calls on the line
                k = [c[:2] for c in calls].index(found)
                calls[k] = (found[0], found[1], found[1])
        if targets and not any(t in varied for t in targets) and _loads(s.value) & varied \
                and (op is None or op.kind not in ("push", "pop")) and not _reads_shape_only(s.value):
            cuts.append((lineno, row["source"], targets, _why_cut(s.value)))
            row["cut"] = True
    residuals = _residuals(program, mask, raw)
    inputs = [(name, _input_text(v), "differentiated" if m else "not differentiated")
              for name, v, m in zip(program.inputs, raw, mask)]
    rows = [lines[k] for k in sorted(order, key=lambda k: (k[0] != parsed.filename, k))]
    cuts.sort(key=lambda c: c[0])
    for r in rows:
        r["calls"] = ["%s (%s)" % (name, kind) for name, _, kind in r["calls"]]
    title = "sg.explain: %s(%s) at %s:%s, differentiated with respect to %s" % (
        parsed.node.name, ", ".join(parsed.params), short(parsed.filename), parsed.firstlineno,
        ", ".join(n for n, m in zip(program.inputs, mask) if m) or "nothing")
    jit = _jit_status(f, wrt, args)
    text = _text(title, inputs, rows, cuts, residuals) + "\n\n" + jit
    report = Explanation(text, _html(title, inputs, rows, cuts, residuals)
                         .replace("</div>", "<p>%s</p>\n</div>" % display.escape(jit)))
    report.lines, report.cuts, report.residuals, report.active = rows, cuts, residuals, active
    report.jit = jit
    return report


def _jit_status(f, wrt, args):
    """One line: does `sg.jit(sg.grad(f, wrt))` compile this gradient with
    Numba for `args` (the lowering succeeds; Numba types the code when it
    first compiles it), or why it runs in CPython."""
    lowered = SERVICES.lowered_source
    if lowered is None:
        return "sg.jit: not available"
    try:
        text = lowered(f, wrt, tuple(args))
    except Exception as exc:        # noqa: BLE001  (explain reports; it does not fail on sg.jit's account)
        return "sg.jit: runs in CPython (%s: %s)" % (type(exc).__name__, exc)
    first = text.split("\n", 1)[0]
    if first.startswith("# lowered for Numba"):
        twins = first.split("twins:", 1)[1].strip() if "twins:" in first else "none"
        return ("sg.jit: the gradient is lowered for Numba and compiled when first called (Numba's twins of "
                "srcgrad's helpers: %s); sg.source(f, args=..., jit=True) shows the code" % twins)
    return "sg.jit: " + first.lstrip("# ").replace("sg.jit runs", "runs", 1)


def _residuals(program, mask, raw):
    """(name, description, bytes) per residual of the split forward sweep,
    measured by running it on `raw`."""
    artefact = program.compile(mask)
    result = artefact.run(artefact.fwd, *raw)
    values = result[-1]
    return [(name, _describe(v), _size(v)) for name, v in zip(artefact.residuals, values)]


def _clip(text, n=60):
    return text if len(text) <= n else text[:n - 3] + "..."


def _text(title, inputs, rows, cuts, residuals):
    out = [title, "", "inputs", display.text_table(["name", "value", ""], inputs, indent="  "), ""]
    table = [[r["lineno"], _clip(r["source"]), ", ".join(r["active"]) or "-", ", ".join(r["inactive"]) or "-",
              ("CUT  " if r["cut"] else "") + (", ".join(r["calls"]) or "-")] for r in rows]
    out.append(display.text_table(["line", "source", "carry derivatives", "no derivative", "calls"], table))
    out.append("")
    if cuts:
        out.append("derivative paths cut (a value computed from a differentiated input that carries no "
                   "derivative):")
        out.append(display.text_table(["line", "source", "cut value", "by"],
                                      [[c[0], _clip(c[1], 48), ", ".join(c[2]), c[3]] for c in cuts], indent="  "))
    else:
        out.append("no derivative path is cut")
    out.append("")
    total = sum(r[2] for r in residuals)
    out.append("the reverse sweep saves %d values, %s (residuals of the split forward sweep):"
               % (len(residuals), _bytes(total)))
    if residuals:
        out.append(display.text_table(["name", "value", "bytes"], residuals, indent="  "))
    return "\n".join(out)


def _bytes(n):
    return "%d bytes" % n if n < 10 * 1024 else "%.1f KiB" % (n / 1024) if n < 10 * 1024 ** 2 else \
        "%.1f MiB" % (n / 1024 ** 2)


def _html(title, inputs, rows, cuts, residuals):
    parts = ["<div>", "<p><b>%s</b></p>" % display.escape(title),
             display.html_table(["input", "value", ""], inputs, code_columns=(0,))]
    table = [[r["lineno"], r["source"], ", ".join(r["active"]), ", ".join(r["inactive"]), ", ".join(r["calls"])]
             for r in rows]
    parts.append(display.html_table(["line", "source", "carry derivatives", "no derivative", "calls"], table,
                                    code_columns=(1, 2, 3),
                                    marked={k for k, r in enumerate(rows) if r["cut"]}))
    if cuts:
        parts.append("<p>Derivative paths cut:</p>")
        parts.append(display.html_table(["line", "source", "cut value", "by"],
                                        [[c[0], c[1], ", ".join(c[2]), c[3]] for c in cuts], code_columns=(1, 2)))
    total = sum(r[2] for r in residuals)
    parts.append("<p>The reverse sweep saves %d values, %s:</p>" % (len(residuals), _bytes(total)))
    if residuals:
        parts.append(display.html_table(["name", "value", "bytes"], residuals, code_columns=(0,)))
    parts.append("</div>")
    return "\n".join(parts)
