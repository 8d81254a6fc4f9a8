"""Smoke test of the Tangent-corpus harness (benchmarks/tangent_corpus/):
its reading of a Tangent-style checkout (functions.py, conftest's blacklist,
the test files' signatures), its three modes, its verdicts (agree, kink,
wrong) and its report, on two functions written here in a fake checkout
(not Tangent's code, no network).
"""
import os
import sys
import types

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks.tangent_corpus import checks, corpus, report  # noqa: E402
from benchmarks.tangent_corpus.run import run  # noqa: E402

FUNCTIONS = '''\
import numpy as np

import tangent
from tangent import insert_grad_of

try:
  import tensorflow as tf
except ImportError:
  tf = None


def smooth(a):
  stack = tangent.Stack()
  tangent.push(stack, a, 'op')
  return np.sin(a) * tangent.pop(stack, 'op') * a


def kinked(a):
  if a > 2.0:
    return a * a
  return 3.0 * a


def left_out(a):
  return a


def tfe_negative(t):
  return tf.negative(t)
'''

TESTS = {
    "conftest.py": "blacklisted = ['left_out']\n",
    "test_reverse_mode.py": "def test_grad_unary(func, motion, optimized, preserve_result, a):\n  pass\n\n\n"
                            "def test_grad_unary_tensor(func, motion, optimized, preserve_result, t):\n  pass\n",
    "test_forward_mode.py": "def test_deriv_unary(func, preserve_result, a):\n  pass\n",
    "test_reverse_over_reverse.py": "def test_reverse_over_reverse_unary(func, a, optimized):\n  pass\n",
}


@pytest.fixture
def checkout(tmp_path):
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "functions.py").write_text(FUNCTIONS)
    for name, text in TESTS.items():
        (tests / name).write_text(text)
    return str(tmp_path)


def test_selection_follows_the_test_signatures(checkout):
    data = corpus.load(checkout, short=True)
    by_name = {e.name: e for e in data.entries}
    assert by_name["smooth"].tests == {"reverse": ["test_grad_unary"], "forward": ["test_deriv_unary"],
                                       "second": ["test_reverse_over_reverse_unary"]}
    assert by_name["left_out"].tests == {m: [] for m in corpus.MODES}        # conftest's blacklist
    assert by_name["tfe_negative"].tf and by_name["tfe_negative"].tests["reverse"] == ["test_grad_unary_tensor"]
    assert [c.args for c in by_name["kinked"].cases] == [(2.0,)]                # Tangent's --short scalars
    assert "tangent" not in sys.modules or sys.modules["tangent"] is not corpus.tangent_shim
    assert any("argument values differ" in n for n in data.notes)              # this conftest has none


def test_run_counts_kinks_and_report(checkout):
    pytest.importorskip("autograd")
    results = run(checkout, short=True, log=lambda *a: None)
    fns = {f["name"]: f for f in results["functions"]}
    for mode in corpus.MODES:
        assert fns["smooth"]["modes"][mode]["status"] == "agree", fns["smooth"]["modes"][mode]
        # at a = 2 the branch changes: srcgrad's 3 is the left derivative (the branch taken)
        assert fns["kinked"]["modes"][mode]["cases"] == {"kink": 1}, fns["kinked"]["modes"][mode]
        assert fns["kinked"]["modes"][mode]["status"] == "agree"
        assert fns["tfe_negative"]["modes"][mode]["status"] == "skip"
    t = report.counts(results, "reverse", "tangent")
    assert (t["agree"], t["measured"], t["tf"]) == (2, 2, 1)
    assert report.counts(results, "second", "all")["measured"] == 3             # left_out too
    text = report.render(results)
    assert "**2 / 2**" in text and "| kinked | reverse | kink 1 |" in text and "tfe_negative" in text


def test_a_wrong_derivative_is_caught():
    x0 = np.array([0.3])
    fd = checks.fd_jacobian(lambda v: np.sin(v), x0)
    assert checks.judge(np.cos(0.3), fd, checks.RTOL1, checks.ATOL1)[0] == "agree"
    status, detail = checks.judge(np.cos(0.3) * 1.001, fd, checks.RTOL1, checks.ATOL1)
    assert status == "wrong" and "relative 0.001" in detail["message"]
    assert checks.judge(np.nan, fd, checks.RTOL1, checks.ATOL1)[0] == "nan"

    # the plumbing: a fake srcgrad whose gradient is off by 0.1 %
    entry = corpus.Entry("f", lambda a: np.sin(a) * a, None, "test")
    fake = types.SimpleNamespace(PerformanceWarning=UserWarning, grad=lambda f, wrt, preserve_result=False: (
        (lambda a: (f(a), 1.001 * (np.sin(a) + a * np.cos(a)))) if preserve_result
        else (lambda a: 1.001 * (np.sin(a) + a * np.cos(a)))))
    out = checks.Runner(entry, fake).reverse(corpus.Case((0.7,), (0,), "a=0.7"), np.random.RandomState(0))
    assert out["checks"]["grad"][0] == "wrong"


def test_flatten_round_trip():
    value = (1.5, np.arange(6.0).reshape(2, 3), {"b": 2.0, "a": (np.float64(3.0), 4)}, 7)
    flat, unflatten = checks.flatten(value)
    assert flat.tolist() == [1.5, 0, 1, 2, 3, 4, 5, 3.0, 2.0]                    # dict keys sorted; ints kept
    again = unflatten(flat)
    assert again[2]["a"][1] == 4 and again[3] == 7 and isinstance(again[0], float)
    assert np.array_equal(checks.flatten(again)[0], flat)
