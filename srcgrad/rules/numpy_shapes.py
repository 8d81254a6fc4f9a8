"""Adjoint rules for NumPy: shapes (see numpy_adjoints.py for the notation)."""
