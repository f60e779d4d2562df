"""The Losslessness lab's sections that explain a run: alpha as the overlap of p and q, the
two chi-square tests beside the law they test, the difference chart, the engines' numbers
beside the theory, how the rule's keep chance compares with the token-by-token rule, and
the counts behind the charts with the CSV.

Everything here reads the rule's properties (:class:`specdec_core.rules.Rule`:
``independent_keeps``, ``bonus``, the exact keep chances the run is held to) and its words
(:data:`specdec_ui.words.RULE_WORDS`: ``keep_symbol``, ``keep_formula``), never its name:
a new rule is described right with no edit here.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

import specdec_core as sc
from specdec_core.rules import BASIC_RULE, RULES, RuleKind
from specdec_ui.kit.engine_view import engine_panel
from specdec_ui.kit.presenter import chart
from specdec_ui.kit.tables import show_table
from specdec_ui.losslessness import figures
from specdec_ui.losslessness.verdict import (
    NOTHING_TO_TEST,
    download_results,
    length_words,
    p_value_latex,
)
from specdec_ui.runtime.figure_cache import shared_figure
from specdec_ui.words import rule_label, rule_words

GREEK = {"alpha": "α", "beta": "β"}  # a keep symbol's letter; any other symbol as written


def greek(symbol: str) -> str:
    """A keep symbol in a sentence: "alpha" -> "α" ("r" stays "r")."""
    return GREEK.get(symbol, symbol)


def latex_symbol(symbol: str) -> str:
    """A keep symbol in LaTeX: "alpha" -> r"\\alpha" ("r" stays "r")."""
    return "\\" + symbol if symbol in GREEK else symbol


def keep_symbol(run) -> str:
    """The symbol of the keep chance of the rule the run is held to ("alpha", "beta", "r")."""
    return rule_words(run.reference.name).keep_symbol


def keep_chance(run) -> float:
    """P(position 1 keeps its draft) under the law the run is held to."""
    return float(run.result.alphas[0])


def reach(run) -> np.ndarray:
    """(K,) s_i = P(the first i drafts are kept), i = 1..K, under the law the run is held to."""
    return np.cumprod(run.result.alphas)


def other_keep_chance(run) -> bool:
    """An independent rule whose keep chance is not alpha (strict's beta, greedy's r)."""
    return run.reference.independent_keeps and not np.isclose(keep_chance(run), run.alpha)


def overlap(run) -> None:
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


def _overlap_metrics(run) -> None:
    """alpha (and the rule's own keep chance when it is another) expected, against the
    simulated kept / checked."""
    other = other_keep_chance(run)
    metrics = st.columns(3 if other else 2)
    metrics[0].metric("alpha (expected)", f"{run.alpha:.3f}", help="sum over x of min(p(x), q(x))")
    words = rule_words(run.reference.name)
    if other:
        metrics[1].metric(
            f"{words.keep_symbol} (expected, {run.reference.name})",
            f"{keep_chance(run):.3f}",
            help=f"{words.keep_formula or 'this rule’s keep chance'}: the chance that this rule "
            "keeps one drafted token",
        )
    metrics[-1].metric(
        "kept / checked (simulated)",
        f"{run.result.drafted_accepted_fraction:.3f}",
        help="Positions after the first rejection of a round are never checked and do not count.",
    )
    label = rule_label(run.reference.name)
    if not run.reference.independent_keeps:
        tail = (
            f"With {label} a draft's chance to be kept depends on the drafts before it, so "
            "the simulated fraction follows no single number; the round-length test below "
            "holds the run to the rule's exact law."
        )
    elif other:
        tail = f"With {label} the simulated fraction follows {keep_symbol(run)} instead."
    else:
        tail = "With this rule they agree up to noise."
    st.caption(
        "Two definitions: alpha is the expected chance that one drafted token is kept; "
        "the simulated fraction counts kept drafts over checked drafts in the simulation. " + tail
    )


def keep_note(run) -> None:
    """An exact rule that keeps drafts otherwise than with alpha: its chance (or its joint
    law) and its tokens per round against the token-by-token rule's."""
    reference, k = run.reference, int(run.settings["k"])
    if reference.kind is not RuleKind.EXACT or not (
        other_keep_chance(run) or not reference.independent_keeps
    ):
        return
    p, q = np.array(run.p_target), np.array(run.q_draft)
    ours, basic = reference.expected(p, q, k), RULES[BASIC_RULE].expected(p, q, k)
    mean, label = run.result.mean_tokens_per_round, rule_label(reference.name)
    if reference.independent_keeps:
        words, symbol = rule_words(reference.name), keep_symbol(run)
        formula = f"{words.keep_formula} = " if words.keep_formula else ""
        text = (
            f"{label}: a draft is kept with {symbol} = {formula}{keep_chance(run):.3f} here, "
            f"against alpha = sum min(p, q) = {run.alpha:.3f} for the probabilistic rule. "
            f"This run emitted {mean:.2f} tokens per round (theory E({symbol}, K) = "
            f"{ours:.2f}), where the probabilistic rule expects {basic:.2f}."
        )
    else:
        s = ", ".join(f"{x:.3f}" for x in reach(run))
        powers = ", ".join(f"{run.alpha**i:.3f}" for i in range(1, k + 1))
        text = (
            f"{label} decides the drafts of a round together, so no single keep chance "
            f"describes it: P(the first i drafts kept) = {s} here, against alpha^i = {powers} "
            f"token by token. This run emitted {mean:.2f} tokens per round (exact: "
            f"{ours:.2f}), where the token-by-token rule expects E(alpha, K) = {basic:.2f}: "
            f"{ours - basic:+.2f} tokens per round from the same drafts, and the output still "
            "follows p."
        )
    with st.container(key="lab_keep_note"):
        st.caption(text)


def _length_law_latex(run) -> tuple[str, str]:
    """The round-length law the test holds the run to, in LaTeX, and a caption line."""
    if run.reference.independent_keeps:
        symbol = keep_symbol(run)
        rate = latex_symbol(symbol)
        latex = rf"P(n+1\ \text{{tokens}}) = {rate}^n (1-{rate}),\quad P(K+1) = {rate}^K"
        own = f" r = {keep_chance(run):.3f}: this rule's own chance of keeping a draft."
        return latex, own if symbol == "r" else ""
    latex = (
        r"P(n+1\ \text{tokens}) = s_n - s_{n+1},\quad s_i = P(\text{the first } i "
        r"\text{ drafts kept})"
    )
    s = ", ".join(f"{x:.3f}" for x in reach(run))
    return latex, (
        f" s_1 .. s_K = {s}: this rule's exact law (its drafts are not kept independently, "
        "so it is no power law alpha^n (1 - alpha))."
    )


def chi_square_tests(run) -> None:
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
        latex, own = _length_law_latex(run)
        st.latex(latex)
        st.latex(
            rf"X^2 = {lengths.statistic:.1f},\quad \text{{dof}} = {lengths.dof},\quad "
            rf"p\text{{-value}} {p_value_latex(lengths.p_value)}"
        )
        st.caption(
            "A round keeps n drafts, then adds one token: the resample after a rejection, or "
            "the bonus when all K are kept." + own
        )
        if lengths.dof == 0:
            st.caption(
                "Nothing to test: "
                + NOTHING_TO_TEST["lengths"].format(length=length_words(run.report))
                + "."
            )


def _not_exact_words(run, metrics: sc.AcceptanceMetrics, k: int) -> str:
    """A rule that is not exact: its AL beside the exact rule it is measured against, and
    what it is (a bug of that rule, or lossy by design: never called a bug)."""
    bug = run.kind is RuleKind.BUG_OF
    reference = run.reference if bug else RULES[BASIC_RULE]
    symbol = greek(rule_words(reference.name).keep_symbol)
    expected = reference.expected(np.array(run.p_target), np.array(run.q_draft), k)
    who = "the correct rule" if reference.name == BASIC_RULE else rule_label(reference.name)
    law = f"E({symbol}, K) = " if reference.independent_keeps else ""
    al = f"{metrics.mean_acceptance_length:.2f}"
    compared = f"{who} expects {law}{expected:.2f} with the same p, q and K"
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


def _exact_theory(run) -> str:
    """An exact rule: the exact per-position rates and AL of the law it follows."""
    k = int(run.settings["k"])
    p, q = np.array(run.p_target), np.array(run.q_draft)
    expected = run.reference.expected(p, q, k)
    if not run.reference.independent_keeps:
        exact = ", ".join(f"{x:.3f}" for x in reach(run))
        basic = RULES[BASIC_RULE].expected(p, q, k)
        return (
            "The theory to compare with: this rule decides the drafts of a round together, so "
            f"the exact rates are r_i = P(the first i drafts kept) = {exact}, not the powers "
            f"of one number, and the exact AL is {expected:.2f} (the token-by-token rule: "
            f"E(α, K) = {basic:.2f}). A fitted α describes these rates only roughly."
        )
    words = rule_words(run.reference.name)
    symbol, rate = greek(words.keep_symbol), keep_chance(run)
    formula = f"{words.keep_formula} = " if words.keep_formula else ""
    exact = ", ".join(f"{rate**i:.3f}" for i in range(1, k + 1))
    return (
        "The theory to compare with: here every draft is kept independently with "
        f"probability {symbol} = {formula}{rate:.3f} (the same p and q at every "
        f"position), so the exact rates are r_i = {symbol}^i = {exact}, the exact AL is "
        f"E({symbol}, K) = {expected:.2f}, and the fitted α should come out as {rate:.3f} up to "
        "noise."
    )


def _engine_theory(run, metrics: sc.AcceptanceMetrics) -> str:
    """An exact rule: its exact rates and AL; any other: what the numbers miss."""
    if run.lossless:
        return _exact_theory(run)
    text = "These numbers count kept drafts only: they do not know whether the output is right. "
    text += _not_exact_words(run, metrics, int(run.settings["k"]))
    if not run.rule.bonus:
        text += (
            " The engines' AL = 1 + kept drafts per round also assumes the bonus token, which "
            f"this bug never emits: its rounds emitted {run.result.mean_tokens_per_round:.2f} "
            "tokens each."
        )
    return text


def engine_numbers(run) -> None:
    """This run in the engines' vocabulary (AL, per-position rates), beside the theory."""
    metrics = sc.metrics_from_accepted_histogram(run.result.n_accepted_counts)
    about = f"your {run.result.n_rounds:,} simulated rounds at K = {run.result.k_drafts}"
    st.header("Acceptance length and per-position rates: the engines' numbers")
    with st.container(key="lab_engine"):
        engine_panel(metrics, key="lab_fig_engine", about=about)
        st.write(_engine_theory(run, metrics))


def difference_chart(run) -> None:
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


def counts_and_download(run) -> None:
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
