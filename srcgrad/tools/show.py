"""sg.show: the generated derivative code of a function, highlighted with
Pygments in a terminal and as HTML in a notebook."""
import sys

from .. import display
from ..errors import api_boundary
from ..functional import source


@api_boundary
def show(f, wrt=(0,), mode="reverse", args=None, file=None, *, jit=False):
    """Print the generated derivative code of `f`: what `sg.source(f, wrt,
    mode, args, jit)` returns, highlighted when printed to a terminal, as HTML
    in a notebook.

    Args:
        f: a function srcgrad can transform, or one it returned
            (`sg.show(sg.grad(g))` shows second-order code).
        wrt: the positional index, or tuple of indices, of the arguments to
            differentiate.
        mode: "reverse" (the gradient code `sg.grad` runs) or "forward"
            (the JVP code `sg.jvp` runs).
        args: example arguments (a tuple): the code compiled for their
            kinds (Python floats get scalar code), as `sg.source` explains.
        file: a text stream to print to instead of standard output (or of
            the notebook's rich display); plain text unless it is a
            terminal.
        jit: the code sg.jit compiles with Numba for `args`, as lowered
            (`sg.source(..., jit=True)`).

    Returns:
        None.

    Raises:
        ValueError: for an unknown `mode` or a `wrt` out of range.
        sg.UnsupportedSyntaxError, sg.NoRuleError: as `sg.source` does.
    """
    code = source(f, wrt=wrt, mode=mode, args=args, jit=jit)
    if file is None and display.in_notebook():
        from IPython.display import display as ipython_display
        ipython_display(code)
        return None
    out = file if file is not None else sys.stdout
    isatty = getattr(out, "isatty", None)
    text = display.code_terminal(code) if isatty is not None and isatty() else str(code)
    print(text, file=out)
    return None
