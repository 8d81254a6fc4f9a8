"""Logistic regression on a dataset larger than one worker's memory, with
the gradient srcgrad generates running on Dask.

The loss is plain NumPy code. Called on Dask arrays, the generated
gradient code (`sg.source(loss)` shows it) builds a lazy Dask graph through
NumPy's dispatch: nothing is computed, and nothing is converted to NumPy,
until `.compute()`. The weights are a small NumPy array; the gradient with
respect to them depends on the Dask data, so it is a lazy Dask array of
the weights' shape. Gradient descent computes it once per step, on a
dask.distributed cluster whose workers each process part of the data.

    python examples/dask_logistic.py            # 1.2 GB of data, 2 workers x 512 MiB
    python examples/dask_logistic.py --small    # 240 MB, 2 workers x 200 MiB

Measured on a 2-core machine (worker processes, one thread each): the
default run (X is 6 M x 25 float64 = 1.2 GB, generated on the workers in
40 MB chunks, never gathered, so more than twice the workers' combined
memory limit) takes about 190 s for 5 steps (each step regenerates the
data); `--small` (240 MB over 2 x 200 MiB) about 55 s, with Dask
reporting 120-170 MiB of process memory per worker (it pauses a worker
briefly above 80 % of its limit). Neither run ever
holds X in one process. Past one machine, point the Client at a
dask.distributed scheduler on a cluster instead of a LocalCluster: the
code is the same.
"""
import os
import sys
import time

import numpy as np

try:
    import srcgrad as sg
except ImportError:  # running from a source checkout without installing
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import srcgrad as sg


def loss(w, X, y):
    """Mean logistic loss of the weights `w` on the data (X, y)."""
    z = X @ w
    p = 1 / (1 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def main(small=False):
    """Fit by gradient descent on a LocalCluster; print the loss per step."""
    import dask
    import dask.array as da
    from distributed import Client, LocalCluster

    rows, cols, chunk = (1_250_000, 24, 62_500) if small else (6_000_000, 25, 200_000)
    workers, limit = (2, "200MiB") if small else (2, "512MiB")
    with LocalCluster(n_workers=workers, threads_per_worker=1, memory_limit=limit,
                      dashboard_address=None) as cluster, Client(cluster):
        rs = da.random.RandomState(0)
        X = rs.normal(size=(rows, cols), chunks=(chunk, cols))
        true_w = np.linspace(-1, 1, cols)
        y = (rs.random_sample(rows, chunks=chunk) < 1 / (1 + da.exp(-(X @ true_w)))).astype(float)
        # (not persisted: the data does not fit in the workers' memory, so each step regenerates
        # its chunks, as it would read them from storage)
        print("X: %.0f MB in %d chunks on %d workers (%s each)" % (X.nbytes / 1e6, X.numblocks[0], workers, limit))
        w = np.zeros(cols)
        dloss = sg.value_and_grad(loss)
        start = time.perf_counter()
        for step in range(5):
            value, g = dloss(w, X, y)       # lazy: Dask arrays
            value, g = dask.compute(value, g)
            w = w - 2.0 * g
            print("step %d: loss %.4f" % (step, value))
        print("5 steps in %.1f s; |w - true_w| = %.3f" % (time.perf_counter() - start, np.linalg.norm(w - true_w)))


if __name__ == "__main__":
    main(small="--small" in sys.argv)
