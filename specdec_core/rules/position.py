"""Pieces the rules share: one drafted position decided from a keep chance, and
E[tokens per round] of a rule whose positions keep a draft i.i.d."""

from __future__ import annotations

import numpy as np

from ..sampling import sample_index
from ..theory import expected_tokens
from .registry import PositionStep


def draw(q_draft: np.ndarray, rng: np.random.Generator) -> int:
    """One draft x ~ q by the inverse CDF of one uniform (the Monte Carlo's sampler)."""
    return int(sample_index(q_draft, rng.random()))


def keep_or_replace(
    x: int, keep_chance: float, replacement: np.ndarray, rng: np.random.Generator
) -> PositionStep:
    """Keep x iff u < keep_chance (u ~ U[0, 1)), else emit a sample of ``replacement`` (V,).

    Random draws, in order: the coin, then (after a rejection) the replacement's uniform.
    """
    coin = rng.random()
    if coin < keep_chance:
        return PositionStep(drafted=(x,), kept=True, emitted_token=x, detail=coin)
    token = int(sample_index(replacement, rng.random()))
    return PositionStep(drafted=(x,), kept=False, emitted_token=token, detail=coin)


def geometric_tokens(rate: float, k: int) -> float:
    """E[tokens per round] = sum_{i=0..K} rate^i: positions kept i.i.d. with ``rate``,
    plus the token after the kept prefix (Leviathan et al. 2023, Eq. 1)."""
    return float(expected_tokens(float(np.clip(rate, 0.0, 1.0)), k))
