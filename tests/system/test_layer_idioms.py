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
* op by op, a value written into a NumPy array element (`Y[i] = t`) would
  cut the derivative: sg.grad raises GradientPathError naming the line, and
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
def test_element_write_into_an_ndarray_op_by_op_raises():
    layer = MaxRows()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sg.PerformanceWarning)
        with pytest.raises(sg.GradientPathError, match=r"test_layer_idioms\.py:\d+") as info:
            sg.grad(lambda v: np.sum(layer.forward(v)))(X)
        assert "Y[i] = np.max(X[i])" in str(info.value)
        # srcgrad keeps working: the tape, the caches and other functions
        close(sg.grad(lambda v: np.sum(v ** 2))(X), 2 * X)
        x = sg.constant(X)
        with sg.GradientTape() as tape:
            tape.watch(x)
            y = np.sum(np.sin(x))
        close(tape.gradient(y, x), np.cos(X))


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
