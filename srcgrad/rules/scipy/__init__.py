"""Rules for SciPy (optional): scipy.special (special.py), scipy.stats
(stats.py) and scipy.linalg (linalg.py). rules/__init__.py registers their
loaders with `registry.register_lazy`: a module is imported when the program
has imported the SciPy module it covers, so `import srcgrad` does not import
scipy.stats. (scipy.integrate's rules call the AD engine: srcgrad/integrate.py.)
"""
