"""srcgrad's errors, the one formatter that points at the user's code, and
the traceback filter of the public API.

Every error raised while transforming user code names the user's file and
line, and quotes the offending source line, so that a message never points
into generated code. Code typed into a notebook is named as IPython names
it (`Cell In[3], line 4`), not by the temporary file name the kernel
compiled it under (`/tmp/ipykernel_<pid>/<hash>.py`).

An exception leaving a public function (`api_boundary`) carries a traceback
of the user's frames and of generated code only, as JAX's traceback
filtering does; `SRCGRAD_TRACEBACK=full` in the environment keeps srcgrad's
own frames.
"""
import functools
import inspect
import linecache
import os
import sys
import types

# ------------------------------------------------------------ locations


def cell_name(filename):
    """"Cell In[3]" when `filename` is the name IPython compiled a notebook
    cell (or an interactive input) under, else None.

    IPython's compiler (IPython.core.compilerop.CachingCompiler; ipykernel's
    subclass names cells /tmp/ipykernel_<pid>/<hash>.py) keeps a map from
    those names to execution counts, which its own tracebacks read through
    `format_code_name`; so does this."""
    ipython = sys.modules.get("IPython")
    if ipython is None or not filename:
        return None
    try:
        shell = ipython.get_ipython()
    except AttributeError:
        return None
    compiler = getattr(shell, "compile", None)
    if compiler is None:
        return None
    fmt = getattr(compiler, "format_code_name", None)
    found = None
    if fmt is not None:
        try:
            found = fmt(filename)
        except Exception:
            found = None
    if found:
        return "%s %s" % tuple(found)
    number = getattr(compiler, "_filename_map", {}).get(filename)
    return None if number is None else "Cell In[%s]" % number


def source_name(filename):
    """"Cell In[3]" for a notebook cell, else `filename` itself."""
    return cell_name(filename) or filename


def short(filename):
    """A short name for `filename` in comments: "Cell In[3]" for a notebook
    cell, else the file's base name."""
    if not filename:
        return filename
    return cell_name(filename) or os.path.basename(filename)


def location(filename, lineno):
    """"Cell In[3], line 4" for a notebook cell, "path/to/file.py:12" for a
    file."""
    cell = cell_name(filename)
    if cell is not None:
        return "%s, line %s" % (cell, lineno)
    return "%s:%s" % (filename, lineno)


def where(filename, lineno, col=None):
    """Return "file.py:12" (or "Cell In[3], line 12") plus the quoted source
    line, for error messages."""
    if filename is None:
        return "<unknown location>"
    loc = location(filename, lineno)
    text = linecache.getline(filename, lineno).rstrip() if lineno else ""
    if text:
        caret = ""
        if col is not None:
            stripped = len(text) - len(text.lstrip())
            caret = "\n    " + " " * max(col - stripped, 0) + "^"
        return "%s\n    %s%s" % (loc, text.strip(), caret)
    return loc


# ------------------------------------------------------------ errors


class PerformanceWarning(UserWarning):
    """Code runs correctly but slower than it could, and the message says
    why: a function the compiler refuses runs op by op on the tape
    (op_by_op.py: the function, the construct and the user's line), or what
    `sg.jit` could not compile with Numba runs in CPython."""


class SrcgradError(Exception):
    """Base class of srcgrad's own errors."""


class UnsupportedSyntaxError(SrcgradError, SyntaxError):
    """Python that srcgrad cannot differentiate, found at transform time.

    Raised before any user code runs. Attributes: `construct` (for example
    "while loop"), `filename`, `lineno`, `offset` (column, 1-based) and
    `text` (the source line), as on SyntaxError; `op_by_op`: whether the
    function may run op by op on the tape instead (sg.grad and the tape do
    so, with a PerformanceWarning: a closure called, a generator, an
    attribute write), False for what the tape could not do right either
    (NumPy writing into an array: `out=`, views, aliases).
    """

    def __init__(self, construct, filename=None, lineno=None, col=None, hint=None, op_by_op=True):
        self.construct = construct
        self.hint = hint
        self.op_by_op = op_by_op
        message = "%s is not supported by srcgrad" % construct
        if hint:
            message += " (%s)" % hint
        full = "%s\n  at %s" % (message, where(filename, lineno, col))
        SyntaxError.__init__(self, full)
        self.msg = full
        self.filename = filename
        self.lineno = lineno
        self.offset = None if col is None else col + 1
        self.text = linecache.getline(filename, lineno) if filename and lineno else None

    def __str__(self):
        return self.msg


def fail(parsed, node, construct, hint=None, op_by_op=True):
    """Raise UnsupportedSyntaxError for `construct` at `node` of the parsed
    function `parsed` (transforms/parse.py's Parsed: its file, line and
    column, and the source line quoted), with an optional `hint`
    (`op_by_op`: see UnsupportedSyntaxError)."""
    filename, lineno, col = parsed.origin(node)
    raise UnsupportedSyntaxError(construct, filename, lineno, col, hint, op_by_op)


#: the paths on which a function without a rule can meet a differentiated
#: value, and what else the user can do there (besides registering a rule)
_NO_RULE_ALTERNATIVES = {
    "compiled": "or, if no derivative should flow through it, compute it outside the function being "
                "differentiated and pass the result in as an argument that is not differentiated.",
    "tape": "or, if no derivative should flow through it, compute it outside the tape or inside "
            "`with tape.stop_recording():`.",
    "forward": "or, if no derivative should flow through it, compute it outside the ForwardAccumulator's "
               "`with` block.",
}


class NoRuleError(SrcgradError, TypeError):
    """A function with no adjoint rule was applied to a value being differentiated.

    The message names the function and the user's line, and, for a library
    function, prints a ready-to-edit `@sg.register_adjoint` template with the
    function's signature. `path` says where the value was met: "compiled"
    (generated code: `sg.grad`, `@sg.function`, `sg.jvp`), "tape" (op by op
    on a `GradientTape`) or "forward" (op by op in a `ForwardAccumulator`),
    and chooses the advice. Attributes: `function`, `filename`, `lineno`,
    `path`, `template` (the suggested rule's source, or None).
    """

    def __init__(self, func, filename=None, lineno=None, path="compiled"):
        if path not in _NO_RULE_ALTERNATIVES:
            raise ValueError("NoRuleError: unknown path %r" % (path,))
        name = public_name(func)
        self.function = func
        self.filename, self.lineno, self.path = filename, lineno, path
        self.template = None
        made_by = getattr(func, "__srcgrad_transform__", None)
        if made_by is not None:         # what sg.jacobian / sg.hessian return is run, not transformed
            message = (
                "srcgrad does not compile the function that %s returned (%s): it runs a "
                "Jacobian engine, not generated code; differentiated, it runs op by op on the tape. "
                "For compiled code, compose sg.grad, sg.jvp and sg.hvp on the original function "
                "(sg.grad(sg.grad(f)) is compiled at every order)." % (made_by, name)
            )
        elif isinstance(func, str):       # a method of a differentiated array ("ndarray.tolist")
            message = (
                "srcgrad has no adjoint rule for the method %s of an array being differentiated "
                "(its values would leave NumPy, cutting the derivative). Use a NumPy function with a "
                "rule (list(x), x[i], float(x)), or compute it outside the differentiated code."
                % func.replace("ndarray", "x", 1)
            )
        else:
            try:
                self.template = rule_template(func)
            except Exception:       # a template is a convenience: never let it hide the error itself
                self.template = None
            message = "srcgrad has no adjoint rule for %s, which is applied to a value being differentiated" % name
            if filename is not None:
                message += "\n  at %s" % where(filename, lineno)
            message += "\nRegister one with @sg.register_adjoint(%s) (see 'Writing rules' in the docs)" % name
            if self.template is not None:
                message += "; edit this template and run it:\n\n%s\n\n" % _indent(self.template, "    ")
            else:
                message += ", "
            message += _NO_RULE_ALTERNATIVES[path]
            super().__init__(message)
            return
        if filename is not None:
            message += "\n  at %s" % where(filename, lineno)
        super().__init__(message)


def _indent(text, prefix):
    return "\n".join(prefix + line if line else line for line in text.splitlines())


def public_name(func):
    """How a user names `func` in code: "np.interp", "np.linalg.slogdet",
    "scipy.special.softmax" (not its private defining module),
    "scipy.stats.skewnorm.logpdf", "statistics.fmean"; the qualified name
    when no public module holds it."""
    if isinstance(func, str):
        return func
    owner = getattr(func, "__self__", None)
    if type(owner).__name__ == "ufunc" and type(owner).__module__ == "numpy" and owner is not func:
        return "%s.%s" % (public_name(owner), func.__name__)      # np.add.reduce, np.multiply.outer
    if owner is not None and not isinstance(owner, types.ModuleType) and inspect.ismethod(func):
        found = _public_path(owner, type(owner).__module__)
        if found is not None:
            return "%s.%s" % (found, func.__name__)
    name = getattr(func, "__name__", None)
    module = getattr(func, "__module__", None)
    if module is None and type(func).__name__ == "ufunc":       # scipy.special's ufuncs have no __module__
        for candidate in ("numpy", "scipy.special"):
            if getattr(sys.modules.get(candidate), name or "", None) is func:
                module = candidate
                break
    if name is None:
        return repr(func)
    if module and module != "builtins":
        found = _public_path(func, module)
        if found is not None:
            return found
        return _np("%s.%s" % (module, getattr(func, "__qualname__", name)))
    return getattr(func, "__qualname__", name)


def _public_path(obj, module):
    """The shortest public dotted path by which a module along `module`'s
    path exposes `obj` ("np.linalg.slogdet", "scipy.special.softmax",
    "scipy.stats.skewnorm" for an instance), or None."""
    parts = module.split(".")
    if parts[0].startswith("_") and parts[0][1:] in sys.modules:
        parts[0] = parts[0][1:]         # _operator -> operator
    name = getattr(obj, "__name__", None)
    for k in range(1, len(parts) + 1):
        if parts[k - 1].startswith("_"):
            break
        prefix = ".".join(parts[:k])
        mod = sys.modules.get(prefix)
        if mod is None:
            continue
        if name is not None:
            if getattr(mod, name, None) is obj:
                return _np("%s.%s" % (prefix, name))
            continue
        for key, value in vars(mod).items():
            if value is obj and not key.startswith("_"):
                return _np("%s.%s" % (prefix, key))
    return None


def _np(dotted):
    return "np" + dotted[len("numpy"):] if dotted == "numpy" or dotted.startswith("numpy.") else dotted


def rule_template(func):
    """The source of an adjoint rule for `func` to edit: the decorator, a
    template named after it whose parameters are the primal output then
    `func`'s own (ufuncs: their `nin` inputs, out and dtype), and one
    `d[x] = ...` line per required input. None when `func` has no name to
    register it under (a lambda, an object without a public name)."""
    name = public_name(func)
    short_name = getattr(func, "__name__", None)
    if not short_name or not short_name.isidentifier():
        return None
    nin = getattr(func, "nin", None)
    if type(func).__name__ == "ufunc" and isinstance(nin, int):
        inputs = ["x", "y"] if nin == 2 else ["x"] if nin == 1 else ["x%d" % (i + 1) for i in range(nin)]
        params = ", ".join(inputs + ["out=None", "dtype=None"])
        required = inputs
    else:
        try:
            sig = inspect.signature(func)
        except Exception:           # (builtins without a text signature, objects with odd __signature__)
            sig = None
        if sig is None:
            params, required = "x", ["x"]
        else:
            params = str(sig)[1:-1]
            if " -> " in str(sig):
                params = str(sig.replace(return_annotation=inspect.Signature.empty))[1:-1]
            required = [p.name for p in sig.parameters.values()
                        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            if not required:
                required = [p.name for p in sig.parameters.values()
                            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][:1]
    taken = set(required) | {p.strip().split("=")[0].lstrip("*") for p in params.split(",")}
    output = next(o for o in ("z", "y", "out_", "result") if o not in taken)
    lines = ["@sg.register_adjoint(%s)" % name,
             "def %s_adjoint(%s%s):" % (short_name, output, ", " + params if params else ""),
             "    # d[%s] is the output's cotangent; d[p] = ... contributes input p's cotangent" % output,
             "    # (of p's shape: unbroadcast(g, p) sums a broadcast one back). Delete the",
             "    # lines of inputs that have no derivative."]
    lines += ["    d[%s] = ..." % p for p in required] or ["    pass"]
    return "\n".join(lines)


class GradientPathError(SrcgradError, TypeError):
    """While srcgrad differentiated a function op by op on the tape (the
    compiler refused it: srcgrad/op_by_op.py), a value being differentiated
    left the tape: written into a NumPy array element (`Y[i] = t` with `Y =
    np.zeros(n)`) or converted by a function without a rule. On a
    GradientTape that is GradientPathWarning (TF's tapes cut the path the
    same way); under sg.grad, sg.jvp or sg.jacobian the result would be a
    wrong derivative, so it is this error, naming the user's line (as
    autograd and JAX refuse to put a traced value into an ndarray)."""


class SourceNotFoundError(SrcgradError, TypeError):
    """The source of a function to be transformed could not be found."""


class ResolutionError(SrcgradError, NameError):
    """A name in a transformed function could not be resolved at transform
    time. `op_by_op`: whether the function may run op by op on the tape
    instead (a call of a value computed at run time: yes; a name defined
    nowhere: no, that is the user's NameError, reported before anything runs)."""

    def __init__(self, message, op_by_op=True):
        super().__init__(message)
        self.op_by_op = op_by_op


# ------------------------------------------------------------ tracebacks

_SRCGRAD_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
TRACEBACK_ENV = "SRCGRAD_TRACEBACK"
_FILTERED_NOTE = ("(srcgrad's internal frames are hidden from this traceback; set the environment variable "
                  "SRCGRAD_TRACEBACK=full to show them)")


def _internal(frame):
    """Is `frame` srcgrad's own code (not the user's, not generated code)?"""
    return frame.f_code.co_filename.startswith(_SRCGRAD_DIR)


def filter_traceback(tb, generated=True):
    """`tb` without srcgrad's internal frames: the user's frames, library
    frames and generated code (`<srcgrad-generated ...>`, unless not
    `generated`) are kept, in order. Returns a new traceback (None if no
    frame is left)."""
    kept = []
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not _internal(tb.tb_frame) and (generated or not name.startswith("<srcgrad-generated")):
            kept.append((tb.tb_frame, tb.tb_lasti, tb.tb_lineno))
        tb = tb.tb_next
    out = None
    for frame, lasti, lineno in reversed(kept):
        out = types.TracebackType(out, frame, lasti, lineno)
    return out


def _count(tb):
    n = 0
    while tb is not None:
        n += 1
        tb = tb.tb_next
    return n


def _filter_exception(exc, seen):
    """Filter the traceback of `exc` and of the exceptions chained to it."""
    if exc is None or id(exc) in seen:
        return
    seen.add(id(exc))
    tb = exc.__traceback__
    # (a refusal checked at run time names the user's line: generated code's frames add nothing)
    filtered = filter_traceback(tb, generated=not isinstance(exc, UnsupportedSyntaxError))
    if _count(filtered) != _count(tb):
        exc.__traceback__ = filtered
        notes = getattr(exc, "__notes__", None) or []
        if hasattr(exc, "add_note") and _FILTERED_NOTE not in notes:
            exc.add_note(_FILTERED_NOTE)
    _filter_exception(exc.__cause__, seen)
    if not exc.__suppress_context__:
        _filter_exception(exc.__context__, seen)


def traceback_filtering():
    """Is traceback filtering on? (Off with SRCGRAD_TRACEBACK=full.)"""
    return os.environ.get(TRACEBACK_ENV, "").strip().lower() not in ("full", "off", "0")


def api_boundary(fn):
    """Decorator for srcgrad's public functions: an exception leaving `fn`
    keeps the user's frames and generated code's in its traceback, and
    drops srcgrad's own (with a note saying so), unless the environment
    sets SRCGRAD_TRACEBACK=full. The exception itself is unchanged."""
    @functools.wraps(fn)
    def boundary(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            if traceback_filtering():
                _filter_exception(exc, set())
            raise       # a bare raise adds no frame: the filtered traceback is what the caller sees
    return boundary
