"""What generated code calls for the Python syntax the front end lowers:
`with` blocks, loops unrolled over objects, NumPy's index tricks.

Like srcgrad/runtime/core.py, no gast and no compiler here: generated code calls
these at run time (and generated code transformed again calls them too).
None has a derivative rule: `r_range` meeting a differentiated value raises
NoRuleError where the compiler classifies it (it is opaque), `with_enter`
and `column_shape` are non-differentiable (a context manager's value, a
shape), and the statements `with_exit(cm)`, `check_unrolled(...)`,
`check_not_shared(...)` and `check_loop_sequence(...)` run in the forward
sweep only.
"""
import threading

import numpy as np

from ..errors import UnsupportedSyntaxError
from . import namespaces
from .core import nondiff_helper

# ------------------------------------------------------------------ with

_contexts = threading.local()


def _stack():
    stack = getattr(_contexts, "stack", None)
    if stack is None:
        stack = _contexts.stack = []
    return stack


class with_enter:
    """`with cm as v:` in generated code: `v = with_enter(cm)` before the
    body (the context manager's __enter__), remembered so that an exception
    raised in the body still exits it (`unwind`). A class, so that the
    compiler reports a context manager built from differentiated values as
    an object it cannot differentiate (UnsupportedSyntaxError naming the
    `with` line): the context manager itself is never differentiated."""

    def __new__(cls, cm):
        value = type(cm).__enter__(cm)
        _stack().append(cm)
        return value


with_enter.__name__ = with_enter.__qualname__ = "with-statement target (with ... as v)"


def grad_of(x):
    """The place of a `with sg.insert_grad_of(x)` block in lowered code
    (lower.py); the forward sweeps drop it, so it never runs."""
    raise AssertionError("the insert_grad_of marker of srcgrad ran")


def with_exit(cm):
    """The end of a `with` body in generated code: the context manager's
    __exit__(None, None, None)."""
    stack = _stack()
    if stack and stack[-1] is cm:
        stack.pop()
    type(cm).__exit__(cm, None, None, None)


def depth():
    """How many `with` blocks of generated code are open (in this thread)."""
    return len(_stack())


def unwind(level, exc):
    """Exit, innermost first, the `with` blocks of generated code opened
    above `level` that an exception `exc` left: each __exit__ receives the
    exception, as in Python. A context manager that would suppress it
    (`contextlib.suppress`) cannot, since the generated function has already
    stopped: a RuntimeError says so."""
    stack = _stack()
    suppressed = []
    while len(stack) > level:
        cm = stack.pop()
        if type(cm).__exit__(cm, type(exc), exc, exc.__traceback__):
            suppressed.append(cm)
    if suppressed:
        raise RuntimeError("srcgrad: the context manager %r would suppress this exception, which generated code "
                           "cannot do; catch it outside the differentiated function" % suppressed[0]) from exc


# ------------------------------------------------------------------ unrolled loops

def check_unrolled(seq, objects, where):
    """Before a loop that the compiler unrolled over the objects of a list
    read from a global (or an attribute): the list still holds the same
    objects, else the compiled code is stale."""
    # (run in another array namespace, the list holds the functions' twins: runtime/namespaces.py)
    if len(seq) != len(objects) or any(a is not b and namespaces.original(a) is not b
                                       for a, b in zip(seq, objects)):
        raise RuntimeError(
            "srcgrad: the list iterated at %s changed (an element was replaced, added or removed) since srcgrad "
            "unrolled the loop over its %d objects; bind the name to a new list to recompile" % (where, len(objects)))


def check_length(seq, n, where):
    """Before a loop the compiler unrolled n times (zip of a known list of
    n objects with `seq`): `seq` has at least n elements (Python's zip
    would stop earlier, which the unrolled code cannot)."""
    if len(seq) < n:
        raise ValueError("srcgrad: the loop at %s was unrolled over %d objects, but a sequence zipped with them has "
                         "only %d elements" % (where, n, len(seq)))


# ------------------------------------------------------------------ views

def _elements(c):
    return c.values() if isinstance(c, dict) else c


def _holds(b, a):
    """Is container `a` the object `b` or (recursively) one of its elements?"""
    if b is a:
        return True
    return isinstance(b, (list, tuple, dict)) and any(_holds(e, a) for e in _elements(b))


def _shares(a, b):
    """Would an element assignment to `a` change `b` too? For a container
    `a` (whose assignment replaces an element), when `b` is `a` or holds it;
    for an array `a`, when it shares memory with `b` or one of its elements."""
    if isinstance(a, (list, tuple, dict)):
        return _holds(b, a)
    if isinstance(b, (list, tuple, dict)):
        return any(_shares(a, e) for e in _elements(b))
    if not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray):
        return False
    try:
        return bool(np.shares_memory(a, b, max_work=10 ** 6))
    except np.exceptions.TooHardError:
        return True


def check_not_shared(array, others, views):
    """Before an element assignment to `array` that the compiler lowered to
    a functional setitem: none of `others` (names still used afterwards)
    may share memory with it, since NumPy would change them too
    (`row = X[i]` is a view of a matrix's row, a copy of a vector's
    element). `views` is (the (construct, hint) of each other name, the
    user's (file, line, column)): raises UnsupportedSyntaxError naming them."""
    messages, origin = views
    for other, (construct, hint) in zip(others, messages):
        if _shares(array, other):
            raise UnsupportedSyntaxError(construct, *origin, hint, op_by_op=False)


def _floating(e):
    """Could `e`, an element of a list, carry a derivative (a float, a
    floating or complex array or number, a nested list of them)? Ints,
    None, strings and index lists cannot."""
    if type(e) in (list, tuple):
        return any(_floating(x) for x in e)
    if isinstance(e, (bool, int, str, bytes)) or e is None:
        return False
    dtype = getattr(e, "dtype", None)
    if dtype is not None:
        return getattr(dtype, "kind", "f") in "fcV" or not hasattr(dtype, "kind")
    return True


def check_numeric_result(value, origin):
    """After `t = a * b` or `t = a + b` that the compiler differentiates as
    NumPy's multiply or add, where it could not tell whether an operand is a
    list or tuple (an element of a container, a count it cannot see is an
    int): a list or tuple result was Python's repetition or concatenation,
    which the numeric rule would differentiate wrongly. Raises
    UnsupportedSyntaxError at the user's line (`origin`: file, line,
    column). A list of ints, None or strings (`cols[:j] + cols[j + 1:]` of
    indices) carries no derivative, and passes."""
    if type(value) in (list, tuple) and any(_floating(e) for e in value):
        raise UnsupportedSyntaxError(
            "list or tuple repetition or concatenation (`*`, `+`) on a value the compiler could not "
            "tell from an array (an element of a container, or a count not known to be an int)", *origin,
            "give the list a name of its own and repeat it by an int (ys = xs[0]; ys * 2, [a] * n "
            "with n = len(...)), or concatenate displays (xs + [b])", op_by_op=False)


def check_slot_not_shared(container, index, origin):
    """Before `xs[k] += v` (or `xs[k][i] = v`) that the compiler lowered to
    a functional write of slot k of a list, tuple or dict: when the slot
    holds an array, NumPy writes into that array in place, so every other
    slot holding it (or a view of it: `[np.zeros(3)] * 2`) changes too,
    which the compiled code would not do. Raises UnsupportedSyntaxError at
    the user's line (`origin`: file, line, column) then; anything else
    (an array `xs`, a slot holding a float, which += rebinds) passes."""
    if not isinstance(container, (list, tuple, dict)) or isinstance(index, slice):
        return
    try:
        slot = container[index]
    except (IndexError, KeyError, TypeError):
        return          # (the write itself raises Python's error)
    if not isinstance(slot, np.ndarray):
        return
    if isinstance(container, dict):
        others = [(k, v) for k, v in container.items() if k != index]
    else:
        position = index % len(container) if isinstance(index, (int, np.integer)) else None
        others = [(k, v) for k, v in enumerate(container) if k != position]
    for key, other in others:
        if other is slot or _shares(slot, other):
            raise UnsupportedSyntaxError(
                "writing into slot %r of a container whose slot %r holds the same array (or a view of it): "
                "NumPy would change both, srcgrad changes the one slot only" % (index, key), *origin,
                "fill the container with separate arrays ([np.zeros(n) for _ in range(k)], not "
                "[np.zeros(n)] * k), or rebind the slot (xs[i] = xs[i] + v)", op_by_op=False)


def check_loop_sequence(seq, origin):
    """Before `for x in seq`, which the compiler lowered to an index loop
    (`x = seq[i]` for i in range(len(seq))): `seq` must be indexable by
    position. A dict (Python iterates its keys), a set or an iterator
    raises UnsupportedSyntaxError at the user's loop (`origin`: file, line,
    column) instead of running a loop Python would not."""
    if isinstance(seq, (dict, set, frozenset)) or not hasattr(seq, "__len__") or not hasattr(seq, "__getitem__"):
        what = "a dict" if isinstance(seq, dict) else "a %s" % type(seq).__name__
        hint = ("iterate its keys or items explicitly: for k in d.keys(), for k, v in d.items()"
                if isinstance(seq, dict) else "make it a list first: for x in list(...)")
        raise UnsupportedSyntaxError("a for loop directly over %s" % what, *origin, hint, op_by_op=False)


# ------------------------------------------------------------------ np.r_ / np.c_

@nondiff_helper
def column_shape(a):
    """The shape np.c_ gives an item before joining: a 1-d array of length
    n becomes an (n, 1) column, a scalar (1, 1); others keep their shape."""
    shape = np.shape(a)
    if len(shape) == 0:
        return (1, 1)
    if len(shape) == 1:
        return (shape[0], 1)
    return shape


def r_range(start, stop, step):
    """A slice item of np.r_ / np.c_: `np.r_[start:stop:step]` (np.arange, or
    np.linspace for an imaginary step)."""
    return np.r_[slice(start, stop, step)]
