"""@function: functions the compiler transforms, the pass list, the cache.

The pipeline, one flat list per stage (each pass is `transform(node, ctx)`
and requires the ones before it):

    at decoration          parse -> check (the fence: unsupported syntax
                           raises before any user code runs) -> lower
                           (break/continue/return -> flags, loops -> index
                           loops, x[i] = v -> setitem, local defs inlined)
    per argument kinds     resolve (names -> objects, leaves such as self.kernel)
    per mask and mode      anf (one op per statement, SSA names) -> activity
                           -> reverse | forward (rules inlined) -> codegen

A `Program` holds the resolution for one set of argument kinds (array-like,
complex, or an object's type) and caches one `Compiled` per (mode, mask of
active inputs): the single artefact type, holding the generated functions
and their gast ASTs. Generated code only calls functions the compiler can
transform again, so a `Compiled`'s joint (VJP) or JVP function is itself a
`Function` (`GeneratedFunction`, built from the kept AST, never from
source text): derivatives of derivatives are compiled like any user code,
at every order. A call that finds a global rebound since it was resolved
(here or in a function the compiled code calls) resolves again instead of
running stale code.
"""
import builtins
import collections
import contextlib
import copy
import functools
import gc
import inspect
import linecache
import os
import sys
import threading
import types
import weakref

import gast
import numpy as np

from . import forward_mode
from .runtime import syntax as runtime_syntax
from . import tape as tape_mod
from .errors import NoRuleError, UnsupportedSyntaxError
from .rules import registry
from .tensor import Tensor, is_differentiable_dtype, unwrap_nested
from .syntax import ast_util, naming
from .transforms import (activity, anf, check, codegen, forward, inplace, kinds, liveness, lower, optimize, parse,
                         resolve, reverse)
from .transforms.context import CalleeInfo, Context


def _arraylike(v):
    return isinstance(v, (Tensor, np.ndarray, np.generic, int, float, complex, bool))


def _is_complex(v):
    """Is `v` (an array, Tensor or number) complex? Without NumPy dispatch."""
    dtype = getattr(v, "dtype", None)
    return dtype.kind == "c" if dtype is not None else isinstance(v, complex)


def _mentions_complex(node):
    """Does the function build complex values itself (a complex literal,
    np.complex128, astype(complex), np.fft...)?"""
    for n in ast_util.walk(node):
        if isinstance(n, gast.Constant) and isinstance(n.value, complex):
            return True
        word = n.id if isinstance(n, gast.Name) else n.attr if isinstance(n, gast.Attribute) else ""
        if "complex" in word or word in _COMPLEX_WORDS:
            return True
    return False


# functions whose results are complex for real arguments (and complex dtypes)
_COMPLEX_WORDS = {"fft", "csingle", "cdouble", "clongdouble", "eig", "eigvals", "roots"}


def _callees_mention_complex(node):
    """Does a user function that `node` (resolved) calls build complex values
    (_mentions_complex)? The caller then keeps the conj() of complex rules
    too: its values downstream of the call may be complex. (One level: a
    callee's own callees are checked when the callee is compiled, and its
    results then carry complex dtypes the caller's kinds do not see; see
    the README's complex section.)"""
    seen = set()
    for n in ast_util.walk(node):
        obj = getattr(getattr(n, "func", None), "_sg_callee", None) if isinstance(n, gast.Call) else None
        try:
            fn = compilable(obj) if obj is not None else None
        except Exception:       # (reported where the call is compiled)
            fn = None
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        parsed = getattr(fn, "_parsed", None)
        if parsed is not None and _mentions_complex(parsed.node):
            return True
    return False


# ------------------------------------------------------------------ kinds

def _array_kind(v):
    return "carray" if v.dtype.kind == "c" else "array"


_KIND_BY_TYPE = {float: "scalar", int: "scalar", complex: "array", bool: "array", type(None): "array",
                 list: list, tuple: tuple, dict: dict}


def _kind_of(v):
    """One argument's part of a Program's cache key (see Function._kinds)."""
    kind = _KIND_BY_TYPE.get(type(v))
    if kind is not None:
        return kind
    if isinstance(v, (Tensor, np.ndarray, np.generic)):
        return _array_kind(v)
    if v is CONTAINER:
        return "container"
    if inspect.ismethod(v):     # a new object at each access: keyed by its function and instance
        return ("method", id(v.__func__), id(v.__self__))
    return (type(v), id(v))


# ------------------------------------------------------------------ callees

class ContainerArgument:
    """Stands for an argument that a caller's generated code passes as a
    list, tuple or dict (`kinds`), when the values are not known: the
    callee is compiled with container cotangents for it."""

    def __repr__(self):
        return "<a container argument>"


CONTAINER = ContainerArgument()


def compilable(obj):
    """The srcgrad function object the compiler transforms when generated or
    user code calls `obj`, or None (a primitive with a rule, NumPy, a
    library function, an object that is not a function)."""
    if isinstance(obj, Function):
        return obj
    if isinstance(obj, BoundFunction):
        return obj.function
    derived = getattr(obj, "__srcgrad_function__", None)      # sg.grad(f), generated code
    if derived is not None:
        return derived()
    if inspect.ismethod(obj):
        # a bound method of the user's (obj.method passed on, or called by a name)
        if registry.adjoint_rule(obj) is not None or registry.is_nondiff(obj) or compilable(obj.__func__) is None:
            return None
        return as_function(obj)
    code = getattr(obj, "__code__", None)
    if code is None or getattr(obj, "__srcgrad_raw__", None) is not None:
        return None
    if registry.adjoint_rule(obj) is not None or registry.is_nondiff(obj):
        return None             # a rule takes precedence over the source
    module = getattr(obj, "__module__", "") or ""
    if module.startswith("srcgrad.") and not module.startswith("srcgrad.rules."):
        return None
    if code.co_filename.startswith(_SRCGRAD_DIR) and not code.co_filename.startswith(_RULES_DIR):
        return None             # srcgrad's own wrappers (custom_gradient's: functools.wraps copies __module__)
    if _is_library(obj, module):
        return None             # needs a rule: NoRuleError names it where it meets a differentiated value
    return as_function(obj)


_SITE_DIRS = ("site-packages", "dist-packages")


def _is_library(obj, module):
    """Is `obj` a function of an installed library (NumPy, SciPy, anything
    under site-packages) or of the standard library? srcgrad compiles the
    user's code, and treats library functions as primitives: a rule, or
    NoRuleError. (Decorating one with @sg.function compiles it anyway.)"""
    top = module.partition(".")[0]
    if top in ("numpy", "scipy") or top in sys.stdlib_module_names:
        return True
    filename = getattr(getattr(obj, "__code__", None), "co_filename", "") or ""
    if any(part in filename for part in _SITE_DIRS):
        return not filename.startswith(_SRCGRAD_DIR)
    return False


_SRCGRAD_DIR = os.path.dirname(os.path.abspath(__file__))
_RULES_DIR = os.path.join(_SRCGRAD_DIR, "rules")


def _callee_info(obj):
    fn = compilable(obj)
    if fn is None:
        return None
    primal = fn.primal if getattr(fn._parsed, "grad_of", False) else None
    return CalleeInfo(fn.python_function if type(fn) is Function else fn, fn._signature, fn.n_outputs(), primal)


# ------------------------------------------------------------------ artefacts

def _build(fdefs, injected, func, title, defaults, origin):
    """codegen.build, and the generated source leaves `linecache` (where
    codegen registers it for tracebacks) when the functions are collected,
    so that dropped functions do not leave their generated code behind."""
    fns = codegen.build(fdefs, injected, func, title, defaults, origin)
    for fn in fns.values():
        weakref.finalize(fn, linecache.cache.pop, fn.__srcgrad_filename__, None)
    return fns


class Compiled:
    """The generated code for one (program, mode, mask of active inputs).

    Reverse mode: `fwd(*inputs) -> (*outputs, residuals)` (the tape's
    forward), `bwd(residuals, *cotangents) -> tuple` (its backward) and
    `joint(*inputs, *cotangents) -> cotangents` (forward and reverse sweeps
    in one function: what sg.grad runs and sg.source shows; also the VJP
    that generated code calls for a call of this function, and what is
    transformed again for higher derivatives). Forward mode: `jvp(*inputs,
    *tangents of the active inputs) -> (outputs, output tangents)`.
    `trees` maps each generated function's name to its gast FunctionDef.
    """

    def __init__(self, program, mask, mode="reverse"):
        self.program = program
        self.mask = tuple(mask)
        self.mode = mode
        parsed = program.parsed
        inputs = program.inputs
        self.inputs = inputs
        self.active_inputs = [n for n, m in zip(inputs, self.mask) if m]
        self.origin = (parsed.filename, parsed.firstlineno)
        self._derived = {}
        fdef, ctx = program.front(mode, self.mask)
        ret = fdef.body[-1]
        self.tuple_output = isinstance(ret.value, gast.Tuple)
        self.outputs = [e.id for e in ret.value.elts] if self.tuple_output else [ret.value.id]
        ctx.inputs = inputs
        ctx.active = activity.analyze(fdef, self.active_inputs, self.outputs, ctx.callee_outputs)
        name = parsed.node.name
        title = "%s %s (%s)" % (name, {"forward": "jvp", "batched": "batched vjp"}.get(mode, "vjp"),
                                ", ".join(self.active_inputs))
        if mode == "forward":
            self.output_active = tuple(o in ctx.active or o in self.active_inputs for o in self.outputs)
            jvp_def, injected = forward.transform(fdef, ctx)
            fns = _build([jvp_def], injected, program.namespace.func, title, {}, self.origin)
            self.jvp_fn = fns[jvp_def.name]
            self.trees = {jvp_def.name: jvp_def}
            self._shown = jvp_def
            self._mark(self.jvp_fn, jvp_def)
            return
        self.output_active = tuple(o in ctx.active for o in self.outputs)
        sweeps = reverse.transform(fdef, ctx)
        fwd, bwd, joint, self.residuals, self.connected = codegen.assemble(
            name, inputs, self.active_inputs, sweeps)
        self.sweeps = sweeps
        self._in_place(joint)
        defaults = {joint.name: tuple(1.0 for _ in self.outputs)}
        fns = _build([joint], sweeps.injected, program.namespace.func, title, defaults, self.origin)
        self.joint_fn = fns[joint.name]
        self._split = (fwd, bwd, title)     # compiled when a tape first needs them
        self.trees = {joint.name: joint}
        self.injected = sweeps.injected
        self._shown = joint
        self._mark(self.joint_fn, joint)

    def _in_place(self, fdef):
        """Element assignments whose old value is dead, in place (inplace.py)."""
        gen = self.sweeps.generator
        injected, scope = self.sweeps.injected, self.program.namespace.func.__globals__

        def lookup(name):
            return injected[name] if name in injected else scope.get(name, getattr(builtins, name, None))
        sets = self.__dict__.get("_sets")
        if sets is None:
            sets = self._sets = liveness.Sets()   # (uses/defs per statement, for all the trees)
        inplace.update_in_place(fdef, lookup, gen.inject, gen.dynamic, sets)
        fdef.body = optimize.collapse_temporaries(fdef.body, set(), sets)
        if not fdef.name.endswith("_fwd"):       # (the split forward returns what it keeps)
            fdef.body = optimize.free_dead(fdef.body, [a.id for a in fdef.args.args], sets)

    def _compile_split(self):
        fwd, bwd, title = self._split
        self._in_place(fwd)
        self._in_place(bwd)
        fns = _build([fwd, bwd], self.sweeps.injected, self.program.namespace.func, title + " split", {},
                     self.origin)
        self.__dict__["fwd"] = fns[fwd.name]
        self.__dict__["bwd_fn"] = fns[bwd.name]

    def _split_function(self, key):
        """The split sweep `key` ("fwd" or "bwd_fn"), compiled on first use
        (sg.grad needs only the joint)."""
        found = self.__dict__.get(key)
        if found is None:
            self._compile_split()
            found = self.__dict__[key]
        return found

    fwd = property(lambda self: self._split_function("fwd"), doc="The split forward sweep.")
    bwd_fn = property(lambda self: self._split_function("bwd_fn"), doc="The split reverse sweep.")

    @property
    def source(self):
        """The readable source of the joint (reverse) or JVP (forward)
        function, unparsed when asked for."""
        found = self.__dict__.get("_source")
        if found is None:
            found = self._source = ast_util.to_source(self._shown)
        return found

    def _mark(self, fn, tree, n_params=None):
        """Let the compiler find this artefact (and its AST) from `fn`: as
        a GeneratedFunction, whose first `n_params` arguments are its
        parameters (all by default; the others are the leaves of a derived
        program)."""
        ref = weakref.ref(self)
        cache = {}

        def function():
            f = cache.get("f")
            if f is None:
                artefact = ref()
                if artefact is None:
                    raise RuntimeError("srcgrad: the code generated for %s is gone" % fn.__name__)
                f = cache["f"] = GeneratedFunction(fn, artefact.trees[tree.name], artefact, n_params)
            return f
        fn.__srcgrad_function__ = function
        fn.__srcgrad_artefact__ = ref

    def gradient_function(self, n_params, wrt, preserve_result):
        """The generated function of `sg.grad(f, wrt, preserve_result)` for
        this artefact (its mask selects `wrt`): a Python function of f's
        inputs whose kept AST is transformed for higher derivatives."""
        key = (tuple(wrt), preserve_result)
        fn = self._derived.get(key)
        if fn is None:
            with self.program._lock:
                fn = self._derived.get(key)
                if fn is None:
                    order = [self.inputs[i] for i in wrt]
                    name = self.program.parsed.node.name
                    tree = codegen.gradient_def(self.sweeps, name, self.inputs, self.active_inputs, order,
                                                preserve_result)
                    self._in_place(tree)
                    title = "%s gradient (%s)" % (name, ", ".join(order))
                    fns = _build([tree], self.sweeps.injected, self.program.namespace.func, title, {},
                                        self.origin)
                    fn = fns[tree.name]
                    self.trees[tree.name] = tree
                    self._mark(fn, tree, n_params)
                    self._derived[key] = fn
        return fn

    @staticmethod
    def run(fn, *args):
        """Call generated function `fn`; an exception gets a note naming the
        user's file and line, and exits the `with` blocks it left open."""
        level = runtime_syntax.depth()
        try:
            return fn(*args)
        except Exception as exc:
            if runtime_syntax.depth() > level:
                runtime_syntax.unwind(level, exc)
            raise codegen.annotate(exc, fn)

    def bwd(self, residuals, *cotangents):
        return self.run(self.bwd_fn, residuals, *cotangents)

    def joint(self, *args):
        result = self.run(self.joint_fn, *args)
        return result if len(self.active_inputs) != 1 else (result,)

    def jvp(self, *args):
        return self.run(self.jvp_fn, *args)


@contextlib.contextmanager
def _collector_paused():
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


class _Pending:
    """A recursive call's compiled callee, while it is being compiled: its
    generated functions are looked up when called (and when transformed
    again). Every output counts as active."""

    def __init__(self, program, mask, mode):
        self.program, self.mask, self.mode = program, mask, mode
        n = program.function.n_outputs()
        self.tuple_output = n > 1
        self.output_active = (True,) * n
        self.joint_fn = _Deferred(self, "joint_fn")
        self.jvp_fn = _Deferred(self, "jvp_fn")

    def resolve(self):
        return self.program._compiled[(self.mode, self.mask)]


class _Deferred:
    """Calls `attr` of the Compiled a _Pending stands for."""

    def __init__(self, pending, attr):
        self.pending, self.attr = pending, attr
        self.__name__ = pending.program.parsed.node.name + ("_vjp" if attr == "joint_fn" else "_jvp")

    def __call__(self, *args):
        fn = getattr(self.pending.resolve(), self.attr)
        if self.attr == "jvp_fn":
            outs, douts = fn(*args)
            zeros = _runtime_zeros_tree
            if not self.pending.tuple_output:
                return outs, douts if douts is not None else zeros(outs)
            return outs, tuple(d if d is not None else zeros(o) for o, d in zip(outs, douts))
        return fn(*args)

    def __srcgrad_function__(self):
        return getattr(self.pending.resolve(), self.attr).__srcgrad_function__()


def _runtime_zeros_tree(x):
    from .runtime import zeros_tree
    return zeros_tree(x)


def _copy_resolution(res):
    """A copy whose AST can be transformed; resolved objects are shared."""
    new = copy.copy(res)
    new.node = ast_util.clone(res.node)
    new.namer = copy.deepcopy(res.namer)
    return new


# ------------------------------------------------------------------ programs

_hoisting = threading.local()
_MISSING = object()
_CONTAINERS = "<container parameters>"      # a key of Program examples: parameters that are containers
_SCALARS = "<scalar parameters>"            # ... and parameters that are Python floats or ints


class Program:
    """A resolved function for one set of argument kinds; compiles per
    (mode, mask)."""

    def __init__(self, function, examples, complex_mode=False, leaves=()):
        self.function = function
        self.parsed = function._parsed
        self.complex_mode = complex_mode or _mentions_complex(self.parsed.node)
        self.namespace = resolve.Namespace(self.parsed.func)
        examples = dict(examples)
        containers = examples.pop(_CONTAINERS, ())
        scalars = examples.pop(_SCALARS, ())
        self.resolution = resolve.resolve(self.parsed, examples, field_method=field_method)
        if not self.complex_mode and _callees_mention_complex(self.resolution.node):
            self.complex_mode = True
        self.resolution.containers = set(containers)
        self.resolution.scalars = set(scalars)
        self.resolution.leaves[:0] = list(leaves)     # a derived function's inputs beyond its parameters
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
            for n in ast_util.walk(res.node):
                obj = getattr(getattr(n, "func", None), "_sg_callee", None) if isinstance(n, gast.Call) else None
                fn = compilable(obj) if obj is not None and not inspect.ismethod(obj) else None
                if fn is None or type(fn) is not Function:
                    continue
                user = fn.python_function
                if user in busy or user in res.callee_leaves:
                    continue
                try:
                    program = fn._program_for(None)
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
        if not self.callee_programs:
            return True
        seen = _seen if _seen is not None else set()
        seen.add(id(self))
        return all(p.is_current(seen) for p in self.callee_programs if id(p) not in seen)

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
        "batched" (reverse on stacks of cotangents) or "forward")."""
        batched = mode == "batched"
        return Context(parsed=self.parsed, namespace=self.namespace, namer=res.namer,
                       mode="reverse" if batched else mode, batched=batched,
                       mask=tuple(mask), complex_mode=self.complex_mode, callee=_callee_info,
                       callee_outputs=lambda op, m: self.compile_callee(op, m, mode).output_active,
                       vjp_callee=lambda op, m: self.compile_callee(op, m, mode).joint_fn,
                       jvp_callee=lambda op, m: self.compile_callee(op, m, "forward"),
                       callee_dynamic=lambda op: self.callee_program(op).output_dynamic(),
                       callee_leaves=getattr(res, "callee_leaves", {}), transpose_jvp=forward_mode.transpose_jvp)

    def front(self, mode="reverse", mask=None):
        """The passes before differentiation, on a copy of the resolution:
        (fdef in ANF with its kinds, ctx)."""
        res = _copy_resolution(self.resolution)
        ctx = self.context(res, mode, mask if mask is not None else (False,) * len(self.inputs))
        fdef = anf.transform(res, ctx)
        kinds.transform(fdef, ctx)
        return fdef, ctx

    def output_dynamic(self):
        """Which outputs may be lists, tuples or dicts (for callers' kinds)."""
        found = getattr(self, "_output_dynamic", None)
        if found is None:
            if getattr(self, "_finding_kinds", False):
                return (False,) * self.function.n_outputs()     # recursion: assume arrays
            self._finding_kinds = True
            try:
                fdef, _ = self.front()
            finally:
                self._finding_kinds = False
            ret = fdef.body[-1]
            outs = [e.id for e in ret.value.elts] if isinstance(ret.value, gast.Tuple) else [ret.value.id]
            found = self._output_dynamic = tuple(o in fdef._sg_dynamic for o in outs)
        return found

    def compile(self, mask, mode="reverse"):
        """The Compiled artefact for `mask` (which inputs are active) and
        `mode`, cached; a recursive call met while compiling gets a
        `_Pending` stand-in."""
        key = (mode, tuple(bool(m) for m in mask))
        c = self._compiled.get(key)
        if c is None:
            with self._lock:
                c = self._compiled.get(key)
                if c is None:
                    if key in self._compiling:
                        return _Pending(self, key[1], mode)     # recursion: bound when compiled
                    self._compiling.add(key)
                    try:
                        with _collector_paused():
                            c = Compiled(self, key[1], mode)
                    finally:
                        self._compiling.discard(key)
                    self._compiled[key] = c
        return c

    def callee_program(self, op):
        """The Program of the user function called by `op`, for the kinds of
        its arguments at the call (functions, the receiver, containers)."""
        fn = compilable(op.callee)
        if getattr(op, "spec", None) is not None:
            fn = fn.specialize(*op.spec)
        examples = dict(getattr(op, "examples", None) or {})
        if op.receiver is not None:
            examples[fn._parsed.params[0]] = op.receiver
        names = list(fn._parsed.params)
        for p, dynamic in zip(names, getattr(op, "arg_dynamic", ())):
            if dynamic and p not in examples:
                examples[p] = CONTAINER
        if examples:
            params = dict.fromkeys(names)
            params.update({k: v for k, v in examples.items() if k in params})
            return fn._program_for(params, self.complex_mode)
        return fn._program_for(None, self.complex_mode)

    def compile_callee(self, op, mask, mode="reverse"):
        """Compile the user function called by `op` for the active `mask`."""
        if getattr(op, "custom", False):
            from .custom import CustomCallee
            return CustomCallee(op.callee, mask, op.n_outputs, mode)
        program = self.callee_program(op)
        written = getattr(program.parsed, "writes_params", None)
        if written:
            name, stmt = next(iter(written.items()))
            filename, lineno, col = program.parsed.origin(stmt)
            raise UnsupportedSyntaxError(
                "writing into %s, a parameter of %s, which is called from differentiated code (NumPy would "
                "change the caller's array too, compiled code does not)" % (name, program.parsed.node.name),
                filename, lineno, col, "copy it first in %s: %s = %s.copy()" % (program.parsed.node.name, name, name))
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


# ------------------------------------------------------------------ functions

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

    def __init__(self, python_function, fence=True, tree=None):
        self._parsed = parse.parse(python_function, tree)
        if tree is None and isinstance(python_function, types.FunctionType) and python_function.__name__ == "<lambda>":
            python_function = _named_lambda(python_function, self._parsed.node.name)
        self.python_function = python_function
        functools.update_wrapper(self, python_function)
        check.check(self._parsed)
        lower.lower(self._parsed)
        self._signature = inspect.signature(python_function)
        self._programs = ProgramCache()
        self._lock = threading.RLock()
        args = self._parsed.node.args
        self._varargs = (args.vararg.id if args.vararg is not None else None,
                         args.kwarg.id if args.kwarg is not None else None)
        self._specializations = {}

    def n_outputs(self):
        """1, or k for a function that returns a k-tuple display."""
        ret = self._parsed.node.body[-1]
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
        parsed = copy.copy(self._parsed)
        node = copy.deepcopy(self._parsed.node)
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
                    n._sg_origin = parsed.origin(node)
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
        spec = object.__new__(Function)
        spec.__dict__.update(self.__dict__)
        spec._parsed = parsed
        P = inspect.Parameter
        spec._signature = inspect.Signature(
            [P(p, P.POSITIONAL_OR_KEYWORD) for p in parsed.params[:parsed.n_positional]]
            + [P(p, P.KEYWORD_ONLY) for p in parsed.params[parsed.n_positional:]])
        spec._programs = ProgramCache()
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
        bound.apply_defaults()      # (the specialization's signature has no defaults)
        vararg, varkw = self._varargs
        extra = bound.arguments.get(vararg, ()) if vararg else ()
        kw = bound.arguments.get(varkw, {}) if varkw else {}
        spec = self.specialize(len(extra), sorted(kw))
        n_pos = self._parsed.n_positional
        args = tuple(bound.arguments[p] for p in self._parsed.params[:n_pos]) + tuple(extra)
        kwargs = {p: bound.arguments[p] for p in self._parsed.params[n_pos:]}
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
        """The cache key of a call's arguments: arrays by real/complex,
        Python scalars, containers by type, and functions and other objects
        by identity (the compiled code resolved calls and attributes through
        them; a bound method by its function and instance)."""
        return tuple(map(_kind_of, values))

    def _program_for(self, params, complex_mode=False):
        """The Program for these parameter values (None: assume real arrays).
        Complex arguments (or complex_mode, from a complex caller) make the
        generated adjoints keep the conjugations of TF's complex convention;
        real ones leave them out."""
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
        with self._lock:
            with _collector_paused():
                program = self._new_program(examples, complex_mode or "carray" in key, params)
            self._programs[key] = program
        return program

    def _new_program(self, examples, complex_mode, params):
        return Program(self, examples, complex_mode)

    def _values(self, params, program):
        """(program, the values of its inputs: parameters then leaves). A
        complex Variable among the leaves switches to the complex-mode
        Program."""
        values = list(params.values()) + [leaf.fetch(params, program.namespace) for leaf in program.leaves]
        if not program.complex_mode and any(_is_complex(v) for v in values[len(params):]):
            program = self._program_for(params, complex_mode=True)
            values = list(params.values()) + [leaf.fetch(params, program.namespace) for leaf in program.leaves]
        return program, values

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
            if getattr(self._parsed, "grad_of", False):
                return self._call_primal(args, kwargs)
            return self.python_function(*args, **kwargs)
        if forward_mode.accumulating():     # a ForwardAccumulator is active: generated JVP code
            result = forward_mode.call_function(self, args, kwargs)
            if result is not forward_mode.NOT_HANDLED:
                return result
        if self._varargs != (None, None):
            spec, sargs, skwargs = self._for_call(args, kwargs)
            return spec._call_traced(tapes, sargs, skwargs, args, kwargs)
        return self._call_traced(tapes, args, kwargs, args, kwargs)

    def primal(self, *args, **kwargs):
        """Call the function for its value only: the Python function, or
        its compiled primal when it holds insert_grad_of blocks."""
        if getattr(self._parsed, "grad_of", False):
            return self._call_primal(args, kwargs)
        return self.python_function(*args, **kwargs)

    def _call_primal(self, args, kwargs):
        """The function's value by its compiled primal (the forward code
        without tangents): Python cannot skip the body of an insert_grad_of
        block, which the compiled code leaves out."""
        if self._varargs != (None, None):
            spec, sargs, skwargs = self._for_call(args, kwargs)
            return spec._call_primal(sargs, skwargs)
        params = self._bind(args, kwargs)
        program = self._program_for(params)
        program, values = self._values(params, program)
        compiled = program.compile([False] * len(values), "forward")
        outs, _ = compiled.run(compiled.jvp_fn, *values)
        return outs

    def _call_traced(self, tapes, args, kwargs, user_args, user_kwargs):
        params = self._bind(args, kwargs)
        keys = params
        for p, v in params.items():
            if isinstance(v, Tensor) and v._value.shape == () and v._value.dtype == _F64:
                if keys is params:
                    keys = dict(params)
                keys[p] = _SCALAR_0D
        program = self._program_for(keys)
        program, values = self._values(params, program)
        mask = []
        any_active = False
        for v in values:
            active = False
            if isinstance(v, Tensor):
                if v._value.dtype.kind in "fc":
                    vs = (v,)
                    for t in tapes:
                        if t._should_record(vs):
                            active = True
            elif type(v) in (list, tuple, dict):     # a container of Tensors: active as a whole
                leaves = [e for e in tape_mod.flatten(v)
                          if isinstance(e, Tensor) and is_differentiable_dtype(e.dtype)]
                active = any(t._should_record(leaves) for t in tapes) if leaves else False
            mask.append(active)
            any_active = any_active or active
        if not any_active:
            return self.primal(*user_args, **user_kwargs)
        compiled = program.compile(mask)
        # 0-d float64 parameters run as NumPy scalars in code specialised to
        # 0-d values (as for Python floats: no zeros_like, no unbroadcast);
        # np.float64 keeps ndarray's attributes (shape, dtype, reshape)
        raw = [(v._value[()] if k is _SCALAR_0D else v._value) if isinstance(v, Tensor)
               else unwrap_nested(v) for v, k in zip(values, _padded(keys.values(), len(values)))]
        result = compiled.run(compiled.fwd, *raw)
        wrapped = []
        active_out = []
        out_index = []
        for i, (o, is_active) in enumerate(zip(result[:-1], compiled.output_active)):
            if isinstance(o, (np.ndarray, np.generic, float, int, complex)) and not isinstance(o, bool):
                t = Tensor(o)
                if is_active and t._value.dtype.kind in "fc":
                    active_out.append(t)
                    out_index.append(i)
                wrapped.append(t)
            else:
                wrapped.append(o)
        if active_out:
            call = CompiledCall(compiled, values, raw, out_index, result[-1])
            entry = tape_mod.CallEntry(call.inputs(), active_out, call.backward, call.higher_order, None,
                                       call.batched)
            for t in tapes:
                if t._should_record(entry.inputs):
                    t._record(entry)
        if compiled.tuple_output:
            return tuple(wrapped)
        return wrapped[0]


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

    def __init__(self, fn, tree, artefact, n_params=None):
        self.artefact = artefact        # keeps the base compilation alive while this one is
        super().__init__(fn, tree=tree)
        if n_params is not None:        # the other arguments are a derived program's leaves
            self._parsed.params = self._parsed.params[:n_params]
            self._parsed.n_positional = min(self._parsed.n_positional, n_params)
            P = inspect.Parameter
            self._signature = inspect.Signature([P(p, P.POSITIONAL_OR_KEYWORD) for p in self._parsed.params])


class _MethodNamespace:
    """The names a method bound to an instance sees: its function's globals
    and closure cells, plus its first parameter (`self`) bound to the
    instance as one more closure cell. Stands for the function wherever the
    compiler reads a namespace (resolve.Namespace) or builds generated code
    as closures over it (codegen.build)."""

    def __init__(self, raw, self_name, instance):
        code = raw.__code__
        self.__code__ = _CodeView(tuple(code.co_freevars) + (self_name,), code.co_filename, code.co_name,
                                  code.co_firstlineno)
        self.__closure__ = tuple(raw.__closure__ or ()) + (types.CellType(instance),)
        self.__globals__ = raw.__globals__
        self.__name__, self.__qualname__ = raw.__name__, raw.__qualname__
        self.__module__ = raw.__module__


class _CodeView:
    def __init__(self, co_freevars, co_filename, co_name, co_firstlineno):
        self.co_freevars, self.co_filename = co_freevars, co_filename
        self.co_name, self.co_firstlineno = co_name, co_firstlineno


class MethodFunction(Function):
    """A method bound to an instance (`obj.method`; a classmethod bound to
    its class) as a function of its other parameters: `sg.grad(obj.method)(x)`
    differentiates with respect to x, and a bound method passed as an
    argument (`call(obj.value, x)`) is compiled where it is called. Its first
    parameter is a free name bound to the instance (a closure cell of the
    generated code), so `self.attr`, `self.helper(x)` and `self(x)` resolve
    through the instance; Variables it holds (`self.kernel`) are leaves,
    fetched at each call. The function is parsed and lowered once
    (`as_function(method.__func__)`)."""

    def __init__(self, method):
        raw = method.__func__
        base = as_function(raw)
        self.python_function = method
        functools.update_wrapper(self, method, updated=())
        self.__name__, self.__qualname__ = base.__name__, base.__qualname__     # (a lambda's is its variable's)
        self.instance = method.__self__
        parsed = copy.copy(base._parsed)
        node = copy.deepcopy(base._parsed.node)
        args = node.args
        if not args.posonlyargs + args.args:
            raise TypeError("srcgrad: the method %s has no parameter for its instance" % raw.__qualname__)
        first = (args.posonlyargs + args.args)[0].id
        if args.posonlyargs:
            args.posonlyargs = args.posonlyargs[1:]
        else:
            args.args = args.args[1:]
        parsed.node = node
        parsed.params = [p for p in parsed.params if p != first]
        parsed.n_positional = base._parsed.n_positional - 1
        parsed.func = _MethodNamespace(raw, first, self.instance)
        self._parsed = parsed
        self._signature = inspect.signature(method)
        self._programs = {}
        self._lock = threading.RLock()
        self._varargs = base._varargs
        self._specializations = {}

    def __repr__(self):
        return "<srcgrad.function %s of %r>" % (getattr(self.python_function, "__qualname__", "?"), self.instance)


class FieldMethod(Function):
    """A method (or property) of a plain data-holder class as a function of
    the object's fields and its other parameters: for `Affine` holding W and
    b, `FieldMethod(Affine, "loss")(W, b, x, t)` is `Affine(W, b).loss(x, t)`.
    resolve.py calls it for an object built inside differentiated code from
    differentiated values (a record), so that derivatives flow to the fields.

    Its AST is the method's (parsed and lowered once) with `self.W` the
    parameter `self_W`, and `self.m(...)`, `self(...)` and `self.prop` calls
    of the FieldMethods of m, __call__ and prop; any other use of `self`
    raises UnsupportedSyntaxError. Its Python function rebuilds the object
    (object.__new__ and the fields: all a plain data holder's __init__
    does) and calls the method."""

    def __init__(self, cls, name):
        """(Built in two steps by field_method: the cache holds it before its
        AST is made, for methods that call each other.)"""
        self.cls, self.method_name = cls, name

    def __deepcopy__(self, memo):
        return self                     # (ASTs holding it are copied by the passes)

    def _build(self):
        cls, name = self.cls, self.method_name
        fields = list(resolve.plain_fields(cls))
        member = inspect.getattr_static(cls, name)
        raw = member.fget if isinstance(member, property) else member
        base = as_function(raw)
        parsed = copy.copy(base._parsed)
        node = copy.deepcopy(base._parsed.node)
        args = node.args
        if args.vararg is not None or args.kwarg is not None or not (args.posonlyargs + args.args):
            raise UnsupportedSyntaxError("the method %s.%s (*args, **kwargs, or no self) of an object built from "
                                         "differentiated values" % (cls.__name__, name), parsed.filename,
                                         parsed.firstlineno, None, "pass its arrays")
        me = (args.posonlyargs + args.args)[0].id
        used = {n.id for n in ast_util.walk(node) if isinstance(n, gast.Name)}
        namer = naming.Namer(used)
        params = {f: namer.fresh("%s_%s" % (me, f)) for f in fields}
        node.body = [_SelfFields(self, me, params, parsed).visit(s) for s in node.body]
        for n in ast_util.walk(ast_util.module(node.body)):
            if isinstance(n, gast.Name) and n.id == me:
                filename, lineno, col = parsed.origin(n)
                raise UnsupportedSyntaxError(
                    "using %s in %s.%s other than by its fields and methods (%s is built from differentiated "
                    "values)" % (me, cls.__name__, name, cls.__name__), filename, lineno, col, "pass its arrays")
        if args.posonlyargs:
            args.posonlyargs = args.posonlyargs[1:]
        else:
            args.args = args.args[1:]
        args.args = [ast_util.name(params[f], ctx=gast.Param()) for f in fields] + args.args
        parsed.node = node
        parsed.params = [params[f] for f in fields] + [p for p in base._parsed.params if p != me]
        parsed.n_positional = len(fields) + base._parsed.n_positional - 1
        P = inspect.Parameter
        method_sig = list(inspect.signature(raw).parameters.values())[1:]
        sig = inspect.Signature([P(params[f], P.POSITIONAL_OR_KEYWORD) for f in fields] + method_sig)

        def rebuilt(*a, **kw):
            bound = sig.bind(*a, **kw)
            bound.apply_defaults()
            obj = object.__new__(cls)
            for f in fields:
                object.__setattr__(obj, f, bound.arguments[params[f]])
            pos = [bound.arguments[p.name] for p in method_sig if p.kind is not P.KEYWORD_ONLY]
            kws = {p.name: bound.arguments[p.name] for p in method_sig if p.kind is P.KEYWORD_ONLY}
            return raw(obj, *pos, **kws)
        rebuilt.__name__ = rebuilt.__qualname__ = "%s_%s" % (cls.__name__, name.strip("_") or "call")
        rebuilt.__module__ = raw.__module__
        self.python_function = rebuilt
        self.__name__ = self.__qualname__ = rebuilt.__name__
        self.__doc__ = "%s.%s as a function of the fields %s" % (cls.__name__, name, ", ".join(fields))
        self.__wrapped__ = raw
        self._parsed = parsed
        self._signature = sig
        self._programs = {}
        self._lock = threading.RLock()
        self._varargs = (None, None)
        self._specializations = {}

    def __repr__(self):
        return "<srcgrad field function %s.%s>" % (self.cls.__name__, self.method_name)


class _SelfFields(gast.NodeTransformer):
    """In a FieldMethod's body: `self.W` -> the field's parameter,
    `self.m(...)` / `self(...)` / `self.prop` -> calls of field functions
    (on the fields), `self.CONST` -> the class attribute's value,
    `self.static(...)` -> the static method."""

    def __init__(self, owner, me, params, parsed):
        self.owner, self.me, self.params, self.parsed = owner, me, params, parsed
        self.cls = owner.cls

    def fields(self):
        return [ast_util.name(p) for p in self.params.values()]

    def is_self(self, node):
        return isinstance(node, gast.Name) and node.id == self.me and isinstance(node.ctx, gast.Load)

    def callee(self, name):
        n = ast_util.name(name if name.isidentifier() else "call")
        n._sg_callee = field_method(self.cls, name)
        n._sg_helper = True
        return n

    def visit_Call(self, node):
        func = node.func
        node.args = [self.visit(a) for a in node.args]
        for k in node.keywords:
            k.value = self.visit(k.value)
        if self.is_self(func):
            return ast_util.copy_location(ast_util.call(self.callee("__call__"), self.fields() + node.args,
                                                        node.keywords), node)
        if isinstance(func, gast.Attribute) and self.is_self(func.value):
            member = inspect.getattr_static(self.cls, func.attr, None)
            if isinstance(member, types.FunctionType):
                return ast_util.copy_location(ast_util.call(self.callee(func.attr), self.fields() + node.args,
                                                            node.keywords), node)
            if isinstance(member, (staticmethod, classmethod)):
                node.func = self.value(getattr(self.cls, func.attr), func.attr)
                return node
        node.func = self.visit(func)
        return node

    def value(self, obj, name):
        n = ast_util.name(name)
        n._sg_callee = obj
        n._sg_helper = True
        return n

    def visit_Attribute(self, node):
        if self.is_self(node.value) and isinstance(node.ctx, gast.Load):
            attr = node.attr
            if attr in self.params:
                return ast_util.copy_location(ast_util.name(self.params[attr]), node)
            member = inspect.getattr_static(self.cls, attr, None)
            if isinstance(member, property):
                return ast_util.copy_location(ast_util.call(self.callee(attr), self.fields()), node)
            if member is not None and not isinstance(member, (types.FunctionType, classmethod)):
                return ast_util.copy_location(self.value(getattr(self.cls, attr), attr), node)
        return self.generic_visit(node)


_field_methods = weakref.WeakKeyDictionary()     # class -> {name: FieldMethod}


def field_method(cls, name):
    """The FieldMethod of `cls`'s method or property `name` (cached per class)."""
    with _functions_lock:
        table = _field_methods.setdefault(cls, {})
        fn = table.get(name)
        if fn is not None:
            return fn
        fn = table[name] = FieldMethod(cls, name)
    try:
        fn._build()
    except Exception:
        with _functions_lock:
            table.pop(name, None)
        raise
    return fn


_methods = {}           # (function, id(instance)) -> MethodFunction, most recent last (a bounded cache)
_METHODS_MAX = 64


def _method_function(method):
    """The MethodFunction of a bound method, cached for the most recently
    used (function, instance) pairs (a bound method is a new object at each
    attribute access; the cache keeps at most _METHODS_MAX instances alive)."""
    key = (method.__func__, id(method.__self__))
    with _functions_lock:
        fn = _methods.pop(key, None)
        if fn is not None and fn.instance is method.__self__:
            _methods[key] = fn
            return fn
    fn = MethodFunction(method)
    with _functions_lock:
        _methods[key] = fn
        while len(_methods) > _METHODS_MAX:
            del _methods[next(iter(_methods))]
    return fn


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


# ------------------------------------------------------------ tape entries

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


def _full_cotangents(out_index, n_outputs, gs):
    full = [0.0] * n_outputs
    for i, g in zip(out_index, gs):
        full[i] = g
    return full


_F64 = np.dtype(np.float64)
_SCALAR_0D = 0.0        # the stand-in for a 0-d float64 Tensor in a call's cache key (kind "scalar")


def _padded(items, n):
    """`items` then None up to length n (a call's parameters, then its leaves)."""
    items = list(items)
    return items + [None] * (n - len(items))


class CompiledCall:
    """One call of a compiled function recorded on tapes (a CallEntry's
    VJPs): the generated adjoint on the residuals of the forward sweep; at
    higher order, the generated VJP (joint) called as a compiled function
    on Tensors, so that the outer tape records ONE entry whose backward is
    generated code again; on stacks of cotangents (vectorised Jacobians),
    the batched generated code. Inputs the outputs do not depend on stay
    unconnected (None), as on TF's tape."""

    __slots__ = ("compiled", "values", "raw", "out_index", "residuals", "_connected")

    def __init__(self, compiled, values, raw, out_index, residuals):
        self.compiled = compiled
        self.values = values
        self.raw = raw
        self.out_index = out_index
        self.residuals = residuals
        self._connected = None

    def connected_values(self):
        found = self._connected
        if found is None:
            c = self.compiled
            active = [v for v, m in zip(self.values, c.mask) if m]
            found = self._connected = [v for v, k in zip(active, c.connected) if k]
        return found

    def inputs(self):
        return _flat_inputs(self.connected_values())

    def _seeds(self, gs):
        return _full_cotangents(self.out_index, len(self.compiled.outputs), gs)

    def _result(self, cots):
        cots = [g for g, k in zip(cots, self.compiled.connected) if k]
        return _flat_cotangents(self.connected_values(), cots)

    def backward(self, residuals, gs):
        return self._result(self.compiled.bwd(self.residuals, *self._seeds(gs)))

    def batched(self, gs):
        """The batched generated code re-runs its forward sweep (its reverse
        sweep may read other residuals)."""
        stacked = self.compiled.program.compile(self.compiled.mask, "batched")
        return self._result(stacked.joint(*self.raw, *self._seeds(gs)))

    def higher_order(self, inputs, gs):
        compiled = self.compiled
        vjp = as_function(compiled.joint_fn)
        args = list(self.values)
        it = iter(inputs)
        active = [i for i, m in enumerate(compiled.mask) if m]
        for i, k in zip(active, compiled.connected):
            if k:
                v = self.values[i]
                if isinstance(v, Tensor):
                    args[i] = next(it)
                else:       # a container: its Tensor leaves replaced in order
                    leaves = [next(it) if isinstance(e, Tensor) else e for e in tape_mod.flatten(v)]
                    args[i] = tape_mod.pack_as(v, leaves)
        args = [a if isinstance(a, Tensor) or type(a) in (list, tuple, dict) else unwrap_nested(a)
                for a in args]
        cots = vjp(*args, *self._seeds(gs))
        cots = cots if len(compiled.active_inputs) != 1 else (cots,)
        return self._result(cots)


# ------------------------------------------------------------------ cache

_functions_lock = threading.Lock()
_CACHE_ATTR = "_srcgrad_function_"


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


def as_function(f, fence=True):
    """The Function wrapping `f` (cached per Python function): `f` itself
    for a Function, the function of a bound @sg.function method, a
    MethodFunction for a bound method, the
    compilable form of a function srcgrad returned (sg.grad(g), generated
    code), or a new Function parsed from `f`'s source.

    The cache is weak: the Function is stored on `f` itself (an attribute of
    its `__dict__`), so it lives exactly as long as `f` does. A mapping keyed
    weakly by `f` cannot do this, since its value refers to `f` (Python has
    no ephemerons): dropping `f` (a notebook cell redefining it) frees the
    Function, its Programs and their generated code with the next garbage
    collection. A Function copied onto another function (functools.wraps
    copies `__dict__`) is not taken for that function's."""
    if isinstance(f, Function):
        return f
    if isinstance(f, BoundFunction):
        return f.function
    derived = getattr(f, "__srcgrad_function__", None)
    if derived is not None:
        return derived()
    if inspect.ismethod(f):
        return _method_function(f)
    if getattr(f, "__srcgrad_transform__", None) is not None:
        raise NoRuleError(f)            # sg.jacobian(g), sg.hessian(g): not transformable
    raw = getattr(f, "__func__", f)  # staticmethod objects
    cached = _cached(raw)
    if cached is not None:
        return cached
    with _functions_lock:
        fn = _cached(raw)
        if fn is None:
            fn = Function(raw, fence=fence)
            if isinstance(raw, types.FunctionType):
                raw.__dict__[_CACHE_ATTR] = fn
            else:
                _others[raw] = fn       # not a plain function: lives as long as the module
    return fn


_others = weakref.WeakKeyDictionary()


def _cached(raw):
    if isinstance(raw, types.FunctionType):
        fn = raw.__dict__.get(_CACHE_ATTR)
    else:
        fn = _others.get(raw)
    return fn if fn is not None and fn.python_function is raw else None


def function(f):
    """Decorator: make `f` differentiable by source transformation.

    `f` may take Tensors, Variables, ndarrays, Python scalars and nested
    tuples/lists/dicts of them, and return an array or a tuple of arrays.
    Raises UnsupportedSyntaxError (construct, file, line) at decoration for
    Python that srcgrad cannot differentiate (see README, "What Python is
    supported"); some (objects built from differentiated values) are found
    when the derivative is first compiled. A bound method (`obj.method`) is a
    function of its other arguments (see MethodFunction).
    """
    if inspect.ismethod(f):
        return MethodFunction(f)
    return Function(f)
