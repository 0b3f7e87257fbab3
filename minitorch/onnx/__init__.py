"""``torch.onnx``: export a model as an ONNX graph (``torch.onnx.export``), for onnxruntime and other runtimes.

The exporter traces one forward call op by op and needs the ``onnx`` package, an optional extra
(``pip install 'minitorch[onnx]'``); importing this module does not. docs/onnx.md lists the ops it exports.
"""

from . import errors
from ._export import ONNXProgram, TrainingMode, export, is_in_onnx_export
from .errors import OnnxExporterError

__all__ = ["ONNXProgram", "OnnxExporterError", "TrainingMode", "errors", "export", "is_in_onnx_export"]
