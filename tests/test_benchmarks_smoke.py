"""The benchmark runner (`python -m benchmarks`) in a tiny configuration,
so that its code cannot rot: every workload runs at toy sizes with one
timed repeat, every path that can run here (JAX and PyTorch when
importable) is checked against its hand-written derivative, and the JSON
file and the tables are produced. The numbers themselves mean nothing at
these sizes and are not asserted on.
"""
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:   # `pytest` run without `python -m`: the checkout's benchmarks/
    sys.path.insert(0, ROOT)

from benchmarks import harness, run  # noqa: E402


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    path = tmp_path_factory.mktemp("bench") / "results.json"
    assert run.main(["--quick", "--small", "--repeat", "1", "--quiet", "--json", str(path)]) == 0
    with open(path) as f:
        return json.load(f)


def test_every_workload_runs_and_every_path_agrees(results):
    assert [w["name"] for w in results["workloads"]] == run.WORKLOADS
    problems = ["%s / %s: %s %s" % (w["name"], r["path"], r["status"], r["error"])
                for w in results["workloads"] for r in w["rows"]
                if r["status"] not in (harness.OK, harness.SKIPPED)]
    problems += ["%s: %s" % (w["name"], w["error"]) for w in results["workloads"] if w["error"]]
    assert not problems, "\n".join(problems)


def test_rows_have_times_ratios_and_goals(results):
    by_name = {w["name"]: w for w in results["workloads"]}
    for w in results["workloads"]:
        if w["skipped"]:
            continue
        timed = [r for r in w["rows"] if r["status"] == harness.OK]
        assert timed and all(r["median_s"] is not None for r in timed), w["name"]
        # differences of two medians (overheads) may come out negative at toy sizes
        assert all(r["median_s"] >= 0 for r in timed if r["kind"] != "derived"), w["name"]
        if w["name"] not in ("digits", "arrays"):   # the workloads without a goal in the issues
            assert w["targets"], "%s states no goal" % w["name"]
        for t in w["targets"]:
            assert t["met"] in (True, False, None) and t["source"] in ("issue 9", "issue 10", "issue 18", "issue 19")
    mlp = {r["path"]: r for r in by_name["mlp"]["rows"]}
    assert mlp["hand-written NumPy"]["ratio"] == 1.0
    assert mlp["srcgrad sg.grad"]["peak_bytes"] > 0
    for lib, rows in (("jax", ["JAX jit (steady state)", "JAX jit first call"]),
                      ("torch", ["PyTorch eager"])):
        expected = harness.SKIPPED if harness.optional(lib) is None else harness.OK
        assert all(mlp[name]["status"] == expected for name in rows)
    assert results["machine"]["python"] and results["machine"]["numpy"]


def test_a_wrong_derivative_is_not_timed():
    bench = harness.Bench("t", harness.Settings(quick=True, repeat=1))
    bench.reference("hand", lambda: 2.0)
    row = bench.path("fast but wrong", lambda: 2.1)
    assert row["status"] == harness.WRONG and "rel error" in row["error"]
    row = bench.path("raises", lambda: 1 / 0)
    assert row["status"] == harness.FAILED and "ZeroDivisionError" in row["error"]
    bench.finish()
    assert not bench._by_name["fast but wrong"]["times_s"]


def test_tables_from_json(results, tmp_path, capsys):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(results))
    assert run.main(["--from-json", str(path), "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "| path | median | vs hand-written |" in out and "== hessian" in out


def test_a_path_failing_after_its_check_is_reported():
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("second call")
        return 2.0
    bench = harness.Bench("t", harness.Settings(quick=True, repeat=2))
    bench.reference("hand", lambda: 2.0)
    bench.path("flaky", flaky)
    rows = {r["path"]: r for r in bench.finish()["rows"]}
    assert rows["flaky"]["status"] == harness.FAILED and "second call" in rows["flaky"]["error"]
    assert rows["hand"]["status"] == harness.OK
