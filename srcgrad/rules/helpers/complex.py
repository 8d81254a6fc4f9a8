"""The complex convention, and the dtypes of cotangents.

The complex convention is TensorFlow's (tensorflow/python/ops/math_grad.py):
for a real loss L of a complex input x = a + ib, the gradient is
dL/da + i dL/db, the direction of steepest ascent. For a holomorphic f the
adjoint of z = f(x) is then d[x] = d[z] * conj(f'(x)); a real input's
cotangent is the real part of the complex one. `conj` is the identity on
real values (one dtype check), so real code pays one Python call for it and
nothing else.

Mixed real and complex operands (`theta * 1j`): the gradient of a real
input is the real part of the complex cotangent. The binary rules'
`unbroadcast` reads only the input's shape (codegen saves such residuals as
ShapeOf) and does not take that real part, so a real operand of a binary op
with a complex result receives a complex cotangent whose real part is its
gradient; the tape and sg.grad cast each gradient to its source's dtype,
which keeps that real part.

Dtypes: constants and zeros a helper makes take the cotangent's floating
dtype (`inexact_dtype`), so float32 in gives float32 out; `cast_like` casts
a cotangent computed in float64 back (float_power, SciPy's functions).
"""
import numpy as np

from ...runtime import arrays, nondiff_helper, primitive
from . import elementwise


@nondiff_helper
def _kind(v):
    """The dtype kind of `v` ('f', 'c', 'i', ...); Python scalars included."""
    dtype = getattr(v, "dtype", None)
    if dtype is not None:
        return getattr(dtype, "kind", None) or arrays.dtype_kind(dtype)    # (another library's dtype)
    if isinstance(v, complex):
        return "c"
    if isinstance(v, (bool, int, float)):
        return "f"
    return np.asarray(v).dtype.kind


def conj(x):
    """The complex conjugate of `x`; `x` itself when it is real."""
    try:
        if x.dtype.kind != "c":
            return x
    except AttributeError:
        if isinstance(x, complex):
            return x.conjugate()      # a Python complex stays weakly typed
        if _kind(x) != "c":
            return x
    return np.conjugate(x)


def real_part(g):
    """The cotangent `g` of a real-valued output as a real array. A real
    value that meets complex ones later (`np.abs(z) * c`) receives a complex
    cotangent whose real part is its gradient (see the module docstring);
    the rules of functions from complex to real values (abs, real, imag,
    angle, norms, var, singular values, eigh's eigenvalues...) must drop
    the imaginary part before combining it with complex primal values."""
    if _kind(g) == "c":
        return np.real(g)
    return g


def complex_like(g, x):
    """`g` as the cotangent of `x`: complex(Re g, 0) when `x` is complex
    (TF's _RealGrad), else `g`."""
    if _kind(x) == "c":
        return real_part(g) * (1 + 0j)
    return g


def imag_cotangent(g, x):
    """The cotangent of x in np.imag(x): complex(0, Re g) (TF's _ImagGrad)
    for complex x; 0 for real x, whose imaginary part is the constant 0."""
    if _kind(x) != "c":
        return g * 0.0
    return real_part(g) * 1j


def angle_cotangent(g, z, deg=False):
    """The cotangent of z in np.angle(z, deg): g i / conj(z) = g i z / |z|^2
    (TF's _AngleGrad, g real), times 180/pi for degrees; 0 for real z (whose
    angle is the constant 0 or pi)."""
    if _kind(z) != "c":
        return g * 0.0
    return real_part(g) * ((180.0 / np.pi if deg else 1.0) * 1j) / np.conjugate(z)


def sign(x):
    """d|x|/dx in the convention above: sign(x) for real x (0 at 0, nothing
    to differentiate further), x / |x| for complex x (0 at 0)."""
    if _kind(x) != "c":
        return elementwise.sign(x)
    a = np.abs(x)
    return x / np.where(a == 0, 1.0, a)


def real_if_real(g, x):
    """`g` as the cotangent of `x`: its real part when `x` is real (a real
    input meeting complex values gets the real part of the complex
    cotangent, README "Complex inputs"), else `g`."""
    if _is_complex(g) and not _is_complex(x):
        return np.real(g)
    return g


@nondiff_helper
def _is_complex(x):
    try:
        return x.dtype.kind == "c"
    except AttributeError:
        return _kind(x) == "c"


# --------------------------------------------------------------------- dtypes

@primitive
def cast_like(g, x):
    """`g` cast to `x`'s floating dtype (float_power computes in float64; a
    float32 input gets a float32 cotangent)."""
    dtype = float_dtype(x)
    g = np.asarray(g)
    return g if g.dtype == dtype else np.astype(g, dtype)


@nondiff_helper
def _dtype(x):
    dtype = getattr(x, "dtype", None)
    if dtype is not None:
        return dtype
    if type(x) in (list, tuple):    # (np.interp's fp given as a list: np.result_type reads a list as a record dtype)
        return np.result_type(*[_dtype(e) for e in x]) if x else np.dtype(np.float64)
    return np.result_type(x)


def float_dtype(x):
    """x's dtype if it is inexact, else float64."""
    dtype = np.result_type(_dtype(x), np.float16)
    return np.dtype(np.float64) if dtype == np.float16 and _dtype(x) != np.float16 else dtype


def inexact_dtype(*xs):
    """The floating dtype of a cotangent computed from `xs` (float32 stays
    float32; integer inputs give float64)."""
    dt = np.result_type(*[getattr(x, "dtype", np.asarray(x).dtype) for x in xs])
    return dt if np.issubdtype(dt, np.inexact) else np.dtype(np.float64)


def power_exponent_adjoint(g, z, x):
    """The exponent's cotangent of z = x ** y: g x**y log(x), with the base
    replaced by 1 where it is 0 (the limit of x**y log x as x -> 0+ for y >
    0; autograd's replace_zero), so a zero base gives 0, not nan."""
    return g * conj(z * np.log(np.where(x == 0, 1.0, x)))


def real_if_close_cotangent(g, z, a):
    """The cotangent of `a` in z = np.real_if_close(a): `g` itself where z
    stayed complex (the identity), complex(Re g, 0) where the imaginary
    part was dropped (z real, a complex: TF's _RealGrad), `g` for a real
    `a`. Linear in g; real_if_close_tangent is its transpose."""
    if _kind(z) == "c":
        return g
    return complex_like(g, a)


def real_if_close_tangent(t, z):
    """The tangent of z = np.real_if_close(a) from a's tangent `t`: `t`
    where z stayed complex, its real part where z is real."""
    if _kind(z) == "c":
        return t
    return real_part(t)
