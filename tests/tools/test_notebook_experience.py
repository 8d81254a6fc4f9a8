"""Issue 20, item 4: the notebook experience.

- `sg.source` returns a `str` subclass that prints plainly, compares equal
  to the plain string and displays highlighted (monospace forced) in a
  notebook; `sg.show` takes every argument `sg.source` takes;
- notebook code is named as IPython names it (`Cell In[n], line k`) in
  messages and `# Grad of:` comments (an IPython shell in a subprocess, and
  a real kernel through nbclient);
- tracebacks from the public API hide srcgrad's frames, keeping the user's
  and generated code's (`SRCGRAD_TRACEBACK=full` shows them all);
- NoRuleError's advice is right for the path in use (compiled code, the
  tape, forward mode), with a ready-to-edit register_adjoint template.
"""
import importlib.util
import inspect
import io
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import srcgrad as sg
from srcgrad import errors
from srcgrad.display import GeneratedCode

SRCGRAD_DIR = os.path.dirname(os.path.abspath(sg.__file__)) + os.sep
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(sg.__file__)))


def _with_this_srcgrad(env):
    """`env` with this checkout's srcgrad first on the path (subprocesses and kernels)."""
    env = dict(env)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env
HERE = os.path.abspath(__file__)
X = np.array([0.2, 0.4, 0.5])


def poly(x):
    y = x * x
    return np.sum(np.sin(y) + y)


def scalar_poly(t):
    return t ** 3 + 2.0 * t


def uses_polyadd(x):
    y = np.sin(x)
    return np.sum(np.polyadd([1.0, 2.0], y))


def shape_error(x):
    y = np.sin(x)
    return np.sum(y @ np.ones((4, 2)))


# --------------------------------------------------------------- sg.source, sg.show


def test_source_is_a_str_that_prints_plainly_and_displays_highlighted(capsys):
    code = sg.source(poly)
    assert isinstance(code, GeneratedCode) and isinstance(code, str)
    plain = str(code)
    assert type(plain) is str and code == plain and plain == code and hash(code) == hash(plain)
    assert "def dpolydx(x, bout=1.0):" in code and code.splitlines()[0] == "def dpolydx(x, bout=1.0):"
    print(code)
    assert capsys.readouterr().out == plain + "\n"
    html = code._repr_html_()
    assert "font-family" in html and "monospace" in html        # JupyterLab's <pre> font is overridden
    assert "<span" in html and "dpolydx" in html                 # highlighted by Pygments
    assert "#sg-comment#" not in html and "Grad of" in html


def test_source_pretty_prints_as_code_in_ipython():
    pretty = pytest.importorskip("IPython.lib.pretty")
    code = sg.source(poly)
    assert pretty.pretty(code) == str(code)          # not the quoted repr of a string


def test_show_takes_every_argument_of_source():
    def kinds(f, keyword_only):
        return [n for n, p in inspect.signature(f).parameters.items()
                if (p.kind is inspect.Parameter.KEYWORD_ONLY) == keyword_only]
    source_params = kinds(sg.source, False)
    assert kinds(sg.show, False)[:len(source_params)] == source_params      # in order, then `file`
    assert set(kinds(sg.source, True)) <= set(kinds(sg.show, True))         # (jit)
    for kwargs in ({}, {"args": (1.3,)}, {"mode": "forward"}, {"args": (1.3,), "mode": "forward"}):
        out = io.StringIO()
        assert sg.show(scalar_poly, file=out, **kwargs) is None
        assert out.getvalue() == sg.source(scalar_poly, **kwargs) + "\n"
    out = io.StringIO()
    sg.show(scalar_poly, (0,), "reverse", (1.3,), out)          # positionally too
    assert out.getvalue() == sg.source(scalar_poly, args=(1.3,)) + "\n"
    # scalar code for a Python float: no unbroadcast
    assert "unbroadcast" not in sg.source(scalar_poly, args=(1.3,))


def test_show_highlights_for_a_terminal():
    class Terminal(io.StringIO):
        def isatty(self):
            return True
    out = Terminal()
    sg.show(poly, file=out)
    assert "\x1b[" in out.getvalue() and "dpolydx" in out.getvalue()


# --------------------------------------------------------------- notebook cell names

SHELL_SCRIPT = r'''
import sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
cells = [
    "import numpy as np\nimport srcgrad as sg",
    "def f(x):\n    y = np.sin(x)\n    return np.sum(np.polyadd([1.0, 2.0], y))",
    "try:\n    sg.grad(f)(np.ones(3))\nexcept sg.NoRuleError as e:\n    message = str(e)",
    "def g(x):\n    return np.sum(np.sin(x) * x)",
    "code = sg.source(g)",
]
for cell in cells:
    result = shell.run_cell(cell, store_history=True)
    assert result.success, result
print(shell.user_ns["message"])
print("=====")
print(shell.user_ns["code"])
'''


def test_an_ipython_shell_names_cells_as_ipython_does(tmp_path):
    pytest.importorskip("IPython")
    run = subprocess.run([sys.executable, "-c", SHELL_SCRIPT], capture_output=True, text=True, timeout=300,
                         cwd=str(tmp_path), env=_with_this_srcgrad(os.environ))
    assert run.returncode == 0, run.stderr[-3000:]
    message, code = run.stdout.split("=====")
    assert "at Cell In[2], line 3" in message, message
    assert "return np.sum(np.polyadd([1.0, 2.0], y))" in message
    assert "ipython-input" not in message
    assert "# Grad of: return np.sum(np.sin(x) * x)  (Cell In[4]:2)" in code, code


def test_file_names_are_unchanged_outside_notebooks():
    assert errors.short(HERE) == "test_notebook_experience.py"
    assert errors.location(HERE, 12) == "%s:12" % HERE
    assert errors.cell_name(HERE) is None


def test_a_kernel_names_cells_hides_srcgrad_frames_and_renders_monospace_html(monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    cells = [
        "import numpy as np\nimport srcgrad as sg",
        "def f(x):\n    y = np.sin(x)\n    return np.sum(np.polyadd([1.0, 2.0], y))",
        "sg.source(lambda x: np.sum(np.tanh(x) * x))",
        "def g(x):\n    return np.sum(np.cos(x) * x)\nprint(sg.source(g))",
        "sg.grad(f)(np.ones(3))",
    ]
    monkeypatch.setenv("PYTHONPATH", _with_this_srcgrad(os.environ)["PYTHONPATH"])   # (the kernel's srcgrad)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nbclient.NotebookClient(nb, timeout=180, kernel_name="python3", allow_errors=True).execute()
    html = nb.cells[2].outputs[0]["data"]["text/html"]
    assert "monospace" in html and "<span" in html
    printed = "".join(o.get("text", "") for o in nb.cells[3].outputs)
    assert "(Cell In[4]:2)" in printed and "ipykernel_" not in printed, printed
    error = [o for o in nb.cells[4].outputs if o["output_type"] == "error"][0]
    assert error["ename"] == "NoRuleError"
    assert "Cell In[2], line 3" in error["evalue"] and "stop_recording" not in error["evalue"]
    traceback = "\n".join(error["traceback"])
    assert "srcgrad/transforms" not in traceback and "srcgrad/program.py" not in traceback, traceback


# --------------------------------------------------------------- tracebacks


def _files(tb):
    out = []
    while tb is not None:
        out.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    return out


def test_compile_errors_leave_the_public_api_without_srcgrad_frames(monkeypatch):
    monkeypatch.delenv("SRCGRAD_TRACEBACK", raising=False)
    with pytest.raises(sg.NoRuleError) as info:
        sg.grad(uses_polyadd)(X)
    files = _files(info.value.__traceback__)
    assert files and all(not f.startswith(SRCGRAD_DIR) for f in files), files
    assert HERE in files
    assert any("SRCGRAD_TRACEBACK=full" in note for note in info.value.__notes__)


def test_full_tracebacks_on_request(monkeypatch):
    monkeypatch.setenv("SRCGRAD_TRACEBACK", "full")
    with pytest.raises(sg.NoRuleError) as info:
        sg.grad(uses_polyadd)(X)
    files = _files(info.value.__traceback__)
    assert any(f.startswith(SRCGRAD_DIR + "transforms") for f in files)
    assert not any("SRCGRAD_TRACEBACK" in note for note in getattr(info.value, "__notes__", []))


def test_run_time_errors_keep_the_generated_code_frame(monkeypatch):
    monkeypatch.delenv("SRCGRAD_TRACEBACK", raising=False)
    with pytest.raises(ValueError) as info:
        sg.grad(shape_error)(X)
    files = _files(info.value.__traceback__)
    assert not any(f.startswith(SRCGRAD_DIR) for f in files), files
    assert any(f.startswith("<srcgrad-generated") for f in files)
    assert any("code generated for %s, line %d" % (HERE, inspect.getsourcelines(shape_error)[1] + 2) in note
               for note in info.value.__notes__)


def test_tape_and_forward_errors_leave_without_srcgrad_frames(monkeypatch):
    monkeypatch.delenv("SRCGRAD_TRACEBACK", raising=False)
    t = sg.constant(X)
    with pytest.raises(sg.NoRuleError) as info:
        with sg.GradientTape() as tape:
            tape.watch(t)
            np.polyadd([1.0, 2.0], t)
    files = _files(info.value.__traceback__)
    assert files == [HERE], files
    with pytest.raises(sg.NoRuleError) as info:
        sg.jvp(uses_polyadd, (X,), (np.ones(3),))
    assert all(not f.startswith(SRCGRAD_DIR) for f in _files(info.value.__traceback__))


def test_filtering_keeps_the_exception_and_its_chain():
    def inner():
        raise KeyError("inner")

    @errors.api_boundary
    def api():
        try:
            inner()
        except KeyError as exc:
            raise ValueError("outer") from exc
    with pytest.raises(ValueError, match="outer") as info:
        api()
    assert isinstance(info.value.__cause__, KeyError)
    assert _files(info.value.__cause__.__traceback__)       # the user's frames of the cause are kept


# --------------------------------------------------------------- NoRuleError per path


def test_no_rule_error_in_compiled_code_says_what_to_do_there():
    with pytest.raises(sg.NoRuleError) as info:
        sg.grad(uses_polyadd)(X)
    message = str(info.value)
    assert "%s:%d" % (HERE, inspect.getsourcelines(uses_polyadd)[1] + 2) in message
    assert "np.sum(np.polyadd([1.0, 2.0], y))" in message
    assert "outside the function being differentiated" in message
    assert "tape" not in message and "ForwardAccumulator" not in message
    assert info.value.path == "compiled"
    assert "@sg.register_adjoint(np.polyadd)\n" in message
    assert "def polyadd_adjoint(z, a1, a2):" in message


def test_no_rule_error_on_the_tape_says_what_to_do_there():
    t = sg.constant(X)
    with pytest.raises(sg.NoRuleError) as info:
        with sg.GradientTape() as tape:
            tape.watch(t)
            np.polyadd([1.0, 2.0], t)
    message = str(info.value)
    assert info.value.path == "tape"
    assert "stop_recording" in message and "outside the function being differentiated" not in message
    assert HERE in message and "np.polyadd([1.0, 2.0], t)" in message
    assert "def polyadd_adjoint(" in message


def test_no_rule_error_in_a_forward_accumulator_says_what_to_do_there():
    t = sg.constant(X)
    with pytest.raises(sg.NoRuleError) as info:
        with sg.ForwardAccumulator(t, np.ones(3)):
            np.polyadd([1.0, 2.0], t)
    message = str(info.value)
    assert info.value.path == "forward"
    assert "ForwardAccumulator" in message and "stop_recording" not in message
    assert HERE in message


def test_rule_templates_have_the_functions_signature():
    template = errors.rule_template(np.sin)
    assert "@sg.register_adjoint(np.sin)\ndef sin_adjoint(z, x, out=None, dtype=None):" in template
    assert "    d[x] = ..." in template
    two = errors.rule_template(np.add)
    assert "def add_adjoint(z, x, y, out=None, dtype=None):" in two and "d[y] = ..." in two
    assert "def slogdet_adjoint(z, a):" in errors.rule_template(np.linalg.slogdet)
    assert errors.public_name(np.linalg.slogdet) == "np.linalg.slogdet"
    scipy_special = pytest.importorskip("scipy.special")
    assert errors.public_name(scipy_special.softmax) == "scipy.special.softmax"
    assert errors.public_name(scipy_special.gammaln) == "scipy.special.gammaln"
    assert errors.rule_template(lambda x: x) is None


@pytest.mark.skipif(not hasattr(np, "matvec"), reason="np.matvec is NumPy 2.2+")
def test_a_ufunc_without_a_rule_gets_a_nin_template():
    def mv(A, x):
        return np.sum(np.matvec(A, x))
    with pytest.raises(sg.NoRuleError) as info:
        sg.grad(mv, wrt=(1,))(np.eye(3), X)
    assert "def matvec_adjoint(z, x, y, out=None, dtype=None):" in str(info.value)


def test_the_printed_template_once_edited_registers_a_working_rule(tmp_path):
    """The template is valid srcgrad: filled in (the derivative of polyadd
    with respect to a2, by central differences) and run, the rule works."""
    with pytest.raises(sg.NoRuleError) as info:
        sg.grad(uses_polyadd)(X)
    template = info.value.template
    edited = (template.replace("    d[a2] = ...",
                               "    d[a2] = d[z] * (polyadd(a1, a2 + 1e-7) - polyadd(a1, a2 - 1e-7)) / 2e-7")
              .replace("    d[a1] = ...\n", ""))
    module = tmp_path / "my_polyadd_rule.py"
    module.write_text("import numpy as np\nimport srcgrad as sg\nfrom numpy import polyadd\n\n\n" + edited + "\n")
    spec = importlib.util.spec_from_file_location("my_polyadd_rule", module)
    rule_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rule_module)
    try:
        got = sg.grad(uses_polyadd)(X)
        np.testing.assert_allclose(got, np.cos(X), rtol=1e-6)          # d/dy (y + [0, 1, 2]) = 1
    finally:
        from srcgrad.rules import registry
        registry._ADJOINTS.pop(np.polyadd, None)
        sg.grad(poly)(X)        # (other tests expect polyadd to have no rule)


def test_registering_the_template_is_not_needed_to_read_it():
    text = textwrap.dedent(errors.rule_template(np.polyadd))
    compile(text, "<template>", "exec")         # valid Python as printed
