"""autograd's public API mapped onto srcgrad's, for running autograd's
example programs and tests through srcgrad (benchmarks/compat/rewrite.py
points their `from autograd import ...` here).

Written from autograd's documentation and docstrings; no autograd code.
Where srcgrad has the same function, the name *is* srcgrad's function, so
srcgrad recognises it wherever it meets it (a `grad(f)(x)` inside code it
differentiates, `grad(grad(f))`):

    grad, elementwise_grad   -> sg.grad   (sg.grad of a non-scalar output is
                                the gradient of its sum: elementwise_grad)
    value_and_grad           -> sg.value_and_grad
    checkpoint               -> sg.checkpoint
    argnum=...               -> wrt=...   (rewrite.py renames the keyword at
                                call sites; positionally they are the same)

The rest are built on srcgrad's API (sg.grad, sg.jvp, sg.jacobian,
sg.hessian, sg.custom_gradient) in a few lines each, the way a user porting
the program would write them: jacobian, hessian, make_jvp, make_vjp,
make_hvp, hessian_tensor_product (hessian_vector_product),
tensor_jacobian_product, make_ggnvp, deriv, holomorphic_grad, grad_and_aux,
primitive/defvjp/defjvp (sg.custom_gradient), flatten/flatten_func,
the optimizers sgd/rmsprop/adam (the standard update formulas),
fixed_point (implicit differentiation through sg.custom_gradient), the
builtins (tuple/list/dict/isinstance/type are Python's), and autograd's
generalised `scipy.signal.convolve` (which has no SciPy counterpart).

`check_grads` compares srcgrad's derivatives with central finite
differences, as autograd's own does (same step, same tolerances, random
directions from NumPy's global generator): reverse mode (sg.grad of the
inner product with a random cotangent), forward mode (sg.jvp), and at
order 2 the same checks of the functions computing them. It runs every
sub-check, records each failure in `CHECK_FAILURES` (the harness reads it
to tell which tests a single cause blocks), and raises the first one.
"""
import builtins
import functools
import inspect
import warnings

import numpy as np

import srcgrad as sg

from . import gen
from . import vspace as vs

# ----------------------------------------------------------------- recording
# The harness (runner.py) sets RECORD to a function(label, fn) -> fn' that
# records calls of the functions the transforms below return; None: no-op.
RECORD = None


def _recorded(kind, fun, argnum, fn):
    """fn (what transform `kind` made of `fun`), recording its calls when the harness asks."""
    if RECORD is None:
        return fn
    from .record import canonical_name, transform_label
    return RECORD(transform_label(kind, canonical_name(fun), argnum), fn)


def _name(f):
    return getattr(f, "__name__", None) or type(f).__name__


def _wrt(argnum):
    return argnum if isinstance(argnum, int) else builtins.tuple(argnum)


# ------------------------------------------------------- srcgrad's own names
grad = sg.grad
value_and_grad = sg.value_and_grad
elementwise_grad = sg.grad
checkpoint = sg.checkpoint

tuple = builtins.tuple      # noqa: A001  (autograd.builtins.tuple: a differentiable tuple)
list = builtins.list        # noqa: A001
dict = builtins.dict        # noqa: A001
isinstance = builtins.isinstance    # noqa: A001
type = builtins.type        # noqa: A001


def isbox(x):
    """autograd.tracer.isbox: srcgrad's traced values are Tensors."""
    return builtins.isinstance(x, sg.Tensor)


def getval(x):
    return x.numpy() if builtins.isinstance(x, sg.Tensor) else x


# autograd internals that some test files import next to what they test; the
# tests that use them are counted n/a (suite.NOT_APPLICABLE). Present so that
# the other tests of those files can be collected.
primitive_vjps = {}
primitive_jvps = {}


def const_graph(fun, *args, **kwargs):
    raise NotImplementedError("autograd.misc.const_graph (caching autograd's trace) has no srcgrad counterpart")


def vspace(value):
    raise NotImplementedError("autograd.core.vspace (autograd's vector-space objects) has no srcgrad counterpart")


# --------------------------------------------------------------- unary_to_nary
def _substituted(builder, fun, argnum, n_args, args, kwargs, x_text):
    """Source of `fun(args with args[argnum] := x)`; x_text names the new value
    (for a tuple argnum, x_text is a tuple and its items are used)."""
    parts = []
    for i in range(n_args):
        if builtins.isinstance(argnum, int):
            parts.append(x_text if i == argnum else builder.ref(args[i], "a"))
        elif i in argnum:
            parts.append("%s[%d]" % (x_text, builtins.list(argnum).index(i)))
        else:
            parts.append(builder.ref(args[i], "a"))
    return gen.call_text(builder, builder.ref(fun, "fun"), parts, kwargs)


def _unary(fun, argnum, args, kwargs):
    """(unary_f, x): autograd's `unary_f = lambda x: fun(*subs(x), **kwargs)`,
    as generated code with the other arguments as constants."""
    b = gen.Builder()
    body = _substituted(b, fun, argnum, len(args), args, kwargs, "x")
    unary_f = b.build("def unary_f(x):\n    return %s\n" % body, "unary_f")
    unary_f.__name__ = _name(fun)
    x = args[argnum] if builtins.isinstance(argnum, int) else builtins.tuple(args[i] for i in argnum)
    return unary_f, x


def unary_to_nary(unary_operator):
    """autograd.wrap_util.unary_to_nary: `op(fun, x, ...)` becomes
    `op(fun, argnum=0, ...)(*args, **kwargs)`."""
    @functools.wraps(unary_operator)
    def nary_operator(fun, argnum=0, *nary_op_args, **nary_op_kwargs):
        @functools.wraps(fun)
        def nary_f(*args, **kwargs):
            unary_f, x = _unary(fun, argnum, args, kwargs)
            return unary_operator(unary_f, x, *nary_op_args, **nary_op_kwargs)
        return nary_f
    return nary_operator


def wraps(fun, namestr="{fun}", docstr="{doc}", **kwargs):
    def _wraps(f):
        try:
            f.__name__ = namestr.format(fun=_name(fun), **kwargs)
            f.__doc__ = docstr.format(fun=_name(fun), doc=fun.__doc__ or "", **kwargs)
        except Exception:
            pass
        return f
    return _wraps


# ----------------------------------------------------------- VJPs and JVPs
def _vjp_function(fun, n, example_out, wrt):
    """L(x0..x{n-1}, u) = <u, fun(x...)>, and the function computing its
    gradient with respect to `wrt` (srcgrad's VJP with cotangent u)."""
    b = gen.Builder()
    params = ["x%d" % i for i in range(n)]
    f = b.ref(fun, "fun")
    src = "def vjp_objective(%s, u):\n    r = %s(%s)\n    return %s\n" % (
        ", ".join(params), f, ", ".join(params), gen.inner_text(example_out, "u", "r"))
    L = b.build(src, "vjp_objective")
    return L, sg.grad(L, wrt=_wrt(wrt))


def _call_args_text(n):
    return ", ".join("x%d" % i for i in range(n))


def make_vjp(fun, argnum=0):
    """autograd.make_vjp(fun, argnum)(*args) -> (vjp, ans); vjp(g) is g^T J."""
    def vjp_maker(*args, **kwargs):
        unary_f, x = _unary(fun, argnum, args, kwargs)
        ans = unary_f(x)
        L, dL = _vjp_function(unary_f, 1, ans, 0)

        def vjp(g):
            return dL(x, g)
        return vjp, ans
    return vjp_maker


def core_make_vjp(fun, x):
    """autograd.core.make_vjp(fun, x) -> (vjp, fun(x)), for a unary fun."""
    return make_vjp(fun)(x)


def core_make_jvp(fun, x):
    """autograd.core.make_jvp(fun, x) -> jvp, jvp(v) = (fun(x), J v)."""
    return make_jvp(fun)(x)


def make_jvp(fun, argnum=0):
    """autograd.make_jvp(fun, argnum)(*args)(v) -> (ans, J v), by sg.jvp."""
    def jvp_maker(*args, **kwargs):
        unary_f, x = _unary(fun, argnum, args, kwargs)

        def jvp(v):
            return sg.jvp(unary_f, (x,), (v,))
        return jvp
    return jvp_maker


def deriv(fun, argnum=0):
    """autograd.deriv: the JVP with a tangent of ones (forward mode)."""
    def d(*args, **kwargs):
        unary_f, x = _unary(fun, argnum, args, kwargs)
        return sg.jvp(unary_f, (x,), (vs.ones_like(x),))[1]
    return _recorded("deriv", fun, argnum, d)


def jacobian(fun, argnum=0):
    return _recorded("jacobian", fun, argnum, sg.jacobian(fun, wrt=_wrt(argnum)))


def hessian(fun, argnum=0):
    return _recorded("hessian", fun, argnum, sg.hessian(fun, wrt=_wrt(argnum)))


def grad_and_aux(fun, argnum=0):
    """(gradient of the first output, the second output), as sg.grad(has_aux=True)."""
    return sg.grad(fun, wrt=_wrt(argnum), has_aux=True)


def holomorphic_grad(fun, argnum=0):
    """f'(z) of a holomorphic f. srcgrad's gradient of the real loss Re f is
    the steepest-ascent direction, conj(f'(z)) (API.md: complex gradients
    follow TensorFlow); autograd returns f'(z), so the shim conjugates."""
    def hgrad(*args, **kwargs):
        if not np.iscomplexobj(args[argnum] if builtins.isinstance(argnum, int) else args[argnum[0]]):
            warnings.warn("Input to holomorphic_grad is not complex")
        b = gen.Builder()
        n = len(args)
        body = gen.call_text(b, b.ref(fun, "fun"), ["x%d" % i for i in range(n)], kwargs)
        real_f = b.build("def real_part(%s):\n    return np.real(%s)\n" % (_call_args_text(n), body), "real_part")
        g = sg.grad(real_f, wrt=_wrt(argnum))(*args)
        return builtins.tuple(np.conj(v) for v in g) if builtins.isinstance(g, builtins.tuple) else np.conj(g)
    return _recorded("holomorphic_grad", fun, argnum, hgrad)


def grad_named(fun, argname):
    return grad(fun, inspect.getfullargspec(fun).args.index(argname))


def make_hvp(fun, argnum=0):
    """autograd.make_hvp(fun, argnum)(*args) -> (hvp, gradient), hvp(v) = H v
    (the VJP of the gradient)."""
    def hvp_maker(*args, **kwargs):
        unary_f, x = _unary(fun, argnum, args, kwargs)
        g = sg.grad(unary_f)
        gx = g(x)
        L, dL = _vjp_function(g, 1, gx, 0)
        return (lambda v: dL(x, v)), gx
    return hvp_maker


def hessian_tensor_product(fun, argnum=0):
    """autograd's definition: the gradient of <grad(fun)(*args), V>,
    (*args, V) -> H . V (tensordot over V's dimensions)."""
    fun_grad = sg.grad(fun, wrt=_wrt(argnum))
    cache = {}

    def htp(*args, **kwargs):
        n = len(args) - 1
        key = (n, builtins.tuple(sorted(kwargs)))
        if key not in cache:
            b = gen.Builder()
            g_call = gen.call_text(b, b.ref(fun_grad, "grad"), ["x%d" % i for i in range(n)],
                                   {k: gen.Source(k) for k in kwargs})
            src = "def vector_dot_grad(%s, vector%s):\n    return np.tensordot(%s, vector, np.ndim(vector))\n" % (
                _call_args_text(n), "".join(", %s" % k for k in sorted(kwargs)), g_call)
            vdg = b.build(src, "vector_dot_grad")
            cache[key] = sg.grad(vdg, wrt=_wrt(argnum))
        return cache[key](*args, **kwargs)
    return _recorded("hessian_vector_product", fun, argnum, htp)


hessian_vector_product = hessian_tensor_product




def tensor_jacobian_product(fun, argnum=0):
    """autograd's definition: the Jacobian of <V, fun(*args)> (tensordot over
    V's dimensions): (*args, V) -> V . J."""
    def tjp(*args, **kwargs):
        n = len(args) - 1
        b = gen.Builder()
        f_call = gen.call_text(b, b.ref(fun, "fun"), ["x%d" % i for i in range(n)], kwargs)
        src = "def vector_dot_fun(%s, vector):\n    return np.tensordot(vector, %s, axes=np.ndim(vector))\n" % (
            _call_args_text(n), f_call)
        vdf = b.build(src, "vector_dot_fun")
        return sg.jacobian(vdf, wrt=_wrt(argnum))(*args)
    return _recorded("tensor_jacobian_product", fun, argnum, tjp)


vector_jacobian_product = tensor_jacobian_product


def make_ggnvp(f, g=None, f_argnum=0):
    """Generalised Gauss-Newton vector products J^T H_g J v, with
    g(y) = sum(y**2)/2 by default: J v by sg.jvp, H_g u by sg.jvp of
    sg.grad(g), J^T w by sg.grad of <w, f>."""
    if g is None:
        b0 = gen.Builder()
        g = b0.build("def half_sq(y):\n    return 1.0 / 2 * np.sum(y ** 2, axis=-1)\n", "half_sq")

    def maker(*args, **kwargs):
        unary_f, x = _unary(f, f_argnum, args, kwargs)
        fx = unary_f(x)
        L, dL = _vjp_function(unary_f, 1, fx, 0)
        grad_g = sg.grad(g)

        def ggnvp(v):
            jv = sg.jvp(unary_f, (x,), (v,))[1]
            hjv = sg.jvp(grad_g, (fx,), (jv,))[1]
            return dL(x, hjv)
        return ggnvp
    return maker


# ------------------------------------------------------ Box and VSpace
class Box:
    """autograd.extend.Box, for programs that subclass it to declare their
    own differentiable type (examples/rkhs.py): srcgrad does not box values,
    so the class is only a base; `register` records the value type."""
    types = set()

    def __init__(self, value, trace=None, node=None):
        self._value = value

    @classmethod
    def register(cls, value_type):
        Box.types.add(value_type)


class VSpace:
    """autograd.extend.VSpace: a user type's vector space (zeros, add,
    scalar_mul, inner_prod from the subclass's `_add`, `_scalar_mul`,
    `_inner_prod`); srcgrad accumulates such cotangents with the type's own
    `+` (the type defines it through its VSpace, as in rkhs.py)."""
    mappings = {}

    def add(self, x, y):
        return self._add(x, y)

    def scalar_mul(self, x, a):
        return self._scalar_mul(x, a)

    def inner_prod(self, x, y):
        return self._inner_prod(x, y)

    def covector(self, x):
        return x

    @classmethod
    def register(cls, value_type, vspace_maker=None):
        VSpace.mappings[value_type] = vspace_maker or cls


def func(f):
    """autograd.util.func: the function itself (a Python 2 leftover)."""
    return f


# --------------------------------------------------- primitive / defvjp
class _Rules:
    def __init__(self):
        self.vjps = {}      # argnum -> maker(ans, *args, **kwargs) -> (g -> gradient), or None
        self.jvps = {}
        self.vjp_argnum = None
        self.version = 0
        self.bodies = {}


def _primitive_body(fun, rules, n_args, kw_names):
    """The body sg.custom_gradient runs for a call with n_args positional
    arguments, as a user would write it for this primitive:

        def foo(x0, x1):
            ans = _fun(x0, x1)
            def grad_fn(g):
                vjp0 = _vjp0(ans, x0, x1)
                return vjp0(g), None          # None: no VJP defined for x1
            return ans, grad_fn
    """
    b = gen.Builder()
    params = ["x%d" % i for i in range(n_args)]
    call_args = ", ".join(params + ["%s=%s" % (k, k) for k in kw_names])
    lines = ["def %s(%s):" % ("primitive_body", ", ".join(params + list(kw_names))),
             "    ans = %s(%s)" % (b.ref(fun, "fun"), call_args),
             "    def grad_fn(g):"]
    outs = []
    for i in range(n_args):
        if rules.vjp_argnum is not None:
            lines.append("        vjp%d = %s(%d, ans, (%s), {%s})" % (
                i, b.ref(rules.vjp_argnum, "vjp_argnum"), i, "".join(p + ", " for p in params),
                ", ".join("%r: %s" % (k, k) for k in kw_names)))
            outs.append("vjp%d(g)" % i)
        elif i in rules.vjps and rules.vjps[i] is not None:
            lines.append("        vjp%d = %s(ans, %s)" % (i, b.ref(rules.vjps[i], "vjp"), call_args))
            outs.append("vjp%d(g)" % i)
        elif not rules.vjps:
            lines.append("        raise NotImplementedError(%r)" % (
                "VJP of %s wrt argnum %d not defined" % (_name(fun), i)))
            outs.append("None")
        else:
            outs.append("None")
    lines.append("        return %s" % ("".join(o + ", " for o in outs) if n_args > 1 else outs[0] if outs else "()"))
    lines.append("    return ans, grad_fn")
    body = b.build("\n".join(lines) + "\n", "primitive_body")
    body.__name__ = _name(fun)
    return body


def primitive(fun):
    """autograd.extend.primitive through sg.custom_gradient: the body calls
    `fun`, its gradient function the VJP makers given to defvjp,
    `maker(ans, *args, **kwargs)(g)`, one per argument (None: no
    gradient). The body is generated per call signature, after defvjp (see
    _primitive_body)."""
    rules = _Rules()

    def body(*args, **kwargs):
        key = (len(args), builtins.tuple(sorted(kwargs)), rules.version)
        spec = rules.bodies.get(key)
        if spec is None:
            spec = rules.bodies[key] = _primitive_body(fun, rules, len(args), key[1])
        return spec(*args, **kwargs)

    functools.update_wrapper(body, fun)
    wrapped = sg.custom_gradient(body)
    wrapped._compat_rules = rules
    wrapped._compat_fun = fun

    # autograd's deprecated method API (tests/test_wrappers.py uses it)
    def defgrad(maker, argnum=0):
        warnings.warn("defgrad is deprecated", DeprecationWarning)
        rules.vjps[argnum] = maker
        rules.version += 1

    def old_defvjp(vjpfun, argnum=0):
        warnings.warn("defvjp (method) is deprecated", DeprecationWarning)
        rules.vjps[argnum] = lambda ans, *args, **kw: (lambda g: vjpfun(g, ans, None, None, *args, **kw))
        rules.version += 1

    def defvjp_is_zero(argnums=(0,)):
        warnings.warn("defvjp_is_zero is deprecated", DeprecationWarning)
        for i in argnums:
            rules.vjps[i] = None
        rules.version += 1

    wrapped.defgrad = defgrad
    wrapped.defvjp = old_defvjp
    wrapped.defvjp_is_zero = defvjp_is_zero
    return wrapped


notrace_primitive = primitive


def _rules(fun):
    rules = getattr(fun, "_compat_rules", None)
    if rules is None:
        raise TypeError("the compat shim can only define the gradient of a function made with primitive(); "
                        "%r is not one" % (fun,))
    return rules


def defvjp(fun, *vjpmakers, **kwargs):
    argnums = kwargs.get("argnums", range(len(vjpmakers)))
    rules = _rules(fun)
    for i, maker in zip(argnums, vjpmakers):
        rules.vjps[i] = maker
    rules.version += 1


def defvjp_argnum(fun, vjpmaker):
    rules = _rules(fun)
    rules.vjp_argnum = vjpmaker
    rules.version += 1


def defjvp(fun, *jvpfuns, **kwargs):
    """Stored only: srcgrad's forward mode through sg.custom_gradient derives
    tangents from the gradient function."""
    argnums = kwargs.get("argnums", range(len(jvpfuns)))
    for i, f in zip(argnums, jvpfuns):
        _rules(fun).jvps[i] = f


def defjvp_argnum(fun, jvpmaker):
    _rules(fun).jvps["argnum"] = jvpmaker


def def_linear(fun):
    """A function linear in each argument: its VJP is fun with the cotangent
    in place of that argument (as autograd's def_linear)."""
    def maker_for(i):
        return lambda ans, *args, **kw: (lambda g: fun(*(args[:i] + (g,) + args[i + 1:]), **kw))
    rules = _rules(fun)
    for i in range(8):
        rules.vjps[i] = maker_for(i)
    rules.version += 1


# ----------------------------------------------------------------- flatten
def _flatten(value):
    t = builtins.type(value)
    if t in (builtins.list, builtins.tuple):
        return _concatenate([_flatten(v) for v in value])
    elif t is builtins.dict:
        return _concatenate([_flatten(value[k]) for k in sorted(value)])
    else:
        return np.ravel(value)


def _concatenate(parts):
    return np.concatenate(parts) if parts else np.array([])


def _spec(value):
    """The structure of `value` as data: ("list"|"tuple", [specs]),
    ("dict", keys, [specs]), or ("leaf", shape, size, is_scalar)."""
    t = builtins.type(value)
    if t in (builtins.list, builtins.tuple):
        return ("list" if t is builtins.list else "tuple", [_spec(v) for v in value])
    if t is builtins.dict:
        keys = sorted(value)
        return ("dict", keys, [_spec(value[k]) for k in keys])
    shape = np.shape(value)
    return ("leaf", shape, int(np.prod(shape)), shape == () and not builtins.isinstance(value, np.ndarray))


def _size(spec):
    if spec[0] == "leaf":
        return spec[2]
    return sum(_size(s) for s in spec[-1])


def _unflatten(vector, spec):
    kind = spec[0]
    if kind == "leaf":
        if spec[3]:
            return vector[0]
        return np.reshape(vector, spec[1])
    parts = []
    start = 0
    for s in spec[-1]:
        n = _size(s)
        parts.append(_unflatten(vector[start:start + n], s))
        start = start + n
    if kind == "dict":
        return builtins.dict(zip(spec[1], parts))
    return builtins.tuple(parts) if kind == "tuple" else parts


def flatten(value):
    """autograd.misc.flatten: (1-D array of every leaf, in order, dict keys
    sorted; the function rebuilding the structure from such a vector)."""
    spec = _spec(value)

    def unflatten(vector):
        return _unflatten(vector, spec)
    return _flatten(value), unflatten


def flatten_func(func, example):
    _ex, unflatten = flatten(example)
    # a lambda, as autograd's: the recorded calls are labelled by the function's name in both runs
    _func = lambda _x, *args: flatten(func(unflatten(_x), *args))[0]    # noqa: E731
    return _func, unflatten, _ex


# -------------------------------------------------------------- optimizers
def unflatten_optimizer(optimize):
    """An optimizer of flat vectors made to take and return nested
    containers; the gradient function is called as grad(params, i)."""
    @functools.wraps(optimize)
    def _optimize(grad, x0, callback=None, *args, **kwargs):
        _x0, unflatten = flatten(x0)

        def _grad(x, i):
            return flatten(grad(unflatten(x), i))[0]
        if callback:
            def _callback(x, i, g):
                return callback(unflatten(x), i, unflatten(g))
        else:
            _callback = None
        return unflatten(optimize(_grad, _x0, _callback, *args, **kwargs))
    return _optimize


@unflatten_optimizer
def sgd(grad, x, callback=None, num_iters=200, step_size=0.1, mass=0.9):
    """Gradient descent with momentum: v <- mass v - (1 - mass) g; x <- x + step v."""
    velocity = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        velocity = mass * velocity - (1.0 - mass) * g
        x = x + step_size * velocity
    return x


@unflatten_optimizer
def rmsprop(grad, x, callback=None, num_iters=100, step_size=0.1, gamma=0.9, eps=10**-8):
    """RMSProp: a <- gamma a + (1 - gamma) g^2 (a starts at ones); x <- x - step g / (sqrt(a) + eps)."""
    avg_sq_grad = np.ones(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        avg_sq_grad = avg_sq_grad * gamma + g**2 * (1 - gamma)
        x = x - step_size * g / (np.sqrt(avg_sq_grad) + eps)
    return x


@unflatten_optimizer
def adam(grad, x, callback=None, num_iters=100, step_size=0.001, b1=0.9, b2=0.999, eps=10**-8):
    """Adam (Kingma and Ba, arXiv:1412.6980, Algorithm 1)."""
    m = np.zeros(len(x))
    v = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * (g**2) + b2 * v
        mhat = m / (1 - b1 ** (i + 1))
        vhat = v / (1 - b2 ** (i + 1))
        x = x - step_size * mhat / (np.sqrt(vhat) + eps)
    return x


# ------------------------------------------------------------- fixed points
def fixed_point(f, a, x0, distance, tol):
    """autograd.misc.fixed_points.fixed_point: iterate x <- f(a)(x) from x0
    until distance(x, x_prev) <= tol; differentiated implicitly, as
    autograd's primitive: the adjoint w = g + (d f(a)/dx)^T w is itself a
    fixed point (of `rev_iter`, iterated by this function from zero, so
    that it too is differentiated implicitly at second order), and the
    gradient with respect to a is (d f(a)(x*)/da)^T w. As in autograd, x*
    depends on a through the implicit derivative only, not through the
    iterations (`_attached`)."""
    return _fixed_point(f, a, x0, distance, tol)


def _iterate(step, x0, distance, tol):
    x, x_prev = step(x0), x0
    while distance(x, x_prev) > tol:
        x, x_prev = step(x), x
    return x


def _detached(v):
    """`v` with its Tensors replaced by their values: nothing computed from
    it is recorded."""
    if isinstance(v, (list, tuple)):
        return type(v)(_detached(e) for e in v)
    return v.numpy() if isinstance(v, sg.Tensor) else v


_IMPLICIT = {}


def _implicit(f):
    """(vjp_x, vjp_a, rev_iter) for the iteration maker `f`, made once per f:
    vjp_x(y, a, w) = (d f(a)(y)/dy)^T w, vjp_a(a, y, w) = (d f(a)(y)/da)^T w,
    and autograd's rev_iter(params) for the adjoint's fixed point."""
    found = _IMPLICIT.get(f)
    if found is None:
        b = gen.Builder()
        fr = b.ref(f, "f")
        through_x = b.build("def through_x(y, a, w):\n    fa = %s(a)\n    return np.sum(w * fa(y))\n" % fr,
                            "through_x")
        through_a = b.build("def through_a(a, y, w):\n    fa = %s(a)\n    return np.sum(w * fa(y))\n" % fr,
                            "through_a")
        vjp_x, vjp_a = sg.grad(through_x), sg.grad(through_a)

        def rev_iter(params):
            a, x_star, x_star_bar = params
            return lambda w: vjp_x(x_star, a, w) + x_star_bar
        found = _IMPLICIT[f] = (vjp_x, vjp_a, rev_iter)
    return found


def _fixed_point_body(f, a, x0, distance, tol):
    x_star = _attached(f, a, _iterate(f(_detached(a)), _detached(x0), distance, tol), distance, tol)
    _, vjp_a, rev_iter = _implicit(f)

    def grad_fn(g):
        w = fixed_point(rev_iter, (a, x_star, g), vs.zeros_like(g), distance, tol)
        return None, vjp_a(a, x_star, w), None, None, None
    return x_star, grad_fn


def _attached_body(f, a, x_star, distance, tol):
    """x_star, a fixed point of f(a), depending on a by the implicit
    derivative (first order: its own adjoint iterates with x_star fixed)."""
    vjp_x, vjp_a, _ = _implicit(f)

    def grad_fn(g):
        w = _iterate(lambda w: g + vjp_x(x_star, a, w), vs.zeros_like(g), distance, tol)
        return None, vjp_a(a, x_star, w), None, None, None
    return x_star, grad_fn


_fixed_point = sg.custom_gradient(_fixed_point_body)
_attached = sg.custom_gradient(_attached_body)


# --------------------------------------------- autograd.scipy.signal.convolve
def convolve(A, B, axes=None, dot_axes=((), ()), mode="full"):
    """autograd's generalised convolution (autograd.scipy.signal.convolve;
    SciPy's convolve has no `axes`/`dot_axes`): A and B are convolved along
    the paired `axes` (B flipped), contracted along the paired `dot_axes`;
    the result's axes are A's other axes, then B's other axes, then the
    convolved axes. mode "valid", "full" or "same" (A's length, the full
    result from (len(B) - 1) // 2 on, as autograd's). Written here as a loop over the
    offsets of the smaller array (slices and np.tensordot)."""
    if axes is None:
        axes = [builtins.list(range(np.ndim(A))), builtins.list(range(np.ndim(A)))]
    ax_A, ax_B = builtins.list(axes[0]), builtins.list(axes[1])
    dot_A, dot_B = builtins.list(dot_axes[0]), builtins.list(dot_axes[1])
    if mode not in ("valid", "full", "same"):
        raise ValueError("compat convolve: mode %r is not implemented by the shim" % (mode,))
    shape_A, shape_B = np.shape(A), np.shape(B)
    if mode == "same":
        # autograd's "same": A's length along each convolved axis, the full result from (len(B) - 1) // 2
        full = convolve(A, B, axes=(ax_A, ax_B), dot_axes=(dot_A, dot_B), mode="full")
        n_conv = len(ax_A)
        index = [slice(None)] * (np.ndim(full) - n_conv)
        for a, b in zip(ax_A, ax_B):
            start = (shape_B[b] - 1) // 2
            index.append(slice(start, start + shape_A[a]))
        return full[builtins.tuple(index)]
    if any(shape_B[b] > shape_A[a] for a, b in zip(ax_A, ax_B)):
        if mode == "valid" and not all(shape_B[b] >= shape_A[a] for a, b in zip(ax_A, ax_B)):
            raise ValueError("One array must be larger than the other along all convolved dimensions")
        out = convolve(B, A, axes=(ax_B, ax_A), dot_axes=(dot_B, dot_A), mode=mode)
        n_other_B = np.ndim(B) - len(ax_B) - len(dot_B)
        n_other_A = np.ndim(A) - len(ax_A) - len(dot_A)
        perm = builtins.list(range(n_other_B, n_other_B + n_other_A)) + builtins.list(range(n_other_B)) + \
            builtins.list(range(n_other_B + n_other_A, np.ndim(out)))
        return np.transpose(out, perm)
    if mode == "full":
        pad = [(0, 0)] * np.ndim(A)
        for a, b in zip(ax_A, ax_B):
            pad[a] = (shape_B[b] - 1, shape_B[b] - 1)
        A = np.pad(A, pad)
        shape_A = np.shape(A)
    out_len = [shape_A[a] - shape_B[b] + 1 for a, b in zip(ax_A, ax_B)]
    other_A = [i for i in range(len(shape_A)) if i not in ax_A and i not in dot_A]
    other_B = [i for i in range(len(shape_B)) if i not in ax_B and i not in dot_B]
    total = None
    offsets = builtins.list(np.ndindex(*[shape_B[b] for b in ax_B]))
    for offset in offsets:
        index_A = [slice(None)] * len(shape_A)
        index_B = [slice(None)] * len(shape_B)
        for k, (a, b) in enumerate(zip(ax_A, ax_B)):
            start = shape_B[b] - 1 - offset[k]
            index_A[a] = slice(start, start + out_len[k])
            index_B[b] = offset[k]
        window = A[builtins.tuple(index_A)]                     # other_A, window axes, dot axes of A
        kernel = B[builtins.tuple(index_B)]
        # after slicing B at integers its convolved axes are gone: renumber its dot axes
        kept_B = [i for i in range(len(shape_B)) if i not in ax_B]
        term = np.tensordot(window, kernel, axes=(dot_A, [kept_B.index(d) for d in dot_B]))
        total = term if total is None else total + term
    # term axes: A's axes without dot_A (in order: other_A and ax_A interleaved as in A), then B's other axes
    kept_A = [i for i in range(len(shape_A)) if i not in dot_A]
    n_B_other = len(other_B)
    perm = [kept_A.index(i) for i in other_A] + builtins.list(range(len(kept_A), len(kept_A) + n_B_other)) + \
        [kept_A.index(a) for a in ax_A]
    return np.transpose(total, perm)


# -------------------------------------------------------------- test_util
TOL = 1e-6
RTOL = 1e-6
EPS = 1e-6

#: failures of the sub-checks of check_grads in the current test: (check, name, exception)
CHECK_FAILURES = []


def scalar_close(a, b):
    return abs(a - b) < TOL or abs(a - b) / abs(a + b) < RTOL


def _numerical_jvp(f, xs, vs_):
    """(f(x + v eps/2) - f(x - v eps/2)) / eps for an n-ary f at the point xs."""
    plus = f(*[vs.add(x, v, EPS / 2) for x, v in zip(xs, vs_)])
    minus = f(*[vs.add(x, v, -EPS / 2) for x, v in zip(xs, vs_)])
    return vs.scale(vs.add(vs.as_numpy(plus), vs.as_numpy(minus), -1.0), 1.0 / EPS)


def check_equivalent(x, y):
    x, y = vs.as_numpy(x), vs.as_numpy(y)
    assert vs.same_space(x, y), "VSpace mismatch:\nx: %s\ny: %s" % (vs.describe(x), vs.describe(y))
    v = vs.randn_like(x)
    assert scalar_close(vs.inner(x, v), vs.inner(y, v)), "Value mismatch:\nx: %s\ny: %s" % (x, y)


def _nary(fun, n, name):
    """fun as an n-ary generated function of x0..x{n-1} (a fresh function
    object named `name`, as autograd's check wraps the function it checks)."""
    b = gen.Builder()
    src = "def %s(%s):\n    return %s(%s)\n" % ("checked", _call_args_text(n), b.ref(fun, "fun"), _call_args_text(n))
    f = b.build(src, "checked")
    f.__name__ = name
    return f


def _check_vjp(f, xs, name):
    n = len(xs)
    y = vs.as_numpy(f(*xs))
    x_v = [vs.randn_like(x) for x in xs]
    y_v = vs.randn_like(y)
    L, dL = _vjp_function(f, n, y, builtins.tuple(range(n)))
    g = dL(*xs, y_v)
    g = [g] if n == 1 else builtins.list(g)
    g = vs.as_numpy(g)
    assert vs.same_space(builtins.list(xs), g), "VSpace mismatch in the VJP of %s:\nx: %s\nvjp: %s" % (
        name, vs.describe(builtins.list(xs)), vs.describe(g))
    vjv_exact = sum(vs.inner(v, gi) for v, gi in zip(x_v, g))
    vjv_numeric = vs.inner(y_v, _numerical_jvp(f, xs, x_v))
    assert scalar_close(vjv_numeric, vjv_exact), (
        "Derivative (VJP) check of %s failed with arg %s:\nanalytic: %s\nnumeric:  %s"
        % (name, xs[0] if n == 1 else builtins.tuple(xs), vjv_exact, vjv_numeric))
    return y


def _check_jvp(f, xs, name):
    v = [vs.randn_like(x) for x in xs]
    _, t = sg.jvp(f, builtins.tuple(xs), builtins.tuple(v))
    numeric = _numerical_jvp(f, xs, v)
    t = vs.as_numpy(t)
    assert vs.same_space(t, numeric), "VSpace mismatch in the JVP of %s:\njvp: %s\nnumeric: %s" % (
        name, vs.describe(t), vs.describe(numeric))
    w = vs.randn_like(numeric)
    assert scalar_close(vs.inner(t, w), vs.inner(numeric, w)), (
        "Derivative (JVP) check of %s failed:\nanalytic: %s\nnumeric:  %s" % (name, t, numeric))


def _subcheck(kind, name, fn, *args):
    try:
        fn(*args)
    except Exception as e:      # recorded, then raised at the end of check_grads
        CHECK_FAILURES.append((kind, name, e))


def _check_point(f, xs, modes, order, name, path):
    """autograd's check_grads at the point xs (a list of the differentiated
    arguments of the n-ary generated f)."""
    n = len(xs)
    if "fwd" in modes:
        _subcheck(path + "fwd", name, _check_jvp, f, xs, name)
        if order > 1:
            b = gen.Builder()
            fr = b.ref(f, "f")
            src = "def jvp_f(%s, %s):\n    return _sg.jvp(%s, (%s,), (%s,))[1]\n" % (
                _call_args_text(n), ", ".join("v%d" % i for i in range(n)), fr, _call_args_text(n),
                ", ".join("v%d" % i for i in range(n)))
            jvp_f = b.build(src, "jvp_f")
            jvp_f.__name__ = "jvp_" + name
            v = [vs.randn_like(x) for x in xs]
            _check_point(jvp_f, builtins.list(xs) + v, modes, order - 1, "jvp_" + name, path + "fwd>")
    if "rev" in modes:
        try:
            y = vs.as_numpy(f(*xs))
        except Exception as e:
            CHECK_FAILURES.append((path + "rev", name, e))
            return
        _subcheck(path + "rev", name, _check_vjp, f, xs, name)
        if order > 1:
            L, dL = _vjp_function(f, n, y, builtins.tuple(range(n)))
            b = gen.Builder()
            src = "def vjp_f(%s, v):\n    return %s(%s, v)\n" % (_call_args_text(n), b.ref(dL, "vjp"),
                                                                _call_args_text(n))
            vjp_f = b.build(src, "vjp_f")
            vjp_f.__name__ = "vjp_" + name
            v = vs.randn_like(y)
            _check_point(vjp_f, builtins.list(xs) + [v], modes, order - 1, "vjp_" + name, path + "rev>")


def check_grads(f, argnum=0, modes=None, order=2):
    """autograd.test_util.check_grads(f, argnum, modes, order)(*args, **kwargs),
    checking srcgrad's derivatives (see the module docstring)."""
    if modes is None:
        modes = ["fwd", "rev"]
    assert all(m in ["fwd", "rev"] for m in modes)

    def nary_check(*args, **kwargs):
        argnums = [argnum] if builtins.isinstance(argnum, int) else builtins.list(argnum)
        b = gen.Builder()
        params = []
        for i in range(len(args)):
            params.append("x%d" % argnums.index(i) if i in argnums else b.ref(args[i], "a"))
        body = gen.call_text(b, b.ref(f, "fun"), params, kwargs)
        checked = b.build("def checked(%s):\n    return %s\n" % (_call_args_text(len(argnums)), body), "checked")
        name = _name(f)
        checked.__name__ = name
        xs = [args[i] for i in argnums]
        start = len(CHECK_FAILURES)
        _check_point(checked, xs, modes, order, name, "")
        if len(CHECK_FAILURES) > start:
            raise CHECK_FAILURES[start][2]
    return nary_check


def combo_check(fun, *args, **kwargs):
    """autograd.test_util.combo_check: check_grads at every combination of
    the given positional and keyword values."""
    import itertools

    def _check_grads(f):
        return check_grads(f, *args, **kwargs)

    def _combo_check(*args, **kwargs):
        kwarg_key_vals = [[(k, x) for x in xs] for k, xs in kwargs.items()]
        for _args in itertools.product(*args):
            for _kwargs in itertools.product(*kwarg_key_vals):
                _check_grads(fun)(*_args, **builtins.dict(_kwargs))
    return _combo_check


def check_vjp(f, x):
    _check_vjp(_nary(f, 1, _name(f)), [x], _name(f))


def check_jvp(f, x):
    _check_jvp(_nary(f, 1, _name(f)), [x], _name(f))


def quick_grad_check(fun, arg0, extra_args=(), kwargs=None, verbose=True, eps=1e-4, rtol=1e-4, atol=1e-6,
                     rs=None):
    """autograd.util.quick_grad_check (deprecated there): check_grads of fun in its first argument."""
    warnings.warn("quick_grad_check is deprecated", DeprecationWarning)
    check_grads(fun, modes=["rev"])(arg0, *extra_args, **(kwargs or {}))


# ----------------------------------------- autograd.numpy's own additions
# autograd.numpy has a few functions NumPy lacks, which its tests call as
# `np.make_diagonal`, `np.linalg._dot`, `np.linalg.T` (the rewritten tests
# import NumPy itself): they are written here from autograd's documented
# behaviour, in NumPy, and set on NumPy in the srcgrad run only where NumPy
# has no such name. srcgrad differentiates them as it does any user code.

def make_diagonal(D, offset=0, axis1=0, axis2=1):
    """autograd.numpy.make_diagonal: a stack of diagonal matrices with D on
    the diagonal of the last two axes (the only case autograd supports)."""
    if not (offset == 0 and axis1 == -1 and axis2 == -2):
        raise NotImplementedError("Currently make_diagonal only supports offset=0, axis1=-1, axis2=-2")
    return np.expand_dims(D, -1) * np.eye(np.shape(D)[-1])


def batched_dot(a, b):
    """autograd.numpy.linalg._dot: matrix products over the last two axes."""
    return np.einsum("...ij,...jk->...ik", a, b)


def batched_transpose(x):
    """autograd.numpy.linalg.T: the last two axes swapped."""
    return np.swapaxes(x, -1, -2)


def _install_numpy_additions():
    for owner, attr, fn in ((np, "make_diagonal", make_diagonal), (np.linalg, "_dot", batched_dot),
                            (np.linalg, "T", batched_transpose)):
        if not hasattr(owner, attr):
            setattr(owner, attr, fn)


_install_numpy_additions()
