"""Losslessness lab: simulate many rounds and test that the output follows p."""

from __future__ import annotations

import functools

import streamlit as st

import specdec_core as sc
from specdec_core import variants as vr
from specdec_core.errors import mismatch_message
from specdec_ui import figures_lab as fl
from specdec_ui import lab_work, presets
from specdec_ui.page_state import PageState
from specdec_ui.presenter import chart, page_heading, presenting
from specdec_ui.render_gate import render_slot
from specdec_ui.share import LinkReader
from specdec_ui.shared_work import QueueFullError
from specdec_ui.text import md_escape
from specdec_ui.widgets import (
    MAX_SEED,
    download_csv,
    page_setup,
    queue_status,
    seed_control,
    show_error,
    show_source,
)
from specdec_ui.words import VARIANT_DESCRIPTIONS, VARIANT_LABELS

PAGE = page_setup(__file__)

with render_slot():  # the labs draw one session at a time (specdec_ui.render_gate)
    PRESETS = presets.LAB_PRESETS
    OPTIONS = [*PRESETS, presets.CUSTOM]

    # Figures are cached objects shared read-only by all sessions (st.plotly_chart copies them).
    @st.cache_resource(max_entries=16, show_spinner=False)
    def _overlap_fig(
        p_target: tuple[float, ...], q_draft: tuple[float, ...], labels: tuple[str, ...]
    ):
        return fl.overlap_figure(p_target, q_draft, labels)

    @st.cache_resource(max_entries=16, show_spinner=False)
    def _result_figs(p_target, q_draft, labels, k, rounds, seed, variant, _result):
        return (
            fl.token_histogram_figure(_result, labels),
            fl.tokens_per_round_figure(_result),
            fl.difference_figure(_result, labels),
        )

    def _distribution_text(name: str):
        def parse(raw: str) -> str:
            sc.parse_distribution(raw, name=name)
            return raw

        return parse

    def _variant_label(name: str) -> str:
        """The display name of a core variant (its key if it has no label)."""
        return VARIANT_LABELS.get(name, name)

    def _preset_values(key: str) -> dict[str, object] | None:
        preset = PRESETS.get(key)
        return None if preset is None else {"p_text": preset.p_text, "q_text": preset.q_text}

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
            "variant": link.choice("variant", list(sc.VARIANTS), "correct"),
        }

    state = PageState(
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
    if (link := state.first_visit()) is not None:
        state.start(_values_from_link(link), link.problems)
    state.restore()
    st.session_state.setdefault("lab__applied", None)
    _to_custom = state.to_custom(presets.CUSTOM)

    def rounds_error(rounds: int) -> str | None:
        """The message for a number of rounds outside the page's range, or None when it is fine."""
        if presets.MIN_ROUNDS <= rounds <= presets.MAX_ROUNDS_PAGE:
            return None
        return (
            f"Rounds to simulate: {rounds:,} is out of range; allowed: {presets.MIN_ROUNDS:,} to "
            f"{presets.MAX_ROUNDS_PAGE:,}. Nothing was simulated for it."
        )

    PRESENTING = presenting()  # projector: the verdict and its chart first, explanations below

    page_heading(
        PAGE,
        "Speculative sampling claims that every token it emits follows the target p exactly, "
        "however bad the draft q is. Do not take it on trust: simulate many rounds, count what "
        "comes out, and test the counts against p. Then switch on a bug and watch the same test "
        "catch it.",
        presenting=PRESENTING,
    )
    state.warn_link()

    # Inputs in the main column (a sidebar covers the charts on a phone; columns stack there),
    # folded away in presenter view.
    with st.expander("⚙️ Inputs: p and q, K, rounds, seed, algorithm", expanded=not PRESENTING):
        in_left, in_right = st.columns(2)
        with in_left:
            state.preset_select(
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
                on_change=_to_custom,
                max_chars=sc.MAX_TEXT_LENGTH,
                help="Numbers separated by commas: decimals (0.25), fractions (1/4) or "
                "percentages (25%). They must sum to 1.",
            )
            st.text_input(
                "Draft q",
                key="lab_q_text",
                on_change=_to_custom,
                max_chars=sc.MAX_TEXT_LENGTH,
                help="Same number of entries as p.",
            )
        with in_right:
            st.slider("K: draft tokens per round", 1, presets.LAB_K_MAX, key="lab_k")
            # No browser bounds: an out-of-range number gets a message, not just a red edge.
            st.number_input(
                "Rounds to simulate",
                min_value=0,
                step=10_000,
                key="lab_rounds",
                help=f"{presets.MIN_ROUNDS:,} to {presets.MAX_ROUNDS_PAGE:,}. "
                "More rounds find smaller biases.",
            )
            seed_control("lab")
            st.selectbox(
                "Algorithm", list(sc.VARIANTS), key="lab_variant", format_func=_variant_label
            )
            auto = st.checkbox(
                "Run automatically when a setting changes", value=True, key="lab_auto"
            )
            run_clicked = st.button("▶ Run simulation", key="lab_run", type="primary")

    current = state.keep()
    if (rounds_problem := rounds_error(int(current["rounds"]))) is not None:
        last = st.session_state["lab__applied"] or state.defaults
        show_error(rounds_problem)
        st.info(
            f"The results below are for the last valid number of rounds, {int(last['rounds']):,}.",
            icon="↩️",
        )
        current = {**current, "rounds": last["rounds"]}
    if auto or run_clicked or st.session_state["lab__applied"] is None:
        st.session_state["lab__applied"] = dict(current)
    applied = st.session_state["lab__applied"]
    if applied != current:
        st.info(
            "Settings changed: press **▶ Run simulation** to simulate them. The results below "
            "are for the previous settings.",
            icon="⏸️",
        )

    def _variant_note() -> None:
        """Which algorithm ran (the correct one or a named bug), in words."""
        st.info(
            f"**{md_escape(_variant_label(applied['variant']).removeprefix('Bug: ').capitalize())}."
            f"** {md_escape(VARIANT_DESCRIPTIONS.get(applied['variant'], ''))}",
            icon="🧬",
        )

    if not PRESENTING:
        _variant_note()

    try:
        p_target = sc.parse_distribution(applied["p_text"], name="p")
        q_draft = sc.parse_distribution(applied["q_text"], name="q")
        if p_target.size != q_draft.size:
            raise sc.InvalidDistributionError(mismatch_message(p_target.size, q_draft.size))
        preset = PRESETS.get(applied["preset"])
        labels = preset.labels if preset is not None else sc.default_labels(p_target.size)
        with queue_status(f"Simulating {applied['rounds']:,} rounds…") as on_wait:
            result, report = lab_work.shared_simulation(
                tuple(p_target.tolist()),
                tuple(q_draft.tolist()),
                applied["k"],
                applied["rounds"],
                applied["seed"],
                applied["variant"],
                typed=preset is None,
                on_wait=on_wait,
            )
    except (sc.SpecDecError, QueueFullError) as err:
        show_error(err)
        show_source(sc.simulate_rounds, sc.losslessness_test)
        st.stop()

    def _preset_caption() -> None:
        """The preset's name and lesson (none for typed distributions)."""
        if preset is not None:
            st.caption(f"{md_escape(preset.label)}: {md_escape(preset.lesson)}")

    if not PRESENTING:
        _preset_caption()

    tok, lengths = report.tokens, report.tokens_per_round
    level = report.significance
    spec = sc.SIMULATED_VARIANTS.get(applied["variant"])
    LOSSLESS = spec is not None and spec.lossless
    STRICT = spec is not None and spec.keep_rule == "strict"  # keeps x iff x == y ~ p
    alpha = sc.acceptance_rate(p_target, q_draft)
    beta = vr.strict_acceptance(p_target, q_draft) if STRICT else None

    def _p_value(p: float) -> str:
        """chi2.sf underflows to 0 below about 1e-300: say so instead of printing 0."""
        return "< 1e-300" if p == 0 else f"{p:.3g}"

    def _p_latex(p: float) -> str:
        return r"< 10^{-300}" if p == 0 else f"= {p:.3g}"

    def _test_words(fit: sc.GoodnessOfFit) -> str:
        return f"chi-square {fit.statistic:.1f}, dof {fit.dof}, p-value {_p_value(fit.p_value)}"

    if report.passed:
        verdict = (
            f"PASS: the emitted tokens follow p ({_test_words(tok)}) and the round lengths "
            f"follow the theory ({_test_words(lengths)}); both p-values are at least the "
            f"significance level {level:g}."
        )
    else:
        failed = [
            name
            for name, fit in (
                ("the emitted tokens do not follow p", tok),
                ("the round lengths do not follow the theory", lengths),
            )
            if fit.p_value < level
        ]
        verdict = (
            f"FAIL: {' and '.join(failed)} (tokens: {_test_words(tok)}; round lengths: "
            f"{_test_words(lengths)}; significance level {level:g})."
        )
    token_fig, rounds_fig, diff_fig = _result_figs(
        tuple(p_target.tolist()),
        tuple(q_draft.tolist()),
        tuple(labels),
        applied["k"],
        applied["rounds"],
        applied["seed"],
        applied["variant"],
        result,
    )

    def _diff_chart() -> None:
        """Simulated share minus p per token, with the noise band."""
        chart(diff_fig, key="lab_fig_diff")
        st.caption(
            "Each mark is a token's simulated share minus what p predicts. The grey band is how "
            f"far a correct run of this size strays by chance (±{fl.NOISE_Z:g} standard "
            "deviations): marks inside it are noise; an ✗ outside it is a bias the eye would "
            "miss in the token bars."
        )

    with st.container(key="lab_verdict", border=True):
        (st.success if report.passed else st.error)(verdict)
    if applied["variant"] == "no_bonus":
        st.caption(
            "This bug is unbiased in tokens: the token test passes, only the tokens-per-round "
            "law catches it (rounds that kept every draft are one token short)."
        )
    elif not LOSSLESS and report.passed:
        st.caption(
            "This bug did not show with these settings (e.g. p = q never rejects, so the "
            "rejection path never runs): try another pair of distributions or more rounds."
        )
    if STRICT:
        with st.container(key="lab_strict"):
            st.caption(
                "Strict verification keeps a draft only when the target's own sample is the "
                f"same token: beta = sum p(x) q(x) = {beta:.3f} here, against alpha = "
                f"sum min(p, q) = {alpha:.3f} for the probabilistic rule. This run emitted "
                f"{result.mean_tokens_per_round:.2f} tokens per round (theory "
                f"E(beta, K) = {sc.expected_tokens(beta, applied['k']):.2f}), where the "
                f"probabilistic rule expects {sc.expected_tokens(alpha, applied['k']):.2f}."
            )
    if PRESENTING:  # the verdict and the chart that shows the bias in the first screen
        _diff_chart()
        _variant_note()
        _preset_caption()

    left, right = st.columns(2)
    with left:
        chart(
            _overlap_fig(tuple(p_target.tolist()), tuple(q_draft.tolist()), tuple(labels)),
            key="lab_fig_overlap",
        )
    with right:
        st.subheader("alpha: how much p and q overlap")
        st.latex(rf"\alpha = \sum_x \min(p(x), q(x)) = 1 - \mathrm{{TV}}(p, q) = {alpha:.3f}")
        st.write(
            "Where the two bar charts overlap, the draft proposes what "
            "the target would say anyway: "
            f"that overlap, {alpha:.3f} in total, is the chance that one "
            "drafted token is kept. The "
            f"rest, 1 - alpha = {1 - alpha:.3f}, is exactly the mass of the leftover max(0, p - q) "
            "that a rejected token is resampled from, which is why the output still follows p."
        )
        metrics = st.columns(3 if STRICT else 2)
        metrics[0].metric("alpha (expected)", f"{alpha:.3f}", help="sum over x of min(p(x), q(x))")
        if STRICT:
            metrics[1].metric(
                "beta (expected, strict)",
                f"{beta:.3f}",
                help="sum over x of p(x) q(x): the chance that the draft equals the target's "
                "own sample",
            )
        metrics[-1].metric(
            "kept / checked (simulated)",
            f"{result.drafted_accepted_fraction:.3f}",
            help="Positions after the first rejection of a round are never "
            "checked and do not count.",
        )
        st.caption(
            "Two definitions: alpha is the expected chance that one drafted token is kept; "
            "the simulated fraction counts kept drafts over checked drafts in the simulation. "
            + (
                "With strict verification the simulated fraction follows beta instead."
                if STRICT
                else "With the correct algorithm they agree up to noise."
            )
        )

    left, right = st.columns(2)
    with left:
        chart(token_fig, key="lab_fig_tokens")
        st.latex(rf"X^2 = \sum \frac{{(O - E)^2}}{{E}} = {tok.statistic:.1f}")
        st.latex(rf"\text{{dof}} = {tok.dof},\quad p\text{{-value}} {_p_latex(tok.p_value)}")
        st.caption(
            "O: tokens emitted at each position of a round; E: what p predicts for the rounds "
            "that reached that position (summed over positions). A small p-value (below "
            f"{level:g}) means counts this far from p would almost never happen by chance."
        )
    with right:
        chart(rounds_fig, key="lab_fig_rounds")
        rate = r"\beta" if STRICT else r"\alpha"
        st.latex(rf"P(n+1\ \text{{tokens}}) = {rate}^n (1-{rate}),\quad P(K+1) = {rate}^K")
        st.latex(
            rf"X^2 = {lengths.statistic:.1f},\quad \text{{dof}} = {lengths.dof},\quad "
            rf"p\text{{-value}} {_p_latex(lengths.p_value)}"
        )
        st.caption(
            "A round keeps n drafts, then adds one token: the resample after a rejection, or "
            "the bonus when all K are kept."
        )

    if not PRESENTING:
        _diff_chart()

    with st.expander("The counts behind the charts"):
        st.dataframe(fl.token_table(result, report, labels), hide_index=True)
        st.dataframe(fl.rounds_table(result), hide_index=True)
    download_csv(
        functools.partial(fl.results_csv_table, result, report, labels, seed=applied["seed"]),
        "losslessness_lab.csv",
        key="lab_csv",
        label="Download the results (CSV)",
    )

    shared = {name: applied[name] for name in ("preset", "k", "rounds", "seed", "variant")}
    if applied["preset"] == presets.CUSTOM:
        shared |= {"p": applied["p_text"], "q": applied["q_text"]}
    state.share(
        shared,
        caption="Share this run: add this to the page's address (the address bar already has it).",
    )

    show_source(sc.simulate_rounds, sc.losslessness_test)
