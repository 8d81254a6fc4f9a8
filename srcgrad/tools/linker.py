"""The linker of sg.export (tools/export.py): every object the generated
code reaches, given a module-level definition in one standalone module (see
export.py's docstring for what each kind of object becomes)."""
import ast
import builtins
import inspect
import keyword
import re
import sys
import textwrap
import threading
import types

import gast
import numpy as np

from ..runtime.arrays import TypeCache

from ..artefact import Deferred
from ..errors import public_name, short
from ..function import BoundFunction, Function
from ..rules.helpers import broadcast, elementwise
from ..rules.python import containers
from ..syntax import ast_util
from ..syntax.anno import Anno
from ..syntax.naming import ALIAS_PREFIX
from ..tensor import Tensor, Variable
from ..transforms import inplace, parse

_PACKAGE = __name__.partition(".")[0]
#: srcgrad's modules whose objects generated code may call at run time
_RUNTIME_MODULES = (_PACKAGE + ".runtime", _PACKAGE + ".rules", _PACKAGE + ".errors")
_THIRD_PARTY = ("numpy", "scipy")
#: the sections of the module, in order (definitions are placed by kind)
_SECTIONS = {"helper": "srcgrad's run-time helpers, copied from its source",
             "generated": "the generated code of the functions it calls",
             "user": "the function as written, and the functions it calls",
             "main": "the derivative"}
_COMMENT = re.compile(r"^(\s*)(\'\'\'|\"\"\"|'|\")" + re.escape(ast_util.COMMENT_PREFIX) + r"(.*)\2$")


class NotExportable(TypeError):
    """An object the exported module would need cannot be written standalone."""


def _module_of(obj):
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str):
        module = getattr(type(obj), "__module__", "") or ""
    return module


def _is_srcgrad(module):
    return module == _PACKAGE or module.startswith(_PACKAGE + ".")


def _allowed_module(name):
    top = name.partition(".")[0]
    return top in _THIRD_PARTY or top in sys.stdlib_module_names


def _free_names(tree):
    """(free, bound): the names `tree` (a stdlib ast function or class
    definition) reads that nothing inside it binds (its globals, in order of
    appearance), and the names it binds."""
    bound, loads, declared = set(), [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loads.append(node.id)
            else:
                bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not tree:
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).partition(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
    return [n for n in dict.fromkeys(loads) if n not in bound or n in declared], bound - declared


class _Rename(ast.NodeTransformer):
    """Rename free names, and turn `module.attr` for a srcgrad module into
    the name its object was linked to."""

    def __init__(self, mapping, attributes):
        self.mapping, self.attributes = mapping, attributes

    def visit_Name(self, node):
        if node.id in self.mapping:
            node.id = self.mapping[node.id]
        return node

    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Name) and (node.value.id, node.attr) in self.attributes:
            return ast.copy_location(ast.Name(id=self.attributes[node.value.id, node.attr], ctx=node.ctx), node)
        self.generic_visit(node)
        return node


def _unparse(tree):
    out = []
    for line in ast.unparse(ast.fix_missing_locations(tree)).split("\n"):
        m = _COMMENT.match(line)
        out.append(m.group(1) + "# " + m.group(3).encode().decode("unicode_escape") if m else line)
    return "\n".join(out)


_MUTABLE = (np.ndarray, list, dict, set, bytearray)


class Linker:
    """One module namespace: objects -> module-level names, with the code
    that defines them (imports, bindings, definitions in dependency order)."""

    def __init__(self):
        self.main = None            # the generated function being exported
        self.main_defaults = {}     # its trailing parameters' defaults (source text), as f's
        self.names = {}             # id(obj) -> name
        self.objects = []           # (kept alive while linking: ids stay unique)
        self.used = set(keyword.kwlist) | set(dir(builtins))
        self.imports = []           # "import numpy as np"
        self.bindings = []          # "tanh = np.tanh", constants
        self.late = []              # constants that hold defined functions (a dict of lambdas)
        self.refs = 0               # how many container elements are linked names (not literals)
        # (name, object) of the mutable objects written as their value when linked (arrays, lists, dicts,
        # Variables, objects rebuilt from their attributes): sg.jit must not freeze what the program changes
        self.frozen = []
        self.defs = {section: [] for section in _SECTIONS}    # definitions, dependencies first
        # sg.jit: the loop accumulations that may add in place (inplace.loop_accumulations_in_place) are
        # written `a = add_into(a, e)` (its Numba twin adds in place); sg.export keeps `a = a + e`, the code
        # as sg.source shows it
        self.add_in_place = False

    # -- names
    def fresh(self, preferred):
        """A module-level name not yet used, after `preferred` (without the
        generated code's alias prefix, naming.ALIAS_PREFIX)."""
        if preferred.startswith(ALIAS_PREFIX) and preferred[len(ALIAS_PREFIX):].isidentifier():
            preferred = preferred[len(ALIAS_PREFIX):]
        base = preferred if preferred.isidentifier() and not keyword.iskeyword(preferred) else "_obj"
        name, k = base, 1
        while name in self.used:
            k += 1
            name = "%s_%d" % (base, k)
        self.used.add(name)
        return name

    def _claim(self, obj, preferred):
        name = self.fresh(preferred)
        self.names[id(obj)] = name
        self.objects.append(obj)
        return name

    # -- linking
    def link(self, obj, preferred, where="the generated code"):
        """The module-level name standing for `obj` (defined on first use)."""
        found = self.names.get(id(obj))
        if found is not None:
            return found
        builtin_name = preferred if getattr(builtins, preferred, None) is obj else getattr(obj, "__name__", None)
        if isinstance(builtin_name, str) and getattr(builtins, builtin_name, None) is obj:
            self.names[id(obj)] = builtin_name
            self.objects.append(obj)
            return builtin_name
        if isinstance(obj, Deferred):           # a recursive call's compiled callee
            return self.link(getattr(obj.pending.resolve(), obj.attr), obj.__name__, where)
        if isinstance(obj, BoundFunction):
            obj = types.MethodType(obj.function.python_function, obj.instance)
        if isinstance(obj, types.MethodType) and not isinstance(obj.__self__, type(sys)):
            owner = self.link(obj.__self__, "%s_%s" % (type(obj.__self__).__name__.lower(), "object"), where)
            name = self._claim(obj, preferred)
            self.late.append("%s = %s.%s" % (name, owner, obj.__func__.__name__))
            return name
        if isinstance(obj, Function):
            obj = obj.python_function
            found = self.names.get(id(obj))
            if found is not None:
                return found
        if isinstance(obj, (Tensor, Variable)):
            name = self._constant(obj, np.asarray(obj.numpy()), preferred, where)
            if isinstance(obj, Variable):
                self.frozen.append((name, obj))
            return name
        if isinstance(obj, types.ModuleType):
            return self._import(obj, preferred, where)
        if getattr(obj, "__srcgrad_trees__", None) is not None:
            return self._generated(obj, preferred)
        if getattr(obj, "__srcgrad_custom__", None) is not None:
            raise NotExportable("sg.export: %s calls %s, a @sg.custom_gradient function, whose gradient runs "
                                "through srcgrad at run time; it cannot be exported standalone"
                                % (where, getattr(obj, "__name__", obj)))
        if isinstance(obj, TypeCache):          # a runtime helper's cache: starts empty
            name = self._claim(obj, preferred)
            self.bindings.append("%s = {}  # a cache, filled at run time" % name)
            return name
        module = _module_of(obj)
        if _is_srcgrad(module):
            raw = getattr(obj, "__srcgrad_raw__", obj)
            if not module.startswith(_RUNTIME_MODULES) or not isinstance(raw, (types.FunctionType, type)):
                raise NotExportable(
                    "sg.export: %s uses %s (%s), srcgrad's own machinery, at run time: it cannot be written "
                    "standalone%s" % (where, getattr(obj, "__qualname__", obj), module,
                                      " (forward mode of a primitive without a tangent rule: export "
                                      "mode='reverse', or register a tangent rule)"
                                      if getattr(obj, "__name__", "").startswith("transpose_jvp") else ""))
            return self._definition(obj, raw, preferred)
        refs = self.refs
        literal = self._literal(obj, preferred)
        if literal is not None:
            name = self._claim(obj, preferred)
            if isinstance(obj, _MUTABLE):
                self.frozen.append((name, obj))
            # a container of functions names definitions: bound after them
            (self.late if self.refs > refs else self.bindings).append("%s = %s" % (name, literal))
            return name
        if isinstance(obj, (types.FunctionType, type)) and not _is_library(obj, module):
            return self._definition(obj, obj, preferred)        # the user's code
        if isinstance(getattr(obj, "__dict__", None), dict) and not isinstance(obj, types.ModuleType) \
                and not _is_library(type(obj), _module_of(type(obj))) and not _is_srcgrad(_module_of(type(obj))):
            return self._instance(obj, preferred)
        if _allowed_module(module) or module == "builtins":
            return self._library_object(obj, preferred, where)
        raise NotExportable("sg.export: %s uses %r (a %s from %s), which cannot be written standalone: pass it "
                            "as an argument, or make it a constant" % (where, obj, type(obj).__name__, module))

    def _import(self, module, preferred, where):
        name = module.__name__
        if not _allowed_module(name):
            raise NotExportable("sg.export: %s uses the module %s; the exported module may import only NumPy, "
                                "SciPy and the standard library" % (where, name))
        alias = self._claim(module, preferred)
        self.imports.append("import %s" % name if alias == name else "import %s as %s" % (name, alias))
        return alias

    def _submodules(self, tree, name, module):
        """`import scipy.special` for the code's `scipy.special.gammaln`
        (importing a package does not always import its submodules)."""
        for node in ast.walk(tree):
            chain = []
            while isinstance(node, ast.Attribute):
                chain.append(node.attr)
                node = node.value
            if not (isinstance(node, ast.Name) and node.id == name and chain):
                continue
            dotted = module.__name__
            for attr in reversed(chain[1:]):
                dotted += "." + attr
                if dotted not in sys.modules:
                    break
                line = "import %s" % dotted
                if line not in self.imports:
                    self.imports.append(line)

    def _library_object(self, obj, preferred, where):
        """A NumPy, SciPy or standard-library object: a binding to its
        public path (`tanh = np.tanh`)."""
        objclass = getattr(obj, "__objclass__", None)          # list.append
        if objclass is not None and getattr(builtins, objclass.__name__, None) is objclass:
            path = "%s.%s" % (objclass.__name__, obj.__name__)
            root, rest = objclass.__name__, obj.__name__
            root_name = root
        else:
            path = public_name(obj)
            dotted = "numpy" + path[2:] if path == "np" or path.startswith("np.") else path
            parts = dotted.split(".")
            module = None
            for k in range(len(parts) - 1, 0, -1):
                module = sys.modules.get(".".join(parts[:k]))
                if module is not None:
                    break
            if module is None or not _allowed_module(module.__name__):
                raise NotExportable("sg.export: %s uses %s (%s), which is not from NumPy, SciPy or the standard "
                                    "library" % (where, path, _module_of(obj)))
            value = module
            for attr in parts[k:]:
                value = getattr(value, attr, None)
            if value is not obj:
                raise NotExportable("sg.export: %s uses %r, which has no public name to import it by"
                                    % (where, obj))
            root_name = self.link(module, module.__name__.rpartition(".")[2] if module.__name__ != "numpy"
                                  else "np")
            rest = ".".join(parts[k:])
        if preferred == rest and preferred not in self.used:
            name = self._claim(obj, preferred)
        else:
            name = self._claim(obj, preferred if preferred.isidentifier() else rest.replace(".", "_"))
        self.bindings.append("%s = %s.%s" % (name, root_name, rest))
        return name

    def _constant(self, obj, value, preferred, where):
        literal = self._literal(value)
        if literal is None:
            raise NotExportable("sg.export: %s reads %r, which cannot be written as a constant" % (where, obj))
        name = self._claim(obj, preferred)
        self.bindings.append("%s = %s  # its value when exported" % (name, literal))
        return name

    def _element(self, v, preferred):
        """An element of a container or an attribute of an object: a literal,
        or the name of a linked object (a function in a dict of functions)."""
        text = self._literal(v, preferred)
        if text is None:
            self.refs += 1
            text = self.link(v, preferred)
        return text

    def _instance(self, obj, preferred):
        """An object of a user class: its class's source, and the object
        rebuilt with its attributes' values when exported."""
        cls = self.link(type(obj), type(obj).__name__)
        name = self._claim(obj, preferred)
        self.frozen.append((name, obj))
        items = ", ".join("%r: %s" % (k, self._element(v, k if k.isidentifier() else preferred))
                          for k, v in vars(obj).items())
        self.late.append("%s = %s.__new__(%s)  # its attributes when exported\n%s.__dict__.update({%s})"
                         % (name, cls, cls, name, items))
        return name

    def _literal(self, v, preferred="c"):
        """Source text of the constant `v`, or None."""
        if v is None or v is Ellipsis or isinstance(v, (bool, int, str, bytes)):
            return repr(v)
        if isinstance(v, float):
            return repr(v) if np.isfinite(v) else "float(%r)" % repr(v)
        if isinstance(v, complex):
            return "complex(%s, %s)" % (self._literal(v.real), self._literal(v.imag))
        if isinstance(v, (tuple, list, set, frozenset)):
            items = [self._element(e, "%s_%d" % (preferred, k)) for k, e in enumerate(v)]
            if any(i is None for i in items):
                return None
            if isinstance(v, tuple):
                return "(%s)" % (items[0] + "," if len(items) == 1 else ", ".join(items))
            if isinstance(v, list):
                return "[%s]" % ", ".join(items)
            return "%s({%s})" % ("frozenset" if isinstance(v, frozenset) else "set", ", ".join(items)) \
                if items else "%s()" % type(v).__name__
        if type(v) is dict:
            items = [(self._literal(k), self._element(e, k if isinstance(k, str) else preferred))
                     for k, e in v.items()]
            if any(k is None or e is None for k, e in items):
                return None
            return "{%s}" % ", ".join("%s: %s" % kv for kv in items)
        if isinstance(v, slice):
            return "slice(%s, %s, %s)" % (self._literal(v.start), self._literal(v.stop), self._literal(v.step))
        if isinstance(v, type) and getattr(builtins, v.__name__, None) is v:
            return v.__name__
        if isinstance(v, np.dtype):
            return "%s.dtype(%r)" % (self.link(np, "np"), v.str if v.fields is None else v.descr)
        if isinstance(v, np.ndarray) and v.dtype.kind in "biufcU" and v.dtype.fields is None:
            np_name = self.link(np, "np")
            data = self._literal(v.tolist())
            return "%s.array(%s, dtype=%r)" % (np_name, data, v.dtype.str) if data is not None else None
        if isinstance(v, threading.local):         # (a helper's per-thread state: a fresh one)
            return "%s.local()" % self.link(threading, "threading")
        if isinstance(v, np.generic) and v.dtype.kind in "biufc":
            return "%s.%s(%s)" % (self.link(np, "np"), v.dtype.name, self._literal(v.item()))
        return None

    def _namespace(self, obj):
        """(globals, closure cells) that the names in `obj`'s code mean."""
        if isinstance(obj, type):
            return vars(sys.modules[obj.__module__]), {}
        code = obj.__code__
        cells = {}
        for n, c in zip(code.co_freevars, obj.__closure__ or ()):
            try:
                cells[n] = c.cell_contents
            except ValueError:
                pass
        return obj.__globals__, cells

    def _resolve(self, name, namespace):
        module_globals, cells = namespace
        if name in cells:
            return True, cells[name]
        if name in module_globals:
            return True, module_globals[name]
        if hasattr(builtins, name):
            return True, getattr(builtins, name)
        return False, None

    def _relink(self, tree, namespace, where):
        """Link the free names of `tree` (stdlib ast), renaming them in place
        where their module-level names differ."""
        mapping, attributes = {}, {}
        free, bound = _free_names(tree)
        self.used |= bound          # (a module-level name must not be one of the tree's locals)

        def unshadowed(name):
            if name not in bound:
                return name
            alias = self.fresh(name)
            self.late.append("%s = %s" % (alias, name))
            return alias
        for n in free:
            found, value = self._resolve(n, namespace)
            if not found:
                continue            # (a NameError there when run, as in the original)
            if isinstance(value, types.ModuleType) and not _allowed_module(value.__name__):
                # helpers.unbroadcast, runtime.zeros_tree, a user's module: each attribute is linked on its own
                for node in ast.walk(tree):
                    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == n:
                        attributes[n, node.attr] = unshadowed(self.link(getattr(value, node.attr), node.attr, where))
                continue
            linked = unshadowed(self.link(value, n, where))
            if isinstance(value, types.ModuleType):
                self._submodules(tree, n, value)
            if linked != n:
                mapping[n] = linked
        if mapping or attributes:
            _Rename(mapping, attributes).visit(tree)
        return bool(mapping or attributes)

    def _definition(self, obj, raw, preferred):
        """A function or class copied from its source."""
        name = self._claim(obj, preferred)
        if raw is not obj:
            self.names[id(raw)] = name
            self.objects.append(raw)
        where = "%s (%s)" % (getattr(raw, "__qualname__", name), _module_of(raw))
        if getattr(getattr(raw, "__code__", None), "co_name", "") == "<lambda>":
            tree = ast_util.to_ast(parse.parse(raw).node)
            text = None
        else:
            text, tree = _source(raw, where)
        namespace = self._namespace(raw)
        kept = []
        for d in tree.decorator_list:      # srcgrad's decorators (primitive, register_adjoint) are dropped
            root = d.func if isinstance(d, ast.Call) else d
            while isinstance(root, ast.Attribute):
                root = root.value
            found, value = self._resolve(root.id, namespace) if isinstance(root, ast.Name) else (False, None)
            module = value.__name__ if isinstance(value, types.ModuleType) else _module_of(value)
            if not (found and _is_srcgrad(module)):
                kept.append(d)
        changed = len(kept) != len(tree.decorator_list) or tree.name != name or text is None
        tree.decorator_list = kept
        tree.name = name
        changed = self._relink(tree, namespace, where) or changed
        section = "helper" if _is_srcgrad(_module_of(raw)) else "user"
        self.defs[section].append(_unparse(tree) if changed else text.rstrip())
        return name

    def _generated(self, fn, preferred):
        """A generated function: its kept tree, unparsed."""
        tree = next(t for t in fn.__srcgrad_trees__ if t.name == fn.__name__)
        name = self._claim(fn, preferred)
        tree = ast_util.clone(tree)
        namespace = self._namespace(fn)
        # (the operators and ufuncs that binop_into / ufunc_into write in place: plain again, for Numba and
        # for an exported module, which then needs no reference counts of CPython's)
        namespace = _binops_back(tree, namespace, for_numba=self.add_in_place)
        if self.add_in_place and _adds_in_place(tree, namespace):
            namespace = (namespace[0], {**namespace[1], _ADD_INTO: containers.add_into,
                                        _UNINDEX_ADD: broadcast.unindex_add})
        tree = ast.fix_missing_locations(ast_util.to_ast(tree))
        tree.name = name
        origin = getattr(fn, "__srcgrad_origin__", None)
        where = "the code generated for %s" % ("%s:%s" % (short(origin[0]), origin[1]) if origin else name)
        self._relink(tree, namespace, where)
        if fn is self.main and self.main_defaults:
            args = tree.args.args
            tree.args.defaults = [ast.parse(self.main_defaults[a.arg], mode="eval").body
                                  for a in args[len(args) - len(self.main_defaults):]]
        self.defs["main" if fn is self.main else "generated"].append(_unparse(tree))
        return name

    def text(self):
        parts = []
        if self.imports:
            parts.append("\n".join(self.imports))
        if self.bindings:
            parts.append("\n".join(self.bindings))
        for section, title in _SECTIONS.items():
            if section == "main" and self.late:
                parts.append("\n".join(self.late))
            if self.defs[section]:
                parts.append("# " + "-" * 20 + " " + title)
                parts.extend(self.defs[section])
        return "\n\n\n".join(parts) + "\n"

    def snapshot(self):
        return (dict(self.names), list(self.objects), set(self.used), list(self.imports), list(self.bindings),
                list(self.late), {k: list(v) for k, v in self.defs.items()})

    def restore(self, saved):
        self.names, self.objects, self.used, self.imports, self.bindings, self.late, self.defs = saved


#: the names a marked accumulation calls add_into and unindex_add by, before linking (srcgrad's own
#: prefix: no user name)
_ADD_INTO = ALIAS_PREFIX + "add_into"
_UNINDEX_ADD = ALIAS_PREFIX + "unindex_add"
_UNBROADCAST = ALIAS_PREFIX + "unbroadcast"
_ASARRAY = ALIAS_PREFIX + "asarray"
_LIST_APPEND = ALIAS_PREFIX + "list_append"


_OPERATORS = {"+": gast.Add, "-": gast.Sub, "*": gast.Mult, "/": gast.Div}


def _binops_back(tree, namespace, for_numba=False):
    """Write each `binop_into(op, a, b, k)` of the generated gast
    FunctionDef `tree` (a copy; transforms/inplace.py elide_temporaries)
    as `a op b` again (and each `ufunc_into(f, a)` as `f(a)`): for sg.jit,
    Numba compiles the operator (and its allocation costs less there than
    binop_into's checks), and the loop accumulations `a = a + e` it adds
    into stay visible to `_adds_in_place`; for sg.export, a module that
    reads as the maths and needs no CPython reference counts. Each
    `unbroadcast_product(a, b, x)` becomes `unbroadcast(a * b, x)` (under
    the name _UNBROADCAST), each `list_append_own(xs, v)` `list_append(xs,
    v)` (_LIST_APPEND) and each `drop_last_own(xs)` `xs[:-1]`
    (inplace.own_list_updates: reference counts are CPython's). `for_numba`: each `np.expand_dims(g, axis)` is
    `np.expand_dims(np.asarray(g), axis)` (Numba's takes arrays only; the
    cotangent of a full reduction put back, optimize._unreduce_call, may
    be a float). `namespace`: (globals, closure cells) of its compiled
    function; returns it, with _UNBROADCAST and _ASARRAY when used."""
    module_globals, cells = namespace
    used = []

    def denoted(func):
        if not isinstance(func, gast.Name):
            return None
        return cells[func.id] if func.id in cells else module_globals.get(func.id)

    class Back(gast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            if node.keywords:
                return node
            obj, args = denoted(node.func), node.args
            if obj is elementwise.binop_into and len(args) == 4 and isinstance(args[0], gast.Constant) \
                    and args[0].value in _OPERATORS:
                return ast_util.copy_location(gast.BinOp(left=args[1], op=_OPERATORS[args[0].value](),
                                                         right=args[2]), node)
            if obj is elementwise.ufunc_into and len(args) == 2:       # (f(a) again: Numba compiles the ufunc)
                return ast_util.copy_location(ast_util.call(args[0], [args[1]]), node)
            if obj is np.expand_dims and for_numba and len(args) == 2:
                args[0] = ast_util.call(ast_util.name(_ASARRAY), [args[0]])
                used.append(_ASARRAY)
                return node
            if obj is containers.list_append_own and len(args) == 2:     # (list_append again: its twin)
                used.append(_LIST_APPEND)
                return ast_util.copy_location(ast_util.call(ast_util.name(_LIST_APPEND), args), node)
            if obj is containers.drop_last_own and len(args) == 1:       # (xs[:-1] again)
                return ast_util.copy_location(gast.Subscript(
                    value=args[0], slice=gast.Slice(lower=None, upper=gast.Constant(value=-1, kind=None), step=None),
                    ctx=gast.Load()), node)
            if obj is broadcast.unbroadcast_product and len(args) == 3:     # (unbroadcast(a * b, x): its twin)
                product = gast.BinOp(left=args[0], op=gast.Mult(), right=args[1])
                used.append(_UNBROADCAST)
                return ast_util.copy_location(ast_util.call(ast_util.name(_UNBROADCAST), [product, args[2]]), node)
            return node
    Back().visit(tree)
    if not used:
        return namespace
    added = {_UNBROADCAST: broadcast.unbroadcast, _ASARRAY: np.asarray, _LIST_APPEND: containers.list_append}
    return module_globals, {**cells, **{name: added[name] for name in set(used)}}


def _adds_in_place(tree, namespace):
    """Write each loop accumulation `a = a + e` of the generated gast
    FunctionDef `tree` (a copy) that may add into `a`
    (inplace.loop_accumulations_in_place) as `a = _ADD_INTO(a, e)`, and
    each `a = a + unindex(g, x, i)` that may as `a = _UNINDEX_ADD(a, g, x,
    i)`.
    `namespace`: (globals, closure cells) of its compiled function. Returns
    whether there was one."""
    facts = Anno.ACCUMULATIONS.of(tree)
    if facts is None:
        return False
    module_globals, cells = namespace

    def lookup(name):
        return cells[name] if name in cells else module_globals.get(name, getattr(builtins, name, None))
    found = inplace.loop_accumulations_in_place(tree, lookup, *facts)
    def scatters(e):
        return isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and lookup(e.func.id) is broadcast.unindex
    for node in found:
        left, right = node.value.left, node.value.right
        if scatters(right) or scatters(left):
            acc, call = (left, right) if scatters(right) else (right, left)
            node.value = ast_util.call(ast_util.name(_UNINDEX_ADD), [acc] + list(call.args))
        else:
            node.value = ast_util.call(ast_util.name(_ADD_INTO), [left, right])
    return bool(found)


def _source(obj, where):
    """(source text, stdlib ast definition) of a function or class. A class
    renamed after its definition (`with_enter.__name__ = ...`) is found by
    the name its module binds it to."""
    try:
        text = textwrap.dedent(inspect.getsource(obj))
        tree = ast.parse(text).body[0]
        if isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return text, tree
    except (OSError, TypeError, SyntaxError):
        pass
    module = sys.modules.get(getattr(obj, "__module__", None) or "")
    names = [k for k, v in vars(module).items() if v is obj] if module is not None else []
    try:
        module_text = inspect.getsource(module) if names else ""
    except (OSError, TypeError):
        module_text = ""
    for node in ast.parse(module_text).body if module_text else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in names:
            return None, node
    raise NotExportable("sg.export: the source of %s is not available" % where)


def _is_library(obj, module):
    """Is `obj` (a function or class) a library's (NumPy, SciPy, the standard
    library, anything installed under site-packages) rather than the user's?"""
    if _allowed_module(module or "__main__") and module not in ("__main__",):
        return True
    filename = getattr(getattr(obj, "__code__", None), "co_filename", "") or ""
    return "site-packages" in filename or "dist-packages" in filename
