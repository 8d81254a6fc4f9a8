"""The fast lane of a decorated call on a tape (function.py: _Plan,
_call_planned): what it caches per argument kinds must not change what
the call records."""
import numpy as np

import srcgrad as sg


@sg.function
def scaled_product(x, y):
    return x * y


SCALE = 2.0


@sg.function
def times_global(x):
    return x * SCALE


def test_ndarray_argument_read_at_each_call():
    """The residuals hold `y`: each call's backward reads the value `y` had
    at that call, also once the lane copies it before the sweep."""
    v = sg.Variable(np.array([0.5, -1.0, 2.0]))
    y = np.array([1.5, 2.0, -0.5])
    seen, outs = [], []
    with sg.GradientTape(persistent=True) as tape:
        for k in range(4):
            outs.append(scaled_product(v, y))
            seen.append(y.copy())
            y *= 3.0        # the caller's array changes after the call
    for out, at_call in zip(outs, seen):
        np.testing.assert_allclose(tape.gradient(out, v).numpy(), at_call)


def test_rebound_global_compiles_again():
    global SCALE
    v = sg.Variable(np.array([1.0, 2.0]))
    try:
        for scale in (2.0, 5.0):
            SCALE = scale
            with sg.GradientTape() as tape:
                out = times_global(v)
            np.testing.assert_allclose(tape.gradient(out, v).numpy(), [scale, scale])
    finally:
        SCALE = 2.0


def test_kinds_of_arguments_keep_their_programs():
    """Integer Tensors are not recorded; complex and real arguments, and
    axes of length 1, have programs of their own."""
    v = sg.Variable(np.array([0.5, -1.0]))
    for y in (np.array([1.0, 2.0]), np.array([1.0 + 1j, 2.0]), np.array([[3.0], [4.0]]), sg.constant([1, 2])):
        for _ in range(2):
            with sg.GradientTape() as tape:
                out = scaled_product(v, y)
            expected = np.broadcast_to(np.conj(np.asarray(y)), np.shape(out)).sum(
                axis=tuple(range(np.ndim(out) - 1)))
            np.testing.assert_allclose(tape.gradient(out, v).numpy(), np.real(expected) if v.dtype.kind != "c"
                                       else expected)


def test_unwatched_then_watched():
    """The same kinds, first with no input watched (the plain call), then
    watched (recorded)."""
    x = sg.constant([1.0, 2.0])
    y = np.array([3.0, 4.0])
    with sg.GradientTape(watch_accessed_variables=False) as tape:
        out = scaled_product(x, y)
    assert tape.gradient(out, x) is None
    with sg.GradientTape() as tape:
        tape.watch(x)
        out = scaled_product(x, y)
    np.testing.assert_allclose(tape.gradient(out, x).numpy(), y)


def test_user_module_gaining_a_primitive_is_scanned_again(tmp_path):
    """A tape replaces the SciPy primitives bound to names in the user's
    modules (scipy_calls._replace_user_names): a module that imports one
    after an earlier tape scanned it gets it replaced by the next tape."""
    import sys
    import types

    import scipy.special

    raw = scipy.special.logsumexp
    module = types.ModuleType("fast_path_user_module")
    module.__file__ = str(tmp_path / "fast_path_user_module.py")
    sys.modules[module.__name__] = module
    try:
        for _ in range(2):      # (the module scanned, holding no primitive)
            with sg.GradientTape():
                pass
        module.logsumexp = raw
        with sg.GradientTape():
            assert getattr(module.logsumexp, "__srcgrad_raw__", None) is raw
        assert module.logsumexp is raw
    finally:
        del sys.modules[module.__name__]


def test_threads_share_the_plans():
    """Threads recording their own tapes call the same function (its plans
    and their cached artefacts shared): each gets its own gradients."""
    import threading

    errors = []

    def work(seed):
        try:
            rng = np.random.default_rng(seed)
            v = sg.Variable(rng.normal(size=3))
            for _ in range(100):
                y = rng.normal(size=3)
                with sg.GradientTape() as tape:
                    out = scaled_product(v, y)
                expected = y.copy()
                y[:] = 0.0
                np.testing.assert_allclose(tape.gradient(out, v).numpy(), expected)
        except Exception as exc:      # (reported by the main thread)
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
