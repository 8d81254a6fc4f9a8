"""Rules for what generated code calls, so that it can be differentiated
again (higher derivatives compiled at every order).

Generated adjoint code is built from the rule templates' helpers
(unbroadcast, unreduce, conj, einsum_adjoint, ...) and from srcgrad/runtime/core.py (sparse
container cotangents, as_input). Each is linear in its cotangent argument,
so its adjoint is its transpose and its tangent is itself applied to the
tangent (Griewank & Walther, Evaluating Derivatives, 2008, sec. 3.1, 3.2):

    unbroadcast (sum back to x's shape)   <->  unbroadcast (broadcast back)
    unreduce (broadcast a reduction)      <->  rereduce (sum over its axes)
    conj                                  <->  conj
    densify, add_cotangents, as_input     <->  the identity / unbroadcast

Helpers not listed here are plain NumPy Python functions that the compiler
transforms like user code when generated code that calls them is
differentiated again. The stack operations `push`/`pop` are known to the
code generators (reverse.py, forward.py).
"""
from .. import runtime
from .helpers.broadcast import rereduce, unbroadcast, unreduce
from .helpers.complex import conj
from .helpers.products import einsum_adjoint, einsum_adjoint_tangent, einsum_adjoint_vjp
from .python.containers import cast_back
from .registry import register_adjoint, register_nondiff
from .tangents import declare_linear, register_linear, register_tangent

register_nondiff(runtime.ShapeOf, runtime.sparse_zeros, runtime.zeros_for, runtime.zeros_tree)


# ------------------------------------------------ broadcasting and reductions

@register_adjoint(unbroadcast)
def unbroadcast_(z, g, x):
    """Summing to x's shape and broadcasting back are each other's transpose."""
    d[g] = unbroadcast(d[z], g)


register_linear(unbroadcast)


@register_adjoint(unreduce)
def unreduce_(z, g, x, axis=None, keepdims=False):
    """unreduce broadcasts a reduction's cotangent over the reduced axes;
    its transpose sums over them (to g's shape)."""
    d[g] = rereduce(d[z], g, axis, keepdims)


register_linear(unreduce)


@register_adjoint(rereduce)
def rereduce_(z, h, g, axis=None, keepdims=False):
    """The transpose of rereduce is unreduce (broadcast back to h's shape)."""
    d[h] = unreduce(d[z], h, axis, keepdims)


register_linear(rereduce)


# -------------------------------------------- containers and gradient outputs

@register_adjoint(runtime.densify)
def densify_(z, g, x):
    """densify(g, x) is g (or zeros, which carry no derivative)."""
    d[g] = d[z]


register_linear(runtime.densify)


@register_adjoint(runtime.densify_tree)
def densify_tree_(z, g, x):
    d[g] = d[z]


register_linear(runtime.densify_tree)


@register_adjoint(runtime.add_cotangents)
def add_cotangents_(z, a, b):
    """A sum of cotangents (None is zero)."""
    d[a] = d[z]
    d[b] = d[z]


register_linear(runtime.add_cotangents, (0, 1))


@register_adjoint(runtime.as_input)
def as_input_(z, g, x):
    """as_input broadcasts g to x's shape and casts it to x's dtype: its
    transpose sums back and casts back."""
    d[g] = cast_back(unbroadcast(d[z], g), g)


register_linear(runtime.as_input)


@register_adjoint(runtime.as_input_tree)
def as_input_tree_(z, g, x):
    """as_input_tree fills a container gradient's symbolic zeros: the
    identity on what g holds."""
    d[g] = d[z]


register_linear(runtime.as_input_tree)


# ----------------------------------------------------- the complex convention

@register_adjoint(conj)
def conj_(z, x):
    """conj is real-linear and its own transpose."""
    d[x] = conj(d[z])


register_linear(conj)


# ----------------------------------------------------------- einsum's adjoint

@register_adjoint(einsum_adjoint)
def einsum_adjoint_(z, g, operands):
    """einsum's adjoint is multilinear in g and the operands (each entry one
    einsum): its VJP differentiates each entry's einsum the same way
    (rules/helpers/products.py einsum_adjoint_vjp). A primitive here, so that
    second-order code calls it rather than compiling its body (a third
    derivative, which would compile einsum_adjoint_vjp, is refused with
    UnsupportedSyntaxError)."""
    d[g] = einsum_adjoint_vjp(d[z][:], g, operands, True)
    d[operands] = einsum_adjoint_vjp(d[z][:], g, operands, False)


@register_tangent(einsum_adjoint)
def einsum_adjoint_tangent_(z, g, operands):
    t[z] = einsum_adjoint_tangent(t[g], t[operands], g, operands)


declare_linear(einsum_adjoint_tangent, (0, 1))
