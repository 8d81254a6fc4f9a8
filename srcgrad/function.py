"""@function, grad, value_and_grad, source: the compiler's pass list and cache.

The passes, in order (each requires the ones before it):

    parse -> check (the fence; at decoration time, before any user code runs)
          -> lower (break/continue/return -> flags, loops -> index loops,
                    x[i] = v -> setitem, local defs inlined)          [at decoration]
          -> resolve (names -> objects, leaves such as self.kernel)      [per argument kinds]
          -> anf (one op per statement, SSA names)                       [per active mask]
          -> activity -> reverse (+ inline rules) -> codegen -> compile -> cache

A `Program` caches the resolution for one set of argument kinds (array-like,
complex, or an object's type); it compiles and caches one `Compiled` per
mask of active inputs. A call that finds a global rebound since it was
resolved (here or in a function the compiled code calls) resolves again
instead of running stale code.
"""
import copy
import functools
import inspect
import threading
import weakref

import gast
import numpy as np

from . import forward as _forward
from . import tape as tape_mod
from .errors import UnsupportedSyntaxError
from .tensor import Tensor, is_differentiable_dtype, unwrap_nested
from .transforms import activity, anf, ast_util, check, codegen, lower, naming, parse, resolve, reverse


_unwrap_nested = unwrap_nested


def _arraylike(v):
    return isinstance(v, (Tensor, np.ndarray, np.generic, int, float, complex, bool))


class Compiled:
    """The generated code for one (function, argument kinds, active inputs).

    fwd(*inputs) -> (*outputs, residuals); bwd(residuals, *cotangents) ->
    tuple of cotangents of the active inputs; joint(*inputs, *cotangents)
    -> the same, forward and reverse sweeps fused (the code sg.source shows).
    """

    def __init__(self, program, mask):
        self.program = program
        self.mask = tuple(mask)
        parsed = program.parsed
        res = _copy_resolution(program.resolution)
        namer = res.namer
        fdef = anf.anf(parsed, res)
        inputs = program.inputs
        self.inputs = inputs
        self.active_inputs = [n for n, m in zip(inputs, self.mask) if m]
        ret = fdef.body[-1]
        outputs = [e.id for e in ret.value.elts] if hasattr(ret.value, "elts") else [ret.value.id]
        self.outputs = outputs
        self.tuple_output = hasattr(ret.value, "elts")
        active = activity.analyze(fdef, self.active_inputs, outputs, program.callee_outputs)
        self.output_active = tuple(o in active for o in outputs)
        gen = reverse.generate(parsed, fdef, active, namer, program.namespace, program.compile_callee,
                               real_only=not program.complex_mode)
        name = parsed.node.name
        fwd, bwd, joint, self.residuals, self.connected = codegen.assemble(
            name, inputs, self.active_inputs, gen)
        defaults = {joint.name: tuple(1.0 for _ in outputs)}
        fns = codegen.build([fwd, bwd, joint], gen.injected, parsed.func,
                            "%s (%s)" % (name, ", ".join(self.active_inputs)), defaults)
        self.fwd = fns[fwd.name]
        self.bwd_fn = fns[bwd.name]
        self.joint_fn = fns[joint.name]
        self.source = self.joint_fn.__srcgrad_source__

    @staticmethod
    def run(fn, *args):
        """Call generated function `fn`; an exception gets a note naming the
        user's file and line."""
        try:
            return fn(*args)
        except Exception as exc:
            raise codegen.annotate(exc, fn)

    def bwd(self, residuals, *cotangents):
        return self.run(self.bwd_fn, residuals, *cotangents)

    def joint(self, *args):
        result = self.run(self.joint_fn, *args)
        return result if len(self.active_inputs) != 1 else (result,)


class _Pending:
    """A recursive call's compiled callee, while it is being compiled: its
    functions are looked up when called. Every output counts as active."""

    def __init__(self, program, mask):
        self.program = program
        self.mask = mask
        ret = program.parsed.node.body[-1]
        n = len(ret.value.elts) if isinstance(ret.value, gast.Tuple) else 1
        self.output_active = (True,) * n

    def fwd(self, *args):
        return self.program._compiled[self.mask].fwd(*args)

    def bwd(self, *args):
        return self.program._compiled[self.mask].bwd(*args)


def _copy_resolution(res):
    """A copy whose AST can be transformed; resolved objects are shared."""
    memo = {}
    for n in gast.walk(res.node):
        if hasattr(n, "_sg_callee"):
            memo[id(n._sg_callee)] = n._sg_callee
    new = copy.copy(res)
    new.node = copy.deepcopy(res.node, memo)
    new.namer = copy.deepcopy(res.namer)
    return new


_hoisting = threading.local()


def _is_complex(v):
    """Is `v` (an array, Tensor or number) complex? Without NumPy dispatch."""
    dtype = getattr(v, "dtype", None)
    return dtype.kind == "c" if dtype is not None else isinstance(v, complex)


def _values(fn, params, program):
    """(program, the values of its inputs: parameters then leaves). A complex
    Variable among the leaves switches to the complex-mode Program."""
    values = list(params.values()) + [leaf.fetch(params, program.namespace) for leaf in program.leaves]
    if not program.complex_mode and any(_is_complex(v) for v in values[len(params):]):
        program = fn._program_for(params, complex_mode=True)
        values = list(params.values()) + [leaf.fetch(params, program.namespace) for leaf in program.leaves]
    return program, values


def _mentions_complex(node):
    """Does the function build complex values itself (a complex literal,
    np.complex128, astype(complex), np.fft...)?"""
    for n in gast.walk(node):
        if isinstance(n, gast.Constant) and isinstance(n.value, complex):
            return True
        word = n.id if isinstance(n, gast.Name) else n.attr if isinstance(n, gast.Attribute) else ""
        if "complex" in word or word in ("fft", "csingle", "cdouble", "clongdouble"):
            return True
    return False


class Program:
    """A resolved function for one set of argument kinds; compiles per mask."""

    def __init__(self, function, examples, complex_mode=False):
        self.function = function
        self.parsed = function._parsed
        self.complex_mode = complex_mode or _mentions_complex(self.parsed.node)
        self.namespace = resolve.Namespace(self.parsed.func)
        self.resolution = resolve.resolve(self.parsed, examples)
        self.free = dict(self.resolution.free)
        self.callee_programs = []       # what the compiled code calls (staleness is checked through them)
        self._hoist_callee_leaves()
        self.inputs = list(self.parsed.params) + [leaf.name for leaf in self.resolution.leaves]
        self.leaves = self.resolution.leaves
        self._compiled = {}
        self._lock = threading.RLock()
        self._compiling = set()

    def _hoist_callee_leaves(self):
        """Variables that called user functions read as globals or closure
        cells are inputs here too: the call passes them on, so they stay
        connected to the tape. (Resolution.callee_leaves: callee -> the
        local names passed for its leaves, in its input order.)"""
        res = self.resolution
        res.callee_leaves = {}
        hoisted = {}
        busy = _hoisting.__dict__.setdefault("busy", set())
        me = self.parsed.func
        busy.add(me)
        try:
            for n in gast.walk(res.node):
                obj = getattr(getattr(n, "func", None), "_sg_callee", None) if isinstance(n, gast.Call) else None
                user = anf._user_function(obj) if obj is not None else None
                if user is None or user in busy or user in res.callee_leaves or inspect.ismethod(obj):
                    continue
                try:
                    program = as_function(user)._program_for(None)
                except Exception:
                    continue            # reported when the call is compiled
                names = []
                for leaf in program.leaves:
                    if leaf.kind != "free":
                        names = None
                        break
                    key = (id(leaf.namespace or program.namespace), leaf.root)
                    if key not in hoisted:
                        hoisted[key] = resolve.Leaf(res.namer.fresh(leaf.root), "free", leaf.root, (),
                                                    leaf.text, leaf.namespace or program.namespace)
                        res.leaves.append(hoisted[key])
                    names.append(hoisted[key].name)
                if names:
                    res.callee_leaves[user] = names
        finally:
            busy.discard(me)

    def is_current(self, _seen=None):
        """False when a global or closure name was rebound since resolution,
        here or in a user function this one's compiled code calls."""
        for name, obj in self.free.items():
            found, now = self.namespace.lookup(name)
            if not found or now is not obj:
                return False
        seen = _seen if _seen is not None else set()
        seen.add(id(self))
        return all(p.is_current(seen) for p in self.callee_programs if id(p) not in seen)

    def compile(self, mask):
        mask = tuple(bool(m) for m in mask)
        c = self._compiled.get(mask)
        if c is None:
            with self._lock:
                c = self._compiled.get(mask)
                if c is None:
                    if mask in self._compiling:
                        return _Pending(self, mask)     # recursion: bound when compiled
                    self._compiling.add(mask)
                    try:
                        c = Compiled(self, mask)
                    finally:
                        self._compiling.discard(mask)
                    self._compiled[mask] = c
        return c

    def compile_callee(self, op, mask):
        """Compile the user function called by `op` for the active `mask`."""
        if getattr(op, "custom", False):
            from .custom import CustomCallee
            return CustomCallee(op.callee, mask, op.n_outputs)
        fn = as_function(op.callee, fence=True)
        if getattr(op, "spec", None) is not None:
            fn = fn.specialize(*op.spec)
        examples = dict(getattr(op, "examples", None) or {})
        if op.receiver is not None:
            examples[fn._parsed.params[0]] = op.receiver
        if examples:
            params = dict.fromkeys(fn._parsed.params)
            params.update({k: v for k, v in examples.items() if k in params})
            program = fn._program_for(params, self.complex_mode)
        else:
            program = fn._program_for(None, self.complex_mode)
        chain = [leaf for leaf in program.leaves if leaf.kind != "free"]
        if chain:
            leaf = chain[0]
            raise UnsupportedSyntaxError(
                "a Variable read as a global or attribute (%s) inside a called function" % leaf.text,
                program.parsed.filename, program.parsed.firstlineno, None,
                "pass it as an argument, or decorate the outer function only")
        if program not in self.callee_programs:
            self.callee_programs.append(program)
        return program.compile(mask)

    def callee_outputs(self, op, mask):
        return self.compile_callee(op, mask).output_active


class Function:
    """A function decorated with `@sg.function` (see API.md).

    Outside any tape, or with no watched input, it calls the user's function
    unchanged. Inside a recording tape with a watched input (a parameter, or
    a Variable it reads as a global, closure cell or attribute such as
    `self.kernel`), it runs the compiled forward sweep on plain ndarrays and
    records one tape entry whose backward is the generated adjoint.

    Raises UnsupportedSyntaxError at decoration for constructs srcgrad cannot
    differentiate, and SourceNotFoundError when the source is unavailable.
    """

    def __init__(self, python_function, fence=True):
        self.python_function = python_function
        functools.update_wrapper(self, python_function)
        self._parsed = parse.parse(python_function)
        check.check(self._parsed)
        lower.lower(self._parsed)
        self._signature = inspect.signature(python_function)
        self._programs = {}
        self._lock = threading.RLock()
        args = self._parsed.node.args
        self._varargs = (args.vararg.id if args.vararg is not None else None,
                         args.kwarg.id if args.kwarg is not None else None)
        self._specializations = {}

    def specialize(self, n_extra, kw_names):
        """This function with `*args` replaced by `n_extra` positional
        parameters and `**kwargs` by keyword parameters for `kw_names` (the
        body starts with `args = (args_0, ...)`, `kwargs = {'k': kwargs_k}`):
        the form the compiler differentiates, one per call shape."""
        key = (n_extra, tuple(kw_names))
        spec = self._specializations.get(key)
        if spec is not None:
            return spec
        vararg, varkw = self._varargs
        parsed = copy.copy(self._parsed)
        node = copy.deepcopy(self._parsed.node)
        parsed.node = node
        used = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)} | set(parsed.params)
        namer = naming.Namer(used)
        extra = [namer.fresh("%s_%d" % (vararg, i)) for i in range(n_extra)] if vararg else []
        kws = [namer.fresh("%s_%s" % (varkw, k)) for k in kw_names] if varkw else []
        pre = []
        if vararg:
            pre += ast_util.quote("%s = (%s)" % (vararg, "".join(e + ", " for e in extra)))
        if varkw:
            pre += ast_util.quote("%s = {%s}" % (varkw, ", ".join("%r: %s" % (k, n) for k, n in zip(kw_names, kws))))
        for stmt in pre:
            for n in gast.walk(stmt):
                n._sg_origin = (parsed.filename, parsed.firstlineno, None)
        node.body = pre + node.body
        node.args.vararg = node.args.kwarg = None
        for e in extra:
            node.args.args.append(ast_util.name(e, ctx=gast.Param()))
        for e in kws:
            node.args.kwonlyargs.append(ast_util.name(e, ctx=gast.Param()))
            node.args.kw_defaults.append(None)
        n_pos = parsed.n_positional
        parsed.params = parsed.params[:n_pos] + extra + parsed.params[n_pos:] + kws
        parsed.n_positional = n_pos + len(extra)
        spec = object.__new__(Function)
        spec.__dict__.update(self.__dict__)
        spec._parsed = parsed
        P = inspect.Parameter
        spec._signature = inspect.Signature(
            [P(p, P.POSITIONAL_OR_KEYWORD) for p in parsed.params[:parsed.n_positional]]
            + [P(p, P.KEYWORD_ONLY) for p in parsed.params[parsed.n_positional:]])
        spec._programs = {}
        spec._lock = threading.RLock()
        spec._varargs = (None, None)
        spec._specializations = {}
        spec._kw_map = dict(zip(kw_names, kws))
        self._specializations[key] = spec
        return spec

    def _for_call(self, args, kwargs):
        """(function, args, kwargs) with *args/**kwargs specialized away."""
        if self._varargs == (None, None):
            return self, args, kwargs
        bound = inspect.signature(self.python_function).bind(*args, **kwargs)
        vararg, varkw = self._varargs
        extra = bound.arguments.get(vararg, ()) if vararg else ()
        kw = bound.arguments.get(varkw, {}) if varkw else {}
        spec = self.specialize(len(extra), sorted(kw))
        kwargs = {k: v for k, v in kwargs.items() if k not in kw}
        kwargs.update({spec._kw_map[k]: v for k, v in kw.items()})
        return spec, args, kwargs

    def __repr__(self):
        return "<srcgrad.function %s>" % getattr(self.python_function, "__qualname__", "?")

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return BoundFunction(self, obj)

    # -- programs
    def _kinds(self, values):
        return tuple(("carray" if _is_complex(v) else "array") if _arraylike(v) else
                     "array" if v is None else type(v) for v in values)

    def _program_for(self, params, complex_mode=False):
        """The Program for these parameter values (None: assume real arrays).
        Complex arguments (or complex_mode, from a complex caller) make the
        generated adjoints keep the conjugations of TF's complex convention;
        real ones leave them out."""
        if params is None:
            key = ("real", complex_mode)
            examples = {}
        else:
            key = self._kinds(params.values()) + (complex_mode,)
            examples = {p: v for p, v in params.items() if not (_arraylike(v) or v is None)}
        program = self._programs.get(key)
        if program is None or not program.is_current():
            with self._lock:
                program = Program(self, examples, complex_mode or "carray" in key)
                self._programs[key] = program
        return program

    def _bind(self, args, kwargs):
        params = self._parsed.params
        if not kwargs and len(args) == len(params) == self._parsed.n_positional:
            return dict(zip(params, args))   # the common case, without inspect
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return dict(bound.arguments)

    # -- calls
    def __call__(self, *args, **kwargs):
        tapes = tape_mod.recording_tapes()
        if not tapes:
            return self.python_function(*args, **kwargs)
        if _forward.accumulating():     # a ForwardAccumulator is active: generated JVP code
            result = _forward.call_function(self, args, kwargs)
            if result is not _forward.NOT_HANDLED:
                return result
        if self._varargs != (None, None):
            spec, sargs, skwargs = self._for_call(args, kwargs)
            return spec._call_traced(tapes, sargs, skwargs, args, kwargs)
        return self._call_traced(tapes, args, kwargs, args, kwargs)

    def _call_traced(self, tapes, args, kwargs, user_args, user_kwargs):
        params = self._bind(args, kwargs)
        program = self._program_for(params)
        program, values = _values(self, params, program)
        mask = []
        for v in values:
            active = False
            if isinstance(v, Tensor) and is_differentiable_dtype(v.dtype):
                for t in tapes:
                    if t._should_record([v]):
                        active = True
            elif type(v) in (list, tuple, dict):     # a container of Tensors: active as a whole
                leaves = [e for e in tape_mod.flatten(v)
                          if isinstance(e, Tensor) and is_differentiable_dtype(e.dtype)]
                active = any(t._should_record(leaves) for t in tapes) if leaves else False
            mask.append(active)
        if not any(mask):
            return self.python_function(*user_args, **user_kwargs)
        compiled = program.compile(mask)
        raw = [_unwrap_nested(v) for v in values]
        result = compiled.run(compiled.fwd, *raw)
        outputs, residuals = result[:-1], result[-1]
        wrapped = []
        active_out = []
        for o, is_active in zip(outputs, compiled.output_active):
            if isinstance(o, (np.ndarray, np.generic, float, int, complex)) and not isinstance(o, bool):
                t = Tensor(np.asarray(o))
                if is_active and is_differentiable_dtype(t.dtype):
                    active_out.append(t)
                wrapped.append(t)
            else:
                wrapped.append(o)
        if active_out:
            # inputs the outputs do not depend on stay unconnected (None), as on TF's tape
            inputs = [v for v, m in zip(values, compiled.mask) if m]
            inputs = _flat_inputs([v for v, c in zip(inputs, compiled.connected) if c])
            out_index = [i for i, (o, a) in enumerate(zip(wrapped, compiled.output_active))
                         if a and isinstance(o, Tensor) and any(o is t for t in active_out)]
            entry = tape_mod.CallEntry(inputs, active_out, _backward(compiled, out_index, outputs, values),
                                       _joint(compiled, values, out_index, outputs), residuals)
            for t in tapes:
                if t._should_record(inputs):
                    t._record(entry)
        if compiled.tuple_output:
            return tuple(wrapped)
        return wrapped[0]


class BoundFunction:
    """An @sg.function method bound to an instance."""

    def __init__(self, function, instance):
        self.function = function
        self.instance = instance
        functools.update_wrapper(self, function.python_function)

    def __call__(self, *args, **kwargs):
        return self.function(self.instance, *args, **kwargs)

    def __repr__(self):
        return "<bound srcgrad.function %s of %r>" % (self.function.__name__, self.instance)


def _full_cotangents(out_index, outputs, gs):
    full = [0.0] * len(outputs)
    for i, g in zip(out_index, gs):
        full[i] = g
    return full


def _connected(compiled, cotangents):
    return [g for g, c in zip(cotangents, compiled.connected) if c]


def _flat_inputs(values):
    """Tape inputs: a Tensor as is, a container as its Tensor leaves."""
    out = []
    for v in values:
        if isinstance(v, Tensor):
            out.append(v)
        else:
            out.extend(e for e in tape_mod.flatten(v) if isinstance(e, Tensor))
    return out


def _flat_cotangents(values, cotangents):
    """The cotangents aligned with _flat_inputs(values): a container's
    cotangent (same structure) is flattened the same way."""
    out = []
    for v, g in zip(values, cotangents):
        if isinstance(v, Tensor):
            out.append(g)
        else:
            leaves = tape_mod.flatten(v)
            gleaves = tape_mod.flatten(g) if g is not None else [None] * len(leaves)
            out.extend(c for e, c in zip(leaves, gleaves) if isinstance(e, Tensor))
    return out


def _connected_values(compiled, values):
    active = [v for v, m in zip(values, compiled.mask) if m]
    return [v for v, c in zip(active, compiled.connected) if c]


def _backward(compiled, out_index, outputs, values):
    connected_values = _connected_values(compiled, values)

    def backward(residuals, gs):
        cots = _connected(compiled, compiled.bwd(residuals, *_full_cotangents(out_index, outputs, gs)))
        return _flat_cotangents(connected_values, cots)
    return backward


def _joint(compiled, values, out_index, outputs):
    values = list(values)
    connected_values = _connected_values(compiled, values)

    def joint(inputs, gs):
        args = list(values)
        it = iter(inputs)
        active = [i for i, m in enumerate(compiled.mask) if m]
        for i, c in zip(active, compiled.connected):
            if c:
                v = values[i]
                if isinstance(v, Tensor):
                    args[i] = next(it)
                else:       # a container: its Tensor leaves replaced in order
                    leaves = [next(it) if isinstance(e, Tensor) else e for e in tape_mod.flatten(v)]
                    args[i] = tape_mod.pack_as(v, leaves)
        args = [a if isinstance(a, Tensor) or type(a) in (list, tuple, dict) else _unwrap_nested(a)
                for a in args]
        cots = _connected(compiled, compiled.joint(*args, *_full_cotangents(out_index, outputs, gs)))
        return _flat_cotangents(connected_values, cots)
    return joint


_functions = weakref.WeakKeyDictionary()
_functions_lock = threading.Lock()


def as_function(f, fence=True):
    """The Function wrapping `f` (cached per Python function)."""
    if isinstance(f, Function):
        return f
    if isinstance(f, BoundFunction):
        return f.function
    raw = getattr(f, "__func__", f)  # bound methods
    with _functions_lock:
        fn = _functions.get(raw)
        if fn is None:
            fn = Function(raw, fence=fence)
            _functions[raw] = fn
    return fn


def function(f):
    """Decorator: make `f` differentiable by source transformation.

    `f` may take Tensors, Variables, ndarrays, Python scalars and nested
    tuples/lists/dicts of them, and return an array or a tuple of arrays.
    Raises UnsupportedSyntaxError (construct, file, line) at decoration for
    Python that srcgrad cannot differentiate (see README, "What Python is
    supported"); some (objects built from differentiated values) are found
    when the derivative is first compiled.
    """
    return Function(f)


def _wrt_tuple(wrt):
    return (wrt,) if isinstance(wrt, int) else tuple(wrt)


def _grad_inputs(fn, args, kwargs, wrt):
    fn, args, kwargs = fn._for_call(args, kwargs)
    params = fn._bind(args, kwargs)
    program = fn._program_for(params)
    names = list(params)
    for i in wrt:
        if not 0 <= i < len(names):
            raise ValueError("wrt index %d out of range for %s with %d parameters"
                             % (i, fn.__name__, len(names)))
    program, values = _values(fn, params, program)
    mask = [i in wrt for i in range(len(values))]
    raw = []
    for i, v in enumerate(values):
        v = _unwrap_nested(v)
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
    a = np.asarray(v)
    return a if is_differentiable_dtype(a.dtype) else a.astype(np.float64)


def grad(f, wrt=(0,), preserve_result=False):
    """Return a function computing the gradient of scalar-valued `f`.

    wrt: positional index or tuple of indices of the arguments to
    differentiate. The returned function takes f's arguments and returns the
    gradient (an ndarray of the argument's shape and floating dtype; integer
    arguments are promoted to float64), a tuple of them when len(wrt) > 1,
    and `(value, gradient)` with preserve_result=True. A non-scalar `f` gives
    the gradient of its sum (as GradientTape.gradient does). The code that
    runs is the one `sg.source(f, wrt)` shows.
    """
    fn = as_function(f)
    wrt = _wrt_tuple(wrt)

    def gradient(*args, **kwargs):
        program, mask, raw = _grad_inputs(fn, args, kwargs, wrt)
        compiled = program.compile(mask)
        if preserve_result:
            result = compiled.run(compiled.fwd, *raw)
            outs, residuals = result[:-1], result[-1]
            if len(outs) != 1:
                raise TypeError("grad needs a function with one output; %s returns %d"
                                % (fn.__name__, len(outs)))
            grads = compiled.bwd(residuals, np.ones_like(outs[0]))
            value = outs[0]
        else:
            grads = compiled.joint(*raw)
        grads = tuple(_as_input_dtype(g, raw[i]) for g, i in zip(grads, [i for i, m in enumerate(mask) if m]))
        g = grads[0] if len(wrt) == 1 else grads
        return (value, g) if preserve_result else g

    gradient.__name__ = "d%sd%s" % (fn.__name__, "_".join(fn._parsed.params[i] for i in wrt
                                                          if i < len(fn._parsed.params)))
    gradient.__doc__ = "Gradient of %s with respect to arguments %s (generated by srcgrad)." % (fn.__name__, wrt)
    return gradient


def _as_input_dtype(g, x):
    if type(x) in (list, tuple):
        gs = g if isinstance(g, (list, tuple)) else [None] * len(x)
        return type(x)(_as_input_dtype(gi if gi is not None else np.zeros_like(xi), xi) for gi, xi in zip(gs, x))
    if type(x) is dict:
        gs = g if isinstance(g, dict) else {}
        return {k: _as_input_dtype(gs.get(k) if gs.get(k) is not None else np.zeros_like(xi), xi)
                for k, xi in x.items()}
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


def value_and_grad(f, wrt=(0,)):
    """`grad(f, wrt, preserve_result=True)`: returns (value, gradient)."""
    return grad(f, wrt, preserve_result=True)


def source(f, wrt=(0,), mode="reverse"):
    """The generated Python source (str) of the derivative of `f` with
    respect to the positional arguments `wrt`: the fused forward and reverse
    sweeps that `sg.grad` runs; with mode="forward", the JVP code
    `f_jvp(*inputs, *tangents of the wrt inputs) -> (outputs, tangents)`
    that ForwardAccumulator and `sg.jvp` run."""
    if mode not in ("reverse", "forward"):
        raise ValueError("mode must be 'reverse' or 'forward', got %r" % (mode,))
    fn = as_function(f)
    wrt = _wrt_tuple(wrt)
    if isinstance(f, BoundFunction):
        # a bound method: `self` is known, and its Variables (self.kernel)
        # are inputs, as under a tape; wrt counts the arguments after self.
        params = dict.fromkeys(fn._parsed.params)
        params[fn._parsed.params[0]] = f.instance
        program = fn._program_for(params)
        n = len(fn._parsed.params)
        mask = [(i - 1) in wrt for i in range(n)] + [True] * len(program.leaves)
    else:
        program = fn._program_for(None)
        mask = [i in wrt for i in range(len(program.inputs))]
    if mode == "forward":
        return _forward.source(program, mask)
    return program.compile(mask).source
