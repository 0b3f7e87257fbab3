"""Deliberate differences from PyTorch that the oracle allows, each pointing at its row of docs/differences.md.

Nothing else is excluded: a disagreement not covered here is a failure (or, while its fix is in flight on
another branch, an entry of pending.py).
"""

DIFFERENCES = {
    "TIES": ("docs/differences.md, 'dtypes and numbers': `sort(stable=False)` leaves the order of ties "
             "unspecified (as PyTorch documents). The oracle accepts index outputs of sort/argsort/topk/max/min/"
             "argmax/cummax that differ from PyTorch's only among equal values (program.tie_checker)."),
    "RANDOM": ("docs/differences.md, 'dtypes and numbers': CPU random numbers are PyTorch's (compared bit for bit "
               "by tests/oracle/test_random.py), CUDA's are not. The fuzzer draws all data with numpy and passes "
               "the same numbers to both (no random ops), so it never depends on a generator."),
    "UNIMPLEMENTED": ("docs/differences.md, 'dtypes and numbers': derivatives PyTorch does not implement "
                      "exist in minitorch. When PyTorch's backward raises 'derivative for ... is not "
                      "implemented', the oracle stops the gradient phase (counted as unimplemented_in_pytorch)."),
    "NON_FINITE": ("docs/differences.md, 'dtypes and numbers': gradients through infinities. A gradient that differs "
                   "only where one side is NaN or infinite, in a program with a non-finite forward value, is "
                   "counted (pending.KNOWN_OUTCOMES, its DELIBERATE entry), not failed."),
}
