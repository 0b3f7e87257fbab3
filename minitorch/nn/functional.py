"""minitorch.nn.functional (in progress)."""
