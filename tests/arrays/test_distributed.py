"""The gradient of a logistic-regression loss over a chunked dataset larger
than one worker's memory limit, on a dask.distributed LocalCluster (two
workers, one thread each): lazy until computed, equal to NumPy's gradient
on the same data. About 20 s on two cores (worker processes, since the
memory limit is per process: threads would share one limit)."""
import numpy as np
import pytest

import srcgrad as sg
import array_programs as P

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
import dask  # noqa: E402

WORKER_LIMIT = 200 * 2 ** 20                # 200 MiB per worker
ROWS, COLS, CHUNK = 1_250_000, 24, 62_500   # X: 240 MB float64 (> one worker's limit), 12 MB chunks


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       memory_limit=WORKER_LIMIT, dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_logistic_gradient_on_a_cluster(client):
    rs = da.random.RandomState(19)
    X = rs.normal(size=(ROWS, COLS), chunks=(CHUNK, COLS))
    y = (rs.random_sample(ROWS, chunks=CHUNK) > 0.5).astype(float)
    assert X.nbytes > WORKER_LIMIT
    w = np.random.default_rng(0).normal(size=COLS) * 0.1

    g = sg.grad(P.logistic)(w, X, y)
    assert isinstance(g, da.Array)              # lazy: nothing computed yet
    value = g.compute()
    assert isinstance(value, np.ndarray) and value.shape == (COLS,)

    # the same data, built in this process (gathering it through a worker would exceed its limit)
    Xn, yn = dask.compute(X, y, scheduler="synchronous")
    np.testing.assert_allclose(value, sg.grad(P.logistic)(w, Xn, yn), rtol=1e-10)
