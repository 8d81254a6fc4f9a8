"""AST helpers. The only module that calls gast node constructors.

Code is generated from quoted Python (`quote`), so that the rest of the
compiler never depends on the constructor signatures of a gast version.
"""
import ast
import collections
import copy
import re

import gast


def quote(src):
    """Parse `src` (statements) and return a list of gast statement nodes."""
    return gast.parse(src).body


def quote_expr(src):
    """Parse `src` (an expression) and return a gast expression node."""
    return gast.parse(src).body[0].value


def name(id_, store=False, ctx=None):
    if ctx is None:
        ctx = gast.Store() if store else gast.Load()
    return gast.Name(id=id_, ctx=ctx, annotation=None, type_comment=None)


def binop(left, op, right):
    """`left op right`; op is a gast operator node, e.g. gast.Add()."""
    return gast.BinOp(left=left, op=op, right=right)


def add(left, right):
    return binop(left, gast.Add(), right)


def item(value, index):
    """`value[index]` for a constant index."""
    return gast.Subscript(value=value, slice=const(index), ctx=gast.Load())


def pass_():
    return gast.Pass()


def delete(names):
    """`del a, b, c`."""
    return gast.Delete(targets=[name(n, ctx=gast.Del()) for n in names])


def unpack(names, value):
    """`a, b = value`, or `a = value[0]` for a single name (value a tuple)."""
    if len(names) == 1:
        return assign(names[0], item(value, 0))
    return assign(tuple_([name(n, True) for n in names], store=True), value)


def const(value):
    return gast.Constant(value=value, kind=None)


def assign(target, value):
    """`target = value`; target is a str or a node (ctx fixed to Store)."""
    if isinstance(target, str):
        target = name(target, store=True)
    else:
        target = set_store(copy.deepcopy(target))
    return gast.Assign(targets=[target], value=value, type_comment=None)


def tuple_(elts, store=False):
    return gast.Tuple(elts=list(elts), ctx=gast.Store() if store else gast.Load())


def call(func, args, keywords=()):
    if isinstance(func, str):
        func = quote_expr(func)
    return gast.Call(func=func, args=list(args), keywords=list(keywords))


def expr_stmt(value):
    return gast.Expr(value=value)


def if_(test, body, orelse):
    return gast.If(test=test, body=list(body) or [gast.Pass()], orelse=list(orelse))


def for_(target, iter_, body):
    return gast.For(target=target, iter=iter_, body=list(body) or [gast.Pass()], orelse=[], type_comment=None)


def return_(value):
    return gast.Return(value=value)


def function_def(fname, params, body, defaults=()):
    args = gast.arguments(
        args=[name(p, store=False) for p in params],
        posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
        defaults=list(defaults),
    )
    for a in args.args:
        a.ctx = gast.Param()
    return gast.FunctionDef(name=fname, args=args, body=list(body) or [gast.Pass()],
                            decorator_list=[], returns=None, type_comment=None, type_params=[])


COMMENT_PREFIX = "#sg-comment# "


def comment(text):
    """A comment line, carried as a string-constant expression and printed as
    `# text` by `to_source`."""
    return gast.Expr(value=gast.Constant(value=COMMENT_PREFIX + text, kind=None))


_COMMENT_LINE = re.compile(r"^(\s*)(\'\'\'|\"\"\"|'|\")" + re.escape(COMMENT_PREFIX) + r"(.*)\2$")


def _print_comments(src):
    out = []
    for line in src.split("\n"):
        m = _COMMENT_LINE.match(line)
        if m:
            line = m.group(1) + "# " + m.group(3).encode().decode("unicode_escape")
        out.append(line)
    return "\n".join(out)


def module(body):
    return gast.Module(body=list(body), type_ignores=[])


def set_store(node):
    if isinstance(node, (gast.Name, gast.Subscript, gast.Attribute)):
        node.ctx = gast.Store()
    elif isinstance(node, (gast.Tuple, gast.List)):
        node.ctx = gast.Store()
        for e in node.elts:
            set_store(e)
    elif isinstance(node, gast.Starred):
        set_store(node.value)
    return node


def set_load(node):
    for n in walk(node):
        if hasattr(n, "ctx") and not isinstance(n.ctx, gast.Param):
            n.ctx = gast.Load()
    return node


class _NegativeConstants(ast.NodeTransformer):
    """-c as `-(c)`: ast.unparse prints a negative number constant without
    parentheses, so Constant(-1.0) ** j would read back as -(1.0 ** j)."""

    def visit_Constant(self, node):
        v = node.value
        if isinstance(v, (int, float)) and not isinstance(v, bool) and (v < 0 or (v == 0 and str(v)[0] == "-")):
            new = ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=-v))
        elif isinstance(v, complex) and (v.real != 0 or str(v.imag)[0] == "-"):
            new = ast.Call(func=ast.Name(id="complex", ctx=ast.Load()),
                           args=[ast.Constant(value=v.real), ast.Constant(value=v.imag)], keywords=[])
        else:
            return node
        for n in ast.walk(new):
            ast.copy_location(n, node)
        return new


def to_ast(node):
    """The standard library's ast for a gast tree (what `compile` takes)."""
    return _NegativeConstants().visit(gast.gast_to_ast(node))


def to_source(node):
    """Unparse a gast node with the standard library's ast.unparse."""
    tree = ast.fix_missing_locations(_NegativeConstants().visit(gast.gast_to_ast(node)))
    return _print_comments(ast.unparse(tree))


def names_loaded(node):
    """The set of Name ids read anywhere in `node`."""
    return {n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def grad_of_names(node):
    """The names used inside the insert_grad_of bodies that lowered `node`
    holds (lower.py keeps each body on its marker, out of the tree)."""
    out = set()
    for n in walk(node):
        block = getattr(n, "_sg_grad_of", None)
        if block is not None:
            out |= {m.id for m in walk(module(block[2])) if isinstance(m, gast.Name)}
            if block[1] is not None:
                out.add(block[1])
    return out


def names_stored(node):
    return {n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def slice_to_expr(node):
    """Turn subscript slice syntax into an ordinary expression:
    `a:b` -> `slice(a, b, None)`, tuples element-wise. Used when an index
    moves into a call argument (the adjoint of x[idx])."""
    node = copy.deepcopy(node)
    if isinstance(node, gast.Slice):
        parts = [node.lower, node.upper, node.step]
        return call(name("slice"), [p if p is not None else const(None) for p in parts])
    if isinstance(node, gast.Tuple):
        return tuple_([slice_to_expr(e) for e in node.elts])
    return node


def copy_location(new, old):
    """Copy line info (and srcgrad's origin annotation) from old to new."""
    if hasattr(old, "lineno"):
        new.lineno = old.lineno
    origin = getattr(old, "_sg_origin", None)
    if origin is not None:
        new._sg_origin = origin
    return new


class _LoadRenamer(gast.NodeTransformer):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id in self.mapping:
            node.id = self.mapping[node.id]
        return node


def substitute_loads(node, mapping):
    """Rename Name loads in place (also inside annotations' bound expressions)."""
    if not mapping:
        return node
    r = _LoadRenamer(mapping)
    r.visit(node)
    for n in walk(node):
        op = getattr(n, "_sg_op", None)
        if op is not None:
            for e in list(op.bindings.values()) + list(op.args) + list(op.keywords.values()):
                r.visit(e)
    return node


def clone(node, annotations=True):
    """A deep copy of the gast tree `node` (a node or a list of them) whose
    annotations (`_sg_*` attributes: resolved objects, rules, origins) are
    shared with the original, not copied; with annotations=False only the
    origins are kept (generated code given to the compiler again)."""
    if type(node) is list:
        return [clone(n, annotations) for n in node]
    if not isinstance(node, _AST):
        return node
    cls = node.__class__
    new = cls.__new__(cls)
    attrs = dict(node.__dict__)
    if not annotations:
        for key in [k for k in attrs if k.startswith("_sg_") and k != "_sg_origin"]:
            del attrs[key]
    for field in cls._fields:
        value = attrs.get(field)
        if type(value) is list:
            attrs[field] = [clone(v, annotations) if isinstance(v, _AST) else v for v in value]
        elif isinstance(value, _AST) and not isinstance(value, _CONTEXT):
            attrs[field] = clone(value, annotations)
    new.__dict__.update(attrs)
    return new


_AST = gast.AST
_CONTEXT = gast.expr_context


def walk(node):
    """Every node of the tree `node`, breadth first (as gast.walk/ast.walk,
    which it replaces for speed: the compiler walks its trees often), without
    the Load/Store context nodes."""
    todo = collections.deque([node])
    popleft, append, extend = todo.popleft, todo.append, todo.extend
    while todo:
        n = popleft()
        for field in n._fields:
            value = getattr(n, field, None)
            if type(value) is list:
                extend([v for v in value if isinstance(v, _AST)])
            elif isinstance(value, _AST) and not isinstance(value, _CONTEXT):
                append(value)
        yield n
