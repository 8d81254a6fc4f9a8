"""AST helpers. The only module that calls gast node constructors.

Code is generated from quoted Python (`quote`), so that the rest of the
compiler never depends on the constructor signatures of a gast version.
"""
import ast
import inspect
import re
import textwrap

import gast

from .anno import ATTRIBUTES, Anno


def parse(src):
    """The gast Module of the source text `src` (as gast.parse, in one pass
    over the standard library's tree: see from_ast)."""
    return from_ast(ast.parse(src))


def _indent(line):
    return len(line) - len(line.lstrip())


def _block_by_indentation(lines):
    """The lines of the definition starting at lines[0] (decorators, then
    `def` or `class` at lines[0]'s indentation, then the lines indented
    deeper; trailing blank and comment lines dropped), or None."""
    base = _indent(lines[0])
    k = 0
    while not (_indent(lines[k]) == base and lines[k].lstrip().startswith(("def ", "async def ", "class "))):
        k += 1
        if k == len(lines):
            return None
    end = k + 1
    for j in range(k + 1, len(lines)):
        text = lines[j].strip()
        if text and not text.startswith("#"):
            if _indent(lines[j]) <= base:
                break
            end = j + 1
    return lines[:end]


def parse_definition(lines):
    """(gast Module, its lines) of the function or class definition that
    starts at lines[0] (its decorators first), dedented: what
    inspect.getblock then gast.parse give, without tokenizing. The block
    is read from the indentation; a definition that does not parse so (a
    header or a string or bracket spanning a line no deeper than the
    `def`) is read by inspect.getblock. Raises SyntaxError."""
    block = _block_by_indentation(lines)
    if block is not None:
        try:
            return parse(textwrap.dedent("".join(block))), block
        except SyntaxError:
            pass
    block = inspect.getblock(lines)
    return parse(textwrap.dedent("".join(block))), block


_QUOTED = {}


def quote(src):
    """Parse `src` (statements) and return a list of gast statement nodes
    (fresh nodes each time; the parse is cached)."""
    found = _QUOTED.get(src)
    if found is None:
        found = _QUOTED[src] = parse(src).body
    return clone(found)


def quote_expr(src):
    """Parse `src` (an expression) and return a gast expression node."""
    return quote(src)[0].value


_GAST_CLASSES = {}
_FROM_CONTEXT = {ast.Load: gast.Load, ast.Store: gast.Store, ast.Del: gast.Del}


def _from_located(new, node):
    d = node.__dict__
    for a in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
        v = d.get(a)
        if v is not None:
            setattr(new, a, v)
    return new


_NAME = gast.Name
_FROM_PLANS = {}     # ast class -> (gast class, its fields), or (None, None) for the cases from_ast spells out
_MISSING = object()


def _from_plan(cls):
    if cls in _FROM_CONTEXT or cls in (ast.arg, ast.ExceptHandler):
        plan = (None, None)
    else:
        target = _GAST_CLASSES.get(cls)
        if target is None:
            target = _GAST_CLASSES[cls] = getattr(gast, cls.__name__)
        plan = (target, target._fields)
    _FROM_PLANS[cls] = plan
    return plan


def from_ast(node):
    """The gast tree of a standard library ast tree (Python >= 3.10): the
    same node types field by field, except parameters (ast.arg -> a Name
    in the Param context), Names (with annotation and type_comment), an
    except clause's name (a Name), and type_params (empty lists before
    Python 3.12). Replaces gast.ast_to_gast, whose generic visitor was a
    large part of parsing."""
    if type(node) is list:
        return [from_ast(n) for n in node]
    if not isinstance(node, ast.AST):
        return node
    return _from(node)


def _from(node):
    """from_ast of the ast node `node`."""
    cls = node.__class__
    d = node.__dict__
    if cls is _STD_NAME:
        context = _FROM_CONTEXT[d["ctx"].__class__]
        new = _NAME.__new__(_NAME)
        attrs = new.__dict__
        attrs["id"] = d["id"]
        attrs["ctx"] = context.__new__(context)
        attrs["annotation"] = None
        attrs["type_comment"] = None
    else:
        target, fields = _FROM_PLANS.get(cls) or _from_plan(cls)
        if target is None:
            return _from_special(node, cls)
        new = target.__new__(target)
        attrs = new.__dict__
        for f in fields:
            v = d.get(f, _MISSING)
            if v.__class__ is list:
                v = [_from(x) if isinstance(x, _STD_AST) else x for x in v]
            elif isinstance(v, _STD_AST):
                v = _from(v)
            elif v is _MISSING:
                v = [] if f == "type_params" else None
            attrs[f] = v
    for a in _LOCATION:
        v = d.get(a)
        if v is not None:
            attrs[a] = v
    return new


_STD_AST, _STD_NAME = ast.AST, ast.Name


def _from_special(node, cls):
    """from_ast of a context, a parameter or an except clause."""
    context = _FROM_CONTEXT.get(cls)
    if context is not None:
        return context.__new__(context)       # (gast's constructor sets nothing without arguments)
    if cls is ast.arg:
        return _from_located(gast.Name(id=node.arg, ctx=gast.Param(), annotation=from_ast(node.annotation),
                                       type_comment=node.type_comment), node)
    target = _GAST_CLASSES.get(cls)
    if target is None:
        target = _GAST_CLASSES[cls] = getattr(gast, cls.__name__)
    d = node.__dict__
    fields = {}
    for f in target._fields:
        if f in d:
            fields[f] = from_ast(d[f])
        elif f == "type_params":
            fields[f] = []
        else:
            fields[f] = None
    if cls is ast.ExceptHandler and node.name is not None:
        fields["name"] = gast.Name(id=node.name, ctx=gast.Store(), annotation=None, type_comment=None)
    return _from_located(target(**fields), node)


def name(id_, store=False, ctx=None):
    """A Name `id_` (Load, or Store with store=True, or the context `ctx`),
    built without gast's Python constructor (the compiler makes thousands)."""
    if ctx is None:
        ctx = _STORE.__new__(_STORE) if store else _LOAD.__new__(_LOAD)
    new = _NAME.__new__(_NAME)
    d = new.__dict__
    d["id"] = id_
    d["ctx"] = ctx
    d["annotation"] = None
    d["type_comment"] = None
    return new


_LOAD, _STORE = gast.Load, gast.Store


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
    """A Constant `value`."""
    new = _CONSTANT.__new__(_CONSTANT)
    d = new.__dict__
    d["value"] = value
    d["kind"] = None
    return new


_CONSTANT = gast.Constant


def assign(target, value):
    """`target = value`; target is a str or a node (ctx fixed to Store)."""
    if isinstance(target, str):
        target = name(target, store=True)
    else:
        target = set_store(clone(target))
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


def while_(test, body):
    return gast.While(test=test, body=list(body) or [gast.Pass()], orelse=[])


def bool_op(op, values):
    """`a or b or ...` (op gast.Or()) or `a and b and ...` (gast.And())."""
    return gast.BoolOp(op=op, values=list(values))


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


def to_ast(node):
    """The standard library's ast for a gast tree (what `compile` takes), in
    one pass (gast.gast_to_ast and a NodeTransformer were a third of a
    transformation's time): the same node types field by field, except the
    parameters (gast Names -> ast.arg), an except clause's name, and number
    constants below zero, written `-(c)`: ast.unparse prints a negative
    constant without parentheses, so Constant(-1.0) ** j would read back as
    -(1.0 ** j); a complex constant is `complex(re, im)`."""
    return _convert(node)


_LOCATION = ("lineno", "col_offset", "end_lineno", "end_col_offset")
_CONTEXTS = {gast.Load: ast.Load(), gast.Store: ast.Store(), gast.Del: ast.Del()}
_AST_CLASSES = {}


def _located(new, node):
    d = node.__dict__
    for a in _LOCATION:
        v = d.get(a)
        if v is not None:
            setattr(new, a, v)
    return new


def _arg(name):
    if name is None:
        return None
    return _located(ast.arg(arg=name.id, annotation=_convert(name.annotation),
                            type_comment=name.type_comment), name)


def to_numbered_ast(tree):
    """(ast tree, rows) for the gast `tree`, each statement on its own line
    in order (a compound statement: its header's line, then its bodies'),
    each expression on its statement's line; rows[k] = (depth, gast
    statement) of line k + 1. What codegen compiles: tracebacks then name
    a generated statement by its line."""
    rows = []
    if type(tree) is list:
        return [_numbered(n, rows, -1, 0) for n in tree], rows
    return _numbered(tree, rows, -1, 0), rows


_PLANS = {}     # gast class -> (what _numbered does, ast class, fields)
_AST_NAME = ast.Name
_STMT, _LOCATED, _PLAIN, _SPECIAL = range(4)


def _plan(cls):
    """How _numbered converts a node of gast class `cls`."""
    plan = _PLANS.get(cls)
    if plan is None:
        if cls in _CONTEXTS:
            plan = (_SPECIAL, _CONTEXTS[cls], ())
        elif cls in (gast.Name, gast.Constant, gast.arguments):
            plan = (_SPECIAL, None, ())
        else:
            target = _AST_CLASSES.get(cls)
            if target is None:
                target = _AST_CLASSES[cls] = getattr(ast, cls.__name__)
            kind = (_STMT if issubclass(cls, (gast.stmt, gast.excepthandler)) else
                    _LOCATED if issubclass(target, (ast.expr, ast.stmt, ast.excepthandler, ast.arg, ast.keyword))
                    else _PLAIN)
            plan = (kind, target, target._fields)
        _PLANS[cls] = plan
    return plan


def _numbered(node, rows, depth, line):
    """The ast node of gast `node` for to_numbered_ast: a statement takes
    the next row (at `depth` + 1), everything else the line `line` of its
    statement (what _convert does with rows, without its generic steps)."""
    cls = node.__class__
    if cls is _NAME:                        # (the most frequent node)
        new = _AST_NAME(node.id, _CONTEXTS[node.ctx.__class__])
        new.lineno = new.end_lineno = line
        new.col_offset = new.end_col_offset = 0
        return new
    kind, target, fields = _PLANS.get(cls) or _plan(cls)
    if kind is _SPECIAL:
        if target is not None:
            return target                   # a context
        if cls is gast.Constant:
            v = node.value
            t = v.__class__
            if t is str or t is bool or v is None or ((t is int or t is float) and v > 0):
                return _at(ast.Constant(value=v, kind=node.kind), line)
        return _convert_numbered(node, cls, rows, depth, line)
    if kind is _STMT:
        depth += 1
        rows.append((depth, node))
        line = len(rows)
    d = node.__dict__
    values = []
    for f in fields:
        v = d.get(f)
        if v is not None:
            if v.__class__ is list:
                v = [_numbered(x, rows, depth, line) if isinstance(x, _AST) else x for x in v]
            elif isinstance(v, _AST):
                v = _numbered(v, rows, depth, line)
        values.append(v)
    new = target(*values)
    if cls is gast.ExceptHandler and node.name is not None:
        new.name = node.name.id
    if kind is not _PLAIN:
        new.lineno = new.end_lineno = line
        new.col_offset = new.end_col_offset = 0
    return new


def _convert(node, rows=None, depth=0, line=0):
    if type(node) is list:
        return [_convert(n, rows, depth, line) for n in node]
    if rows is not None and isinstance(node, (gast.stmt, gast.excepthandler)):
        depth += 1
        rows.append((depth, node))
        line = len(rows)
    if not isinstance(node, _AST):
        return node
    cls = type(node)
    context = _CONTEXTS.get(cls)
    if context is not None:
        return context
    if rows is not None:
        return _convert_numbered(node, cls, rows, depth, line)
    if cls is gast.Name:
        return _located(ast.Name(id=node.id, ctx=_CONTEXTS[type(node.ctx)]), node)
    if cls is gast.Constant:
        v = node.value
        if isinstance(v, (int, float)) and not isinstance(v, bool) and (v < 0 or (v == 0 and str(v)[0] == "-")):
            new = ast.UnaryOp(op=ast.USub(), operand=_located(ast.Constant(value=-v), node))
            return _located(new, node)
        if isinstance(v, complex) and (v.real != 0 or str(v.imag)[0] == "-"):
            parts = [_located(ast.Constant(value=v.real), node), _located(ast.Constant(value=v.imag), node)]
            return _located(ast.Call(func=_located(ast.Name(id="complex", ctx=ast.Load()), node),
                                     args=parts, keywords=[]), node)
        return _located(ast.Constant(value=v, kind=node.kind), node)
    if cls is gast.arguments:
        return ast.arguments(posonlyargs=[_arg(a) for a in node.posonlyargs], args=[_arg(a) for a in node.args],
                             vararg=_arg(node.vararg), kwonlyargs=[_arg(a) for a in node.kwonlyargs],
                             kw_defaults=_convert(node.kw_defaults), kwarg=_arg(node.kwarg),
                             defaults=_convert(node.defaults))
    target = _AST_CLASSES.get(cls)
    if target is None:
        target = _AST_CLASSES[cls] = getattr(ast, cls.__name__)
    d = node.__dict__
    fields = {f: _convert(d.get(f)) for f in target._fields}
    if cls is gast.ExceptHandler and node.name is not None:
        fields["name"] = node.name.id
    return _located(target(**fields), node)


def _at(new, line):
    new.lineno = new.end_lineno = line
    new.col_offset = new.end_col_offset = 0
    return new


def _convert_numbered(node, cls, rows, depth, line):
    """_convert for to_numbered_ast: the same node, located on `line`."""
    if cls is gast.Name:
        return _at(ast.Name(id=node.id, ctx=_CONTEXTS[type(node.ctx)]), line)
    if cls is gast.Constant:
        new = _convert(node)
        for n in ast.walk(new):
            if isinstance(n, (ast.expr, ast.stmt)):
                _at(n, line)
        return new
    if cls is gast.arguments:
        def arg(a):
            return None if a is None else _at(ast.arg(arg=a.id, annotation=_convert(a.annotation, rows, depth, line),
                                                      type_comment=a.type_comment), line)
        return ast.arguments(posonlyargs=[arg(a) for a in node.posonlyargs], args=[arg(a) for a in node.args],
                             vararg=arg(node.vararg), kwonlyargs=[arg(a) for a in node.kwonlyargs],
                             kw_defaults=_convert(node.kw_defaults, rows, depth, line), kwarg=arg(node.kwarg),
                             defaults=_convert(node.defaults, rows, depth, line))
    target = _AST_CLASSES.get(cls)
    if target is None:
        target = _AST_CLASSES[cls] = getattr(ast, cls.__name__)
    d = node.__dict__
    fields = {f: _convert(d.get(f), rows, depth, line) for f in target._fields}
    if cls is gast.ExceptHandler and node.name is not None:
        fields["name"] = node.name.id
    new = target(**fields)
    if isinstance(new, (ast.expr, ast.stmt, ast.excepthandler, ast.arg, ast.keyword)):
        _at(new, line)
    return new


def to_source(node):
    """Unparse a gast node with the standard library's ast.unparse."""
    tree = ast.fix_missing_locations(to_ast(node))
    return _print_comments(ast.unparse(tree))


def returned_names(fdef):
    """The names an ANF FunctionDef returns (its last statement is `return
    x` or `return (x, y, ...)` of Names), in order."""
    value = fdef.body[-1].value
    return [e.id for e in value.elts] if isinstance(value, gast.Tuple) else [value.id]


def names_loaded(node):
    """The set of Name ids read anywhere in `node`."""
    return _name_ids(node, gast.Load)


def grad_of_names(node, nodes=None):
    """The names used inside the insert_grad_of bodies that lowered `node`
    holds (the lowering keeps each body on its marker, out of the tree).
    `nodes`: walk(node), when the caller has it."""
    out = set()
    for n in nodes if nodes is not None else walk(node):
        block = Anno.GRAD_OF.of(n)
        if block is not None:
            out |= {m.id for m in walk(module(block[2])) if isinstance(m, gast.Name)}
            if block[1] is not None:
                out.add(block[1])
    return out


def names_stored(node):
    """The set of Name ids assigned anywhere in `node`."""
    return _name_ids(node, gast.Store)


def names_loaded_and_stored(node):
    """(names_loaded(node), names_stored(node)), in one walk."""
    loaded, stored = set(), set()
    load, store = gast.Load, gast.Store
    todo = [node]
    AST, NAME, fields_of, CHILD = _AST, gast.Name, _CHILD_FIELDS.get, _child_fields
    while todo:                 # (a Name's annotation is not entered)
        n = todo.pop()
        cls = n.__class__
        if cls is NAME:
            ctx = n.ctx.__class__
            if ctx is load:
                loaded.add(n.id)
            elif ctx is store:
                stored.add(n.id)
            continue
        fields = fields_of(cls)
        if fields is None:
            fields = CHILD(cls)
        d = n.__dict__
        for field in fields:
            value = d.get(field)
            if value is None:
                continue
            if type(value) is list:
                todo.extend([v for v in value if isinstance(v, AST)])
            elif isinstance(value, AST):
                todo.append(value)
    return loaded, stored


def targets(stmt):
    """The names an ANF assignment stores, in order: `a = ...` -> [a],
    `a, b = ...` -> [a, b]."""
    t = stmt.targets[0]
    return [e.id for e in t.elts] if isinstance(t, gast.Tuple) else [t.id]


def as_load(e):
    """`e` with every context in it a load (set_load), in place; anything
    that is not a node (a constant default) unchanged."""
    return set_load(e) if isinstance(e, gast.AST) else e


def slice_to_expr(node):
    """Turn subscript slice syntax into an ordinary expression:
    `a:b` -> `slice(a, b, None)`, tuples element-wise. Used when an index
    moves into a call argument (the adjoint of x[idx])."""
    node = clone(node)
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
    origin = Anno.ORIGIN.of(old)
    if origin is not None:
        Anno.ORIGIN.add_to(new, origin)
    return new


class NodeTransformer(gast.NodeTransformer):
    """gast.NodeTransformer, faster: the visit method of a node class is
    looked up once per transformer class, and generic_visit goes through
    the fields that may hold nodes only (not the Load/Store contexts, names
    and flags, which no visit method of the compiler's changes); what it
    visits, in what order, and how it splices the results are
    NodeTransformer's."""

    def visit(self, node):
        """The result of the visit method for `node`'s class (generic_visit
        when there is none)."""
        cls = node.__class__
        table = _VISITORS.get(self.__class__)
        if table is None:
            table = _VISITORS[self.__class__] = {}
        method = table.get(cls)
        if method is None:
            method = getattr(self.__class__, "visit_" + cls.__name__, None)
            if method is None or method is ast.NodeVisitor.visit_Constant:    # (Num, Str: never defined here)
                method = self.__class__.generic_visit
            table[cls] = method
        return method(self, node)

    def generic_visit(self, node):
        """Visit the children of `node` in field order, splicing lists."""
        d = node.__dict__
        for field in _child_fields(node.__class__):
            old_value = d.get(field)
            if type(old_value) is list:
                new_values = []
                for value in old_value:
                    if isinstance(value, _AST):
                        value = self.visit(value)
                        if value is None:
                            continue
                        elif not isinstance(value, _AST):
                            new_values.extend(value)
                            continue
                    new_values.append(value)
                old_value[:] = new_values
            elif isinstance(old_value, _AST):
                new_node = self.visit(old_value)
                if new_node is None:
                    delattr(node, field)
                else:
                    setattr(node, field, new_node)
        return node


_VISITORS = {}      # NodeTransformer subclass -> {node class: its visit function}


class _LoadRenamer(NodeTransformer):
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
        op = Anno.OP.of(n)
        if op is not None:
            for e in list(op.bindings.values()) + list(op.args) + list(op.keywords.values()):
                r.visit(e)
    return node


def clone(node, annotations=True):
    """A deep copy of the gast tree `node` (a node or a list of them) whose
    annotations (syntax/anno.py: resolved objects, rules, origins) are
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
        for key in [k for k in attrs if k in _DROPPED]:
            del attrs[key]
    fields = _CHILD_FIELDS.get(cls)
    for field in fields if fields is not None else _child_fields(cls):     # (contexts are shared)
        value = attrs.get(field)
        if type(value) is list:
            attrs[field] = [clone(v, annotations) if isinstance(v, _AST) else v for v in value]
        elif isinstance(value, _AST):
            attrs[field] = clone(value, annotations)
    new.__dict__.update(attrs)
    return new


_AST = gast.AST
_CONTEXT = gast.expr_context
_DROPPED = ATTRIBUTES - {Anno.ORIGIN.attr}         # (by clone(annotations=False))


_SCALAR_FIELDS = {"ctx", "id", "type_comment", "attr", "kind", "arg", "level", "module", "is_async",
                  "conversion", "simple"}
_CHILD_FIELDS = {}


def _child_fields(cls):
    """The fields of node class `cls` that may hold nodes (not names,
    strings, flags or the Load/Store context)."""
    found = _CHILD_FIELDS.get(cls)
    if found is None:
        if cls is gast.Constant:
            found = ()
        else:
            found = tuple(f for f in cls._fields if f not in _SCALAR_FIELDS
                          and not (f == "name" and cls is not gast.ExceptHandler))
        _CHILD_FIELDS[cls] = found
    return found


def child_fields(cls):
    """The fields of node class `cls` that may hold nodes, in order: not
    names, strings, flags or the Load/Store context."""
    found = _CHILD_FIELDS.get(cls)
    return found if found is not None else _child_fields(cls)


def statements(stmts):
    """The statements of the list `stmts` and those nested in their blocks
    (bodies, else branches, handlers), in no particular order: a walk that
    does not enter expressions."""
    out = []
    todo = list(stmts)
    while todo:
        n = todo.pop()
        out.append(n)
        d = n.__dict__
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            value = d.get(field)
            if type(value) is list:
                todo.extend(value)
    return out


def rewrite_calls(node, fn):
    """`node` with each Call under it (or it) replaced by `fn(call)`, the
    calls inside a call's operands first, in place where the parents stay
    (what a NodeTransformer whose visit_Call runs generic_visit first
    does, without visiting every node through getattr)."""
    d = node.__dict__
    for field in _child_fields(node.__class__):
        value = d.get(field)
        if type(value) is list:
            for k, v in enumerate(value):
                if isinstance(v, _AST):
                    value[k] = rewrite_calls(v, fn)
        elif isinstance(value, _AST):
            d[field] = rewrite_calls(value, fn)
    return fn(node) if node.__class__ is gast.Call else node


def children(node):
    """The nodes directly under `node`, in field order (no Load/Store context nodes)."""
    out = []
    d = node.__dict__
    for field in _child_fields(node.__class__):
        value = d.get(field)
        if type(value) is list:
            out.extend(v for v in value if isinstance(v, _AST))
        elif isinstance(value, _AST):
            out.append(value)
    return out


def walk(node):
    """Every node of the tree `node`, breadth first, as a list (as
    gast.walk/ast.walk, which it replaces for speed: the compiler walks its
    trees often), without the Load/Store context nodes."""
    out = [node]
    AST, fields_of, CHILD = _AST, _CHILD_FIELDS.get, _child_fields
    append = out.append
    for n in out:               # (a list iterator sees what the loop appends)
        cls = n.__class__
        fields = fields_of(cls)
        if fields is None:
            fields = CHILD(cls)
        if fields:
            d = n.__dict__
            for field in fields:
                value = d.get(field)
                if value is not None:
                    if value.__class__ is list:
                        for v in value:
                            if isinstance(v, AST):
                                append(v)
                    elif isinstance(value, AST):
                        append(value)
    return out


def _name_ids(node, ctx):
    """The ids of the Names in `node` whose context is `ctx` (Load or
    Store)."""
    loaded, stored = names_loaded_and_stored(node)
    return loaded if ctx is gast.Load else stored
