"""`python -m benchmarks.tangent_corpus --src DIR` (see README.md)."""
import sys

from benchmarks.tangent_corpus.run import main

sys.exit(main())
