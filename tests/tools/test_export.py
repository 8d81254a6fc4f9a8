"""sg.export: a function and its derivative as one standalone module
(issue 20, item 5). Each exported module is imported in a subprocess that
cannot import srcgrad (`python -I`, srcgrad's editable-install finder and
path entries removed; the test asserts `import srcgrad` fails there) and
its results are compared with sg.grad / sg.jvp in this process."""
import json
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.special

import corpus_funcs as cf
import srcgrad as sg

SCALE = 0.5
W = sg.Variable(np.array([[1.0, -0.5], [0.25, 2.0], [0.5, 0.5]]))


def softplus(z):
    return np.logaddexp(0.0, z)


def layer(x, w):
    return np.tanh(x @ w) * SCALE


def model(x, w, steps=3):
    h = layer(x, w)
    for _ in range(steps):
        h = h + softplus(h) * math.cos(SCALE)
    return np.sum(h ** 2) + np.sum(scipy.special.gammaln(1.5 + h * h))


def uses_prod(x):
    return np.prod(x * x)


def smooth_model(x, w, steps=3):
    h = layer(x, w)
    for _ in range(steps):
        h = h + softplus(h) * math.cos(SCALE)
    return np.sum(h ** 2)


def reads_a_variable(x):
    return np.sum(np.sin(x @ W))


@sg.custom_gradient
def clipped(x):
    def grad_fn(dy):
        return np.clip(dy, -1.0, 1.0)
    return x * 1.0, grad_fn


def uses_custom(x):
    return np.sum(clipped(x) ** 2)


RUNNER = r'''
import importlib.util, json, os, sys
sys.meta_path = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
sys.path = [p for p in sys.path if not os.path.isdir(os.path.join(p, "srcgrad"))]
try:
    import srcgrad
except ImportError:
    pass
else:
    raise SystemExit("srcgrad is importable: the test would prove nothing")
import numpy as np
calls = json.loads(sys.argv[1])
out = []
for path, function, args in calls:
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = getattr(module, function)(*[np.array(a) if isinstance(a, list) else a for a in args])
    out.append(json.loads(json.dumps(result, default=lambda v: np.asarray(v).tolist())))
print(json.dumps({"results": out, "modules": sorted(m for m in sys.modules if m.split(".")[0] in
                                                    ("srcgrad", "gast", "corpus_funcs", "test_export"))}))
'''


def run_without_srcgrad(calls, tmp_path):
    """[(module path, function name, args)] -> their results, computed in a
    Python that cannot import srcgrad."""
    calls = [(str(p), f, [a.tolist() if isinstance(a, np.ndarray) else a for a in args]) for p, f, args in calls]
    run = subprocess.run([sys.executable, "-I", "-c", RUNNER, json.dumps(calls)], capture_output=True, text=True,
                         timeout=600, cwd=str(tmp_path))
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert found["modules"] == []
    return found["results"]


X = np.array([[0.3, -0.2, 0.9], [0.1, 0.4, -0.7]])
WEIGHTS = np.array([[0.5, -1.0], [0.2, 0.3], [-0.4, 0.8]])


def test_export_writes_one_module_that_runs_without_srcgrad(tmp_path):
    path = tmp_path / "model_grad.py"
    text = sg.export(model, path, wrt=(0, 1))
    assert path.read_text() == text and isinstance(text, str)
    imports = [line for line in text.splitlines() if line.startswith(("import ", "from "))]
    assert {line.split()[1].split(".")[0] for line in imports} == {"numpy", "math", "scipy"}, imports
    assert "import scipy.special" in imports        # (the source reads scipy.special.gammaln)
    assert "srcgrad" not in "".join(imports)
    # (np.tanh(x @ w) runs as ufunc_into in srcgrad: exported as the call it stands for)
    assert "ufunc_into" not in text and "binop_into" not in text and "np.tanh(matmul_x)" in text, text
    assert text.startswith('"""model and its derivative, exported by srcgrad (sg.export) from test_export.py:')
    for name in ("def unbroadcast(", "def layer_fwd(", "def grad_model(x, w, steps=3):", "def model(x, w, steps=3):",
                 "def softplus(z):", "SCALE = 0.5", "class ShapeOf:"):
        assert name in text, name
    gx, gw = sg.grad(model, wrt=(0, 1))(X, WEIGHTS)
    (got_x, got_w), value = run_without_srcgrad([(path, "grad_model", [X, WEIGHTS]),
                                                 (path, "model", [X, WEIGHTS])], tmp_path)
    np.testing.assert_allclose(got_x, gx, rtol=1e-12)
    np.testing.assert_allclose(got_w, gw, rtol=1e-12)
    assert value == pytest.approx(model(X, WEIGHTS), rel=1e-12)


def test_export_forward_mode_and_example_arguments(tmp_path):
    path = tmp_path / "model_jvp.py"
    sg.export(smooth_model, path, wrt=(0,), mode="forward")
    v = np.ones_like(X)
    value, tangent = sg.jvp(smooth_model, (X, WEIGHTS, 3), (v, None, None))
    (out, dout), = run_without_srcgrad([(path, "smooth_model_jvp", [X, WEIGHTS, 3, v])], tmp_path)
    assert out == pytest.approx(value, rel=1e-12) and dout == pytest.approx(tangent, rel=1e-12)
    # the code compiled for a Python float: scalar code
    scalar = tmp_path / "scalar.py"
    text = sg.export(lambda t: t ** 3 + math.sin(t), scalar, args=(1.3,))
    assert "unbroadcast" not in text
    (g,), = [run_without_srcgrad([(scalar, "grad_lambda_", [1.3])], tmp_path)]
    assert g == pytest.approx(3 * 1.3 ** 2 + math.cos(1.3), rel=1e-12)


def test_a_variable_read_as_a_global_is_written_with_its_value(tmp_path):
    path = tmp_path / "variable.py"
    text = sg.export(reads_a_variable, path)
    assert "W = np.array([[1.0, -0.5], [0.25, 2.0], [0.5, 0.5]], dtype='<f8')" in text
    (g,), = [run_without_srcgrad([(path, "grad_reads_a_variable", [X])], tmp_path)]
    np.testing.assert_allclose(g, sg.grad(reads_a_variable)(X), rtol=1e-12)


@pytest.mark.usefixtures("compiled_only")
def test_what_cannot_stand_alone_is_refused_by_name(tmp_path):
    with pytest.raises(TypeError, match="clipped, a @sg.custom_gradient function"):
        sg.export(uses_custom, tmp_path / "custom.py")
    assert not (tmp_path / "custom.py").exists()
    # np.prod has no tangent rule: forward mode transposes its VJP at run time, through srcgrad
    # (gammaln's tangent rule is derived from its adjoint template: generated code, exported)
    with pytest.raises(TypeError, match="transpose_jvp_packed .* export mode='reverse'"):
        sg.export(uses_prod, tmp_path / "m.py", mode="forward")
    sg.export(model, tmp_path / "m.py", mode="forward")
    with pytest.raises(ValueError, match="mode"):
        sg.export(model, tmp_path / "m.py", mode="sideways")


EXPORTED = ["newton_sqrt", "while_counter", "rnn_for_range", "for_zip", "break_on_threshold", "return_in_loop",
            "huber_loss", "augmented_assignment_arrays", "list_unpacking", "closure_array", "recursion_power",
            "method_call", "math_functions", "softmax", "attention", "gru_like", "logsumexp_rows",
            "lstm_dict_params", "lambda_in_dict", "objects_in_global_list_loop", "with_errstate",
            "interp_searchsorted", "slice_assign", "or_default_value", "other_module_class"]


def test_corpus_functions_export_and_match_sg_grad(tmp_path):
    entries = {e.name: e for e in cf.CORPUS}
    calls, expected = [], []
    for k, name in enumerate(EXPORTED):
        e = entries[name]
        args = e.make_args()
        path = tmp_path / ("corpus_%d.py" % k)
        sg.export(e.fn, path, wrt=e.wrt, args=args)
        fname = "grad_" + (e.fn.__name__ if e.fn.__name__ != "<lambda>" else "lambda_")
        if any(isinstance(a, (list, tuple, dict)) for a in args):
            continue
        calls.append((path, fname, list(args)))
        g = sg.grad(e.fn, wrt=e.wrt)(*args)
        expected.append(g if isinstance(g, tuple) else (g,))
    results = run_without_srcgrad(calls, tmp_path)
    assert len(results) == len(expected) > 20
    for (path, name, _), got, want in zip(calls, results, expected):
        got = got if len(want) > 1 else [got]
        for a, b in zip(got, want):
            np.testing.assert_allclose(np.asarray(a, dtype=float), b, rtol=1e-10, atol=1e-12, err_msg=name)


def test_the_module_reads_well():
    text = sg.export(layer, os.devnull)
    first = text.splitlines()[:4]
    assert first[0].startswith('"""layer and its derivative, exported by srcgrad (sg.export) from test_export.py:')
    assert first[2] == "    grad_layer(x, w) -> the gradient with respect to x, as sg.grad(layer, wrt=0)"
    sections = [line for line in text.splitlines() if line.startswith("# " + "-" * 20)]
    assert sections == ["# -------------------- srcgrad's run-time helpers, copied from its source",
                        "# -------------------- the function as written, and the functions it calls",
                        "# -------------------- the derivative"]
    assert text.rstrip().endswith("__all__ = ['grad_layer', 'layer']")
    compile(textwrap.dedent(text), "<export>", "exec")
