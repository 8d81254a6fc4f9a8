"""Inline an adjoint rule template into generated code.

A rule template (see srcgrad/rules/numpy_adjoints.py) reads like the maths:

    @register_adjoint(np.multiply)
    def multiply(z, x, y):
        d[x] = unbroadcast(d[z] * y, x)
        d[y] = unbroadcast(d[z] * x, y)

`inline` substitutes the call site's operands for the parameters, the
cotangent variable for `d[z]`, and turns each `d[x] = e` into `bx = e` (first
contribution, symbolic zero before) or `bx = bx + e` (accumulation). A
contribution to an operand that is a constant or inactive is dropped, and
so are the temporaries only it used. Temporaries are renamed hygienically. Used by the compiler (reverse.py) and, with the identity
binding, by the registry to build the tape's VJP functions: one template,
two paths.
"""
import gast

from ..syntax import ast_util


class TemplateError(Exception):
    pass


def is_d(node):
    """Is `node` the subscript `d[name]`? Returns the name or None."""
    if (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name)
            and node.value.id == "d" and isinstance(node.slice, gast.Name)):
        return node.slice.id
    return None


class _Rewrite:
    """Copies a template statement with the substitutions made, in one pass
    over it (the template itself is never changed)."""

    def __init__(self, output, cotangent, bindings, renames, globals_map):
        self.output = output
        self.cotangent = cotangent
        self.bindings = bindings
        self.renames = renames
        self.globals_map = globals_map

    def visit(self, node):
        cls = type(node)
        if cls is gast.Name:
            if node.id in self.renames:
                return ast_util.name(self.renames[node.id], ctx=node.ctx)
            load = isinstance(node.ctx, gast.Load)
            if load and node.id in self.bindings:
                return ast_util.clone(self.bindings[node.id])
            if load and node.id in self.globals_map:
                return ast_util.name(self.globals_map[node.id], ctx=node.ctx)
            return ast_util.clone(node)
        if cls is gast.Subscript:
            target = is_d(node)
            if target is not None:
                if target != self.output:
                    raise TemplateError("a rule may only read d[%s] (the output's cotangent)" % self.output)
                return ast_util.name(self.cotangent)
        new = cls.__new__(cls)
        attrs = dict(node.__dict__)
        for field in cls._fields:
            value = attrs.get(field)
            if type(value) is list:
                attrs[field] = [self.visit(v) if isinstance(v, gast.AST) else v for v in value]
            elif isinstance(value, gast.AST) and not isinstance(value, gast.expr_context):
                attrs[field] = self.visit(value)
        new.__dict__.update(attrs)
        return new


def inline(tree, output, cotangent, bindings, targets, materialized, namer, globals_map=None,
           accumulate=None):
    """Inline the template `tree` (a gast FunctionDef) at a call site.

    output: the name of the primal output variable (the rule's first parameter
      is bound to it). cotangent: the name holding its cotangent (`d[z]`).
    bindings: {param: gast expression} for the other parameters.
    targets: {param: adjoint variable name, or None to drop}.
    materialized: set of adjoint names that already hold a value; updated.
    accumulate(target, value) -> expression: how a second contribution is
      added (default `target + value`; the compiler passes add_cotangents
      for containers).
    Returns a list of gast statements.
    """
    globals_map = globals_map or {}
    params = [a.id for a in tree.args.args]
    out_param = params[0]
    bind = dict(bindings)
    bind[out_param] = ast_util.name(output)
    temps = {}
    for stmt in tree.body:
        if isinstance(stmt, gast.Assign):
            for t in stmt.targets:
                if is_d(t) is None:
                    for n in ast_util.names_stored(t):
                        if n not in temps:
                            temps[n] = namer.fresh("_" + n)
    rewrite = _Rewrite(out_param, cotangent, bind, temps, globals_map)
    out = []
    for stmt in tree.body:
        if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant):
            continue  # docstring
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and is_d(stmt.targets[0]) is not None:
            param = is_d(stmt.targets[0])
            target = targets.get(param)
            if target is None:
                continue
            value = rewrite.visit(stmt.value)
            if target in materialized:
                value = accumulate(target, value) if accumulate else ast_util.add(ast_util.name(target), value)
            else:
                materialized.add(target)
            out.append(ast_util.assign(target, value))
            continue
        out.append(rewrite.visit(stmt))
    return _drop_dead_temps(out, set(temps.values())) if temps else out


def _drop_dead_temps(stmts, temps):
    live = set()
    kept = []
    for stmt in reversed(stmts):
        stored = ast_util.names_stored(stmt)
        if stored and stored <= temps and not (stored & live):
            continue
        live |= ast_util.names_loaded(stmt)
        kept.append(stmt)
    return kept[::-1]
