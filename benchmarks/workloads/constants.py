"""Workload (issue 18, "no cliffs in plain NumPy"): the same physics loop
with its constants written three ways: as literals, as module-level globals
(`G = 9.81` above the function, as users write them), and as closure
constants of a factory. srcgrad specialises the globals and closure cells
like literals (recompiling when one is rebound), so the three gradients
should cost the same; before that, a float read from a global turned the
scalar specialisation off and the gradient was 185x slower.

The loop is a damped oscillator on Python floats, 500 steps:

    omega -= dt (G sin(theta) + C c omega);  theta += dt omega

d theta_N / d(theta0, c). Reference: the adjoint written by hand (floats).
"""
import math

from benchmarks import harness

NAME = "constants"
TITLE = "500-step loop with constants as literals, module globals, closure cells"

STEPS = 500
G = 9.81            # module-level constants, read by `oscillator_globals`
C = 0.5
DT = 0.01


def oscillator_literals(theta, c):
    omega = 0.0
    for i in range(STEPS):
        omega = omega - 0.01 * (9.81 * math.sin(theta) + 0.5 * c * omega)
        theta = theta + 0.01 * omega
    return theta


def oscillator_globals(theta, c):
    omega = 0.0
    for i in range(STEPS):
        omega = omega - DT * (G * math.sin(theta) + C * c * omega)
        theta = theta + DT * omega
    return theta


def make_oscillator(g, k, dt):
    """The same loop with its constants in closure cells."""
    def oscillator_closure(theta, c):
        omega = 0.0
        for i in range(STEPS):
            omega = omega - dt * (g * math.sin(theta) + k * c * omega)
            theta = theta + dt * omega
        return theta
    return oscillator_closure


def grad_by_hand(theta0, c):
    """The adjoint of the loop, by hand, in Python floats."""
    thetas = [0.0] * STEPS
    omegas = [0.0] * STEPS
    theta, omega = theta0, 0.0
    for i in range(STEPS):
        thetas[i], omegas[i] = theta, omega
        omega = omega - DT * (G * math.sin(theta) + C * c * omega)
        theta = theta + DT * omega
    btheta, bomega, bc = 1.0, 0.0, 0.0
    for i in range(STEPS - 1, -1, -1):
        bomega += DT * btheta                   # theta_new = theta + dt omega_new
        badd = -DT * bomega                     # omega_new = omega - dt (...)
        btheta += badd * G * math.cos(thetas[i])
        bc += badd * C * omegas[i]
        bomega += badd * C * c
    return btheta, bc


def run(bench):
    import srcgrad as sg

    bench.params = {"steps": STEPS, "G": G, "C": C, "dt": DT}
    bench.tolerance(1e-9, 1e-12)
    theta0, c = 0.4, 0.3
    bench.reference("hand-written adjoint (floats)", lambda: grad_by_hand(theta0, c))
    paths = [("srcgrad sg.grad, literals", oscillator_literals, "9.81 and 0.5 written in the loop"),
             ("srcgrad sg.grad, module globals", oscillator_globals, "G = 9.81 at module level"),
             ("srcgrad sg.grad, closure constants", make_oscillator(G, C, DT), "a factory's cells")]
    for name, f, notes in paths:
        grad = sg.grad(f, wrt=(0, 1))
        bench.path(name, lambda grad=grad: grad(theta0, c), notes=notes)
    for name, _, _ in paths[1:]:
        bench.target("%s / literals" % name.split(", ")[1],
                     lambda name=name: bench.ratio(name, "srcgrad sg.grad, literals"), "<=", 1.2, "issue 18")

    def make_sg_jit():
        jitted = sg.jit(sg.grad(oscillator_globals, wrt=(0, 1)))
        return lambda: jitted(theta0, c)
    harness.sg_jit_paths(bench, make_sg_jit, notes="module globals; the generated gradient compiled by Numba")
