"""The architecture is checked, not described: the layers of DESIGN.md
(pyproject.toml's import-linter contract) hold for every import, at module
level and inside functions, and no module imports a module that imports it."""
import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_layers_contract_is_kept():
    run = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                          "sys.exit(lint_imports_command())"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "0 broken" in run.stdout


def test_no_function_level_import_of_srcgrad_modules():
    """A function-level import hides a dependency from a reader; the only
    ones allowed load optional SciPy rules lazily."""
    allowed = {ROOT / "srcgrad" / "rules" / "__init__.py", ROOT / "srcgrad" / "__init__.py"}
    found = []
    for path in sorted((ROOT / "srcgrad").rglob("*.py")):
        if path in allowed:
            continue
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").startswith("srcgrad")):
                    found.append("%s:%d" % (path.relative_to(ROOT), node.lineno))
                elif isinstance(node, ast.Import) and any(a.name.startswith("srcgrad") for a in node.names):
                    found.append("%s:%d" % (path.relative_to(ROOT), node.lineno))
    assert not found, "function-level imports of srcgrad modules: " + ", ".join(found)
