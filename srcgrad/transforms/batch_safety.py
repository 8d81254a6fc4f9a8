"""Which adjoint rules run on a stack of cotangents as written.

Used by reverse.py in batched mode (vectorised Jacobians: a leading batch
axis on every cotangent, none on primal values; rules/batched.py). A rule
is batch-safe when (1) its template combines the cotangent `d[z]` with
primal values only elementwise (`+ - * /`, negation, `np.where`, conj and
the other TRANSPARENT helpers), or through a helper with a batched twin
(`rules.batched.BATCHED`: unbroadcast, unreduce, matmul adjoints, unindex,
densify), which the generator substitutes; and (2) no primal operand it
multiplies the cotangent with has more axes than the output (true of
ufuncs, whose output broadcasts their operands, and of the rules listed in
`ALLOWED`, checked by reading them and by tests/test_jacobians.py against
the per-example loop). Every other rule runs once per example
(`batch_vjp`): slower, never wrong.
"""
import operator

import gast
import numpy as np

from .. import runtime
from ..rules.helpers import batched
from ..rules.helpers import broadcast as helpers
from ..rules.helpers import complex as helpers_math
from ..rules.helpers import reductions
from ..rules.python import containers
from ..syntax import ast_util
from ..syntax.templates import is_d

# helpers elementwise in their (first) cotangent argument
TRANSPARENT = {helpers_math.conj, getattr(helpers_math, "real_part", None), helpers_math.complex_like,
               helpers_math.imag_cotangent, helpers_math.angle_cotangent, helpers_math.power_exponent_adjoint,
               containers.cast_back, reductions.zero_safe_ratio,
               np.conj, np.conjugate, np.real, np.imag} - {None}

# non-ufunc primitives whose templates satisfy (2): reductions broadcast back
# with unreduce, matmul through its helpers, indexing through unindex, and
# what generated code itself calls
ALLOWED = {
    np.sum, np.mean, np.max, np.min, np.amax, np.amin, np.matmul, np.cross, np.broadcast_to, np.where,
    np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.ravel, np.concatenate,
    operator.getitem, helpers.unbroadcast, helpers.unreduce, helpers.rereduce, helpers_math.conj,
    runtime.densify, runtime.add_cotangents, runtime.as_input, runtime.as_input_tree,
    containers.list_append, containers.list_extend, containers.as_list, containers.as_tuple,
    containers.as_dict, containers.setitem, containers.array_setitem,
}


class _NotBatchable(Exception):
    pass


class _Check:
    def __init__(self, rule):
        self.rule = rule
        self.cotangents = set()         # temporaries holding cotangent values

    def resolve(self, node):
        if isinstance(node, gast.Name):
            if node.id in self.rule.params or node.id == self.rule.output:
                return None
            return self.rule.globals.get(node.id)
        if isinstance(node, gast.Attribute):
            base = self.resolve(node.value)
            return getattr(base, node.attr, None) if base is not None else None
        return None

    def expr(self, node):
        """Is `node` cotangent-valued? Raises _NotBatchable for a use of a
        cotangent that is not known to keep the batch axis."""
        if is_d(node) is not None:
            return True
        if isinstance(node, gast.Name):
            return node.id in self.cotangents
        if isinstance(node, gast.Subscript):
            if self.expr(node.value):
                if not self.rule.sequence_output:
                    raise _NotBatchable("indexes a cotangent")
                self.expr(node.slice)
                return True         # an element of a list of cotangents
            self.expr(node.slice)
            return False
        if isinstance(node, gast.BinOp):
            left, right = self.expr(node.left), self.expr(node.right)
            if not (left or right):
                return False
            if isinstance(node.op, (gast.Add, gast.Sub)) or (
                    isinstance(node.op, gast.Mult) and not (left and right)) or (
                    isinstance(node.op, gast.Div) and not right):
                return True
            raise _NotBatchable("combines cotangents with %s" % type(node.op).__name__)
        if isinstance(node, gast.UnaryOp):
            v = self.expr(node.operand)
            if v and not isinstance(node.op, (gast.USub, gast.UAdd)):
                raise _NotBatchable("a unary operator on a cotangent")
            return v
        if isinstance(node, gast.Call):
            fn = self.resolve(node.func)
            flags = [self.expr(a) for a in node.args]
            kw = [self.expr(k.value) for k in node.keywords]
            if not any(flags) and not any(kw):
                return False
            if any(kw):
                raise _NotBatchable("a cotangent as a keyword argument")
            if fn is np.where and not flags[0]:
                return True
            if (fn in TRANSPARENT or fn in batched.BATCHED) and flags[0] and not any(flags[1:]):
                return True
            raise _NotBatchable("calls %s on a cotangent" % getattr(fn, "__name__", fn))
        for child in gast.iter_child_nodes(node):
            if isinstance(child, gast.expr) and self.expr(child):
                raise _NotBatchable("a %s of a cotangent" % type(node).__name__)
        return False

    def run(self):
        for stmt in self.rule.tree.body:
            if not isinstance(stmt, gast.Assign):
                continue
            value = self.expr(stmt.value)
            target = stmt.targets[0]
            if is_d(target) is None and value:
                self.cotangents |= {n.id for n in ast_util.walk(target) if isinstance(n, gast.Name)}


def batchable(rule):
    """Does the adjoint `rule` run on a stack of cotangents as written (with
    the batched helpers substituted)? Cached on the rule (`batch_safe`)."""
    if rule.batch_safe is None:
        prim = rule.primitive
        safe = False
        if isinstance(prim, np.ufunc) or prim in ALLOWED:
            try:
                _Check(rule).run()
                safe = True
            except _NotBatchable:
                safe = False
        rule.batch_safe = safe
    return rule.batch_safe


def batched_twin(helper):
    """(the batched twin of `helper`, the extra trailing arguments generated
    code passes it), or None (rules/batched.py `BATCHED`)."""
    try:
        return batched.BATCHED.get(helper)
    except TypeError:       # unhashable
        return None


class _Substitute(ast_util.NodeTransformer):
    def __init__(self, renames, extra):
        self.renames, self.extra = renames, extra

    def visit_Name(self, node):
        if node.id in self.renames:
            node.id = self.renames[node.id]
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, gast.Name) and node.func.id in self.extra:
            node.args = list(node.args) + [ast_util.name(a) for a in self.extra[node.func.id]]
        return node


def substitute_helpers(stmt, renames, extra):
    """`stmt` (changed in place and returned) calling the batched twins:
    Names in `renames` renamed, and calls of the names in `extra` given
    their extra trailing arguments (names, such as the batch size `_B`)."""
    return _Substitute(renames, extra).visit(stmt)
