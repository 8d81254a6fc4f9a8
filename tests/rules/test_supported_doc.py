"""docs/supported.md is generated from the rule registry and must be current."""
import difflib
import pathlib

from srcgrad.rules import catalog

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "supported.md"


def test_supported_doc_is_current():
    expected = catalog.render()
    actual = DOC.read_text() if DOC.exists() else ""
    if actual != expected:
        diff = "".join(list(difflib.unified_diff(
            actual.splitlines(True), expected.splitlines(True),
            "docs/supported.md", "registry"))[:40])
        raise AssertionError(
            "docs/supported.md does not match the rule registry; regenerate it with\n"
            "    %s\n(first lines of the diff:)\n%s" % (catalog.REGENERATE, diff))


def test_catalog_lists_every_rule_and_nondiff_function():
    from srcgrad.rules import registry
    text = catalog.render()
    for rule in registry.adjoint_rules().values():
        assert "| `%s` |" % rule.name in text, rule.name
    assert "## Non-differentiable" in text
