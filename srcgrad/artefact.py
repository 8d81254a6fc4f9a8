"""The artefact: the generated code of one (program, mode, mask of active
inputs), compiled, with its gast trees kept for transforming it again.

One artefact type serves every mode (reverse, batched reverse, forward).
Its passes run through transforms/pipeline.py (`differentiate`, then
codegen's assembly, then `finish` per generated function); `build` compiles
the trees as closures over the user's live globals and cells
(codegen.build). Every generated function carries `__srcgrad_function__`,
a handle back to the artefact, so that the compiler transforms generated
code again without re-parsing text (the program supplies that compilable
form: `Program.generated_function`).
"""
import linecache
import weakref

import gast

from . import runtime
from .errors import UnsupportedSyntaxError
from .runtime import syntax as runtime_syntax
from .syntax import ast_util
from .transforms import activity, codegen, liveness, pipeline


def build(fdefs, injected, func, title, defaults, origin):
    """codegen.build, and the generated source leaves `linecache` (where
    codegen registers it for tracebacks) when the functions are collected,
    so that dropped functions do not leave their generated code behind."""
    fns = codegen.build(fdefs, injected, func, title, defaults, origin)
    for fn in fns.values():
        weakref.finalize(fn, linecache.cache.pop, fn.__srcgrad_filename__, None)
    return fns



class _SplitSweep:
    """Artefact.fwd, Artefact.bwd_fn and Artefact.joint_fn: compiled on
    first read (_split_function, _joint_function), which stores the
    function in the artefact's __dict__; a non-data descriptor, so later
    reads find it there directly (a tape call reads `fwd` each time)."""

    def __init__(self, key, doc):
        self.key = key
        self.__doc__ = doc

    def __get__(self, artefact, owner=None):
        if artefact is None:
            return self
        if self.key == "joint_fn":
            return artefact._joint_function()
        return artefact._split_function(self.key)


class Artefact:
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
        #: (text, origin) of a type check of a value computed from an active input, or None: on a tape
        #: it is a Tensor in the plain call, an ndarray here, and function.py runs such code op by op
        self.type_check = activity.varied_type_check(fdef, self.active_inputs, ctx.facts)
        self.tuple_output = isinstance(fdef.body[-1].value, gast.Tuple)
        self.outputs = ast_util.returned_names(fdef)
        differentiated = pipeline.differentiate(fdef, ctx)
        name = parsed.node.name
        title = "%s %s (%s)" % (name, {"forward": "jvp", "batched": "batched vjp"}.get(mode.split("@")[0], "vjp"),
                                ", ".join(self.active_inputs))
        if mode == "forward":
            self.output_active = tuple(o in ctx.active or o in self.active_inputs for o in self.outputs)
            jvp_def, injected = differentiated
            fns = build([jvp_def], injected, program.namespace.func, title, {}, self.origin)
            self.jvp_fn = fns[jvp_def.name]
            self.trees = {jvp_def.name: jvp_def}
            self._shown = jvp_def
            self._mark(self.jvp_fn, jvp_def)
            return
        self.output_active = tuple(o in ctx.active for o in self.outputs)
        #: do the split residuals hold those of a recursive call (a type containing itself)?
        self.recursive_residuals = ctx.facts.recursive_residuals
        sweeps = differentiated
        self._sets = liveness.Sets()    # (uses/defs per statement, for all the trees)
        fwd, bwd, joint, self.residuals, self.connected = codegen.assemble(
            name, inputs, self.active_inputs, sweeps, self._sets)
        self.sweeps = sweeps
        self._in_place(joint)
        self._joint = (joint, title)
        self._split = (fwd, bwd, title)     # compiled when a tape first needs them
        self.trees = {joint.name: joint}
        self.injected = sweeps.injected
        self._shown = joint
        if any(hasattr(s, "body") for s in joint.body):
            # (compiled now: the split sweeps' passes may rewrite the blocks it shares with them)
            self._joint_function()

    def type_check_refusal(self):
        """The refusal of a tape call (or a ForwardAccumulator's) whose code
        checks the type of a value computed from a watched Tensor
        (`isinstance(x, float)`, `type(x) is ...`, `self.type_check`): in
        the plain call and op by op that value is a Tensor (not a float,
        not an ndarray: as TF's and JAX's tracers), in the compiled sweeps
        an ndarray or an np.float64, so the check could take the other
        branch there. Op by op, the code sees the Tensor. None without
        such a check."""
        if self.type_check is None:
            return None
        text, origin = self.type_check
        filename, lineno, col = origin if origin else (None, None, None)
        return UnsupportedSyntaxError(
            "a type check of a differentiated value (%s) in compiled code on a tape" % text, filename, lineno, col,
            "the value is a Tensor in the plain call and an ndarray in compiled code: it runs op by op, on Tensors")

    def _in_place(self, fdef):
        """The passes on one assembled function (pipeline.finish)."""
        sets = self.__dict__.get("_sets")
        if sets is None:
            sets = self._sets = liveness.Sets()   # (uses/defs per statement, for all the trees)
        pipeline.finish(fdef, self.sweeps, self.program.namespace.func.__globals__, sets)

    def _compile_split(self):
        fwd, bwd, title = self._split
        self._in_place(fwd)
        self._in_place(bwd)
        fns = build([fwd, bwd], self.sweeps.injected, self.program.namespace.func, title + " split", {},
                     self.origin)
        for tree in (fwd, bwd):         # (generated code calling them is transformed again through them)
            self.trees[tree.name] = tree
            self._mark(fns[tree.name], tree)
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

    def _joint_function(self):
        """The joint sweeps' function, compiled on first use (a callee's
        caller may need only its split sweeps); kept in the artefact's
        __dict__."""
        found = self.__dict__.get("joint_fn")
        if found is None:
            joint, title = self._joint
            defaults = {joint.name: tuple(1.0 for _ in self.outputs)}
            fns = build([joint], self.sweeps.injected, self.program.namespace.func, title, defaults, self.origin)
            found = self.__dict__["joint_fn"] = fns[joint.name]
            self._mark(found, joint)
        return found

    fwd = _SplitSweep("fwd", "The split forward sweep.")
    bwd_fn = _SplitSweep("bwd_fn", "The split reverse sweep.")
    joint_fn = _SplitSweep("joint_fn", "The joint sweeps (forward then reverse) in one function.")

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
        # (the tree is `tree` itself, not looked up by name in self.trees: the gradient functions of
        # sg.grad(f) and sg.value_and_grad(f) share the name grad_<f>, and the one generated last would be
        # transformed for the other's: sg.jit(sg.grad(f)), sg.hessian(f), then sg.hvp(f) got (value, gradient)
        # pairs for gradients)
        ref = weakref.ref(self)
        cache = {}

        def function():
            f = cache.get("f")
            if f is None:
                artefact = ref()
                if artefact is None:
                    raise RuntimeError("srcgrad: the code generated for %s is gone" % fn.__name__)
                f = cache["f"] = artefact.program.generated_function(fn, tree, artefact, n_params)
            return f
        fn.__srcgrad_function__ = function
        fn.__srcgrad_artefact__ = ref

    def gradient_function(self, n_params, wrt, preserve_result, has_aux=False):
        """The generated function of `sg.grad(f, wrt, preserve_result)` for
        this artefact (its mask selects `wrt`): a Python function of f's
        inputs whose kept AST is transformed for higher derivatives."""
        key = (tuple(wrt), preserve_result, has_aux)
        fn = self._derived.get(key)
        if fn is None:
            with self.program._lock:
                fn = self._derived.get(key)
                if fn is None:
                    order = [self.inputs[i] for i in wrt]
                    name = self.program.parsed.node.name
                    tree = codegen.gradient_def(self.sweeps, name, self.inputs, self.active_inputs, order,
                                                preserve_result, has_aux)
                    self._in_place(tree)
                    title = "%s gradient (%s)" % (name, ", ".join(order))
                    fns = build([tree], self.sweeps.injected, self.program.namespace.func, title, {},
                                        self.origin)
                    fn = fns[tree.name]
                    self.trees[tree.name] = tree
                    self._mark(fn, tree, n_params)
                    self._derived[key] = fn
        return fn

    def forward_matches(self, other):
        """Does `other` (an Artefact of the same Program: a batched one, say)
        have this one's split forward sweep, the same source calling the
        same objects? Then its reverse sweep can run on the residuals this
        one's forward returned (a tape's Jacobian of a recorded call need
        not run the call's forward sweep again). Compiles both split sweeps;
        the answer is kept per pair."""
        known = self.__dict__.setdefault("_forward_matches", {})
        found = known.get(id(other))
        if found is not None and found[0] is other:
            return found[1]
        self._split_function("fwd")
        other._split_function("fwd")
        name = self.program.parsed.node.name + "_fwd"
        mine, theirs = self.trees.get(name), other.trees.get(name)
        same = mine is not None and theirs is not None and ast_util.to_source(mine) == ast_util.to_source(theirs)
        if same:
            loads = {n.id for n in ast_util.walk(mine) if isinstance(n, gast.Name)}
            mine, theirs = self.fwd.__globals__, other.fwd.__globals__     # (what the names are bound to)
            same = all(mine.get(n) is theirs.get(n) for n in loads)
        known[id(other)] = (other, same)
        return same

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


class Pending:
    """A recursive call's compiled callee, while it is being compiled: its
    generated functions are looked up when called (and when transformed
    again). Every output counts as active."""

    def __init__(self, program, mask, mode):
        self.program, self.mask, self.mode = program, mask, mode
        n = program.function.n_outputs()
        ret = program.parsed.node.body[-1]
        self.tuple_output = isinstance(ret, gast.Return) and isinstance(ret.value, gast.Tuple)
        self.output_active = (True,) * n
        self.recursive_residuals = True     # (its split residuals, held by its caller's, hold its caller's type)
        self.joint_fn = Deferred(self, "joint_fn")
        self.jvp_fn = Deferred(self, "jvp_fn")
        self.fwd = Deferred(self, "fwd")
        self.bwd_fn = Deferred(self, "bwd_fn")

    def resolve(self):
        return self.program._compiled[(self.mode, self.mask)]


class Deferred:
    """Calls `attr` of the Artefact a Pending stands for. Its first call
    puts that function in the closure cells of the generated code that
    holds the Deferred (codegen.build registers them:
    `__srcgrad_bind_cell__`), so a recursive function's later calls call
    it directly (GradBench's det: 205 calls per gradient). Not for
    `jvp_fn`, whose symbolic zero tangents the call fills in."""

    _SUFFIX = {"joint_fn": "_vjp", "jvp_fn": "_jvp", "fwd": "_fwd", "bwd_fn": "_bwd"}

    def __init__(self, pending, attr):
        self.pending, self.attr = pending, attr
        self.__name__ = pending.program.parsed.node.name + self._SUFFIX[attr]
        self._cells = []

    def __srcgrad_bind_cell__(self, cell):
        """Register a closure cell of generated code holding this Deferred."""
        if self.attr != "jvp_fn":
            self._cells.append(cell)

    def __call__(self, *args):
        fn = getattr(self.pending.resolve(), self.attr)
        if self._cells:
            cells, self._cells = self._cells, []
            for cell in cells:
                cell.cell_contents = fn
        if self.attr == "jvp_fn":
            outs, douts = fn(*args)
            zeros = runtime.zeros_tree
            if not self.pending.tuple_output:
                return outs, douts if douts is not None else zeros(outs)
            return outs, tuple(d if d is not None else zeros(o) for o, d in zip(outs, douts))
        return fn(*args)

    def __srcgrad_function__(self):
        return getattr(self.pending.resolve(), self.attr).__srcgrad_function__()

    def __srcgrad_twin__(self, facade):
        """This call run in another array namespace (runtime/namespaces.py):
        the resolved generated function's twin."""
        def call(*args):
            fn = facade.twin(getattr(self.pending.resolve(), self.attr))
            if self.attr == "jvp_fn":       # (NumPy-only: sg.jvp refuses other arrays before this)
                return self(*args)
            return fn(*args)
        call.__name__ = self.__name__
        call.__srcgrad_twin_of__ = self
        return call
