"""The rule-test table's vocabulary, shared by tests/test_rules.py and the
per-family case modules (tests/cases_*.py).

A case module defines module-level case functions `f_<name>(inputs..., w)`
returning `np.sum(op(inputs) * w)` (real `def`s: srcgrad compiles them from
source) and a list `CASES` of `Case` rows; tests/test_rules.py collects every
`cases_*.py` module and runs each row through all of srcgrad's paths.
"""
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import autograd.numpy as anp
import numpy as np


@dataclass(frozen=True)
class Arg:
    """An array input drawn at random. `domain`: "real" (standard normal),
    "pos" (uniform [0.5, 2], for log, sqrt, the base of **), "nonzero"
    (|x| in [0.5, 1.5], for divisors and kinks at 0) or "bool" (a mask).
    `diff`: whether the case differentiates it."""
    shape: tuple
    domain: str = "real"
    diff: bool = True


@dataclass(frozen=True)
class Static:
    """A non-differentiated Python value (axis, index array) passed as is."""
    value: Any


def R(*shape):
    return Arg(shape)


def P(*shape):
    return Arg(shape, "pos")


def NZ(*shape):
    return Arg(shape, "nonzero")


def B(*shape):
    return Arg(shape, "bool", diff=False)


def ND(*shape):
    """A float input the case does not differentiate."""
    return Arg(shape, "real", diff=False)


def _draw(rng, arg):
    if arg.domain == "real":
        return rng.normal(0.0, 1.0, arg.shape)
    if arg.domain == "pos":
        return rng.uniform(0.5, 2.0, arg.shape)
    if arg.domain == "nonzero":
        return rng.choice([-1.0, 1.0], arg.shape) * rng.uniform(0.5, 1.5, arg.shape)
    if arg.domain == "bool":
        return rng.random(arg.shape) > 0.5
    raise ValueError(arg.domain)


@dataclass(eq=False)
class Case:
    """One row: `fn(*inputs, w)` is srcgrad's loss; `ref(*inputs)` is the
    operation written with autograd.numpy (the loss is sum(ref * w));
    `covers` is the NumPy callable whose registered rule the row exercises."""
    name: str
    fn: Callable
    ref: Callable
    inputs: tuple
    covers: Any
    meta: dict = field(default_factory=dict)

    @property
    def wrt(self):
        """Indices of the differentiated inputs."""
        return tuple(i for i, a in enumerate(self.inputs) if isinstance(a, Arg) and a.diff)

    def param_name(self, i):
        return list(inspect.signature(self.fn).parameters)[i]


def _ag_bcast(a, b):
    """`a` broadcast against `b` by adding zeros: autograd's where and
    broadcast_to do not sum broadcast cotangents back, its add does."""
    return a + anp.zeros(np.broadcast_shapes(anp.shape(a), anp.shape(b)))


def _ag_reduce(agf, axis, keepdims):
    def ref(x):
        return agf(x, axis=axis, keepdims=keepdims)
    return ref
