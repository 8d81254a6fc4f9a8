"""The functional transforms: grad, value_and_grad, source, jvp, jacobian,
hessian, hvp.

Each returns a function, and each such function is itself transformable:
`sg.grad(f)` returns a `Gradient`, whose compilable form (`GradFunction`)
is the generated gradient code of `f` for the argument kinds of a call, so
`sg.grad(sg.grad(f))`, `sg.jvp(sg.grad(f), ...)`, a tape around a call of
`sg.grad(f)` and a function that calls `sg.grad(f)` are all compiled, at
every order. `hessian` and `hvp` are forward over reverse: the generated JVP
of the generated gradient.

References: Griewank & Walther, Evaluating Derivatives, 2nd ed., SIAM 2008
(ch. 3 forward mode, ch. 5 second-order adjoints); Pearlmutter, "Fast exact
multiplication by the Hessian", Neural Computation 6(1), 1994.
"""
import dataclasses
import functools
import inspect
import threading

import numpy as np

from . import op_by_op
from . import tape as tape_mod
from . import tensor as tensor_mod
from .callables import as_function
from .display import GeneratedCode
from .errors import NoRuleError, UnsupportedSyntaxError, api_boundary
from .function import BoundFunction, Function
from .program import Program
from .runtime import arrays, namespaces, vector_object, zeros_tree
from .tensor import Tensor, is_differentiable_dtype, unwrap, unwrap_nested
from .transforms import parse as parse_mod
from .syntax import ast_util


# ------------------------------------------------------------------ gradients

def wrt_indices(wrt):
    """`wrt` as a tuple of positional indices. Raises TypeError for anything
    else (a parameter's name, a float), as JAX does for argnums."""
    out = (wrt,) if isinstance(wrt, (int, np.integer)) else None
    if out is None and isinstance(wrt, (tuple, list)):
        out = tuple(wrt)
    if out is None or not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in out) \
            or isinstance(wrt, bool):
        raise TypeError("wrt must be a positional index or a tuple of them (wrt=0, wrt=(0, 2)), got %r%s"
                        % (wrt, "; parameters are given by position, not by name" if
                           isinstance(wrt, str) or (isinstance(wrt, (tuple, list)) and
                                                    any(isinstance(i, str) for i in wrt)) else ""))
    return tuple(int(i) for i in out)


def _grad_inputs(fn, args, kwargs, wrt):
    fn, args, kwargs = fn.for_call(args, kwargs)
    params = fn.bind(args, kwargs)
    program = fn.program_for(params)
    names = list(params)
    for i in wrt:
        if not 0 <= i < len(names):
            raise ValueError("wrt index %d out of range for %s with %d parameters"
                             % (i, fn.__name__, len(names)))
    program, values = fn.values_for(params, program)
    mask = [i in wrt for i in range(len(values))]
    raw = []
    for i, v in enumerate(values):
        v = unwrap_nested(v)
        if mask[i]:
            v = _float_tree(v)
        raw.append(v)
    return program, mask, raw


def _float_tree(v):
    """An argument differentiated by grad: floating arrays (integers are
    promoted to float64), lists/tuples/dicts of them kept as containers."""
    if type(v) in (list, tuple):
        return type(v)(_float_tree(e) for e in v)
    if type(v) is dict:
        return {k: _float_tree(e) for k, e in v.items()}
    if type(v) in (float, int):
        return float(v)             # Python scalars stay Python floats (scalar code stays scalar)
    if type(v) is not np.ndarray and arrays.is_other_array(v):
        return arrays.as_argument(v)    # a Dask (CuPy, array-API) array keeps its type
    if vector_object(v):
        return v        # a user's vector-space value (autograd's VSpace types), differentiated as a whole
    return _float_numpy(v)


def _float_numpy(v):
    """`v` as a floating ndarray (integers and booleans promoted to
    float64), a NumPy scalar staying a NumPy scalar: the user's code sees
    the type the plain call sees (np.float64 subclasses float, so
    `isinstance(x, float)` is True for it and `isinstance(x, np.ndarray)`
    False; a 0-d array would answer the other way)."""
    a = np.asarray(v)
    if not is_differentiable_dtype(a.dtype):
        a = a.astype(np.float64)
    return a[()] if isinstance(v, np.generic) else a


def _fast_key(args):
    """The types of positional `args` when each is a Python float or a real
    floating ndarray (what Gradient.evaluate's fast path takes: arguments
    that _grad_inputs passes on as they are, of one Program's kinds), else
    None."""
    key = []
    for a in args:
        t = type(a)
        if t is float:
            key.append(t)
        elif t is np.ndarray and a.dtype.kind == "f":
            part = (a.dtype.char, a.shape)
            found = _KEY_PARTS.get(part)
            if found is None:       # (as the Program's key: its axes of 1)
                if len(_KEY_PARTS) >= 4096:
                    _KEY_PARTS.clear()
                found = _KEY_PARTS[part] = (a.dtype.char, tuple([d == 1 for d in a.shape]))
            key.append(found)
        else:
            return None
    return tuple(key)


#: _fast_key's part for a floating array: (dtype char, shape) -> (dtype char, its axes of length 1), a
#: bounded memo (the tuple is built once per shape, not per call)
_KEY_PARTS = {}


def _zeros_like(x):
    """The zero gradient of an unconnected element `x` of a list or dict
    argument: in x's own namespace for another library's array."""
    return arrays.zeros_like(x) if arrays.is_other_array(x) else np.zeros_like(x)


def _as_input_dtype(g, x):
    if type(g) is np.ndarray and type(x) is np.ndarray and g.shape == x.shape and g.dtype == x.dtype \
            and g.flags.writeable:
        return g        # (the common case first)
    if type(x) in (list, tuple):
        if g is None or isinstance(g, (list, tuple)):
            gs = g or [None] * len(x)
        else:       # the list was read as one array (np.sin(p), np.dot(p, p)): its rows are the elements'
            gs = list(np.broadcast_to(g, np.shape(x)))
        return type(x)(_as_input_dtype(gi if gi is not None else _zeros_like(xi), xi) for gi, xi in zip(gs, x))
    if type(x) is dict:
        gs = g if isinstance(g, dict) else {}
        return {k: _as_input_dtype(gs.get(k) if gs.get(k) is not None else _zeros_like(xi), xi)
                for k, xi in x.items()}
    if type(g) is np.ndarray and type(x) is np.ndarray:
        if g.shape == x.shape and g.dtype == x.dtype and g.flags.writeable:
            return g
    elif arrays.involved(g, x):
        return arrays.as_gradient(g, x)     # in x's namespace (g's for NumPy x): never converted
    if vector_object(x):
        # a user's vector-space value: its gradient is a value of that space (its zero when unconnected)
        return g if g is not None else zeros_tree(x)
    g = np.asarray(g)
    shape = np.shape(x)
    if g.shape != shape:
        g = np.broadcast_to(g, shape)
    dtype = np.asarray(x).dtype
    if g.dtype != dtype and is_differentiable_dtype(dtype):
        g = (np.real(g) if g.dtype.kind == "c" and dtype.kind != "c" else g).astype(dtype)
    if not g.flags.writeable:
        g = g.copy()
    return g


class Gradient:
    """What `sg.grad(f, wrt, preserve_result)` returns: a function of f's
    arguments returning the gradient (see `grad`). Called on watched Tensors
    inside a recording tape (or inside a ForwardAccumulator) it is recorded
    like a compiled function, through its generated code; srcgrad compiles
    it wherever it meets it (`GradFunction`)."""

    def __init__(self, fn, wrt, preserve_result, has_aux=False):
        self.fn = fn
        self.wrt = wrt
        self.preserve_result = preserve_result
        self.has_aux = has_aux
        self._compiled_form = None
        self._fast = {}     # _fast_key of the arguments -> (program, compiled artefact, (wrt index, position))
        self._lock = threading.Lock()
        name = "d%sd%s" % (fn.__name__, "_".join(fn.parsed.params[i] for i in wrt
                                                 if i < len(fn.parsed.params)))
        self.__name__ = self.__qualname__ = name
        self.__doc__ = "Gradient of %s with respect to arguments %s (generated by srcgrad)." % (fn.__name__, wrt)
        self.__wrapped__ = fn.python_function

    def __repr__(self):
        return "<srcgrad gradient %s of %s>" % (self.__name__, self.fn.__name__)

    def __srcgrad_function__(self):
        if self._compiled_form is None:
            with self._lock:
                if self._compiled_form is None:
                    self._compiled_form = GradFunction(self)
        return self._compiled_form

    @api_boundary
    def __call__(self, *args, **kwargs):
        if tape_mod.recording_tapes():
            return self.__srcgrad_function__()(*args, **kwargs)
        return self.evaluate(*args, **kwargs)

    def op_by_op(self, *args, **kwargs):
        """The gradient differentiated op by op on the tape (op_by_op.py)."""
        target = getattr(self, "target", None) or self.fn.python_function
        return op_by_op.gradient(target, args, kwargs, self.wrt, self.preserve_result, self.has_aux)

    def evaluate(self, *args, **kwargs):
        """The gradient on ndarrays, through the generated joint code."""
        fn, wrt = self.fn, self.wrt
        key = None if kwargs else _fast_key(args)
        if key is not None:
            fast = self._fast.get(key)
            if fast is not None and not fn.is_stale() and fast[0].is_current():
                _, compiled, positions = fast
                grads = compiled.joint(*args)
                grads = tuple(_as_input_dtype(grads[k], args[i]) for i, k in positions)
                return grads[0] if len(wrt) == 1 else grads
        try:
            program, mask, raw = _grad_inputs(fn, args, kwargs, wrt)
            compiled = program.compile(mask)
        except Exception as exc:
            if not op_by_op.falls_back(exc):
                raise
            op_by_op.warn(fn, exc)
            return self.op_by_op(*args, **kwargs)
        run = compiled.run
        fwd_fn = bwd_fn = joint_fn = None
        cacheable = False
        if arrays.any_other_array(raw):     # Dask (CuPy, array-API) arrays: refuse what would convert them
            facade = namespaces.facade_for(raw)
            arrays.refuse_numpy_only(program.numpy_only_calls(facade and facade.xp), raw)
            if facade is not None:       # no NumPy dispatch (PyTorch, array_api_strict): NumPy's names in theirs
                fwd_fn, bwd_fn, joint_fn = (lambda: facade.twin(compiled.fwd), lambda: facade.twin(compiled.bwd_fn),
                                            lambda: facade.twin(compiled.joint_fn))
        _check_outputs(fn, program, compiled, self.has_aux)
        # (complex_mode: complex arguments, or code that builds complex values; its output may be complex)
        # (an output not connected to the inputs: its value is looked at, a bool is refused)
        if (self.preserve_result or self.has_aux or program.output_dynamic()[0] or program.complex_mode
                or not compiled.output_active[0]):
            result = run(fwd_fn() if fwd_fn else compiled.fwd, *raw)
            outs, residuals = result[:-1], result[-1]
            if not self.has_aux and isinstance(outs[0], (list, tuple, dict)):
                raise TypeError("grad needs a function returning one array; %s returned a %s (to return other "
                                "values with it, return (value, aux) and pass has_aux=True)"
                                % (fn.__name__, type(outs[0]).__name__))
            kind = arrays.dtype_kind(outs[0]) if arrays.is_other_array(outs[0]) else np.result_type(outs[0]).kind
            if kind == "b":
                raise TypeError("grad needs a floating output; %s returned a bool (np.allclose, a comparison: "
                                "it has no derivative), as autograd and JAX refuse it" % fn.__name__)
            if kind == "c":
                raise TypeError("grad needs a real-valued output (as autograd's and JAX's grad); %s returned a "
                                "complex %s: differentiate np.real(...), np.abs(...) ** 2 or another real "
                                "function of it, or use sg.jacobian / a GradientTape (TF's convention for a "
                                "complex target)" % (fn.__name__, type(outs[0]).__name__))
            seeds = [arrays.ones_like(outs[0])] + [zeros_tree(o) for o in outs[1:]]
            grads = run(bwd_fn() if bwd_fn else compiled.bwd_fn, residuals, *seeds)
            value = outs[0]
        elif joint_fn:
            grads = run(joint_fn(), *raw)
            grads = grads if len(compiled.active_inputs) != 1 else (grads,)
        else:
            grads = compiled.joint(*raw)
            # the next call with arguments of these types skips the binding and the checks above (the
            # arguments are the program's inputs as they are: no leaves, no *args, no defaults, no casts)
            cacheable = key is not None and not program.leaves and not fn.has_varargs \
                and len(args) == len(fn.parsed.params) == fn.parsed.n_positional \
                and all(r is a for r, a in zip(raw, args))
        active = [i for i, m in enumerate(mask) if m]
        position = {i: k for k, i in enumerate(active)}
        if cacheable:
            self._fast[key] = (program, compiled, tuple((i, position[i]) for i in wrt))
        grads = tuple(_as_input_dtype(grads[position[i]], raw[i]) for i in wrt)
        g = grads[0] if len(wrt) == 1 else grads
        if self.has_aux:
            return ((value, outs[1]), g) if self.preserve_result else (g, outs[1])
        return (value, g) if self.preserve_result else g


class GradFunction(Function):
    """The compilable form of a `Gradient`: per argument kinds, the
    generated gradient code of `f` (its joint forward and reverse sweeps,
    seeded with ones and cast to the inputs' dtypes) as a function the
    compiler transforms again. Its program's inputs are f's parameters
    and the Variables f reads (its leaves)."""

    derived = True

    def __init__(self, gradient):
        base = gradient.fn
        self.gradient = gradient
        self.base = base
        super().__init__(gradient.evaluate, base.parsed, base.signature)
        functools.update_wrapper(self, gradient, assigned=("__name__", "__qualname__", "__doc__"), updated=())

    def op_by_op(self, *args, **kwargs):
        return self.gradient.op_by_op(*args, **kwargs)

    def n_outputs(self):
        if self.gradient.preserve_result or self.gradient.has_aux:
            return 2
        return len(self.gradient.wrt) if len(self.gradient.wrt) > 1 else 1

    def specialize(self, n_extra, kw_names):
        # (compiled code cannot differentiate it again; op by op can: the refusal falls back)
        raise UnsupportedSyntaxError("the gradient of a function with *args or **kwargs, differentiated again",
                                     self.base.parsed.filename, self.base.parsed.firstlineno, None,
                                     "give the function named parameters", op_by_op=True)

    def new_program(self, examples, complex_mode, params):
        base_program = self.base.program_for(params, complex_mode)
        wrt = self.gradient.wrt
        n = len(self.base.parsed.params)
        for i in wrt:
            if not 0 <= i < n:
                raise ValueError("wrt index %d out of range for %s with %d parameters"
                                 % (i, self.base.__name__, n))
        mask = [i in wrt for i in range(len(base_program.inputs))]
        compiled = base_program.compile(mask)
        _check_outputs(self.base, base_program, compiled, self.gradient.has_aux)
        generated = compiled.gradient_function(n, wrt, self.gradient.preserve_result, self.gradient.has_aux)
        # the leaves (Variables f reads) are fetched from f's namespace, as for f
        leaves = [dataclasses.replace(leaf, namespace=leaf.namespace or base_program.namespace)
                  for leaf in base_program.leaves]
        program = Program(as_function(generated), examples, base_program.complex_mode, leaves=leaves)
        program.callee_programs.append(base_program)
        return program


def grad(f, wrt=(0,), preserve_result=False, has_aux=False):
    """Return a function computing the gradient of scalar-valued `f`.

    Args:
      f: a Python function (or what srcgrad returned: sg.grad(g), a bound
        method) returning an array, whose gradient is that of its sum (as
        GradientTape.gradient does); with has_aux, returning (value, aux).
      wrt: positional index or tuple of indices of the arguments to
        differentiate, honoured in the order given (`wrt=(1, 0)` returns
        `(df/dx1, df/dx0)`).
      preserve_result: also return f's value.
      has_aux: f returns `(value, aux)`; aux (any value) is returned as is,
        not differentiated (JAX's `has_aux`).

    Returns:
      A function of f's arguments returning the gradient: an ndarray of the
      argument's shape and floating dtype (integer arguments are promoted to
      float64; a list or tuple argument gets a list of its elements'
      gradients), a tuple of them when len(wrt) > 1; `(value, gradient)`
      with preserve_result; `(gradient, aux)` with has_aux; `((value, aux),
      gradient)` with both. The code that runs is the one `sg.source(f,
      wrt)` shows; the returned function can itself be differentiated
      (`sg.grad(sg.grad(f))`, on a tape, forward mode), through generated
      code.

    Raises:
      TypeError (when called): f returns a tuple, list or dict without
        has_aux (as `value_and_grad` and JAX's grad do), or with has_aux
        something other than a pair; f returns a complex value (as
        autograd's and JAX's grad: differentiate a real function of it).
      TypeError: `wrt` is not an index or a tuple of indices (a name).
      ValueError: a `wrt` index out of range.
      UnsupportedSyntaxError, NoRuleError: see `sg.function`.
    """
    key = (wrt_indices(wrt), bool(preserve_result), bool(has_aux))
    try:
        fn = as_function(f)
    except Exception as exc:
        if not op_by_op.falls_back(exc):
            raise
        op_by_op.warn(f, exc)       # (as @sg.function does: an error filter raises the refusal here)
        return op_by_op.OpByOpGradient(f, exc, *key)
    cache = fn.__dict__.setdefault("_gradients", {})
    gradient = cache.get(key)
    if gradient is None:        # one per (function, wrt): sg.hessian(f) in a loop compiles once
        gradient = cache[key] = Gradient(fn, *key)
        gradient.target = f
    return gradient


def value_and_grad(f, wrt=(0,), has_aux=False):
    """`grad(f, wrt, preserve_result=True, has_aux=has_aux)`.

    Returns a function returning `(value, gradient)`, or with has_aux
    `((value, aux), gradient)`, as JAX's `value_and_grad`. Raises as `grad`.
    """
    return grad(f, wrt, preserve_result=True, has_aux=has_aux)


class Checkpoint:
    """What `sg.checkpoint(f)` returns (see there): calls f; the compiler
    compiles f where it is called, and reverses the call by re-running f."""

    __srcgrad_checkpoint__ = True

    def __init__(self, f):
        self.f = f
        functools.update_wrapper(self, f)

    def __call__(self, *args, **kwargs):
        return self.f(*args, **kwargs)

    def __srcgrad_function__(self):
        return as_function(self.f)

    def __repr__(self):
        return "<srcgrad checkpoint of %r>" % (self.f,)


def checkpoint(f):
    """Mark `f` for rematerialisation: where differentiated code calls it,
    the forward sweep keeps only its arguments, and the reverse sweep runs
    f again (its generated VJP: forward and reverse sweeps) instead of
    reading residuals f's forward sweep kept. Less memory (f's
    intermediates are not kept across the caller's computation), more time
    (f runs twice per derivative). As `jax.checkpoint` and autograd's
    `checkpoint`; Griewank & Walther 2008, ch. 12 (joint reversal of a
    call).

    Args:
      f: a function srcgrad can compile, **pure**: it runs twice, so random
        draws, prints, appends or attribute writes in it would happen twice
        and the re-run draws would differ. Without sg.checkpoint, user code
        runs exactly once per derivative.

    Returns:
      A callable with f's signature (calling it calls f), which sg.grad, a
      tape or another compiled function differentiates as f.
    """
    return Checkpoint(f)


def _check_outputs(fn, program, compiled, has_aux):
    """TypeError unless f returns one array (or, with has_aux, a pair)."""
    if has_aux:
        if not compiled.tuple_output or len(compiled.outputs) != 2:
            raise TypeError("grad(..., has_aux=True) needs %s to return a pair (value, aux); it returns %s"
                            % (fn.__name__, "%d values" % len(compiled.outputs) if compiled.tuple_output
                               else "one value"))
        if program.output_dynamic()[0]:
            raise TypeError("grad(..., has_aux=True): the value %s returns first must be an array or a "
                            "number, not a list, tuple or dict" % fn.__name__)
        return
    if compiled.tuple_output:
        raise TypeError("grad needs a function returning one array; %s returns a tuple of %d (to return "
                        "other values with it, return (value, aux) and pass has_aux=True)"
                        % (fn.__name__, len(compiled.outputs)))



@api_boundary
class _Services:
    """What the composition root (srcgrad/__init__.py) installs from the
    layer above: `lowered_source(f, wrt, args)`, the code sg.jit compiles
    for sg.grad(f, wrt) on `args` (jit/api.py), for `source(jit=True)`."""

    lowered_source = None


SERVICES = _Services()


def source(f, wrt=(0,), mode="reverse", args=None, *, jit=False):
    """The generated Python source of the derivative of `f`.

    Reverse mode gives the fused forward and reverse sweeps that `sg.grad`
    runs; forward mode the JVP code `f_jvp(*inputs, *tangents of the wrt
    inputs) -> (outputs, tangents)` that ForwardAccumulator and `sg.jvp`
    run. The code is compiled per kind of argument: without `args`, every
    argument is taken for an array; with `args`, the code is the one
    compiled for their kinds, which is what `sg.grad(f, wrt)(*args)` runs
    (Python floats get code specialised to 0-d values: no zeros_like, no
    unbroadcast; lists and dicts their container code; functions and
    objects their resolution).

    Args:
        f: a function srcgrad can transform, or one it returned
            (`sg.source(sg.grad(g))` is second-order code).
        wrt: the positional index, or tuple of indices, of the arguments to
            differentiate.
        mode: "reverse" or "forward".
        args: a tuple of example arguments (an extension of API.md), or None.
        jit: the gradient code `sg.jit(sg.grad(f, wrt))` compiles with
            Numba for `args`, as lowered for it (stacks as typed lists,
            reversed loops as ranges, the twins of srcgrad's helpers named
            in its first line); when it cannot be lowered, a comment with
            the reason and the CPython code sg.jit runs instead. Needs
            `args` and reverse mode (and Numba: the `jit` extra).

    Returns:
        A `GeneratedCode`: a `str` of the code, which prints plainly,
        compares equal to the plain string, and displays highlighted in a
        notebook.

    Raises:
        ValueError: for an unknown mode, or jit=True without args or in
            forward mode.
        sg.NoRuleError: for what sg.jacobian or sg.hessian returned (not
            generated code), or a function applied to a differentiated value
            without a rule.
        sg.UnsupportedSyntaxError: for Python srcgrad cannot differentiate.
    """
    if mode not in ("reverse", "forward"):
        raise ValueError("mode must be 'reverse' or 'forward', got %r" % (mode,))
    fn = as_function(f)
    wrt = wrt_indices(wrt)
    if jit:
        if args is None or mode != "reverse":
            raise ValueError("sg.source(..., jit=True) shows the gradient code Numba compiles for some "
                             "arguments: pass args=(...) (and mode='reverse')")
        return GeneratedCode(SERVICES.lowered_source(f, wrt, tuple(args)))
    if args is not None and not isinstance(f, BoundFunction):
        program, mask, _ = _grad_inputs(fn, tuple(args), {}, wrt)
        return GeneratedCode(program.compile(mask, mode).source)
    if isinstance(f, BoundFunction):
        # a bound method: `self` is known, and its Variables (self.kernel)
        # are inputs, as under a tape; wrt counts the arguments after self.
        params = dict.fromkeys(fn.parsed.params)
        params[fn.parsed.params[0]] = f.instance
        program = fn.program_for(params)
        n = len(fn.parsed.params)
        mask = [(i - 1) in wrt for i in range(n)] + [True] * len(program.leaves)
    else:
        program = fn.program_for(None)
        mask = [i in wrt for i in range(len(program.inputs))]
    return GeneratedCode(program.compile(mask, mode).source)


# ------------------------------------------------------ forward mode


def _function_and_self(f):
    if isinstance(f, BoundFunction):
        return f.function, (f.instance,)
    return as_function(f), ()


def _float_array(x):
    if arrays.is_other_array(x):
        raise arrays.ForeignArrayError(
            "srcgrad: sg.jvp, sg.jacobian, sg.hessian and sg.hvp take NumPy arrays; a %s array would be "
            "converted to NumPy. sg.grad and sg.value_and_grad keep it (docs/arrays.md)"
            % type(x).__module__.split(".")[0])
    return _float_numpy(unwrap(x))


def _float_argument(x):
    """A differentiated argument of sg.jacobian, sg.hessian or sg.hvp: a
    Python float (int) as a Python float, as sg.grad and sg.jvp pass it
    (the code sees the plain call's type: `isinstance(x, float)`), else
    `_float_array(x)`."""
    if type(x) in (float, int):
        return float(x)
    return _float_array(x)


@api_boundary
def jvp(f, primals, tangents):
    """Forward-mode Jacobian-vector product through generated tangent code.

    f: a Python function srcgrad can transform (decorated or not).
    primals: a tuple or list of f's positional arguments. tangents: the same
    length; an array of its primal's shape for each argument to
    differentiate, None for the others (integer primals are promoted to
    float64, except a Python int given a zero tangent, which is taken as
    having none: a loop count stays an int). Returns
    `(f(*primals), J . tangents)`: the output and its
    tangent (same structure: a tuple for a tuple-valued f; zeros for an
    output that does not depend on the differentiated arguments), ndarrays
    of the output's dtype (Tensors when an outer tape or accumulator is
    recording and the primals are Tensors). Runs the code that
    `sg.source(f, wrt, mode="forward")` shows.

    Raises ValueError when primals and tangents differ in length or shape,
    TypeError when they are not sequences.
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples or lists, got %s and %s"
                        % (type(primals).__name__, type(tangents).__name__))
    if len(primals) != len(tangents):
        raise ValueError("jvp: %d primals but %d tangents" % (len(primals), len(tangents)))
    try:
        fn, bound_self = _function_and_self(f)
        if fn.has_varargs and not bound_self:       # f(*args): specialised to the number of primals
            fn, sargs, _ = fn.for_call(tuple(primals), {})
            primals = list(sargs)
    except Exception as exc:
        if not op_by_op.falls_back(exc):
            raise
        op_by_op.warn(f, exc)
        return op_by_op.jvp(f, primals, tangents)
    primals = list(bound_self) + list(primals)
    tangents = [None] * len(bound_self) + list(tangents)
    params = fn.bind(tuple(primals), {})          # (with the defaults of the other parameters)
    tangents += [None] * (len(params) - len(tangents))
    on_tensors = any(t._recording for t in tape_mod._stack())
    values, tans = [], []
    # a zero tangent for a Python int (a count, a length) is no tangent (JAX's float0)
    tangents = [None if (t is not None and type(p) is int and not isinstance(t, Tensor)
                         and np.all(np.asarray(t) == 0)) else t for p, t in zip(params.values(), tangents)]
    for p, t in zip(params.values(), tangents):
        if t is None:
            values.append(p if on_tensors else unwrap_nested(p))
            continue
        if type(unwrap(p)) is dict or (type(unwrap(p)) in (list, tuple) and type(t) in (list, tuple)):
            # a dict (list, tuple) of parameters: its tangent a dict of the same keys (of the same length)
            if on_tensors and any(isinstance(e, Tensor) for e in tape_mod.flatten([p, t])):
                values.append(p)        # (Tensors an outer tape or accumulator follows: kept)
                tans.append(t)
                continue
            x = _float_tree(unwrap_nested(p))
            values.append(x)
            tans.append(_tangent_tree(unwrap_nested(t), x))
            continue
        x = p if (on_tensors and isinstance(p, Tensor)) else _float_tree(unwrap(p)) if type(
            unwrap(p)) in (float, int) else _float_array(p)
        t = t if (on_tensors and isinstance(t, Tensor)) else np.asarray(unwrap(t), dtype=np.result_type(unwrap(x)))
        if np.shape(t) != np.shape(x):
            raise ValueError("jvp: tangent of shape %s for a primal of shape %s"
                             % (np.shape(t), np.shape(x)))
        if type(x) is float:
            t = float(t)
        values.append(x)
        tans.append(t)
    tans_all = [None if t is None else next(iter_tans) for t, iter_tans in
                zip(tangents, [iter(tans)] * len(tangents))]
    params = dict(zip(params, values))
    try:
        program = fn.program_for(params)
        leaves = [leaf.fetch(params, program.namespace) for leaf in program.leaves]
        mask = [t is not None for t in tangents] + [False] * len(leaves)
        compiled = program.compile(mask, "forward")
    except Exception as exc:
        if not op_by_op.falls_back(exc) or bound_self:
            raise
        op_by_op.warn(fn, exc)
        return op_by_op.jvp(f, values, tans_all)
    outs, douts = compiled.jvp(*values, *[unwrap_nested(v) if not on_tensors else v for v in leaves], *tans)
    if not compiled.tuple_output:
        return outs, _output_tangent(douts, outs)
    return outs, tuple(_output_tangent(d, o) for d, o in zip(douts, outs))


def _tangent_tree(t, x):
    """The tangent `t` of a container primal `x` (dicts, lists, tuples of
    arrays and floats) with each leaf in its primal's floating dtype and
    shape; a None leaf (an entry without a tangent, as op by op reads it)
    is zeros (np.asarray(None, dtype=float) is NaN: a tangent of NaNs).
    Raises ValueError naming a key or shape that does not match."""
    if t is None:
        if isinstance(x, dict):
            return {k: _tangent_tree(None, v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return type(x)(_tangent_tree(None, v) for v in x)
        return 0.0 if type(x) is float else np.zeros(np.shape(x), dtype=np.result_type(x))
    if isinstance(x, dict):
        if not isinstance(t, dict) or set(t) != set(x):
            raise ValueError("jvp: the tangent of a dict must be a dict with the same keys %s, got %s"
                             % (sorted(x), sorted(t) if isinstance(t, dict) else type(t).__name__))
        return {k: _tangent_tree(t[k], v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        if not isinstance(t, (list, tuple)) or len(t) != len(x):
            raise ValueError("jvp: the tangent of a %s of %d must be a list or tuple of %d"
                             % (type(x).__name__, len(x), len(x)))
        return type(x)(_tangent_tree(a, b) for a, b in zip(t, x))
    tv = np.asarray(t, dtype=np.result_type(x))
    if tv.shape != np.shape(x):
        raise ValueError("jvp: tangent of shape %s for a primal of shape %s" % (tv.shape, np.shape(x)))
    return float(tv) if type(x) is float else tv


def _output_tangent(d, out):
    if type(out) is dict and (d is None or isinstance(d, dict)) and not any(
            isinstance(o, Tensor) for o in out.values()):
        ds = d if d is not None else {}
        return {k: _output_tangent(ds.get(k), o) for k, o in out.items()}
    if type(out) in (list, tuple) and not any(isinstance(o, Tensor) for o in out):
        # a list output's tangent is a list of the elements' tangents (autograd's, JAX's pytree)
        ds = d if isinstance(d, (list, tuple)) else [None] * len(out) if d is None else (
            list(np.broadcast_to(d, np.shape(out))) if np.ndim(d) > 0 and len(d) == len(out) else None)
        if ds is not None and len(ds) == len(out):
            return type(out)(_output_tangent(di, o) for di, o in zip(ds, out))
    if isinstance(d, Tensor) or isinstance(out, Tensor):
        return d if d is not None else Tensor(np.zeros_like(unwrap(out)))
    out = np.asarray(out)
    if d is None:
        return np.zeros_like(out)
    d = np.asarray(d)
    if d.shape != out.shape:
        d = np.broadcast_to(d, out.shape)
    return d.astype(out.dtype, copy=False) if is_differentiable_dtype(out.dtype) else d


def _warn_detached(args):
    """sg.jacobian(f)(x) and sg.hessian(f)(x) return arrays, not recorded
    by a tape, unless the argument they differentiate is a watched Tensor
    (then they compute with tapes on the Tensors: jacobians.py): another
    watched Tensor argument gets a GradientPathWarning naming the user's
    line, like any other conversion that cuts the gradient path."""
    for a in args:
        if isinstance(a, Tensor) and tensor_mod.path_is_cut(a):
            # (4 frames up: _warn_detached, jac/hess, their api_boundary, the user's code)
            tensor_mod.warn_path_cut(a, 4, "passed to a function that sg.jacobian or sg.hessian returned "
                                        "(its result is an array no tape records)")


# ------------------------------------------------ sg.jvp inside compiled code

class JvpOf:
    """`sg.jvp(f, (p_1..p_n), (t_1..t_n))` as a function of the primals and
    the tangents given (those not None, `mask`): what the lowering
    (transforms/lower/jvp_calls.py) turns such a call in differentiated code
    into, so that the JVP is itself differentiated (reverse over forward,
    forward over forward), through f's generated tangent code, as JAX
    differentiates `jax.jvp`. Called, it returns `(f(*primals), J . t)`."""

    def __init__(self, f, n, mask):
        self.f, self.n, self.mask = f, n, tuple(mask)
        self.fn = as_function(f)
        self._compiled_form = None
        self._lock = threading.Lock()
        self.__name__ = self.__qualname__ = "jvp_%s" % self.fn.__name__

    def __call__(self, *args):
        primals, given = args[:self.n], iter(args[self.n:])
        return jvp(self.f, primals, [next(given) if m else None for m in self.mask])

    def __srcgrad_function__(self):
        if self._compiled_form is None:
            with self._lock:
                if self._compiled_form is None:
                    self._compiled_form = JvpFunction(self)
        return self._compiled_form


@functools.lru_cache(maxsize=256)
def jvp_function(f, n, mask):
    """The `JvpOf` of `f` for `n` primals and tangent `mask` (a tuple of
    bools): one per (f, n, mask), so its compiled code is cached."""
    return JvpOf(f, n, mask)


jvp.__srcgrad_jvp__ = jvp_function


class JvpFunction(Function):
    """The compilable form of a `JvpOf`: for the argument kinds of a call,
    the Program of f's generated JVP function (`Artefact.jvp_fn`, whose
    parameters are f's, then the tangents of the active ones)."""

    derived = True

    def __init__(self, jvp_of):
        base = jvp_of.fn
        self.jvp_of = jvp_of
        self.base = base
        params = base.parsed.params[:jvp_of.n]
        names = params + ["t_%s" % p for p, m in zip(params, jvp_of.mask) if m]
        tree = ast_util.parse("def %s(%s):\n    return (None, None)\n"
                              % (jvp_of.__name__, ", ".join(names))).body[0]
        parsed = parse_mod.parse(base.python_function, tree)
        parsed.func = jvp_of
        P = inspect.Parameter
        super().__init__(jvp_of, parsed, inspect.Signature([P(p, P.POSITIONAL_OR_KEYWORD) for p in names]))
        self.__name__ = jvp_of.__name__

    def program_for(self, params, complex_mode=False):
        values = list(params.values()) if params is not None else [None] * len(self.parsed.params)
        base_params = self.base.bind(tuple(values[:self.jvp_of.n]), {})
        base_program = self.base.program_for(base_params if params is not None else None, complex_mode)
        if base_program.leaves or self.base.n_outputs() != 1 or len(base_params) != self.jvp_of.n:
            raise NoRuleError(self.jvp_of)
        compiled = base_program.compile(list(self.jvp_of.mask) + [False] * (len(base_params) - self.jvp_of.n),
                                        "forward")
        generated = as_function(compiled.jvp_fn)
        if params is None:
            return generated.program_for(None, complex_mode)
        return generated.program_for(dict(zip(generated.parsed.params, values)), complex_mode)
