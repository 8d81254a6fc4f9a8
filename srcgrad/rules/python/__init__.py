"""Rules for Python's own values: lists, tuples and dicts in differentiated
code and element assignment (containers.py), and the builtins sum and
sorted (builtins.py). Each module holds the run-time functions generated
code calls (the compiler lowers `xs.append(v)` to `list_append(xs, v)`)
beside their rules. Importing the package registers the rules.
"""
from . import builtins, containers  # noqa: F401
