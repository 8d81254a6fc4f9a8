"""Tape entries: one recorded operation each, with the VJP the reverse
sweep runs.

- `OpEntry`: a primitive applied to Tensors (its rule's VJP, compiled from
  the template by transforms/instantiate.py).
- `DeferredEntry`: a primitive with no rule inside a custom_gradient body
  (NoRuleError only when a gradient reaches it).
- `CallEntry`: a call of a compiled function (`CompiledCall`: the generated
  adjoint on the forward sweep's residuals; at higher order the generated
  VJP called as a compiled function on Tensors, so an outer tape records it
  as one entry again).
"""
import operator
import sys

import numpy as np

from .. import tensor as tensor_mod
from ..errors import NoRuleError
from ..rules.helpers.batched import batch_size, zeros_b
from ..tensor import Tensor, unwrap, unwrap_nested
from ..transforms import instantiate
from .nested import flatten, pack_as


class OpEntry:
    """One recorded NumPy operation: `out = rule.primitive(*args)`.

    A differentiable parameter may hold one Tensor or a list/tuple of values
    (np.stack's `arrays`, einsum's `*operands`): each Tensor in it is an
    input slot `(param, index)`, and the rule's `d[param]` is a list aligned
    with it. A primitive returning a tuple or list of arrays (np.split,
    linalg.eigh) has one output per element; its rule reads `d[z]` as a list
    with zeros for the outputs that received no cotangent.
    """

    __slots__ = ("rule", "params", "slots", "input_ids", "bound", "bound_raw", "output", "output_ids")

    def __init__(self, rule, args, kwargs, output):
        self.rule = rule
        bound = rule.bind(output, args, kwargs)
        for k, v in bound.items():
            if type(v) is np.ndarray and v.flags.writeable:
                # a plain array operand (Tensors are immutable): the VJP reads its value at the op,
                # as TF's tape does, whatever the program writes into the array afterwards
                bound[k] = v.copy()
        self.bound = bound
        self.bound_raw = {k: unwrap(v) for k, v in bound.items()}
        slots = []
        for p in rule.diff_params:
            v = self.bound.get(p)
            if isinstance(v, Tensor):
                slots.append((p, None, v))
            elif type(v) in (list, tuple):      # (nested too: np.array([[a, b], [c, d]]))
                slots.extend((p, path, e) for path, e in _leaf_paths(v))
        self.slots = [(p, i) for p, i, _ in slots]
        self.params = [p for p, _, _ in slots]
        self.input_ids = [t._id for _, _, t in slots]
        self.output = output
        if isinstance(output, Tensor):
            self.output_ids = [output._id]
        else:
            self.output_ids = [o._id for o in output]

    def vjp(self, cotangents, needed, higher_order, batched=False):
        """The input cotangents (None where not `needed`) from the output
        cotangents: on Tensors while another tape records (higher_order),
        on stacks of cotangents (a leading batch axis) when `batched`."""
        params = {p for p, n in zip(self.params, needed) if n}
        fn = instantiate.batched_vjp(self.rule, params) if batched else instantiate.vjp(self.rule, params)
        if isinstance(self.output, Tensor):
            g = cotangents[0]
            out = self.output if higher_order else self.output._value
        elif batched:
            B = batch_size(cotangents)
            g = [c if c is not None else zeros_b(o._value, B) for c, o in zip(cotangents, self.output)]
            out = unwrap(self.output)
        else:
            g = [c if c is not None else np.zeros_like(o._value) for c, o in zip(cotangents, self.output)]
            if not higher_order:
                g = [unwrap(c) for c in g]
            out = self.output if higher_order else unwrap(self.output)
        if higher_order:
            result = fn(g, out, **self.bound)
        else:
            result = fn(unwrap(g), out, **self.bound_raw)
        by_param = dict(zip(self.rule.diff_params, result))
        grads = []
        for (p, path), n in zip(self.slots, needed):
            r = by_param.get(p) if n else None
            for i in (path or ()):
                r = None if r is None else r[i]
            grads.append(r)
        return grads


def _leaf_paths(v, prefix=()):
    """(index path, Tensor) for the Tensors of a (nested) list or tuple."""
    for i, e in enumerate(v):
        if isinstance(e, Tensor):
            yield prefix + (i,), e
        elif type(e) in (list, tuple):
            yield from _leaf_paths(e, prefix + (i,))


class DeferredEntry:
    """An operation with no adjoint rule, recorded inside a custom_gradient
    body (whose first derivative is grad_fn's): its VJP raises NoRuleError
    naming the function and the user's line, when a higher derivative
    through grad_fn's closure needs it (as TF's LookupError)."""

    __slots__ = ("func", "input_ids", "output_ids", "where")

    def __init__(self, func, inputs, output):
        self.func = func
        self.input_ids = [t._id for t in inputs]
        self.output_ids = [output._id] if isinstance(output, Tensor) else [
            o._id for o in output if isinstance(o, Tensor)]
        found = tensor_mod.user_frame(2, through_srcgrad=True)
        self.where = (found[0].f_code.co_filename, found[0].f_lineno) if found else (None, None)

    def vjp(self, cotangents, needed, higher_order, batched=False):
        error = NoRuleError(self.func, *self.where, path="tape")
        error.add_note("It was applied inside a @sg.custom_gradient function, whose grad_fn closes over "
                       "its result; a higher derivative through grad_fn needs its rule.")
        raise error


_ID = operator.attrgetter("_id")


class CallEntry:
    """One call of a compiled (`@sg.function`) function: a single entry whose
    VJP is the generated adjoint code."""

    __slots__ = ("input_ids", "inputs", "output_ids", "outputs", "backward", "joint", "residuals", "batched")

    def __init__(self, inputs, outputs, backward, joint, residuals, batched=None):
        self.inputs = inputs            # Tensors, aligned with the compiled function's active leaves
        self.input_ids = list(map(_ID, inputs))
        self.outputs = outputs
        self.output_ids = list(map(_ID, outputs))
        self.backward = backward        # bwd(residuals, *cotangents) -> tuple, raw arrays
        self.joint = joint              # joint(*inputs, *cotangents) -> tuple, any values
        self.residuals = residuals
        self.batched = batched          # batched(cotangent stacks) -> tuple of stacks, or None: looped

    def vjp(self, cotangents, needed, higher_order, batched=False):
        if batched:
            B = batch_size(cotangents)
            gs = [g if g is not None else zeros_b(o._value, B) for g, o in zip(cotangents, self.outputs)]
            if self.batched is not None:
                result = self.batched(gs)
            else:           # one example at a time (custom gradients: grad_fn need not batch)
                parts = [self.backward(self.residuals, [g[k] for g in gs]) for k in range(B)]
                result = [None if all(p is None for p in col) else
                          np.stack([np.asarray(p) for p in col]) for col in zip(*parts)]
            return [r if n else None for r, n in zip(result, needed)]
        if higher_order:
            gs = [g if g is not None else np.zeros_like(o._value) for g, o in zip(cotangents, self.outputs)]
            result = self.joint(self.inputs, gs)
        else:
            gs = [unwrap(g) if g is not None else np.zeros_like(o._value) for g, o in zip(cotangents, self.outputs)]
            result = self.backward(self.residuals, gs)
        return [r if n else None for r, n in zip(result, needed)]


# ------------------------------------------------------------ compiled calls

def _flat_inputs(values):
    """Tape inputs: a Tensor as is, a container as its Tensor leaves."""
    for v in values:
        if not isinstance(v, Tensor):
            break
    else:
        return values           # (the common case: Tensors only)
    out = []
    for v in values:
        if isinstance(v, Tensor):
            out.append(v)
        else:
            out.extend(e for e in flatten(v) if isinstance(e, Tensor))
    return out


def _flat_cotangents(values, cotangents):
    """The cotangents aligned with _flat_inputs(values): a container's
    cotangent (same structure) is flattened the same way."""
    for v in values:
        if not isinstance(v, Tensor):
            break
    else:
        return list(cotangents)     # (the common case: Tensors only)
    out = []
    for v, g in zip(values, cotangents):
        if isinstance(v, Tensor):
            out.append(g)
        else:
            leaves = flatten(v)
            gleaves = flatten(g) if g is not None else [None] * len(leaves)
            out.extend(c for e, c in zip(leaves, gleaves) if isinstance(e, Tensor))
    return out


def _full_cotangents(out_index, n_outputs, gs, trees=None):
    """The cotangents of all `n_outputs` outputs of a compiled call from
    those of its recorded Tensors `gs`: 0.0 for an output not recorded; an
    entry `(i, k)` of `out_index` is leaf k of the container output i (its
    structure in `trees[i]`), whose other leaves get None (symbolic zeros)."""
    full = [0.0] * n_outputs
    if trees is None:       # (no container output)
        for i, g in zip(out_index, gs):
            full[i] = g
        return full
    leaves = {}
    for i, g in zip(out_index, gs):
        if type(i) is tuple:
            i, k = i
            if i not in leaves:
                leaves[i] = [None] * len(flatten(trees[i]))
            leaves[i][k] = g
        else:
            full[i] = g
    for i, ls in leaves.items():
        full[i] = pack_as(trees[i], ls)
    return full


def keep_values(result, owned, copied=None):
    """`result` (what a split forward returned: outputs, then residuals)
    with the residual arrays that something outside the compiled call also
    holds (a plain ndarray argument, a global or attribute array, or a view
    of one) replaced by copies, so that the recorded backward reads the
    values at the call, as TF's tape does, whatever the program writes into
    those arrays before `gradient`. Arrays the compiled code made are held
    only by `result` (CPython's reference counts tell), and `owned` lists
    the ids of Tensors' arrays (immutable): neither is copied (an ndarray
    subclass, such as the Buffer of an array allocated inside the tape's
    body, is copied as a plain ndarray). The ids of the arrays copied are
    appended to the list `copied`, if given."""
    arrays = []         # (the ndarrays not owned, each once, and {id: occurrences})
    counts = {}
    todo = [result]
    while todo:
        for e in todo.pop():
            t = type(e)
            if t is np.ndarray or (t is not tuple and t is not list and isinstance(e, np.ndarray)):
                # (a subclass too: an array the user allocated inside the tape's body is a Buffer, buffers.py)
                key = id(e)
                if key in counts:
                    counts[key] += 1
                elif key not in owned:
                    counts[key] = 1
                    arrays.append(e)
            elif t is tuple or t is list:
                todo.append(e)
    e = None        # (no reference left but result's and `arrays`')
    if not arrays:
        return result
    foreign = None
    for a in arrays:
        # (the references: result's, `arrays`', the loop's `a` and getrefcount's argument)
        if sys.getrefcount(a) - counts[id(a)] <= 3:
            base = a.base
            if type(base) is not np.ndarray or id(base) in owned or id(base) in counts:
                continue
        if a.flags.writeable:
            if foreign is None:
                foreign = {}
            foreign[id(a)] = a.copy() if type(a) is np.ndarray else np.array(a)
            if copied is not None:
                copied.append(id(a))
    a = arrays = None
    if foreign is None:
        return result
    return _replace(result, foreign)


def _replace(tree, copies):
    """`tree` (nested tuples and lists) with the arrays whose ids `copies`
    maps replaced by their copies: a container is rebuilt only when
    something under it changed."""
    changed = None
    for i, e in enumerate(tree):
        t = type(e)
        if t is tuple or t is list:
            new = _replace(e, copies)
        elif isinstance(e, np.ndarray):
            new = copies.get(id(e), e)
        else:
            continue
        if new is not e:
            if changed is None:
                changed = list(tree)
            changed[i] = new
    if changed is None:
        return tree
    return changed if type(tree) is list else type(tree)(changed)


class CompiledCall:
    """One call of a compiled function recorded on tapes (a CallEntry's
    VJPs): the generated adjoint on the residuals of the forward sweep; at
    higher order, the generated VJP (joint) called as a compiled function
    on Tensors, so that the outer tape records ONE entry whose backward is
    generated code again; on stacks of cotangents (vectorised Jacobians),
    the batched generated code. Inputs the outputs do not depend on stay
    unconnected (None), as on TF's tape."""

    __slots__ = ("compiled", "values", "raw", "out_index", "residuals", "_connected", "trees", "jit_backward")

    def __init__(self, compiled, values, raw, out_index, residuals, trees=None, jit_backward=None, connected=None):
        self.compiled = compiled
        self.values = values
        self.raw = raw
        self.out_index = out_index      # per recorded output Tensor: i, or (i, leaf k) of a container output
        self.residuals = residuals
        self._connected = connected     # (the values of connected_values, when the caller knows them)
        self.trees = trees              # {i: the container output i} for (i, k) entries
        # the reverse sweep compiled by Numba (jit/tape.py), whose residuals these are; None: CPython's
        self.jit_backward = jit_backward

    def connected_values(self):
        found = self._connected
        if found is None:
            c = self.compiled
            where = c.__dict__.get("_connected_at")
            if where is None:       # (the positions of the active inputs the outputs depend on, per artefact)
                active = [i for i, m in enumerate(c.mask) if m]
                where = c._connected_at = [i for i, k in zip(active, c.connected) if k]
            values = self.values
            found = self._connected = [values[i] for i in where]
        return found

    def inputs(self):
        return _flat_inputs(self.connected_values())

    def _seeds(self, gs):
        return _full_cotangents(self.out_index, len(self.compiled.outputs), gs, self.trees)

    def _result(self, cots):
        cots = [g for g, k in zip(cots, self.compiled.connected) if k]
        return _flat_cotangents(self.connected_values(), cots)

    def backward(self, residuals, gs):
        if self.jit_backward is not None:
            return self._result(self.jit_backward(self.residuals, self._seeds(gs)))
        return self._result(self.compiled.bwd(self.residuals, *self._seeds(gs)))

    def batched(self, gs):
        """The batched generated reverse sweep on the residuals of the call
        when the batched code has this call's forward sweep
        (Artefact.forward_matches); else the batched joint code, which runs
        its own forward sweep again (its reverse sweep reads other
        residuals)."""
        stacked = self.compiled.program.compile(self.compiled.mask, "batched")
        if self.jit_backward is None and self.compiled.forward_matches(stacked):
            return self._result(stacked.bwd(self.residuals, *self._seeds(gs)))
        return self._result(stacked.joint(*self.raw, *self._seeds(gs)))

    def higher_order(self, inputs, gs):
        compiled = self.compiled
        vjp = compiled.joint_fn.__srcgrad_function__()     # the VJP as a compiled function (callables.as_function)
        args = list(self.values)
        it = iter(inputs)
        active = [i for i, m in enumerate(compiled.mask) if m]
        for i, k in zip(active, compiled.connected):
            if k:
                v = self.values[i]
                if isinstance(v, Tensor):
                    args[i] = next(it)
                else:       # a container: its Tensor leaves replaced in order
                    leaves = [next(it) if isinstance(e, Tensor) else e for e in flatten(v)]
                    args[i] = pack_as(v, leaves)
        args = [a if isinstance(a, Tensor) or type(a) in (list, tuple, dict) else unwrap_nested(a)
                for a in args]
        cots = vjp(*args, *self._seeds(gs))
        cots = cots if len(compiled.active_inputs) != 1 else (cots,)
        return self._result(cots)
