"""The names of Google Tangent's package that tests/functions.py uses, for
importing it without Tangent installed.

Tangent (2017) needs gast 0.2 and TensorFlow-era dependencies; srcgrad needs
gast >= 0.6, so the two cannot share an environment. functions.py imports
`tangent` and `from tangent import insert_grad_of`, decorates one
TensorFlow-only helper with `@tangent.trace`, and three of its functions
(stack_pushing, useless_stack_ops, redefining_var_as_list) call
`tangent.Stack()`, `tangent.push` and `tangent.pop`. Those five names are
written here after Tangent's tangent/utils.py and tangent/tracing.py (same
behaviour, our code); nothing else of Tangent is provided. The harness puts
this module in sys.modules["tangent"] only while functions.py is imported.
"""
import srcgrad as sg


class Stack(object):
    """A list used as a stack, as Tangent's `tangent.Stack`."""

    def __init__(self, vals=()):
        self._stack = list(vals)

    def append(self, x):
        self._stack.append(x)

    def pop(self):
        return self._stack.pop()

    def __len__(self):
        return len(self._stack)


def push(stack, x, op_id):
    """As Tangent's `tangent.push` (with its debug-mode op_id pairing)."""
    stack.append((x, op_id))


def pop(stack, op_id):
    """As Tangent's `tangent.pop`: the last value pushed, checking the op_id."""
    value, pushed_op_id = stack.pop()
    assert pushed_op_id == op_id, "Wanted %s, got %s" % (op_id, pushed_op_id)
    return value


def trace(fn):
    """As Tangent's `tangent.trace`: marks the function (used on a TF-only helper)."""
    fn.should_trace = True
    return fn


class insert_grad_of(sg.insert_grad_of):
    """Tangent's `with insert_grad_of(x) as dx:` is srcgrad's
    `sg.insert_grad_of` (same meaning: the body runs in the backward pass on
    the adjoint of x). Entered in ordinary Python (the primal runs of finite
    differences and autograd) the body runs on x itself and changes nothing
    the function returns, which is what Tangent's tests get by stripping
    the block with `tangent.tangent(func)`.
    """

    def __enter__(self):
        return self.x
