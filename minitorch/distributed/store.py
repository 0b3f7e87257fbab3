"""PyTorch's key-value stores: ``TCPStore``, ``FileStore``, ``HashStore`` and ``PrefixStore``.

Processes that were started independently (``mp.spawn``, ``multiprocessing.Process``, by hand) meet in a store
before they can form an MPI world: rank 0 publishes where its process manager listens, the others wait for it
(docs/distributed.md, "Starting the processes"). Users may also use a store directly, as in PyTorch: values are
bytes, ``get`` and ``wait`` block until the key exists or the store's timeout passes (``DistStoreError``).

Every store keeps a dictionary somewhere (in this process, behind a TCP server, or in a file) and runs the same
operations on it (``_apply``), so the stores differ only in where the dictionary lives.
"""

from __future__ import annotations

import datetime
import errno
import fcntl
import pickle
import socket
import struct
import threading
import time

__all__ = ["DistError", "DistNetworkError", "DistStoreError", "FileStore", "HashStore", "PrefixStore", "Store",
           "TCPStore"]

_DEFAULT_TIMEOUT = datetime.timedelta(seconds=300)  # PyTorch's default store timeout


class DistError(RuntimeError):
    """torch.distributed.DistError: an error of the distributed package."""


class DistNetworkError(DistError):
    """A store (or rendezvous) socket could not listen or connect."""


class DistStoreError(DistError):
    """A store operation failed, most often a ``get``/``wait`` that timed out."""


def _bytes(value) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (list, bytearray)):
        return bytes(value)
    raise TypeError(f"store value must be str or bytes, got {type(value).__name__}")


def _apply(data: dict, op: str, args: tuple):
    """Run one store operation on ``data``: (True, result), or (False, None) while a get/wait must wait."""
    if op == "set":
        data[args[0]] = args[1]
        return True, None
    if op == "get":
        return (True, data[args[0]]) if args[0] in data else (False, None)
    if op == "wait":
        return all(k in data for k in args[0]), None
    if op == "check":
        return True, all(k in data for k in args[0])
    if op == "add":
        value = int(data.get(args[0], b"0")) + args[1]
        data[args[0]] = str(value).encode()
        return True, value
    if op == "compare_set":
        key, expected, desired = args
        current = data.get(key)
        if (current is None and expected == b"") or current == expected:
            data[key] = desired
            return True, desired
        return True, expected if current is None else current
    if op == "delete_key":
        return True, data.pop(args[0], None) is not None
    if op == "num_keys":
        return True, len(data)
    raise ValueError(f"unknown store operation {op!r}")


def _waits(op: str) -> bool:
    return op in ("get", "wait")


def _timeout_error(op: str, args: tuple, seconds: float) -> DistStoreError:
    keys = args[0] if op == "wait" else [args[0]]
    return DistStoreError(f"{op} timeout after {seconds * 1000:g}ms, keys: {', '.join(keys)}")


class Store:
    """torch.distributed.Store: the base class of the stores (``timeout`` is how long ``get``/``wait`` block)."""

    def __init__(self, timeout: datetime.timedelta = _DEFAULT_TIMEOUT) -> None:
        self._timeout = timeout

    @property
    def timeout(self) -> datetime.timedelta:
        return self._timeout

    def set_timeout(self, timeout: datetime.timedelta) -> None:
        self._timeout = timeout

    def _call(self, op: str, args: tuple, timeout: float):
        raise NotImplementedError

    def _run(self, op: str, *args, timeout: datetime.timedelta | None = None):
        return self._call(op, args, (timeout or self._timeout).total_seconds())

    def set(self, key: str, value) -> None:
        self._run("set", key, _bytes(value))

    def get(self, key: str) -> bytes:
        return self._run("get", key)

    def add(self, key: str, amount: int) -> int:
        """Add ``amount`` to the integer stored at ``key`` (0 if missing) and return the new value."""
        return self._run("add", key, int(amount))

    def compare_set(self, key: str, expected_value, desired_value) -> bytes:
        """Set ``key`` to ``desired_value`` if it holds ``expected_value`` (or is missing and expected is
        empty); return the value the key holds afterwards."""
        return self._run("compare_set", key, _bytes(expected_value), _bytes(desired_value))

    def wait(self, keys: list[str], timeout: datetime.timedelta | None = None) -> None:
        self._run("wait", list(keys), timeout=timeout)

    def check(self, keys: list[str]) -> bool:
        return self._run("check", list(keys))

    def delete_key(self, key: str) -> bool:
        return self._run("delete_key", key)

    def num_keys(self) -> int:
        return self._run("num_keys")

    def multi_set(self, keys: list[str], values: list) -> None:
        for key, value in zip(keys, values, strict=True):
            self.set(key, value)

    def multi_get(self, keys: list[str]) -> list[bytes]:
        return [self.get(key) for key in keys]


class _Table:
    """A dictionary with a condition variable: the content of a HashStore and of a TCPStore's server."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.changed = threading.Condition()

    def call(self, op: str, args: tuple, timeout: float):
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                done, result = _apply(self.data, op, args)
                if done:
                    if not _waits(op):
                        self.changed.notify_all()
                    return result
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _timeout_error(op, args, timeout)
                self.changed.wait(left)


class HashStore(Store):
    """A store in this process's memory (threads share it)."""

    def __init__(self) -> None:
        super().__init__()
        self._table = _Table()

    def _call(self, op: str, args: tuple, timeout: float):
        return self._table.call(op, args, timeout)


class PrefixStore(Store):
    """``store`` with every key prefixed by ``prefix + "/"`` (so several users can share one store)."""

    def __init__(self, prefix: str, store: Store) -> None:
        super().__init__(store.timeout)
        self.underlying_store = store
        self._prefix = prefix + "/"

    def _call(self, op: str, args: tuple, timeout: float):
        if op in ("wait", "check"):
            args = ([self._prefix + k for k in args[0]],) + args[1:]
        elif op != "num_keys":
            args = (self._prefix + args[0],) + args[1:]
        return self.underlying_store._call(op, args, timeout)


class FileStore(Store):
    """A store in a file that every process can open (one machine, or a shared file system). Each operation
    locks the file (``fcntl.flock``), reads the dictionary, applies the operation and writes it back."""

    def __init__(self, file_name: str, world_size: int = -1) -> None:
        super().__init__()
        self.path = file_name
        self.world_size = world_size

    def _locked(self, op: str, args: tuple):
        with open(self.path, "a+b") as f:  # (re)created if missing
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                f.seek(0)
                content = f.read()
                data = pickle.loads(content) if content else {}
                done, result = _apply(data, op, args)
                if done and not _waits(op) and op not in ("check", "num_keys"):
                    f.truncate(0)  # appending to an empty file writes from its start
                    f.write(pickle.dumps(data))
                return done, result
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def _call(self, op: str, args: tuple, timeout: float):
        deadline = time.monotonic() + timeout
        while True:
            done, result = self._locked(op, args)
            if done:
                return result
            if time.monotonic() > deadline:
                raise _timeout_error(op, args, timeout)
            time.sleep(0.01)


def _send(sock: socket.socket, obj) -> None:
    payload = pickle.dumps(obj)
    sock.sendall(struct.pack("!Q", len(payload)) + payload)


def _receive_exactly(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            raise ConnectionError("the store's peer closed the connection")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _receive(sock: socket.socket):
    (n,) = struct.unpack("!Q", _receive_exactly(sock, 8))
    return pickle.loads(_receive_exactly(sock, n))


class _Server:
    """The TCPStore server: a listening socket and one thread per client, all on one ``_Table``."""

    def __init__(self, host: str, port: int) -> None:
        self.table = _Table()
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.listener.bind(("" if host in ("", "0.0.0.0") else socket.gethostbyname(host), port))
        except OSError as error:
            self.listener.close()
            name = errno.errorcode.get(error.errno, "?")
            raise DistNetworkError(f"The server socket has failed to listen on any local network address. "
                                   f"port: {port}, code: {error.errno}, name: {name}, message: {error.strerror}"
                                   ) from error
        self.listener.listen(128)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True, name="TCPStore server").start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        with client:
            while True:
                try:
                    op, args, timeout = _receive(client)
                except (ConnectionError, OSError):
                    return
                try:
                    reply = (True, self.table.call(op, args, timeout))
                except Exception as error:  # sent back and raised in the client
                    reply = (False, error)
                try:
                    _send(client, reply)
                except OSError:
                    return


_servers: dict[int, _Server] = {}  # multi_tenant: TCPStores of this process that share a port share its server


class TCPStore(Store):
    """A store served over TCP by the process created with ``is_master=True`` (a thread in it); every
    TCPStore, the master's included, is a client. With ``world_size`` and ``wait_for_workers`` the master's
    constructor waits until that many stores have connected."""

    def __init__(self, host_name: str, port: int, world_size: int | None = None, is_master: bool = False,
                 timeout: datetime.timedelta = _DEFAULT_TIMEOUT, wait_for_workers: bool = True,
                 multi_tenant: bool = False, master_listen_fd: int | None = None, use_libuv: bool = True) -> None:
        super().__init__(timeout)
        self.host, self.world_size = host_name, world_size
        self._lock = threading.Lock()
        if is_master:
            server = _servers.get(port) if multi_tenant and port else None
            if server is None:
                server = _Server(host_name, port)
                if multi_tenant:
                    _servers[server.port] = server
            self._server = server
            port = server.port
        self.port = port
        self._socket = self._connect(timeout.total_seconds())
        if world_size is not None:
            self.add("init/", 1)
            if is_master and wait_for_workers:
                self._wait_for_workers(world_size, timeout.total_seconds())

    def _connect(self, seconds: float) -> socket.socket:
        deadline = time.monotonic() + seconds
        host = "127.0.0.1" if self.host in ("", "0.0.0.0") else self.host
        while True:
            try:
                sock = socket.create_connection((host, self.port), timeout=max(0.1, deadline - time.monotonic()))
                sock.settimeout(None)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return sock
            except OSError as error:
                if time.monotonic() > deadline:
                    raise DistNetworkError(f"The client socket has timed out after {seconds * 1000:g}ms while "
                                           f"trying to connect to ({self.host}, {self.port}).") from error
                time.sleep(0.05)

    def _wait_for_workers(self, world_size: int, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while int(self.get("init/")) < world_size:
            if time.monotonic() > deadline:
                raise DistStoreError(f"Timed out after {seconds:g} seconds waiting for clients. "
                                     f"{int(self.get('init/'))}/{world_size} clients joined.")
            time.sleep(0.01)

    def _call(self, op: str, args: tuple, timeout: float):
        with self._lock:
            try:
                _send(self._socket, (op, args, timeout))
                ok, result = _receive(self._socket)
            except OSError as error:  # ConnectionError included
                raise DistNetworkError(f"TCPStore {op}: lost the connection to the server at "
                                       f"({self.host}, {self.port}): {error}") from error
        if not ok:
            raise result
        return result

    def __getstate__(self):
        raise TypeError("a TCPStore holds a socket and cannot be pickled; create one in each process")

    def __del__(self) -> None:
        sock = getattr(self, "_socket", None)
        if sock is not None:
            sock.close()
