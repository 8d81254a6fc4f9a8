"""Idioms of published NumPy layer code (CS231n solutions, numpy-ml,
ML-From-Scratch; benchmarks/layers measures the repositories themselves):

* a helper updating a parameter dict it is passed (`bn_param["running_mean"]
  = ...`), the dict a module global: the gradient is right (op by op), the
  dict afterwards holds what the plain call leaves (an ndarray, not a Tensor
  of a finished tape);
* a key or attribute read in a branch that tests for it (`if "seed" in p:
  np.random.seed(p["seed"])`): compiled, read live; the key appearing later
  recompiles;
* `x.astype(dtype, copy=False)` on a Tensor;
* op by op, a value written into a NumPy array element (`Y[i] = t`, Y from
  np.zeros) is recorded; a conversion the tape cannot see (a list of
  Tensors reaching a ufunc) raises GradientPathError naming the line, and
  srcgrad keeps working afterwards;
* op by op, a layer caching on `self` (`self.cache = X`) keeps an ndarray.

Every gradient is checked against central finite differences.
"""
import warnings

import numpy as np
import pytest

import srcgrad as sg
from system_support import close, fd_grad, short_traceback

X = np.array([[1.0, 2.0], [3.0, 5.0], [0.5, -1.0]])


def scale_forward(x, gamma, param):
    param["running_mean"] = 0.9 * param.get("running_mean", 0.0) + 0.1 * x.mean(axis=0)
    return gamma * (x - x.mean(axis=0))


BN_PARAM = {"mode": "train"}


def bn_loss(x):
    return np.sum(scale_forward(x, 2.0, BN_PARAM) ** 2)


@short_traceback
def test_helper_updating_a_global_parameter_dict():
    BN_PARAM.clear()
    BN_PARAM["mode"] = "train"
    plain = dict(BN_PARAM)
    scale_forward(X, 2.0, plain)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        g = sg.grad(bn_loss)(X)
    close(g, 8.0 * (X - X.mean(axis=0)), what="gradient")
    assert type(BN_PARAM["running_mean"]) is np.ndarray, type(BN_PARAM["running_mean"])
    close(BN_PARAM["running_mean"], plain["running_mean"], what="the running mean the plain call leaves")
    close(g, fd_grad(bn_loss, X), what="against central differences")


def dropout_like(x, param):
    if "seed" in param:
        np.random.seed(param["seed"])
    mask = (np.random.rand(*x.shape) < param["p"]) / param["p"]
    return x * mask


DROP = {"p": 0.5}


def drop_loss(x):
    return np.sum(np.sin(dropout_like(x, DROP)))


@short_traceback
def test_key_read_in_a_branch_testing_for_it():
    DROP.pop("seed", None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)      # compiled, not op by op
        np.random.seed(1)
        g = sg.grad(drop_loss)(X)
        np.random.seed(1)
        mask = (np.random.rand(*X.shape) < 0.5) / 0.5
        close(g, np.cos(X * mask) * mask, what="gradient without a seed")
        DROP["seed"] = 7                # the key appears: recompiles, the branch is taken
        g = sg.grad(drop_loss)(X)
        after = np.random.rand()
        np.random.seed(7)
        mask = (np.random.rand(*X.shape) < 0.5) / 0.5
        assert np.random.rand() == after        # the program's generator as after the plain call
        close(g, np.cos(X * mask) * mask, what="gradient with the seed")
    DROP.pop("seed", None)


class Box:
    pass


BOX = Box()
BOX.p = 2.0


def attr_loss(x):
    if hasattr(BOX, "q"):
        return np.sum(x * BOX.q)
    return np.sum(x * BOX.p)


@short_traceback
def test_attribute_read_in_a_branch_testing_for_it():
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        close(sg.grad(attr_loss)(X), np.full_like(X, 2.0))
        BOX.q = 5.0
        try:
            close(sg.grad(attr_loss)(X), np.full_like(X, 5.0))
        finally:
            del BOX.q


@short_traceback
def test_astype_with_numpys_keywords_on_a_tape():
    x = sg.constant([1.0, 2.0])
    with sg.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(x.astype(np.float64, copy=False) ** 2 * 3.0)
    close(tape.gradient(y, x), [6.0, 12.0])


class MaxRows:
    """numpy-ml's style: an attribute written in forward (the fallback runs
    it op by op) and the output filled element by element."""

    def __init__(self):
        self.is_initialized = True

    def forward(self, X):
        if not self.is_initialized:
            self.n_in = X.shape[1]
        Y = np.zeros(X.shape[0])
        for i in range(X.shape[0]):
            Y[i] = np.max(X[i])
        return Y


@short_traceback
def test_element_write_into_an_ndarray_op_by_op():
    """Op by op, `Y = np.zeros(n); Y[i] = t` is recorded (tape/buffers.py):
    the gradient of the row maxima is the one-hot of each row's argmax."""
    layer = MaxRows()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        g = sg.grad(lambda v: np.sum(layer.forward(v) * np.array([1.0, 2.0, 3.0])))(X)
    close(g, [[0.0, 1.0], [0.0, 2.0], [3.0, 0.0]])


def converts_a_list(x):
    """A list of Tensors reaching a ufunc is converted by NumPy (it does not
    dispatch on a list's elements): op by op, the path would be cut."""
    DROP["seen"] = True         # (attribute-free, but a dict write: op by op)
    return np.sum(np.sin([x[0], x[1]]))


@short_traceback
def test_a_path_cut_op_by_op_raises():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        with pytest.raises(sg.GradientPathError, match=r"test_layer_idioms\.py:\d+") as info:
            sg.grad(lambda v: converts_a_list(v) + np.sum(v))(X)
        assert "np.sin([x[0], x[1]])" in str(info.value)
        # srcgrad keeps working: the tape, the caches and other functions
        close(sg.grad(lambda v: np.sum(v ** 2))(X), 2 * X)
        x = sg.constant(X)
        with sg.GradientTape() as tape:
            tape.watch(x)
            y = np.sum(np.sin(x))
        close(tape.gradient(y, x), np.cos(X))
    DROP.pop("seen", None)


class CachingTanh:
    """ML-From-Scratch's style: the input cached on self in forward."""

    def __call__(self, x):
        self.cache = np.tanh(x)
        self.calls = getattr(self, "calls", 0) + 1
        return self.cache


@short_traceback
def test_op_by_op_leaves_arrays_in_the_users_objects():
    layer = CachingTanh()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        g = sg.grad(lambda v: np.sum(layer(v) * 2.0))(X)
    close(g, 2.0 * (1.0 - np.tanh(X) ** 2))
    assert type(layer.cache) is np.ndarray and layer.calls == 1
    close(layer.cache, np.tanh(X))


class NaiveConv:
    """CS231n's conv_forward_naive, as a layer caching on self: run op by op
    (naive_conv's body too, on the tape: its `out` is a Buffer)."""

    def forward(self, x, w, b):
        out = naive_conv(x, w, b)
        self.cache = (x, w, b)
        return out


def naive_conv(x, w, b):
    """CS231n's conv_forward_naive: compiled when called alone (element
    assignment lowered)."""
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    out = np.zeros((N, F, H - HH + 1, W - WW + 1))
    for n in range(N):
        for f in range(F):
            for i in range(H - HH + 1):
                for j in range(W - WW + 1):
                    out[n, f, i, j] = np.sum(x[n, :, i:i + HH, j:j + WW] * w[f]) + b[f]
    return out


class RunningSum:
    """An accumulator updated in place (`s += ...`) and cached."""

    def forward(self, x):
        s = np.zeros(x.shape[1])
        for row in x:
            s += np.tanh(row)
        self.last = s
        return s


@short_traceback
def test_naive_conv_op_by_op_agrees_with_compiled_and_differences():
    rs = np.random.RandomState(0)
    x, w, b = rs.randn(1, 2, 4, 4), rs.randn(2, 2, 2, 2), rs.randn(2)
    G = rs.randn(1, 2, 3, 3)
    layer = NaiveConv()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        by_tape = sg.grad(lambda x, w, b: np.sum(layer.forward(x, w, b) * G), wrt=(0, 1, 2))(x, w, b)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        compiled = sg.grad(lambda x, w, b: np.sum(naive_conv(x, w, b) * G), wrt=(0, 1, 2))(x, w, b)
    for a, c in zip(by_tape, compiled):
        close(a, c, rtol=1e-12, atol=1e-12, what="op by op against compiled")
    close(by_tape[1], fd_grad(lambda v: np.sum(naive_conv(x, v, b) * G), w), what="against central differences")
    assert type(layer.cache[1]) is np.ndarray


@short_traceback
def test_in_place_accumulation_op_by_op_first_and_second_order():
    rs = np.random.RandomState(1)
    X2 = rs.randn(3, 4)
    layer = RunningSum()

    def loss(v):
        return np.sum(layer.forward(v) ** 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        g = sg.grad(loss)(X2)
        _, t = sg.jvp(loss, (X2,), (np.ones_like(X2),))
        h = sg.hessian(loss)(X2[:1])
    close(g, fd_grad(loss, X2), what="gradient")
    close(t, np.sum(g), what="jvp along ones")
    close(h.reshape(4, 4), np.diag(2 * (1 - np.tanh(X2[0]) ** 2) ** 2
                                   - 4 * np.tanh(X2[0]) * (1 - np.tanh(X2[0]) ** 2) * np.tanh(X2[0])),
          what="Hessian of sum(tanh(x)^2)")
    assert type(layer.last) is np.ndarray


def chained(x):
    """`a = b = value` (CS231n's `H_out = W_out = ...`)."""
    a = b = np.sin(x)
    n = m = 2.0
    return np.sum(a * b * n + m)


def chained_alias_written(x):
    a = b = x * 1.0
    a[0] = 5.0                  # NumPy changes b too
    return np.sum(b * x)


@short_traceback
def test_chained_assignment():
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)      # compiled
        x = np.array([0.3, 0.5])
        close(sg.grad(chained)(x), 4.0 * np.sin(x) * np.cos(x))
        with pytest.raises(sg.UnsupportedSyntaxError, match="element assignment to a while b"):
            sg.grad(chained_alias_written)(x)


def _project(vx, vy):
    """autograd's fluidsim `project`: writes into its arguments (`vx -= ...`)
    and returns them."""
    p = vx * vy
    vx -= 0.5 * np.roll(p, 1)
    vy -= 0.5 * np.roll(p, -1)
    return vx, vy


def simulate(vx, vy):
    """The caller rebinds what it passed (`vx, vy = project(vxu, vyu)`): the
    write into vxu and vyu is not seen afterwards, so compiled code (which
    does not write) means what Python means."""
    for _ in range(3):
        vxu = np.sin(vx)
        vyu = np.cos(vy)
        vx, vy = _project(vxu, vyu)
    return np.sum(vx * vy)


def simulate_reads_after(vx, vy):
    a = np.sin(vx)
    b, c = _project(a, vy * 1.0)
    return np.sum(a * b)          # a is read after the call: NumPy changed it


@short_traceback
def test_helper_writing_into_arguments_the_caller_drops():
    x, y = np.array([0.3, 0.5, 0.9]), np.array([0.2, 0.4, 0.1])
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)       # compiled
        g = sg.grad(simulate)(x, y)
        close(g, fd_grad(lambda v: simulate(v, y), x), what="against central differences")
        with pytest.raises(sg.UnsupportedSyntaxError, match="writing into vx, a parameter of _project"):
            sg.grad(simulate_reads_after)(x, y)


def _advect(f, vx, vy):
    """fluidsim's `advect`: a new array, returned as np.reshape of it (a
    call's result: a view or a copy of its arguments, known at run time)."""
    flat = (f * 0.9 + 0.1 * vx * vy).ravel()
    return np.reshape(flat, f.shape)


def simulate_advected(vx, vy, smoke):
    """autograd's fluidsim step: the arguments of `_project` come from a
    helper, so they may share memory with vx, vy (the parameters, rebound
    in the loop): tested at run time before the call, and passed."""
    for _ in range(3):
        vx_updated = _advect(vx, vx, vy)
        vy_updated = _advect(vy, vx, vy)
        vx, vy = _project(vx_updated, vy_updated)
        smoke = _advect(smoke, vx, vy)
    return np.sum(smoke ** 2)


def _identity(a):
    return a


def passes_a_view_of_a_live_name(x, y):
    a = np.sin(x)
    z = _identity(a)                # z is a
    o = y * 1.0
    w, _ = _project(z, o)
    return np.sum(w * a)            # a is read after the call: NumPy changed it


def passes_the_callers_array(x, y):
    z = _identity(x)                # z is the caller's x
    x = x * 2.0
    o = y * 1.0
    w, _ = _project(z, o)
    return np.sum(w * x)


@short_traceback
def test_helper_writing_into_a_helpers_result_tested_at_run_time():
    """Was refused (autograd's fluidsim): `vx, vy = project(vx_updated,
    vy_updated)` with vx_updated = advect(...). Now the compiled code tests,
    before the call, that vx_updated shares no memory with the names still
    used (and with the arrays the caller passed for rebound parameters)."""
    x, y, s = np.array([0.3, 0.5, 0.9]), np.array([0.2, 0.4, 0.1]), np.array([1.0, 0.5, 0.25])
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)       # compiled
        g = sg.grad(simulate_advected, wrt=(0, 1, 2))(x, y, s)
        for k, arg in enumerate((x, y, s)):
            def f(v, k=k):
                args = [x, y, s]
                args[k] = v
                return simulate_advected(*[a.copy() for a in args])
            close(g[k], fd_grad(f, arg.copy()), what="against central differences")
        for bad, who in ((passes_a_view_of_a_live_name, "while a, which may share its memory, is still used"),
                         (passes_the_callers_array, "while the array the caller passed as x")):
            with pytest.raises(sg.UnsupportedSyntaxError, match="passing z to _project, which writes into it, "
                               + who) as info:
                sg.grad(bad)(x, y)
            assert "test_layer_idioms.py" in str(info.value)
        # the same functions still run as plain Python, and differentiate afterwards
        close(sg.grad(simulate_advected)(x, y, s), g[0], what="after the refusals")
        # second order: the generated gradient (with its run-time tests) differentiated again
        from gradcheck import numerical_jacobian
        close(sg.hessian(simulate_advected)(x, y, s),
              numerical_jacobian(lambda v: sg.grad(simulate_advected)(v, y.copy(), s.copy()), x.copy()),
              what="the Hessian, against central differences of the gradient")
