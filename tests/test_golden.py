"""Golden files of generated code: what srcgrad writes for a dozen
representative functions (tests/golden_funcs.py), kept verbatim in
tests/golden/<case>.py.txt.

They are for people, not for the machine: when a pass of the compiler
changes (naming, ANF, activity analysis, stacks, dead-code removal, in-place
updates...), the test fails with the unified diff of the generated code,
and the change is reviewed by eye. If the new code reads as well (or
better) and is right, regenerate the files with

    SRCGRAD_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py

and commit the diff of tests/golden/ together with the change, so the
review of the generated code is part of the review of the pass. With the
variable set, the files are written instead of compared (the tests pass).

A golden file never enshrines wrong code: every case also checks by value
that the derivative is right, against central finite differences
(tests/gradcheck.py). For array arguments `sg.grad` runs exactly the code
that `sg.source` shows; for Python-float arguments it runs code specialised
to 0-d values, which `sg.source(f, wrt, args=...)` shows, so the pendulum
case keeps both (`pendulum` assumes arrays, `pendulum_floats` is given
floats).

Determinism: the text does not depend on the process (hash seeds, the order
in which the tests run, earlier compilations). The `# Grad of: ... (file:line)`
comments name the source file of the functions; `_normalise` reduces any
path there to its basename (golden_funcs.py), so the files do not depend on
where the checkout lives, and strips trailing blanks. Line numbers do
depend on tests/golden_funcs.py: editing it means regenerating the files.

Not covered: `sg.source` of `sg.jacobian(f)` and `sg.hessian(f)` (they are
closures around srcgrad's own driver code, not generated derivative
functions); the Hessian-vector product case shows the forward-over-reverse
code that `sg.hvp` runs.
"""
import difflib
import os
import re

import numpy as np
import pytest

import golden_funcs as gf
import srcgrad as sg
from gradcheck import check_close, numerical_grad, numerical_jacobian

GOLDEN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
UPDATE = bool(os.environ.get("SRCGRAD_UPDATE_GOLDEN"))
HINT = ("regenerate with SRCGRAD_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py "
        "and review the diff by eye")


def _normalise(text):
    """Paths in the `(file:line)` comments to basenames; no trailing blanks;
    one final newline."""
    text = re.sub(r"[^\s()'\"]*[/\\]([\w.-]+\.py)(?=:\d+\))", r"\1", str(text))
    lines = [line.rstrip() for line in text.splitlines()]
    return "\n".join(lines).rstrip("\n") + "\n"


def _source_run_by_grad(f, args, wrt):
    """The code `sg.grad(f, wrt)(*args)` runs for these argument kinds
    (Python floats get code specialised to 0-d values)."""
    return sg.source(f, wrt=wrt, args=args)


def _rng(seed):
    return np.random.default_rng(seed)


def _partial(f, args, k):
    """f as a function of its argument k alone, the others fixed."""
    def g(a):
        full = list(args)
        full[k] = a
        return f(*full)
    return g


def _check_grad(f, args, wrt, **tol):
    """sg.grad(f, wrt) against central differences, argument by argument."""
    grads = sg.grad(f, wrt=wrt)(*args)
    grads = grads if len(wrt) > 1 else (grads,)
    for k, g in zip(wrt, grads):
        check_close(g, numerical_grad(_partial(f, args, k), args[k]), **tol)


# ---------------------------------------------------------------------------
# The cases: (name, the generated source, the check of the derivative)
# ---------------------------------------------------------------------------

def check_mlp_layer():
    r = _rng(0)
    _check_grad(gf.mlp_layer, (r.normal(size=(3, 2)), r.normal(size=2), r.normal(size=(4, 3))), (0, 1))


def check_branch():
    for x in ([0.3, 0.5, -0.2], [-0.3, 0.5, -0.9]):       # both branches
        _check_grad(gf.branch, (np.array(x),), (0,))


def check_rnn():
    r = _rng(1)
    _check_grad(gf.rnn, (r.normal(size=3), r.normal(0, 0.5, (3, 3)), r.normal(size=3), 4), (0, 1, 2))


def check_while_loop():
    for x in ([2.0, -1.5, 1.0], [0.3, -0.2, 0.1]):         # two trips, none
        _check_grad(gf.while_halving, (np.array(x),), (0,))


def check_two_calls():
    r = _rng(2)
    _check_grad(gf.two_calls, (r.normal(size=3), r.normal(size=3)), (0, 1))


def check_method():
    x = _rng(3).normal(size=(4, 3))
    check_close(sg.grad(gf.AFFINE.loss)(x), numerical_grad(gf.AFFINE.loss, x))


def check_list_stack():
    _check_grad(gf.list_stack, (_rng(4).normal(size=3), 3), (0,))


def check_fill_rows():
    r = _rng(5)
    _check_grad(gf.fill_rows, (r.normal(0, 0.5, (3, 3)), r.normal(size=(4, 3))), (0, 1))


def check_pendulum():
    # 0-d arrays run the code sg.source shows
    _check_grad(gf.pendulum, (np.array(0.5), np.array(0.2), 1000), (0, 1))


def check_pendulum_floats():
    dtheta, domega = sg.grad(gf.pendulum, wrt=(0, 1))(0.5, 0.2, 1000)
    check_close(dtheta, numerical_grad(lambda t: gf.pendulum(float(t), 0.2, 1000), np.array(0.5)))
    check_close(domega, numerical_grad(lambda w: gf.pendulum(0.5, float(w), 1000), np.array(0.2)))


def check_second_order():
    first = sg.grad(gf.scalar_loop)
    second = sg.grad(first)
    for x in (np.array(0.7), 0.7, np.array(-1.3)):
        check_close(first(x), numerical_grad(gf.scalar_loop, np.asarray(x)))
        check_close(second(x), numerical_grad(first, np.asarray(x)))
    h = 1e-4        # and the second difference of the plain function
    x = 0.7
    d2 = (gf.scalar_loop(x + h) - 2 * gf.scalar_loop(x) + gf.scalar_loop(x - h)) / h ** 2
    check_close(second(x), d2, rtol=1e-5, atol=1e-5)


def _cubic_data():
    r = _rng(6)
    return r.normal(size=3), r.normal(size=(3, 3)), r.normal(size=3)


def check_forward_jvp():
    x, A, v = _cubic_data()
    out, dout = sg.jvp(gf.cubic_form, (x, A), (v, None))
    check_close(out, gf.cubic_form(x, A), rtol=1e-12)
    check_close(dout, numerical_grad(lambda a: gf.cubic_form(a, A), x) @ v)


def check_hvp():
    x, A, v = _cubic_data()
    grad = sg.grad(gf.cubic_form)
    check_close(grad(x, A), numerical_grad(lambda a: gf.cubic_form(a, A), x))
    check_close(sg.hvp(gf.cubic_form)(x, A, v), numerical_jacobian(lambda a: grad(a, A), x) @ v)


def check_checkpointed():
    r = _rng(7)
    for n, s in ((0, 2), (1, 1), (9, 3), (20, None)):
        _check_grad(gf.checkpointed_euler, (r.normal(size=3), r.normal(size=3), n, s), (0, 1))


CASES = {
    # straight line: a tanh layer and a mean
    "mlp_layer": (lambda: sg.source(gf.mlp_layer, wrt=(0, 1)), check_mlp_layer),
    # if/else on a data-dependent test
    "branch": (lambda: sg.source(gf.branch), check_branch),
    # for loop: an RNN recurrence (stack of overwritten values)
    "rnn": (lambda: sg.source(gf.rnn, wrt=(0, 1, 2)), check_rnn),
    # while loop: trip count
    "while_loop": (lambda: sg.source(gf.while_halving), check_while_loop),
    # a user function called twice (its VJP called by name)
    "two_calls": (lambda: sg.source(gf.two_calls, wrt=(0, 1)), check_two_calls),
    # a bound method reading self.W, self.b
    "method": (lambda: sg.source(gf.AFFINE.loss), check_method),
    # list append in a loop + np.stack
    "list_stack": (lambda: sg.source(gf.list_stack), check_list_stack),
    # H[t] = h into np.zeros (in-place setitem and its adjoint)
    "fill_rows": (lambda: sg.source(gf.fill_rows, wrt=(0, 1)), check_fill_rows),
    # scalar loop with math.sin, as sg.source shows it (array arguments)
    "pendulum": (lambda: sg.source(gf.pendulum, wrt=(0, 1)), check_pendulum),
    # ... and the scalar code sg.grad runs for Python floats
    "pendulum_floats": (lambda: _source_run_by_grad(gf.pendulum, (0.5, 0.2, 1000), (0, 1)),
                        check_pendulum_floats),
    # second order: the gradient code of the gradient code of a loop
    "second_order": (lambda: sg.source(sg.grad(gf.scalar_loop)), check_second_order),
    # forward mode: the JVP code
    "forward_jvp": (lambda: sg.source(gf.cubic_form, mode="forward"), check_forward_jvp),
    # forward over reverse: the JVP of the gradient code, as sg.hvp runs it
    "hvp": (lambda: sg.source(sg.grad(gf.cubic_form), mode="forward"), check_hvp),
    # sg.checkpointed: a loop reversed by Revolve's schedule of snapshots and re-runs
    "checkpointed": (lambda: sg.source(gf.checkpointed_euler), check_checkpointed),
}


def _golden_path(name):
    return os.path.join(GOLDEN_DIR, name + ".py.txt")


@pytest.mark.parametrize("name", list(CASES))
def test_generated_code_matches_golden_file(name):
    make_source, _ = CASES[name]
    actual = _normalise(make_source())
    path = _golden_path(name)
    if UPDATE:
        os.makedirs(GOLDEN_DIR, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(actual)
        return
    if not os.path.exists(path):
        pytest.fail("no golden file %s; %s" % (os.path.relpath(path), HINT), pytrace=False)
    with open(path, encoding="utf-8") as fh:
        expected = fh.read()
    if actual != expected:
        rel = os.path.join("tests", "golden", os.path.basename(path))
        diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                            fromfile=rel, tofile="generated (%s)" % name))
        pytest.fail("generated code of %r differs from its golden file:\n%s\n%s" % (name, diff, HINT),
                    pytrace=False)


@pytest.mark.parametrize("name", list(CASES))
def test_golden_code_computes_the_right_derivative(name):
    _, check = CASES[name]
    check()


def test_every_golden_file_has_a_case():
    """A golden file left behind by a renamed case would never be read."""
    if UPDATE or not os.path.isdir(GOLDEN_DIR):
        return
    stale = sorted(f for f in os.listdir(GOLDEN_DIR) if f.endswith(".py.txt") and f[:-7] not in CASES)
    assert not stale, "golden files without a case: %s" % stale
