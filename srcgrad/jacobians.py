"""Jacobians and Hessians: sg.jacobian, sg.hessian, sg.hvp.

Each runs the function once per derivative: `jacobian` and `hessian` run the
batched split forward of the (gradient) function once, then its batched
reverse sweep on stacks of the identity's rows, CHUNK rows at a time, reading
the same residuals (reverse mode, vectorised: Griewank & Walther,
"Evaluating Derivatives", 2nd ed., SIAM 2008, sec. 3.2 and ch. 5); `hvp` is
forward over reverse, the generated JVP of the generated gradient
(Pearlmutter, "Fast exact multiplication by the Hessian", Neural Computation
6(1), 1994). What `jacobian` and `hessian` return is run, not transformed
(compose grad, jvp and hvp for derivatives of derivatives).
"""
import numpy as np

from . import op_by_op
from . import tape as tape_mod
from .callables import as_function
from .errors import api_boundary
from .functional import _fast_key, _float_argument, _function_and_self, _warn_detached, wrt_indices, grad, jvp
from .tensor import Tensor, is_differentiable_dtype, path_is_cut, unwrap, unwrap_nested


def _compilable_or_refusal(f):
    """(Function, bound self, None) for f, or (None, (), the refusal) when
    the compiler refuses f and it runs op by op (op_by_op.py)."""
    try:
        fn, bound_self = _function_and_self(f)
        return fn, bound_self, None
    except Exception as exc:
        if not op_by_op.falls_back(exc):
            raise
        return None, (), exc


def jacobian(f, wrt=0):
    """A function computing the Jacobian of `f` with respect to its
    positional argument `wrt` (an int; a tuple gives a tuple of Jacobians).

    The result has shape `out.shape + in.shape` and the output's floating
    dtype (integer arguments are promoted to float64). Reverse mode,
    vectorised: f runs once (its split forward), then one batched reverse
    sweep per CHUNK rows of the identity reads the same residuals
    (Griewank & Walther 2008, sec. 3.2). (Forward mode, one JVP per input
    element, would run f once per column: a program that draws random
    numbers would get columns of different draws.) `f` must return one
    array; raises TypeError otherwise, and ValueError for a `wrt` out of
    range.
    """
    wrts = wrt_indices(wrt)
    fn, bound_self, refused = _compilable_or_refusal(f)

    @api_boundary
    def jac(*args):
        if any(isinstance(args[i], Tensor) and path_is_cut(args[i]) for i in wrts if i < len(args)):
            # on Tensors a tape records (differentiated op by op: sg.jacobian(sg.jacobian(f))):
            # the Jacobian by a tape of its own, whose computation the recording tapes record
            out = _jacobian_recorded(f, args, wrts)
            return out[0] if isinstance(wrt, int) else tuple(out)
        _warn_detached(args)
        reason = refused
        if fn is not None:
            try:
                full = list(bound_self) + [unwrap(a) for a in args]
                shift = len(bound_self)
                out = [_jacobian_one(fn, full, i + shift)[0] for i in wrts]
                return out[0] if isinstance(wrt, int) else tuple(out)
            except Exception as exc:
                if not op_by_op.falls_back(exc):
                    raise
                reason = exc
        op_by_op.warn(f, reason)
        out = op_by_op.jacobian(f, [unwrap(a) for a in args], wrts)
        return out if isinstance(wrt, int) or len(wrts) > 1 else (out,)
    jac.__name__ = "jacobian_" + getattr(f, "__name__", "f")
    jac.__srcgrad_transform__ = "sg.jacobian"     # (sg.jit names it when it runs in CPython)
    return jac


def _jacobian_recorded(f, args, wrts):
    """[d f(*args) / d args[i] for i in wrts] on Tensors, by a persistent
    GradientTape: its gradients run on Tensors, so the tapes recording
    around it record them (TF's nested tapes), and the Jacobian can be
    differentiated again. Shapes out.shape + args[i].shape."""
    xs = [args[i] for i in wrts]
    with tape_mod.GradientTape(persistent=True) as tape:
        for x in xs:
            tape.watch(x)
        y = f(*args)
    return [tape.jacobian(y, x, unconnected_gradients="zero") for x in xs]


def _hessian_recorded(f, args, wrt):
    """The Hessian of f in args[wrt] on Tensors, by nested GradientTapes
    (the Jacobian of the gradient), recorded by the tapes around it.
    Shape args[wrt].shape * 2."""
    x = args[wrt]
    with tape_mod.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with tape_mod.GradientTape() as inner:
            inner.watch(x)
            y = f(*args)
        g = inner.gradient(y, x)
    return outer.jacobian(g, x, unconnected_gradients="zero")


#: rows of the identity pushed through the batched adjoint at once (bounds the memory of
#: a Jacobian with many outputs: the seeds and the stacked cotangents are CHUNK x size)
CHUNK = 1024


def _jacobian_one(fn, args, i, output=None):
    """The Jacobian of fn's output with respect to argument i, shape
    out.shape + in.shape, by the batched generated adjoint: fn's code runs
    once (its batched split forward, keeping the residuals), then the
    batched reverse sweep runs on stacks of the identity's rows, CHUNK rows
    at a time, reading the same residuals. Reverse mode whatever the sizes:
    forward mode would run fn once per input element, and a program that
    draws random numbers or appends to a list must run once per derivative.
    `output`: for a function returning a tuple, the index of the output to
    differentiate (the others get no cotangent); returns (jacobian,
    outputs)."""
    compiled, raw, program = _batched_artefact(fn, args, i, output)
    return _batched_jacobian(fn, compiled, raw, i, output)


def _batched_artefact(fn, args, i, output):
    """(the batched artefact differentiating output `output` of fn in
    argument i, the raw inputs it runs on, the Program)."""
    if not 0 <= i < len(args):
        raise ValueError("wrt index %d out of range for %s called with %d arguments"
                         % (i, fn.__name__, len(args)))
    args = list(args)
    args[i] = _float_argument(args[i])
    params = fn.bind(tuple(args), {})
    program = fn.program_for(params)
    leaves = [leaf.fetch(params, program.namespace) for leaf in program.leaves]
    raw = [unwrap_nested(a) for a in params.values()] + [unwrap_nested(v) for v in leaves]
    mask = [j == i for j in range(len(raw))]
    # (a tuple's other outputs get no cotangent: symbolic zeros, their adjoint code not generated)
    compiled = program.compile(mask, "batched" if output is None else "batched@%d" % output)
    if compiled.tuple_output != (output is not None):
        raise TypeError("jacobian needs a function with one array output; %s returns %d"
                        % (fn.__name__, len(compiled.outputs)))
    return compiled, raw, program


def _batched_jacobian(fn, compiled, raw, i, output):
    """Run the batched artefact `compiled` on `raw` (fn runs here, once),
    then its reverse sweep on the identity's rows: (jacobian, outputs)."""
    x = np.asarray(raw[i])
    result = compiled.run(compiled.fwd, *raw)            # fn runs here, once
    outs, residuals = result[:-1], result[-1]
    if isinstance(outs[output or 0], (list, tuple, dict)):
        raise TypeError("jacobian needs a function with one array output; %s returned a %s"
                        % (fn.__name__, type(outs[output or 0]).__name__))
    y = np.asarray(unwrap(outs[output or 0]))
    dtype = np.result_type(y.dtype, x.dtype) if is_differentiable_dtype(y.dtype) else x.dtype
    if y.size == 0:
        return np.zeros(y.shape + x.shape, dtype), outs
    seed_dtype = y.dtype if is_differentiable_dtype(y.dtype) else dtype
    rows = []
    for start in range(0, y.size, CHUNK):
        n = min(CHUNK, y.size - start)
        seeds = np.eye(n, y.size, start, dtype=seed_dtype)
        cotangents = [seeds.reshape((n,) + y.shape) if k == (output or 0) else None for k in range(len(outs))]
        (g,) = compiled.bwd(residuals, *cotangents)
        rows.append(np.broadcast_to(g, (n,) + x.shape))
    jac = rows[0] if len(rows) == 1 else np.concatenate(rows)
    return np.asarray(jac, dtype=dtype).reshape(y.shape + x.shape), outs


def _checked_hessian(f, h, value, x):
    """The Hessian `h` in x's dtype and shape x.shape * 2, once f's `value`
    is checked to be a scalar (ValueError otherwise)."""
    if isinstance(value, (tuple, list, dict)) or np.size(unwrap(value)) != 1:
        raise ValueError("hessian needs a scalar-valued function; %s returned %s"
                         % (getattr(f, "__name__", "f"), "a container" if isinstance(value, (tuple, list, dict))
                            else "shape %s" % (np.shape(unwrap(value)),)))
    x = np.asarray(x)
    return np.asarray(h, dtype=x.dtype).reshape(x.shape + x.shape)


def hvp(f, wrt=0):
    """A function `h(*args, v)` computing H(args) . v, the Hessian of the
    scalar-valued `f` with respect to its positional argument `wrt` times
    the vector `v` (an array of that argument's shape), without forming H:
    the generated JVP of the generated gradient (forward over reverse;
    Pearlmutter, "Fast exact multiplication by the Hessian", Neural
    Computation 6(1), 1994). One pass costs a small multiple of one
    gradient. Returns an ndarray of the argument's shape and floating dtype.
    Raises ValueError for a `v` of the wrong shape (and, through the
    gradient, for a `wrt` out of range).
    """
    gradient = grad(f, wrt=(wrt,))

    @api_boundary
    def h(*args):
        if not args:
            raise TypeError("hvp: call with f's arguments followed by the vector v")
        *fargs, v = args
        if not 0 <= wrt < len(fargs):
            raise ValueError("wrt index %d out of range for %d arguments" % (wrt, len(fargs)))
        if any(t._recording for t in tape_mod._stack()) and any(isinstance(a, Tensor) for a in args):
            # a tape is recording: the generated JVP of the generated gradient runs
            # on the Tensors, so the tape records the HVP (third derivatives)
            if np.shape(v) != np.shape(fargs[wrt]):
                raise ValueError("hvp: vector of shape %s for an argument of shape %s"
                                 % (np.shape(v), np.shape(fargs[wrt])))
            tangents = [None] * len(fargs)
            tangents[wrt] = v
            return jvp(gradient, tuple(fargs), tuple(tangents))[1]
        fargs = [unwrap(a) for a in fargs]
        fargs[wrt] = _float_argument(fargs[wrt])
        x = np.asarray(fargs[wrt])
        v = np.asarray(unwrap(v), dtype=x.dtype)
        if v.shape != x.shape:
            raise ValueError("hvp: vector of shape %s for an argument of shape %s" % (v.shape, x.shape))
        tangents = [None] * len(fargs)
        tangents[wrt] = v
        try:
            _, hv = jvp(gradient, tuple(fargs), tuple(tangents))
        except Exception as exc:
            if not op_by_op.falls_back(exc):
                raise
            op_by_op.warn(f, exc)       # (as sg.hessian: what the compiler refuses runs op by op)
            hv = op_by_op.hvp(f, fargs, wrt, v)
        return np.asarray(hv, dtype=x.dtype).reshape(x.shape)
    h.__name__ = "hvp_" + getattr(f, "__name__", "f")
    h.__srcgrad_transform__ = "sg.hvp"     # (sg.jit names it when it runs in CPython)
    return h


def hessian(f, wrt=0):
    """A function computing the Hessian of the scalar-valued `f` with
    respect to its positional argument `wrt`: shape `in.shape + in.shape`,
    the argument's floating dtype. The Jacobian of the generated gradient
    code, vectorised: one reverse sweep of the gradient's generated adjoint
    on the stack of the identity's rows (second-order adjoints, Griewank &
    Walther 2008, ch. 5; the Hessian is symmetric, so its rows are its
    columns). Raises ValueError for a non-scalar f.
    """
    fn, bound_self, refused = _compilable_or_refusal(f)
    value_and_gradient = grad(f, wrt=(wrt,), preserve_result=True)
    fast = {}       # _fast_key of the arguments -> (Program, batched artefact, Function): skips binding them

    @api_boundary
    def hess(*args):
        if wrt < len(args) and isinstance(args[wrt], Tensor) and path_is_cut(args[wrt]):
            return _hessian_recorded(f, args, wrt)      # (differentiated op by op: as jac's)
        key = _fast_key(args) if fn is not None and not bound_self else None
        found = fast.get(key) if key is not None else None
        if found is not None and not fn.is_stale() and not found[2].is_stale() and found[0].is_current():
            # (arguments of these types are the Program's inputs as they are: see below)
            h, (value, _) = _batched_jacobian(found[2], found[1], args, wrt, 1)
            return _checked_hessian(f, h, value, args[wrt])
        _warn_detached(args)
        args = [unwrap(a) for a in args]
        args[wrt] = _float_argument(args[wrt])
        x = np.asarray(args[wrt])
        reason = refused
        if fn is not None:
            try:
                # the Jacobian of the gradient (output 1 of value_and_grad, whose value f's scalar check
                # reads): f runs once
                vg = as_function(value_and_gradient)
                compiled, raw, program = _batched_artefact(vg, list(bound_self) + args, wrt + len(bound_self), 1)
                h, (value, _) = _batched_jacobian(vg, compiled, raw, wrt + len(bound_self), 1)
                if key is not None and not program.leaves and len(raw) == len(args) \
                        and all(r is a for r, a in zip(raw, args)):
                    fast[key] = (program, compiled, vg)
            except Exception as exc:
                if not op_by_op.falls_back(exc):
                    raise
                reason = exc
        if reason is not None:
            op_by_op.warn(f, reason)
            h = op_by_op.jacobian(f, args, (wrt,), hessian=True)
            return np.asarray(h, dtype=x.dtype).reshape(x.shape + x.shape)
        return _checked_hessian(f, h, value, x)
    hess.__name__ = "hessian_" + getattr(f, "__name__", "f")
    hess.__srcgrad_transform__ = "sg.hessian"     # (sg.jit names it when it runs in CPython)
    return hess
