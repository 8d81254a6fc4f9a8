"""Activity analysis: which variables carry derivatives.

Requires: anf. A variable is *varied* when it depends differentiably on an
active input, and *useful* when an output depends differentiably on it;
*active* = varied and useful (Hascoet & Pascual, "The Tapenade automatic
differentiation tool", 2013, sec. 3). Integer indices, shapes, comparison
results and other non-differentiable values are never active, so they get no
adjoint code. The analysis is flow-insensitive (a name is varied if any of
its assignments is), which is conservative and exact for SSA'd straight-line
code.
"""
import gast


def _assignments(body):
    for s in body:
        for n in gast.walk(s):
            if isinstance(n, gast.Assign) and hasattr(n, "_sg_op"):
                yield n


def _targets(stmt):
    t = stmt.targets[0]
    return [e.id for e in t.elts] if isinstance(t, gast.Tuple) else [t.id]


def analyze(fdef, active_inputs, outputs, callee_outputs):
    """Return the set of active names.

    active_inputs: names of the inputs being differentiated. outputs: the
    returned names. callee_outputs(op, varied_mask) -> tuple of bools, which
    outputs of a user call are varied given which arguments are.
    """
    assigns = list(_assignments(fdef.body))
    varied = set(active_inputs)
    changed = True
    while changed:
        changed = False
        for s in assigns:
            op = s._sg_op
            targets = _targets(s)
            new = []
            if op.kind == "copy":
                if any(n in varied for n in op.operand_names()):
                    new = targets
            elif op.kind in ("rule", "opaque"):
                if any(n in varied for n in op.operand_names()):
                    new = targets
            elif op.kind == "call":
                mask = tuple(isinstance(a, gast.Name) and a.id in varied
                             for a in list(op.args) + list(op.keywords.values()))
                if any(mask):
                    outs = callee_outputs(op, mask)
                    new = [t for t, o in zip(targets, outs) if o] if len(targets) > 1 or len(outs) == 1 else \
                        (targets if any(outs) else [])
            elif op.kind in ("unpack", "pack"):
                names = [n.id for n in gast.walk(s.value) if isinstance(n, gast.Name)]
                if any(n in varied for n in names):
                    new = targets
            for t in new:
                if t not in varied:
                    varied.add(t)
                    changed = True
    useful = set(n for n in outputs if n in varied)
    changed = True
    while changed:
        changed = False
        for s in assigns:
            if not any(t in useful for t in _targets(s)):
                continue
            op = s._sg_op
            if op.kind in ("copy", "rule", "call", "opaque"):
                names = op.operand_names()
            elif op.kind in ("unpack", "pack"):
                names = [n.id for n in gast.walk(s.value) if isinstance(n, gast.Name)]
            else:
                names = []
            for n in names:
                if n in varied and n not in useful:
                    useful.add(n)
                    changed = True
    return varied & useful
