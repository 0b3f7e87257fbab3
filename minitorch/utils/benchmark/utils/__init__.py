"""Timer and Measurement live here, as in ``torch.utils.benchmark.utils``."""
