"""minitorch.utils."""
