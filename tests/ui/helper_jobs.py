"""Jobs for the helper-process tests: run only by helpers a test starts with :data:`JOBS`
(``runtime.processes._Pool(spec, extra_jobs=JOBS)``); the server's helpers refuse them."""

from __future__ import annotations

import os
import threading

from specdec_core.errors import InvalidParameterError


def pid_and_square(x: int) -> tuple[int, int]:
    return os.getpid(), x * x


def refuse(x: int) -> None:
    raise InvalidParameterError(f"x is {x}; allowed: nothing")


def raise_os_error(path: str) -> None:
    raise FileNotFoundError(path)


def hang() -> None:
    """Never answers (a helper stuck in a job): the caller's time limit must end it."""
    threading.Event().wait()


JOBS = frozenset(
    f"{__name__}:{f.__qualname__}" for f in (pid_and_square, refuse, raise_os_error, hang)
)
