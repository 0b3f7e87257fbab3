"""minitorch benchmarks: `python -m benchmarks` prints a table (see run.py)."""
