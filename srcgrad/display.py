"""sg.show: generated derivative code, highlighted with Pygments in a
terminal and as HTML in a notebook."""
import sys

from .functional import source


def _in_notebook():
    ip = sys.modules.get("IPython")
    if ip is None:
        return False
    try:
        shell = ip.get_ipython()
    except AttributeError:
        return False
    return shell is not None and shell.__class__.__name__ == "ZMQInteractiveShell"


class Code:
    """Generated source with a rich HTML representation for notebooks."""

    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text

    def __repr__(self):
        return self.text

    def _repr_html_(self):
        try:
            from pygments import highlight
            from pygments.formatters import HtmlFormatter
            from pygments.lexers import PythonLexer
        except ImportError:
            import html
            return "<pre>%s</pre>" % html.escape(self.text)
        return highlight(self.text, PythonLexer(), HtmlFormatter(noclasses=True))


def show(f, wrt=(0,), mode="reverse", file=None):
    """Print the generated derivative code of `f` (see `sg.source`):
    highlighted when printing to a terminal, rich HTML in a notebook. Returns
    None."""
    text = source(f, wrt=wrt, mode=mode)
    if _in_notebook() and file is None:
        from IPython.display import display
        display(Code(text))
        return None
    out = file or sys.stdout
    if getattr(out, "isatty", lambda: False)():
        try:
            from pygments import highlight
            from pygments.formatters import TerminalFormatter
            from pygments.lexers import PythonLexer
            text = highlight(text, PythonLexer(), TerminalFormatter())
        except ImportError:
            pass
    print(text, file=out)
    return None
