"""Workload 5 (issue 10): the loss of `examples/digits.py` on real data.

scikit-learn's 8x8 handwritten digits (bundled with scikit-learn, no
download), the example's 64-64-10 tanh MLP with softmax cross-entropy and
an L2 term, on one training minibatch of 64 (the size the example trains
with); weights initialised as the example does, biases small and random. srcgrad's tape path
calls the example's own `@sg.function` `loss_fn`; every other path runs its
body. No goal of its own in the issue: it is the realistic small-batch case,
where per-call overhead matters as much as arithmetic.
"""
import os
import sys

import numpy as np

from benchmarks import harness
from benchmarks.workloads import _softmax_mlp

NAME = "digits"
TITLE = "digits MLP of examples/digits.py (scikit-learn digits, minibatch of 64)"

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "examples")


def load_example():
    """examples/digits.py as a module (it needs scikit-learn and tqdm)."""
    if EXAMPLES not in sys.path:
        sys.path.insert(0, EXAMPLES)
    try:
        import digits
    except ImportError as exc:
        raise harness.WorkloadSkipped("examples/digits.py cannot be imported: %s" % exc)
    return digits


def make_data(example, small=False):
    """(params, x, y_onehot): a training minibatch of the digits and weights
    initialised as the example does (seeded)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    data = load_digits()
    x = data.data / 16.0
    x_train, _, y_train, _ = train_test_split(x, data.target, test_size=0.25, random_state=0,
                                              stratify=data.target)
    batch = 16 if small else example.BATCH
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(x_train))[:batch]
    xb, yb = x_train[idx], np.eye(10)[y_train[idx]]
    n_in, hidden = x.shape[1], example.HIDDEN
    params = [rng.normal(0.0, 1.0 / np.sqrt(n_in), (n_in, hidden)), rng.normal(0.0, 0.1, hidden),
              rng.normal(0.0, 1.0 / np.sqrt(hidden), (hidden, 10)), rng.normal(0.0, 0.1, 10)]
    return params, xb, yb


def sg_jit_case(cache=False):
    """A call of sg.jit of the example's gradient on the benchmark's batch
    (its first call compiles; `cache`: with the on-disk cache)."""
    import srcgrad as sg
    example = load_example()
    params, xb, yb = make_data(example)
    jitted = sg.jit(sg.grad(example.loss_fn.python_function, wrt=(0, 1, 2, 3)), cache=cache)
    return lambda: jitted(*params, xb, yb)


def run(bench):
    example = load_example()
    params, xb, yb = make_data(example, bench.settings.small)
    bench.params = {"inputs": xb.shape[1], "hidden": example.HIDDEN, "classes": 10, "batch": xb.shape[0],
                    "l2": example.L2}
    bench.tolerance(1e-7, 1e-10)
    _softmax_mlp.run_paths(bench, example.loss_fn, params, xb, yb, example.L2)
    harness.sg_jit_paths(bench, sg_jit_case, notes="the generated gradient compiled by Numba")
    harness.sg_jit_cached_first(bench, __name__)
