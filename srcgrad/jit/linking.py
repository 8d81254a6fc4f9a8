"""Linking of sg.jit's compiled functions to their callees by reference.

Numba links the LLVM module of every callee (a twin, a NumPy
implementation, another generated function) into its caller's module
and optimises and compiles the whole again, although each callee was
already optimised and compiled on its own (its machine code is in the
process's JIT engine under its symbol): an array gradient's module holds
every twin it calls, and most of its first call is LLVM working on them
a second time.

`pipeline_class()` is a Numba compiler pipeline for sg.jit's generated
functions that links a callee's large functions as declarations
(`declare`), so that the caller calls the machine code already compiled,
and only small functions (scalar twins, `lambda g, x: g`, whose inlining
matters in a loop) are linked whole. Values are the same: a call runs the
same compiled code as the inlined copy would. It also runs the function
passes before linking at a lower level (FUNCTION_PASS_OPT).

Every sg.jit compilation (this pipeline's, and `opt_pipeline_class()`'s
for the on-disk cache and plain user functions) runs at LLVM level
`COMPILE_OPT`, not Numba's default 3, but for the own code of a function
of scalars and 1-d arrays (see there).

Only for code compiled in this process (not `sg.jit(..., cache=True)`):
machine code loaded from Numba's cache in another process must carry its
callees with it.
"""
import threading

#: callee functions with more instructions (as optimised in their own module) are linked as declarations
MAX_INLINED = 120
#: the LLVM optimisation level of the function passes a generated function gets before its callees are
#: linked in (at most Numba's own, which the whole module then gets): at 3 they include LLVM's
#: non-trivial loop unswitching, which copies every loop of Numba's array expressions per broadcasting
#: condition before anything is inlined, and the module passes unswitch again after inlining (the RNN's
#: first call: ~2x; the steady states measured the same)
FUNCTION_PASS_OPT = 2

#: the LLVM optimisation level of what an sg.jit compilation compiles (the twins and Numba's own NumPy
#: implementations it types for the first time, and the function itself when it holds arrays of two or
#: more dimensions), unless NUMBA_OPT asks for less. Level 3 adds non-trivial loop unswitching, which
#: copies each loop of an array expression per broadcasting condition, then unrolls and vectorises every
#: copy: a matrix's expressions have several conditions per operand. Measured in one process
#: (benchmarks/JIT.md): 2 makes the first call 1.3-8x faster (the RNN's 5.6 -> 1.0 s, GradBench's gmm
#: 32 -> 4 s) and the steady state 0-8% slower (the RNN 6%, kmeans 8%, gmm 3%; llsq 19% faster). A
#: function of scalars and 1-d arrays only keeps Numba's level for its own code (`_multidimensional`):
#: its loops are few, and O3 pays there (GradBench's ode: 18% faster than at 2, for 1.5x the compile).
COMPILE_OPT = 2

_lock = threading.Lock()
_pipeline = []
_opt_pipeline = []
_levels = []        # Numba's own level (NUMBA_OPT) of each sg.jit compilation under way, innermost last


def _size(function):
    return sum(1 for block in function.blocks for _ in block.instructions)


def declared_module(library):
    """The LLVM module to link into a caller in place of `library`'s: its
    functions larger than MAX_INLINED instructions become declarations of
    the symbols its machine code defines; the rest is Numba's module for
    linking. Kept on the library (made once)."""
    module = getattr(library, "_srcgrad_declared", None)
    if module is not None:
        return module
    import llvmlite.binding as ll
    shared = library._get_module_for_linking()
    # (the module for linking is the library's optimised module, whose every function its machine code
    # defines, also when it was loaded from Numba's cache)
    # (not Numba's own implementations: its finalize() refuses a declared `_ZN5numba` symbol)
    big = {f.name for f in shared.functions
           if not f.is_declaration and not f.name.startswith("_ZN5numba") and _size(f) > MAX_INLINED}
    if not big:
        module = shared
    else:
        heads = tuple('@"%s"(' % n for n in big) + tuple("@%s(" % n for n in big)
        lines, skipping = [], False
        for line in str(shared).splitlines():
            if skipping:
                skipping = line != "}"
                continue
            if line.startswith("define ") and any(h in line for h in heads):
                head = line[len("define"):].rstrip().removesuffix("{").split(" !dbg ")[0].rstrip()
                lines.append("declare" + head.replace(" linkonce_odr ", " ", 1))
                skipping = True
                continue
            lines.append(line)
        try:
            module = ll.parse_assembly("\n".join(lines) + "\n")
            module.name = shared.name
        except RuntimeError:        # (IR this rewriting does not know: linked whole, as Numba does)
            module = shared
    library._srcgrad_declared = module
    return module


class _Declared:
    """A callee library as its caller's finalize() links it: its module
    with its large functions declared (declared_module)."""

    def __init__(self, library):
        self.library = library
        self._reload_init = library._reload_init

    def _ensure_finalized(self):
        self.library._ensure_finalized()

    def _get_module_for_linking(self):
        return declared_module(self.library)


def _at_opt_level(method, level):
    """`method` (a library's optimisation) run with Numba's optimisation
    level at most `level` (the pass builders read config.OPT when made;
    the compiler lock is held)."""
    def run(*args):
        from numba.core import config
        saved = config.OPT
        if saved <= level:
            return method(*args)
        config.OPT = type(saved)(level)
        try:
            return method(*args)
        finally:
            config.OPT = saved
    return run


def at_compile_opt(compile_core):
    """`compile_core` (a Numba pipeline's `_compile_core`) run with
    Numba's optimisation level at most COMPILE_OPT; the compiler lock is
    held (Numba takes it for every compilation), so no other compilation
    sees the level."""
    def run(self):
        from numba.core import config
        _levels.append(_levels[0] if _levels else config.OPT)     # (a callee compiled inside: the caller's)
        try:
            return _at_opt_level(lambda: compile_core(self), COMPILE_OPT)()
        finally:
            _levels.pop()
    return run


def _multidimensional(t):
    """Does Numba type `t` hold an array of 2 or more dimensions (itself,
    or inside a tuple, list or Optional)?"""
    from numba.core import types
    if isinstance(t, types.Array):
        return t.ndim >= 2
    if isinstance(t, types.Optional):
        return _multidimensional(t.type)
    if isinstance(t, types.BaseTuple):
        return any(_multidimensional(e) for e in t.types)
    if isinstance(t, (types.List, types.ListType)):
        return _multidimensional(t.dtype if isinstance(t, types.List) else t.item_type)
    return False


def lowered_at_level(run_pass):
    """`run_pass` (a lowering pass's, where LLVM optimises the function's
    own module) run at Numba's own level when no value of the function
    is an array of 2 or more dimensions (state.typemap; see COMPILE_OPT),
    else at the level the compilation runs at."""
    def run(self, state):
        if not _levels or int(_levels[-1]) <= COMPILE_OPT \
                or any(_multidimensional(t) for t in state.typemap.values()):
            return run_pass(self, state)
        from numba.core import config
        saved, config.OPT = config.OPT, _levels[-1]
        try:
            return run_pass(self, state)
        finally:
            config.OPT = saved
    return run


def _prepare(library):
    """Make `library` (a caller's, before its lowering) link its callees
    through _Declared (one per callee library), and run its function
    passes at FUNCTION_PASS_OPT."""
    add = library.add_linking_library
    proxies = {}

    def add_declared(callee):
        proxy = proxies.get(id(callee))
        if proxy is None:
            proxy = proxies[id(callee)] = _Declared(callee)
        add(proxy)
    library.add_linking_library = add_declared
    library._optimize_functions = _at_opt_level(library._optimize_functions, FUNCTION_PASS_OPT)


def pipeline_class():
    """Numba's nopython compiler pipeline whose lowering links callees by
    reference (see the module doc); made once (Numba is imported by
    then)."""
    if _pipeline:
        return _pipeline[0]
    with _lock:
        if _pipeline:
            return _pipeline[0]
        from numba.core import typed_passes
        from numba.core.compiler_machinery import register_pass

        @register_pass(mutates_CFG=True, analysis_only=False)
        class ReferenceLinkingLowering(typed_passes.NativeLowering):
            """Numba's lowering, into a library that links its callees
            by reference."""
            _name = "srcgrad_reference_linking_lowering"

            @lowered_at_level
            def run_pass(self, state):
                """Create the library (as NativeLowering does) and lower."""
                if state.library is None:
                    state.library = state.targetctx.codegen().create_library(state.func_id.func_qualname)
                    state.library.enable_object_caching()
                _prepare(state.library)
                return super().run_pass(state)

        _pipeline.append(_compiler_with(ReferenceLinkingLowering, "ReferenceLinkingCompiler"))
    return _pipeline[0]


def _compiler_with(lowering, name):
    """A Numba compiler (pipeline class) named `name`: the nopython
    pipeline with `lowering` for Numba's NativeLowering, at COMPILE_OPT."""
    from numba.core import compiler, typed_passes

    class Compiler(compiler.CompilerBase):
        """Numba's nopython pipeline, its lowering replaced, at
        COMPILE_OPT."""
        _compile_core = at_compile_opt(compiler.CompilerBase._compile_core)

        def define_pipelines(self):
            """The nopython pipeline, its lowering replaced."""
            pm = compiler.DefaultPassBuilder.define_nopython_pipeline(self.state)
            pm.passes = [(lowering if p is typed_passes.NativeLowering else p, d) for p, d in pm.passes]
            return [pm]
    Compiler.__name__ = Compiler.__qualname__ = name
    return Compiler


def opt_pipeline_class():
    """Numba's default compiler pipeline at COMPILE_OPT (for code that
    links its callees as Numba does: cached on disk, a plain user
    function); made once."""
    if _opt_pipeline:
        return _opt_pipeline[0]
    with _lock:
        if not _opt_pipeline:
            from numba.core import typed_passes
            from numba.core.compiler_machinery import register_pass

            @register_pass(mutates_CFG=True, analysis_only=False)
            class LevelLowering(typed_passes.NativeLowering):
                """Numba's lowering at the level `lowered_at_level` picks."""
                _name = "srcgrad_level_lowering"
                run_pass = lowered_at_level(typed_passes.NativeLowering.run_pass)

            _opt_pipeline.append(_compiler_with(LevelLowering, "OptLevelCompiler"))
    return _opt_pipeline[0]
