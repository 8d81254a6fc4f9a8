"""Adjoint rules for NumPy: linalg (see numpy_adjoints.py for the notation)."""
