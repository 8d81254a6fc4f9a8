"""Minimal reproducers of the failure causes the harness finds: each a few
lines of plain NumPy through srcgrad's public API, asserting the right
answer (a hand derivation, or what srcgrad itself or autograd gives on an
equivalent path). While the cause is there the snippet raises; when srcgrad
is fixed it passes (the report then says "passes (fixed?)").

`match`: regular expressions over a cause key of report.causes() followed
by the names of the functions it holds; a cause that matches is
attributed to the reproducer. A reproducer without `match` documents a
finding that the counts do not include (see its note).
"""

REPRODUCERS = [
    {
        "id": "jvp-dict-primal",
        "title": "sg.jvp with a dict primal and tangent crashes in float()",
        "match": [r"refused in forward / jvp: TypeError: float\(\) argument must be a string or a real number, "
                  r"not 'dict'"],
        "note": "dict_saxpy and nested_dict (their dict argument) in forward mode; not in Tangent's forward "
                "selection (Tangent tests forward mode on scalar arguments only). A tuple primal works, and "
                "sg.grad takes the same dicts (its gradient is a dict); API.md's jvp speaks of arrays.",
        "code": """
import numpy as np, srcgrad as sg
def f(p):
    return p["a"] * p["b"]
y, t = sg.jvp(f, ({"a": 2.0, "b": 3.0},), ({"a": 1.0, "b": 0.0},))   # d/da (a b) = b
assert np.isclose(t, 3.0), t
""",
    },
    {
        "id": "grad-of-jvp-transpose",
        "title": "sg.grad of a function returning sg.jvp's tangent: no adjoint rule for transpose_jvp",
        "match": [r"transpose_jvp"],
        "note": "Reverse over forward (an extra second-order check, as Tangent's HVP tests run it), on functions "
                "reading their argument through np.array / np.atleast_1d/2d/3d (cast_sum_, numpy_atleast_*). "
                "sg.hvp (forward over reverse), sg.hessian and grad of grad agree on the same functions.",
        "code": """
import numpy as np, srcgrad as sg
def f(x):
    return np.sum(np.atleast_1d(x) ** 2)
def jvp_f(x, v):
    return sg.jvp(f, (x,), (v,))[1]          # 2 x . v
x, v = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 3.0])
assert np.allclose(sg.grad(jvp_f)(x, v), 2 * v)
""",
    },
    {
        "id": "hvp-stack-pop",
        "title": "sg.hvp refuses a function popping from a stack object that sg.grad(sg.grad(f)) and sg.hessian "
                 "differentiate op by op",
        "match": [r"hvp \(fwd over rev\): UnsupportedSyntaxError: stack\.pop"],
        "note": "Tangent's stack_pushing, useless_stack_ops and redefining_var_as_list (tangent.push/pop on a "
                "tangent.Stack; here the harness's shim of them) in the extra forward-over-reverse check. API.md: "
                "what the compiler cannot see statically runs op by op rather than being refused; sg.grad, "
                "sg.jvp, grad of grad and sg.hessian do so on these functions, sg.hvp raises.",
        "code": """
import numpy as np, srcgrad as sg
class Stack:
    def __init__(self):
        self.items = []
    def append(self, x):
        self.items.append(x)
    def pop(self):
        return self.items.pop()
def push(stack, x):
    stack.append(x)
def pop(stack):
    return stack.pop()
def f(a):
    stack = Stack()
    push(stack, a)
    b = pop(stack)
    return a * a * b                                # a**3: f'' = 6 a
assert np.isclose(sg.grad(sg.grad(f))(1.5), 9.0)   # works (op by op)
assert np.isclose(sg.hessian(f)(1.5), 9.0)         # works (op by op)
assert np.isclose(sg.hvp(f)(1.5, 1.0), 9.0)
""",
    },
    {
        "id": "arcsin-arccos-boundary",
        "title": "the gradient of arcsin/arccos at +-1 (an infinite slope) is a finite 1.6e16 / 8.2e15",
        "match": [],
        "note": "Not counted (no finite derivative exists there: the harness marks these points `undefined`); "
                "seen as autograd's inf against srcgrad's finite value at a = 1 and -1 (numpy_arcsin) and a = -1 "
                "(numpy_arccos). The adjoint rules use 1 / cos(arcsin x) and -1 / sin(arccos x), which round to "
                "6e-17 and 1.2e-16 instead of 0; srcgrad's own tangent rule (sg.jvp) gives inf.",
        "code": """
import numpy as np, srcgrad as sg
def f(a):
    return np.arcsin(a)
def g(a):
    return np.arccos(a)
for a in (1.0, -1.0):
    assert np.isinf(sg.jvp(g, (a,), (1.0,))[1])     # forward mode: inf
    assert np.isinf(sg.grad(f)(a)), (a, sg.grad(f)(a))
    assert np.isinf(sg.grad(g)(a)), (a, sg.grad(g)(a))
""",
    },
]
