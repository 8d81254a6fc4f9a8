"""Arithmetic on nested values (numbers, arrays, tuples/lists/dicts of them),
for the gradient checks: random directions, x + s*v, the real inner
product, and "same space" (structure, shapes, real or complex).

Written from autograd's documented behaviour of `vspace`: `randn` draws
from NumPy's global generator (a complex value gets a real and an
imaginary standard normal part), the inner product of complex values is
`real(vdot(a, b))`.
"""
import numpy as np


def _is_container(x):
    return isinstance(x, (list, tuple, dict))


def _leaf(x):
    """A Tensor (anything with a .numpy() method that is not an ndarray) as an ndarray."""
    to_numpy = getattr(x, "numpy", None)
    if callable(to_numpy) and not isinstance(x, (np.ndarray, np.generic)):
        return np.asarray(to_numpy())
    return x


def as_numpy(x):
    """Tensors (anything with .numpy()) turned into ndarrays, containers kept."""
    if isinstance(x, dict):
        return {k: as_numpy(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(as_numpy(v) for v in x) if type(x) in (list, tuple) else tuple(as_numpy(v) for v in x)
    return _leaf(x)


def randn_like(x):
    if isinstance(x, dict):
        return {k: randn_like(x[k]) for k in x}
    if isinstance(x, (list, tuple)):
        return type(x)(randn_like(v) for v in x) if type(x) in (list, tuple) else tuple(randn_like(v) for v in x)
    a = np.asarray(x)
    if a.dtype.kind == "c":
        if a.ndim == 0 and not isinstance(x, np.ndarray):
            return complex(np.random.randn() + 1j * np.random.randn())
        return np.random.randn(*a.shape) + 1j * np.random.randn(*a.shape)
    if a.ndim == 0 and not isinstance(x, np.ndarray):
        return float(np.random.randn())
    return np.random.randn(*a.shape)


def zeros_like(x):
    if isinstance(x, dict):
        return {k: zeros_like(x[k]) for k in x}
    if isinstance(x, (list, tuple)):
        return type(x)(zeros_like(v) for v in x)
    a = np.asarray(x)
    if a.ndim == 0 and not isinstance(x, np.ndarray):
        return 0j if a.dtype.kind == "c" else 0.0
    return np.zeros(a.shape, a.dtype if a.dtype.kind in "fc" else float)


def ones_like(x):
    if isinstance(x, dict):
        return {k: ones_like(x[k]) for k in x}
    if isinstance(x, (list, tuple)):
        return type(x)(ones_like(v) for v in x)
    a = np.asarray(x)
    if a.ndim == 0 and not isinstance(x, np.ndarray):
        return 1.0 + 0j if a.dtype.kind == "c" else 1.0
    return np.ones(a.shape, a.dtype if a.dtype.kind in "fc" else float)


def add(x, v, s=1.0):
    """x + s * v, leaf by leaf (the structure of x)."""
    if isinstance(x, dict):
        return {k: add(x[k], v[k], s) for k in x}
    if isinstance(x, (list, tuple)):
        return type(x)(add(a, b, s) for a, b in zip(x, v))
    v = _leaf(v)
    if v is None:
        return x
    return x + s * v


def scale(x, s):
    if isinstance(x, dict):
        return {k: scale(x[k], s) for k in x}
    if isinstance(x, (list, tuple)):
        return type(x)(scale(a, s) for a in x)
    return s * _leaf(x)


def inner(a, b):
    """Real inner product sum(real(conj(a) * b)); None counts as zero."""
    if isinstance(a, dict):
        if not isinstance(b, dict):
            return 0.0 if b is None else float("nan")
        return sum(inner(a[k], b.get(k)) for k in a)
    if isinstance(a, (list, tuple)):
        if b is None:
            return 0.0
        if not isinstance(b, (list, tuple)) or len(b) != len(a):
            return float("nan")
        return sum(inner(x, y) for x, y in zip(a, b))
    a, b = _leaf(a), _leaf(b)
    if a is None or b is None:
        return 0.0
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind not in "fc" or b.dtype.kind not in "fc":
        return 0.0
    return float(np.real(np.vdot(np.ravel(np.broadcast_to(a, np.broadcast_shapes(a.shape, b.shape))),
                                 np.ravel(np.broadcast_to(b, np.broadcast_shapes(a.shape, b.shape))))))


def describe(x):
    """A short description of the space of x: structure, shapes, real/complex."""
    if isinstance(x, dict):
        return "{%s}" % ", ".join("%r: %s" % (k, describe(x[k])) for k in sorted(x, key=repr))
    if isinstance(x, (list, tuple)):
        inner_ = ", ".join(describe(v) for v in x)
        return ("[%s]" if isinstance(x, list) else "(%s)") % inner_
    x = _leaf(x)
    if x is None:
        return "None"
    a = np.asarray(x)
    return "%s%s" % ("complex" if a.dtype.kind == "c" else "real", list(a.shape))


def same_space(x, y):
    """True when x and y have the same structure, shapes, and real/complex kind."""
    if isinstance(x, dict) or isinstance(y, dict):
        return isinstance(x, dict) and isinstance(y, dict) and set(x) == set(y) and all(
            same_space(x[k], y[k]) for k in x)
    if isinstance(x, (list, tuple)) or isinstance(y, (list, tuple)):
        return isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)) and len(x) == len(y) and all(
            same_space(a, b) for a, b in zip(x, y))
    x, y = _leaf(x), _leaf(y)
    if x is None or y is None:
        return x is None and y is None
    a, b = np.asarray(x), np.asarray(y)
    return a.shape == b.shape and (a.dtype.kind == "c") == (b.dtype.kind == "c")


def leaves(x):
    if isinstance(x, dict):
        out = []
        for k in sorted(x, key=repr):
            out += leaves(x[k])
        return out
    if isinstance(x, (list, tuple)):
        out = []
        for v in x:
            out += leaves(v)
        return out
    return [_leaf(x)]
