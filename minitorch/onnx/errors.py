"""The errors of ``torch.onnx`` (PyTorch's ``torch.onnx.errors``): what the exporter raises."""

from __future__ import annotations


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter (a model or an input it cannot write as ONNX)."""


class UnsupportedOperatorError(OnnxExporterError):
    """An op of the traced forward has no ONNX translation (at this opset)."""

    def __init__(self, name: str, version: int, supported_version: int | None) -> None:
        if supported_version is not None:
            message = (f"Exporting the operator '{name}' to ONNX opset version {version} is not supported. Support "
                       f"for this operator was added in version {supported_version}, try exporting with this version.")
        else:
            message = (f"Exporting the operator '{name}' to ONNX opset version {version} is not supported by "
                       "minitorch.onnx (docs/onnx.md lists the ops it exports).")
        super().__init__(message)


class SymbolicValueError(OnnxExporterError):
    """A value of the traced graph cannot be expressed in ONNX (for example a tensor written in place through a
    view, or read from a traced tensor's memory outside an op)."""
