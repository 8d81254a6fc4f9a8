"""Run-time helpers for the scipy.integrate rules (scipy_integrate.py): the
adjoint method for ODE solutions.

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
cannot be compiled); srcgrad is imported inside the functions below
(srcgrad imports the rules).

`odeint_vjp` and `solve_ivp_vjp` are primitives whose own rule refuses a
second derivative (NotImplementedError): the backward sweep is a SciPy
integration of a function built at run time, which srcgrad does not
differentiate again.
"""
import numpy as np
import scipy.integrate as si

from .helpers import nondiff_helper, primitive


def _is_float(v):
    """Does argument `v` of the user's function take a cotangent (a floating
    array or number)?"""
    if isinstance(v, (bool, str, bytes)) or v is None or callable(v):
        return False
    try:
        return np.result_type(v).kind in "fc"
    except TypeError:
        return False


class _FunctionVJP:
    """f(t, y, *args) and its VJPs a^T df/dy, a^T df/dargs[i] for the
    floating arguments, through srcgrad (compiled when it can be)."""

    def __init__(self, func, args, time_first):
        import srcgrad as sg     # late: srcgrad imports the rules
        self.sg = sg
        self.func = func
        self.args = tuple(args)
        self.time_first = time_first
        self.diff = [i for i, a in enumerate(self.args) if _is_float(a)]
        try:
            self.compiled = sg.function(func)
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
        except self.sg.UnsupportedSyntaxError:
            self.compiled = None
        return self._vjp(self.func, t, y, a)

    def _vjp(self, fn, t, y, a):
        sg = self.sg
        ys = sg.constant(y)
        args = list(self.args)
        watched = [sg.constant(args[i]) for i in self.diff]
        for i, w in zip(self.diff, watched):
            args[i] = w
        with sg.GradientTape() as tape:
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
    like = [vjp.args[i] for i in vjp.diff]
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


def _args_cotangent(args, vjp, grads):
    """The cotangent of the `args` argument: a list aligned with the tuple
    (None for non-floating entries), or one array when args was not a tuple."""
    out = [None] * len(_args_tuple(args))
    for i, g in zip(vjp.diff, grads):
        out[i] = g.astype(np.result_type(vjp.args[i], np.float32)) if hasattr(g, "astype") else g
    if args is not None and not isinstance(args, (tuple, list)):
        return out[0]
    return out


def _like(g, x):
    """g in x's shape and floating dtype."""
    dtype = np.asarray(x).dtype
    dtype = dtype if dtype.kind in "fc" else np.dtype(np.float64)
    return np.reshape(np.asarray(g), np.shape(x)).astype(dtype)


# ------------------------------------------------------------------ odeint

@primitive
def odeint_vjp(g, z, func, y0, t, args=(), rtol=None, atol=None, tcrit=None, h0=0.0, hmax=0.0,
               hmin=0.0, mxstep=0, mxordn=12, mxords=5, tfirst=False, full_output=0):
    """(dL/dy0, dL/dt, dL/dargs) for y = scipy.integrate.odeint(func, y0, t,
    args, ...) with cotangent g (len(t), len(y0)): the adjoint sweep above,
    integrated backwards by odeint with the forward call's options."""
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
    return _like(gy0, y0), _like(gtaus, t), _args_cotangent(args, vjp, gargs)


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
    """(dL/dy0, dL/dt_span, dL/dt_eval, dL/dargs) for sol = scipy.integrate.
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
        geval = None
    else:
        geval = _like(gtaus, t_eval)
    if isinstance(t_span, (list, tuple)):
        gspan = list(gspan)
    return _like(gy0, y0), gspan, geval, _args_cotangent(args, vjp, gargs)


@nondiff_helper
def no_second_derivative(name):
    """The rule of odeint_vjp / solve_ivp_vjp: second derivatives through an
    ODE solve are not implemented."""
    raise NotImplementedError(
        "srcgrad: second derivatives through scipy.integrate.%s are not implemented (the "
        "backward sweep is itself an ODE solve of a function built at run time)" % name)
