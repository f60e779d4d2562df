"""A local Streamlit server of the app, on a free loopback port (tests and benchmarks).

Used by ``tests/e2e/conftest.py`` (the browser tests) and ``benchmarks/load_test.py``:
start ``streamlit run app.py`` from the repository root, wait for ``/_stcore/health``,
and stop exactly the process that was started (by its PID).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, log_path: Path) -> subprocess.Popen:
    """``streamlit run app.py`` on 127.0.0.1:port (no file watcher); output to ``log_path``."""
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.headless",
        "true",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--server.fileWatcherType",
        "none",
        "--browser.gatherUsageStats",
        "false",
    ]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    with open(log_path, "wb") as log:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )


def wait_healthy(
    url: str, proc: subprocess.Popen | None, *, log_path: Path | None = None, timeout_s: float = 60
) -> None:
    """Poll ``url/_stcore/health`` until it answers 200; RuntimeError (with the log's
    tail) if the server exits or does not answer within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            tail = log_path.read_text(errors="replace")[-3000:] if log_path else ""
            raise RuntimeError(f"the server exited with code {proc.returncode}\n{tail}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer /_stcore/health in {timeout_s:.0f} s")


def stop_server(proc: subprocess.Popen) -> None:
    """Stop the server that was started: SIGTERM to its PID, then SIGKILL after 10 s."""
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
