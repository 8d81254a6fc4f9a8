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
- `reversed(range(a, b))` is `range(b - 1, a - 1, -1)`;
- `del` statements disappear (Numba frees what a function no longer uses);
- `np.sum` / `np.max` / `np.min` / `np.mean` / `np.prod` with `axis` or
  `keepdims`, which Numba does not type, call the twins of
  srcgrad/jit/twins.py (`REDUCE_NAME(x, op, axis, keepdims)`).

Anything else that cannot be lowered raises `Unlowerable` with the reason;
`sg.jit` then runs that function in CPython with a PerformanceWarning.
"""
import ast

from ..syntax.naming import ALIAS_PREFIX

#: NumPy reductions whose axis/keepdims forms are given twins
REDUCTIONS = ("sum", "max", "min", "mean", "prod", "amax", "amin")
#: the name the lowered module binds the reduction twin to
REDUCE_NAME = ALIAS_PREFIX + "reduce"     # a name of srcgrad's own in generated code


class Unlowerable(Exception):
    """Generated code uses an idiom this lowering cannot give Numba."""


def _stack_name(stack, var):
    return "%s__%s" % (stack, var)


class _Lowering(ast.NodeTransformer):
    """Rewrites one generated FunctionDef in place (see the module doc)."""

    def __init__(self, push, pop, shape_of, numpy_names):
        self.push, self.pop, self.shape_of = push, pop, shape_of
        self.numpy_names = numpy_names
        self.stacks = {}            # stack name -> ordered set of the variables pushed on it
        self.popped = {}            # stack name -> names popped from it

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
            return ast.copy_location(ast.Expr(value=ast.Call(func=target, args=[ast.Name(id=var, ctx=ast.Load())],
                                                             keywords=[])), node)
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
            return node
        if self._is_call_to(value, self.shape_of) and len(value.args) == 1 and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name) and isinstance(value.args[0], ast.Name) \
                and node.targets[0].id == value.args[0].id:
            return None                 # x = ShapeOf(x): x itself
        self.generic_visit(node)
        return node

    def visit_Delete(self, node):
        return None

    def visit_For(self, node):
        it = node.iter
        if self._is_call_to(it, ("reversed",)) and len(it.args) == 1 and self._is_call_to(it.args[0], ("range",)) \
                and not it.args[0].keywords and len(it.args[0].args) in (1, 2):
            bounds = it.args[0].args
            start, stop = (ast.Constant(0), bounds[0]) if len(bounds) == 1 else bounds
            node.iter = ast.Call(func=ast.Name(id="range", ctx=ast.Load()), args=[
                ast.BinOp(left=stop, op=ast.Sub(), right=ast.Constant(1)),
                ast.BinOp(left=start, op=ast.Sub(), right=ast.Constant(1)),
                ast.Constant(-1)], keywords=[])
        self.generic_visit(node)
        return node

    # -- expressions
    def visit_Call(self, node):
        self.generic_visit(node)
        if self._is_call_to(node, self.shape_of) and len(node.args) == 1:
            return node.args[0]
        func = node.func
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
        for stack, popped in self.popped.items():
            missing = popped - set(self.stacks.get(stack, ()))
            if missing:
                raise Unlowerable("values are popped into %s, which nothing pushed under that name"
                                  % ", ".join(sorted(missing)))

        class Defs(ast.NodeTransformer):
            def visit_Assign(inner, node):
                if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                        and node.targets[0].id in self.stacks and isinstance(node.value, ast.List) \
                        and not node.value.elts:
                    stack = node.targets[0].id
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
        _fill_empty_bodies(fdef)


def _fill_empty_bodies(tree):
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and not body and field == "body":
                body.append(ast.Pass())


def lower_function(fdef, push, pop, shape_of, numpy_names=("np", "numpy")):
    """Lower one generated function for Numba, in place.

    Args:
      fdef: an `ast.FunctionDef` (standard-library AST) of generated code.
      push, pop, shape_of: the sets of names that mean srcgrad's runtime
        `push`, `pop` and `ShapeOf` in its module.
      numpy_names: names that mean the numpy module there.

    Returns:
      `fdef`, rewritten.

    Raises:
      Unlowerable: an idiom the lowering cannot give Numba (the message
        says which).
    """
    lowering = _Lowering(set(push), set(pop), set(shape_of), set(numpy_names))
    lowering.visit(fdef)
    lowering.finish(fdef)
    ast.fix_missing_locations(fdef)
    return fdef
