"""Rule-test rows for np.convolve and np.correlate
(srcgrad/rules/numpy/linalg.py): every mode ('full', 'same', 'valid', and
the integers NumPy also takes), either operand the
longer, even and odd lengths (np.correlate's 'same' window depends on
both), a 0-d operand (np.convolve; np.correlate
refuses one), one operand constant.

autograd.numpy has no rule for either (autograd.scipy.signal.convolve has
another 'same'), so `ref` builds the full convolution with autograd
operations, sum_i a_i v shifted by i, and the full correlation as the full
convolution with conj(v) reversed (the definition in np.correlate's
docstring), and takes the slice NumPy's own output occupies in it (found on
the raw values: the reference does not restate the rule's offsets).
"""
import autograd.numpy as anp
import numpy as np
from rulecase import Case, ND, R, Static, _raw

C = Case


def f_convolve(a, v, w):
    return np.sum(np.convolve(a, v) * w)


def f_convolve_mode(a, v, mode, w):
    return np.sum(np.convolve(a, v, mode) * w)


def f_convolve_mode_kw(a, v, mode, w):
    return np.sum(np.convolve(a, v, mode=mode) * w)


def f_convolve_self(a, w):
    return np.sum(np.convolve(a, 2.0 * a, "same") * w)


def f_correlate(a, v, w):
    return np.sum(np.correlate(a, v) * w)


def f_correlate_mode(a, v, mode, w):
    return np.sum(np.correlate(a, v, mode) * w)


def f_correlate_mode_kw(a, v, mode, w):
    return np.sum(np.correlate(a, v, mode=mode) * w)


def f_correlate_of_products(a, b, v, w):
    return np.sum(np.correlate(a * b, np.tanh(v), "full") * w)


def _ag_full_convolution(a, v):
    a, v = anp.reshape(a, (-1,)), anp.reshape(v, (-1,))
    n, m = a.shape[0], v.shape[0]
    out = 0.0
    for i in range(n):
        out = out + a[i] * anp.concatenate([np.zeros(i), v, np.zeros(n - 1 - i)])
    return out


def _ag_numpy_slice(full, expected):
    """The slice of `full` whose values are NumPy's output `expected`."""
    raw, length = _raw(full), np.size(expected)
    for start in range(raw.shape[0] - length + 1):
        if np.allclose(raw[start:start + length], expected, rtol=1e-12, atol=1e-12):
            return full[start:start + length]
    raise AssertionError("NumPy's output is no slice of the full result")


def _ag_convolve(a, v, mode="full"):
    return _ag_numpy_slice(_ag_full_convolution(a, v), np.convolve(_raw(a), _raw(v), mode))


def _ag_correlate(a, v, mode="valid"):
    full = _ag_full_convolution(a, anp.conj(anp.reshape(v, (-1,)))[::-1])
    return _ag_numpy_slice(full, np.correlate(_raw(a), _raw(v), mode))


def _modes(kind, f, ref, shapes):
    """One row per mode for each (len(a), len(v)) in `shapes`."""
    rows = []
    for n, m in shapes:
        for mode in ("full", "same", "valid"):
            rows.append(C("%s_%s_%d_%d" % (kind, mode, n, m), f,
                          lambda a, v, mode, ref=ref: ref(a, v, mode),
                          (R(n), R(m), Static(mode)), getattr(np, kind)))
    return rows


CASES = [
    C("convolve_default_full", f_convolve, _ag_convolve, (R(5), R(3)), np.convolve),
    C("convolve_0d_operand", f_convolve, _ag_convolve, (R(4), R()), np.convolve),
    C("convolve_const_kernel", f_convolve_mode, lambda a, v, mode: _ag_convolve(a, v, "same"),
      (R(6), ND(3), Static("same")), np.convolve),
    C("convolve_mode_kw", f_convolve_mode_kw, lambda a, v, mode: _ag_convolve(a, v, "valid"),
      (R(4), R(6), Static("valid")), np.convolve),
    C("convolve_mode_int", f_convolve_mode, lambda a, v, mode: _ag_convolve(a, v, "same"),
      (R(3), R(4), Static(1)), np.convolve),
    C("convolve_self", f_convolve_self, lambda a: _ag_convolve(a, 2.0 * a, "same"), (R(5),),
      (np.convolve, np.multiply)),
    C("correlate_default_valid", f_correlate, _ag_correlate, (R(6), R(3)), np.correlate),
    C("correlate_mode_int_valid", f_correlate_mode, lambda a, v, mode: _ag_correlate(a, v, "valid"),
      (R(3), R(5), Static(0)), np.correlate),
    C("correlate_mode_kw_same", f_correlate_mode_kw, lambda a, v, mode: _ag_correlate(a, v, "same"),
      (R(4), R(7), Static("same")), np.correlate),
    C("correlate_const_a", f_correlate_mode, lambda a, v, mode: _ag_correlate(a, v, "full"),
      (ND(5), R(2), Static(2)), np.correlate),
    C("correlate_of_products", f_correlate_of_products,
      lambda a, b, v: _ag_correlate(a * b, anp.tanh(v), "full"), (R(4), R(4), R(3)),
      (np.correlate, np.multiply, np.tanh)),
]
# every mode, a the longer or the shorter, even and odd lengths
CASES += _modes("convolve", f_convolve_mode, _ag_convolve, [(5, 3), (2, 5), (4, 4)])
CASES += _modes("correlate", f_correlate_mode, _ag_correlate, [(5, 2), (4, 6), (3, 5), (2, 3)])
