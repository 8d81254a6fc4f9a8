"""The rule registry: one table of adjoint rules used by both paths.

A rule is a small template function in the field's notation (`d[x]` is the
cotangent of `x`), registered for a primitive (a NumPy function or ufunc, or
one of srcgrad's helpers):

    @register_adjoint(np.exp)
    def exp(z, x, out=None):
        d[x] = d[z] * z

A parameter holding a list/tuple of arrays (np.stack's `arrays`, einsum's
`*operands`) gets a list as its cotangent: `d[arrays] = [g0, g1, ...]`. A
primitive returning a tuple/list of arrays (np.split, linalg.eigh) reads its
output cotangents as `d[z][0]`, `d[z][1]`... (zeros for unused outputs).

The first parameter is the primal output; the others mirror the primitive's
signature and defaults so that a call site binds with
`inspect.signature(template).bind`. The compiler inlines the body into
generated code, and the tape compiles the same body once per set of needed
cotangents into a VJP function (both in transforms/instantiate.py). This
module holds the records and the tables only: it compiles nothing.
"""
import inspect
import linecache
import sys
import textwrap
import threading
import types

import gast

from ..errors import public_name
from ..syntax import ast_util
from ..syntax.templates import is_d

_ADJOINTS = {}
_BATCHED = {}
_TAPE_FORMS = {}
_NONDIFF = set()
_lock = threading.Lock()
_LAZY = {}      # optional library's module name -> loader of its rule modules
_lazy_lock = threading.RLock()
_modules_seen = -1      # len(sys.modules) when load_lazy last looked


def register_lazy(module, loader):
    """Register the rules of an optional library (SciPy) when the program
    has imported `module`: `loader()` imports the rule modules, on the first
    lookup that misses after `module` appears in sys.modules. This keeps
    `import srcgrad` from importing scipy.stats (~0.5 s)."""
    _LAZY[module] = loader


def load_lazy(everything=False):
    """Import the pending rule modules of the optional libraries the program
    has imported (all that are importable if `everything`). True if any
    was loaded, so that a lookup that missed is worth repeating."""
    global _modules_seen
    if not _LAZY:
        return False
    if not everything and len(sys.modules) == _modules_seen:
        return False            # nothing imported since the last look (the common, hot case)
    _modules_seen = len(sys.modules)
    with _lazy_lock:            # (another thread waits until the rules are registered)
        ready = [m for m in list(_LAZY) if everything or m in sys.modules]
        for module in ready:
            loader = _LAZY.pop(module)
            try:
                loader()
            except ImportError:     # the optional library is absent: no rules for it
                pass
    return bool(ready)


class _Signature:
    """An attribute of a Template read from its signature, computed with all
    the others (Template._read_signature) the first time one is read; the
    instance's own attribute then hides this descriptor."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        obj._read_signature()
        return obj.__dict__[self.name]


class Template:
    """A rule template parsed once: `tree` (its gast FunctionDef), `output`
    (the primal-output parameter), `params` (the others, in order),
    `defaults`, `varargs` (the *parameter's name, in a list, or none),
    `signature` (the template's inspect.Signature, renamed), `doc` (its
    docstring), and `bind`, which matches a call's arguments to them.
    Shared by adjoint rules (here) and tangent rules (tangents.py).

    srcgrad's own templates (module `srcgrad.*`) are read lazily: the
    signature's facts when one is first read, the tree when first needed.
    A user's template is read, and checked, when it is registered.

    name, doc: the rule's name and docstring (default: the template's);
      compiled VJPs are called `vjp_<name>`. `doc` may be a function of no
      arguments, for a rule written by code: it gives the docstring when
      first read.
    constants: {NAME: value} for a parametrised template, whose body reads
      placeholders bound when the rule is registered (one template for
      scipy.stats' cdf, sf, logcdf and logsf: `KIND`). A number, string,
      bool or None becomes that literal; a function (or another object)
      becomes the expression that names it in the template's module (a
      global of that name, or `module.name`: `spelling`). The parsed tree
      then reads as if the template had been written with the values, and
      `{NAME}` in the docstring is replaced by the value (its `__name__`
      for an object). A placeholder may not be a parameter.
    rename: {parameter: new name}, for a template shared by primitives
      whose parameters are named differently (the shape parameter of
      scipy.stats.t, `df`, and of gamma, `a`): the signature, and every
      use of the parameter in the body, take the new name.
    tree: the FunctionDef itself, for a template written by code
      (tangents.register_linear), or a function of no arguments writing it
      when first needed; `template` then gives the signature and the
      module whose globals the body reads.
    """

    signature = _Signature()
    output = _Signature()
    params = _Signature()
    defaults = _Signature()
    varargs = _Signature()
    _n_required = _Signature()
    _fast_bind = _Signature()
    _by_keyword = _Signature()

    def __init__(self, primitive, template, name=None, doc=None, constants=None, rename=None, tree=None):
        self.primitive = primitive
        self.template = template
        self.name = name or template.__name__
        self.globals = template.__globals__
        doc = template.__doc__ if doc is None else doc
        if constants and isinstance(doc, str):
            for key, value in constants.items():
                doc = doc.replace("{%s}" % key, str(getattr(value, "__name__", value)))
        self._doc = doc
        self._rename = rename
        self._recipe = (tree, rename, constants)
        self._tree = None
        if tree is None:
            # the module's lines as imported (linecache replaces, never edits, a file's list): the
            # template parsed later is the code that runs, even if the file changes on disk meanwhile
            code = template.__code__
            self._lines = (linecache.getlines(code.co_filename, template.__globals__), code.co_firstlineno)
        if not (getattr(template, "__module__", "") or "").startswith("srcgrad."):
            self.signature  # (a user's template is checked when registered; srcgrad's own when first used)
            self.tree
        elif tree is not None and not callable(tree):
            self.tree
        # caches filled by transforms/instantiate.py (declared here, written there)
        self.free_names = None      # the module globals the body reads, sorted
        self.compiled = {}          # needed set -> compiled VJP/JVP function

    # The facts read from the template's signature (`signature`, `output`,
    # `params`, `defaults`, `varargs`) are computed the first time one is read
    # (_Signature): inspect.signature on srcgrad's ~400 rules would cost
    # `import srcgrad` tens of milliseconds.

    def _read_signature(self):
        """Set the signature-derived attributes (once; see _Signature)."""
        signature = inspect.signature(self.template)
        if self._rename:
            rename = self._rename
            signature = signature.replace(parameters=[
                p.replace(name=rename.get(p.name, p.name)) for p in signature.parameters.values()])
        names = list(signature.parameters)
        output = names[0]
        params = list(signature.parameters.values())[1:]
        self.__dict__.update(
            signature=signature, output=output, params=names[1:],
            defaults={p.name: p.default for p in params if p.default is not inspect.Parameter.empty},
            varargs=[p.name for p in params if p.kind is p.VAR_POSITIONAL],
            _n_required=sum(1 for p in params if p.default is inspect.Parameter.empty),
            _fast_bind=all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params),
            _by_keyword=all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params))

    @property
    def doc(self):
        """The rule's docstring (a function giving it, for a rule written by
        code, is called the first time it is read)."""
        if callable(self._doc):
            self._doc = self._doc()
        return self._doc

    @doc.setter
    def doc(self, value):
        self._doc = value

    @property
    def tree(self):
        """The template's gast FunctionDef, parsed from its source the first
        time it is needed (srcgrad's ~600 rule templates are not parsed at
        import: a rule is parsed when code using it is compiled)."""
        if self._tree is None:
            tree, rename, constants = self._recipe
            if callable(tree):
                tree = tree()
            elif tree is None:
                lines, first = self._lines
                tree = (ast_util.parse_definition(lines[first - 1:])[0] if lines else
                        ast_util.parse(textwrap.dedent(inspect.getsource(self.template)))).body[0]
                tree.decorator_list = []
            if rename:
                tree = _Rename(rename).visit(tree)
            if constants:
                tree = _bind_constants(tree, constants, [self.output] + list(self.params), self.globals,
                                       self.name)
            self._tree = tree
            try:
                self._parsed()
            except Exception:
                self._tree = None
                raise
        return self._tree

    def _parsed(self):
        """Facts read from the parsed tree (subclasses), checked once."""

    def arguments(self, output, args, kwargs):
        """{parameter: value} for a call, the output first and the others in
        the template's order, defaults applied: `signature.bind(output,
        *args, **kwargs)` then apply_defaults, without inspect for plain
        positional calls, nor for keywords naming parameters not passed by
        position. Raises TypeError when the call does not fit."""
        if self._fast_bind and not kwargs and self._n_required <= len(args) <= len(self.params):
            out = {self.output: output}
            defaults = self.defaults
            for i, p in enumerate(self.params):
                out[p] = args[i] if i < len(args) else defaults[p]
            return out
        if kwargs and self._by_keyword and len(args) <= len(self.params):
            out = {self.output: output}
            defaults = self.defaults
            named = 0
            for i, p in enumerate(self.params):
                if i < len(args):
                    out[p] = args[i]
                elif p in kwargs:
                    out[p] = kwargs[p]
                    named += 1
                elif p in defaults:
                    out[p] = defaults[p]
                else:
                    break           # (a required parameter missing: bind raises)
            else:
                if named == len(kwargs):        # (else a keyword bind refuses)
                    return out
        bound = self.signature.bind(output, *args, **kwargs)
        bound.apply_defaults()
        return bound.arguments

    def bind(self, output, args, kwargs):
        """Bind a call's arguments to the template's parameters; returns an
        ordered dict {param: value} with defaults applied (output excluded).
        Raises TypeError when the call does not fit the primitive's signature."""
        if self._fast_bind and not kwargs and self._n_required <= len(args) <= len(self.params):
            values = dict(self.defaults)           # the common case, without inspect
            values.update(zip(self.params, args))
            return values
        try:
            bound = self.signature.bind(output, *args, **kwargs)
        except TypeError as exc:
            hint = (" (%s)" % where_hint(self.primitive) if "where" in kwargs and "where" not in self.params
                    else "")
            raise TypeError("srcgrad's rule for %s cannot differentiate this call: %s%s"
                            % (public_name(self.primitive), exc, hint)) from None
        bound.apply_defaults()
        values = dict(bound.arguments)
        values.pop(self.output)
        return values


def where_hint(primitive):
    """What to write instead of `primitive(x, where=mask)`, whose where= the
    rules do not model: the masked-out values replaced by the reduction's
    identity (0 for sums, 1 for products, -inf/inf for max/min), or for the
    statistics that count their elements (mean, var, std) the selected
    values x[mask]."""
    name = getattr(primitive, "__name__", "")
    fill = {"sum": "0", "nansum": "0", "prod": "1", "nanprod": "1", "max": "-np.inf", "amax": "-np.inf",
            "nanmax": "-np.inf", "min": "np.inf", "amin": "np.inf", "nanmin": "np.inf"}.get(name)
    if fill is not None:
        return ("where= is not modelled: mask the values first, np.%s(np.where(mask, x, %s)), which is "
                "differentiated" % (name, fill))
    return ("where= is not modelled: reduce the selected values, np.%s(x[mask]) (along an axis, a loop over "
            "the rows' x[i][mask[i]])" % name)


_LITERALS = (bool, int, float, complex, str, type(None))


class _BindConstants(ast_util.NodeTransformer):
    """Replaces the loads of placeholder names by the constants' nodes."""

    def __init__(self, nodes):
        self.nodes = nodes

    def visit_Name(self, node):
        found = self.nodes.get(node.id)
        if found is None or not isinstance(node.ctx, gast.Load):
            return node
        return ast_util.copy_location(ast_util.clone(found), node)


class _Rename(ast_util.NodeTransformer):
    """Renames parameters: the function's arguments and every Name of them."""

    def __init__(self, names):
        self.names = names

    def visit_Name(self, node):
        node.id = self.names.get(node.id, node.id)
        return node


def _bind_constants(tree, constants, params, namespace, where):
    """`tree` with the placeholders of `constants` bound (Template's
    `constants`). Raises ValueError for a placeholder that is a parameter,
    or an object its module cannot name."""
    nodes = {}
    for key, value in constants.items():
        if key in params:
            raise ValueError("rule %s: the constant %s is a parameter of its template" % (where, key))
        if isinstance(value, _LITERALS):
            nodes[key] = ast_util.const(value)
        else:
            nodes[key] = ast_util.quote_expr(spelling(value, namespace, "rule %s: the constant %s" % (where, key)))
    return _BindConstants(nodes).visit(tree)


def _names(value, obj):
    """Does `value`, found under a name, stand for `obj`: obj itself, or
    the tape's recording wrapper of it (np.stack while a tape or
    accumulator is active, tape/scipy_calls.py), which runs obj?"""
    return value is obj or (value is not None and getattr(value, "__srcgrad_raw__", None) is obj)


def spelling(obj, namespace, where="spelling"):
    """How a module whose globals are `namespace` names `obj`: a global
    bound to it (its own name first), else `module.name` or
    `module.sub.name` through a module it imports (np.sum, np.fft.fft,
    runtime.densify). Raises ValueError when none does."""
    name = getattr(obj, "__name__", None)
    if name and _names(namespace.get(name), obj):
        return name
    for key, value in sorted(namespace.items()):
        if _names(value, obj) and not key.startswith("_"):
            return key
    for key, value in sorted(namespace.items()):
        if isinstance(value, types.ModuleType) and not key.startswith("_") and name:
            if _names(getattr(value, name, None), obj):
                return "%s.%s" % (key, name)
            for sub, mod in sorted(vars(value).items()):
                if isinstance(mod, types.ModuleType) and not sub.startswith("_") \
                        and _names(getattr(mod, name, None), obj):
                    return "%s.%s.%s" % (key, sub, name)
    raise ValueError("%s: %r is not reachable from the globals of the template's module" % (where, obj))


class Rule(Template):
    """An adjoint rule: a parsed template plus its compiled VJPs.

    Attributes (besides Template's): `diff_params` (the parameters with a
    `d[p] = ...` contribution), `sequence_output` (the primitive returns a
    tuple/list of arrays: the body reads `d[z][i]`), `batch_safe` (None
    until transforms/batch_safety.py decides whether the template runs on
    a stack of cotangents as written).
    """

    def __init__(self, primitive, template, name=None, doc=None, constants=None, rename=None):
        self.batch_safe = None
        super().__init__(primitive, template, name=name, doc=doc, constants=constants, rename=rename)

    @property
    def diff_params(self):
        """The parameters with a `d[p] = ...` contribution (parses the template)."""
        return self.tree and self._diff_params

    @property
    def sequence_output(self):
        """Does the primitive return a tuple/list of arrays (`d[z][i]` in the body)?"""
        return self.tree and self._sequence_output

    @sequence_output.setter
    def sequence_output(self, value):
        self.tree        # (parsed first: parsing sets it)
        self._sequence_output = value

    def _parsed(self):
        tree = self._tree
        diff = []
        for stmt in tree.body:
            if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
                p = is_d(stmt.targets[0])
                if p is not None:
                    if p not in self.params:
                        raise ValueError("rule %s assigns d[%s], which is not a parameter" % (self.name, p))
                    if p not in diff:
                        diff.append(p)
        self._diff_params = tuple(diff)
        # `d[z][i]` in the body: the primitive returns a tuple/list of arrays
        self._sequence_output = any(
            isinstance(n, gast.Subscript) and is_d(n.value) == self.output
            and isinstance(n.slice, (gast.Constant, gast.Slice, gast.UnaryOp))
            for n in ast_util.walk(tree))

    def __repr__(self):
        return "<adjoint rule %s for %s>" % (self.name, getattr(self.primitive, "__name__", self.primitive))


def register_adjoint(primitive, *, name=None, doc=None, constants=None, rename=None):
    """Decorator registering the adjoint rule of `primitive`.

    The decorated template's first parameter is the primal output, the others
    mirror `primitive`'s signature. In the body, `d[z]` reads the output's
    cotangent and `d[x] = expr` contributes the cotangent of input `x`; any
    other assignment is a temporary. No control flow on values. Rules must be
    broadcast-safe: use `unbroadcast(g, x)` to sum a cotangent back to `x`'s
    shape. The same template is inlined by the compiler and compiled into a
    VJP for the tape. Returns the template unchanged. Registering a second
    rule for the same primitive replaces the first.

    name, doc, constants, rename: the rule's name and docstring, the values
    of a parametrised template's placeholders and its renamed parameters
    (Template), for a template that serves several primitives:
    `register_adjoint(st.t.sf, name="t_sf", constants={"KIND": "sf"})(
    distribution_function)`. Raises ValueError for a malformed template or
    constant.
    """
    def decorator(template):
        rule = Rule(primitive, template, name=name, doc=doc, constants=constants, rename=rename)
        with _lock:
            _ADJOINTS[primitive] = rule
            _NONDIFF.discard(primitive)
        return template
    return decorator


def register_batched_adjoint(primitive):
    """Decorator registering the *batched* adjoint of `primitive`: the same
    parameters as its adjoint rule, with `d[z]` a stack of cotangents on a
    new leading axis (vectorised Jacobians). For rules that are not
    batch-safe as written (reshape, transpose, ...); the others need none."""
    def decorator(template):
        rule = Rule(primitive, template)
        with _lock:
            _BATCHED[primitive] = rule
        return template
    return decorator


def batched_rule(primitive):
    """The batched adjoint Rule registered for `primitive`, or None."""
    try:
        found = _BATCHED.get(primitive)
        if found is None and _LAZY and load_lazy():
            found = _BATCHED.get(primitive)
        return found
    except TypeError:
        return None


def register_tape_form(func, form):
    """Compute the NumPy function `func` on Tensors as `form(*args, **kwargs)`,
    a composition of operations that are recorded (NotImplemented: record
    `func` itself). For functions whose Tensors sit deeper than a tape
    entry's list parameters reach (np.block's nested lists). Read by
    Tensor.__array_function__ (srcgrad/tensor.py)."""
    with _lock:
        _TAPE_FORMS[func] = form


def tape_form(func):
    """The form registered for `func` by register_tape_form, or None."""
    try:
        return _TAPE_FORMS.get(func)
    except TypeError:   # unhashable
        return None


def register_nondiff(*functions):
    """Declare functions whose outputs carry no derivative (argmax, shape...)."""
    with _lock:
        for f in functions:
            _NONDIFF.add(f)


def adjoint_rule(primitive):
    """The Rule registered for `primitive`, or None."""
    try:
        found = _ADJOINTS.get(primitive)
        if found is None and _LAZY and load_lazy():
            found = _ADJOINTS.get(primitive)
        if found is None and getattr(primitive, "__srcgrad_raw__", None) is not None:
            found = _ADJOINTS.get(primitive.__srcgrad_raw__)   # (tape/scipy_calls.py's wrappers)
        return found
    except TypeError:  # unhashable
        return None


def is_nondiff(primitive):
    """Is `primitive` declared non-differentiable (register_nondiff, or a
    runtime.nondiff_helper)?"""
    try:
        if primitive in _NONDIFF:
            return True
        if _LAZY and load_lazy() and primitive in _NONDIFF:
            return True
        return getattr(primitive, "__srcgrad_nondiff__", False)
    except TypeError:
        return False


def loaded_rules():
    """A copy of the rules registered so far ({primitive: Rule}), without
    loading an optional library's rules (adjoint_rules does)."""
    return dict(_ADJOINTS)


def rule_count():
    """How many adjoint rules are registered now (cheap: no lazy loading);
    a change tells a cache built from adjoint_rules() to rebuild."""
    return len(_ADJOINTS)


def adjoint_rules():
    """A copy of the registry: {primitive: Rule} (every optional library's
    rules included)."""
    load_lazy(everything=True)
    return dict(_ADJOINTS)
