"""A module of its own importing a SciPy function by name (as gmm.py imports
logsumexp): test_scipy_on_tape.py differentiates code that calls into it op
by op."""
from scipy.special import logsumexp


def log_normalize(x):
    return x - logsumexp(x)
