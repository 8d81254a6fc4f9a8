"""sg.jit's tests: Numba is optional (skipped without it), and compiles
at opt level 0 here (LLVM optimisation is most of the compile time; the
values are the same)."""
import os

os.environ.setdefault("NUMBA_OPT", "0")
