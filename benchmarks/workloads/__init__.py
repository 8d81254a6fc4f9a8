"""One module per workload; each defines NAME, TITLE and run(bench).

The list and order are in benchmarks/run.py (WORKLOADS).
"""
