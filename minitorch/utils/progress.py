"""``progress``: a tqdm progress bar for training loops that stays quiet where a bar would be noise.

::

    from minitorch.utils.progress import progress
    for epoch in range(epochs):
        bar = progress(loader, desc=f"epoch {epoch}")
        for x, y in bar:
            loss = train_step(x, y)
            bar.set_postfix(loss=loss)      # a 0-d tensor is shown as its value

The bar shows on a terminal (stderr is a TTY) and in Jupyter. It is off (iteration passes straight
through, ``set_postfix`` does nothing) when output goes to a file or a CI log, when
``MINITORCH_PROGRESS=0``, when ``disable=True``, or when tqdm is not installed.
``MINITORCH_PROGRESS=1`` forces it on.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from ..tensor import Tensor

ENV_VAR = "MINITORCH_PROGRESS"


def _enabled(disable: bool | None) -> bool:
    """Whether to draw a bar: ``disable`` wins, then MINITORCH_PROGRESS, then "is anyone watching"."""
    if disable is not None:
        return not disable
    setting = os.environ.get(ENV_VAR, "").strip().lower()
    if setting in ("0", "false", "no", "off"):
        return False
    if setting in ("1", "true", "yes", "on"):
        return True
    stream = sys.stderr
    interactive = stream is not None and hasattr(stream, "isatty") and stream.isatty()
    return interactive or "ipykernel" in sys.modules


def _tqdm_class():
    """tqdm's class (the notebook-aware ``tqdm.auto`` one), or None when tqdm is not installed."""
    try:
        return importlib.import_module("tqdm.auto").tqdm
    except ImportError:
        return None


def _plain(value: Any) -> Any:
    """Scalar tensors show as numbers (``0.1234``) rather than ``tensor(0.1234)``."""
    if isinstance(value, Tensor) and value.numel() == 1:
        return value.item()
    return value


class ProgressBar:
    """An iterable with tqdm's methods; a pass-through when the bar is off (``bar.enabled``)."""

    def __init__(self, iterable: Iterable | None, bar) -> None:
        self.iterable = iterable
        self._bar = bar

    @property
    def enabled(self) -> bool:
        return self._bar is not None

    def __iter__(self) -> Iterator:
        return iter(self._bar if self._bar is not None else self.iterable)

    def __len__(self) -> int:
        if self._bar is not None:
            return len(self._bar)
        return len(self.iterable)

    def set_postfix(self, ordered_dict: dict | None = None, refresh: bool = True, **kwargs: Any) -> None:
        """Show values after the bar, e.g. ``set_postfix(loss=loss, acc=acc)``."""
        if self._bar is not None:
            values = {key: _plain(value) for key, value in {**(ordered_dict or {}), **kwargs}.items()}
            self._bar.set_postfix(values, refresh=refresh)

    def set_description(self, desc: str | None = None, refresh: bool = True) -> None:
        if self._bar is not None:
            self._bar.set_description(desc, refresh=refresh)

    def update(self, n: int = 1) -> None:
        """Advance a bar made without an iterable (``progress(total=n)``) by ``n`` steps."""
        if self._bar is not None:
            self._bar.update(n)

    def write(self, text: str) -> None:
        """Print a line without breaking the bar (printed plainly when the bar is off)."""
        if self._bar is not None:
            self._bar.write(text)
        else:
            print(text)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def progress(iterable: Iterable | None = None, desc: str | None = None, total: int | None = None,
             disable: bool | None = None, leave: bool = True, unit: str = "it", **tqdm_kwargs: Any) -> ProgressBar:
    """Wrap ``iterable`` in a progress bar (see the module docstring for when it shows).

    ``disable=None`` decides automatically; ``True``/``False`` force it. Extra keyword arguments go to
    ``tqdm``.
    """
    tqdm = _tqdm_class() if _enabled(disable) else None
    if tqdm is None:
        return ProgressBar(iterable, None)
    bar = tqdm(iterable, desc=desc, total=total, leave=leave, unit=unit, dynamic_ncols=True, **tqdm_kwargs)
    return ProgressBar(iterable, bar)


__all__ = ["progress", "ProgressBar"]
