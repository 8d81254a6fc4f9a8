"""Workload 1 (issue 10): a damped pendulum integrated for 1000 steps on
Python floats with `math.sin`; the gradient of the final angle with respect
to the initial angle and the damping, d theta_N / d(theta0, c).

The integrator is semi-implicit Euler with dt = 0.01 and g/l = 9.81:

    alpha = -9.81 sin(theta) - c omega;  omega += dt alpha;  theta += dt omega

The hand-written derivative is the adjoint loop written by hand in Python
floats (the states saved going forward, then one reverse loop). Besides the
ratio to it, the issue's goals compare srcgrad's gradient with srcgrad's
OWN forward (the plain function, same floats: target <= 5x) and with
autograd (target: srcgrad >= 20x faster). This is the workload where
per-operation overhead dominates: 1000 x 6 scalar operations.

Paths: `sg.grad` on Python floats; the `@sg.function` on a tape (0-d
Variables); op by op on a tape (the same loop with `np.sin`, since
`math.sin` of a Tensor would leave the tape); autograd (`autograd.numpy.sin`
on floats); JAX eager (`jax.grad` of the Python loop); JAX jit with
`lax.fori_loop` (jitting the Python loop unrolls 1000 steps and takes about
a minute to compile, so that form is not timed); PyTorch eager (0-d
tensors).
"""
import math

import numpy as np

from benchmarks import harness

NAME = "pendulum"
TITLE = "damped pendulum, Python floats, d theta_N / d(theta0, c)"

DT = 0.01
STEPS = 1000


def make_pendulum(steps):
    """The user's function, as written in the issue (floats, math.sin)."""
    # `steps` is a closure constant; srcgrad resolves it at transform time.
    def pendulum(theta0, c):
        theta = theta0
        omega = 0.0
        for i in range(steps):
            alpha = -9.81 * math.sin(theta) - c * omega
            omega = omega + 0.01 * alpha
            theta = theta + 0.01 * omega
        return theta
    return pendulum


def make_pendulum_np(steps):
    """The same loop with np.sin, for the op-by-op tape (0-d Tensors)."""
    def pendulum_np(theta0, c):
        theta = theta0
        omega = 0.0
        for i in range(steps):
            alpha = -9.81 * np.sin(theta) - c * omega
            omega = omega + 0.01 * alpha
            theta = theta + 0.01 * omega
        return theta
    return pendulum_np


def make_hand_written(steps):
    def grad_by_hand(theta0, c):
        """Adjoint of the loop above, by hand, in Python floats."""
        thetas = [0.0] * steps
        omegas = [0.0] * steps
        theta, omega = theta0, 0.0
        for i in range(steps):
            thetas[i] = theta
            omegas[i] = omega
            omega = omega + DT * (-9.81 * math.sin(theta) - c * omega)
            theta = theta + DT * omega
        btheta, bomega, bc = 1.0, 0.0, 0.0
        for i in range(steps - 1, -1, -1):
            bomega += DT * btheta               # theta_new = theta + dt * omega_new
            balpha = DT * bomega                # omega_new = omega + dt * alpha
            btheta += balpha * -9.81 * math.cos(thetas[i])
            bc -= balpha * omegas[i]
            bomega -= balpha * c
        return btheta, bc
    return grad_by_hand


def sg_jit_case(cache=False):
    """A call of sg.jit of the gradient at the benchmark's point (its first
    call compiles; `cache`: with the on-disk cache)."""
    import srcgrad as sg
    jitted = sg.jit(sg.grad(make_pendulum(STEPS), wrt=(0, 1)), cache=cache)
    return lambda: jitted(0.5, 0.3)


def run(bench):
    import srcgrad as sg

    steps = 50 if bench.settings.small else STEPS
    bench.params = {"steps": steps, "dt": DT, "theta0": 0.5, "c": 0.3}
    bench.tolerance(1e-9, 1e-12)
    theta0, c = 0.5, 0.3
    pendulum = make_pendulum(steps)
    pendulum_np = make_pendulum_np(steps)

    by_hand = make_hand_written(steps)
    bench.reference("hand-written adjoint (floats)", lambda: by_hand(theta0, c))
    bench.path("plain forward (no gradient)", lambda: pendulum(theta0, c), check=False,
               notes="the function itself: the floor of srcgrad's own-forward ratio")

    grad = sg.grad(pendulum, wrt=(0, 1))
    bench.path("srcgrad sg.grad", lambda: grad(theta0, c))

    harness.sg_jit_paths(bench, sg_jit_case, notes="the generated gradient compiled by Numba")
    harness.sg_jit_cached_first(bench, __name__)

    compiled = sg.function(pendulum)
    v_theta0, v_c = sg.Variable(theta0), sg.Variable(c)

    def tape_compiled():
        with sg.GradientTape() as tape:
            y = compiled(v_theta0, v_c)
        return tape.gradient(y, [v_theta0, v_c])
    bench.path("srcgrad @sg.function on tape", tape_compiled, notes="0-d Variables")

    def make_tape_jit():
        jitted = sg.function(jit=True)(pendulum)

        def tape_jit():
            with sg.GradientTape() as tape:
                y = jitted(v_theta0, v_c)
            return tape.gradient(y, [v_theta0, v_c])
        return tape_jit
    harness.sg_jit_paths(bench, make_tape_jit, notes="0-d Variables; the split sweeps compiled by Numba",
                         steady_name=harness.TAPE_JIT_STEADY, first_name=harness.TAPE_JIT_FIRST)

    def tape_op_by_op():
        with sg.GradientTape() as tape:
            y = pendulum_np(v_theta0, v_c)
        return tape.gradient(y, [v_theta0, v_c])
    bench.path("srcgrad op by op on tape", tape_op_by_op, notes="np.sin in place of math.sin")

    autograd = harness.optional("autograd")
    if autograd is None:
        bench.skip("autograd", harness.unavailable("autograd"))
    else:
        import autograd.numpy as anp

        def pendulum_ag(theta0, c):
            theta, omega = theta0, 0.0
            for i in range(steps):
                alpha = -9.81 * anp.sin(theta) - c * omega
                omega = omega + 0.01 * alpha
                theta = theta + 0.01 * omega
            return theta
        ag = autograd.grad(lambda p: pendulum_ag(p[0], p[1]))
        bench.path("autograd", lambda: ag((theta0, c)), notes="anp.sin on floats")

    jax, jnp = harness.jax_modules()
    if jax is None:
        for name in ("JAX eager", "JAX jit (steady state)", "JAX jit first call"):
            bench.skip(name, harness.unavailable("jax"))
    else:
        def pendulum_jax(theta0, c):
            theta, omega = theta0, 0.0
            for i in range(steps):
                alpha = -9.81 * jnp.sin(theta) - c * omega
                omega = omega + 0.01 * alpha
                theta = theta + 0.01 * omega
            return theta
        j_args = (jnp.float64(theta0), jnp.float64(c))
        j_eager = jax.grad(pendulum_jax, argnums=(0, 1))
        bench.path("JAX eager", lambda: jax.block_until_ready(j_eager(*j_args)),
                   notes="jax.grad of the Python loop, not jitted", costly_start=True)

        def make_jit():
            def pendulum_fori(theta0, c):
                def step(i, state):
                    theta, omega = state
                    omega = omega + 0.01 * (-9.81 * jnp.sin(theta) - c * omega)
                    return theta + 0.01 * omega, omega
                return jax.lax.fori_loop(0, steps, step, (theta0, 0.0 * theta0))[0]
            g = jax.jit(jax.grad(pendulum_fori, argnums=(0, 1)))
            return lambda: jax.block_until_ready(g(*j_args))
        bench.jit_paths("JAX jit (steady state)", "JAX jit first call", make_jit,
                        notes="lax.fori_loop (jitting the Python loop unrolls it: ~1 min compile)")

    torch = harness.torch_module()
    if torch is None:
        bench.skip("PyTorch eager", harness.unavailable("torch"))
    else:
        t_theta0 = torch.tensor(theta0, dtype=torch.float64, requires_grad=True)
        t_c = torch.tensor(c, dtype=torch.float64, requires_grad=True)

        def torch_grad():
            theta, omega = t_theta0, torch.zeros((), dtype=torch.float64)
            for i in range(steps):
                alpha = -9.81 * torch.sin(theta) - t_c * omega
                omega = omega + 0.01 * alpha
                theta = theta + 0.01 * omega
            return torch.autograd.grad(theta, (t_theta0, t_c))
        bench.path("PyTorch eager", torch_grad, notes="0-d float64 tensors")

    bench.target("sg.grad / its own forward",
                 lambda: bench.ratio("srcgrad sg.grad", "plain forward (no gradient)"),
                 "<=", 5, "issue 10")
    bench.target("sg.grad speed-up over autograd",
                 lambda: bench.ratio("autograd", "srcgrad sg.grad"), ">=", 20, "issue 10")
