"""Workload 7 (issue 10): the tape's overhead per decorated call.

A tiny `@sg.function` (`x * y` on length-3 vectors) is called K = 100
times inside one `sg.GradientTape` on a watched Variable; its cost per call
beyond the plain Python function is

    overhead = (time(tape with K calls) - time(empty tape)) / K - time(plain call)

which is what the tape adds per call: argument binding, the cache lookup,
running the compiled forward, recording the entry, wrapping the result in
a Tensor. The backward of one entry (`tape.gradient` of one call, minus the
same tape without the gradient) is reported for information. Before timing,
`tape.gradient` is checked against the derivative by hand (d sum(x*y)/dx = y).

Goal (issue 10): <= 15 us of tape overhead per decorated call.
"""
import numpy as np

NAME = "overhead"
TITLE = "tape overhead per call of a tiny @sg.function"

K = 100


def tiny(x, y):
    return x * y


def run(bench):
    import srcgrad as sg

    k = 10 if bench.settings.small else K
    bench.params = {"function": "x * y", "size": 3, "calls_per_tape": k}
    bench.tolerance(1e-12, 1e-15)
    bench.show_ratios = False   # overheads, not derivatives: no ratio to the reference
    x, y = np.array([0.5, -1.0, 2.0]), np.array([1.5, 2.0, -0.5])
    compiled = sg.function(tiny)
    v = sg.Variable(x)

    bench.reference("hand-written gradient (y)", lambda: y.copy())

    def one_gradient():
        with sg.GradientTape() as tape:
            out = compiled(v, y)
        return tape.gradient(out, v)
    bench.path("tape: 1 call + gradient", one_gradient)

    def one_call():
        with sg.GradientTape():
            compiled(v, y)
    bench.path("tape: 1 call, no gradient", one_call, check=False)

    def k_calls():
        with sg.GradientTape():
            for _ in range(k):
                compiled(v, y)
    bench.path("tape: %d calls" % k, k_calls, check=False)

    def empty():
        with sg.GradientTape():
            pass
    bench.path("empty tape", empty, check=False)

    def k_plain():
        for _ in range(k):
            tiny(x, y)
    bench.path("%d plain calls (undecorated)" % k, k_plain, check=False)

    def k_untaped():
        for _ in range(k):
            compiled(x, y)
    bench.path("%d decorated calls, no tape" % k, k_untaped, check=False)

    def per_call(name):
        return lambda: bench.median(name) / k

    def overhead():
        t_k, t_empty, t_plain = (bench.median("tape: %d calls" % k), bench.median("empty tape"),
                                 bench.median("%d plain calls (undecorated)" % k))
        if None in (t_k, t_empty, t_plain):
            return None
        return (t_k - t_empty - t_plain) / k
    bench.derived("overhead per decorated call in a tape", overhead,
                  notes="(tape of K calls - empty tape - K plain calls) / K")
    bench.derived("overhead per decorated call, no tape",
                  lambda: (bench.median("%d decorated calls, no tape" % k)
                           - bench.median("%d plain calls (undecorated)" % k)) / k,
                  notes="outside any tape the decorated function should run the user's code")
    bench.derived("backward of one entry",
                  lambda: bench.median("tape: 1 call + gradient")
                  - bench.median("tape: 1 call, no gradient"),
                  notes="tape.gradient of one call")
    bench.derived("plain call", per_call("%d plain calls (undecorated)" % k), kind="info")
    bench.target("tape overhead per decorated call, us",
                 lambda: 1e6 * bench.median("overhead per decorated call in a tape"), "<=", 15,
                 "issue 10")
