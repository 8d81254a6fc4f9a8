"""Complex-mode analysis: does a function build complex values itself?

Requires: resolve (calls carry Anno.CALLEE). Guarantees nothing on the tree:
`transform` returns True when the function, or a user function it calls
(one level), builds complex values from real ones: a complex literal, a
name or attribute mentioning `complex` (np.complex128, astype(complex)), or
a function whose results are complex for real arguments (np.fft, eig,
eigvals, roots). The generated adjoints then keep the conj() of TF's
complex convention (rules call `conj`, see rules/helpers_math.py); a
function of real arguments that builds no complex value leaves them out.

A callee's own callees are checked when the callee is compiled, and its
complex results carry complex dtypes the caller's argument kinds do not
see (docs: "Complex inputs").
"""
import gast

from ..syntax import ast_util
from ..syntax.anno import Anno

# functions whose results are complex for real arguments (and complex dtypes)
_COMPLEX_WORDS = {"fft", "csingle", "cdouble", "clongdouble", "eig", "eigvals", "roots"}


def mentions_complex(node):
    """Does the code of `node` build complex values itself (a complex
    literal, np.complex128, astype(complex), np.fft...)?"""
    for n in ast_util.walk(node):
        if isinstance(n, gast.Constant) and isinstance(n.value, complex):
            return True
        word = n.id if isinstance(n, gast.Name) else n.attr if isinstance(n, gast.Attribute) else ""
        if "complex" in word or word in _COMPLEX_WORDS:
            return True
    return False


def _callees_mention_complex(node, callee_parsed, nodes=None):
    seen = set()
    for n in nodes if nodes is not None else ast_util.walk(node):
        obj = Anno.CALLEE.of(getattr(n, "func", None)) if isinstance(n, gast.Call) else None
        if obj is None or id(obj) in seen:
            continue
        seen.add(id(obj))
        try:
            parsed = callee_parsed(obj)
        except Exception:       # (reported where the call is compiled)
            parsed = None
        if parsed is not None and mentions_complex(parsed.node):
            return True
    return False


def transform(parsed_node, resolved_node, callee_parsed, resolved_nodes=None):
    """True when the function (its parsed FunctionDef, as written, and its
    resolved one), or a user function it calls, builds complex values.
    callee_parsed(obj) -> the Parsed of the user function srcgrad compiles
    for a call of `obj`, or None; `resolved_nodes`: the walk of
    `resolved_node`, when the caller has it."""
    return mentions_complex(parsed_node) or _callees_mention_complex(resolved_node, callee_parsed, resolved_nodes)
