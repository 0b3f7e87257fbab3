"""The process groups: the default (WORLD) group made by ``init_process_group`` and those of ``new_group``.

Each group is an MPI communicator. mpi4py is imported only here and in rendezvous.py, when a group is first
made, so ``import minitorch`` works without it. Processes started together by ``mpiexec`` (or
``python -m minitorch.distributed.run``) already form an MPI world; processes started any other way
(``mp.spawn``, ``multiprocessing.Process``, by hand) meet in a store first and then initialise MPI as one world
(rendezvous.py). RANK and WORLD_SIZE (as torchrun sets them) choose the order of the ranks.
"""

from __future__ import annotations

import datetime
import importlib.util
import os
import sys

from .. import cuda
from .._backends import nccl as nccl_engine
from .._device import device as _device
from . import rendezvous as _rendezvous
from .store import Store

__all__ = [
    "Backend", "GroupMember", "ProcessGroup", "destroy_process_group", "get_backend", "get_rank",
    "get_world_size", "init_process_group", "is_available", "is_initialized", "is_mpi_available",
    "is_nccl_available", "is_gloo_available", "is_torchelastic_launched", "new_group", "get_process_group_ranks",
    "default_pg_timeout", "get_default_backend_for_device",
]

default_pg_timeout = datetime.timedelta(minutes=30)


class Backend(str):
    """A backend name. ``gloo`` and ``mpi`` both run on MPI (mpi4py) for CPU tensors; ``nccl`` needs CUDA."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"

    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL}

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: {type(name)}")
        value = name.lower()
        if value not in (cls.GLOO, cls.NCCL, cls.MPI, cls.UNDEFINED):
            raise ValueError(f"Invalid backend: '{name}'")
        return super().__new__(cls, value)


def get_default_backend_for_device(device) -> str:
    """The backend PyTorch picks for tensors on ``device``: "gloo" for the CPU, "nccl" for CUDA."""
    kind = device.type if isinstance(device, _device) else _device(device).type
    backend = Backend.default_device_backend_map.get(kind)
    if backend is None:
        raise ValueError(f"Default backend not registered for device : {device}")
    return backend


def _mpi():
    """The mpi4py MPI module (importing it initialises MPI); a clear error when mpi4py is missing."""
    try:
        from mpi4py import MPI  # optional dependency: the `distributed` extra
    except ImportError as error:
        raise RuntimeError("minitorch.distributed needs mpi4py and an MPI library: "
                           "pip install 'minitorch[distributed]' (mpi4py and the mpich wheel)") from error
    return MPI


class ProcessGroup:
    """A set of ranks that run collectives together: an MPI communicator plus the global rank of each member."""

    def __init__(self, comm, ranks: list[int], backend: str, timeout: datetime.timedelta) -> None:
        self.comm = comm
        self.ranks = ranks
        self.backend = backend
        self.timeout = timeout
        self.MPI = _mpi()
        self.nccl = None  # for backend "nccl": the NCCL communicator of CUDA tensors (MPI remains the bootstrap)
        if backend == Backend.NCCL:
            uid = comm.bcast(nccl_engine.unique_id() if comm.Get_rank() == 0 else None, root=0)
            self.nccl = nccl_engine.Communicator(comm.Get_size(), uid, comm.Get_rank())

    def rank(self) -> int:
        return self.comm.Get_rank()

    def size(self) -> int:
        return self.comm.Get_size()

    def group_rank(self, global_rank: int, what: str) -> int:
        """The rank within this group of a global rank (``src``/``dst`` arguments are global, as in PyTorch)."""
        if global_rank not in self.ranks:
            raise ValueError(f"{what}: global rank {global_rank} is not part of group {self.ranks}")
        return self.ranks.index(global_rank)

    def name(self) -> str:
        return self.backend

    def __repr__(self) -> str:
        return f"ProcessGroup(backend={self.backend!r}, ranks={self.ranks})"


class GroupMember:
    """``GroupMember.WORLD`` is the default group (None before init); ``NON_GROUP_MEMBER`` is what
    ``new_group`` returns on a rank that is not in the new group."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = object()


def is_available() -> bool:
    return True


def is_mpi_available() -> bool:
    """True when mpi4py is installed (checked without initialising MPI)."""
    return importlib.util.find_spec("mpi4py") is not None


def is_gloo_available() -> bool:
    return is_mpi_available()  # "gloo" runs on MPI here


def is_nccl_available() -> bool:
    """True when CuPy with NCCL and a GPU are present."""
    return nccl_engine.is_available()


def is_torchelastic_launched() -> bool:
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def is_initialized() -> bool:
    return GroupMember.WORLD is not None


def _world() -> ProcessGroup:
    if GroupMember.WORLD is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return GroupMember.WORLD


def _group(group) -> ProcessGroup | None:
    """The group a collective runs on (None: the default one); None when this rank is not a member."""
    if group is None or group is GroupMember.WORLD:
        return _world()
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(group).__name__}")
    return group


def _env_int(name: str):
    value = os.environ.get(name)
    return None if value in (None, "") else int(value)


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: datetime.timedelta | None = None, world_size: int = -1, rank: int = -1,
                       store: Store | None = None, group_name: str = "", pg_options=None, device_id=None) -> None:
    """Join the default process group. ``backend`` "gloo" or "mpi" (or None) runs on MPI for CPU tensors, "nccl" on
    NCCL (CuPy) for CUDA tensors, with MPI as its bootstrap.

    RANK and WORLD_SIZE come from the arguments, else from ``init_method`` ("env://" by default: the environment
    as torchrun sets it; "tcp://host:port?rank=..&world_size=.."; "file:///path?..."), else from MPI when mpiexec
    started the processes. Processes that are not one MPI world already meet in the ``store`` (or the one
    ``init_method`` names: a TCPStore at MASTER_ADDR:MASTER_PORT for env://) and become one (rendezvous.py);
    a rank that does not join within ``timeout`` makes the others raise RuntimeError."""
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None and init_method is not None:
        raise AssertionError("Cannot specify both init_method and store.")
    if store is not None:
        if not world_size > 0:
            raise AssertionError("world_size must be positive if using store")
        if not rank >= 0:
            raise AssertionError("rank must be non-negative if using store")
    name = Backend(backend or Backend.GLOO)
    if name == Backend.NCCL:
        if not cuda.is_available():
            raise RuntimeError("ProcessGroupNCCL is only supported with GPUs, no GPUs found!")
        if not nccl_engine.is_available():
            raise RuntimeError("Distributed package doesn't have NCCL built in: CuPy's NCCL bindings are missing "
                               "(pip install 'minitorch[gpu]' with a CuPy build that has NCCL)")
    if timeout is None:
        timeout = default_pg_timeout
    make_store, master = (lambda: store), None
    if store is None:
        if init_method in (None, "env://") and (world_size == -1 and _env_int("WORLD_SIZE") is None
                                                or rank == -1 and _env_int("RANK") is None):
            # no RANK/WORLD_SIZE anywhere: the ranks are MPI's (mpiexec), or this process alone
            rank, world_size = _mpi_rank_and_size(rank, world_size)
        else:
            make_store, rank, world_size, master = _rendezvous.rendezvous(init_method or "env://", rank,
                                                                         world_size, timeout)
    if world_size < 1:
        raise ValueError(f"init_process_group: world_size must be positive, got {world_size}")
    if not 0 <= rank < world_size:
        raise ValueError(f"init_process_group: rank {rank} is out of range for world_size {world_size}")
    if "mpi4py.MPI" not in sys.modules and not _rendezvous.started_by_manager(world_size):
        _rendezvous.forget_manager()  # an outer mpiexec's world (of another size) is not this one
        if world_size > 1:
            meeting_place = make_store()  # first: a missing MASTER_ADDR is PyTorch's ValueError
            if not is_mpi_available():
                _mpi()  # the clear error
            _rendezvous.join_world(meeting_place, rank, world_size, master, timeout)
    MPI = _mpi()
    comm = MPI.COMM_WORLD
    if comm.Get_size() != world_size:
        raise RuntimeError(
            f"init_process_group: world_size is {world_size} but this process's MPI world has "
            f"{comm.Get_size()} process(es), and MPI can be initialised only once per process (the first "
            "init_process_group did it): use the same world size in every init_process_group of a process")
    world = comm.Split(0, rank)  # order the ranks as RANK asks
    if world.Get_rank() != rank:
        raise RuntimeError(f"init_process_group: two processes asked for rank {rank}")
    GroupMember.WORLD = ProcessGroup(world, list(range(world_size)), str(name), timeout)


def _mpi_rank_and_size(rank: int, world_size: int) -> tuple[int, int]:
    """RANK and WORLD_SIZE from MPI's world where the arguments and the environment leave them open."""
    comm = _mpi().COMM_WORLD
    rank = rank if rank != -1 else _env_int("RANK")
    size = world_size if world_size != -1 else _env_int("WORLD_SIZE")
    return (comm.Get_rank() if rank is None else rank), (comm.Get_size() if size is None else size)


def destroy_process_group(group=None) -> None:
    """Leave ``group`` (None: the default group, after which ``init_process_group`` may be called again)."""
    if group is None or group is GroupMember.WORLD:
        world = _world()
        if world.nccl is not None:
            world.nccl.destroy()
        world.comm.Free()
        GroupMember.WORLD = None
    elif isinstance(group, ProcessGroup):
        if group.nccl is not None:
            group.nccl.destroy()
        group.comm.Free()


def get_rank(group=None) -> int:
    """This process's rank in ``group`` (-1 if it is not a member)."""
    pg = _group(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None) -> int:
    pg = _group(group)
    return -1 if pg is None else pg.size()


def get_backend(group=None) -> str:
    pg = _group(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return pg.backend


def get_process_group_ranks(group) -> list[int]:
    pg = _group(group)
    return [] if pg is None else list(pg.ranks)


def new_group(ranks=None, timeout: datetime.timedelta | None = None, backend=None, pg_options=None,
              use_local_synchronization: bool = False, group_desc=None, device_id=None):
    """A group of the given global ranks (all if None). Every rank of the default group must call it, as in
    PyTorch; a rank outside ``ranks`` gets ``GroupMember.NON_GROUP_MEMBER``."""
    world = _world()
    members = sorted(set(range(world.size()) if ranks is None else (int(r) for r in ranks)))
    for r in members:
        if not 0 <= r < world.size():
            raise ValueError(f"new_group: rank {r} is out of range for world_size {world.size()}")
    me = world.rank()
    color = 0 if me in members else world.MPI.UNDEFINED
    comm = world.comm.Split(color, members.index(me) if me in members else 0)
    if me not in members:
        return GroupMember.NON_GROUP_MEMBER  # (NCCL's unique-id broadcast runs on members only: comm is theirs)
    return ProcessGroup(comm, members, str(Backend(backend or world.backend)), timeout or world.timeout)
