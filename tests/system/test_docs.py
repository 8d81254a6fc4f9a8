"""The documentation is built and its code runs.

- `mkdocs build --strict` passes (into a temporary site directory), with
  every public name of `srcgrad.__all__` in the API reference;
- README.md stays a short front page: at most 150 lines, the two
  first-screen commands, the astunparse sentence, no references to files a
  clone does not have, links that resolve, and the generated code it shows
  is what `sg.source` prints now;
- on the documentation pages, every ```python block runs: the blocks of a
  page, in order, as one script named after the page (`tutorial.py`, ...),
  in a fresh process. Blocks fenced ```py are shown, not run (output,
  TensorFlow/JAX code, rule templates that would replace srcgrad's own). A
  ```py block of generated code (it has `# Grad of:` or `# Primal and
  tangent` comments) must appear verbatim in what the page's script prints.
"""
import os
import pathlib
import re
import subprocess
import sys

import pytest

import srcgrad as sg

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
GENERATED = ("# Grad of:", "# Primal and tangent")
# Pages without runnable code, or generated (the rule catalog) or rendered from docstrings.
NOT_RUN = {"supported.md", "api.md"}
# Libraries a page may show srcgrad on that the test extra does not install (the bench extra does)
PEERS = ("torch", "jax")


def blocks(text, lang):
    return [body for fence, body in FENCE.findall(text) if fence == lang]


def run_script(code, name, tmp_path, timeout=300):
    path = tmp_path / name
    path.write_text(code)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p), MPLBACKEND="Agg")
    proc = subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, "%s failed:\n%s\n%s" % (name, proc.stdout, proc.stderr)
    return proc.stdout


# ---------------------------------------------------------------------------
# mkdocs build --strict

def test_mkdocs_build_strict(tmp_path):
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1",
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, "mkdocs build --strict failed:\n%s\n%s" % (proc.stdout, proc.stderr)
    api = (site / "api" / "index.html").read_text()
    for name in sg.__all__:
        assert 'id="srcgrad.%s"' % name in api, "srcgrad.%s missing from the API reference" % name
    for page in ("getting-started", "tutorial", "supported-python", "supported", "writing-rules",
                 "design", "performance", "comparison", "faq", "semantics",
                 "notebooks/tour", "notebooks/gallery/neural_ode"):
        assert (site / page / "index.html").exists(), page
    # the benchmark tables are included from benchmarks/RESULTS.md, not copied
    assert "MLP 784-256-10" in (site / "performance" / "index.html").read_text()


def test_api_reference_lists_every_public_name_by_its_public_path():
    text = (DOCS / "api.md").read_text()
    directives = re.findall(r"^::: (\S+)", text, re.M)
    assert sorted(directives) == sorted("srcgrad." + name for name in sg.__all__)


# ---------------------------------------------------------------------------
# README

def test_readme_is_a_short_front_page():
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    first_screen = "\n".join(text.splitlines()[:30])
    for command in ('python3 -m venv .venv && . .venv/bin/activate',
                    'python3 -m pip install -e ".[examples]" && python3 examples/digits.py',
                    'python3 -m pip install -e ".[test]" && python3 -m pytest -q'):
        assert command in first_screen, command
    for phrase in ("astunparse 1.6.3", "x[:, 0]", "Python 3.9", "match", "ast.unparse",
                   "gast.gast_to_ast"):
        assert phrase in text, phrase
    for absent in ("API.md", "../shared", "issues 9", "DESIGN.md"):
        assert absent not in text, absent
    assert "mkdocs serve" in text and '".[docs]"' in text


def test_readme_links_resolve():
    text = README.read_text()
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if "://" in target:
            continue
        assert (ROOT / target).exists(), target


def test_readme_examples_run_and_show_the_code_srcgrad_prints(tmp_path):
    py = blocks(README.read_text(), "python")
    grad_example, model, print_source, generated = py[:4]
    out = run_script(grad_example, "example.py", tmp_path).splitlines()
    expected = [line.split("#", 1)[1].split(":")[0].strip()
                for line in grad_example.splitlines() if line.startswith("print(")]
    assert len(out) == len(expected)
    for got, want in zip(out, expected):
        assert got.strip() == want, (got, want)
    # the tape example, saved as model.py, then the sg.source line: its output is the shown code
    printed = run_script(model + print_source, "model.py", tmp_path)
    assert printed.strip() == generated.strip(), (
        "README's generated code is out of date; srcgrad prints now:\n" + printed)


# ---------------------------------------------------------------------------
# the pages' code

PAGES = sorted(p for p in DOCS.glob("*.md") if p.name not in NOT_RUN)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_code_runs(page, tmp_path):
    text = page.read_text()
    code = blocks(text, "python")
    shown = [b for b in blocks(text, "py") if any(m in b for m in GENERATED)]
    if not code:
        assert not shown, "%s shows generated code but runs none" % page.name
        return
    for peer in PEERS:      # (a page showing another library's arrays needs it installed)
        if re.search(r"^import .*\b%s\b" % peer, "\n".join(code), re.M):
            pytest.importorskip(peer, reason="%s runs %s, which the test extra does not install" % (page.name, peer))
    out = run_script("\n".join(code), page.stem + ".py", tmp_path)
    for block in shown:
        assert block.strip() in out, (
            "%s shows generated code that its script does not print; it prints:\n%s"
            % (page.name, out))
