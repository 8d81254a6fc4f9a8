"""Functions for tests/test_helper_fast_paths.py's Jacobian results (in a
file: srcgrad reads their source)."""
import numpy as np


def cubic(x):
    return np.sum(x ** 3)


def double(x):
    return 2.0 * x


def both(x, y):
    return x + y
