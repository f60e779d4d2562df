"""The Losslessness lab's shared Monte Carlo: one computation for identical settings."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import specdec_core as sc
from specdec_ui.losslessness import work as losslessness_work
from specdec_ui.runtime import shared_work

P = (0.5, 0.3, 0.2)
Q = (0.2, 0.3, 0.5)


@pytest.fixture(autouse=True)
def empty_store():
    shared_work.clear()
    yield
    shared_work.clear()


def test_thirty_identical_requests_compute_once_and_share_one_result():
    before = shared_work.WORK.stats()["computations"]
    out: list = [None] * 30
    barrier = threading.Barrier(30)

    def student(i: int) -> None:
        barrier.wait()
        out[i] = losslessness_work.shared_simulation(P, Q, 3, 20_000, 7, "correct", typed=False)

    threads = [threading.Thread(target=student, args=(i,)) for i in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert shared_work.WORK.stats()["computations"] - before == 1
    assert all(result is out[0] for result in out)


@pytest.mark.parametrize("typed", [True, False])  # here / in a helper process
def test_the_shared_result_is_the_seeded_simulation(typed):
    result, report = losslessness_work.shared_simulation(
        P, Q, 2, 5_000, 11 + typed, "correct", typed=typed
    )
    direct = sc.simulate_rounds(
        np.array(P), np.array(Q), 2, 5_000, rng=np.random.default_rng(11 + typed), variant="correct"
    )
    np.testing.assert_array_equal(result.emitted_counts, direct.emitted_counts)
    assert report.passed
    stored = shared_work.peek("lab.simulate", (P, Q, 2, 5_000, 11 + typed, "correct", ()))
    assert stored[0] is result  # the key: every input, in the signature's order


def test_bad_input_reaches_the_caller_and_is_not_stored():
    with pytest.raises(sc.SpecDecError, match="K"):
        losslessness_work.shared_simulation(P, Q, 0, 5_000, 1, "correct", typed=True)
    assert (
        shared_work.peek("lab.simulate", (P, Q, 0, 5_000, 1, "correct", ())) is shared_work.MISSING
    )
    assert shared_work.WORK.stats()["entries"] == 0
