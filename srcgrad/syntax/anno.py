"""Node annotations: the declared contract between passes.

Analyses annotate gast nodes and later passes read the annotations (TF
AutoGraph's `pyct/anno.py` pattern). Every key is a member of `Anno`, whose
value documents it and names the pass that writes it; a typo is an
AttributeError, not a silently missing fact. Facts about a whole function
are not node annotations: they are declared fields of `transforms.context.
Facts`.

Storage is a plain attribute on the node (`Anno.CALLEE.of(n)` reads
`n._sg_callee`), for speed: the compiler reads annotations millions of times
per second of transform time. `ast_util.clone` shares annotations between a
node and its copy (resolved objects are not copied); with
`annotations=False` it keeps ORIGIN only.
"""
import enum

_PREFIX = "_sg_"


class Anno(enum.Enum):
    """One annotation key per member: `of(node, default)`, `add_to(node,
    value)`, `exists(node)`, `delete(node)`."""

    ORIGIN = ("(filename, lineno, col) of the user's code a node comes from: stamped by parse.py on "
              "every node, inherited by replacement nodes (transforms/base.py), read by codegen for "
              "'# Grad of:' comments, linecache listings and error notes.")
    CALLEE = ("The object a call's `func` resolves to (a NumPy function, a user function, a srcgrad "
              "helper), set by resolve.py, anf.py and the lowering (lower/common.py `helper`); rules are "
              "chosen by it.")
    HELPER = ("True on a Name the compiler generated for a srcgrad run-time helper: its id is bound "
              "to CALLEE in the generated code's namespace (lowerings, anf.py, records.py).")
    METHOD = "The method name of a call `x.m(...)` on a value the compiler resolved (resolve.py)."
    OPAQUE_METHOD = ("True on a method call whose receiver is an object the compiler does not "
                     "differentiate (resolve.py); anf.py keeps it as an opaque call.")
    VALUE = ("The run-time object a constant expression stands for (a function passed on, an "
             "object built at transform time), set by anf.py; read for callee specialisation.")
    OP = "The `ops.Op` describing an ANF statement's single operation (anf.py)."
    COUNT = "On a `while` in ANF: the name of its trip counter (anf.py), reversed by reverse.py."
    NO_SAVE = "True on a statement whose old target value the reverse sweep never reads (anf.py)."
    ASSIGNED_ONCE = ("True on the assignment of a function's return value (lower/exits.py): it runs at most "
                     "once per call, over None, so the reverse sweep neither restores the old value nor "
                     "zeroes the cotangent after it (no other assignment of it ran).")
    FORWARD_ONLY = "True on a statement kept in the forward sweep only (prints, asserts; anf.py)."
    GRAD_OF = ("On the marker statement of `with sg.insert_grad_of(x) as bx:` (lower/withs.py): "
               "(x, the target name or None, the block's body).")
    OVER = ("On a lowered index loop (`for t in seq` -> `seq[i]`): the names of the sequences it "
            "reads (lower/for_loops.py); zip/enumerate loops list several. Read by resolve.py.")
    CHECKPOINTED = ("On a `for` loop written `for t in sg.checkpointed(it, snapshots=s)`: the snapshots "
                    "expression (a Constant, or the Name holding it) (lower/for_loops.py, kept by anf.py); "
                    "transforms/checkpointed.py reverses the loop by Revolve's schedule.")
    VIEW_CHECK = ("On an element assignment checked at run time against views: [(other name, "
                  "construct, hint)] (lower/views.py); lower/mutations.py emits the check.")
    DEAD_ARGS = ("On a call: (positions, keyword names) of its arguments that are local names whose "
                 "object nothing reads after the call (dead or rebound by the statement, no view of a live "
                 "name) (lower/views.py); a callee writing into such a parameter is not observable "
                 "(program.py).")
    UNSHARED_ARGS = ("On a call: {argument name: ((other name, ...), ((construct, hint), ...), origin)} for "
                     "arguments nothing reads after the call unless they share memory with the other names "
                     "(a helper's result may be a view of its argument: known at run time) (lower/views.py); "
                     "where the callee writes into such a parameter, anf_calls.py tests it before the call "
                     "(runtime.syntax.check_not_shared) and the write is not observable (program.py).")
    CONDITION = ("True on a test expression the lowering generated (a flag or a loop guard; "
                 "lower/exits.py).")
    DEFINED = ("On an element assignment or a statement with a call: the names assigned on every path "
               "to it (lower/views.py, which reads it: names unbound on some path are not checked at run "
               "time).")
    PUSH = "The stack name on a forward-sweep push statement (reverse.py), for dead-push removal."
    POP = "The stack name on a reverse-sweep pop statement (reverse.py), for dead-pop removal."
    VJP = "On a call of a user function: the callee's compiled VJP (reverse.py)."
    VJP_NAME = "On a call of a user function: the name its VJP has in the generated code (reverse.py)."
    MASK = "On a call of a user function: which of its arguments are active (reverse.py)."
    RESIDUALS = ("On a call of a user function reversed in split mode: the name holding the residuals "
                 "its forward sweep returned, which its reverse sweep reads (reverse.py).")
    FIRST = ("On a statement: the names whose adjoints it defines first, so that their first "
             "accumulation is an assignment (reverse.py).")
    JVP_CALL = "True on a generated JVP call of a user function (forward.py)."
    ACCUMULATIONS = ("On a generated FunctionDef: (names that may hold containers, cotangents of 0-d "
                     "names), set by pipeline.finish; sg.jit's linker finds with them the loop "
                     "accumulations `a = a + e` it writes `add_into(a, e)` (transforms/inplace.py "
                     "loop_accumulations_in_place, tools/linker.py).")

    def __init__(self, doc):
        self.attr = _PREFIX + self.name.lower()
        self.doc = doc

    def of(self, node, default=None):
        """The annotation on `node`, or `default`."""
        return getattr(node, self.attr, default)

    def add_to(self, node, value):
        """Annotate `node` with `value`; returns the node. A callee that is
        a tape's recording wrapper of a SciPy function (tape/scipy_calls.py)
        is annotated as the function itself."""
        if self is Anno.CALLEE:
            value = getattr(value, "__srcgrad_recorded__", value)
        setattr(node, self.attr, value)
        return node

    def exists(self, node):
        """Does `node` carry this annotation?"""
        return hasattr(node, self.attr)

    def delete(self, node):
        """Remove the annotation from `node` (no error if absent)."""
        node.__dict__.pop(self.attr, None)


#: the attribute names of every annotation (ast_util.clone drops all but ORIGIN's on request)
ATTRIBUTES = frozenset(a.attr for a in Anno)
