"""Held values shared by every replica through Redis (issue 34 item 6): the Model pair lab's
held speedup figure, so a class spread over replicas reads one number.

:class:`RedisHeld` keeps JSON text (plain numbers and strings, never pickle) under a hashed
key that expires with the hold (``SET ... PX``), and a ``SET NX`` lock with a TTL so that one
replica at a time measures a given run::

    specdec:held:<sha256 of the key>        the value's JSON (expires with the hold)
    specdec:held:lock:<sha256 of the key>   a random token while one replica measures it

Raises the redis client's errors (``REDIS_DOWN``) when Redis does not answer; the hold that
uses it (:class:`specdec_ui.model_pairs.work.MeasurementHold`) then goes on in-process, as
the class store does (:mod:`specdec_ui.runtime.classroom_redis`). :func:`shared_held` gives
the process's :class:`RedisHeld` when ``SPECDEC_STORE=redis://...`` is set, else None (the
redis client is imported only then).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import secrets

from specdec_ui.runtime.classroom import STORE_ENV

PREFIX = "specdec:held:"
LOCK_PREFIX = PREFIX + "lock:"
# Delete the lock only if it still holds this replica's token (it may have expired and been
# taken by another replica meanwhile).
_UNLOCK = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def _plain(obj: object) -> object:
    """``obj`` as JSON-able plain data: str, int, float, bool, None, lists, and dataclasses as
    ``[type name, {field: value}]``; anything else is refused (a key must be stable)."""
    if obj is None or isinstance(obj, str | bool | int):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else repr(obj)
    if isinstance(obj, tuple | list):
        return [_plain(x) for x in obj]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        fields = {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
        return [type(obj).__name__, fields]
    raise TypeError(f"a held key holds plain values only, not {type(obj).__name__}")


def key_digest(key: object) -> str:
    """The SHA-256 of ``key``'s canonical JSON: the same on every replica, and no text of the
    key (a prompt is already a digest in the Model pair lab's keys) reaches Redis."""
    text = json.dumps(_plain(key), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class RedisHeld:
    """JSON values with a TTL and per-key locks in Redis (see the module docstring)."""

    backend = "redis"

    def __init__(self, client: object) -> None:
        if isinstance(client, str):  # imports redis: only when a Redis store is asked for
            from specdec_ui.runtime.classroom_redis import redis_client

            client = redis_client(client)
        self.r = client
        self._unlock = client.register_script(_UNLOCK)

    def get(self, key: object) -> tuple[str, float] | None:
        """(the JSON text, seconds it has left) of ``key``, or None."""
        pipe = self.r.pipeline(transaction=False)
        pipe.get(PREFIX + key_digest(key))
        pipe.pttl(PREFIX + key_digest(key))
        text, pttl = pipe.execute()
        if text is None or pttl is None or pttl <= 0:
            return None
        return text, pttl / 1000.0

    def put(self, key: object, text: str, ttl_s: float) -> None:
        self.r.set(PREFIX + key_digest(key), text, px=max(1, math.ceil(ttl_s * 1000)))

    def lock(self, key: object, ttl_s: float) -> str | None:
        """A token if this replica now holds ``key``'s lock (for at most ``ttl_s``), else None."""
        token = secrets.token_hex(16)
        got = self.r.set(LOCK_PREFIX + key_digest(key), token, nx=True, px=math.ceil(ttl_s * 1000))
        return token if got else None

    def locked(self, key: object) -> bool:
        return bool(self.r.exists(LOCK_PREFIX + key_digest(key)))

    def unlock(self, key: object, token: str) -> None:
        self._unlock(keys=[LOCK_PREFIX + key_digest(key)], args=[token])

    def clear(self) -> None:
        """Forget every held value and lock (tests; the teacher never does this)."""
        names = list(self.r.scan_iter(PREFIX + "*"))
        if names:
            self.r.delete(*names)


def down_errors() -> tuple[type[BaseException], ...]:
    """The errors that mean Redis has gone (or answers nonsense), as the class store's."""
    import redis

    return (redis.exceptions.RedisError, OSError)


def shared_held(url: str | None = None) -> tuple[RedisHeld | None, str]:
    """(the Redis store, "redis") for ``SPECDEC_STORE=redis://...``; else (None, why the hold
    is in-process: "in-process", or the reason a URL could not be used)."""
    url = (os.environ.get(STORE_ENV, "") if url is None else url).strip()
    if not url:
        return None, "in-process"
    if not url.startswith(("redis://", "rediss://", "unix://")):
        return None, f"in-process ({STORE_ENV} is not a redis://host:port/db URL)"
    try:
        return RedisHeld(url), "redis"
    except ImportError as err:
        return None, f"in-process (the redis client is not installed: {err})"
