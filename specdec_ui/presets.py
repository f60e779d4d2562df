"""Presets and limits of the pages: one place, shared by the pages, their tests and benchmarks.

Figure modules only draw; what a page offers (worked examples, K ranges,
round counts, the test's significance level) is configured here, or, for limits that only
one page offers, in its room's ``limits.py`` (``specdec_ui/variants/limits.py``). A K limit
of a page (``*_K_MAX``) is set in one of these places only (``tests/ui/test_presets.py``
checks that no other module of ``specdec_ui`` sets one).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import specdec_core as sc

MAX_SEED = 2**32 - 1  # seeds a page accepts (numpy takes any non-negative integer)
CUSTOM = "custom"  # the preset key of "your own numbers" (speedup explorer and lab)

# ----------------------------------------------------------------------------- round page
ROUND_K_MAX = 8  # K offered by the round page (typed rounds and links)

# ----------------------------------------------------------------------------- speedup explorer
SPEED_K_MAX = 32  # K offered by the speedup page (slider, speedup-vs-K chart, optimum)
SPEED_HEATMAP_K = 16  # the heatmap's K range while the chosen K is within it (then K_MAX)
HEATMAP_K_MAX = 64  # the heatmap figure's K range when a caller names none
TABLE_K = (1, 2, 4, 8)  # K values always in the ms-per-token table
CURVE_K = (1, 2, 4, 8)  # K values of the curves versus alpha
MAX_COST = 1_000_000.0  # largest step cost (ms) a student may type


@dataclass(frozen=True)
class SpeedPreset:
    """Inputs of the speedup page: alpha, K, draft and target step costs."""

    key: str
    label: str
    alpha: float
    k: int
    c_q: float
    c_p: float
    source: str
    lesson: str = ""
    table_k: tuple[int, ...] = ()
    paper: dict | None = None  # a row of Leviathan et al. 2023 Table 4


def _speed_presets() -> dict[str, SpeedPreset]:
    out: dict[str, SpeedPreset] = {}
    h = sc.SCENARIOS["003-H"]
    out["003-H"] = SpeedPreset(
        "003-H",
        "A latency budget: pick K (alpha 0.7, 5 ms / 40 ms)",
        h.alpha,
        4,
        h.c_q,
        h.c_p,
        "the exercise sheet, Ex 8",
        h.lesson,
        h.k_values,
    )
    g = sc.SCENARIOS["003-G"]
    out["003-G"] = SpeedPreset(
        "003-G",
        "The ceiling: alpha = 1, a free draft, K = 4",
        g.alpha,
        g.k_values[0],
        g.c_q,
        g.c_p,
        "the exercise sheet, Ex 7",
        g.lesson,
        g.k_values,
    )
    for i, row in enumerate(sc.PUBLISHED_SPEEDUPS, start=1):
        key = f"table4-{i}"
        label = (  # Table 4 (appendix A.3): expected against measured, with c
            f"Leviathan et al. 2023, Table 4 (expected vs measured): {row['task']}, "
            f"{row['draft']} draft, T = {row['temperature']}"
        )
        # c = c_q / c_p; a target step of 100 time units makes c_q = 100 c.
        out[key] = SpeedPreset(
            key,
            label,
            row["alpha"],
            row["k"],
            round(100 * row["c"], 6),
            100.0,
            f"Leviathan et al. 2023, Table 4, row {i}",
            f"Only the ratio c = c_q / c_p = {row['c']} matters: entered as "
            f"c_q = {100 * row['c']:g} and c_p = 100 (a target step of 100 "
            "time units).",
            paper=dict(row),
            table_k=(row["k"],),
        )
    return out


SPEED_PRESETS: dict[str, SpeedPreset] = _speed_presets()
DEFAULT_SPEED_PRESET = "003-H"


# ----------------------------------------------------------------------------- losslessness lab
LAB_K_MAX = 8  # K offered by the lab (slider and links)
MIN_ROUNDS, MAX_ROUNDS_PAGE, DEFAULT_ROUNDS = 1_000, 500_000, 100_000
DEFAULT_K = 4
SIGNIFICANCE = 1e-3  # level of the lab's chi-square tests


@dataclass(frozen=True)
class LabPreset:
    """A target p and a draft q to test, with where they come from."""

    key: str
    label: str
    p_text: str
    q_text: str
    labels: tuple[str, ...]
    lesson: str


LAB_PRESETS: dict[str, LabPreset] = {
    p.key: p
    for p in (
        LabPreset(
            "000",
            "Worked example: p = [0.40, 0.25, 0.20, 0.10, 0.05]",
            "0.40, 0.25, 0.20, 0.10, 0.05",
            "0.30, 0.30, 0.15, 0.15, 0.10",
            ("A", "B", "C", "D", "E"),
            "The worked round's p and q: alpha = 0.85, a good draft.",
        ),
        LabPreset(
            "003-I",
            "An over-confident draft (Paris 0.9)",
            "0.40, 0.35, 0.25",
            "0.90, 0.05, 0.05",
            ("Paris", "London", "Rome"),
            "The draft puts 0.9 on the top token; alpha is only 0.5.",
        ),
        LabPreset(
            "003-D",
            "The target forbids a token",
            "0.50, 0.30, 0.20, 0",
            "0.20, 0.20, 0.20, 0.40",
            ("yes", "no", "maybe", "spam"),
            "'spam' has p = 0: it must never come out, however often the draft proposes it.",
        ),
        LabPreset(
            "close",
            "Teaching pair: a close draft (alpha = 0.95)",
            "0.35, 0.30, 0.20, 0.10, 0.05",
            "0.30, 0.30, 0.20, 0.10, 0.10",
            ("A", "B", "C", "D", "E"),
            "A draft that almost agrees: most rounds keep all K drafts.",
        ),
        LabPreset(
            "far",
            "Teaching pair: a poor draft (alpha = 0.20)",
            "0.05, 0.05, 0.10, 0.80",
            "0.80, 0.10, 0.05, 0.05",
            ("A", "B", "C", "D"),
            "A draft that mostly disagrees: most rounds emit one token, still from p.",
        ),
        LabPreset(
            "equal",
            "Teaching pair: a perfect draft (p = q, alpha = 1)",
            "0.40, 0.30, 0.20, 0.10",
            "0.40, 0.30, 0.20, 0.10",
            ("A", "B", "C", "D"),
            "Nothing is ever rejected: every round emits K + 1 tokens. Bugs in the "
            "rejection path cannot show here.",
        ),
    )
}
DEFAULT_LAB_PRESET = "000"


# ----------------------------------------------------------------------------- model pair lab
MODEL_PAIR_K_MAX = 8  # K offered by the Model pair lab (and measured by its cost profile)

# ----------------------------------------------------------------------------- serving lab
SERVING_K_MAX = 8  # K offered by the Serving lab's pages (the Model pair lab measures these)
SERVING_LOG_K_MAX = sc.MAX_METRIC_POSITIONS  # draft positions an engine's log may report


@dataclass(frozen=True)
class VariantPreset:
    """A variant, a target p and a draft q that make one point."""

    key: str
    label: str
    variant: str
    p_text: str
    q_text: str
    labels: tuple[str, ...]
    lesson: str
    m: int = 2
    widths_text: str = "2, 2"
    k: int = 3
    token: int = 0
    settings: dict = field(default_factory=dict)


VARIANT_PRESETS: dict[str, VariantPreset] = {
    p.key: p
    for p in (
        VariantPreset(
            "rescue",
            "Two candidates rescue a draft that one cannot",
            "multi_draft",
            "0.70, 0.30, 0, 0",
            "0.25, 0.25, 0.25, 0.25",
            ("the", "a", "cat", "dog"),
            "One candidate from the flat draft is kept only half the time (alpha = 0.5). After "
            "a rejection the target shrinks to its residual [0.9, 0.1, 0, 0], and a second "
            "candidate is kept with 0.35 more: beta_2 = 1 - 0.5 x 0.65 = 0.675.",
            m=2,
        ),
        VariantPreset(
            "disjoint",
            "More candidates stop helping once p and q are disjoint",
            "multi_draft",
            "0.30, 0.30, 0.40",
            "0.50, 0.50, 0",
            ("yes", "no", "maybe"),
            "The draft never proposes 'maybe'. After one rejection the residual is all on "
            "'maybe', which no candidate can ever be: beta_m = 0.6 for every m.",
            m=4,
        ),
        VariantPreset(
            "typical-flat",
            "Typical acceptance is faster and visibly biased on a flat p",
            "typical_acceptance",
            "0.20, 0.20, 0.20, 0.20, 0.20",
            "0.60, 0.10, 0.10, 0.10, 0.10",
            ("A", "B", "C", "D", "E"),
            "A flat p has a high entropy, so the threshold min(0.09, 0.3 exp(-H)) = 0.06 is low: "
            "every draft passes. Every round emits K + 1 tokens, but they follow q, not p: "
            "TV = 0.4.",
            k=3,
        ),
        VariantPreset(
            "tree",
            "A token tree: widths 2, 2 against a chain of 6 drafts",
            "tree",
            "0.50, 0.30, 0.20",
            "0.20, 0.20, 0.60",
            ("A", "B", "C"),
            "Each node tries its children with the multi-draft rule; the walk enters the kept "
            "child. Six drafted tokens in a tree of widths (2, 2) give fewer tokens per round "
            "than a chain of 6 when the draft is this good, more when it is poor.",
            widths_text="2, 2",
        ),
        VariantPreset(
            "lookup",
            "Prompt lookup: a draft without probabilities",
            "deterministic",
            "0.40, 0.25, 0.20, 0.10, 0.05",
            "0, 1, 0, 0, 0",
            ("A", "B", "C", "D", "E"),
            "The draft proposes B for sure (q one-hot): keep it with probability p(B) = 0.25, "
            "otherwise sample p with B removed. Same law as 'sample y ~ p, keep B iff y = B'.",
            token=1,
        ),
        VariantPreset(
            "strict",
            "Strict verification keeps fewer drafts, and stays lossless",
            "strict",
            "0.40, 0.25, 0.20, 0.10, 0.05",
            "0.30, 0.30, 0.15, 0.15, 0.10",
            ("A", "B", "C", "D", "E"),
            "The worked round's p and q. The probabilistic rule keeps a draft with "
            "alpha = sum min(p, q) = 0.85; strict verification only when the target's own "
            "sample equals it: beta = sum p q = 0.245. Both emit exactly p; strict gives far "
            "fewer tokens per round.",
        ),
    )
}
DEFAULT_VARIANT_PRESET = "rescue"
