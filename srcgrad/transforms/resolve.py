"""Resolve names to runtime objects at transform time, and find the leaves.

Requires: parse, check. Guarantees, on the returned `Resolution`:
- every call's `func` node carries `Anno.CALLEE` (the object called) or
  `Anno.METHOD` (an ndarray method name on a local array value);
- every read of a Variable/Tensor that is not a parameter (a global, a
  closure cell, or an attribute/item chain such as `self.kernel` or
  `params['W']`) is replaced by a fresh local name, and listed in `leaves`
  with the accessor that fetches its value at call time. Leaves are inputs
  of the generated code like the parameters;
- `free` maps each global/closure name read to the object it held, so a
  later call can check nothing was rebound (stale code is never run);
- a local name whose value is known at transform time (flow-sensitively: an
  object of a user class built from constants, a function or object read
  from a global, an element of a known list) is called through that value
  (`scale = Scale(3.0); scale.apply(x)`, `layer(x)`), and a loop over a
  known list of objects or functions (`for layer in LAYERS`, `for layer in
  [Conv(3), Relu()]`) is unrolled, so each call is compiled for its object;
- an object of a plain data-holder class (its __init__ only stores its
  arguments, or a dataclass) built from differentiated values is a record:
  `layer = Affine(W, b)` assigns its fields to locals, `layer.W` reads one,
  `layer.loss(x)`, `layer(x)` and `layer.norm` (a property) call the
  method's field function (function.FieldMethod: the method with `self.W`
  a parameter), so derivatives flow to W and b; any other use of the
  object raises UnsupportedSyntaxError;
- `np.r_[a, b]` / `np.c_[a, b]` are calls of np.concatenate (the items made
  1-d, or columns), so their derivatives flow;
- every read of a non-array object (a function, a bound method, an object)
  that may be passed on to a callee carries `Anno.VALUE`.
"""
import builtins
import copy
import types
from dataclasses import dataclass, field

import gast
import numpy as np

from ..runtime import syntax as runtime_syntax
from ..errors import ResolutionError, UnsupportedSyntaxError, location, where
from ..rules.helpers import broadcast as broadcast_helpers
from ..rules.helpers import elementwise as elementwise_helpers
from ..rules.python import containers
from ..syntax import ast_util
from ..syntax.naming import Namer
from ..syntax.anno import Anno
from . import chains, records
from .namespace import Namespace



_BINOPS = {"+": gast.Add, "-": gast.Sub, "*": gast.Mult, "/": gast.Div}   # binop_into's operators


def _drop_last(xs):
    """The expression `xs[:-1]` (what drop_last_own stands for)."""
    return gast.Subscript(value=xs, slice=gast.Slice(lower=None, upper=gast.Constant(value=-1, kind=None), step=None),
                          ctx=gast.Load())


@dataclass
class Leaf:
    """An input of the generated code that is not a parameter."""
    name: str            # local name in generated code
    kind: str            # "free" (global/closure name) or "chain"
    root: str            # parameter or free name the chain starts from
    steps: tuple         # (("attr", name) | ("item", constant), ...)
    text: str            # as the user wrote it, for messages and comments
    namespace: object = None   # a called function's namespace (a hoisted leaf)

    def fetch(self, params, namespace):
        """The leaf's value for a call: params is {name: value}; free names
        are looked up in the leaf's own namespace (a called function's, or
        the function a derived program came from) or in `namespace`."""
        if self.kind == "chain" and self.root in params:
            value = params[self.root]
        else:
            value = (self.namespace or namespace).lookup(self.root)[1]
        for kind, key in self.steps:
            value = getattr(value, key) if kind == "attr" else value[key]
        return value


@dataclass
class Resolution:
    """A function's AST with its names resolved, for one set of argument
    kinds (what `resolve` returns; the function layer fills the last three
    fields)."""
    node: gast.FunctionDef
    params: list
    leaves: list = field(default_factory=list)
    free: dict = field(default_factory=dict)        # name -> object seen at transform time
    locals: set = field(default_factory=set)
    examples: dict = field(default_factory=dict)    # parameter -> the object it was resolved for
    namer: Namer = None                             # seeded with every name in use
    containers: set = field(default_factory=set)    # parameters passed lists, tuples or dicts
    scalars: set = field(default_factory=set)       # parameters passed Python floats or ints
    patterns: dict = field(default_factory=dict)    # array parameters -> which axes have length 1 (shapes.py)
    callee_leaves: dict = field(default_factory=dict)   # callee -> the local names passed for its leaves
    chains: dict = field(default_factory=dict)  # (root kind, root, steps) -> object resolved (_Resolver._walked)
    walked: tuple = None    # (node, its walk) from resolve, for the passes that read it next (Program clears it)


def _names(nodes):
    """(the ids of every Name among `nodes` (a walk of a function), those
    stored or parameters)."""
    every, stored = set(), set()
    for n in nodes:
        if isinstance(n, gast.Name):
            every.add(n.id)
            if isinstance(n.ctx, (gast.Store, gast.Param)):
                stored.add(n.id)
    return every, stored


_UNROLL_MAX = 64        # longest list of objects a loop is unrolled over


class _Resolver(chains.StaticValues, records.RecordResolution, ast_util.NodeTransformer):
    def __init__(self, parsed, namespace, examples, namer, stored):
        self.parsed = parsed
        self.ns = namespace
        self.examples = examples   # {param: example value} or {}
        self.namer = namer
        self.params = parsed.params
        self.locals = stored       # the names parsed.node stores, and its parameters
        self.leaves = {}
        self.free = {}
        self.in_func_position = False
        self.known = {}            # local name -> _Known, at the statement being resolved
        self.field_method = None   # (cls, name) -> the FieldMethod of a method (set by resolve())
        self.records = {}          # local name -> (class, {init parameter: local name}): see _records
        self.chains = {}           # (root kind, root name, steps) -> the object resolved: see _walked

    # -- helpers
    def _walked(self, root, steps, obj):
        """Record that the chain `root.steps` (a global, closure or parameter
        name, then attribute and constant-item steps) resolved to `obj`: the
        compiled code depends on it (a rule chosen by the function it names,
        code specialised to an array or an object), so a later call that
        finds it changed resolves again (Resolution.chains, Program.is_current).
        Chains through library modules (numpy, scipy, the standard library)
        are not recorded: their functions are not rebound."""
        if not steps or (root in self.locals and root not in self.params):
            return
        kind = "param" if root in self.params else "free"
        if kind == "free":
            found, base = self.ns.lookup(root)
            if not found or chains.library_module(base):
                return
        self.chains[(kind, root, tuple((k, key) for k, key, *_ in steps))] = obj

    def _error(self, node, message, op_by_op=True):
        filename, lineno, col = self.parsed.origin(node)
        raise ResolutionError("%s\n  at %s" % (message, where(filename, lineno, col)), op_by_op)

    def _root_value(self, name_node):
        """(known, value, is_object_root) for a chain's root name."""
        name = name_node.id
        if name in self.params:
            if name in self.examples:
                v = self.examples[name]
                # (a list, tuple or dict of arrays is differentiated as a whole: y[0] reads it, no leaf)
                return True, v, not chains.arraylike(v) and not (type(v) in (list, tuple, dict)
                                                                 and chains.array_tree(v))
            return False, None, name in ("self", "cls")
        if name in self.locals:
            if name in self.known:
                return True, self.known[name].value, True
            return False, None, False
        found, v = self.ns.lookup(name)
        if not found:
            self._error(name_node, "srcgrad could not resolve the name %r" % name, op_by_op=False)
        self.free[name] = v
        return True, v, not chains.arraylike(v)

    def _leaf(self, text, kind, root, steps, node):
        if text not in self.leaves and kind == "free":
            self.leaves[text] = Leaf(text, kind, root, tuple(steps), text)
        if text not in self.leaves:
            base = text.replace(".", "_").replace("[", "_").replace("]", "").replace("'", "").replace('"', "")
            self.leaves[text] = Leaf(self.namer.fresh(base), kind, root, tuple(steps), text)
        return ast_util.copy_location(ast_util.name(self.leaves[text].name), node)

    # -- visitors
    def visit_Call(self, node):
        node = self._visit_call(node)
        if not isinstance(node, gast.Call):
            return node
        if chains.is_srcgrad_transform(Anno.CALLEE.of(node.func)):
            found, value = self.static(node)
            if found:
                Anno.VALUE.add_to(node, value)       # sg.grad(f) passed on: the callee calls a known gradient
        return node

    def _visit_call(self, node):
        func = node.func
        node.args = [self.visit(a) for a in node.args]
        for k in node.keywords:
            k.value = self.visit(k.value)
        if Anno.CALLEE.of(func) is not None:
            return node       # a srcgrad helper placed by lower.py
        if isinstance(func, gast.Name) and func.id in self.records:
            return self._record_call(node, func.id, "__call__")
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and func.value.id in self.records:
            return self._record_call(node, func.value.id, func.attr)
        if isinstance(func, gast.Name):
            example = self.examples.get(func.id) if func.id in self.params else None
            if example is not None and callable(example):
                Anno.CALLEE.add_to(func, example)      # a function or callable object passed in
                return node
            if func.id in self.known:
                Anno.CALLEE.add_to(func, self.known[func.id].value)     # a local holding a known function or object
                return node
            if func.id in self.locals:
                filename, lineno, col = self.parsed.origin(func)
                what = ("a function or object passed in as %s that srcgrad does not know when compiling the "
                        "caller" % func.id if func.id in self.params else
                        "%s, an object or function built inside the differentiated code" % func.id)
                raise UnsupportedSyntaxError(
                    "calling " + what, filename, lineno, col,
                    "call module-level functions, pass functions and objects as arguments, or build objects "
                    "from constants")
            known, value, _ = self._root_value(func)
            if value is broadcast_helpers.unindex_add and len(node.args) == 4 and not node.keywords:
                # generated code transformed again: the accumulation the in-place add stands for
                # (transforms/inplace.py), acc + unindex(g, x, index)
                unindex = ast_util.name("unindex")
                Anno.CALLEE.add_to(unindex, broadcast_helpers.unindex)
                Anno.HELPER.add_to(unindex, True)
                call = ast_util.copy_location(ast_util.call(unindex, node.args[1:]), node)
                return ast_util.copy_location(ast_util.add(node.args[0], call), node)
            if value is elementwise_helpers.binop_into and len(node.args) == 4 and not node.keywords \
                    and isinstance(node.args[0], gast.Constant) and node.args[0].value in _BINOPS:
                # generated code transformed again: the operator the elided temporary stands for
                # (transforms/inplace.py elide_temporaries)
                return ast_util.copy_location(gast.BinOp(left=node.args[1], op=_BINOPS[node.args[0].value](),
                                                         right=node.args[2]), node)
            if value is broadcast_helpers.unbroadcast_product and len(node.args) == 3 and not node.keywords:
                # the same for a product summed as a contraction: unbroadcast(a * b, x), resolved again
                unbroadcast = ast_util.name("unbroadcast")
                Anno.CALLEE.add_to(unbroadcast, broadcast_helpers.unbroadcast)
                Anno.HELPER.add_to(unbroadcast, True)
                product = gast.BinOp(left=node.args[0], op=gast.Mult(), right=node.args[1])
                return ast_util.copy_location(ast_util.call(unbroadcast, [product, node.args[2]]), node)
            if value is containers.drop_last_own and len(node.args) == 1 and not node.keywords:
                # the same for a list's last entry popped in place (inplace.own_list_updates): xs[:-1]
                return self.visit(ast_util.copy_location(_drop_last(node.args[0]), node))
            if value is elementwise_helpers.ufunc_into and len(node.args) == 2 and not node.keywords:
                # the same for a ufunc written into its operand's buffer: f(a), resolved again
                return self.visit_Call(ast_util.copy_location(ast_util.call(node.args[0], [node.args[1]]), node))
            functional = containers.FUNCTIONAL.get(value) if callable(value) else None
            if functional is not None:
                # generated code transformed again: an update in place proven safe for that code
                # (transforms/inplace.py) is a functional update for the new one
                Anno.CALLEE.add_to(func, functional)
                Anno.HELPER.add_to(func, True)
                return node
            Anno.CALLEE.add_to(func, value)
            return node
        if isinstance(func, (gast.Attribute, gast.Subscript)):
            ch = chains.chain(func)
            if ch is not None:
                root, steps = ch
                if root.id in self.known and isinstance(func, gast.Subscript):
                    obj = self.static(func)[1]
                    if obj is not None and callable(obj):
                        Anno.CALLEE.add_to(func, obj)          # known_list[0](x)
                        return node
                known, value, is_object = self._root_value(root)
                if root.id not in self.locals and root.id not in self.params and known:
                    # a module path such as np.linalg.solve, or a global object's method
                    obj = value
                    try:
                        for kind, key, _ in steps:
                            obj = getattr(obj, key) if kind == "attr" else obj[key]
                    except Exception:
                        self._error(func, "srcgrad could not resolve %s" % ast_util.to_source(func))
                    self._walked(root.id, steps, obj)
                    if isinstance(value, types.ModuleType) or callable(obj):
                        Anno.CALLEE.add_to(func, obj)
                        if not isinstance(value, types.ModuleType):
                            Anno.OPAQUE_METHOD.add_to(func, True)
                        return node
            if isinstance(func, gast.Subscript):
                if ch is not None and ch[0].id in self.params and self._example_attribute(func) is not None:
                    Anno.CALLEE.add_to(func, self._example_attribute(func))     # params["f"](x), fs[0](x)
                    func.value = self.visit(func.value)
                    return node
                self._error(func, "calling the result of an expression (%s) is not supported"
                            % ast_util.to_source(func))
            # a method on a value: x.sum(), (a @ b).reshape(...), self.kernel.dot(x)
            is_object = self._is_object_expr(func.value)
            func.value = self.visit(func.value)
            if func.attr in chains.ARRAY_ATTRS and not is_object:
                Anno.METHOD.add_to(func, func.attr)
            else:
                Anno.CALLEE.add_to(func, self._example_attribute(func) if is_object else None)
                Anno.OPAQUE_METHOD.add_to(func, True)
            return node
        if isinstance(func, gast.Call):
            # sg.grad(f)(x): the function sg.grad returns, known when f is
            inner = self._visit_call(func)
            found, value = self.static(inner)
            if found and callable(value):
                Anno.CALLEE.add_to(func, value)
                return node
        self._error(func, "calling the result of an expression is not supported")

    def _example_attribute(self, node):
        """The object `node` (a chain such as self.helper) names for the
        example arguments, or None."""
        ch = chains.chain(node)
        if ch is None:
            return None
        root, steps = ch
        known, value, _ = self._root_value(root)
        if not known:
            return None
        try:
            for kind, key, _ in steps:
                value = getattr(value, key) if kind == "attr" else value[key]
        except Exception:
            return None
        self._walked(root.id, steps, value)
        return value

    def _is_object_expr(self, node):
        """Is `node` a chain ending on a (known) non-array object?"""
        ch = chains.chain(node) if not isinstance(node, gast.Name) else (node, [])
        if ch is None:
            return False
        root, steps = ch
        if root.id in self.locals and root.id not in self.params and root.id not in self.known:
            return False
        known, value, is_object = self._root_value(root)
        if not known:
            return is_object and not steps
        try:
            for kind, key, _ in steps:
                value = getattr(value, key) if kind == "attr" else value[key]
        except Exception:
            return False
        self._walked(root.id, steps, value)
        return not chains.arraylike(value)

    def visit_Attribute(self, node):
        if isinstance(node.value, gast.Name) and node.value.id in self.records and isinstance(node.ctx, gast.Load):
            return self._record_attribute(node)
        return self._visit_chain(node)

    def visit_Subscript(self, node):
        if isinstance(node.ctx, gast.Load):
            found, obj = self.static(node.value)
            if found and (obj is np.r_ or obj is np.c_):
                return self._index_trick(node, obj is np.c_)
            return self._visit_chain(node)
        return self.generic_visit(node)

    def _index_trick(self, node, columns):
        """np.r_[a, b, ...] -> np.concatenate([np.atleast_1d(a), ...]);
        np.c_[a, b, ...] -> np.concatenate([np.reshape(a, column_shape(a)),
        ...], axis=-1) (NumPy's AxisConcatenator for these two: items at
        least 1-d, or 1-d items as columns, joined along the first or the
        last axis). A slice item is np.r_'s range (r_range: no derivative)."""
        items = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        what = "np.c_" if columns else "np.r_"
        parts = []
        for item in items:
            if isinstance(item, gast.Constant) and isinstance(item.value, str):
                self._unsupported(item, "%s with a string directive" % what, "call np.concatenate")
            if isinstance(item, gast.Slice):
                bounds = [self.visit(b) if b is not None else ast_util.const(None)
                          for b in (item.lower, item.upper, item.step)]
                item = ast_util.call(chains.helper_name(runtime_syntax.r_range, "r_range"), bounds)
            else:
                item = self.visit(item)
            if columns:
                shape = ast_util.call(chains.helper_name(runtime_syntax.column_shape, "column_shape"),
                                      [ast_util.clone(item)])
                parts.append(ast_util.call(chains.helper_name(np.reshape, "reshape"), [item, shape]))
            else:
                parts.append(ast_util.call(chains.helper_name(np.atleast_1d, "atleast_1d"), [item]))
        joined = gast.List(elts=parts, ctx=gast.Load())
        axis = gast.keyword(arg="axis", value=ast_util.const(-1 if columns else 0))
        new = ast_util.call(chains.helper_name(np.concatenate, "concatenate"), [joined], [axis])
        for n in ast_util.walk(new):
            if not Anno.ORIGIN.exists(n) and Anno.ORIGIN.exists(node):
                Anno.ORIGIN.add_to(n, Anno.ORIGIN.of(node))
        return ast_util.copy_location(new, node)

    def _unsupported(self, node, construct, hint=None):
        filename, lineno, col = self.parsed.origin(node)
        raise UnsupportedSyntaxError(construct, filename, lineno, col, hint)

    def _visit_chain(self, node):
        ch = chains.chain(node)
        if ch is None:
            return self.generic_visit(node)
        root, steps = ch
        if root.id in self.known and root.id not in self.params:
            found, value = self.static(node)
            node = self.generic_visit(node)
            if found and not chains.arraylike(value) and value is not None:
                Anno.VALUE.add_to(node, value)       # an attribute of a known local object, passed on
            return node
        if root.id in self.locals and root.id not in self.params:
            return self.generic_visit(node)
        known, value, is_object = self._root_value(root)
        if not is_object:
            return self.generic_visit(node)
        # Walk the chain while the value is an object; stop at the first
        # array-like value (the leaf), or at an ndarray attribute when the
        # value is unknown (sg.source without example arguments).
        taken = []
        obj = value
        for kind, key, step_node in steps:
            if known:
                if chains.arraylike(obj):
                    break
                try:
                    obj = getattr(obj, key) if kind == "attr" else obj[key]
                except Exception:
                    # (param["seed"] in a branch testing `"seed" in param`): read live, as Python would; the
                    # chain is recorded absent, so that it appearing later recompiles
                    self._walked(root.id, taken + [(kind, key, step_node)], chains.ABSENT)
                    return self.generic_visit(node)
            elif kind == "attr" and key in chains.ARRAY_ATTRS and taken:
                break
            taken.append((kind, key, step_node))
            if known and chains.arraylike(obj):
                break
        if not taken:
            return self.generic_visit(node)
        if known:
            self._walked(root.id, taken, obj)
        last = taken[-1][2]
        if known and not chains.is_value(obj):
            # not a Tensor/Variable (a constant, a sub-object): read live
            node = self.generic_visit(node)
            if last is node and not chains.arraylike(obj) and obj is not None:
                Anno.VALUE.add_to(node, obj)         # np.sin, obj.method, obj.layer: passed on to a callee
            return node
        text = ast_util.to_source(last)
        leaf = self._leaf(text, "chain", root.id, [(k, key) for k, key, _ in taken], last)
        if last is node:
            return leaf
        # replace the inner chain node by the leaf, keep the outer steps
        parent = node
        while True:
            child = parent.value
            if child is last:
                parent.value = leaf
                break
            parent = child
        return node

    def visit_Name(self, node):
        if not isinstance(node.ctx, gast.Load):
            if isinstance(node.ctx, gast.Store):
                self.known.pop(node.id, None)
            return node
        if Anno.HELPER.of(node, False):
            return node
        if node.id in self.records:
            self._unsupported(node, "using %s, an object of %s built from differentiated values, other than by "
                              "reading its attributes and calling its methods"
                              % (node.id, self.records[node.id][0].__name__),
                              "pass its arrays, or build it outside the differentiated code")
        if node.id in self.known and node.id not in self.params:
            value = self.known[node.id].value
            if not chains.arraylike(value) and value is not None:
                Anno.VALUE.add_to(node, value)
            return node
        if node.id in self.params:
            example = self.examples.get(node.id)
            if example is not None and not chains.arraylike(example):
                Anno.VALUE.add_to(node, example)    # an object passed on: the callee knows it too
            return node
        if node.id in self.locals:
            return node
        found, value = self.ns.lookup(node.id)
        if not found:
            self._error(node, "srcgrad could not resolve the name %r" % node.id, op_by_op=False)
        self.free[node.id] = value
        if chains.is_value(value):
            return self._leaf(node.id, "free", node.id, [], node)
        if not chains.arraylike(value) and value is not None:
            Anno.VALUE.add_to(node, value)         # a function or object passed on as an argument
        return node


    # -- statements: what local names hold, flow-sensitively
    def block(self, stmts):
        out = []
        for s in stmts:
            new = self.visit(s)
            if isinstance(new, list):
                out.extend(new)
            elif new is not None:
                out.append(new)
        return out

    def visit_Assign(self, node):
        if len(node.targets) == 1 and isinstance(node.targets[0], gast.Name) and node.targets[0].id in self.records:
            return self._record_assign(node)
        node.value = self.visit(node.value)
        node.targets = [self.visit(t) for t in node.targets]
        if len(node.targets) == 1 and isinstance(node.targets[0], gast.Name):
            known = self.known_value(node.value)
            if known is not None:
                self.known[node.targets[0].id] = known
        return node

    def visit_If(self, node):
        node.test = self.visit(node.test)
        decided = self._decided(node.test)
        if decided is not None:
            # isinstance(layer, Conv) on a known object (an unrolled loop over a list of objects):
            # only the branch taken is compiled
            return self.block(node.body if decided else node.orelse) or [ast_util.copy_location(gast.Pass(), node)]
        before = dict(self.known)
        node.body = self.block(node.body)
        after_body, self.known = self.known, before
        node.orelse = self.block(node.orelse)
        self.known = {k: v for k, v in after_body.items() if k in self.known and self.known[k].value is v.value}
        return node

    def _kill(self, stmts):
        for s in stmts:
            for n in ast_util.walk(s):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                    self.known.pop(n.id, None)

    def visit_While(self, node):
        self._kill(node.body)
        node.test = self.visit(node.test)
        node.body = self.block(node.body)
        self._kill(node.body)
        return node

    def visit_For(self, node):
        unrolled = self._unroll(node)
        if unrolled is not None:
            return unrolled
        node.iter = self.visit(node.iter)
        node.target = self.visit(node.target)
        self._kill(node.body)
        node.body = self.block(node.body)
        self._kill(node.body)
        return node

    def _unroll(self, node):
        """A loop over a known list of objects or functions (lower.py marks
        a loop over sequences with `Anno.OVER`, the names holding them; zip
        and enumerate included): the body once per element, with the index a
        constant, so that each element's calls are compiled for it. A list
        read from a global or an argument is checked at run time to be the
        one unrolled; the other sequences of a zip to be long enough."""
        seqs = Anno.OVER.of(node) or []
        known = {}
        for seq in seqs:
            k = self.known.get(seq)
            if k is not None and type(k.value) in (list, tuple) and len(k.value) <= _UNROLL_MAX and \
                    not any(chains.arraylike(v) or v is None for v in k.value):
                known[seq] = k
        if not known:
            return None
        n = min(len(k.value) for k in known.values())
        index = node.target.id
        filename, lineno, _ = self.parsed.origin(node)
        where = ast_util.const(location(filename, lineno))
        out = []
        for seq in seqs:
            k = known.get(seq)
            if k is not None and not k.shared and len(k.value) == n:
                continue
            if k is not None and k.shared:
                objects = chains.helper_name(tuple(k.value), "unrolled")
                check = ast_util.call(chains.helper_name(runtime_syntax.check_unrolled, "check_unrolled"),
                                      [ast_util.name(seq), objects, where])
            else:
                check = ast_util.call(chains.helper_name(runtime_syntax.check_length, "check_length"),
                                      [ast_util.name(seq), ast_util.const(n), where])
            out.append(ast_util.copy_location(ast_util.expr_stmt(check), node))
            for n_ in ast_util.walk(out[-1]):
                Anno.ORIGIN.add_to(n_, Anno.ORIGIN.of(node))
        for k in range(n):
            out.extend(_ConstantIndex(index, k).visit(s) for s in ast_util.clone(node.body))
        return self.block(out)

    def _decided(self, test):
        """True/False for a test about a known object's type (isinstance,
        callable, `not` of one); else None."""
        if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
            inner = self._decided(test.operand)
            return None if inner is None else not inner
        if not (isinstance(test, gast.Call) and Anno.CALLEE.of(test.func) in
                (builtins.isinstance, builtins.callable)) or test.keywords:
            return None
        args = [self.static(a) for a in test.args]
        if not all(found for found, _ in args) or not test.args:
            return None
        subject = args[0][1]
        if chains.arraylike(subject) or subject is None or type(subject) in (list, tuple, dict):
            return None         # a value, not an object: decided at run time
        try:
            return bool(Anno.CALLEE.of(test.func)(*[v for _, v in args]))
        except Exception:
            return None

    # -- objects of plain data-holder classes built from differentiated values


class _ConstantIndex(ast_util.NodeTransformer):
    """Reads of the loop index `name` -> the constant `k` (an unrolled copy)."""

    def __init__(self, name, k):
        self.name, self.k = name, k

    def visit_Name(self, node):
        if node.id == self.name and isinstance(node.ctx, gast.Load):
            return ast_util.copy_location(ast_util.const(self.k), node)
        return node




def resolve(parsed, examples=None, field_method=None):
    """Resolve `parsed` (a deep copy is transformed). `examples` maps
    parameter names to example argument values; with them, chains through
    objects (`self.kernel`) are cut exactly where the value becomes an array.
    `field_method(cls, name)` gives the FieldMethod of a method of a plain
    data-holder class (function.py); without it, objects built from
    differentiated values are not records."""
    node = ast_util.clone(parsed.node)
    work = copy.copy(parsed)
    work.node = node
    nodes = ast_util.walk(node)
    every, stored = _names(nodes)
    namer = Namer(every | ast_util.grad_of_names(node, nodes) | set(dir(builtins)))
    r = _Resolver(work, Namespace(parsed.func), examples or {}, namer, stored)
    if field_method is not None:
        r.field_method = field_method
        r.find_records(node.body)
    node.body = r.block(node.body)
    nodes = records.result_fields_as_items(node)
    return Resolution(node=node, params=list(parsed.params), leaves=list(r.leaves.values()),
                      free=r.free, locals=r.locals, examples=dict(examples or {}), namer=namer,
                      chains=r.chains, walked=(node, nodes) if nodes is not None else None)
