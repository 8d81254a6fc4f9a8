"""Lowering: element assignment and list methods become functional updates.

Requires: views (the VIEW_CHECK annotations). Guarantees:
- element assignment `x[i] = v` (also `x[i] += v`, `x[i][j] = v`, dict and
  list items, `a[i], a[j] = a[j], a[i]`) is the functional
  `x = setitem(x, i, v)`, so the derivative code never mutates the caller's
  arrays and the overwritten values are kept (the old `x` is saved like any
  overwritten name); an index that is not a name or a constant is bound to
  a fresh `_index` first, so it is evaluated once, in Python's order (the
  value of `x[f()] = v` first, the indices of `x[f()] += v` first);
  `xs.append(v)` and `xs.extend(ys)` are
  `xs = list_append(xs, v)` / `list_extend` (srcgrad/rules/containers.py);
- a statement carrying VIEW_CHECK is preceded by `check_not_shared(x,
  (others...), views)`, NumPy's semantics checked at run time;
- element assignment to a name that is not a local variable, or that
  another name aliases (`a = b`), and a method that changes a local list,
  dict or array in place (`xs.insert`, `d.update`, `x.sort()`, ...: the
  value-semantics IR cannot follow it, and ignoring it would give a
  silently wrong derivative) raise UnsupportedSyntaxError.
`written_params` finds the element assignments into parameters (NumPy
changes the caller's array, which compiled code does not).
"""
import gast

from ...errors import fail
from ...rules.python import containers
from ...runtime import syntax as runtime_syntax
from ...syntax import ast_util
from ...syntax.anno import Anno
from ...syntax.templates import replace, replace_expr
from .. import check
from ..base import inherit_origin
from .common import Block, helper, mutated, subscript_base

# methods that change their list, dict, set or ndarray in place (append and
# extend are lowered to functional helpers instead)
_MUTATORS = {"insert", "reverse", "sort", "remove", "clear", "update", "setdefault", "pop", "popitem",
             "add", "discard", "fill", "resize", "put", "itemset", "partition", "setfield", "sort_values",
             "__setitem__", "__delitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__"}


# in-place methods of ndarrays (list.sort too: ambiguous), which the tape's
# immutable Tensors do not have either: refused, never run op by op
_ARRAY_MUTATORS = {"sort", "fill", "resize", "put", "itemset", "partition", "setfield", "sort_values"}


class _Mutations(Block):

    def visit(self, node):
        self.check_mutators(node)
        return super().visit(node)

    def visit_AugAssign(self, node):
        if not isinstance(node.target, gast.Subscript):
            return self.checked(node, node)
        # Python evaluates the target's indices once, before the value: x[f()] += v is
        # _index = f(); x = setitem(x, _index, x[_index] + v)
        pre, target = self.bind_indices(node.target)
        read = replace_expr("TARGET", TARGET=target)        # x[i] += v: x[i] = x[i] + v
        pre += self.slot_check(target, node)
        return self.checked(node, pre + self.setitem(target, ast_util.binop(read, node.op, node.value), node))

    def slot_check(self, written, node):
        """The run-time check that the slot `written` (xs[k], an array that
        `xs[k] += v` or `xs[k][i] = v` writes into in place) is held by no
        other slot of its container: [] when `written` is not a subscript
        of a simple expression by a name or constant."""
        if not (isinstance(written, gast.Subscript) and isinstance(written.slice, (gast.Name, gast.Constant))
                and _simple_chain(written.value)):
            return []
        check = ast_util.call(helper(runtime_syntax.check_slot_not_shared, "check_slot_not_shared"),
                              [ast_util.set_load(ast_util.clone(written.value)),
                               ast_util.set_load(ast_util.clone(written.slice)),
                               helper(tuple(self.ctx.parsed.origin(node)), "origin")])
        return [ast_util.copy_location(gast.Expr(value=check), node)]

    def visit_Assign(self, node):
        targets = node.targets
        if (len(targets) == 1 and isinstance(targets[0], (gast.Tuple, gast.List))
                and any(isinstance(n, gast.Subscript) for n in targets[0].elts)):
            return self.checked(node, self.visit_block(inherit_origin(self.unpack(node), node)))
        if any(isinstance(t, gast.Subscript) for t in targets):
            if len(targets) != 1:
                fail(self.ctx.parsed, node, "chained element assignment")
            pre, target = self.bind_indices(targets[0])
            value = node.value
            if pre and not _simple(value):
                # Python evaluates the value before the target's indices
                value = ast_util.name(self.ctx.namer.fresh("_value"))
                pre = replace("V = E", V=value, E=node.value) + pre
            pre += self.slot_check(target.value, node)      # xs[k][i] = v writes into the array xs[k]
            return self.checked(node, pre + self.setitem(target, value, node))
        return self.checked(node, node)

    def visit_AnnAssign(self, node):
        return self.checked(node, node)

    def visit_Expr(self, node):
        call = node.value
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
                and call.func.attr in ("append", "extend") and isinstance(call.func.value, gast.Name)
                and len(call.args) == 1 and call.func.value.id in self.ctx.locals):
            return node
        xs = call.func.value.id
        if xs in self.ctx.aliases:
            fail(self.ctx.parsed, node, "%s.%s(...) on %s, which another name (%s) refers to (an alias)"
                 % (xs, call.func.attr, xs, self.ctx.aliases[xs]), "make a copy: ys = list(xs)")
        append = call.func.attr == "append"
        fn = helper(containers.list_append if append else containers.list_extend,
                    "list_append" if append else "list_extend")
        return replace("XS = F(XS, V)", XS=ast_util.name(xs), V=call.args[0], F=fn)

    def checked(self, node, new):
        """`new` (what replaces `node`), preceded by the run-time view check
        of `node` if it has one."""
        shared = Anno.VIEW_CHECK.of(node)
        if not shared:
            return new
        # a view or a copy, known at run time: NumPy's semantics checked before assigning
        what = (tuple((c, h) for _, c, h in shared), self.ctx.parsed.origin(node))    # (messages, origin)
        check = replace("CHECK(X, OTHERS, VIEWS)", CHECK=helper(runtime_syntax.check_not_shared, "check_not_shared"),
                        X=ast_util.name(mutated(node)[0]),
                        OTHERS=ast_util.tuple_([ast_util.name(n) for n, _, _ in shared]), VIEWS=helper(what, "views"))
        element = _written_element(node)
        if element is not None:
            # (zs[0][i] = v writes into the object zs[0], d["m"] += v into d["m"] in place when it is an
            # array: for a list or dict, that element is what must share memory with no other name)
            shown = ast_util.to_source(element).strip()
            messages = tuple((
                "writing into %s, which is %s or shares its memory, while %s is still used (NumPy would change "
                "%s too, srcgrad changes the container's element only)" % (shown, n, n, n),
                "store a copy in the container (%s.copy()), or build a new array instead of writing into %s"
                % (n, shown)) for n, _, _ in shared)
            check += replace("CHECK(X, OTHERS, VIEWS)", CHECK=helper(runtime_syntax.check_not_shared,
                                                                     "check_not_shared"),
                             X=element, OTHERS=ast_util.tuple_([ast_util.name(n) for n, _, _ in shared]),
                             VIEWS=helper((messages, what[1]), "views"))
        return check + (new if isinstance(new, list) else [new])

    def unpack(self, node):
        """a[i], a[j] = a[j], a[i]: evaluate the right side first, then assign one by one."""
        namer = self.ctx.namer
        elts = node.targets[0].elts
        value = node.value
        pre = []
        if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(elts):
            parts = value.elts
        else:
            tup = ast_util.name(namer.fresh("_tuple"))
            pre += replace("T = V", T=tup, V=value)
            parts = [replace_expr("T[K]", T=tup, K=ast_util.const(k)) for k in range(len(elts))]
        temps = [ast_util.name(namer.fresh("_value")) for _ in elts]
        pre += [a for t, v in zip(temps, parts) for a in replace("T = V", T=t, V=v)]
        read = {n.id for n in ast_util.walk(value) if isinstance(n, gast.Name)}
        for k, (e, t) in enumerate(zip(elts, temps)):
            base = _subscript_root(e)
            later = temps[k + 1:]
            if base is not None and base in read and later:
                # NumPy assigns one by one: a later item that is a view of `base` (a row, a slice) is read
                # after this write; the functional setitem would give it the value before (X[0], X[1] = X[1], X[0])
                source = ast_util.to_source(value).strip()
                message = ("assigning %s in a tuple assignment whose right side %s holds a view of %s: NumPy "
                           "writes the items one by one, so a later item sees the earlier writes (a row swap "
                           "copies one row twice); srcgrad would read the values before" % (
                               ast_util.to_source(e).strip(), source, base),
                           "copy the right side's items: %s" % ", ".join(
                               "%s.copy()" % ast_util.to_source(v).strip() for v in parts))
                what = (tuple(message for _ in later), self.ctx.parsed.origin(node))
                pre += replace("CHECK(X, OTHERS, VIEWS)", CHECK=helper(runtime_syntax.check_not_shared,
                                                                       "check_not_shared"),
                               X=ast_util.name(base), OTHERS=ast_util.tuple_([ast_util.name(n.id) for n in later]),
                               VIEWS=helper(what, "views"))
            pre += replace("E = T", E=e, T=t)
        return pre

    def check_mutators(self, s):
        """A method that mutates a local list, dict or array in place
        (xs.insert, d.update, x.sort(), ...) other than append and extend
        is refused by name."""
        exprs = [getattr(s, f, None) for f in ("value", "test", "iter", "target", "targets")]
        for e in exprs:
            for part in (e if isinstance(e, list) else [e]):
                if not isinstance(part, gast.AST):
                    continue
                for n in ast_util.walk(part):
                    if (isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
                            and n.func.attr in _MUTATORS and isinstance(n.func.value, gast.Name)
                            and n.func.value.id in self.ctx.locals):
                        fail(self.ctx.parsed, n, "%s.%s(...), which changes %s in place"
                             % (n.func.value.id, n.func.attr, n.func.value.id),
                             "srcgrad follows xs.append, xs.extend and x[i] = v; build a new value "
                             "instead (xs = [v] + xs, d = {**d, 'k': v}, x = np.sort(x))",
                             op_by_op=n.func.attr not in _ARRAY_MUTATORS)

    def bind_indices(self, target):
        """(statements, target): the indices of the subscript chain `target`
        (`a[f()][g():]`) that a second evaluation could change or repeat a
        side effect of (anything but a name or a constant) bound to fresh
        names, once each, outermost first as Python evaluates them; the
        target reading those names instead."""
        pre = []

        def bind(e):
            if _simple(e):
                return e
            tmp = ast_util.name(self.ctx.namer.fresh("_index"))
            pre.extend(replace("T = E", T=tmp, E=e))
            return tmp

        def index(sl):
            if isinstance(sl, gast.Tuple):
                sl.elts = [index(e) for e in sl.elts]
                return sl
            if isinstance(sl, gast.Slice):
                sl.lower, sl.upper, sl.step = bind(sl.lower), bind(sl.upper), bind(sl.step)
                return sl
            return bind(sl)

        target = ast_util.clone(target)
        node = target
        copies = []
        while isinstance(node, gast.Subscript):
            copies.append(node)
            node = node.value
        for sub in reversed(copies):        # the base's index first
            sub.slice = index(sub.slice)
        return pre, target

    def setitem(self, target, value, s):
        """`base[i][j] = v` -> t = base[i]; t = setitem(t, j, v); base = setitem(base, i, t)."""
        ctx = self.ctx
        if isinstance(target.value, gast.Name):
            base = target.value.id
            if base not in ctx.locals:
                fail(ctx.parsed, s, "assignment to an element of %s, which is not a local variable" % base)
            return replace("X = SET(X, I, V)", X=ast_util.name(base), I=ast_util.slice_to_expr(target.slice),
                           V=value, SET=helper(containers.setitem, "setitem"))
        if isinstance(target.value, gast.Subscript):
            tmp = ast_util.name(ctx.namer.fresh("_part"))
            out = replace("T = PART", T=tmp, PART=target.value)
            out += replace("X = SET(X, I, V)", X=tmp, I=ast_util.slice_to_expr(target.slice),
                           V=value, SET=helper(containers.setitem, "setitem"))
            return out + self.setitem(target.value, tmp, s)
        check.refuse_element_target(ctx.parsed, s, target.value)


def _simple(e):
    """Does evaluating `e` again give the same value, with no side effect
    (absent, a name, a constant, a negated constant)?"""
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, (gast.USub, gast.UAdd)):
        e = e.operand
    return e is None or isinstance(e, (gast.Name, gast.Constant))


def _written_element(node):
    """For an element assignment through a subscript (`zs[0][i] = v`: the
    object zs[0]) or an augmented one (`d["m"] += v`: d["m"], which an
    array's += changes in place), a copy of the expression of the object
    written into; None for `x[i] = v`, or when an index is not a name or a
    constant (evaluating it again could differ)."""
    target = node.target if isinstance(node, gast.AugAssign) else (
        node.targets[0] if isinstance(node, gast.Assign) and len(node.targets) == 1 else None)
    if not isinstance(target, gast.Subscript):
        return None
    element = target if isinstance(node, gast.AugAssign) else target.value
    if not isinstance(element, gast.Subscript):
        return None
    e = element
    while isinstance(e, gast.Subscript):
        if not isinstance(e.slice, (gast.Name, gast.Constant)):
            return None
        e = e.value
    if not isinstance(e, gast.Name):
        return None
    return ast_util.set_load(ast_util.clone(element))


def _simple_chain(e):
    """Is `e` a name under subscripts by names and constants (xs, zs[0])?"""
    while isinstance(e, gast.Subscript):
        if not isinstance(e.slice, (gast.Name, gast.Constant)):
            return False
        e = e.value
    return isinstance(e, gast.Name)


def _subscript_root(target):
    """The name under the subscripts of `target` (x for x[i][j]), or None."""
    while isinstance(target, gast.Subscript):
        target = target.value
    return target.id if isinstance(target, gast.Name) else None


def written_params(body, params, nodes=None):
    """{parameter: the statement} for element assignments (`v[i] = ...`,
    `v[i] += ...`) into a parameter never rebound in the function: NumPy
    changes the caller's array, which compiled code does not (checked where
    the function is compiled as a callee). `nodes`: the walk of
    module(body), when the caller has it (also for keyed_params and
    grown_params)."""
    nodes = nodes if nodes is not None else ast_util.walk(ast_util.module(body))
    stored = {}
    for n in nodes:
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            stored[n.id] = stored.get(n.id, 0) + 1
    out = {}
    for n in nodes:
        if isinstance(n, (gast.Assign, gast.AugAssign)):
            for name in mutated(n):
                if name in params and not stored.get(name) and name not in out and not (
                        isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)):
                    out[name] = n
    return out


def keyed_params(body, written, nodes=None):
    """The parameters of `written` whose every element assignment is
    `d["key"] = v` (a string key: a dict of the caller's, which the tape
    updates right op by op; an array is not indexed by a string)."""
    keyed = set(written)
    for n in nodes if nodes is not None else ast_util.walk(ast_util.module(body)):
        if not isinstance(n, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
            continue
        targets = n.targets if isinstance(n, gast.Assign) else [n.target]
        for t in targets:
            for e in (t.elts if isinstance(t, (gast.Tuple, gast.List)) else [t]):
                if isinstance(e, gast.Name) and isinstance(n, gast.AugAssign):
                    keyed.discard(e.id)         # (x += v on the parameter itself)
                if not isinstance(e, gast.Subscript) or subscript_base(e) not in keyed:
                    continue
                if not (isinstance(e.value, gast.Name) and isinstance(e.slice, gast.Constant)
                        and isinstance(e.slice.value, str)):
                    keyed.discard(subscript_base(e))
    return keyed


def grown_params(body, params, nodes=None):
    """{parameter: the call} for container methods called on a parameter
    (`terms.append(v)`, `d.update(...)`): a list or dict of the caller's
    that the function changes in place (the tape does this right, op by op;
    compiled code, which rebinds, does not tell the caller)."""
    out = {}
    for n in nodes if nodes is not None else ast_util.walk(ast_util.module(body)):
        if (isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and isinstance(n.func.value, gast.Name)
                and n.func.value.id in params and n.func.attr in _MUTATORS | {"append", "extend"}):
            out.setdefault(n.func.value.id, n)
    return out


def transform(fdef, ctx):
    fdef.body = _Mutations(ctx).visit_block(fdef.body)
    return fdef
