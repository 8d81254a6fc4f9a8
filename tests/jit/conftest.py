"""sg.jit's tests: Numba is optional (skipped without it), and compiles
at opt level 0 here (LLVM optimisation is most of the compile time; the
values are the same). The on-disk cache of the twins' machine code goes
to a temporary directory of this run (unless SRCGRAD_CACHE_DIR is set),
so that the tests compile the twins, and write no user's cache."""
import atexit
import os
import shutil
import tempfile

os.environ.setdefault("NUMBA_OPT", "0")
if not os.environ.get("SRCGRAD_CACHE_DIR"):
    _folder = tempfile.mkdtemp(prefix="srcgrad-test-cache-")
    os.environ["SRCGRAD_CACHE_DIR"] = _folder
    atexit.register(shutil.rmtree, _folder, True)
