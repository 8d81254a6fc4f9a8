"""The nine GradBench objectives (github.com/gradbench/gradbench, evals/*),
each written once in plain NumPy, as a user would write it, from the
mathematics of its README (and, where a README leaves the definition to
the reference implementation, from that definition: lstm, ht, ba, ode;
for ode the reference's y_i' = x_i y_{i-1}, not the README's sum).

Every function here reads NumPy through the global name `np` only, so
`gradbench.swapped(jax.numpy)` / `swapped(autograd.numpy)` run this same
source under JAX and autograd. Two helpers use element assignment, which
neither JAX nor autograd allows; each has a twin written with `np.stack` /
`np.concatenate` (suffix `_stacked`, same values) that the swapped copies
use instead; JAX's jit, which cannot branch on a traced value, also uses
`angle_axis_to_rotation_matrix_traced`. Loops that are sequential in
GradBench's reference (the LSTM's time steps and layers, the Runge-Kutta
steps, the determinant's recursion, the hand's bone chain) are Python
loops; loops that are a parallel map in the reference (over observations,
points, mixture components) are vectorised, as a NumPy user writes them
(so ba's rotation has no branch for a zero angle: no camera has one).
"""
import math

import numpy as np


# ---------------------------------------------------------------- gmm
def logsumexp(v):
    """log(sum(exp(v))) over the last axis, computed stably."""
    vmax = np.max(v, axis=-1, keepdims=True)
    return np.log(np.sum(np.exp(v - vmax), axis=-1)) + vmax[..., 0]


def log_multigamma(a, p):
    """log of the multivariate gamma function Gamma_p(a) (a constant here)."""
    out = 0.25 * p * (p - 1) * math.log(math.pi)
    for j in range(p):
        out = out + math.lgamma(a - 0.5 * j)
    return out


def gmm_Q(q, l):
    """The k lower-triangular matrices Q_k: exp(q_k) on the diagonal, l_k
    below it, filled column by column."""
    k, d = q.shape
    cols, rows = np.triu_indices(d, 1)   # (row, col) of the strict lower part, column by column
    Q = np.zeros((k, d, d))
    Q[:, rows, cols] = l
    diag = np.arange(d)
    Q[:, diag, diag] = np.exp(q)
    return Q


def gmm_Q_stacked(q, l):
    """gmm_Q without element assignment: the columns, concatenated."""
    k, d = q.shape
    columns = []
    start = 0
    for j in range(d):
        below = l[:, start:start + d - 1 - j]
        start = start + d - 1 - j
        columns.append(np.concatenate([np.zeros((k, j)), np.exp(q[:, j:j + 1]), below], axis=1))
    return np.stack(columns, axis=2)


def gmm_objective(alpha, mu, q, l, x, m, gamma):
    """Log posterior of a Gaussian mixture with a Wishart prior on the
    precision matrices Q_k^T Q_k (evals/gmm/README.md, "Implementation")."""
    n, d = x.shape
    k = alpha.shape[0]
    Q = gmm_Q(q, l)
    xc = x[:, None, :] - mu[None, :, :]                        # (n, k, d)
    Qxc = np.einsum("kij,nkj->nki", Q, xc)
    beta = alpha + np.sum(q, axis=1) - 0.5 * np.sum(Qxc ** 2, axis=2)   # (n, k)
    log_likelihood = (-n * (0.5 * d * math.log(2 * math.pi) + logsumexp(alpha))
                      + np.sum(logsumexp(beta)))
    dof = d + m + 1
    log_prior = (k * (dof * d * math.log(gamma / math.sqrt(2)) - log_multigamma(0.5 * dof, d))
                 - 0.5 * gamma ** 2 * np.sum(Q ** 2) + m * np.sum(q))
    return log_likelihood + log_prior


# ---------------------------------------------------------------- lstm
def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def lstm_objective(main_params, extra_params, state, sequence):
    """ADBench's LSTM (diagonal weights) over a bit sequence: the mean
    log-likelihood of each next character, negated. main_params: rows 2i
    and 2i+1 are layer i's weights and biases (forget, input, output,
    change gates, b each); extra_params: input weight, output weight,
    output bias; state: rows 2i, 2i+1 are layer i's hidden and cell."""
    n_layers = main_params.shape[0] // 2
    b = sequence.shape[1]
    hidden = [state[2 * i] for i in range(n_layers)]
    cell = [state[2 * i + 1] for i in range(n_layers)]
    total = 0.0
    for t in range(sequence.shape[0] - 1):
        x = sequence[t] * extra_params[0]
        for i in range(n_layers):
            w = main_params[2 * i]
            bias = main_params[2 * i + 1]
            forget = sigmoid(x * w[:b] + bias[:b])
            ingate = sigmoid(hidden[i] * w[b:2 * b] + bias[b:2 * b])
            outgate = sigmoid(x * w[2 * b:3 * b] + bias[2 * b:3 * b])
            change = np.tanh(hidden[i] * w[3 * b:] + bias[3 * b:])
            cell[i] = cell[i] * forget + ingate * change
            hidden[i] = outgate * np.tanh(cell[i])
            x = hidden[i]
        ypred = x * extra_params[1] + extra_params[2]
        ynorm = ypred - np.log(np.sum(np.exp(ypred)) + 2.0)   # ADBench's "+ 2"
        total = total + np.sum(sequence[t + 1] * ynorm)
    return -total / ((sequence.shape[0] - 1) * b)


# ---------------------------------------------------------------- ba
def rodrigues_rotate(rot, X):
    """Rotate each row of X by the angle-axis vector in the same row of rot."""
    theta = np.sqrt(np.sum(rot ** 2, axis=1, keepdims=True))
    w = rot / theta
    costheta = np.cos(theta)
    along = np.sum(w * X, axis=1, keepdims=True) * (1.0 - costheta)
    return X * costheta + np.cross(w, X) * np.sin(theta) + w * along


def ba_project(cam, X):
    """Project points X (p, 3) with cameras cam (p, 11): rotation (3),
    centre (3), focal length, principal point (2), radial distortion (2)."""
    Xcam = rodrigues_rotate(cam[:, 0:3], X - cam[:, 3:6])
    proj = Xcam[:, 0:2] / Xcam[:, 2:3]
    rsq = np.sum(proj ** 2, axis=1, keepdims=True)
    distortion = 1.0 + cam[:, 9:10] * rsq + cam[:, 10:11] * rsq * rsq
    return proj * distortion * cam[:, 6:7] + cam[:, 7:9]


def ba_reproj_error(cam, X, w, feat):
    """The (p, 2) weighted reprojection errors of p observations (each row
    its own camera and point, gathered by the observation indices)."""
    return w[:, None] * (ba_project(cam, X) - feat)


def ba_reproj_component(cam, X, w, feat, j):
    """Sum over observations of component j of the reprojection error: its
    gradient with respect to the per-observation (cam, X, w) is row j of
    every observation's 2 x 15 Jacobian block (row i depends only on
    observation i)."""
    return np.sum(ba_reproj_error(cam, X, w, feat)[:, j])


def ba_reproj_sums(cam, X, w, feat):
    """The two components of the reprojection error, each summed over the
    observations: its (2, ...) Jacobian holds row j of every observation's
    block in row j (one reverse sweep of two rows)."""
    return np.sum(ba_reproj_error(cam, X, w, feat), axis=0)


def ba_w_error(w):
    return 1.0 - w ** 2


def ba_w_error_sum(w):
    return np.sum(ba_w_error(w))


# ---------------------------------------------------------------- ht
def to_pose_params(theta, n_bones):
    """The (n_bones + 3, 3) pose: global rotation, scale, translation, then
    one row of Euler angles per bone; the 20 finger angles of theta fill
    bones 2-4 of each finger (two angles for the first of them)."""
    pose = np.zeros((n_bones + 3, 3))
    pose[0] = theta[0:3]
    pose[1] = 1.0
    pose[2] = theta[3:6]
    i_theta = 6
    i_pose = 5
    for finger in range(5):
        for i in range(3):
            pose[i_pose, 0] = theta[i_theta]
            i_theta += 1
            if i == 0:
                pose[i_pose, 1] = theta[i_theta]
                i_theta += 1
            i_pose += 1
        i_pose += 1
    return pose


def to_pose_params_stacked(theta, n_bones):
    """to_pose_params without element assignment: a list of rows."""
    zero = np.zeros(3)
    rows = [theta[0:3], np.ones(3), theta[3:6], zero, zero]
    i_theta = 6
    for finger in range(5):
        rows.append(np.stack([theta[i_theta], theta[i_theta + 1], 0.0 * theta[0]]))
        rows.append(np.stack([theta[i_theta + 2], 0.0 * theta[0], 0.0 * theta[0]]))
        rows.append(np.stack([theta[i_theta + 3], 0.0 * theta[0], 0.0 * theta[0]]))
        i_theta += 4
        rows.append(zero)
    return np.stack(rows[:n_bones + 3])


def euler_angles_to_rotation_matrix(xzy):
    tx, tz, ty = xzy[0], xzy[1], xzy[2]
    cx, sx = np.cos(tx), np.sin(tx)
    cy, sy = np.cos(ty), np.sin(ty)
    cz, sz = np.cos(tz), np.sin(tz)
    Rx = np.array([[1.0, 0.0, 0.0], [0.0, cx, -sx], [0.0, sx, cx]])
    Ry = np.array([[cy, 0.0, sy], [0.0, 1.0, 0.0], [-sy, 0.0, cy]])
    Rz = np.array([[cz, -sz, 0.0], [sz, cz, 0.0], [0.0, 0.0, 1.0]])
    return Rz @ Ry @ Rx


def rotation_about_axis(angle_axis, norm):
    """Rodrigues' rotation matrix for angle `norm` about angle_axis / norm."""
    x = angle_axis[0] / norm
    y = angle_axis[1] / norm
    z = angle_axis[2] / norm
    s, c = np.sin(norm), np.cos(norm)
    return np.array([[x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s],
                     [x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s],
                     [x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c]])


def angle_axis_to_rotation_matrix(angle_axis):
    norm = np.sqrt(np.sum(angle_axis ** 2))
    if norm < 0.0001:
        return np.eye(3)
    return rotation_about_axis(angle_axis, norm)


def angle_axis_to_rotation_matrix_traced(angle_axis):
    """angle_axis_to_rotation_matrix without the small-angle branch, for
    JAX's jit (which cannot branch on a traced value); the inputs' global
    rotations are far from 0."""
    return rotation_about_axis(angle_axis, np.sqrt(np.sum(angle_axis ** 2)))


def ht_objective(theta, parents, base_relatives, inverse_base_absolutes, base_positions,
                 weights, correspondences, points):
    """Hand tracking, the simple variant: the (n_points, 3) differences
    between the observed points and their corresponding vertices of the
    skinned hand model posed by theta (26 parameters). base_positions:
    (n_vertices, 4) homogeneous; weights: (n_bones, n_vertices)."""
    n_bones = base_relatives.shape[0]
    pose = to_pose_params(theta, n_bones)
    # Each bone's relative transform, posed by its Euler angles:
    # base_relative @ [[R, 0], [0, 1]].
    relatives = []
    for i in range(n_bones):
        R = euler_angles_to_rotation_matrix(pose[i + 3])
        relatives.append(np.concatenate([base_relatives[i][:, :3] @ R, base_relatives[i][:, 3:]],
                                        axis=1))
    absolutes = []
    for i in range(n_bones):
        if parents[i] == -1:
            absolutes.append(relatives[i])
        else:
            absolutes.append(absolutes[parents[i]] @ relatives[i])
    transforms = np.stack([absolutes[i] @ inverse_base_absolutes[i] for i in range(n_bones)])
    moved = transforms[:, :3, :] @ base_positions.T                  # (n_bones, 3, n_vertices)
    positions = np.sum(weights[:, None, :] * moved, axis=0)           # (3, n_vertices)
    R = angle_axis_to_rotation_matrix(pose[0]) * pose[1]
    positions = R @ positions + pose[2][:, None]
    return points - positions[:, correspondences].T


# ---------------------------------------------------------------- ode
def ode_rhs(x, y):
    """y_0' = x_0, y_i' = x_i y_{i-1} (the reference implementation's form)."""
    return np.concatenate([x[:1], x[1:] * y[:-1]])


def ode_last(x, s):
    """The last component of y(2) from y(0) = 0, by s steps of classical
    4th-order Runge-Kutta."""
    h = 2.0 / s
    y = np.zeros_like(x)
    for step in range(s):
        k1 = ode_rhs(x, y)
        k2 = ode_rhs(x, y + 0.5 * h * k1)
        k3 = ode_rhs(x, y + 0.5 * h * k2)
        k4 = ode_rhs(x, y + h * k3)
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return y[-1]


# ---------------------------------------------------------------- lse
def lse(x):
    a = np.max(x)
    return a + np.log(np.sum(np.exp(x - a)))


# ---------------------------------------------------------------- det
def det_of_minor(A, rows, cols):
    """The determinant of A's minor on `rows` x `cols`, by expansion along
    its first row (cmpad's det_by_minor)."""
    if len(rows) == 1:
        return A[rows[0], cols[0]]
    det = 0.0
    sign = 1.0
    for j in range(len(cols)):
        minor = det_of_minor(A, rows[1:], cols[:j] + cols[j + 1:])
        det = det + sign * A[rows[0], cols[j]] * minor
        sign = -sign
    return det


def det_by_minor(A):
    ell = A.shape[0]
    return det_of_minor(A, list(range(ell)), list(range(ell)))


# ---------------------------------------------------------------- kmeans
def kmeans_cost(points, centroids):
    """Sum over points of the squared distance to the nearest centroid."""
    dists = np.sum((points[:, None, :] - centroids[None, :, :]) ** 2, axis=2)
    return np.sum(np.min(dists, axis=1))


# ---------------------------------------------------------------- llsq
def llsq_objective(x, n):
    """1/2 sum_i (sign(t_i) - sum_j x_j t_i^j)^2 on n points t_i in [-1, 1]."""
    t = -1.0 + np.arange(n) * 2.0 / (n - 1)
    powers = t[:, None] ** np.arange(x.shape[0])
    residual = np.sign(t) - powers @ x
    return 0.5 * np.sum(residual ** 2)
