"""Function: what `@sg.function`, `sg.grad` and the tape hold for a
user function, and its calls.

A Function is parsed and prepared once (transforms/pipeline.py `prepare`),
keeps its Programs by argument kinds (`program_for`: a bounded LRU cache,
program.py), and is called three ways: outside any tape, the user's
function itself; inside a recording tape with a watched input
(`call_on_tape`), the compiled forward sweep on ndarrays and ONE tape entry
whose backward is the generated adjoint (tape.CompiledCall); inside a
ForwardAccumulator, the generated JVP (forward_mode.call_function).

The derived forms (generated code transformed again, bound methods,
record methods, gradients) are subclasses built through the same
constructor; `callables.as_function` picks the one for a Python callable.
"""
import collections
import copy
import functools
import inspect
import threading
import types

import gast
import numpy as np

from . import forward_mode, op_by_op
from . import tape as tape_mod
from .errors import api_boundary
from .program import CONTAINER, _CONTAINERS, _PATTERNS, _SCALARS, Program, _holds_complex, collector_paused
from .runtime import arrays
from .syntax import ast_util, naming
from .syntax.anno import Anno
from .tensor import Tensor, Variable, is_differentiable_dtype, unwrap_nested
from .transforms import parse, pipeline

# attributes functools.update_wrapper copies (a specialization keeps the user's)
_WRAPPER_ATTRS = set(functools.WRAPPER_ASSIGNMENTS) | {"__wrapped__"}


def _arraylike(v):
    return isinstance(v, (Tensor, np.ndarray, np.generic, int, float, complex, bool)) or arrays.is_other_array(v)


def _is_complex(v):
    """Is `v` (an array, Tensor or number) complex? Without NumPy dispatch."""
    dtype = getattr(v, "dtype", None)
    if dtype is None:
        return isinstance(v, complex)
    kind = getattr(dtype, "kind", None)
    return (kind if kind is not None else arrays.dtype_kind(v)) == "c"


def _array_kind(v):
    """"array" or "carray", with the axes of length 1 of a NumPy array or
    a Tensor holding one: the generated code may rely on the other axes
    not being 1 (transforms/shapes.py), so a call with another pattern has
    its own Program."""
    kind = "carray" if _is_complex(v) else "array"
    value = v._value if isinstance(v, Tensor) else v
    if type(value) is np.ndarray:
        return kind, tuple([d == 1 for d in value.shape])
    return kind


def _is_complex_kind(k):
    return k == "carray" or (type(k) is tuple and len(k) == 2 and k[0] == "carray")


_KIND_BY_TYPE = {float: "scalar", int: "scalar", complex: "carray", bool: "array", type(None): "array",
                 list: list, tuple: tuple, dict: dict}


def _kind_of(v):
    """One argument's part of a Program's cache key (see Function._kinds)."""
    kind = _KIND_BY_TYPE.get(type(v))
    if kind is not None:
        if (kind is list or kind is tuple or kind is dict) and _holds_complex(v):
            return kind, "complex"      # (complex contents: the adjoints keep TF's conj(), Program.complex_mode)
        return kind
    if isinstance(v, (Tensor, np.ndarray, np.generic)) or arrays.is_other_array(v):
        return _array_kind(v)   # (another library's array runs the same generated code)
    if v is CONTAINER:
        return "container"
    if inspect.ismethod(v):     # a new object at each access: keyed by its function and instance
        return ("method", id(v.__func__), id(v.__self__))
    return (type(v), id(v))


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

    #: False for a function parsed from the user's source; True for the
    #: forms srcgrad derives (generated code, bound methods, record methods,
    #: gradients), whose Python function is not the user's.
    derived = False

    def __init__(self, python_function, parsed=None, signature=None, tree=None):
        """The one constructor. Without `parsed`, the function is parsed
        from its source (or from `tree`, the gast FunctionDef of generated
        code) and prepared (pipeline.prepare: the fence and the lowerings);
        derived forms pass their Parsed and signature."""
        self._origin = None
        if parsed is None:
            raw = python_function
            parsed = pipeline.prepare(parse.parse(python_function, tree))
            if tree is None and isinstance(raw, types.FunctionType):
                # what the parse read: replacing the code or the defaults (IPython's autoreload does)
                # makes it stale (is_stale)
                self._origin = (raw, raw.__code__, raw.__defaults__, raw.__kwdefaults__)
                if raw.__name__ == "<lambda>":
                    python_function = _named_lambda(raw, parsed.node.name)
            functools.update_wrapper(self, python_function)
        self.python_function = python_function
        self.parsed = parsed
        self.signature = signature if signature is not None else inspect.signature(python_function)
        self._programs = ProgramCache()
        self._lock = threading.RLock()
        args = parsed.node.args
        self._varargs = (args.vararg.id if args.vararg is not None else None,
                         args.kwarg.id if args.kwarg is not None else None)
        self._specializations = {}
        self.kw_map = {}            # (a specialization: **kwargs key -> its parameter)
        self._plans = {}            # call_on_tape's fast path: argument kinds -> (program, 0-d flags)
        self.jit = None             # @sg.function(jit=True): a jit.tape.TapeJit (SERVICES.tape_jit)

    @property
    def has_varargs(self):
        """Does the function take *args or **kwargs (specialised per call shape)?"""
        return self._varargs != (None, None)

    def is_stale(self):
        """Has the Python function's code or defaults been replaced since it
        was parsed (`f.__code__ = ...`, IPython's autoreload), or a builtin
        the lowering rewrote calls of (range, zip, enumerate) been shadowed
        by a global since?"""
        o = self._origin
        if o is None:
            return False
        if o[0].__code__ is not o[1] or o[0].__defaults__ is not o[2] or o[0].__kwdefaults__ is not o[3]:
            return True
        assumed = self.parsed.assumed_builtins
        if assumed:
            globals_ = o[0].__globals__
            return any(name in globals_ for name in assumed)
        return False

    def _reparse(self):
        """Parse the function again (its code or defaults were replaced):
        the old programs and specializations are dropped."""
        with self._lock:
            if self.is_stale():
                jit = self.jit
                self.__init__(self._origin[0])
                if jit is not None:     # (a new TapeJit: the old one compiled the old code)
                    self.jit = SERVICES.tape_jit(self, cache=jit.cache)

    def n_outputs(self):
        """1, or k for a function that returns a k-tuple display."""
        ret = self.parsed.node.body[-1]
        if isinstance(ret, gast.Return) and isinstance(ret.value, gast.Tuple):
            return len(ret.value.elts)
        return 1

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
        parsed = copy.copy(self.parsed)
        node = copy.deepcopy(self.parsed.node)
        parsed.node = node
        used = {n.id for n in ast_util.walk(node) if isinstance(n, gast.Name)} | set(parsed.params)
        namer = naming.Namer(used)
        extra = [namer.fresh("%s_%d" % (vararg, i)) for i in range(n_extra)] if vararg else []
        kws = [namer.fresh("%s_%s" % (varkw, k)) for k in kw_names] if varkw else []
        pre = []
        if vararg:
            pre += ast_util.quote("%s = (%s)" % (vararg, "".join(e + ", " for e in extra)))
        if varkw:
            pre += ast_util.quote("%s = {%s}" % (varkw, ", ".join("%r: %s" % (k, n) for k, n in zip(kw_names, kws))))
        for stmt in pre:
            for n in ast_util.walk(stmt):
                if hasattr(n, "lineno"):
                    Anno.ORIGIN.add_to(n, parsed.origin(node))
        node.body = pre + node.body
        node.args.vararg = None
        node.args.kwarg = None
        for e in extra:
            node.args.args.append(ast_util.name(e, ctx=gast.Param()))
        for e in kws:
            node.args.kwonlyargs.append(ast_util.name(e, ctx=gast.Param()))
            node.args.kw_defaults.append(None)
        n_pos = parsed.n_positional
        parsed.params = parsed.params[:n_pos] + extra + parsed.params[n_pos:] + kws
        parsed.n_positional = n_pos + len(extra)
        P = inspect.Parameter
        signature = inspect.Signature(
            [P(p, P.POSITIONAL_OR_KEYWORD) for p in parsed.params[:parsed.n_positional]]
            + [P(p, P.KEYWORD_ONLY) for p in parsed.params[parsed.n_positional:]])
        spec = Function(self.python_function, parsed, signature)
        spec.__dict__.update({k: v for k, v in self.__dict__.items() if k in _WRAPPER_ATTRS})
        spec.kw_map = dict(zip(kw_names, kws))
        self._specializations[key] = spec
        return spec

    def for_call(self, args, kwargs):
        """(function, args, kwargs) with *args/**kwargs specialized away."""
        if self._origin is not None and self.is_stale():
            self._reparse()
        if self._varargs == (None, None):
            return self, args, kwargs
        bound = inspect.signature(self.python_function).bind(*args, **kwargs)
        bound.apply_defaults()      # (the specialization's signature has no defaults)
        vararg, varkw = self._varargs
        extra = bound.arguments.get(vararg, ()) if vararg else ()
        kw = bound.arguments.get(varkw, {}) if varkw else {}
        spec = self.specialize(len(extra), sorted(kw))
        n_pos = self.parsed.n_positional
        args = tuple(bound.arguments[p] for p in self.parsed.params[:n_pos]) + tuple(extra)
        kwargs = {p: bound.arguments[p] for p in self.parsed.params[n_pos:]}
        kwargs.update({spec.kw_map[k]: v for k, v in kw.items()})
        return spec, args, kwargs

    def __repr__(self):
        return "<srcgrad.function %s>" % getattr(self.python_function, "__qualname__", "?")

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return BoundFunction(self, obj)

    # -- programs
    def program_for(self, params, complex_mode=False):
        """The Program for these parameter values (None: assume real arrays).
        Complex arguments (or complex_mode, from a complex caller) make the
        generated adjoints keep the conjugations of TF's complex convention;
        real ones leave them out."""
        if self._origin is not None and self.is_stale():
            self._reparse()
        if params is None:
            key = ("real", complex_mode)
        else:
            key = tuple(map(_kind_of, params.values())) + (complex_mode,)
        program = self._programs.get(key)
        if program is not None and program.is_current():
            return program
        if params is None:
            examples = {}
        else:
            examples = {p: v for p, v in params.items() if not (_arraylike(v) or v is None)}
            examples = {p: v for p, v in examples.items() if v is not CONTAINER}
            containers = {p for p, v in params.items() if v is CONTAINER}
            if containers:
                examples[_CONTAINERS] = containers
            scalars = {p for p, v in params.items() if type(v) in (float, int)}
            if scalars:
                examples[_SCALARS] = scalars
            patterns = {p: k[1] for p, k in zip(params, key) if type(k) is tuple and len(k) == 2
                        and k[0] in ("array", "carray")}
            if patterns:
                examples[_PATTERNS] = patterns
        with self._lock:
            with collector_paused():
                program = self.new_program(examples, complex_mode or any(map(_is_complex_kind, key)), params)
            self._programs[key] = program
        return program

    def new_program(self, examples, complex_mode, params):
        """A new Program for `examples` (overridden by derived forms)."""
        return Program(self, examples, complex_mode)

    def values_for(self, params, program):
        """(program, the values of its inputs: parameters then leaves). A
        complex Variable among the leaves switches to the complex-mode
        Program."""
        values = list(params.values()) + [leaf.fetch(params, program.namespace) for leaf in program.leaves]
        if not program.complex_mode and any(_is_complex(v) for v in values[len(params):]):
            program = self.program_for(params, complex_mode=True)
            values = list(params.values()) + [leaf.fetch(params, program.namespace) for leaf in program.leaves]
        return program, values

    def bind(self, args, kwargs):
        """{parameter: value} for a call's arguments (defaults applied)."""
        if self._origin is not None and self.is_stale():
            self._reparse()
        params = self.parsed.params
        if not kwargs and len(args) == len(params) == self.parsed.n_positional:
            return dict(zip(params, args))   # the common case, without inspect
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return dict(bound.arguments)

    # -- calls
    @api_boundary
    def __call__(self, *args, **kwargs):
        tapes = tape_mod.recording_tapes()
        if not tapes:
            if self.parsed.grad_of:
                return self._call_primal(args, kwargs)
            if self.jit is not None and not any(isinstance(a, Tensor) for a in args):
                return self.jit.plain(*args, **kwargs)
            return self.python_function(*args, **kwargs)
        if forward_mode.accumulating():     # a ForwardAccumulator is active: generated JVP code
            if not self.has_varargs:
                try:        # (compiled here: a refusal falls back before anything runs)
                    self.program_for(self.bind(args, kwargs))
                except Exception as exc:
                    if not op_by_op.falls_back(exc):
                        raise
                    op_by_op.warn(self, exc, stacklevel=4)
                    return self.op_by_op(*args, **kwargs)
            result = forward_mode.call_function(self, args, kwargs)
            if type(result) is forward_mode.Refused:
                if not op_by_op.falls_back(result.exc):
                    raise result.exc
                op_by_op.warn(self, result.exc, stacklevel=4)
                return self.op_by_op(*args, **kwargs)
            if result is not forward_mode.NOT_HANDLED:
                return result
        if self._varargs != (None, None):
            try:
                spec, sargs, skwargs = self.for_call(args, kwargs)
            except Exception as exc:
                if not op_by_op.falls_back(exc):
                    raise
                op_by_op.warn(self, exc, stacklevel=4)
                return self.op_by_op(*args, **kwargs)
            return spec.call_on_tape(tapes, sargs, skwargs, args, kwargs)
        return self.call_on_tape(tapes, args, kwargs, args, kwargs)

    def op_by_op(self, *args, **kwargs):
        """The call on watched Tensors, op by op: the Python function runs
        and the tape records each NumPy operation (op_by_op.py); what
        derived forms override (a gradient: a tape inside the tape)."""
        return self.python_function(*args, **kwargs)

    def primal(self, *args, **kwargs):
        """Call the function for its value only: the Python function, or
        its compiled primal when it holds insert_grad_of blocks."""
        if self.parsed.grad_of:
            return self._call_primal(args, kwargs)
        return self.python_function(*args, **kwargs)

    def _call_primal(self, args, kwargs):
        """The function's value by its compiled primal (the forward code
        without tangents): Python cannot skip the body of an insert_grad_of
        block, which the compiled code leaves out."""
        if self._varargs != (None, None):
            spec, sargs, skwargs = self.for_call(args, kwargs)
            return spec._call_primal(sargs, skwargs)
        params = self.bind(args, kwargs)
        program = self.program_for(params)
        program, values = self.values_for(params, program)
        compiled = program.compile([False] * len(values), "forward")
        outs, _ = compiled.run(compiled.jvp_fn, *values)
        return outs

    def call_on_tape(self, tapes, args, kwargs, user_args, user_kwargs):
        """A call inside recording `tapes`: the compiled forward sweep on
        ndarrays and ONE tape entry whose backward is the generated adjoint
        (the plain call when no input is watched)."""
        # the fast path: positional `args` of Tensors, ndarrays and Python numbers that fill the
        # parameters, of kinds seen before (a _Plan), whose Program is still current; else the general
        # path (bind, program_for, values_for), which fills the plan
        plan = None
        if not kwargs and len(args) == self.parsed.n_positional:
            key = _plan_key(args)
            if key is not None:
                plan = self._plans.get(key)
                if plan is not None and not plan.program.is_current():
                    plan = None
        if plan is not None:
            if self.jit is None:
                result = self._call_planned(tapes, plan, args, user_args, user_kwargs)
                if result is not _UNPLANNED:
                    return result
            program, values, scalar_0d = plan.program, args, plan.scalar_0d
        else:
            params = self.bind(args, kwargs)
            keys = params
            for p, v in params.items():
                if isinstance(v, Tensor) and v._value.shape == () and v._value.dtype == _F64:
                    if keys is params:
                        keys = dict(params)
                    keys[p] = _SCALAR_0D
            try:
                program = self.program_for(keys)
                program, values = self.values_for(params, program)
            except Exception as exc:
                if not op_by_op.falls_back(exc):
                    raise
                op_by_op.warn(self, exc, stacklevel=4)
                return self.op_by_op(*user_args, **user_kwargs)
            scalar_0d = tuple(k is _SCALAR_0D for k in _padded(keys.values(), len(values)))
            if not kwargs and not program.leaves and len(args) == len(params):
                key = _plan_key(args)
                if key is not None:
                    plan = self._plans[key] = _Plan(program, scalar_0d, key)
        mask = []
        any_active = False
        for v in values:
            t = type(v)
            if t is np.ndarray or t is float or t is int:
                mask.append(False)
                continue
            active = False
            if isinstance(v, Tensor):
                if v._value.dtype.kind in "fc":
                    vs = (v,)
                    for tape in tapes:
                        if tape._should_record(vs):
                            active = any_active = True
            elif t is list or t is tuple or t is dict:     # a container of Tensors: active as a whole
                leaves = [e for e in tape_mod.flatten(v)
                          if isinstance(e, Tensor) and is_differentiable_dtype(e.dtype)]
                active = any(tape._should_record(leaves) for tape in tapes) if leaves else False
                any_active = any_active or active
            mask.append(active)
        if not any_active:
            return self.primal(*user_args, **user_kwargs)
        mask = tuple(mask)
        compiled = plan.artefacts.get(mask) if plan is not None else None
        if compiled is None:
            try:
                compiled = program.compile(mask)
                if getattr(compiled, "type_check", None) is not None:
                    raise compiled.type_check_refusal()
            except Exception as exc:
                if not op_by_op.falls_back(exc):
                    raise
                op_by_op.warn(self, exc, stacklevel=4)
                return self.op_by_op(*user_args, **user_kwargs)
            if plan is not None and program._compiled.get(("reverse", mask)) is compiled:
                plan.artefacts[mask] = compiled
                if self.jit is None:
                    plan.runs[mask] = [compiled, compiled.fwd, _connected_positions(compiled), (),
                                       _reruns_safely(compiled, ())]
        # 0-d float64 parameters run as NumPy scalars in code specialised to
        # 0-d values (as for Python floats: no zeros_like, no unbroadcast);
        # np.float64 keeps ndarray's attributes (shape, dtype, reshape)
        raw = []
        owned = set()
        for v, z in zip(values, scalar_0d):
            t = type(v)
            if t is np.ndarray or t is float or t is int:
                raw.append(v)
            elif isinstance(v, Tensor):
                a = v._value
                owned.add(id(a))
                raw.append(a[()] if z else a)
            else:
                raw.append(unwrap_nested(v))
        result = backward = None
        if self.jit is not None:        # @sg.function(jit=True): the sweeps compiled by Numba (jit/tape.py)
            result, backward = self.jit.forward(compiled, raw, owned)
        if result is None:
            result = compiled.run(compiled.fwd, *raw)
            result = tape_mod.keep_values(result, owned)
        return self._record_call(tapes, compiled, values, raw, result, backward)

    def _call_planned(self, tapes, plan, args, user_args, user_kwargs):
        """call_on_tape's fast lane for positional `args` with a _Plan whose
        artefact for the active inputs has run before (plan.runs): the
        forward sweep and the entry, without the general path's checks by
        value; _UNPLANNED when that artefact has not run yet (the general
        path compiles it and fills plan.runs)."""
        mask = [False] * len(args)
        any_active = False
        for i in plan.tensors:
            vs = (args[i],)
            for tape in tapes:
                if tape._should_record(vs):
                    mask[i] = any_active = True
        if not any_active:
            return self.primal(*user_args, **user_kwargs)
        found = plan.runs.get(tuple(mask))
        if found is None:
            return _UNPLANNED
        compiled, fwd, connected, kept, reruns = found
        raw = list(args)
        owned = set()
        scalar_0d = plan.scalar_0d
        for i in plan.arrays:
            a = args[i]._value
            owned.add(id(a))
            raw[i] = a[()] if scalar_0d[i] else a
        for i in kept:      # (ndarray arguments the residuals held before: copied here, not after)
            a = raw[i]
            if a.flags.writeable:
                a = raw[i] = a.copy()
                owned.add(id(a))
        copied = []
        result = tape_mod.keep_values(compiled.run(fwd, *raw), owned, copied)
        if copied:      # (a new tuple, not an update: another thread may be reading the old one)
            found[3] = tuple(sorted(set(kept).union(i for i in plan.ndarrays if id(raw[i]) in copied)))
        return self._record_call(tapes, compiled, args, raw, result, None, [args[i] for i in connected], reruns)

    def _record_call(self, tapes, compiled, values, raw, result, backward, connected=None, reruns=None):
        """The end of a call on tapes: its outputs wrapped as Tensors and,
        if one is active, ONE entry recorded on the `tapes` that watch its
        inputs (`connected`: the values the outputs depend on, when known
        to be Tensors; `reruns`: _reruns_safely, when known)."""
        wrapped, active_out, out_index, trees = _wrap_outputs(result, compiled.output_active)
        if active_out:
            call = tape_mod.CompiledCall(compiled, values, raw, out_index, result[-1], trees, backward, connected)
            inputs = connected if connected is not None else call.inputs()
            if reruns if reruns is not None else _reruns_safely(compiled, raw):
                entry = tape_mod.CallEntry(inputs, active_out, call.backward, call.higher_order, None, call.batched)
            else:       # (random draws: the recorded residuals only, first order)
                entry = tape_mod.CallEntry(inputs, active_out, call.backward, functools.partial(_no_rerun, self),
                                           None, None)
            for tape in tapes:
                if tape._should_record(inputs):
                    tape._record(entry)
        if compiled.tuple_output:
            return tuple(wrapped)
        return wrapped[0]


_UNPLANNED = object()       # (_call_planned: take the general path)


def _connected_positions(compiled):
    """The positions of the inputs of `compiled` that are active and that
    its outputs depend on (a tape entry's inputs)."""
    active = [i for i, m in enumerate(compiled.mask) if m]
    return [i for i, k in zip(active, compiled.connected) if k]


class _Plan:
    """call_on_tape's fast path for one key of positional arguments
    (_plan_key): their Program (without leaves), which of them are 0-d
    float64 Tensors run as scalars, the positions of the Tensors (`arrays`)
    and of the floating or complex ones (`tensors`, which may be active),
    its artefacts by mask of active inputs (those the Program caches), and
    for the masks whose forward sweep has run on the CPython path
    (`runs`): [artefact, its forward sweep, _connected_positions, the
    positions of the ndarray arguments its residuals held (copied before
    the sweep from then on, rather than found and replaced in its result
    by keep_values), _reruns_safely (no Generator among such arguments)]."""

    __slots__ = ("program", "scalar_0d", "arrays", "ndarrays", "tensors", "artefacts", "runs")

    def __init__(self, program, scalar_0d, key):
        self.program = program
        self.scalar_0d = scalar_0d
        self.arrays = [i for i, k in enumerate(key)
                       if k == "tensor0d" or type(k) is tuple and k[0].startswith("tensor")]
        self.ndarrays = [i for i, k in enumerate(key) if type(k) is tuple and k[0] in ("array", "carray")]
        self.tensors = [i for i, k in enumerate(key)
                        if k == "tensor0d" or type(k) is tuple and k[0] in ("tensor", "tensor_c")]
        self.artefacts = {}
        self.runs = {}


def _wrap_outputs(result, output_active):
    """The outputs of a forward sweep (`result` without its last element,
    the residuals) as the call returns them: arrays and numbers as
    Tensors, the floating ones of active outputs recorded; a container
    output's floating leaves recorded. Returns (wrapped, the recorded
    Tensors, their places: i, or (i, leaf k) of the container output i,
    {i: container output i} or None)."""
    wrapped = []
    active_out = []
    out_index = []
    trees = None
    for i, (o, is_active) in enumerate(zip(result[:-1], output_active)):
        if type(o) is np.ndarray or (isinstance(o, (np.ndarray, np.generic, float, int, complex))
                                     and not isinstance(o, bool)):
            t = Tensor(o)
            if is_active and t._value.dtype.kind in "fc":
                active_out.append(t)
                out_index.append(i)
            wrapped.append(t)
        elif is_active and type(o) in (list, tuple, dict):
            # a container output (a list of arrays, a gradient of a tuple): its floating leaves recorded
            leaves = tape_mod.flatten(o)
            for k, e in enumerate(leaves):
                if isinstance(e, (np.ndarray, np.generic, float)) and np.result_type(e).kind in "fc":
                    leaves[k] = Tensor(e)
                    active_out.append(leaves[k])
                    out_index.append((i, k))
            trees = trees or {}
            trees[i] = o
            wrapped.append(tape_mod.pack_as(o, leaves))
        else:
            wrapped.append(o)
    return wrapped, active_out, out_index, trees


class _Services:
    """What the composition root (srcgrad/__init__.py) installs from the
    layer above: `tape_jit(function)`, the Numba side of
    `@sg.function(jit=True)` (srcgrad/jit/tape.py, TapeJit); and
    `draws_random(artefact)`: may the artefact's forward sweep draw random
    numbers (jit/api.py, read from the linked code)?"""

    tape_jit = None
    draws_random = None


def _no_rerun(function, inputs, cotangents):
    """The higher-order VJP of a call that draws random numbers: refused
    (the generated VJP would run the forward sweep again, with other draws,
    and give the derivative at other values, silently)."""
    raise NotImplementedError(
        "srcgrad: %s draws random numbers, and differentiating its call a second time (a tape recording "
        "tape.gradient) would run it again with other draws. Draw the numbers outside the function and "
        "pass them in, or differentiate it once." % getattr(function, "__name__", function))


def _reruns_safely(compiled, raw):
    """May a vectorised Jacobian re-run this call's forward sweep (the
    batched generated code does)? Not when it draws random numbers (a
    Generator among the inputs, or NumPy's random functions in the code it
    reaches): the re-run would draw others, and the Jacobian would be taken
    at other values than the call's. Then the recorded residuals are used,
    one cotangent at a time. Cached on the artefact."""
    for a in raw:
        if isinstance(a, _GENERATORS):
            return False
    found = compiled.__dict__.get("_reruns_safely")
    if found is None:
        check = SERVICES.draws_random
        found = compiled.__dict__["_reruns_safely"] = check is not None and not check(compiled)
    return found


SERVICES = _Services()


def _named_lambda(fn, name):
    """The lambda `fn` as a function named `name` (the variable it is
    assigned to: generated code names derivatives after it): the same code,
    globals, defaults and closure cells, so it behaves as the lambda."""
    named = types.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    named.__kwdefaults__ = fn.__kwdefaults__
    named.__qualname__ = fn.__qualname__.replace("<lambda>", name)
    named.__module__, named.__doc__ = fn.__module__, fn.__doc__
    named.__dict__.update(fn.__dict__)
    return named


class GeneratedFunction(Function):
    """Generated code seen as a function to transform again: `fn` is the
    compiled Python function (its namespace: the user's globals, closure
    cells and the injected helpers), `tree` its gast FunctionDef, kept by
    the artefact that generated it."""

    derived = True

    def __init__(self, fn, tree, artefact, n_params=None):
        self.artefact = artefact        # keeps the base compilation alive while this one is
        super().__init__(fn, tree=tree)
        if n_params is not None:        # the other arguments are a derived program's leaves
            self.parsed.params = self.parsed.params[:n_params]
            self.parsed.n_positional = min(self.parsed.n_positional, n_params)
            P = inspect.Parameter
            self.signature = inspect.Signature([P(p, P.POSITIONAL_OR_KEYWORD) for p in self.parsed.params])


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


_F64 = np.dtype(np.float64)
_GENERATORS = (np.random.Generator, np.random.RandomState)
_SCALAR_0D = 0.0        # the stand-in for a 0-d float64 Tensor in a call's cache key (kind "scalar")


def _ones(shape):
    """Which axes of `shape` have length 1 (part of a Program's key)."""
    return tuple([d == 1 for d in shape])


# _plan_key's part for an array of a shape: {shape: (kind, _ones(shape))} per kind, filled as
# shapes come (a bounded memo: _plan_key reads it instead of building the tuple per call)
_KEY_PARTS = {"tensor": {}, "tensor_c": {}, "tensor_other": {}, "array": {}, "carray": {}}
_KEY_PARTS_SIZE = 4096


def _key_part(kind, shape):
    """(kind, _ones(shape)), the same tuple for the same shape."""
    parts = _KEY_PARTS[kind]
    part = parts.get(shape)
    if part is None:
        part = (kind, _ones(shape))
        if len(parts) >= _KEY_PARTS_SIZE:
            parts.clear()
        parts[shape] = part
    return part


def _plan_key(args):
    """The key of call_on_tape's fast path for positional `args`: per
    argument its Program key (`_kind_of`, a 0-d float64 Tensor as a
    scalar), whether it is a Tensor and, for a Tensor, whether it is
    floating, complex or neither (never active), from its type alone; None
    when an argument is anything else (a container, a function, a
    subclass...)."""
    key = []
    for a in args:
        t = type(a)
        if t is Tensor or t is Variable:
            v = a._value
            shape = v.shape
            if not shape and v.dtype is _F64:
                key.append("tensor0d")
            else:
                kind = v.dtype.kind
                kind = "tensor" if kind == "f" else "tensor_c" if kind == "c" else "tensor_other"
                key.append(_KEY_PARTS[kind].get(shape) or _key_part(kind, shape))
        elif t is np.ndarray:
            kind = "carray" if a.dtype.kind == "c" else "array"
            shape = a.shape
            key.append(_KEY_PARTS[kind].get(shape) or _key_part(kind, shape))
        elif t is float or t is int:
            key.append("scalar")
        else:
            return None
    return tuple(key)


def _padded(items, n):
    """`items` then None up to length n (a call's parameters, then its leaves)."""
    items = list(items)
    return items + [None] * (n - len(items))


class ProgramCache:
    """`Function._programs`: the Programs of one function by argument kinds,
    least recently used first, at most `size` of them. Kinds include the
    identity of functions and objects passed as arguments (a Program holds
    those objects), so a loop passing a new object on every call would
    otherwise keep every object and its generated code. An evicted Program
    is compiled again when its kinds come back."""

    size = 64

    def __init__(self, size=None):
        self._data = collections.OrderedDict()
        if size is not None:
            self.size = size

    def get(self, key):
        program = self._data.get(key)
        if program is not None:
            try:
                self._data.move_to_end(key)
            except KeyError:        # evicted by another thread meanwhile
                pass
        return program

    def __setitem__(self, key, program):
        self._data[key] = program
        self._data.move_to_end(key)
        while len(self._data) > self.size:
            self._data.popitem(last=False)

    def __len__(self):
        return len(self._data)

    def values(self):
        return list(self._data.values())
