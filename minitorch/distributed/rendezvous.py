"""Rendezvous: how independently started processes find each other and become one MPI world.

Processes started by ``mpiexec`` (or ``python -m minitorch.distributed.run``) already form an MPI world. Processes
started any other way (``torch.multiprocessing.spawn``, ``multiprocessing.Process``, by hand with RANK,
WORLD_SIZE, MASTER_ADDR and MASTER_PORT) are each an MPI world of one until they meet:

1. **Store.** Every rank connects to a key-value store: a ``TCPStore`` served by rank 0 at
   MASTER_ADDR:MASTER_PORT (``env://``, ``tcp://host:port``), a ``FileStore`` (``file://path``), or the
   ``store`` passed to ``init_process_group``.
2. **Join.** Each rank claims its RANK in the store and says on which host it runs; rank 0 waits until all
   ``world_size`` ranks have joined. A rank that never joins makes the others fail after ``timeout``.
3. **Process manager.** Rank 0 starts a tiny PMI server (``_pmi_server.py``: the part of mpiexec that hands
   out ranks and lets MPI processes exchange their addresses) and publishes its address in the store.
4. **MPI_Init.** Every rank initialises MPI with ``PMI_PORT`` and ``PMI_ID=RANK`` in its environment, as
   mpiexec's processes do, so MPI_COMM_WORLD is all ``world_size`` processes, ordered by RANK.

(MPI's own way to join running programs, ``MPI_Open_port``/``Comm_accept``/``Comm_connect`` plus
``Intercomm_merge``, fails between MPICH 5.0.2 singletons: they all carry the process-group name "singinit",
so MPI refuses to connect "overlapping" groups. docs/distributed.md tells the story.)
"""

from __future__ import annotations

import datetime
import os
import socket
import subprocess
import sys
import threading
import time
from urllib.parse import parse_qs, urlparse

from .store import DistError, FileStore, PrefixStore, Store, TCPStore

__all__ = ["rendezvous", "join_world"]

_PMI_SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_pmi_server.py")
# What MPI process managers put in the environment of the processes they start
_MANAGER_VARIABLES = ("PMI_FD", "PMI_PORT", "PMI_ID", "PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE")


def _error(scheme: str, message: str) -> ValueError:
    return ValueError(f"Error initializing torch.distributed using {scheme}:// rendezvous: {message}")


def _query_int(query: dict, name: str, given: int) -> int:
    return int(query[name][0]) if name in query else given


def rendezvous(init_method: str, rank: int, world_size: int, timeout: datetime.timedelta):
    """PyTorch's rendezvous handlers: (a store factory, rank, world_size, master host) for ``init_method``.
    The store is made only when the processes have to meet (``make_store()``), as MPI may not need it."""
    url = urlparse(init_method)
    query = parse_qs(url.query)
    rank, world_size = _query_int(query, "rank", rank), _query_int(query, "world_size", world_size)
    if url.scheme == "env":
        if rank == -1:
            rank = int(_env("RANK"))
        if world_size == -1:
            world_size = int(_env("WORLD_SIZE"))

        def make_env_store() -> Store:  # join_world waits for the workers (naming those that never came)
            return TCPStore(_env("MASTER_ADDR"), int(_env("MASTER_PORT")), world_size, rank == 0, timeout,
                            wait_for_workers=False)
        return make_env_store, rank, world_size, os.environ.get("MASTER_ADDR")
    if url.scheme == "tcp":
        if not url.port:
            raise _error("tcp", "port number missing")
        if rank == -1:
            raise _error("tcp", "rank parameter missing")
        if world_size == -1:
            raise _error("tcp", "world size parameter missing")
        def make_tcp_store() -> Store:
            return TCPStore(url.hostname, url.port, world_size, rank == 0, timeout, wait_for_workers=False)
        return make_tcp_store, rank, world_size, url.hostname
    if url.scheme == "file":
        path = url.path or url.netloc
        if not path:
            raise _error("file", "path missing")
        if rank == -1:
            raise _error("file", "rank parameter missing")
        if world_size == -1:
            raise _error("file", "world size parameter missing")

        def make_file_store() -> Store:
            store = FileStore(path, world_size)
            store.set_timeout(timeout)
            return store
        return make_file_store, rank, world_size, None
    raise RuntimeError(f"No rendezvous handler for {url.scheme}://")


def _env(name: str) -> str:
    value = os.environ.get(name)
    if value is None:
        raise _error("env", f"environment variable {name} expected, but not set")
    return value


def started_by_manager(world_size: int) -> bool:
    """True when an MPI process manager (mpiexec) started this process in a world of ``world_size``."""
    size = os.environ.get("PMI_SIZE") or os.environ.get("OMPI_COMM_WORLD_SIZE")
    if size is not None:
        return int(size) == world_size
    return any(v in os.environ for v in _MANAGER_VARIABLES)


def forget_manager() -> None:
    """Drop an outer mpiexec's variables (inherited by a process it did not start as a member of this
    world), so that MPI_Init does not try to join that other world."""
    for name in _MANAGER_VARIABLES:
        os.environ.pop(name, None)


_generation = [0]  # each init_process_group of this process uses fresh keys in a store that is reused


def _deadline_left(deadline: float) -> datetime.timedelta:
    return datetime.timedelta(seconds=max(0.001, deadline - time.monotonic()))


def _failed(store: Store, world_size: int, seconds: float, waiting_for: str, where: str,
            error: Exception) -> RuntimeError:
    """The error of a rendezvous that did not complete, naming the ranks that never joined if the store knows."""
    try:
        missing = [r for r in range(world_size) if not store.check([f"host/{r}"])]
    except DistError:
        missing = "unknown (the store is gone: rank 0 gave up or exited)"
    return RuntimeError(f"init_process_group: the rendezvous {where} did not complete within {seconds:g} s "
                        f"while {waiting_for}; rank(s) that never joined: {missing} of {world_size} ({error})")


def _process_mapping(hosts: list[str]) -> str:
    """PMI's ``PMI_process_mapping``: blocks of consecutive ranks on one node, ``(vector,(node,1,count),...)``."""
    nodes: dict[str, int] = {}
    blocks: list[list[int]] = []
    for host in hosts:
        node = nodes.setdefault(host, len(nodes))
        if blocks and blocks[-1][0] == node:
            blocks[-1][1] += 1
        else:
            blocks.append([node, 1])
    return "(vector," + ",".join(f"({node},1,{count})" for node, count in blocks) + ")"


def _start_pmi_server(world_size: int, mapping: str, seconds: float, bind: str) -> int:
    """Start the PMI server as a process of its own (it must answer while this process sits in MPI_Init)."""
    server = subprocess.Popen([sys.executable, _PMI_SERVER, str(world_size), mapping, f"{seconds:g}", bind],
                              stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True)
    line = server.stdout.readline()
    server.stdout.close()
    if not line.strip():
        raise RuntimeError("init_process_group: the MPI rendezvous server did not start")
    threading.Thread(target=server.wait, daemon=True).start()  # reap it when it ends
    return int(line)


def join_world(store: Store, rank: int, world_size: int, master_host: str | None,
               timeout: datetime.timedelta) -> None:
    """Steps 2-4 of the module's docstring; afterwards MPI is initialised and MPI_COMM_WORLD is the world."""
    seconds = timeout.total_seconds()
    deadline = time.monotonic() + seconds
    _generation[0] += 1
    store = PrefixStore(f"minitorch/mpi/{_generation[0]}", store)
    me = f"{os.getpid()}@{socket.gethostname()}"
    if store.compare_set(f"rank/{rank}", "", me) != me.encode():
        raise RuntimeError(f"init_process_group: two processes asked for rank {rank}")
    store.set(f"host/{rank}", socket.gethostname())
    where = f"(store {type(store.underlying_store).__name__}"
    where += f" at {master_host}:{store.underlying_store.port})" if hasattr(store.underlying_store, "port") else ")"
    if rank == 0:
        try:
            store.wait([f"host/{r}" for r in range(world_size)], _deadline_left(deadline))
        except DistError as error:
            raise _failed(store, world_size, seconds, "rank 0 waited for every rank", where, error) from error
        hosts = [store.get(f"host/{r}").decode() for r in range(world_size)]
        local = len(set(hosts)) == 1
        port = _start_pmi_server(world_size, _process_mapping(hosts), max(1.0, deadline - time.monotonic()),
                                 "127.0.0.1" if local else "")
        host = "127.0.0.1" if local else (master_host or socket.gethostname())
        address = f"{host}:{port}"
        store.set("pmi", address)
        try:  # this process's TCPStore server must answer until every rank has read the address
            store.wait([f"read/{r}" for r in range(1, world_size)], _deadline_left(deadline))
        except DistError as error:
            raise _failed(store, world_size, seconds, "rank 0 waited for the ranks to read the MPI address",
                          where, error) from error
    else:
        try:
            store.wait(["pmi"], _deadline_left(deadline))
            address = store.get("pmi").decode()
            store.set(f"read/{rank}", "1")
        except DistError as error:
            raise _failed(store, world_size, seconds, f"rank {rank} waited for rank 0's MPI address", where,
                          error) from error
    forget_manager()
    os.environ["PMI_PORT"], os.environ["PMI_ID"] = address, str(rank)
    try:
        from mpi4py import MPI  # optional dependency: importing it runs MPI_Init, which connects to PMI_PORT
    finally:
        del os.environ["PMI_PORT"], os.environ["PMI_ID"]  # children must not inherit them
    if MPI.COMM_WORLD.Get_size() != world_size or MPI.COMM_WORLD.Get_rank() != rank:
        raise RuntimeError(f"init_process_group: MPI made rank {MPI.COMM_WORLD.Get_rank()} of "
                           f"{MPI.COMM_WORLD.Get_size()} instead of rank {rank} of {world_size}")
    _clean_up(MPI, store, rank, world_size, deadline)


def _clean_up(MPI, store: Store, rank: int, world_size: int, deadline: float) -> None:
    """Once every rank is in the MPI world (an MPI barrier, polled so that it cannot hang), rank 0 deletes the
    rendezvous keys, so that a FileStore's file can serve the next job, as PyTorch's does."""
    request = MPI.COMM_WORLD.Ibarrier()
    while not request.Test():
        if time.monotonic() > deadline:
            raise RuntimeError("init_process_group: timed out in the first MPI barrier of the new world")
        time.sleep(1e-4)
    if rank == 0:
        for key in ["pmi"] + [f"{what}/{r}" for r in range(world_size) for what in ("rank", "host", "read")]:
            store.delete_key(key)
