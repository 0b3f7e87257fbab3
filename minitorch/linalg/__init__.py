"""minitorch.linalg (in progress)."""
