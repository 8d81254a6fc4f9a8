"""Bound methods and record methods as functions the compiler transforms.

- `MethodFunction`: a method bound to an instance (`obj.method`) as a
  function of its other parameters, `self` a closure cell of the generated
  code.
- `FieldMethod`: a method of a plain data-holder class as a function of the
  object's fields (`Affine(W, b).loss(x)` -> `Affine_loss(W, b, x)`), for
  objects built inside differentiated code from differentiated values.

Both are Functions built through Function's constructor from the Function of
the method's own function (`callables` makes them and caches them).
"""
import copy
import functools
import inspect
import types

import gast

from .errors import UnsupportedSyntaxError
from .function import Function
from .syntax import ast_util, naming
from .transforms import records


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
    fetched at each call. The function is parsed and lowered once: `base`
    is the Function of `method.__func__` (callables.as_function)."""

    derived = True

    def __init__(self, method, base):
        raw = method.__func__
        self.instance = method.__self__
        parsed = copy.copy(base.parsed)
        node = copy.deepcopy(base.parsed.node)
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
        parsed.n_positional = base.parsed.n_positional - 1
        parsed.func = _MethodNamespace(raw, first, self.instance)
        super().__init__(method, parsed, inspect.signature(method))
        functools.update_wrapper(self, method, updated=())
        self.__name__, self.__qualname__ = base.__name__, base.__qualname__     # (a lambda's is its variable's)

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

    derived = True

    def __init__(self, cls, name):
        """(Built in two steps by field_method: the cache holds it before its
        AST is made, for methods that call each other.)"""
        self.cls, self.method_name = cls, name

    def __deepcopy__(self, memo):
        return self                     # (ASTs holding it are copied by the passes)

    def build(self, base, field_method):
        """Make the AST (second step): `base` is the Function of the method's
        function, field_method(cls, name) gives the FieldMethods it calls."""
        cls, name = self.cls, self.method_name
        fields = list(records.plain_fields(cls))
        member = inspect.getattr_static(cls, name)
        raw = member.fget if isinstance(member, property) else member
        parsed = copy.copy(base.parsed)
        node = copy.deepcopy(base.parsed.node)
        args = node.args
        if args.vararg is not None or args.kwarg is not None or not (args.posonlyargs + args.args):
            raise UnsupportedSyntaxError("the method %s.%s (*args, **kwargs, or no self) of an object built from "
                                         "differentiated values" % (cls.__name__, name), parsed.filename,
                                         parsed.firstlineno, None, "pass its arrays")
        me = (args.posonlyargs + args.args)[0].id
        used = {n.id for n in ast_util.walk(node) if isinstance(n, gast.Name)}
        namer = naming.Namer(used)
        params = {f: namer.fresh("%s_%s" % (me, f)) for f in fields}
        node.body = [records.SelfFields(cls, me, params, field_method).visit(s) for s in node.body]
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
        parsed.params = [params[f] for f in fields] + [p for p in base.parsed.params if p != me]
        parsed.n_positional = len(fields) + base.parsed.n_positional - 1
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
        Function.__init__(self, rebuilt, parsed, sig)
        self.__name__ = self.__qualname__ = rebuilt.__name__
        self.__doc__ = "%s.%s as a function of the fields %s" % (cls.__name__, name, ", ".join(fields))
        self.__wrapped__ = raw

    def __repr__(self):
        return "<srcgrad field function %s.%s>" % (self.cls.__name__, self.method_name)
