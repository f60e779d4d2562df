"""One verdict section for both labs: simulate, test, verdict, CSV and p-value text.

The Losslessness lab and the Variants lab run a rule of ``specdec_core.rules.RULES``
through the same shared Monte Carlo (:func:`specdec_ui.losslessness.work.shared_simulation`) and
the same two chi-square tests (:func:`specdec_core.losslessness_test`: the tokens against
p, the round lengths against the law of the rule the run is held to), and say the result
with the same words: a verdict is PASS or FAIL, and what that means depends on the rule's
kind (an exact rule must pass; a bug should fail; a rule that is lossy by design is
expected to fail and is no bug).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import pandas as pd
import streamlit as st

import specdec_core as sc
from specdec_core.rules import RuleKind, get_rule
from specdec_ui.kit.text import md_escape
from specdec_ui.kit.widgets import download_csv, queue_status, show_error
from specdec_ui.losslessness import work
from specdec_ui.runtime.processes import HelperTimeoutError
from specdec_ui.runtime.shared_work import QueueFullError

NOTHING_TO_TEST = {  # why a test has one possible outcome (dof 0), by the test
    "tokens": "p puts all its mass on one token, so every emitted token must be that one "
    "(and every one was): a count of one kind of token cannot be off",
    "lengths": "every round has the same length, {length}, so the round-length law is "
    "certain and no count of rounds can be off",
}
LOSSY_WORDS = (
    "This rule is lossy by design: its tokens are not meant to follow p (it trades exactness "
    "for speed, or follows another target such as greedy decoding). A FAIL is the expected "
    "outcome here, not a bug."
)
LOSSY_PASS_WORDS = (
    "This rule is lossy by design, but with these settings its output cannot be told apart "
    "from p (e.g. a p with one likely token): try a flatter p to see the difference."
)


def p_value_text(p_value: float) -> str:
    """chi2.sf underflows to 0 below about 1e-300: say so instead of printing 0."""
    return "< 1e-300" if p_value == 0 else f"{p_value:.3g}"


def p_value_latex(p_value: float) -> str:
    """The p-value after "p-value " in LaTeX: "= 0.123" or "< 10^{-300}"."""
    return r"< 10^{-300}" if p_value == 0 else f"= {p_value:.3g}"


def test_words(fit: sc.GoodnessOfFit) -> str:
    """One test's numbers in words (or that it had nothing to test)."""
    if fit.dof == 0:
        return "nothing to test: one possible outcome, 0 degrees of freedom"
    return f"chi-square {fit.statistic:.1f}, dof {fit.dof}, p-value {p_value_text(fit.p_value)}"


def length_words(report: sc.LosslessnessReport) -> str:
    """The one round length a dof-0 length test saw, in words."""
    counts = report.tokens_per_round.observed
    length = int(np.flatnonzero(np.asarray(counts) > 0)[0]) + 1 if len(counts) else 1
    why = " (alpha = 0: no draft is ever kept)" if length == 1 else ""
    return f"{length} token{'s' * (length != 1)}{why}"


def nothing_to_test(report: sc.LosslessnessReport) -> list[str]:
    """The tests of ``report`` that had nothing to test (dof 0), with the reason in words:
    such a test passes whatever the rule does, so a PASS from it says nothing."""
    out = []
    if report.tokens.dof == 0:
        out.append("the token test had nothing to test: " + NOTHING_TO_TEST["tokens"])
    if report.tokens_per_round.dof == 0:
        out.append(
            "the round-length test had nothing to test: "
            + NOTHING_TO_TEST["lengths"].format(length=length_words(report))
        )
    return out


def _pass_text(report: sc.LosslessnessReport, empty: list[str]) -> str:
    """The words of a PASS (on both tests, on one, or with nothing to test)."""
    tok, lengths, level = report.tokens, report.tokens_per_round, report.significance
    if len(empty) == 2:
        return "NOTHING TO TEST: " + "; ".join(empty) + ". Choose a p and q with more to see."
    if empty:
        tested = (
            ("the emitted tokens follow p", tok)
            if lengths.dof == 0
            else ("the round lengths follow the theory", lengths)
        )
        return (
            f"PASS on one test only: {tested[0]} ({test_words(tested[1])}; the p-value is "
            f"at least the significance level {level:g}); {empty[0]}."
        )
    return (
        f"PASS: the emitted tokens follow p ({test_words(tok)}) and the round lengths "
        f"follow the theory ({test_words(lengths)}); both p-values are at least the "
        f"significance level {level:g}."
    )


def verdict_text(report: sc.LosslessnessReport) -> str:
    """PASS or FAIL, with both tests' numbers (and, on a FAIL, which test rejected); a test
    with nothing to test (dof 0) is said to be one, and is no part of a PASS."""
    if report.passed:
        return _pass_text(report, nothing_to_test(report))
    tok, lengths, level = report.tokens, report.tokens_per_round, report.significance
    failed = [
        name
        for name, fit in (
            ("the emitted tokens do not follow p", tok),
            ("the round lengths do not follow the theory", lengths),
        )
        if fit.p_value < level
    ]
    return (
        f"FAIL: {' and '.join(failed)} (tokens: {test_words(tok)}; round lengths: "
        f"{test_words(lengths)}; significance level {level:g})."
    )


def rule_kind(variant: str) -> RuleKind | None:
    """The kind of the rule ``variant`` (None if no such rule is registered)."""
    try:
        return get_rule(variant).kind
    except sc.SpecDecError:
        return None


def verdict_box(report: sc.LosslessnessReport, variant: str, *, key: str) -> None:
    """The verdict in a bordered box, coloured by what it means for the rule's kind: red for
    a FAIL, amber for a lossy-by-design rule's expected FAIL or a partial PASS, blue when
    there was nothing to test, green for a PASS."""
    lossy = rule_kind(variant) is RuleKind.LOSSY_BY_DESIGN
    empty = nothing_to_test(report)
    text = verdict_text(report)
    if not report.passed:
        box = st.warning if lossy else st.error
        text = f"{text} {LOSSY_WORDS}" if lossy else text
    elif len(empty) == 2:
        box = st.info
    else:
        box = st.warning if empty else st.success
    with st.container(key=key, border=True):
        box(text)
    if lossy and report.passed and not empty:
        st.caption(LOSSY_PASS_WORDS)


def shared_run(
    request: dict, *, typed: bool, stop: Callable[[], None]
) -> tuple[sc.SimulationResult, sc.LosslessnessReport]:
    """The shared Monte Carlo and its tests for ``request`` (p_target, q_draft, k, rounds,
    seed, variant, options), with the queue's words; a problem is said in words and
    ``stop()`` ends the page."""
    try:
        with queue_status(f"Simulating {request['rounds']:,} rounds…") as on_wait:
            return work.shared_simulation(**request, typed=typed, on_wait=on_wait)
    except (sc.SpecDecError, QueueFullError) as err:
        show_error(err)
    except HelperTimeoutError as err:
        st.warning(md_escape(str(err)), icon="⏳")
    stop()
    raise RuntimeError("stop() must end the page")  # st.stop raises; a test's stop too


def results_csv_table(result: sc.SimulationResult, labels, emitted, settings: dict) -> pd.DataFrame:
    """Everything a student needs to redo both tests elsewhere, as one long table.

    Columns: table ("tokens" or "tokens per round"), item, observed, expected (what p
    predicts for the tokens; the law the round lengths are held to, times the rounds),
    exact emitted share (position 1) (the rule's exact one-position law; empty on the
    round rows, and everywhere when ``emitted`` is None), then the run's settings on every
    row.
    """
    tokens = pd.DataFrame(
        {
            "table": "tokens",
            "item": [str(label) for label in labels],
            "observed": result.emitted_counts,
            "expected": result.expected_counts,
            "exact emitted share (position 1)": np.nan if emitted is None else emitted,
        }
    )
    lengths = np.arange(1, result.k_drafts + 2)
    rounds = pd.DataFrame(
        {
            "table": "tokens per round",
            "item": lengths.astype(str),
            "observed": result.tokens_per_round_counts[1:],
            "expected": sc.tokens_per_round_distribution(result.alphas) * result.n_rounds,
        }
    )
    frame = pd.concat([tokens, rounds], ignore_index=True)
    for name, value in settings.items():
        frame[name] = value
    return frame


def download_results(result, labels, emitted, settings: dict, *, filename: str, key: str) -> None:
    """The run as a CSV (:func:`results_csv_table`), made when the button is clicked."""
    download_csv(
        functools.partial(results_csv_table, result, labels, emitted, settings),
        filename,
        key=key,
        label="Download the results (CSV)",
    )
