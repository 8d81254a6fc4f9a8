"""Smoke test of the layer harness (benchmarks/layers/): its function-pair,
loss and layer-object cases, the comparison with the reference backward,
the finite-difference verdict, and the report, on a tiny layer module
written here (no checkout of the real repositories, no network).
"""
import os
import sys
import textwrap

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks.layers import cases, check, report  # noqa: E402
from benchmarks.layers.repos import Repository  # noqa: E402
from benchmarks.layers.runner import run_repository  # noqa: E402

TINY = '''\
import numpy as np


def affine_forward(x, w, b):
    out = x.reshape(x.shape[0], -1).dot(w) + b
    return out, (x, w, b)


def affine_backward(dout, cache):
    x, w, b = cache
    dx = dout.dot(w.T).reshape(x.shape)
    return dx, x.reshape(x.shape[0], -1).T.dot(dout), dout.sum(axis=0)


def tanh_forward(x):
    out = np.tanh(x)
    return out, out


def tanh_backward(dout, cache):
    return dout * (1 - cache)            # wrong: the derivative is 1 - tanh(x)**2


def dropout_forward(x, dropout_param):
    mask = (np.random.rand(*x.shape) < dropout_param["p"]) / dropout_param["p"]
    return x * mask, mask


def dropout_backward(dout, cache):
    return dout * cache


def exp_forward(x):
    out = np.empty_like(x)
    np.exp(x, out=out)                   # NumPy writing into an array: srcgrad refuses it
    return out, out


def exp_backward(dout, cache):
    return dout * cache


def broken_forward(x):
    return np.zeros((x.shape[0] / 2,)), None     # Python 2 division: fails on plain NumPy


def broken_backward(dout, cache):
    return dout


def softmax_loss(x, y):
    p = np.exp(x - x.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    n = x.shape[0]
    loss = -np.log(p[np.arange(n), y]).sum() / n
    p[np.arange(n), y] -= 1
    return loss, p / n


class Dense:
    """A layer object caching its input on self, gradients in a dict."""

    def __init__(self, n_in, n_out):
        self.params = {"W": np.random.randn(n_in, n_out), "b": np.zeros(n_out)}
        self.grads = {}

    def forward(self, X):
        self.X = X
        return np.tanh(X @ self.params["W"] + self.params["b"])

    def backward(self, dY):
        Y = np.tanh(self.X @ self.params["W"] + self.params["b"])
        dZ = dY * (1 - Y ** 2)
        self.grads["W"] = self.X.T @ dZ
        self.grads["b"] = dZ.sum(axis=0)
        return dZ @ self.params["W"].T
'''


def _tiny_repo(tmp_path):
    (tmp_path / "tiny.py").write_text(TINY)
    repo = Repository(key="tiny", url="(written by the test)", dirname="tiny", modules={"m": "tiny.py"})
    cases.pair(repo, "affine", "m", "affine_forward", "affine_backward",
               lambda g: {"x": g.standard_normal((3, 2, 2)), "w": g.standard_normal((4, 3)),
                          "b": g.standard_normal(3)}, "x w b")
    cases.pair(repo, "tanh", "m", "tanh_forward", "tanh_backward", lambda g: {"x": g.standard_normal((3, 4))}, "x")
    cases.pair(repo, "dropout", "m", "dropout_forward", "dropout_backward",
               lambda g: {"x": g.standard_normal((4, 5)), "dropout_param": {"p": 0.5}}, "x")
    cases.pair(repo, "exp", "m", "exp_forward", "exp_backward", lambda g: {"x": g.standard_normal(4)}, "x")
    cases.pair(repo, "broken", "m", "broken_forward", "broken_backward", lambda g: {"x": g.standard_normal(4)}, "x")
    cases.loss(repo, "softmax_loss", "m", "softmax_loss",
               lambda g: {"x": g.standard_normal((4, 3)), "y": g.randint(3, size=4)})

    def backward(layer, Gs):
        return {"X": layer.backward(Gs[0]), "W": layer.grads["W"], "b": layer.grads["b"]}
    cases.layer(repo, "Dense", "Dense.forward / backward", lambda mods: mods.m.Dense(3, 2),
                lambda g: {"X": g.standard_normal((4, 3))}, {"W": "params.W", "b": "params.b"},
                lambda layer, X: layer.forward(X), backward)
    return repo


def test_tiny_repository_statuses(tmp_path):
    repo = _tiny_repo(tmp_path)
    rows = {row["case"]: row for row in run_repository(repo, str(tmp_path), time_limit=60)}
    status = {name: row["status"] for name, row in rows.items()}
    assert status == {"affine": "agree", "tanh": "reference-error", "dropout": "agree", "exp": "refused",
                      "broken": "reference-error", "softmax_loss": "agree", "Dense": "agree"}, rows
    assert rows["affine"]["via"] == "grad" and rows["Dense"]["via"] == "tape"
    assert set(rows["Dense"]["errors"]) == {"X", "W", "b"}
    assert set(rows["affine"]["errors"]) == {"x", "w", "b"}
    # the wrong backward: finite differences side with srcgrad
    fd = rows["tanh"]["fd"]["x"]
    assert fd["srcgrad_ok"] and not fd["reference_ok"]
    # the refusal names the repository's line; the plain failure too
    assert rows["exp"]["error_class"] == "UnsupportedSyntaxError"
    assert rows["broken"]["stage"] == "reference" and "tiny.py" in rows["broken"]["where"]

    data = {"command": "test", "date": "today", "versions": {"numpy": np.__version__},
            "checkouts": {"tiny": {"url": repo.url, "present": True, "revision": "none", "note": "tiny"}},
            "rows": list(rows.values()), "total_seconds": 1.0, "shims": {}}
    md = report.markdown(data)
    assert "**4 of 7 layers agree**" in md
    assert "without them: **4 of 5** agree" in md
    assert "UnsupportedSyntaxError" in md and "## Errors in the references" in md
    assert report.counts(data["rows"])["by_via"] == {"grad": [3, 6], "tape": [1, 1]}
    assert [c["cases"] for c in report.causes(data["rows"])] == [["tiny/exp"]]


class _WrongProblem(check.Problem):
    """srcgrad's side replaced by a wrong gradient: the harness must say wrong."""

    def __init__(self):
        self.wrt = {"x": np.array([0.5, -1.0, 2.0])}

    def outputs(self, values):
        return [np.sin(values["x"])]

    def reference(self, values, Gs):
        return {"x": np.cos(values["x"]) * Gs[0]}

    def srcgrad(self, values, Gs):
        return self.objective(values, Gs), {"x": np.cos(values["x"]) * Gs[0] * (1 + 1e-3)}


def test_wrong_gradient_is_wrong_and_compare_tolerates_rounding():
    case = check.Case(repo="tiny", name="sin", title="sin", via="grad", make=lambda mods, rng, seed: _WrongProblem())
    row = check.run_case(case, mods=None)
    assert row["status"] == "wrong"
    assert row["fd"]["x"]["reference_ok"] and not row["fd"]["x"]["srcgrad_ok"]
    assert "finite differences side with x: the reference" in row["message"]

    errors, notes = check.compare({"a": np.array([1.0, 2.0]), "b": np.array([1e-20])},
                                  {"a": np.array([1.0, 2.0 + 1e-12]), "b": np.array([0.0]), "c": None},
                                  {"a": None, "b": None, "c": None})
    assert errors["a"] < 1e-6 and errors["b"] < 1e-6 and notes == ["the reference gives no gradient for c"]
    errors, notes = check.compare({"g": np.ones((1, 3))}, {"g": np.ones(3)}, {"g": None})
    assert errors == {"g": 0.0} and "shape" in notes[0]


def test_objective_source_reads_like_user_code():
    src = check.objective_source(["x", "w"], "affine_forward(x, w, b)", ["out[0]"])
    assert src == textwrap.dedent("""\
        def objective(x, w):
            out = affine_forward(x, w, b)
            return np.sum(out[0] * _G0)
        """)
    assert len(cases.REPOSITORIES) == 4
    assert sum(len(r.cases) for r in cases.REPOSITORIES.values()) == 69
