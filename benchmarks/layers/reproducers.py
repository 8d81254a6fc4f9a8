"""Minimal reproducers of what the harness finds: a few lines of plain NumPy
through srcgrad's public API each, asserting the right answer (derived by
hand). While the cause is there a snippet raises; once srcgrad is fixed it
passes, and the report says "passes (fixed?)". The harness runs them in
fresh interpreters.

`match`: regular expressions over a refusal's cause key (error class and
normalised message, see report.cause_key) or a wrong case's message: the
cases matched are listed under the reproducer.
"""

REPRODUCERS = [
    {
        "id": "dict-argument-written",
        "title": "a forward writing a key of a dict passed in (CS231n's bn_param running statistics) is refused",
        "match": [r"writing into \w+, a parameter of"],
        "note": "The dict is the differentiated function's global (CS231n's notebooks write "
                "`lambda x: batchnorm_forward(x, gamma, beta, bn_param)[0]`), handed to the forward, which "
                "stores `bn_param['running_mean']`. The message speaks of an array, but the value written into "
                "is a dict: op by op, the tape would run the write as Python does.",
        "code": """
import numpy as np, srcgrad as sg
def scale_forward(x, gamma, param):          # a CS231n-style forward keeping running statistics
    param["running_mean"] = 0.9 * param.get("running_mean", 0.0) + 0.1 * x.mean(axis=0)
    return gamma * (x - x.mean(axis=0))
param = {"mode": "train"}
def loss(x):
    return np.sum(scale_forward(x, 2.0, param) ** 2)
x = np.array([[1.0, 2.0], [3.0, 5.0]])
assert np.allclose(sg.grad(loss)(x), 8.0 * (x - x.mean(axis=0)))
""",
    },
    {
        "id": "astype-copy-keyword",
        "title": "Tensor.astype(dtype, copy=False) raises TypeError (op by op and on the tape)",
        "match": [r"astype\(\) got an unexpected keyword argument 'copy'"],
        "note": "CS231n's dropout_forward ends with `out.astype(x.dtype, copy=False)`. It runs op by op "
                "because `dropout_param['seed']` (inside `if 'seed' in dropout_param:`, not taken) cannot be "
                "evaluated at transform time; then ndarray.astype's `copy=` keyword is not accepted by "
                "Tensor.astype.",
        "code": """
import numpy as np, srcgrad as sg
x = sg.constant([1.0, 2.0])
with sg.GradientTape() as tape:
    tape.watch(x)
    y = np.sum(x.astype(np.float64, copy=False) * 3.0)
assert np.allclose(tape.gradient(y, x), [3.0, 3.0])
""",
    },
    {
        "id": "dict-key-in-untaken-branch",
        "title": "`if 'seed' in param: np.random.seed(param['seed'])` (key absent) sends the function op by op",
        "match": [r"could not evaluate \w+\['seed'\] at transform time"],
        "note": "The first half of the dropout refusal: CS231n's dropout_forward seeds only when its dict has a "
                "'seed' key; the compiler tries to evaluate `dropout_param['seed']` at transform time, fails "
                "(ResolutionError) and hands the whole objective to the tape, where astype-copy-keyword follows. "
                "Compiled, the same dropout_forward without those two lines agrees.",
        "code": """
import warnings
import numpy as np, srcgrad as sg
warnings.simplefilter("error", sg.PerformanceWarning)      # compiled, or an error saying why not
def scale(x, param):
    if "seed" in param:
        np.random.seed(param["seed"])
    return x * param["p"]
param = {"p": 0.5}
assert np.allclose(sg.grad(lambda x: np.sum(scale(x, param)))(np.ones(2)), [0.5, 0.5])
""",
    },
    {
        "id": "sliding-window-view",
        "title": "no adjoint rule for np.lib.stride_tricks.sliding_window_view",
        "match": [r"no adjoint rule for np\.lib\.stride_tricks\.sliding_window_view"],
        "note": "Vectorised CS231n solutions build the convolution's and the pooling's windows with it. Its "
                "adjoint scatters each window's cotangent back (np.add.at over the window offsets).",
        "code": """
import numpy as np, srcgrad as sg
from numpy.lib.stride_tricks import sliding_window_view
f = lambda x: np.sum(sliding_window_view(x, 3) ** 2)        # windows (0,1,2), (1,2,3), (2,3,4)
x = np.arange(5.0)
assert np.allclose(sg.grad(f)(x), 2 * x * np.array([1, 2, 3, 2, 1]))
""",
    },
    {
        "id": "tensor-into-ndarray-on-tape",
        "title": "on the tape, a Tensor written into a NumPy array element cuts the gradient path "
                 "(numpy-ml's Pool2D: `Y = np.zeros(...); Y[m, i, j, c] = np.max(window)`)",
        "match": [r"target must be a Tensor", r"written into a NumPy array element"],
        "note": "Expected op by op (Tensors are immutable and NumPy has no dispatch for element "
                "assignment: srcgrad warns with a GradientPathWarning), then tape.gradient raises because the "
                "target is a plain float. Compiled code (sg.grad of a function doing this) differentiates "
                "element assignment.",
        "code": """
import numpy as np, srcgrad as sg
def max_rows(X):
    Y = np.zeros(X.shape[0])
    for i in range(X.shape[0]):
        Y[i] = np.max(X[i])
    return Y
X = sg.constant([[1.0, 3.0], [4.0, 2.0]])
with sg.GradientTape() as tape:
    tape.watch(X)
    y = np.sum(max_rows(X))
assert np.allclose(tape.gradient(y, X), [[0.0, 1.0], [1.0, 0.0]])
""",
    },
    {
        "id": "fallback-zero-gradient",
        "title": "sg.grad: a method with an attribute write (even in a branch not taken) runs op by op, where a "
                 "Tensor written into a NumPy array element gives a zero gradient (warned, not raised)",
        "match": [],
        "note": "Not one of the 69 cases (they run layer objects on a GradientTape, as TensorFlow users do), "
                "found while building the harness: `sg.grad(lambda X: np.sum(pool.forward(X) * G))(X)` on "
                "numpy-ml's Pool2D, initialised, returns a gradient off by 1.6 (max abs; the right one is "
                "one-hot per window) with a PerformanceWarning and GradientPathWarnings: the attribute write "
                "in `if not self.is_initialized:` sends the method op by op, where `Y[m, i, j, c] = "
                "pool_fn(xi)` cuts the path. Compiled, element assignment would be differentiated.",
        "code": """
import numpy as np, srcgrad as sg
class MaxRows:                               # numpy-ml's layers initialise lazily
    def __init__(self):
        self.is_initialized = True
    def forward(self, X):
        if not self.is_initialized:          # not taken, but an attribute write: sg.grad runs op by op
            self.n_in = X.shape[1]
        Y = np.zeros(X.shape[0])
        for i in range(X.shape[0]):
            Y[i] = np.max(X[i])
        return Y
layer = MaxRows()
X = np.array([[1.0, 3.0], [4.0, 2.0]])
g = sg.grad(lambda X: np.sum(layer.forward(X)))(X)
assert np.allclose(g, [[0.0, 1.0], [1.0, 0.0]]), g
""",
    },
]
