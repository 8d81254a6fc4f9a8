"""Rewrites of generated code, for readability and memory.

Requires: reverse or forward (inlined rules); the three rewrites that need
to know what is read later use liveness.py. The rewrites:
- `fold`: arithmetic on constants (`2 - 1` becomes `1`) and `x ** 1` to `x`.
  Never folds `x * 0` to 0 (that would hide NaN and inf, as JAX's symbolic
  zeros also refuse to). Run on each inlined rule (reverse.py, forward.py);
- `propagate_copies`: after `a = b`, read `b` for `a`, and drop the copy
  once `a` is dead (the reverse sweep, codegen.py);
- `free_dead`: `del` of the values the reverse sweep no longer reads,
  right after their last reader (the assembled function, function.py);
- `collapse_temporaries`: `t = e; x = t` to `x = e` where `t` is read
  nowhere after (the assembled function, function.py);
- `MathFunctions`: `np.cos(x)` to `math.cos(x)` in the derivative of a
  math-module call, whose operands are Python floats;
- `fold_scalings`: `t = -a; u = x + t` to `u = x - a`, and negations and
  powers of two moved onto constants or (in a batched sweep) residuals,
  where they cost no operation on a cotangent (codegen.py);
- `merge_unreduces`: a full reduction's cotangent broadcast in one step
  where the sweep broadcast it twice (codegen.py);
- `unreduces_in_products`: `unreduce(g, X, ...) * Y` to `Y * g` where Y
  has X's shape: the product broadcasts (codegen.py);
- `ElideShapeHelper`: `unbroadcast(g, x)` (`broadcast_like(t, x)`) to `g`
  (`t`) where `x` is known to be 0-d, or to have g's shape (shapes.py).
Each keeps what the code computes.
"""
import math
import operator

import gast
import numpy as np

from ..syntax import ast_util
from ..syntax.anno import Anno
from . import liveness
from .liveness import Sets, live_after, live_before

_FOLD = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul}
_COMPARE = {gast.Eq: operator.eq, gast.NotEq: operator.ne}


def _fold(node):
    """`node` with constant arithmetic folded, in place (a new node where
    a BinOp folds)."""
    d = node.__dict__
    for field in ast_util.child_fields(node.__class__):     # (not the Load/Store contexts)
        value = d.get(field)
        if type(value) is list:
            for k, v in enumerate(value):
                if isinstance(v, gast.AST):
                    value[k] = _fold(v)
        elif isinstance(value, gast.AST):
            setattr(node, field, _fold(value))
    if (type(node) is gast.Compare and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE
            and isinstance(node.left, gast.Constant) and isinstance(node.comparators[0], gast.Constant)
            and _number(node.left.value) and _number(node.comparators[0].value)):
        # (y != 0 of a literal y, as the power rule writes it): an int, for the arithmetic around it
        return ast_util.const(int(_COMPARE[type(node.ops[0])](node.left.value, node.comparators[0].value)))
    if type(node) is gast.BinOp:
        left, right = node.left, node.right
        if (isinstance(left, gast.Constant) and isinstance(right, gast.Constant)
                and type(node.op) in _FOLD and _number(left.value) and _number(right.value)):
            return ast_util.const(_FOLD[type(node.op)](left.value, right.value))
        if isinstance(node.op, gast.Pow) and isinstance(right, gast.Constant) and right.value == 1 \
                and not isinstance(right.value, bool):
            return left
    return node


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def fold(stmts):
    """Simplify the statements in place; returns them."""
    return [_fold(s) for s in stmts]


# ------------------------------------------------------ copy propagation

class _Rename(ast_util.NodeTransformer):
    def __init__(self, old, new):
        self.old, self.new = old, new

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id == self.old:
            return ast_util.copy_location(ast_util.name(self.new), node)
        return node


def _is_copy(s):
    return (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.Name))


def propagate_copies(stmts, live_out, sets=None):
    """Assignment propagation: after `a = b`, read `b` for `a` until either
    is written again, and drop the copy when `a` is then dead. Returns the
    new statement list (nested blocks are done too). `live_out`: the names
    read after `stmts` (the returned values). Linear in the block's length
    per pass; passes repeat while a pass changes something."""
    sets = sets or Sets()
    stmts = list(stmts)
    before = {}         # (live_after's loops, for their bodies' live_out)
    after = live_after(stmts, live_out, sets, before)
    for k, s in enumerate(stmts):         # inner blocks first, each with what is live after it
        if isinstance(s, gast.If):
            s.body = propagate_copies(s.body, after[k], sets) or [gast.Pass()]
            s.orelse = propagate_copies(s.orelse, after[k], sets)
        elif isinstance(s, (gast.For, gast.While)):
            s.body = propagate_copies(s.body, live_before(s, after[k], sets, before), sets) or [gast.Pass()]
    compound = {}       # id -> (names read or written, names written) of an if/for/while here (not rewritten below)
    memo = {}           # (their liveness, for live_after)
    while True:
        changed = False
        after = live_after(stmts, live_out, sets, memo)
        out = []
        k = 0
        while k < len(stmts):
            s = stmts[k]
            if s is None:
                k += 1
                continue
            if _is_copy(s) and s.targets[0].id == s.value.id:
                k += 1
                changed = True
                continue                    # a = a
            if not _is_copy(s):
                out.append(s)
                k += 1
                continue
            a, b = s.targets[0].id, s.value.id
            j = k + 1
            while j < len(stmts):
                t = stmts[j]
                if t is None:
                    j += 1
                    continue
                if isinstance(t, (gast.If, gast.For, gast.While)):
                    found = compound.get(id(t))
                    if found is None:
                        read, written = liveness.uses_defs(t)
                        found = compound[id(t)] = (read | written, written)
                    if a in found[0] or b in found[1]:
                        break
                    j += 1
                    continue
                uses, defs = sets.get(t)
                if a in uses:
                    t = stmts[j] = _Rename(a, b).visit(t)
                    sets.forget(t)
                    if _is_copy(t) and t.targets[0].id == t.value.id:
                        stmts[j] = None             # b = b: no statement at all
                        j += 1
                        continue
                    uses, defs = sets.get(t)
                if {a, b} & defs:
                    j += 1
                    break
                j += 1
            last = j - 1
            while last > k and stmts[last] is None:
                last -= 1
            ends = stmts[last] if last > k and isinstance(stmts[last], gast.Assign) else None
            if a not in after[last] or (ends is not None and a in sets.get(ends)[1] and a not in sets.get(ends)[0]):
                changed = True              # the copy is dead now (or `a` is written, not read, where it ends)
                k += 1
                continue
            out.append(s)
            k += 1
        stmts = out
        if not changed or not any(_is_copy(s) for s in stmts):
            # (a pass over a block without copies changes nothing)
            return [s for s in stmts if not isinstance(s, gast.Pass)]


# ------------------------------------------------ exact scalings

def _power_of_two(v):
    """Is `v` a number +-2**k (-1 included): a factor that commutes exactly
    with rounding (scaling by it changes only the exponent)?"""
    if not _number(v) or v == 0 or not math.isfinite(v):
        return False
    m, _ = math.frexp(abs(v))
    return m == 0.5


class _Scaled:
    """An expression `name * factor` (factor +-2**k), as it is written:
    `name`, `-name` or `name * factor`."""

    def __init__(self, name, factor):
        self.name, self.factor = name, factor

    def node(self, as_float=False):
        """The expression; `as_float`: the factor written as a float, which
        keeps a floating operand's dtype and never wraps an integer or
        boolean one (`mask * -1.0`, not `-mask`)."""
        factor = float(self.factor) if as_float else self.factor
        if as_float and factor == 1 and self.factor == 1 and type(self.factor) is int:
            return ast_util.name(self.name)     # (the operand as it was)
        if factor == 1 and type(factor) is int:
            return ast_util.name(self.name)
        if factor == -1 and type(factor) is int:
            return gast.UnaryOp(op=gast.USub(), operand=ast_util.name(self.name))
        return gast.BinOp(left=ast_util.name(self.name), op=gast.Mult(), right=ast_util.const(factor))

    def scale(self, e):
        """The expression `e` scaled by this factor: `-e` or `e * factor`."""
        if self.factor == -1 and type(self.factor) is int:
            return gast.UnaryOp(op=gast.USub(), operand=e)
        return gast.BinOp(left=e, op=gast.Mult(), right=ast_util.const(self.factor))


def _as_scaled(e):
    """`e` as a _Scaled (a Name, -Name, Name * c or c * Name with c +-2**k), or None."""
    if type(e) is gast.Name:
        return _Scaled(e.id, 1)
    if type(e) is gast.UnaryOp and type(e.op) is gast.USub:
        inner = _as_scaled(e.operand)
        return _Scaled(inner.name, -inner.factor) if inner is not None else None
    if type(e) is gast.BinOp and type(e.op) is gast.Mult:
        for x, c in ((e.left, e.right), (e.right, e.left)):
            if type(c) is gast.Constant and _power_of_two(c.value):
                inner = _as_scaled(x)
                if inner is not None:
                    return _Scaled(inner.name, inner.factor * c.value)
    return None


def _scaling_of(s):
    """(t, _Scaled) for `t = -a`, `t = a * c` or `t = c * a` (c +-2**k), else None."""
    if not (type(s) is gast.Assign and len(s.targets) == 1 and type(s.targets[0]) is gast.Name):
        return None
    if type(s.value) is gast.Name:
        return None             # (a copy: propagate_copies's)
    found = _as_scaled(s.value)
    return (s.targets[0].id, found) if found is not None and found.name != s.targets[0].id else None


def _absorb(value, t, scaled, cheap):
    """`value` (an expression reading t once) with t = scaled.name *
    scaled.factor substituted so that the factor costs no operation on an
    array the size of t: cancelled, folded into a constant or a cheap
    operand (`cheap(name)`: not a cotangent), or turned into a
    subtraction. None where it would cost one."""
    a, k = scaled.name, scaled.factor
    if type(value) is gast.UnaryOp and type(value.op) is gast.USub and _is_name(value.operand, t):
        return _Scaled(a, -k).node()
    if type(value) is not gast.BinOp:
        return None
    left, right, op = value.left, value.right, type(value.op)
    if op in (gast.Add, gast.Sub) and k in (1, -1):
        if _is_name(right, t):
            flip = (k == -1) != (op is gast.Sub)
            return gast.BinOp(left=left, op=gast.Sub() if flip else gast.Add(), right=ast_util.name(a))
        if _is_name(left, t) and op is gast.Add and not _mentions(right, t):
            return gast.BinOp(left=right, op=gast.Sub() if k == -1 else gast.Add(), right=ast_util.name(a))
        return None
    if op is not gast.Mult:
        return None
    for mine, other, first in ((left, right, True), (right, left, False)):
        if not _is_name(mine, t) or _mentions(other, t):
            continue
        if type(other) is gast.Constant and _number(other.value):
            folded = ast_util.const(other.value * k)
            new = (ast_util.name(a), folded) if first else (folded, ast_util.name(a))
        else:
            operand = _as_scaled(other)
            if operand is None or not cheap(operand.name):
                return None
            factor = _Scaled(operand.name, operand.factor * k).node(as_float=True)
            new = (ast_util.name(a), factor) if first else (factor, ast_util.name(a))
        return gast.BinOp(left=new[0], op=gast.Mult(), right=new[1])
    return None


def _is_name(e, name):
    return type(e) is gast.Name and e.id == name


def _mentions(e, name):
    return any(type(n) is gast.Name and n.id == name for n in ast_util.walk(e))


def _is_comment(s):
    return type(s) is gast.Expr and type(s.value) is gast.Constant and isinstance(s.value.value, str)


def _pure_arithmetic(s):
    """Is `s` an assignment of arithmetic on names and constants (no call,
    no subscript: it reads names without changing them)?"""
    return type(s) is gast.Assign and all(
        type(n) in (gast.Name, gast.Constant, gast.BinOp, gast.UnaryOp, gast.Load, gast.Store)
        or isinstance(n, (gast.operator, gast.unaryop)) for n in ast_util.walk(s))


def factor_products(stmts, cheap, sets=None):
    """Factor a batched sweep's sums of products of one cotangent: `a = b *
    u` followed in its block by `a = a + b * w` (b the same name, not
    assigned in between; a not read in between; u and w reading only
    `cheap` names, a batched sweep's residuals, none assigned in between)
    becomes `a = b * (u + w)`. A name read twice in a product (x in x**2
    and in (1 - x)) gives its second-order adjoint one such pair per read;
    batched, each product and the sum cost an operation on the whole batch,
    and u + w one on a residual (the Hessian of a 100-variable Rosenbrock:
    one product and one sum of 100 x 99 fewer, 14% of its reverse sweep).
    Distributivity holds up to rounding (b * (u + w) rounds once less); the
    shapes and dtypes are the same. Nested blocks too; returns the new
    list. `cheap(name)`: as fold_scalings'; `sets`: a liveness.Sets whose
    entries for the statements rewritten are dropped."""
    return _factor_block(list(stmts), cheap, sets or Sets())


def _product_of(e, accept):
    """(b, the other operand) of `e` = `b * other` or `other * b`, b a Name
    whose id `accept` accepts, or None."""
    if type(e) is not gast.BinOp or type(e.op) is not gast.Mult:
        return None
    for mine, other in ((e.left, e.right), (e.right, e.left)):
        if type(mine) is gast.Name and accept(mine.id):
            return mine.id, other
    return None


def _factor_block(stmts, cheap, sets):
    for s in stmts:
        for field in ("body", "orelse"):
            inner = getattr(s, field, None)
            if type(inner) is list and inner and type(s) in (gast.If, gast.For, gast.While):
                setattr(s, field, _factor_block(inner, cheap, sets))

    def names(e):
        return {n.id for n in ast_util.walk(e) if type(n) is gast.Name}

    def reads_cheap(e):
        return all(cheap(n) for n in names(e))
    k = 0
    while k < len(stmts):
        s = stmts[k]
        k += 1
        if not (type(s) is gast.Assign and len(s.targets) == 1 and type(s.targets[0]) is gast.Name):
            continue
        found = _product_of(s.value, lambda n: not cheap(n))
        if found is None or not reads_cheap(found[1]):
            continue
        a, (b, u) = s.targets[0].id, found
        if a == b:
            continue
        terms = [u]
        changed = set()         # names assigned since s
        j = k
        while j < len(stmts):
            t = stmts[j]
            loaded, stored = ast_util.names_loaded_and_stored(t)
            if (type(t) is gast.Assign and len(t.targets) == 1 and type(t.targets[0]) is gast.Name
                    and t.targets[0].id == a and type(t.value) is gast.BinOp and type(t.value.op) is gast.Add):
                left, right = t.value.left, t.value.right
                acc, term = (left, right) if type(left) is gast.Name and left.id == a else (right, left)
                other = _product_of(term, lambda n: n == b) if type(acc) is gast.Name and acc.id == a else None
                if other is not None and reads_cheap(other[1]) and a not in names(other[1]) \
                        and not (names(other[1]) & changed):
                    terms.append(other[1])
                    sets.forget(t)
                    del stmts[j]
                    continue
            if a in loaded or a in stored or b in stored:
                break
            changed |= stored
            j += 1
        if len(terms) > 1:
            total = ast_util.clone(terms[0])
            for term in terms[1:]:
                total = gast.BinOp(left=total, op=gast.Add(), right=ast_util.clone(term))
            sets.forget(s)
            new = ast_util.clone(s)
            new.value = gast.BinOp(left=ast_util.name(b), op=gast.Mult(), right=total)
            stmts[k - 1] = new
    return stmts


def fold_scalings(stmts, live_out, cheap=None, sets=None):
    """Move exact scalings of a cotangent onto cheaper operands: `t = -a`,
    `t = a * c` (c = +-2**k) or `t = a * b` (b `cheap`, not a cotangent:
    a residual) read only by the next use of t, `u = t * c2`, `u = -t`,
    `u = t * b`, `u = x + t`, becomes one operation: `u = a * (c * c2)`,
    `u = a * (b * c)`, `u = x - a`. A second-order sweep is full of these
    (the power rule's `2 * x`, a difference's negation), and in a batched
    sweep every one costs an operation on the whole batch. The values are
    the same bits for real operands: negation and scaling by a power of two
    are exact and commute with rounding (the subnormal range and overflow
    aside); a complex product may differ in the sign of a zero component.
    A factor moved onto a cheap operand is written as a float (`b * 2.0`:
    never `-b` or `b * 2` on a boolean or uint8 mask), so a float32
    cotangent times an integer or boolean residual is computed in float64
    (the batched Jacobians cast their result to the input's dtype). Nested
    blocks too (a temporary and its use in one block); returns the new
    list. `live_out`: the names read after `stmts`; `cheap(name)`: is
    the name's value smaller than a cotangent's (a batched sweep's
    residuals), None where no operand is (then only the folds into a
    constant, a negation or an addition are made); `sets`: a liveness.Sets
    whose entries for the statements rewritten are dropped."""
    cheap = cheap or (lambda name: False)
    counts = {}
    stored = {}
    for s in stmts:
        for n in ast_util.walk(s):
            if type(n) is gast.Name:
                table = counts if type(n.ctx) is gast.Load else stored
                table[n.id] = table.get(n.id, 0) + 1
    for name in live_out:
        counts[name] = counts.get(name, 0) + 1
    return _fold_block(list(stmts), counts, stored, cheap, sets or Sets())


def _fold_block(stmts, counts, stored, cheap, sets):
    for s in stmts:
        if isinstance(s, gast.If):
            s.body = _fold_block(s.body, counts, stored, cheap, sets)
            s.orelse = _fold_block(s.orelse, counts, stored, cheap, sets)
        elif isinstance(s, (gast.For, gast.While)):
            s.body = _fold_block(s.body, counts, stored, cheap, sets)
    for k, s in enumerate(stmts):
        found = _scaling_of(s) or _cheap_product(s, cheap)
        if found is None:
            continue
        t, scaled = found[:2]
        if counts.get(t) != 1 or stored.get(t) != 1:
            continue
        operands = {scaled.name} | ({found[2]} if len(found) > 2 else set())
        j = k + 1
        while j < len(stmts) and (stmts[j] is None or not _mentions(stmts[j], t)):
            u = stmts[j]
            # (between the two, only arithmetic that rebinds no operand: a call may write into an
            # operand's buffer through another name, `c = zero_at_in_place(c, i)` with c a copy of a)
            if u is not None and not _is_comment(u) and (
                    not _pure_arithmetic(u) or any(o in liveness.defs(u) for o in operands)):
                break
            j += 1
        if j == len(stmts) or type(stmts[j]) is not gast.Assign or _mentions(stmts[j].targets[0], t):
            continue
        if len(found) == 2:
            new = _substitute(stmts[j].value, t, lambda parent: _absorb(parent, t, scaled, cheap))
        else:
            new = _substitute(stmts[j].value, t, lambda parent: _absorb_product(parent, t, found[3]))
        if new is None:
            continue
        stmts[j].value = new
        sets.forget(stmts[j])
        stmts[k] = None
    for s in stmts:
        if s is not None and type(s) is gast.Assign:
            s.value = _subtract(s.value)
    return [s for s in stmts if s is not None]


def _substitute(node, t, absorb):
    """`node` (an expression reading the name t once) with the operation
    that reads t replaced by `absorb(that operation)`; None where t is
    read otherwise, or absorb gives None."""
    if type(node) not in (gast.BinOp, gast.UnaryOp, gast.Call):
        return None
    children = [node.left, node.right] if type(node) is gast.BinOp else \
        [node.operand] if type(node) is gast.UnaryOp else list(node.args)
    if any(_is_name(c, t) for c in children):
        return absorb(node) if type(node) is not gast.Call else None
    for k, c in enumerate(children):
        if _mentions(c, t):
            new = _substitute(c, t, absorb)
            if new is None:
                return None
            if type(node) is gast.BinOp:
                setattr(node, ("left", "right")[k], new)
            elif type(node) is gast.UnaryOp:
                node.operand = new
            else:
                node.args[k] = new
            return node
    return None


def _subtract(node):
    """`x + -a` -> `x - a`, `x - -a` -> `x + a` and `--a` -> `a` in the
    expression `node` (the same bits: x - a is x + (-a) in IEEE 754)."""
    if type(node) is gast.BinOp:
        node.left, node.right = _subtract(node.left), _subtract(node.right)
        r = node.right
        if type(node.op) in (gast.Add, gast.Sub) and type(r) is gast.UnaryOp and type(r.op) is gast.USub:
            return gast.BinOp(left=node.left, op=gast.Sub() if type(node.op) is gast.Add else gast.Add(),
                              right=r.operand)
    elif type(node) is gast.UnaryOp:
        node.operand = _subtract(node.operand)
        if type(node.op) is gast.USub and type(node.operand) is gast.UnaryOp and type(node.operand.op) is gast.USub:
            return node.operand.operand
    elif type(node) is gast.Call:
        node.args = [_subtract(a) for a in node.args]
    return node


def _cheap_product(s, cheap):
    """For `t = a * b` (or `b * a`) with b a cheap scaled name: (t,
    _Scaled(a, 1), b, the product as (a, cheap operand, a first)), else None."""
    if not (type(s) is gast.Assign and len(s.targets) == 1 and type(s.targets[0]) is gast.Name
            and type(s.value) is gast.BinOp and type(s.value.op) is gast.Mult):
        return None
    left, right = s.value.left, s.value.right
    for mine, other, first in ((left, right, True), (right, left, False)):
        operand = _as_scaled(other)
        if type(mine) is gast.Name and not cheap(mine.id) and operand is not None and cheap(operand.name):
            return s.targets[0].id, _Scaled(mine.id, 1), operand.name, (mine.id, operand, first)
    return None


def _absorb_product(value, t, product):
    """`value` reading t = a * b (b cheap) once, as `u = t * c` or `u = -t`
    (c +-2**k): `a * (b * c)`; else None."""
    scaled = _as_scaled(value)
    if scaled is None or scaled.name != t or scaled.factor == 1:
        return None
    a, operand, first = product
    factor = _Scaled(operand.name, operand.factor * scaled.factor).node(as_float=True)
    return gast.BinOp(left=ast_util.name(a) if first else factor, op=gast.Mult(),
                      right=factor if first else ast_util.name(a))


# ------------------------------------------------------------ broadcasts of a scalar

def _full_unreduce(s, aliases):
    """For `t = unreduce(a, S, None, False)` (a full reduction's cotangent,
    0-d, broadcast to S): (t, the call), else None."""
    if not (type(s) is gast.Assign and len(s.targets) == 1 and type(s.targets[0]) is gast.Name):
        return None
    call = s.value
    if not (type(call) is gast.Call and type(call.func) is gast.Name and call.func.id in aliases
            and len(call.args) == 4 and not call.keywords):
        return None
    axis, keepdims = call.args[2], call.args[3]
    if type(axis) is gast.Constant and axis.value is None and type(keepdims) is gast.Constant \
            and keepdims.value is False:
        return s.targets[0].id, call
    return None


def merge_unreduces(stmts, live_out, aliases, sets=None):
    """`t = unreduce(a, S, None, False)` read only by the next statement's
    `u = unreduce(t, X, axis, keepdims)` becomes `u = unreduce(a, X, None,
    False)`: the cotangent of a full reduction (a 0-d `a`: `np.mean` of a
    row sum, `np.sum(np.sum(...))`) broadcast in one step instead of two.
    The values and dtype are the same: both are `a` broadcast to X's shape
    (broadcast_up). `aliases`: the names generated code calls unreduce
    (and its batched twin, the same rewrite) by; nested blocks too.
    Returns the new list; `sets` (liveness.Sets) forgets the statements
    rewritten."""
    if not aliases or not any(_full_unreduce(st, aliases) for st in ast_util.statements(stmts)):
        return stmts
    counts = {}
    for st in stmts:
        for n in ast_util.walk(st):
            if type(n) is gast.Name:
                counts[n.id] = counts.get(n.id, 0) + 1      # (loads and stores: t must appear twice)
    for name in live_out:
        counts[name] = counts.get(name, 0) + 1
    return _merge_block(list(stmts), counts, aliases, sets or Sets())


def _nested_blocks(stmts, rewrite_block):
    """Replace the bodies of the if, for and while statements of `stmts`
    by `rewrite_block(body)` (in place)."""
    for st in stmts:
        if isinstance(st, gast.If):
            st.body = rewrite_block(st.body)
            st.orelse = rewrite_block(st.orelse)
        elif isinstance(st, (gast.For, gast.While)):
            st.body = rewrite_block(st.body)


def _merge_block(stmts, counts, aliases, sets):
    _nested_blocks(stmts, lambda block: _merge_block(block, counts, aliases, sets))
    out = []
    k = 0
    while k < len(stmts):
        st = stmts[k]
        found = _full_unreduce(st, aliases)
        j = k + 1
        while found is not None and j < len(stmts) and _is_comment(stmts[j]):
            j += 1
        if found is not None and j < len(stmts) and counts.get(found[0]) == 2:
            t, first = found
            nxt = stmts[j]
            call = nxt.value if type(nxt) is gast.Assign else None
            if (type(call) is gast.Call and type(call.func) is gast.Name and call.func.id == first.func.id
                    and len(call.args) == 4 and not call.keywords and _is_name(call.args[0], t)):
                call.args = [first.args[0], call.args[1], ast_util.const(None), ast_util.const(False)]
                sets.forget(nxt)
                out.extend(stmts[k + 1:j])
                k = j
                continue
        out.append(st)
        k += 1
    return out


def _unreduce_call(e, aliases, expand=None):
    """For `unreduce(g, X, axis, keepdims)` of a Name X: (an expression
    that broadcasts against X's shape to the unreduce's value, X's name),
    else None. That is g itself when no axis is inserted (axis None, or
    keepdims True with an int axis), and, given `expand` (a function
    returning the name np.expand_dims has in the generated code), `g` with
    the reduced axis put back, `expand_dims(g, axis)`, for keepdims False
    with an int axis (np.expand_dims reads a negative axis against the
    result's rank, X's: the axis the reduction removed)."""
    if not (type(e) is gast.Call and type(e.func) is gast.Name and e.func.id in aliases
            and len(e.args) == 4 and not e.keywords and type(e.args[1]) is gast.Name):
        return None
    axis, keepdims = e.args[2], e.args[3]
    if type(axis) is not gast.Constant or type(keepdims) is not gast.Constant:
        return None
    if axis.value is None and keepdims.value is False:
        return e.args[0], e.args[1].id
    if keepdims.value is True and (axis.value is None or type(axis.value) is int):
        return e.args[0], e.args[1].id
    if keepdims.value is False and type(axis.value) is int and expand is not None:
        return ast_util.call(ast_util.name(expand()), [e.args[0], ast_util.const(axis.value)]), e.args[1].id
    return None


def _shaped_like(y, xs, choosers):
    """Does expression `y` surely have the shape shared by the names `xs`:
    one of them, `max_chooser(x, ...)` (a mask of x's shape), or one of
    them with a Python number (`2.0 * x`, `-x`)?"""
    if type(y) is gast.Name:
        return y.id in xs
    if type(y) is gast.Call:
        return (type(y.func) is gast.Name and y.func.id in choosers and bool(y.args)
                and type(y.args[0]) is gast.Name and y.args[0].id in xs)
    if type(y) is gast.UnaryOp:
        return type(y.op) is gast.USub and type(y.operand) is gast.Name and y.operand.id in xs
    if type(y) is gast.BinOp and type(y.op) in (gast.Mult, gast.Add, gast.Sub, gast.Div):
        sides = (y.left, y.right)
        return (any(type(a) is gast.Name and a.id in xs for a in sides)
                and any(type(a) is gast.Constant and type(a.value) in (int, float) for a in sides))
    return False


def unreduces_in_products(stmts, live_out, aliases, choosers, same_shape, sets=None, expand=None):
    """`unreduce(g, X, axis, keepdims) * Y`, where Y surely has X's shape
    (`_shaped_like`), becomes `Y * g`: NumPy's broadcasting in the product
    does what the unreduce did, without an array of X's shape (a full
    reduction's `np.sum(W * W)`, log-softmax's normaliser and max). Also
    when the unreduce is assigned to a name `t` read only by the next
    statement's product. Only the axis forms whose g broadcasts against
    X's shape as it is (`_unreduce_call`). The values and shape are those
    of the product before, and so is the dtype but in one case: a 0-d `g`
    (axis None) that is a Python float is weakly typed in the product (a
    float32 Y gives float32), where the unreduce made a float64 array of
    it (a float32 gradient was computed in float64, then cast back).
    `aliases`: the names generated code calls unreduce by; `choosers`:
    max_chooser's; `same_shape(x)`: the names known to have the shape of
    name x, x among them (shapes.py's sources). Returns the new list;
    nested blocks too; `sets` (liveness.Sets) forgets the statements
    rewritten. `expand`: a function giving the name of np.expand_dims in the
    generated code (the int-axis unreduces, _unreduce_call), or None."""
    if not aliases:
        return stmts
    sets = sets or Sets()
    rewrite = (aliases, choosers, same_shape, expand)
    counts = {name: 1 for name in live_out}     # (loads and stores: a t read once appears twice)
    found = False
    for st in stmts:            # one walk: the names' counts, and the products of an unreduce written inline
        nodes = ast_util.walk(st)
        changed = False
        for n in nodes:
            t = type(n)
            if t is gast.Name:
                counts[n.id] = counts.get(n.id, 0) + 1
            elif t is gast.Call and type(n.func) is gast.Name and n.func.id in aliases:
                found = True
            elif t is gast.BinOp and type(n.op) is gast.Mult and _rewrite_product(n, rewrite):
                changed = True
        if changed:
            for n in nodes:
                if isinstance(n, gast.stmt):
                    sets.forget(n)
    if not found:
        return stmts
    return _products_block(list(stmts), counts, rewrite, sets)


def _rewrite_product(node, rewrite, pending=None):
    """Rewrite the product `node` (in place) when a factor is an unreduce
    (or `pending[0]`, the name of the unreduce `pending[1]`) and the other
    has its operand's shape. An exact scaling of that other factor (`2 *
    x`, `-x`: a factor +-2**k) moves onto the unreduce's smaller operand,
    `x * (2 * g)`, the same values (scaling by 2**k only changes
    exponents) without a pass over x's shape (the adjoint of `x ** 2`
    under a sum). Returns 0 (unchanged), 1 (rewritten) or 2 (rewritten
    through the pending name)."""
    aliases, choosers, same_shape, expand = rewrite
    for side, other in (("left", "right"), ("right", "left")):
        e = getattr(node, side)
        through = pending is not None and type(e) is gast.Name and e.id == pending[0]
        found = _unreduce_call(pending[1] if through else e, aliases, expand)
        y = getattr(node, other)
        if found is not None and _shaped_like(y, same_shape(found[1]), choosers):
            # (Y first: with a NumPy scalar g on the left, `g * (2.0 * x)` allocates the product where
            # `(2.0 * x) * g` reuses the temporary, NumPy's elision: 345 vs 12 us for 51,200 float64s)
            g = found[0]
            scaled = _as_scaled(y)
            if scaled is not None and scaled.factor != 1 and scaled.name in same_shape(found[1]):
                y, g = ast_util.name(scaled.name), _Scaled(None, scaled.factor).scale(g)
            node.left, node.right = y, g
            return 2 if through else 1
    return 0


def _products_block(stmts, counts, rewrite, sets):
    """The products in the statement after `t = unreduce(...)` that read
    t, t read nowhere else (nested blocks too)."""
    aliases = rewrite[0]
    _nested_blocks(stmts, lambda block: _products_block(block, counts, rewrite, sets))
    out = []
    k = 0
    while k < len(stmts):
        st = stmts[k]
        if type(st) is gast.Assign and len(st.targets) == 1 and type(st.targets[0]) is gast.Name \
                and counts.get(st.targets[0].id) == 2 and _unreduce_call(st.value, aliases, rewrite[3]) is not None:
            j = k + 1
            while j < len(stmts) and _is_comment(stmts[j]):
                j += 1
            nxt = stmts[j] if j < len(stmts) else None
            done = [_rewrite_product(n, rewrite, (st.targets[0].id, st.value))
                    for n in (ast_util.walk(nxt.value) if type(nxt) is gast.Assign else ())
                    if type(n) is gast.BinOp and type(n.op) is gast.Mult]
            if any(done):
                sets.forget(nxt)
            if 2 in done:
                k += 1          # (t is read nowhere else: its statement goes)
                continue
        out.append(st)
        k += 1
    return out


# ------------------------------------------------------------ sums of products

def _unbroadcast_of(e, aliases):
    """For `unbroadcast(t, x)` with a Name t: t's name, else None."""
    if (type(e) is gast.Call and type(e.func) is gast.Name and e.func.id in aliases and len(e.args) == 2
            and not e.keywords and type(e.args[0]) is gast.Name):
        return e.args[0].id
    return None


def unbroadcast_products(stmts, live_out, aliases, helper, sets=None):
    """`t = a * b` whose only reader is a later statement's
    `unbroadcast(t, x)` in the same block (no statement between assigning
    a name the product reads) becomes `unbroadcast_product(a, b, x)` there
    (rules/helpers/broadcast.py): a product summed as a contraction,
    without the product's array where that is large (k-means' (n, k, d)
    products summed over the points, in its gradient and in the tangent of
    that gradient). The same values up to rounding; where the helper's
    conditions fail, the same calls. The rules' own `unbroadcast(g * y,
    x)` are left alone: on small arrays the helper's checks cost more than
    the product (a call more per product rule). `aliases`:
    the names generated code calls unbroadcast by (the unbatched helper);
    `helper()` gives (injecting it) unbroadcast_product's name; nested
    blocks too. Returns the new list; `sets` (liveness.Sets) forgets the
    statements rewritten."""
    if not aliases:
        return stmts
    sets = sets or Sets()
    counts = {name: 1 for name in live_out}     # (loads and stores: a t read once appears twice)
    found = False
    for st in stmts:
        for n in ast_util.walk(st):
            t = type(n)
            if t is gast.Name:
                counts[n.id] = counts.get(n.id, 0) + 1
            elif t is gast.Call and type(n.func) is gast.Name and n.func.id in aliases:
                found = True
    if not found:
        return stmts
    return _sums_of_products_block(list(stmts), counts, aliases, helper, sets)


def _product(e):
    return type(e) is gast.BinOp and type(e.op) is gast.Mult


def _sums_of_products_block(stmts, counts, aliases, helper, sets):
    _nested_blocks(stmts, lambda block: _sums_of_products_block(block, counts, aliases, helper, sets))
    # products named: t = a * b, ..., r = ... unbroadcast(t, x) ...
    dropped = set()
    for k, st in enumerate(stmts):
        if not (type(st) is gast.Assign and len(st.targets) == 1 and type(st.targets[0]) is gast.Name
                and _product(st.value) and counts.get(st.targets[0].id) == 2):
            continue
        t = st.targets[0].id
        reads = ast_util.names_loaded(st.value)
        for j in range(k + 1, len(stmts)):
            later = stmts[j]
            if _is_comment(later):
                continue
            if type(later) is not gast.Assign:
                break           # (a block, a push, a return: left as it is)
            calls = [n for n in ast_util.walk(later.value) if _unbroadcast_of(n, aliases) == t]
            if calls:
                call = calls[0]
                call.func = ast_util.name(helper())
                call.args = [st.value.left, st.value.right, call.args[1]]
                sets.forget(later)
                dropped.add(k)
                break
            if t in ast_util.names_loaded(later.value) or ast_util.names_stored(later) & (reads | {t}):
                break
    return [st for k, st in enumerate(stmts) if k not in dropped]


# ------------------------------------------------------------ freeing

def _is_reverse_marker(s):
    return (isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant)
            and isinstance(s.value.value, str) and s.value.value.startswith(ast_util.COMMENT_PREFIX + "Reverse sweep"))


def free_dead(body, params, sets=None):
    """`body` (a function's statements) with `del` statements freeing the
    values the rest of the function no longer reads, right after their last
    reader at the top level: an adjoint's temporaries (cotangents of whole
    arrays, the residuals it has consumed) would otherwise live until the
    function returns, and the peak memory is their sum. Only names bound by
    a top-level assignment before that point are freed (so they are bound
    on every path), never the parameters; in the reverse sweep only (after
    its `# Reverse sweep` comment; the forward one frees at its end)."""
    sets = sets or Sets()
    memo = {}           # (live_after's loops and branches, for what is live before them)
    after = live_after(body, set(), sets, memo)
    bound = set()
    out = []
    start = next((k for k, s in enumerate(body) if _is_reverse_marker(s)), len(body))
    for k, s in enumerate(body):
        out.append(s)
        if k < start:
            if isinstance(s, gast.Assign):
                bound |= {n.id for n in ast_util.walk(s.targets[0]) if isinstance(n, gast.Name)}
            elif isinstance(s, gast.Delete):
                bound -= {n.id for n in s.targets if isinstance(n, gast.Name)}
            continue
        if isinstance(s, gast.Return):
            continue
        before = live_before(s, after[k], sets, memo)
        dead = sorted((before - after[k]) & bound - set(params))
        if isinstance(s, gast.Assign):
            bound |= {n.id for n in ast_util.walk(s.targets[0]) if isinstance(n, gast.Name)}
            dead += sorted({n.id for n in ast_util.walk(s.targets[0]) if isinstance(n, gast.Name)}
                           - after[k] - set(params) - set(dead))     # assigned and never read
        if dead and not isinstance(s, gast.Delete):
            out.append(ast_util.delete(dead))
    return out


def _hoistable_push(s, temp, value):
    """Is `s` a forward sweep's `push(S, x)` (or `push(S, ShapeOf(x))`) that
    may run before `temp = value` instead of after it: it does not read
    `temp`, and `value` does not read the stack (a pop). (Pushing a name
    before an in-place write into its buffer pushes the same buffer.)"""
    if not (isinstance(s, gast.Expr) and Anno.PUSH.of(s) is not None and isinstance(s.value, gast.Call)
            and len(s.value.args) == 2 and isinstance(s.value.args[0], gast.Name)):
        return False
    pushed = liveness.uses(s.value)
    return temp not in pushed and s.value.args[0].id not in liveness.uses(value) \
        and not any(isinstance(n, gast.NamedExpr) for n in ast_util.walk(value))


def _pair_at(stmts, k):
    """The index of the copy `x = t` that pairs with `t = e` at k (right
    after it, or after one push that may move before it), or None."""
    s = stmts[k]
    if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
        return None
    t = s.targets[0].id
    if k + 1 < len(stmts) and _is_copy(stmts[k + 1]) and stmts[k + 1].value.id == t:
        return k + 1
    if (k + 2 < len(stmts) and _is_copy(stmts[k + 2]) and stmts[k + 2].value.id == t
            and _hoistable_push(stmts[k + 1], t, s.value)):
        return k + 2
    return None


def _pairs_anywhere(stmts):
    """Is there a `t = e; x = t` pair in `stmts` or a block nested in them?"""
    for k, s in enumerate(stmts):
        if _pair_at(stmts, k) is not None:
            return True
        if isinstance(s, gast.If) and (_pairs_anywhere(s.body) or _pairs_anywhere(s.orelse)):
            return True
        if isinstance(s, (gast.For, gast.While)) and _pairs_anywhere(s.body):
            return True
    return False


def collapse_temporaries(stmts, live_out, sets=None, deleted=None):
    """`t = e; x = t` -> `x = e` where t is read nowhere after (ANF names
    every value; a loop's `setitem_H = setitem(H, ...); H = setitem_H`
    otherwise keeps the old array alive in `setitem_H` after the loop);
    also `t = e; push(S, ShapeOf(x)); x = t` -> `push(S, ShapeOf(x)); x = e`
    (the push of the old x, placed before the assignment to x).
    Nested blocks too; returns the new list."""
    if not _pairs_anywhere(stmts):
        return stmts            # (nothing to collapse: no liveness to compute)
    sets = sets or Sets()
    if deleted is None:         # (a name a `del` frees must stay assigned)
        deleted = {n.id for s in ast_util.statements(stmts) if isinstance(s, gast.Delete)
                   for n in ast_util.walk(s)              # (only a `del` has Del names)
                   if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Del)}
    before = {}         # (live_after's loops, for their bodies' live_out)
    after = live_after(stmts, live_out, sets, before)
    for k, s in enumerate(stmts):
        if isinstance(s, gast.If):
            s.body = collapse_temporaries(s.body, after[k], sets, deleted)
            s.orelse = collapse_temporaries(s.orelse, after[k], sets, deleted)
        elif isinstance(s, (gast.For, gast.While)):
            s.body = collapse_temporaries(s.body, live_before(s, after[k], sets, before), sets, deleted)
    out = []
    k = 0
    while k < len(stmts):
        s = stmts[k]
        j = _pair_at(stmts, k)
        nxt = stmts[j] if j is not None else None
        if (nxt is not None and nxt.value.id not in after[j]
                and nxt.targets[0].id != nxt.value.id and nxt.value.id not in deleted):
            new = ast_util.assign(nxt.targets[0].id, s.value)
            ast_util.copy_location(new, s)
            out.extend(stmts[k + 1:j])      # (a push that moves before the assignment)
            out.append(new)
            k = j + 1
            continue
        out.append(s)
        k += 1
    return out


# ------------------------------------------------ specialisation to 0-d values

MATH_UFUNCS = {n for n in ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "sinh", "cosh", "expm1", "log1p",
                           "arctan", "arcsin", "arccos", "log10", "log2", "erf")
               if hasattr(np, n)}
MATH_NAMES = {"arctan": "atan", "arcsin": "asin", "arccos": "acos"}


class MathFunctions:
    """np.cos(x) -> math.cos(x) in the adjoint or tangent of a math-module
    call (whose operands are Python floats): `visit(node)` rewrites."""

    def __init__(self, np_aliases, math_alias):
        self.np_aliases, self.math_alias = np_aliases, math_alias

    def visit(self, node):
        """`node` rewritten (in place where its parents stay)."""
        return ast_util.rewrite_calls(node, self.call)

    def call(self, node):
        f = node.func
        if (isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name) and f.value.id in self.np_aliases
                and f.attr in MATH_UFUNCS and len(node.args) == 1 and not node.keywords
                and hasattr(math, MATH_NAMES.get(f.attr, f.attr))):
            node.func = gast.Attribute(value=ast_util.name(self.math_alias), attr=MATH_NAMES.get(f.attr, f.attr),
                                       ctx=gast.Load())
        return node


class ElideShapeHelper:
    """unbroadcast(g, x) -> g (broadcast_like(t, x) -> t in tangent code)
    where x is among `scalars` (known to be 0-d, and so is g; or known to
    have the shape g has: shapes.py), the calls named `aliases`:
    `visit(node)` rewrites."""

    def __init__(self, aliases, scalars):
        self.aliases = aliases
        self.scalars = scalars

    def visit(self, node):
        """`node` rewritten (in place where its parents stay)."""
        return ast_util.rewrite_calls(node, self.call)

    def call(self, node):
        if (isinstance(node.func, gast.Name) and node.func.id in self.aliases and len(node.args) == 2
                and isinstance(node.args[1], gast.Name) and node.args[1].id in self.scalars):
            return node.args[0]
        return node
