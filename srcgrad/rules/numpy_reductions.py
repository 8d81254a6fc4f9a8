"""Adjoint rules for NumPy: reductions (see numpy_adjoints.py for the notation)."""
