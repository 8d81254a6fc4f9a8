"""The repositories and their 69 cases: each a forward pass with the
repository's own hand-written backward pass.

- two CS231n solution sets (the assignments' `layers.py`, `rnn_layers.py`):
  function pairs `*_forward(...) -> (out, cache)` / `*_backward(dout, cache)`,
  and losses returning `(loss, dx)`; differentiated with `sg.value_and_grad`;
- numpy-ml: activation objects (`fn`, elementwise `grad`), losses (`loss`,
  `grad` with respect to the output layer's pre-activation), and layer
  objects (`forward`, `backward` filling `layer.gradients`); activations
  and losses through `sg.value_and_grad`, layers through a `GradientTape`;
- ML-From-Scratch: activation function objects (the `Activation` layer's
  `backward_pass` is the reference), losses (`loss`, `gradient`), and layer
  objects (`forward_pass`, `backward_pass`, whose parameter gradients are
  handed to the optimizer: a recording optimizer keeps them).

Sizes are small (a few hundred numbers): what is measured is whether the
derivative is right, not speed.
"""
import numpy as np

from .check import Case, GradProblem, TapeProblem
from .repos import Repository

REPOSITORIES = {}


def _repo(repo):
    REPOSITORIES[repo.key] = repo
    return repo


CS231N_A = _repo(Repository(
    key="cs231n-mantasu", url="https://github.com/mantasu/cs231n", dirname="cs231n-mantasu",
    modules={"a1": "assignment1/cs231n/layers.py", "a2": "assignment2/cs231n/layers.py",
             "a3": "assignment3/cs231n/rnn_layers.py"},
    note="CS231n solutions (2021-2025 assignments), vectorised (sliding_window_view, einsum)"))
CS231N_B = _repo(Repository(
    key="cs231n-burton2000", url="https://github.com/Burton2000/CS231n-2017", dirname="cs231n-burton2000",
    modules={"a2": "assignment2/cs231n/layers.py", "a3": "assignment3/cs231n/rnn_layers.py"},
    shims=("numpy-aliases",),
    note="CS231n solutions (2017 assignments), loops over windows and time steps"))
NUMPY_ML = _repo(Repository(
    key="numpy-ml", url="https://github.com/ddbourgin/numpy-ml", dirname="numpy-ml",
    modules={"layers": "numpy_ml.neural_nets.layers.layers",
             "activations": "numpy_ml.neural_nets.activations.activations",
             "losses": "numpy_ml.neural_nets.losses.losses"},
    shims=("collections-abc",),
    note="numpy_ml.neural_nets: activations, losses, layers"))
MLFS = _repo(Repository(
    key="ML-From-Scratch", url="https://github.com/eriklindernoren/ML-From-Scratch", dirname="ML-From-Scratch",
    modules={"layers": "mlfromscratch.deep_learning.layers",
             "activations": "mlfromscratch.deep_learning.activation_functions",
             "losses": "mlfromscratch.deep_learning.loss_functions"},
    shims=("inert-progressbar",),
    note="mlfromscratch.deep_learning: activation functions, losses, layers"))


def _add(repo, name, title, via, make, group, notes=""):
    repo.cases.append(Case(repo=repo.key, name=name, title=title, via=via, make=make, group=group, notes=notes))


# --------------------------------------------------------------------------------------------
# CS231n: function pairs and losses

def pair(repo, name, module, forward, backward, args, wrt, n_out=1, group="layers", notes=""):
    """forward(*args) -> (out_1, ..., out_n, cache); backward(dout_1, ..., dout_n, cache) ->
    the gradients of the `wrt` arguments, in that order."""
    wrt = wrt.split()

    def make(mods, rng, seed):
        data = args(rng)
        names = list(data)
        call = "%s(%s)" % (forward, ", ".join(names))
        outputs = ["out[%d]" % i for i in range(n_out)]

        def env(mods):
            return {forward: getattr(mods[module], forward)}

        def reference(env, data, Gs):
            res = env[forward](*[data[n] for n in names])
            grads = getattr(mods[module], backward)(*Gs, res[n_out])
            grads = grads if isinstance(grads, tuple) else (grads,)
            return dict(zip(wrt, grads))
        return GradProblem(mods, seed, env, data, wrt, call, outputs, reference)
    _add(repo, name, "%s / %s" % (forward, backward), "grad", make, group, notes)


def loss(repo, name, module, fn, args, wrt="x", group="losses"):
    """fn(*args) -> (loss, dloss/dx)."""
    def make(mods, rng, seed):
        data = args(rng)
        names = list(data)

        def env(mods):
            return {fn: getattr(mods[module], fn)}

        def reference(env, data, Gs):
            return {wrt: env[fn](*[data[n] for n in names])[1] * Gs[0]}
        return GradProblem(mods, seed, env, data, [wrt], "%s(%s)" % (fn, ", ".join(names)), ["out[0]"], reference)
    _add(repo, name, "%s (loss, dx)" % fn, "grad", make, group)


def _randn(rng, *shape):
    return rng.standard_normal(shape)


def _cs231n(repo, layernorm=True, groupnorm=True, loss_module="a2", svm_module="a2"):
    a2, a3 = "a2", "a3"
    pair(repo, "affine", a2, "affine_forward", "affine_backward",
         lambda r: {"x": _randn(r, 3, 2, 3), "w": _randn(r, 6, 4), "b": _randn(r, 4)}, "x w b")
    pair(repo, "relu", a2, "relu_forward", "relu_backward", lambda r: {"x": _randn(r, 4, 5)}, "x")
    pair(repo, "batchnorm", a2, "batchnorm_forward", "batchnorm_backward",
         lambda r: {"x": 2 + 3 * _randn(r, 6, 4), "gamma": _randn(r, 4), "beta": _randn(r, 4),
                    "bn_param": {"mode": "train"}}, "x gamma beta", notes="train mode")
    if layernorm:
        pair(repo, "layernorm", a2, "layernorm_forward", "layernorm_backward",
             lambda r: {"x": 2 + 3 * _randn(r, 4, 6), "gamma": _randn(r, 6), "beta": _randn(r, 6),
                        "ln_param": {}}, "x gamma beta")
    pair(repo, "dropout", a2, "dropout_forward", "dropout_backward",
         lambda r: {"x": _randn(r, 5, 6), "dropout_param": {"mode": "train", "p": 0.6}}, "x",
         notes="train mode; NumPy's global generator seeded before each forward (no 'seed' key)")
    pair(repo, "conv_naive", a2, "conv_forward_naive", "conv_backward_naive",
         lambda r: {"x": _randn(r, 2, 2, 5, 5), "w": _randn(r, 3, 2, 3, 3), "b": _randn(r, 3),
                    "conv_param": {"stride": 2, "pad": 1}}, "x w b")
    pair(repo, "max_pool_naive", a2, "max_pool_forward_naive", "max_pool_backward_naive",
         lambda r: {"x": _randn(r, 2, 2, 4, 4), "pool_param": {"pool_height": 2, "pool_width": 2, "stride": 2}},
         "x")
    pair(repo, "spatial_batchnorm", a2, "spatial_batchnorm_forward", "spatial_batchnorm_backward",
         lambda r: {"x": 1 + 2 * _randn(r, 2, 3, 3, 2), "gamma": _randn(r, 3), "beta": _randn(r, 3),
                    "bn_param": {"mode": "train"}}, "x gamma beta", notes="train mode")
    if groupnorm:
        pair(repo, "spatial_groupnorm", a2, "spatial_groupnorm_forward", "spatial_groupnorm_backward",
             lambda r: {"x": 1 + 2 * _randn(r, 2, 4, 2, 3), "gamma": _randn(r, 1, 4, 1, 1),
                        "beta": _randn(r, 1, 4, 1, 1), "G": 2, "gn_param": {}}, "x gamma beta")
    loss(repo, "svm_loss", svm_module, "svm_loss",
         lambda r: {"x": _randn(r, 5, 4), "y": r.randint(4, size=5)})
    loss(repo, "softmax_loss", loss_module, "softmax_loss",
         lambda r: {"x": _randn(r, 5, 4), "y": r.randint(4, size=5)})
    rnn_args = lambda r, h: {"x": _randn(r, 3, 4), h: _randn(r, 3, 5), "Wx": 0.5 * _randn(r, 4, 5),
                             "Wh": 0.5 * _randn(r, 5, 5), "b": _randn(r, 5)}
    pair(repo, "rnn_step", a3, "rnn_step_forward", "rnn_step_backward", lambda r: rnn_args(r, "prev_h"),
         "x prev_h Wx Wh b")
    pair(repo, "rnn", a3, "rnn_forward", "rnn_backward",
         lambda r: {"x": _randn(r, 2, 3, 4), "h0": _randn(r, 2, 5), "Wx": 0.5 * _randn(r, 4, 5),
                    "Wh": 0.5 * _randn(r, 5, 5), "b": _randn(r, 5)}, "x h0 Wx Wh b")
    pair(repo, "lstm_step", a3, "lstm_step_forward", "lstm_step_backward",
         lambda r: {"x": _randn(r, 3, 4), "prev_h": _randn(r, 3, 5), "prev_c": _randn(r, 3, 5),
                    "Wx": 0.5 * _randn(r, 4, 20), "Wh": 0.5 * _randn(r, 5, 20), "b": _randn(r, 20)},
         "x prev_h prev_c Wx Wh b", n_out=2)
    pair(repo, "lstm", a3, "lstm_forward", "lstm_backward",
         lambda r: {"x": _randn(r, 2, 3, 4), "h0": _randn(r, 2, 5), "Wx": 0.5 * _randn(r, 4, 20),
                    "Wh": 0.5 * _randn(r, 5, 20), "b": _randn(r, 20)}, "x h0 Wx Wh b")
    pair(repo, "word_embedding", a3, "word_embedding_forward", "word_embedding_backward",
         lambda r: {"x": r.randint(6, size=(2, 4)), "W": _randn(r, 6, 3)}, "W")
    pair(repo, "temporal_affine", a3, "temporal_affine_forward", "temporal_affine_backward",
         lambda r: {"x": _randn(r, 2, 3, 4), "w": _randn(r, 4, 5), "b": _randn(r, 5)}, "x w b")
    loss(repo, "temporal_softmax_loss", a3, "temporal_softmax_loss",
         lambda r: {"x": _randn(r, 2, 3, 5), "y": r.randint(5, size=(2, 3)),
                    "mask": np.array([[True, True, False], [True, False, True]])})


_cs231n(CS231N_A, svm_module="a1", loss_module="a2")          # 18 cases
_cs231n(CS231N_B, layernorm=False, groupnorm=False)          # 16: the 2017 assignment has neither


# --------------------------------------------------------------------------------------------
# stateless objects through sg.value_and_grad

def elementwise(repo, name, title, env, call, data, wrt, reference, group):
    def make(mods, rng, seed):
        d = data(rng)

        def ref(env_, d_, Gs):
            return reference(mods, env_, d_, Gs[0])
        return GradProblem(mods, seed, env, d, wrt.split(), call, ["out"], ref)
    _add(repo, name, title, "grad", make, group)


NUMPY_ML_ACTIVATIONS = ["Sigmoid", "Tanh", "ReLU", "LeakyReLU", "ELU", "SELU", "GELU", "SoftPlus"]
for _name in NUMPY_ML_ACTIVATIONS:
    elementwise(
        NUMPY_ML, _name, "%s: fn / grad" % _name,
        env=lambda mods, n=_name: {"act": getattr(mods.activations, n)()},
        call="act(z)", data=lambda r: {"z": 1.5 * _randn(r, 4, 5)}, wrt="z",
        reference=lambda mods, env, d, G: {"z": G * env["act"].grad(d["z"])}, group="activations")


def _one_hot(r, n, m):
    return np.eye(m)[r.randint(m, size=n)]


elementwise(
    NUMPY_ML, "SquaredError", "SquaredError: loss / grad (through a Tanh output)",
    env=lambda mods: {"loss_fn": mods.losses.SquaredError(), "act": mods.activations.Tanh()},
    call="loss_fn(y, act(z))", data=lambda r: {"y": _randn(r, 4, 3), "z": _randn(r, 4, 3)}, wrt="z",
    reference=lambda mods, env, d, G: {"z": G * env["loss_fn"].grad(d["y"], env["act"](d["z"]), d["z"], env["act"])},
    group="losses")


def _softmax_layer(mods):
    layer = mods.layers.Softmax()
    layer.n_in = 3
    layer._init_params()
    return layer


elementwise(
    NUMPY_ML, "CrossEntropy", "CrossEntropy: loss / grad (through the Softmax layer)",
    env=lambda mods: {"loss_fn": mods.losses.CrossEntropy(), "softmax": _softmax_layer(mods)},
    call="loss_fn(y, softmax.forward(z, retain_derived=False))",
    data=lambda r: {"y": _one_hot(r, 4, 3), "z": _randn(r, 4, 3)}, wrt="z",
    reference=lambda mods, env, d, G: {
        "z": G * env["loss_fn"].grad(d["y"], env["softmax"].forward(d["z"], retain_derived=False))},
    group="losses")

MLFS_ACTIVATIONS = [("sigmoid", "Sigmoid"), ("softmax", "Softmax"), ("tanh", "TanH"), ("relu", "ReLU"),
                    ("leaky_relu", "LeakyReLU"), ("elu", "ELU"), ("selu", "SELU"), ("softplus", "SoftPlus")]


def _mlfs_activation_reference(mods, key, x, G):
    layer = mods.layers.Activation(key)
    layer.forward_pass(x)
    return {"x": layer.backward_pass(G)}


for _key, _cls in MLFS_ACTIVATIONS:
    elementwise(
        MLFS, _cls, "%s: __call__ / Activation('%s').backward_pass" % (_cls, _key),
        env=lambda mods, c=_cls: {"activation": getattr(mods.activations, c)()},
        call="activation(x)", data=lambda r: {"x": 1.5 * _randn(r, 4, 5)}, wrt="x",
        reference=lambda mods, env, d, G, k=_key: _mlfs_activation_reference(mods, k, d["x"], G),
        group="activations")

elementwise(
    MLFS, "SquareLoss", "SquareLoss: loss / gradient",
    env=lambda mods: {"loss_fn": mods.losses.SquareLoss()}, call="loss_fn.loss(y, y_pred)",
    data=lambda r: {"y": _randn(r, 4, 3), "y_pred": _randn(r, 4, 3)}, wrt="y_pred",
    reference=lambda mods, env, d, G: {"y_pred": G * env["loss_fn"].gradient(d["y"], d["y_pred"])},
    group="losses")
elementwise(
    MLFS, "CrossEntropy", "CrossEntropy: loss / gradient",
    env=lambda mods: {"loss_fn": mods.losses.CrossEntropy()}, call="loss_fn.loss(y, p)",
    data=lambda r: {"y": _one_hot(r, 4, 3), "p": r.uniform(0.05, 0.95, size=(4, 3))}, wrt="p",
    reference=lambda mods, env, d, G: {"p": G * env["loss_fn"].gradient(d["y"], d["p"])},
    group="losses")


# --------------------------------------------------------------------------------------------
# layer objects through a GradientTape

def layer(repo, name, title, build, inputs, params, forward, backward, wrt=None, notes=""):
    def make(mods, rng, seed):
        ins = inputs(rng)
        names = wrt.split() if wrt is not None else [k for k, v in ins.items()
                                                     if np.asarray(v).dtype.kind == "f"]
        return TapeProblem(mods, seed, build, ins, names, params, forward, backward)
    _add(repo, name, title, "tape", make, "layers", notes)


def _npml(cls, *args, init=None, **kwargs):
    """numpy-ml layers initialise their weights in their first forward pass;
    the harness sets the input size the first forward would set, and calls
    the layer's own `_init_params()`."""
    def build(mods):
        obj = getattr(mods.layers, cls)(*args, **kwargs)
        for k, v in (init or {}).items():
            setattr(obj, k, v)
        if not obj.is_initialized:
            obj._init_params()
        return obj
    return build


def _npml_backward(*params, returns_dx=True):
    def backward(layer, Gs):
        dx = layer.backward(Gs[0])
        out = {p: layer.gradients[p] for p in params}
        if returns_dx:
            out["X"] = dx
        return out
    return backward


def _npml_layer(name, build, inputs, params, title=None, forward=None, returns_dx=True, wrt=None, notes=""):
    layer(NUMPY_ML, name, title or "%s.forward / backward" % name, build, inputs,
          {p: "parameters." + p for p in params}, forward or (lambda l, X: l.forward(X)),
          _npml_backward(*params, returns_dx=returns_dx), wrt=wrt, notes=notes)


_npml_layer("FullyConnected", _npml("FullyConnected", 3, act_fn="Tanh", init={"n_in": 4}),
            lambda r: {"X": _randn(r, 5, 4)}, ["W", "b"], title="FullyConnected (Tanh).forward / backward")
_npml_layer("Conv1D", _npml("Conv1D", 3, 2, pad=1, stride=1, act_fn="Tanh", init={"in_ch": 2}),
            lambda r: {"X": _randn(r, 2, 5, 2)}, ["W", "b"], title="Conv1D (Tanh).forward / backward")
_npml_layer("Conv2D", _npml("Conv2D", 3, (2, 2), pad=1, stride=1, act_fn="Tanh", init={"in_ch": 2}),
            lambda r: {"X": _randn(r, 2, 4, 4, 2)}, ["W", "b"], title="Conv2D (Tanh).forward / backward")
_npml_layer("Pool2D", _npml("Pool2D", (2, 2), stride=2, mode="max", init={"in_ch": 2, "out_ch": 2}),
            lambda r: {"X": _randn(r, 2, 4, 4, 2)}, [], title="Pool2D (max).forward / backward")
_npml_layer("BatchNorm1D", _npml("BatchNorm1D", init={"n_in": 4, "n_out": 4}),
            lambda r: {"X": 1 + 2 * _randn(r, 6, 4)}, ["scaler", "intercept"], notes="train mode")
_npml_layer("BatchNorm2D", _npml("BatchNorm2D", init={"in_ch": 2, "out_ch": 2}),
            lambda r: {"X": 1 + 2 * _randn(r, 3, 3, 3, 2)}, ["scaler", "intercept"], notes="train mode")
_npml_layer("LayerNorm1D", _npml("LayerNorm1D", init={"n_in": 5, "n_out": 5}),
            lambda r: {"X": 1 + 2 * _randn(r, 3, 5)}, ["scaler", "intercept"])
_npml_layer("Embedding", _npml("Embedding", 3, 7), lambda r: {"X": r.randint(7, size=(2, 4))}, ["W"],
            returns_dx=False, wrt="")
_npml_layer("Softmax", _npml("Softmax", init={"n_in": 4}), lambda r: {"X": _randn(r, 3, 4)}, [])
_npml_layer("RNNCell", _npml("RNNCell", 3, act_fn="Tanh", init={"n_in": 4}), lambda r: {"X": _randn(r, 2, 4)},
            ["Waa", "Wax", "ba", "bx"], title="RNNCell.forward / backward (one step)")
_npml_layer("LSTMCell", _npml("LSTMCell", 3, init={"n_in": 4}), lambda r: {"X": _randn(r, 2, 4)},
            ["Wf", "Wu", "Wc", "Wo", "bf", "bu", "bc", "bo"], forward=lambda l, X: l.forward(X)[0],
            title="LSTMCell.forward / backward (one step, output A)")


class RecordingOptimizer:
    """ML-From-Scratch's `backward_pass` hands each parameter's gradient to
    its optimizer (`self.W = self.W_opt.update(self.W, grad_w)`) instead of
    returning it: this optimizer keeps the gradient and leaves the weight."""

    def update(self, w, grad_wrt_w):
        self.grad = grad_wrt_w
        return w


def _mlfs(cls, *args, input_shape, **kwargs):
    def build(mods):
        obj = getattr(mods.layers, cls)(*args, **kwargs)
        obj.set_input_shape(input_shape)
        if hasattr(obj, "initialize"):
            obj.initialize(RecordingOptimizer())
        return obj
    return build


def _mlfs_layer(name, build, inputs, params, title=None, training=True, notes=""):
    def backward(layer, Gs):
        out = {"X": layer.backward_pass(Gs[0])}
        for p in params:
            out[p] = getattr(layer, p + "_opt").grad
        return out
    layer(MLFS, name, title or "%s.forward_pass / backward_pass" % name, build, inputs, {p: p for p in params},
          lambda l, X: l.forward_pass(X, training=training), backward, notes=notes)


_mlfs_layer("Dense", _mlfs("Dense", 3, input_shape=(4,)), lambda r: {"X": _randn(r, 5, 4)}, ["W", "w0"])
_mlfs_layer("Conv2D", _mlfs("Conv2D", 3, (3, 3), input_shape=(2, 4, 4), padding="same", stride=1),
            lambda r: {"X": _randn(r, 2, 2, 4, 4)}, ["W", "w0"])
_mlfs_layer("BatchNormalization", _mlfs("BatchNormalization", input_shape=(4,)),
            lambda r: {"X": 1 + 2 * _randn(r, 6, 4)}, ["gamma", "beta"], notes="training=True")
_mlfs_layer("Dropout", _mlfs("Dropout", 0.3, input_shape=(6,)), lambda r: {"X": _randn(r, 5, 6)}, [],
            notes="training=True; NumPy's global generator seeded before each forward")
