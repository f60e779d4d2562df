"""WCAG 2 contrast of two colours written as "#RRGGBB" (for the tests of the pages' colours)."""

from __future__ import annotations


def luminance(colour: str) -> float:
    """Relative luminance of ``colour`` ("#RRGGBB"), WCAG 2's formula."""
    rgb = [int(colour.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    """Contrast ratio of ``a`` and ``b``, 1 (the same) to 21 (black on white)."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)
