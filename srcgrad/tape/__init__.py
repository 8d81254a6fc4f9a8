"""The tape (tf.GradientTape semantics): recording op by op, entries, the
reverse sweep and Jacobians.

- `recording`: the thread-local stack of tapes and accumulators, and `apply`
  (a primitive on Tensors, recorded);
- `entries`: one recorded operation each (op, deferred, compiled call);
- `gradient_tape`: GradientTape;
- `nested`: flatten and rebuild nested structures.
"""
from .entries import CallEntry, CompiledCall, DeferredEntry, OpEntry, keep_values  # noqa: F401
from .gradient_tape import GradientTape  # noqa: F401
from .nested import at_path, flatten, leaf_paths, pack_as  # noqa: F401
from .recording import (UnconnectedGradients, _local, _stack, _unconnected, add_op_observer, apply,  # noqa: F401
                        custom_body, in_custom_body, recording_tapes)
