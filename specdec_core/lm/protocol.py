"""What every model of a pair implements, and what the page shows about a pair.

Kept apart from :mod:`.pairs` (the registry and loaders) so that the optional
Hugging Face adapter (:mod:`.hf`) and the registry both import it without importing
each other.

A model (draft or target) implements :class:`LanguageModel`: it holds the shared
tokenizer, feeds a block of m tokens in one call and returns m rows of next-token
logits (``extend``), keeps a cache of what it has read (``length``) and forgets rejected
positions (``rollback``). ``fresh()`` gives a runner with its own empty cache that shares
the read-only weights, so one loaded pair can serve many sessions at once.
``parallel_verify`` says whether scoring K+1 positions costs one target call (a
transformer) or K+1 (an n-gram model looks each position up on its own).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from .tokenizer import Tokenizer


@runtime_checkable
class LanguageModel(Protocol):
    name: str
    tokenizer: Tokenizer
    parallel_verify: bool

    @property
    def context_length(self) -> int: ...

    @property
    def length(self) -> int: ...

    def fresh(self) -> LanguageModel: ...

    def extend(self, tokens, *, last_only: bool = False) -> np.ndarray: ...

    def rollback(self, length: int) -> None: ...


@runtime_checkable
class Proposer(Protocol):
    """A draft without a model (prompt lookup): 0..k tokens per round, q one-hot on each.

    The engine calls ``propose(tokens, k)`` with every committed token instead of
    ``extend``; ``length`` stays 0 and ``rollback(0)`` does nothing.
    """

    name: str
    tokenizer: Tokenizer

    @property
    def context_length(self) -> int: ...

    @property
    def length(self) -> int: ...

    def fresh(self) -> Proposer: ...

    def rollback(self, length: int) -> None: ...

    def propose(self, tokens, k: int) -> list[int]: ...


@dataclass(frozen=True)
class PairInfo:
    """A model pair as the page lists it: its id and the names of its models (what the
    pair does and why, in words, is the page's: ``specdec_ui/model_pairs/words.py``)."""

    name: str  # the id passed to load_pair
    label: str  # what the page shows
    draft: str
    target: str
    hugging_face: bool = False  # models from the local Hugging Face cache (see .hf)
