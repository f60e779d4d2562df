"""The Model pair lab's default run as a request, and a made-up speed measurement of it, for
the tests that run, hold, show or share one (tests/app and tests/ui use them alike)."""

from __future__ import annotations

import time
from dataclasses import replace

from specdec_core.lm.timing import SpeedMeasurement
from specdec_ui.model_pairs import work


def default_request(**changes) -> work.RunRequest:
    """The page's default run (default pair, prompt, K and tokens; T = 0, seed 0), with
    ``changes``."""
    default = {
        "pair": work.DEFAULT_PAIR,
        "prompt": work.DEFAULT_PROMPT,
        "k": work.DEFAULT_K,
        "temperature": 0.0,
        "n_tokens": work.DEFAULT_TOKENS,
        "seed": 0,
    }
    return work.RunRequest(**{**default, **changes})


def fake_speed(speedup: float, *, k: int = 3, n_tokens: int = 60, **changes) -> SpeedMeasurement:
    """Three repeats of 1 s speculative against ``speedup`` s plain decoding (so a measured
    ``speedup``x), 31 rounds keeping 32 of 50 checked drafts, at K = ``k`` and T = 0 over
    ``n_tokens`` tokens (the lab's default run); ``changes`` replace any other field."""
    measured = SpeedMeasurement(
        k=k,
        temperature=0.0,
        n_tokens=n_tokens,
        parallel_verify=True,
        spec_s=(1.0, 1.0, 1.0),
        plain_s=(speedup,) * 3,
        draft_s=(0.05,) * 3,
        rounds=31,
        accepted=32,
        checked=50,
        clock="fake",
    )
    return replace(measured, **changes)


def hold_speed(request: work.RunRequest, held, measured_at: float | None = None) -> work.Held:
    """Put ``held`` (a measurement, or an ``Unmeasured`` reason) in the lab's hold as the
    speed of ``request``, measured at ``measured_at`` (default: now), as a finished
    background measurement would; returns what the hold keeps."""
    when = time.time() if measured_at is None else measured_at
    return work.HOLD.put(("lm.run_speed", work.speed_key(request)), work.Held(held, when))
