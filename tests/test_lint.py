"""ruff (pyflakes, pycodestyle, bugbear; configured in pyproject.toml) finds
nothing in the repository: unused imports, undefined names outside rule
templates, lines over 120 characters."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_ruff_check_is_clean():
    ruff = shutil.which("ruff")
    if ruff is None:
        try:
            import ruff as ruff_pkg  # noqa: F401
        except ImportError:
            pytest.skip("ruff is not installed (the test extra installs it)")
        cmd = [sys.executable, "-m", "ruff"]
    else:
        cmd = [ruff]
    proc = subprocess.run(cmd + ["check", "--output-format", "concise", "."], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, "ruff check found problems:\n" + proc.stdout + proc.stderr
