"""Run in a fresh interpreter by the `transform` workload: time the first
call of sg.grad on model50.gru_loss (srcgrad's caches are cold), then the
same gradient again (warm), and print the numbers and the gradient as JSON
on stdout."""
import json
import statistics
import sys
import time

t0 = time.perf_counter()
import numpy as np  # noqa: E402

t1 = time.perf_counter()
import srcgrad as sg  # noqa: E402

t2 = time.perf_counter()
from benchmarks.workloads import model50  # noqa: E402

args = model50.make_args()
wrt = tuple(range(model50.N_PARAMS))

t3 = time.perf_counter()
grad = sg.grad(model50.gru_loss, wrt=wrt)
t4 = time.perf_counter()
grads = grad(*args)
t5 = time.perf_counter()
warm = []
for _ in range(5):
    s = time.perf_counter()
    grad(*args)
    warm.append(time.perf_counter() - s)
forward = []
for _ in range(5):
    s = time.perf_counter()
    model50.gru_loss(*args)
    forward.append(time.perf_counter() - s)
json.dump({"import_numpy_s": t1 - t0, "import_srcgrad_s": t2 - t1,
           "sg_grad_call_s": t4 - t3, "first_call_s": t5 - t4,
           "warm_call_s": statistics.median(warm), "forward_s": statistics.median(forward),
           "grads": [np.asarray(g).tolist() for g in grads]}, sys.stdout)
