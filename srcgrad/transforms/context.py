"""The context a compilation passes to every pass: `transform(node, ctx)`.

One `Context` per generated artefact (a function, its argument kinds, the
mask of active inputs and the mode). Passes read what the passes before
them left here instead of keeping state of their own: facts about single
nodes are node annotations (syntax/anno.py), facts about the whole function
are the declared fields of `Facts` (`ctx.facts`), each naming the pass that
writes it. The hooks are how the compiler reaches the function layer
(srcgrad/function.py) without importing it: which callees are user code,
and the compiled derivatives of those callees.
"""
from dataclasses import dataclass, field
from typing import Any, Callable

from ..syntax import ast_util


@dataclass
class Context:
    parsed: Any                     # parse.Parsed: the function, its AST's origin and source lines
    namespace: Any                  # resolve.Namespace: the names the function sees (live)
    namer: Any                      # naming.Namer: one per generated artefact
    mode: str = "reverse"           # "reverse" (adjoint code) or "forward" (tangent code)
    mask: tuple = ()                # which inputs are active
    complex_mode: bool = False      # keep the conj() of TF's complex convention
    batched: bool = False           # reverse mode on a stack of cotangents (a leading batch axis)
    seeded: tuple = None            # the positions of the outputs given cotangents (None: all; others are 0)
    # reverse a recursive call jointly (its VJP re-runs it) rather than split: sg.jit's code, where a
    # residual holding the residuals of a call of the same function is a recursive type Numba cannot type
    joint_recursion: bool = False
    # hooks, set by the function layer
    callee: Callable = None         # obj -> CalleeInfo for a function srcgrad compiles, else None
    callee_outputs: Callable = None  # (op, mask) -> which outputs of the callee are active
    vjp_callee: Callable = None     # (op, mask) -> the callee's VJP function (called by generated code)
    split_callee: Callable = None   # (op, mask) -> the callee's artefact: its split `fwd` and `bwd_fn`
    jvp_callee: Callable = None     # (op, mask) -> the callee's JVP function (with .tuple_output)
    callee_dynamic: Callable = None  # op -> which outputs of the callee may be containers
    callee_leaves: dict = field(default_factory=dict)   # callee -> names passed for the Variables it reads
    transpose_jvp: Callable = None  # the run-time JVP of a primitive with no tangent rule (forward_mode.py)
    inputs: list = field(default_factory=list)     # parameters then leaves: the compiled code's inputs
    # filled in by the passes
    active: set = field(default_factory=set)        # activity.py: names that carry derivatives
    facts: "Facts" = field(default_factory=lambda: Facts())


@dataclass
class Facts:
    """Facts about the function being compiled, each written by one pass
    and read by the passes after it."""
    stacked: set = field(default_factory=set)       # anf: names assigned inside a branch or loop
    inputs: list = field(default_factory=list)      # anf: parameters and leaves, sorted
    containers: set = field(default_factory=set)    # anf: parameters that hold lists, tuples or dicts
    vector_inputs: set = field(default_factory=set)  # anf: active inputs of a user's vector space (containers
    #                                                   too): the one fact before activity the mask changes
    scalar_params: set = field(default_factory=set)  # anf: parameters given Python floats or ints
    stacks: set = field(default_factory=set)        # anf: the stack variables of generated code
    dynamic: set = field(default_factory=set)       # kinds: names that may hold a list, tuple or dict
    scalar: set = field(default_factory=set)        # kinds: names known to be 0-d
    shape_params: dict = field(default_factory=dict)  # anf: array parameter -> which of its axes have length 1
    same_shape: dict = field(default_factory=dict)  # shapes: id(assignment) -> operands shaped like its result
    shape_sources: dict = field(default_factory=dict)  # shapes: name -> names of its shape, or () for 0-d
    active_stacks: set = field(default_factory=set)  # activity: the stacks that carry derivatives
    recursive_residuals: bool = False   # reverse: a split call's residuals hold a recursive call's residuals
    walked: tuple = None    # kinds: (the ANF function, its walk), while no pass changes the tree (to reverse)

    def walk(self, fdef):
        """ast_util.walk(fdef), read from `walked` while that holds for `fdef`
        (shapes, the type check and reverse change no node before they read it)."""
        walked = self.walked
        if walked is not None and walked[0] is fdef:
            return walked[1]
        return ast_util.walk(fdef)


@dataclass
class CalleeInfo:
    """What the compiler needs to know about a function it compiles at a
    call site: `function` (what the call binds against: a Python function,
    or a srcgrad function object), `signature` (inspect.Signature),
    `n_outputs` (1, or k for a function returning a k-tuple) and `primal`:
    the callable computing its value when calling `function` would not do
    (its compiled primal, when it holds insert_grad_of blocks), else None;
    `writes`: the parameters the function writes into (element assignment,
    or `x += v` on a parameter, which NumPy does in place)."""
    function: Any
    signature: Any
    n_outputs: int = 1
    primal: Any = None              # what the forward sweep calls instead (insert_grad_of inside), or None
    writes: tuple = ()              # parameters it writes into (x[i] = v, x += v): NumPy changes the caller's
    grows: tuple = ()               # parameters it appends to or updates in place (xs.append(v), d.update())
