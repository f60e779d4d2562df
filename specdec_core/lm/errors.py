"""Errors and limits of the language-model engine (all :class:`SpecDecError` subclasses)."""

from __future__ import annotations

from ..errors import InvalidParameterError, SpecDecError

MAX_PROMPT_CHARS = 400  # characters of a typed prompt
MAX_NEW_TOKENS = 400  # tokens one generate call may add


class PromptError(InvalidParameterError):
    """A prompt is empty, too long, or holds characters the tokenizer cannot encode."""


class ContextLengthError(InvalidParameterError):
    """Prompt + output + K + 1 does not fit a model's context window."""


class PairUnavailableError(SpecDecError):
    """A model pair is unknown or cannot be loaded here (missing files or packages)."""
