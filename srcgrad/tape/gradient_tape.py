"""GradientTape: recording, the reverse sweep, and Jacobians.

Semantics follow `tf.GradientTape` (see ../shared/seeds and API.md):
operations run inside the context are recorded when at least one input is
watched; trainable Variables are watched when read (unless
`watch_accessed_variables=False`). Entries reference their inputs and outputs
by Tensor id; `gradient` accumulates cotangents in a dict keyed by id during
a sweep over the entries in reverse order of recording (a reverse
topological order).

Higher order: while another tape is recording, VJPs run on Tensors (op-by-op
entries with the recorded input Tensors; compiled entries through their
fused forward+reverse function), so the outer tape records the backward pass.
"""
import contextlib
import sys
import threading
import warnings

import numpy as np

from ..errors import api_boundary
from ..tensor import Tensor, Variable, conformed, is_differentiable_dtype, unwrap
from ..rules.helpers.diagonal import DiagonalStack
from . import buffers, scipy_calls
from .nested import flatten, pack_as
from .recording import UnconnectedGradients, _stack, _unconnected, recording_tapes

class GradientTape:
    """Record operations for automatic differentiation (`tf.GradientTape`).

    Args:
      persistent: allow more than one `gradient`/`jacobian` call; resources
        are kept until the tape is garbage collected.
      watch_accessed_variables: watch every trainable Variable read while the
        tape is recording.

    Use as a context manager; operations executed inside, with at least one
    watched input, are recorded. Calls of `@sg.function` functions are
    recorded as one entry each, whose backward is generated adjoint code.
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = bool(persistent)
        self._watch_accessed_variables = bool(watch_accessed_variables)
        self._recording = False
        self._entered = False
        self._scipy_hooked = False
        self._released = False
        self._entries = []
        self._tracked = set()       # ids of watched tensors and recorded outputs
        self._watched = {}          # id -> Tensor/Variable explicitly or automatically watched
        self._lock = threading.Lock()

    # -- context
    def __enter__(self):
        if self._recording:
            raise ValueError("Tape is still recording, This can happen if you try to "
                             "re-enter an already-active tape.")
        _stack().append(self)
        self._entered = True
        self._recording = True
        # SciPy functions with rules record while a tape records (also those the caller's module imported)
        scipy_calls.enter(sys._getframe(1).f_globals)
        buffers.enter()     # (np.zeros(n) in the user's code, then out[i] = t: recorded, buffers.py)
        self._scipy_hooked = True
        return self

    def __exit__(self, *exc):
        if self._scipy_hooked:
            self._scipy_hooked = False
            buffers.exit()
            scipy_calls.exit()
        if self._recording:
            self._recording = False
        stack = _stack()
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is self:
                del stack[i]
                break
        return False

    @contextlib.contextmanager
    def stop_recording(self):
        """Temporarily stop recording operations on this tape.

        Raises RuntimeError if the tape was never entered, and
        ValueError("Tape is not recording.") if it is not recording now (its
        context has exited, or inside another stop_recording of it)."""
        if not self._entered:
            raise RuntimeError("Trying to stop recording a tape which is not recording.")
        if not self._recording:
            raise ValueError("Tape is not recording.")
        self._recording = False
        try:
            yield
        finally:
            self._recording = True

    def reset(self):
        """Clear all information stored in this tape (as exiting and
        re-entering the context with a new tape)."""
        with self._lock:
            self._entries = []
            self._tracked = set()
            self._watched = {}
            self._released = False

    # -- watching
    def watch(self, tensor):
        """Ensure `tensor` (a Tensor, Variable or nested structure of them) is
        traced by this tape. Integer and boolean tensors are not
        differentiable: watching one warns and does nothing (as TF). Raises
        ValueError for anything that is not a Tensor."""
        for t in flatten(tensor):
            if not isinstance(t, Tensor):
                raise ValueError("Passed in object %r of type %r, not a Tensor or Variable"
                                 % (t, type(t).__name__))
            if not is_differentiable_dtype(t.dtype):
                warnings.warn("The dtype of the watched tensor must be floating (e.g. float64), "
                              "got %s" % t.dtype, UserWarning, stacklevel=2)
                continue
            self._watched[t._id] = t
            self._tracked.add(t._id)

    def watched_variables(self):
        """Variables watched by this tape, in order of construction."""
        vs = [t for t in self._watched.values() if isinstance(t, Variable)]
        return tuple(sorted(vs, key=lambda v: v._id))

    def _should_record(self, inputs):
        """Watch accessed trainable Variables; True if any input is tracked."""
        hit = False
        for t in inputs:
            if (self._watch_accessed_variables and isinstance(t, Variable) and t._trainable
                    and t._id not in self._tracked and is_differentiable_dtype(t.dtype)):
                self._watched[t._id] = t
                self._tracked.add(t._id)
            if t._id in self._tracked:
                hit = True
        return hit

    def _record(self, entry):
        self._entries.append(entry)
        self._tracked.update(entry.output_ids)

    # -- differentiation
    def _check_usable(self):
        if self._released:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one set "
                               "of gradients (or jacobians)")

    def _release(self):
        if not self._persistent:
            self._released = True
            self._entries = []
            self._tracked = set()

    def _inside_context(self):
        """`gradient` called inside the tape's own context, as TF: a
        non-persistent tape stops recording; a persistent one warns and
        records the gradient computation on itself (so it can be
        differentiated again)."""
        if not self._recording:
            return
        if not self._persistent:
            self.__exit__(None, None, None)
        else:
            warnings.warn("Calling GradientTape.gradient on a persistent tape inside its context "
                          "is significantly less efficient than calling it outside the context "
                          "(it causes the gradient ops to be recorded on the tape, leading to "
                          "increased CPU and memory usage). Only call GradientTape.gradient inside "
                          "the context if you actually want to trace the gradient in order to "
                          "compute higher order derivatives.", UserWarning, stacklevel=3)

    def _reachable(self, sources):
        """The entries on a path from `sources`, in recording order, and the
        ids they reach (forward reachability; computed once per gradient or
        jacobian)."""
        reach = {s._id for s in sources if isinstance(s, Tensor) and s._id in self._tracked}
        relevant = []
        for e in self._entries:
            if not reach.isdisjoint(e.input_ids):
                relevant.append(e)
                reach.update(e.output_ids)
        return relevant, reach

    def _sweep(self, targets, seeds, sources, reachable=None, batched=False):
        """Reverse sweep: cotangents of `sources` (list of Tensors) given
        `seeds` for `targets`. Returns a list aligned with sources (None where
        unconnected). With `batched`, every cotangent is a stack of them (a
        leading batch axis): many sweeps at once (vectorised Jacobians)."""
        higher_order = bool(recording_tapes()) and not batched
        source_ids = [s._id if isinstance(s, Tensor) else None for s in sources]
        relevant, reach = reachable or self._reachable(sources)
        cot = {}
        for t, s in zip(targets, seeds):
            i = t._id
            if i in reach:
                cot[i] = cot[i] + s if i in cot else s
        for e in reversed(relevant):
            gs = [cot.get(o) for o in e.output_ids]
            for g in gs:
                if g is not None:
                    break
            else:
                continue
            needed = [i in reach for i in e.input_ids]
            for i, g in zip(e.input_ids, e.vjp(gs, needed, higher_order, batched)):
                if g is not None and i in reach:
                    cot[i] = cot[i] + g if i in cot else g
        return [cot.get(i) if i is not None else None for i in source_ids]

    def _finish(self, g, source, unconnected):
        if g is None:
            if unconnected is UnconnectedGradients.ZERO and isinstance(source, Tensor):
                return Tensor(np.zeros_like(source._value))
            return None
        if isinstance(g, Tensor):
            # (a backward pass run on Tensors, under an outer tape or accumulator: the same real part, shape
            # and dtype as below, recorded; a real source got the complex cotangent, imaginary part and all)
            return conformed(g, source)
        g = np.asarray(g)
        shape = source.shape
        if g.shape != shape:
            g = np.broadcast_to(g, shape)
        if g.dtype != source.dtype and is_differentiable_dtype(source.dtype):
            g = (np.real(g) if g.dtype.kind == "c" and source.dtype.kind != "c" else g).astype(source.dtype)
        if not g.flags.writeable:
            g = g.copy()
        return Tensor(g)

    @api_boundary
    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """Gradient of `target` with respect to `sources`.

        target: a Tensor or nested structure of Tensors (several targets are
          summed, as in TF). sources: a Tensor/Variable or nested structure.
        output_gradients: cotangents for the targets, same structure and
          shapes (None entries mean ones). Returns the structure of
          `sources`, each a Tensor of the source's shape and dtype, or None
          (zeros with unconnected_gradients="zero") where unconnected.

        Raises RuntimeError on a second call on a non-persistent tape;
        ValueError for a Variable target, a non-Tensor source, a bad
        unconnected_gradients value or output_gradients that do not match.
        """
        self._check_usable()
        unconnected = _unconnected(unconnected_gradients)
        target = buffers.resolve(target, held=True)
        targets = flatten(target)
        for t in targets:
            if isinstance(t, Variable):
                raise ValueError("GradientTape.gradient is not supported for variable targets.")
            if not isinstance(t, Tensor):
                raise ValueError("target must be a Tensor or a nested structure of Tensors, got %r"
                                 % type(t).__name__)
        flat_sources = flatten(sources)
        for s in flat_sources:
            if not isinstance(s, Tensor):
                raise ValueError("sources must be Tensors or Variables, got %r" % type(s).__name__)
        seeds = self._seeds(targets, output_gradients)
        self._inside_context()
        grads = self._sweep(targets, seeds, flat_sources)
        self._release()
        return pack_as(sources, [self._finish(g, s, unconnected) for g, s in zip(grads, flat_sources)])

    def _seeds(self, targets, output_gradients):
        higher_order = bool(recording_tapes())
        if output_gradients is None:
            return [_ones(t._value) for t in targets]
        grads = flatten(output_gradients) if isinstance(output_gradients, (list, tuple, dict)) else [output_gradients]
        if len(grads) != len(targets):
            raise ValueError("output_gradients has %d element(s) but target has %d"
                             % (len(grads), len(targets)))
        seeds = []
        for t, g in zip(targets, grads):
            if g is None:
                seeds.append(_ones(t._value))
                continue
            shape = np.shape(g)
            if tuple(shape) != tuple(t.shape):
                raise ValueError("Mismatch between output_gradients shape %s and target shape %s"
                                 % (tuple(shape), tuple(t.shape)))
            seeds.append(g if (higher_order and isinstance(g, Tensor)) else np.asarray(unwrap(g), dtype=t.dtype))
        return seeds

    @api_boundary
    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """Jacobian of `target` (one Tensor) with respect to `sources`
        (nested structure): each result has shape target.shape + source.shape
        and the source's dtype (None, or zeros with
        unconnected_gradients="zero", where unconnected).

        Vectorised by default (experimental_use_pfor=True, TF's pfor): one
        reverse sweep on a stack of cotangent seeds, the rows of the
        identity, `parallel_iterations` at a time (None: all at once), so
        `parallel_iterations` bounds the memory. Entries whose rule cannot
        run on a stack loop over it inside the sweep. With
        experimental_use_pfor=False, or while another tape records the
        computation (a Jacobian differentiated again), one sweep per row.

        Raises RuntimeError on a released tape, or on a non-persistent tape
        with experimental_use_pfor=False (as TF); ValueError for a target
        that is not a Tensor."""
        self._check_usable()
        if not experimental_use_pfor and not self._persistent:
            raise RuntimeError("GradientTape must be created with persistent=True to compute the "
                               "jacobian with experimental_use_pfor=False.")
        unconnected = _unconnected(unconnected_gradients)
        target = buffers.resolve(target, held=True)
        if not isinstance(target, Tensor):
            raise ValueError("jacobian target must be a Tensor")
        flat_sources = flatten(sources)
        n = target.size
        higher_order = bool(recording_tapes())
        self._inside_context()
        reachable = self._reachable(flat_sources)
        if experimental_use_pfor and not higher_order:
            stacks = self._stacked_sweeps(target, target.shape, n, flat_sources, reachable, parallel_iterations)
            self._release()
            out = []
            for s, stack in zip(flat_sources, stacks):
                if stack is None:
                    out.append(None if unconnected is UnconnectedGradients.NONE
                               else Tensor(np.zeros(target.shape + s.shape, dtype=s.dtype)))
                else:
                    out.append(Tensor(_as_dtype(stack.reshape(target.shape + s.shape), s.dtype)))
            return pack_as(sources, out)
        rows = [[] for _ in flat_sources]
        for j in range(n):
            seed = np.zeros(n, dtype=target.dtype)
            seed[j] = 1
            grads = self._sweep([target], [seed.reshape(target.shape)], flat_sources, reachable)
            for k, g in enumerate(grads):
                rows[k].append(g)
        self._release()
        out = []
        for s, row in zip(flat_sources, rows):
            if all(g is None for g in row):
                out.append(None if unconnected is UnconnectedGradients.NONE
                           else Tensor(np.zeros(target.shape + s.shape, dtype=s.dtype)))
                continue
            if higher_order:
                out.append(_stack_recorded(row, target.shape, s))
                continue
            full = [np.broadcast_to(unwrap(g), s.shape) if g is not None else np.zeros(s.shape, s.dtype)
                    for g in row]
            out.append(Tensor(np.stack(full).reshape(target.shape + s.shape).astype(s.dtype)))
        return pack_as(sources, out)

    def _stacked_sweeps(self, target, shape, n, sources, reachable, chunk, rows=None, lead=0):
        """Batched sweeps seeded with the rows of the n x n identity (one-hot
        cotangents of `target`, laid out in `shape` by `rows(seed)`), `chunk`
        rows at a time; all n at once, as a DiagonalStack of `shape` (its
        first `lead` axes the examples `rows` repeats the rows over: batch_jacobian).
        Returns per source an array of shape (n,) + source.shape, or None
        where unconnected."""
        chunk = n if not chunk else max(1, min(int(chunk), n))
        parts = [[] for _ in sources]
        connected = [False] * len(sources)
        for start in range(0, n, chunk):
            k = min(chunk, n - start)
            if k == n:      # all rows at once: the structured seed, diag(1) (rules/helpers/diagonal.py)
                seed = DiagonalStack.identity(tuple(shape), target.dtype, lead)
            else:
                seed = np.zeros((k, n), dtype=target.dtype)
                seed[np.arange(k), start + np.arange(k)] = 1
                seed = rows(seed) if rows is not None else seed.reshape((k,) + tuple(shape))
            grads = self._sweep([target], [seed], sources, reachable, batched=True)
            for i, (g, s) in enumerate(zip(grads, sources)):
                if g is None:
                    parts[i].append(np.zeros((k,) + s.shape, dtype=s.dtype))
                else:
                    connected[i] = True
                    g = unwrap(g)
                    if isinstance(g, DiagonalStack):
                        g = np.array(g)         # (a new array: the identity's dense array is shared)
                    if np.shape(g) != (k,) + s.shape:
                        g = np.broadcast_to(g, (k,) + s.shape)
                    parts[i].append(g)
        # (one chunk: its array as it is, no copy)
        return [(p[0] if len(p) == 1 else np.concatenate(p)) if c else None for p, c in zip(parts, connected)]

    @api_boundary
    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per-example Jacobians: target [b, y1..yn], source [b, x1..xm] ->
        [b, y1..yn, x1..xm], assuming target[i] depends only on source[i]
        (TF's batch_jacobian). Each sweep seeds one element of target[0]
        in every example at once; vectorised by default over those
        elements (`parallel_iterations` at a time), looped with
        experimental_use_pfor=False. An unconnected target gives zeros (as
        TF). Raises ValueError when the first dimensions differ or a rank
        is below 1."""
        self._check_usable()
        if not experimental_use_pfor and not self._persistent:
            raise RuntimeError("GradientTape must be created with persistent=True to compute the "
                               "batch_jacobian with experimental_use_pfor=False.")
        _unconnected(unconnected_gradients)
        target = buffers.resolve(target, held=True)
        if target.ndim < 1 or source.ndim < 1:
            raise ValueError("batch_jacobian needs target and source of rank >= 1, got shapes %s and %s"
                             % (target.shape, source.shape))
        if target.shape[0] != source.shape[0]:
            raise ValueError("Need first dimension of target shape (%s) and source shape (%s) to match."
                             % (target.shape, source.shape))
        b = target.shape[0]
        inner = target.shape[1:]
        m = int(np.prod(inner)) if inner else 1
        self._inside_context()
        reachable = self._reachable([source])
        if experimental_use_pfor and not recording_tapes():
            def rows(seed):         # (k, m) one-hot rows -> (k, b, *inner), every example seeded
                return np.broadcast_to(seed[:, None, :], (seed.shape[0], b, m)).reshape(
                    (seed.shape[0], b) + tuple(inner))
            (stack,) = self._stacked_sweeps(target, (b,) + tuple(inner), m, [source], reachable,
                                            parallel_iterations, rows, lead=1)
            self._release()
            if stack is None:
                return Tensor(np.zeros((b,) + inner + source.shape[1:], dtype=source.dtype))
            result = np.moveaxis(stack, 0, 1)       # (b, m, *source.shape[1:])
            return Tensor(_as_dtype(result.reshape((b,) + inner + source.shape[1:]), source.dtype))
        result = np.zeros((b, m) + source.shape[1:], dtype=source.dtype)
        for j in range(m):
            seed = np.zeros((b, m), dtype=target.dtype)
            seed[:, j] = 1
            (g,) = self._sweep([target], [seed.reshape(target.shape)], [source], reachable)
            if g is not None:
                result[:, j] = np.broadcast_to(unwrap(g), source.shape)
        self._release()
        return Tensor(result.reshape((b,) + inner + source.shape[1:]))


def _ones(a):
    """Ones of the shape and dtype of the ndarray `a` (np.ones_like's
    values, in two C calls; np.empty is NumPy's own while a tape records)."""
    out = _empty(a.shape, a.dtype)
    out.fill(1)
    return out


_empty = np.empty


def _as_dtype(a, dtype):
    """`a` in the source's dtype (the real part of a complex cotangent for
    a real source), writable."""
    a = np.asarray(a)
    if a.dtype != dtype:
        a = (np.real(a) if a.dtype.kind == "c" and np.dtype(dtype).kind != "c" else a).astype(dtype)
    return a if a.flags.writeable else a.copy()


def _stack_recorded(rows, target_shape, source):
    """Stack Jacobian rows (Tensors recorded by an outer tape) into shape
    target_shape + source.shape with recorded operations only (one-hot
    outer products), so the Jacobian itself can be differentiated."""
    n = len(rows)
    total = None
    for j, g in enumerate(rows):
        if g is None:
            continue
        onehot = np.zeros((n,) + (1,) * len(source.shape), dtype=source.dtype)
        onehot[j] = 1
        term = onehot * np.reshape(g, (1,) + source.shape)
        total = term if total is None else total + term
    return np.reshape(total, tuple(target_shape) + source.shape)
