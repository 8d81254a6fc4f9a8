"""Run in a fresh interpreter by `harness.sg_jit_cached_first`: the first
call of a workload's `sg_jit_case(cache=True)` (sg.jit with its on-disk
cache, in the directory SRCGRAD_CACHE_DIR the parent chose): the
transform, the lowering, importing Numba, loading or compiling the machine
code and the run, timed and printed as JSON with the result.

    python -m benchmarks.workloads._jit_cache_child benchmarks.workloads.mlp
"""
import importlib
import json
import sys
import time
import warnings

import numpy as np

import srcgrad


def _lists(value):
    if isinstance(value, (list, tuple)):
        return [_lists(v) for v in value]
    return np.asarray(value).tolist()


def main(module_name):
    module = importlib.import_module(module_name)
    warnings.simplefilter("error", srcgrad.PerformanceWarning)      # (a CPython fallback is a failure)
    call = module.sg_jit_case(cache=True)      # (the data and sg.jit's wrapper: nothing compiled yet)
    t0 = time.perf_counter()
    out = call()
    elapsed = time.perf_counter() - t0
    json.dump({"first_call_s": elapsed, "result": _lists(out)}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
