"""Adjoint rules for scipy.integrate's ODE solvers (optional: imported only
when SciPy is): odeint and solve_ivp, by the adjoint method (helpers_integrate.py).

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
"""
import scipy.integrate as si

from .helpers_integrate import (args_cotangent, ivp_options, no_second_derivative, odeint_jvp,
                                odeint_vjp, solve_ivp_jvp, solve_ivp_vjp, span_cotangent)
from .registry import adjoint_rule, register_adjoint
from .tangents import register_tangent


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
