"""A throwaway ``redis-server`` on a free loopback port, for the class store's tests and
benchmark (issue 34 item 6). Debian's ``redis-server`` (``apt-get install -y redis-server``;
``SPECDEC_REDIS_SERVER`` overrides the path). No file is written: no RDB, no AOF.

    with run_redis() as server:      # server.url == "redis://127.0.0.1:<port>/0"
        ...
        server.kill()                # Redis goes away mid-lesson (SIGKILL, by its PID)
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from local_server import free_port  # noqa: E402

REDIS_SERVER = Path(os.environ.get("SPECDEC_REDIS_SERVER", "/usr/bin/redis-server"))


@dataclass
class RedisServer:
    port: int
    proc: subprocess.Popen

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def kill(self) -> None:
        """Stop it at once (SIGKILL to the PID this module started), as a crash would."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


def _wait_ready(port: int, proc: subprocess.Popen, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"redis-server exited with code {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5) as s:
            s.sendall(b"PING\r\n")
            if s.recv(16).startswith(b"+PONG"):
                return
        time.sleep(0.05)
    raise RuntimeError(f"redis-server did not answer on port {port} within {timeout_s} s")


@contextlib.contextmanager
def run_redis(server: Path = REDIS_SERVER):
    """Start ``redis-server`` on 127.0.0.1 and a free port; yield a :class:`RedisServer`;
    stop it (if it is still running) at the end."""
    port = free_port()
    cmd = [str(server), "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    cmd += ["--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    running = RedisServer(port, proc)
    try:
        _wait_ready(port, proc)
        yield running
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                running.kill()
