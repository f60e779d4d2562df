"""The Losslessness lab's sections, top to bottom (``pages/scripts/losslessness.py`` calls them).

The page keeps its settings in a :class:`~specdec_ui.kit.page_state.PageState` (prefix
``lab``; the link's names are the setting names, with ``p`` and ``q`` for typed
distributions). :func:`applied_settings` gives the settings the results are for, and
:func:`simulate` turns them into a :class:`SimulatedRun` (the Monte Carlo and its two
chi-square tests, computed once per server by :mod:`specdec_ui.losslessness.work`). Every other
section draws one part of the page from that run; its figures come from
:mod:`specdec_ui.losslessness.figures`, each built once per server (:func:`shared_figure`), and the
engines' numbers from :func:`specdec_ui.kit.engine_view.engine_panel`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import streamlit as st

import specdec_core as sc
from specdec_core import variants as vr
from specdec_core.errors import mismatch_message
from specdec_core.rules import RULES, RuleKind, reference_rule, rules_of_kind
from specdec_ui import presets
from specdec_ui.classroom.pool_panel import pool_panel
from specdec_ui.kit.announce import announce, announce_change
from specdec_ui.kit.engine_view import engine_panel
from specdec_ui.kit.page_state import PageState
from specdec_ui.kit.presenter import chart
from specdec_ui.kit.share import LinkReader
from specdec_ui.kit.tables import show_table
from specdec_ui.kit.text import md_escape
from specdec_ui.kit.widgets import MAX_SEED, seed_control, show_error, show_source
from specdec_ui.losslessness import figures
from specdec_ui.losslessness.verdict import (
    NOTHING_TO_TEST,
    download_results,
    length_words,
    p_value_latex,
    shared_run,
    verdict_box,
    verdict_text,
)
from specdec_ui.runtime.figure_cache import shared_figure
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
    def strict(self) -> bool:
        """Strict verification: keep x iff x == y ~ p (the bug of that rule too)."""
        rule = RULES.get(str(self.settings["variant"]))
        return rule is not None and rule.keep_rule == "strict"

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
    def beta(self) -> float:
        """beta = sum p q: strict verification's chance of keeping a draft."""
        return vr.strict_acceptance(self.p_target, self.q_draft)

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
        "variant": link.choice("variant", menu(), "correct"),
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
            "variant": "correct",
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
    """The verdict box, a note on a bug that hides or only one test sees, strict's numbers."""
    verdict_box(run.report, str(run.settings["variant"]), key="lab_verdict")
    if not announce_change("lab_run", run.key, run_words(run)) and st.session_state.get("lab_run"):
        announce(run_words(run))  # ▶ Run simulation on the same settings: said again
    if run.settings["variant"] == "no_bonus":
        st.caption(
            "This bug is unbiased in tokens: the token test passes, only the tokens-per-round "
            "law catches it (rounds that kept every draft are one token short)."
        )
    elif run.kind is RuleKind.BUG_OF and run.report.passed:
        st.caption(
            "This bug did not show with these settings (e.g. p = q never rejects, so the "
            "rejection path never runs): try another pair of distributions or more rounds."
        )
    if run.strict:
        k = run.settings["k"]
        with st.container(key="lab_strict"):
            st.caption(
                "Strict verification keeps a draft only when the target's own sample is the "
                f"same token: beta = sum p(x) q(x) = {run.beta:.3f} here, against alpha = "
                f"sum min(p, q) = {run.alpha:.3f} for the probabilistic rule. This run emitted "
                f"{run.result.mean_tokens_per_round:.2f} tokens per round (theory "
                f"E(beta, K) = {sc.expected_tokens(run.beta, k):.2f}), where the "
                f"probabilistic rule expects {sc.expected_tokens(run.alpha, k):.2f}."
            )


def run_words(run: SimulatedRun) -> str:
    """What the live region says after a run: its size, rule, counts and verdict."""
    result = run.result
    return (
        f"Simulated {result.n_rounds:,} rounds of {variant_label(str(run.settings['variant']))}"
        f" with K = {result.k_drafts}: {int(result.emitted_counts.sum()):,} tokens emitted, "
        f"{result.mean_tokens_per_round:.2f} per round. {verdict_text(run.report)}"
    )


def difference_chart(run: SimulatedRun) -> None:
    """Simulated share minus p per token, with the noise band."""
    fig = shared_figure(
        "lab.difference",
        run.key,
        lambda: figures.difference_figure(run.result, run.labels),
        typed=run.typed,
    )
    chart(fig, key="lab_fig_diff")
    st.caption(
        "Each mark is a token's simulated share minus what p predicts. The grey band is how "
        f"far a correct run of this size strays by chance (±{figures.NOISE_Z:g} standard "
        "deviations): marks inside it are noise; an ✗ outside it is a bias the eye would "
        "miss in the token bars."
    )


def overlap(run: SimulatedRun) -> None:
    """p and q overlaid, alpha as their overlap, and alpha against the simulated kept / checked."""
    alpha, key = run.alpha, (run.p_target, run.q_draft, run.labels)
    left, right = st.columns(2)
    with left:
        fig = shared_figure(
            "lab.overlap", key, lambda: figures.overlap_figure(*key), typed=run.typed
        )
        chart(fig, key="lab_fig_overlap")
    with right:
        st.header("alpha: how much p and q overlap")
        st.latex(rf"\alpha = \sum_x \min(p(x), q(x)) = 1 - \mathrm{{TV}}(p, q) = {alpha:.3f}")
        st.write(
            "Where the two bar charts overlap, the draft proposes what the target would say "
            f"anyway: that overlap, {alpha:.3f} in total, is the chance that one drafted token "
            f"is kept. The rest, 1 - alpha = {1 - alpha:.3f}, is exactly the mass of the "
            "leftover max(0, p - q) that a rejected token is resampled from, which is why the "
            "output still follows p."
        )
        _overlap_metrics(run)


def _overlap_metrics(run: SimulatedRun) -> None:
    """alpha (and beta for strict) expected, against the simulated kept / checked."""
    metrics = st.columns(3 if run.strict else 2)
    metrics[0].metric("alpha (expected)", f"{run.alpha:.3f}", help="sum over x of min(p(x), q(x))")
    if run.strict:
        metrics[1].metric(
            "beta (expected, strict)",
            f"{run.beta:.3f}",
            help="sum over x of p(x) q(x): the chance that the draft equals the target's "
            "own sample",
        )
    metrics[-1].metric(
        "kept / checked (simulated)",
        f"{run.result.drafted_accepted_fraction:.3f}",
        help="Positions after the first rejection of a round are never checked and do not count.",
    )
    st.caption(
        "Two definitions: alpha is the expected chance that one drafted token is kept; "
        "the simulated fraction counts kept drafts over checked drafts in the simulation. "
        + (
            "With strict verification the simulated fraction follows beta instead."
            if run.strict
            else "With the correct algorithm they agree up to noise."
        )
    )


def chi_square_tests(run: SimulatedRun) -> None:
    """The token test (bars, X^2, p-value) beside the tokens-per-round law and its test."""
    tok, lengths, typed = run.report.tokens, run.report.tokens_per_round, run.typed
    left, right = st.columns(2)
    with left:
        fig = shared_figure(
            "lab.tokens",
            run.key,
            lambda: figures.token_histogram_figure(run.result, run.labels),
            typed=typed,
        )
        chart(fig, key="lab_fig_tokens")
        st.latex(rf"X^2 = \sum \frac{{(O - E)^2}}{{E}} = {tok.statistic:.1f}")
        st.latex(rf"\text{{dof}} = {tok.dof},\quad p\text{{-value}} {p_value_latex(tok.p_value)}")
        if tok.dof == 0:
            st.caption("Nothing to test: " + NOTHING_TO_TEST["tokens"] + ".")
        st.caption(
            "O: tokens emitted at each position of a round; E: what p predicts for the rounds "
            "that reached that position (summed over positions). A small p-value (below "
            f"{run.report.significance:g}) means counts this far from p would almost never "
            "happen by chance."
        )
    with right:
        fig = shared_figure(
            "lab.rounds", run.key, lambda: figures.tokens_per_round_figure(run.result), typed=typed
        )
        chart(fig, key="lab_fig_rounds")
        rate = r"\beta" if run.strict else r"\alpha"
        if run.kind is RuleKind.LOSSY_BY_DESIGN:  # its own keep chance, e.g. q(argmax p)
            rate = "r"
        st.latex(rf"P(n+1\ \text{{tokens}}) = {rate}^n (1-{rate}),\quad P(K+1) = {rate}^K")
        st.latex(
            rf"X^2 = {lengths.statistic:.1f},\quad \text{{dof}} = {lengths.dof},\quad "
            rf"p\text{{-value}} {p_value_latex(lengths.p_value)}"
        )
        st.caption(
            "A round keeps n drafts, then adds one token: the resample after a rejection, or "
            "the bonus when all K are kept."
            + (
                f" r = {float(run.result.alphas[0]):.3f}: this rule's own chance of keeping a "
                "draft."
                if rate == "r"
                else ""
            )
        )
        if lengths.dof == 0:
            st.caption(
                "Nothing to test: "
                + NOTHING_TO_TEST["lengths"].format(length=length_words(run.report))
                + "."
            )


def _not_exact_words(run: SimulatedRun, metrics: sc.AcceptanceMetrics, k: int) -> str:
    """A rule that is not exact: its AL beside the exact rule it is measured against, and
    what it is (a bug of that rule, or lossy by design: never called a bug)."""
    name = str(run.settings["variant"])
    bug = run.kind is RuleKind.BUG_OF
    reference = reference_rule(name) if bug else RULES["correct"]
    symbol = "β" if reference.keep_rule == "strict" else "α"
    expected = reference.expected(np.array(run.p_target), np.array(run.q_draft), k)
    who = "the correct rule" if reference.name == "correct" else rule_label(reference.name)
    al = f"{metrics.mean_acceptance_length:.2f}"
    compared = f"{who} expects E({symbol}, K) = {expected:.2f} with the same p, q and K"
    if not bug:
        return (
            "This rule is lossy by design (see the verdict): its output is not meant to follow "
            f"p, and it is no bug. Its AL is {al}, where {compared}: the AL says nothing about "
            "the output; only a test of the output, like the chi-square above, shows how far "
            "it is from p."
        )
    return (
        f"This rule is a bug (see the verdict), yet its AL is {al}, where {compared}: a buggy "
        "rule can have a great AL, and only a test of the output, like the chi-square above, "
        "catches it."
    )


def _engine_theory(run: SimulatedRun, metrics: sc.AcceptanceMetrics) -> str:
    """An exact rule: the i.i.d. model's exact rates and AL; any other: what the numbers
    miss."""
    k = int(run.settings["k"])
    if run.lossless:
        symbol, rate = ("β", run.beta) if run.strict else ("α", run.alpha)
        formula = "Σ p q" if run.strict else "Σ min(p, q)"
        exact = ", ".join(f"{rate**i:.3f}" for i in range(1, k + 1))
        return (
            "The theory to compare with: here every draft is kept independently with "
            f"probability {symbol} = {formula} = {rate:.3f} (the same p and q at every "
            f"position), so the exact rates are r_i = {symbol}^i = {exact}, the exact AL is "
            f"E({symbol}, K) = {sc.expected_tokens(rate, k):.2f}, and the fitted α should come "
            f"out as {rate:.3f} up to noise."
        )
    text = "These numbers count kept drafts only: they do not know whether the output is right. "
    text += _not_exact_words(run, metrics, k)
    if run.settings["variant"] == "no_bonus":
        text += (
            " The engines' AL = 1 + kept drafts per round also assumes the bonus token, which "
            f"this bug never emits: its rounds emitted {run.result.mean_tokens_per_round:.2f} "
            "tokens each."
        )
    return text


def engine_numbers(run: SimulatedRun) -> None:
    """This run in the engines' vocabulary (AL, per-position rates), beside the theory."""
    metrics = sc.metrics_from_accepted_histogram(run.result.n_accepted_counts)
    about = f"your {run.result.n_rounds:,} simulated rounds at K = {run.result.k_drafts}"
    st.header("Acceptance length and per-position rates: the engines' numbers")
    with st.container(key="lab_engine"):
        engine_panel(metrics, key="lab_fig_engine", about=about)
        st.write(_engine_theory(run, metrics))


def counts_and_download(run: SimulatedRun) -> None:
    """The tables behind the charts and the run as CSV."""
    with st.expander("The counts behind the charts"):
        show_table(
            figures.token_table(run.result, run.report, run.labels),
            name="Emitted tokens against p and q: counts and shares per token",
            formats=figures.TOKEN_TABLE_FORMATS,
        )
        show_table(
            figures.rounds_table(run.result),
            name="Tokens per round: rounds observed and expected",
            formats=figures.ROUNDS_TABLE_FORMATS,
        )
    settings = {"variant": run.result.variant, "K": run.result.k_drafts}
    settings |= {"rounds simulated": run.result.n_rounds, "seed": run.settings["seed"]}
    download_results(
        run.result,
        run.labels,
        run.emitted,
        settings,
        filename="losslessness_lab.csv",
        key="lab_csv",
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
