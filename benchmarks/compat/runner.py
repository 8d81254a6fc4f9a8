"""Child process: run one example program, with autograd or through srcgrad,
recording its gradient calls (benchmarks/compat/examples.py starts it).

    python -m benchmarks.compat.runner --mode autograd|srcgrad --script STAGED.py
        --file ORIGINAL.py --out RESULT.pkl [--time-limit S] [--max-calls N] [--keep K] [--mnist]
"""
import argparse
import builtins
import linecache
import os
import pickle
import random
import signal
import sys
import time
import traceback
import types

import numpy as np

from .record import Recorder, StopProgram, canonical_name, root_function, transform_label

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class TimeLimit(BaseException):
    pass


def quiet_plotting():
    """matplotlib without windows or files: Agg, and show/pause/draw/ion and
    savefig as no-ops (the examples animate their training in a window)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.figure
    import matplotlib.pyplot as plt

    def nothing(*args, **kwargs):
        return None
    for name in ("show", "pause", "draw", "ion", "savefig"):
        setattr(plt, name, nothing)
    matplotlib.figure.Figure.savefig = nothing
    import matplotlib.image
    matplotlib.image.imsave = nothing


def synthetic_mnist(n_train=512, n_test=128):
    """A stand-in for examples/data_mnist.py (which downloads MNIST): images
    of the same shape and dtype (uint8, 28x28), from a fixed seed."""
    module = types.ModuleType("data_mnist")

    def mnist():
        rs = np.random.RandomState(1234)
        train_images = rs.randint(0, 256, size=(n_train, 28, 28)).astype(np.uint8)
        train_labels = rs.randint(0, 10, size=n_train).astype(np.uint8)
        test_images = rs.randint(0, 256, size=(n_test, 28, 28)).astype(np.uint8)
        test_labels = rs.randint(0, 10, size=n_test).astype(np.uint8)
        return train_images, train_labels, test_images, test_labels
    module.mnist = mnist
    sys.modules["data_mnist"] = module


def install_autograd(recorder):
    """Wrap the transforms the program imports from `autograd` so that the
    functions they return record their calls."""
    import autograd

    def recording(kind, transform, default_argnum=0):
        def make(fun, argnum=default_argnum, *rest, **kw):
            return recorder.wrap(transform_label(kind, canonical_name(fun), argnum),
                                 transform(fun, argnum, *rest, **kw))
        make.__name__ = transform.__name__
        return make

    for name, kind in [("grad", "grad"), ("elementwise_grad", "grad"), ("value_and_grad", "value_and_grad"),
                       ("grad_and_aux", "grad_and_aux"), ("jacobian", "jacobian"), ("hessian", "hessian"),
                       ("hessian_tensor_product", "hessian_vector_product"),
                       ("hessian_vector_product", "hessian_vector_product"),
                       ("tensor_jacobian_product", "tensor_jacobian_product"),
                       ("vector_jacobian_product", "tensor_jacobian_product"),
                       ("deriv", "deriv"), ("holomorphic_grad", "holomorphic_grad")]:
        if hasattr(autograd, name):
            setattr(autograd, name, recording(kind, getattr(autograd, name)))


def install_srcgrad(recorder):
    """Record the calls of what sg.grad / sg.value_and_grad return (the
    shim's grad *is* sg.grad), by wrapping Gradient.__call__ in this process
    (srcgrad's files are not touched); the shim's other transforms record
    through shim.RECORD."""
    from srcgrad import functional, op_by_op

    from . import shim
    for cls in (functional.Gradient, op_by_op.OpByOpGradient):    # (compiled, and op by op on the tape)
        _wrap_call(cls, recorder)
    shim.RECORD = recorder.wrap


def _wrap_call(cls, recorder):
    original = cls.__call__

    def __call__(self, *args, **kwargs):
        if recorder.depth or _internal(self):
            return original(self, *args, **kwargs)
        return recorder.call(canonical_name(self), lambda *a, **k: original(self, *a, **k), args, kwargs)
    cls.__call__ = __call__


def _internal(gradient):
    """A gradient the shim computes for itself (check_grads' VJPs): not recorded."""
    code = getattr(root_function(gradient), "__code__", None)
    return code is not None and code.co_filename.startswith("<compat-generated")


def frames_of(exc):
    out = []
    for fs in traceback.extract_tb(exc.__traceback__):
        line = fs.line or linecache.getline(fs.filename, fs.lineno).strip()
        out.append((fs.filename, fs.lineno, fs.name, line))
    return out


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["autograd", "srcgrad"], required=True)
    p.add_argument("--script", required=True, help="the staged program to run")
    p.add_argument("--file", required=True, help="the original program's path (its __file__: data files)")
    p.add_argument("--out", required=True)
    p.add_argument("--time-limit", type=float, default=120.0)
    p.add_argument("--max-calls", type=int, default=None)
    p.add_argument("--keep", type=int, default=3)
    p.add_argument("--mnist", action="store_true")
    args = p.parse_args(argv)

    quiet_plotting()
    if args.mnist:
        synthetic_mnist()
    recorder = Recorder(keep_per_label=args.keep, max_calls=args.max_calls)
    if args.mode == "autograd":
        install_autograd(recorder)
    else:
        install_srcgrad(recorder)

    np.random.seed(0)
    random.seed(0)
    script_dir = os.path.dirname(os.path.abspath(args.script))
    sys.path[:0] = [script_dir, ROOT]
    sys.argv = [args.file]
    source = open(args.script).read()
    code = compile(source, os.path.abspath(args.script), "exec")
    module = types.ModuleType("__main__")
    module.__file__ = os.path.abspath(args.file)
    module.__builtins__ = builtins
    saved_main = sys.modules.get("__main__")
    sys.modules["__main__"] = module

    def on_alarm(signum, frame):
        raise TimeLimit("time limit of %gs reached" % args.time_limit)
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, args.time_limit)
    result = {"mode": args.mode, "status": "finished"}
    start = time.time()
    try:
        exec(code, module.__dict__)
    except StopProgram as e:
        result["status"] = "stopped"
        result["message"] = str(e)
    except TimeLimit as e:
        result["status"] = "time-limit"
        result["message"] = str(e)
        result["frames"] = frames_of(e)
    except SystemExit as e:
        result["status"] = "finished" if not e.code else "exit"
        result["message"] = "SystemExit(%r)" % (e.code,)
    except BaseException as e:      # noqa: BLE001  (reported, then classified by the parent)
        result["status"] = "exception"
        result["exc_type"] = type(e).__name__
        result["exc_module"] = type(e).__module__
        result["message"] = str(e)
        result["frames"] = frames_of(e)
        try:
            from srcgrad.errors import SrcgradError
            result["srcgrad_error"] = isinstance(e, SrcgradError)
        except ImportError:
            result["srcgrad_error"] = False
        result["traceback"] = "".join(traceback.format_exception(type(e), e, e.__traceback__))[-6000:]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.modules["__main__"] = saved_main
    result["seconds"] = time.time() - start
    result["records"] = recorder.records
    result["counts"] = recorder.counts
    result["total_calls"] = recorder.total
    with open(args.out, "wb") as f:
        pickle.dump(result, f)
    sys.stdout.flush()
    os._exit(0)     # (no atexit handlers of the program: matplotlib, threads)


if __name__ == "__main__":
    main()
