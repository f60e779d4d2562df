"""Shared fixtures of the tests/ui modules that need a real Redis (the class store, the held
speedup figure): ``redis_server`` starts Debian's ``redis-server`` on a free loopback port
for the module, ``redis_client`` is a client of it with an empty database.

Without the binary or the ``redis`` client the tests skip with a reason, unless
``SPECDEC_REQUIRE_OPTIONAL=1`` (CI's full tier, which installs redis-server), where a
missing one is a failure.
"""

from __future__ import annotations

import os

import pytest

from benchmarks.redis_server import REDIS_SERVER, run_redis

try:
    import redis
except ImportError:  # pragma: no cover - only where the client is not installed
    redis = None


def missing(reason: str) -> None:
    """Skip for ``reason``, or fail where the optional parts are required."""
    if os.environ.get("SPECDEC_REQUIRE_OPTIONAL") == "1":
        pytest.fail(f"SPECDEC_REQUIRE_OPTIONAL=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def server():
    """A ``redis-server`` of this module, on a free loopback port."""
    if redis is None:
        missing("the redis client is not installed (pip install -r requirements.txt)")
    if not REDIS_SERVER.exists():
        missing(f"{REDIS_SERVER} not found: install Debian's redis-server")
    with run_redis() as running:
        yield running


@pytest.fixture
def client(server):
    """A client of the module's server, its database emptied first."""
    c = redis.Redis.from_url(server.url, decode_responses=True)
    c.flushdb()
    yield c
    c.close()
