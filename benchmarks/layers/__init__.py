"""Layer code from public NumPy-from-scratch repositories, through srcgrad (see README.md)."""
