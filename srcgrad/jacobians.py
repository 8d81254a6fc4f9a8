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
import linecache
import warnings

import numpy as np

from . import op_by_op
from . import tape as tape_mod
from .callables import as_function
from .errors import PerformanceWarning, api_boundary
from .functional import _fast_key, _float_argument, _function_and_self, _warn_detached, wrt_indices, grad, jvp
from .tensor import Tensor, is_differentiable_dtype, path_is_cut, unwrap, unwrap_nested
from .rules.helpers.diagonal import DiagonalStack


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
    dtype (integer arguments are promoted to float64). f runs once per
    call (for several arguments too: one sweep gives every Jacobian at the
    same values, random draws included), and for one argument the mode is
    chosen by the sizes:

    - reverse mode, vectorised: f's split forward, then one batched reverse
      sweep per CHUNK rows of the identity reads the same residuals
      (Griewank & Walther 2008, sec. 3.2): cost ~ out.size rows;
    - forward mode, when a previous call with arguments of the same types
      and shapes returned a real floating output with at least
      FORWARD_MIN_OUT entries and 1 / FORWARD_BELOW times as many as the
      real floating input has (hand tracking: 26 parameters, 300
      residuals): the Jacobian of u -> J^T u, the VJP
      transposed (Griewank & Walther sec. 3.1; JAX's `linear_transpose`),
      computed by the same batched reverse sweep over the generated VJP
      code with in.size rows. f still runs once (inside the VJP), which
      one JVP per column would not do (a program that draws random
      numbers would get columns of different draws). Should f's output
      size change between two such calls, f runs a second time, in
      reverse mode, with a PerformanceWarning.

    `f` must return one array; raises TypeError otherwise, and ValueError
    for a `wrt` out of range.
    """
    wrts = wrt_indices(wrt)
    fn, bound_self, refused = _compilable_or_refusal(f)
    seen = {}           # (argument signature, wrt index) -> the output's (shape, dtype) at the last call
    transposed = {}     # number of arguments -> the VJP function; (number, wrt) -> its gradient's Function

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
                plain = [unwrap(a) for a in args]
                if len(wrts) == 1:
                    out = [_jacobian_by_sizes(f, fn, bound_self, plain, wrts[0], seen, transposed)]
                else:       # (reverse mode: one forward and one sweep give every argument's Jacobian)
                    shift = len(bound_self)
                    distinct = tuple(dict.fromkeys(wrts))
                    found = _jacobian_one(fn, list(bound_self) + plain, tuple(k + shift for k in distinct))[0]
                    out = [found[distinct.index(k)] for k in wrts]
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
    jac.__srcgrad_jacobian__ = (f, wrt)           # (sg.jit compiles its forward mode: jit/api.py)
    return jac


#: forward mode (by transposition) when in.size <= FORWARD_BELOW * out.size and out.size >=
#: FORWARD_MIN_OUT: its sweep runs over the VJP's code, about twice f's, and costs ~150 us more per
#: call (measured: 10 -> 100 entries break even; 50 -> 200 forward 2.5x faster, 26 -> 300 1.9x)
FORWARD_BELOW = 0.25
FORWARD_MIN_OUT = 128


def _jacobian_by_sizes(f, fn, bound_self, args, i, seen, transposed):
    """The Jacobian of f's output in args[i] (shape out.shape + in.shape),
    by forward mode (`_jacobian_transposed`) when the output seen at the
    last call with arguments of this signature is large enough
    (FORWARD_MIN_OUT, FORWARD_BELOW), else by reverse mode; records the output's
    shape and dtype for the next call. `seen` and `transposed`: the
    caches of one `jacobian`."""
    signature = _signature(args)
    key = (signature, i) if signature is not None else None
    last = seen.get(key) if key is not None else None
    if last is not None:
        x = args[i]
        in_size, in_kind = (1, "f") if type(x) is float else (np.size(x), np.result_type(x).kind)
        shape, dtype = last
        out_size = int(np.prod(shape))
        if (in_kind == "f" and dtype.kind == "f" and not bound_self and out_size >= FORWARD_MIN_OUT
                and in_size <= FORWARD_BELOW * out_size):
            done = _jacobian_transposed(f, args, i, shape, dtype, transposed)
            if done is not None:
                return done
            seen.pop(key, None)
    full = list(bound_self) + list(args)
    jac, outs = _jacobian_one(fn, full, i + len(bound_self))
    if key is not None:
        if len(seen) >= 256:        # (a bounded memory of argument signatures)
            seen.clear()
        y = unwrap(outs[0])
        seen[key] = (np.shape(y), np.result_type(y))
    return jac


def _signature(values):
    """A hashable description of the arguments that fixes the shapes a
    program sees: the dtypes and shapes of arrays, the types of Python
    floats, the values of ints, bools, strings and None (a count, a flag),
    the same of tuples and lists; None for anything else (an object's
    state may set its output's shape)."""
    out = []
    for v in values:
        t = type(v)
        if t is np.ndarray:
            out.append((v.dtype.str, v.shape))
        elif t is float or t is complex:
            out.append(t)
        elif t in (int, bool, str) or v is None:
            out.append((t, v))
        elif t in (tuple, list) and len(v) <= 64:
            inner = _signature(v)
            if inner is None:
                return None
            out.append((t, inner))
        else:
            return None
    return tuple(out)


_TRANSPOSITION = """def _transposition(f):
    def vjp_dot({names}, u):
        y = f({names})
        n = min(np.size(y), np.size(u))      # (sizes or dtypes that differ are caught after the call)
        return np.dot(np.ravel(y)[:n], u[:n]), (np.shape(y), np.result_type(y).str)
    return vjp_dot
"""


def _transposition_of(f, n, transposed):
    """The gradient, in argument position k, of `vjp_dot(a_0..a_{n-1}, u) =
    <ravel(f(a_0..)), u>` (with f's output shape as aux): J^T u, linear in
    u. Its source is generated and registered with linecache (as a
    notebook cell's is), so srcgrad parses it like user code."""
    found = transposed.get(n)
    if found is None:
        names = ", ".join("a%d" % k for k in range(n))
        source = _TRANSPOSITION.format(names=names)
        filename = "<srcgrad: the VJP of a %d-argument function, transposed>" % n
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace = {"np": np}
        exec(compile(source, filename, "exec"), namespace)
        found = transposed[n] = namespace["_transposition"](f)
    return found


def _jacobian_transposed(f, args, i, shape, dtype, transposed):
    """The Jacobian of f's output (expected of `shape` and `dtype`) in
    args[i] by forward mode: the batched reverse sweep of the VJP's code,
    seeded with the identity's rows in the input's space. Returns None,
    before f runs, when that code cannot be compiled (whatever the reason:
    reverse mode, which needs only f's first derivative, then runs)."""
    vjp_dot = _transposition_of(f, len(args), transposed)
    size = int(np.prod(shape))
    full = list(args) + [np.zeros(size, dtype=dtype)]
    try:
        gfn = transposed.get((len(args), i))
        if gfn is None:
            gfn = transposed[(len(args), i)] = _function_and_self(grad(vjp_dot, wrt=i, has_aux=True))[0]
        compiled, raw, _ = _batched_artefact(gfn, full, len(args), 0)
    except Exception:       # (nothing has run yet)
        return None
    jt, outs = _batched_jacobian(gfn, compiled, raw, len(args), 0)      # f runs here, once
    out_shape, out_dtype = tuple(outs[1][0]), np.dtype(outs[1][1])
    if int(np.prod(out_shape)) != size or out_dtype != dtype:
        warnings.warn(PerformanceWarning(
            "srcgrad: sg.jacobian ran %s a second time (in reverse mode): its output has %d entries of %s, not "
            "%d of %s as at the last call with arguments of these shapes" % (
                getattr(f, "__name__", f), int(np.prod(out_shape)), out_dtype, size, dtype)))
        return None
    x = np.asarray(args[i])
    jac = np.asarray(jt).reshape(x.size, size).T.reshape(out_shape + x.shape)
    return np.asarray(jac, dtype=np.result_type(dtype, x.dtype))


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
    at a time, reading the same residuals (reverse mode: `jacobian` picks
    forward mode for tall Jacobians, `_jacobian_transposed`). `i`: an
    index, or a tuple of them (one sweep, a tuple of Jacobians). `output`:
    for a function returning a tuple, the index of the output to
    differentiate (the others get no cotangent); returns (jacobian,
    outputs)."""
    compiled, raw, program = _batched_artefact(fn, args, i, output)
    return _batched_jacobian(fn, compiled, raw, i, output)


def _batched_artefact(fn, args, i, output):
    """(the batched artefact differentiating output `output` of fn in
    argument i (an int, or a tuple of them: one sweep gives every one's
    cotangents), the raw inputs it runs on, the Program)."""
    indices = (i,) if isinstance(i, int) else tuple(i)
    args = list(args)
    for k in indices:
        if not 0 <= k < len(args):
            raise ValueError("wrt index %d out of range for %s called with %d arguments"
                             % (k, fn.__name__, len(args)))
        args[k] = _float_argument(args[k])
    params = fn.bind(tuple(args), {})
    program = fn.program_for(params)
    leaves = [leaf.fetch(params, program.namespace) for leaf in program.leaves]
    raw = [unwrap_nested(a) for a in params.values()] + [unwrap_nested(v) for v in leaves]
    mask = [j in indices for j in range(len(raw))]
    # (a tuple's other outputs get no cotangent: symbolic zeros, their adjoint code not generated)
    compiled = program.compile(mask, "batched" if output is None else "batched@%d" % output)
    if compiled.tuple_output != (output is not None):
        raise TypeError("jacobian needs a function with one array output; %s returns %d"
                        % (fn.__name__, len(compiled.outputs)))
    return compiled, raw, program


def _batched_jacobian(fn, compiled, raw, i, output):
    """Run the batched artefact `compiled` on `raw` (fn runs here, once),
    then its reverse sweep on the identity's rows: (jacobian, outputs), or
    (a tuple of jacobians, outputs) for a tuple `i` of arguments."""
    indices = (i,) if isinstance(i, int) else tuple(i)
    ordered = sorted(indices)       # (the sweep returns the cotangents in argument order)
    xs = [np.asarray(raw[k]) for k in ordered]
    result = compiled.run(compiled.fwd, *raw)            # fn runs here, once
    outs, residuals = result[:-1], result[-1]
    if isinstance(outs[output or 0], (list, tuple, dict)):
        raise TypeError("jacobian needs a function with one array output; %s returned a %s"
                        % (fn.__name__, type(outs[output or 0]).__name__))
    y = np.asarray(unwrap(outs[output or 0]))
    dtypes = [np.result_type(y.dtype, x.dtype) if is_differentiable_dtype(y.dtype) else x.dtype for x in xs]
    if y.size == 0:
        jacs = [np.zeros(y.shape + x.shape, dtype) for x, dtype in zip(xs, dtypes)]
        return (jacs[0] if isinstance(i, int) else tuple(jacs[ordered.index(k)] for k in indices)), outs
    seed_dtype = y.dtype if is_differentiable_dtype(y.dtype) else dtypes[0]
    rows = [[] for _ in xs]
    for start in range(0, y.size, CHUNK):
        n = min(CHUNK, y.size - start)
        # all rows at once: the structured seed, diag(1) (rules/helpers/diagonal.py), unless the sweep
        # asked for its dense array at once last time (a Hessian's slice of it: then it gains nothing)
        structured = n == y.size and not compiled.__dict__.get("_dense_seed")
        if structured:
            seeds = DiagonalStack.identity(y.shape, seed_dtype)
        else:
            seeds = _identity_rows(n, y.size, start, seed_dtype).reshape((n,) + y.shape)
        cotangents = [seeds if k == (output or 0) else None for k in range(len(outs))]
        gs = compiled.bwd(residuals, *cotangents)
        if structured and seeds.densified:
            compiled._dense_seed = True
        for part, g, x in zip(rows, gs, xs):
            full = (n,) + x.shape
            if isinstance(g, DiagonalStack):
                g = g.dense()
            part.append(g if type(g) is np.ndarray and g.shape == full else np.broadcast_to(g, full))
    jacs = [_own_array(part[0] if len(part) == 1 else np.concatenate(part), dtype, len(xs) == 1)
            .reshape(y.shape + x.shape) for part, x, dtype in zip(rows, xs, dtypes)]
    return (jacs[0] if isinstance(i, int) else tuple(jacs[ordered.index(k)] for k in indices)), outs


_SEEDS = {}         # (rows, columns, first row, dtype) -> read-only rows of the identity
#: seeds of up to this many entries are kept (512 kB of float64: a larger one costs more to fill than to
#: allocate, and a Jacobian with 10^5 outputs would keep CHUNK x 10^5 of them alive)
SEEDS_KEPT = 1 << 16


def _identity_rows(n, size, start, dtype):
    """np.eye(n, size, start, dtype), kept read-only per shape and dtype
    when small (a Hessian or Jacobian called again seeds its sweep with the
    same rows; the sweep never writes into its arguments:
    transforms/inplace.py)."""
    if n * size > SEEDS_KEPT:
        return np.eye(n, size, start, dtype=dtype)
    key = (n, size, start, dtype)
    found = _SEEDS.get(key)
    if found is None:
        if len(_SEEDS) > 32:
            _SEEDS.clear()
        found = _SEEDS[key] = np.eye(n, size, start, dtype=dtype)
        found.flags.writeable = False
    return found


def _own_array(a, dtype, alone):
    """`a` as a writeable C-contiguous array of `dtype` the caller owns: as
    it is when it is one (a stack of cotangents the sweep just computed,
    the only result when `alone`), else a copy (a broadcast view, or a
    cotangent two arguments' Jacobians share: f(x, y) = x + y)."""
    if alone and type(a) is np.ndarray and a.dtype == dtype and a.flags.writeable and a.flags.c_contiguous:
        return a
    return np.array(a, dtype=dtype)


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
    h.__srcgrad_hvp__ = (gradient, wrt)     # (sg.jit compiles the JVP of this gradient: jit/api.py)
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
