"""sg.jit(f, cache=True) and @sg.function(jit=True, cache=True): the machine
code Numba compiles is kept on disk (srcgrad/jit/diskcache.py), keyed by
the lowered source: a new process loads it instead of compiling (Numba's
cache hits), with the same values; a changed constant is another file,
never the old code; a directory that cannot be written compiles without
the cache, with a PerformanceWarning."""
import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

pytest.importorskip("numba")

import srcgrad as sg  # noqa: E402
from srcgrad.jit import diskcache  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PROGRAM = textwrap.dedent('''
    import json, sys, warnings
    import numpy as np
    import srcgrad as sg

    C = {c!r}

    def damped(theta, c, n):
        omega = 0.0
        for i in range(n):
            omega = omega - 0.01 * (C * np.sin(theta) + c * omega)
            theta = theta + 0.01 * omega
        return theta

    def chain(x, w):
        for i in range(3):
            x = x + C * np.sin(x * w)
        return np.sum(x * x)

    warnings.simplefilter("error")      # (a fallback to CPython would warn: it must not)
    jitted = sg.jit(sg.grad(damped, wrt=(0, 1)), cache=True)
    got = [float(g) for g in jitted(0.3, 0.2, 40)]
    want = [float(g) for g in sg.grad(damped, wrt=(0, 1))(0.3, 0.2, 40)]
    hits = sum(sum(d.stats.cache_hits.values()) for d in [jitted._entries[k].call for k in jitted._entries])

    chain_jit = sg.function(jit=True, cache=True)(chain)
    x, w = sg.Variable(np.array([0.1, 0.5, -0.3])), np.array([1.0, 2.0, 0.5])
    with sg.GradientTape() as tape:
        y = chain_jit(x, w)
    tape_got = tape.gradient(y, x).numpy().tolist()
    tape_want = sg.grad(chain)(x.numpy(), w).tolist()
    pair = next(iter(chain_jit.jit._pairs.values()))[1]
    tape_hits = sum(sum(e.call.stats.cache_hits.values()) for e in (pair.fwd, pair.bwd))
    print(json.dumps(dict(got=got, want=want, hits=hits, tape_got=tape_got, tape_want=tape_want,
                          tape_hits=tape_hits)))
''')


def _run(tmp_path, c):
    script = tmp_path / ("prog_%s.py" % str(c).replace(".", "_"))
    script.write_text(PROGRAM.format(c=c))
    env = dict(os.environ, SRCGRAD_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_new_process_loads_the_machine_code_with_the_same_values(tmp_path):
    first = _run(tmp_path, 9.81)
    assert first["hits"] == 0 and first["tape_hits"] == 0        # compiled, and written to the cache
    files = sorted(os.listdir(tmp_path / "cache" / "jit"))
    assert any(f.endswith(".py") for f in files) and "__pycache__" in files
    second = _run(tmp_path, 9.81)
    assert second["hits"] >= 1 and second["tape_hits"] >= 2      # loaded: both sweeps of the tape call too
    for run in (first, second):
        np.testing.assert_allclose(run["got"], run["want"], rtol=1e-12)
        np.testing.assert_allclose(run["tape_got"], run["tape_want"], rtol=1e-12)
    assert second["got"] == first["got"] and second["tape_got"] == first["tape_got"]


def test_another_text_is_another_module_and_file(tmp_path, monkeypatch):
    """The cache is keyed by the text Numba compiles: a changed constant is
    another file (compiled afresh, never the old machine code); the same
    text in the same process is the same module."""
    monkeypatch.setenv(diskcache.ENV, str(tmp_path))
    a = diskcache.module_namespace("C = 9.81\ndef f(x):\n    return C * x\n")
    b = diskcache.module_namespace("C = 3.71\ndef f(x):\n    return C * x\n")
    again = diskcache.module_namespace("C = 9.81\ndef f(x):\n    return C * x\n")
    assert a["__name__"] != b["__name__"] and again is a
    assert a["f"](2.0) == 9.81 * 2.0 and b["f"](2.0) == 3.71 * 2.0
    files = sorted(f for f in os.listdir(tmp_path / "jit") if f.endswith(".py"))
    assert files == sorted([a["__name__"] + ".py", b["__name__"] + ".py"])
    before = set(sys.modules)
    with pytest.raises(ZeroDivisionError):
        diskcache.module_namespace("x = 1 / 0\n")
    assert set(sys.modules) == before       # (a module that raised is not registered)


def _cubic(x):
    return np.sum(x * x * x)


def test_a_directory_that_cannot_be_written_compiles_without_the_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "not_a_directory"
    blocker.write_text("")
    monkeypatch.setenv(diskcache.ENV, str(blocker))     # (its "jit" folder cannot be made under a file)
    jitted = sg.jit(sg.grad(_cubic), cache=True)
    x = np.array([1.0, -2.0, 0.5])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = jitted(x)
    np.testing.assert_allclose(g, 3 * x * x)
    assert any("on-disk cache" in str(w.message) for w in caught)
    assert not jitted.fallbacks         # compiled all the same


def test_cache_needs_jit():
    with pytest.raises(TypeError, match="jit=True"):
        sg.function(cache=True)(_cubic)


def test_jit_of_a_jitted_function_with_another_cache_setting():
    plain = sg.jit(_cubic)
    assert sg.jit(plain) is plain
    cached = sg.jit(plain, cache=True)
    assert cached is not plain and cached.cache and cached.target is _cubic
