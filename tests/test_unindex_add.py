"""A loop reading x[i] at each step: the reverse sweep's `bx = bx +
unindex(g, x, i)` allocated two arrays of x's size per step (O(n * x.size)
for n steps). Where the in-place proof holds (transforms/inplace.py:
nothing reads the old bx again, it is not the caller's), it is
`unindex_add(bx, g, x, i)`, which adds g into bx at i (O(1) per read of an
element). Checked: the rewrite happens, values equal autograd's and
central differences (float64, float32, complex, rows, negative and
repeated indices), second order through it (the sum it stands for when the
code is differentiated again), a persistent tape's two
gradients, sg.jit's twin, and when unindex_add writes in place (the
scaling is measured in benchmarks/, not asserted here)."""
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg

from gradcheck import check_close, numerical_grad


def chain(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] ** 2 * x[i - 1]
    return s


def rows(W, x):
    s = 0.0
    for i in range(W.shape[0]):
        s = s + np.sum(np.tanh(W[i] * x[i])) * W[i, 0]
    return s


def repeated(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[0] * x[i] + x[-1] ** 3
    return s


def _autograd_of(f):
    return type(f)(f.__code__, dict(f.__globals__, np=anp), f.__name__)


def test_the_reverse_sweep_adds_in_place():
    x = np.linspace(-1.0, 1.0, 7)
    source = sg.source(chain, args=(x,))
    assert source.count("unindex_add(bx, ") == 2 and "+ unindex(" not in source


@pytest.mark.parametrize("n", [1, 2, 9])
def test_values(n):
    rng = np.random.default_rng(n)
    x, W = rng.standard_normal(n), rng.standard_normal((n, 3))
    for f, args in ((chain, (x,)), (repeated, (x,)), (rows, (W, x))):
        wrt = tuple(range(len(args))) if len(args) > 1 else 0
        got = sg.grad(f, wrt=wrt)(*args)
        want = autograd.grad(_autograd_of(f), argnum=wrt)(*args)
        if wrt == 0:
            got, want = (got,), (want,)
        for a, b in zip(got, want):
            check_close(a, b, rtol=1e-12, atol=1e-12)
        check_close(got[0], numerical_grad(lambda v: f(v, *args[1:]), args[0]), rtol=1e-6, atol=1e-7)


def test_float32_and_complex():
    x32 = np.linspace(-1.0, 1.0, 6).astype(np.float32)
    g32 = sg.grad(chain)(x32)
    assert g32.dtype == np.float32
    check_close(g32, autograd.grad(_autograd_of(chain))(x32.astype(np.float64)), rtol=1e-5, atol=1e-5)
    xc = np.linspace(-1.0, 1.0, 5) + 0.5j * np.linspace(1.0, 2.0, 5)

    def real_chain(x):
        return np.real(chain(x) * np.conj(chain(x)))
    gc = sg.grad(real_chain)(xc)
    check_close(gc, np.conj(autograd.grad(_autograd_of(real_chain))(xc)), rtol=1e-10, atol=1e-10)


def test_second_order():
    x = np.linspace(-0.9, 1.1, 6)
    for f in (chain, repeated):
        check_close(sg.hessian(f)(x), autograd.hessian(_autograd_of(f))(x), rtol=1e-10, atol=1e-10)
        v = np.cos(np.arange(6.0))
        check_close(sg.hvp(f)(x, v), autograd.hessian_vector_product(_autograd_of(f))(x, v),
                    rtol=1e-10, atol=1e-10)


def test_a_persistent_tape_runs_the_sweep_twice():
    fn = sg.function(chain)
    x = sg.Variable(np.linspace(-1.0, 1.0, 5))
    with sg.GradientTape(persistent=True) as tape:
        y = fn(x)
    first = tape.gradient(y, x)
    second = tape.gradient(y, x)
    check_close(first, second, rtol=0, atol=0)
    check_close(first, autograd.grad(_autograd_of(chain))(x.numpy()), rtol=1e-12, atol=1e-12)


def test_jit_twin():
    pytest.importorskip("numba")
    rng = np.random.default_rng(0)
    W, x = rng.standard_normal((8, 3)), rng.standard_normal(8)
    jitted = sg.jit(sg.grad(rows, wrt=(0, 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        got = jitted(W, x)
    assert "unindex_add(" in jitted.source
    for a, b in zip(got, sg.grad(rows, wrt=(0, 1))(W, x)):
        check_close(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", ["element", "row", "negative", "read_only", "slice", "array_index",
                                  "complex_into_real", "other_shape", "float32", "float64_into_float32"])
def test_unindex_add_is_the_sum(case):
    """In place exactly when acc is a writeable array of x's shape and of
    the sum's dtype and the index is ints (acc itself returned); the sum,
    a new array, otherwise; the values of acc + unindex(g, x, index) in
    every case."""
    from srcgrad.rules.helpers.broadcast import unindex, unindex_add
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3))
    acc = rng.standard_normal((4, 3))
    g, index, in_place = 2.5, (1, 2), True
    if case == "row":
        g, index = rng.standard_normal(3), 2
    elif case == "negative":
        index = (-1, -3)
    elif case == "read_only":
        acc.flags.writeable = False
        in_place = False
    elif case == "slice":
        g, index = rng.standard_normal((2, 3)), slice(1, 3)
    elif case == "array_index":
        g, index, in_place = np.ones((2, 3)), np.array([1, 1]), False
    elif case == "complex_into_real":
        g, in_place = 1.0 + 2.0j, False
    elif case == "other_shape":
        acc, in_place = np.zeros(3), False
    elif case == "float32":
        x, acc, g = x.astype(np.float32), acc.astype(np.float32), np.float32(2.5)
    elif case == "float64_into_float32":       # (unindex gives float64 there: so does the sum)
        x, acc, in_place = x.astype(np.float32), acc.astype(np.float32), False
    want = acc + unindex(g, x, index)
    got = unindex_add(acc if case == "read_only" else acc.copy(), g, x, index) if not in_place else None
    if in_place:
        before = acc.copy()
        got = unindex_add(acc, g, x, index)
        assert got is acc and not np.array_equal(acc, before)
    check_close(got, want, rtol=0, atol=0)
    assert got.dtype == want.dtype


def test_jit_twin_reads_values_popped_from_stacks():
    """Under sg.jit, an index or cotangent popped from a stack that began
    at None is an Optional: the twin reads its value and adds in place (it
    summed a new array at each read: 10.6 ms instead of 0.5 ms for 4000
    steps), with sg.grad's values."""
    pytest.importorskip("numba")

    def pairs(x):
        s = 0.0
        for i in range(1, x.shape[0]):
            d = x[i] - x[i - 1]
            s = s + d * d + np.sin(x[i]) * x[i - 1]
        return s
    x = np.random.default_rng(5).standard_normal(40)
    jitted = sg.jit(sg.grad(pairs))
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        got = jitted(x)
    assert "_stack__sub_i.append(sub_i)" in jitted.source and "unindex_add(" in jitted.source
    check_close(got, sg.grad(pairs)(x), rtol=1e-12, atol=1e-12)
    check_close(got, autograd.grad(_autograd_of(pairs))(x), rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------- whole programs

def alias(x):
    y = x
    s = 0.0
    for i in range(x.shape[0]):
        s = s + y[i] * x[i - 1] + np.sum(y) * 0.1
    return s


def whole_and_elements(x, W):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * np.sum(W @ x) + W[i % 3, 1] * x[-i]
    return s


def helper(v, k):
    t = 0.0
    for j in range(v.shape[0]):
        t = t + v[j] * v[(j + k) % v.shape[0]]
    return t


def twice(x):
    return helper(x, 1) * helper(x, 2) + helper(x * x, 0)


def grid(A):
    s = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            s = s + A[i, j] * A[j % A.shape[0], i % A.shape[1]] + np.tanh(A[i, j])
    return s


PROGRAMS = {"alias": (alias, lambda r: (r.standard_normal(6),)),
            "whole_and_elements": (whole_and_elements, lambda r: (r.standard_normal(5), r.standard_normal((3, 5)))),
            "twice": (twice, lambda r: (r.standard_normal(7),)),
            "grid": (grid, lambda r: (r.standard_normal((3, 4)),))}


def _autograd_program(f):
    namespace = dict(f.__globals__, np=anp)
    namespace["helper"] = type(f)(helper.__code__, namespace, "helper")
    return type(f)(f.__code__, namespace, f.__name__)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_every_path(name):
    """An alias of the array read, the whole array read in the same loop,
    a callee reading elements called three times, a 2-d grid (index tuples
    that are Optional under Numba): sg.grad, sg.hessian, a persistent
    tape's two gradients and sg.jit (compiled, no fallback) give
    autograd's values."""
    f, make = PROGRAMS[name]
    args = make(np.random.default_rng(11))
    wrt = tuple(range(len(args)))
    want = autograd.grad(_autograd_program(f), argnum=wrt)(*args)
    got = sg.grad(f, wrt=wrt)(*args)
    got = got if isinstance(got, tuple) else (got,)
    for a, b in zip(got, want):
        check_close(a, b, rtol=1e-11, atol=1e-12)
    check_close(sg.hessian(f)(*args), autograd.hessian(_autograd_program(f))(*args), rtol=1e-9, atol=1e-10)
    fn = sg.function(f)
    variables = [sg.Variable(a) for a in args]
    with sg.GradientTape(persistent=True) as tape:
        y = fn(*variables)
    for _ in range(2):
        for a, b in zip(tape.gradient(y, variables), want):
            check_close(a, b, rtol=1e-11, atol=1e-12)
    pytest.importorskip("numba")
    jitted = sg.jit(sg.grad(f, wrt=wrt))
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.PerformanceWarning)
        compiled = jitted(*args)
    compiled = compiled if isinstance(compiled, tuple) else (compiled,)
    for a, b in zip(compiled, want):
        check_close(a, b, rtol=1e-11, atol=1e-12)
