"""``python -m minitorch.as_torch script.py [args]``: run a PyTorch program on minitorch (see __init__)."""

from . import main

main()
