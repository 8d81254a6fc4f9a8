"""`@sg.function(jit=True)`: a decorated function's tape calls compiled
with Numba.

On a tape, a call of a decorated function runs the split forward sweep of
its generated code and records one entry whose backward is the split
reverse sweep (function.py, `call_on_tape`). With `jit=True`, both sweeps
are lowered for Numba as a pair (lower.py, `split="fwd"` / `"bwd"`: the
stacks the forward sweep returns among its residuals become typed lists,
and the reverse sweep takes the residuals as flat parameters) and compiled, for the types of a call's
arguments, BEFORE the forward sweep runs: the reverse sweep is compiled
for the residual and output types the compiled forward sweep declares.
So a pair either runs compiled from the forward sweep to the gradient, or
(Numba missing, an idiom the lowering does not know, a typing error in
either sweep) the call runs the CPython sweeps, with a PerformanceWarning
giving the reason, once per argument types. The user's code runs once per
call either way.

The compiled forward sweep is given copies of the plain ndarrays among
its arguments (a Tensor's array is immutable): its residuals, typed lists
included, then hold nothing the program can write to before `gradient`
(what tape.keep_values ensures for the CPython sweeps). Cotangents are
given to the reverse sweep in the types of the outputs it was compiled
for (a float for a scalar output, a C-contiguous array of the output's
shape and dtype otherwise).

Outside tapes, the decorated function runs as `sg.jit` of the user's
function (Numba, or CPython with a PerformanceWarning).
"""
import threading
import warnings

import numpy as np

from ..errors import PerformanceWarning
from ..tape import scipy_calls
from . import api, lower


class _Pair:
    """The Numba entries of one artefact's split sweeps, and the argument
    types they were compiled for: {types: (output types) or a reason}."""

    def __init__(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd
        self.compiled = {}


class TapeJit:
    """The Numba side of `@sg.function(jit=True)` (see the module doc).

    Attributes:
      function: the decorated srcgrad Function.
      plain: `sg.jit` of the user's function, run outside tapes.
      fallbacks: {(sweep name, argument types): reason} of the tape calls
        that ran in CPython.
    """

    def __init__(self, function, cache=False):
        self.function = function
        self.cache = cache
        self.plain = api.Jitted(function.python_function, cache=cache)
        self.fallbacks = {}
        self._pairs = {}            # id(artefact) -> (artefact, _Pair)
        self._lock = threading.Lock()

    def _pair(self, compiled):
        found = self._pairs.get(id(compiled))
        if found is None or found[0] is not compiled:
            with self._lock:
                found = self._pairs.get(id(compiled))
                if found is None or found[0] is not compiled:
                    name = self.function.parsed.node.name
                    fwd = api.build_entry(compiled.fwd, "%s_fwd" % name, "fwd", self.cache)
                    bwd = api.build_entry(compiled.bwd_fn, "%s_bwd" % name, "bwd", self.cache)
                    found = self._pairs[id(compiled)] = (compiled, _Pair(fwd, bwd))
        return found[1]

    def _prepare(self, pair, raw):
        """Compile both sweeps for the types of `raw`: the output types, or
        the reason they run in CPython."""
        numba, _ = api._numba()
        if numba is None:
            return api._NUMBA_MISSING
        if pair.fwd.call is None or pair.bwd.call is None:
            return pair.fwd.fallback or pair.bwd.fallback
        if any(api._is_random(a) for a in raw):
            return api._RANDOM % "a random generator argument"
        try:
            key = tuple(numba.typeof(a) for a in list(raw) + list(pair.fwd.extra))
            extra_types = tuple(numba.typeof(a) for a in pair.bwd.extra)
        except Exception as exc:        # noqa: BLE001  (an argument Numba cannot type)
            return api._reason(exc)
        found = pair.compiled.get(key)
        if found is None:
            try:
                with scipy_calls.numpy_restored():     # (the tape's allocation wrappers are not NumPy's to Numba)
                    pair.fwd.call.compile(key)
                    returned = pair.fwd.call.overloads[key].signature.return_type
                    outputs, residuals = tuple(returned.types[:-1]), returned.types[-1]
                    pair.bwd.call.compile(tuple(lower.flatten_residuals(residuals, pair.bwd.residual_spec,
                                                                          parts=lambda t: t.types)) + outputs
                                          + extra_types)
                found = outputs
            except Exception as exc:    # noqa: BLE001  (a Numba typing or lowering error: CPython)
                found = api._reason(exc)
            pair.compiled[key] = found
        return found

    def forward(self, compiled, raw, owned):
        """Run the forward sweep of artefact `compiled` on `raw` (the
        call's raw inputs; `owned`: ids of the Tensors' arrays).

        Returns:
          (result, backward): what the CPython forward sweep returns
          (outputs, then residuals), and a function `backward(residuals,
          seeds)` running the compiled reverse sweep, or None when the
          call ran in CPython (the tape then calls the CPython reverse
          sweep, and keeps the residuals as for any call).
        """
        if getattr(compiled, "recursive_residuals", False):
            # (a recursion's split residuals hold its own: compiled with its recursive calls reversed
            # jointly, as sg.jit does; the CPython fallback keeps the artefact's own sweeps)
            compiled = compiled.program.compile(compiled.mask, api.JOINT_RECURSION)
        pair = self._pair(compiled)
        outputs = self._prepare(pair, raw)
        if isinstance(outputs, str):
            return self._in_cpython(compiled, raw, outputs)
        # (copies: the residuals must hold the values at the call, whatever the program writes later)
        args = [a.copy() if type(a) is np.ndarray and id(a) not in owned else a for a in raw]
        try:
            result = pair.fwd.call(*args, *[a.copy() for a in pair.fwd.extra])
        except NotImplementedError as exc:
            # (what Numba's code does not do at run time, or a twin hands to CPython: element assignment's
            # sharing check whose memory bounds overlap; the generated forward sweep writes into no argument)
            pair.fwd.call, pair.fwd.fallback = None, api._reason(exc)
            return self._in_cpython(compiled, raw, pair.fwd.fallback)
        result = result[:-1] + (tuple(lower.flatten_residuals(result[-1], pair.bwd.residual_spec)),)
        shapes = [np.shape(o) for o in result[:-1]]
        bwd, extra = pair.bwd.call, [a.copy() for a in pair.bwd.extra]

        def backward(residuals, seeds):
            seeds = [_as_type(s, t, shape) for s, t, shape in zip(seeds, outputs, shapes)]
            with scipy_calls.numpy_restored():     # (were a persistent tape's residuals typed anew: Numba compiles)
                return bwd(*residuals, *seeds, *extra)
        return result, backward

    def _in_cpython(self, compiled, raw, reason):
        """(None, None): the tape call runs the CPython sweeps; warned once
        per sweep and argument types, with `reason`."""
        key = (compiled.fwd.__name__, tuple(type(a).__name__ for a in raw))
        if key not in self.fallbacks:
            self.fallbacks[key] = reason
            warnings.warn("sg.function(jit=True): %s runs in CPython on the tape, not compiled by Numba: %s"
                          % (self.function.__name__, reason), PerformanceWarning, stacklevel=6)
        return None, None


def _as_type(seed, numba_type, shape):
    """A cotangent in the type the compiled reverse sweep takes for an
    output of Numba type `numba_type` and shape `shape`."""
    dtype = getattr(numba_type, "dtype", None)
    if getattr(numba_type, "ndim", None) is not None:
        g = np.asarray(seed, dtype=str(dtype))
        if g.shape != shape:
            g = np.broadcast_to(g, shape)
        return np.ascontiguousarray(g)
    value = np.asarray(seed)
    kind = np.dtype(str(numba_type)).kind if str(numba_type) in np.sctypeDict else "f"
    return complex(value) if kind == "c" else int(value) if kind in "iub" else float(value)
