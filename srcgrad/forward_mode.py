"""Forward mode at run time: ForwardAccumulator, tangents op by op, calls of
compiled functions inside an accumulator, and `transpose_jvp`, the run-time
helper of generated JVP code for primitives without a tangent rule.

`ForwardAccumulator` follows `tf.autodiff.ForwardAccumulator`: it maps the
ids of the Tensors it watches, and of every Tensor computed from them while
it is active, to their tangents (Tensors), computed as each operation runs
(`tangents_hook`, an observer of `tape.apply`) from the tangent rules
(rules/numpy_tangents.py). A call of an `@sg.function` inside an active
accumulator runs the function's generated JVP code instead (`call_function`).

Nesting. Accumulators are pushed on the same thread-local stack as
GradientTapes (tape.py's), and behave there as tapes that record nothing;
so a tape's backward pass runs on Tensors (is itself differentiable)
whenever an accumulator is active. The tangents for the accumulator at
position k of the stack are computed with the stack cut to its first k
entries: outer tapes and accumulators see (record, differentiate) the
tangent computation, inner ones do not, as TF's strict nesting requires.
This gives forward-over-reverse (an accumulator around a tape: Hessian-
vector products), reverse-over-forward (a tape around an accumulator) and
forward-over-forward (nested accumulators) to any order.

Primitives without a tangent rule. For a primitive with an adjoint rule but
no tangent rule, the JVP is computed by the transpose trick
(`transpose_jvp`): the VJP `u -> J^T u` is linear in the cotangent `u`, so
running it on a watched Tensor `u` and taking the gradient of
<J^T u, v> with respect to `u` gives J v. This is exact for every rule
whose VJP is written with differentiable NumPy operations and is linear in
`u` for every value of `u` (all of srcgrad's are; u = ones, so that rules
skipping work for a zero cotangent take the general path), and costs one
small reverse pass per operation.

References: Griewank & Walther, Evaluating Derivatives, 2nd ed., SIAM 2008
(ch. 3 forward mode, ch. 5 second-order adjoints); Pearlmutter, "Fast exact
multiplication by the Hessian", Neural Computation 6(1), 1994.
"""
import contextlib
import sys
import threading
import warnings
import weakref

import numpy as np

from . import tape as tape_mod
from .errors import NoRuleError
from .rules import registry
from .rules.python import containers
from .rules import tangents as tangent_registry
from .tape import GradientTape, UnconnectedGradients, _unconnected, buffers, flatten, pack_as, scipy_calls
from .tensor import Tensor, conformed, is_differentiable_dtype, unwrap, unwrap_nested
from .tensor import user_frame as tensor_user_frame
from .transforms import instantiate


class _State(threading.local):
    active = 0          # how many accumulators this thread has entered (a class default: fast to read)


_local = _State()


def _active_count():
    return _local.active


# ------------------------------------------------------------ the accumulator

class ForwardAccumulator:
    """Computes Jacobian-vector products with forward-mode AD, as
    `tf.autodiff.ForwardAccumulator`.

    primals: a Tensor/Variable or nested structure (list, tuple, dict) of
      them to watch. tangents: the same structure, each of its primal's
      shape (converted to the primal's dtype): the "vector" of the JVP.

    While the context is active, every operation with a watched input
    computes its output's tangent; `acc.jvp(y)` then returns it (no
    computation happens in `jvp`). Accumulators nest with each other and
    with GradientTapes in the order their contexts were entered: an outer
    one sees the tangent (or gradient) computations of inner ones, e.g.
    `acc.jvp(tape.gradient(y, x))` with the tape inside `acc` is a
    Hessian-vector product.

    Raises ValueError when a primal is listed twice, when primals and
    tangents differ in structure or shape, for a non-Tensor primal, and on
    re-entering an active accumulator. Watching an integer primal warns and
    does nothing (as GradientTape.watch).
    """

    def __init__(self, primals, tangents):
        self._recording = False
        self._tangents = {}        # primal id -> (tangent Tensor, weakref to the primal)
        self._unknown = {}         # id -> NoRuleError: a tangent that a rule-less op in a custom_gradient body lost
        seen = set()
        for p in flatten(primals):
            if id(p) in seen:
                raise ValueError("Tensor %r was specified as a primal multiple times. This may "
                                 "indicate an error. If it was intended, please sum the "
                                 "corresponding tangents." % (p,))
            seen.add(id(p))
        self.watch(primals, tangents)

    # -- context
    def __enter__(self):
        if self._recording:
            raise ValueError("Accumulator is already recording.")
        tape_mod._stack().append(self)
        self._recording = True
        _local.active = _active_count() + 1
        # as a GradientTape: SciPy functions with rules and the user's preallocated arrays are recorded
        scipy_calls.enter(sys._getframe(1).f_globals)
        buffers.enter()
        self._hooked = True
        return self

    def __exit__(self, *exc):
        if getattr(self, "_hooked", False):
            self._hooked = False
            buffers.exit()
            scipy_calls.exit()
        if self._recording:
            stack = tape_mod._stack()
            for i in range(len(stack) - 1, -1, -1):
                if stack[i] is self:
                    del stack[i]
                    break
            self._recording = False
            _local.active = _active_count() - 1
        return False

    # the tape interface of tape.py's stack: an accumulator records no entries
    def _should_record(self, inputs):
        return False

    def _record(self, entry):
        pass

    # -- watching
    def watch(self, primals, tangents):
        """Watch `primals` (a Tensor or nested structure) with `tangents`
        (same structure and shapes). Watching a Tensor again adds the new
        tangent to its current one (as TF). Raises ValueError for mismatched
        structures or shapes and for non-Tensor primals. A None tangent
        watches nothing (as sg.jvp's None; converted, it was a NaN tangent)."""
        _assert_same_structure(primals, tangents)
        for p, t in _pairs(primals, tangents):
            if t is None:
                continue
            if not isinstance(p, Tensor):
                raise ValueError("Passed in object %r of type %r, not a Tensor or Variable"
                                 % (p, type(p).__name__))
            if not is_differentiable_dtype(p.dtype):
                warnings.warn("The dtype of the watched primal must be floating (e.g. float64), "
                              "got %s" % p.dtype, UserWarning, stacklevel=2)
                continue
            if not (isinstance(t, Tensor) and t.dtype == p.dtype):
                t = Tensor(np.asarray(unwrap(t), dtype=p.dtype))
            if t.shape != p.shape:
                raise ValueError("Tangent of shape %s was specified for a primal of shape %s; "
                                 "they must match" % (t.shape, p.shape))
            old = self._get(p)
            self._set(p, t if old is None else old + t)

    def _get(self, tensor):
        entry = self._tangents.get(tensor._id)
        return entry[0] if entry is not None else None

    def _check_known(self, tensors):
        """Raise the deferred NoRuleError when one of `tensors` has a tangent
        that an operation without a rule (inside a custom_gradient body)
        could not compute."""
        if self._unknown:
            for t in tensors:
                error = self._unknown.get(t._id) if isinstance(t, Tensor) else None
                if error is not None:
                    raise error

    def _set_unknown(self, out, error):
        for o in ([out] if isinstance(out, Tensor) else out):
            table, i = self._unknown, o._id
            table[i] = error
            weakref.finalize(o, table.pop, i, None)

    def _set(self, tensor, tangent):
        table, i = self._tangents, tensor._id
        # forget the tangent when the primal is garbage collected (as TF)
        ref = weakref.ref(tensor, lambda _, table=table, i=i: table.pop(i, None))
        table[i] = (tangent, ref)

    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """The tangents computed for `primals` (a Tensor or nested
        structure), in the same structure: Tensors of the primals' shapes
        and dtypes, or None for a primal that does not depend on the watched
        ones (zeros with unconnected_gradients="zero"). Performs no
        computation and works whether or not the context is active.
        Raises ValueError for a bad unconnected_gradients value."""
        unconnected = _unconnected(unconnected_gradients)
        primals = buffers.resolve(primals, held=True)     # (an array filled with Tensors: tape/buffers.py)
        self._check_known(flatten(primals))

        def fetch(p):
            r = self._get(p) if isinstance(p, Tensor) else None
            if r is None and unconnected is UnconnectedGradients.ZERO and p is not None:
                r = Tensor(np.zeros_like(unwrap(p)))
            return r
        return pack_as(primals, [fetch(p) for p in flatten(primals)])


def _assert_same_structure(a, b):
    def kind(s):
        if isinstance(s, dict):
            return ("dict", tuple(sorted(s)))
        if isinstance(s, (list, tuple)):
            return ("seq", len(s))
        return "leaf"
    ka, kb = kind(a), kind(b)
    if ka == "leaf":
        return          # a Tensor's tangent may be any array-like (a list of numbers)
    if ka != kb:
        raise ValueError("primals and tangents do not have the same nested structure: %r and %r"
                         % (_describe(a), _describe(b)))
    if isinstance(a, dict):
        for k in a:
            _assert_same_structure(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        for x, y in zip(a, b):
            _assert_same_structure(x, y)


def _pairs(primals, tangents):
    """(primal, tangent) leaf pairs of two structures (a primal leaf's
    tangent may itself be a list of numbers)."""
    if isinstance(primals, dict):
        return [pair for k in sorted(primals) for pair in _pairs(primals[k], tangents[k])]
    if isinstance(primals, (list, tuple)):
        return [pair for p, t in zip(primals, tangents) for pair in _pairs(p, t)]
    return [(primals, tangents)]


def _describe(s):
    if isinstance(s, dict):
        return {k: _describe(v) for k, v in s.items()}
    if isinstance(s, (list, tuple)):
        return type(s)(_describe(v) for v in s)
    return type(s).__name__


@contextlib.contextmanager
def _outer_only(outer):
    """Run with the tape/accumulator stack cut to `outer` (those entered
    before the accumulator whose tangents are being computed)."""
    saved = tape_mod._stack()
    tape_mod._local.tapes = list(outer)
    try:
        yield
    finally:
        tape_mod._local.tapes = saved


def _recording(stack):
    return any(t._recording for t in stack)


# ------------------------------------------------------------- op by op

def tangents_hook(func, args, kwargs, out):
    """Called by `tape.apply` after each operation while a tape or
    accumulator is active: give `out` (a Tensor, or a tuple/list of them
    for np.split, linalg.eigh...) its tangent in every active accumulator
    that has a tangent for one of its inputs. Returns `out`. Raises
    NoRuleError for a primitive with neither a tangent nor an adjoint rule
    applied to a value that has a tangent."""
    if not _local.active or registry.is_nondiff(func) or not _carries_tangent(out):
        return out
    stack = tape_mod._stack()
    for k, acc in enumerate(stack):
        if type(acc) is ForwardAccumulator and acc._recording and acc._tangents:
            if acc._unknown:        # an input's tangent was lost in a custom_gradient body: so is out's
                error = _unknown_input(acc, args, kwargs)
                if error is not None:
                    acc._set_unknown(out, error)
                    continue
            tangent = _op_tangent(acc, func, args, kwargs or {}, out, stack[:k])
            if tangent is _UNKNOWN:
                continue
            if isinstance(out, Tensor):
                if tangent is not None:
                    acc._set(out, tangent)
            elif tangent is not None:
                for o, t in zip(out, tangent):
                    if t is not None and is_differentiable_dtype(o.dtype):
                        acc._set(o, t)
    return out


_UNKNOWN = object()


def _unknown_input(acc, args, kwargs):
    for a in tape_mod.flatten(list(args) + list((kwargs or {}).values())):
        if isinstance(a, Tensor) and a._id in acc._unknown:
            return acc._unknown[a._id]
    return None


def _carries_tangent(out):
    if isinstance(out, Tensor):
        return is_differentiable_dtype(out.dtype)
    return (isinstance(out, (tuple, list)) and bool(out) and all(isinstance(o, Tensor) for o in out)
            and any(is_differentiable_dtype(o.dtype) for o in out))


def _input_tangents(acc, bound, params):
    """{param: tangent} for the params whose value has a tangent in `acc`; a
    list/tuple parameter gets a list (None for elements without one)."""
    found = {}
    for p in params:
        v = bound.get(p)
        if isinstance(v, Tensor):
            tan = acc._get(v)
            if tan is not None:
                found[p] = tan
        elif type(v) in (list, tuple):
            tans = _nested_tangents(acc, v)
            if tans is not None:
                found[p] = tans
    return found


def _nested_tangents(acc, v):
    """The tangents of a (nested) list or tuple `v`'s Tensor leaves, in its
    structure as lists (np.array([[1.0, a], [b, c]])), None where a leaf has
    none; None when no leaf has one."""
    if isinstance(v, Tensor):
        return acc._get(v)
    if type(v) not in (list, tuple):
        return None
    tans = [_nested_tangents(acc, e) for e in v]
    return tans if any(t is not None for t in tans) else None


def _filled(tangent, value):
    """`tangent` (from _nested_tangents) with zeros for the leaves of
    `value` that have none."""
    if tangent is None:
        return containers.zeros_tree(value)
    if isinstance(tangent, list):
        return [_filled(t, e) for t, e in zip(tangent, value)]
    return tangent


def _op_tangent(acc, func, args, kwargs, out, outer):
    rule = tangent_registry.tangent_rule(func) if isinstance(out, Tensor) else None
    adjoint = registry.adjoint_rule(func) if rule is None else None
    if rule is None and adjoint is None:
        inputs = [a for a in tape_mod.flatten(list(args) + list(kwargs.values())) if isinstance(a, Tensor)]
        if any(acc._get(a) is not None for a in inputs):
            found = tensor_user_frame(1, through_srcgrad=True)
            where = (found[0].f_code.co_filename, found[0].f_lineno) if found else ()
            if not tape_mod.in_custom_body():
                raise NoRuleError(func, *where, path="forward")
            # inside a custom_gradient body (whose tangent is grad_fn's): fail
            # only if a higher derivative through grad_fn's closure needs it
            error = NoRuleError(func, *where, path="forward")
            error.add_note("It was applied inside a @sg.custom_gradient function, whose grad_fn closes "
                           "over its result; a higher derivative through grad_fn needs its rule.")
            acc._set_unknown(out, error)
            return _UNKNOWN
        return None
    bound = (rule or adjoint).bind(out, args, kwargs)
    tans = _input_tangents(acc, bound, rule.tangent_params if rule else adjoint.diff_params)
    if not tans:
        return None
    on_tensors = _recording(outer)      # an outer tape/accumulator must see the computation
    if not on_tensors:
        bound = {k: unwrap(v) for k, v in bound.items()}
        tans = {p: unwrap(v) for p, v in tans.items()}
    z = out if on_tensors else unwrap(out)
    with _outer_only(outer):
        if rule is not None:
            for p, v in tans.items():
                if isinstance(v, list):     # a list parameter: zeros for elements without a tangent
                    tans[p] = _filled(v, bound[p])
            fn = instantiate.jvp(rule, tans)
            result = fn(z, *[tans[p] for p in rule.tangent_params if p in tans], **bound)
        else:
            result = _transpose(adjoint, z, tans, bound)
    return _as_tangent(result, out)


def _as_tangent(tangent, like):
    """A Tensor of `like`'s shape and dtype; a list of them when `like` is a
    tuple/list of Tensors. A real output's tangent is real: the real part
    of a complex one (the transpose trick's for np.linalg.norm of a complex
    array has an imaginary part that means nothing; kept on Tensors, under
    an outer tape or accumulator, it reached the real part of every later
    product with a complex number)."""
    if tangent is None:
        return None
    if not isinstance(like, Tensor):
        return [_as_tangent(t, o) for t, o in zip(tangent, like)]
    if isinstance(tangent, Tensor):
        return conformed(tangent, like)
    return Tensor(conformed(np.asarray(tangent), like))


def _transpose(rule, z, tangents, bound):
    """J v for the adjoint `rule` at output `z`, by differentiating its VJP
    u -> J^T u (linear in u) with respect to u, seeded with the tangents:
    d/du sum_p <(J_p^T u), v_p> = sum_p J_p v_p. `tangents` maps params to
    a tangent, or a list of them (None allowed) for a list parameter. For a
    primitive returning a tuple/list, u and the result are lists. Returns a
    Tensor, a list of Tensors/None, or None."""
    params = [p for p in rule.diff_params if p in tangents]
    vjp = instantiate.vjp(rule, params)
    seq = isinstance(z, (list, tuple))
    outputs = unwrap(list(z) if seq else [z])
    # u's value does not matter (the VJP is linear in u); ones keep rules that
    # skip work for a zero cotangent (eigh's eigenvector term) on the general
    # path. A rule that refuses a nonzero cotangent on some output (svd's
    # extra columns with full_matrices=True, whose derivative is undefined)
    # is retried with zeros, which gives those outputs zero tangents.
    try:
        return _transpose_at(vjp, rule, z, tangents, bound, params, seq, outputs, np.ones)
    except NotImplementedError:
        return _transpose_at(vjp, rule, z, tangents, bound, params, seq, outputs, np.zeros)


def _pair_leaves(c, v, targets, seeds):
    """Append to `targets` each Tensor leaf of the cotangent `c` and to
    `seeds` the tangent at the same place in `v` (nested lists and tuples:
    a list parameter of lists, the tangents of a JVP differentiated
    again). A non-Tensor cotangent does not depend on u: skipped."""
    if isinstance(c, (list, tuple)) and isinstance(v, (list, tuple)):
        for ci, vi in zip(c, v):
            _pair_leaves(ci, vi, targets, seeds)
    elif isinstance(c, Tensor) and v is not None:
        targets.append(c)
        # (one array cotangent for a list argument, np.einsum's of a list operand: its tangents stacked,
        # zeros where none; seeded as the list, they were taken for as many seeds as its entries)
        seeds.append(_stacked(v, c) if isinstance(v, (list, tuple)) else v)


def _stacked(v, like):
    """The (nested) list of tangents `v` as one array of `like`'s shape,
    np.stack of its entries (zeros of like[i]'s shape for an entry None)."""
    if not isinstance(v, (list, tuple)):
        return v if v is not None else np.zeros_like(unwrap(like))
    return np.stack([_stacked(e, like[i]) for i, e in enumerate(v)])


def _numeric_dtype(o):
    """o's NumPy dtype, or None for what has none (a string key: np.result_type
    would read "a" or "f" as a dtype code)."""
    if isinstance(o, (str, bytes)):
        return None
    try:
        return np.result_type(o)
    except TypeError:
        return None


def _transpose_at(vjp, rule, z, tangents, bound, params, seq, outputs, fill):
    # (an output that is not a number, sorted(d)'s keys, gets an object cotangent: never watched)
    us = [Tensor(fill(np.shape(o), dtype=dt)) if dt is not None else Tensor(np.zeros(0, dtype=object))
          for o, dt in ((o, _numeric_dtype(o)) for o in outputs)]
    watched = [u for u in us if is_differentiable_dtype(u.dtype)]
    with GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(watched)
        cotangents = dict(zip(rule.diff_params, vjp(us if seq else us[0], z, **bound)))
    targets, seeds = [], []
    for p in params:
        _pair_leaves(cotangents.get(p), tangents[p], targets, seeds)
    if not targets or not watched:
        return [None] * len(us) if seq else None
    grads = tape.gradient(targets, watched, output_gradients=seeds)
    if not seq:
        return grads[0]
    it = iter(grads)
    return [next(it) if is_differentiable_dtype(u.dtype) else None for u in us]


def transpose_jvp(primitive, z, tangents, *args):
    """Run-time helper of generated JVP code, for a primitive with an
    adjoint rule but no tangent rule: the JVP by the transpose trick.
    `tangents` is aligned with the rule's differentiable parameters (None
    where an input has no tangent; a tuple with Nones for a list
    parameter); `args` are the rule's parameters in order. Returns an
    ndarray (a Tensor when run on Tensors; a list for a primitive returning
    a tuple/list), or None."""
    rule = registry.adjoint_rule(primitive)
    bound = dict(zip(rule.params, args))
    tans = {}
    for p, v in zip(rule.diff_params, tangents):
        if v is not None and not (isinstance(v, (list, tuple)) and all(e is None for e in v)):
            tans[p] = v
    leaves = [x for x in tape_mod.flatten([z, list(tans.values())]) if x is not None]
    on_tensors = any(isinstance(x, Tensor) for x in leaves)
    result = _transpose(rule, z, tans, bound)
    if result is None:
        return result
    if isinstance(result, list):
        # an output whose tangent does not depend on the inputs' (np.modf's integer part) gets zeros: the
        # generated code adds it, on Tensors too (reverse over forward through an @sg.function)
        if on_tensors:
            return [r if r is not None else Tensor(np.zeros_like(unwrap(o))) for r, o in zip(result, z)]
        return [r._value if r is not None else np.zeros_like(o) for r, o in zip(result, z)]
    return result if on_tensors else result._value


def transpose_jvp_packed(primitive, z, tangents, args):
    """`transpose_jvp(primitive, z, tangents, *args)` with the rule's
    parameters as one tuple: the form generated JVP code calls, which has
    an adjoint rule (below), so that code differentiating a JVP again
    (reverse over forward: sg.grad of a function calling sg.jvp, the
    order-2 checks of autograd's test suite) compiles."""
    return transpose_jvp(primitive, z, tangents, *args)


def _lift(v):
    """A value transpose_jvp_vjp watches: a recorded copy of a Tensor (tapes
    around see through it), a Tensor of a floating number or array, the
    same structure for a list or tuple; anything else as it is."""
    if isinstance(v, Tensor):
        return np.positive(v)
    if isinstance(v, (list, tuple)):
        return type(v)(_lift(e) for e in v)
    if isinstance(v, (float, complex, np.ndarray, np.generic)) and np.asarray(v).dtype.kind in "fc":
        return Tensor(np.array(v))
    return v


def _leaves(v, out):
    if isinstance(v, Tensor):
        out.append(v)
    elif isinstance(v, (list, tuple)):
        for e in v:
            _leaves(e, out)
    return out


def _replace(v, grads, raw):
    """`v` with each Tensor leaf replaced by its gradient (in _leaves order);
    None elsewhere."""
    if isinstance(v, Tensor):
        g = next(grads)
        g = g if g is not None else Tensor(np.zeros_like(v._value))
        return g._value if raw else g
    if isinstance(v, (list, tuple)):
        return [_replace(e, grads, raw) for e in v]
    return None


def transpose_jvp_vjp(g, primitive, z, tangents, args):
    """The VJP of transpose_jvp_packed for the cotangent `g` of its result:
    (d z, d tangents, d args), computed by running transpose_jvp on watched
    Tensors under a GradientTape (the transpose trick is NumPy code on
    Tensors; on Tensors, tapes around this one record it too: every
    order). Entries that are not floating values get None."""
    on_tensors = bool(_leaves([g, z, list(tangents), list(args)], []))
    Z, T, A = _lift(z), _lift(tuple(tangents)), _lift(list(args))
    leaves = [x for x in _leaves([Z, list(T), A], []) if is_differentiable_dtype(x.dtype)]
    with GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(leaves)
        out = transpose_jvp(primitive, Z, T, *A)
    outs, gs = (list(out), list(g)) if isinstance(out, (list, tuple)) else ([out], [g])
    targets, seeds = [], []
    for o, w in zip(outs, gs):
        if isinstance(o, Tensor) and w is not None:
            targets.append(o)
            seeds.append(w)
    found = tape.gradient(targets, leaves, output_gradients=seeds) if targets and leaves else [None] * len(leaves)
    by_id = {id(x): gx for x, gx in zip(leaves, found)}
    structure = [Z, list(T), A]
    order = _leaves(structure, [])
    grads = iter([by_id.get(id(x)) for x in order])
    dz, dt, da = (_replace(part, grads, not on_tensors) for part in structure)
    return dz, dt, da


@registry.register_adjoint(transpose_jvp_packed)
def transpose_jvp_packed_(out, primitive, z, tangents, args):
    """By the tape: transpose_jvp is NumPy code on Tensors (the transpose
    trick), so its VJP is recorded and replayed (transpose_jvp_vjp)."""
    # (a template: `d` is the notation of rules/numpy/__init__.py, never run)
    cotangents = transpose_jvp_vjp(d[out], primitive, z, tangents, args)  # noqa: F821
    d[z] = cotangents[0]  # noqa: F821
    d[tangents] = cotangents[1]  # noqa: F821
    d[args] = cotangents[2]  # noqa: F821


tape_mod.add_op_observer(tangents_hook)      # called by tape.apply after each op


def transpose_grad_fn(grad_fn, n_args, outputs, tangents):
    """J v for a custom_gradient function: differentiate its grad_fn (linear
    in the output cotangents) with respect to the cotangents, seeded with
    the arguments' tangents {position: tangent, or for a list, tuple or
    dict argument the same structure of tangents, None where none}, as TF
    treats custom gradients in forward mode. Returns one tangent (or None) per output."""
    us = [Tensor(np.ones(np.shape(o), dtype=np.result_type(o))) for o in unwrap(list(outputs))]
    with GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(us)
        grads = grad_fn(*us)
    if n_args == 1 and not isinstance(grads, (tuple, list)):
        grads = (grads,)
    targets, seeds = [], []
    for i, t in tangents.items():
        for path, leaf in tape_mod.leaf_paths(t):      # (a list, tuple or dict argument: leaf by leaf)
            g = tape_mod.at_path(grads[i], path)
            if isinstance(g, Tensor) and leaf is not None:
                targets.append(g)
                seeds.append(leaf)
    if not targets:
        return [None] * len(us)
    return tape.gradient(targets, us, output_gradients=seeds)


def custom_tangents(args, outputs, grad_fn):
    """For `sg.custom_gradient` (custom.py) called op by op inside active
    accumulators: give `outputs` (Tensors) the tangents J v obtained by
    transposing `grad_fn`, for each accumulator with a tangent for one of
    the positional `args`. Returns nothing."""
    if not _local.active:
        return
    stack = tape_mod._stack()
    for k, acc in enumerate(stack):
        if type(acc) is not ForwardAccumulator or not acc._recording:
            continue
        tangents = {}
        for i, a in enumerate(args):        # (a list, tuple or dict argument: a tree of tangents, None where none)
            found = [acc._get(t) if isinstance(t, Tensor) else None for _, t in tape_mod.leaf_paths(a)]
            if any(t is not None for t in found):
                tangents[i] = pack_as(a, found)
        if not tangents:
            continue
        with _outer_only(stack[:k]):
            dys = transpose_grad_fn(grad_fn, len(args), outputs, tangents)
        for o, d in zip(outputs, dys):
            if d is not None and is_differentiable_dtype(o.dtype):
                acc._set(o, _as_tangent(d, o))


NOT_HANDLED = object()


def accumulating():
    """Is an accumulator active in this thread?"""
    return _local.active > 0


class Refused:
    """What call_function returns when the compiler refuses the function
    in forward mode (`exc`), before any of it ran: the caller decides
    whether it runs op by op (function.py, op_by_op.falls_back)."""

    def __init__(self, exc):
        self.exc = exc


def call_function(fn, args, kwargs):
    """A call of the @sg.function `fn` while an accumulator is active.

    The innermost accumulator that has a tangent for an input runs the
    generated JVP code, on Tensors when an outer tape or accumulator is
    recording (so it sees the computation), else on ndarrays. A tape inside
    that accumulator records the call as one compiled entry (the outputs are
    that entry's, with the JVP's tangents). When an argument is a container
    holding Tensors with tangents, the function runs op by op instead (each
    op reaches every tape and accumulator in order). Returns NOT_HANDLED
    when no input has a tangent, and a `Refused` when the compiler refuses
    the function in forward mode (before any of it ran)."""
    if fn.has_varargs:     # *args/**kwargs: op by op
        leaves = [t for t in flatten([list(args), kwargs]) if isinstance(t, Tensor)]
        accs = [a for a in tape_mod._stack() if type(a) is ForwardAccumulator and a._recording]
        if not any(a._get(t) is not None for a in accs for t in leaves):
            return NOT_HANDLED
        return fn.op_by_op(*args, **kwargs)
    params = fn.bind(args, kwargs)
    program = fn.program_for(params)
    values = list(params.values()) + [leaf.fetch(params, program.namespace) for leaf in program.leaves]
    tensors = [v for v in values if isinstance(v, Tensor)]
    nested = [t for v in values if isinstance(v, (list, tuple, dict)) for t in tape_mod.flatten(v)
              if isinstance(t, Tensor)]
    stack = tape_mod._stack()
    for acc in stack:
        if type(acc) is ForwardAccumulator and acc._recording:
            acc._check_known(tensors + nested)
    k = None
    for i in range(len(stack) - 1, -1, -1):
        acc = stack[i]
        if type(acc) is ForwardAccumulator and acc._recording and any(
                acc._get(v) is not None for v in tensors + nested):
            k = i
            break
    if k is None:
        return NOT_HANDLED
    acc = stack[k]
    if any(acc._get(t) is not None for t in nested):
        # tangents inside containers: op by op (a derived function, sg.grad's, by its own op-by-op form)
        return fn.op_by_op(*args, **kwargs)
    # a tape inside the accumulator records the call as one compiled entry
    # (its backward, run while the accumulator is active, is generated code
    # again, which the accumulator differentiates by its generated JVP)
    inner = any(t._recording and t._should_record(tensors) for t in stack[k + 1:])
    mask = [isinstance(v, Tensor) and is_differentiable_dtype(v.dtype) and acc._get(v) is not None
            for v in values]
    try:
        compiled = program.compile(mask, "forward")
        if getattr(compiled, "type_check", None) is not None:
            raise compiled.type_check_refusal()     # (op by op the code sees the Tensors, as the plain call)
    except Exception as exc:        # (nothing of the user's code has run: the caller may run it op by op)
        return Refused(exc)
    outer = stack[:k]
    on_tensors = _recording(outer)
    tans = [acc._get(v) for v, m in zip(values, mask) if m]
    if not on_tensors:
        values = [_unwrap_nested(v) for v in values]
        tans = [t._value for t in tans]
    with _outer_only(outer):
        outs, douts = compiled.jvp(*values, *tans)
    if not compiled.tuple_output:
        outs, douts = (outs,), (douts,)
    if inner:
        recorded = fn.call_on_tape(tape_mod.recording_tapes(), args, kwargs, args, kwargs)
        outs = recorded if compiled.tuple_output else (recorded,)
    wrapped = [_with_tangents(acc, o, d) for o, d in zip(outs, douts)]
    return tuple(wrapped) if compiled.tuple_output else wrapped[0]


def _with_tangents(acc, o, d):
    """The output `o` of a compiled call as Tensors, each given its tangent
    from `d` (the same structure) in `acc`; a list, tuple or dict output
    leaf by leaf."""
    if type(o) in (list, tuple, dict):
        leaves = tape_mod.flatten(o)
        ds = tape_mod.flatten(d) if type(d) in (list, tuple, dict) else [None] * len(leaves)
        return tape_mod.pack_as(o, [_with_tangents(acc, e, de) for e, de in zip(leaves, ds)])
    if isinstance(o, (np.ndarray, np.generic, float, int, complex)) and not isinstance(o, bool):
        o = Tensor(np.asarray(o))
    if isinstance(o, Tensor) and d is not None and is_differentiable_dtype(o.dtype):
        acc._set(o, _as_tangent(d, o))
    return o


_unwrap_nested = unwrap_nested


