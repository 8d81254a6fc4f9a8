"""Lowering: rewrite everyday Python into the core the differentiator handles.

Requires: parse, check. Runs once per function, on syntax alone (before
names are resolved). Guarantees, for the returned body:
- `for` loops iterate over `range(...)` with a Name target: a loop over a
  sequence (array rows, list, tuple), `zip`, `enumerate`, `reversed` or
  `dict.items()/keys()/values()` becomes an index loop that reads
  `seq[i]` (the read is differentiated like any indexing);
- `break`, `continue` and `return` before the end are gone: they set flags,
  the statements after them are guarded by `if not flag`, loops that can be
  left early are `while` loops testing the flags, and the function ends with
  one `return` (the AutoGraph/Tangent construction: Moldovan et al.,
  "AutoGraph: Imperative-style Coding with Graph-based Performance", 2019);
- element assignment `x[i] = v` (also `x[i] += v`, dict items, list items)
  is the functional `x = setitem(x, i, v)`, so the derivative code never
  mutates the caller's arrays and the overwritten values are kept (the old
  `x` is saved like any overwritten name); `xs.append(v)` and
  `xs.extend(ys)` are `xs = list_append(xs, v)` / `list_extend`;
- local functions (`def` and `lambda` inside the function) are inlined
  where they are called (also inside comprehensions), and list
  comprehensions become loops;
- a `with` block is its body between `v = with_enter(cm)` and
  `with_exit(cm)` (srcgrad/runtime/syntax.py): the forward sweep runs the
  body inside the context manager (np.errstate, warnings.catch_warnings),
  the reverse sweep outside it; the context manager itself is never
  differentiated (built from differentiated values, it raises where it is
  built). A body that returns, or breaks out of the block, is rejected by
  check.py;
- `for a, b in zip(*seqs)` reads `seqs[0][i]`, `seqs[1][i]`;
- a loop over sequences is marked with `_sg_over` (the names holding the
  sequences, also those of zip and enumerate), so that resolve.py can
  unroll it over a known list of objects;
- element assignment to a name that may be a NumPy view of another array
  (`a = x[::-1]`, `x.T`, `x.reshape(...)`, a row of a loop over an array)
  while the other array is still read afterwards (or the other way round)
  raises UnsupportedSyntaxError: NumPy would change both, the functional
  setitem only one;
- `with sg.insert_grad_of(x) as bx: body` is one marker statement,
  `grad_of(x)`, holding the body (`_sg_grad_of`): the forward sweeps drop
  it, the reverse sweep runs the body at its place with `bx` bound to the
  adjoint of `x` accumulated so far, and takes back what `bx` holds
  (Tangent's insert_grad_of). Names the body assigns are its own: a use
  outside the block is rejected;
- docstrings and `pass` stay (anf.py drops them); `print`, `assert` stay
  (forward only).
"""
import builtins
import copy
import types

import gast

from ..runtime import syntax as runtime_syntax
from ..errors import UnsupportedSyntaxError
from ..rules.python import containers
from ..syntax import ast_util
from ..syntax.naming import Namer


def _q(src, **nodes):
    """Statements parsed from `src`, with Names `nodes` replaced by copies of
    the given nodes."""
    stmts = ast_util.quote(src)

    class Sub(gast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in nodes:
                new = ast_util.clone(nodes[node.id])
                if isinstance(node.ctx, gast.Load):
                    ast_util.set_load(new)
                else:
                    ast_util.set_store(new)
                return new
            return node
    return [Sub().visit(s) for s in stmts]


def _qe(src, **nodes):
    return _q(src, **nodes)[0].value


def _helper(fn, name):
    """A Name calling srcgrad helper `fn`, resolved already (no lookup)."""
    n = ast_util.name(name)
    n._sg_callee = fn
    n._sg_helper = True
    return n


def _locate(stmts, node):
    for s in stmts:
        for n in ast_util.walk(s):
            if not hasattr(n, "_sg_origin") and hasattr(node, "_sg_origin"):
                n._sg_origin = node._sg_origin
    return stmts


def _jumps(stmts, kinds):
    """Does `stmts` contain a statement of `kinds` (not counting break and
    continue inside nested loops)?"""
    def walk(s, in_loop):
        if isinstance(s, gast.Return) and gast.Return in kinds:
            return True
        if isinstance(s, (gast.Break, gast.Continue)) and type(s) in kinds and not in_loop:
            return True
        if isinstance(s, (gast.For, gast.While)):
            return any(walk(c, True) for c in s.body)
        if isinstance(s, gast.If):
            return any(walk(c, in_loop) for c in s.body + s.orelse)
        return False
    return any(walk(s, False) for s in stmts)


# methods that change their list, dict, set or ndarray in place (append and
# extend are lowered to functional helpers instead)
_MUTATORS = {"insert", "reverse", "sort", "remove", "clear", "update", "setdefault", "pop", "popitem",
             "add", "discard", "fill", "resize", "put", "itemset", "partition", "setfield", "sort_values",
             "__setitem__", "__delitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__"}


class _Lowerer:
    def __init__(self, parsed):
        self.parsed = parsed
        used = {n.id for n in ast_util.walk(parsed.node) if isinstance(n, gast.Name)}
        self.namer = Namer(used | set(parsed.params) | set(dir(builtins)))
        self.local_fns = {}
        self.locals = set(parsed.params) | {n.id for n in ast_util.walk(parsed.node) if isinstance(n, gast.Name)
                                            and isinstance(n.ctx, gast.Store)}
        # `a = b` makes a and b one object, which element assignment would
        # mutate for both; the functional setitem cannot follow that
        self.aliases = {}
        for n in ast_util.walk(parsed.node):
            if (isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], gast.Name)
                    and isinstance(n.value, gast.Name)):
                a, b = n.targets[0].id, n.value.id
                self.aliases.setdefault(a, b)
                self.aliases.setdefault(b, a)

    def fail(self, node, construct, hint=None):
        filename, lineno, col = self.parsed.origin(node)
        raise UnsupportedSyntaxError(construct, filename, lineno, col, hint)

    # ------------------------------------------------------------ entry
    def run(self, top=True):
        fdef = self.parsed.node
        body = _drop_deletes(fdef.body)
        self.grad_of_blocks = []
        body = self.withs(body)
        if self.grad_of_blocks:
            self.check_grad_of_names(body)
            self.parsed.grad_of = True
        body = self.local_functions(body)
        self.check_local_function_values(body)
        if top:
            self.parsed.writes_params = _written_params(body, self.parsed.params)
        body = self.hoist_block(body)
        body = self.sequences(body)
        if top:
            _ViewCheck(self).check(body)
        body = self.mutations(body)
        self.ret = None
        last = body[-1] if body else None
        early = [n for s in body[:-1] for n in ast_util.walk(s) if isinstance(n, gast.Return)]
        if isinstance(last, (gast.If, gast.For, gast.While)):
            early += [n for n in ast_util.walk(last) if isinstance(n, gast.Return)]
        if early:
            returns = early + ([last] if isinstance(last, gast.Return) else [])
            arity = {len(r.value.elts) if isinstance(r.value, gast.Tuple) else None for r in returns
                     if r.value is not None}
            if len(arity) == 1 and None not in arity:     # every return gives a k-tuple
                values = [self.namer.fresh("_retval%d" % i) for i in range(arity.pop())]
            else:
                values = [self.namer.fresh("_retval")]
            flag = self.namer.fresh("_return")
            self.ret = (flag, values)
            body = _q("%s = False" % flag) + self.exits(body, None)
            out = ast_util.tuple_([ast_util.name(v) for v in values]) if len(values) > 1 else ast_util.name(values[0])
            body.append(ast_util.copy_location(ast_util.return_(out), last if last is not None else fdef))
        else:
            body = self.exits(body, None)
        fdef.body = body
        return fdef

    # ------------------------------------------------------------ with
    def _static(self, e):
        """The object a Name or a chain of module attributes denotes in the
        function's closure, globals or builtins (no other code runs), or None."""
        func = self.parsed.func
        if isinstance(e, gast.Attribute):
            base = self._static(e.value)
            return getattr(base, e.attr, None) if isinstance(base, types.ModuleType) else None
        if not isinstance(e, gast.Name) or e.id in self.locals:
            return None
        code = getattr(func, "__code__", None)
        if code is not None and e.id in code.co_freevars and func.__closure__:
            try:
                return func.__closure__[code.co_freevars.index(e.id)].cell_contents
            except ValueError:
                return None
        scope = getattr(func, "__globals__", {})
        return scope[e.id] if e.id in scope else getattr(builtins, e.id, None)

    def _is_grad_of(self, s):
        item = s.items[0]
        return isinstance(item.context_expr, gast.Call) and getattr(
            self._static(item.context_expr.func), "__srcgrad_grad_of__", False)

    def grad_of(self, s):
        """`with sg.insert_grad_of(x) as bx: body` -> the marker `grad_of(x)`
        carrying (x, bx, body) as `_sg_grad_of`."""
        item = s.items[0]
        call = item.context_expr
        if len(s.items) != 1:
            self.fail(s, "sg.insert_grad_of with other context managers in one with statement")
        if len(call.args) != 1 or call.keywords or not isinstance(call.args[0], gast.Name):
            self.fail(call, "sg.insert_grad_of of something other than one variable",
                      "name the value first: y = ...; with sg.insert_grad_of(y) as by:")
        target = item.optional_vars
        if target is not None and not isinstance(target, gast.Name):
            self.fail(target, "sg.insert_grad_of(x) as a target other than a name")
        for n in ast_util.walk(ast_util.module(s.body)):
            if isinstance(n, (gast.FunctionDef, gast.ClassDef, gast.Lambda, gast.Yield, gast.YieldFrom)):
                self.fail(n, "a %s inside an insert_grad_of block" % type(n).__name__)
        own = set(ast_util.names_stored(ast_util.module(s.body))) | ({target.id} if target is not None else set())
        self.grad_of_blocks.append((s, own))
        marker = ast_util.expr_stmt(ast_util.call(_helper(runtime_syntax.grad_of, "grad_of"),
                                                  [ast_util.name(call.args[0].id)]))
        marker._sg_grad_of = (call.args[0].id, target.id if target is not None else None, s.body)
        return _locate([ast_util.copy_location(marker, s)], s)[0]

    def check_grad_of_names(self, body):
        """The names an insert_grad_of body assigns exist in the reverse
        sweep only: used anywhere else in the function, they are rejected."""
        for block, own in self.grad_of_blocks:
            inside = {id(n) for n in ast_util.walk(ast_util.module(block.body))}
            for n in ast_util.walk(ast_util.module(body)):
                if isinstance(n, gast.Name) and n.id in own and id(n) not in inside:
                    self.fail(n, "%s, assigned inside an insert_grad_of block, used outside it" % n.id,
                              "the block runs in the backward pass only; use another name outside it")

    def withs(self, stmts):
        """`with A as a, B: body` -> `_with = A; a = with_enter(_with);
        _with_1 = B; with_enter(_with_1); body; with_exit(_with_1);
        with_exit(_with)` (check.py has rejected returns and breaks out of
        the body, so the exits always run after it; an exception in the
        body exits them through Compiled.run)."""
        out = []
        for s in stmts:
            for field in ("body", "orelse"):
                if isinstance(s, (gast.If, gast.For, gast.While, gast.With)) and getattr(s, field, None):
                    setattr(s, field, self.withs(getattr(s, field)))
            if not isinstance(s, gast.With):
                out.append(s)
                continue
            if self._is_grad_of(s):
                out.append(self.grad_of(s))
                continue
            pre, post = [], []
            for item in s.items:
                cm = self.namer.fresh("_with")
                pre.append(ast_util.assign(cm, item.context_expr))
                enter = ast_util.call(_helper(runtime_syntax.with_enter, "with_enter"), [ast_util.name(cm)])
                if item.optional_vars is not None:
                    pre.append(ast_util.assign(item.optional_vars, enter))
                else:
                    pre.append(ast_util.expr_stmt(enter))
                post.insert(0, ast_util.expr_stmt(
                    ast_util.call(_helper(runtime_syntax.with_exit, "with_exit"), [ast_util.name(cm)])))
            out.extend(_locate([ast_util.copy_location(x, s) for x in pre], s))
            out.extend(s.body)
            out.extend(_locate([ast_util.copy_location(x, s) for x in post], s))
        return out

    # ------------------------------------------------- local functions
    def local_functions(self, stmts):
        out = []
        for s in stmts:
            if isinstance(s, gast.FunctionDef):
                if s.decorator_list:
                    self.fail(s, "a decorated nested function")
                self.local_fns[s.name] = s
                continue
            if (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
                    and isinstance(s.value, gast.Lambda)):
                self.local_fns[s.targets[0].id] = s.value
                continue
            for field in ("body", "orelse"):
                if isinstance(s, (gast.If, gast.For, gast.While)) and getattr(s, field, None):
                    setattr(s, field, self.local_functions(getattr(s, field)))
            out.append(s)
        return out

    def check_local_function_values(self, body):
        """A local def or lambda is inlined where it is called; used as a
        value (passed to another function, stored, returned) it has no
        object the compiled code could call: refused by name."""
        if not self.local_fns:
            return
        called = set()
        for s in body:
            for n in ast_util.walk(s):
                if isinstance(n, gast.Call) and isinstance(n.func, gast.Name):
                    called.add(id(n.func))
        for s in body:
            for n in ast_util.walk(s):
                if (isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in self.local_fns
                        and id(n) not in called):
                    self.fail(n, "the local function %s used as a value (passed, stored or returned)" % n.id,
                              "srcgrad inlines local functions where they are called; define %s at module "
                              "level to pass it on" % n.id)

    def inline_call(self, call, target):
        """Statements computing the local function call `call` into `target`."""
        fn = self.local_fns[call.func.id]
        args = fn.args
        params = [a.id for a in args.args]
        if args.vararg or args.kwarg or args.kwonlyargs:
            self.fail(call, "a local function with *args, **kwargs or keyword-only parameters")
        renames = {}
        stored = {n.id for n in ast_util.walk(fn) if isinstance(n, gast.Name)
                  and isinstance(n.ctx, (gast.Store, gast.Param))}
        for n in stored:
            renames[n] = self.namer.fresh("%s_%s" % (call.func.id, n))
        values = {}
        for p, a in zip(params, call.args):
            values[p] = a
        for k in call.keywords:
            if k.arg not in params:
                self.fail(call, "an unknown keyword %r in a call of %s" % (k.arg, call.func.id))
            values[k.arg] = k.value
        defaults = dict(zip(params[len(params) - len(args.defaults):], args.defaults))
        pre = []
        for p in params:
            v = values.get(p, defaults.get(p))
            if v is None:
                self.fail(call, "a call of %s without argument %r" % (call.func.id, p))
            pre.append(ast_util.copy_location(ast_util.assign(renames[p], ast_util.clone(v)), call))
        if isinstance(fn, gast.Lambda):
            body = [ast_util.copy_location(gast.Return(value=ast_util.clone(fn.body)), fn)]
        else:
            body = ast_util.clone(fn.body)
            if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
                body = body[1:]
        for s in body:
            for n in ast_util.walk(s):
                if isinstance(n, gast.Name) and n.id in renames:
                    n.id = renames[n.id]
        # a local function's returns: lowered on its own, then its result is assigned
        sub = _Lowerer.__new__(_Lowerer)
        sub.parsed, sub.namer, sub.local_fns = self.parsed, self.namer, dict(self.local_fns)
        sub.locals = self.locals | set(renames.values())
        sub.aliases = self.aliases
        fake = copy.copy(self.parsed.node)
        fake.body = body
        sub.parsed = copy.copy(self.parsed)
        sub.parsed.node = fake
        if any(isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id == call.func.id
               for n in ast_util.walk(fake)):
            self.fail(call, "a recursive local function (%s)" % call.func.id, "define it at module level")
        lowered = sub.run(top=False).body
        ret = lowered[-1]
        if not isinstance(ret, gast.Return):
            self.fail(call, "a local function without a return value")
        return pre + lowered[:-1] + [ast_util.copy_location(ast_util.assign(target, ret.value), call)]

    # ---------------------------------------------------------- hoisting
    def _hoistable(self, node):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id in self.local_fns:
            return True
        return isinstance(node, (gast.ListComp, gast.GeneratorExp))

    def hoist_block(self, stmts):
        out = []
        for s in stmts:
            for field in ("body", "orelse"):
                if isinstance(s, (gast.If, gast.For, gast.While)) and getattr(s, field, None):
                    setattr(s, field, self.hoist_block(getattr(s, field)))
            pre = []
            roots = []
            if isinstance(s, (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr, gast.Return)):
                roots = [s]
            elif isinstance(s, (gast.If, gast.For)):
                roots = [s.test if isinstance(s, gast.If) else s.iter]
            elif isinstance(s, gast.While):
                if any(self._hoistable(n) for n in ast_util.walk(s.test)):
                    self.fail(s, "a call of a local function in a while condition")
            for root in roots:
                self._hoist(root, pre, s)
            out.extend(pre)
            out.append(s)
        return out

    def _hoist(self, root, pre, stmt):
        class H(gast.NodeTransformer):
            def generic_visit(h, node):
                if isinstance(node, (gast.Lambda, gast.IfExp, gast.BoolOp)) and node is not root:
                    if any(self._hoistable(n) for n in ast_util.walk(node)):
                        self.fail(node, "a local function call or comprehension inside a lambda, "
                                  "conditional expression or and/or")
                    return node
                if not isinstance(node, (gast.ListComp, gast.GeneratorExp)) or node is root:
                    # (a comprehension's element and conditions are hoisted inside its loop)
                    node = super(H, h).generic_visit(node)
                if node is not root and self._hoistable(node):
                    tmp = self.namer.fresh(node.func.id if isinstance(node, gast.Call) else "comp")
                    if isinstance(node, gast.Call):
                        pre.extend(self.inline_call(node, tmp))
                    else:
                        pre.extend(self.comprehension(node, tmp))
                    return ast_util.copy_location(ast_util.name(tmp), node)
                return node
        H().visit(root)
        if isinstance(stmt, gast.Assign) and self._hoistable(stmt.value):
            tmp = self.namer.fresh("t")
            if isinstance(stmt.value, gast.Call):
                pre.extend(self.inline_call(stmt.value, tmp))
            else:
                pre.extend(self.comprehension(stmt.value, tmp))
            stmt.value = ast_util.name(tmp)

    def comprehension(self, comp, target):
        """[elt for t in it if c ...] -> target = []; for ...: if c: target = list_append(...)"""
        if any(g.is_async for g in comp.generators):
            self.fail(comp, "async comprehension")
        renames = {}
        for g in comp.generators:
            for n in ast_util.walk(g.target):
                if isinstance(n, gast.Name):
                    renames.setdefault(n.id, self.namer.fresh(n.id))

        def rename(node):
            node = ast_util.clone(node)
            for n in ast_util.walk(node):
                if isinstance(n, gast.Name) and n.id in renames:
                    n.id = renames[n.id]
            return node
        inner = _q("T = APPEND(T, E)", T=ast_util.name(target), E=rename(comp.elt),
                   APPEND=_helper(containers.list_append, "list_append"))
        for g in reversed(comp.generators):
            for cond in reversed(g.ifs):
                inner = [ast_util.if_(rename(cond), inner, [])]
            inner = [ast_util.for_(rename(g.target), rename(g.iter), inner)]
        out = _q("T = []", T=ast_util.name(target)) + inner
        # local functions called in the element or the conditions: inlined there
        return self.hoist_block(_locate(out, comp))

    # ---------------------------------------------------------- sequences
    def sequences(self, stmts):
        out = []
        for s in stmts:
            if isinstance(s, gast.If):
                s.body = self.sequences(s.body)
                s.orelse = self.sequences(s.orelse)
            elif isinstance(s, gast.While):
                s.body = self.sequences(s.body)
            elif isinstance(s, gast.For):
                s.body = self.sequences(s.body)
                out.extend(self.for_loop(s))
                continue
            out.append(s)
        return out

    def for_loop(self, s):
        it = s.iter
        if _is_range(it) and isinstance(s.target, gast.Name) and not it.keywords:
            return [s]
        if (_call_of(it, "reversed") and len(it.args) == 1 and _is_range(it.args[0])
                and isinstance(s.target, gast.Name) and not it.args[0].keywords and not it.keywords):
            # for i in reversed(range(...)) (generated reverse sweeps): a range with reversed bounds
            r = self.namer.fresh("_reversed")
            pre = _q("R = RANGE[::-1]", R=ast_util.name(r), RANGE=it.args[0])
            s.iter = _qe("range(R.start, R.stop, R.step)", R=ast_util.name(r))
            return _locate(pre, s) + [s]
        i = self.namer.fresh("_i")
        pre, reads, lengths = [], [], []
        self._sequences = []
        index = ast_util.name(i)
        if _call_of(it, "reversed") and len(it.args) == 1 and not it.keywords:
            inner = it.args[0]
            seq = self.namer.fresh("_seq")
            pre += _q("S = list(A)" if _call_of(inner, "zip", "enumerate", "range") else "S = A",
                      S=ast_util.name(seq), A=inner)
            lengths.append(_qe("len(S)", S=ast_util.name(seq)))
            index = _qe("len(S) - 1 - I", S=ast_util.name(seq), I=ast_util.name(i))
            reads.append((s.target, _qe("S[K]", S=ast_util.name(seq), K=index)))
        else:
            self.reads_for(s.target, it, ast_util.name(i), pre, reads, lengths, s)
        count = lengths[0] if len(lengths) == 1 else ast_util.call(ast_util.name("min"), lengths)
        body = _locate([ast_util.assign(t, value) for t, value in reads], s) + s.body
        loop = ast_util.for_(ast_util.name(i, True), ast_util.call(ast_util.name("range"), [count]), body)
        ast_util.copy_location(loop, s)
        if self._sequences and len(self._sequences) == len(lengths) and not _call_of(it, "reversed"):
            loop._sg_over = list(self._sequences)      # for t in seq (zip, enumerate): t = seq[i]
        return _locate(pre, s) + [loop]

    def reads_for(self, target, it, index, pre, reads, lengths, s):
        """What `for target in it` reads at position `index` (zip and
        enumerate taken apart, so each sequence is indexed directly)."""
        if _call_of(it, "zip") and not it.keywords and any(isinstance(a, gast.Starred) for a in it.args):
            # zip(*seqs): the sequences are the elements of seqs
            if len(it.args) != 1:
                self.fail(s, "zip() of a starred argument and other arguments in a for loop")
            if not isinstance(target, gast.Tuple) or any(isinstance(e, gast.Starred) for e in target.elts):
                self.fail(s, "a zip(*...) loop whose target does not unpack every sequence")
            seqs = self.namer.fresh("_zipped")
            n = len(target.elts)
            pre += _q("S = A\nif len(S) != %d:\n    raise ValueError('zip(*...) in a for loop: %%d sequences for "
                      "%d targets' %% len(S))" % (n, n), S=ast_util.name(seqs), A=it.args[0].value)
            for k, t in enumerate(target.elts):
                self.reads_for(t, _qe("S[%d]" % k, S=ast_util.name(seqs)), index, pre, reads, lengths, s)
            return
        if _call_of(it, "zip") and not it.keywords:
            if not isinstance(target, gast.Tuple) or len(target.elts) != len(it.args):
                self.fail(s, "a zip loop whose target does not unpack every sequence")
            for t, a in zip(target.elts, it.args):
                self.reads_for(t, a, index, pre, reads, lengths, s)
            return
        if _call_of(it, "enumerate") and len(it.args) == 1 and [k.arg for k in it.keywords] in ([], ["start"]):
            if not isinstance(target, gast.Tuple) or len(target.elts) != 2:
                self.fail(s, "an enumerate loop whose target is not (index, value)")
            start = it.keywords[0].value if it.keywords else ast_util.const(0)
            reads.append((target.elts[0], _qe("I + START", I=index, START=start)))
            self.reads_for(target.elts[1], it.args[0], index, pre, reads, lengths, s)
            return
        if (isinstance(it, gast.Call) and isinstance(it.func, gast.Attribute) and not it.args
                and it.func.attr in ("items", "keys", "values")):
            seq, keys = self.namer.fresh("_dict"), self.namer.fresh("_keys")
            pre += _q("S = A\nK = list(S)", S=ast_util.name(seq), A=it.func.value, K=ast_util.name(keys))
            lengths.append(_qe("len(K)", K=ast_util.name(keys)))
            key = _qe("K[I]", K=ast_util.name(keys), I=index)
            if it.func.attr == "items":
                if not isinstance(target, gast.Tuple) or len(target.elts) != 2:
                    self.fail(s, "an items() loop whose target is not (key, value)")
                reads.append((target.elts[0], key))
                reads.append((target.elts[1], _qe("S[K]", S=ast_util.name(seq), K=target.elts[0])))
            elif it.func.attr == "keys":
                reads.append((target, key))
            else:
                reads.append((target, _qe("S[KEY]", S=ast_util.name(seq), KEY=key)))
            return
        if isinstance(it, gast.Call) and _call_of(it, "zip", "enumerate", "reversed"):
            self.fail(s, "this form of %s() in a for loop" % it.func.id)
        seq = self.namer.fresh("_seq")
        pre += _q("S = list(A)" if _is_range(it) else "S = A", S=ast_util.name(seq), A=it)
        if isinstance(it, (gast.Name, gast.Attribute)):
            # a name may hold a dict or a set, which the index loop cannot follow
            filename, lineno, col = self.parsed.origin(s)
            check = ast_util.call(_helper(runtime_syntax.check_loop_sequence, "check_loop_sequence"),
                                  [ast_util.name(seq), _helper((filename, lineno, col), "loop_origin")])
            pre.append(ast_util.expr_stmt(check))
        lengths.append(_qe("len(S)", S=ast_util.name(seq)))
        reads.append((target, _qe("S[I]", S=ast_util.name(seq), I=index)))
        self._sequences.append(seq)

    # ---------------------------------------------------------- mutations
    def mutations(self, stmts):
        out = []
        for s in stmts:
            shared = getattr(s, "_sg_view_check", None)
            if shared:
                # a view or a copy, known at run time: NumPy's semantics checked before assigning
                filename, lineno, col = self.parsed.origin(s)
                what = (tuple((c, h) for _, c, h in shared), (filename, lineno, col))    # (messages, origin)
                check = ast_util.call(_helper(runtime_syntax.check_not_shared, "check_not_shared"),
                                      [ast_util.name(_mutated(s)[0]),
                                       ast_util.tuple_([ast_util.name(n) for n, _, _ in shared]),
                                       _helper(what, "views")])
                out.append(ast_util.copy_location(ast_util.expr_stmt(check), s))
                _locate(out[-1:], s)
            self.check_mutators(s)
            if isinstance(s, gast.If):
                s.body = self.mutations(s.body)
                s.orelse = self.mutations(s.orelse)
            elif isinstance(s, (gast.For, gast.While)):
                s.body = self.mutations(s.body)
            elif isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Subscript):
                read = ast_util.clone(s.target)
                ast_util.set_load(read)
                new = ast_util.assign(s.target, ast_util.binop(read, s.op, s.value))
                out.extend(self.mutations([ast_util.copy_location(new, s)]))
                continue
            elif (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], (gast.Tuple, gast.List))
                  and any(isinstance(n, gast.Subscript) for n in s.targets[0].elts)):
                # a[i], a[j] = a[j], a[i]: evaluate the right side first, then assign one by one
                elts = s.targets[0].elts
                value = s.value
                pre = []
                if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(elts):
                    parts = value.elts
                else:
                    tup = self.namer.fresh("_tuple")
                    pre.append(ast_util.assign(tup, value))
                    parts = [ast_util.item(ast_util.name(tup), k) for k in range(len(elts))]
                temps = [self.namer.fresh("_value") for _ in elts]
                pre += [ast_util.assign(t, v) for t, v in zip(temps, parts)]
                pre += [ast_util.assign(e, ast_util.name(t)) for e, t in zip(elts, temps)]
                out.extend(self.mutations(_locate([ast_util.copy_location(x, s) for x in pre], s)))
                continue
            elif isinstance(s, gast.Assign) and any(isinstance(t, gast.Subscript) for t in s.targets):
                if len(s.targets) != 1:
                    self.fail(s, "chained element assignment")
                out.extend(_locate(self.setitem(s.targets[0], s.value, s), s))
                continue
            elif (isinstance(s, gast.Expr) and isinstance(s.value, gast.Call)
                  and isinstance(s.value.func, gast.Attribute) and s.value.func.attr in ("append", "extend")
                  and isinstance(s.value.func.value, gast.Name) and len(s.value.args) == 1
                  and s.value.func.value.id in self.locals):
                xs = s.value.func.value.id
                if xs in self.aliases:
                    self.fail(s, "%s.%s(...) on %s, which another name (%s) refers to (an alias)"
                              % (xs, s.value.func.attr, xs, self.aliases[xs], ),
                              "make a copy: ys = list(xs)")
                fn = containers.list_append if s.value.func.attr == "append" else containers.list_extend
                new = _q("XS = F(XS, V)", XS=ast_util.name(xs), V=s.value.args[0],
                         F=_helper(fn, s.value.func.attr == "append" and "list_append" or "list_extend"))
                out.extend(_locate(new, s))
                continue
            out.append(s)
        return out

    def check_mutators(self, s):
        """A method that mutates a local list, dict or array in place
        (xs.insert, d.update, x.sort(), ...) other than append and extend:
        the value-semantics IR cannot follow it, and ignoring it would give
        a silently wrong derivative, so it is refused by name."""
        exprs = [getattr(s, f, None) for f in ("value", "test", "iter", "target", "targets")]
        for e in exprs:
            for part in (e if isinstance(e, list) else [e]):
                if not isinstance(part, gast.AST):
                    continue
                for n in ast_util.walk(part):
                    if (isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
                            and n.func.attr in _MUTATORS and isinstance(n.func.value, gast.Name)
                            and n.func.value.id in self.locals):
                        self.fail(n, "%s.%s(...), which changes %s in place"
                                  % (n.func.value.id, n.func.attr, n.func.value.id),
                                  "srcgrad follows xs.append, xs.extend and x[i] = v; build a new value "
                                  "instead (xs = [v] + xs, d = {**d, 'k': v}, x = np.sort(x))")

    def setitem(self, target, value, s):
        """`base[i][j] = v` -> t = base[i]; t = setitem(t, j, v); base = setitem(base, i, t)."""
        if isinstance(target.value, gast.Name):
            base = target.value.id
            if base not in self.locals:
                self.fail(s, "assignment to an element of %s, which is not a local variable" % base)
            if base in self.aliases:
                self.fail(s, "element assignment to %s, which another name (%s) refers to (an alias)"
                          % (base, self.aliases[base]), "make a copy: b = a.copy()")
            return _q("X = SET(X, I, V)", X=ast_util.name(base), I=ast_util.slice_to_expr(target.slice),
                      V=value, SET=_helper(containers.setitem, "setitem"))
        if isinstance(target.value, gast.Subscript):
            tmp = self.namer.fresh("_part")
            inner = ast_util.clone(target.value)
            ast_util.set_load(inner)
            out = [ast_util.assign(tmp, inner)]
            out += _q("X = SET(X, I, V)", X=ast_util.name(tmp), I=ast_util.slice_to_expr(target.slice),
                      V=value, SET=_helper(containers.setitem, "setitem"))
            return out + self.setitem(target.value, ast_util.name(tmp), s)
        self.fail(s, "assignment to an attribute's element (obj.attr[i] = ...)")

    # ---------------------------------------------------------- exits
    def exits(self, stmts, loop):
        """Replace break/continue/return (inside `loop`: (brk, cont) flag
        names) by flags; guard what follows them."""
        out = []
        for k, s in enumerate(stmts):
            new, flags = self.exit_stmt(s, loop)
            out.extend(new)
            if flags and k + 1 < len(stmts):
                rest = self.exits(stmts[k + 1:], loop)
                test = " or ".join(sorted(flags))
                guard = ast_util.if_(_qe("not (%s)" % test), rest, [])
                guard.test._sg_condition = True
                out.append(ast_util.copy_location(guard, stmts[k + 1]))
                return out
        return out

    def exit_stmt(self, s, loop):
        """(lowered statements, flags they may set that end the block)."""
        if isinstance(s, gast.Break):
            if loop is None:
                self.fail(s, "break outside a loop")
            return _locate(_q("%s = True" % loop[0]), s), {loop[0]}
        if isinstance(s, gast.Continue):
            return _locate(_q("%s = True" % loop[1]), s), {loop[1]}
        if isinstance(s, gast.Return):
            if self.ret is None:
                return [s], set()
            flag, values = self.ret
            if s.value is None:
                self.fail(s, "return without a value")
            if len(values) > 1:
                new = [ast_util.assign(v, e) for v, e in zip(values, s.value.elts)]
            else:
                new = [ast_util.assign(values[0], s.value)]
            new += _q("%s = True" % flag)
            return _locate(new, s), {flag}
        if isinstance(s, gast.If):
            flags = set()
            if loop is not None:
                if _jumps([s], {gast.Break}):
                    flags.add(loop[0])
                if _jumps([s], {gast.Continue}):
                    flags.add(loop[1])
            if self.ret is not None and _jumps([s], {gast.Return}):
                flags.add(self.ret[0])
            s.body = self.exits(s.body, loop)
            s.orelse = self.exits(s.orelse, loop)
            return [s], flags
        if isinstance(s, (gast.For, gast.While)):
            return self.loop(s)
        return [s], set()

    def loop(self, s):
        has_break = _jumps(s.body, {gast.Break})
        has_cont = _jumps(s.body, {gast.Continue})
        has_ret = self.ret is not None and _jumps(s.body, {gast.Return})
        brk = self.namer.fresh("_break") if has_break else None
        cont = self.namer.fresh("_continue") if has_cont else None
        body = self.exits(s.body, (brk, cont))
        if cont:
            body = _locate(_q("%s = False" % cont), s) + body
        flags = [f for f in (brk, self.ret[0] if has_ret else None) if f]
        pre = _locate(_q("%s = False" % brk), s) if brk else []
        if not flags:
            s.body = body
            return pre + [s], set()
        stop = "not (%s)" % " or ".join(flags)
        if isinstance(s, gast.While):
            test = gast.BoolOp(op=gast.And(), values=[_qe(stop), s.test])
            new = ast_util.copy_location(gast.While(test=test, body=body, orelse=[]), s)
            new.test._sg_condition = True
            return pre + [new], ({self.ret[0]} if has_ret else set())
        # for i in range(...) that can be left early: an index loop as a while loop
        r, k = self.namer.fresh("_range"), self.namer.fresh("_k")
        pre += _locate(_q("R = RANGE\nK = 0", R=ast_util.name(r), RANGE=s.iter, K=ast_util.name(k)), s)
        head = _locate(_q("T = R[K]\nK = K + 1", T=s.target, R=ast_util.name(r), K=ast_util.name(k)), s)
        test = _qe("K < len(R) and %s" % stop, K=ast_util.name(k), R=ast_util.name(r))
        test._sg_condition = True
        new = ast_util.copy_location(gast.While(test=test, body=head + body, orelse=[]), s)
        return pre + [new], ({self.ret[0]} if has_ret else set())


# ------------------------------------------------------------------ views

# a view whatever the array: basic slicing, the transpose, ...
_VIEW_ATTRS = {"T", "mT", "real", "imag"}
_VIEW_CALLS = {"transpose", "swapaxes", "squeeze", "view", "diagonal", "expand_dims", "moveaxis", "rollaxis",
               "asarray", "asanyarray", "atleast_1d", "atleast_2d", "atleast_3d", "flip", "fliplr", "flipud",
               "rot90", "broadcast_to", "real", "imag"}


# builtins whose result holds no array of their arguments
_NO_VIEW_BUILTINS = {"len", "range", "int", "float", "bool", "str", "abs", "round", "isinstance", "print", "hash",
                     "id", "type", "repr", "format", "callable", "hasattr", "divmod", "pow", "complex"}


def _advanced_index(sl):
    """An index that makes NumPy copy (a list display: advanced indexing)."""
    if isinstance(sl, gast.List):
        return True
    return isinstance(sl, gast.Tuple) and any(isinstance(e, gast.List) for e in sl.elts)


def _basic_slicing(sl):
    """An index with a slice, `...` or None: NumPy returns a view."""
    parts = sl.elts if isinstance(sl, gast.Tuple) else [sl]
    return any(isinstance(p, gast.Slice) or (isinstance(p, gast.Constant) and (p.value is None or p.value is Ellipsis))
               for p in parts)


def _view_chain_root(value):
    """{root name: False} for a chain of subscripts, attributes and calls
    rooted at a name (a[None][0], np.expand_dims(a, 0)[0], a.reshape(1, 3).T):
    a view or a copy, checked at run time."""
    while True:
        if isinstance(value, gast.Name):
            return {value.id: False}
        if isinstance(value, (gast.Subscript, gast.Attribute)):
            value = value.value
        elif isinstance(value, gast.Call):
            out = {}
            for a in value.args:
                out.update(_view_chain_root(a))
            if isinstance(value.func, gast.Attribute):
                out.update(_view_chain_root(value.func.value))
            return out
        else:
            return {}


def _view_bases(value):
    """{name: definite} for the names whose array `value` may be a view of
    (NumPy shares the memory): definite for `x` itself, `x[1:]`, `x.T`,
    `np.transpose(x)`, ...; not definite (a view or a copy depending on the
    array, checked at run time) for `x[i]` and the arguments of any other
    call (`x.reshape(...)`, a helper returning `x[1:]`)."""
    if isinstance(value, gast.Name):
        return {value.id: True}
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
        if _advanced_index(value.slice):
            return {}
        return {value.value.id: _basic_slicing(value.slice)}
    if isinstance(value, (gast.Subscript, gast.Attribute)) and not isinstance(value.value, gast.Name):
        if isinstance(value, gast.Subscript) and _advanced_index(value.slice):
            return {}
        return _view_chain_root(value.value)         # a view of a view: checked at run time
    if isinstance(value, gast.Attribute) and value.attr in _VIEW_ATTRS and isinstance(value.value, gast.Name):
        return {value.value.id: True}
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and value.func.attr in _VIEW_CALLS:
        out = {}
        if isinstance(value.func.value, gast.Name):
            out[value.func.value.id] = True              # x.transpose()
        if value.args and isinstance(value.args[0], gast.Name):
            out[value.args[0].id] = True                 # np.transpose(x)
        return out
    if isinstance(value, gast.Call) and not (isinstance(value.func, gast.Name) and value.func.id in _NO_VIEW_BUILTINS):
        # any other call may return a view of an argument (x.reshape(...), a helper returning x[1:]):
        # checked at run time
        out = {a.id: False for a in value.args if isinstance(a, gast.Name)}
        out.update({k.value.id: False for k in value.keywords if isinstance(k.value, gast.Name)})
        if isinstance(value.func, gast.Attribute) and isinstance(value.func.value, gast.Name):
            out[value.func.value.id] = False
        return out
    return {}


def _loads(node):
    return {n.id for n in ast_util.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _subscript_base(t):
    while isinstance(t, gast.Subscript):
        t = t.value
    return t.id if isinstance(t, gast.Name) else None


def _mutated(s):
    """The names `s` assigns elements of (or updates with `x += v`, which
    NumPy does in place for an array)."""
    if not isinstance(s, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
        return []
    if isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name):
        return [s.target.id]
    targets = s.targets if isinstance(s, gast.Assign) else [s.target]
    out = []
    for t in targets:
        for e in (t.elts if isinstance(t, (gast.Tuple, gast.List)) else [t]):
            if isinstance(e, gast.Subscript) and _subscript_base(e) is not None:
                out.append(_subscript_base(e))
    return out


class _ViewCheck:
    """Element assignment and NumPy views: `a = x[::-1]; a[1] = v` changes
    x in NumPy, and `b = x.T; x[0] = v` changes b, but the functional
    `a = setitem(a, 1, v)` changes neither. For an element assignment to
    one of a group of names that may share memory (`_view_bases`, taken
    transitively) while another name of the group is still read afterwards
    (live: a backwards liveness analysis of the structured body, loops to
    their fixpoint): UnsupportedSyntaxError when the other is a view for
    sure; otherwise (`tmp = y[j]` is a copy of a vector's element, a view of
    a matrix's row) the statement gets `_sg_view_check`, the names to test at
    run time (`check_not_shared`; names unbound on some path to the
    statement are not tested).
    Conservative: a name that was a view once counts as one everywhere."""

    def __init__(self, lowerer):
        self.low = lowerer
        self.links = {}         # name -> {other name: (the assignment that links them, definite)}

    def check(self, body):
        self.locals = set(self.low.parsed.params) | ast_util.names_stored(ast_util.module(body))
        for n in ast_util.walk(ast_util.module(body)):
            if isinstance(n, gast.Assign) and len(n.targets) == 1:
                self.collect(n.targets[0], n.value, n)
            elif (isinstance(n, gast.Expr) and isinstance(n.value, gast.Call)
                  and isinstance(n.value.func, gast.Attribute) and n.value.func.attr in ("append", "extend")
                  and isinstance(n.value.func.value, gast.Name)):
                # xs.append(a): xs holds a (an element assignment to a changes xs's element too)
                for a in n.value.args:
                    for base in _held_names(a):
                        self.link(n.value.func.value.id, base, n, False)
        if self.links:
            self.assigned(body, set(self.low.parsed.params))
            self.block(body, set(), True)

    def collect(self, target, value, stmt):
        if isinstance(target, (gast.Tuple, gast.List)):
            if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts):
                for t, v in zip(target.elts, value.elts):
                    self.collect(t, v, stmt)
            else:                   # a, b = x: the rows of x
                for t in target.elts:
                    t = t.value if isinstance(t, gast.Starred) else t
                    if isinstance(t, gast.Name) and isinstance(value, gast.Name):
                        self.link(t.id, value.id, stmt, False)
            return
        if isinstance(target, gast.Name):
            for base, definite in _view_bases(value).items():
                self.link(target.id, base, stmt, definite)
            if isinstance(value, _DISPLAY_NODES):
                for base in _held_names(value):        # zs = [a]: zs holds a
                    self.link(target.id, base, stmt, False)

    def link(self, view, base, stmt, definite):
        if base == view or base not in self.locals or view not in self.locals:
            return
        for a, b in ((view, base), (base, view)):
            old = self.links.setdefault(a, {}).get(b)
            if old is None or (definite and not old[1]):
                self.links[a][b] = (stmt, definite)

    def paths(self, name):
        """{other: True if some path of definite links joins them}."""
        best = {name: True}
        todo = [name]
        while todo:
            a = todo.pop()
            for b, (_, definite) in self.links.get(a, {}).items():
                d = best[a] and definite
                if b not in best or (d and not best[b]):
                    best[b] = d
                    todo.append(b)
        del best[name]
        return best

    # -- which names are assigned on every path to a statement
    def assigned(self, stmts, defined):
        for s in stmts:
            if _mutated(s):
                s._sg_defined = set(defined)
            if isinstance(s, gast.If):
                defined = self.assigned(s.body, set(defined)) & self.assigned(s.orelse, set(defined))
            elif isinstance(s, (gast.For, gast.While)):
                inner = set(defined)
                if isinstance(s, gast.For):
                    inner |= ast_util.names_stored(s.target)
                self.assigned(s.body, inner)
            else:
                defined |= ast_util.names_stored(s)
        return defined

    # -- liveness, backwards
    def block(self, stmts, live, report):
        for s in reversed(stmts):
            live = self.stmt(s, live, report)
        return live

    def stmt(self, s, live, report):
        if isinstance(s, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
            targets = s.targets if isinstance(s, gast.Assign) else [s.target]
            if report:
                for name in _mutated(s):
                    self.mutation(name, live, s)
            kills = set()
            if not isinstance(s, gast.AugAssign):
                for t in targets:
                    kills |= {n.id for n in ast_util.walk(t) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
            uses = _loads(s.value) if s.value is not None else set()
            for t in targets:
                uses |= _loads(t) | ({t.id} if isinstance(s, gast.AugAssign) and isinstance(t, gast.Name) else set())
            uses |= set(_mutated(s))
            return (live - kills) | uses
        if isinstance(s, gast.Return):
            return _loads(s)
        if isinstance(s, gast.If):
            return _loads(s.test) | self.block(s.body, set(live), report) | self.block(s.orelse, set(live), report)
        if isinstance(s, (gast.For, gast.While)):
            head = set(live) | _loads(s.iter if isinstance(s, gast.For) else s.test)
            target = ast_util.names_stored(s.target) if isinstance(s, gast.For) else set()
            while True:
                new = head | (self.block(s.body, set(head), False) - target)
                if new == head:
                    break
                head = new
            if report:
                self.block(s.body, set(head), True)
            return head
        return set(live) | _loads(s)

    def mutation(self, name, live, s):
        # x += v: in place for an array, not for a float (x[i] += v is an element assignment)
        augmented = isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name)
        if name not in self.links or (name in self.low.aliases and not augmented):  # (setitem raises)
            return
        runtime = []
        for other, definite in sorted(self.paths(name).items()):
            if other not in live:
                continue
            if not definite or augmented:
                if other in getattr(s, "_sg_defined", ()):
                    runtime.append((other,) + view_message(name, other, self.links, s))
                continue        # (unbound on some path to here: not checked)
            self.fail(name, other, s)
        if runtime:
            s._sg_view_check = runtime

    def fail(self, name, other, s):
        self.low.fail(s, *view_message(name, other, self.links, s))


def view_message(name, other, links, mutation=None):
    """(construct, hint) of the error for an element assignment (or `+=`)
    to `name` while `other`, which may share its memory, is still used."""
    stmt = links.get(name, {}).get(other, (None,))[0]
    augmented = isinstance(mutation, gast.AugAssign) and isinstance(mutation.target, gast.Name)
    what = ("%s %s= ... (in place for an array)" % (name, _OP_TEXT.get(type(mutation.op), "")) if
            augmented else "element assignment to %s" % name)
    if stmt is not None and (isinstance(stmt, gast.Expr) or isinstance(stmt.value, _DISPLAY_NODES)):
        holder, held = (name, other) if name in _held_in(stmt) else (other, name)
        return ("%s while %s, a list, tuple or dict holding it, is still used (NumPy would change the element "
                "%s holds too, srcgrad changes %s only)" % (what, holder, holder, name),
                "store a copy in the container (%s.copy()), or build a new array instead of writing into %s"
                % (held, name))
    if augmented:
        return ("%s while %s, which may share its memory, is still used (NumPy would change %s too, "
                "srcgrad changes %s only)" % (what, other, other, name),
                "write %s = %s + ... (a new array), or make a copy first" % (name, name))
    if stmt is not None and other in _view_bases(stmt.value) and name in ast_util.names_stored(stmt):
        construct = ("element assignment to %s, which may be a NumPy view of %s (NumPy would change %s too, "
                     "srcgrad changes %s only)" % (name, other, other, name))
        view = name
    else:
        construct = ("element assignment to %s while %s, which may be a NumPy view of it, is still used "
                     "(NumPy would change %s too, srcgrad changes %s only)" % (name, other, other, name))
        view = other
    if stmt is None:        # linked through other names (h = H[t]; hs.append(h); H[t] = ...)
        return construct, ("copy the array where another name or a container takes it (h = H[t].copy(), "
                           "hs.append(h.copy()))")
    text = ast_util.to_source(stmt.value).strip()
    if "_seq" in text or "_zipped" in text:     # an element of a for loop
        text = view
    return construct, "make a copy: %s = %s.copy()" % (view, text)


def _written_params(body, params):
    """{parameter: the statement} for element assignments (`v[i] = ...`,
    `v[i] += ...`) into a parameter never rebound in the function: NumPy
    changes the caller's array, which compiled code does not (checked where
    the function is compiled as a callee)."""
    stored = {}
    for n in ast_util.walk(ast_util.module(body)):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            stored[n.id] = stored.get(n.id, 0) + 1
    out = {}
    for n in ast_util.walk(ast_util.module(body)):
        if isinstance(n, (gast.Assign, gast.AugAssign)):
            for name in _mutated(n):
                if name in params and not stored.get(name) and name not in out and not (
                        isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)):
                    out[name] = n
    return out


_DISPLAY_NODES = (gast.List, gast.Tuple, gast.Set, gast.Dict)
_OP_TEXT = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**", gast.MatMult: "@",
            gast.FloorDiv: "//", gast.Mod: "%"}


def _held_in(stmt):
    """The names a linking statement stores elements into (its container)."""
    if isinstance(stmt, gast.Expr):
        return {stmt.value.func.value.id}
    return ast_util.names_stored(stmt)


def _held_names(value):
    """The names a display holds as elements (nested displays too): `[a, (b, c)]`."""
    if isinstance(value, gast.Name):
        return [value.id]
    if isinstance(value, gast.Dict):
        return [n for v in value.values for n in _held_names(v)]
    if isinstance(value, (gast.List, gast.Tuple, gast.Set)):
        return [n for e in value.elts for n in _held_names(e.value if isinstance(e, gast.Starred) else e)]
    return []


def _drop_deletes(stmts):
    """`del x` frees memory only (the fence lets nothing else through)."""
    out = []
    for s in stmts:
        if isinstance(s, gast.Delete):
            continue
        for field in ("body", "orelse"):
            if isinstance(s, (gast.If, gast.For, gast.While)) and getattr(s, field, None):
                setattr(s, field, _drop_deletes(getattr(s, field)) or [gast.Pass()])
        out.append(s)
    return out


def _call_of(node, *names):
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id in names


def _is_range(node):
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == "range"


def lower(parsed):
    """Lower `parsed.node` in place (see the module docstring)."""
    _Lowerer(parsed).run()
    return parsed
