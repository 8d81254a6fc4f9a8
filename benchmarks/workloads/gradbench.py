"""Workload (issue 18): GradBench's nine evals (github.com/gradbench/gradbench:
gmm, lstm, ba, ht, ode, lse, det, kmeans, llsq), with srcgrad used the way
a user after speed would use it: `sg.grad` (`sg.jacobian` for ht,
`sg.jvp` of `sg.grad` for kmeans' gradient and Hessian diagonal), wrapped
in `sg.jit`. Goal: srcgrad's geo-mean time <= 1.0x JAX jit's and <= 0.5x PyTorch's.

Each objective is written once in plain NumPy (`_gradbench_objectives.py`,
from the evals' READMEs). What is measured, per eval, and at which of
GradBench's standard input shapes (the inputs are drawn here with a fixed
seed, as GradBench's generators draw theirs; nothing is read from GradBench):

  gmm     gradient of the log posterior w.r.t. alpha, mu, q, l;
          d=10, k=5, n=1000 (GradBench's "10_5_1000"), m=0, gamma=1
  lstm    gradient w.r.t. main_params, extra_params; l=2 layers, c=1024
          characters of b=14 bits (ADBench's lstm_l2_c1024; random bits
          here, where GradBench encodes a text)
  ba      the nonzero values of the sparse Jacobian: per observation the
          2 x 15 block of the reprojection error w.r.t. its camera (11),
          point (3) and weight (1), and the derivative of each weight error;
          n=49 cameras, m=7776 points, p=31843 observations (ba1), the
          observations pairing camera i % n with point i % m as GradBench's
          duplication does, but with distinct random values for every camera,
          point, weight and feature
  ht      the dense 300 x 26 Jacobian of the simple variant (no `us`):
          22 bones, 544 vertices, 100 correspondences (simple_small hand1);
          the hand model is random, with ADBench's bone tree
  ode     gradient of the last component of the RK4 solution w.r.t. x;
          n=1000, s=10. With every GradBench shape (n >= 4 s), that
          component and its gradient are exactly 0 (each RK4 step reaches 4
          components further), so the check is only meaningful at --small
          sizes (n=8, s=3)
  lse     gradient; n=80000 (x uniform in [0, 1), as GradBench)
  det     gradient of the determinant by expansion in minors; ell=5
          (JAX's jit of the unrolled recursion compiles in ~4 s for ell=5,
          ~27 s for ell=6, ~11 min for ell=7)
  kmeans  GradBench's "dir": J / H with J the gradient of the cost w.r.t.
          the centroids and H its (diagonal) Hessian's diagonal, H . 1;
          k=10, n=10000, d=8; the centroids are the last k points (as
          GradBench chooses them: no cluster is empty)
  llsq    gradient; n=4096 points, m=128 coefficients

At --small, every size is tiny (seconds for the whole workload), and JAX
jit is not run for gmm, lstm, ba and ht (its trace and compile take
seconds whatever the size): autograd is their reference there.

Paths per eval (rows "<eval>: <path>"):
  srcgrad sg.grad (sg.jacobian / sg.hvp where the eval's output is one)
  srcgrad sg.jit (steady state) and first call: sg.jit of that gradient
    (`sg.jit` compiles what sg.grad returns; its fallback to CPython, with
    the reason, is recorded as a skip, never timed). Not run at --small.
  JAX jit (steady state) and first call: the same source with jax.numpy
    (`swapped`), except lstm (a `lax.scan` over time steps: jitting the
    Python loop does not compile in minutes); ht uses `jax.jacfwd`
  PyTorch eager: a torch port of the same objective, `torch.autograd.grad`
    (ht: `torch.func.jacfwd`; kmeans: `torch.func.jvp` of `torch.func.grad`)
  autograd: the same source with autograd.numpy; a call slower than half
    the path budget (lstm, ht: seconds) is timed once, by its checked call

Checks: the reference is JAX jit's result (autograd's when JAX is absent,
and at --small for gmm, lstm, ba, ht), itself checked against central
differences of the plain NumPy objective on a few coordinates (kmeans' H:
its closed form, 2 x the points nearest each centroid); every other path
must agree with it (np.allclose, rtol 1e-7) before it is timed.

Summary goals (issue 18), per eval and as geo-means over the evals: the
time of srcgrad's best path (the faster of sg.grad and sg.jit's steady
state) over JAX jit's steady state, target <= 1.0, and over PyTorch eager,
target <= 0.5.

Budget: with the default settings the workload takes about 130 s on a
2-core machine (129 s measured with --threads 1; 80-89 s before gmm, lstm
and ode compiled under sg.jit; --small 6 s), half of it in Numba compiling
the sg.jit paths (gmm ~40 s, lstm ~20 s, ode ~10 s), much of the rest in
the slow paths (lstm, ht) and JAX's compiles.
sg.jit of ba is not attempted by default: Numba spends ~75 s compiling it
(set GRADBENCH_JIT_ALL=1 to try it; its steady state is then about sg.grad's).
"""
import math
import os
import time
import types
import warnings

import numpy as np

from benchmarks import harness
from benchmarks.workloads import _gradbench_objectives as objectives

NAME = "gradbench"
TITLE = "GradBench's 9 evals: srcgrad (sg.grad, sg.jit) vs JAX jit, PyTorch, autograd"

EVALS = ["gmm", "lstm", "ba", "ht", "ode", "lse", "det", "kmeans", "llsq"]

SIZES = {
    False: {"gmm": dict(d=10, k=5, n=1000), "lstm": dict(layers=2, c=1024, b=14),
            "ba": dict(n=49, m=7776, p=31843), "ht": dict(vertices=544, points=100),
            "ode": dict(n=1000, s=10), "lse": dict(n=80000), "det": dict(ell=5),
            "kmeans": dict(k=10, n=10000, d=8), "llsq": dict(n=4096, m=128)},
    True: {"gmm": dict(d=3, k=2, n=20), "lstm": dict(layers=2, c=6, b=4),
           "ba": dict(n=3, m=5, p=12), "ht": dict(vertices=30, points=10),
           "ode": dict(n=8, s=3), "lse": dict(n=50), "det": dict(ell=3),
           "kmeans": dict(k=3, n=30, d=2), "llsq": dict(n=16, m=8)},
}

#: evals whose sg.jit is not attempted by default: the attempt costs more
#: than the workload's whole budget (Numba compiling it)
SLOW_JIT_FALLBACK = {
    "ba": "not attempted (GRADBENCH_JIT_ALL=1 tries it): Numba compiles it for ~75 s, more than the "
          "workload's budget (its steady state is then about sg.grad's: 33 ms vs 32 ms)",
}

#: ADBench's hand: each bone's parent (wrist, then 4 bones per finger, forearm)
HAND_PARENTS = [-1, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11, 0, 13, 14, 15, 0, 17, 18, 19, 0]


# ---------------------------------------------------------------- the same source, other libraries
def swapped(numpy_module, **twins):
    """The objectives module's functions with `np` bound to
    `numpy_module` (each function, so that helpers called by name are
    swapped too: `_swap.with_numpy` rebinds one function), `twins` mapping
    helper names to the names of their stand-ins (element assignment ->
    `*_stacked`)."""
    namespace = dict(objectives.__dict__)
    namespace["np"] = numpy_module
    for name, value in list(namespace.items()):
        if isinstance(value, types.FunctionType) and value.__module__ == objectives.__name__:
            namespace[name] = types.FunctionType(value.__code__, namespace, name, value.__defaults__,
                                                 value.__closure__)
    for name, stand_in in twins.items():
        namespace[name] = namespace[stand_in]
    return types.SimpleNamespace(**namespace)


NO_ASSIGNMENT = dict(gmm_Q="gmm_Q_stacked", to_pose_params="to_pose_params_stacked")


# ---------------------------------------------------------------- inputs
def make_gmm(d, k, n, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    alpha, mu, q = rng.normal(size=k), rng.uniform(size=(k, d)), rng.normal(size=(k, d))
    l = rng.normal(size=(k, d * (d - 1) // 2))
    return (alpha, mu, q, l), (x, 0, 1.0)


def make_lstm(layers, c, b, seed=0):
    rng = np.random.default_rng(seed)
    main_params, extra_params = rng.random((2 * layers, 4 * b)), rng.random((3, b))
    state = rng.random((2 * layers, b))
    sequence = rng.integers(0, 2, (c, b)).astype(np.float64)   # the bits of c characters
    return (main_params, extra_params), (state, sequence)


def make_ba(n, m, p, seed=0):
    """Per-observation cameras, points, weights and features (gathered by
    GradBench's observation pattern: camera i % n, point i % m)."""
    rng = np.random.default_rng(seed)
    cams = np.concatenate([rng.normal(0, 0.2, (n, 3)), rng.normal(0, 0.5, (n, 3)),
                           rng.uniform(300, 500, (n, 1)), rng.normal(0, 5, (n, 2)),
                           rng.normal(0, 0.05, (n, 1)), rng.normal(0, 0.005, (n, 1))], axis=1)
    X = np.concatenate([rng.uniform(-2, 2, (m, 2)), rng.uniform(6, 12, (m, 1))], axis=1)
    w = rng.uniform(0.5, 1.5, p)
    feats = rng.normal(0, 100, (p, 2))
    obs = np.arange(p)
    return cams[obs % n], X[obs % m], w, feats


def _rotation(v):
    theta = np.linalg.norm(v)
    K = np.cross(np.eye(3), v / theta)
    return np.eye(3) + np.sin(theta) * K + (1 - np.cos(theta)) * K @ K


def make_ht(vertices, points, seed=0):
    """A random hand: ADBench's bone tree, random rigid bone transforms,
    each vertex skinned to 3 random bones; theta: 26 pose parameters."""
    rng = np.random.default_rng(seed)
    n_bones = len(HAND_PARENTS)
    base_relatives = np.zeros((n_bones, 4, 4))
    absolutes = []
    for i in range(n_bones):
        base_relatives[i, :3, :3] = _rotation(rng.normal(0, 0.3, 3))
        base_relatives[i, :3, 3] = rng.normal(0, 0.03, 3)
        base_relatives[i, 3, 3] = 1.0
        parent = HAND_PARENTS[i]
        absolutes.append(base_relatives[i] if parent == -1 else absolutes[parent] @ base_relatives[i])
    inverse_base_absolutes = np.stack([np.linalg.inv(a) for a in absolutes])
    base_positions = np.concatenate([rng.normal(0, 0.05, (vertices, 3)), np.ones((vertices, 1))], axis=1)
    weights = np.zeros((n_bones, vertices))
    for v in range(vertices):
        bones = rng.choice(n_bones, 3, replace=False)
        share = rng.random(3)
        weights[bones, v] = share / share.sum()
    correspondences = rng.integers(0, vertices, points)
    observed = rng.normal(0, 0.05, (points, 3))
    theta = rng.normal(0, 0.3, 26)
    model = (np.array(HAND_PARENTS), base_relatives, inverse_base_absolutes, base_positions, weights,
             correspondences, observed)
    return theta, model


# ---------------------------------------------------------------- central differences
def _central(f, x, index, h):
    xp, xm = x.copy(), x.copy()
    xp.flat[index] += h
    xm.flat[index] -= h
    return (np.asarray(f(xp)) - np.asarray(f(xm))) / (2 * h)


def _step(x, index):
    return 1e-6 * max(1.0, abs(float(x.flat[index])))


def fd_gradient(f, args, wrt, reference, per_argument=2, seed=1):
    """[(label, central difference, reference value)] on `per_argument`
    random coordinates of each differentiated argument of scalar f."""
    rng = np.random.default_rng(seed)
    out = []
    for pos, i in enumerate(wrt):
        x = args[i]
        for index in rng.choice(x.size, min(per_argument, x.size), replace=False):
            fd = _central(lambda v: f(*args[:i], v, *args[i + 1:]), x, index, _step(x, index))
            out.append(("d/d(arg %d)[%d]" % (i, index), fd, reference[pos].flat[index]))
    return out


def compare_fd(checks, rtol=1e-5):
    """None, or the worst disagreement; and the largest relative error."""
    worst, problem = 0.0, None
    for label, fd, ref in checks:
        fd, ref = np.asarray(fd, dtype=float), np.asarray(ref, dtype=float)
        scale = max(1e-3, float(np.max(np.abs(ref))))
        err = float(np.max(np.abs(fd - ref))) / scale
        worst = max(worst, err)
        if err > rtol:
            problem = "%s: central difference %s, reference %s" % (label, np.ravel(fd)[:3], np.ravel(ref)[:3])
    return problem, worst


# ---------------------------------------------------------------- the evals
class Eval:
    """One eval's callables. Each `*_path` is a zero-argument function
    returning the eval's result (a tuple of arrays), or None when that
    library is absent; `sg_jit` returns a fresh such callable whose first
    call compiles."""

    def __init__(self, name, params):
        self.name, self.params = name, params
        self.sg = self.sg_jit = self.jax_make = self.torch_path = self.autograd_path = None
        self.fd_checks = None      # reference -> [(label, central difference, reference value)]
        self.notes = {}


def gradient_eval(name, params, f, args, wrt, jax_f=None, torch_f=None, finish=None):
    """An eval whose result is the gradient of scalar `f(*args)` w.r.t. `wrt`.
    jax_f(jax, jnp) / torch_f(torch) give the other libraries' objective
    (default: the same source, swapped)."""
    import srcgrad as sg
    ev = Eval(name, params)
    finish = finish or (lambda g: g)
    g = sg.grad(f, wrt=wrt)
    ev.sg = lambda: finish(g(*args))

    def make_jit():
        jitted = sg.jit(sg.grad(f, wrt=wrt))
        return lambda: finish(jitted(*args))
    ev.sg_jit = make_jit
    active = [i for i in range(len(args)) if i in wrt]

    def call_with(values):
        full = list(args)
        for i, v in zip(active, values):
            full[i] = v
        return full

    def jax_make(jax, jnp):
        fj = jax_f(jax, jnp) if jax_f else getattr(swapped(jnp, **NO_ASSIGNMENT), f.__name__)
        const = [jnp.asarray(a) if isinstance(a, np.ndarray) and i not in wrt else a
                 for i, a in enumerate(args)]
        order = list(wrt)

        def objective(*values):
            full = list(const)
            for i, v in zip(order, values):
                full[i] = v
            return fj(*full)
        grad = jax.jit(jax.grad(objective, argnums=tuple(range(len(order)))))
        values = [jnp.asarray(args[i]) for i in order]
        return lambda: finish(jax.block_until_ready(grad(*values)))
    ev.jax_make = jax_make

    def torch_path(torch):
        ft = torch_f(torch) if torch_f else None
        if ft is None:
            return None
        leaves = {i: torch.tensor(args[i], requires_grad=True) for i in wrt}
        full = [leaves[i] if i in leaves else (torch.as_tensor(a) if isinstance(a, np.ndarray) else a)
                for i, a in enumerate(args)]
        inputs = [leaves[i] for i in wrt]
        return lambda: finish(torch.autograd.grad(ft(*full), inputs))
    ev.torch_path = torch_path

    def autograd_path(autograd, anp):
        fa = getattr(swapped(anp, **NO_ASSIGNMENT), f.__name__)
        ag = autograd.grad(lambda *values: fa(*call_with(values)), argnum=tuple(range(len(active))))
        values = [args[i] for i in active]
        return lambda: finish(ag(*values))
    ev.autograd_path = autograd_path
    ev.fd_checks = lambda reference: fd_gradient(f, args, wrt, reference)
    return ev


def gmm_eval(small):
    p = SIZES[small]["gmm"]
    (alpha, mu, q, l), (x, m, gamma) = make_gmm(**p)

    def torch_f(torch):
        def gmm_torch(alpha, mu, q, l, x, m, gamma):
            n, d = x.shape
            k = alpha.shape[0]
            cols, rows = np.triu_indices(d, 1)
            Q = torch.zeros((k, d, d), dtype=torch.float64)
            Q[:, rows, cols] = l
            Q = Q + torch.diag_embed(torch.exp(q))
            xc = x[:, None, :] - mu[None, :, :]
            Qxc = torch.einsum("kij,nkj->nki", Q, xc)
            beta = alpha + q.sum(1) - 0.5 * (Qxc ** 2).sum(2)
            dof = d + m + 1
            return (-n * (0.5 * d * math.log(2 * math.pi) + torch.logsumexp(alpha, 0))
                    + torch.logsumexp(beta, 1).sum()
                    + k * (dof * d * math.log(gamma / math.sqrt(2)) - objectives.log_multigamma(0.5 * dof, d))
                    - 0.5 * gamma ** 2 * (Q ** 2).sum() + m * q.sum())
        return gmm_torch
    return gradient_eval("gmm", p, objectives.gmm_objective, (alpha, mu, q, l, x, m, gamma), (0, 1, 2, 3),
                         torch_f=torch_f)


def lstm_eval(small):
    p = SIZES[small]["lstm"]
    (main_params, extra_params), (state, sequence) = make_lstm(**p)

    def jax_f(jax, jnp):
        def lstm_scan(main_params, extra_params, state, sequence):
            n_layers = main_params.shape[0] // 2
            b = sequence.shape[1]

            def step(carry, pair):
                hidden, cell = carry
                current, following = pair
                x = current * extra_params[0]
                hs, cs = [], []
                for i in range(n_layers):
                    w, bias = main_params[2 * i], main_params[2 * i + 1]
                    forget = jax.nn.sigmoid(x * w[:b] + bias[:b])
                    ingate = jax.nn.sigmoid(hidden[i] * w[b:2 * b] + bias[b:2 * b])
                    outgate = jax.nn.sigmoid(x * w[2 * b:3 * b] + bias[2 * b:3 * b])
                    change = jnp.tanh(hidden[i] * w[3 * b:] + bias[3 * b:])
                    c = cell[i] * forget + ingate * change
                    x = outgate * jnp.tanh(c)
                    hs.append(x)
                    cs.append(c)
                ypred = x * extra_params[1] + extra_params[2]
                ynorm = ypred - jnp.log(jnp.sum(jnp.exp(ypred)) + 2.0)
                return (jnp.stack(hs), jnp.stack(cs)), jnp.sum(following * ynorm)
            _, totals = jax.lax.scan(step, (state[0::2], state[1::2]), (sequence[:-1], sequence[1:]))
            return -jnp.sum(totals) / ((sequence.shape[0] - 1) * b)
        return lstm_scan

    def torch_f(torch):
        def lstm_torch(main_params, extra_params, state, sequence):
            n_layers = main_params.shape[0] // 2
            b = sequence.shape[1]
            hidden = [state[2 * i] for i in range(n_layers)]
            cell = [state[2 * i + 1] for i in range(n_layers)]
            total = 0.0
            for t in range(sequence.shape[0] - 1):
                x = sequence[t] * extra_params[0]
                for i in range(n_layers):
                    w, bias = main_params[2 * i], main_params[2 * i + 1]
                    forget = torch.sigmoid(x * w[:b] + bias[:b])
                    ingate = torch.sigmoid(hidden[i] * w[b:2 * b] + bias[b:2 * b])
                    outgate = torch.sigmoid(x * w[2 * b:3 * b] + bias[2 * b:3 * b])
                    change = torch.tanh(hidden[i] * w[3 * b:] + bias[3 * b:])
                    cell[i] = cell[i] * forget + ingate * change
                    hidden[i] = outgate * torch.tanh(cell[i])
                    x = hidden[i]
                ypred = x * extra_params[1] + extra_params[2]
                ynorm = ypred - torch.log(torch.sum(torch.exp(ypred)) + 2.0)
                total = total + torch.sum(sequence[t + 1] * ynorm)
            return -total / ((sequence.shape[0] - 1) * b)
        return lstm_torch
    ev = gradient_eval("lstm", p, objectives.lstm_objective, (main_params, extra_params, state, sequence),
                       (0, 1), jax_f=jax_f, torch_f=torch_f)
    ev.notes["jax"] = "lax.scan over the time steps (jitting the Python loop did not compile in minutes)"
    return ev


def ba_eval(small):
    """The nonzero values of BA's sparse Jacobian: (p, 2, 11) camera
    blocks, (p, 2, 3) point blocks, (p, 2) weight entries, (p,) weight-error
    derivatives. Row j of every block is the gradient of the sum over
    observations of error component j (each error depends only on its own
    observation's camera, point and weight)."""
    import srcgrad as sg
    p = SIZES[small]["ba"]
    cam, X, w, feat = make_ba(**p)
    ev = Eval("ba", p)

    def blocks(rows, werr):
        return (np.stack([rows[0][0], rows[1][0]], axis=1), np.stack([rows[0][1], rows[1][1]], axis=1),
                np.stack([rows[0][2], rows[1][2]], axis=1), werr)

    def srcgrad_blocks(component, weight):
        return lambda: blocks([component(cam, X, w, feat, j) for j in (0, 1)], weight(w))
    sums = sg.jacobian(objectives.ba_reproj_sums, wrt=(0, 1, 2))
    weight_error = sg.grad(objectives.ba_w_error_sum)

    def srcgrad_jacobian():
        # one forward and one reverse sweep of two rows (the two error components) for all three blocks
        jc, jX, jw = sums(cam, X, w, feat)
        return blocks([(jc[j], jX[j], jw[j]) for j in (0, 1)], weight_error(w))
    ev.sg = srcgrad_jacobian
    ev.sg_jit = lambda: srcgrad_blocks(sg.jit(sg.grad(objectives.ba_reproj_component, wrt=(0, 1, 2))),
                                       sg.jit(sg.grad(objectives.ba_w_error_sum)))

    def jax_make(jax, jnp):
        J = swapped(jnp)
        component = jax.grad(J.ba_reproj_component, argnums=(0, 1, 2))
        weight = jax.grad(J.ba_w_error_sum)

        @jax.jit
        def jac(cam, X, w, feat):
            return component(cam, X, w, feat, 0), component(cam, X, w, feat, 1), weight(w)
        values = [jnp.asarray(a) for a in (cam, X, w, feat)]

        def run():
            r0, r1, werr = jax.block_until_ready(jac(*values))
            return blocks([r0, r1], werr)
        return run
    ev.jax_make = jax_make

    def torch_path(torch):
        tcam, tX, tw = (torch.tensor(a, requires_grad=True) for a in (cam, X, w))
        tfeat = torch.tensor(feat)

        def reproj(cam, X, w, feat):
            rot = cam[:, 0:3]
            theta = torch.sqrt((rot ** 2).sum(1, keepdim=True))
            axis = rot / theta
            Xo = X - cam[:, 3:6]
            cos = torch.cos(theta)
            Xcam = (Xo * cos + torch.linalg.cross(axis, Xo, dim=1) * torch.sin(theta)
                    + axis * (axis * Xo).sum(1, keepdim=True) * (1.0 - cos))
            proj = Xcam[:, 0:2] / Xcam[:, 2:3]
            rsq = (proj ** 2).sum(1, keepdim=True)
            proj = proj * (1.0 + cam[:, 9:10] * rsq + cam[:, 10:11] * rsq * rsq) * cam[:, 6:7] + cam[:, 7:9]
            return w[:, None] * (proj - feat)

        def run():
            err = reproj(tcam, tX, tw, tfeat)
            rows = [torch.autograd.grad(err[:, j].sum(), (tcam, tX, tw), retain_graph=j == 0) for j in (0, 1)]
            werr = torch.autograd.grad((1.0 - tw ** 2).sum(), tw)[0]
            return blocks([[r.numpy() for r in row] for row in rows], werr.numpy())
        return run
    ev.torch_path = torch_path

    def autograd_path(autograd, anp):
        A = swapped(anp)
        component = autograd.grad(A.ba_reproj_component, argnum=(0, 1, 2))
        weight = autograd.grad(A.ba_w_error_sum)
        return srcgrad_blocks(component, weight)
    ev.autograd_path = autograd_path

    def fd_checks(reference):
        cam_blocks, X_blocks, w_blocks, werr = reference
        out = []
        rng = np.random.default_rng(1)
        for name, arg, block in (("cam", 0, cam_blocks), ("X", 1, X_blocks)):
            args = [cam, X, w, feat]
            for index in rng.choice(args[arg].size, 2, replace=False):
                obs, col = np.unravel_index(index, args[arg].shape)
                fd = _central(lambda v: objectives.ba_reproj_error(*args[:arg], v, *args[arg + 1:]),
                              args[arg], index, _step(args[arg], index))
                expected = np.zeros_like(fd)
                expected[obs] = block[obs, :, col]
                out.append(("d err / d %s[%d, %d]" % (name, obs, col), fd, expected))
        i = int(rng.integers(w.size))
        fd = _central(lambda v: objectives.ba_reproj_error(cam, X, v, feat), w, i, _step(w, i))
        expected = np.zeros_like(fd)
        expected[i] = w_blocks[i]
        out.append(("d err / d w[%d]" % i, fd, expected))
        out.append(("d w_err / d w[%d]" % i, _central(objectives.ba_w_error, w, i, _step(w, i))[i], werr[i]))
        return out
    ev.fd_checks = fd_checks
    ev.notes["sg"] = "sg.jacobian of the two summed error components (one sweep of 2 rows) + the weight error's sg.grad"
    return ev


def ht_eval(small):
    import srcgrad as sg
    p = SIZES[small]["ht"]
    theta, model = make_ht(**p)
    ev = Eval("ht", p)
    rows = 3 * p["points"]

    def as_matrix(J):
        return (np.asarray(J).reshape(rows, theta.size),)
    jac = sg.jacobian(objectives.ht_objective, wrt=0)
    ev.sg = lambda: as_matrix(jac(theta, *model))

    def make_jit():
        jitted = sg.jit(sg.jacobian(objectives.ht_objective, wrt=0))
        return lambda: as_matrix(jitted(theta, *model))
    ev.sg_jit = make_jit

    def jax_make(jax, jnp):
        J = swapped(jnp, angle_axis_to_rotation_matrix="angle_axis_to_rotation_matrix_traced",
                    **NO_ASSIGNMENT)
        const = [jnp.asarray(a) if a.dtype.kind == "f" else a for a in model]
        jfwd = jax.jit(jax.jacfwd(lambda th: J.ht_objective(th, *const)))
        jtheta = jnp.asarray(theta)
        return lambda: as_matrix(jax.block_until_ready(jfwd(jtheta)))
    ev.jax_make = jax_make
    ev.notes["jax"] = "jax.jacfwd (26 columns); the same source without the small-angle branch"
    ev.notes["sg"] = "forward mode from the second call on: the transposed VJP, one row per parameter (26)"

    def torch_path(torch):
        import torch.func
        parents, base_relatives, inverse_base_absolutes, base_positions, weights, correspondences, points = model
        t_rel, t_inv, t_pos, t_w, t_points = (torch.tensor(a) for a in (
            base_relatives, inverse_base_absolutes, base_positions, weights, points))
        zero = torch.zeros((), dtype=torch.float64)
        one = torch.ones((), dtype=torch.float64)

        def matrix(*entries):
            return torch.stack([e if torch.is_tensor(e) else e * one for e in entries]).reshape(3, 3)

        def euler(a):
            tx, tz, ty = a[0], a[1], a[2]
            Rx = matrix(one, zero, zero, zero, torch.cos(tx), -torch.sin(tx), zero, torch.sin(tx), torch.cos(tx))
            Ry = matrix(torch.cos(ty), zero, torch.sin(ty), zero, one, zero, -torch.sin(ty), zero, torch.cos(ty))
            Rz = matrix(torch.cos(tz), -torch.sin(tz), zero, torch.sin(tz), torch.cos(tz), zero, zero, zero, one)
            return Rz @ Ry @ Rx

        def angle_axis(a):
            norm = torch.sqrt((a ** 2).sum())
            x, y, z = a[0] / norm, a[1] / norm, a[2] / norm
            s, c = torch.sin(norm), torch.cos(norm)
            return matrix(x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s,
                          x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s,
                          x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c)

        def ht_torch(theta):
            z3 = torch.zeros(3, dtype=torch.float64)
            rows_ = [theta[0:3], torch.ones(3, dtype=torch.float64), theta[3:6], z3, z3]
            for finger in range(5):
                i = 6 + 4 * finger
                rows_ += [torch.stack([theta[i], theta[i + 1], zero]), torch.stack([theta[i + 2], zero, zero]),
                          torch.stack([theta[i + 3], zero, zero]), z3]
            pose = torch.stack(rows_)
            absolutes = []
            for i in range(len(parents)):
                rel = torch.cat([t_rel[i][:, :3] @ euler(pose[i + 3]), t_rel[i][:, 3:]], dim=1)
                absolutes.append(rel if parents[i] == -1 else absolutes[parents[i]] @ rel)
            transforms = torch.stack([absolutes[i] @ t_inv[i] for i in range(len(parents))])
            positions = (t_w[:, None, :] * (transforms[:, :3, :] @ t_pos.T)).sum(0)
            positions = (angle_axis(pose[0]) * pose[1]) @ positions + pose[2][:, None]
            return t_points - positions[:, correspondences].T
        jfwd = torch.func.jacfwd(ht_torch)
        t_theta = torch.tensor(theta)
        return lambda: as_matrix(jfwd(t_theta).numpy())
    ev.torch_path = torch_path
    ev.notes["torch"] = "torch.func.jacfwd"

    def autograd_path(autograd, anp):
        A = swapped(anp, **NO_ASSIGNMENT)
        aj = autograd.jacobian(lambda th: A.ht_objective(th, *model))
        return lambda: as_matrix(aj(theta))
    ev.autograd_path = autograd_path

    def fd_checks(reference):
        (J,) = reference
        out = []
        for col in np.random.default_rng(1).choice(theta.size, 3, replace=False):
            fd = _central(lambda th: objectives.ht_objective(th, *model), theta, col, _step(theta, col))
            out.append(("column %d" % col, fd.ravel(), J[:, col]))
        return out
    ev.fd_checks = fd_checks
    return ev


def ode_eval(small):
    p = SIZES[small]["ode"]
    x = np.random.default_rng(0).random(p["n"])
    s = p["s"]

    def torch_f(torch):
        def ode_torch(x, s):
            h = 2.0 / s
            y = torch.zeros_like(x)

            def rhs(y):
                return torch.cat([x[:1], x[1:] * y[:-1]])
            for step in range(s):
                k1 = rhs(y)
                k2 = rhs(y + 0.5 * h * k1)
                k3 = rhs(y + 0.5 * h * k2)
                k4 = rhs(y + h * k3)
                y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
            return y[-1]
        return ode_torch
    return gradient_eval("ode", p, objectives.ode_last, (x, s), (0,), torch_f=torch_f)


def lse_eval(small):
    p = SIZES[small]["lse"]
    x = np.random.default_rng(0).random(p["n"])

    def torch_f(torch):
        def lse_torch(x):
            a = torch.max(x)
            return a + torch.log(torch.sum(torch.exp(x - a)))
        return lse_torch
    return gradient_eval("lse", p, objectives.lse, (x,), (0,), torch_f=torch_f)


def det_eval(small):
    p = SIZES[small]["det"]
    A = np.random.default_rng(0).random((p["ell"], p["ell"]))

    def torch_f(torch):
        def det_of_minor(A, rows, cols):
            if len(rows) == 1:
                return A[rows[0], cols[0]]
            det, sign = 0.0, 1.0
            for j in range(len(cols)):
                det = det + sign * A[rows[0], cols[j]] * det_of_minor(A, rows[1:], cols[:j] + cols[j + 1:])
                sign = -sign
            return det
        return lambda A: det_of_minor(A, list(range(A.shape[0])), list(range(A.shape[0])))
    ev = gradient_eval("det", p, objectives.det_by_minor, (A,), (0,), torch_f=torch_f)
    fd = ev.fd_checks
    # d det(A) / dA = det(A) inv(A)^T: a second, closed-form check
    ev.fd_checks = lambda reference: fd(reference) + [
        ("det(A) inv(A)^T", np.linalg.det(A) * np.linalg.inv(A).T, reference[0])]
    return ev


def kmeans_eval(small):
    """GradBench's "dir": J / (H . 1), H diagonal."""
    import srcgrad as sg
    p = SIZES[small]["kmeans"]
    points = np.random.default_rng(0).random((p["n"], p["d"]))
    centroids = points[-p["k"]:].copy()    # GradBench's choice: every cluster is nonempty
    ones = np.ones_like(centroids)
    ev = Eval("kmeans", p)

    def direction(grad, hvp):
        return lambda: (grad(points, centroids) / hvp(points, centroids, ones),)
    gradient = sg.grad(objectives.kmeans_cost, wrt=1)

    def forward_over_reverse():
        # J and H . 1 in one pass, as JAX's and PyTorch's paths compute them: the generated JVP
        # of the generated gradient returns the gradient as its primal output
        J, H = sg.jvp(gradient, (points, centroids), (None, ones))
        return (J / H,)
    ev.sg = forward_over_reverse
    ev.sg_jit = lambda: direction(sg.jit(sg.grad(objectives.kmeans_cost, wrt=1)),
                                  sg.jit(sg.hvp(objectives.kmeans_cost, wrt=1)))
    ev.notes["sg"] = "sg.jvp of sg.grad (forward over reverse; one pass gives J and H . 1)"

    def jax_make(jax, jnp):
        cost = swapped(jnp).kmeans_cost
        jpoints = jnp.asarray(points)

        @jax.jit
        def direction_jax(c):
            J, H = jax.jvp(jax.grad(lambda c: cost(jpoints, c)), (c,), (jnp.ones_like(c),))
            return J / H
        jc = jnp.asarray(centroids)
        return lambda: (jax.block_until_ready(direction_jax(jc)),)
    ev.jax_make = jax_make
    ev.notes["jax"] = "jax.jvp of jax.grad (forward over reverse)"

    def torch_path(torch):
        import torch.func
        tpoints, tc = torch.tensor(points), torch.tensor(centroids)

        def cost(c):
            return ((tpoints[:, None, :] - c[None, :, :]) ** 2).sum(2).min(1).values.sum()

        def run():
            J, H = torch.func.jvp(torch.func.grad(cost), (tc,), (torch.ones_like(tc),))
            return ((J / H).numpy(),)
        return run
    ev.torch_path = torch_path
    ev.notes["torch"] = "torch.func.jvp of torch.func.grad"

    def autograd_path(autograd, anp):
        cost = swapped(anp).kmeans_cost
        grad = autograd.grad(cost, 1)
        hvp = autograd.hessian_vector_product(cost, 1)
        return direction(grad, hvp)
    ev.autograd_path = autograd_path

    def fd_checks(reference):
        # J by central differences; H by its closed form, 2 x (the number of points nearest
        # each centroid): a second difference of the piecewise quadratic cost is not reliable
        # (a step moving a point to another centroid ruins it)
        (direction_ref,) = reference
        nearest = np.argmin(np.sum((points[:, None, :] - centroids[None, :, :]) ** 2, axis=2), axis=1)
        H = 2.0 * np.bincount(nearest, minlength=centroids.shape[0])
        out = []
        for index in np.random.default_rng(1).choice(centroids.size, 3, replace=False):
            J = _central(lambda c: objectives.kmeans_cost(points, c), centroids, index, 1e-7)
            out.append(("dir[%d]" % index, J / H[index // centroids.shape[1]], direction_ref.flat[index]))
        return out
    ev.fd_checks = fd_checks
    return ev


def llsq_eval(small):
    p = SIZES[small]["llsq"]
    x = np.random.default_rng(0).random(p["m"])
    n = p["n"]

    def torch_f(torch):
        def llsq_torch(x, n):
            t = -1.0 + torch.arange(n, dtype=torch.float64) * 2.0 / (n - 1)
            powers = t[:, None] ** torch.arange(x.shape[0], dtype=torch.float64)
            return 0.5 * ((torch.sign(t) - powers @ x) ** 2).sum()
        return llsq_torch
    return gradient_eval("llsq", p, objectives.llsq_objective, (x, n), (0,), torch_f=torch_f)


MAKERS = {"gmm": gmm_eval, "lstm": lstm_eval, "ba": ba_eval, "ht": ht_eval, "ode": ode_eval,
          "lse": lse_eval, "det": det_eval, "kmeans": kmeans_eval, "llsq": llsq_eval}


# ---------------------------------------------------------------- measuring
def _row(ev, path):
    return "%s: %s" % (ev.name, path)


SG, SG_JIT, SG_JIT_FIRST = "srcgrad sg.grad", "srcgrad sg.jit (steady state)", "srcgrad sg.jit first call"
JAX_JIT, JAX_FIRST = "JAX jit (steady state)", "JAX jit first call"
TORCH, AUTOGRAD = "PyTorch eager", "autograd"


def _sg_name(ev):
    return {"ht": "srcgrad sg.jacobian", "kmeans": "srcgrad sg.jvp of sg.grad", "ba": "srcgrad sg.jacobian"}.get(
        ev.name, SG)


#: evals whose JAX jit traces and compiles for seconds whatever the size:
#: not run at --small (autograd is their reference there)
COSTLY_JAX = {"gmm", "lstm", "ba", "ht"}


def _set_reference(bench, ev, jax, jnp, autograd, anp):
    """The eval's reference row (JAX jit, else autograd); its first call
    (JAX's trace and compile) as a row of its own. False when none."""
    if jax is None:
        for path in (JAX_JIT, JAX_FIRST):
            bench.skip(_row(ev, path), harness.unavailable("jax"))
    elif bench.settings.small and ev.name in COSTLY_JAX:
        for path in (JAX_JIT, JAX_FIRST):
            bench.skip(_row(ev, path), "not run at --small sizes (seconds of compilation)")
    else:
        try:
            t0 = time.perf_counter()
            fn = ev.jax_make(jax, jnp)
            fn()
            first = time.perf_counter() - t0
        except Exception as exc:   # noqa: BLE001
            bench.failed(_row(ev, JAX_FIRST), exc)
        else:
            bench.reference(_row(ev, JAX_JIT), fn, notes=ev.notes.get("jax", "same source, jax.numpy"))
            bench.measured(_row(ev, JAX_FIRST), first, kind="first call", notes="trace + compile + run")
            return True
    if autograd is not None:
        try:
            fn = ev.autograd_path(autograd, anp)
            fn()
        except Exception as exc:   # noqa: BLE001
            bench.failed(_row(ev, AUTOGRAD), exc)
        else:
            bench.reference(_row(ev, AUTOGRAD), fn,
                            notes="the reference (no JAX jit here); same source, autograd.numpy")
            return True
    return False


def _check_reference(bench, ev):
    checks = ev.fd_checks(harness.flatten(bench.expected))
    problem, worst = compare_fd(checks)
    if problem:
        bench.wrong(_row(ev, "reference vs central differences"), problem)
        return False
    bench.note("%s: the reference agrees with central differences of the NumPy objective on %d "
               "checks (largest relative error %.1e)" % (ev.name, len(checks), worst))
    return True


def _tolerance(bench):
    scale = max(1.0, max(float(np.max(np.abs(a))) for a in harness.flatten(bench.expected)))
    bench.tolerance(1e-7, 1e-9 * scale)


def _sg_jit_rows(bench, ev):
    import srcgrad as sg
    steady, first = _row(ev, SG_JIT), _row(ev, SG_JIT_FIRST)
    why = None
    if harness.optional("numba") is None:
        why = harness.unavailable("numba")
    elif bench.settings.small:
        why = "not run at --small sizes (Numba compiles for seconds)"
    elif ev.name in SLOW_JIT_FALLBACK and not os.environ.get("GRADBENCH_JIT_ALL"):
        why = SLOW_JIT_FALLBACK[ev.name]
    if why is None:
        bench.log("  %s ..." % first)
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", sg.PerformanceWarning)
                fn = ev.sg_jit()
                out = fn()
        except sg.PerformanceWarning as w:
            why = "falls back to CPython (after %.1f s): %s" % (time.perf_counter() - t0, _first_line(w))
        except Exception as exc:   # noqa: BLE001  (a finding, recorded, not a crash)
            why = "sg.jit raised (after %.1f s): %s" % (time.perf_counter() - t0, _first_line(exc))
        else:
            elapsed = time.perf_counter() - t0
            problem = harness.compare(out, bench.expected, bench.rtol, bench.atol)
            if problem:
                bench.wrong(first, problem)
                bench.skip(steady, "see " + first)
            else:
                bench.measured(first, elapsed, kind="first call", notes="link + lower + Numba compile + run")
                bench.path(steady, fn, notes="the generated derivative compiled by Numba")
            return
    bench.skip(steady, why)
    bench.skip(first, "see " + steady)


def _first_line(exc):
    text = "%s: %s" % (type(exc).__name__, exc) if not isinstance(exc, Warning) else str(exc)
    text = text.replace("sg.jit: ", "", 1)
    text = "; ".join(line.strip() for line in text.splitlines()[:3] if line.strip())
    return text if len(text) <= 300 else text[:297] + "..."


def run_eval(bench, ev, jax, jnp, torch, autograd, anp):
    bench.log(" [%s %s]" % (ev.name, ", ".join("%s=%s" % kv for kv in ev.params.items())))
    if not _set_reference(bench, ev, jax, jnp, autograd, anp):
        for path in (_sg_name(ev), SG_JIT, TORCH):
            bench.skip(_row(ev, path), "no reference: JAX and autograd unavailable or failing")
        return
    if not _check_reference(bench, ev):
        return
    _tolerance(bench)
    bench.path(_row(ev, _sg_name(ev)), ev.sg, notes=ev.notes.get("sg", ""))
    _sg_jit_rows(bench, ev)
    if torch is None:
        bench.skip(_row(ev, TORCH), harness.unavailable("torch"))
    else:
        try:
            fn = ev.torch_path(torch)
        except Exception as exc:   # noqa: BLE001
            bench.failed(_row(ev, TORCH), exc)
        else:
            bench.path(_row(ev, TORCH), fn, notes=ev.notes.get("torch", "torch port, torch.autograd.grad"))
    if bench.expected is not None and _row(ev, AUTOGRAD) not in [r["path"] for r in bench.rows]:
        if autograd is None:
            bench.skip(_row(ev, AUTOGRAD), harness.unavailable("autograd"))
        else:
            _autograd_row(bench, ev, autograd, anp)


def _autograd_row(bench, ev, autograd, anp):
    """autograd's row. A call slower than half the budget (lstm, ht: seconds)
    is timed once, by its checked call: autograd is in no goal, and four such
    calls would take half the workload's time."""
    name = _row(ev, AUTOGRAD)
    try:
        fn = ev.autograd_path(autograd, anp)
        t0 = time.perf_counter()
        out = fn()
        elapsed = time.perf_counter() - t0
    except Exception as exc:   # noqa: BLE001
        bench.failed(name, exc)
        return
    if elapsed <= bench.settings.budget / 2:
        bench.path(name, fn, notes="same source, autograd.numpy")
        return
    problem = harness.compare(out, bench.expected, bench.rtol, bench.atol)
    if problem:
        bench.wrong(name, problem)
    else:
        bench.measured(name, elapsed, notes="same source, autograd.numpy; one call (slow: not repeated)")


def best_srcgrad(bench, ev):
    """(seconds, path) of srcgrad's faster path: sg.grad or sg.jit's steady state."""
    times = [(bench.median(_row(ev, path)), path) for path in (_sg_name(ev), SG_JIT)]
    times = [t for t in times if t[0] is not None]
    return min(times) if times else (None, None)


def ratio_to(bench, ev, other):
    best, _ = best_srcgrad(bench, ev)
    theirs = bench.median(_row(ev, other))
    return best / theirs if best is not None and theirs else None


def geo_mean(values):
    values = [v for v in values if v is not None]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def run(bench):
    small = bench.settings.small
    jax, jnp = harness.jax_modules()
    torch = harness.torch_module()
    autograd = harness.optional("autograd")
    anp = harness.optional("autograd.numpy") if autograd is not None else None
    if jax is None and autograd is None:
        raise harness.WorkloadSkipped("no reference: needs JAX or autograd (%s, %s)"
                                      % (harness.unavailable("jax"), harness.unavailable("autograd")))
    bench.show_ratios = False   # one reference per eval: ratios are the goals below
    bench.checked_against = ("each eval's JAX jit result (autograd's without JAX), itself checked against "
                             "central differences")
    bench.params = {"sizes": "--small" if small else "GradBench standard inputs (see the module docstring)"}
    evals = []
    for name in EVALS:
        ev = MAKERS[name](small)
        bench.params[name] = ", ".join("%s=%s" % kv for kv in ev.params.items())
        run_eval(bench, ev, jax, jnp, torch, autograd, anp)
        bench.expected = None
        evals.append(ev)

    bench.note("srcgrad's time below is its faster path: sg.grad (sg.jacobian for ht, sg.jvp of sg.grad "
               "for kmeans) or sg.jit's steady state where sg.jit compiled; geo-means over the evals "
               "where both times exist")
    for ev in evals:
        bench.target("%s: srcgrad / JAX jit" % ev.name, lambda ev=ev: ratio_to(bench, ev, JAX_JIT),
                     "<=", 1.0, "issue 18")
    for ev in evals:
        bench.target("%s: srcgrad / PyTorch" % ev.name, lambda ev=ev: ratio_to(bench, ev, TORCH),
                     "<=", 0.5, "issue 18")
    bench.target("srcgrad / JAX jit geo-mean",
                 lambda: geo_mean([ratio_to(bench, ev, JAX_JIT) for ev in evals]), "<=", 1.0, "issue 18")
    bench.target("srcgrad / PyTorch geo-mean",
                 lambda: geo_mean([ratio_to(bench, ev, TORCH) for ev in evals]), "<=", 0.5, "issue 18")
