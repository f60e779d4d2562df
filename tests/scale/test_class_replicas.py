"""One class across replicas through Redis (issue 34 item 6): the projector in this process,
the phones in two other Python processes, each with its own store (``SPECDEC_STORE``'s
ResilientStore), all on one ``redis-server`` started on a free loopback port.

The class is started here and joined, answered and pooled into from the two other
processes: every answer and round sent is counted once, and every process reads the same
tallies and the same pool. Needs Debian's ``redis-server``; without it the test skips with
a reason, unless ``SPECDEC_REQUIRE_OPTIONAL=1`` (CI's full tier), where that is a failure.
About 10 s.
"""

from __future__ import annotations

import json
import os
import time

import pytest

from benchmarks import bench_classroom as bench
from benchmarks.redis_server import REDIS_SERVER, run_redis
from specdec_ui.runtime import classroom as cr
from specdec_ui.runtime.classroom_redis import SNAPSHOT_MAX_AGE_S


@pytest.fixture(scope="module")
def server():
    if not REDIS_SERVER.exists():
        reason = f"{REDIS_SERVER} not found: install Debian's redis-server"
        if os.environ.get("SPECDEC_REQUIRE_OPTIONAL") == "1":
            pytest.fail(f"SPECDEC_REQUIRE_OPTIONAL=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    with run_redis() as running:
        yield running


def test_one_class_across_three_processes_counts_everything_once(server, monkeypatch):
    monkeypatch.setenv("SPECDEC_STORE", server.url)
    cr.reset_store_for_tests()
    try:
        here = cr.store()
        code, key = here.start()
        phones = {"B": 7, "C": 5}
        workers = [
            bench._spawn(server.url, code, n, seed)
            for n, seed in zip(phones.values(), (100, 200), strict=True)
        ]
        teacher = bench.Stats()
        n = sum(phones.values())
        bench.projector(here, n, code, key, teacher)  # waits until all are counted here
        sent = bench.Stats()
        for worker in workers:
            out, _ = worker.communicate(timeout=bench.TIMEOUT_S + 30)
            assert worker.returncode == 0
            sent.merge(json.loads(out))
        assert sent.errors == []
        # A fourth reader (another replica that took no part) sees the same class.
        other = type(here)(server.url)
        for reader in (here, other):
            view = reader.view(code)
            assert view.backend == "redis" and view.students == n
            for i in range(bench.QUESTIONS):
                qid = bench.question(i).question_id
                assert sum(reader.tally(code, qid).values()) == len(sent.sent[qid]) == n
            pool = reader.pool(code, bench.POOL)
            assert pool.students == n and pool.rounds == sent.rounds == n * bench.ROUNDS
            assert sum(pool.lengths) == pool.rounds
            tokens = sum(k * c for k, c in enumerate(pool.lengths))
            assert sum(pool.emitted) == tokens  # each phone's tokens, added once
        assert here.tally(code, "bench/0") == other.tally(code, "bench/0")
        here.end(code, key)
        time.sleep(SNAPSHOT_MAX_AGE_S + 0.05)  # another replica's copy is at most this old
        with pytest.raises(cr.ClassNotFound):
            other.view(code)
    finally:
        cr.reset_store_for_tests()
