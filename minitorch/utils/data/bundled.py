"""The data set minitorch ships for its examples and notebooks: 8x8 handwritten digits.

PyTorch bundles no data (torchvision downloads it); minitorch ships this one small file inside the package
so that a notebook or script finds it from any working directory, with no download and no path edits.
Source and licence: examples/data/README.md.
"""

from __future__ import annotations

from importlib import resources

from ...serialization import load
from ...tensor import Tensor

__all__ = ["load_digits"]


def load_digits() -> tuple[Tensor, Tensor]:
    """The 1,797 digits as ``(images, labels)``: uint8 pixel counts 0..16 of shape (1797, 8, 8), int64 labels."""
    with resources.files(__package__).joinpath("digits.pt").open("rb") as f:
        data = load(f)
    return data["images"], data["labels"]
