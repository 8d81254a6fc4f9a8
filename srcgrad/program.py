"""Program: a function resolved for one set of argument kinds, compiling
one Artefact per (mode, mask of active inputs).

A Program runs `pipeline.specialise` once (names resolved to objects, the
Variables the code reads as globals and attributes found as extra inputs,
complex mode decided), hoists the leaves of the user functions it calls, and
compiles its artefacts on demand (`compile`), each on a copy of the
resolution (`front`). `is_current` is its validity check: a global or
closure cell rebound since resolution, here or in a compiled callee, makes
the function layer resolve again.

The front layer is recursive by nature: compiling f compiles the functions
f calls, which are Functions whose Programs compile their callees. This
module sits below function.py, so the three operations that build function
objects are handed to it once, through `SERVICES` (filled by
srcgrad/__init__.py, the package's composition root): `compilable(obj)`,
`field_method(cls, name)` and `generated_function(fn, tree, artefact,
n_params)`.
"""
import contextlib
import copy
import dataclasses
import gc
import inspect
import threading
import types
from typing import Callable

import gast
import numpy as np

from . import forward_mode, runtime
from .artefact import Artefact, Pending
from .custom import CustomCallee
from .errors import UnsupportedSyntaxError
from .rules import arrays as array_rules
from .syntax import ast_util
from .syntax.anno import Anno
from .transforms import chains, pipeline, resolve
from .transforms.context import CalleeInfo, Context


@dataclasses.dataclass
class Services:
    """The function layer's constructors, as the Program needs them."""
    compilable: Callable = None             # obj -> the srcgrad function compiled for a call of obj, or None
    field_method: Callable = None           # (cls, name) -> a record method's FieldMethod
    generated_function: Callable = None     # (fn, tree, artefact, n_params) -> a GeneratedFunction


SERVICES = Services()


def install(**services):
    """Fill SERVICES (srcgrad/__init__.py, once)."""
    for name, value in services.items():
        if not hasattr(SERVICES, name):
            raise TypeError("unknown service %r" % name)
        setattr(SERVICES, name, value)


class ContainerArgument:
    """Stands for an argument that a caller's generated code passes as a
    list, tuple or dict (`kinds`), when the values are not known: the
    callee is compiled with container cotangents for it."""

    def __repr__(self):
        return "<a container argument>"


CONTAINER = ContainerArgument()



def callee_info(obj):
    """The Context hook `callee`: what the compiler needs to know of a
    call of `obj` (transforms/context.py CalleeInfo), or None for what is
    not user code."""
    fn = SERVICES.compilable(obj)
    if fn is None:
        return None
    primal = fn.primal if fn.parsed.grad_of else None
    written = written_params(fn.parsed)
    keyed = fn.parsed.keyed_params        # (params["w"] = ...: a dict of the caller's, updated in place)
    return CalleeInfo(fn if fn.derived else fn.python_function, fn.signature, fn.n_outputs(), primal,
                      tuple(p for p in written if p not in keyed),
                      tuple(fn.parsed.grows_params) + tuple(p for p in written if p in keyed))


def written_params(parsed):
    """{parameter: statement} for the parameters a function writes into:
    element assignment (lowering's writes_params) and `x += v` on a
    parameter (NumPy writes an array in place; a float is rebound)."""
    out = dict(parsed.writes_params)
    for n in ast_util.walk(parsed.node):
        if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name) and n.target.id in parsed.params:
            out.setdefault(n.target.id, n)
    return out


def _callee_parsed(obj):
    fn = SERVICES.compilable(obj)
    return fn.parsed if fn is not None else None


@contextlib.contextmanager
def collector_paused():
    """Python's cyclic garbage collector off while a derivative compiles.
    A compilation allocates thousands of short-lived AST nodes, which start
    collections that traverse every long-lived object of the process (a
    third of a 50-line function's transform time); the cycles it leaves are
    collected after. Restored on exit; a nested compilation (a callee)
    leaves it to the outermost."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


_assumptions = [0]      # how many times output_dynamic assumed arrays for a recursive call

#: The mode of reverse-mode code whose recursive calls are reversed jointly:
#: the forward sweep calls the function, the reverse sweep its VJP, which
#: runs it again (Tapenade's joint call-tree reversal). Split residuals of a
#: recursion hold the residuals of the calls below (a tree of tuples, fine
#: in CPython, whose code is compiled in mode "reverse"); for Numba that is a
#: type containing itself. sg.jit compiles in this mode the code of
#: artefacts with `recursive_residuals`, when the code re-runs safely (no
#: print, no random draws: jit/api.py). The cost: a recursion of depth d
#: runs the code under each call once more per level above it.
JOINT_RECURSION = "reverse, joint recursion"


class _Res:
    """What Program.context reads of a resolution: its namer and callee leaves."""

    def __init__(self, namer, callee_leaves):
        self.namer, self.callee_leaves = namer, callee_leaves


def _copy_resolution(res):
    """A copy whose AST can be transformed; resolved objects are shared."""
    new = copy.copy(res)
    new.node = ast_util.clone(res.node)
    new.namer = res.namer.copy()
    return new


_hoisting = threading.local()
_MISSING = object()
_CONTAINERS = "<container parameters>"      # a key of Program examples: parameters that are containers
_SCALARS = "<scalar parameters>"            # ... and parameters that are Python floats or ints
_PATTERNS = "<shape patterns>"              # ... and {array parameter: which of its axes have length 1}


def _unread_params(op, params):
    """The callee's parameters bound to arguments the caller never reads
    after the call (Anno.DEAD_ARGS on the call: lower/views.py): a write
    into them is invisible, so compiled code, which does not write, means
    what Python means (`vx, vy = project(vx_new, vy_new)` with project
    doing `vx -= ...`)."""
    found = Anno.DEAD_ARGS.of(op.node, None) if op.node is not None else None
    if found is None:
        return set()
    positions, keywords = found
    return {params[i] for i in positions if i < len(params)} | set(keywords)


def _holds_complex(obj, depth=2):
    """Is `obj` a complex number or array, or (to `depth` levels) a list,
    tuple or dict holding one, or an object with one among its attributes?
    Modules, functions and classes are not looked into."""
    if isinstance(obj, complex) or (isinstance(obj, (np.ndarray, np.generic)) and obj.dtype.kind == "c"):
        return True
    if depth <= 0 or isinstance(obj, (str, bytes, type, types.ModuleType, types.FunctionType,
                                      types.BuiltinFunctionType)):
        return False
    if isinstance(obj, (list, tuple)):
        return any(_holds_complex(e, depth - 1) for e in obj[:64])
    if isinstance(obj, dict):
        return any(_holds_complex(e, depth - 1) for e in list(obj.values())[:64])
    attributes = getattr(obj, "__dict__", None)
    if isinstance(attributes, dict) and not callable(obj):
        return any(_holds_complex(e, depth - 1) for e in list(attributes.values())[:64])
    return False


class Program:
    """A resolved function for one set of argument kinds; compiles per
    (mode, mask)."""

    def __init__(self, function, examples, complex_mode=False, leaves=()):
        self.function = function
        self.parsed = function.parsed
        self.namespace = resolve.Namespace(self.parsed.func)
        examples = dict(examples)
        containers = examples.pop(_CONTAINERS, ())
        scalars = examples.pop(_SCALARS, ())
        patterns = examples.pop(_PATTERNS, {})
        self.resolution, builds_complex = pipeline.specialise(
            self.parsed, examples, SERVICES.field_method, _callee_parsed)
        # (a complex constant the code reads, from a global, a closure cell or an object passed in, makes
        # complex values the argument kinds do not show: the adjoints keep TF's conj())
        self.complex_mode = (complex_mode or builds_complex
                             or any(_holds_complex(v) for v in self.resolution.free.values())
                             or any(_holds_complex(v) for v in examples.values()))
        self.resolution.containers = set(containers)
        self.resolution.patterns = dict(patterns)       # (the key holds them: transforms/shapes.py)
        # parameters given Python floats or ints, and the module or closure names bound to them
        # (read as constants: the code is specialised to 0-d values; rebinding one recompiles, is_current)
        self.resolution.scalars = set(scalars) | {n for n, v in self.resolution.free.items()
                                                  if type(v) in (float, int)}
        self.resolution.leaves[:0] = list(leaves)     # a derived function's inputs beyond its parameters
        self.free = dict(self.resolution.free)
        self.callee_programs = []       # what the compiled code calls (staleness is checked through them)
        self._hoist_callee_leaves()
        self.resolution.walked = None   # (read: the copies the passes change are walked anew)
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
        hoisted = {}
        busy = _hoisting.__dict__.setdefault("busy", set())
        me = self.parsed.func
        busy.add(me)
        walked = res.walked
        try:
            for n in walked[1] if walked is not None and walked[0] is res.node else ast_util.walk(res.node):
                obj = Anno.CALLEE.of(getattr(n, "func", None)) if isinstance(n, gast.Call) else None
                fn = SERVICES.compilable(obj) if obj is not None and not inspect.ismethod(obj) else None
                if fn is None or fn.derived:
                    continue
                user = fn.python_function
                if user in busy or user in res.callee_leaves:
                    continue
                try:
                    program = fn.program_for(None)
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
        checks = self.__dict__.get("_checks")
        if checks is None:
            checks = self._checks = self._free_checks()
        for where, key, obj in checks:
            if where is None:                   # a builtin: not shadowed by a global since
                if key in self.namespace.globals:
                    return False
            elif where.__class__ is dict:
                if where.get(key, _MISSING) is not obj:
                    return False
            else:
                try:
                    if where.cell_contents is not obj:
                        return False
                except ValueError:
                    return False
        if self.resolution.chains and not self._chains_current():
            return False
        if self.function.is_stale():
            return False
        if not self.callee_programs:
            return True
        seen = _seen if _seen is not None else set()
        seen.add(id(self))
        return all(p.is_current(seen) for p in self.callee_programs if id(p) not in seen)

    def _chains_current(self):
        """Does every attribute and item chain the resolution walked (L.act,
        D["f"], self.helper, self.W, mymodule.g) still give what it gave
        (chains.same_resolution)? A function-valued attribute swapped, a
        method monkeypatched on the class, a module reloaded or an array
        attribute turned into a Variable make the code stale."""
        res = self.resolution
        for (kind, root, steps), old in res.chains.items():
            if kind == "param":
                value = res.examples.get(root, _MISSING)
            else:
                found, value = self.namespace.lookup(root)
                if not found:
                    return False
            try:
                for step, key in steps:
                    value = getattr(value, key) if step == "attr" else value[key]
            except Exception:
                if old is chains.ABSENT:
                    continue
                return False
            if not chains.same_resolution(old, value):
                return False
        return True

    def _free_checks(self):
        """(where, key, object) per free name: a closure cell, the globals
        dict, or None for a builtin (which a later global would shadow)."""
        ns = self.namespace
        checks = []
        for name, obj in self.free.items():
            if name in ns.cells:
                checks.append((ns.cells[name], name, obj))
            elif name in ns.globals:
                checks.append((ns.globals, name, obj))
            else:
                checks.append((None, name, obj))
        return checks

    def context(self, res, mode, mask):
        """The Context of one compilation of this program (mode "reverse",
        "batched" (reverse on stacks of cotangents), "batched@k" (the same with
        a cotangent for output k only: the others are symbolic zeros, what
        the Jacobian of one output of a tuple needs), JOINT_RECURSION
        (reverse, recursive calls reversed jointly: sg.jit's) or
        "forward")."""
        batched = mode.startswith("batched")
        seeded = (int(mode.split("@")[1]),) if "@" in mode else None
        mode = "batched" if batched else mode       # (the callees': all their outputs get cotangents)
        joint = mode == JOINT_RECURSION             # (and the callees', compiled in this mode too)
        return Context(parsed=self.parsed, namespace=self.namespace, namer=res.namer, inputs=self.inputs,
                       mode="reverse" if batched or joint else mode, batched=batched, seeded=seeded,
                       joint_recursion=joint,
                       mask=tuple(mask), complex_mode=self.complex_mode, callee=callee_info,
                       callee_outputs=lambda op, m: self.compile_callee(op, m, mode).output_active,
                       vjp_callee=lambda op, m: self.compile_callee(op, m, mode).joint_fn,
                       split_callee=lambda op, m: self.compile_callee(op, m, mode),
                       jvp_callee=lambda op, m: self.compile_callee(op, m, "forward"),
                       callee_dynamic=lambda op: self.callee_program(op).output_dynamic(),
                       callee_leaves=res.callee_leaves, transpose_jvp=forward_mode.transpose_jvp_packed)

    def front(self, mode="reverse", mask=None):
        """The passes before differentiation, on a copy of the resolution:
        (fdef in ANF with its kinds, ctx)."""
        mask = mask if mask is not None else (False,) * len(self.inputs)
        # The front passes read the mode nowhere and the mask only for the active inputs of a user's
        # vector space (anf.py's facts.vector_inputs): without such inputs, the ANF tree output_dynamic
        # made serves the first compilation (once: differentiation changes it).
        spare = self.__dict__.pop("_spare_front", None)
        if spare is not None and not self._vector_inputs(mask):
            fdef, facts, res = spare
            ctx = self.context(res, mode, mask)
            ctx.facts = facts
            return fdef, ctx
        res = _copy_resolution(self.resolution)
        ctx = self.context(res, mode, mask)
        fdef = pipeline.front(res, ctx)
        if "_output_dynamic" not in self.__dict__ and not ctx.facts.vector_inputs:
            # (nor do the kinds: output_dynamic need not run the front passes again)
            self._output_dynamic = self._outputs_dynamic(fdef, ctx)
        return fdef, ctx

    def _vector_inputs(self, mask):
        """Are any of the active inputs of `mask` values of a user's vector space?"""
        examples = self.resolution.examples
        return any(m and runtime.vector_object(examples.get(p)) for p, m in zip(self.inputs, mask))

    @staticmethod
    def _outputs_dynamic(fdef, ctx):
        return tuple(o in ctx.facts.dynamic for o in ast_util.returned_names(fdef))

    def output_dynamic(self):
        """Which outputs may be lists, tuples or dicts (for callers' kinds)."""
        found = self.__dict__.get("_output_dynamic")
        if found is None:
            if getattr(self, "_finding_kinds", False):
                _assumptions[0] += 1
                return (False,) * self.function.n_outputs()     # recursion: assume arrays
            self._finding_kinds = True
            assumed = _assumptions[0]
            try:
                fdef, ctx = self.front()
            finally:
                self._finding_kinds = False
            found = self._output_dynamic = self._outputs_dynamic(fdef, ctx)
            if "_spare_front" not in self.__dict__ and _assumptions[0] == assumed:
                # (kept for the first compilation, unless a recursion's assumption shaped its kinds)
                self._spare_front = (fdef, ctx.facts, _Res(ctx.namer, ctx.callee_leaves))
        return found

    def generated_function(self, fn, tree, artefact, n_params=None):
        """The compilable form of `fn`, a function generated by `artefact`
        from `tree` (its first `n_params` arguments are parameters, the
        others the leaves of a derived program): a GeneratedFunction."""
        return SERVICES.generated_function(fn, tree, artefact, n_params)

    def compile(self, mask, mode="reverse"):
        """The Artefact for `mask` (which inputs are active) and
        `mode`, cached; a recursive call met while compiling gets a
        `Pending` stand-in."""
        key = (mode, tuple(map(bool, mask)))
        c = self._compiled.get(key)
        if c is None:
            with self._lock:
                c = self._compiled.get(key)
                if c is None:
                    if key in self._compiling:
                        return Pending(self, key[1], mode)     # recursion: bound when compiled
                    self._compiling.add(key)
                    try:
                        with collector_paused():
                            c = Artefact(self, key[1], mode)
                    finally:
                        self._compiling.discard(key)
                    self._compiled[key] = c
        return c

    def callee_program(self, op):
        """The Program of the user function called by `op`, for the kinds of
        its arguments at the call (functions, the receiver, containers)."""
        fn = SERVICES.compilable(op.callee)
        if op.spec is not None:
            fn = fn.specialize(*op.spec)
        examples = dict(op.examples or {})
        if op.receiver is not None:
            examples[fn.parsed.params[0]] = op.receiver
        names = list(fn.parsed.params)
        for p, dynamic in zip(names, op.arg_dynamic):
            if dynamic and p not in examples:
                examples[p] = CONTAINER
        if examples:
            params = dict.fromkeys(names)
            params.update({k: v for k, v in examples.items() if k in params})
            return fn.program_for(params, self.complex_mode)
        return fn.program_for(None, self.complex_mode)

    def compile_callee(self, op, mask, mode="reverse"):
        """Compile the user function called by `op` for the active `mask`."""
        if op.custom:
            return CustomCallee(op.callee, mask, op.n_outputs, mode)
        program = self.callee_program(op)
        # (and the arguments tested before the call to share no memory with what is still used)
        unread = _unread_params(op, program.parsed.params) | set(op.checked)
        written = {p: s for p, s in written_params(program.parsed).items()
                   if p not in program.resolution.scalars       # (a float parameter's += rebinds it)
                   and p not in unread}     # (the caller never reads that array again: the write is not seen)
        if written:
            name, stmt = next(iter(written.items()))
            filename, lineno, col = program.parsed.origin(stmt)
            raise UnsupportedSyntaxError(
                "writing into %s, a parameter of %s, which is called from differentiated code (NumPy would "
                "change the caller's array too, compiled code does not)" % (name, program.parsed.node.name),
                filename, lineno, col, "copy it first in %s: %s = %s.copy()" % (program.parsed.node.name, name, name),
                # a dict or list written into (bn_param["running_mean"] = ...) runs right op by op; an
                # array written into (x[i] = v, x += v) would not: the tape's Tensors are immutable
                op_by_op=(name in program.resolution.containers
                          or isinstance((op.examples or {}).get(name), (dict, list))))
        grown = program.parsed.grows_params
        if grown:
            name, call = next(iter(grown.items()))
            filename, lineno, col = program.parsed.origin(call)
            raise UnsupportedSyntaxError(
                "%s.%s(...) on %s, a parameter of %s, which is called from differentiated code (the caller's "
                "list or dict changes too, compiled code does not)" % (name, call.func.attr, name,
                                                                       program.parsed.node.name),
                filename, lineno, col, "return the new value instead")          # (right op by op)
        chain = [leaf for leaf in program.leaves if leaf.kind != "free"]
        if chain:
            leaf = chain[0]
            raise UnsupportedSyntaxError(
                "a Variable read as a global or attribute (%s) inside a called function" % leaf.text,
                program.parsed.filename, program.parsed.firstlineno, None,
                "pass it as an argument, or decorate the outer function only")
        if program not in self.callee_programs:
            self.callee_programs.append(program)
        return program.compile(mask, mode)

    def numpy_only_calls(self, namespace=None, _seen=None):
        """[(name, filename, lineno)]: the calls, here and in the user
        functions the compiled code calls, of functions whose derivative
        rules are NumPy-only: for arrays with NumPy dispatch (`namespace`
        None: Dask, CuPy) those of `rules.arrays.NUMPY_ONLY`, which would
        convert them to NumPy or fail; for another array namespace (PyTorch,
        array_api_strict), every rule not measured to run there
        (`rules.arrays.array_api_unsupported`). Computed once per kind."""
        key = "_numpy_only" if namespace is None else "_numpy_only_%s" % getattr(namespace, "__name__", id(namespace))
        found = self.__dict__.get(key)
        if found is None:
            found = []
            for stmt in ast_util.walk(self.resolution.node):
                if not isinstance(stmt, gast.stmt) or isinstance(stmt, gast.FunctionDef):
                    continue
                # (a compound statement: its header only; its body's statements come on their own)
                parts = [stmt]
                if hasattr(stmt, "body"):
                    parts = [getattr(stmt, f, None) for f in ("test", "iter", "items")]
                    parts = [p for v in parts if v is not None for p in (v if isinstance(v, list) else [v])]
                for n in (n for part in parts for n in ast_util.walk(part)):
                    if isinstance(n, gast.Call):
                        callee = Anno.CALLEE.of(n.func)
                        if namespace is None:
                            name = array_rules.numpy_only(callee)
                        elif Anno.METHOD.exists(n.func):
                            name = array_rules.array_api_method_unsupported(Anno.METHOD.of(n.func))
                        else:
                            name = array_rules.array_api_unsupported(callee, namespace)
                        if name is not None:
                            filename, lineno, _ = self.parsed.origin(stmt)
                            if (name, filename, lineno) not in found:
                                found.append((name, filename, lineno))
            self.__dict__[key] = found
        seen = _seen if _seen is not None else set()
        seen.add(id(self))
        out = list(found)
        for p in self.callee_programs:
            if id(p) not in seen:
                out += p.numpy_only_calls(namespace, seen)
        return out
