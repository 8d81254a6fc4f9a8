"""optimize.fold_scalings: exact scalings (negation, +-2**k) of a cotangent
moved onto constants, cheap operands and additions. The rewrite must give
the same bits and the same dtype as the code it replaces, on every operand
kind a reverse sweep may hold (floating arrays of either precision, boolean
and unsigned masks, Python and NumPy scalars, -0.0, inf and nan); and the
Hessians it speeds up must agree with finite differences and autograd.
"""
import itertools

import numpy as np
import pytest

import srcgrad as sg
from gradcheck import check_close
from srcgrad.syntax import ast_util
from srcgrad.transforms import optimize


def _src(stmts):
    return "\n".join(ast_util.to_source(s).strip() for s in stmts)


def _fold(code, live_out, cheap=()):
    stmts = ast_util.quote(code)
    cheap = set(cheap)
    return _src(optimize.fold_scalings(stmts, set(live_out), (lambda n: n in cheap) if cheap else None))


@pytest.mark.parametrize("code, live_out, cheap, expected", [
    # a negation into an addition, a subtraction, another negation, a constant
    ("t = -a\nu = x + t", "u", (), "u = x - a"),
    ("t = -a\nu = t + x", "u", (), "u = x - a"),
    ("t = -a\nu = x - t", "u", (), "u = x + a"),
    ("t = -a\nu = -t", "u", (), "u = a"),
    ("t = -a\nu = t * 100.0", "u", (), "u = a * -100.0"),
    ("t = a * 2\nu = 3 * t", "u", (), "u = 6 * a"),
    ("t = a * 2\nu = -t\nw = u * 0.5", "w", (), "w = a * -1.0"),
    # inline: the read sits inside an expression
    ("t = -a\nu = x + t * (2 * y)", "u", ("y",), "u = x + a * (y * -2.0)"),
    ("u = x + -a", "u", (), "u = x - a"),
    ("u = x - -a", "u", (), "u = x + a"),
    # onto a cheap operand (a residual), written with a float factor
    ("t = -a\nu = t * b", "u", ("b",), "u = a * (b * -1.0)"),
    ("t = a * b\nu = t * 2", "u", ("b",), "u = a * (b * 2.0)"),
    ("t = -g\nm = t * r\nn = m * 2\nu = -n", "u", ("r",), "u = g * (r * 2.0)"),
])
def test_folds(code, live_out, cheap, expected):
    assert _fold(code, live_out, cheap) == expected


@pytest.mark.parametrize("code, live_out, cheap", [
    ("t = -a\nu = t * b", "u", ()),                 # b is a cotangent: no cheaper place
    ("t = -a\nu = t * b\nw = t + 1", "u w", ("b",)),  # t read twice
    ("t = -a\nu = t", "u t", ()),                     # t returned
    ("t = -a\na = f(a)\nu = x + t", "u", ()),         # a changes between
    ("t = -a\ng(a)\nu = x + t", "u", ()),             # a call may change a in place
    ("t = -a\nu = f(t)", "u", ()),                    # a call reads t
    ("t = a * 3\nu = t * 2", "u", ()),                # 3 is not a power of two
    ("t = -a\nu = t - x", "u", ()),
    ("t = -a\nfor i in r:\n    u = x + t", "u", ()),  # read in a loop: -a once, not per iteration
    ("t = -a\nc = zero_at_in_place(c, 0)\nu = x + t", "u", ()),   # c may share a's buffer
    ("t = -a\ndel a\nu = x + t", "u", ()),
])
def test_does_not_fold(code, live_out, cheap):
    stmts = ast_util.quote(code)
    before = _src(stmts)
    cheap = set(cheap)
    after = _src(optimize.fold_scalings(stmts, set(live_out.split()), (lambda n: n in cheap) if cheap else None))
    assert after.replace("(", "").replace(")", "") == before.replace("(", "").replace(")", "")


_OPERANDS = {
    "f64": np.array([1.5, -0.0, 3e-300, np.inf, np.nan, -7.25]),
    "f32": np.array([1.5, -0.0, 3e-30, np.inf, -2.5, 1e30], dtype=np.float32),
    "bool": np.array([True, False, True, True, False, True]),
    "u8": np.array([200, 0, 1, 255, 128, 7], dtype=np.uint8),
    "i64": np.array([3, -4, 0, 2 ** 40, -1, 9]),
    "pyfloat": -2.75,
    "pyint": 3,
    "np64": np.float64(0.1),
    "c128": np.array([1 + 2j, -0.0 - 1j, 3, 0, 1j, -1]),
}

_CASES = [
    ("t = -a\nu = t * b", "u", ("b",)),
    ("t = a * b\nu = t * 2", "u", ("b",)),
    ("t = a * b\nu = -t", "u", ("b",)),
    ("t = -a\nm = t * b\nn = m * 4\nu = -n", "u", ("b",)),
    ("t = -a\nu = b + t", "u", ()),
    ("t = -a\nu = b - t", "u", ()),
    ("t = a * 0.5\nu = t * 100.0", "u", ()),
    ("t = -a\nu = b + t * (2 * b)", "u", ("b",)),
]


@pytest.mark.parametrize("code, live_out, cheap", _CASES)
def test_same_bits_and_dtype(code, live_out, cheap):
    """Run the code before and after the rewrite on cotangents `a` of each
    floating kind and operands `b` of every kind: equal bits, equal dtype."""
    stmts = ast_util.quote(code)
    before = _src(stmts)
    after = _src(optimize.fold_scalings(ast_util.quote(code), {live_out}, lambda n: n in cheap))
    assert after != before
    cotangents = ("f64", "f32", "pyfloat", "c128")
    checked = 0
    for ka, kb in itertools.product(cotangents, _OPERANDS):
        results = []
        if "2 * b" in before and kb in ("u8", "bool"):
            continue        # (the old code's own 2 * b wraps around in uint8)
        for text in (before, after):
            env = {"a": _OPERANDS[ka], "b": _OPERANDS[kb]}
            try:
                with np.errstate(all="ignore"):
                    exec(text, env)
            except TypeError:           # (-bool): both forms must refuse alike, or the new one computes
                results.append(TypeError)
                continue
            results.append(env[live_out])
        if results[0] is TypeError:
            continue
        old, new = results
        assert new is not TypeError, (ka, kb, after)
        if ka == "f32" and kb in ("bool", "u8", "i64") and "b *" in after:
            # (documented: a factor moved onto a boolean or integer residual is a float, so a
            # float32 cotangent times it is float64; the wider product, not different values)
            assert np.asarray(new).dtype == np.float64
            env = {"a": _OPERANDS[ka].astype(np.float64), "b": _OPERANDS[kb]}
            with np.errstate(all="ignore"):
                exec(before, env)
            old = env[live_out]
        assert np.asarray(old).dtype == np.asarray(new).dtype, (ka, kb, before, after)
        assert type(old) is type(new), (ka, kb)
        o, n = np.atleast_1d(np.asarray(old)), np.atleast_1d(np.asarray(new))
        same = (o == n) | (np.isnan(o) & np.isnan(n))
        assert same.all(), (ka, kb, old, new)
        if "c128" not in (ka, kb):
            # (complex products: equal up to the sign of a zero component, -(x*y) - 0*z)
            signs = np.signbit(o[o == 0]) == np.signbit(n[o == 0])
            assert signs.all(), (ka, kb, "signed zeros", old, new)
        checked += 1
    assert checked >= 20


def _powers(x):
    return np.sum(0.25 * x[:-1] ** 4 - (x[1:] - 2.0 * x[:-1]) ** 2 + np.sin(x[1:]) * x[:-1])


def _rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def _masked(x):
    m = x > 0.0
    return np.sum(-(x * x) * m - 0.5 * x ** 2 + np.where(m, x ** 3, -x))


@pytest.mark.parametrize("f", [_powers, _rosen, _masked])
def test_hessians_with_folded_sweeps(f):
    """sg.hessian (the batched sweep, where the folds move factors onto
    residuals) against autograd and a central difference of sg.grad."""
    autograd = pytest.importorskip("autograd")
    import autograd.numpy as anp
    x = np.random.default_rng(3).uniform(-1.5, 1.5, 12)
    h = sg.hessian(f)(x)
    grad = sg.grad(f)
    eps = 1e-6
    fd = np.array([(grad(x + eps * e) - grad(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])
    check_close(h, fd, rtol=1e-6, atol=1e-6)
    g = f.__globals__
    saved = g["np"]
    g["np"] = anp
    try:
        ref = autograd.hessian(f)(x)
    finally:
        g["np"] = saved
    check_close(h, ref, rtol=1e-12, atol=1e-12)
    check_close(h, h.T, rtol=1e-12, atol=1e-12)


def test_rosen_hessian_sweep_is_folded():
    """The batched sweep of the Rosenbrock Hessian has no negation left on
    a batched array: each is folded into a residual or a subtraction."""
    x = np.random.default_rng(0).uniform(-1.5, 1.5, 20)
    h = sg.hessian(_rosen)
    h(x)
    cells = dict(zip(h.__wrapped__.__code__.co_freevars, h.__wrapped__.__closure__)) \
        if hasattr(h, "__wrapped__") else dict(zip(h.__code__.co_freevars, h.__closure__))
    (program, compiled, _), = cells["fast"].cell_contents.values()
    bwd = ast_util.to_source(compiled.trees["grad__rosen_bwd"])
    assert "-bb" not in bwd and "+ -" not in bwd, bwd
    assert "* 2.0)" in bwd, bwd
