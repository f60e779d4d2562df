"""Input checks shared by the Serving lab's core modules (numbers, whole numbers, batches).

Each check returns the value as the type the model computes with, or raises
:class:`~specdec_core.errors.InvalidParameterError` naming the entry, what is wrong and
what is allowed. The limits of the cost model live here too.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import MAX_K, InvalidParameterError

MAX_BATCH = 4_096  # sequences in one step
MAX_CONTEXT = 131_072  # tokens of context (Llama 3.1's 128K window)
MAX_CHIPS = 64
MAX_VERIFIED = 1_024  # tokens one sequence adds to a verify pass (a tree of up to 1,024 nodes)
MAX_PREFILL = 65_536  # prompt tokens of new requests processed in one step (chunked prefill)


def finite_in(name: str, value: object, lo: float, hi: float, what: str = "") -> float:
    """``value`` as a float in [lo, hi], or InvalidParameterError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InvalidParameterError(f"{name} must be a number, got {value!r}.")
    x = float(value)
    unit = f" {what}" if what else ""
    if not math.isfinite(x) or not lo <= x <= hi:
        raise InvalidParameterError(
            f"{name} = {x:g} is out of range; allowed: {lo:g} to {hi:g}{unit}."
        )
    return x


def share_in(name: str, value: object) -> float:
    """A share of something in (0, 1]: more than 0, at most 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InvalidParameterError(f"{name} must be a number, got {value!r}.")
    x = float(value)
    if not math.isfinite(x) or not 0.0 < x <= 1.0:
        raise InvalidParameterError(
            f"{name} = {x:g} is out of range; allowed: more than 0 and at most 1 (a share)."
        )
    return x


def whole_in(name: str, value: object, lo: int, hi: int) -> int:
    """``value`` as an int in [lo, hi] (a whole number, not a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidParameterError(f"{name} must be a whole number, got {value!r}.")
    if not lo <= value <= hi:
        raise InvalidParameterError(f"{name} = {value} is out of range; allowed: {lo} to {hi}.")
    return int(value)


def batches(batch) -> np.ndarray:
    """Batch size(s): whole numbers in 1..MAX_BATCH, as a float array (scalar -> 0-d)."""
    arr = np.asarray(batch)
    if arr.dtype.kind not in "iu" or arr.size == 0:
        raise InvalidParameterError(f"batch size must be a whole number, got {batch!r}.")
    if np.any(arr < 1) or np.any(arr > MAX_BATCH):
        raise InvalidParameterError(f"batch size is out of range; allowed: 1 to {MAX_BATCH:,}.")
    return arr.astype(np.float64)


def check_context(context: object) -> int:
    """Context length n: whole tokens in 1..MAX_CONTEXT."""
    return whole_in("context length", context, 1, MAX_CONTEXT)


def check_tokens(new_tokens: object) -> float:
    """Tokens each sequence adds to a pass: 1 (a plain step) up to MAX_VERIFIED (a tree).

    A mean is allowed (1.6 when a lookup draft proposes 3 tokens in a fifth of the rounds).
    """
    return finite_in("tokens per sequence in one pass", new_tokens, 1.0, MAX_VERIFIED)


def check_k(k: object) -> int:
    return whole_in("K", k, 1, MAX_K)


def check_alpha(alpha: object) -> float:
    return finite_in("alpha", alpha, 0.0, 1.0, "(a probability)")
