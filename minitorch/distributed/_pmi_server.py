"""The process-manager half of ``mpiexec``, for processes that were started without it.

``python _pmi_server.py WORLD_SIZE PROCESS_MAPPING TIMEOUT_SECONDS BIND_ADDRESS`` listens on a free TCP port of
BIND_ADDRESS (127.0.0.1 when every rank runs on this machine, else all interfaces), prints it, and
answers the PMI-1 wire protocol (MPICH's ``simple`` PMI: ``cmd=init``, ``get_maxes``, ``get_my_kvsname``,
``put``/``get``, ``barrier_in``, ``finalize``, ...) for WORLD_SIZE MPI processes. A process whose environment has
``PMI_PORT=host:port`` and ``PMI_ID=rank`` when it initialises MPI connects here, is told its rank and the world's
size, and MPI_Init builds one MPI_COMM_WORLD of all of them, exactly as under mpiexec (whose hydra proxies
speak the same protocol). MPI itself still does all communication; this only hands out ranks and the key-value
space in which MPI's processes publish their addresses. It exits when every process has finalized or hung up,
or when they have not all connected within TIMEOUT_SECONDS. Only the standard library: it runs as a script.
"""

from __future__ import annotations

import socket
import sys
import threading
import uuid


class Job:
    def __init__(self, size: int, mapping: str) -> None:
        self.size, self.mapping = size, mapping
        self.kvsname = "minitorch_" + uuid.uuid4().hex[:12]
        self.kvs: dict[str, str] = {}
        self.lock = threading.Condition()
        self.arrived, self.generation, self.gone, self.failed = 0, 0, 0, False

    def barrier(self) -> bool:
        """Wait until every process entered the barrier; False once a process hung up without finalizing."""
        with self.lock:
            generation = self.generation
            self.arrived += 1
            if self.arrived == self.size:
                self.arrived, self.generation = 0, self.generation + 1
                self.lock.notify_all()
            while self.generation == generation and not self.failed:
                self.lock.wait()
            return self.generation != generation

    def answer(self, fields: dict) -> str:
        cmd = fields.get("cmd")
        if cmd == "initack":
            rank = int(fields["pmiid"])
            return f"cmd=initack\ncmd=set size={self.size}\ncmd=set rank={rank}\ncmd=set debug=0\n"
        if cmd == "init":
            return "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"
        if cmd == "get_maxes":
            return "cmd=maxes kvsname_max=256 keylen_max=256 vallen_max=1024 rc=0\n"
        if cmd == "get_appnum":
            return "cmd=appnum appnum=0 rc=0\n"
        if cmd == "get_universe_size":
            return f"cmd=universe_size size={self.size} rc=0\n"
        if cmd == "get_my_kvsname":
            return f"cmd=my_kvsname kvsname={self.kvsname} rc=0\n"
        if cmd == "put":
            with self.lock:
                self.kvs[fields["key"]] = fields.get("value", "")
            return "cmd=put_result rc=0\n"
        if cmd == "get":
            key = fields["key"]
            value = self.mapping if key == "PMI_process_mapping" else self.kvs.get(key)
            if value is None:
                return "cmd=get_result rc=-1 msg=key_not_found\n"
            return f"cmd=get_result rc=0 value={value}\n"
        if cmd == "barrier_in":
            if self.barrier():
                return "cmd=barrier_out rc=0\n"
            return "cmd=barrier_out rc=-1 msg=a_process_exited_without_finalizing\n"
        if cmd == "finalize":
            return "cmd=finalize_ack rc=0\n"
        return f"cmd={cmd} rc=-1 msg=unsupported_by_minitorch_pmi_server\n"

    def serve(self, conn: socket.socket) -> None:
        finalized = False
        with conn, conn.makefile("rwb") as stream:
            for raw in stream:
                fields = dict(part.split("=", 1) for part in raw.decode().split() if "=" in part)
                if fields.get("cmd") == "abort":
                    sys.stderr.write(f"MPI abort: {fields.get('message', '')}\n")
                    break
                stream.write(self.answer(fields).encode())
                stream.flush()
                if fields.get("cmd") == "finalize":
                    finalized = True
                    break
        with self.lock:
            self.gone += 1
            if not finalized:
                self.failed = True
                self.lock.notify_all()


def main() -> None:
    size, mapping, timeout, bind = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4]
    job = Job(size, mapping)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind((bind, 0))
    listener.listen(size)
    listener.settimeout(timeout)
    sys.stdout.write(f"{listener.getsockname()[1]}\n")
    sys.stdout.flush()
    sys.stdout.close()
    threads = []
    try:
        for _ in range(size):
            conn, _ = listener.accept()
            conn.settimeout(None)
            threads.append(threading.Thread(target=job.serve, args=(conn,), daemon=True))
            threads[-1].start()
    except TimeoutError:
        sys.stderr.write(f"minitorch PMI server: only {len(threads)} of {size} MPI processes connected "
                         f"within {timeout:g} s\n")
        with job.lock:
            job.failed = True
            job.lock.notify_all()
    for thread in threads:
        thread.join()


if __name__ == "__main__":
    main()
