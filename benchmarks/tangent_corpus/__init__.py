"""srcgrad on Google Tangent's test corpus (tests/functions.py, read from a
checkout at run time): reverse mode, forward mode and second order against
finite differences and autograd. See README.md."""
