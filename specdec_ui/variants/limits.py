"""The Variants lab's own limits: only this page offers them (CONTRIBUTING's "A new page":
a page's limits live in its room's ``limits.py``; ``specdec_ui/presets.py`` keeps the presets
and the limits that several pages share). ``tests/ui/test_presets.py`` checks that a K limit is
set in one of these two places only, and within what the core accepts.
"""

from __future__ import annotations

VARIANT_MIN_ROUNDS, VARIANT_MAX_ROUNDS, VARIANT_DEFAULT_ROUNDS = 1_000, 300_000, 50_000
VARIANT_M_MAX = 8  # candidates per position the Variants lab offers
VARIANT_K_MAX = 8  # positions per round of its Monte Carlo
