"""minitorch.nn.parallel: single-process data parallelism over the CUDA devices (torch.nn.parallel).

On a machine without a GPU, ``DataParallel`` runs its module unchanged, as a CPU-only PyTorch does, and the
device functions refuse CPU tensors as PyTorch's do. ``DistributedDataParallel`` belongs to the distributed
package and is not defined here.
"""

from .data_parallel import DataParallel, data_parallel
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter, scatter_kwargs

__all__ = ["replicate", "scatter", "parallel_apply", "gather", "data_parallel", "DataParallel", "scatter_kwargs"]
