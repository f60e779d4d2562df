"""The Losslessness lab's sections, top to bottom (``pages/scripts/losslessness.py`` calls them).

The page keeps its settings in a :class:`~specdec_ui.kit.page_state.PageState` (prefix
``lab``; the link's names are the setting names, with ``p`` and ``q`` for typed
distributions). :func:`applied_settings` gives the settings the results are for, and
:func:`simulate` turns them into a :class:`SimulatedRun` (the Monte Carlo and its two
chi-square tests, computed once per server by :mod:`specdec_ui.losslessness.work`). Every other
section draws one part of the page from that run: the inputs, the verdict and the link
here, the sections that explain the run in :mod:`specdec_ui.losslessness.explain` (they read
the rule's properties, never its name); figures come from
:mod:`specdec_ui.losslessness.figures`, each built once per server.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import streamlit as st

import specdec_core as sc
from specdec_core.errors import mismatch_message
from specdec_core.rules import BASIC_RULE, RULES, Rule, RuleKind, reference_rule, rules_of_kind
from specdec_ui import presets
from specdec_ui.classroom.pool_panel import pool_panel
from specdec_ui.kit.announce import announce, announce_change
from specdec_ui.kit.page_state import PageState
from specdec_ui.kit.share import LinkReader
from specdec_ui.kit.text import md_escape
from specdec_ui.kit.widgets import MAX_SEED, seed_control, show_error, show_source
from specdec_ui.losslessness import explain
from specdec_ui.losslessness.verdict import (
    shared_run,
    verdict_box,
    verdict_text,
)
from specdec_ui.words import rule_label, rule_words

PRESETS = presets.LAB_PRESETS
OPTIONS = [*PRESETS, presets.CUSTOM]
APPLIED = "lab__applied"  # session key: the settings the results on screen are for
LINK_NAMES = ("preset", "k", "rounds", "seed", "variant")  # in every link (+ p, q if typed)
SHARE_CAPTION = "Share this run: add this to the page's address (the address bar already has it)."
SOURCES = (sc.simulate_rounds, sc.losslessness_test)
LAB = "losslessness"  # the lab's name in a rule's ``labs``


def menu() -> list[str]:
    """The Algorithm menu: every rule of :data:`specdec_core.rules.RULES` this lab offers,
    exact, lossy by design or a bug, in the registry's order."""
    return [rule.name for rule in rules_of_kind(lab=LAB)]


@dataclass(frozen=True)
class SimulatedRun:
    """The applied settings, the p and q they name, and the simulation's results."""

    settings: dict[str, object]  # preset, p_text, q_text, k, rounds, seed, variant
    p_target: tuple[float, ...]
    q_draft: tuple[float, ...]
    labels: tuple[str, ...]
    preset: presets.LabPreset | None  # None: p and q were typed
    result: sc.SimulationResult
    report: sc.LosslessnessReport

    @property
    def typed(self) -> bool:
        """p and q came from a student's text: their shared figures expire."""
        return self.preset is None

    @property
    def kind(self) -> RuleKind | None:
        """The kind of the run's rule (exact, lossy by design, a bug); None if unknown."""
        rule = RULES.get(str(self.settings["variant"]))
        return None if rule is None else rule.kind

    @property
    def lossless(self) -> bool:
        """The run's rule is an exact one (its output must follow p)."""
        return self.kind is RuleKind.EXACT

    @property
    def rule(self) -> Rule:
        """The rule that ran."""
        return RULES[str(self.settings["variant"])]

    @property
    def reference(self) -> Rule:
        """The rule whose law the run is held to: the rule itself, or the rule a bug breaks."""
        return reference_rule(str(self.settings["variant"]))

    @property
    def emitted(self) -> np.ndarray | None:
        """(V,) the rule's exact law at one drafted position (None if it needs a q it
        cannot take, e.g. a one-hot q)."""
        try:
            return sc.emitted_distribution(
                str(self.settings["variant"]), self.p_target, self.q_draft
            )
        except sc.SpecDecError:
            return None

    @property
    def alpha(self) -> float:
        """alpha = sum min(p, q): the probabilistic rule's chance of keeping a draft."""
        return sc.acceptance_rate(self.p_target, self.q_draft)

    @property
    def key(self) -> tuple:
        """Everything the results depend on (the key of their shared figures)."""
        s = self.settings
        return (
            self.p_target,
            self.q_draft,
            self.labels,
            s["k"],
            s["rounds"],
            s["seed"],
            s["variant"],
        )


def variant_label(name: str) -> str:
    """The display name of a rule (its name if it has no words)."""
    return rule_label(name)


def _preset_values(key: str) -> dict[str, object] | None:
    preset = PRESETS.get(key)
    return None if preset is None else {"p_text": preset.p_text, "q_text": preset.q_text}


def _distribution_text(name: str):
    """A link parser: the raw text when it is a valid distribution (else the core's error)."""

    def parse(raw: str) -> str:
        sc.parse_distribution(raw, name=name)
        return raw

    return parse


def _values_from_link(link: LinkReader) -> dict[str, object]:
    """The link's run; typed p and q (of equal length) make it a custom run."""
    preset = link.choice("preset", OPTIONS, presets.DEFAULT_LAB_PRESET)
    base = _preset_values(preset) or _preset_values(presets.DEFAULT_LAB_PRESET)
    typed = {
        "p_text": link.get("p", _distribution_text("p"), None),
        "q_text": link.get("q", _distribution_text("q"), None),
    }
    pair = base
    if preset == presets.CUSTOM or any(v is not None for v in typed.values()):
        pair = {name: base[name] if v is None else v for name, v in typed.items()}
        preset = presets.CUSTOM
        if len(sc.parse_distribution(pair["p_text"])) != len(
            sc.parse_distribution(pair["q_text"], name="q")
        ):
            link.problems.append("link parameters 'p' and 'q' have different lengths")
            preset = presets.DEFAULT_LAB_PRESET
            pair = _preset_values(preset)
    return {
        "preset": preset,
        **pair,
        "k": link.int_in("k", 1, presets.LAB_K_MAX, presets.DEFAULT_K),
        "rounds": link.int_in(
            "rounds", presets.MIN_ROUNDS, presets.MAX_ROUNDS_PAGE, presets.DEFAULT_ROUNDS
        ),
        "seed": link.int_in("seed", 0, MAX_SEED, 0),
        "variant": link.choice("variant", menu(), BASIC_RULE),
    }


def page_state() -> PageState:
    """The page's kept state; on a session's first visit, the run its link names."""
    page = PageState(
        "lab",
        {
            "preset": presets.DEFAULT_LAB_PRESET,
            **_preset_values(presets.DEFAULT_LAB_PRESET),
            "k": presets.DEFAULT_K,
            "rounds": presets.DEFAULT_ROUNDS,
            "seed": 0,
            "variant": BASIC_RULE,
        },
    )
    if (link := page.first_visit()) is not None:
        page.start(_values_from_link(link), link.problems)
    page.restore()
    st.session_state.setdefault(APPLIED, None)
    return page


def inputs(page: PageState) -> bool:
    """p and q (preset or typed), K, rounds, seed, algorithm; True when they should run now."""
    to_custom = page.to_custom(presets.CUSTOM)
    left, right = st.columns(2)  # they stack on a phone
    with left:
        page.preset_select(
            "p and q",
            OPTIONS,
            PRESETS,
            _preset_values,
            custom=presets.CUSTOM,
            custom_label="Custom (type p and q)",
        )
        st.text_input(
            "Target p",
            key="lab_p_text",
            on_change=to_custom,
            max_chars=sc.MAX_TEXT_LENGTH,
            help="Numbers separated by commas: decimals (0.25), fractions (1/4) or "
            "percentages (25%). They must sum to 1.",
        )
        st.text_input(
            "Draft q",
            key="lab_q_text",
            on_change=to_custom,
            max_chars=sc.MAX_TEXT_LENGTH,
            help="Same number of entries as p.",
        )
    with right:
        st.slider("K: draft tokens per round", 1, presets.LAB_K_MAX, key="lab_k")
        # No browser bounds: an out-of-range number (-5 too) reaches the page and gets a
        # message naming it, not a red edge; step 1: every whole number passes the browser's
        # step check (issue 33).
        st.number_input(
            "Rounds to simulate",
            min_value=None,
            step=1,
            key="lab_rounds",
            help=f"{presets.MIN_ROUNDS:,} to {presets.MAX_ROUNDS_PAGE:,}. "
            "More rounds find smaller biases.",
        )
        seed_control("lab")
        st.selectbox("Algorithm", menu(), key="lab_variant", format_func=variant_label)
        auto = st.checkbox("Run automatically when a setting changes", value=True, key="lab_auto")
        clicked = st.button("▶ Run simulation", key="lab_run", type="primary")
    return auto or clicked


def _rounds_error(rounds: int) -> str | None:
    """The message for a number of rounds outside the page's range, or None when it is fine."""
    if presets.MIN_ROUNDS <= rounds <= presets.MAX_ROUNDS_PAGE:
        return None
    return (
        f"Rounds to simulate: {rounds:,} is out of range; allowed: {presets.MIN_ROUNDS:,} to "
        f"{presets.MAX_ROUNDS_PAGE:,}. Nothing was simulated for it."
    )


def applied_settings(page: PageState, run_now: bool) -> dict[str, object]:
    """The settings the results are for (the current ones when they run now), with notices."""
    current = page.keep()
    if (problem := _rounds_error(int(current["rounds"]))) is not None:
        last = st.session_state[APPLIED] or page.defaults
        show_error(problem)
        announce_change("lab_rounds_error", current["rounds"], problem)
        st.info(
            f"The results below are for the last valid number of rounds, {int(last['rounds']):,}.",
            icon="↩️",
        )
        current = {**current, "rounds": last["rounds"]}
    if run_now or st.session_state[APPLIED] is None:
        st.session_state[APPLIED] = dict(current)
    applied = st.session_state[APPLIED]
    if applied != current:
        st.info(
            "Settings changed: press **▶ Run simulation** to simulate them. The results below "
            "are for the previous settings.",
            icon="⏸️",
        )
    return applied


def _sentence_case(label: str) -> str:
    """The label with a capital first letter (the rest as written: "T = 0", "SpecInfer")."""
    return label[:1].upper() + label[1:]


def variant_note(applied: dict[str, object]) -> None:
    """Which algorithm ran (the correct one or a named bug), in words."""
    name = str(applied["variant"])
    st.info(
        f"**{md_escape(_sentence_case(variant_label(name).removeprefix('Bug: ')))}.** "
        f"{md_escape(rule_words(name).description)}",
        icon="🧬",
    )


def source_code(applied: dict[str, object] | None = None) -> None:
    """The core functions that ran, as source: the chosen rule first (its one-position
    step and the tables its Monte Carlo draws from, from :data:`specdec_core.rules.RULES`),
    then the simulation and the test (which only dispatch to the rule and count)."""
    rule = RULES.get(str(applied["variant"])) if applied else None
    own = () if rule is None else tuple(_unwrapped(f) for f in (rule.step, rule.tables))
    show_source(*own, *SOURCES)


def _unwrapped(fn):
    """The function a ``functools.partial`` calls (its source is the rule's)."""
    return fn.func if isinstance(fn, functools.partial) else fn


def _stop() -> None:
    """After a message: the source, then nothing else on the page."""
    source_code()
    st.stop()


def simulate(applied: dict[str, object]) -> SimulatedRun:
    """The shared simulation of ``applied``; a problem is said in words and the page stops."""
    try:
        p_target = sc.parse_distribution(applied["p_text"], name="p")
        q_draft = sc.parse_distribution(applied["q_text"], name="q")
        if p_target.size != q_draft.size:
            raise sc.InvalidDistributionError(mismatch_message(p_target.size, q_draft.size))
        preset = PRESETS.get(str(applied["preset"]))
        labels = preset.labels if preset is not None else sc.default_labels(p_target.size)
        p, q = tuple(p_target.tolist()), tuple(q_draft.tolist())
    except sc.SpecDecError as err:
        show_error(err)
        _stop()
    request = {"p_target": p, "q_draft": q, "variant": applied["variant"]}
    request |= {name: applied[name] for name in ("k", "rounds", "seed")}
    result, report = shared_run(request, typed=preset is None, stop=_stop)
    return SimulatedRun(
        settings=applied,
        p_target=p,
        q_draft=q,
        labels=tuple(labels),
        preset=preset,
        result=result,
        report=report,
    )


def preset_caption(run: SimulatedRun) -> None:
    """The preset's name and lesson (none for typed distributions)."""
    if run.preset is not None:
        st.caption(f"{md_escape(run.preset.label)}: {md_escape(run.preset.lesson)}")


def verdict(run: SimulatedRun) -> None:
    """The verdict box, a note on a bug that hides or only one test sees, and how the rule's
    keep chance (or its joint decision) compares with the token-by-token rule."""
    verdict_box(run.report, str(run.settings["variant"]), key="lab_verdict")
    if not announce_change("lab_run", run.key, run_words(run)) and st.session_state.get("lab_run"):
        announce(run_words(run))  # ▶ Run simulation on the same settings: said again
    if run.kind is RuleKind.BUG_OF and not run.rule.bonus:
        st.caption(
            "This bug is unbiased in tokens: the token test passes, only the tokens-per-round "
            "law catches it (rounds that kept every draft are one token short)."
        )
    elif run.kind is RuleKind.BUG_OF and run.report.passed:
        st.caption(
            "This bug did not show with these settings (e.g. p = q never rejects, so the "
            "rejection path never runs): try another pair of distributions or more rounds."
        )
    explain.keep_note(run)


def run_words(run: SimulatedRun) -> str:
    """What the live region says after a run: its size, rule, counts and verdict."""
    result = run.result
    return (
        f"Simulated {result.n_rounds:,} rounds of {variant_label(str(run.settings['variant']))}"
        f" with K = {result.k_drafts}: {int(result.emitted_counts.sum()):,} tokens emitted, "
        f"{result.mean_tokens_per_round:.2f} per round. {verdict_text(run.report)}"
    )


def share(page: PageState, applied: dict[str, object]) -> None:
    """The run's link (typed p and q travel in it) in the address bar and on screen."""
    params = {name: applied[name] for name in LINK_NAMES}
    if applied["preset"] == presets.CUSTOM:
        params |= {"p": applied["p_text"], "q": applied["q_text"]}
    page.share(params, caption=SHARE_CAPTION)


def class_pool() -> None:
    """A phone that joined a class on the Class page: add rounds of the class's experiment
    to its pool from here (nothing shows in a session with no seat)."""
    pool_panel()
