"""Helper processes: a job runs in a helper and comes back; without a helper it runs here."""

from __future__ import annotations

import os

import pytest

from specdec_core.errors import InvalidParameterError
from specdec_ui import processes
from specdec_ui.processes import run_apart


def _pid_and_square(x: int) -> tuple[int, int]:
    return os.getpid(), x * x


def _refuse(x: int) -> None:
    raise InvalidParameterError(f"x is {x}; allowed: nothing")


def test_a_job_runs_in_a_helper_process_and_its_result_comes_back():
    pid, value = run_apart("simulate", _pid_and_square, 7)
    assert value == 49 and pid != os.getpid()


def test_an_error_of_the_job_reaches_the_caller_as_it_is():
    with pytest.raises(InvalidParameterError, match="x is 3"):
        run_apart("simulate", _refuse, 3)


def test_without_a_helper_the_job_runs_here_and_the_next_call_starts_a_new_pool(monkeypatch):
    def no_process(name):
        raise OSError("no processes on this host")

    monkeypatch.setattr(processes, "_pool", no_process)
    pid, value = run_apart("speed", _pid_and_square, 4)
    assert (pid, value) == (os.getpid(), 16)


def test_warm_up_starts_every_pool_later_and_only_once(monkeypatch):
    import threading
    import time

    monkeypatch.setattr(processes, "_warmed", threading.Event())
    started = []
    monkeypatch.setattr(processes, "_start_all", lambda: started.append(time.monotonic()))
    begin = time.monotonic()
    processes.warm_up(0.2)
    processes.warm_up(0.2)  # a second page: nothing more
    assert started == []  # not at once: the first class's pages come first
    time.sleep(0.6)
    assert len(started) == 1 and started[0] - begin >= 0.19
