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


def test_without_a_helper_the_job_runs_here(monkeypatch):
    def no_process(niceness):
        raise OSError("no processes on this host")

    monkeypatch.setattr(processes, "_Helper", no_process)
    monkeypatch.setitem(processes._pools, "speed", processes._Pool(1, 0))
    pid, value = run_apart("speed", _pid_and_square, 4)
    assert (pid, value) == (os.getpid(), 16)


def test_a_helper_that_dies_is_replaced_and_the_job_runs_here(monkeypatch):
    pool = processes._Pool(1, 0)
    monkeypatch.setitem(processes._pools, "simulate", pool)
    first_pid, _ = run_apart("simulate", _pid_and_square, 2)
    helper = pool.idle.get()
    helper.process.kill()
    helper.process.wait(10)
    pool.give_back(helper)
    pid, value = run_apart("simulate", _pid_and_square, 5)  # the dead one: here
    assert (pid, value) == (os.getpid(), 25) and pool.started == 0
    pid, _ = run_apart("simulate", _pid_and_square, 6)  # a new helper
    assert pid not in (os.getpid(), first_pid)


def test_a_helper_runs_only_this_projects_functions():
    from specdec_ui.helper import _function

    with pytest.raises(PermissionError, match="os"):
        _function("os", "system")


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


def _raise_os_error(path: str) -> None:
    raise FileNotFoundError(path)


def test_an_os_error_of_the_job_is_its_own_and_keeps_the_helper(monkeypatch):
    pool = processes._Pool(1, 0)
    monkeypatch.setitem(processes._pools, "simulate", pool)
    first, _ = run_apart("simulate", _pid_and_square, 1)
    with pytest.raises(FileNotFoundError, match="no-such-file"):
        run_apart("simulate", _raise_os_error, "no-such-file")
    again, _ = run_apart("simulate", _pid_and_square, 1)
    assert again == first and pool.started == 1  # the same helper, not discarded


def test_a_caller_waiting_for_a_helper_gets_a_new_one_when_the_busy_one_dies(monkeypatch):
    import threading

    class FakeHelper:
        def __init__(self, niceness):
            self.closed = False

        def close(self):
            self.closed = True

    monkeypatch.setattr(processes, "_Helper", FakeHelper)
    pool = processes._Pool(1, 0)
    busy = pool.take()
    got = []
    waiter = threading.Thread(target=lambda: got.append(pool.take()), daemon=True)
    waiter.start()
    waiter.join(0.3)
    assert got == []  # the only helper is busy
    pool.discard(busy)  # it died: its place is free again
    waiter.join(5)
    assert len(got) == 1 and got[0] is not busy and not got[0].closed
