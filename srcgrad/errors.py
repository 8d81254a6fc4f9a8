"""srcgrad's errors, and the one formatter that points at the user's code.

Every error raised while transforming user code names the user's file and
line, and quotes the offending source line, so that a message never points
into generated code.
"""
import linecache
import os


def where(filename, lineno, col=None):
    """Return "file.py:12" plus the quoted source line, for error messages."""
    if filename is None:
        return "<unknown location>"
    loc = "%s:%s" % (filename, lineno)
    text = linecache.getline(filename, lineno).rstrip() if lineno else ""
    if text:
        caret = ""
        if col is not None:
            stripped = len(text) - len(text.lstrip())
            caret = "\n    " + " " * max(col - stripped, 0) + "^"
        return "%s\n    %s%s" % (loc, text.strip(), caret)
    return loc


class SrcgradError(Exception):
    """Base class of srcgrad's own errors."""


class UnsupportedSyntaxError(SrcgradError, SyntaxError):
    """Python that srcgrad cannot differentiate, found at transform time.

    Raised before any user code runs. Attributes: `construct` (for example
    "while loop"), `filename`, `lineno`, `offset` (column, 1-based) and
    `text` (the source line), as on SyntaxError.
    """

    def __init__(self, construct, filename=None, lineno=None, col=None, hint=None):
        self.construct = construct
        self.hint = hint
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


def fail(parsed, node, construct, hint=None):
    """Raise UnsupportedSyntaxError for `construct` at `node` of the parsed
    function `parsed` (transforms/parse.py's Parsed: its file, line and
    column, and the source line quoted), with an optional `hint`."""
    filename, lineno, col = parsed.origin(node)
    raise UnsupportedSyntaxError(construct, filename, lineno, col, hint)


class NoRuleError(SrcgradError, TypeError):
    """A function with no adjoint rule was applied to a value being differentiated.

    The message names the function and says how to add a rule with
    `sg.register_adjoint`.
    """

    def __init__(self, func, filename=None, lineno=None):
        name = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
        module = getattr(func, "__module__", None)
        if module and module != "builtins":
            name = "%s.%s" % ("np" if module == "numpy" else module, name)
        self.function = func
        made_by = getattr(func, "__srcgrad_transform__", None)
        if made_by is not None:         # what sg.jacobian / sg.hessian return is run, not transformed
            message = (
                "srcgrad cannot differentiate the function that %s returned (%s): it runs a "
                "Jacobian engine, not generated code. Differentiate the original function "
                "instead, composing sg.grad, sg.jvp and sg.hvp (sg.grad(sg.grad(f)) is compiled "
                "at every order)." % (made_by, name)
            )
        elif isinstance(func, str):       # a method of a differentiated array ("ndarray.tolist")
            message = (
                "srcgrad has no adjoint rule for the method %s of an array being differentiated "
                "(its values would leave NumPy, cutting the derivative). Use a NumPy function with a "
                "rule (list(x), x[i], float(x)), or compute it outside the differentiated code."
                % func.replace("ndarray", "x", 1)
            )
        else:
            message = (
                "srcgrad has no adjoint rule for %s, which is applied to a value being "
                "differentiated. Register one with @sg.register_adjoint(%s), or compute it "
                "outside the tape." % (name, name)
            )
        if filename is not None:
            message += "\n  at %s" % where(filename, lineno)
        super().__init__(message)


class SourceNotFoundError(SrcgradError, TypeError):
    """The source of a function to be transformed could not be found."""


class ResolutionError(SrcgradError, NameError):
    """A name in a transformed function could not be resolved at transform time."""


def short(filename):
    return os.path.basename(filename) if filename else filename
