"""The Variants lab's sections, top to bottom (``pages/scripts/variants.py`` calls them).

Every rule comes from :data:`specdec_core.rules.RULES` (its menu:
:func:`specdec_ui.variants.table.menu`), and is shown by its row
(:func:`specdec_ui.variants.table.row`); the sections read the rule and its row and never
branch on its name. The verdict, its tests and the CSV are the Losslessness lab's
(:mod:`specdec_ui.losslessness.verdict`).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

import specdec_core as sc
from specdec_core import variants as vr
from specdec_core import variants_tree as vt
from specdec_core.engine_metrics import metrics_from_accepted_histogram
from specdec_core.errors import mismatch_message
from specdec_core.rules import RULES
from specdec_ui import presets
from specdec_ui.kit.engine_view import engine_panel
from specdec_ui.kit.page_state import PageState
from specdec_ui.kit.presenter import chart, presenting
from specdec_ui.kit.share import LinkReader
from specdec_ui.kit.stepper import StepLabels, stepper, steps_below
from specdec_ui.kit.text import md_escape
from specdec_ui.kit.widgets import MAX_SEED, seed_control, show_error
from specdec_ui.losslessness import figures as losslessness_figures
from specdec_ui.losslessness.verdict import download_results, shared_run, verdict_box
from specdec_ui.variants import limits, table
from specdec_ui.variants.table import Inputs
from specdec_ui.words import rule_title, rule_words

PRESETS = presets.VARIANT_PRESETS
OPTIONS = [*PRESETS, presets.CUSTOM]
STEP = "var__step"  # index of the decision on screen
SIGNATURE = "var__signature"  # what the stepped example was drawn from
HIDDEN_BUG_TV = 1e-9  # a bug whose exact law is this close to p cannot be seen by any test
INTRO = (
    "Real systems go beyond one draft per position: several candidates, token trees, drafts "
    "without probabilities, a stricter check, and rules that trade exactness for speed. "
    "Step through each rule one decision at a time, then test it with the same chi-square "
    "test as the Losslessness lab."
)


# ----------------------------------------------------------------------------- state and link
def _checked(parse):
    """A link parser that keeps the raw text once ``parse`` accepts it."""

    def check(raw: str) -> str:
        parse(raw)
        return raw

    return check


def preset_values(key: str) -> dict[str, object] | None:
    """The widget values a preset sets (None for Custom)."""
    preset = PRESETS.get(key)
    if preset is None:
        return None
    return {
        "variant": preset.variant,
        "p_text": preset.p_text,
        "q_text": preset.q_text,
        "m": preset.m,
        "widths": preset.widths_text,
        "token": preset.token,
        "k": preset.k,
        "broken": False,
    }


def _values_from_link(link: LinkReader) -> dict[str, object]:
    """The link's run; typed p or q make it a custom run."""
    preset_key = link.choice("preset", OPTIONS, presets.DEFAULT_VARIANT_PRESET)
    base = preset_values(preset_key) or preset_values(presets.DEFAULT_VARIANT_PRESET)
    p_text = link.get("p", _checked(lambda r: sc.parse_distribution(r, name="p")), None)
    q_text = link.get("q", _checked(lambda r: sc.parse_distribution(r, name="q")), None)
    if p_text is not None or q_text is not None:
        preset_key = presets.CUSTOM
    rounds = (limits.VARIANT_MIN_ROUNDS, limits.VARIANT_MAX_ROUNDS)
    return {
        "preset": preset_key,
        "variant": link.choice("variant", table.menu(), base["variant"]),
        "p_text": p_text if p_text is not None else base["p_text"],
        "q_text": q_text if q_text is not None else base["q_text"],
        "m": link.int_in("m", 1, limits.VARIANT_M_MAX, base["m"]),
        "widths": link.get("widths", _checked(vt.parse_branching), base["widths"]),
        "token": link.int_in("token", 0, sc.MAX_TYPED_ENTRIES - 1, base["token"]),
        "k": link.int_in("k", 1, limits.VARIANT_K_MAX, base["k"]),
        "rounds": link.int_in("rounds", *rounds, limits.VARIANT_DEFAULT_ROUNDS),
        "seed": link.int_in("seed", 0, MAX_SEED, 0),
        "epsilon": link.probability("epsilon", vr.MEDUSA_EPSILON, zero=False),
        "delta": link.probability("delta", vr.MEDUSA_DELTA, zero=False),
        "broken": link.choice("broken", ["0", "1"], "0") == "1",
    }


def page_state() -> PageState:
    """The page's kept state; on a session's first visit, the settings from its link."""
    state = PageState(
        "var",
        {
            "preset": presets.DEFAULT_VARIANT_PRESET,
            **preset_values(presets.DEFAULT_VARIANT_PRESET),
            "rounds": limits.VARIANT_DEFAULT_ROUNDS,
            "seed": 0,
            "epsilon": vr.MEDUSA_EPSILON,
            "delta": vr.MEDUSA_DELTA,
            "broken": False,
        },
    )
    if (link := state.first_visit()) is not None:
        state.start(_values_from_link(link), link.problems)
    state.restore()
    return state


# ----------------------------------------------------------------------------- inputs
def inputs(state: PageState) -> None:
    """The preset, the variant, p and q, and each variant's own settings."""
    to_custom = state.to_custom(presets.CUSTOM)
    in_left, in_right = st.columns(2)
    with in_left:
        st.selectbox(
            "Preset",
            OPTIONS,
            key="var_preset",
            on_change=state.apply_preset(preset_values),
            format_func=lambda k: "Custom" if k == presets.CUSTOM else PRESETS[k].label,
        )
        st.selectbox(
            "Variant",
            table.menu(),
            key="var_variant",
            format_func=rule_title,
            on_change=to_custom,
        )
        row = table.row(st.session_state["var_variant"])
        st.text_input(
            "Target p", key="var_p_text", on_change=to_custom, max_chars=sc.MAX_TEXT_LENGTH
        )
        if row.uses_q:
            st.text_input(
                "Draft q", key="var_q_text", on_change=to_custom, max_chars=sc.MAX_TEXT_LENGTH
            )
    with in_right:
        _variant_inputs(st.session_state["var_variant"], to_custom)
        if row.uses_k:
            st.slider("K: positions per round (Monte Carlo)", 1, limits.VARIANT_K_MAX, key="var_k")
        st.number_input(
            "Rounds to simulate",
            limits.VARIANT_MIN_ROUNDS,
            limits.VARIANT_MAX_ROUNDS,
            step=limits.VARIANT_MIN_ROUNDS,  # min + n * step: the browser reads 50,000 as valid
            key="var_rounds",
        )
        seed_control("var")


def _variant_inputs(variant: str, to_custom) -> None:
    """The inputs only some rules have (candidates, tree widths, the draft token, ...), as
    the rule's row names them, and its "Break it" checkbox when it has a bug."""
    own = table.row(variant).inputs
    if "m" in own:
        st.slider(
            "m: candidates per position", 1, limits.VARIANT_M_MAX, key="var_m", on_change=to_custom
        )
    if "widths" in own:
        st.text_input(
            "Tree widths per level",
            key="var_widths",
            on_change=to_custom,
            max_chars=40,
            help="Children per node at each level, e.g. 3, 2: three children of the root, two "
            "under each. 1 to 4 levels, 1 to 4 children.",
        )
    if "token" in own:
        st.number_input(
            "Draft token (its index, from 0)",
            0,
            sc.MAX_TYPED_ENTRIES - 1,
            key="var_token",
            on_change=to_custom,
            help="Prompt lookup proposes this token for sure: q is one-hot on it.",
        )
    if "typical" in own:
        st.number_input("epsilon (hard threshold)", 0.01, 1.0, step=0.01, key="var_epsilon")
        st.number_input("delta (entropy factor)", 0.01, 1.0, step=0.01, key="var_delta")
    if (bug := table.bug_of(variant)) is not None:
        words = rule_words(bug.name)
        label = words.break_it or f"Break it: {words.label.removeprefix('Bug: ')}"
        st.checkbox(label, key="var_broken", help=words.break_help or None)


def parse(current: dict) -> Inputs:
    """The kept widget values as checked inputs (raises SpecDecError on bad input)."""
    row = table.row(current["variant"])
    preset = PRESETS.get(current["preset"])
    p_target = sc.parse_distribution(current["p_text"], name="p")
    labels = preset.labels if preset is not None else sc.default_labels(p_target.size)
    if len(labels) != p_target.size:
        labels = sc.default_labels(p_target.size)
    if row.uses_q:
        q_draft = sc.parse_distribution(current["q_text"], name="q")
        if q_draft.size != p_target.size:
            raise sc.InvalidDistributionError(mismatch_message(p_target.size, q_draft.size))
    elif not 0 <= current["token"] < p_target.size:
        raise sc.InvalidParameterError(
            f"draft token {current['token']} does not exist; p has tokens 0 to {p_target.size - 1}."
        )
    else:
        q_draft = vr.one_hot(p_target.size, current["token"])
    return Inputs(
        variant=current["variant"],
        p_target=p_target,
        q_draft=q_draft,
        labels=tuple(labels),
        m=int(current["m"]),
        widths=vt.parse_branching(current["widths"]) if "widths" in row.inputs else None,
        token=int(current["token"]),
        k=int(current["k"]),
        epsilon=float(current["epsilon"]),
        delta=float(current["delta"]),
        broken=bool(current["broken"]) and table.bug_of(current["variant"]) is not None,
        seed=int(current["seed"]),
        rounds=int(current["rounds"]),
    )


def preset_lesson(current: dict) -> None:
    """The chosen preset's point, in one box."""
    preset = PRESETS.get(current["preset"])
    if preset is None:
        return
    if preset.variant == current["variant"]:
        st.info(f"**{md_escape(preset.label)}.** {md_escape(preset.lesson)}", icon="💡")
    else:  # its lesson is about another rule: say whose p and q these are
        st.caption(
            f"p and q of the preset “{md_escape(preset.label)}”, made for "
            f"{md_escape(rule_title(preset.variant))}; shown here with "
            f"{md_escape(rule_title(current['variant']))}."
        )


# ----------------------------------------------------------------------------- 1. stepping
PRESENTER_STEP_HEIGHT = 390  # px: the step's chart beside its words in a projector's first screen


def step_through(inp: Inputs) -> None:
    """One example of the rule, one decision per click: its words beside its figure (in
    one screen of a projector; stacked on a phone, with Back / Next again under it)."""
    st.header("Step through one decision at a time")
    row = table.row(inp.variant)
    if st.session_state.get(SIGNATURE) != inp.signature():
        st.session_state[SIGNATURE] = inp.signature()
        st.session_state[STEP] = 0
    try:
        example = row.example(inp, np.random.default_rng(inp.seed))
    except sc.SpecDecError as err:
        show_error(err)
        st.stop()
    n_steps = row.n_steps(example)
    shown, rest = stepper("var", STEP, 0, n_steps - 1, labels=StepLabels(first="⏮ Start over"))
    rest.progress((shown + 1) / n_steps, text=f"Decision {shown + 1} of {n_steps}")
    view = row.step(inp, example, shown)
    words, picture = st.columns([2, 3])
    with words, st.container(key="var_decision"):
        if view.caption:
            st.caption(md_escape(view.caption))
        st.markdown("\n".join(f"{i + 1}. {md_escape(line)}" for i, line in enumerate(view.lines)))
    with picture:
        chart(_step_figure(view.figure), key="var_fig_step")
    steps_below("var", STEP, 0, n_steps - 1)


def _step_figure(figure):
    """The step's figure; in presenter view no taller than the first screen has room for
    (a copy: the figure may be shared)."""
    if not presenting() or (figure.layout.height or 0) <= PRESENTER_STEP_HEIGHT:
        return figure
    return go.Figure(figure).update_layout(height=PRESENTER_STEP_HEIGHT)


# ----------------------------------------------------------------------------- 2. many rounds
def simulate(inp: Inputs):
    """The shared Monte Carlo of the rule (or its bug): (result, report, simulation)."""
    sim = table.simulation(inp)
    request = {
        "p_target": tuple(inp.p_target.tolist()),
        "q_draft": tuple(inp.q_draft.tolist()),
        "k": sim.k,
        "rounds": inp.rounds,
        "seed": inp.seed,
        "variant": sim.variant,
        "options": tuple(sim.options.items()),
    }
    result, report = shared_run(request, typed=True, stop=st.stop)  # typed: the result expires
    return result, report, sim


def verdict(inp: Inputs, result, report, sim) -> None:
    """PASS or FAIL of the two chi-square tests (the Losslessness lab's verdict), the
    tokens-per-round numbers and the charts."""
    st.header("Many rounds: does the output follow p?")
    if inp.broken:
        words = rule_words(sim.variant)
        what = (words.break_it or words.label).removeprefix("Break it: ").removeprefix("Bug: ")
        st.caption(
            f"Broken on purpose ({md_escape(what)}). The stepper "
            "above shows the correct rule; the broken one runs here."
        )
        if not RULES[sim.variant].position_law_broken:  # it shows over a round, if at all
            if report.passed and words.hidden:
                st.info(words.hidden, icon="🔍")
        elif vr.total_variation(table.emitted(inp), inp.p_target) < HIDDEN_BUG_TV:
            hidden = "With these p and q the bug changes nothing a test could see: its exact "
            st.info(" ".join(filter(None, [hidden + "output law is p.", words.hidden])), icon="🔍")
    verdict_box(report, sim.variant, key="var_verdict")
    _round_metrics(inp, result, sim)
    left, right = st.columns(2)
    with left:
        chart(losslessness_figures.token_histogram_figure(result, inp.labels), key="var_fig_tokens")
    with right:
        chart(losslessness_figures.tokens_per_round_figure(result), key="var_fig_rounds")


def _round_metrics(inp: Inputs, result, sim) -> None:
    ours, basic, drafted = table.expected(inp)
    tv = vr.total_variation(table.emitted(inp), inp.p_target)
    a, b, c, d = st.columns(4)
    a.metric("tokens per round (simulated)", f"{result.mean_tokens_per_round:.3f}")
    b.metric(
        "tokens per round (exact, correct rule)" if inp.broken else "tokens per round (exact)",
        f"{ours:.3f}",
        help="The correct rule's exact value: the broken run beside it is not held to it."
        if inp.broken
        else None,
    )
    c.metric(
        "basic rule, as many drafts",
        f"{basic:.3f}",
        help=f"One candidate per position; {drafted} drafted tokens per round.",
    )
    d.metric(
        "TV(emitted, p) at one position, exact",
        f"{tv:.3f}",
        help="The exact law of the token emitted at one drafted position, against p; "
        "0 for a lossless rule.",
    )
    if (note := table.row(inp.variant).note) is not None:
        st.caption(note(inp, result))  # the row's own words and numbers: no user text


def engine_numbers(inp: Inputs, result, sim) -> None:
    """The same run in the numbers a serving engine prints."""
    st.header("The same rounds as an engine would log them")
    about = f"your {result.n_rounds:,} simulated rounds ({sim.k} positions each)"
    metrics = metrics_from_accepted_histogram(result.n_accepted_counts)
    engine_panel(metrics, key="var_engine", about=about)
    if not table.lossless(inp.variant) or inp.broken:
        st.caption(
            "These numbers only count kept drafts: they cannot tell whether the output follows "
            "p. A lossy or broken rule can print a fine acceptance length; the chi-square test "
            "above is what checks the output."
        )


# ----------------------------------------------------------------------------- 3. compare
def compare(inp: Inputs) -> None:
    """Tokens per round against the number of candidates (or K, or the tree's width)."""
    st.header("Tokens per round against the number of candidates")
    figure, caption = table.row(inp.variant).compare(inp)
    chart(figure, key="var_fig_compare")
    if caption:
        st.caption(md_escape(caption))


def downloads(inp: Inputs, result, sim) -> None:
    """The run as a CSV (tokens, rounds by length, the settings on every row)."""
    settings = {
        "variant": inp.variant,
        "simulated as": sim.variant,
        "K": sim.k,
        "rounds simulated": result.n_rounds,
        "seed": inp.seed,
        **{name: str(value) for name, value in sim.options.items()},
    }
    download_results(
        result, inp.labels, table.emitted(inp), settings, filename="variants_lab.csv", key="var_csv"
    )


def share(state: PageState, current: dict) -> None:
    """The page's link (typed p and q only for a custom run)."""
    values = {
        name: current[name]
        for name in ("preset", "variant", "m", "widths", "token", "k", "rounds", "seed")
    }
    values |= {
        "epsilon": current["epsilon"],
        "delta": current["delta"],
        "broken": int(bool(current["broken"])),
    }
    if current["preset"] == presets.CUSTOM:
        values |= {"p": current["p_text"], "q": current["q_text"]}
    state.share(values)
