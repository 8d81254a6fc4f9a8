"""srcgrad: automatic differentiation of Python + NumPy by source
transformation, with the tf.GradientTape programming model.

The public names of API.md, nothing else.
"""
from . import callables, custom, functional, program, rules  # noqa: F401  (rules: registers the NumPy rules)
from .callables import compilable, field_method, function
from .custom import custom_gradient, insert_grad_of
from .errors import GradientPathError, NoRuleError, PerformanceWarning, UnsupportedSyntaxError
from .runtime.arrays import ForeignArrayError
from .forward_mode import ForwardAccumulator
from .function import GeneratedFunction
from .functional import checkpoint, grad, jvp, source, value_and_grad
from .jacobians import hessian, hvp, jacobian
from .rules.registry import register_adjoint
from .runtime.revolve import checkpointed
from .rules.tangents import register_tangent
from .tape import GradientTape, UnconnectedGradients
from .tensor import GradientPathWarning, Tensor, Variable, constant
from .tools import check, explain, export, show
from .jit import jit
from .jit import api as jit_api
from .jit import tape as jit_tape
from .function import SERVICES as function_services


def _scipy_integrate():
    from . import integrate  # noqa: F401


# scipy.integrate's rules call the AD engine (the adjoint method runs srcgrad on
# the user's function), so they live above it, in srcgrad/integrate.py, loaded
# when the program imports scipy.integrate, as the other SciPy rules are.
rules.registry.register_lazy("scipy.integrate", _scipy_integrate)

# The composition root: a Program (program.py) compiles the functions its code
# calls, which are function objects of the layer above it (callables.py,
# function.py, methods.py); it receives their constructors here, once.
program.install(compilable=compilable, field_method=field_method, generated_function=GeneratedFunction)
function_services.tape_jit = jit_tape.TapeJit    # (@sg.function(jit=True): Numba, imported when first used)
function_services.draws_random = jit_api.draws_random    # (tape.jacobian re-runs only what draws nothing)
functional.SERVICES.lowered_source = jit_api.lowered_source     # (sg.source(..., jit=True))
custom.SERVICES.compiled = callables.as_function     # (grad_fn of custom_gradient, compiled at higher order)
del compilable, field_method, GeneratedFunction, function_services, jit_api, jit_tape

__all__ = [
    "Tensor", "Variable", "constant", "GradientTape", "UnconnectedGradients",
    "register_adjoint", "custom_gradient", "UnsupportedSyntaxError", "NoRuleError", "PerformanceWarning",
    "ForeignArrayError", "GradientPathError",
    "GradientPathWarning", "insert_grad_of",
    "function", "grad", "value_and_grad", "source", "show",
    "ForwardAccumulator", "register_tangent", "jvp", "jacobian", "hessian", "hvp", "checkpoint",
    "checkpointed",
    "check", "explain", "export", "jit",
]
__version__ = "0.2.0"
