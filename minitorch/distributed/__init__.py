"""``minitorch.distributed``: PyTorch's torch.distributed on MPI (mpi4py) for CPU tensors.

``backend="gloo"`` (what CPU programs written for PyTorch ask for) and ``"mpi"`` both run on MPI; ``"nccl"``
(CUDA tensors) runs on CuPy's NCCL (not yet run on a GPU). Start the processes with ``mpiexec -n N python train.py`` or
``python -m minitorch.distributed.run --nproc-per-node N train.py`` (torchrun's options and variables), or any
other way (``torch.multiprocessing.spawn``, ``multiprocessing.Process``, by hand with RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT): then they meet in a store and become one MPI world. See docs/distributed.md.
"""

from .collectives import (
    Work,
    all_gather,
    all_gather_into_tensor,
    all_gather_object,
    all_reduce,
    barrier,
    broadcast,
    broadcast_object_list,
    gather,
    gather_object,
    irecv,
    isend,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    scatter_object_list,
    send,
)
from .process_group import (
    Backend,
    GroupMember,
    ProcessGroup,
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_default_backend_for_device,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    new_group,
)
from .reduce_ops import ReduceOp, reduce_op
from .store import DistError, DistNetworkError, DistStoreError, FileStore, HashStore, PrefixStore, Store, TCPStore

group = GroupMember  # torch.distributed.group.WORLD

__all__ = [
    "Backend", "DistError", "DistNetworkError", "DistStoreError", "FileStore", "GroupMember", "HashStore",
    "PrefixStore", "ProcessGroup", "ReduceOp", "Store", "TCPStore", "Work", "all_gather", "all_gather_into_tensor",
    "all_gather_object", "all_reduce", "barrier", "broadcast", "broadcast_object_list", "default_pg_timeout",
    "destroy_process_group", "gather", "gather_object", "get_backend", "get_default_backend_for_device",
    "get_process_group_ranks", "get_rank",
    "get_world_size", "group", "init_process_group", "irecv", "is_available", "is_gloo_available",
    "is_initialized", "is_mpi_available", "is_nccl_available", "is_torchelastic_launched", "isend", "new_group",
    "recv", "reduce", "reduce_op", "reduce_scatter", "reduce_scatter_tensor", "scatter", "scatter_object_list", "send",
]
