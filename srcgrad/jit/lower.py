"""The lowering of generated derivative code for Numba (`sg.jit`).

srcgrad's generated code is plain Python written for CPython; a few of its
idioms have no Numba typing, and are rewritten here on the standard-library
AST of the linked module (tools/linker.py) before `numba.njit` sees it:

- the reverse sweep's one stack of mixed values (`_stack = []`,
  `push(_stack, x)`, `x = pop(_stack)`) becomes one typed list per saved
  variable (`_stack__x = []`, `_stack__x.append(x)`, `x = _stack__x.pop()`).
  This is sound because the pushes and pops of one function are properly
  nested (LIFO), so the pushes and pops of any one name are nested too, and
  the generated code always pops a value back into the name it pushed;
- `ShapeOf(x)` (a stand-in that keeps only a residual's shape) is `x`
  itself, and `x = ShapeOf(x)` disappears: Numba knows every array's rank
  and dtype at compile time, and a variable cannot change type;
- a variable whose saved values the reverse sweep reads only as shapes
  (every push of it is `push(_stack, ShapeOf(v))`, and it is read only by
  the helpers that take a shape: `_shape_stacks`) is saved as its shape:
  `_stack__v.append(SHAPE_VALUE_NAME(v))`, popped into `v__shape`, and
  those helpers read `v__shape`, which follows every assignment of `v`. A
  tuple of integers costs Numba's list a word where an array costs its
  whole descriptor and a reference count (issue 18: small ops);
- `reversed(range(a, b))` is `range(b - 1, a - 1, -1)`, and
  `reversed(range(a, b, s))` is `range(a + (len(range(a, b, s)) - 1) * s,
  a - s, -s)`; `r[::-1]` of a name assigned `range(...)` once is that
  range from r's own start, step and length;
- `np.concatenate([a, b])` (and np.stack, hstack, vstack of a list
  display) is `np.concatenate((a, b))`: Numba types a tuple of arrays;
- a comprehension's `xs = list_append(xs, v)` into the list it builds
  from `xs = []` is `xs.append(v)` (`_appends_in_place`);
- `np.einsum("subscripts", a, b)` with constant subscripts is
  `EINSUM_NAME("subscripts", (a, b))` (twins.einsum: Numba has none);
- `del` statements disappear (Numba frees what a function no longer uses);
- `np.sum` / `np.max` / `np.min` / `np.mean` / `np.prod` with `axis` or
  `keepdims`, which Numba does not type, call the twins of
  srcgrad/jit/twins.py (`REDUCE_NAME(x, op, axis, keepdims)`);
- `a @ b`, `np.zeros(shape)` and `np.zeros_like(x)` call twins that do
  the same (`MATMUL_NAME(a, b)`, ...), whose machine code is cached;
- `np.stack(xs)` of a name (a list built in a loop) calls twins.stack_list
  (`STACK_LIST_NAME(xs)`: Numba's np.stack takes tuples only);
- in split sweeps (a tape's call under `@sg.function(jit=True)`, and the
  forward and reverse sweeps of every function a gradient calls), a stack
  the forward sweep returns and the reverse sweep unpacks is a tuple of
  Numba typed lists, one per variable, and what is pushed or kept as a
  residual has no None (`_split_escaping`, twins.stack_value: a callee's
  residuals are None where its call's branch did not run). A callee's
  reverse sweep takes its residuals as the tuple its forward sweep
  returned; a tape's, called from Python, as flat parameters.

Last, `_fold_elementwise`: a temporary of an elementwise expression read
once, by a later statement of its block with nothing between that could
change what it reads, is written into that read (`sin = np.sin(m); mul =
0.01 * sin; x = x + mul` is `x = x + 0.01 * np.sin(m)`). Numba fuses an
array expression into one loop only across its own temporaries, never
across named variables (numba/np/ufunc/array_exprs.py), so the ANF of
generated code made an array and a pass over memory per operation; the
folded chain is one loop and one array, computing every entry with the
same operations in the same order.

Anything else that cannot be lowered raises `Unlowerable` with the reason;
`sg.jit` then runs that function in CPython with a PerformanceWarning.
"""
import ast
import copy

from ..syntax.naming import ALIAS_PREFIX

#: NumPy reductions whose axis/keepdims forms are given twins
REDUCTIONS = ("sum", "max", "min", "mean", "prod", "amax", "amin")
#: NumPy joins whose list display of arrays is given to Numba as a tuple
JOINS = ("concatenate", "stack", "hstack", "vstack")
#: the name the lowered module binds the einsum twin to (twins.einsum)
EINSUM_NAME = ALIAS_PREFIX + "einsum"
#: the name the lowered module binds the reduction twin to
REDUCE_NAME = ALIAS_PREFIX + "reduce"     # a name of srcgrad's own in generated code
#: the names the lowered module binds numba.typed.List and twins.stack_value to (split sweeps)
TYPED_LIST_NAME = ALIAS_PREFIX + "typed_list"
STACK_VALUE_NAME = ALIAS_PREFIX + "stack_value"
#: the name the lowered module binds twins.shape_value to (shape stacks)
SHAPE_VALUE_NAME = ALIAS_PREFIX + "shape_value"
#: NumPy ufuncs whose SIMD loops beat the scalar libm calls Numba compiles them to (twins.vector_ufunc)
VECTOR_UFUNCS = ("tanh", "arctan", "sinh", "cosh")
#: the name the lowered module binds twins.vector_ufunc to
VECTOR_NAME = ALIAS_PREFIX + "vector_ufunc"
#: the names the lowered module binds twins.matmul, twins.zeros and twins.zeros_like to: `a @ b`,
#: `np.zeros(shape)` and `np.zeros_like(x)` as Numba compiles them, but in twins, whose machine code is
#: cached on disk (Numba compiles its own implementations again in every process: ~0.5 s for np.dot)
MATMUL_NAME = ALIAS_PREFIX + "matmul"
ZEROS_NAME = ALIAS_PREFIX + "zeros"
ZEROS_LIKE_NAME = ALIAS_PREFIX + "zeros_like"
#: NumPy constructors of one positional argument given cached twins, by the names they are bound to
CONSTRUCTORS = {"zeros": ZEROS_NAME, "zeros_like": ZEROS_LIKE_NAME}
#: the name the lowered module binds twins.stack_list to: `np.stack(xs)` of a list name
STACK_LIST_NAME = ALIAS_PREFIX + "stack_list"


def _int_constant(e):
    """The int `e` stands for (a constant, or minus one), else None."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        inner = _int_constant(e.operand)
        return None if inner is None else -inner
    return e.value if isinstance(e, ast.Constant) and type(e.value) is int else None


def _reversed_range(call):
    """`reversed(call)` for a call `range(...)` of names and int constants,
    as a range: `range(b - 1, a - 1, -1)` for range(a, b);
    `range(a + (len(range(a, b, s)) - 1) * s, a - s, -s)` with a step (from
    its last value down to a; an empty range stays empty: its "last value"
    is a - s, where the reversed range stops). None for other calls."""
    args = call.args
    if call.keywords or not 1 <= len(args) <= 3 \
            or not all(isinstance(a, ast.Name) or _int_constant(a) is not None for a in args):
        return None

    def binop(left, op, right):
        return ast.BinOp(left=left, op=op, right=right)
    rng = ast.Name(id="range", ctx=ast.Load())
    if len(args) < 3:
        start, stop = (ast.Constant(0), args[0]) if len(args) == 1 else args
        return ast.Call(func=rng, args=[binop(stop, ast.Sub(), ast.Constant(1)),
                                        binop(start, ast.Sub(), ast.Constant(1)), ast.Constant(-1)], keywords=[])
    start, _, step = args
    new = copy.deepcopy       # (each use its own nodes)
    count = ast.Call(func=ast.Name(id="len", ctx=ast.Load()), args=[new(call)], keywords=[])
    last = binop(new(start), ast.Add(), binop(binop(count, ast.Sub(), ast.Constant(1)), ast.Mult(), new(step)))
    return ast.Call(func=rng, args=[last, binop(new(start), ast.Sub(), new(step)),
                                    ast.UnaryOp(op=ast.USub(), operand=new(step))], keywords=[])


def _ranges(fdef):
    """{name: its `range(...)` call} for the names of `fdef` assigned once,
    a range."""
    assigned = {}
    for node in ast.walk(fdef):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        assigned.setdefault(n.id, []).append(node)
        elif isinstance(node, (ast.For, ast.AugAssign)):
            for n in ast.walk(node.target):
                if isinstance(n, ast.Name):
                    assigned.setdefault(n.id, []).append(node)
    return {name: nodes[0].value for name, nodes in assigned.items()
            if len(nodes) == 1 and isinstance(nodes[0], ast.Assign) and len(nodes[0].targets) == 1
            and isinstance(nodes[0].targets[0], ast.Name) and isinstance(nodes[0].value, ast.Call)
            and isinstance(nodes[0].value.func, ast.Name) and nodes[0].value.func.id == "range"}


class Unlowerable(Exception):
    """Generated code uses an idiom this lowering cannot give Numba."""


def _stack_name(stack, var):
    return "%s__%s" % (stack, var)


class _Lowering(ast.NodeTransformer):
    """Rewrites one generated FunctionDef in place (see the module doc)."""

    def __init__(self, push, pop, shape_of, numpy_names, split=None, shaped=(), flat=True):
        self.push, self.pop, self.shape_of = push, pop, shape_of
        self.split = split          # None, or "fwd" / "bwd": a split sweep (of a tape's call, or of a callee)
        self.flat = flat            # a split reverse sweep's residuals as flat parameters (called from Python)
        self.numpy_names = numpy_names
        self.stacks = {}            # stack name -> ordered set of the variables pushed on it
        self.popped = {}            # stack name -> names popped from it
        self.shaped = set(shaped)   # variables saved as their shapes (_shape_stacks)
        self.ranges = {}            # names assigned a range once -> the range(...) call (_ranges)

    # -- helpers
    def _is_call_to(self, node, names):
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names

    def _pushed_name(self, arg):
        if self._is_call_to(arg, self.shape_of) and len(arg.args) == 1:
            arg = arg.args[0]
        if not isinstance(arg, ast.Name):
            raise Unlowerable("a value pushed on the stack is an expression (%s), not a variable"
                              % ast.unparse(arg))
        return arg.id

    # -- statements
    def visit_Expr(self, node):
        call = node.value
        if self._is_call_to(call, self.push):
            if len(call.args) != 2 or not isinstance(call.args[0], ast.Name):
                raise Unlowerable("an unusual push: %s" % ast.unparse(node))
            stack, var = call.args[0].id, self._pushed_name(call.args[1])
            self.stacks.setdefault(stack, {})[var] = None
            target = ast.Attribute(value=ast.Name(id=_stack_name(stack, var), ctx=ast.Load()), attr="append",
                                   ctx=ast.Load())
            value = ast.Name(id=var, ctx=ast.Load())
            if var in self.shaped:
                value = ast.Call(func=ast.Name(id=SHAPE_VALUE_NAME, ctx=ast.Load()), args=[value], keywords=[])
            return ast.copy_location(ast.Expr(value=ast.Call(func=target, args=[value], keywords=[])), node)
        self.generic_visit(node)
        return node

    def visit_Assign(self, node):
        value = node.value
        if self._is_call_to(value, self.pop):
            if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name) or len(value.args) != 1 \
                    or not isinstance(value.args[0], ast.Name):
                raise Unlowerable("an unusual pop: %s" % ast.unparse(node))
            stack, var = value.args[0].id, node.targets[0].id
            self.popped.setdefault(stack, set()).add(var)
            call = ast.Call(func=ast.Attribute(value=ast.Name(id=_stack_name(stack, var), ctx=ast.Load()),
                                               attr="pop", ctx=ast.Load()), args=[], keywords=[])
            node.value = call
            if var in self.shaped:
                node.targets = [ast.Name(id=_shape_name(var), ctx=ast.Store())]
            return node
        if self._is_call_to(value, self.shape_of) and len(value.args) == 1 and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name) and isinstance(value.args[0], ast.Name) \
                and node.targets[0].id == value.args[0].id:
            return None                 # x = ShapeOf(x): x itself
        self.generic_visit(node)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and node.targets[0].id in self.shaped \
                and not (isinstance(node.value, ast.Constant) and node.value.value is None):
            return [node, _follow_shape(node.targets[0].id, node)]
        return node

    def visit_Delete(self, node):
        return None

    def visit_For(self, node):
        it = node.iter
        if self._is_call_to(it, ("reversed",)) and len(it.args) == 1 and self._is_call_to(it.args[0], ("range",)):
            found = _reversed_range(it.args[0])
            if found is not None:
                node.iter = found
        self.generic_visit(node)
        return node

    def visit_Subscript(self, node):
        # `r[::-1]` of a name assigned a range once (a user's `reversed(range(n))`, which srcgrad's
        # loop lowering writes as the reversed range's start, stop and step): the reversed range, from
        # r's own start, step and length (the names r was made from may hold other values by then)
        self.generic_visit(node)
        s = node.slice
        if isinstance(node.value, ast.Name) and node.value.id in self.ranges and isinstance(s, ast.Slice) \
                and s.lower is None and s.upper is None and _int_constant(s.step) == -1:
            r = node.value.id
            return ast.copy_location(ast.parse("range(%s.start + (len(%s) - 1) * %s.step, %s.start - %s.step, "
                                               "-%s.step)" % ((r,) * 6), mode="eval").body, node)
        return node

    # -- expressions
    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.MatMult):
            return ast.copy_location(ast.Call(func=ast.Name(id=MATMUL_NAME, ctx=ast.Load()),
                                              args=[node.left, node.right], keywords=[]), node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        if self._is_call_to(node, self.shape_of) and len(node.args) == 1:
            return node.args[0]
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id in self.numpy_names and func.attr == "einsum" and len(node.args) > 1 \
                and not node.keywords and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) and not any(isinstance(a, ast.Starred) for a in node.args):
            # (Numba has no np.einsum: a twin of the subscripts given as a constant)
            return ast.copy_location(ast.Call(func=ast.Name(id=EINSUM_NAME, ctx=ast.Load()), args=[
                node.args[0], ast.Tuple(elts=node.args[1:], ctx=ast.Load())], keywords=[]), node)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id in self.numpy_names and func.attr in VECTOR_UFUNCS and len(node.args) == 1 \
                and not node.keywords and not isinstance(node.args[0], ast.Starred):
            # (NumPy's own loop over a large float array: twins.vector_ufunc)
            return ast.copy_location(ast.Call(func=ast.Name(id=VECTOR_NAME, ctx=ast.Load()),
                                              args=[node.args[0], ast.Constant(func.attr)], keywords=[]), node)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id in self.numpy_names and func.attr in CONSTRUCTORS and len(node.args) == 1 \
                and not node.keywords and not isinstance(node.args[0], ast.Starred):
            return ast.copy_location(ast.Call(func=ast.Name(id=CONSTRUCTORS[func.attr], ctx=ast.Load()),
                                              args=node.args, keywords=[]), node)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id in self.numpy_names and func.attr in JOINS and node.args \
                and isinstance(node.args[0], ast.List):
            # (Numba types np.concatenate / np.stack of a tuple of arrays, not of a list)
            node.args[0] = ast.copy_location(ast.Tuple(elts=node.args[0].elts, ctx=ast.Load()), node.args[0])
            return node
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id in self.numpy_names and func.attr == "stack" and len(node.args) == 1 \
                and not node.keywords and isinstance(node.args[0], ast.Name):
            # (a list built in a loop, `np.stack(hs)`: Numba's np.stack takes tuples only)
            return ast.copy_location(ast.Call(func=ast.Name(id=STACK_LIST_NAME, ctx=ast.Load()),
                                              args=node.args, keywords=[]), node)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id in self.numpy_names and func.attr in REDUCTIONS \
                and (node.keywords or len(node.args) > 1):
            kw = {k.arg: k.value for k in node.keywords}
            if None in kw or set(kw) - {"axis", "keepdims"} or len(node.args) + len(kw) > 3:
                return node
            args = list(node.args)
            axis = args[1] if len(args) > 1 else kw.get("axis", ast.Constant(None))
            keepdims = args[2] if len(args) > 2 else kw.get("keepdims", ast.Constant(False))
            op = {"amax": "max", "amin": "min"}.get(func.attr, func.attr)
            return ast.copy_location(ast.Call(func=ast.Name(id=REDUCE_NAME, ctx=ast.Load()),
                                              args=[args[0], ast.Constant(op), axis, keepdims], keywords=[]),
                                     node)
        return node

    # -- the stacks' definitions
    def finish(self, fdef):
        escaping = _escaping_stacks(fdef, set(self.stacks) | set(self.popped)) if self.split else set()
        for stack, popped in self.popped.items():
            missing = popped - set(self.stacks.get(stack, ()))
            if missing and stack not in escaping:
                raise Unlowerable("values are popped into %s, which nothing pushed under that name"
                                  % ", ".join(sorted(missing)))
        if self.split == "bwd":
            for node in ast.walk(fdef):
                if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
                    raise Unlowerable("the reverse sweep compares a value with `is` (%s); the values its "
                                      "stacks restore may be stand-ins for None" % ast.unparse(node))
        if escaping:
            self._split_escaping(fdef, escaping)
        if self.split == "fwd":
            _residuals_as_values(fdef)
        if self.split == "bwd" and self.flat:
            _residuals_as_parameters(fdef)

        made = set()

        class Defs(ast.NodeTransformer):
            def visit_Assign(inner, node):
                if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                        and node.targets[0].id in self.stacks and isinstance(node.value, ast.List) \
                        and not node.value.elts:
                    stack = node.targets[0].id
                    made.update(_stack_name(stack, v) for v in self.stacks[stack])
                    return [ast.copy_location(ast.Assign(targets=[ast.Name(id=_stack_name(stack, v),
                                                                            ctx=ast.Store())],
                                                         value=ast.List(elts=[], ctx=ast.Load())), node)
                            for v in self.stacks[stack]]
                return node
        Defs().visit(fdef)
        # a stack nothing pushes on (`_stack = []` kept for a `del`): Numba cannot type an empty list
        loads = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}

        class Unused(ast.NodeTransformer):
            def visit_Assign(inner, node):
                if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                        and node.targets[0].id not in loads and isinstance(node.value, ast.List) \
                        and not node.value.elts:
                    return None
                return node
        Unused().visit(fdef)
        _stacks_where_used(fdef, made)
        _fill_empty_bodies(fdef)


    def _split_escaping(self, fdef, escaping):
        """A stack that crosses from the split forward sweep (which returns
        it among its residuals) to the reverse sweep (which unpacks it) is
        the tuple of its per-variable stacks, ordered by variable name so
        that both sides agree. Those stacks are Numba typed lists
        (`TYPED_LIST_NAME()`), which keep their element type when empty and
        pass between compiled functions as they are; what is pushed on them
        goes through `STACK_VALUE_NAME` (twins.stack_value: no None). Where
        the reverse sweep copies the stack it was given (`_stack =
        list(_stack)`, so that a persistent tape can run it again), it
        reads each list from its top down instead of popping a copy."""
        variables = {s: sorted(set(self.stacks.get(s, ())) | self.popped.get(s, set())) for s in escaping}
        for s, vs in variables.items():
            if not vs:
                raise Unlowerable("the stack %s carries no values between the sweeps" % s)
        appends = {_stack_name(s, v) for s, vs in variables.items() for v in vs}
        copied = {n.targets[0].id for n in ast.walk(fdef)
                  if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
                  and n.targets[0].id in escaping and isinstance(n.value, ast.Call)
                  and isinstance(n.value.func, ast.Name) and n.value.func.id == "list"}
        tops = {_stack_name(s, v): _top_name(s, v) for s in copied for v in variables[s]}
        if any(s in self.stacks for s in copied):
            raise Unlowerable("the reverse sweep pushes on the stack it was given (%s)"
                              % ", ".join(sorted(s for s in copied if s in self.stacks)))

        def load(name):
            return ast.Name(id=name, ctx=ast.Load())

        class Split(ast.NodeTransformer):
            def visit_Assign(inner, node):
                target, value = node.targets[0], node.value
                if len(node.targets) == 1 and isinstance(target, ast.Name) and target.id in escaping:
                    stack = target.id
                    if isinstance(value, ast.List) and not value.elts:
                        make = [ast.Call(func=load(TYPED_LIST_NAME), args=[], keywords=[])
                                for _ in variables[stack]]
                    elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
                            and value.func.id == "list" and len(value.args) == 1 \
                            and isinstance(value.args[0], ast.Name) and value.args[0].id == stack:
                        # the reverse sweep's copy: the stacks are read from their tops down instead
                        return [ast.copy_location(ast.Assign(
                            targets=[ast.Name(id=_top_name(stack, v), ctx=ast.Store())],
                            value=ast.Call(func=load("len"), args=[load(_stack_name(stack, v))], keywords=[])),
                            node) for v in variables[stack]]
                    else:
                        raise Unlowerable("an unusual use of the stack %s: %s" % (stack, ast.unparse(node)))
                    return [ast.copy_location(ast.Assign(targets=[ast.Name(id=_stack_name(stack, v),
                                                                            ctx=ast.Store())], value=m), node)
                            for v, m in zip(variables[stack], make)]
                if len(node.targets) == 1 and isinstance(value, ast.Call) and not value.args \
                        and isinstance(value.func, ast.Attribute) and value.func.attr == "pop" \
                        and isinstance(value.func.value, ast.Name) and value.func.value.id in tops:
                    # x = stack.pop() on a stack the reverse sweep was given: read, not popped (the
                    # residuals stay whole for another gradient of a persistent tape)
                    stack_var = value.func.value.id
                    top = tops[stack_var]
                    return [ast.copy_location(ast.AugAssign(target=ast.Name(id=top, ctx=ast.Store()), op=ast.Sub(),
                                                            value=ast.Constant(1)), node),
                            ast.copy_location(ast.Assign(targets=node.targets, value=ast.Subscript(
                                value=load(stack_var), slice=load(top), ctx=ast.Load())), node)]
                inner.generic_visit(node)
                return node

            def visit_Call(inner, node):
                inner.generic_visit(node)
                func = node.func
                if isinstance(func, ast.Attribute) and func.attr == "append" and isinstance(func.value, ast.Name) \
                        and func.value.id in appends and len(node.args) == 1:
                    node.args = [ast.Call(func=load(STACK_VALUE_NAME), args=node.args, keywords=[])]
                return node

            def visit_Name(inner, node):
                if node.id in escaping:
                    ctx = type(node.ctx)
                    return ast.copy_location(ast.Tuple(elts=[ast.Name(id=_stack_name(node.id, v), ctx=ctx())
                                                             for v in variables[node.id]], ctx=ctx()), node)
                return node
        Split().visit(fdef)


def _shape_name(var):
    return "%s__shape" % var


def _follow_shape(var, where):
    """`var__shape = SHAPE_VALUE_NAME(var)`, after an assignment of var."""
    return ast.copy_location(ast.Assign(
        targets=[ast.Name(id=_shape_name(var), ctx=ast.Store())],
        value=ast.Call(func=ast.Name(id=SHAPE_VALUE_NAME, ctx=ast.Load()),
                       args=[ast.Name(id=var, ctx=ast.Load())], keywords=[])), where)


def _shape_stacks(fdef, push, pop, shape_of, readers):
    """The variables of `fdef` whose saved values can be their shapes.

    The code generator saves a residual as `push(_stack, ShapeOf(v))` when
    the reverse sweep reads that value only through the helpers that take
    a shape (codegen._SHAPE_ARGS); a value it reads otherwise is pushed
    whole. A variable qualifies when every push of it is a ShapeOf, it is
    popped back, it is assigned only by plain `v = ...` statements (or is
    a parameter), and every read of it as an argument of a helper in
    `readers` ({name: shape-argument positions}) is in a shape position
    (value_cotangent also reads the dtype: not a reader). Its other reads
    are the forward sweep's, which see `v` itself: the pops go to
    `v__shape`, never to `v`."""
    def call_to(node, names):
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names

    shaped, whole, popped, plain = set(), set(), set(), set()
    other_stores = set()
    for n in ast.walk(fdef):
        if isinstance(n, ast.Expr) and call_to(n.value, push) and len(n.value.args) == 2:
            arg = n.value.args[1]
            if call_to(arg, shape_of) and len(arg.args) == 1 and isinstance(arg.args[0], ast.Name):
                shaped.add(arg.args[0].id)
            elif isinstance(arg, ast.Name):
                whole.add(arg.id)
        elif isinstance(n, ast.Assign):
            if len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                (popped if call_to(n.value, pop) else plain).add(n.targets[0].id)
            else:
                other_stores |= {t.id for target in n.targets for t in ast.walk(target) if isinstance(t, ast.Name)}
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr, ast.comprehension)):
            other_stores |= {t.id for t in ast.walk(n.target) if isinstance(t, ast.Name)}
        elif isinstance(n, ast.withitem) and n.optional_vars is not None:
            other_stores |= {t.id for t in ast.walk(n.optional_vars) if isinstance(t, ast.Name)}
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            other_stores |= set(n.names)
    candidates = (shaped - whole) & popped
    candidates -= other_stores
    candidates -= {a.arg for a in fdef.args.kwonlyargs} | {a.arg for a in (fdef.args.vararg, fdef.args.kwarg) if a}
    for n in ast.walk(fdef):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id not in push:
            positions = readers.get(n.func.id, ())
            for k, a in enumerate(n.args):
                if isinstance(a, ast.Name) and a.id in candidates and k not in positions and n.func.id in readers:
                    candidates.discard(a.id)
            for kw in n.keywords:
                if isinstance(kw.value, ast.Name) and kw.value.id in candidates and n.func.id in readers:
                    candidates.discard(kw.value.id)
    return candidates


class _ReadShapes(ast.NodeTransformer):
    """Shape-position arguments of `readers` that name a shaped variable
    read its `__shape` companion instead."""

    def __init__(self, shaped, readers):
        self.shaped, self.readers = shaped, readers

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in self.readers:
            positions = self.readers[node.func.id]
            node.args = [ast.Name(id=_shape_name(a.id), ctx=ast.Load())
                         if k in positions and isinstance(a, ast.Name) and a.id in self.shaped else a
                         for k, a in enumerate(node.args)]
        return node


def _top_name(stack, var):
    return "%s__%s__top" % (stack, var)


def _escaping_stacks(fdef, stacks):
    """The stacks among `stacks` named anywhere but in push/pop calls (their
    arguments were rewritten) and their own `= []` definitions: returned
    or unpacked as residuals of a split sweep."""
    definitions = set()
    for node in ast.walk(fdef):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List) and not node.value.elts:
            definitions.update(id(t) for t in node.targets)
    return {node.id for node in ast.walk(fdef)
            if isinstance(node, ast.Name) and node.id in stacks and id(node) not in definitions}


def _residuals_as_values(fdef):
    """The split forward sweep returns `(outputs..., residuals)`: each
    variable among the residuals goes through `STACK_VALUE_NAME`, so that
    none is returned as an Optional (a temporary still None when a loop
    ran no step), whose boxed value would not type as the reverse sweep
    was compiled for."""
    for node in ast.walk(fdef):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and node.value.elts \
                and isinstance(node.value.elts[-1], ast.Tuple):
            residuals = node.value.elts[-1]
            residuals.elts = [ast.Call(func=ast.Name(id=STACK_VALUE_NAME, ctx=ast.Load()), args=[e], keywords=[])
                              if isinstance(e, ast.Name) else e for e in residuals.elts]


def _residuals_as_parameters(fdef):
    """The split reverse sweep `def f_bwd(_residuals, *cotangents)` whose
    first statement unpacks `_residuals` into names (nested tuples too)
    becomes `def f_bwd(name_1, ..., name_k, *cotangents)`, the names in
    the unpacking's depth-first order: Numba's dispatcher types flat
    arguments cheaply, a tuple of typed lists at each call not (tens of
    microseconds). The caller flattens the residuals the same way
    (jit/tape.py). Raises Unlowerable when the function does not start so."""
    params = fdef.args.args
    first = fdef.body[0] if fdef.body else None
    if not params or not isinstance(first, ast.Assign) or len(first.targets) != 1 \
            or not isinstance(first.value, ast.Name) or first.value.id != params[0].arg:
        raise Unlowerable("the reverse sweep does not begin by unpacking its residuals")
    names = []

    def flat(target):
        if isinstance(target, ast.Name):
            names.append(target.id)
            return None
        if isinstance(target, ast.Tuple):
            return [flat(e) for e in target.elts]
        raise Unlowerable("the residuals are unpacked into %s" % ast.unparse(target))
    spec = flat(first.targets[0])
    if not isinstance(spec, list) or len(set(names)) != len(names) or params[0].arg in names:
        raise Unlowerable("the residuals are unpacked into repeated names")
    fdef.args.args = [ast.arg(arg=n) for n in names] + params[1:]
    fdef.body = fdef.body[1:] or [ast.Pass()]
    fdef.residual_spec = spec       # (read by sg.jit's entry: flatten_residuals)


def flatten_residuals(residuals, spec, parts=tuple):
    """The residuals a lowered split forward sweep returned, flattened as
    `_residuals_as_parameters` flattened the reverse sweep's unpacking:
    `spec` is that unpacking's structure (a list per tuple, None per name),
    so a tuple that one name receives (a callee's residuals) stays whole.
    `parts(r)` gives a tuple residual's elements (their Numba types' for
    a Numba tuple type: `lambda t: t.types`). Raises ValueError when the
    structure differs."""
    items = parts(residuals)
    if len(items) != len(spec):
        raise ValueError("srcgrad.jit: %d residuals for %d names" % (len(items), len(spec)))
    out = []
    for r, s in zip(items, spec):
        if s is None:
            out.append(r)
        else:
            out.extend(flatten_residuals(r, s, parts))
    return out


def _fill_empty_bodies(tree):
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and not body and field == "body":
                body.append(ast.Pass())


def _stacks_where_used(fdef, stacks):
    """A stack `S = []` of the function's top level that only statements
    under `if c:` use (every mention of S inside top-level `if` statements
    testing the same name c in their bodies, c assigned once) is created
    at the start of the first such body instead: a call that takes the
    other path allocates no list for it (a recursive function's VJP: its
    leaves return before the loop that pushes, and Numba allocates each
    list on the heap). Numba types a name defined on some paths only."""
    body = fdef.body
    assigned = {}
    for n in ast.walk(fdef):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            assigned[n.id] = assigned.get(n.id, 0) + 1
    for stmt in list(body):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id in stacks and isinstance(stmt.value, ast.List) and not stmt.value.elts):
            continue
        name = stmt.targets[0].id
        users = [t for t in body if t is not stmt
                 and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(t))]
        if not users or not all(isinstance(t, ast.If) and isinstance(t.test, ast.Name) for t in users):
            continue
        test = users[0].test.id
        if assigned.get(test) != 1 or any(t.test.id != test for t in users) \
                or any(any(isinstance(n, ast.Name) and n.id == name for e in t.orelse for n in ast.walk(e))
                       for t in users) \
                or body.index(users[0]) < body.index(stmt):
            continue
        body.remove(stmt)
        users[0].body.insert(0, stmt)


def _index_lists_as_arrays(fdef, numpy_names, index_readers):
    """A list of integer constants indexing an array, `X[:, [0, 2]]` (or
    in the index a helper takes: `unindex(g, X, (slice(...), [0, 2]))`),
    written as `np.array([0, 2])`: NumPy reads a list index as that array
    (an advanced index), and Numba takes an array there, not a list."""
    if not numpy_names:
        return

    def ints(e):
        return isinstance(e, ast.List) and e.elts and all(
            isinstance(x, ast.Constant) and type(x.value) is int
            or isinstance(x, ast.UnaryOp) and isinstance(x.op, ast.USub) and isinstance(x.operand, ast.Constant)
            and type(x.operand.value) is int for x in e.elts)

    def as_array(e):
        return ast.copy_location(ast.Call(
            func=ast.Attribute(value=ast.Name(id=numpy_names[0], ctx=ast.Load()), attr="array", ctx=ast.Load()),
            args=[e], keywords=[]), e)

    def rewrite(index):
        if ints(index):
            return as_array(index)
        if isinstance(index, ast.Tuple):
            index.elts = [as_array(e) if ints(e) else e for e in index.elts]
        return index
    for node in ast.walk(fdef):
        if isinstance(node, ast.Subscript):
            node.slice = rewrite(node.slice)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in index_readers:
            k = index_readers[node.func.id]
            if k < len(node.args):
                node.args[k] = rewrite(node.args[k])


def _packs_as_tuples(fdef, numpy_names, pack_readers, appends=()):
    """List literals that only np.array (or `pack_readers`: its tangent,
    array_tangent, and a zero tangent's zero_tangent) reads,
    `R1 = [c, -s]; R = np.array([R1, R2])`, written as tuples: NumPy
    builds the same array from either, and Numba builds it from tuples
    ~10x faster (no list on the heap, no generic iteration: a rotation
    matrix per loop step). A name qualifies when one assignment binds it
    to a list literal and every read of it is an entry of such a call's
    argument (the argument itself, or an entry of a list or tuple literal
    that is); the literal arguments are rewritten with it. An argument
    holding a name that may be a list and does not qualify (bound to
    another list, a list_append result, a comprehension) is left whole,
    and so are the names in it: one call sees lists or tuples, not both."""
    def reader(call):
        f = call.func
        if isinstance(f, ast.Attribute) and f.attr in ("array", "asarray") and isinstance(f.value, ast.Name) \
                and f.value.id in numpy_names:
            return 1
        if isinstance(f, ast.Name):
            return pack_readers.get(f.id, 0)
        return 0

    def literal(e):
        return isinstance(e, (ast.List, ast.Tuple)) and not any(isinstance(x, ast.Starred) for x in e.elts)

    trees = []          # per argument of a reader: (its literals, the names that are entries of them or it)
    for call in ast.walk(fdef):
        if isinstance(call, ast.Call) and reader(call):
            for arg in call.args[:reader(call)]:
                literals, names, todo = [], [], [arg]
                while todo:
                    e = todo.pop()
                    if literal(e):
                        literals.append(e)
                        todo.extend(e.elts)
                    elif isinstance(e, ast.Name):
                        names.append(e)
                trees.append((literals, names))
    read_in_pack = {id(n) for _, names in trees for n in names}
    bound, loads_ok, stores, maybe_list = {}, {}, {}, set()
    joins = []          # (a name bound to `a + b` or `a * b`: a list when an operand is one, `hs + [h]`)
    for n in ast.walk(fdef):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    bound.setdefault(t.id, []).append(n)
                    v = n.value
                    if isinstance(v, (ast.List, ast.ListComp)) or isinstance(v, ast.Call) \
                            and isinstance(v.func, ast.Name) and (v.func.id in appends or v.func.id == "list"):
                        maybe_list.add(t.id)
                    elif isinstance(v, ast.BinOp) and isinstance(v.op, (ast.Add, ast.Mult)):
                        joins.append((t.id, (v.left, v.right)))
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Load):
                loads_ok[n.id] = loads_ok.get(n.id, True) and id(n) in read_in_pack
            else:
                stores[n.id] = stores.get(n.id, 0) + 1
    args = {a.arg for a in fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs}
    grown = True
    while grown:
        grown = False
        for name, operands in joins:
            if name not in maybe_list and any(
                    isinstance(e, (ast.List, ast.ListComp)) or isinstance(e, ast.Name) and (e.id in maybe_list
                                                                                          or e.id in args)
                    for e in operands):
                maybe_list.add(name)
                grown = True
    chosen = {name for name in maybe_list
              if len(bound[name]) == 1 and stores.get(name) == 1 and loads_ok.get(name) and name not in args
              and isinstance(bound[name][0].value, ast.List) and literal(bound[name][0].value)}
    kept = set()        # (the trees left whole)
    changed = True
    while changed:
        changed = False
        for k, (_, names) in enumerate(trees):
            ids = {n.id for n in names}
            if k not in kept and ids & (maybe_list | args) - chosen:
                kept.add(k)
                chosen -= ids
                changed = True
    for name in chosen:
        node = bound[name][0]
        node.value = ast.copy_location(ast.Tuple(elts=node.value.elts, ctx=ast.Load()), node.value)
    for k, (literals, _) in enumerate(trees):
        if k not in kept:
            for e in literals:
                if isinstance(e, ast.List):
                    e.__class__ = ast.Tuple


def _collapse_append_copies(fdef, appends):
    """`t = APPEND(xs, v)` followed, later in the same block, by `xs = t`
    (forward-mode code names each result, then copies it: a value's
    append and its tangent's interleave) becomes `xs = APPEND(xs, v)`
    where `t` is neither assigned nor read anywhere else and the
    statements between mention neither `xs` nor `t`: the form
    _appends_in_place rewrites."""
    counts = {}
    for n in ast.walk(fdef):
        if isinstance(n, ast.Name):
            counts[n.id] = counts.get(n.id, 0) + 1

    def mentions(stmt, names):
        return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(stmt))
    for node in ast.walk(fdef):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for k, first in enumerate(block):
                if not (isinstance(first, ast.Assign) and len(first.targets) == 1
                        and isinstance(first.targets[0], ast.Name) and isinstance(first.value, ast.Call)
                        and isinstance(first.value.func, ast.Name) and first.value.func.id in appends
                        and len(first.value.args) == 2 and isinstance(first.value.args[0], ast.Name)
                        and counts.get(first.targets[0].id) == 2):
                    continue
                t, xs = first.targets[0].id, first.value.args[0].id
                for j in range(k + 1, len(block)):
                    second = block[j]
                    if (isinstance(second, ast.Assign) and len(second.targets) == 1
                            and isinstance(second.targets[0], ast.Name) and second.targets[0].id == xs
                            and isinstance(second.value, ast.Name) and second.value.id == t):
                        first.targets = [ast.Name(id=xs, ctx=ast.Store())]
                        del block[j]
                        break
                    if mentions(second, (t, xs)):
                        break


def _appends_in_place(fdef, appends):
    """`xs = APPEND(xs, v)` (srcgrad's list_append: a new list, `xs`
    followed by `v`; `appends` the names bound to it) becomes
    `xs.append(v)` where no other value can hold the list it extends: a
    comprehension's result, built by a loop from `xs = []`. Numba types
    the empty list only from appends to it. Rewritten when the function
    assigns `xs` only by one `xs = []` and by those appends, all inside one
    `for` loop that follows that assignment in the same block, and reads
    `xs` neither between the two nor in the loop other than as what it
    extends: a later read (an alias, `hidden = xs`) sees the finished
    list, and a new pass through the block starts a new one."""
    if not appends:
        return
    _collapse_append_copies(fdef, appends)

    def is_append(node, var):
        return isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
            and node.targets[0].id == var and isinstance(node.value, ast.Call) \
            and isinstance(node.value.func, ast.Name) and node.value.func.id in appends \
            and len(node.value.args) == 2 and not node.value.keywords \
            and isinstance(node.value.args[0], ast.Name) and node.value.args[0].id == var

    stores, rewrite = {}, {}
    for n in ast.walk(fdef):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            stores.setdefault(n.id, []).append(n)
    for block in [getattr(n, f) for n in ast.walk(fdef) for f in ("body", "orelse", "finalbody")
                  if isinstance(getattr(n, f, None), list)]:
        for i, start in enumerate(block):
            if not (isinstance(start, ast.Assign) and len(start.targets) == 1
                    and isinstance(start.targets[0], ast.Name) and isinstance(start.value, ast.List)
                    and not start.value.elts):
                continue
            var = start.targets[0].id
            loop = next((k for k in range(i + 1, len(block)) if isinstance(block[k], ast.For)
                         and any(is_append(n, var) for n in ast.walk(block[k]))), None)
            if loop is None:
                continue
            found = [n for n in ast.walk(block[loop]) if is_append(n, var)]
            extended = {id(n.value.args[0]) for n in found}
            if len(stores.get(var, ())) != 1 + len(found):
                continue
            # (reading an element, `xs[k]`, or the length holds no alias of the list: allowed)
            elements = {id(n.value) for stmt in block[i + 1:loop + 1] for n in ast.walk(stmt)
                        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load)}
            elements |= {id(n.args[0]) for stmt in block[i + 1:loop + 1] for n in ast.walk(stmt)
                         if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len"
                         and len(n.args) == 1}
            between = [n for stmt in block[i + 1:loop + 1] for n in ast.walk(stmt)
                       if isinstance(n, ast.Name) and n.id == var and isinstance(n.ctx, ast.Load)
                       and id(n) not in extended and id(n) not in elements]
            if between:
                continue
            rewrite.update((id(n), var) for n in found)

    class InPlace(ast.NodeTransformer):
        def visit_Assign(self, node):
            var = rewrite.get(id(node))
            if var is None:
                return node
            return ast.copy_location(ast.Expr(value=ast.Call(
                func=ast.Attribute(value=ast.Name(id=var, ctx=ast.Load()), attr="append", ctx=ast.Load()),
                args=[node.value.args[1]], keywords=[])), node)
    if rewrite:
        InPlace().visit(fdef)


def lower_function(fdef, push, pop, shape_of, numpy_names=("np", "numpy"), split=None, shape_readers=None,
                   list_append=(), flat=True, pack_readers=None, index_readers=None):
    """Lower one generated function for Numba, in place.

    Args:
      fdef: an `ast.FunctionDef` (standard-library AST) of generated code.
      push, pop, shape_of: the sets of names that mean srcgrad's runtime
        `push`, `pop` and `ShapeOf` in its module.
      numpy_names: names that mean the numpy module there.
      split: None for a function run whole (sg.jit's gradient), "fwd" or
        "bwd" for the split forward / reverse sweep of a tape's call or of
        a called function, whose stacks and residuals pass from one to the
        other.
      shape_readers: {name: the positions of its arguments it reads only
        the shape of} for the helpers whose twins take a shape tuple there
        (unbroadcast, unreduce, reduction_size); None: no shape stacks.
      list_append: the names that mean srcgrad's list_append
        (`_appends_in_place`).
      flat: for a split reverse sweep, take the residuals as flat
        parameters (`_residuals_as_parameters`: one called from Python);
        False for a callee's, which compiled code calls with the tuple its
        forward sweep returned.
      pack_readers: {name: n} for srcgrad's helpers that, as np.array,
        read only the entries of their first n arguments (array_tangent,
        zero_tangent: `_packs_as_tuples`).
      index_readers: {name: position} for srcgrad's helpers that take an
        index at that argument position (unindex's third, value_cotangent's
        second...: `_index_lists_as_arrays`).

    Returns:
      `fdef`, rewritten.

    Raises:
      Unlowerable: an idiom the lowering cannot give Numba (the message
        says which).
    """
    _appends_in_place(fdef, set(list_append))
    _packs_as_tuples(fdef, set(numpy_names), dict(pack_readers or {}), set(list_append))
    _index_lists_as_arrays(fdef, sorted(numpy_names), dict(index_readers or {}))
    readers = dict(shape_readers or {})
    shaped = _shape_stacks(fdef, set(push), set(pop), set(shape_of), readers) \
        if readers and split is None else set()
    if shaped:
        _ReadShapes(shaped, readers).visit(fdef)
    lowering = _Lowering(set(push), set(pop), set(shape_of), set(numpy_names), split, shaped, flat)
    lowering.ranges = _ranges(fdef)
    lowering.visit(fdef)
    params = [a.arg for a in fdef.args.posonlyargs + fdef.args.args if a.arg in shaped]
    fdef.body[:0] = [_follow_shape(p, fdef) for p in params]
    lowering.finish(fdef)
    _fold_elementwise(fdef, set(numpy_names))
    ast.fix_missing_locations(fdef)
    return fdef


#: the operators of elementwise expressions Numba fuses (numba/np/npyimpl.py's array operators)
_ELEMENTWISE_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.FloorDiv, ast.Mod)
_ELEMENTWISE_UNARY = (ast.USub, ast.UAdd)
#: list methods a statement between a temporary and its read may call (the stacks' append and pop)
_LIST_METHODS = ("append", "pop")


def _np_ufunc(node, numpy_names):
    """Is `node` a call `np.f(a, ...)` of a NumPy ufunc with its
    positional operands only (an elementwise function without side
    effects)?"""
    import numpy as np
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id in numpy_names):
        return False
    f = getattr(np, node.func.attr, None)
    return isinstance(f, np.ufunc) and not node.keywords and len(node.args) == f.nin \
        and not any(isinstance(a, ast.Starred) for a in node.args)


def _elementwise(node, numpy_names):
    """Is the expression `node` made only of names, constants,
    arithmetic operators and NumPy ufunc calls (pure, and an array
    expression Numba can fuse)?"""
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, _ELEMENTWISE_OPS) and _elementwise(node.left, numpy_names) \
            and _elementwise(node.right, numpy_names)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, _ELEMENTWISE_UNARY) and _elementwise(node.operand, numpy_names)
    if _np_ufunc(node, numpy_names):
        return all(_elementwise(a, numpy_names) for a in node.args)
    return False


def _reads(node):
    """The names `node` loads."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _harmless(stmt, names, numpy_names):
    """Can `stmt`, between a temporary's assignment and its read, run
    without changing what the temporary's expression reads (`names`)? Yes
    for an assignment to other plain names of a pure expression or of a
    stack's pop, and for a stack's append, on a list the expression does
    not read (np.sin(xs) of a list xs changes with it); no for anything
    that may write into an array (a call of anything else, an element
    assignment, `+=`)."""
    if isinstance(stmt, ast.Expr):
        call = stmt.value
        return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
            and call.func.attr == "append" and isinstance(call.func.value, ast.Name) \
            and call.func.value.id not in names \
            and len(call.args) == 1 and not call.keywords and _elementwise(call.args[0], numpy_names)
    if not isinstance(stmt, ast.Assign) or not all(isinstance(t, ast.Name) for t in stmt.targets):
        return False
    if any(t.id in names for t in stmt.targets):
        return False
    value = stmt.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "pop" \
            and isinstance(value.func.value, ast.Name) and not value.args and not value.keywords:
        return value.func.value.id not in names
    return _elementwise(value, numpy_names)


def _read_safely(stmt, name, numpy_names):
    """Does `stmt` read `name` once, in an expression whose evaluation up
    to that read runs nothing but pure operations (so the folded
    expression, evaluated there, sees what it saw at its assignment)? Its
    value: an elementwise expression, or one call (of anything) whose
    arguments are elementwise expressions: they are all evaluated before
    the call runs."""
    if not isinstance(stmt, (ast.Assign, ast.Expr, ast.Return)) or stmt.value is None:
        return False
    if isinstance(stmt, ast.Assign) and any(name in _reads(t) or
                                            (isinstance(t, ast.Name) and t.id == name) for t in stmt.targets):
        return False
    value = stmt.value
    if _elementwise(value, numpy_names):
        return True
    return isinstance(value, ast.Call) and not value.keywords \
        and all(_elementwise(a, numpy_names) for a in value.args) and name not in _reads(value.func)


class _Substitute(ast.NodeTransformer):
    """Replaces the load of one name by an expression."""

    def __init__(self, name, expr):
        self.name, self.expr = name, expr

    def visit_Name(self, node):
        if node.id == self.name and isinstance(node.ctx, ast.Load):
            return self.expr
        return node


def _fold_elementwise(fdef, numpy_names):
    """Write each temporary of an elementwise expression that one later
    statement of its block reads, once, into that read (the module doc):
    `t = E` is folded when the whole function stores `t` only there and
    loads it only once, in a simple statement of the same block
    (`_read_safely`), and every statement between is `_harmless` to E."""
    stores, loads = {}, {}
    for n in ast.walk(fdef):
        if isinstance(n, ast.Name):
            counts = loads if isinstance(n.ctx, ast.Load) else stores
            counts[n.id] = counts.get(n.id, 0) + 1
    params = {a.arg for a in fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs}

    def fold(body):
        i = 0
        while i < len(body):
            stmt = body[i]
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    fold(inner)
            for handler in getattr(stmt, "handlers", ()):
                fold(handler.body)
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                name = stmt.targets[0].id
                if stores.get(name) == 1 and loads.get(name) == 1 and name not in params \
                        and _elementwise(stmt.value, numpy_names) and not isinstance(stmt.value, ast.Name):
                    names = _reads(stmt.value)
                    for j in range(i + 1, len(body)):
                        if name in _reads(body[j]):
                            if _read_safely(body[j], name, numpy_names):
                                _Substitute(name, stmt.value).visit(body[j])
                                del body[i]
                                stores[name] = loads[name] = 0
                                i -= 1
                            break
                        if not _harmless(body[j], names, numpy_names):
                            break
            i += 1

    fold(fdef.body)
    return fdef
