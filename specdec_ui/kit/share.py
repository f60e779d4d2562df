"""Shareable links: read page state from ``st.query_params`` safely.

A link is user input: every value is checked, and a bad one gives a warning
that names the parameter, then falls back to the default, never a traceback.
Parsers from :mod:`specdec_core` do the checking, so links meet the same
limits as the widgets.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar
from urllib.parse import urlencode

from specdec_core import SpecDecError
from specdec_ui.kit.text import md_escape

T = TypeVar("T")
MAX_PARAM_LENGTH = 2_000


class LinkReader:
    """Collects parsed query parameters and the problems found in them."""

    def __init__(self, params: Mapping[str, str]):
        self.params = {str(k): str(v) for k, v in params.items()}
        self.problems: list[str] = []

    def get(self, name: str, parse: Callable[[str], T], default: T) -> T:
        """``parse(raw)`` or ``default`` (with a recorded problem) when it fails."""
        raw = self.params.get(name)
        if raw is None:
            return default
        if len(raw) > MAX_PARAM_LENGTH:
            self.problems.append(
                f"link parameter '{name}' is longer than {MAX_PARAM_LENGTH} characters"
            )
            return default
        try:
            return parse(raw)
        except (SpecDecError, ValueError, TypeError, OverflowError) as err:
            self.problems.append(f"link parameter '{name}': {err}")
            return default

    def int_in(self, name: str, lo: int, hi: int, default: int) -> int:
        """A whole number in [lo, hi]."""

        def parse(raw: str) -> int:
            if not raw.strip().isascii() or not raw.strip().lstrip("-").isdigit() or len(raw) > 12:
                raise ValueError(f"{raw[:20]!r} is not a whole number; allowed: {lo} to {hi}")
            value = int(raw)
            if not lo <= value <= hi:
                raise ValueError(f"{value} is out of range; allowed: {lo} to {hi}")
            return value

        return self.get(name, parse, default)

    def choice(self, name: str, choices: list[str] | tuple[str, ...], default: str) -> str:
        """One of ``choices``."""

        def parse(raw: str) -> str:
            if raw not in choices:
                raise ValueError(f"{raw[:40]!r} is not one of the allowed values")
            return raw

        return self.get(name, parse, default)

    def message(self) -> str:
        """Markdown-safe summary of the problems, or '' when the link was fine."""
        if not self.problems:
            return ""
        lines = "\n".join(f"- {md_escape(p)}" for p in self.problems)
        return f"Some settings in this link were not valid, so defaults are used instead:\n{lines}"


def share_query(values: Mapping[str, object]) -> str:
    """The ``?a=1&b=2`` part of a link that reopens the given state."""
    return "?" + urlencode({k: str(v) for k, v in values.items() if v is not None})
