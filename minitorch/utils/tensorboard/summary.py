"""Summary protobufs for ``SummaryWriter`` (PyTorch's ``torch/utils/tensorboard/summary.py``): scalars,
histograms, text, images (PNG, encoded here with zlib) and the hyperparameter plugin's three summaries.

Values arrive as minitorch tensors, numpy arrays or Python numbers; ``make_np`` turns each into a CPU
array of the backend's array module, the one place a value leaves minitorch.
"""

from __future__ import annotations

import math
import struct
import zlib

from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.hparams import metadata as hparams_metadata
from tensorboard.plugins.hparams.api_pb2 import DataType, Experiment, HParamInfo, MetricInfo, MetricName, Status
from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData, SessionEndInfo, SessionStartInfo
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from ... import _dtype
from ..._backends import backend_for
from ..._device import CPU
from ...tensor import Tensor

_xp = backend_for(CPU).xp  # the CPU array module (numpy)


def make_np(x):
    """A CPU array of ``x``: a Tensor (detached, copied to the CPU; bfloat16 as float32), an array, a number."""
    if isinstance(x, Tensor):
        x = x.detach().cpu()
        if x.dtype is _dtype.bfloat16:
            x = x.float()
        return _xp.asarray(x.numpy())
    if isinstance(x, (int, float, bool)) and not isinstance(x, complex):
        return _xp.array([x])
    if hasattr(x, "__array__") or isinstance(x, (list, tuple)):
        return _xp.asarray(x)
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def scalar(name: str, value, new_style: bool = False, double_precision: bool = False) -> Summary:
    """One number: ``simple_value``, or (``new_style``) a float/double TensorProto for the scalars plugin."""
    array = make_np(value).squeeze()
    if array.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given size: {array.size} "
                             f"and {array.ndim} dimensions.")
    number = float(array)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=number)])
    proto = (TensorProto(double_val=[number], dtype="DT_DOUBLE") if double_precision
             else TensorProto(float_val=[number], dtype="DT_FLOAT"))
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=metadata)])


def default_bins() -> list:
    """TensorFlow's bucket edges: +-1e-12 growing by 10% up to 1e20, and 0."""
    edges, v = [], 1e-12
    while v < 1e20:
        edges.append(v)
        v *= 1.1
    return [-v for v in reversed(edges)] + [0] + edges


def histogram(name: str, values, bins, max_bins: int | None = None) -> Summary:
    return Summary(value=[Summary.Value(tag=name, histo=make_histogram(make_np(values).astype(float), bins, max_bins))])


def histogram_raw(name: str, min, max, num, sum, sum_squares, bucket_limits, bucket_counts) -> Summary:
    """A histogram from precomputed statistics (lists, arrays or tensors of edges and counts)."""
    limits, counts = (make_np(v).reshape(-1).tolist() for v in (bucket_limits, bucket_counts))
    proto = HistogramProto(min=float(min), max=float(max), num=float(num), sum=float(sum),
                           sum_squares=float(sum_squares), bucket_limit=limits, bucket=counts)
    return Summary(value=[Summary.Value(tag=name, histo=proto)])


def make_histogram(values, bins, max_bins: int | None = None) -> HistogramProto:
    """PyTorch's histogram: numpy's bins, subsampled to ``max_bins``, trimmed to the occupied range (with one
    empty bin on the left, since TensorBoard stores only right edges)."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = _xp.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        step = len(counts) // max_bins
        if len(counts) % step:
            counts = _xp.pad(counts, [[0, step - len(counts) % step]], mode="constant", constant_values=0)
        counts = counts.reshape(-1, step).sum(axis=-1)
        limits = _xp.concatenate([limits[:-1:step], limits[-1:]])
    cumulative = _xp.cumsum(_xp.greater(counts, 0))
    start, end = _xp.searchsorted(cumulative, [0, cumulative[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1:end] if start > 0 else _xp.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                          sum_squares=values.dot(values), bucket_limit=limits.tolist(), bucket=counts.tolist())


def text(tag: str, text_string: str) -> Summary:
    """A string for the text plugin, under ``<tag>/text_summary`` as PyTorch writes it."""
    plugin = SummaryMetadata.PluginData(plugin_name="text", content=TextPluginData(version=0).SerializeToString())
    proto = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf_8")],
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=SummaryMetadata(plugin_data=plugin),
                                        tensor=proto)])


def image(tag: str, tensor, dataformats: str = "NCHW") -> Summary:
    """An image: floats are taken as [0, 1] and scaled to 0..255, uint8 as is; 4-D input becomes a grid."""
    array = convert_to_hwc(make_np(tensor), dataformats)
    scale = 1 if array.dtype == _xp.uint8 else 255
    array = (array.astype(_xp.float32) * scale).clip(0, 255).astype(_xp.uint8)
    height, width, channels = array.shape
    return Summary(value=[Summary.Value(tag=tag, image=Summary.Image(
        height=height, width=width, colorspace=channels, encoded_image_string=png(array)))])


def convert_to_hwc(array, input_format: str):
    """PyTorch's ``convert_to_HWC``: reorder to height, width, 3 channels (gray repeated; N images tiled)."""
    if len(set(input_format)) != len(input_format):
        raise AssertionError(f"You can not use the same dimension shordhand twice. input_format: {input_format}")
    if array.ndim != len(input_format):
        raise AssertionError(f"size of input tensor and input format are different. tensor shape: {array.shape}, "
                             f"input_format: {input_format}")
    input_format = input_format.upper()
    if len(input_format) == 4:
        return make_grid(array.transpose([input_format.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(input_format) == 3:
        hwc = array.transpose([input_format.find(c) for c in "HWC"])
        return _xp.concatenate([hwc, hwc, hwc], 2) if hwc.shape[2] == 1 else hwc
    if len(input_format) == 2:
        hw = array.transpose([input_format.find(c) for c in "HW"])
        return _xp.stack([hw, hw, hw], 2)
    raise AssertionError(f"input_format must have 2, 3 or 4 letters, got {input_format!r}")


def make_grid(images, ncols: int = 8):
    """N x C x H x W images (C = 1 or 3) tiled into one 3 x H' x W' canvas, ``ncols`` per row."""
    if images.shape[1] == 1:
        images = _xp.concatenate([images, images, images], 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("make_grid: expected N x 3 x H x W images")
    n, _, height, width = images.shape
    ncols = min(n, ncols)
    nrows = math.ceil(n / ncols)
    canvas = _xp.zeros((3, height * nrows, width * ncols), dtype=images.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * height:(y + 1) * height, x * width:(x + 1) * width] = images[i]
    return canvas


def png(array) -> bytes:
    """A PNG of an H x W x C uint8 array (C = 1 gray, 3 RGB, 4 RGBA): filter 0 rows, one zlib stream."""
    height, width, channels = array.shape
    color = {1: 0, 3: 2, 4: 6}.get(channels)
    if color is None:
        raise ValueError(f"add_image: an image has 1, 3 or 4 channels, got {channels}")
    rows = _xp.ascontiguousarray(array).reshape(height, width * channels)
    raw = b"".join(b"\x00" + row.tobytes() for row in rows)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, color, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def _hparams_summary(tag: str, content: HParamsPluginData) -> Summary:
    plugin = SummaryMetadata.PluginData(plugin_name=hparams_metadata.PLUGIN_NAME, content=content.SerializeToString())
    return Summary(value=[Summary.Value(tag=tag, metadata=SummaryMetadata(plugin_data=plugin))])


def hparams(hparam_dict: dict, metric_dict: dict, hparam_domain_discrete: dict | None = None):
    """The hparams plugin's experiment, session-start and session-end summaries (PyTorch's ``hparams``)."""
    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    hparam_domain_discrete = hparam_domain_discrete or {}
    if not isinstance(hparam_domain_discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in hparam_domain_discrete.items():
        if k not in hparam_dict or not isinstance(v, list) or not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                            f"hparam_dict[{k}].")
    infos, start = [], SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, Tensor):
            v = float(make_np(v).reshape(-1)[0])
        # PyTorch tests int/float before bool, so True logs as the number 1.0
        if isinstance(v, (int, float)):
            start.hparams[k].number_value = v
            kind, field = "DATA_TYPE_FLOAT64", "number_value"
        elif isinstance(v, str):
            start.hparams[k].string_value = v
            kind, field = "DATA_TYPE_STRING", "string_value"
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        domain = None
        if k in hparam_domain_discrete:
            domain = struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d}) for d in hparam_domain_discrete[k]])
        infos.append(HParamInfo(name=k, type=DataType.Value(kind), domain_discrete=domain))
    version = hparams_metadata.PLUGIN_DATA_VERSION
    experiment = Experiment(hparam_infos=infos, metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict])
    end = SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))
    return (_hparams_summary(hparams_metadata.EXPERIMENT_TAG,
                             HParamsPluginData(experiment=experiment, version=version)),
            _hparams_summary(hparams_metadata.SESSION_START_INFO_TAG,
                             HParamsPluginData(session_start_info=start, version=version)),
            _hparams_summary(hparams_metadata.SESSION_END_INFO_TAG,
                             HParamsPluginData(session_end_info=end, version=version)))
