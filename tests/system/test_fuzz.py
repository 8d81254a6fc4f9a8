"""Issue 16's differential fuzzer: random programs checked against plain
Python and central differences (the grammar and the checks are in
tests/system/fuzz_grammar.py; read its docstring for what is compared).

The grammar is organised in categories (`fuzz_grammar.CATEGORIES`), each a
construct the issue found silently wrong, or a neighbour of one that works:
loop variables (read after the loop, sequential and nested reuse, reassigned
in the body, break/return then reuse), in-place NumPy (`out=`, copyto, put,
...), writes through views (np.split apart), duplicate indices, helpers
mutating their arguments, drawing random numbers (in a helper, in f),
printing, logging, list and tuple arguments (by element, or whole to a NumPy
function), and rebinding of globals and attributes between calls (a float,
a function).

`KNOWN_BROKEN` lists the categories that fail on today's code. The default
run (`test_fuzz`) draws only from the others, so it is green; it is
deterministic (derandomize=True, no example database) and checks
DEFAULT_EXAMPLES programs. For each category, `test_fixed_seed_programs`
runs the fixed programs of `FIXED_SEEDS` (made by the same grammar from a
seeded random.Random, independent of hypothesis): xfail(strict=True) while
the category is in KNOWN_BROKEN, so a fix shows as XPASS, and then an
ordinary regression test once the category is removed from KNOWN_BROKEN
(which also puts it in the default run).

`pytest --fuzz` (tests/conftest.py), or the environment variable
SRCGRAD_FUZZ=N, runs N examples (3000 for --fuzz) of larger programs from
EVERY category (known-broken ones included: expect their failures), with
derandomize=False; SRCGRAD_FUZZ_CATEGORIES=a,b restricts the categories.
Refusals (sg.UnsupportedSyntaxError, accepted for the mutation categories
only) are recorded as hypothesis events (`--hypothesis-show-statistics`).
"""
import collections
import os

import pytest
from hypothesis import HealthCheck, assume, event, given, settings

import fuzz_grammar as fg
from system_support import short_traceback

# Categories that fail on today's code (found by running every category;
# the fixed seeds below exhibit each). Remove a category once it is fixed.
KNOWN_BROKEN = set()
# categories whose programs run op by op on the tape (a helper appending to its argument list): right
# (their fixed seeds are regression tests), but slow under hypothesis: drawn only with --fuzz
OP_BY_OP = {"helper_mutates_args"}

# category -> (seeds of fuzz_grammar.program_from_seed whose programs fail today, the exception, why)
E = AssertionError
FIXED_SEEDS = {
    "loop_sequential_reuse": ((0, 1, 3), E, "loop-vars: a loop variable read after its loop, then the name reused "
                                            "by a second loop (no break): wrong gradient"),
    "loop_nested": ((0, 1, 5), E, "loop-vars: an inner loop reusing the outer loop's name, or its own variable "
                                  "read after it inside the outer loop: wrong gradient"),
    "loop_reassigned": ((0, 1, 2), E, "loop-vars: a loop variable reassigned in the body: wrong gradient"),
    "break_then_reuse": ((3, 5, 9), E, "loop-vars: a break or early return in a first loop, the name reused by "
                                       "a second loop: wrong gradient"),
    "inplace_out": ((0, 2, 3), E, "mutation: out=, positional out, np.copyto/put/putmask/place, np.add.at are "
                                  "not seen: wrong gradient"),
    "split_view": ((0, 1, 2), E, "mutation: a write into a piece returned by np.split (a view) is not seen "
                                 "(the other views are refused, which is accepted)"),
    "duplicate_index": ((0, 1, 2), E, "mutation: element assignment with repeated indices: the adjoint does "
                                      "not follow NumPy's last-write-wins"),
    "helper_mutates_args": ((0, 1, 2), E, "mutation: a helper's append to a list argument / write into an "
                                          "array argument is not seen by the caller's adjoint"),
    "helper_random": ((0, 1, 2), E, "runs-once: a helper drawing random numbers is re-run in the reverse "
                                    "sweep (generator state, wrong gradient)"),
    "inline_random": ((9, 11, 12), E, "runs-once: sg.hessian runs f more than once (the generator advances "
                                      "further than in one plain call)"),
    "helper_print": ((0, 1, 2), E, "runs-once: a printing helper prints again in the reverse sweep"),
    "helper_log": ((0, 1, 2), E, "runs-once: a helper appending to a module-level log appends again in the "
                                 "reverse sweep"),
    "list_whole": ((0, 1, 2), E, "io: a list/tuple argument passed whole to a NumPy function gets gradient 0"),
    "rebind_function": ((0, 1, 2), E, "stale: a function-valued attribute/global/dict entry/method rebound "
                                      "after compiling: the old function is differentiated"),
}

DEFAULT_EXAMPLES = 60          # (the suite's time budget; --fuzz runs thousands)
FUZZ = int(os.environ.get("SRCGRAD_FUZZ") or 0)
if FUZZ:
    _only = os.environ.get("SRCGRAD_FUZZ_CATEGORIES")
    CHOSEN = sorted(_only.split(",") if _only else fg.CATEGORIES)
    SHAPE = fg.LARGE
else:
    CHOSEN = sorted(c for c in fg.CATEGORIES if c not in KNOWN_BROKEN and c not in OP_BY_OP)
    SHAPE = fg.SMALL

REFUSED = collections.Counter()


@settings(max_examples=FUZZ or DEFAULT_EXAMPLES, derandomize=not FUZZ, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(prog=fg.programs(CHOSEN, SHAPE))
def test_fuzz(tmp_path, prog):
    try:
        outcome = fg.check_program(prog, tmp_path)
    except fg.Unstable:
        assume(False)
        return
    event(prog.category)
    if outcome == "refused":
        REFUSED[prog.category] += 1
        event("refused by srcgrad (%s)" % prog.category)


def test_categories_are_consistent():
    assert KNOWN_BROKEN <= set(fg.CATEGORIES), KNOWN_BROKEN - set(fg.CATEGORIES)
    assert set(FIXED_SEEDS) <= set(fg.CATEGORIES)
    assert KNOWN_BROKEN <= set(FIXED_SEEDS), "each known-broken category needs fixed seeds that exhibit it"
    assert "baseline" not in KNOWN_BROKEN


def _fixed_params():
    out = []
    for category in sorted(FIXED_SEEDS):
        seeds, exc, why = FIXED_SEEDS[category]
        marks = [pytest.mark.xfail(strict=True, raises=exc, reason=why)] if category in KNOWN_BROKEN else []
        out.append(pytest.param(category, marks=marks, id=category))
    return out


@pytest.mark.parametrize("category", _fixed_params())
@short_traceback
def test_fixed_seed_programs(tmp_path, category):
    seeds, _, _ = FIXED_SEEDS[category]
    for seed in seeds:
        prog = fg.program_from_seed(category, seed)
        try:
            fg.check_program(prog, tmp_path)
        except fg.Unstable:
            pytest.fail("seed %d of %s gives an ill-conditioned program: choose another seed" % (seed, category))
