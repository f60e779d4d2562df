"""Helper processes: a job runs in a helper and comes back; without a helper it runs here;
a helper that does not answer in time is killed and the student told; a helper runs only
the jobs it was started for."""

from __future__ import annotations

import os
import threading

import pytest

from specdec_core.errors import InvalidParameterError
from specdec_ui.losslessness import work as losslessness_work
from specdec_ui.runtime import helper, processes
from specdec_ui.runtime.processes import HelperTimeoutError, PoolSpec, run_apart
from tests.ui import helper_jobs
from tests.ui.helper_jobs import hang, pid_and_square, raise_os_error, refuse
from tests.ui.waiting import HANG_S, wait_until

SPEC = PoolSpec(1, 0, 60.0, "simulation", "when you press Run again")


def test_pool(monkeypatch, name: str = "simulate", spec: PoolSpec = SPEC) -> processes._Pool:
    """A pool of ``name`` whose helpers may also run tests/ui/helper_jobs.py."""
    pool = processes._Pool(spec, extra_jobs=helper_jobs.JOBS)
    monkeypatch.setitem(processes._pools, name, pool)
    return pool


test_pool.__test__ = False  # a helper, not a test


class RecordedHelper(processes._Helper):
    """A real helper that the test can find again."""

    made: list[processes._Helper] = []

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        RecordedHelper.made.append(self)


def test_a_job_runs_in_a_helper_process_and_its_result_comes_back(monkeypatch):
    test_pool(monkeypatch, spec=PoolSpec(2, 0, 60.0, "simulation", "later"))
    pid, value = run_apart("simulate", pid_and_square, 7)
    assert value == 49 and pid != os.getpid()


def test_an_error_of_the_job_reaches_the_caller_as_it_is(monkeypatch):
    test_pool(monkeypatch)
    with pytest.raises(InvalidParameterError, match="x is 3"):
        run_apart("simulate", refuse, 3)


def test_without_a_helper_the_job_runs_here(monkeypatch):
    def no_process(niceness, extra_jobs=()):
        raise OSError("no processes on this host")

    monkeypatch.setattr(processes, "_Helper", no_process)
    pool = test_pool(monkeypatch, "speed")
    pid, value = run_apart("speed", pid_and_square, 4)
    assert (pid, value) == (os.getpid(), 16) and pool.started == 0


def test_a_helper_that_dies_is_replaced_and_the_job_runs_here(monkeypatch):
    pool = test_pool(monkeypatch)
    first_pid, _ = run_apart("simulate", pid_and_square, 2)
    helper = pool.idle[-1]
    helper.process.kill()
    helper.process.wait(HANG_S)
    pid, value = run_apart("simulate", pid_and_square, 5)  # the dead one: here
    assert (pid, value) == (os.getpid(), 25) and pool.started == 0
    pid, _ = run_apart("simulate", pid_and_square, 6)  # a new helper
    assert pid not in (os.getpid(), first_pid)


def test_a_helper_that_does_not_answer_in_time_is_killed_and_the_student_told(monkeypatch):
    monkeypatch.setattr(RecordedHelper, "made", [])
    monkeypatch.setattr(processes, "_Helper", RecordedHelper)
    pool = test_pool(monkeypatch, spec=PoolSpec(1, 0, 0.5, "simulation", "when you press Run"))
    with pytest.raises(HelperTimeoutError) as caught:
        run_apart("simulate", hang)  # never answers, whatever the limit
    assert str(caught.value) == (
        "The simulation did not finish in 0.5 s; the server is very busy. "
        "It will be tried again when you press Run."
    )
    assert caught.value.timeout_s == 0.5 and caught.value.job == "simulation"
    stuck = RecordedHelper.made[0]
    assert stuck.process.poll() is not None  # killed and reaped
    assert pool.started == 0 and pool.idle == []  # its place is free again
    pool.timeout_s = 60.0
    pid, value = run_apart("simulate", pid_and_square, 3)  # a new helper answers
    assert value == 9 and pid == RecordedHelper.made[1].process.pid


def test_the_server_pools_have_a_time_limit_and_a_message_for_the_student():
    for name, spec in processes.POOLS.items():
        assert 10 <= spec.timeout_s <= 300, name
        message = str(HelperTimeoutError(spec))
        assert message.startswith(f"The {spec.job} did not finish in {spec.timeout_s:g} s")
        assert "server is very busy" in message and "tried again" in message


def test_the_server_helpers_run_only_the_three_production_jobs(monkeypatch):
    assert helper.PRODUCTION_JOBS == {
        helper.job_name(losslessness_work.simulate_and_test),
        "specdec_core.lm.timing:measure_pair",
        "specdec_core.lm.costs:measure_costs",
    }
    from specdec_core.lm.costs import measure_costs
    from specdec_core.lm.timing import measure_pair

    assert helper.job_name(measure_pair) in helper.PRODUCTION_JOBS
    assert helper.job_name(measure_costs) in helper.PRODUCTION_JOBS
    for pool in processes._pools.values():  # the server's pools: no extra jobs
        assert pool.jobs == helper.PRODUCTION_JOBS
    with pytest.raises(PermissionError, match="pid_and_square"):
        run_apart("simulate", pid_and_square, 1)  # a test function, in a server pool


def test_a_helper_itself_refuses_a_job_it_was_not_started_for():
    """The check in the helper process, not only in run_apart: a server helper asked (over
    its pipe) for a test function or any other function answers with PermissionError."""
    with pytest.raises(PermissionError, match="os:system"):
        helper._function("os", "system")
    server_helper = processes._Helper(0)
    try:
        ok, err = server_helper.call(pid_and_square, (2,), {}, HANG_S)
        assert not ok and isinstance(err, PermissionError)
        assert "tests.ui.helper_jobs:pid_and_square" in str(err)
    finally:
        server_helper.close()


def test_warm_up_starts_every_pool_later_and_only_once(monkeypatch):
    monkeypatch.setattr(processes, "_warmed", threading.Event())
    started = threading.Event()
    monkeypatch.setattr(processes, "_start_all", started.set)
    timer = processes.warm_up()
    assert timer is not None and timer.interval == processes.WARM_UP_DELAY_S  # not at once
    timer.cancel()
    assert processes.warm_up() is None  # a second page: nothing more
    monkeypatch.setattr(processes, "_warmed", threading.Event())
    processes.warm_up(0.0).join(HANG_S)
    assert started.is_set()


def test_an_os_error_of_the_job_is_its_own_and_keeps_the_helper(monkeypatch):
    pool = test_pool(monkeypatch)
    first, _ = run_apart("simulate", pid_and_square, 1)
    with pytest.raises(FileNotFoundError, match="no-such-file"):
        run_apart("simulate", raise_os_error, "no-such-file")
    again, _ = run_apart("simulate", pid_and_square, 1)
    assert again == first and pool.started == 1  # the same helper, not discarded


def test_a_caller_waiting_for_a_helper_gets_a_new_one_when_the_busy_one_dies(monkeypatch):
    class FakeHelper:
        def __init__(self, niceness, extra_jobs=()):
            self.closed = False

        def close(self):
            self.closed = True

    monkeypatch.setattr(processes, "_Helper", FakeHelper)
    pool = processes._Pool(SPEC)
    busy = pool.take()
    got = []
    waiter = threading.Thread(target=lambda: got.append(pool.take()), daemon=True)
    waiter.start()
    wait_until(lambda: pool.waiting == 1, "the second caller to wait for a helper")
    assert got == []  # the only helper is busy
    pool.discard(busy)  # it died: its place is free again
    waiter.join(HANG_S)
    assert len(got) == 1 and got[0] is not busy and not got[0].closed and busy.closed
