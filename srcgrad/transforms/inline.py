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
import copy

import gast

from . import ast_util


class TemplateError(Exception):
    pass


def is_d(node):
    """Is `node` the subscript `d[name]`? Returns the name or None."""
    if (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name)
            and node.value.id == "d" and isinstance(node.slice, gast.Name)):
        return node.slice.id
    return None


class _Rewrite(gast.NodeTransformer):
    def __init__(self, output, cotangent, bindings, renames, globals_map):
        self.output = output
        self.cotangent = cotangent
        self.bindings = bindings
        self.renames = renames
        self.globals_map = globals_map

    def visit_Subscript(self, node):
        target = is_d(node)
        if target is not None:
            if target != self.output:
                raise TemplateError("a rule may only read d[%s] (the output's cotangent)" % self.output)
            return ast_util.name(self.cotangent)
        return self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in self.renames:
            return ast_util.name(self.renames[node.id], ctx=node.ctx)
        if node.id in self.bindings and isinstance(node.ctx, gast.Load):
            return ast_util.clone(self.bindings[node.id])
        if node.id in self.globals_map and isinstance(node.ctx, gast.Load):
            return ast_util.name(self.globals_map[node.id], ctx=node.ctx)
        return node


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
            value = rewrite.visit(ast_util.clone(stmt.value))
            if target in materialized:
                value = accumulate(target, value) if accumulate else ast_util.add(ast_util.name(target), value)
            else:
                materialized.add(target)
            out.append(ast_util.assign(target, value))
            continue
        out.append(rewrite.visit(ast_util.clone(stmt)))
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
