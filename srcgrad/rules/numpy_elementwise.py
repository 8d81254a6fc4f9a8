"""Adjoint rules for NumPy: elementwise (see numpy_adjoints.py for the notation)."""
