"""The operations of the intermediate form: what the right-hand side of an
ANF assignment computes (written by anf.py on `Anno.OP`, read by kinds,
activity, reverse and forward)."""
from dataclasses import dataclass, field

import gast

#: the kinds of Op, and what each computes
OP_KINDS = {
    "copy": "t = a (a name or a constant)",
    "rule": "a primitive with an adjoint rule (`rule`, `bindings` {param: expression})",
    "call": "a user function, transformed recursively (`callee`, `args`, `keywords`)",
    "nondiff": "a value with no derivative (an int, a flag, a shape, a comparison)",
    "opaque": "a callable srcgrad knows nothing about (`obj`): refused where its result is active",
    "pack": "a tuple, list or dict display of names (`args`)",
    "push": "an expression statement pushing `args[1]` on the stack `args[0]` (generated code)",
    "pop": "t = pop(stack) (generated code transformed again; `args[0]` the stack)",
}


@dataclass
class Op:
    """What the right-hand side of an ANF assignment computes (OP_KINDS)."""
    kind: str                       # a key of OP_KINDS
    rule: object = None             # "rule": the registry.Rule
    bindings: dict = field(default_factory=dict)   # "rule": {param: gast expression}
    callee: object = None           # "call": the user function (or custom_gradient function)
    args: list = field(default_factory=list)       # operands, in order
    keywords: dict = field(default_factory=dict)   # "call": {name: gast expression}
    obj: object = None              # "opaque": what was called or read
    source: str = ""                # a short name for temporaries and messages
    receiver: object = None         # "call" of a method: the example instance (`self`)
    custom: bool = False            # "call" of a custom_gradient function
    spec: tuple = None              # "call": (n extra positional, keyword names) for *args/**kwargs
    examples: dict = field(default_factory=dict)   # "call": {param: object} known at the call
    n_outputs: int = 1              # "call": 1, or k for a callee returning a k-tuple
    node: object = None             # "call": the gast Call
    python_float: bool = False      # "rule": a math-module function on Python floats
    checkpoint: bool = False        # "call" of sg.checkpoint(f): reversed by re-running f (joint)
    arg_dynamic: tuple = ()         # "call" (kinds.py): which arguments may be containers
    checks: tuple = ()              # "call": ((param, argument, (names, messages, origin)), ...): the callee
    #                                 writes into param; its argument is dead unless it shares memory with names
    checked: tuple = ()             # "call": the params of `checks` whose test anf_calls.py put before the call

    def __post_init__(self):
        if self.kind not in OP_KINDS:
            raise ValueError("unknown Op kind %r" % (self.kind,))

    def operand_names(self):
        """Names whose cotangents this op contributes to, per differentiable operand."""
        if self.kind == "copy":
            return [self.args[0].id] if isinstance(self.args[0], gast.Name) else []
        if self.kind == "rule":
            out = []
            for p in self.rule.diff_params:
                e = self.bindings.get(p)
                if isinstance(e, gast.Name):
                    out.append(e.id)
                elif isinstance(e, (gast.List, gast.Tuple)):
                    # (nested displays too: einsum's operands ('i,i', [a, 2.0], b); left out, `a`
                    # looked inactive and its cotangent was dropped without a word)
                    out.extend(x.id for x in _display_names(e))
            return out
        if self.kind == "pack":
            return [n.id for n in self.args if isinstance(n, gast.Name)]
        if self.kind == "call":
            return [a.id for a in list(self.args) + list(self.keywords.values()) if isinstance(a, gast.Name)]
        if self.kind == "opaque":
            # no rule: tracked so that a differentiated use can be reported
            return [n.id for n in self.args if isinstance(n, gast.Name)]
        return []


def unknown_receiver_refusal():
    """(construct, hint) of the refusal of a method called on an object not
    known when compiling, with a differentiated argument (both modes)."""
    return ("a method call on an object not known when compiling (built inside the differentiated "
            "code, or taken from a container by a computed index)",
            "build objects outside and pass them in, or loop over a list of them directly "
            "(for layer in layers: srcgrad unrolls the loop, each call compiled for its object)")


def _display_names(e):
    """The Names in the list or tuple display `e` and the displays nested
    in it, in order."""
    for x in e.elts:
        if isinstance(x, gast.Name):
            yield x
        elif isinstance(x, (gast.List, gast.Tuple)):
            yield from _display_names(x)
