"""sg.jit: srcgrad's generated derivative code compiled with Numba.

For what `sg.grad` / `sg.value_and_grad` return (and `sg.hvp`: the
generated JVP of the gradient, in place of the gradient), a call:

1. asks srcgrad for the generated gradient function of the arguments'
   kinds (Python floats get scalar code, arrays array code: what
   `sg.grad` itself would run, `Artefact.gradient_function`);
2. links it into one module namespace with everything it calls
   (tools/linker.py, as sg.export does);
3. lowers the generated functions for Numba (lower.py), binds the Numba
   twins of srcgrad's run-time helpers (twins.py) in place of the helpers,
   wraps every function of the module in `numba.njit`;
4. calls the main function, which Numba compiles for the argument types
   (dtype, rank and layout of arrays: its own signatures), so a call with
   new shapes of the same dtypes and ranks does not compile again.

Anything that fails on the way (a name the linker cannot write, an idiom
the lowering does not know, any error of Numba's compiler) makes that
generated function run in CPython, as `sg.grad` runs it, with a
PerformanceWarning giving the reason; values are the same either way.
Numba compiles with bounds checks (an index out of range raises
IndexError, as in CPython, instead of reading past the array); an error
the compiled code raises when it runs is the function's own.

A plain user function is given to `numba.njit` as it is, with the same
fallback.
"""
import ast
import builtins
import contextlib
import re
import sys
import threading
import types
import warnings

import numpy as np

from ..errors import PerformanceWarning
from .. import op_by_op
from ..callables import as_function
from ..function import Function
from ..functional import Gradient, _grad_inputs, grad, source
from ..jacobians import FORWARD_BELOW
from ..program import JOINT_RECURSION
from ..rules.helpers import broadcast
from ..rules.helpers.shapes import array_tangent
from ..rules.python import containers
from ..runtime import ShapeOf, pop, push, zero_tangent
from ..tape import scipy_calls
from ..tools.linker import Linker, NotExportable
from . import diskcache, linking, lower, twins

_NUMBA_MISSING = ("sg.jit needs Numba (pip install 'srcgrad[jit]'); without it the function runs in "
                  "CPython")


def _numba():
    """The numba module and srcgrad's twins, or None when Numba is missing."""
    try:
        twins.install()
    except ImportError:
        return None, None
    return sys.modules["numba"], twins


def _reason(exc):
    """A short reason from a Numba (or linker, or lowering) error."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    keep = [ln for ln in lines if not ln.startswith(("During:", "File ", "^", "-" * 5))]
    text = "; ".join((keep or lines or [type(exc).__name__])[:3])
    return "%s: %s" % (type(exc).__name__, text[:400] + ("..." if len(text) > 400 else ""))


def _numba_limitation(exc):
    """Did compiled code raise for what Numba does not implement at run time
    (NotImplementedError: `X.T.reshape(6)`, a reshape of a non-contiguous
    array, which NumPy does by copying)? Asked for generated derivative code
    only: it is functional (it writes into no argument) and draws no random
    numbers (sg.jit runs those in CPython), so running it again in CPython
    is safe; a user's own function under sg.jit is not re-run."""
    return isinstance(exc, NotImplementedError)


def _while_compiling(exc, numba):
    """Did `exc` come from Numba compiling (typing, lowering: any error of
    its compiler, not only its NumbaErrors), rather than from running the
    compiled code? Compiled code raises from native frames: its traceback
    holds no frame of Numba's Python modules."""
    if isinstance(exc, (numba.core.errors.NumbaError, numba.core.errors.UnsupportedBytecodeError)):
        return True
    tb = exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_globals.get("__name__") or ""
        if name.startswith("numba."):
            return True
        tb = tb.tb_next
    return False


#: sg.jit(sg.jacobian) runs a compiled JVP per column for at most this many columns, and for tall
#: Jacobians (jacobians.FORWARD_BELOW); else sg.jacobian's reverse mode in CPython
COLUMNS_ALWAYS = 16


def _basis(flat, k, shape):
    """The k-th unit vector of a flat zero array `flat` (reused: the entry
    set before is cleared), shaped `shape`."""
    flat[k - 1] = 0.0
    flat[k] = 1.0
    return flat.reshape(shape)


def _kind(a):
    """What a compiled gradient is keyed on: Python scalar type, or array
    dtype and which axes have length 1 (so the rank; not the other
    lengths): srcgrad generates code per pattern (transforms/shapes.py)."""
    if isinstance(a, np.ndarray):
        return (np.ndarray, a.dtype.str, tuple([d == 1 for d in a.shape]))
    return (type(a),)


def _plain_kind(a):
    """What a compiled plain function is keyed on: Python scalar type, or
    array dtype and rank (Numba's own signature)."""
    if isinstance(a, np.ndarray):
        return (np.ndarray, a.dtype.str, a.ndim)
    return (type(a),)


class _Entry:
    """One compiled function (or its CPython fallback) for one generated
    function: `call(*args, *extra)`; `source` its lowered source; `extra`
    the global arrays it reads, passed at each call (_live_arrays)."""

    def __init__(self, call=None, source=None, fallback=None, keep=None, extra=(), residual_spec=None):
        self.call, self.source, self.fallback, self.keep = call, source, fallback, keep
        self.extra = extra
        self.residual_spec = residual_spec     # (a split reverse sweep's: lower.flatten_residuals)


def _named_objects(linker):
    out = {}
    for obj in linker.objects:
        name = linker.names.get(id(obj))
        if name is not None:
            out.setdefault(name, obj)
    return out


def _code_names(code):
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _code_names(c)
    return out


def _random_free_name(fn):
    """A name `fn` reads that draws from NumPy's random generators (a
    global numpy module whose `.random` it reads, numpy.random or one of
    its functions or Generators), or None."""
    names = _code_names(fn.__code__)
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    for name in sorted(names | set(cells)):
        try:
            value = cells[name].cell_contents if name in cells else fn.__globals__.get(name)
        except ValueError:
            continue
        if _is_random(value):
            return name
        if value is np and "random" in names:
            return "%s.random" % name
    return None


def _mutable_free_names(fn):
    """(name, value) of the first global or closure value of `fn`'s code
    (nested code included) that the program could change in place, which
    Numba would read once, when compiling: an array, a list, a dict, a
    set, an object with attributes; None when there is none."""
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    for name in sorted(_code_names(fn.__code__) | set(cells)):
        if name in cells:
            try:
                value = cells[name].cell_contents
            except ValueError:
                continue
        elif name in fn.__globals__:
            value = fn.__globals__[name]
        else:
            continue
        if isinstance(value, (np.ndarray, list, dict, set, bytearray)) or (
                hasattr(value, "__dict__") and not isinstance(value, (types.ModuleType, types.FunctionType, type))
                and not callable(value)):
            return name, value
    return None


#: helpers whose twins take a shape tuple for these arguments (lower._shape_stacks)
_SHAPE_READERS = {broadcast.unbroadcast: (1,), broadcast.unreduce: (1,), broadcast.reduction_size: (0, 1)}


#: helpers that read only the entries of their first n arguments, as np.array does (lower._packs_as_tuples)
_PACK_READERS = {getattr(f, "__srcgrad_raw__", f): n for f, n in ((array_tangent, 2), (zero_tangent, 1))}


#: srcgrad's helpers that take an index, and its position (lower._index_lists_as_arrays)
_INDEX_READERS = {"unindex": 2, "unindex_add": 3, "value_cotangent": 1, "zero_at": 1, "zero_at_in_place": 1,
                  "setitem": 1, "setitem_in_place": 1}


def _hashable(obj):
    try:
        hash(obj)
    except TypeError:
        return False
    return True


def link_and_lower(main, preferred, split=None, reruns=False):
    """Link generated function `main` into one module and lower it for
    Numba.

    Args:
      main: a generated function (it has `__srcgrad_trees__`).
      preferred: the module-level name wanted for it.
      split: None, or "fwd" / "bwd" for a split sweep (lower.lower_function).
      reruns: the caller runs the code several times where the user's
        program would run once (a Jacobian's columns): refused when it
        prints or may write into an array it was given (_writes_argument).

    Returns:
      (module AST (lowered), the main function's name, {name: object} of
      the module's linked objects, the names of its generated functions,
      the (name, object) pairs of the mutable objects written as their
      values: Linker.frozen).

    Raises:
      NotExportable: the code reaches something that cannot be linked.
      lower.Unlowerable: generated code uses an idiom with no lowering.
    """
    linker = Linker()
    linker.main = main
    linker.add_in_place = True
    name = linker.link(main, preferred)
    module = ast.parse(linker.text())
    objects = _named_objects(linker)
    push_names = [n for n, o in objects.items() if o is push]
    pop_names = [n for n, o in objects.items() if o is pop]
    shape_names = [n for n, o in objects.items() if o is ShapeOf]
    numpy_names = [n for n, o in objects.items() if o is np]
    generated = [n for n, o in objects.items() if getattr(o, "__srcgrad_trees__", None) is not None]
    drawn = _random_draws(module, objects, numpy_names)
    if drawn:
        raise lower.Unlowerable(_RANDOM % drawn)
    if any(_mode_of(objects[n]) == JOINT_RECURSION for n in generated):
        printed = _user_calls(module, objects, ("print",))
        if printed:
            raise lower.Unlowerable(
                "the code is recursive and prints (%s): compiled, a recursive call's VJP runs the call again "
                "(its split residuals would be a type containing itself), and would print again" % printed)
    if reruns:
        printed = _user_calls(module, objects, ("print",))
        written = _writes_argument(module, objects)
        if printed or written:
            raise lower.Unlowerable(
                "compiled, the code would run once per column of the Jacobian, and it %s: it runs once in "
                "sg.jacobian's CPython sweeps instead" % (
                    "prints (%s)" % printed if printed else "may write into an array it was given (%s)" % written))
    checked = _user_calls(module, objects, ("isinstance", "type"))
    if checked:
        raise lower.Unlowerable("the code tests the types of values (%s): Numba's types are not Python's "
                                "(a float argument is not `type(a) is float` there), and the test could take "
                                "the other branch" % checked)
    readers = {n: _SHAPE_READERS[o] for n, o in objects.items() if _hashable(o) and o in _SHAPE_READERS}
    appends = [n for n, o in objects.items() if getattr(o, "__srcgrad_raw__", o) is containers.list_append]
    indexers = {n: _INDEX_READERS[getattr(getattr(o, "__srcgrad_raw__", o), "__name__", None)]
                for n, o in objects.items()
                if getattr(getattr(o, "__srcgrad_raw__", o), "__name__", None) in _INDEX_READERS
                and (getattr(getattr(o, "__srcgrad_raw__", o), "__module__", "") or "").startswith("srcgrad.")}
    packers = {n: _PACK_READERS[getattr(o, "__srcgrad_raw__", o)] for n, o in objects.items()
               if _hashable(getattr(o, "__srcgrad_raw__", o)) and getattr(o, "__srcgrad_raw__", o) in _PACK_READERS}
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name in generated:
            own = split if node.name == name else _sweep_of(objects[node.name])
            lower.lower_function(node, push_names, pop_names, shape_names, numpy_names, own,
                                 shape_readers=readers, list_append=appends, flat=node.name == name,
                                 pack_readers=packers, index_readers=indexers)
    return module, name, objects, generated, linker.frozen


def _sweep_of(fn):
    """"fwd" or "bwd" when generated function `fn` is the split forward or
    reverse sweep of its artefact (a called function's: its stacks pass
    from one to the other among the residuals), else None."""
    artefact = _artefact_of(fn)
    if artefact is None:
        return None
    found = artefact.__dict__
    return "fwd" if found.get("fwd") is fn else "bwd" if found.get("bwd_fn") is fn else None


def _artefact_of(fn):
    """The artefact generated function `fn` comes from, or None."""
    ref = getattr(fn, "__srcgrad_artefact__", None)
    return ref() if ref is not None else None


def _mode_of(fn):
    """The mode of the artefact generated function `fn` comes from, or None."""
    return getattr(_artefact_of(fn), "mode", None)


def _user_functions(module, objects):
    """The FunctionDefs of the linked `module`'s generated functions and
    the user's (not srcgrad's helpers, which Numba twins replace)."""
    for fdef in module.body:
        if not isinstance(fdef, ast.FunctionDef):
            continue
        origin = objects.get(fdef.name)
        if (getattr(origin, "__module__", None) or "").startswith("srcgrad.") \
                and getattr(origin, "__srcgrad_trees__", None) is None:
            continue        # (a helper of srcgrad's)
        yield fdef


def _user_calls(module, objects, builtin_names):
    """The first call of one of the builtins `builtin_names` in the user's
    code of the linked `module` (_user_functions), as text, or None."""
    for fdef in _user_functions(module, objects):
        for node in ast.walk(fdef):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in builtin_names \
                    and objects.get(node.func.id, getattr(builtins, node.func.id)) is getattr(builtins, node.func.id):
                return ast.unparse(node)
    return None


#: srcgrad helpers that write into their first argument (where the compiler proved the array its own; `x[i] =
#: v` on a parameter is `setitem`, which copies: docs/supported-python.md)
_WRITERS = ("setitem_in_place", "zero_at_in_place", "add_into", "unindex_add")


def _writes_argument(module, objects):
    """The first statement of the linked `module`'s generated and user
    functions that may write into an array one of them was given: an
    element or slice assignment, an augmented assignment, an in-place
    helper (_WRITERS) or a NumPy call with `out=` on a parameter's name,
    or a call of an array method that writes (fill, sort, put, ...) on
    it; as text, or None. (Syntactic and conservative: a callee writing
    into a local array its caller passed counts too.)"""
    methods = {"fill", "sort", "put", "itemset", "partition", "resize", "setfield", "byteswap"}
    for fdef in _user_functions(module, objects):
        params = {a.arg for a in fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs}

        def base(e):
            while isinstance(e, (ast.Subscript, ast.Attribute)):
                e = e.value
            return e.id if isinstance(e, ast.Name) else None
        for node in ast.walk(fdef):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, ast.AugAssign) else []
            for t in targets:
                if isinstance(t, (ast.Subscript, ast.Attribute)) and base(t) in params \
                        or isinstance(node, ast.AugAssign) and base(t) in params:
                    return ast.unparse(node)
            if isinstance(node, ast.Call):
                f = node.func
                writer = isinstance(f, ast.Name) and getattr(objects.get(f.id), "__name__", None) in _WRITERS
                method = isinstance(f, ast.Attribute) and f.attr in methods and base(f.value) in params
                out = any(k.arg == "out" and base(k.value) in params for k in node.keywords)
                if writer and node.args and base(node.args[0]) in params or method or out:
                    return ast.unparse(node)
    return None


_RANDOM = ("the code draws random numbers (%s): under Numba they would come from Numba's own generator, not "
           "NumPy's, and differ from the plain call's draws")


#: argument types that are never random generators (_run's check skips them)
_PLAIN = (np.ndarray, float, int, bool, complex)


def _is_random(obj):
    """Is `obj` NumPy's random module, one of its functions, or a
    Generator / RandomState (or a bound method of one)?"""
    owner = getattr(obj, "__self__", None)
    for o in (obj, owner, type(obj)):
        name = getattr(o, "__name__", "") if isinstance(o, types.ModuleType) else getattr(o, "__module__", "")
        if isinstance(name, str) and name.startswith("numpy.random"):
            return True
    return False


def draws_random(artefact):
    """May the split forward sweep of `artefact` (and what it calls) draw
    random numbers? Read from its linked code (_random_draws); True when
    the code cannot be linked (no way to tell)."""
    linker = Linker()
    linker.main = artefact.fwd
    try:
        linker.link(artefact.fwd, "fwd")
        module = ast.parse(linker.text())
    except Exception:       # noqa: BLE001  (code sg.export cannot write: a custom gradient...; not known)
        return False
    objects = _named_objects(linker)
    return _random_draws(module, objects, [n for n, o in objects.items() if o is np], seeded_ok=True) is not None


#: NumPy's constructors of generators: called with a seed, what they draw is the same at each run
_SEEDED = ("RandomState", "default_rng", "Generator", "seed", "PCG64", "MT19937", "Philox", "SFC64", "SeedSequence")


def _random_draws(module, objects, numpy_names, seeded_ok=False):
    """The name of something in the linked module that draws from NumPy's
    random generators (np.random.normal, a Generator's method, an object
    of numpy.random), or None. `seeded_ok`: a generator the code makes
    with a seed (np.random.RandomState(3)) draws the same numbers at each
    run, and is not counted (nor are classes of numpy.random)."""
    for n, o in objects.items():
        if _is_random(o) and not (seeded_ok and isinstance(o, type)):
            return n
    seeded = set()
    if seeded_ok:
        for node in ast.walk(module):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SEEDED \
                    and (node.args or node.keywords):
                seeded.add(id(node.func.value))
    for node in ast.walk(module):
        if isinstance(node, ast.Attribute) and node.attr == "random" and isinstance(node.value, ast.Name) \
                and node.value.id in numpy_names and id(node) not in seeded:
            return "%s.random" % node.value.id
    return None


def _live_arrays(module, name, objects, generated, frozen):
    """Numba reads a module-level array when it compiles, and the linker
    wrote each mutable object the code reads as its value then: the
    program's later writes into it (an optimiser updating a global weight
    array in place) would not be seen. A global ndarray that only the main
    function reads becomes a parameter of it, given the array itself at
    each call (returned: their names and objects, in the parameters'
    order); any other mutable object that the generated code or the
    user's functions read raises Unlowerable (sg.jit then runs the code in
    CPython, which reads it live)."""
    user = {n for n, o in objects.items()
            if n in generated or (isinstance(o, types.FunctionType) and not o.__module__.startswith("srcgrad"))}
    readers = {}
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name in user:
            for n in ast.walk(node):
                if isinstance(n, ast.Name):
                    readers.setdefault(n.id, set()).add(node.name)
    live = []
    for var, obj in frozen:
        who = readers.get(var)
        if not who:
            continue
        if isinstance(obj, np.ndarray) and who == {name}:
            live.append((var, obj))
            continue
        raise lower.Unlowerable("the code reads %s (a %s), which Numba would freeze when compiling; pass it as "
                                "an argument" % (var, type(obj).__name__))
    if live:
        main = next(n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == name)
        if main.args.defaults or main.args.vararg or main.args.kwonlyargs or main.args.kwarg:
            raise lower.Unlowerable("the code reads the global array %s, and %s has defaults"
                                    % (live[0][0], name))
        main.args.args += [ast.arg(arg=var) for var, _ in live]
        names = {var for var, _ in live}
        module.body = [n for n in module.body if not (
            isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
            and n.targets[0].id in names)]
    return live


def build_entry(main, preferred, split=None, cache=False, reruns=False):
    """Compile generated function `main` with Numba (see the module doc);
    `split` and `reruns` as for link_and_lower; `cache`: the lowered
    module is run from its file in the on-disk cache and compiled with
    Numba's cache (diskcache.py), so another process loads the machine
    code.

    Returns an `_Entry` whose `call` is the Numba dispatcher (compiled on
    its first call) and `source` the lowered generated code, or whose
    `fallback` is the reason it cannot be compiled.
    """
    numba, twins = _numba()
    if numba is None:
        return _Entry(fallback=_NUMBA_MISSING)
    try:
        module, name, objects, generated, frozen = link_and_lower(main, preferred, split, reruns)
        live = _live_arrays(module, name, objects, generated, frozen)
    except (NotExportable, lower.Unlowerable) as exc:
        return _Entry(fallback=_reason(exc))
    shown = [node for node in module.body if isinstance(node, ast.FunctionDef) and node.name in generated]
    twin_names = {n: twins.twin_of(o) for n, o in objects.items()}
    twin_names = {n: t for n, t in twin_names.items() if t is not None}
    # the twins' definitions are not needed: drop the copied helpers they replace
    module.body = [node for node in module.body
                   if not (isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in twin_names)]
    ast.fix_missing_locations(module)
    ns = None
    if cache:
        try:
            ns = diskcache.module_namespace(ast.unparse(module))
        except OSError as exc:          # (a directory that cannot be written: compiled, not cached)
            warnings.warn("sg.jit: the on-disk cache %s cannot be written (%s); compiling without it"
                          % (diskcache.directory(), exc), PerformanceWarning, stacklevel=5)
            cache = False
        except Exception as exc:        # noqa: BLE001  (a module that does not run: CPython it is)
            return _Entry(fallback=_reason(exc))
    if ns is None:
        # (no __name__: Numba's recursive calls need the module name it records for a function
        # (inspect.getmodule, None here: "<dynamic>") to be the one it mangles (its __module__); a name
        # that is no module's makes every recursive call abort with "unresolved symbol")
        ns = {}
        try:
            exec(compile(module, "<srcgrad jit %s>" % name, "exec"), ns)
        except Exception as exc:            # noqa: BLE001  (a module that does not run: CPython it is)
            return _Entry(fallback=_reason(exc))
    ns.update(twin_names)
    ns[lower.REDUCE_NAME] = twins.reduce
    ns[lower.EINSUM_NAME] = twins.einsum
    ns[lower.VECTOR_NAME] = twins.vector_ufunc
    ns[lower.MATMUL_NAME] = twins.matmul
    ns[lower.ZEROS_NAME] = twins.zeros
    ns[lower.ZEROS_LIKE_NAME] = twins.zeros_like
    ns[lower.STACK_LIST_NAME] = twins.stack_list
    ns[lower.TYPED_LIST_NAME] = numba.typed.List
    ns[lower.STACK_VALUE_NAME] = twins.stack_value
    ns[lower.SHAPE_VALUE_NAME] = twins.shape_value
    for key, value in list(ns.items()):
        if isinstance(value, types.FunctionType) and value.__globals__ is ns:
            # (boundscheck: an index out of range raises IndexError, as in CPython)
            if cache and key != name:
                # the main function's callees compiled into its own machine code: a dispatcher read as a
                # global is a dynamic address, which Numba does not cache
                if not getattr(value, "__srcgrad_jitable__", False):
                    value.__srcgrad_jitable__ = True
                    numba.extending.register_jitable(boundscheck=True)(value)
            elif cache:
                ns[key] = numba.njit(value, boundscheck=True, cache=True,
                                     pipeline_class=linking.opt_pipeline_class())
            else:
                ns[key] = numba.njit(value, boundscheck=True, pipeline_class=linking.pipeline_class())
    header = "# lowered for Numba by sg.jit; twins: %s\n" % (", ".join(sorted(twin_names)) or "none")
    source = header + "\n\n".join(ast.unparse(node) for node in shown) + "\n"
    main_def = next(node for node in module.body if isinstance(node, ast.FunctionDef) and node.name == name)
    return _Entry(call=ns[name], source=source, keep=main, extra=tuple(obj for _, obj in live),
                  residual_spec=getattr(main_def, "residual_spec", None))


def _compiled_for_numba(program, mask):
    """The reverse-mode artefact of `program` for `mask` that sg.jit
    compiles: `program.compile(mask)`, or, when its split residuals would
    hold those of a recursive call (`recursive_residuals`: a tuple type
    containing itself, which Numba cannot type), the compilation whose
    recursive calls are reversed jointly (program.JOINT_RECURSION: each
    one's VJP runs it again; link_and_lower refuses that code when it
    prints, whose output would repeat)."""
    compiled = program.compile(mask)
    if getattr(compiled, "recursive_residuals", False):
        compiled = program.compile(mask, JOINT_RECURSION)
    return compiled


def _fast_inputs(args, wrt):
    """The program inputs for positional `args` of Python floats and
    floating ndarrays (what _grad_inputs gives them), or None for anything
    else."""
    for i in wrt:
        a = args[i]
        if type(a) is not float and not (type(a) is np.ndarray and a.dtype.kind in "fc"):
            return None
    return list(args)


def _as_gradient_value(g, x):
    """A compiled gradient as sg.grad returns it: an ndarray (0-d for a
    scalar input)."""
    if isinstance(g, (list, tuple)):
        return type(g)(_as_gradient_value(gi, xi) for gi, xi in zip(g, x)) if isinstance(x, (list, tuple)) \
            else g
    if isinstance(g, np.ndarray):
        return g
    if type(x) is float:
        return np.asarray(g, dtype=np.float64)
    dtype = np.asarray(x).dtype
    return np.asarray(g, dtype=dtype if dtype.kind in "fc" else np.float64)


class Jitted:
    """What `sg.jit(f)` returns: a callable with f's signature running f
    (or the derivative f stands for) compiled by Numba.

    Attributes:
      target: the function given to sg.jit.
      source: the lowered source of the generated code last compiled (a
        str; None before the first call, or for a plain function).
      fallbacks: {key: reason} of the calls that run in CPython.
    """

    def __init__(self, f, cache=False):
        self.target = f
        self.cache = cache
        self.__name__ = "jit_%s" % getattr(f, "__name__", "f")
        self.__doc__ = getattr(f, "__doc__", None)
        self.__wrapped__ = f
        self._entries = {}
        self._fast = {}         # argument kinds -> (program, entry, generated function): no re-binding
        self._wide = {}         # jacobian argument kinds -> True: reverse mode in CPython (_call_jacobian)
        self._lock = threading.Lock()
        self.source = None
        self.fallbacks = {}

    def __repr__(self):
        return "<srcgrad jit of %r>" % (self.target,)

    # -- entries
    def _entry(self, key, make):
        entry = self._entries.get(key)
        if entry is None:
            with self._lock:
                entry = self._entries.get(key)
                if entry is None:
                    entry = self._entries[key] = make()
        return entry

    def _fallback(self, key, entry, reason):
        entry.call, entry.fallback = None, reason
        self.fallbacks[key] = reason
        warnings.warn("sg.jit: %s runs in CPython, not compiled by Numba: %s"
                      % (getattr(self.target, "__name__", self.target), reason), PerformanceWarning, stacklevel=4)

    def _run(self, key, entry, args, python, functional=False):
        if entry.call is not None and any(_is_random(a) for a in args if type(a) not in _PLAIN):
            self._fallback(key, entry, _RANDOM % "a random generator argument")
        if entry.call is not None:
            numba, _ = _numba()
            try:
                if not scipy_calls.numpy_wrapped():
                    return entry.call(*args, *entry.extra), True
                with scipy_calls.numpy_restored():     # (inside a tape: Numba must see NumPy's own functions)
                    return entry.call(*args, *entry.extra), True
            except Exception as exc:
                if not (_while_compiling(exc, numba) or functional and _numba_limitation(exc)):
                    raise               # (the compiled code ran and raised: what the function raises)
                self._fallback(key, entry, _reason(exc))
        elif key not in self.fallbacks:
            self._fallback(key, entry, entry.fallback)
        return python(), False

    # -- calls
    def __call__(self, *args, **kwargs):
        """f(*args, **kwargs), compiled (see sg.jit)."""
        if isinstance(self.target, Gradient) and not kwargs:
            return self._call_gradient(args)
        hvp_of = getattr(self.target, "__srcgrad_hvp__", None)
        if hvp_of is not None and not kwargs:
            return self._call_hvp(hvp_of, args)
        jacobian_of = getattr(self.target, "__srcgrad_jacobian__", None)
        if jacobian_of is not None and not kwargs:
            return self._call_jacobian(jacobian_of, args)
        return self._call_function(args, kwargs)

    def _call_function(self, args, kwargs):
        f = self.target
        python_function = f.python_function if isinstance(f, Function) else f
        key = ("function",) + tuple(_plain_kind(a) for a in args)

        def make():
            numba, _ = _numba()
            if numba is None:
                return _Entry(fallback=_NUMBA_MISSING)
            transform = getattr(python_function, "__srcgrad_transform__", None)
            if transform is not None:
                return _Entry(fallback="what %s returns runs srcgrad's machinery; sg.jit compiles what sg.grad, "
                                       "sg.value_and_grad, sg.hvp and sg.jacobian return, and plain functions"
                                       % transform)
            if not isinstance(python_function, types.FunctionType):
                return _Entry(fallback="%r is not a Python function" % (python_function,))
            drawn = _random_free_name(python_function)
            if drawn:
                return _Entry(fallback=_RANDOM % drawn)
            mutable = _mutable_free_names(python_function)
            if mutable:
                return _Entry(fallback="%s reads %s (a %s), which Numba would freeze when compiling; pass it as "
                                       "an argument" % (python_function.__name__, mutable[0],
                                                        type(mutable[1]).__name__))
            if self.cache:
                try:
                    return _Entry(call=numba.njit(python_function, boundscheck=True, cache=True,
                                                  pipeline_class=linking.opt_pipeline_class()))
                except RuntimeError:        # (no file to cache next to: an exec'd function)
                    pass
            return _Entry(call=numba.njit(python_function, boundscheck=True,
                                          pipeline_class=linking.opt_pipeline_class()))
        entry = self._entry(key, make)
        if kwargs:
            return f(*args, **kwargs)
        out, _ = self._run(key, entry, args, lambda: f(*args))
        return out

    def _call_gradient(self, args):
        gradient = self.target
        fn = gradient.fn
        kinds = tuple(map(_kind, args))
        fast = self._fast.get(kinds)
        if fast is not None and not fn.is_stale() and fast[0].is_current():
            program, entry, main = fast
            raw = _fast_inputs(args, gradient.wrt)
            if raw is not None:
                return self._finish(main, entry, raw, args)
        try:
            program, mask, raw = _grad_inputs(fn, args, {}, gradient.wrt)
            compiled = _compiled_for_numba(program, mask)
        except Exception as exc:
            if not op_by_op.falls_back(exc):
                raise
            # (sg.grad runs f op by op on a tape, with its PerformanceWarning: nothing for Numba to compile)
            self.fallbacks[("op by op",) + kinds] = "%s runs op by op: %s" % (
                fn.__name__, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            return gradient(*args)
        if compiled.tuple_output and not gradient.has_aux:
            return gradient(*args)          # (raises grad's TypeError)
        n = len(fn.parsed.params)
        main = compiled.gradient_function(n, gradient.wrt, gradient.preserve_result, gradient.has_aux)
        entry = self._entry(id(main), lambda: build_entry(main, "grad_%s" % fn.__name__, cache=self.cache))
        if entry.source is not None:
            self.source = entry.source
        if not program.leaves and all(k[0] in (float, np.ndarray) for k in kinds):
            self._fast[kinds] = (program, entry, main)      # (the leaves, Variables, are fetched per call)
        return self._finish(main, entry, raw, args)

    def _call_hvp(self, hvp_of, args):
        """`sg.hvp(f, wrt)(*args, v)` compiled: the generated JVP of f's
        generated gradient (forward over reverse, as sg.hvp runs it),
        lowered and compiled as a gradient is. Arguments other than
        ndarrays and numbers (Tensors, containers), an integer or complex
        argument `wrt`, and Variables the gradient reads run sg.hvp itself
        (which raises what it raises: a `v` of the wrong shape)."""
        gradient, wrt = hvp_of
        h = self.target
        fargs, v = args[:-1], args[-1] if args else None
        x = fargs[wrt] if 0 <= wrt < len(fargs) else None
        if not (type(x) is float or type(x) is np.ndarray and x.dtype.kind == "f") \
                or not all(type(a) in _PLAIN for a in args) or np.shape(v) != np.shape(x):
            return h(*args)
        dtype = np.result_type(x)
        v = float(v) if type(x) is float else np.asarray(v, dtype=dtype)
        kinds = ("hvp",) + tuple(map(_kind, fargs))
        fast = self._fast.get(kinds)
        if fast is not None and not gradient.fn.is_stale() and fast[0].is_current():
            _, entry, main = fast
            return self._hvp_result(entry, main, list(fargs) + [v], args, x, dtype)
        fn = as_function(gradient)
        try:
            params = fn.bind(tuple(fargs), {})
            program = fn.program_for(params)
            if program.leaves:
                return h(*args)
            compiled = program.compile([k == wrt for k in range(len(params))], "forward")
        except Exception as exc:
            if not op_by_op.falls_back(exc):
                raise
            return h(*args)         # (op by op, with sg.hvp's PerformanceWarning)
        main = compiled.jvp_fn
        entry = self._entry(id(main), lambda: build_entry(main, "hvp_%s" % gradient.fn.__name__,
                                                          cache=self.cache))
        if entry.source is not None:
            self.source = entry.source
        if len(params) == len(fargs):
            self._fast[kinds] = (program, entry, main)
        return self._hvp_result(entry, main, list(params.values()) + [v], args, x, dtype)

    def _call_jacobian(self, jacobian_of, args):
        """`sg.jacobian(f, wrt)(*args)` compiled, by forward mode: f's
        generated JVP compiled by Numba, run once per entry of args[wrt]
        (one column of the Jacobian each; JAX's jacfwd, column by column).
        That runs f's compiled code once per column, which is the plain
        call's effect only for code without any: build_entry(reruns=True)
        refuses code that prints or writes into an array it was given
        (random draws and mutable globals sg.jit refuses anyway), and such
        code runs sg.jacobian itself, with a PerformanceWarning. So do
        Jacobians with more than COLUMNS_ALWAYS columns unless they are
        tall (at most FORWARD_BELOW columns per row, as sg.jacobian's own
        forward mode: otherwise its one vectorised reverse sweep costs
        less; decided at the first call for these argument kinds, whose
        first column gives the output's size), an integer or complex
        args[wrt], arguments other than ndarrays and numbers, f reading
        Variables, and a tuple of `wrt`s (sg.jacobian raises what it
        raises)."""
        f, wrt = jacobian_of
        jac = self.target
        kinds = ("jacobian",) + tuple(map(_kind, args))
        x = args[wrt] if isinstance(wrt, int) and 0 <= wrt < len(args) else None
        if not (type(x) is float or type(x) is np.ndarray and x.dtype.kind == "f") \
                or not all(type(a) in _PLAIN for a in args):
            return self._in_cpython(kinds, "sg.jit compiles sg.jacobian(f, wrt) for one integer `wrt` naming a "
                                           "float or float array, the arguments ndarrays and numbers", args)
        if self._wide.get(kinds):
            return jac(*args)
        fast = self._fast.get(kinds)
        if fast is not None and fast[0].is_current():
            _, entry, main = fast
            raw = list(args)
        else:
            try:
                fn = as_function(f)
                params = fn.bind(tuple(args), {})
                program = fn.program_for(params)
                if program.leaves or len(params) != len(args):
                    return self._in_cpython(kinds, "%s reads Variables or takes defaults" % fn.__name__, args)
                compiled = program.compile([k == wrt for k in range(len(params))], "forward")
            except Exception as exc:     # noqa: BLE001  (sg.jacobian itself raises what is wrong)
                if not op_by_op.falls_back(exc) and not isinstance(exc, TypeError):
                    raise
                return self._in_cpython(kinds, _reason(exc), args)
            if compiled.tuple_output:
                return jac(*args)           # (raises sg.jacobian's TypeError)
            main = compiled.jvp_fn
            entry = self._entry(id(main), lambda: build_entry(main, "jvp_%s" % fn.__name__, cache=self.cache,
                                                              reruns=True))
            if entry.source is not None:
                self.source = entry.source
            self._fast[kinds] = (program, entry, main)
            raw = list(params.values())
        return self._jacobian_columns(kinds, entry, main, raw, args, x)

    def _in_cpython(self, kinds, reason, args):
        """The CPython sg.jacobian on `args`, with a PerformanceWarning
        giving `reason` (once per argument kinds)."""
        if kinds not in self.fallbacks:
            self._fallback(kinds, _Entry(), reason)
        return self.target(*args)

    def _jacobian_columns(self, kinds, entry, main, raw, args, x):
        """The Jacobian of the compiled JVP `entry`'s output in x (a float
        or a float array at some position of `raw`), a column per entry of
        x, shaped out.shape + x.shape in the output's floating dtype; the
        CPython sg.jacobian's when the code cannot run compiled or has
        fewer outputs than x has entries."""
        scalar = type(x) is float
        n = 1 if scalar else x.size
        if n == 0:
            return self.target(*args)       # (no column: sg.jacobian's empty Jacobian)
        seed = 1.0 if scalar else np.zeros(x.size, dtype=x.dtype)
        out, compiled_run = self._run(id(main), entry, raw + [seed if scalar else _basis(seed, 0, x.shape)],
                                      lambda: self.target(*args), functional=True)
        if not compiled_run:
            return out
        y, t = out
        y = np.asarray(y)
        if y.dtype.kind != "f":
            return self.target(*args)       # (what sg.jacobian does with it: not this compiled code's job)
        if not (n <= COLUMNS_ALWAYS or n <= FORWARD_BELOW * y.size):
            # (sg.jacobian's reverse mode, one vectorised sweep of y.size rows: from now on)
            self._wide[kinds] = True
            return self._in_cpython(kinds, "the Jacobian has %d columns and %d rows: sg.jacobian's one vectorised "
                                           "reverse sweep costs less than a compiled JVP per column" % (n, y.size),
                                    args)
        dtype = np.result_type(y.dtype, x.dtype if not scalar else np.float64)
        J = np.empty((y.size, n), dtype=dtype)
        J[:, 0] = 0.0 if t is None else np.broadcast_to(np.asarray(t), y.shape).ravel()
        try:
            with scipy_calls.numpy_restored() if scipy_calls.numpy_wrapped() else contextlib.nullcontext():
                for k in range(1, n):
                    _, t = entry.call(*raw, _basis(seed, k, x.shape), *entry.extra)
                    J[:, k] = 0.0 if t is None else np.broadcast_to(np.asarray(t), y.shape).ravel()
        except NotImplementedError as exc:
            # (a twin's run-time check that only CPython decides, as _run's: f's code has no effects that
            # show, so sg.jacobian running it again is the plain call's behaviour)
            return self._in_cpython(kinds, _reason(exc), args)
        return J.reshape(y.shape + np.shape(x))

    def _hvp_result(self, entry, main, raw, args, x, dtype):
        """Run the compiled JVP of the gradient on `raw` (sg.hvp on `args`
        when it cannot run compiled): H . v, shaped as sg.hvp returns it."""
        out, compiled_run = self._run(id(main), entry, raw, lambda: self.target(*args), functional=True)
        if not compiled_run:
            return out
        hv = out[1]
        if isinstance(hv, tuple):
            hv = hv[0]
        if hv is None:          # (a symbolic zero: the gradient does not depend on args[wrt])
            return np.zeros(np.shape(x), dtype)
        return np.asarray(hv, dtype=dtype).reshape(np.shape(x))

    def _finish(self, main, entry, raw, args):
        """Run `entry` on the program inputs `raw` (the gradient's CPython
        code on `args` if it cannot), and shape the result as sg.grad."""
        gradient = self.target
        out, compiled_run = self._run(id(main), entry, raw, lambda: gradient(*args), functional=True)
        if not compiled_run:
            return out
        wrt = gradient.wrt
        xs = [raw[i] for i in wrt]

        def grads(g):
            return _as_gradient_value(g, xs[0]) if len(wrt) == 1 else tuple(
                _as_gradient_value(gi, xi) for gi, xi in zip(g, xs))
        if gradient.preserve_result and gradient.has_aux:
            (value, aux), g = out
            return (value, aux), grads(g)
        if gradient.preserve_result:
            value, g = out
            return value, grads(g)
        if gradient.has_aux:
            g, aux = out
            return grads(g), aux
        return grads(out)

    @property
    def signatures(self):
        """The Numba signatures compiled so far, over all argument kinds (a
        list of tuples of Numba types; one per dtype/rank combination, not
        per shape)."""
        out = []
        for entry in list(self._entries.values()):
            if entry.call is not None:
                out.extend(entry.call.signatures)
        return out

    def lowered_source(self, *args):
        """The lowered source of the code compiled for `args` (compiling
        it, without running it), a str; None for a plain function or code
        that runs in CPython.

        Raises what sg.grad raises for these arguments."""
        gradient = self.target
        if not isinstance(gradient, Gradient):
            return None
        fn = gradient.fn
        program, mask, raw = _grad_inputs(fn, args, {}, gradient.wrt)
        compiled = _compiled_for_numba(program, mask)
        main = compiled.gradient_function(len(fn.parsed.params), gradient.wrt, gradient.preserve_result,
                                          gradient.has_aux)
        entry = self._entry(id(main), lambda: build_entry(main, "grad_%s" % fn.__name__, cache=self.cache))
        return entry.source


def lowered_source(f, wrt, args):
    """The source `sg.jit(sg.grad(f, wrt))` compiles for `args` (a str: the
    lowered generated code, its first line naming the twins), or, when it
    cannot be lowered, a comment giving the reason followed by the CPython
    gradient code sg.jit runs instead (`sg.source(f, wrt, args=args,
    jit=True)`). Raises what sg.grad raises for these arguments."""
    jitted = Jitted(grad(f, wrt=wrt))
    text = jitted.lowered_source(*args)
    if text is not None:
        return text
    if _numba()[0] is None:
        reason = _NUMBA_MISSING
    else:
        reason = next((e.fallback for e in jitted._entries.values() if e.fallback), "not lowered")
    return "# sg.jit runs this gradient in CPython, not compiled by Numba: %s\n%s" % (
        reason, source(f, wrt=wrt, args=args))


def jit(f, *, cache=False):
    """Compile `f` with Numba (the `jit` extra: `pip install 'srcgrad[jit]'`).

    Args:
      f: a Python function, or what `sg.grad` / `sg.value_and_grad` /
        `sg.hvp` return. For a gradient, the generated derivative code that
        `sg.source(f, args=...)` shows is lowered for Numba (one typed
        stack per saved variable, `range(n - 1, -1, -1)` for reversed
        loops, srcgrad's run-time helpers replaced by `@njit` twins chosen
        at specialisation time) and compiled; for `sg.hvp(f, wrt)`, the
        generated JVP of f's gradient (forward over reverse), when its
        arguments are ndarrays and numbers and the one differentiated is
        a float or a floating array (anything else runs sg.hvp itself);
        for `sg.jacobian(f, wrt)` (one integer `wrt`), f's generated JVP,
        run once per entry of args[wrt] (forward mode, a column each, as
        JAX's jacfwd) when the Jacobian has at most COLUMNS_ALWAYS
        columns or is tall (FORWARD_BELOW), and the code neither prints
        nor writes into an array it was given (it runs once per column);
        otherwise sg.jacobian itself, with a PerformanceWarning.
      cache: keep the machine code on disk, so that a new process loads it
        instead of compiling again (seconds for a gradient; Numba's
        `cache=True`, keyed by the lowered source: diskcache.py). The
        directory is `$SRCGRAD_CACHE_DIR/jit`, else `~/.cache/srcgrad/jit`.
        Whatever `cache` says, the run-time helpers' Numba twins, which
        are the same code for every program, are cached in its `twins`
        folder (twins.py): only the first process that uses a twin
        specialisation compiles it.

    Returns:
      A `Jitted` callable with f's signature, returning what f returns
      (for a gradient, what `sg.grad(...)(*args)` returns: ndarrays of the
      arguments' shapes and floating dtypes, 0-d for Python floats; for a
      Jacobian, an ndarray of shape out.shape + args[wrt].shape in the
      output's floating dtype, as sg.jacobian's). Its
      `source` attribute holds the lowered code last compiled;
      `lowered_source(*args)` the code for some arguments.

      Compiled code is cached per argument dtypes and ranks: a call with
      new shapes of the same dtypes and ranks does not compile again.
      It is optimised at LLVM level 2, not Numba's default 3 (or at
      NUMBA_OPT when that is lower), unless it computes with scalars and
      1-d arrays only: for matrices a first call 1.3-8x shorter, for a
      steady state 0-8% slower (linking.COMPILE_OPT, benchmarks/JIT.md).

    Warns:
      srcgrad.PerformanceWarning: when (for some argument kinds) the code
        cannot be compiled (Numba missing, a construct Numba does not
        type, something the linker cannot write): it then runs in CPython,
        with the same values, and the warning says why.

    Raises:
      Exception: what f (or sg.grad of it) raises; nothing of its own.
    """
    if isinstance(f, Jitted) and f.cache == cache:
        return f
    return Jitted(f.target if isinstance(f, Jitted) else f, cache=cache)
