import atexit
import gc
import os
import shutil
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(__file__))
if not os.environ.get("SRCGRAD_CACHE_DIR"):
    # sg.jit's on-disk cache (the twins' machine code, cache=True) in a folder of this run: the tests
    # compile the twins, and write no user's cache
    _cache_folder = tempfile.mkdtemp(prefix="srcgrad-test-cache-")
    os.environ["SRCGRAD_CACHE_DIR"] = _cache_folder
    atexit.register(shutil.rmtree, _cache_folder, True)
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "rules"))   # the rule tables (test_forward, test_jacobians read them)


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz", action="store_true", default=False,
        help="run the differential fuzzer (tests/system/test_fuzz.py) at length: SRCGRAD_FUZZ examples "
             "(default 3000), every category including the known-broken ones, randomized (derandomize=False)")
    parser.addoption(
        "--slow", action="store_true", default=False,
        help="also run the tests marked slow (Numba compiling the RNN and MLP gradients: tens of seconds)")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: run only with --slow (the default suite stays under 8 minutes)")
    # test_fuzz reads SRCGRAD_FUZZ when it is imported (after this hook): --fuzz sets a default
    if config.getoption("--fuzz") and not os.environ.get("SRCGRAD_FUZZ"):
        os.environ["SRCGRAD_FUZZ"] = "3000"


def pytest_collection_modifyitems(config, items):
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def pytest_runtest_teardown(item, nextitem):
    """After each test, what it left is collected and the survivors frozen
    (gc.freeze): collections scan the objects made since, not the whole
    suite's heap (millions of objects late in a full run, where Python's
    own full collections took seconds each and a sixth of the time). Each
    collection here scans one test's objects; cycles that become garbage
    only later (an evicted cache entry) wait for gc.unfreeze()."""
    gc.collect()
    gc.freeze()


@pytest.fixture
def compiled_only():
    """PerformanceWarning as an error: what the compiler refuses raises its
    refusal instead of running op by op on the tape (srcgrad/op_by_op.py).
    For the tests that pin the compiler's own behaviour and messages."""
    import warnings
    import srcgrad
    with warnings.catch_warnings():
        warnings.simplefilter("error", srcgrad.PerformanceWarning)
        yield
