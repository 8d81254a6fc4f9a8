import os
import sys

sys.path.insert(0, os.path.dirname(__file__))


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz", action="store_true", default=False,
        help="run the differential fuzzer (tests/system/test_fuzz.py) at length: SRCGRAD_FUZZ examples "
             "(default 3000), every category including the known-broken ones, randomized (derandomize=False)")


def pytest_configure(config):
    # test_fuzz reads SRCGRAD_FUZZ when it is imported (after this hook): --fuzz sets a default
    if config.getoption("--fuzz") and not os.environ.get("SRCGRAD_FUZZ"):
        os.environ["SRCGRAD_FUZZ"] = "3000"
