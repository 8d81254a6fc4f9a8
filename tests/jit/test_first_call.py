"""What makes sg.jit's first call cheaper keeps its values: the twins'
machine code cached on disk (twins.py), callees linked as declarations
of their compiled code (linking.py), max_chooser's loops."""
import os
import warnings

import numpy as np
import pytest

numba = pytest.importorskip("numba")

import srcgrad as sg  # noqa: E402
from srcgrad.jit import twins  # noqa: E402


def log_softmax_loss(w, x):
    logits = x @ w
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    return -np.sum(shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True)))


def _data():
    rng = np.random.default_rng(4)
    return rng.normal(size=(5, 3)), rng.normal(size=(6, 5))


def _main_library(jitted):
    (entry,) = [e for e in jitted._entries.values() if e.call is not None]
    (cres,) = entry.call.overloads.values()
    return cres.library


def test_values_and_callees_linked_as_declarations():
    w, x = _data()
    jitted = sg.jit(sg.grad(log_softmax_loss))
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        got = jitted(w, x)
    np.testing.assert_allclose(got, sg.grad(log_softmax_loss)(w, x), rtol=1e-12, atol=1e-12)
    text = str(_main_library(jitted)._final_module)
    declared = [line for line in text.splitlines() if line.startswith("declare") and "srcgrad3jit5twins" in line]
    assert declared             # (max_chooser's and unreduce's twins: their compiled code, called)


def test_max_chooser_splits_ties_and_keeps_nan_rows():
    @numba.njit
    def chooser(x, y):
        return twins.max_chooser(x, y, 1, False)
    x = np.array([[1.0, 3.0, 3.0], [np.nan, 0.0, 1.0], [-0.0, 0.0, -1.0]])
    y = np.max(x, axis=1)
    got = chooser(x, y)
    mask = (x == y[:, None]).astype(np.float64)
    with np.errstate(invalid="ignore"):
        expected = mask / mask.sum(axis=1, keepdims=True)
    np.testing.assert_array_equal(got, expected)
    assert np.isnan(got[1]).all() and got[0].tolist() == [0.0, 0.5, 0.5]


def test_twins_are_cached_in_the_cache_directory():
    w, x = _data()
    sg.jit(sg.grad(log_softmax_loss))(w, x)
    folder = twins._cache_folder()
    assert folder.startswith(os.environ["SRCGRAD_CACHE_DIR"])
    assert any(name.endswith(".nbi") for name in os.listdir(folder))


def test_a_twin_cache_directory_that_cannot_be_written(tmp_path, monkeypatch):
    blocker = tmp_path / "not_a_directory"
    blocker.write_text("")
    monkeypatch.setenv("SRCGRAD_CACHE_DIR", str(blocker))

    def cube_rows(v):       # (a rank no other test compiles the twins for)
        return np.sum(np.max(v * v * v, axis=2, keepdims=True))
    v = np.random.default_rng(5).normal(size=(2, 3, 4, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        got = sg.jit(sg.grad(cube_rows))(v)
    np.testing.assert_allclose(got, sg.grad(cube_rows)(v), rtol=1e-12)
    assert not os.path.isdir(twins._cache_folder())



def test_compilations_run_at_compile_opt_and_restore_numba_level(monkeypatch):
    """sg.jit's pipelines lower Numba's optimisation level to
    COMPILE_OPT while they compile (also when the compilation raises),
    and never raise it (the tests run at NUMBA_OPT=0)."""
    from numba.core import config

    from srcgrad.jit import linking
    seen = []

    def core(self):
        seen.append(int(config.OPT))
        if self == "raise":
            raise RuntimeError("typing failed")
        return "compiled"
    wrapped = linking.at_compile_opt(core)
    monkeypatch.setattr(config, "OPT", type(config.OPT)(3))
    assert wrapped("ok") == "compiled"
    with pytest.raises(RuntimeError):
        wrapped("raise")
    assert seen == [linking.COMPILE_OPT] * 2 and int(config.OPT) == 3
    monkeypatch.setattr(config, "OPT", type(config.OPT)(0))
    wrapped("ok")
    assert seen[-1] == 0


def test_a_plain_function_compiles_through_the_opt_pipeline():
    from srcgrad.jit import linking

    def poly(x):
        return 3.0 * x * x + 1.0
    jitted = sg.jit(poly)
    assert jitted(2.0) == 13.0
    (entry,) = jitted._entries.values()
    assert entry.call._compiler.pipeline_class is linking.opt_pipeline_class()


def mlp_loss(w1, w2, x):
    h = np.tanh(x @ w1)
    acc = np.zeros_like(h)
    acc = acc + h @ w2 @ w2.T
    return np.sum(acc * acc) + np.sum(np.zeros(3))


def test_matmul_and_zeros_call_cached_twins_with_the_same_values():
    rng = np.random.default_rng(7)
    w1, w2, x = rng.normal(size=(5, 4)), rng.normal(size=(4, 3)), rng.normal(size=(6, 5))
    lowered = sg.source(mlp_loss, args=(w1, w2, x), wrt=(0, 1), jit=True)
    assert "_sg_matmul(" in lowered and " @ " not in lowered and "_sg_zeros_like(" in lowered
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        got = sg.jit(sg.grad(mlp_loss, wrt=(0, 1)))(w1, w2, x)
    expected = sg.grad(mlp_loss, wrt=(0, 1))(w1, w2, x)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)
    # the twins' code is Numba's own: the same products, bit for bit
    @numba.njit
    def both(a, b):
        return twins.matmul(a, b), a @ b, twins.zeros((2, 3)), twins.zeros_like(a)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(4,))
    via, direct, z, zl = both(a, b)
    np.testing.assert_array_equal(via, direct)
    assert z.shape == (2, 3) and not z.any() and zl.shape == a.shape and not zl.any()


def test_a_function_of_matrices_is_multidimensional_and_one_of_vectors_is_not():
    from numba.core import types

    from srcgrad.jit import linking
    vec, mat = types.float64[:], types.float64[:, :]
    assert not linking._multidimensional(vec) and linking._multidimensional(mat)
    assert linking._multidimensional(types.Tuple((types.float64, mat)))
    assert linking._multidimensional(types.ListType(mat)) and linking._multidimensional(types.List(mat))
    assert linking._multidimensional(types.Optional(mat)) and not linking._multidimensional(types.Optional(vec))


def vector_energy(x):
    return np.sum(np.sin(x) * x)


def matrix_energy(w):
    return np.sum(np.sin(w) * w)


def test_the_own_code_of_a_function_of_vectors_keeps_numbas_level(monkeypatch):
    """At NUMBA_OPT=3, a gradient of 1-d arrays is optimised at 3, one of
    matrices at COMPILE_OPT (the module passes' pass builders record the
    level they were made at)."""
    from numba.core import codegen, config

    from srcgrad.jit import linking
    monkeypatch.setattr(config, "OPT", type(config.OPT)(3))
    levels = []
    make = codegen.CPUCodegen._module_pass_manager

    def spy(self, **kwargs):
        if "cost" not in kwargs:        # (the full module passes, not the cheap inlining pass)
            levels.append(int(config.OPT))
        return make(self, **kwargs)
    monkeypatch.setattr(codegen.CPUCodegen, "_module_pass_manager", spy)
    seen = {}
    for fn, x in ((vector_energy, np.linspace(0.0, 1.0, 5)), (matrix_energy, np.ones((2, 3)))):
        levels.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("error", sg.PerformanceWarning)
            got = sg.jit(sg.grad(fn))(x)
        np.testing.assert_allclose(got, np.sin(x) + x * np.cos(x), rtol=1e-12)
        seen[fn.__name__] = levels[-1]          # (the gradient's own module, finalised last)
    assert seen == {"vector_energy": 3, "matrix_energy": linking.COMPILE_OPT}, seen
