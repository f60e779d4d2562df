"""Model pair lab: real speculative decoding with small language models, in numpy."""

from __future__ import annotations

import streamlit as st

import specdec_core.lm as lm
from specdec_core import SpecDecError
from specdec_core.lm.timing import impossible_reasons
from specdec_ui import figures_lm as fl
from specdec_ui import lm_work as lw
from specdec_ui import shared_work as sw
from specdec_ui.page_state import PageState
from specdec_ui.presenter import chart, presenting
from specdec_ui.render_gate import render_slot
from specdec_ui.text import md_escape
from specdec_ui.widgets import page_setup, seed_control, show_error, show_source

PAGE = page_setup(__file__)

with render_slot():  # the labs draw one session at a time (specdec_ui.render_gate)
    ROUND = "lm_round"  # the round shown in step mode (a widget key; buttons move it)
    KIND_WORD = {"accepted": "kept drafts", "resampled": "resampled", "bonus": "bonus"}
    MODE_KEYS = {label: key for key, label in lw.MODES.items()}

    # Figures are shared read-only by every session (st.plotly_chart serialises a copy),
    # keyed on the small request key (hashing the token list cost more than the lookup).
    def _text_figure(request: tuple, upto: int, pieces: list[tuple[str, str]]):
        build = lambda: fl.token_text_figure(pieces)  # noqa: E731
        return sw.shared_result(
            "lm.fig.text", (request, upto), build, heavy=False, ttl_s=sw.TEXT_TTL_S
        )

    def _speedup_figure(rows: tuple[tuple[str, float], ...]):
        return sw.shared_result(
            "lm.fig.speedup", rows, lambda: fl.speedup_figure(rows), heavy=False
        )

    def _link_values(pairs: list[str]) -> None:
        """On the session's first run of the page: the settings from the link."""
        if (link := page.first_visit()) is None:
            return
        values, problems = lw.state_from_link(link.params, pairs)
        values["mode"] = lw.MODES[values["mode"]]  # the radio holds the label
        page.start(values, problems)

    st.title(f"{PAGE.icon} {PAGE.title}")
    st.write(
        "Real language models, trained on Python's own documentation, run speculative decoding "
        "here in numpy. The **draft** q proposes K tokens, the **target** p checks them all in "
        "one call, keeps each with probability min(1, p/q), resamples the first rejected one "
        "and adds a free bonus token when all K survive. Beside it the same target decodes the "
        "same prompt the plain way, one call per token, so you can compare the clocks."
    )
    pairs = lm.available_pairs()
    page = PageState(
        "lm",
        {
            "pair": lw.DEFAULT_PAIR if lw.DEFAULT_PAIR in pairs else pairs[0],
            "prompt": lw.DEFAULT_PROMPT,
            "k": lw.DEFAULT_K,
            "temperature": 0.0,
            "seed": 0,
            "tokens": lw.DEFAULT_TOKENS,
            "mode": lw.MODES["run"],
            "round": 1,
        },
    )
    _link_values(pairs)
    page.restore()
    page.warn_link()

    # The inputs, folded away in presenter view (the projector shows the text and charts).
    with (
        st.expander("⚙️ Inputs: model pair, prompt, K, temperature, seed", expanded=False)
        if presenting()
        else st.container(border=True)
    ):
        left, mid, right = st.columns([3, 2, 2])
        with left:
            pair = st.selectbox(
                "Model pair", pairs, key="lm_pair", format_func=lambda n: lm.pair_info(n).label
            )
            info = lm.pair_info(pair)
            st.caption(
                md_escape(
                    f"Draft: {info.draft}. Target: {info.target}. {info.description} {info.why}"
                )
            )
            prompt = st.text_area(
                "Prompt (plain ASCII text)",
                key="lm_prompt",
                max_chars=lm.MAX_PROMPT_CHARS,
                height=90,
            )
        with mid:
            temperature = st.slider(
                "Temperature T",
                0.0,
                lw.T_MAX,
                step=0.1,
                key="lm_temperature",
                help="0 = greedy (argmax on both sides): the output must equal "
                "the target's own greedy output.",
            )
            k = st.slider("K (draft tokens per round)", 1, lw.K_MAX, key="lm_k")
            n_tokens = st.slider(
                "Tokens to generate",
                lw.TOKENS_MIN,
                lw.TOKENS_MAX,
                step=lw.TOKENS_STEP,
                key="lm_tokens",
            )
        with right:
            seed = seed_control("lm")
            if temperature == 0:
                st.caption(lw.GREEDY_SEED_NOTE)
            mode = MODE_KEYS[
                st.radio("Show", list(lw.MODES.values()), key="lm_mode", horizontal=True)
            ]

    temperature, k, n_tokens = round(float(temperature), 1), int(k), int(n_tokens)
    waiting = st.empty()
    try:
        run = lw.get_run(
            pair,
            prompt,
            k,
            temperature,
            n_tokens,
            seed,
            trace=mode == "step",
            on_wait=lambda status: waiting.info(status.text, icon="⏳"),
        )
    except SpecDecError as err:
        waiting.empty()
        show_error(err)
        st.stop()
    except sw.QueueFullError as err:
        waiting.empty()
        st.warning(md_escape(err), icon="⏳")
        st.stop()
    waiting.empty()

    vocab = lm.load_tokenizer().vocab  # shared by every pair
    spec, counts = run.spec, run.counts
    n_rounds = counts.rounds
    st.session_state[ROUND] = max(1, min(n_rounds, int(st.session_state.get(ROUND, 1))))

    def go_to(i: int) -> None:
        st.session_state[ROUND] = max(1, min(n_rounds, i))

    if mode == "step":
        r = st.session_state[ROUND]
        cols = st.columns([1, 1, 1, 1, 4])
        buttons = [("⏮ First", "lm_first", 1), ("◀ Back", "lm_back", r - 1)]
        buttons += [("Next ▶", "lm_next", r + 1), ("Last ⏭", "lm_last", n_rounds)]
        for col, (label, key, target) in zip(cols, buttons, strict=False):
            col.button(
                label,
                key=key,
                on_click=go_to,
                args=(target,),
                disabled=target == r or not 1 <= target <= n_rounds,
                type="primary" if key == "lm_next" else "secondary",
                width="stretch",
            )
        with cols[4]:
            if n_rounds > 1:
                st.slider("Jump to round", 1, n_rounds, key=ROUND)
            st.caption(f"Round {r} of {n_rounds}")
        rnd = spec.rounds[r - 1]
        end = min(len(spec.tokens), rnd.start + len(rnd.emitted))
        shown_tokens, shown_kinds = spec.tokens[:end], spec.kinds[:end]
        st.caption("The run was made with your seed; stepping replays it round by round.")
    else:
        r = 1
        shown_tokens, shown_kinds = spec.tokens, spec.kinds

    st.subheader("Generated text")
    pieces = [(vocab[t], "prompt") for t in run.prompt_ids]
    pieces += [(vocab[t], kind) for t, kind in zip(shown_tokens, shown_kinds, strict=True)]
    request = lw.run_key(pair, prompt, k, temperature, n_tokens, seed, trace=mode == "step")
    chart(_text_figure(request, len(shown_tokens), pieces), key="lm_text_chart")
    with st.container(key="lm_output", border=True):
        st.caption("The same text, plain (prompt + generated):")
        st.text(prompt + lm.load_tokenizer().decode(shown_tokens))
    if temperature == 0:
        st.caption(
            "Small models often repeat themselves when they always pick their top token "
            "(T = 0). Raise the temperature for varied text; the mechanics stay the same."
        )
    in_text = {kind: shown_kinds.count(kind) for kind in KIND_WORD}
    st.caption(
        ("Tokens in the text so far: " if mode == "step" else "Tokens in the text: ")
        + " · ".join(f"{fl.KIND_STYLE[k_][1]} {n} {KIND_WORD[k_]}" for k_, n in in_text.items())
    )
    if counts.cut:
        st.info(
            f"The last round produced {counts.cut} token{'s' if counts.cut > 1 else ''} more than "
            f"the {counts.n_tokens} asked for; {'they were' if counts.cut > 1 else 'it was'} cut "
            f"from the text. The per-round figures below count all {counts.emitted} tokens the "
            f"{counts.rounds} rounds produced, so the text holds {counts.text_count('accepted')} "
            f"of the {counts.kept} kept drafts.",
            icon="✂️",
        )

    quiet = lm.load_pair(pair)[0]  # a draft that may propose nothing (prompt lookup)
    if spec.empty_rounds:
        st.info(
            f"In {spec.empty_rounds} of {n_rounds} rounds the draft proposed nothing: "
            f"{getattr(quiet, 'quiet_why', 'it had no guess')}. Those rounds ran one plain "
            f"step of the target. {getattr(quiet, 'quiet_gain', '')}",
            icon="🔎",
        )

    rnd = spec.rounds[r - 1] if mode == "step" else None
    n_drafts = len(rnd.positions) - 1 if rnd else 0  # prompt lookup may propose fewer than K
    if rnd is not None and n_drafts == 0:
        short = getattr(quiet, "quiet_short", "no guess")
        st.subheader(f"Round {r}: {short}, nothing proposed")
        st.write("The target made one plain step: its token is the round's only token.")
        chart(
            fl.final_figure(rnd.final_top, rnd.final_token, vocab, kind=rnd.final_kind),
            key="lm_final",
        )
    elif rnd is not None:
        st.subheader(
            f"Round {r}: {rnd.n_accepted} of {n_drafts} drafts kept, then a "
            f"{'bonus' if rnd.final_kind == 'bonus' else 'resampled'} token"
        )
        chips = [(vocab[p.token], p.status) for p in rnd.positions[:-1]]
        chips.append(
            (vocab[rnd.final_token], "bonus" if rnd.final_kind == "bonus" else "resampled")
        )
        st.caption("Drafted tokens (kept ✓, rejected ✗, discarded –) and the round's last token:")
        chart(fl.token_text_figure(chips), key="lm_chips")
        st.write(
            f"The draft proposed {n_drafts} tokens; the target scored the last accepted "
            f"token and all {n_drafts} drafts in one call, which gives "
            f"{n_drafts + 1} distributions "
            "p. A drafted "
            "token x is kept when the coin u is below a = min(1, p(x)/q(x)); the first rejection "
            "ends the round (later drafts are discarded unchecked)."
        )
        # The bonus position's p is only used when every draft was kept.
        positions = rnd.positions if rnd.final_kind == "bonus" else rnd.positions[:-1]
        chart(fl.position_bars_figure(positions, vocab), key="lm_bars")
        st.caption(
            "Top tokens of p (target, orange) and q (draft, blue hatched) at each position; "
            "▶ and a black outline mark the drafted token."
            + (
                ""
                if rnd.final_kind == "bonus"
                else " No bonus position: this round ended with a "
                "rejection, so p at position K + 1 was never used."
            )
        )
        left, right = st.columns(2)
        with left:
            chart(fl.coin_figure(rnd.positions), key="lm_coins")
        with right:
            chart(
                fl.final_figure(rnd.final_top, rnd.final_token, vocab, kind=rnd.final_kind),
                key="lm_final",
            )
        if temperature == 0:
            st.info(
                "At T = 0 p and q are one-hot (argmax): a draft is kept exactly when it is the "
                "target's top token. Raise T to see real coins.",
                icon="ℹ️",
            )

    st.subheader("Counted in this run")
    c1, c2, c3 = st.columns(3)
    c1.metric(
        "Acceptance rate (measured)",
        f"{counts.acceptance_rate:.0%}" if counts.checked else "—",
        help="Drafted tokens kept / drafted tokens checked. A draft after a rejection is "
        "discarded without a check and does not count.",
    )
    c1.caption(
        f"Drafts kept / drafts checked = {counts.kept} / {counts.checked} (a draft after a "
        f"rejection is never checked). Expected α = mean of Σ min(p, q) at the checked "
        f"positions = {spec.expected_acceptance_rate:.2f}"
    )
    c2.metric(
        "Tokens per round",
        f"{counts.tokens_per_round:.2f}",
        help="Tokens the rounds produced / rounds (before the cut at the token limit).",
    )
    c2.caption(
        f"{counts.emitted} tokens from {counts.rounds} rounds: {counts.rejected} ended with a "
        f"resample, {counts.bonus_rounds} with a bonus."
    )
    if counts.parallel_verify:
        saved = counts.calls_saved
        c3.metric(
            "Target calls",
            f"{counts.target_calls}",
            f"{saved} fewer ({saved / counts.plain_calls:.0%})" if saved > 0 else "no saving",
            delta_color="normal" if saved > 0 else "off",
            help="One call per round (it checks all K drafts at once); plain decoding calls "
            "the target once per token.",
        )
        c3.caption(f"{counts.target_calls} calls instead of {counts.plain_calls} (one per token)")
    else:
        extra = counts.target_calls - counts.plain_calls
        c3.metric(
            "Target lookups",
            f"{counts.target_calls}",
            help="An n-gram target has no parallel verify: each of the K + 1 positions of a "
            "round is its own lookup.",
        )
        c3.caption(
            f"{counts.target_calls} lookups ({counts.rounds} rounds × {k + 1} positions) against "
            f"{counts.plain_calls} for plain decoding: "
            + (
                f"{extra} more, no saving (this target checks each position on its own)."
                if extra >= 0
                else f"{-extra} fewer."
            )
        )

    if temperature == 0:
        verdict = (
            "identical to the target's own greedy output ✓"
            if run.identical
            else "DIFFERENT from the target's greedy output ✗ (a bug: please report it)"
        )
        st.write(f"At T = 0 the speculative output is **{verdict}**.")
    else:
        st.write(
            "At T > 0 the output is not the same as plain sampling token for token (the coins "
            "are used differently); it follows the same distribution. The Losslessness lab "
            "tests that statistically."
        )

    def _measured_figure(speed, reasons: list[str]) -> None:
        """The measured speedup with its range and method, or why it is refused."""
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
            "Speedup (measured)",
            f"{speed.speedup:.2f}x",
            help="Plain decoding CPU time / speculative decoding CPU time, median of "
            f"{len(speed.speedups)} repeats.",
        )
        st.caption(
            f"Range {lo:.2f}x to {hi:.2f}x over {len(speed.speedups)} repeats. Measured "
            f"once on this server for this pair, K = {k} and T = {temperature:g}, on the "
            f"reference run (the default prompt, {speed.n_tokens} tokens), and shared "
            "by every visitor: CPU time of the measuring thread "
            f"(`{speed.clock}`), speculative and plain decoding taking turns round by "
            "round, so other visitors' work does not distort it."
        )
        if (hi - lo) > 0.3 * speed.speedup:
            st.caption("The repeats disagree by more than 30 %: treat the figure as rough.")

    def _formulas(speed, pred) -> None:
        """Unit costs, E(alpha, K) and the seeds' and corrected predictions, with numbers."""
        st.write(
            f"Measured unit costs: one draft step costs **c = {speed.c:.3f}** target steps; "
            f"everything else in a round (the target call on K + 1 = {k + 1} tokens, the "
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
            f"α = {a:.2f} is your run's acceptance rate; E is the i.i.d. model's expected "
            f"tokens per round at that α (your run: {counts.tokens_per_round:.2f})."
        )
        st.latex(
            rf"S_{{\text{{seeds}}}} = \frac{{E}}{{K c + 1}} = \frac{{E}}{{{k}\cdot{speed.c:.3f}"
            rf" + 1}} = {pred.seeds:.2f}"
        )
        st.latex(
            rf"S_{{\text{{corrected}}}} = \frac{{E}}{{K c + v(K)}} = \frac{{E}}{{{k}\cdot"
            rf"{speed.c:.3f} + {speed.v:.2f}}} = {pred.corrected:.2f}"
        )

    def _comparison_chart(speed, pred, reasons: list[str]) -> None:
        """Measured vs predicted speedups, with an optional GPU-like (v = 1) row."""
        gpu = st.toggle(
            "GPU-like cost model (v = 1)",
            key="lm_gpu",
            help="What the papers' hardware gives: verifying K + 1 tokens costs one step.",
        )
        rows = [] if reasons else [("measured", speed.speedup)]
        rows += [("seeds' formula", pred.seeds), ("corrected (measured v)", pred.corrected)]
        if gpu:
            c_gpu = st.slider("c (draft step / target step)", 0.0, 1.0, 0.05, 0.01, key="lm_gpu_c")
            gpu_speedup = lm.gpu_like_prediction(pred.alpha, k, c_gpu)
            rows.append((f"GPU-like (v = 1, c = {c_gpu:.2f})", gpu_speedup))
            st.latex(
                rf"\frac{{E}}{{K c + 1}} = \frac{{E}}{{{k}\cdot{c_gpu:.2f} + 1}} = "
                rf"{gpu_speedup:.2f}"
            )
            st.caption(
                "Same α, but the costs of a large model on a GPU (the papers report 2-3x "
                "with c between 0.02 and 0.1)."
            )
        rounded = tuple((label, round(float(value), 2)) for label, value in rows)
        chart(_speedup_figure(rounded), key="lm_speedup")

    def _speed_section(speed) -> None:
        """The measured speedup of (pair, K, T), the formulas, and the GPU-like switch."""
        reasons = impossible_reasons(speed)
        pred = lw.predictions(counts, speed)
        left, right = st.columns([3, 2])
        with left:
            _measured_figure(speed, reasons)
            _formulas(speed, pred)
            st.write(
                "The seeds' formula assumes that verifying K + 1 tokens costs one target step. On "
                "a GPU that is nearly true: a step is memory-bound (reading the weights "
                "dominates), so scoring a few more tokens is almost free. A tiny model on a CPU "
                "is different: its few megabytes of weights stay in the processor's cache, so a "
                "step is bound by arithmetic, not by reading weights, and the work grows with "
                "the number of tokens (its matrix products take about 3 times as long for 4 "
                "tokens as for one, here). So v(K) is above 1, and the corrected formula, which "
                "uses the measured v(K), comes closer to the clock."
            )
            if not speed.parallel_verify:
                st.warning(
                    "This target is an n-gram model: it has no parallel verify, so checking "
                    "K + 1 positions costs K + 1 lookups (v(K) ≈ K + 1). Speculative decoding "
                    "saves it nothing; the pair is here to show the mechanics.",
                    icon="🐢",
                )
        with right:
            _comparison_chart(speed, pred, reasons)

    st.subheader("Measured against plain decoding of the same target")
    speed_ready = sw.peek("lm.speed", (pair, k, temperature)) is not sw.MISSING

    @st.fragment(run_every=None if speed_ready else 1.5)
    def speed_fragment() -> None:
        """Poll the shared measurement while it runs; draw the section once it is there."""
        try:
            speed = lw.get_speed(pair, k, temperature)
        except sw.QueueFullError as err:
            st.warning(md_escape(err), icon="⏳")
            return
        except SpecDecError as err:
            show_error(err)
            return
        if speed is sw.MISSING:
            status = sw.status("lm.speed", (pair, k, temperature))
            where = status.text if status is not None else "Starting…"
            st.info(
                f"⏱️ Measuring the speed of this pair at K = {k}, T = {temperature:g} on this "
                f"server (once, then shared by every visitor). {where}",
                icon="⏳",
            )
            return
        if not speed_ready:
            st.rerun()  # draw the page once more with the figure, and stop polling
        _speed_section(speed)

    speed_fragment()

    state = {
        "pair": pair,
        "prompt": prompt,
        "k": k,
        "temperature": temperature,
        "seed": seed,
        "tokens": n_tokens,
        "mode": mode,
        "round": r,
    }
    page.keep()
    page.share(lw.link_params(state))
    show_source(lm.speculative_generate)
