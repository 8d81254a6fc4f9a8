"""The same gradient function on PyTorch CPU tensors and array_api_strict
arrays (docs/arrays.md, "Array-API arrays").

Neither type implements NumPy's dispatch protocols, so srcgrad runs its
generated code with NumPy's names bound to the inputs' array-API namespace
(srcgrad/runtime/namespaces.py). Each program of array_programs.py is
differentiated on NumPy inputs and on the same values as tensors / strict
arrays: the gradient is of the input's type (never converted to NumPy) and
equals NumPy's gradient, which is itself checked against autograd.
"""
import os
import sys

import numpy as np
import pytest

import srcgrad as sg
import array_programs as P
from srcgrad.rules import arrays as rule_arrays
from srcgrad.runtime import namespaces

_SUPPORT_LIST = rule_arrays.support_list

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")
xs = pytest.importorskip("array_api_strict")
torch = pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(23)


def _strict(a):
    return xs.asarray(a) if isinstance(a, np.ndarray) and a.dtype.kind in "fc" else a


def _torch(a):
    return torch.from_numpy(np.array(a)) if isinstance(a, np.ndarray) and a.dtype.kind in "fc" else a


NAMESPACES = {"array_api_strict": (_strict, lambda g: isinstance(g, type(xs.asarray(0.0))), np.asarray),
              "torch": (_torch, lambda g: isinstance(g, torch.Tensor), lambda g: g.numpy())}


def _programs():
    cases = P.common_cases(RNG, 30)
    cases.update({
        "clipped": (P.clipped, (RNG.normal(size=(4, 3)),), (0,)),
        "softmax_xent": (P.softmax_xent, (RNG.normal(size=(3, 4)), RNG.normal(size=(6, 3)),
                                          np.eye(4)[[0, 2, 1, 3, 3, 0]]), (0,)),
        "layer_norm": (P.layer_norm, (RNG.normal(size=(5, 4)), RNG.normal(size=4)), (0, 1)),
        "rnn": (P.rnn, (0.5 * RNG.normal(size=(3, 3)), RNG.normal(size=(6, 3))), (0,)),
        "helper_and_function": (P.helper_and_function, (RNG.normal(size=(4, 3)),), (0,)),
    })
    return cases


PROGRAMS = _programs()


def _autograd_reference(fn, args, wrt):
    """The gradient by autograd on the same source (np replaced by
    autograd.numpy in the function's module for the call)."""
    saved = P.np
    P.np = anp
    try:
        return autograd.grad(lambda *ws: fn(*[ws[wrt.index(i)] if i in wrt else a
                                                for i, a in enumerate(args)]),
                             argnum=tuple(range(len(wrt))))(*[args[i] for i in wrt])
    finally:
        P.np = saved


@pytest.mark.parametrize("library", sorted(NAMESPACES))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_gradient_in_the_inputs_namespace(name, library):
    fn, args, wrt = PROGRAMS[name]
    convert, is_theirs, to_numpy = NAMESPACES[library]
    ref = sg.grad(fn, wrt=wrt)(*args)
    ref = ref if len(wrt) > 1 else (ref,)
    expected = _autograd_reference(fn, args, wrt)
    for r, e in zip(ref, expected):
        np.testing.assert_allclose(r, e, rtol=1e-10, atol=1e-12)
    got = sg.grad(fn, wrt=wrt)(*[convert(a) for a in args])
    got = got if len(wrt) > 1 else (got,)
    for g, r, i in zip(got, ref, wrt):
        assert is_theirs(g), "the gradient of %s came back as %s" % (name, type(g).__name__)
        assert tuple(g.shape) == np.shape(args[i])
        np.testing.assert_allclose(to_numpy(g), r, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("library", sorted(NAMESPACES))
def test_value_and_grad_in_the_namespace(library):
    convert, is_theirs, to_numpy = NAMESPACES[library]
    fn, args, wrt = PROGRAMS["mlp"]
    value, grads = sg.value_and_grad(fn, wrt=wrt)(*[convert(a) for a in args])
    ref_value, ref_grads = sg.value_and_grad(fn, wrt=wrt)(*args)
    assert is_theirs(value) and float(value) == pytest.approx(ref_value, rel=1e-12)
    for g, r in zip(grads, ref_grads):
        assert is_theirs(g)
        np.testing.assert_allclose(to_numpy(g), r, rtol=1e-10)


@pytest.mark.parametrize("library", sorted(NAMESPACES))
def test_list_and_dict_arguments_with_an_unconnected_entry(library):
    convert, is_theirs, to_numpy = NAMESPACES[library]
    W, b, u, x = RNG.normal(size=(3, 2)), RNG.normal(size=2), RNG.normal(size=4), RNG.normal(size=(5, 3))
    got = sg.grad(P.list_params)([convert(W), convert(b), convert(u)], convert(x))
    ref = sg.grad(P.list_params)([W, b, u], x)
    assert all(is_theirs(g) for g in got)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(to_numpy(g), r, rtol=1e-10, atol=1e-12)
    assert not np.any(to_numpy(got[2]))          # the unused entry's zero, in the library's type
    got = sg.grad(P.dict_params)({"W": convert(W), "b": convert(b), "u": convert(u)}, convert(x))
    ref = sg.grad(P.dict_params)({"W": W, "b": b, "u": u}, x)
    assert set(got) == {"W", "b", "u"} and all(is_theirs(g) for g in got.values())
    for k in ref:
        np.testing.assert_allclose(to_numpy(got[k]), ref[k], rtol=1e-10, atol=1e-12)


def test_integer_array_indexing_on_tensors_scatters_with_torch():
    # p[np.arange(n), y] (CS231n's softmax loss): the adjoint accumulates with PyTorch's
    # index_put_(accumulate=True); repeated labels and repeated rows included
    W, b, X = RNG.normal(size=(4, 3)), RNG.normal(size=3), RNG.normal(size=(6, 4))
    y = np.array([0, 2, 2, 1, 0, 2])
    got = sg.grad(P.cs231n_softmax, wrt=(0, 1, 2))(*[torch.from_numpy(a) for a in (W, b, X)], y)
    ref = sg.grad(P.cs231n_softmax, wrt=(0, 1, 2))(W, b, X, y)
    for g, r in zip(got, ref):
        assert isinstance(g, torch.Tensor)
        np.testing.assert_allclose(g.numpy(), r, rtol=1e-10, atol=1e-12)
    x = torch.from_numpy(RNG.normal(size=(3, 4)))
    rows, cols = np.array([0, 0, 2, 0]), np.array([1, 1, 3, 1])       # (0, 1) three times
    g = sg.grad(P.pick_twice)(x, rows, cols)
    np.testing.assert_allclose(g.numpy(), sg.grad(P.pick_twice)(x.numpy(), rows, cols), rtol=1e-12)
    assert g[0, 1] == 3 * 2 * x[0, 1]


def test_float32_tensors_keep_float32():
    x = RNG.normal(size=(4, 3)).astype(np.float32)
    g = sg.grad(P.exp_log_tanh)(torch.from_numpy(x))
    assert g.dtype == torch.float32
    np.testing.assert_allclose(g.numpy(), sg.grad(P.exp_log_tanh)(x), rtol=1e-5)


def test_a_rule_not_measured_there_is_refused_naming_the_line():
    # np.einsum's adjoint is NumPy-only on array-API arrays (docs/arrays.md): refused before running
    x = xs.asarray(RNG.normal(size=(3, 3)))
    with pytest.raises(sg.ForeignArrayError, match=r"np.einsum \(.*array_programs.py:\d+\) is NumPy-only"):
        sg.grad(P.einsum_trace)(x)
    # (the tape, the caches and other functions keep working)
    assert float(sg.grad(P.elementwise)(xs.asarray(np.ones((2, 2))))[0, 0]) == pytest.approx(
        float(sg.grad(P.elementwise)(np.ones((2, 2)))[0, 0]))


@pytest.mark.parametrize("name", ["method_std", "method_var", "method_max_axis", "method_repeat"])
def test_methods_whose_meaning_differs_are_refused(name):
    # PyTorch's x.std() divides by n - 1, x.max(axis) returns (values, indices), x.repeat tiles: srcgrad
    # differentiates NumPy's meaning, so on tensors these would be silently wrong derivatives
    fn = getattr(P, name)
    x = RNG.normal(size=(4, 3))
    sg.grad(fn)(x)                  # (fine on NumPy arrays)
    with pytest.raises(sg.ForeignArrayError, match=r"x\.\w+\(\) \(.*array_programs.py:\d+\) is NumPy-only"):
        sg.grad(fn)(torch.from_numpy(x))


def test_method_syntax_the_namespace_lacks_fails_plainly():
    # x.sum() is not array-API code: array_api_strict arrays have no .sum, in srcgrad as in Python
    with pytest.raises(AttributeError, match="sum"):
        sg.grad(P.method_sum)(xs.asarray(np.ones(3)))
    with pytest.raises(AttributeError, match="sum"):
        P.method_sum(xs.asarray(np.ones(3)))


def test_no_op_by_op_fallback_on_other_arrays():
    # a lambda passed on is run op by op on NumPy inputs; the tape holds NumPy arrays, so on
    # tensors that would be a conversion: refused, naming the function
    x = RNG.normal(size=(4, 3))
    with pytest.warns(sg.PerformanceWarning):
        ref = sg.grad(P.helper_and_lambda)(x)
    np.testing.assert_allclose(ref, sg.grad(P.helper_and_function)(x), rtol=1e-12)
    with pytest.warns(sg.PerformanceWarning), pytest.raises(sg.ForeignArrayError, match="helper_and_lambda.*torch"):
        sg.grad(P.helper_and_lambda)(torch.from_numpy(x))


def test_libraries_mixed_are_an_error():
    with pytest.raises(TypeError):
        sg.grad(P.broadcast_row)(xs.asarray(np.ones((2, 3))), torch.ones(3, dtype=torch.float64))


def test_numpy_names_in_the_namespace():
    f = namespaces.facade_for([xs.asarray(np.ones(2))])
    assert f.xp is xs
    x = xs.asarray(np.arange(6.0).reshape(2, 3))
    assert isinstance(f.transpose(x), type(x)) and f.transpose(x).shape == (3, 2)
    assert float(f.sum(x, axis=[0, 1])) == 15.0
    assert f.arccos is not None and float(f.arccos(xs.asarray(1.0))) == 0.0
    assert [tuple(p.shape) for p in f.split(x, [1], axis=1)] == [(2, 1), (2, 2)]
    # shapes, axes and Python lists are computed by NumPy, as NumPy's dispatch leaves them
    assert f.cumsum([1, 2, 3]).tolist() == [1, 3, 6]
    # a NumPy float result is lifted into the namespace (float64: not PyTorch's float32 default)
    t = namespaces.facade_for([torch.ones(2, dtype=torch.float64)])
    seed = t.broadcast_to(0.1, (2,))
    assert isinstance(seed, torch.Tensor) and seed.dtype == torch.float64
    # a boolean mask too (PyTorch would combine a NumPy bool array with its own as uint8)
    assert t.zeros((2,), dtype=bool).dtype == torch.bool
    # a name the array API lacks raises instead of converting
    with pytest.raises(sg.ForeignArrayError, match="np.einsum has no counterpart"):
        f.einsum("ii", x)
    # NumPy's names outside the standard are not looked up in PyTorch (torch.split means sizes)
    assert [tuple(p.shape) for p in t.split(torch.ones((4, 2)), [1, 3])] == [(1, 2), (2, 2), (1, 2)]


def _sweep_rows(every):
    sys.path[:0] = [os.path.join(os.path.dirname(HERE), "rules")]
    import sweep_rules as S
    import test_rules as T
    from srcgrad.rules.array_api_support import ARRAY_API_RULES
    return S, T, ARRAY_API_RULES, T.CASES[::every]


@pytest.mark.parametrize("library", ["strict", "torch"])
def test_supported_rules_still_give_numpys_gradient(library, request):
    """Every rule-table row of a rule in the support list (a sample of
    them, every one with --slow) still gives NumPy's gradient there: the
    list srcgrad refuses by is what the code does."""
    every = 1 if request.config.getoption("--slow") else 5
    S, T, support, rows = _sweep_rows(every)
    S._measure_all()
    try:
        bad = []
        for case in rows:
            covers = case.covers if isinstance(case.covers, tuple) else (case.covers,)
            if not all(S._label(f) in support[library] for f in covers):
                continue
            outcome, why = S.run(case, library)
            if outcome not in ("kept", "n/a"):
                bad.append((case.name, outcome, why))
        assert not bad
    finally:
        S.sg_rule_arrays.support_list = _SUPPORT_LIST


def test_one_gradient_function_on_numpy_dask_torch_and_strict():
    """Issue 19's contract: the same `sg.grad` object, called with NumPy,
    Dask, PyTorch CPU and array_api_strict arrays, gives each library's
    array holding NumPy's gradient (Dask's lazy until computed)."""
    da = pytest.importorskip("dask.array")
    fn, args, wrt = PROGRAMS["logistic_wrt_data"]
    w, X, y = args
    grad = sg.grad(fn, wrt=wrt)
    ref_w, ref_X = grad(w, X, y)
    dX, dy = da.from_array(X, chunks=(10, 3)), da.from_array(y, chunks=10)
    gw, gX = grad(w, dX, dy)
    assert isinstance(gw, da.Array) and isinstance(gX, da.Array)      # lazy
    np.testing.assert_allclose(gw.compute(), ref_w, rtol=1e-10)
    np.testing.assert_allclose(gX.compute(), ref_X, rtol=1e-10)
    for library in ("torch", "array_api_strict"):
        convert, is_theirs, to_numpy = NAMESPACES[library]
        gw, gX = grad(*[convert(a) for a in args])
        assert is_theirs(gw) and is_theirs(gX)
        np.testing.assert_allclose(to_numpy(gw), ref_w, rtol=1e-10)
        np.testing.assert_allclose(to_numpy(gX), ref_X, rtol=1e-10)
    # and NumPy again: nothing of the other runs stuck to the compiled code
    np.testing.assert_allclose(grad(w, X, y)[0], ref_w, rtol=0)


def _dask_library():
    da = pytest.importorskip("dask.array")

    def convert(a):
        if isinstance(a, np.ndarray) and a.dtype.kind in "fc" and a.ndim:
            return da.from_array(a, chunks=tuple(max(1, s // 2) for s in a.shape))
        return a
    return convert, lambda g: isinstance(g, da.Array), lambda g: g.compute(scheduler="synchronous")


@pytest.mark.parametrize("library,at_least", [("torch", 160), ("array_api_strict", 110),
                                               pytest.param("dask", 130, marks=pytest.mark.slow)])  # (26 s)
def test_the_corpus_on_array_api_arrays_is_never_silently_wrong(library, at_least):
    """Issue 4's corpus (tests/corpus_funcs.py: loops, branches, closures,
    methods, containers, recursion, element assignment) on PyTorch tensors,
    array_api_strict arrays and Dask arrays: every entry gives NumPy's gradient as the
    library's array, or raises (ForeignArrayError for what srcgrad refuses
    there: x.copy(), a method whose meaning may differ; the library's own
    error for what is not code for it: len() of a strict array). None comes
    back converted or different. The floor (of 181 entries with arrays)
    guards the rest."""
    import warnings
    sys.path.insert(0, os.path.dirname(HERE))
    import corpus_funcs as cf
    convert, is_theirs, to_numpy = NAMESPACES[library] if library != "dask" else _dask_library()
    kept, silent = 0, []
    for entry in cf.CORPUS:
        args = entry.inputs(np.random.default_rng(0))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref = sg.grad(entry.fn, wrt=entry.wrt)(*args)
        except Exception:       # (the corpus's refusals: test_corpus.py checks them)
            continue
        converted = [convert(a) for a in args]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = sg.grad(entry.fn, wrt=entry.wrt)(*converted)
        except Exception:
            continue
        got, ref = (got, ref) if len(entry.wrt) > 1 else ((got,), (ref,))
        for g, r, i in zip(got, ref, entry.wrt):
            if isinstance(args[i], np.ndarray):
                if not is_theirs(g):
                    silent.append((entry.name, "converted to %s" % type(g).__name__))
                elif not np.allclose(to_numpy(g), r, rtol=1e-9, atol=1e-12):
                    silent.append((entry.name, "wrong"))
        kept += not silent or silent[-1][0] != entry.name
    assert not silent
    assert kept >= at_least


def test_docs_list_the_rules_that_run_on_both():
    """docs/arrays.md's list of NumPy functions running on both libraries is
    the support module's (regenerate with `sweep_rules.py --docs` when the
    support list changes)."""
    from srcgrad.rules.array_api_support import ARRAY_API_RULES
    text = open(os.path.join(os.path.dirname(os.path.dirname(HERE)), "docs", "arrays.md")).read()
    line = next(ln for ln in text.splitlines() if ln.startswith("- NumPy functions whose rules run on both"))
    listed = set(line.split(": ", 1)[1].replace("`", "").split(", "))
    both = {r for r in ARRAY_API_RULES["strict"] & ARRAY_API_RULES["torch"] if r.startswith("np.")}
    assert listed == both


def test_twins_do_not_keep_dropped_functions_alive():
    """A function differentiated on tensors and dropped is collected, with
    its twin: the twin cache holds functions weakly."""
    import gc
    import weakref
    refs = []
    facade = namespaces.facade_for([torch.ones(2, dtype=torch.float64)])
    for k in range(3):
        f = P.make_scaled_tanh(k + 1.0)         # a closure made in a loop, as users make them
        refs.append(weakref.ref(f))
        twin = facade.twin(f)
        assert twin is not f and namespaces.original(twin) is f and facade.twin(f) is twin
        assert float(twin(torch.zeros(2, dtype=torch.float64))) == 0.0
        del f, twin
    gc.collect()
    assert all(r() is None for r in refs)


def _store_into(x, buf):
    out = buf * 1
    out[0] = 10.0 * x[0]        # into an integer array: the value is truncated, no derivative passes
    return (out * x).sum()


def test_element_assignment_into_an_integer_torch_tensor_passes_no_derivative():
    """The integer-destination rule (value_cotangent) reads another
    library's dtype too: torch's int64 truncates as NumPy's int does."""
    torch = pytest.importorskip("torch")
    x = torch.tensor([0.55, 1.0], dtype=torch.float64)
    got = sg.grad(_store_into)(x, torch.zeros(2, dtype=torch.int64))
    assert isinstance(got, torch.Tensor)
    np.testing.assert_allclose(got.numpy(), [5.0, 0.0], rtol=1e-12)
    got = sg.grad(_store_into)(x, torch.zeros(2, dtype=torch.float64))
    np.testing.assert_allclose(got.numpy(), [11.0, 0.0], rtol=1e-12)
