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
    "OVERLAPPING_WRITE": ("docs/differences.md, 'Views and in-place ops': an in-place op on a tensor whose elements "
                          "share memory without being expanded (overlapping as_strided or unfold windows) is allowed "
                          "in both, but PyTorch writes element after element (its result depends on its loop order, "
                          "which its docs call undefined) and minitorch computes every element from the values "
                          "before the write. The oracle accepts that step's values and checks what follows op by op "
                          "(program.overlapping_target, counted as overlapping_write)."),
    "GELU_OF_INF": ("docs/differences.md, 'dtypes and numbers': PyTorch's vectorized float32 kernel of the exact "
                    "`gelu` gives NaN at +inf (its one-element path and its float64 kernel give inf); minitorch "
                    "gives inf. The oracle accepts a float32 `F.gelu` value that differs only there "
                    "(program.gelu_of_inf, counted as gelu_of_inf) and checks what follows op by op."),
}
