"""Rule-table rows (tests/test_rules.py) for the primitives added by audit
11's fixes (tests/test_audit_rules.py has their regression tests):
einsum_adjoint, which np.einsum's adjoint calls and which has rules of its
own so that second-order code calls it rather than compiling its body.
Conventions as in tests/rulecase.py: `f_<name>(inputs..., w)` is
`np.sum(op(inputs) * w)`, the reference is the op in autograd.numpy.
"""
import autograd.numpy as anp
import numpy as np
from rulecase import Case, R

from srcgrad.rules.helpers.products import einsum_adjoint

C = Case


def f_einsum_adjoint(g, a, b, w):
    c = einsum_adjoint(g, ["ij,jk->ik", a, b])
    return np.sum(np.concatenate([np.ravel(c[1]), np.ravel(c[2])]) * w)


def _ag_einsum_adjoint(g, a, b):
    return anp.concatenate([anp.ravel(anp.dot(g, b.T)), anp.ravel(anp.dot(a.T, g))])


def f_einsum_adjoint_interleaved(g, a, w):
    c = einsum_adjoint(g, [a, [0, 1], a, [0, 1], [0]])      # einsum('ij,ij->i', a, a)
    return np.sum((c[0] + 2.0 * c[2]) * w)


def _ag_einsum_adjoint_interleaved(g, a):
    return 3.0 * g[:, None] * a


CASES = [
    C("audit_einsum_adjoint", f_einsum_adjoint, _ag_einsum_adjoint, (R(2, 4), R(2, 3), R(3, 4)),
      einsum_adjoint),
    C("audit_einsum_adjoint_interleaved", f_einsum_adjoint_interleaved, _ag_einsum_adjoint_interleaved,
      (R(3), R(3, 2)), einsum_adjoint),
]
