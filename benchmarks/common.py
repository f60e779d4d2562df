"""Helpers every benchmark script shares (imported as ``benchmarks.common``: each script
puts the repository root on ``sys.path`` first)."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(fn: Callable[[], object], repeats: int = 5) -> float:
    """Best wall-clock seconds of ``repeats`` calls (the least disturbed run)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)
