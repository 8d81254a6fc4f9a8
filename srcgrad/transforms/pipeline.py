"""The pass list: the only module that sequences the compiler's passes.

Three stages, each a flat list (TF AutoGraph's `transform_ast` style); each
pass is `transform(node, ctx)` or reads what the passes before it left on
the node annotations (syntax/anno.py) and on `ctx` (context.py), and states
in its own docstring what it requires and guarantees.

    prepare       at decoration, once per function:
                  check (the fence: unsupported syntax raises before any
                  user code runs) -> lower (break/continue/return -> flags,
                  loops -> index loops, x[i] = v -> setitem, local defs
                  inlined, with -> run-time calls)
    specialise    once per argument kinds:
                  resolve (names -> objects; Variables read as globals and
                  attributes -> leaves) -> complex_mode (keep TF's conj()?)
    differentiate once per (mode, mask of active inputs), on a copy:
                  anf (one op per statement, SSA names) -> cse (repeated
                  views read once) -> kinds (containers,
                  0-d scalars) -> activity (varied and useful) ->
                  reverse (forward + reverse sweeps, rules inlined) |
                  forward (tangent code)
    finish        once per generated function (codegen assembles the split
                  and fused functions from the sweeps in between):
                  inplace (element assignments into dead buffers; a dead
                  product's buffer reused by the operation reading it) ->
                  optimize.collapse_temporaries -> optimize.free_dead

The front layer (srcgrad/function.py, program.py, artefact.py) calls these
four functions and nothing else from the passes.
"""
import builtins
import itertools

from ..syntax.anno import Anno
from . import (activity, anf, check, complex_mode, cse, forward, inplace, kinds, lower, optimize, resolve, reverse,
               shapes)


def prepare(parsed):
    """The passes run at decoration on a parsed function (`parse.Parsed`,
    changed in place and returned). Raises UnsupportedSyntaxError."""
    check.check(parsed)             # the fence first: nothing below sees unsupported syntax
    lower.lower(parsed)
    return parsed


def specialise(parsed, examples, field_method, callee_parsed):
    """Resolve `parsed` for the argument kinds `examples` ({param: object}
    for functions and objects passed in). Returns (resolve.Resolution,
    complex_mode: does the code build complex values, here or in a user
    function it calls, so that the generated adjoints keep TF's conj()?).
    field_method(cls, name) gives the compilable form of a record's method;
    callee_parsed(obj) the Parsed of a user function a call resolves to."""
    as_written = parsed.node
    resolution = resolve.resolve(parsed, examples, field_method=field_method)
    walked = resolution.walked
    builds_complex = complex_mode.transform(as_written, resolution.node, callee_parsed,
                                            walked[1] if walked is not None else None)
    return resolution, builds_complex


def front(resolution, ctx):
    """The passes before differentiation, on a resolution's (copied) AST:
    the FunctionDef in ANF (repeated view reads merged by cse), with
    ctx.facts filled by anf, kinds and shapes."""
    fdef = anf.transform(resolution, ctx)
    cse.transform(fdef, ctx)
    kinds.transform(fdef, ctx)
    shapes.transform(fdef, ctx)
    return fdef


def differentiate(fdef, ctx):
    """Differentiate the ANF `fdef` in `ctx.mode` for the active inputs of
    `ctx.mask`: activity, then the reverse sweeps (a `reverse.Sweeps`, which
    codegen assembles) or the tangent code ((JVP FunctionDef, injected
    names))."""
    activity.transform(fdef, ctx)
    if ctx.mode == "forward":
        return forward.transform(fdef, ctx)
    return reverse.transform(fdef, ctx)


def finish(fdef, sweeps, scope, sets):
    """The passes on one assembled generated function (changed in place):
    element assignments made in place where no live name shares the buffer,
    temporaries collapsed, dead values freed (not in a split forward, which
    returns what it keeps). `scope` is the user function's globals; `sets`
    a liveness.Sets shared by the trees of one artefact."""
    injected = sweeps.injected

    def lookup(name):
        return injected[name] if name in injected else scope.get(name, getattr(builtins, name, None))
    inplace.update_in_place(fdef, lookup, sweeps.inject, sweeps.dynamic, sets,
                            denoted=itertools.chain(injected.values(), scope.values()))
    scalar_cotangents = {sweeps.adjoints[n] for n in sweeps.scalar if n in sweeps.adjoints}
    # (what sg.jit's linker needs to find the loop accumulations it may add in place)
    Anno.ACCUMULATIONS.add_to(fdef, (sweeps.dynamic, scalar_cotangents))
    inplace.elide_temporaries(fdef, lookup, sweeps.inject, injected.values(), sweeps.dynamic,
                              set(sweeps.scalar) | scalar_cotangents)
    fdef.body = optimize.collapse_temporaries(fdef.body, set(), sets)
    inplace.own_list_updates(fdef, lookup, sweeps.inject)      # (after the collapse: `hs = list_append(hs, h)`)
    if not fdef.name.endswith("_fwd"):
        fdef.body = optimize.free_dead(fdef.body, [a.id for a in fdef.args.args], sets)
    return fdef
