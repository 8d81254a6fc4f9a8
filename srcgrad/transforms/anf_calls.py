"""A-normal form, the calls: what a call in differentiated code is (anf.py).

`CallForms` is the part of the ANF pass (`anf._ANF`) that classifies a call
into an `ops.Op`: a primitive with an adjoint rule (NumPy, SciPy, the
math module on Python floats, srcgrad's helpers), an ndarray method (as the
NumPy function), a call of a user function compiled recursively (its
arguments bound to its signature, `*args`/`**kwargs` specialised, the
functions and objects passed known to it), a custom_gradient or
sg.checkpoint function, a non-differentiable function, or an opaque callable
(refused where its result is differentiated). A NumPy call that writes into
an argument (`out=`, np.copyto, ...) is refused here by name
(rules/mutation.py).

Requires: resolve (calls carry Anno.CALLEE or Anno.METHOD).
"""
import builtins
import inspect
import math
import operator

import gast
import numpy as np

from ..rules import mutation, registry
from ..runtime import syntax as runtime_syntax
from ..rules.python import containers
from ..syntax import ast_util
from ..syntax.anno import Anno
from .lower.common import helper
from .ops import Op

# ndarray methods -> (NumPy function, how positional arguments pack)
_METHODS = {
    "sum": (np.sum, None), "mean": (np.mean, None), "max": (np.max, None), "min": (np.min, None),
    "reshape": (np.reshape, "shape"), "transpose": (np.transpose, "axes"), "dot": (np.dot, None),
    "squeeze": (np.squeeze, None), "swapaxes": (np.swapaxes, None),
    "prod": (np.prod, None), "var": (np.var, None), "std": (np.std, None), "cumsum": (np.cumsum, None),
    "cumprod": (np.cumprod, None), "clip": (np.clip, None), "conj": (np.conj, None),
    "conjugate": (np.conj, None), "trace": (np.trace, None), "diagonal": (np.diagonal, None),
    "repeat": (np.repeat, None), "take": (np.take, None), "flatten": (np.ravel, None),
    "ravel": (np.ravel, None),
}
_COPY_METHODS = {"copy", "astype", "numpy"}
_SHAPE_ATTRS = {"shape", "ndim", "size", "dtype", "nbytes", "itemsize", "flags", "strides"}
_DISPLAYS = (gast.List, gast.Tuple, gast.Dict)
_NONDIFF_ATTRS = {"shape", "ndim", "size", "dtype", "nbytes", "itemsize", "argmax", "argmin",
                  "tolist", "nonzero", "all", "any", "item"}


# math-module functions on Python floats use the NumPy function's rule
_MATH_TO_NUMPY = {f: getattr(np, n) for n, f in vars(math).items()
                  if callable(f) and callable(getattr(np, n, None)) and not n.startswith("_")}
_MATH_TO_NUMPY.update({math.atan2: np.arctan2, math.asin: np.arcsin, math.acos: np.arccos,
                       math.atan: np.arctan, math.asinh: np.arcsinh, math.acosh: np.arccosh,
                       math.atanh: np.arctanh, math.fabs: np.absolute, math.pow: np.power})


def _literal(v):
    """A value generated code may spell as a constant."""
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
        return True
    return isinstance(v, tuple) and all(_literal(x) for x in v)


def injected(value, name):
    """A Name standing for `value` in generated code (injected as a closure
    cell by the code generators), carrying it as `Anno.VALUE` for callees."""
    n = ast_util.name(name)
    Anno.CALLEE.add_to(n, value)
    Anno.HELPER.add_to(n, True)
    if not isinstance(value, (np.ndarray, np.generic)):
        Anno.VALUE.add_to(n, value)
    return n


def _without_value(node):
    """`node`, or a copy of a Name without its `Anno.VALUE` (an injected
    name is kept: the code generators rename it in place)."""
    if isinstance(node, gast.Name) and Anno.VALUE.exists(node) and not Anno.HELPER.of(node, False):
        node = ast_util.copy_location(ast_util.name(node.id), node)
    return node


def _names_in(node):
    return [n for n in ast_util.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)]


_OPERATOR_BINARY = {operator.add: gast.Add, operator.sub: gast.Sub, operator.mul: gast.Mult,
                    operator.truediv: gast.Div, operator.pow: gast.Pow, operator.matmul: gast.MatMult,
                    operator.mod: gast.Mod, operator.floordiv: gast.FloorDiv}
_OPERATOR_UNARY = {operator.neg: gast.USub, operator.pos: gast.UAdd}


def _operator_form(e):
    """`operator.add(a, b)` (also through functools.reduce's callers: any call
    whose callee is an operator function) as the expression `a + b`, which
    the compiler differentiates; None for other calls."""
    func = e.func
    if Anno.METHOD.exists(func) or e.keywords or any(isinstance(a, gast.Starred) for a in e.args):
        return None
    obj = Anno.CALLEE.of(func)
    try:
        binary, unary = _OPERATOR_BINARY.get(obj), _OPERATOR_UNARY.get(obj)
    except TypeError:       # (unhashable)
        return None
    if binary is not None and len(e.args) == 2:
        return ast_util.copy_location(gast.BinOp(left=e.args[0], op=binary(), right=e.args[1]), e)
    if unary is not None and len(e.args) == 1:
        return ast_util.copy_location(gast.UnaryOp(op=unary(), operand=e.args[0]), e)
    return None


def _container_method(obj, func):
    """For `obj`, a method of a dict, list or tuple bound to its receiver
    (`d.get`), the unbound method (`dict.get`) when it has an adjoint
    rule; else None."""
    receiver = getattr(obj, "__self__", None)
    if type(receiver) not in (dict, list, tuple) or not isinstance(func, gast.Attribute):
        return None
    unbound = getattr(type(receiver), func.attr, None)
    return unbound if unbound is not None and registry.adjoint_rule(unbound) is not None else None


class CallForms:
    """The ANF pass's handling of calls (see the module docstring)."""

    def _casts_to_non_float(self, e):
        """Is `e`, a call x.astype(dtype), a cast to a dtype known at transform
        time (a constant, a global or builtin such as int, np.int64) that is
        neither floating nor complex?"""
        arg = e.args[0] if e.args else next((k.value for k in e.keywords if k.arg == "dtype"), None)
        if isinstance(arg, gast.Constant):
            value = arg.value
        else:
            chain = []
            while isinstance(arg, gast.Attribute):
                chain.append(arg.attr)
                arg = arg.value
            if not isinstance(arg, gast.Name) or arg.id not in self.free:
                return False
            value = self.free[arg.id]
            for attr in reversed(chain):
                value = getattr(value, attr, None)
        try:
            # (dtype object is not a cast of numbers: Python objects, refused when differentiated (call))
            return value is not None and np.dtype(value).kind not in "fcO"
        except TypeError:
            return False

    def _casts_to_objects(self, e):
        """Is `e`, a call x.astype(dtype), a cast to dtype object?"""
        arg = e.args[0] if e.args else next((k.value for k in e.keywords if k.arg == "dtype"), None)
        value = arg.value if isinstance(arg, gast.Constant) else (
            self.free.get(arg.id) if isinstance(arg, gast.Name) else None)
        try:
            return value is not None and np.dtype(value).kind == "O"
        except TypeError:
            return False

    def call(self, e, out, hint):
        self.check_mutation(e)
        func = e.func
        form = _operator_form(e)
        if form is not None:        # operator.add(a, b) is a + b (list concatenation included)
            return self.top(form, out, hint)
        casts = Anno.METHOD.of(func) == "astype" and self._casts_to_non_float(e)   # (read before ANF)
        if Anno.METHOD.exists(func):
            func.value = self.simple(func.value, out, hint)
        args = []
        starred = None
        for a in e.args:
            if isinstance(a, gast.Starred):
                pack = self.packs.get(a.value.id) if isinstance(a.value, gast.Name) else None
                if isinstance(pack, (gast.Tuple, gast.List)):
                    args.extend(ast_util.clone(pack.elts))
                    continue
                if isinstance(a.value, (gast.Tuple, gast.List)) and \
                        not any(isinstance(x, gast.Starred) for x in a.value.elts):
                    args.extend(a.value.elts)       # f(*(a, b))
                    continue
                # f(*sizes): kept starred; allowed into what is not differentiated (see below)
                a.value = self.simple(a.value, out, hint)
                starred = starred or a
                args.append(a)
            else:
                args.append(a)
        # a list, tuple or dict display passed to a user function is a value of its own (a name):
        # the call's activity and the callee's cotangents follow names
        user = self._user_callee(func)
        e.args = [a if isinstance(a, gast.Starred)
                  else self.simple(a, out, hint, force_name=user and isinstance(a, _DISPLAYS)) for a in args]
        keywords = []
        for k in e.keywords:
            if k.arg is None:
                pack = self.packs.get(k.value.id) if isinstance(k.value, gast.Name) else None
                if not isinstance(pack, gast.Dict) or not all(isinstance(x, gast.Constant) for x in pack.keys):
                    self.fail(k.value, "**kwargs in a call, unless kwargs is the function's own **kwargs "
                                       "or a dict display")
                keywords.extend(gast.keyword(arg=key.value, value=ast_util.clone(v))
                                for key, v in zip(pack.keys, pack.values))
            else:
                keywords.append(k)
        e.keywords = keywords
        for k in e.keywords:
            k.value = self.simple(k.value, out, hint, force_name=user and isinstance(k.value, _DISPLAYS))
        kwargs = {k.arg: k.value for k in e.keywords}
        if starred is not None:
            return e, self.starred_call(e, starred, hint)
        if Anno.METHOD.exists(func):
            m = Anno.METHOD.of(func)
            recv = func.value
            src = m + ("_" + self.base(recv) if self.base(recv) else "")
            if casts:       # x.astype(int): integers or booleans carry no derivative (TF's cast)
                return e, Op("nondiff", source=src)
            if m == "astype" and self._casts_to_objects(e):
                # Python objects: their arithmetic is not differentiated, a silent cut if it were let through
                return e, Op("opaque", obj="ndarray.astype(object)", source=src, args=_names_in(e))
            if m in _COPY_METHODS or (m == "item" and not e.args and not e.keywords):
                return e, Op("copy", args=[recv], source=src)      # (x.item(): its one value, as float(x))
            if m in ("item", "tolist"):
                # the values leave NumPy: differentiated, they would silently cut the derivative
                return e, Op("opaque", obj="ndarray." + m, source=src, args=_names_in(e))
            if m in _NONDIFF_ATTRS:
                return e, Op("nondiff", source=src)
            if m in ("ravel", "flatten") and registry.adjoint_rule(np.ravel) is None:
                return e, self.classify_fn(np.reshape, [recv, ast_util.const(-1)], {}, e, src)
            if m not in _METHODS:
                return e, Op("opaque", obj="ndarray." + m, source=src, args=_names_in(e))
            fn, pack = _METHODS[m]
            args = list(e.args)
            if pack and (len(args) > 1 or (len(args) == 1 and isinstance(args[0], gast.Constant)
                                            and isinstance(args[0].value, int))):
                args = [ast_util.tuple_(args)]
            if pack == "axes" and not args:
                args = []
            return e, self.classify_fn(fn, [recv] + args, kwargs, e, src)
        obj = Anno.CALLEE.of(func)
        if obj in (builtins.list, builtins.tuple, builtins.dict) and not e.args and not e.keywords:
            display = gast.Dict(keys=[], values=[]) if obj is builtins.dict else \
                ast_util.tuple_([]) if obj is builtins.tuple else gast.List(elts=[], ctx=gast.Load())
            return display, Op("pack", source=hint or "c", args=[])
        if obj is builtins.dict and not e.args and e.keywords:
            # dict(a=a, b=b) is the display {"a": a, "b": b}
            display = gast.Dict(keys=[ast_util.const(k.arg) for k in e.keywords],
                                values=[k.value for k in e.keywords])
            return display, Op("pack", source=hint or "d", args=list(display.values))
        name = getattr(obj, "__name__", None) or "call"
        if name == "<lambda>":
            name = func.id if isinstance(func, gast.Name) else func.attr if isinstance(func, gast.Attribute) \
                else "lambda"
        if e.args and self.base(e.args[0]):
            name = name + "_" + self.base(e.args[0])
        if obj is not None and (registry.adjoint_rule(obj) is not None or registry.is_nondiff(obj)):
            # a primitive, however it is reached (scipy.stats.norm.logpdf is a bound method with a rule)
            return e, self.classify_fn(obj, list(e.args), kwargs, e, name)
        args = list(e.args)
        call = getattr(type(obj), "__call__", None)
        if (obj is not None and not isinstance(obj, type) and not callable(getattr(obj, "__code__", None))
                and not inspect.ismethod(obj) and self.ctx.callee(obj) is None and call is not None
                and (self.ctx.callee(call) is not None or getattr(call, "__srcgrad_custom__", None) is not None)):
            # an instance of the user's class called: obj(x) is type(obj).__call__(obj, x)
            if not isinstance(func, gast.Name):
                # self.layer(x), layers[0](x): the receiver is evaluated once, then called
                receiver = self.simple(func, out, hint, force_name=True)
                e.func = ast_util.name(receiver.id)
                Anno.CALLEE.add_to(e.func, obj)
                func = e.func
            op = self.classify_fn(call, [ast_util.name(func.id)] + args, kwargs, e, name)
            op.receiver = obj
            return e, op
        unbound = _container_method(obj, func)
        if unbound is None and obj is None and isinstance(func, gast.Attribute) and isinstance(
                func.value, gast.Name) and isinstance(self.packs.get(func.value.id), gast.Dict):
            # d.get(k, v) of a dict display made here (d = {"a": x}): dict.get(d, k, v)
            unbound = getattr(dict, func.attr, None)
            unbound = unbound if unbound is not None and registry.adjoint_rule(unbound) is not None else None
        if unbound is not None:
            # d.get(k, v) on a dict (a builtin method with a rule): dict.get(d, k, v)
            func.value = self.simple(func.value, out, hint)
            return e, self.classify_fn(unbound, [func.value] + args, kwargs, e, name)
        if Anno.OPAQUE_METHOD.of(func, False) and self.ctx.callee(getattr(obj, "__func__", obj)) is None:
            return e, Op("opaque", obj=obj, source=name, args=_names_in(e))
        if inspect.ismethod(obj) and isinstance(func, gast.Attribute) and self.ctx.callee(obj.__func__) is not None:
            # a bound method of the user's (self.helper(x)): the receiver is its first argument
            func.value = self.simple(func.value, out, hint)
            args = [func.value] + args
            receiver = obj.__self__
            op = self.classify_fn(obj.__func__, args, kwargs, e, name)
            op.receiver = receiver      # the example `self`, so the callee resolves self.attr exactly
            return e, op
        if obj is None and isinstance(func, gast.Attribute):
            # a method of a value not known when compiling (an object built here): refused where active
            return e, Op("opaque", obj=None, source=name, args=_names_in(e))
        op = self.classify_fn(obj, args, kwargs, e, name)
        for _, arg, (others, messages, origin) in op.checks:
            check = ast_util.call(helper(runtime_syntax.check_not_shared, "check_not_shared"),
                                  [ast_util.name(arg), ast_util.tuple_([ast_util.name(o) for o in others]),
                                   helper((messages, origin), "views")])
            stmt = ast_util.copy_location(gast.Expr(value=check), e)
            Anno.FORWARD_ONLY.add_to(stmt, True)
            out.append(stmt)
        op.checked = tuple(p for p, _, _ in op.checks)
        return e, op

    def starred_display(self, e, out, hint):
        """`(*a, b, *c)`: as_tuple(list_extend(list_extend(as_list(a), [b]),
        as_list(c))) (a list display without the as_tuple): container
        helpers with rules, so differentiated elements keep their
        derivatives, and shapes (`np.zeros((*x.shape, 2))`) are plain values."""
        parts, run = [], []
        for x in e.elts + [None]:
            if (x is None or isinstance(x, gast.Starred)) and run:
                display = ast_util.copy_location(gast.List(elts=run, ctx=gast.Load()), e)
                parts.append(self.simple(display, out, hint, force_name=True))
                run = []
            if isinstance(x, gast.Starred):
                v = self.simple(x.value, out, hint, force_name=True)
                parts.append(self.helper_call(containers.as_list, "as_list", [v], out, hint, e))
            elif x is not None:
                run.append(x)
        acc = parts[0]
        for p in parts[1:]:
            acc = self.helper_call(containers.list_extend, "list_extend", [acc, p], out, hint, e)
        if isinstance(e, gast.List):
            if len(parts) == 1:      # [*a]: a new list
                return self.helper_top(containers.as_list, "as_list", [acc], hint, e)
            return acc, Op("copy", args=[acc], source=hint or "t")
        return self.helper_top(containers.as_tuple, "as_tuple", [acc], hint, e)

    def helper_top(self, fn, name, args, hint, where):
        call = ast_util.copy_location(ast_util.call(injected(fn, name), args), where)
        return call, self.classify_fn(fn, args, {}, where, hint or name)

    def helper_call(self, fn, name, args, out, hint, where):
        call, op = self.helper_top(fn, name, args, hint, where)
        tmp = self.namer.fresh(hint or name)
        self.temps.add(tmp)
        out.append(self._assign(tmp, call, op, where))
        return ast_util.name(tmp)

    def starred_call(self, e, starred, source):
        """`f(*seq)` with `seq` not a display: the arguments are known only at
        run time, so `f` must have no derivative (a shape, a random draw:
        nondiff, or opaque, which raises NoRuleError if a differentiated
        value reaches it)."""
        func = e.func
        obj = Anno.CALLEE.of(func)
        what = ast_util.to_source(func) if not Anno.METHOD.exists(func) else "." + Anno.METHOD.of(func)
        if Anno.METHOD.exists(func):
            if Anno.METHOD.of(func) in _NONDIFF_ATTRS:
                return Op("nondiff", source=source)
            self.fail(starred, "*args into the array method %s" % what, "pass the arguments one by one")
        if obj is not None and registry.is_nondiff(obj):
            return Op("nondiff", source=source)
        if obj is not None and (registry.adjoint_rule(obj) is not None or self.ctx.callee(obj) is not None
                                or self.ctx.callee(getattr(type(obj), "__call__", None)) is not None):
            self.fail(starred, "*args of a sequence into %s, which is differentiated" % what,
                      "pass the arguments one by one, or as a tuple display: f(*(a, b))")
        return Op("opaque", obj=obj, source=source, args=_names_in(e))

    def check_mutation(self, call, fn=None, n_args=None, keywords=None):
        """Refuse a NumPy call that writes into an array argument (out=,
        np.copyto, ... : rules/mutation.py) or an in-place ndarray method:
        the compiled code, functional, would not see the write."""
        names = None
        if fn is None:
            fn = Anno.CALLEE.of(call.func)
            method = Anno.METHOD.of(call.func)
            n_args = len(call.args)
            keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
            names = [k for k, v in keywords.items() if not (isinstance(v, gast.Constant) and v.value is None)]
            if method is not None:
                if method in mutation.IN_PLACE_METHODS:
                    self.fail(call, "the in-place array method .%s()" % method,
                              "write it functionally: " + mutation.IN_PLACE_METHODS[method], op_by_op=False)
                fn = getattr(np, method, None)
            elif fn is None and isinstance(call.func, gast.Attribute):
                self.check_receiver_mutator(call, names)
        if names is None:
            names = [k for k, v in (keywords or {}).items()
                     if not (isinstance(v, gast.Constant) and v.value is None)]
        found = mutation.writes_into(fn, n_args, names) if fn is not None else None
        if found is not None:
            written, hint = found
            self.fail(call, "%s writing into %s (compiled code is functional: the derivative would not see "
                      "the write)" % (mutation.display_name(fn), written), hint, op_by_op=False)
        found = mutation.list_writes_into(fn) if fn is not None else None
        if found is not None:
            written, hint = found
            # (op by op, on a list of Tensors, the function only moves the Tensors: right)
            self.fail(call, "%s.%s changing its list argument %s in place (compiled code is functional: the "
                      "derivative would not see the change)" % (
                          mutation.stdlib_module(fn), fn.__name__, written), hint)

    def check_receiver_mutator(self, call, names):
        """`Y[0].sort()`, `d["a"].append(v)`, `y.reshape(2, 2).sort()`,
        `rng.shuffle(y)` with `rng` built here: a method that changes its
        receiver (or, shuffle, its argument) in place, called on a value the
        compiler does not know (a plain local name's is refused by
        lower/mutations.py): the derivative would not see the change, so it
        is refused by the method's name; so is any such call with out=."""
        func = call.func
        receiver = ast_util.to_source(func.value).strip()
        found = mutation.receiver_mutator(func.attr)
        if found is not None:
            tape_follows, hint = found
            if func.attr == "shuffle":
                what = ("%s.shuffle(...), which changes its argument in place (compiled code is functional: the "
                        "derivative would not see the permutation)" % receiver)
                hint = "write it functionally: x = x[rng.permutation(len(x))]"
            else:
                what = ("%s.%s(...), which changes %s in place (compiled code is functional: the derivative "
                        "would not see the change)" % (receiver, func.attr, receiver))
                if isinstance(func.value, (gast.Name, gast.Subscript)):
                    hint = "write it functionally: " + hint.replace("R", receiver)
                else:
                    hint = ("write it functionally: build the new value and assign it to a name: t = %s; %s; "
                            "then store t where its values belong (e.g. y = t.ravel())"
                            % (receiver, hint.replace("R", "t")))
            self.fail(call, what, hint, op_by_op=tape_follows)
        if names and "out" in names:
            self.fail(call, "%s.%s(..., out=...), which writes into its out argument (compiled code is "
                      "functional: the derivative would not see the write)" % (receiver, func.attr),
                      "use the result: y = %s.%s(...) without out=" % (receiver, func.attr), op_by_op=False)

    def classify_fn(self, fn, args, kwargs, node, source):
        if isinstance(node, gast.Call):
            self.check_mutation(node, fn, len(args), kwargs)
        if fn is builtins.abs:
            fn = np.absolute
        elif fn in (builtins.max, builtins.min) and len(args) == 2 and not kwargs:
            fn = np.maximum if fn is builtins.max else np.minimum
        elif fn is builtins.float and len(args) == 1:
            return Op("copy", args=[args[0]], source=source)
        elif fn is builtins.list and len(args) == 1:
            fn = containers.as_list
        elif fn is builtins.tuple and len(args) == 1:
            fn = containers.as_tuple
        elif fn is builtins.dict and len(args) == 1 and not kwargs:
            fn = containers.as_dict
        if getattr(fn, "__srcgrad_custom__", None) is not None:
            if kwargs:
                self.fail(node, "keyword arguments to a custom_gradient function")
            op = Op("call", callee=fn, args=list(args), source=source)
            op.custom, op.node = True, node
            return op
        rule = registry.adjoint_rule(fn)
        python_float = False
        if rule is None and fn in _MATH_TO_NUMPY:
            rule = registry.adjoint_rule(_MATH_TO_NUMPY[fn])   # math.exp(a): np.exp's rule
            python_float = True                                 # (a Python float result)
        if rule is not None:
            try:
                arguments = rule.arguments(ast_util.name("_z"), args, kwargs)
            except TypeError as exc:
                self.fail(node, "this call of %s (%s)" % (getattr(fn, "__name__", fn), exc),
                          registry.where_hint(fn) if "where" in kwargs and "where" not in rule.params else None)
            bindings = {}
            for p, v in arguments.items():
                if p == rule.output:
                    continue
                if isinstance(v, (tuple, list)) and any(isinstance(x, gast.AST) for x in v):
                    v = ast_util.tuple_([x if isinstance(x, gast.AST) else ast_util.const(x) for x in v])
                bindings[p] = v if isinstance(v, gast.AST) else ast_util.const(v)
            op = Op("rule", rule=rule, bindings=bindings, source=source)
            op.python_float = python_float
            return op
        if registry.is_nondiff(fn):
            return Op("nondiff", source=source)
        info = self.ctx.callee(fn) if fn is not None else None
        if info is not None:
            user = info.function
            try:
                sig = info.signature
                bound = sig.bind(*args, **kwargs)
            except TypeError as exc:
                self.fail(node, "this call of %s (%s)" % (getattr(user, "__name__", user), exc))
            given = set(bound.arguments)
            bound.apply_defaults()
            ordered, extra, kw = [], [], {}
            for p, v in bound.arguments.items():
                kind = sig.parameters[p].kind
                if kind is inspect.Parameter.VAR_POSITIONAL:
                    extra = list(v)
                elif kind is inspect.Parameter.VAR_KEYWORD:
                    kw = dict(v)
                elif p not in given and not _literal(v):
                    # a default value that is an object (nonlinearity=np.tanh): the VJP receives it (the call
                    # passes it too, so that the code generators inject the name)
                    v = bound.arguments[p] = injected(v, p)
                    if kind is inspect.Parameter.POSITIONAL_ONLY:
                        node.args.append(v)
                    else:
                        node.keywords.append(gast.keyword(arg=p, value=v))
                    ordered.append(v)
                else:
                    ordered.append(v if isinstance(v, gast.AST) else ast_util.const(v))
            spec = None
            if any(k.kind in (k.VAR_POSITIONAL, k.VAR_KEYWORD) for k in sig.parameters.values()):
                # the callee specialized to this call's shape (Function.specialize)
                n_pos = sum(1 for k in sig.parameters.values()
                            if k.kind in (k.POSITIONAL_ONLY, k.POSITIONAL_OR_KEYWORD))
                names = sorted(kw)
                ordered = ordered[:n_pos] + [a if isinstance(a, gast.AST) else ast_util.const(a) for a in extra] \
                    + ordered[n_pos:] + [kw[k] for k in names]
                spec = (len(extra), tuple(names))
            # Variables the callee reads as globals: passed on (Program._hoist_callee_leaves)
            ordered += [ast_util.name(n) for n in self.ctx.callee_leaves.get(user, ())]
            op = Op("call", callee=user, args=ordered, source=source)
            op.spec = spec
            op.checkpoint = bool(getattr(fn, "__srcgrad_checkpoint__", False))
            # functions passed as arguments are known to the callee (its Program's examples)
            names = list(sig.parameters)
            op.examples = {p: Anno.VALUE.of(bound.arguments[p]) for p in names if p in bound.arguments
                           and isinstance(bound.arguments[p], gast.AST)
                           and Anno.VALUE.of(bound.arguments[p]) is not None}
            # (the VJP call copies its arguments: without the objects, which need not be copyable)
            op.args = [_without_value(a) for a in op.args]
            op.n_outputs = info.n_outputs
            op.node = node
            # a parameter the callee writes into, bound to an argument nothing reads after the call unless
            # it shares memory with a name still used (lower/views.py): tested before the call
            unshared = Anno.UNSHARED_ARGS.of(node, None) or {}
            op.checks = tuple((p, bound.arguments[p].id, unshared[bound.arguments[p].id]) for p in info.writes
                              if isinstance(bound.arguments.get(p), gast.Name)
                              and bound.arguments[p].id in unshared)
            if info.primal is not None:
                # the callee holds insert_grad_of blocks, which Python cannot skip: the
                # forward sweep runs its compiled primal
                node.func = injected(info.primal, (getattr(user, "__name__", None) or "callee") + "_primal")
            return op
        return Op("opaque", obj=fn, source=source, args=_names_in(node))
