"""sg.explain: the compiler's view of a function's lines for given
arguments (issue 20, item 5): which values carry derivatives, where a
derivative path is cut and by what, which calls are compiled, rules or not
differentiated, and what the reverse sweep saves."""
import inspect

import numpy as np
import pytest

import corpus_funcs as cf
import srcgrad as sg


def _line(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def helper(x):
    return np.sin(x) * x


def cut_twice(x, w):
    y = helper(x) @ w
    k = int(np.sum(x))
    i = np.argmax(y)
    return y[i] * k + np.sum(np.tanh(y))


def many_cuts(x):
    m = x.astype(int)
    c = x > 0.5
    f = np.floor(x)
    n = x.shape[0]
    return np.sum(x * m + c * f) * n


def test_the_report_names_the_lines_of_int_and_argmax():
    x, w = np.array([0.5, 1.5, 2.0]), np.ones((3, 2))
    report = sg.explain(cut_twice, x, w)
    assert isinstance(report, str)
    k_line, i_line = _line(cut_twice, "int("), _line(cut_twice, "argmax")
    assert [c[0] for c in report.cuts] == [k_line, i_line]
    assert "int()" in report.cuts[0][3] and "np.argmax" in report.cuts[1][3]
    text = str(report)
    for lineno, source in ((k_line, "k = int(np.sum(x))"), (i_line, "i = np.argmax(y)")):
        row = next(line for line in text.splitlines() if line.startswith("%d " % lineno))
        assert source in row and "CUT" in row
    cut_table = text.split("derivative paths cut")[1]
    assert "int(): " in cut_table and "np.argmax: returns indices" in cut_table


def test_the_report_reads_the_compilers_activity():
    x, w = np.array([0.5, 1.5, 2.0]), np.ones((3, 2))
    report = sg.explain(cut_twice, x, w)
    assert {"x", "y"} <= report.active and not {"k", "i", "w"} & report.active
    rows = {r["lineno"]: r for r in report.lines}
    first = rows[_line(cut_twice, "helper(x) @ w")]
    assert "y" in first["active"]
    assert "helper (compiled)" in first["calls"] and "np.matmul (rule)" in first["calls"]
    k_row = rows[_line(cut_twice, "int(")]
    assert "k" in k_row["inactive"] and "int (not differentiable)" in k_row["calls"]
    assert "np.sum (rule, not differentiated here)" in k_row["calls"]
    assert "inputs" in str(report) and "not differentiated" in str(report)     # w
    # with respect to w instead: x's line carries no derivative
    by_w = sg.explain(cut_twice, x, w, wrt=1)
    assert "x" not in by_w.active and "y" in by_w.active


def test_each_kind_of_cut_is_named():
    report = sg.explain(many_cuts, np.array([0.25, 1.5, 2.75]))
    reasons = {c[0]: c[3] for c in report.cuts}
    assert ".astype(int)" in reasons[_line(many_cuts, "astype")]
    assert "comparison" in reasons[_line(many_cuts, "x > 0.5")]
    assert "np.floor" in reasons[_line(many_cuts, "floor")]
    assert _line(many_cuts, "shape") not in reasons         # a shape read cuts no derivative path
    # the cast carries no derivative (it was once differentiated as a copy)
    np.testing.assert_allclose(sg.grad(many_cuts)(np.array([0.25, 1.5, 2.75])),
                               3 * np.array([0.0, 1.0, 2.0]))


def test_the_residuals_are_measured():
    x, w = np.linspace(0.1, 1.0, 50), np.ones((50, 4))
    report = sg.explain(cut_twice, x, w)
    names = [r[0] for r in report.residuals]
    assert "w" in names and "y" in names
    sizes = dict((r[0], r[2]) for r in report.residuals)
    assert sizes["w"] == w.nbytes and sizes["y"] == 4 * 8
    assert "the reverse sweep saves %d values" % len(names) in str(report)
    total = sum(sizes.values())
    assert ("%d bytes" % total if total < 10240 else "KiB") in str(report)


def test_the_report_is_a_table_in_a_notebook():
    report = sg.explain(cut_twice, np.array([0.5, 1.5, 2.0]), np.ones((3, 2)))
    html = report._repr_html_()
    assert html.count("<table") == 4          # inputs, lines, cuts, residuals
    assert "k = int(np.sum(x))" in html and "background" in html and "monospace" in html


@pytest.mark.parametrize("entry", [e for e in cf.CORPUS if e.name in (
    "activity_flag", "activity_int_index", "rnn_for_range", "lstm_dict_params", "method_call", "recursion_power",
    "with_errstate", "lambda_in_dict")], ids=lambda e: e.name)
def test_explain_runs_on_corpus_functions(entry, capsys):
    report = sg.explain(entry.fn, *entry.make_args(), wrt=entry.wrt)
    assert report.lines and report.active
    assert entry.fn.__name__ in str(report).splitlines()[0] or entry.fn.__name__ == "<lambda>"


def _generator_helper(w):
    for i in range(2):
        yield w[i] * 2.0


def _uses_a_generator(w):
    total = 0.0
    for a in _generator_helper(w):
        total = total + np.sin(a)
    return total


def test_a_function_run_op_by_op_is_explained_as_such():
    report = sg.explain(_uses_a_generator, np.ones(2))
    assert "op by op" in report and "yield" in report
    assert isinstance(report.op_by_op, sg.UnsupportedSyntaxError) and report.lines == []


def _drawn(x):
    return np.sum(x * np.random.normal(size=x.shape))


def test_the_report_says_whether_sg_jit_compiles_the_gradient():
    pytest.importorskip("numba")
    x, w = np.array([0.5, 1.5, 2.0]), np.ones((3, 2))
    report = sg.explain(cut_twice, x, w)
    assert report.jit.startswith("sg.jit: the gradient is lowered for Numba") and report.endswith(report.jit)
    drawn = sg.explain(_drawn, x)
    assert drawn.jit.startswith("sg.jit: runs this gradient in CPython") and "random" in drawn.jit
    assert "random numbers" in drawn._repr_html_()
