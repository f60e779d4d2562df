"""The Model pair lab's held speedup figure across replicas (issue 34 item 6), against a real
``redis-server`` started on a free loopback port: two holds sharing one Redis (two
"replicas") read one figure, one of them measures a run while the other waits, a figure
expires with its hold, and a Redis killed mid-lesson leaves the hold going on in-process.

Needs Debian's ``redis-server`` and the ``redis`` client; without them the Redis tests skip
with a reason, unless ``SPECDEC_REQUIRE_OPTIONAL=1`` (a missing one is then a failure).
"""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from benchmarks.redis_server import REDIS_SERVER, run_redis
from specdec_ui.model_pairs import work
from specdec_ui.runtime import held_store
from specdec_ui.runtime.shared_work import MISSING
from tests.model_pair_fakes import fake_speed
from tests.ui.conftest import missing  # the Redis fixtures (server, client) live there too

try:
    import redis
except ImportError:  # pragma: no cover - only where the client is not installed
    redis = None

PROMPT = "My secret prompt about Paris"


def _key(prompt: str = PROMPT, seed: int = 0) -> tuple:
    request = work.RunRequest(work.DEFAULT_PAIR, prompt, 3, 0.7, 60, seed)
    return ("lm.run_speed", work.speed_key(request))


def _hold(url: str, **options) -> work.MeasurementHold:
    """One replica's hold: its own client of the shared Redis."""
    options = {"hold_s": work.HOLD_S, "retry_s": 60.0, "max_entries": 8, **options}
    return work.MeasurementHold(shared=held_store.RedisHeld(url), backend="redis", **options)


# ---------------------------------------------------------------- without Redis
def test_without_a_store_url_the_hold_is_in_process(monkeypatch):
    monkeypatch.delenv("SPECDEC_STORE", raising=False)
    assert held_store.shared_held() == (None, "in-process")
    shared, why = held_store.shared_held("http://example.org")
    assert shared is None and "not a redis://host:port/db URL" in why
    if os.environ.get("SPECDEC_STORE") is None:
        assert work.HOLD.shared is None and work.HOLD.backend == "in-process"
        assert work.where_held() == "on this server"
    hold = work.MeasurementHold(hold_s=10.0, retry_s=1.0, max_entries=2)
    with hold.turn("run") as found:  # in-process: measure at once (no lock, no wait)
        assert found is None


def test_a_held_figure_is_json_of_plain_values_and_junk_is_refused():
    held = work.Held(fake_speed(1.38), 1_765_000_000.5)
    text = work.held_json(held)
    assert json.loads(text)["value"]["fields"]["plain_s"] == [1.38, 1.38, 1.38]
    assert work.held_from_json(text) == held
    slow = work.Held(work.Unmeasured("busy"), 5.0)
    assert work.held_from_json(work.held_json(slow)) == slow
    fields = json.loads(text)["value"]["fields"]
    for bad in (
        "not json",
        "[]",
        json.dumps({"measured_at": "now", "value": {"kind": "unmeasured", "reason": "x"}}),
        json.dumps({"measured_at": 1, "value": {"kind": "pickle", "fields": fields}}),
        json.dumps({"measured_at": 1, "value": {"kind": "speed", "fields": {**fields, "k": {}}}}),
        json.dumps({"measured_at": 1, "value": {"kind": "speed", "fields": {"k": 3}}}),
        json.dumps({"measured_at": 1, "value": {"kind": "speed", "fields": {**fields, "x": 1}}}),
    ):
        assert work.held_from_json(bad) is None, bad


def test_a_key_digest_is_stable_and_holds_no_text():
    assert held_store.key_digest(_key()) == held_store.key_digest(_key())
    assert held_store.key_digest(_key()) != held_store.key_digest(_key(seed=1))
    assert held_store.key_digest(_key()) != held_store.key_digest(_key(prompt="Other"))
    with pytest.raises(TypeError, match="plain values only"):
        held_store.key_digest(("x", object()))


# ---------------------------------------------------------------- two replicas, one Redis
def test_two_replicas_sharing_redis_read_one_figure(server, client):
    a, b = _hold(server.url), _hold(server.url)
    assert b.get(_key()) is None
    held = a.put(_key(), work.Held(fake_speed(1.38), time.time()))
    seen = b.get(_key())
    assert seen == held and seen.value.speedup == pytest.approx(1.38)
    assert b.get(_key()) is seen  # the same figure, kept as b's copy while Redis holds it
    names = list(client.scan_iter("*"))
    assert len(names) == 1 and PROMPT not in names[0] and "Paris" not in client.get(names[0])
    assert 0 < client.pttl(names[0]) <= work.HOLD_S * 1000
    json.loads(client.get(names[0]))  # JSON, never pickle
    # "measure again" on b replaces the figure for a too
    newer = b.put(_key(), work.Held(fake_speed(1.25), time.time() + 1))
    assert a.get(_key()) == newer
    # a timeout is held for retry_s only, in Redis too
    a.put(_key(seed=1), work.Held(work.Unmeasured("busy"), time.time()))
    left = [client.pttl(n) for n in client.scan_iter("*") if client.pttl(n) <= 60_000]
    assert len(left) == 1 and 0 < left[0] <= 60_000


def test_the_lock_lets_one_replica_measure_and_the_other_reads_its_figure(server, client):
    replicas = [_hold(server.url, poll_s=0.05) for _ in range(3)]
    measured, results = [], []
    start = threading.Barrier(len(replicas))

    def compute(hold: work.MeasurementHold) -> None:  # what _held_result's compute does
        start.wait()
        with hold.turn(_key()) as found:
            if found is None:
                measured.append(hold)
                time.sleep(0.5)  # the measurement
                found = hold.put(_key(), work.Held(fake_speed(1.4), time.time()))
        results.append(found)

    threads = [threading.Thread(target=compute, args=(h,)) for h in replicas]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(measured) == 1 and len(results) == len(replicas)
    assert all(r == results[0] for r in results) and results[0].value.speedup == 1.4
    assert not any(n.startswith(held_store.LOCK_PREFIX) for n in client.scan_iter("*"))
    # "measure again" on one replica while another asks too: the second reads the new figure
    old = results[0]
    with replicas[0].turn(_key(), newer_than=old.measured_at) as found:
        assert found is None  # replica 0 holds the lock and measures again
        with replicas[1].turn(_key()) as other:  # a figure is held: read, no wait
            assert other == old
        new = replicas[0].put(_key(), work.Held(fake_speed(1.3), old.measured_at + 5))
    with replicas[1].turn(_key(), newer_than=old.measured_at) as found:
        assert found == new  # measured meanwhile: not measured twice


def test_a_replica_that_finds_a_figure_in_redis_shows_it_without_measuring(
    server, client, monkeypatch
):
    other = _hold(server.url)
    monkeypatch.setattr(work, "HOLD", _hold(server.url))
    assert "shared by all of them (Redis)" in work.where_held()
    request = work.RunRequest(work.DEFAULT_PAIR, PROMPT, 3, 0.7, 60, 4)

    def measure(_request):
        raise AssertionError("a held figure is not measured again")

    monkeypatch.setattr(work, "measure_run", measure)
    held = other.put(("lm.run_speed", work.speed_key(request)), work.Held(fake_speed(1.5), 1.0))
    got = work.get_run_speed(request)
    assert got is not MISSING and got == held
    assert work.held_run_speed(request) == held.value


def test_a_held_figure_expires_with_its_ttl(server, client):
    a, b = _hold(server.url, hold_s=1.0), _hold(server.url)
    a.put(_key(), work.Held(fake_speed(1.2), time.time()))
    assert b.get(_key()) is not None and a.get(_key()) is not None
    time.sleep(1.3)
    assert b.get(_key()) is None and a.get(_key()) is None
    assert list(client.scan_iter("*")) == []


def test_redis_killed_mid_lesson_the_hold_goes_on_in_process(monkeypatch):
    if redis is None or not REDIS_SERVER.exists():
        missing("redis-server or the redis client is missing")
    with run_redis() as running:
        a, b = _hold(running.url, poll_s=0.05), _hold(running.url)
        shown = a.put(_key(), work.Held(fake_speed(1.38), time.time()))
        seen = b.get(_key())
        running.kill()  # Redis goes away mid-lesson
        assert a.get(_key()) is shown and b.get(_key()) is seen  # nothing shown is lost
        for hold in (a, b):
            assert hold.backend.startswith("in-process (Redis unreachable: ")
            assert hold.shared is None
        monkeypatch.setattr(work, "HOLD", a)  # the page says where the figure is held now
        assert work.where_held().startswith("on this server (Redis unreachable: ")
        assert a.get(_key(seed=2)) is None
        with a.turn(_key(seed=2)) as found:  # no lock to wait for: measure here
            assert found is None
            later = a.put(_key(seed=2), work.Held(fake_speed(1.1), time.time()))
        assert a.get(_key(seed=2)) is later
        a.clear()
        assert a.get(_key()) is None
