"""What generated code calls at run time (layer 0: imports NumPy and
srcgrad.errors only).

- `core`: the primitive decorators, stacks (`push`, `pop`), `ShapeOf`,
  symbolic-zero helpers and cotangent containers.
- `arrays`: other libraries' arrays (Dask, CuPy, the array API): their
  namespace, zeros, scatters and gradients, without NumPy conversions.
- `syntax`: the run-time side of lowered syntax (`with` blocks,
  `insert_grad_of` markers, checks that compiled code means what NumPy
  means).

The package re-exports `core`'s names, so `runtime.push` is `core.push`.
"""
from .core import (ShapeOf, add_cotangents, as_input, as_input_tree, densify,  # noqa: F401
                   densify_tree, install, is_tensor, nondiff_helper, pop, primitive, push, sparse_zeros,
                   unindex_container, vector_object, zero_tangent, zeros_for, zeros_tree)
from . import arrays  # noqa: F401  (other libraries' arrays: Dask, CuPy, the array API)
from .core import _Dispatch  # noqa: F401  (the Tensor hook, installed by srcgrad.tensor)
