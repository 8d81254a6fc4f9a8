"""Rules for Python's builtins sum and sorted, and the run-time functions
they need (the notation is rules/numpy/__init__.py's).

sum(iterable, start) is linear: each element's cotangent is d[z] summed
back to its shape, and the tangent is the sum of the tangents. sorted is a
permutation (Python's sort is stable, so it is redone with the same key to
find it): each element gets the cotangent of the place it was sorted to.
The other builtins that reach differentiated code are non-differentiable
(len, range, int...: rules/nondiff.py) or lowered by the compiler (list,
tuple, dict, zip, enumerate: rules/python/containers.py).
"""
import builtins

import numpy as np

from ...runtime import nondiff_helper, zeros_tree
from ..helpers.broadcast import unbroadcast
from ..registry import register_adjoint
from ..tangents import register_tangent
from .containers import _SEQ


# ------------------------------------------------------------------------ sum

def sum_(iterable, start=0):
    """The built-in `sum` over a list/tuple of arrays or an array's rows."""
    return builtins.sum(iterable, start)


@register_adjoint(builtins.sum)
def builtin_sum(z, iterable, start=0):
    """d/dx_i sum(x) = 1 for every element (unbroadcast to its shape)."""
    d[iterable] = sum_adjoint(d[z], iterable)
    d[start] = unbroadcast(d[z], start)


def sum_adjoint(g, xs):
    """The cotangent of each element of `xs` in sum(xs)."""
    if isinstance(xs, _SEQ):
        return [unbroadcast(g, x) if zeros_tree(x) is not None else None for x in xs]
    return np.broadcast_to(g, np.shape(xs)) * 1


@register_tangent(builtins.sum)
def builtin_sum_tangent(z, iterable, start=0):
    t[z] = sum_(t[iterable], t[start])


# --------------------------------------------------------------------- sorted

@nondiff_helper
def sorted_positions(iterable, key, reverse):
    """For z = sorted(iterable, key=key, reverse=reverse): src[j], the index
    in `iterable` of z's element j, found by sorting the positions with the
    same key and order (Python's sort is stable, so this is the permutation
    sorted used)."""
    items = [np.asarray(x) if hasattr(x, "shape") else x for x in iterable]
    if key is None:
        return sorted(range(len(items)), key=lambda i: items[i], reverse=reverse)
    return sorted(range(len(items)), key=lambda i: key(items[i]), reverse=reverse)


@nondiff_helper
def sorted_inverse(iterable, key, reverse):
    """inverse[i]: the position in sorted(iterable, key, reverse) of the
    iterable's element i."""
    src = sorted_positions(iterable, key, reverse)
    inverse = [0] * len(src)
    for j, i in enumerate(src):
        inverse[i] = j
    return inverse


def sorted_adjoint(gs, iterable, key, reverse):
    """sorted is a permutation: the iterable's element i, which went to
    position inverse[i], gets that position's cotangent. For a list/tuple
    iterable the cotangent is a list; for an array (sorted over its first
    axis) the rows' cotangents stacked back in place."""
    if isinstance(iterable, dict):      # sorted(d): its keys, which carry no derivative
        return dict.fromkeys(iterable)
    inverse = sorted_inverse(iterable, key, reverse)
    back = [gs[j] for j in inverse]
    if isinstance(iterable, (list, tuple)):
        return back
    return np.stack(back)


@register_adjoint(builtins.sorted)
def sorted_(z, iterable, key=None, reverse=False):
    """The builtin sorted (a list of arrays or numbers, or the rows of an
    array) is a permutation: each element gets the cotangent of the place
    it was sorted to (Python's sort is stable, and is redone with the same
    key to find the permutation)."""
    d[iterable] = sorted_adjoint(d[z][:], iterable, key, reverse)
