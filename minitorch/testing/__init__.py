"""minitorch.testing (in progress)."""
