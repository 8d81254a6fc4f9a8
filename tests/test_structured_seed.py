"""The structured seed of vectorised Jacobians (rules/helpers/diagonal.py).

sg.jacobian, sg.hessian and GradientTape.jacobian seed their one batched
reverse sweep with the identity's rows kept as a diagonal (DiagonalStack):
elementwise steps scale it in O(m), and the adjoint of a matrix product is
a row scaling instead of an m^3 product. Checked here:

* each operation the structure keeps gives exactly the dense stack's array
  (NaN where a factor is infinite or a divisor zero, as the dense zeros
  give), every other one runs on the dense array, `out=` included;
* the Jacobian of tanh(A @ x) * x never densifies the stack (the m^3
  product is gone: a spy on `dense`), on every path (sg.jacobian, the tape
  over a compiled function and op by op), and equals the hand-written
  Jacobian and the dense-seeded sweep (chunks: the identity's rows);
* sg.jacobian with the structured seed equals the dense-seeded sweep and
  autograd on the vector functions of test_jacobians.
"""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad as sg
import test_jacobians
from gradcheck import check_close
from srcgrad import jacobians
from srcgrad.callables import as_function
from srcgrad.rules.helpers import diagonal
from srcgrad.rules.helpers.diagonal import DiagonalStack

RNG = np.random.default_rng(11)


def _dense(d):
    d = np.asarray(d)
    return np.diag(d.ravel()).reshape((d.size,) + d.shape)


def _same(got, want):
    """Equal arrays, NaN where NaN, of the same shape and dtype."""
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


D1 = RNG.normal(size=5)
D2 = RNG.normal(size=(2, 3))


@pytest.mark.parametrize("d", [D1, D2, np.array(2.5), RNG.normal(size=4) + 1j * RNG.normal(size=4)],
                         ids=["1-d", "2-d", "0-d", "complex"])
def test_the_stack_is_the_dense_identity_scaled(d):
    g = DiagonalStack(d)
    assert g.shape == (np.size(d),) + np.shape(d) and g.dtype == d.dtype and g.ndim == 1 + np.ndim(d)
    assert np.shape(g) == g.shape and np.ndim(g) == g.ndim and np.size(g) == np.size(d) ** 2 and len(g) == d.size
    _same(np.asarray(g), _dense(d))
    _same(g.dense(np.complex128), _dense(d).astype(np.complex128))
    assert np.result_type(g, 1.0) == np.result_type(d, 1.0)


FACTORS = {
    "scalar": 1.5, "int": 3, "row": RNG.normal(size=5), "0-d array": np.array(-2.0),
    "complex": 0.5 - 2j, "bool": np.array([True, False, True, True, False]),
}


@pytest.mark.parametrize("name", list(FACTORS))
@pytest.mark.parametrize("ufunc", [np.multiply, np.divide], ids=["multiply", "divide"])
def test_scaling_keeps_the_structure_and_the_entries(name, ufunc):
    y = FACTORS[name]
    if ufunc is np.divide and name == "bool":
        y = np.array([1.0, 2.0, -1.0, 4.0, 0.5])
    g = DiagonalStack(D1)
    got = ufunc(g, y)
    assert isinstance(got, DiagonalStack)
    _same(got, ufunc(_dense(D1), y))
    if ufunc is np.multiply:
        got = y * g
        assert isinstance(got, DiagonalStack)
        _same(got, y * _dense(D1))


@pytest.mark.parametrize("y", [np.array([1.0, np.inf, 2.0, 1.0, 3.0]), np.array([1.0, 2.0, np.nan, 1.0, 3.0]),
                               np.inf], ids=["inf", "nan", "scalar inf"])
def test_a_factor_that_makes_the_zeros_nan_densifies(y):
    g = DiagonalStack(D1)
    with np.errstate(invalid="ignore"):
        got, want = g * y, _dense(D1) * y
    assert type(got) is np.ndarray and np.isnan(want).any()
    _same(got, want)


def test_a_zero_divisor_densifies():
    y = np.array([1.0, 0.0, 2.0, 1.0, 3.0])
    with np.errstate(invalid="ignore", divide="ignore"):
        got, want = DiagonalStack(D1) / y, _dense(D1) / y
        _same(got, want)
        _same(y / DiagonalStack(D1), y / _dense(D1))     # (the stack as divisor: 1/0 everywhere off it)
    assert type(got) is np.ndarray


def test_a_factor_along_the_batch_axis_densifies():
    y = RNG.normal(size=(5, 5))     # (varies by row: not one scaling of each row)
    got = DiagonalStack(D1) * y
    assert type(got) is np.ndarray
    _same(got, _dense(D1) * y)
    y3 = RNG.normal(size=3)         # (S's last axis: every row scaled the same way)
    got = DiagonalStack(D2) * y3
    assert isinstance(got, DiagonalStack)
    _same(got, _dense(D2) * y3)


def test_two_stacks():
    a, b = DiagonalStack(D1), DiagonalStack(-D1 * 3)
    for op in (np.add, np.subtract, np.multiply):
        got = op(a, b)
        assert isinstance(got, DiagonalStack)
        _same(got, op(_dense(D1), _dense(-D1 * 3)))
    with np.errstate(invalid="ignore"):
        got = a / b                 # (0 / 0 off the diagonal)
        _same(got, _dense(D1) / _dense(-D1 * 3))
    assert type(got) is np.ndarray
    other = DiagonalStack(D1[:4])
    with pytest.raises(ValueError):
        a + other


@pytest.mark.parametrize("d", [D1, D2, np.array(0.7), "fortran"], ids=["1-d", "2-d", "0-d", "fortran"])
def test_adding_a_dense_array_adds_the_diagonal(d):
    fortran = isinstance(d, str)
    d = RNG.normal(size=(3, 4)) if fortran else d
    g = DiagonalStack(d)
    y = RNG.normal(size=g.shape)
    if fortran:
        y = np.asfortranarray(y)
    for got, want in ((g + y, _dense(d) + y), (y + g, y + _dense(d)), (g - y, _dense(d) - y),
                      (y - g, y - _dense(d))):
        assert type(got) is np.ndarray
        np.testing.assert_allclose(got, want, rtol=0, atol=0)
    yc = y.astype(np.complex128) * 1j
    _same(g + yc, _dense(d) + yc)
    y0 = y.copy()
    g + y
    np.testing.assert_array_equal(y, y0)        # (the dense operand is not written)


def test_a_matrix_product_is_a_row_scaling():
    g = DiagonalStack(D1)
    B = RNG.normal(size=(5, 3))
    got = g @ B
    assert type(got) is np.ndarray
    np.testing.assert_allclose(got, _dense(D1) @ B, rtol=1e-15, atol=0)
    with np.errstate(invalid="ignore"):
        Binf = B.copy()
        Binf[2, 1] = np.inf
        _same(g @ Binf, _dense(D1) @ Binf)      # (0 * inf: NaN in the dense product)
    _same(B.T @ g, B.T @ _dense(D1))
    B32 = RNG.normal(size=(3, 2))
    _same(DiagonalStack(D2) @ B32, _dense(D2) @ B32)      # (a 2-d diagonal: the dense product)


def test_everything_else_runs_on_the_dense_array():
    g, dense = DiagonalStack(D2), _dense(D2)
    _same(np.tanh(g), np.tanh(dense))
    _same(np.sum(g, axis=(1, 2)), np.sum(dense, axis=(1, 2)))
    _same(g.sum(axis=0), dense.sum(axis=0))
    _same(g.reshape(6, 6), dense.reshape(6, 6))
    _same(g[2], dense[2])
    _same(g.T, dense.T)
    _same(np.concatenate([g, dense]), np.concatenate([dense, dense]))
    _same(np.broadcast_to(g, (2,) + g.shape), np.broadcast_to(dense, (2,) + g.shape))
    _same(np.stack(list(g)), dense)
    _same(np.maximum(g, 0.1), np.maximum(dense, 0.1))
    _same(np.add.reduce(g, axis=1), np.add.reduce(dense, axis=1))
    for convert in (float, complex):       # (a stack of one row has shape (1,): as its dense array)
        with pytest.raises(TypeError):
            convert(_dense(np.array(2.0)))
        with pytest.raises(TypeError):
            convert(DiagonalStack(np.array(2.0)))


def test_out_writes_into_a_dense_array_and_never_into_the_stack():
    g = DiagonalStack(D1)
    out = RNG.normal(size=g.shape)
    want = out + _dense(D1)
    got = np.add(out, g, out=out)
    assert got is out
    _same(out, want)
    h = g
    h += 1.0        # (a new array: the stack is immutable)
    assert type(h) is np.ndarray and isinstance(g, DiagonalStack)
    _same(h, _dense(D1) + 1.0)
    _same(g, _dense(D1))


# --------------------------------------------------------------------------
# Jacobians


def layer(A, x):
    return np.tanh(A @ x) * x


def _hand_written(A, x):
    t = np.tanh(A @ x)
    J = (1.0 - t * t)[:, None] * A * x[:, None]
    J[np.diag_indices_from(J)] += t
    return J


@pytest.fixture
def densified(monkeypatch):
    """The number of times a DiagonalStack was made dense (a spy)."""
    calls = []
    real = DiagonalStack.dense

    def spy(self, dtype=None):
        calls.append(self.shape)
        return real(self, dtype)
    monkeypatch.setattr(DiagonalStack, "dense", spy)
    return calls


@pytest.mark.parametrize("path", ["sg.jacobian", "tape, compiled", "tape, op by op"])
def test_the_matrix_products_adjoint_never_densifies_the_seed(path, densified):
    n = 40
    A, x = RNG.normal(size=(n, n)) / np.sqrt(n), RNG.normal(size=n)
    if path == "sg.jacobian":
        J = sg.jacobian(layer, wrt=1)(A, x)
    else:
        f = sg.function(layer) if path == "tape, compiled" else layer
        v = sg.Variable(x)
        with sg.GradientTape(persistent=True) as tape:
            y = f(A, v)
        J = tape.jacobian(y, v).numpy()
        # the dense seed (the identity's rows, in chunks) gives the same Jacobian
        np.testing.assert_allclose(tape.jacobian(y, v, parallel_iterations=7).numpy(), J, rtol=1e-14, atol=1e-15)
    assert densified == []
    np.testing.assert_allclose(J, _hand_written(A, x), rtol=1e-13, atol=1e-15)


def _dense_seeded(fn, x, monkeypatch):
    """sg.jacobian of fn at x with the identity's rows as a dense array
    (a chunk shorter than the output: no structured seed)."""
    m = np.size(fn(x))
    with monkeypatch.context() as patch:
        patch.setattr(jacobians, "CHUNK", max(1, m - 1))
        return sg.jacobian(fn)(x)


@pytest.mark.parametrize("fn, n", test_jacobians.VECTOR_FUNCTIONS,
                         ids=[f.__name__ for f, _ in test_jacobians.VECTOR_FUNCTIONS])
def test_structured_and_dense_seeds_give_the_same_jacobian(fn, n, monkeypatch):
    x0 = RNG.normal(size=n) * 0.7 + 0.05
    structured = sg.jacobian(fn)(x0)
    np.testing.assert_allclose(structured, _dense_seeded(fn, x0, monkeypatch), rtol=1e-13, atol=1e-14)
    check_close(structured, test_jacobians._autograd_jacobian(fn, x0), rtol=1e-10, atol=1e-12)


def scaled_by_inf(x):
    return np.array([1.0, np.inf, 2.0]) * np.tanh(x)


def test_a_jacobian_through_an_infinite_factor_is_the_dense_sweeps(monkeypatch):
    x0 = np.array([0.3, -0.2, 0.5])
    with np.errstate(invalid="ignore"):
        got, want = sg.jacobian(scaled_by_inf)(x0), _dense_seeded(scaled_by_inf, x0, monkeypatch)
    np.testing.assert_array_equal(got, want)
    assert np.isnan(got).any()      # (0 * inf off the diagonal, as the dense stack and autograd give)
    with np.errstate(invalid="ignore"):
        ag = autograd.jacobian(lambda x: anp.array([1.0, np.inf, 2.0]) * anp.tanh(x))(x0)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ag))


def test_the_diagonal_module_keeps_factors_to_numbers_and_arrays():
    assert not isinstance([1.0, 2.0], diagonal._FACTORS)
    got = DiagonalStack(D1[:2]) * [1.0, 2.0]        # (a list: the dense array's product)
    _same(got, _dense(D1[:2]) * [1.0, 2.0])
    masked = np.ma.masked_array(D2, mask=[[0, 1, 0], [0, 0, 1]])
    got = DiagonalStack(D2) * masked                # (an ndarray subclass: NumPy's own product)
    assert isinstance(got, np.ma.MaskedArray)
    want = _dense(D2) * masked
    np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))
    np.testing.assert_array_equal(got.filled(0.0), want.filled(0.0))


def test_the_identitys_dense_array_is_shared_read_only_and_copied_when_asked():
    g = DiagonalStack.identity((3, 2), np.float64)
    a, b = np.asarray(g), DiagonalStack.identity((3, 2), np.float64).dense()
    assert a is b and not a.flags.writeable
    _same(a, _dense(np.ones((3, 2))))
    c = np.array(g)
    assert c is not a and c.flags.writeable
    assert g.densified
    assert not DiagonalStack(D1).densified and not (DiagonalStack(D1) * 2.0).densified


def scaled(x):
    return x * 1.0


def ident(x):
    return x


def test_the_jacobian_of_the_identity_is_a_new_writeable_array():
    x0 = RNG.normal(size=3)
    j1, j2 = sg.jacobian(ident)(x0), sg.jacobian(ident)(x0)
    _same(j1, np.eye(3))
    assert j1 is not j2 and j1.flags.writeable and j2.flags.writeable


def test_jacobians_of_the_seed_itself_are_the_callers_own(monkeypatch):
    x0 = RNG.normal(size=4)
    j1, j2 = sg.jacobian(scaled)(x0), sg.jacobian(scaled)(x0)
    _same(j1, np.eye(4))
    assert j1 is not j2 and j1.flags.writeable
    j1[0, 0] = 5.0
    _same(j2, np.eye(4))
    v = sg.Variable(x0)
    with sg.GradientTape(persistent=True) as tape:
        y = scaled(v)
    t1, t2 = tape.jacobian(y, v).numpy(), tape.jacobian(y, v).numpy()
    assert t1 is not t2 and t1.flags.writeable
    _same(t1, np.eye(4))


def test_a_sweep_that_densifies_the_seed_at_once_is_seeded_dense_from_then_on():
    """A Hessian whose sweep slices the seed first (Rosenbrock's x[1:])
    gains nothing from the structure: its artefact remembers, and the next
    call takes the dense identity's rows (the same Hessian)."""
    from scipy.optimize import rosen_hess
    x0 = RNG.normal(size=12)
    h = sg.hessian(test_jacobians.rosen)
    first = h(x0)
    vg = as_function(sg.grad(test_jacobians.rosen, wrt=(0,), preserve_result=True))
    compiled, _, _ = jacobians._batched_artefact(vg, [x0], 0, 1)
    assert compiled.__dict__.get("_dense_seed") is True
    np.testing.assert_array_equal(h(x0), first)
    check_close(first, rosen_hess(x0), rtol=1e-12, atol=1e-10)
    # and one whose sweep scales it first keeps the structure
    A, x = RNG.normal(size=(6, 6)), RNG.normal(size=6)
    sg.jacobian(layer, wrt=1)(A, x)
    compiled, _, _ = jacobians._batched_artefact(as_function(layer), [A, x], 1, None)
    assert not compiled.__dict__.get("_dense_seed")


# --------------------------------------------------------------------------
# A diagonal over the trailing axes: every example of a batch_jacobian seeded at once

def _dense_lead(d, lead):
    """The dense stack of DiagonalStack(d, lead), built entry by entry."""
    d = np.asarray(d)
    inner = d.shape[lead:]
    m = int(np.prod(inner))
    out = np.zeros((m,) + d.shape, dtype=d.dtype)
    for k in range(m):
        place = np.unravel_index(k, inner)
        out[(k, Ellipsis) + place] = d[(Ellipsis,) + place]
    return out


DL = RNG.normal(size=(3, 4))        # 3 examples, a diagonal of 4
DL3 = RNG.normal(size=(2, 3, 2))    # (2, 3) examples... or 2 examples of a 3 x 2 diagonal


@pytest.mark.parametrize("d, lead", [(DL, 1), (DL3, 1), (DL3, 2), (DL, 0)], ids=["1+1", "1+2", "2+1", "0+2"])
def test_a_lead_stack_is_its_dense_array(d, lead):
    g = DiagonalStack(d, lead)
    want = _dense_lead(d, lead)
    assert g.shape == want.shape and np.shape(g) == want.shape and np.size(g) == want.size
    _same(np.asarray(g), want)
    _same(DiagonalStack.identity(d.shape, np.float64, lead).dense(), _dense_lead(np.ones(d.shape), lead))
    y = RNG.normal(size=d.shape)
    got = g * y
    assert isinstance(got, DiagonalStack) and got.lead == lead
    _same(got, want * y)
    _same(-g, -want)
    dense = RNG.normal(size=want.shape)
    np.testing.assert_allclose(g + dense, want + dense, rtol=0, atol=0)
    np.testing.assert_allclose(dense - g, dense - want, rtol=0, atol=0)
    other = DiagonalStack(d * 2.0, lead)
    _same(g + other, want + _dense_lead(d * 2.0, lead))
    inner = tuple(range(1 + lead, 1 + d.ndim))
    for keepdims in (False, True):
        got = np.sum(g, axis=inner, keepdims=keepdims)
        assert type(got) is np.ndarray and got.flags.writeable
        _same(got, np.sum(want, axis=inner, keepdims=keepdims))
    if len(inner) > 1:      # (part of the diagonal's axes: the dense array's sum)
        _same(np.sum(g, axis=inner[-1]), np.sum(want, axis=inner[-1]))


@pytest.mark.parametrize("d, lead", [(DL, 1), (DL3, 2)], ids=["1+1", "2+1"])
def test_a_lead_stacks_matrix_product(d, lead):
    g = DiagonalStack(d, lead)
    B = RNG.normal(size=(d.shape[-1], 5))
    got = g @ B
    assert type(got) is np.ndarray
    np.testing.assert_allclose(got, _dense_lead(d, lead) @ B, rtol=1e-14, atol=1e-15)


def per_example(x, W):
    return np.tanh(x @ W) * np.sum(x * x, axis=1, keepdims=True)


@pytest.mark.parametrize("path", ["compiled", "op by op"])
def test_batch_jacobian_never_densifies_its_seed_and_is_autograds(path, densified):
    x0, W = RNG.normal(size=(5, 3)), RNG.normal(size=(3, 4))
    f = sg.function(per_example) if path == "compiled" else per_example
    x = sg.Variable(x0)
    with sg.GradientTape(persistent=True) as tape:
        y = f(x, W)
    j = tape.batch_jacobian(y, x).numpy()
    assert j.shape == (5, 4, 3)
    chunked = tape.batch_jacobian(y, x, parallel_iterations=3).numpy()      # (dense rows, 3 at a time)
    ref = np.stack([autograd.jacobian(lambda r: anp.tanh(r @ W) * anp.sum(r ** 2))(r) for r in x0])
    check_close(j, ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(j, chunked, rtol=1e-14, atol=1e-15)
    assert all(shape != (4, 5, 4) for shape in densified)       # (the seed itself never made dense)
