"""Shareable links: read page state from ``st.query_params`` safely.

A link is user input: every value is checked, and a bad one gives a warning
that names the parameter, then falls back to the default, never a traceback.
Parsers from :mod:`specdec_core` do the checking, so links meet the same
limits as the widgets. The readers every page shares live here: a whole number in a range
(:meth:`LinkReader.int_in`), a probability (:meth:`LinkReader.probability`, parsed by
:func:`probability`) and one of a list of choices (:meth:`LinkReader.choice`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar
from urllib.parse import urlencode

import specdec_core as sc
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

    def probability(self, name: str, default: float, *, zero: bool = True) -> float:
        """A probability in [0, 1] ((0, 1] when ``zero`` is False), see :func:`probability`."""
        return self.get(name, lambda raw: probability(raw, name=name, zero=zero), default)

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


def probability(raw: str, *, name: str, zero: bool = True) -> float:
    """A link's probability ``name``: a number in [0, 1], or in (0, 1] when ``zero`` is False,
    written as a decimal, a fraction or a percentage (``sc.parse_number``)."""
    value = sc.parse_number(raw.strip(), name=name)
    if not (0.0 <= value if zero else 0.0 < value) or value > 1.0:
        allowed = "[0, 1]" if zero else "(0, 1]"
        raise ValueError(f"{value:g} is out of range; {name} is a probability in {allowed}")
    return value


def share_query(values: Mapping[str, object]) -> str:
    """The ``?a=1&b=2`` part of a link that reopens the given state."""
    return "?" + urlencode({k: str(v) for k, v in values.items() if v is not None})
