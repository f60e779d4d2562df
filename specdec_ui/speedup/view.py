"""The Speedup explorer's sections, top to bottom (``pages/scripts/speedup.py`` calls them).

Each section draws from one :class:`Speed` (the student's alpha, K and costs with the
numbers the core gives for them); the presets are :data:`specdec_ui.presets.SPEED_PRESETS`,
the figures come from :mod:`specdec_ui.speedup.figures`, shared through
:func:`specdec_ui.runtime.figure_cache.shared_figure`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import streamlit as st

import specdec_core as sc
from specdec_ui import presets
from specdec_ui.kit.announce import announce_change
from specdec_ui.kit.page_state import PageState
from specdec_ui.kit.presenter import chart
from specdec_ui.kit.share import LinkReader
from specdec_ui.kit.tables import show_table
from specdec_ui.kit.text import md_escape
from specdec_ui.kit.widgets import download_csv, show_error
from specdec_ui.presets import CUSTOM, DEFAULT_SPEED_PRESET, MAX_COST, SpeedPreset
from specdec_ui.runtime.figure_cache import shared_figure
from specdec_ui.speedup import figures

PRESETS = presets.SPEED_PRESETS
OPTIONS = [CUSTOM, *PRESETS]
TABLE4_SHORT = {
    "paper expected": "expected",
    "paper measured": "measured",
    "formula - paper expected": "formula − expected",
}
# The ms-per-token table's short headers (a phone shows K, ms / token and speedup without
# a sideways swipe) and formats (kit.tables: a screen reader hears them as shown)
TIME_HEADERS = {
    "time per token": "ms / token",
    "speedup (x)": "speedup",
    "E[tokens per round]": "E[tokens]",
    "cost per round": "ms / round",
}
TIME_FORMATS = {"ms / token": "%.2f", "speedup": "%.2fx", "E[tokens]": "%.4f", "ms / round": "%.2f"}
TABLE4_FORMATS = {"alpha": "%.2f", "c": "%.2f", "formula": "%.1f", "expected": "%.1f"}
TABLE4_FORMATS |= {"measured": "%.1f", "formula − expected": "%+.1f"}
SPEEDUP_TOL = 1e-9  # a speedup within this of 1 is "no gain"
# The cost fields' step (ms). Their minimums (0 and 0.001) lie on this grid, so every cost
# the page takes (a multiple of 0.001 ms) passes the browser's step check (issue 33: with
# min 0.001 and step 1 every whole number read "invalid"); a finer cost is refused in words.
COST_STEP = 0.001
SHARE_CAPTION = (
    "Share these settings: add this to the page's address (the address bar already has it)."
)


# ----------------------------------------------------------------------------- link and state
def _cost(raw: str, *, name: str, positive: bool) -> float:
    """A link's step cost ``name`` in ms: >= 0 (> 0 if ``positive``), at most MAX_COST."""
    value = sc.parse_number(raw.strip(), name=name)
    if not (value > 0 if positive else value >= 0) or value > MAX_COST:
        rule = "> 0" if positive else ">= 0"
        raise ValueError(f"{value:g} is out of range; allowed: {rule} and at most {MAX_COST:g}")
    if (problem := cost_step_problem(name, value)) is not None:
        raise ValueError(problem)
    return value


def cost_step_problem(name: str, value: float) -> str | None:
    """The message for a cost finer than :data:`COST_STEP` (the fields' step), or None."""
    steps = value / COST_STEP
    if abs(steps - round(steps)) <= 1e-6:  # float noise of a cost on the grid
        return None
    return (
        f"{name}: {value:.10g} ms is finer than the field's step; type the time in steps of "
        f"{COST_STEP:g} ms (one microsecond), e.g. {round(value, 3):g}."
    )


def preset_values(key: str) -> dict[str, object] | None:
    """The widget values of preset ``key``; None for Custom."""
    preset = PRESETS.get(key)
    if preset is None:
        return None
    return {"alpha": preset.alpha, "k": preset.k, "c_q": preset.c_q, "c_p": preset.c_p}


def values_from_link(link: LinkReader) -> dict[str, object]:
    """The link's settings; a link that changes a preset's numbers opens as Custom."""
    preset = link.choice("preset", OPTIONS, DEFAULT_SPEED_PRESET)
    base = preset_values(preset) or preset_values(DEFAULT_SPEED_PRESET)
    values = {
        "alpha": link.probability("alpha", base["alpha"]),
        "k": link.int_in("k", 1, presets.SPEED_K_MAX, base["k"]),
        "c_q": link.get("c_q", partial(_cost, name="c_q", positive=False), base["c_q"]),
        "c_p": link.get("c_p", partial(_cost, name="c_p", positive=True), base["c_p"]),
    }
    return {"preset": preset if values == base else CUSTOM, **values}


def page_state() -> PageState:
    """The page's kept state; on a session's first visit, the settings from its link."""
    state = PageState(
        "speed", {"preset": DEFAULT_SPEED_PRESET, **preset_values(DEFAULT_SPEED_PRESET)}
    )
    if (link := state.first_visit()) is not None:
        state.start(values_from_link(link), link.problems)
    state.restore()
    return state


def inputs(state: PageState) -> None:
    """The preset picker, alpha, K and the two step costs (a change makes the preset Custom)."""
    to_custom = state.to_custom(CUSTOM)
    state.preset_select("Preset", OPTIONS, PRESETS, preset_values, custom=CUSTOM)
    alpha_col, k_col, c_q_col, c_p_col = st.columns(4)
    alpha_col.slider(
        "alpha: acceptance rate",
        0.0,
        1.0,
        step=0.01,
        key="speed_alpha",
        on_change=to_custom,
        help="alpha = sum_x min(p(x), q(x)): the chance that one drafted token is kept.",
    )
    k_col.slider(
        "K: draft tokens per round", 1, presets.SPEED_K_MAX, key="speed_k", on_change=to_custom
    )
    # "%g": the box shows what the link or the student typed (0.001, not "0.00")
    c_q_col.number_input(
        "c_q: time of one draft step (ms)",
        0.0,
        MAX_COST,
        step=COST_STEP,
        format="%g",
        key="speed_c_q",
        on_change=to_custom,
    )
    c_p_col.number_input(
        "c_p: time of one target pass (ms)",
        COST_STEP,
        MAX_COST,
        step=COST_STEP,
        format="%g",
        key="speed_c_p",
        on_change=to_custom,
    )


# ----------------------------------------------------------------------------- the numbers
@dataclass(frozen=True)
class Speed:
    """The student's settings and what the core says about them."""

    preset_key: str
    alpha: float
    k: int
    c_q: float  # ms per draft step
    c_p: float  # ms per target pass
    e_tokens: float  # E[tokens per round]
    speedup: float  # at this K
    ms_per_token: float  # at this K
    best_k: int  # in 1..SPEED_K_MAX
    best_speedup: float

    @property
    def preset(self) -> SpeedPreset | None:
        """The chosen preset; None for Custom."""
        return PRESETS.get(self.preset_key)


def speed(chosen: dict[str, object]) -> Speed:
    """The numbers of the kept values ``chosen``; a bad value is said in words and the page
    stops there."""
    alpha, k = float(chosen["alpha"]), int(chosen["k"])
    c_q, c_p = float(chosen["c_q"]), float(chosen["c_p"])
    for name, value in (("c_q", c_q), ("c_p", c_p)):
        if (problem := cost_step_problem(name, value)) is not None:
            show_error(problem)
            st.stop()
    try:
        best_k = sc.optimal_k(alpha, c_q, c_p, k_max=presets.SPEED_K_MAX)
        s = Speed(
            preset_key=str(chosen["preset"]),
            alpha=alpha,
            k=k,
            c_q=c_q,
            c_p=c_p,
            e_tokens=sc.expected_tokens(alpha, k),
            speedup=sc.speedup(alpha, k, c_q, c_p),
            ms_per_token=sc.time_per_token(alpha, k, c_q, c_p),
            best_k=best_k,
            best_speedup=sc.speedup(alpha, best_k, c_q, c_p),
        )
    except sc.SpecDecError as err:
        show_error(err)
        st.stop()
    announce_change("speed", (alpha, k, c_q, c_p), speed_words(s))
    return s


def _times(x: float) -> str:
    """A speedup as the page's metric shows it: "1.85x" ("< 0.01x" below)."""
    return f"{x:.2f}x" if x >= 0.01 else "< 0.01x"


def speed_words(s: Speed) -> str:
    """What the live region says after a change (the page's own numbers): "speedup 1.85x at
    K = 4 (alpha 0.70, c_q 5 ms, c_p 40 ms); best K = 5, 1.90x"."""
    return (
        f"Speedup {_times(s.speedup)} at K = {s.k} (alpha {s.alpha:.2f}, c_q {s.c_q:g} ms, "
        f"c_p {s.c_p:g} ms); best K = {s.best_k}, {_times(s.best_speedup)}."
    )


# ----------------------------------------------------------------------------- figures
def _heatmap_k_max(k: int) -> int:
    """The heatmap's largest K: 16, the range a student uses (K up to 64 squashed K <= 8
    into a strip), or the slider's whole range once K is beyond it (the mark stays on)."""
    return presets.SPEED_HEATMAP_K if k <= presets.SPEED_HEATMAP_K else presets.SPEED_K_MAX


def _fig_vs_k(s: Speed):
    """Speedup against K at this alpha, costs and K (shared)."""
    key = (s.alpha, s.c_q, s.c_p, s.k)
    return shared_figure(
        "speed.vs_k",
        key,
        lambda: figures.speedup_vs_k_figure(
            s.alpha, s.c_q, s.c_p, k_current=s.k, k_max=presets.SPEED_K_MAX
        ),
    )


def _fig_heatmap(s: Speed):
    """Speedup over alpha and K with the student's point marked (shared)."""
    k_max = _heatmap_k_max(s.k)
    key = (s.alpha, s.c_q, s.c_p, s.k, k_max)
    return shared_figure(
        "speed.heatmap",
        key,
        lambda: figures.speedup_heatmap_figure(s.c_q, s.c_p, k_max=k_max, current=(s.alpha, s.k)),
    )


def _curve_k(k: int) -> tuple[int, ...]:
    """The K of the curves against alpha: a few fixed ones and the student's."""
    return tuple(sorted(set(presets.CURVE_K) | {k}))


def _fig_expected(s: Speed):
    """E[tokens per round] against alpha for the curves' K (shared)."""
    curve_k = _curve_k(s.k)
    return shared_figure(
        "speed.expected",
        (curve_k, s.alpha),
        lambda: figures.expected_tokens_figure(curve_k, alpha_current=s.alpha),
    )


def _fig_vs_alpha(s: Speed):
    """Speedup against alpha for the curves' K (shared)."""
    curve_k = _curve_k(s.k)
    return shared_figure(
        "speed.vs_alpha",
        (s.c_q, s.c_p, curve_k, s.alpha),
        lambda: figures.speedup_vs_alpha_figure(s.c_q, s.c_p, curve_k, alpha_current=s.alpha),
    )


# ----------------------------------------------------------------------------- sections
def preset_note(s: Speed) -> None:
    """The chosen preset's source and lesson."""
    if s.preset is not None:
        st.info(
            f"**{md_escape(s.preset.label)}** ({md_escape(s.preset.source)}). "
            f"{md_escape(s.preset.lesson)}",
            icon="📌",
        )


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def readable(x: float) -> str:
    """A number a student reads at a glance: 0.125, 12.5, 1,250, 3.2 × 10⁶ (never 1e+06)."""
    if x == 0 or 1e-3 <= abs(x) < 1e3:
        return f"{x:.3g}"
    if 1e3 <= abs(x) < 1e5:
        return f"{x:,.0f}"
    exponent = int(np.floor(np.log10(abs(x))))
    mantissa = x / 10.0**exponent
    return f"{mantissa:.2g} × 10{str(exponent).translate(SUPERSCRIPT)}"


def _ms_delta(d: float) -> str:
    """The time per token's change, at most 4 digits with its unit ("-18.36 ms", "+1,442
    ms"): a longer one cut the words beside it to "vs targe…" (issue 25)."""
    if abs(d) < 100:
        return f"{d:+.2f} ms"
    if abs(d) < 1e5:
        return f"{d:+,.0f} ms"
    return ("-" if d < 0 else "+") + readable(abs(d)) + " ms"


def metrics(s: Speed) -> None:
    """The numbers of this alpha, K and costs (the time per token's column is the widest:
    its delta and the words "vs target alone" fit beside each other)."""
    cols = st.columns([2, 2, 3, 2, 2])
    cols[0].metric("c = c_q / c_p", readable(s.c_q / s.c_p))
    cols[1].metric("E[tokens per round]", f"{s.e_tokens:.3f}")
    cols[2].metric(
        "time per token (ms)",
        f"{s.ms_per_token:.2f}" if s.ms_per_token < 1e5 else readable(s.ms_per_token),
        _ms_delta(s.ms_per_token - s.c_p),
        delta_color="inverse",
        delta_description="vs target alone",
    )
    cols[3].metric(f"speedup at K = {s.k}", _times(s.speedup))
    at_max = s.best_k == presets.SPEED_K_MAX
    cols[4].metric(
        "best K",
        f"{s.best_k}",
        "the slider's maximum" if at_max else None,
        delta_color="off",
        delta_arrow="off",
        help=f"The K in 1..{presets.SPEED_K_MAX} with the largest speedup.",
    )
    st.caption(_block_words())


def _block_words() -> str:
    """E(alpha, K) is the token-by-token rule's; block verification's gain needs p and q
    (computed here for the labs' default pair at K = 4)."""
    pair = presets.LAB_PRESETS[presets.DEFAULT_LAB_PRESET]
    p, q = sc.parse_distribution(pair.p_text), sc.parse_distribution(pair.q_text)
    block, basic = (sc.RULES[name].expected(p, q, 4) for name in ("block_verification", "correct"))
    return (
        "E[tokens per round] here is the token-by-token rule's E(alpha, K). Block verification "
        "(Sun et al. 2024) decides the K drafts together and emits at least as many tokens "
        "per round from the same drafts, with the output still following p; how many more "
        "depends on p and q, not on alpha alone (the Losslessness and Variants labs compute "
        f"it: {block:.2f} against {basic:.2f} for their default pair at K = 4)."
    )


def _largest_k_note(s: Speed) -> str:
    """Why the best K is the slider's maximum, and where the speedup goes beyond it."""
    top = presets.SPEED_K_MAX
    limit = sc.speedup_limit(s.alpha, s.c_q, s.c_p)
    note = (
        f"K = {top} is the largest K offered (the slider's maximum), not a true optimum: "
        f"the speedup still grows at K = {top}. "
    )
    if s.alpha == 1 and s.c_q == 0:
        return note + (
            "With alpha = 1 and a free draft every round emits K + 1 tokens at no extra "
            "cost, so the speedup K + 1 grows without limit."
        )
    if s.alpha == 1:
        return note + (
            f"With alpha = 1 every round emits K + 1 tokens, but each draft step costs c = "
            f"c_q / c_p = {s.c_q / s.c_p:.3g} of a target pass: the speedup (K + 1) / (K c + 1) "
            f"creeps towards 1/c = {limit:.3g}x and never passes it "
            f"({s.best_speedup:.2f}x at K = {top})."
        )
    if s.c_q == 0:
        return note + (
            f"A free draft costs nothing, but a round emits at most 1 / (1 − alpha) = "
            f"{limit:.3g} tokens on average: the speedup creeps towards {limit:.3g}x."
        )
    return note + (
        "A longer draft would pay off a little more, until its extra steps cost more than "
        "the rarer long runs of kept tokens bring."
    )


def best_k(s: Speed) -> None:
    """The best K and its speedup, or "don't speculate" when no K helps."""
    with st.container(key="speed_optimum", border=True):
        if s.best_speedup > 1.0 + SPEEDUP_TOL:
            st.markdown(f"Best K = {s.best_k} (speedup {s.best_speedup:.2f}x)")
        else:  # alpha near 0 with a draft that costs time: every K is at best no gain
            st.markdown(
                f"Best K = {s.best_k} (speedup {s.best_speedup:.2f}x). **No K helps here: "
                "don't speculate.** Every K is "
                + ("no faster than" if s.best_speedup >= 1.0 - SPEEDUP_TOL else "slower than")
                + " the target alone, so run the target by itself."
            )
        if s.best_k == presets.SPEED_K_MAX:  # said where the eye is, beside the best K
            st.caption(_largest_k_note(s))


def _chart_pair(left: tuple, right: tuple, caption: str) -> None:
    """Two (figure, key) charts side by side (stacked on a phone) and their caption."""
    for column, (fig, key) in zip(st.columns(2), (left, right), strict=True):
        with column:
            chart(fig, key=key)
    st.caption(caption)


def charts_vs_k(s: Speed) -> None:
    """Speedup against K at this alpha, and the alpha-by-K heatmap."""
    _chart_pair(
        (_fig_vs_k(s), "speed_fig_k"),
        (_fig_heatmap(s), "speed_fig_heatmap"),
        "Left: speedup for every K at your alpha; the star is the best K. Right: the same "
        f"for every alpha (200 values) and K from 1 to {_heatmap_k_max(s.k)}; the yellow line "
        "follows the best K in that range.",
    )


def _formula(s: Speed) -> None:
    """E[tokens], the speedup and the time per token with the student's numbers."""
    alpha, k, c_q, c_p, e_tokens = s.alpha, s.k, s.c_q, s.c_p, s.e_tokens
    st.header("The formula, with your numbers")
    if alpha < 1:
        st.latex(
            rf"\mathbb{{E}}[\text{{tokens}}] = \frac{{1-\alpha^{{K+1}}}}{{1-\alpha}}"
            rf" = \frac{{1-{alpha:.2f}^{{{k + 1}}}}}{{1-{alpha:.2f}}} = {e_tokens:.3f}"
        )
    else:
        st.latex(rf"\alpha = 1:\ \mathbb{{E}}[\text{{tokens}}] = K + 1 = {e_tokens:.0f}")
    st.latex(
        rf"\text{{speedup}} = \frac{{c_p\,\mathbb{{E}}}}{{K c_q + c_p}}"
        rf" = \frac{{{c_p:g} \times {e_tokens:.3f}}}{{{k} \times {c_q:g} + {c_p:g}}}"
        rf" = {s.speedup:.3f}\times"
    )
    st.latex(
        rf"\text{{time per token}} = \frac{{K c_q + c_p}}{{\mathbb{{E}}}}"
        rf" = \frac{{{k * c_q + c_p:g}}}{{{e_tokens:.3f}}} = {s.ms_per_token:.2f}\ \text{{ms}}"
    )


def _plain_words(s: Speed) -> None:
    """The same round in words, and why a bigger K is not always better."""
    alpha, k, c_q, c_p = s.alpha, s.k, s.c_q, s.c_p
    st.header("In plain words")
    st.write(
        f"Each round the draft writes K = {k} tokens ({k} × {c_q:g} ms) and the target checks "
        f"them all in one pass ({c_p:g} ms): {k * c_q + c_p:g} ms per round. A drafted token is "
        f"kept with probability alpha = {alpha:.2f}, and the round stops at the first rejection, "
        f"so on average a round emits {s.e_tokens:.2f} tokens (at least 1: the resampled or "
        f"bonus token; at most K + 1 = {k + 1}). That is {s.ms_per_token:.2f} ms per token "
        f"against {c_p:g} ms for the target alone: **{s.speedup:.2f}x**."
    )
    st.write(
        "Bigger K is not always better: each extra draft token costs c_q every round, but it is "
        "only used if every token before it was kept (probability alpha to the power of its "
        "position), so the gain shrinks geometrically while the cost grows linearly."
    )


def formula_and_words(s: Speed) -> None:
    """The formulas with the student's numbers, beside the same in plain words."""
    left, right = st.columns(2)
    with left:
        _formula(s)
    with right:
        _plain_words(s)


# Which of Leviathan et al.'s tables holds what (checked against the paper, arXiv 2211.17192).
PAPER_TABLES = (
    "Which table holds what in Leviathan et al. 2023: **Table 2** holds the measured T5-XXL "
    "speedups with their K (the paper's γ) and α; **Table 3** the α of many draft and target "
    "pairs, including unigram and bigram drafts (α 0.03 to 0.23); **Table 4** (appendix A.3) "
    "puts the speedup the formula expects beside the measured one, with the c the authors "
    "estimated from profiles: the rows here."
)


def paper_check(s: Speed) -> None:
    """A preset from Leviathan et al.'s Table 4: the formula against the paper's numbers."""
    if s.preset is None or s.preset.paper is None:
        return
    row = s.preset.paper
    formula = sc.speedup(row["alpha"], row["k"], row["c"], 1.0)
    st.success(
        f"Leviathan et al. 2023, Table 4, expected against measured ({md_escape(row['task'])}, "
        f"{md_escape(row['draft'])} draft, temperature {row['temperature']}): alpha = "
        f"{row['alpha']}, K = {row['k']}, c = {row['c']}. The formula gives **{formula:.2f}x** "
        f"(rounded {formula:.1f}x); the paper's expected speedup is {row['expected']}x and its "
        f"measured one {row['measured']}x (also in its Table 2). The paper computed from "
        "unrounded alpha and c, so a few rows differ from the formula by 0.1.",
        icon="📄",
    )


def curves_vs_alpha(s: Speed) -> None:
    """E[tokens per round] and the speedup against alpha for a few K."""
    _chart_pair(
        (_fig_expected(s), "speed_fig_e"),
        (_fig_vs_alpha(s), "speed_fig_alpha"),
        f"As alpha → 1 a round always emits K + 1 tokens (the ceiling); as alpha → 0 it emits "
        f"one, and the speedup falls to the floor c_p / (K c_q + c_p) = "
        f"{s.c_p / (s.k * s.c_q + s.c_p):.3f} at K = {s.k}: below 1, a slowdown, whenever the "
        "draft costs anything.",
    )


def time_table(s: Speed) -> None:
    """Milliseconds per token for a few K (and this K, the best and the preset's), as CSV."""
    st.header("Milliseconds per token for several K")
    table_k = set(presets.TABLE_K) | {s.k, s.best_k} | set(s.preset.table_k if s.preset else ())
    table = figures.time_table(s.alpha, table_k, s.c_q, s.c_p)
    # The answers first, with short headers: a 390 px phone shows K, ms per token and
    # speedup without a sideways swipe (the table scrolls inside its own box for the rest).
    show_table(
        table.rename(columns=TIME_HEADERS),
        name=f"Milliseconds per token and speedup for each K, at alpha = {s.alpha:g}",
        formats=TIME_FORMATS,
    )
    st.caption(
        f"Target alone: {s.c_p:g} ms per token. Best in this table: K = "
        f"{int(table.loc[table['time per token'].idxmin(), 'K'])}."
    )
    download_csv(table, "ms_per_token.csv", key="speed_csv", label="Download this table (CSV)")


def published_table() -> None:
    """Leviathan et al.'s Table 4 beside the formula, folded."""
    with st.expander("Leviathan et al. 2023, Table 4: the formula's speedup against the measured"):
        # Short headers so all eleven columns fit the expander (the last one was cut off).
        show_table(
            figures.published_table().drop(columns="row").rename(columns=TABLE4_SHORT),
            name="Leviathan et al. 2023, Table 4: speedup by the formula, expected and measured",
            formats=TABLE4_FORMATS,
        )
        st.caption(
            "T5-XXL target on translation (EnDe) and summarisation (CNNDM). The formula "
            "column uses the paper's rounded alpha and c; the paper's expected column used "
            "unrounded values, so rows 5, 6 and 12 differ by 0.1. Measured speedups are "
            "sometimes higher than expected (acceptance is not uniform over a text) and "
            "sometimes lower (the verify pass is not free)."
        )
        st.caption(PAPER_TABLES)


ASSUMPTIONS = """
- **It assumes every draft token is kept independently with the same probability alpha**
  (the i.i.d. assumption of Leviathan et al. 2023). Real text is not like that: agreement is
  high on easy stretches (boilerplate, code syntax, copied names) and low on hard ones, and it
  changes with the position in the round and the context. Bursts of easy tokens make long
  accepted runs more likely than the formula says; that is one reason some measured speedups
  in Table 4 beat the expected ones.
- **It assumes the target checks K + 1 tokens for the price of one step** (c_p). That holds on
  a GPU running a large model, where a step is limited by reading the weights from memory, not
  by arithmetic. On a CPU with a tiny model, verifying K + 1 tokens costs noticeably more than
  one step, and the speedup shrinks or disappears.
- **It ignores overheads**: sampling, moving the KV cache back after a rejection, and batching
  effects. With many users per batch the GPU is busier and the extra verification work is no
  longer free.
- Where it holds, alpha measured on your own data and c measured on your own hardware give a
  good first estimate of the best K.
"""


def assumptions() -> None:
    """When the formula holds (and when it does not), folded."""
    with st.expander("When does this formula hold?", expanded=False):
        st.markdown(ASSUMPTIONS)


def share(state: PageState, s: Speed) -> None:
    """The settings into the address bar and on screen."""
    state.share(
        {
            "preset": s.preset_key,
            "alpha": f"{s.alpha:g}",
            "k": s.k,
            "c_q": f"{s.c_q:g}",
            "c_p": f"{s.c_p:g}",
        },
        caption=SHARE_CAPTION,
    )
