"""Derivatives of scipy.integrate's ODE solvers by the adjoint method: the
rules for odeint and solve_ivp, and their run-time helpers (optional:
imported only when the program imports scipy.integrate).

    y = odeint(func, y0, t, args=(theta,))          # differentiable in y0, t, theta
    sol = solve_ivp(fun, (t0, t1), y0, t_eval=ts, args=(theta,))
    sol["y"]                                        # differentiable in y0, t_span, t_eval, theta

The user's function is passed through (it is not a differentiated value);
its vector-Jacobian products are computed by srcgrad during the backward
sweep, so it must itself be differentiable by srcgrad. solve_ivp's result
is read as sol["y"] (an OdeResult is a dict; the resolver reads `sol.y` of
a name assigned from solve_ivp as `sol["y"]`). Events and full_output are
refused (NotImplementedError). The rules serve the compiled paths (sg.grad,
@sg.function); the op-by-op tape cannot see SciPy's calls. In templates
scipy.integrate is `si`.

The adjoint method.

For y' = f(y, t, theta) from y(t0) = y0, observed at times tau_0 <= ... <=
tau_{T-1} (t0 <= tau_0), and a loss L with cotangents g_i = dL/dy(tau_i),
the adjoint a(t) = dL/dy(t) solves a' = -a^T df/dy backwards in time, with
a jump of g_i at each tau_i (Pontryagin; Chen et al. 2018, "Neural Ordinary
Differential Equations", Appendix B; Froehlich et al. 2017, 2.4.2, which
autograd's scipy/integrate.py follows). Then

    dL/dy0     = a(t0),
    dL/dtheta  = integral_{t0}^{tau_{T-1}} a^T df/dtheta dt,
    dL/dtau_i  = g_i . f(y(tau_i), tau_i)          (moving an output time),
    dL/dt0     = -a(t0) . f(y0, t0)                (moving the initial time:
                 d y(t; t0, y0) / dt0 = -dy/dy0 f(y0, t0)).

The backward sweep integrates the augmented state [y, a, dL/dtheta] from
each tau_i to the one before with the same SciPy integrator and options as
the forward solve (odeint's LSODA, or solve_ivp's `method`), restarting y at
the stored forward solution. The vector-Jacobian products a^T df/dy and
a^T df/dtheta of the user's function are computed by srcgrad itself: the
function is compiled with `sg.function` and run on a tape (op by op when it
cannot be compiled). This is why these rules live in the front layer, above
the AD engine they call (as JAX keeps its odeint in `jax.experimental.ode`
on top of `custom_vjp`), and are loaded when the program imports
scipy.integrate (srcgrad/__init__.py).

`odeint_vjp` and `solve_ivp_vjp` are primitives whose own rule refuses a
second derivative (NotImplementedError): the backward sweep is a SciPy
integration of a function built at run time, which srcgrad does not
differentiate again.
"""
import numpy as np
import scipy.integrate as si

from .errors import UnsupportedSyntaxError
from .callables import function as sg_function
from .functional import jvp as sg_jvp
from .rules.helpers import nondiff_helper, primitive
from .rules.registry import adjoint_rule, register_adjoint
from .rules.tangents import register_tangent
from .tape import GradientTape
from .tensor import constant


@nondiff_helper
def _is_float(v):
    """Does argument `v` of the user's function take a cotangent (a floating
    array or number)?"""
    if isinstance(v, (bool, str, bytes)) or v is None or callable(v):
        return False
    try:
        return np.result_type(v).kind in "fc"
    except TypeError:
        return False


@nondiff_helper
def _float_leaves(v):
    """The floating arrays and numbers in `v`, a value or a nested list,
    tuple or dict of them (a pytree: autograd's neural ODE passes a list of
    (W, b) layers), in order."""
    if isinstance(v, (list, tuple)):
        return [leaf for e in v for leaf in _float_leaves(e)]
    if isinstance(v, dict):
        return [leaf for e in v.values() for leaf in _float_leaves(e)]
    return [v] if _is_float(v) else []


def _rebuild(v, leaves):
    """`v` with its floating leaves replaced by the next of `leaves` (an
    iterator) and its other leaves kept: the same nesting, lists for tuples
    only where srcgrad's container cotangents are lists (cotangent=True:
    None for a leaf with no cotangent)."""
    if isinstance(v, (list, tuple)):
        out = [_rebuild(e, leaves) for e in v]
        return out if isinstance(v, list) else tuple(out)
    if isinstance(v, dict):
        return {k: _rebuild(e, leaves) for k, e in v.items()}
    return next(leaves) if _is_float(v) else v


def _cotangent_tree(v, leaves):
    """The cotangent of `v` from those of its floating leaves (an iterator):
    srcgrad's container cotangent (a list for a list or tuple, a dict for a
    dict, None for what has no derivative)."""
    if isinstance(v, (list, tuple)):
        return [_cotangent_tree(e, leaves) for e in v]
    if isinstance(v, dict):
        return {k: _cotangent_tree(e, leaves) for k, e in v.items()}
    return next(leaves) if _is_float(v) else None


class _FunctionVJP:
    """f(t, y, *args) and its VJPs a^T df/dy, a^T df/dleaf for the floating
    leaves of args (each argument a value or a nested list, tuple or dict of
    them), through srcgrad (compiled when it can be)."""

    def __init__(self, func, args, time_first):
        self.func = func
        self.args = tuple(args)
        self.time_first = time_first
        self.leaves = _float_leaves(list(self.args))
        try:
            self.compiled = sg_function(func)
        except Exception:          # a builtin or C function: op by op below
            self.compiled = None

    def _call(self, fn, t, y, args):
        return fn(t, y, *args) if self.time_first else fn(y, t, *args)

    def value(self, t, y):
        return self._flat(self._call(self.func, t, y, self.args))

    @staticmethod
    def _flat(out):
        if isinstance(out, (list, tuple)):
            return np.array([np.asarray(o, dtype=float) for o in out]).reshape(-1)
        return np.asarray(out, dtype=float).reshape(-1)

    def __call__(self, t, y, a):
        """(f, a^T df/dy, [a^T df/dargs[i] for the floating args])."""
        try:
            if self.compiled is not None:
                return self._vjp(self.compiled, t, y, a)
        except UnsupportedSyntaxError:
            self.compiled = None
        return self._vjp(self.func, t, y, a)

    def _vjp(self, fn, t, y, a):
        ys = constant(y)
        watched = [constant(leaf) for leaf in self.leaves]
        args = _rebuild(list(self.args), iter(watched))
        with GradientTape() as tape:
            tape.watch(ys)
            for w in watched:
                tape.watch(w)
            out = self._call(fn, t, ys, args)
        value = self._flat(out)
        if isinstance(out, (list, tuple)):
            target = list(out)
            seeds = [np.reshape(a[i], np.shape(o)) for i, o in enumerate(out)]
        else:
            target, seeds = out, np.reshape(a, np.shape(out))
        grads = tape.gradient(target, [ys] + watched, output_gradients=seeds,
                              unconnected_gradients="zero")
        grads = [np.asarray(g.numpy() if hasattr(g, "numpy") else g, dtype=float) for g in grads]
        return value, grads[0].reshape(-1), grads[1:]


class _FunctionJVP:
    """f(t, y, *args) and its JVP f_y s + sum_i f_args[i] v_i, through
    srcgrad's generated tangent code (sg.jvp)."""

    def __init__(self, func, args, time_first, arg_tangents):
        self.func = func
        self.args = tuple(args)
        self.time_first = time_first
        self.arg_tangents = [None if v is None or not _is_float(a) else v
                             for a, v in zip(self.args, list(arg_tangents) + [None] * len(args))]

    def __call__(self, t, y, s):
        primals = ((t, y) if self.time_first else (y, t)) + self.args
        tangents = ((None, s) if self.time_first else (s, None)) + tuple(self.arg_tangents)
        value, tangent = sg_jvp(self.func, primals, tangents)
        value = _FunctionVJP._flat(value)
        if tangent is None:
            return value, np.zeros_like(value)
        return value, _FunctionVJP._flat(tangent)


def tangent_sweep(jvp, integrate, taus, t0, y0, dy0, dtaus, dt0):
    """Forward sensitivities: s = dy/de solves s' = f_y s + f_args v_args from
    s(t0) = dy0 - f(y0, t0) dt0; the output at tau_i moves by s(tau_i) +
    f(y(tau_i), tau_i) dtau_i. `integrate(rhs, u0, times)` returns u at
    `times` (starting at times[0]). Returns the tangents (T, D)."""
    y0 = np.asarray(y0, dtype=float).reshape(-1)
    D = y0.size
    f0, _ = jvp(t0, y0, np.zeros(D))
    s0 = np.zeros(D) if dy0 is None else np.asarray(dy0, dtype=float).reshape(-1)
    if dt0 is not None:
        s0 = s0 - f0 * float(dt0)

    def rhs(t, u):
        f, js = jvp(t, u[:D], u[D:])
        return np.concatenate([f, js])

    times = np.concatenate([[t0], np.asarray(taus, dtype=float)])
    us = integrate(rhs, np.concatenate([y0, s0]), times)[1:]
    out = us[:, D:].copy()
    if dtaus is not None:
        for i, tau in enumerate(taus):
            out[i] += jvp(tau, us[i, :D], np.zeros(D))[0] * float(np.reshape(dtaus, -1)[i])
    return out


def _flatten(arrays):
    if not arrays:
        return np.zeros(0)
    return np.concatenate([np.reshape(np.asarray(v, dtype=float), -1) for v in arrays])


def _unflatten(flat, like):
    out, k = [], 0
    for v in like:
        n = int(np.size(v))
        out.append(np.reshape(flat[k:k + n], np.shape(v)))
        k += n
    return out


def adjoint_sweep(vjp, integrate, taus, ys, gs, t0, y0):
    """The backward sweep of the module docstring. `vjp(t, y, a)` gives
    (f, a^T f_y, [a^T f_args]); `integrate(rhs, s, t_from, t_to)` integrates
    s' = rhs(t, s) from t_from to t_to (backwards) and returns s(t_to);
    taus (T,), ys (T, D) the forward solution, gs (T, D) its cotangent.
    Returns (dL/dy0 (D,), dL/dtaus (T,), dL/dt0, [dL/dargs])."""
    T, D = np.shape(ys)
    like = vjp.leaves
    P = int(sum(np.size(v) for v in like))

    def rhs(t, s):
        f, gy, gp = vjp(t, s[:D], s[D:2 * D])
        return np.concatenate([f, -gy, -_flatten(gp)]) if P else np.concatenate([f, -gy])

    gtaus = np.array([np.dot(vjp.value(taus[i], ys[i]), gs[i]) for i in range(T)])
    a = np.zeros(D)
    gp = np.zeros(P)
    y = ys[T - 1]
    for i in range(T - 1, -1, -1):
        a = a + gs[i]
        y = ys[i]
        t_to = taus[i - 1] if i > 0 else t0
        if t_to != taus[i]:
            s = integrate(rhs, np.concatenate([y, a, gp]), taus[i], t_to)
            y, a, gp = s[:D], s[D:2 * D], s[2 * D:]
    gt0 = -np.dot(vjp.value(t0, np.asarray(y0, dtype=float).reshape(-1)), a)
    return a, gtaus, gt0, _unflatten(gp, like)


def _args_tuple(args):
    if args is None:
        return ()
    return tuple(args) if isinstance(args, (tuple, list)) else (args,)


def _float_cotangents(vjp, grads):
    """The cotangents of the floating leaves of args, in their dtypes."""
    return [np.asarray(g).astype(np.result_type(leaf, np.float32)) for leaf, g in zip(vjp.leaves, grads)]


def args_cotangent(args, grads):
    """The cotangent of the `args` argument from those of its floating
    leaves (`grads`, in order): srcgrad's container cotangent of the tuple
    (a list aligned with it, nested as its entries are, None where there is
    no derivative), or one cotangent when args was not a tuple."""
    if args is None:
        return None
    return _cotangent_tree(args, iter(grads))


def span_cotangent(t_span, g):
    """The cotangent of solve_ivp's t_span (a pair): a list for a list/tuple."""
    if isinstance(t_span, (tuple, list)):
        return [g[0], g[1]]
    return g


def _like(g, x):
    """g in x's shape and floating dtype."""
    dtype = np.asarray(x).dtype
    dtype = dtype if dtype.kind in "fc" else np.dtype(np.float64)
    return np.reshape(np.asarray(g), np.shape(x)).astype(dtype)


# ------------------------------------------------------------------ odeint

@primitive
def odeint_vjp(g, z, func, y0, t, args=(), rtol=None, atol=None, tcrit=None, h0=0.0, hmax=0.0,
               hmin=0.0, mxstep=0, mxordn=12, mxords=5, tfirst=False, full_output=0):
    """(dL/dy0, dL/dt, dL/dargs[i] for each floating args[i]) for y =
    scipy.integrate.odeint(func, y0, t, args, ...) with cotangent g
    (len(t), len(y0)): the adjoint sweep above, integrated backwards by
    odeint with the forward call's options. A flat tuple of arrays, so that
    the primitive records on tapes (args_cotangent regroups the last ones)."""
    if full_output:
        raise NotImplementedError("srcgrad: odeint(..., full_output=True) is not differentiable; "
                                  "call it without full_output")
    args_t = _args_tuple(args)
    vjp = _FunctionVJP(func, args_t, tfirst)
    options = dict(rtol=rtol, atol=atol, tcrit=tcrit, h0=h0, hmax=hmax, hmin=hmin, mxstep=mxstep,
                   mxordn=mxordn, mxords=mxords)

    def integrate(rhs, s, t_from, t_to):
        return si.odeint(rhs, s, np.array([t_from, t_to], dtype=float), tfirst=True, **options)[-1]

    taus = np.asarray(t, dtype=float)
    ys = np.asarray(z, dtype=float).reshape(len(taus), -1)
    gs = np.asarray(g, dtype=float).reshape(ys.shape)
    gy0, gtaus, gt0, gargs = adjoint_sweep(vjp, integrate, taus, ys, gs, taus[0], y0)
    gtaus = gtaus.copy()
    gtaus[0] += gt0
    return (_like(gy0, y0), _like(gtaus, t)) + tuple(_float_cotangents(vjp, gargs))


def _arg_tangents(args, dargs):
    if dargs is None:
        return [None] * len(_args_tuple(args))
    if args is not None and not isinstance(args, (tuple, list)):
        return [dargs]
    return list(dargs)


def odeint_jvp(z, func, y0, t, args, dy0, dt, dargs, rtol=None, atol=None, tcrit=None, h0=0.0,
               hmax=0.0, hmin=0.0, mxstep=0, mxordn=12, mxords=5, tfirst=False):
    """The tangent of y = odeint(func, y0, t, args, ...) for tangents dy0,
    dt, dargs (None: none): tangent_sweep, integrated forwards by odeint with
    the call's options (forward sensitivity analysis; Hindmarsh et al. 2005,
    SUNDIALS, 2.6)."""
    args_t = _args_tuple(args)
    jvp = _FunctionJVP(func, args_t, tfirst, _arg_tangents(args, dargs))
    options = dict(rtol=rtol, atol=atol, tcrit=tcrit, h0=h0, hmax=hmax, hmin=hmin, mxstep=mxstep,
                   mxordn=mxordn, mxords=mxords)

    def integrate(rhs, u0, times):
        if times[0] == times[1]:                      # odeint's first output is t0 itself
            return np.concatenate([u0[None], si.odeint(rhs, u0, times[1:], tfirst=True,
                                                       **options)])
        return si.odeint(rhs, u0, times, tfirst=True, **options)

    taus = np.asarray(t, dtype=float)
    out = tangent_sweep(jvp, integrate, taus, taus[0], y0, dy0, dt, None if dt is None else
                        np.reshape(dt, -1)[0])
    return out.reshape(np.shape(z)).astype(np.asarray(z).dtype)


# --------------------------------------------------------------- solve_ivp

@nondiff_helper
def ivp_options(first_step=None, max_step=None, rtol=None, atol=None, jac=None,
                jac_sparsity=None, lband=None, uband=None, min_step=None):
    """solve_ivp's **options that were given (None: the solver's default)."""
    given = dict(first_step=first_step, max_step=max_step, rtol=rtol, atol=atol, jac=jac,
                 jac_sparsity=jac_sparsity, lband=lband, uband=uband, min_step=min_step)
    return {k: v for k, v in given.items() if v is not None}


def _ode_result_cotangent(g, z):
    """The cotangent of sol.y from that of the OdeResult (a dict: read as
    sol["y"]); zeros when only other fields were used."""
    gy = g.get("y") if isinstance(g, dict) else g
    if gy is None:
        return np.zeros(np.shape(z["y"]))
    return np.asarray(gy, dtype=float)


@primitive
def solve_ivp_vjp(g, z, fun, t_span, y0, method="RK45", t_eval=None, args=None, options=None):
    """(dL/dy0, dL/dt_span (2,), dL/dt_eval, dL/dargs[i] for each floating
    args[i]), a flat tuple of arrays, for sol = scipy.integrate.
    solve_ivp(fun, t_span, y0, method, t_eval, args=args, **options), whose
    sol["y"] (len(y0), len(sol.t)) has cotangent g["y"]: the adjoint sweep
    above, integrated backwards by solve_ivp with the same method and
    options. Without t_eval the output times are the solver's steps: the
    first and last move with t_span, the others are held fixed."""
    options = dict(options or {})
    if z.get("t_events") is not None:
        raise NotImplementedError("srcgrad: solve_ivp with events is not differentiable here")
    args_t = _args_tuple(args)
    vjp = _FunctionVJP(fun, args_t, True)
    options.pop("jac", None)             # the forward Jacobian is not the augmented system's
    options.pop("jac_sparsity", None)

    def integrate(rhs, s, t_from, t_to):
        sol = si.solve_ivp(rhs, (t_from, t_to), s, method=method, **options)
        if not sol.success:
            raise RuntimeError("srcgrad: the adjoint integration of solve_ivp failed: %s"
                               % sol.message)
        return sol.y[:, -1]

    taus = np.asarray(z["t"], dtype=float)
    ys = np.asarray(z["y"], dtype=float).T
    gs = _ode_result_cotangent(g, z).T
    t0 = float(t_span[0])
    gy0, gtaus, gt0, gargs = adjoint_sweep(vjp, integrate, taus, ys, gs, t0, y0)
    gspan = np.zeros(2)
    gspan[0] = gt0
    if t_eval is None:
        gspan[0] += gtaus[0]
        gspan[1] += gtaus[-1]
        geval = np.zeros(0)
    else:
        geval = _like(gtaus, t_eval)
    return (_like(gy0, y0), gspan, geval) + tuple(_float_cotangents(vjp, gargs))


def solve_ivp_jvp(z, fun, t_span, y0, method, t_eval, args, dspan, dy0, deval, dargs, options):
    """The tangent of sol = solve_ivp(...): a dict with the tangent of
    sol["y"] (and of sol["t"]), by tangent_sweep integrated forwards by
    solve_ivp with the call's method and options."""
    options = dict(options or {})
    options.pop("jac", None)
    options.pop("jac_sparsity", None)
    jvp = _FunctionJVP(fun, _args_tuple(args), True, _arg_tangents(args, dargs))

    def integrate(rhs, u0, times):
        sol = si.solve_ivp(rhs, (times[0], times[-1]), u0, method=method, t_eval=times[1:],
                           **options)
        return np.concatenate([u0[None], sol.y.T])

    taus = np.asarray(z["t"], dtype=float)
    t0 = float(t_span[0])
    dt0 = None if dspan is None or dspan[0] is None else float(np.reshape(dspan[0], -1)[0])
    if t_eval is None:
        dtaus = np.zeros(len(taus))
        if dt0 is not None:
            dtaus[0] = dt0
        if dspan is not None and dspan[1] is not None:
            dtaus[-1] = float(np.reshape(dspan[1], -1)[0])
    else:
        dtaus = None if deval is None else np.asarray(deval, dtype=float)
    ty = tangent_sweep(jvp, integrate, taus, t0, y0, dy0, dtaus, dt0)
    dt_out = np.zeros(len(taus)) if dtaus is None else np.asarray(dtaus, dtype=float)
    return {"y": ty.T.astype(np.asarray(z["y"]).dtype), "t": dt_out}


@nondiff_helper
def no_second_derivative(name):
    """The rule of odeint_vjp / solve_ivp_vjp: second derivatives through an
    ODE solve are not implemented."""
    raise NotImplementedError(
        "srcgrad: second derivatives through scipy.integrate.%s are not implemented (the "
        "backward sweep is itself an ODE solve of a function built at run time)" % name)

# ------------------------------------------------------------------ the rules


@register_adjoint(si.odeint)
def odeint(z, func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None,
           rtol=None, atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0,
           mxhnil=0, mxordn=12, mxords=5, printmessg=0, tfirst=False):
    """y(t) of y' = func(y, t, *args): dL/dy0 = a(t0), dL/dargs = int a^T df/dargs dt,
    dL/dt_i = g_i . f(y_i, t_i) (and -a(t0) . f(y0, t0) for t_0), with the adjoint a integrated
    backwards by odeint (Chen et al. 2018, Appendix B)."""
    adj = odeint_vjp(d[z], z, func, y0, t, args, rtol, atol, tcrit, h0, hmax, hmin, mxstep,
                     mxordn, mxords, tfirst, full_output)
    d[y0] = adj[0]
    d[t] = adj[1]
    d[args] = args_cotangent(args, adj[2:])


@register_adjoint(si.solve_ivp)
def solve_ivp(z, fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
              vectorized=False, args=None, first_step=None, max_step=None, rtol=None, atol=None,
              jac=None, jac_sparsity=None, lband=None, uband=None, min_step=None):
    """sol["y"] at sol["t"] for y' = fun(t, y, *args): the adjoint method as odeint's, the
    backward sweep integrated by solve_ivp with the same method and options."""
    adj = solve_ivp_vjp(d[z], z, fun, t_span, y0, method, t_eval, args,
                        ivp_options(first_step, max_step, rtol, atol, jac, jac_sparsity, lband,
                                    uband, min_step))
    d[y0] = adj[0]
    d[t_span] = span_cotangent(t_span, adj[1])
    d[t_eval] = adj[2]
    d[args] = args_cotangent(args, adj[3:])


# an OdeResult is a dict (read sol["y"], sol["t"]): its cotangent is a dict too
adjoint_rule(si.solve_ivp).sequence_output = True


@register_adjoint(odeint_vjp)
def odeint_vjp_(z, g, zz, func, y0, t, args=(), rtol=None, atol=None, tcrit=None, h0=0.0,
                hmax=0.0, hmin=0.0, mxstep=0, mxordn=12, mxords=5, tfirst=False, full_output=0):
    """Second derivatives through odeint: not implemented (NotImplementedError)."""
    d[g] = no_second_derivative("odeint")
    d[y0] = no_second_derivative("odeint")
    d[t] = no_second_derivative("odeint")


@register_adjoint(solve_ivp_vjp)
def solve_ivp_vjp_(z, g, zz, fun, t_span, y0, method="RK45", t_eval=None, args=None,
                   options=None):
    """Second derivatives through solve_ivp: not implemented (NotImplementedError)."""
    d[g] = no_second_derivative("solve_ivp")
    d[y0] = no_second_derivative("solve_ivp")


# ------------------------------------------------------ forward mode (JVP)


@register_tangent(si.odeint)
def odeint_tangent(z, func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None,
                   mu=None, rtol=None, atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0,
                   mxstep=0, mxhnil=0, mxordn=12, mxords=5, printmessg=0, tfirst=False):
    """Forward sensitivities s' = f_y s + f_args v, s(t0) = dy0 - f(y0, t0) dt0, integrated by
    odeint with the call's options."""
    t[z] = odeint_jvp(z, func, y0, t, args, t[y0], t[t], t[args], rtol, atol, tcrit, h0, hmax,
                      hmin, mxstep, mxordn, mxords, tfirst)


@register_tangent(si.solve_ivp)
def solve_ivp_tangent(z, fun, t_span, y0, method="RK45", t_eval=None, dense_output=False,
                      events=None, vectorized=False, args=None, first_step=None, max_step=None,
                      rtol=None, atol=None, jac=None, jac_sparsity=None, lband=None, uband=None,
                      min_step=None):
    """The tangent of sol["y"] (a dict, as the result), by forward sensitivities integrated by
    solve_ivp."""
    t[z] = solve_ivp_jvp(z, fun, t_span, y0, method, t_eval, args, t[t_span], t[y0], t[t_eval],
                         t[args], ivp_options(first_step, max_step, rtol, atol, jac, jac_sparsity,
                                              lband, uband, min_step))
