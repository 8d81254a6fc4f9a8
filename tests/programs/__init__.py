"""Issue 11's acceptance programs: complete programs of the kinds scientists
write, one per module, in plain NumPy/SciPy (tests/test_programs.py checks
them).

Every module reaches NumPy, SciPy and srcgrad through module globals (`np`,
`logsumexp`, `norm`, `odeint`, `sg`, `math`), so the autograd oracle can
rebind them to their autograd twins, and exports:

* `CHECKS`: rows `(name, function, make_args, wrt)`; `function(*make_args())`
  is a scalar, differentiated with respect to the positional arguments in
  `wrt` (arrays, Python floats, or lists/tuples/dicts of them);
* `main()`: the whole program (an optimisation, a training loop, a sampler
  or a simulation) driven by `sg.grad`, returning arrays to compare.
"""
