"""Binomial checkpointing of a loop: the Revolve schedule.

`for t in sg.checkpointed(range(n), snapshots=s):` in differentiated code
is reversed without recording all n steps (transforms/checkpointed.py
writes the code): the state of the loop (the variables its body carries
from one step to the next) is kept at no more than `s` steps at once, and
the steps in between are run again, unrecorded, when the reverse sweep
needs them. Which steps to keep and re-run is the schedule of Griewank &
Walther, "Algorithm 799: Revolve: an implementation of checkpointing for
the reverse or adjoint mode of computational differentiation", ACM TOMS
26(1), 2000: it reverses n steps with s snapshots in the least number of
re-run steps, p(n, s) = r*n - beta(s + 1, r - 1), where beta(s, r) =
C(s + r, s) and r, the repetition number, is the least with beta(s, r) >= n
(their Proposition 1; Griewank & Walther, "Evaluating Derivatives", 2nd ed.,
2008, sec. 12.3).

A schedule is a sequence of actions `(action, step, end, slot)` on the
loop state, the step index being that of the loop's iteration (0 for the
first):

    ("advance", i, j, None)   run steps i, ..., j-1 unrecorded (state i -> j)
    ("takeshot", i, i, k)     keep the state at step i in snapshot slot k
    ("restore", i, i, k)      the state at step i back from slot k
    ("firstturn", i, i+1, None)  step i (the last) run recorded, then reversed
    ("youturn", i, i+1, None)    step i run recorded and reversed

Generated code runs the actions up to the first turn in its forward sweep
(`revolve_forward`; the first turn's recording included) and the rest in
its reverse sweep (`revolve_reverse`; the first turn's reversal first).
Both are lazy: a schedule of n steps costs O(s) memory, not O(n).

Like core.py, nothing here imports the compiler; the schedules are
non-differentiable (their values are step numbers), so generated code that
calls them can be differentiated again.
"""
import math
import operator

from .core import nondiff_helper

ADVANCE, TAKESHOT, RESTORE, FIRSTURN, YOUTURN = "advance", "takeshot", "restore", "firstturn", "youturn"


def checkpointed(iterable, snapshots=None):
    """Mark a `for` loop for binomial checkpointing (Revolve).

    In code srcgrad differentiates (sg.grad, sg.value_and_grad, a tape over
    an @sg.function, and their higher orders),

        for t in sg.checkpointed(range(n), snapshots=s):
            x = step(x)

    is reversed by keeping the loop's state (the variables the body carries
    from one step to the next: `x`) at no more than `s` steps at once
    instead of recording all n steps, and by running the steps in between
    again, unrecorded, when the reverse sweep needs them: the least number
    of re-runs for `s` snapshots (Griewank & Walther, ACM TOMS 26(1), 2000;
    see srcgrad/runtime/revolve.py). Memory: `s` loop states and one step's
    record, instead of n steps' records. Time: each step runs about r + 1
    times instead of once, r the least integer with C(s + r, s) >= n.

    The loop body must be **pure**: it runs again in the reverse sweep, so
    random draws, prints, appends or attribute writes in it would happen
    again. (Without sg.checkpointed, user code runs once per derivative.)

    Args:
      iterable: what the loop iterates over (`range(...)`, or a sequence:
        anything a compiled `for` loop accepts).
      snapshots: the number of loop states kept at once, an int >= 1, or
        None: the fewest for which the gradient costs about twice the plain
        one, r <= 2 re-runs of each step (about sqrt(2n) snapshots).

    Returns:
      `iterable` itself: outside differentiated code (and in code that is
      run but not differentiated) the loop is an ordinary loop.

    Raises:
      ValueError: `snapshots` is not None nor a positive integer.
    """
    _check_snapshots(snapshots)
    return iterable


def _check_snapshots(snapshots):
    if snapshots is None:
        return
    try:
        count = operator.index(snapshots)
    except TypeError:
        count = None
    if count is None or isinstance(snapshots, bool):
        raise ValueError("sg.checkpointed(..., snapshots=%r): the number of snapshots is an integer >= 1 or None"
                         % (snapshots,))
    if count < 1:
        raise ValueError("sg.checkpointed(..., snapshots=%r): at least one snapshot (the loop's initial state) "
                         "is needed" % (snapshots,))


# ------------------------------------------------------------ the numbers

def beta(s, r):
    """beta(s, r) = C(s + r, s): the most steps that s snapshots reverse
    with each step run at most r + 1 times (0 for r < 0)."""
    return math.comb(s + r, s) if r >= 0 else 0


def repetitions(n, s):
    """The repetition number r of n >= 1 steps with s >= 1 snapshots: the
    least r with beta(s, r) >= n (Griewank & Walther 2000, eq. (2))."""
    r, b = 0, 1
    while b < n:
        r += 1
        b = b * (s + r) // r
    return r


def optimal_advances(n, s):
    """The least number of unrecorded step evaluations with which s >= 1
    snapshots reverse n >= 0 steps (each step is also run once recorded):
    r*n - beta(s + 1, r - 1) (Griewank & Walther 2000, Proposition 1).
    Counts the first forward sweep too: n - 1 when s >= n - 1."""
    if n <= 0:
        return 0
    s = snapshots_used(n, s)
    r = repetitions(n, s)
    return r * n - beta(s + 1, r - 1)


def auto_snapshots(n):
    """The snapshots `snapshots=None` means for n steps: the fewest with
    repetition number r <= 2 (each step runs at most three times: the
    gradient costs about twice the plain one), about sqrt(2n)."""
    s = max(1, math.isqrt(2 * max(n, 1)) - 2)
    while beta(s, 2) < n:
        s += 1
    return s


def snapshots_used(n, snapshots):
    """The slots a schedule for n steps uses: `snapshots` (auto_snapshots(n)
    for None), at most n (more would never be read)."""
    _check_snapshots(snapshots)
    s = auto_snapshots(n) if snapshots is None else operator.index(snapshots)
    return max(1, min(s, n))


def _split(n, s):
    """Where to take the next snapshot in a stretch of n >= 2 steps with s >= 2
    snapshots (the one at its start included): the steps m to advance,
    such that m + p(m, s) + p(n - m, s - 1) = p(n, s). With r the
    repetition number of (n, s), any m with beta(s, r-2) <= m <= beta(s, r-1)
    and beta(s-1, r-1) <= n - m <= beta(s-1, r) will do (Pascal's rule on
    p's formula); the largest is taken."""
    r = repetitions(n, s)
    return min(beta(s, r - 1), n - beta(s - 1, r - 1), n - 1)


# ----------------------------------------------------------- the schedule

def schedule(n, snapshots=None):
    """The Revolve actions reversing n steps with `snapshots` slots, in
    order (a generator; see the module docstring for the actions). The
    advances add up to optimal_advances(n, s); the slots in use never
    exceed s = snapshots_used(n, snapshots). Raises ValueError for a bad
    `snapshots`."""
    n = max(int(n), 0)
    if n == 0:
        return
    total = snapshots_used(n, snapshots)
    turn = FIRSTURN
    if n > 1:
        yield (TAKESHOT, 0, 0, 0)
    todo = [(0, n, total, False)]       # stretches to reverse: (start, end, snapshots, restore first)
    while todo:
        i, j, s, restore = todo.pop()
        if restore:
            yield (RESTORE, i, i, total - s)
        while True:
            if j - i == 1:
                yield (turn, i, j, None)
                turn = YOUTURN
                break
            if s == 1:          # no free slot: advance from i to the last step, reverse it, restore i
                yield (ADVANCE, i, j - 1, None)
                yield (turn, j - 1, j, None)
                turn = YOUTURN
                todo.append((i, j - 1, 1, True))
                break
            m = i + _split(j - i, s)
            yield (ADVANCE, i, m, None)
            todo.append((i, m, s, True))
            i, s = m, s - 1
            if j - i > 1:
                yield (TAKESHOT, i, i, total - s)


class Schedule:
    """Part of a schedule: the actions before and including the first
    turn (`part="forward"`) or from the first turn on (`"reverse"`),
    computed as they are read. Iterable; also a sequence (len, indexing in
    order), for generated code that is compiled again and loops by index."""

    def __init__(self, n, snapshots, part):
        self.n, self.snapshots, self.part = n, snapshots, part
        snapshots_used(max(n, 1), snapshots)    # (ValueError for a bad number, now)
        self._iter, self._next, self._len = None, 0, None

    def __iter__(self):
        actions = schedule(self.n, self.snapshots)
        for a in actions:
            if self.part == "forward":
                yield a
                if a[0] == FIRSTURN:
                    return
            elif a[0] == FIRSTURN:
                yield a
                yield from actions
                return

    def __len__(self):
        if self._len is None:
            self._len = sum(1 for _ in self)
        return self._len

    def __getitem__(self, k):
        if k < 0:
            k += len(self)
        if self._iter is None or k < self._next:
            self._iter, self._next = iter(self), 0
        while self._next <= k:
            try:
                action = next(self._iter)
            except StopIteration:
                raise IndexError("schedule index out of range") from None
            self._next += 1
        return action

    def __repr__(self):
        return "<Revolve %s schedule of %d steps, %d snapshots>" % (
            self.part, self.n, snapshots_used(max(self.n, 1), self.snapshots))


def _steps(iterations):
    return iterations if isinstance(iterations, int) else len(iterations)


@nondiff_helper
def revolve_forward(iterations, snapshots=None):
    """The actions of the forward sweep of a checkpointed loop over
    `iterations` (a range, a sequence, or a number of steps): advances and
    snapshots up to the first turn, whose step runs recorded."""
    return Schedule(_steps(iterations), snapshots, "forward")


@nondiff_helper
def revolve_reverse(iterations, snapshots=None):
    """The actions of the reverse sweep of a checkpointed loop: from the
    first turn (reversed; the forward sweep recorded it) on."""
    return Schedule(_steps(iterations), snapshots, "reverse")
