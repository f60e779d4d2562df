"""Two Streamlit replicas behind nginx with cookie affinity: the load client through it.

Needs Debian's nginx (``apt-get install -y nginx``; ``SPECDEC_NGINX`` overrides the path).
Without it the test skips with a reason, unless ``SPECDEC_REQUIRE_NGINX=1`` (CI), where
a missing nginx is a failure. About 20-45 s (two servers start).
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from benchmarks.replicas import COOKIE, NGINX, http_get, run_cluster, run_students

# Both tests use the module's cluster (two servers and nginx, 20-45 s to start): under
# pytest-xdist they run on one worker, so that it starts once.
pytestmark = pytest.mark.xdist_group("nginx-cluster")


@pytest.fixture(scope="module")
def cluster():
    if not NGINX.exists():
        reason = f"{NGINX} not found: install Debian's nginx (apt-get install -y nginx)"
        if os.environ.get("SPECDEC_REQUIRE_NGINX") == "1":
            pytest.fail(f"SPECDEC_REQUIRE_NGINX=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    with run_cluster(2) as running:
        yield running


def test_load_client_through_nginx_has_no_failures_and_sessions_stay_on_their_replica(cluster):
    # A thread of its own: in a full run Playwright's sync API (tests/e2e) keeps an event
    # loop running on the main thread, where asyncio.run() refuses to start another.
    with ThreadPoolExecutor(max_workers=1) as pool:
        outcome = pool.submit(asyncio.run, run_students(cluster.url, 12, clicks=2)).result()
    assert outcome.failures == [] and outcome.moved == []
    assert outcome.reruns == 12 * 2 * 3  # 2 visits (connect, reconnect) x (open + 2 clicks)
    assert sum(outcome.per_replica.values()) == 12
    assert len(outcome.per_replica) == 2  # the cookie hash spreads students over both
    replicas = {u.removeprefix("http://") for u in cluster.replica_urls}
    assert set(outcome.per_replica) == replicas


def test_a_cookie_names_one_replica_for_every_request(cluster):
    status, first = http_get(cluster.url + "/")
    assert status == 200 and first["set-cookie"].startswith(f"{COOKIE}=")
    cookie = first["set-cookie"].split(";", 1)[0]
    seen = {
        http_get(cluster.url + "/_stcore/health", cookie)[1]["x-specdec-replica"] for _ in range(8)
    }
    assert seen == {first["x-specdec-replica"]}
