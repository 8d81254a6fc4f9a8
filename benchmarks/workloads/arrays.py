"""Workload (issue 19, "beyond one machine"): one gradient function on every
array library srcgrad runs it on.

The loss is L2-regularised logistic regression in NumPy idiom,

    p = 1 / (1 + exp(-X w));  L = -mean(y log p + (1 - y) log(1 - p)) + lam |w|^2 / 2

and `sg.grad(loss)` (one Python object) is called with NumPy arrays, PyTorch
CPU tensors and array_api_strict arrays (the generated code run by the array
API's names: srcgrad/runtime/namespaces.py), Dask arrays (NumPy dispatch,
the threaded scheduler over chunks of rows) and CuPy arrays where a GPU
exists (`python -m benchmarks --only gpu` runs this workload; without a GPU
the CuPy row says so). Peers: PyTorch's autograd on the same loss written
with torch functions, JAX's jit.

Every path's gradient is converted to NumPy after the call (`.numpy()`,
`.compute()`, `cupy.asnumpy`) to be checked against the hand-written
gradient X^T (p - y) / n + lam w; that conversion is part of each row's time
(zero-copy for PyTorch CPU tensors; for Dask it is the computation itself).
"""
import numpy as np

from benchmarks import harness

NAME = "arrays"
TITLE = "logistic regression gradient on NumPy, PyTorch CPU, array_api_strict, Dask, CuPy arrays"

LAM = 1e-3


def loss(w, X, y):
    z = X @ w
    p = 1 / (1 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)) + LAM * np.sum(w * w) / 2


def grad_by_hand(w, X, y):
    p = 1 / (1 + np.exp(-(X @ w)))
    return X.T @ (p - y) / X.shape[0] + LAM * w


def run(bench):
    import srcgrad as sg

    n, d = (2_000, 10) if bench.settings.small else (200_000, 20)
    bench.params = {"rows": n, "features": d}
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    y = (rng.random(n) < 1 / (1 + np.exp(-X @ rng.normal(size=d)))).astype(float)
    w = 0.1 * rng.normal(size=d)
    bench.tolerance(1e-9, 1e-12)
    bench.reference("hand-written NumPy", lambda: grad_by_hand(w, X, y))
    grad = sg.grad(loss)
    bench.path("srcgrad sg.grad, NumPy", lambda: grad(w, X, y))

    torch = harness.optional("torch")
    if torch is None:
        bench.skip("srcgrad sg.grad, PyTorch CPU tensors", "PyTorch is not installed")
    else:
        tw, tX, ty = (torch.from_numpy(a) for a in (w, X, y))
        bench.path("srcgrad sg.grad, PyTorch CPU tensors", lambda: grad(tw, tX, ty).numpy(),
                   notes="the same sg.grad object; NumPy's names as array_api_compat.torch's")

        def torch_autograd():
            w_ = tw.clone().requires_grad_(True)
            p = torch.sigmoid(tX @ w_)
            value = -torch.mean(ty * torch.log(p) + (1 - ty) * torch.log(1 - p)) + LAM * torch.sum(w_ * w_) / 2
            value.backward()
            return w_.grad.numpy()
        bench.path("PyTorch autograd (peer)", torch_autograd, notes="the loss written with torch functions")

    strict = harness.optional("array_api_strict")
    if strict is None:
        bench.skip("srcgrad sg.grad, array_api_strict", "array_api_strict is not installed")
    else:
        sw, sX, sy = (strict.asarray(a) for a in (w, X, y))
        bench.path("srcgrad sg.grad, array_api_strict", lambda: np.asarray(grad(sw, sX, sy)),
                   notes="the array API's reference implementation (a NumPy wrapper with checks)")

    da = harness.optional("dask.array")
    if da is None:
        bench.skip("srcgrad sg.grad, Dask (threads)", "Dask is not installed")
    else:
        chunk = max(1, n // 8)
        dX, dy = da.from_array(X, chunks=(chunk, d)), da.from_array(y, chunks=chunk)
        bench.path("srcgrad sg.grad, Dask (threads)", lambda: grad(w, dX, dy).compute(scheduler="threads"),
                   notes="8 row chunks; the lazy gradient built, then computed")

    cupy = harness.optional("cupy")
    gpu = False
    if cupy is not None:
        try:
            gpu = cupy.cuda.runtime.getDeviceCount() > 0
        except Exception:   # noqa: BLE001  (no driver: no GPU)
            gpu = False
    if not gpu:
        bench.skip("srcgrad sg.grad, CuPy (GPU)", "no GPU here" if cupy is not None else "CuPy is not installed")
    else:
        cw, cX, cy = (cupy.asarray(a) for a in (w, X, y))

        def on_gpu():
            g = grad(cw, cX, cy)
            cupy.cuda.Stream.null.synchronize()
            return cupy.asnumpy(g)
        bench.path("srcgrad sg.grad, CuPy (GPU)", on_gpu, notes="NumPy dispatch; includes the copy back")
