"""sg.export: a function and its generated derivative as one standalone
Python module, importing only NumPy (and SciPy or the standard library
where the function does).

Generated code is a closure over the user's globals plus the objects the
compiler injected (`Artefact.injected`: run-time helpers such as
`unbroadcast`, `ShapeOf`, `push`; the generated code of called functions).
The exporter *links* them into one module namespace: starting from the
derivative's generated function, every free name is resolved to the object
it means there (closure cell, global, builtin) and given a module-level
definition, recursively:

    a module (numpy, scipy.*, the standard library)   an import
    a NumPy / SciPy / standard-library object          a binding to its public path (`tanh = np.tanh`)
    a generated function (another artefact's code)     its kept AST, unparsed
    a run-time helper of srcgrad (srcgrad.runtime,     its source (inspect.getsource), with
      srcgrad.rules, srcgrad.errors)                   srcgrad's decorators (primitive,
                                                       register_adjoint) removed
    a user function                                    its source
    a constant (numbers, strings, tuples, arrays;      a literal
      a Variable: its value when exported)

Helpers are copied from their source, recursively, rather than from a
curated list: the copy is always the code srcgrad itself runs, and a helper
that changes or a new one needs no change here. Names that collide get a
suffix (`_2`) and the references are renamed in the copied syntax trees.
Anything else (another library, an object of a user class, srcgrad's
tape machinery) raises TypeError naming it.
"""
import inspect
import pathlib

from ..callables import as_function
from ..display import GeneratedCode
from ..errors import api_boundary, short
from ..functional import _grad_inputs, wrt_indices
from .linker import Linker, NotExportable

def _defaults(linker, function, params):
    """{param: source of its default} for the trailing parameters of
    `function` whose defaults can be written (linked constants or objects)."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return {}
    out = {}
    for p in reversed(params):
        parameter = signature.parameters.get(p)
        if parameter is None or parameter.default is inspect.Parameter.empty:
            break
        text = linker._literal(parameter.default, p)
        if text is None:
            try:
                text = linker.link(parameter.default, "%s_default" % p, "the default of %s" % p)
            except NotExportable:
                break
        out[p] = text
    return dict(reversed(list(out.items())))


def _program(f, wrt, args):
    """(Function, Program, mask) as sg.source chooses them."""
    fn = as_function(f)
    if args is not None:
        program, mask, _ = _grad_inputs(fn, tuple(args), {}, wrt)
        return fn, program, mask
    program = fn.program_for(None)
    return fn, program, [i in wrt for i in range(len(program.inputs))]


@api_boundary
def export(f, path, wrt=(0,), args=None, mode="reverse"):
    """Write `f` and its generated derivative as one standalone Python module.

    The module imports only NumPy (and SciPy, or standard-library modules,
    where `f` uses them): the run-time helpers the generated code calls
    (`unbroadcast`, `ShapeOf`, ...) are copied into it from srcgrad's
    source, and so is the generated code of the functions `f` calls. It
    runs on a machine without srcgrad.

    It defines `f` (the function as written, when its own source can be
    exported) and, for `mode="reverse"`, `grad_<f>(*args)`, which returns
    what `sg.grad(f, wrt)(*args)` returns (an array of the argument's shape
    and floating dtype, a tuple for several `wrt`); for `mode="forward"`,
    `<f>_jvp(*args, *tangents)`, which returns `(outputs, output tangents)`
    for one tangent per argument in `wrt`, as `sg.source(f,
    mode="forward")` shows. Variables `f` reads as globals are written as
    constants, with their values when exported.

    Args:
        f: a function srcgrad can differentiate.
        path: the file to write (str or path-like), e.g. "loss_grad.py".
        wrt: the index, or tuple of indices, of the arguments to
            differentiate.
        args: example arguments (a tuple): the code compiled for their
            kinds (Python floats get scalar code), as `sg.source` explains;
            None for array arguments.
        mode: "reverse" or "forward".

    Returns:
        The module's source (a `GeneratedCode` string), as written to `path`.

    Raises:
        ValueError: for an unknown mode or a `wrt` out of range.
        TypeError: when the derivative needs something that cannot be written
            standalone (another library, an object of a user class, a
            `@sg.custom_gradient` function, srcgrad's own machinery), naming it.
    """
    if mode not in ("reverse", "forward"):
        raise ValueError("mode must be 'reverse' or 'forward', got %r" % (mode,))
    wrt = wrt_indices(wrt)
    fn, program, mask = _program(f, wrt, args)
    parsed = program.parsed
    name = parsed.node.name
    n = len(parsed.params)
    for i in wrt:
        if not 0 <= i < n:
            raise ValueError("wrt index %d out of range for %s with %d parameters" % (i, name, n))
    artefact = program.compile(mask, mode)
    main = artefact.gradient_function(n, wrt, False) if mode == "reverse" else artefact.jvp_fn
    linker = Linker()
    linker.main = main
    defaults = _defaults(linker, fn.python_function, parsed.params) if mode == "reverse" else {}
    main_name = "grad_%s" % name if mode == "reverse" else "%s_jvp" % name
    leaves = list(program.leaves)
    if leaves:      # the generated function takes the Variables f reads as arguments: a wrapper passes them
        wrapper = linker.fresh(main_name)
        values = [leaf.fetch({}, program.namespace) for leaf in leaves]
        constants = [linker.link(v, leaf.root) for v, leaf in zip(values, leaves)]    # (first: their own names)
        inner = linker.link(main, "_" + main_name)
        tangents = ["d" + parsed.params[i] for i in wrt] if mode == "forward" else []
        linker.defs["main"].append("def %s(%s):\n    return %s(%s)" % (
            wrapper, ", ".join([p + ("=" + defaults[p] if p in defaults else "") for p in parsed.params]
                               + tangents), inner,
            ", ".join(list(parsed.params) + constants + tangents)))
    else:
        linker.main_defaults = defaults
        linker.link(main, main_name)
    primal_note = ""
    saved = linker.snapshot()
    try:
        primal_name = linker.link(fn.python_function, name, "%s, as written," % name)
    except NotExportable as exc:         # the derivative stands alone; f itself does not
        linker.restore(saved)
        primal_name = None
        primal_note = "\n%s itself is not included: %s" % (name, exc)
    origin = "%s:%s" % (short(parsed.filename), parsed.firstlineno)
    inputs = ", ".join(parsed.params)
    signature = ("%s(%s) -> the gradient with respect to %s, as sg.grad(%s, wrt=%s)" % (
        main_name, inputs, ", ".join(parsed.params[i] for i in wrt), name, wrt if len(wrt) > 1 else wrt[0])
        if mode == "reverse" else "%s(%s, %s) -> (output, output tangent), as sg.jvp" % (
            main_name, inputs, ", ".join("d" + parsed.params[i] for i in wrt)))
    header = '"""%s and its derivative, exported by srcgrad (sg.export) from %s.\n\n    %s\n%s\n' \
             'Standalone: imports only NumPy (and SciPy or the standard library where %s does); the\n' \
             'run-time helpers the generated code calls are copied from srcgrad below.%s\n"""\n' % (
                 name, origin, signature, "    %s(%s) -> its value\n" % (primal_name, inputs) if primal_name else "",
                 name, primal_note)
    exported = [main_name] + ([primal_name] if primal_name else [])
    text = header + linker.text() + "\n\n__all__ = %r\n" % (exported,)
    pathlib.Path(path).write_text(text)
    return GeneratedCode(text)
