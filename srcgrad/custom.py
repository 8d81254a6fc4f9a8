"""`sg.custom_gradient`: a function that supplies its own gradient
(`tf.custom_gradient` semantics).

    @sg.custom_gradient
    def log1pexp(x):
        e = np.exp(x)
        def grad(dy):
            return dy * (1 - 1 / (1 + e))
        return np.log(1 + e), grad

On the tape, the body runs with the tapes and accumulators recording (as in
TF), so the values `grad` closes over (`e` here) stay connected to `x`; the
outputs are fresh Tensors recorded as one entry whose VJP is `grad` (run on
Tensors at higher order, so an outer tape or accumulator records it and
differentiates `grad` through its closure: Hessian-vector products are
exact). An operation without a rule inside the body fails only when a
higher derivative needs it (tape.DeferredEntry). In compiled code the call is one step of the forward sweep that
keeps `grad` for the reverse sweep.
"""
import functools

import numpy as np

from . import forward_mode
from . import tape as tape_mod
from .rules.helpers.batched import batch_size
from .runtime import zeros_tree
from .tensor import Tensor, is_differentiable_dtype, unwrap


class Services:
    """The function layer's compiler, as custom_gradient needs it: a grad_fn
    run on Tensors (a higher derivative) runs compiled, so that what it calls
    with a rule in compiled code only (np.full, np.zeros_like of a value,
    ...) stays differentiable. custom.py sits below the function layer (the
    compiler calls CustomCallee), so the constructor is handed to it by
    srcgrad/__init__.py, the composition root."""
    compiled = None     # f -> the srcgrad Function of f (callables.as_function), or raises


SERVICES = Services()


def _grad_fn_call(grad_fn, cotangents):
    """grad_fn(*cotangents) for a higher derivative: compiled (an outer tape
    records one compiled entry, whose inputs include the Tensors grad_fn
    closes over). Code srcgrad cannot compile runs as written, as do the
    grad_fns srcgrad itself makes (a VJP's own VJP, by tape)."""
    if SERVICES.compiled is not None and not (getattr(grad_fn, "__module__", None) or "").startswith("srcgrad."):
        try:
            fn = SERVICES.compiled(grad_fn)
        except Exception:       # (no source, unsupported syntax: op by op instead)
            fn = None
        if fn is not None:
            return fn(*cotangents)
    return grad_fn(*cotangents)


def custom_gradient(f):
    """Decorator: `f(*args)` returns `(y, grad_fn)`; the decorated function
    returns `y` and differentiates with `grad_fn(*dys)`, which returns one
    gradient per positional argument of `f` (a tuple when there are several;
    None for an argument with no gradient; for a list, tuple or dict
    argument of arrays, a gradient of the same structure; for a value of
    the user's own vector space, a value of that space, added with its
    class's `+`). `y` is an array or a tuple of arrays; `dys` are the
    cotangents of the outputs (zeros for unused outputs). Keyword
    arguments are passed through and not differentiated.
    As `tf.custom_gradient`; the `variables` argument is not supported.
    Raises TypeError when `f` does not return a (value, function) pair.
    """
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        tapes = tape_mod.recording_tapes()
        # the Tensors among the positional arguments, also inside lists, tuples and dicts
        # (fixed_point(f, (a, x, g), ...)): (position, path, Tensor)
        leaves = [(i, path, t) for i, a in enumerate(args) for path, t in tape_mod.leaf_paths(a)
                  if isinstance(t, Tensor) and is_differentiable_dtype(t.dtype)]
        inputs = [t for _, _, t in leaves]
        watching = [t for t in tapes if t._should_record(inputs)] if inputs else []
        if not watching and not (inputs and forward_mode.accumulating()):
            y, _ = _call(f, args, kwargs)
            return y
        # The body runs on the Tensors themselves with every tape and accumulator
        # recording (as TF): the values grad_fn closes over (e = exp(x), the
        # output y) stay connected to the inputs, so a tape or accumulator
        # around the one that calls grad_fn differentiates grad_fn correctly
        # (second order). The outputs are fresh Tensors whose only producer is
        # the custom entry, so first-order gradients come from grad_fn alone.
        with tape_mod.custom_body():
            y, grad_fn = _call(f, args, kwargs)
        outputs = [Tensor(np.array(unwrap(o))) for o in (y if isinstance(y, tuple) else (y,))]

        def backward(residuals, gs):
            return [unwrap(g) for g in _at_leaves(grad_fn(*gs), leaves, len(args))]

        def joint(tensors, gs):
            return _at_leaves(_grad_fn_call(grad_fn, gs), leaves, len(args))
        entry = tape_mod.CallEntry(inputs, outputs, backward, joint, None)
        for t in watching:
            t._record(entry)
        forward_mode.custom_tangents(args, outputs, grad_fn)     # inside ForwardAccumulators: J v from grad_fn
        return tuple(outputs) if isinstance(y, tuple) else outputs[0]

    wrapper.__srcgrad_custom__ = f
    return wrapper


def _call(f, args, kwargs):
    result = f(*args, **kwargs)
    if not (isinstance(result, tuple) and len(result) == 2 and callable(result[1])):
        raise TypeError("a @sg.custom_gradient function must return (value, grad_fn); %s returned %r"
                        % (getattr(f, "__name__", f), type(result).__name__))
    return result


def _select(grads, positions, n_args):
    """grad_fn's result (one gradient, or one per argument) at `positions`.
    Raises ValueError when grad_fn returned another number of gradients."""
    if n_args == 1 and not isinstance(grads, (tuple, list)):
        grads = (grads,)
    grads = tuple(grads)
    if len(grads) != n_args:
        raise ValueError("grad_fn returned %d gradient(s) for %d argument(s)" % (len(grads), n_args))
    return [grads[i] for i in positions]


def _at_leaves(grads, leaves, n_args):
    """grad_fn's result at the (position, path, Tensor) `leaves`: for a
    list, tuple or dict argument, its gradient (a container of the same
    structure, or None for no gradient) read at the leaf's path."""
    per_argument = _select(grads, range(n_args), n_args)
    return [tape_mod.at_path(per_argument[i], path) for i, path, _ in leaves]


class CustomCallee:
    """The compiler's view of a custom_gradient function called from
    generated code (joint reversal, as for any call): the forward sweep
    calls the function itself; the reverse sweep calls `joint_fn(*args,
    *cotangents)`, which runs the body again for its `grad_fn` and returns
    the gradients of the active arguments (`mask`); forward mode calls
    `jvp_fn(*args, *tangents of the active arguments)`, the transpose of
    `grad_fn` (as TF treats custom gradients in forward mode)."""

    def __init__(self, wrapper, mask, n_outputs, mode="reverse"):
        self.f = wrapper.__srcgrad_custom__
        self.mask = tuple(mask)
        self.n_outputs = n_outputs
        self.tuple_output = n_outputs > 1
        self.output_active = (True,) * n_outputs
        name = getattr(self.f, "__name__", "custom")

        def joint_value(*values, higher=False):
            n = len(self.mask)
            args, cotangents = values[:n], values[n:]
            with tape_mod.custom_body():
                _, grad_fn = _call(self.f, args, {})
            grads = _select(_grad_fn_call(grad_fn, cotangents) if higher else grad_fn(*cotangents), range(n), n)
            out = tuple(g if g is not None else 0.0 for g, m in zip(grads, self.mask) if m)
            return out[0] if len(out) == 1 else out

        def joint_body(*values):
            # the VJP is itself a custom_gradient function: differentiating
            # generated code that calls it again (second order) runs its VJP
            # op by op on a tape (_vjp_by_tape), through grad_fn's closure
            return joint_value(*values), lambda *ws: _vjp_by_tape(
                functools.partial(joint_value, higher=True), values, ws)
        joint_body.__name__ = joint_body.__qualname__ = name + "_vjp"
        self.joint_fn = custom_gradient(joint_body)
        if mode == "batched":       # stacks of cotangents: grad_fn need not batch, one example at a time
            self.joint_fn = _per_example(self.joint_fn, len(self.mask), name + "_vjp")

        def jvp_fn(*values):
            n = len(self.mask)
            args, tans = values[:n], iter(values[n:])
            tangents = {i: next(tans) for i, m in enumerate(self.mask) if m}
            y, grad_fn = self.f(*args)
            ys = y if isinstance(y, tuple) else (y,)
            dys = forward_mode.transpose_grad_fn(grad_fn, len(args), ys, tangents)
            dys = [d if d is not None else zeros_tree(o) for d, o in zip(dys, ys)]
            if not any(isinstance(a, Tensor) for a in args):
                dys = [unwrap(d) for d in dys]
            return (y, tuple(dys)) if isinstance(y, tuple) else (y, dys[0])
        jvp_fn.__name__ = name + "_jvp"
        self.jvp_fn = jvp_fn


def _per_example(vjp, n_args, name):
    """`vjp(*args, *cotangents)` on stacks of cotangents (a leading batch
    axis), run once per example and stacked."""
    def batched(*values):
        args, cotangents = values[:n_args], values[n_args:]
        B = batch_size(cotangents)
        parts = [vjp(*args, *[c[k] if np.ndim(c) > 0 else c for c in cotangents]) for k in range(B)]
        if not isinstance(parts[0], tuple):
            return np.stack([np.asarray(p) for p in parts])
        return tuple(np.stack([np.asarray(p[i]) for p in parts]) for i in range(len(parts[0])))
    batched.__name__ = name
    return batched


def _vjp_by_tape(fn, values, cotangents):
    """The VJP of `fn(*values)` for output `cotangents`, computed op by op
    on a GradientTape: one gradient per value (zeros where unconnected; for
    a list, tuple or dict value, the same structure of gradients).
    Tensor values are copied by a recorded operation, so that tapes around
    this one see the computation (every order); raw values give raw
    results. Raises ValueError when the outputs and `cotangents` do not
    have the same structure."""
    on_tensors = any(isinstance(v, Tensor) for v in tape_mod.flatten([list(values), list(cotangents)]))

    def watched(v):
        if isinstance(v, Tensor):
            return np.positive(v)
        return Tensor(np.array(v)) if _numeric(v) else v
    ts = [tape_mod.pack_as(v, [watched(leaf) for leaf in tape_mod.flatten(v)]) for v in values]
    leaves = [t for t in tape_mod.flatten(ts) if isinstance(t, Tensor)]
    with tape_mod.GradientTape() as tape:
        tape.watch([t for t in leaves if is_differentiable_dtype(t.dtype)])
        out = fn(*ts)
    outs = tape_mod.flatten(list(out) if isinstance(out, tuple) else [out])
    ws = tape_mod.flatten(list(cotangents))
    if len(outs) != len(ws):
        raise ValueError("a custom gradient's VJP has %d output(s) but %d cotangent(s)" % (len(outs), len(ws)))
    targets, seeds = [], []
    for o, w in zip(outs, ws):
        if isinstance(o, Tensor) and w is not None:
            targets.append(o)
            seeds.append(w)
    found = tape.gradient(targets, leaves, output_gradients=seeds) if targets else [None] * len(leaves)
    by_leaf = {id(t): g if g is not None else Tensor(np.zeros_like(t._value)) for t, g in zip(leaves, found)}
    # (a value that is not a number, a function passed to the custom function: no gradient, None)
    grads = [tape_mod.pack_as(t, [by_leaf.get(id(leaf)) for leaf in tape_mod.flatten(t)]) for t in ts]
    if on_tensors:
        return tuple(grads)
    return tuple(tape_mod.pack_as(g, [unwrap(leaf) for leaf in tape_mod.flatten(g)]) for g in grads)


def _numeric(v):
    """A number or an array of numbers: a value the tape can watch (a
    function or another object passed along is not)."""
    if isinstance(v, (int, float, complex, np.ndarray, np.generic)) and not isinstance(v, bool):
        return not isinstance(v, np.ndarray) or v.dtype.kind in "biufc"
    return False


class insert_grad_of:
    """`with sg.insert_grad_of(x) as bx:` inside a function srcgrad
    compiles (@sg.function, sg.grad, and the functions they call): the
    block's body does not run in the forward pass; it runs in the backward
    pass, at the block's place in reverse order, with `bx` bound to the
    adjoint of `x` accumulated so far (from the code after the block), and
    whatever `bx` holds at the end of the body replaces that adjoint
    (inspect, clip or rescale it). As Tangent's `insert_grad_of`.

    The block is a compiler construct: entering it anywhere else (op by op
    in a tape body, or calling the undecorated function) raises
    RuntimeError, since Python cannot defer a `with` body to the backward
    pass. Op by op, use `sg.custom_gradient` to act on a gradient.

    `x` is a variable; names the body assigns belong to the block (used
    elsewhere: UnsupportedSyntaxError). On a stack of cotangents (vectorised
    Jacobians) the body runs once per cotangent; an element assignment in
    the body acts on a copy of the adjoint. A decorated function holding
    such a block, called outside any tape, runs its compiled primal, which
    leaves the block out. In the generated code the block is the body under
    `# Grad of: with sg.insert_grad_of(x) as bx:` (lower.py, reverse.py).
    """

    __srcgrad_grad_of__ = True      # (lower.py recognises the block by this)

    def __init__(self, x):
        self.x = x

    def __enter__(self):
        raise RuntimeError(
            "sg.insert_grad_of(x) only works inside a function srcgrad compiles (@sg.function or "
            "sg.grad): its body runs in the backward pass, on the adjoint of x. It was entered in "
            "ordinary Python (op by op, or the undecorated function), where the body cannot be "
            "deferred; use sg.custom_gradient to act on a gradient op by op.")

    def __exit__(self, *exc):
        return False

