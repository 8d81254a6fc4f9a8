"""The compiler's passes, in data-flow order: parse, check, resolve, anf,
activity, reverse (with inline), codegen. See srcgrad/function.py for the
pass list."""
