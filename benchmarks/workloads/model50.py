"""The 50-line function whose first differentiation the `transform`
workload times: a GRU encoder over a sequence with a per-step softmax
readout, a norm-clipping branch, a branch on the time step, attention
pooling and an L2 penalty (46 lines, 51 with its two helpers). Realistic
model code, within what srcgrad compiles (loops, branches, a list, helper
functions, fancy indexing, tuple iteration).

Shapes: xs (T, batch, features); labels (T, batch) ints; Wz, Wr, Wh
(features, hidden); Uz, Ur, Uh (hidden, hidden); b (3, hidden); V (hidden,
classes); attn (hidden,). Returns a float.
"""
import numpy as np


def sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def log_softmax(logits):
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))


def gru_loss(Wz, Uz, Wr, Ur, Wh, Uh, b, V, attn, xs, labels, clip=5.0):
    """Mean cross-entropy of a GRU encoder's per-step predictions (inputs
    standardised), with a smoothness term on the states, attention pooling
    with an entropy bonus, and L2."""
    T, batch = xs.shape[0], xs.shape[1]
    hidden = Uz.shape[0]
    mean = np.mean(xs, axis=(0, 1))
    std = np.std(xs, axis=(0, 1)) + 1e-6
    xs = (xs - mean) / std
    bz = b[0]
    br = b[1]
    bh = b[2]
    h = np.zeros((batch, hidden))
    rows = np.arange(batch)
    total = 0.0
    states = []
    for t in range(T):
        x = xs[t]
        z = sigmoid(x @ Wz + h @ Uz + bz)
        r = sigmoid(x @ Wr + h @ Ur + br)
        h_tilde = np.tanh(x @ Wh + (r * h) @ Uh + bh)
        h = (1.0 - z) * h + z * h_tilde
        norm = np.sqrt(np.sum(h * h, axis=1, keepdims=True))
        if clip > 0.0:
            scale = np.minimum(1.0, clip / (norm + 1e-8))
            h = h * scale
        states.append(h)
        log_probs = log_softmax(h @ V)
        picked = log_probs[rows, labels[t]]
        if t >= T // 2:
            weight = 1.0
        else:
            weight = 0.5
        total = total - weight * np.mean(picked)
    H = np.stack(states)
    smooth = np.mean((H[1:] - H[:-1]) ** 2)
    scores = H @ attn
    scores = scores - np.max(scores, axis=0, keepdims=True)
    weights = np.exp(scores) / np.sum(np.exp(scores), axis=0, keepdims=True)
    pooled = np.sum(weights[:, :, None] * H, axis=0)
    penalty = 0.0
    for W in (Wz, Uz, Wr, Ur, Wh, Uh, V):
        penalty = penalty + np.sum(W * W)
    readout = 0.01 * np.sum(pooled ** 2)
    entropy = -np.sum(weights * np.log(weights + 1e-12)) / batch
    return total / T + 0.1 * smooth + readout + 1e-4 * penalty - 0.01 * entropy


N_PARAMS = 9   # Wz, Uz, Wr, Ur, Wh, Uh, b, V, attn


def make_args(T=10, batch=4, features=8, hidden=16, classes=5, seed=0):
    """(parameters..., xs, labels) for gru_loss."""
    rng = np.random.default_rng(seed)
    shapes = [(features, hidden), (hidden, hidden)] * 3 + [(3, hidden), (hidden, classes),
                                                           (hidden,)]
    params = [rng.normal(0, 0.4, s) for s in shapes]
    xs = rng.normal(size=(T, batch, features))
    labels = rng.integers(0, classes, (T, batch))
    return params + [xs, labels]
