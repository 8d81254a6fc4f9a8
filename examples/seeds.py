"""Every example of the reference documents (../shared/seeds/), in srcgrad.

The documents are the `tf.GradientTape` API page, two tutorials and a
question-and-answer thread. Each function below is one of their examples,
translated to NumPy (`tf.constant` -> `sg.constant`, `tf.reduce_mean` ->
`np.mean`, a Keras `Dense` layer -> a small class with an `@sg.function`
method), and returns the values the document prints. NumPy's default dtype
is float64, so `tf.Tensor(6.0, shape=(), dtype=float32)` reads
`srcgrad.Tensor(6.0, shape=(), dtype=float64)` here.

    python examples/seeds.py
"""
import os
import sys

import numpy as np

try:
    import srcgrad as sg
except ImportError:  # running from a source checkout without installing
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import srcgrad as sg


def square_gradient():
    """API page: y = x * x at x = 3 -> 6.0."""
    x = sg.constant(3.0)
    with sg.GradientTape() as g:
        g.watch(x)
        y = x * x
    return g.gradient(y, x)


def nested_tapes():
    """API page: nested tapes give 6.0 and 2.0."""
    x = sg.constant(3.0)
    with sg.GradientTape() as g:
        g.watch(x)
        with sg.GradientTape() as gg:
            gg.watch(x)
            y = x * x
        dy_dx = gg.gradient(y, x)
    d2y_dx2 = g.gradient(dy_dx, x)
    return dy_dx, d2y_dx2


def persistent_tape():
    """API page: a persistent tape gives dz/dx = 108.0 (4x^3) and dy/dx = 6.0."""
    x = sg.constant(3.0)
    with sg.GradientTape(persistent=True) as g:
        g.watch(x)
        y = x * x
        z = y * y
    dz_dx = g.gradient(z, x)
    dy_dx = g.gradient(y, x)
    del g
    return dz_dx, dy_dx


def watch_accessed_variables_off():
    """API page: with watch_accessed_variables=False only variable_a (watched)
    gets a gradient: 6.0 and None."""
    variable_a = sg.Variable(3.0, name="x1")
    variable_b = sg.Variable(2.0, name="x2")
    with sg.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(variable_a)
        y = variable_a ** 2
        z = variable_b ** 3
    return tape.gradient(y, variable_a), tape.gradient(z, variable_b)


def unwatched_variable_answer():
    """Q&A thread: x = Variable(2.0) watched, w = Variable(5.0) not: 4.0 and None."""
    x = sg.Variable(2.0)
    w = sg.Variable(5.0)
    with sg.GradientTape(watch_accessed_variables=False, persistent=True) as tape:
        tape.watch(x)
        y = x ** 2
        z = w ** 3
    return tape.gradient(y, x), tape.gradient(z, w)


def variable_square():
    """Q&A thread and tutorial: x = Variable(3.0); y = x**2 -> 6.0 (watched
    automatically: a trainable Variable)."""
    x = sg.Variable(3.0)
    with sg.GradientTape() as tape:
        y = x ** 2
    return tape.gradient(y, x)


def _watch_inputs():
    x0 = sg.Variable(3.0, name="x0")                   # trainable
    x1 = sg.Variable(3.0, name="x1", trainable=False)  # not trainable
    x2 = sg.Variable(2.0, name="x2") + 1.0             # a Tensor, not a Variable
    x3 = sg.constant(3.0)                              # a Tensor
    return x0, x1, x2, x3


def what_the_tape_watches():
    """Tutorials: only the trainable Variable is watched: 6.0, None, None, None."""
    x0, x1, x2, x3 = _watch_inputs()
    with sg.GradientTape() as tape:
        y = (x0 ** 2) + (x1 ** 2) + (x2 ** 2) + (x3 ** 2)
    return tape.gradient(y, [x0, x1, x2, x3])


def what_the_tape_watches_without_x3():
    """Notebook: the same without x3 in y: 6.0, None, None, None."""
    x0, x1, x2, x3 = _watch_inputs()
    with sg.GradientTape() as tape:
        y = (x0 ** 2) + (x1 ** 2) + (x2 ** 2)
    return tape.gradient(y, [x0, x1, x2, x3])


def watching_everything():
    """Tutorial: after tape.watch([x1, x2, x3]) all four gradients are 6.0."""
    x0, x1, x2, x3 = _watch_inputs()
    with sg.GradientTape() as tape:
        tape.watch([x1, x2, x3])
        y = (x0 ** 2) + (x1 ** 2) + (x2 ** 2) + (x3 ** 2)
    return tape.gradient(y, [x0, x1, x2, x3])


def persistent_variable():
    """Tutorial: x = Variable(3.0), z = x^4: dz/dx = 108.0, dy/dx = 6.0."""
    x = sg.Variable(3.0)
    with sg.GradientTape(persistent=True) as persistent_tape:
        persistent_tape.watch(x)
        y = x * x
        z = y * y
    dz_dx = persistent_tape.gradient(z, x)
    dy_dx = persistent_tape.gradient(y, x)
    del persistent_tape
    return dz_dx, dy_dx


def nested_variable():
    """Tutorial: y = x * x at x = Variable(3.0): first 6.0, second 2.0."""
    x = sg.Variable(3.0)
    with sg.GradientTape() as tape:
        tape.watch(x)
        with sg.GradientTape() as tape2:
            tape2.watch(x)
            y = x * x
        dy_dx = tape2.gradient(y, x)
    d2y_d2x = tape.gradient(dy_dx, x)
    return dy_dx, d2y_d2x


def jacobian_example():
    """API page: y = x * x at [1, 2]: jacobian [[2, 0], [0, 4]]."""
    with sg.GradientTape() as g:
        x = sg.constant([1.0, 2.0])
        g.watch(x)
        y = x * x
    return g.jacobian(y, x)


def batch_jacobian_example():
    """API page: y = x * x at [[1, 2], [3, 4]]: [[[2, 0], [0, 4]], [[6, 0], [0, 8]]]."""
    with sg.GradientTape() as g:
        x = sg.constant([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
        g.watch(x)
        y = x * x
    return g.batch_jacobian(y, x)


def simple_function(seed=0):
    """Notebook: y = x @ w + b; loss = mean(y**2), with w random (seeded):
    dl/dw = x^T (2 y / n) of shape (3, 2) and dl/db of shape (2,)."""
    rng = np.random.default_rng(seed)
    w = sg.Variable(rng.normal(size=(3, 2)), name="w")
    b = sg.Variable(np.zeros(2), name="b")
    x = [[1.0, 2.0, 3.0]]
    with sg.GradientTape() as tape:
        y = x @ w + b
        loss = np.mean(y ** 2)
    dl_dw, dl_db = tape.gradient(loss, [w, b])
    return w, b, dl_dw, dl_db


class Dense:
    """A stand-in for `tf.keras.layers.Dense(units, activation='relu')`."""

    def __init__(self, units, n_in, seed=0):
        rng = np.random.default_rng(seed)
        self.kernel = sg.Variable(rng.normal(0.0, 1.0 / np.sqrt(n_in), (n_in, units)), name="kernel")
        self.bias = sg.Variable(np.zeros(units), name="bias")

    @sg.function
    def __call__(self, x):
        return np.maximum(x @ self.kernel + self.bias, 0.0)

    @property
    def trainable_variables(self):
        return [self.kernel, self.bias]


def dense_layer():
    """Notebook: gradients of a Dense layer's loss with respect to its
    trainable variables: kernel (3, 2) and bias (2,). The layer's call is
    compiled; the Variables it reads as self.kernel and self.bias are inputs."""
    layer = Dense(2, 3)
    x = sg.constant([[1.0, 2.0, 3.0]])
    with sg.GradientTape() as tape:
        y = layer(x)
        loss = np.mean(y ** 2)
    grad = tape.gradient(loss, layer.trainable_variables)
    return layer, grad


def watched_constant():
    """Notebook: x = constant(3.0) watched; y = x**2 -> 6.0."""
    x = sg.constant(3.0)
    with sg.GradientTape() as tape:
        tape.watch(x)
        y = x ** 2
    return tape.gradient(y, x)


def _loss_fn(x):
    return 2.0 * x * x              # d/dx = 4 x = 12.0 at 3.0


def _other_loss_fn(x):
    return x * x                    # d/dx = 2 x = 6.0 at 3.0


def reset_two_tapes():
    """API page, first block: a second tape only differentiates
    other_loss_fn, not loss_fn: 6.0 (not 18.0)."""
    x = sg.Variable(3.0)
    with sg.GradientTape() as t:
        loss = _loss_fn(x)
    with sg.GradientTape() as t:
        loss += _other_loss_fn(x)
    return t.gradient(loss, x)


def reset_example():
    """API page, second block: reset() inside the context is equivalent to
    the two tapes above: only other_loss_fn is differentiated: 6.0."""
    x = sg.Variable(3.0)
    with sg.GradientTape() as t:
        loss = _loss_fn(x)
        t.reset()
        loss += _other_loss_fn(x)
    return t.gradient(loss, x)


def stop_recording_example():
    """API page: inside stop_recording nothing is recorded, and a persistent
    tape's gradient computed there is not traced: 6.0, and the product formed
    inside stop_recording is unconnected (None)."""
    x = sg.Variable(3.0)
    with sg.GradientTape(persistent=True) as t:
        loss = x * x
        with t.stop_recording():
            grads = t.gradient(loss, [x])
            untraced = x * 5.0
    return grads[0], t.gradient(untraced, x)


def main():
    print("y = x * x at 3.0:", square_gradient().numpy())
    d1, d2 = nested_tapes()
    print("nested tapes: dy_dx =", d1.numpy(), " d2y_dx2 =", d2.numpy())
    dz, dy = persistent_tape()
    print("persistent: dz_dx =", dz.numpy(), " dy_dx =", dy.numpy())
    ga, gb = watch_accessed_variables_off()
    print("watch_accessed_variables=False:", ga.numpy(), gb)
    gx, gw = unwatched_variable_answer()
    print(gx)
    print(gw)
    print("Variable x**2:", variable_square().numpy())
    print("what the tape watches:")
    for g in what_the_tape_watches():
        print(g)
    print("what the tape watches (y without x3):")
    for g in what_the_tape_watches_without_x3():
        print(g)
    print("after tape.watch([x1, x2, x3]):")
    for g in watching_everything():
        print(g)
    dz, dy = persistent_variable()
    print("First derivative of function y = x ^ 4 at x = 3 is", dz.numpy())
    d1, d2 = nested_variable()
    print("Function: y = x * x, x = 3.0")
    print("First Derivative:", d1.numpy())
    print("Second Derivative:", d2.numpy())
    print("jacobian:", jacobian_example().numpy().tolist())
    print("batch_jacobian:", batch_jacobian_example().numpy().tolist())
    _, _, dl_dw, dl_db = simple_function()
    print(dl_dw)
    print(dl_db)
    print("dl_dw shape:", dl_dw.shape, " dl_db shape:", dl_db.shape)
    layer, grad = dense_layer()
    for var, g in zip(layer.trainable_variables, grad):
        print(f"{var.name}, shape: {g.shape}")
    print("watched constant x**2:", watched_constant().numpy())
    print("two tapes (loss_fn forgotten):", reset_two_tapes().numpy())
    print("after reset:", reset_example().numpy())
    g, untraced = stop_recording_example()
    print("stop_recording:", g.numpy(), untraced)


if __name__ == "__main__":
    main()
