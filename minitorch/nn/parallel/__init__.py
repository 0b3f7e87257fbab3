"""minitorch.nn.parallel: single-process data parallelism over the CUDA devices (torch.nn.parallel).

On a machine without a GPU, ``DataParallel`` runs its module unchanged, as a CPU-only PyTorch does, and the
device functions refuse CPU tensors as PyTorch's do. ``DistributedDataParallel`` averages gradients over the
processes of ``minitorch.distributed``.
"""

from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter, scatter_kwargs

__all__ = ["replicate", "scatter", "parallel_apply", "gather", "data_parallel", "DataParallel", "scatter_kwargs",
           "DistributedDataParallel"]
