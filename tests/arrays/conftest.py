import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture
def no_compute():
    """Dask may not compute inside the block (a hidden conversion to NumPy
    would): the scheduler raises."""
    dask = pytest.importorskip("dask")

    def refuse(dsk, keys, **kwargs):
        raise AssertionError("dask computed inside the gradient call (a conversion to NumPy)")

    return dask.config.set(scheduler=refuse)
