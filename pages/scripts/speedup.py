"""Speedup explorer: how alpha, K and the two step costs set the wall-clock speedup."""

from __future__ import annotations

import streamlit as st

import specdec_core as sc
from specdec_ui import figures_speedup as fs
from specdec_ui import presets
from specdec_ui.page_state import PageState
from specdec_ui.presenter import chart, page_heading, presenting
from specdec_ui.share import LinkReader
from specdec_ui.text import md_escape
from specdec_ui.widgets import download_csv, page_setup, show_error, show_source

PAGE = page_setup(__file__)

PRESETS = presets.SPEED_PRESETS
CUSTOM = presets.CUSTOM
OPTIONS = [CUSTOM, *PRESETS]
MAX_COST = presets.MAX_COST
TABLE4_SHORT = {
    "paper expected": "expected",
    "paper measured": "measured",
    "formula - paper expected": "formula − expected",
}
SPEEDUP_TOL = 1e-9  # a speedup within this of 1 is "no gain"


def _probability(raw: str) -> float:
    value = sc.parse_number(raw.strip(), name="alpha")
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{value:g} is out of range; alpha lies in [0, 1]")
    return value


def _cost(name: str, positive: bool):
    def parse(raw: str) -> float:
        value = sc.parse_number(raw.strip(), name=name)
        if not (value > 0 if positive else value >= 0) or value > MAX_COST:
            rule = "> 0" if positive else ">= 0"
            raise ValueError(f"{value:g} is out of range; allowed: {rule} and at most {MAX_COST:g}")
        return value

    return parse


# Figures are cached objects shared read-only by all sessions (st.plotly_chart only reads
# them): a cache hit saves the 2-8 ms each figure takes to build and validate.
@st.cache_resource(max_entries=64, show_spinner=False)
def _fig_vs_k(alpha: float, c_q: float, c_p: float, k: int):
    return fs.speedup_vs_k_figure(alpha, c_q, c_p, k_current=k, k_max=presets.SPEED_K_MAX)


def _heatmap_k_max(k: int) -> int:
    """The heatmap's largest K: 16, the range a student uses (K up to 64 squashed K <= 8
    into a strip), or the slider's whole range once K is beyond it (the mark stays on)."""
    return presets.SPEED_HEATMAP_K if k <= presets.SPEED_HEATMAP_K else presets.SPEED_K_MAX


@st.cache_resource(max_entries=64, show_spinner=False)
def _fig_heatmap(alpha: float, c_q: float, c_p: float, k: int):
    return fs.speedup_heatmap_figure(c_q, c_p, k_max=_heatmap_k_max(k), current=(alpha, k))


@st.cache_resource(max_entries=64, show_spinner=False)
def _fig_expected(curve_k: tuple[int, ...], alpha: float):
    return fs.expected_tokens_figure(curve_k, alpha_current=alpha)


@st.cache_resource(max_entries=64, show_spinner=False)
def _fig_vs_alpha(c_q: float, c_p: float, curve_k: tuple[int, ...], alpha: float):
    return fs.speedup_vs_alpha_figure(c_q, c_p, curve_k, alpha_current=alpha)


def _preset_values(key: str) -> dict[str, object] | None:
    preset = PRESETS.get(key)
    if preset is None:
        return None
    return {"alpha": preset.alpha, "k": preset.k, "c_q": preset.c_q, "c_p": preset.c_p}


def _values_from_link(link: LinkReader) -> dict[str, object]:
    """The link's settings; a link that changes a preset's numbers opens as Custom."""
    preset = link.choice("preset", OPTIONS, presets.DEFAULT_SPEED_PRESET)
    base = _preset_values(preset) or _preset_values(presets.DEFAULT_SPEED_PRESET)
    values = {
        "alpha": link.get("alpha", _probability, base["alpha"]),
        "k": link.int_in("k", 1, presets.SPEED_K_MAX, base["k"]),
        "c_q": link.get("c_q", _cost("c_q", positive=False), base["c_q"]),
        "c_p": link.get("c_p", _cost("c_p", positive=True), base["c_p"]),
    }
    return {"preset": preset if values == base else CUSTOM, **values}


state = PageState(
    "speed",
    {"preset": presets.DEFAULT_SPEED_PRESET, **_preset_values(presets.DEFAULT_SPEED_PRESET)},
)
if (link := state.first_visit()) is not None:
    state.start(_values_from_link(link), link.problems)
state.restore()
_to_custom = state.to_custom(CUSTOM)

PRESENTING = presenting()  # projector: the result and its chart first, explanations below

page_heading(
    PAGE,
    "A round costs K cheap draft steps plus **one** target pass, and emits between 1 and K + 1 "
    "tokens. Is that faster than one target pass per token? It depends on how often the "
    "target agrees with the draft (alpha), on K, and on how cheap the draft is.",
    presenting=PRESENTING,
)
state.warn_link()

# Inputs in the main column (a sidebar covers the charts on a phone; columns stack there),
# folded away in presenter view.
with st.expander("⚙️ Inputs: preset, alpha, K and the two costs", expanded=not PRESENTING):
    state.preset_select("Preset", OPTIONS, PRESETS, _preset_values, custom=CUSTOM)
    input_cols = st.columns(4)
    input_cols[0].slider(
        "alpha: acceptance rate",
        0.0,
        1.0,
        step=0.01,
        key="speed_alpha",
        on_change=_to_custom,
        help="alpha = sum_x min(p(x), q(x)): the chance that one drafted token is kept.",
    )
    input_cols[1].slider(
        "K: draft tokens per round", 1, presets.SPEED_K_MAX, key="speed_k", on_change=_to_custom
    )
    input_cols[2].number_input(
        "c_q: time of one draft step (ms)",
        0.0,
        MAX_COST,
        step=1.0,
        key="speed_c_q",
        on_change=_to_custom,
    )
    input_cols[3].number_input(
        "c_p: time of one target pass (ms)",
        0.001,
        MAX_COST,
        step=1.0,
        key="speed_c_p",
        on_change=_to_custom,
    )


chosen = state.keep()
alpha, k = float(chosen["alpha"]), int(chosen["k"])
c_q, c_p = float(chosen["c_q"]), float(chosen["c_p"])
preset_key = str(chosen["preset"])
preset = PRESETS.get(preset_key)

try:
    e_tokens = sc.expected_tokens(alpha, k)
    s_now = sc.speedup(alpha, k, c_q, c_p)
    t_now = sc.time_per_token(alpha, k, c_q, c_p)
    best_k = sc.optimal_k(alpha, c_q, c_p, k_max=presets.SPEED_K_MAX)
    s_best = sc.speedup(alpha, best_k, c_q, c_p)
except sc.SpecDecError as err:
    show_error(err)
    st.stop()


def _preset_note() -> None:
    """The chosen preset's source and lesson."""
    if preset is not None:
        st.info(
            f"**{md_escape(preset.label)}** ({md_escape(preset.source)}). "
            f"{md_escape(preset.lesson)}",
            icon="📌",
        )


def _charts_vs_k() -> None:
    """Speedup against K at this alpha, and the alpha-by-K heatmap."""
    a, b = st.columns(2)
    with a:
        chart(_fig_vs_k(alpha, c_q, c_p, k), key="speed_fig_k")
    with b:
        chart(_fig_heatmap(alpha, c_q, c_p, k), key="speed_fig_heatmap")
    st.caption(
        "Left: speedup for every K at your alpha; the star is the best K. Right: the same "
        f"for every alpha (200 values) and K from 1 to {_heatmap_k_max(k)}; the yellow line "
        "follows the best K in that range."
    )


def _metrics() -> None:
    """The numbers of this alpha, K and costs."""
    cols = st.columns(5)
    cols[0].metric("c = c_q / c_p", f"{c_q / c_p:.3g}")
    cols[1].metric("E[tokens per round]", f"{e_tokens:.3f}")
    cols[2].metric(
        "time per token (ms)",
        f"{t_now:.2f}",
        f"{t_now - c_p:+.2f} ms",  # short, with its unit: a long delta was cut to "alo…"
        delta_color="inverse",
        delta_description="vs target alone",
    )
    cols[3].metric(f"speedup at K = {k}", f"{s_now:.2f}x")
    at_max = best_k == presets.SPEED_K_MAX
    cols[4].metric(
        "best K",
        f"{best_k}",
        "the slider's maximum" if at_max else None,
        delta_color="off",
        delta_arrow="off",
        help=f"The K in 1..{presets.SPEED_K_MAX} with the largest speedup.",
    )


if not PRESENTING:  # presenter view: after the answer and its chart
    _preset_note()
    _metrics()


def _largest_k_note() -> str:
    """Why the best K is the slider's maximum, and where the speedup goes beyond it."""
    top = presets.SPEED_K_MAX
    limit = sc.speedup_limit(alpha, c_q, c_p)
    note = (
        f"K = {top} is the largest K offered (the slider's maximum), not a true optimum: "
        f"the speedup still grows at K = {top}. "
    )
    if alpha == 1 and c_q == 0:
        return note + (
            "With alpha = 1 and a free draft every round emits K + 1 tokens at no extra "
            "cost, so the speedup K + 1 grows without limit."
        )
    if alpha == 1:
        return note + (
            f"With alpha = 1 every round emits K + 1 tokens, but each draft step costs c = "
            f"c_q / c_p = {c_q / c_p:.3g} of a target pass: the speedup (K + 1) / (K c + 1) "
            f"creeps towards 1/c = {limit:.3g}x and never passes it ({s_best:.2f}x at K = {top})."
        )
    if c_q == 0:
        return note + (
            f"A free draft costs nothing, but a round emits at most 1 / (1 − alpha) = "
            f"{limit:.3g} tokens on average: the speedup creeps towards {limit:.3g}x."
        )
    return note + (
        "A longer draft would pay off a little more, until its extra steps cost more than "
        "the rarer long runs of kept tokens bring."
    )


with st.container(key="speed_optimum", border=True):
    if s_best > 1.0 + SPEEDUP_TOL:
        st.markdown(f"Best K = {best_k} (speedup {s_best:.2f}x)")
    else:  # alpha near 0 with a draft that costs time: every K is at best no gain
        st.markdown(
            f"Best K = {best_k} (speedup {s_best:.2f}x). **No K helps here: don't speculate.** "
            "Every K is "
            + ("no faster than" if s_best >= 1.0 - SPEEDUP_TOL else "slower than")
            + " the target alone, so run the target by itself."
        )
    if best_k == presets.SPEED_K_MAX:  # said where the eye is, beside the best K
        st.caption(_largest_k_note())
if PRESENTING:  # the answer and its chart in the first screen; the rest below
    _charts_vs_k()
    _metrics()
    _preset_note()

left, right = st.columns(2)
with left:
    st.subheader("The formula, with your numbers")
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
        rf" = {s_now:.3f}\times"
    )
    st.latex(
        rf"\text{{time per token}} = \frac{{K c_q + c_p}}{{\mathbb{{E}}}}"
        rf" = \frac{{{k * c_q + c_p:g}}}{{{e_tokens:.3f}}} = {t_now:.2f}\ \text{{ms}}"
    )
with right:
    st.subheader("In plain words")
    st.write(
        f"Each round the draft writes K = {k} tokens ({k} × {c_q:g} ms) and the target checks "
        f"them all in one pass ({c_p:g} ms): {k * c_q + c_p:g} ms per round. A drafted token is "
        f"kept with probability alpha = {alpha:.2f}, and the round stops at the first rejection, "
        f"so on average a round emits {e_tokens:.2f} tokens (at least 1: the resampled or bonus "
        f"token; at most K + 1 = {k + 1}). That is {t_now:.2f} ms per token against {c_p:g} ms "
        f"for the target alone: **{s_now:.2f}x**."
    )
    st.write(
        "Bigger K is not always better: each extra draft token costs c_q every round, but it is "
        "only used if every token before it was kept (probability alpha to the power of its "
        "position), so the gain shrinks geometrically while the cost grows linearly."
    )

if preset is not None and preset.paper is not None:
    row = preset.paper
    formula = sc.speedup(row["alpha"], row["k"], row["c"], 1.0)
    st.success(
        f"Leviathan et al. 2023, Table 4 ({md_escape(row['task'])}, {md_escape(row['draft'])} "
        f"draft, temperature {row['temperature']}): alpha = {row['alpha']}, K = {row['k']}, "
        f"c = {row['c']}. The formula gives **{formula:.2f}x** (rounded {formula:.1f}x); the "
        f"paper's expected speedup is {row['expected']}x and its measured one "
        f"{row['measured']}x. The paper computed from unrounded alpha and c, so a few rows "
        "differ from the formula by 0.1.",
        icon="📄",
    )

if not PRESENTING:
    _charts_vs_k()
curve_k = tuple(sorted(set(presets.CURVE_K) | {k}))
a, b = st.columns(2)
with a:
    chart(_fig_expected(curve_k, alpha), key="speed_fig_e")
with b:
    chart(_fig_vs_alpha(c_q, c_p, curve_k, alpha), key="speed_fig_alpha")
st.caption(
    f"As alpha → 1 a round always emits K + 1 tokens (the ceiling); as alpha → 0 it emits one, "
    f"and the speedup falls to the floor c_p / (K c_q + c_p) = {c_p / (k * c_q + c_p):.3f} at "
    f"K = {k}: below 1, a slowdown, whenever the draft costs anything."
)

st.subheader("Milliseconds per token for several K")
table_k = set(presets.TABLE_K) | {k, best_k} | set(preset.table_k if preset else ())
table = fs.time_table(alpha, table_k, c_q, c_p)
st.dataframe(
    table,
    hide_index=True,
    column_config={
        "cost per round": st.column_config.NumberColumn(format="%.2f ms"),
        "E[tokens per round]": st.column_config.NumberColumn(format="%.4f"),
        "time per token": st.column_config.NumberColumn(format="%.2f ms"),
        "speedup (x)": st.column_config.NumberColumn(format="%.2f"),
    },
)
st.caption(
    f"Target alone: {c_p:g} ms per token. Best in this table: K = "
    f"{int(table.loc[table['time per token'].idxmin(), 'K'])}."
)
download_csv(table, "ms_per_token.csv", key="speed_csv", label="Download this table (CSV)")

with st.expander("Leviathan et al. 2023, Table 4: the formula against the paper"):
    # Short headers so all eleven columns fit the expander (the last one was cut off).
    st.dataframe(
        fs.published_table().drop(columns="row").rename(columns=TABLE4_SHORT),
        hide_index=True,
        width="stretch",
    )
    st.caption(
        "T5-XXL target on translation (EnDe) and summarisation (CNNDM). The formula "
        "column uses the paper's rounded alpha and c; the paper's expected column used "
        "unrounded values, so rows 5, 6 and 12 differ by 0.1. Measured speedups are "
        "sometimes higher than expected (acceptance is not uniform over a text) and "
        "sometimes lower (the verify pass is not free)."
    )

with st.expander("When does this formula hold?", expanded=False):
    st.markdown(
        """
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
    )

state.share(
    {"preset": preset_key, "alpha": f"{alpha:g}", "k": k, "c_q": f"{c_q:g}", "c_p": f"{c_p:g}"},
    caption="Share these settings: add this to the page's address (the address bar already "
    "has it).",
)

show_source(sc.expected_tokens, sc.speedup, sc.optimal_k)
