"""Rows for tests/test_forward.py's tangent table (its format: name, case
function, input specs (shape, domain), primitives covered) for the tangent
rules added in issue 11 and audit 11: the constructors (full, full_like,
linspace, copy), the joining functions (vstack, hstack, dstack,
column_stack, append, row_stack, block), np.insert, np.ptp and
np.linalg.eigvals. (np.fft's rows are in cases_fft.py.)
"""
import numpy as np

def c_full(v): return np.full((2, 3), v) * 2.0                            # noqa: E704
def c_full_like(x, v): return np.full_like(x, v) * x                      # noqa: E704
def c_linspace(a, b): return np.linspace(a, b, 4, axis=-1)                # noqa: E704
def c_copy(x): return np.copy(x) * x                                      # noqa: E704
def c_vstack(x, y): return np.vstack([x, y])                              # noqa: E704
def c_vstack_array(x): return np.vstack(x * 2.0)                          # noqa: E704
def c_hstack(x, y): return np.hstack((x, y, np.ones(1, x.dtype)))        # noqa: E704
def c_dstack(x, y): return np.dstack([x, y])                              # noqa: E704
def c_column_stack(x, y): return np.column_stack([x, y])                  # noqa: E704
def c_column_stack_array(x): return np.column_stack(x)                    # noqa: E704
def c_append(x, y): return np.append(x, y, axis=0)                        # noqa: E704
def c_append_flat(x, y): return np.append(x, y)                           # noqa: E704
def c_ptp(x): return np.ptp(x, axis=1)                                    # noqa: E704
def c_row_stack(x, y): return np.row_stack((x, y))                         # noqa: E704
def c_eigvals(a): return np.imag(np.linalg.eigvals(a)) + np.real(np.linalg.eigvals(a))  # noqa: E704
def c_block(x, y): return np.block([[x, 2.0 * x], [y, np.ones((1, 3), x.dtype)]])  # noqa: E704
def c_insert(x, y): return np.insert(x, [1, 3], [y[0], 2.0])                 # noqa: E704
def c_insert_axis(x, y): return np.insert(x, 1, y, axis=0)                 # noqa: E704


TANGENT_CASES = [
    ("full_like", c_full_like, (((2, 3), "real"), ((3,), "real")), np.full_like),
    ("linspace", c_linspace, (((2,), "real"), ((), "real")), np.linspace),
    ("copy", c_copy, (((3, 2), "real"),), (np.copy, np.multiply)),
    ("vstack", c_vstack, (((3,), "real"), ((2, 3), "real")), np.vstack),
    ("vstack_array", c_vstack_array, (((2, 3), "real"),), np.vstack),
    ("hstack", c_hstack, (((2,), "real"), ((3,), "real")), np.hstack),
    ("dstack", c_dstack, (((2, 3), "real"), ((2, 3), "real")), np.dstack),
    ("column_stack", c_column_stack, (((3,), "real"), ((3, 2), "real")), np.column_stack),
    ("column_stack_array", c_column_stack_array, (((2, 4), "real"),), np.column_stack),
    ("append", c_append, (((2, 3), "real"), ((1, 3), "real")), np.append),
    ("append_flat", c_append_flat, (((2, 2), "real"), ((3,), "real")), np.append),
    ("ptp", c_ptp, (((3, 4), "real"),), np.ptp),
    ("eigvals", c_eigvals, (((3, 3), "real"),), np.linalg.eigvals),
    ("block", c_block, (((2, 3), "real"), ((1, 3), "real")), (np.block, np.multiply)),
    ("insert", c_insert, (((5,), "real"), ((2,), "real")), np.insert),
    ("insert_axis", c_insert_axis, (((2, 3), "real"), ((3,), "real")), np.insert),
]
if hasattr(np, "row_stack"):
    TANGENT_CASES.append(("row_stack", c_row_stack, (((3,), "real"), ((2, 3), "real")), np.row_stack))
# np.full(shape, tensor) is not dispatched to srcgrad op by op (see CASES)
COMPILED_ONLY_TANGENT_CASES = [
    ("full", c_full, (((), "real"),), np.full),
]
