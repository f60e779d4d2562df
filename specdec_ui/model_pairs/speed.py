"""The Model pair lab's speed section: the run's measured speedup against plain decoding
of the same target, the formulas with the run's own costs, the GPU-like switch, when the
figure was measured and the teacher's "measure again" (the measurement runs once in the
background and is held: :mod:`specdec_ui.model_pairs.work`).
"""

from __future__ import annotations

import streamlit as st

import specdec_core.lm as lm
from specdec_core import SpecDecError
from specdec_core.lm.timing import SpeedMeasurement, impossible_reasons
from specdec_ui.kit.presenter import chart
from specdec_ui.kit.text import md_escape
from specdec_ui.kit.widgets import show_error
from specdec_ui.model_pairs import figures, words, work
from specdec_ui.model_pairs.guard import guard_gap_words
from specdec_ui.model_pairs.view import POLL_S, Choice
from specdec_ui.runtime import shared_work
from specdec_ui.runtime.figure_cache import shared_figure


def speed_section(choice: Choice, run: work.LabRun) -> None:
    """This run's measured speedup, the formulas with its own costs, the GPU-like switch,
    when it was measured and the teacher's "measure again"; while the measurement runs in
    the background, a notice that polls for it."""
    st.header("Your run against plain decoding of the same target")
    try:
        held = work.get_run_speed(choice.request)
    except shared_work.QueueFullError as err:
        st.warning(md_escape(err), icon="⏳")
        return
    except SpecDecError as err:
        show_error(err)
        return
    if held is shared_work.MISSING:
        st.fragment(_wait_for_speed, run_every=POLL_S)(choice)
        return
    if isinstance(held.value, work.Unmeasured):
        st.warning(held.value.reason, icon="⏳")
        return
    _speed_results(choice, run, held.value)
    when_measured(choice, held)


def _wait_for_speed(choice: Choice) -> None:
    """(A fragment.) Say where the measurement stands; rerun the page once it is there."""
    if work.get_run_speed(choice.request) is not shared_work.MISSING:
        st.rerun()  # draw the page once more with the figure, and stop polling
    status = work.run_speed_status(choice.request)
    where = status.text if status is not None else "Starting…"
    st.info(
        "⏱️ Measuring the speed of your run on this server: speculative and plain decoding "
        "of the same prompt, settings and seed, taking turns (once; the figure is then kept "
        f"for {work.HOLD_S / 3600:g} hours and shared by everyone who asks for the same run). "
        f"{where}",
        icon="⏳",
    )


def when_measured(choice: Choice, held: work.Held) -> None:
    """When the figure was measured, how long it is kept, and "measure again" (folded)."""
    offset = st.context.timezone_offset
    until = held.measured_at + work.HOLD_S
    st.caption(
        f"Measured at {work.clock_text(held.measured_at, offset)} ({work.age_text(held.age_s)}) "
        f"{md_escape(work.where_held())}, and kept until {work.clock_text(until, offset)}: "
        "everyone who opens this run sees this same figure, so the class reads one number "
        "for the lesson."
    )
    with st.expander("🔁 Measure again (for the teacher)", key="lm_again_box"):
        st.write(words.AGAIN_HELP)
        if work.measuring_again(choice.request):
            st.fragment(_wait_for_again, run_every=POLL_S)(choice)
            return
        wait_s = work.AGAIN_AFTER_S - held.age_s
        if st.button("Measure this run again", key="lm_again", disabled=wait_s > 0):
            if work.measure_again(choice.request):
                st.rerun()  # show the measurement in progress
        if wait_s > 0:
            st.caption(f"Offered once the figure is {work.AGAIN_AFTER_S:g} s old.")


def _wait_for_again(choice: Choice) -> None:
    """(A fragment.) While "measure again" runs: where it stands; rerun once it is done."""
    if not work.measuring_again(choice.request):
        st.rerun()
    status = work.run_speed_status(choice.request)
    where = status.text if status is not None else "Starting…"
    st.info(f"⏱️ Measuring this run again; the figure above stays until then. {where}", icon="⏳")


def _speed_results(choice: Choice, run: work.LabRun, speed: SpeedMeasurement) -> None:
    reasons = impossible_reasons(speed)
    pred = work.predictions(run.counts, speed)
    left, right = st.columns([3, 2])
    with left:
        _measured_speedup(choice, run, speed, reasons)
        _formulas(choice, run, speed, pred)
        st.write(words.CPU_NOT_GPU)
        if not speed.parallel_verify:
            st.warning(words.NGRAM_TARGET, icon="🐢")
    with right:
        _comparison_chart(choice, speed, pred, reasons)


def _measured_speedup(choice, run, speed: SpeedMeasurement, reasons: list[str]) -> None:
    """The run's measured speedup with its range and method, or why it is refused."""
    if reasons:
        st.warning(
            "No speedup figure: this measurement cannot be right, so it is not shown. "
            + " ".join(f"{x}." for x in reasons)
            + " It usually means the server was very busy; it is measured again after "
            "a restart.",
            icon="🚫",
        )
        return
    lo, hi = speed.spread
    st.metric(
        "Speedup of your run (measured)",
        f"{speed.speedup:.2f}x",
        help="CPU time of plain decoding / CPU time of speculative decoding, same prompt, "
        f"settings and seed, median of {len(speed.speedups)} repeats.",
    )
    same = speed.rounds == run.counts.rounds and speed.accepted == run.counts.kept
    st.caption(
        f"Range {lo:.2f}x to {hi:.2f}x over {len(speed.speedups)} repeats. Measured on this "
        f"server for exactly the run above (pair: {lm.PAIRS[choice.request.pair].label}, not "
        f"the Serving lab's ◆ one; {speed.n_tokens} tokens, K = {choice.request.k}, "
        f"T = {choice.request.temperature:g}"
        + ("" if choice.request.temperature == 0 else f", seed {choice.request.seed}")
        + "): the CPU time of the measuring thread "
        f"(`{speed.clock}`) for plain decoding of the same prompt over that of speculative "
        "decoding, the two taking turns round by round so that other visitors' work does not "
        "distort it; reading the prompt is part of both."
        + (
            f" The timed runs made the same {speed.rounds} rounds and kept the same "
            f"{speed.accepted} drafts as yours."
            if same
            else _rounds_differ(choice, run, speed)
        )
    )
    if (hi - lo) > 0.3 * speed.speedup:
        st.caption("The repeats disagree by more than 30 %: treat the figure as rough.")
    _reference_line(choice)


def _rounds_differ(choice: Choice, run: work.LabRun, speed: SpeedMeasurement) -> str:
    """Why the timed runs' rounds are not those on screen."""
    prices = run.spec.prices
    if choice.request.adaptive and prices is not None and prices.own_clock:
        return (
            " Each timed run's guard read its own clock, so where it stepped aside differs a "
            f"little from yours: {speed.rounds} rounds against your {run.counts.rounds}."
        )
    return " (The timed runs did not repeat your run's rounds exactly; treat the figure as rough.)"


def _reference_line(choice: Choice) -> None:
    """The reference workload's figure, labelled as such, when it is already measured."""
    reference = work.reference_speed(
        choice.request.pair, choice.request.k, choice.request.temperature
    )
    if reference is None or impossible_reasons(reference):
        return
    st.caption(
        f"For comparison, not your run: the reference workload (the default prompt "
        f"“{work.DEFAULT_PROMPT}”, {reference.n_tokens} tokens, seed {work.SPEED_SEED}) of this "
        f"pair at K = {choice.request.k}, T = {choice.request.temperature:g} measured "
        f"{reference.speedup:.2f}x on this server."
    )


def _adaptive_formulas(counts: work.RunCounts, speed: SpeedMeasurement, pred) -> None:
    """A guarded run's own accounting: its tokens per round over its cost per round."""
    d = speed.drafts_per_round
    st.write(
        f"Measured unit costs of your run: one draft step costs **c = {speed.c:.3f}** target "
        f"steps; its rounds drafted **d = {d:.2f}** tokens on average, and everything else in "
        f"a round (the target's check, the decisions, the rollback) cost **v = {speed.v:.2f}** "
        f"target steps on average (a plain target step: {speed.target_step * 1e6:.0f} µs)."
    )
    st.latex(
        rf"S = \frac{{\text{{tokens per round}}}}{{d\,c + v}} = "
        rf"\frac{{{counts.tokens_per_round:.2f}}}{{{d:.2f}\cdot{speed.c:.3f} + {speed.v:.2f}}}"
        rf" = {pred.accounting:.2f}"
    )
    st.caption(words.ACCOUNTING)


def _formulas(choice: Choice, run: work.LabRun, speed: SpeedMeasurement, pred) -> None:
    """Unit costs, E(alpha, K) and the basic (v = 1) and corrected predictions, with numbers."""
    counts, spec = run.counts, run.spec
    if choice.request.adaptive:
        _adaptive_formulas(counts, speed, pred)
        if spec.prices is not None:
            st.caption(guard_gap_words(choice.request, spec.prices, speed))
        return
    k = choice.request.k
    st.write(
        f"Measured unit costs of your run: one draft step costs **c = {speed.c:.3f}** target "
        f"steps; everything else in a round (the target call on K + 1 = {k + 1} tokens, the "
        f"accept / reject decisions, the rollback) costs **v(K) = {speed.v:.2f}** target "
        f"steps (a plain target step: {speed.target_step * 1e6:.0f} µs of CPU)."
    )
    a = pred.alpha
    st.latex(
        rf"E(\alpha, K) = \frac{{1 - \alpha^{{K+1}}}}{{1 - \alpha}} = "
        rf"\frac{{1 - {a:.2f}^{{{k + 1}}}}}{{1 - {a:.2f}}} = {pred.expected:.2f}"
        if a < 1
        else rf"E(\alpha, K) = K + 1 = {k + 1}"
    )
    st.caption(
        f"α = {a:.2f} is your run's acceptance rate (kept / checked); E is the i.i.d. "
        f"model's expected tokens per round at that α (your run: "
        f"{counts.tokens_per_round:.2f})."
    )
    st.caption(formula_gap_words(spec, k, pred.expected))
    st.latex(
        rf"S_{{\text{{basic}}}} = \frac{{E}}{{K c + 1}} = \frac{{E}}{{{k}\cdot{speed.c:.3f}"
        rf" + 1}} = {pred.seeds:.2f}"
    )
    st.latex(
        rf"S_{{\text{{corrected}}}} = \frac{{E}}{{K c + v(K)}} = \frac{{E}}{{{k}\cdot"
        rf"{speed.c:.3f} + {speed.v:.2f}}} = {pred.corrected:.2f}"
    )


def formula_gap_words(spec, k: int, expected: float) -> str:
    """Why a fixed-K run's tokens per round differ from E(alpha, K), with its own numbers:
    rounds that drafted nothing (one token each) or fewer than K, and what the rounds that
    drafted made; what remains is acceptance that is not i.i.d. along a text."""
    sizes = list(zip(spec.draft_sizes, spec.accepted_sizes, strict=True))
    drafting = [(n, kept) for n, kept in sizes if n]
    per_round = spec.emitted / spec.n_rounds
    said = (
        f"Why your run's {per_round:.2f} differs from E = {expected:.2f}: E assumes that every "
        f"round drafts K = {k} tokens and keeps each with the same chance α, independently. "
    )
    parts = []
    if spec.plain_rounds:
        parts.append(
            f"{spec.plain_rounds} of the {spec.n_rounds} rounds drafted nothing (one token "
            "each, a plain step)"
        )
    short = sum(0 < n < k for n, _ in drafting)
    if short:
        parts.append(f"{short} drafted fewer than K")
    if not drafting:
        return said + "No round of your run drafted anything."
    made = sum(kept + 1 for _, kept in drafting) / len(drafting)
    if parts:
        said += "In your run, " + " and ".join(parts) + "; "
        said += f"the {len(drafting)} rounds that drafted made {made:.2f} tokens each. "
    return said + words.TEXT_NOT_IID


def _comparison_chart(choice: Choice, speed, pred, reasons: list[str]) -> None:
    """Measured vs predicted speedups of this run, with an optional GPU-like (v = 1) row."""
    rows = [] if reasons else [("measured", speed.speedup)]
    if choice.request.adaptive:
        rows.append(("accounting (measured c, v)", pred.accounting))
        rounded = tuple((label, round(float(value), 2)) for label, value in rows)
        chart(_speedup_figure(rounded), key="lm_speedup")
        return
    gpu = st.toggle(
        "GPU-like cost model (v = 1)",
        key="lm_gpu",
        help=words.GPU_HELP,
    )
    rows += [("basic formula (v = 1)", pred.seeds), ("corrected (measured v)", pred.corrected)]
    if gpu:
        c_gpu = st.slider("c (draft step / target step)", 0.0, 1.0, 0.05, 0.01, key="lm_gpu_c")
        gpu_speedup = lm.gpu_like_prediction(pred.alpha, choice.request.k, c_gpu)
        rows.append((f"GPU-like (v = 1, c = {c_gpu:.2f})", gpu_speedup))
        st.latex(
            rf"\frac{{E}}{{K c + 1}} = \frac{{E}}{{{choice.request.k}\cdot{c_gpu:.2f} + 1}} = "
            rf"{gpu_speedup:.2f}"
        )
        st.caption(words.GPU_NOTE)
    rounded = tuple((label, round(float(value), 2)) for label, value in rows)
    chart(_speedup_figure(rounded), key="lm_speedup")


def _speedup_figure(rows: tuple[tuple[str, float], ...]):
    return shared_figure("lm.speedup", rows, lambda: figures.speedup_figure(rows))
