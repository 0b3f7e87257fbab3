"""``minitorch.utils.tensorboard``: PyTorch's ``torch.utils.tensorboard`` on the ``tensorboard`` package.

``SummaryWriter`` writes event files with TensorBoard's own protobufs and record writer, so
``tensorboard --logdir runs`` shows scalars, histograms, text, images, hyperparameters and a module's graph.
TensorBoard is an optional extra (``pip install minitorch[tensorboard]``); without it importing this module
raises ImportError, as ``torch.utils.tensorboard`` does.
"""

try:
    import tensorboard  # optional dependency: the event-file protobufs and writer
except ImportError:
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above: pip install tensorboard "
                      "(or pip install minitorch[tensorboard])") from None

if tuple(int(p) for p in tensorboard.__version__.split(".")[:2] if p.isdigit()) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402 (re-exported, as PyTorch does)

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
