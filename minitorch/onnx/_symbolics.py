"""How each traced op becomes ONNX nodes: ``TRANSLATIONS[op class name](g, step)`` (see _translation.py), from
the three tables of _elementwise.py, _layers.py and _tensor_ops.py."""

from __future__ import annotations

from . import _elementwise, _layers, _tensor_ops

TRANSLATIONS: dict = {**_elementwise.TRANSLATIONS, **_layers.TRANSLATIONS, **_tensor_ops.TRANSLATIONS}
