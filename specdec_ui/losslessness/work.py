"""The labs' Monte Carlo, computed once per server and shared by every session.

Used by the Losslessness lab and the Variants lab.

Thirty students who press "Run simulation" with the same settings in the same second
share one computation (:func:`specdec_ui.runtime.shared_work.shared_result`); different settings
queue on the heavy-work lane, so a class never runs thirty simulations in thirty threads
at once, and a preset's runs go to helper processes (:mod:`specdec_ui.runtime.processes`).
``simulate_rounds`` works in fixed-size chunks and keeps only counts, so one run's memory
does not grow with its number of rounds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

import specdec_core as sc
from specdec_core.rules import BUILT_IN
from specdec_ui import presets
from specdec_ui.runtime.processes import run_apart
from specdec_ui.runtime.shared_work import TEXT_TTL_S, WaitStatus, shared_result

Options = tuple[tuple[str, object], ...]  # a variant's keyword options, hashable


def simulate_and_test(
    p_target: tuple[float, ...],
    q_draft: tuple[float, ...],
    k: int,
    rounds: int,
    seed: int,
    variant: str,
    options: Options = (),
) -> tuple[sc.SimulationResult, sc.LosslessnessReport]:
    """``simulate_rounds`` with the seed's own generator, then the chi-square tests."""
    result = sc.simulate_rounds(
        np.array(p_target),
        np.array(q_draft),
        k,
        rounds,
        rng=np.random.default_rng(seed),
        variant=variant,
        **dict(options),
    )
    return result, sc.losslessness_test(result, significance=presets.SIGNIFICANCE)


def shared_simulation(
    p_target: tuple[float, ...],
    q_draft: tuple[float, ...],
    k: int,
    rounds: int,
    seed: int,
    variant: str,
    *,
    options: Options = (),
    typed: bool,
    on_wait: Callable[[WaitStatus], None] | None = None,
) -> tuple[sc.SimulationResult, sc.LosslessnessReport]:
    """:func:`simulate_and_test`, computed once per server for the same settings.

    ``typed``: p and q came from a student's text (not a preset), so the stored result
    (whose key holds them) lives at most ``TEXT_TTL_S`` seconds and the run stays in this
    process; a preset's run goes to a helper process on the other core
    (:func:`specdec_ui.runtime.processes.run_apart`), unless its rule was registered after import
    (:data:`specdec_core.rules.BUILT_IN`: a helper process would not know it). Raises
    :class:`specdec_ui.runtime.shared_work.QueueFullError` when the queue is full,
    :class:`specdec_ui.runtime.processes.HelperTimeoutError` when a preset's run in a helper does
    not finish in time, and the core's ``SpecDecError`` for bad input (each reaches every
    caller and is not stored).
    """
    request = {
        "p_target": p_target,
        "q_draft": q_draft,
        "k": int(k),
        "rounds": int(rounds),
        "seed": int(seed),
        "variant": str(variant),
        "options": tuple(options),
    }
    if typed or variant not in BUILT_IN:  # a helper process knows only the built-in rules
        compute = functools.partial(simulate_and_test, **request)
    else:
        compute = functools.partial(run_apart, "simulate", simulate_and_test, **request)
    return shared_result(
        "lab.simulate",
        tuple(request.values()),  # the key: every input, in the order of the signature
        compute,
        ttl_s=TEXT_TTL_S if typed else None,
        on_wait=on_wait,
    )
