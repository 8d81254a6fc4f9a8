"""Run a user's NumPy function under another array library.

autograd and JAX are timed on the SAME source as srcgrad: the function is
rebuilt from its code object with `np` in its globals bound to
`autograd.numpy` or `jax.numpy` (closures and defaults kept). Only functions
whose NumPy calls exist in the other library with the same signature are
run this way; PyTorch versions are written out by hand in each workload.
"""
import types


def with_numpy(fn, numpy_module):
    """`fn` with the global name `np` bound to `numpy_module`."""
    fn = getattr(fn, "python_function", fn)   # an @sg.function: its plain body
    namespace = dict(fn.__globals__)
    namespace["np"] = numpy_module
    clone = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__,
                               fn.__closure__)
    clone.__kwdefaults__ = fn.__kwdefaults__
    return clone
