"""Variants lab: multi-draft, token trees, deterministic drafts and typical acceptance."""

from __future__ import annotations

import functools

import numpy as np
import streamlit as st

import specdec_core as sc
from specdec_core import variants as vr
from specdec_core import variants_tree as vt
from specdec_core.errors import mismatch_message
from specdec_ui import figures_lab as fl
from specdec_ui import figures_variants as fv
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

PAGE = page_setup(__file__)

with render_slot():  # the labs draw one session at a time (specdec_ui.render_gate)
    PRESETS = fv.PRESETS
    OPTIONS = [*PRESETS, fv.CUSTOM]
    VARIANTS = list(fv.VARIANT_NAMES)
    STEP = "var__step"  # index of the decision on screen
    SIGNATURE = "var__signature"  # what the stepped example was drawn from

    def _checked(parse):
        def check(raw: str) -> str:
            parse(raw)
            return raw

        return check

    def _unit_interval(raw: str) -> float:
        value = sc.parse_number(raw.strip(), name="link value")
        if not 0.0 < value <= 1.0:
            raise ValueError(f"{value:g} is out of range; allowed: (0, 1]")
        return value

    def _preset_values(key: str) -> dict[str, object] | None:
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
        preset_key = link.choice("preset", OPTIONS, fv.DEFAULT_PRESET)
        base = _preset_values(preset_key) or _preset_values(fv.DEFAULT_PRESET)
        p_text = link.get("p", _checked(lambda r: sc.parse_distribution(r, name="p")), None)
        q_text = link.get("q", _checked(lambda r: sc.parse_distribution(r, name="q")), None)
        if p_text is not None or q_text is not None:
            preset_key = fv.CUSTOM
        return {
            "preset": preset_key,
            "variant": link.choice("variant", VARIANTS, base["variant"]),
            "p_text": p_text if p_text is not None else base["p_text"],
            "q_text": q_text if q_text is not None else base["q_text"],
            "m": link.int_in("m", 1, fv.MAX_M_PAGE, base["m"]),
            "widths": link.get("widths", _checked(vt.parse_branching), base["widths"]),
            "token": link.int_in("token", 0, sc.MAX_TYPED_ENTRIES - 1, base["token"]),
            "k": link.int_in("k", 1, 8, base["k"]),
            "rounds": link.int_in("rounds", fv.MIN_ROUNDS, fv.MAX_ROUNDS_PAGE, fv.DEFAULT_ROUNDS),
            "seed": link.int_in("seed", 0, MAX_SEED, 0),
            "epsilon": link.get("epsilon", _unit_interval, vr.MEDUSA_EPSILON),
            "delta": link.get("delta", _unit_interval, vr.MEDUSA_DELTA),
            "broken": link.choice("broken", ["0", "1"], "0") == "1",
        }

    state = PageState(
        "var",
        {
            "preset": fv.DEFAULT_PRESET,
            **_preset_values(fv.DEFAULT_PRESET),
            "rounds": fv.DEFAULT_ROUNDS,
            "seed": 0,
            "epsilon": vr.MEDUSA_EPSILON,
            "delta": vr.MEDUSA_DELTA,
            "broken": False,
        },
    )
    if (link := state.first_visit()) is not None:
        state.start(_values_from_link(link), link.problems)
    state.restore()
    _apply_preset = state.apply_preset(_preset_values)
    _to_custom = state.to_custom(fv.CUSTOM)

    def _step_to(index: int) -> None:
        st.session_state[STEP] = index

    def _variant_inputs(variant: str) -> None:
        """The inputs only one variant has (candidates, tree widths, the draft token, ...)."""
        if variant == "multi_draft":
            st.slider(
                "m: candidates per position", 1, fv.MAX_M_PAGE, key="var_m", on_change=_to_custom
            )
            st.checkbox(
                "Break it: skip the residual update",
                key="var_broken",
                help="Try every candidate against the original p: a common mistake. The Monte "
                "Carlo test below should catch it.",
            )
        if variant == "tree":
            st.text_input(
                "Tree widths per level",
                key="var_widths",
                on_change=_to_custom,
                max_chars=40,
                help="Children per node at each level, e.g. 3, 2: three children of the root, two "
                "under each. 1 to 4 levels, 1 to 4 children.",
            )
        if variant == "deterministic":
            st.number_input(
                "Draft token (its index, from 0)",
                0,
                sc.MAX_TYPED_ENTRIES - 1,
                key="var_token",
                on_change=_to_custom,
                help="Prompt lookup proposes this token for sure: q is one-hot on it.",
            )
        if variant == "typical_acceptance":
            st.number_input("epsilon (hard threshold)", 0.01, 1.0, step=0.01, key="var_epsilon")
            st.number_input("delta (entropy factor)", 0.01, 1.0, step=0.01, key="var_delta")

    PRESENTING = presenting()  # projector: the inputs and the intro fold away
    page_heading(
        PAGE,
        "Real systems go beyond one draft per position: several candidates, token trees, drafts "
        "without probabilities, and rules that trade exactness for speed. Step through each rule "
        "one decision at a time, then test it with the same "
        "chi-square test as the Losslessness lab.",
        presenting=PRESENTING,
    )
    state.warn_link()

    # Inputs in the main column, like every other page (a phone folds the sidebar away with
    # no hint); folded in presenter view. Columns stack on a phone.
    with st.expander("⚙️ Inputs: variant, p and q, rounds, seed", expanded=not PRESENTING):
        in_left, in_right = st.columns(2)
        with in_left:
            st.selectbox(
                "Preset",
                OPTIONS,
                key="var_preset",
                on_change=_apply_preset,
                format_func=lambda k: "Custom" if k == fv.CUSTOM else PRESETS[k].label,
            )
            st.selectbox(
                "Variant",
                VARIANTS,
                key="var_variant",
                format_func=fv.VARIANT_NAMES.get,
                on_change=_to_custom,
            )
            variant = st.session_state["var_variant"]
            st.text_input(
                "Target p", key="var_p_text", on_change=_to_custom, max_chars=sc.MAX_TEXT_LENGTH
            )
            if variant != "deterministic":
                st.text_input(
                    "Draft q", key="var_q_text", on_change=_to_custom, max_chars=sc.MAX_TEXT_LENGTH
                )
        with in_right:
            _variant_inputs(variant)
            if variant != "tree":
                st.slider("K: positions per round (Monte Carlo)", 1, 8, key="var_k")
            st.number_input(
                "Rounds to simulate",
                fv.MIN_ROUNDS,
                fv.MAX_ROUNDS_PAGE,
                step=10_000,
                key="var_rounds",
            )
            seed_control("var")

    current = state.keep()
    seed = int(current["seed"])
    preset = PRESETS.get(current["preset"])

    def _inputs(state: dict):
        """Parsed inputs of the current state (raises SpecDecError on bad input)."""
        p_target = sc.parse_distribution(state["p_text"], name="p")
        labels = preset.labels if preset is not None else sc.default_labels(p_target.size)
        if len(labels) != p_target.size:
            labels = sc.default_labels(p_target.size)
        if state["variant"] == "deterministic":
            if not 0 <= state["token"] < p_target.size:
                raise sc.InvalidParameterError(
                    f"draft token {state['token']} does not exist; p has tokens 0 to "
                    f"{p_target.size - 1}."
                )
            return p_target, vr.one_hot(p_target.size, state["token"]), labels, None
        q_draft = sc.parse_distribution(state["q_text"], name="q")
        if q_draft.size != p_target.size:
            raise sc.InvalidDistributionError(mismatch_message(p_target.size, q_draft.size))
        widths = vt.parse_branching(state["widths"]) if state["variant"] == "tree" else None
        return p_target, q_draft, labels, widths

    try:
        p_target, q_draft, labels, widths = _inputs(current)
    except sc.SpecDecError as err:
        show_error(err)
        show_source(vr.multidraft_step, vt.verify_tree)
        st.stop()

    if preset is not None:
        st.info(f"**{md_escape(preset.label)}.** {md_escape(preset.lesson)}", icon="💡")

    # --- 1. Step through one decision at a time ---------------------------------------------
    st.header("Step through one decision at a time")
    rng = np.random.default_rng(seed)
    signature = (
        current["variant"],
        tuple(p_target.tolist()),
        tuple(q_draft.tolist()),
        current["m"],
        widths,
        current["token"],
        current["epsilon"],
        current["delta"],
        seed,
    )
    if st.session_state.get(SIGNATURE) != signature:
        st.session_state[SIGNATURE] = signature
        st.session_state[STEP] = 0
    try:
        if variant == "multi_draft":
            candidates = vr.draft_candidates(q_draft, current["m"], rng)
            example = vr.multidraft_step(p_target, q_draft, candidates, rng=rng)
            n_steps = fv.chain_decisions(example)
        elif variant == "tree":
            example = vt.verify_tree(
                p_target, q_draft, vt.draft_tree(q_draft, widths, rng), rng=rng
            )
            n_steps = len(example.node_steps) + 1
        elif variant == "deterministic":
            example = vr.onehot_match_step(p_target, current["token"], rng=rng)
            n_steps = 3
        else:
            drafted = vr.draft_candidates(q_draft, 1, rng)[0]
            eps, dlt = current["epsilon"], current["delta"]
            example = vr.typical_step(p_target, drafted, epsilon=eps, delta=dlt)
            n_steps = 2
    except sc.SpecDecError as err:
        show_error(err)
        st.stop()

    shown = min(int(st.session_state.get(STEP, 0)), n_steps - 1)
    cols = st.columns([1, 1, 1, 3])
    cols[0].button(
        "⏮ Start over", key="var_first", on_click=_step_to, args=(0,), disabled=shown == 0
    )
    cols[1].button(
        "◀ Back", key="var_back", on_click=_step_to, args=(shown - 1,), disabled=shown == 0
    )
    cols[2].button(
        "Next ▶",
        key="var_next",
        on_click=_step_to,
        args=(shown + 1,),
        disabled=shown >= n_steps - 1,
        type="primary",
    )
    cols[3].progress((shown + 1) / n_steps)
    st.subheader(f"Decision {shown + 1} of {n_steps}")

    if variant == "multi_draft":
        st.caption(
            f"Drafted {current['m']} candidates from q: "
            f"{md_escape(', '.join(labels[x] for x in example.candidates))}. "
            "They are tried in order."
        )
        figure = fv.residual_chain_figure(example, shown, labels)
        lines = fv.chain_lines(example, shown, labels)
    elif variant == "tree":
        figure = fv.tree_figure(example, shown, labels)
        lines = fv.tree_lines(example, shown, labels)
    elif variant == "deterministic":
        general = vr.onehot_general_rule(p_target, current["token"])
        match = vr.onehot_match_rule(p_target, current["token"])
        x_label = labels[current["token"]]
        if shown == 0:
            figure = fv.onehot_figure(general, match, labels)
            lines = [
                f"q is one-hot on {x_label}, so min(1, p/q) = p({x_label}) = "
                f"{general.keep_probability:.3f}, and max(0, p - q) is p with {x_label} removed.",
                "Sampling y ~ p and keeping the draft iff y = the draft "
                "gives the same two numbers: "
                "both bars agree.",
            ]
        elif shown == 1:
            figure = fv.emitted_figure(p_target, general.emitted(), labels, title="Emitted = p")
            verdict = "kept" if example.accepted else f"rejected, emit {labels[example.sampled]}"
            lines = [
                f"Coin {example.coin:.3f} samples y = {labels[example.sampled]} from p: "
                f"the draft {x_label} is {verdict}.",
                "Over many rounds the emitted token follows p exactly: lossless.",
            ]
        else:
            greedy = vr.greedy_rule(p_target, current["token"])
            figure = fv.emitted_figure(
                p_target, greedy.emitted(), labels, title="Greedy check (T = 0): emits argmax p"
            )
            best = labels[int(np.argmax(greedy.replacement))]
            word = "kept" if greedy.keep_probability else "rejected"
            lines = [
                f"At temperature 0 the target is one-hot on its argmax, {best}: the draft "
                f"{x_label} is kept iff it is {best} ({word} here), and a rejection emits {best}.",
                "The general rule with a one-hot p gives exactly this: the output is the target's "
                "own greedy text, whatever the draft proposes.",
            ]
    else:
        emitted = vr.emitted_distribution(
            "typical_acceptance", p_target, q_draft, epsilon=eps, delta=dlt
        )
        tv = vr.total_variation(emitted, p_target)
        if shown == 0:
            figure = fv.typical_figure(p_target, q_draft, example.token, eps, dlt, labels)
            verdict = (
                "kept"
                if example.accepted
                else f"rejected: emit argmax p = {labels[example.emitted_token]}"
            )
            lines = [
                f"H(p) = {example.entropy:.3f} nats, tau = min({eps:g}, {dlt:g} x exp(-H)) = "
                f"{example.threshold:.3f}.",
                f"The draft proposed {labels[example.token]} with p = "
                f"{example.p_x:.3f}: {verdict}.",
                "No coin, and q is never looked at.",
            ]
        else:
            figure = fv.emitted_figure(
                p_target,
                emitted,
                labels,
                title=f"What typical acceptance emits: TV from p = {tv:.3f}",
            )
            lines = [
                f"Exact law of the emitted token: q on the tokens above tau, the rest moved to "
                f"argmax p. Its total variation distance from p is {tv:.3f}: not lossless.",
            ]
    chart(figure, key="var_fig_step")
    st.markdown("\n".join(f"{i + 1}. {md_escape(line)}" for i, line in enumerate(lines)))

    # --- 2. Monte Carlo: the same chi-square test as the Losslessness lab -------------------
    st.header("Many rounds: does the output follow p?")

    options = {
        "k": current["k"],
        "m": current["m"],
        "widths": widths,
        "epsilon": current["epsilon"],
        "delta": current["delta"],
    }
    sim_variant, k_sim, sim_options = fv.simulation_args(variant, **options)
    if sim_variant == "multi_draft" and variant == "multi_draft" and current["broken"]:
        sim_variant = "multi_draft_no_residual"
    try:
        with queue_status(f"Simulating {current['rounds']:,} rounds…") as on_wait:
            result, report = lab_work.shared_simulation(
                tuple(p_target.tolist()),
                tuple(q_draft.tolist()),
                k_sim,
                current["rounds"],
                seed,
                sim_variant,
                options=tuple(sim_options.items()),
                typed=True,  # p and q may be typed: the stored result expires
                on_wait=on_wait,
            )
        law_options = {key: options[key] for key in ("m", "widths", "epsilon", "delta")}
        law_options["broken"] = sim_variant == "multi_draft_no_residual"
        emitted = fv.emitted_law(variant, p_target, q_draft, **law_options)
        ours, basic, drafted = fv.expected_tokens_of(variant, p_target, q_draft, **options)
    except (sc.SpecDecError, QueueFullError) as err:
        show_error(err)
        st.stop()

    if sim_variant == "multi_draft_no_residual":
        st.caption(
            "Broken on purpose: every candidate is tried against the original p. The stepper above "
            "shows the correct rule; the broken one runs here."
        )
    tok = report.tokens
    words = f"chi-square {tok.statistic:.1f}, dof {tok.dof}, p-value {fv.p_value_text(tok.p_value)}"
    with st.container(key="var_verdict", border=True):
        if tok.p_value >= presets.SIGNIFICANCE:
            st.success(
                f"PASS: the emitted tokens follow p ({words}; significance level "
                f"{presets.SIGNIFICANCE:g}).",
                icon="✅",
            )
        else:
            st.error(
                f"FAIL: the emitted tokens do not follow p ({words}; significance level "
                f"{presets.SIGNIFICANCE:g}).",
                icon="❌",
            )
    tv = vr.total_variation(emitted, p_target)
    broken = sim_variant == "multi_draft_no_residual"
    a, b, c, d = st.columns(4)
    a.metric(
        "tokens per round (simulated)",
        f"{result.tokens_per_round_counts @ np.arange(k_sim + 2) / result.n_rounds:.3f}",
    )
    b.metric(
        "tokens per round (exact, correct rule)" if broken else "tokens per round (exact)",
        f"{ours:.3f}",
        help="The correct rule's exact value: the broken run beside it is not held to it."
        if broken
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
    if variant == "typical_acceptance":
        st.caption(
            f"The exact TV, {tv:.3f}, is that of one drafted position: its token is the kept "
            "draft, or argmax p after a rejection. The histogram below counts every token of "
            "every round, including the token after K kept drafts, which typical acceptance "
            "also takes as argmax p (Medusa's default) instead of sampling p: so its bars lie "
            f"further from p (TV of the histogram: {fv.histogram_tv(result, p_target):.3f})."
        )
    left, right = st.columns(2)
    with left:
        chart(fl.token_histogram_figure(result, labels), key="var_fig_tokens")
    with right:
        chart(fl.tokens_per_round_figure(result), key="var_fig_rounds")

    # --- 3. How many candidates? --------------------------------------------------------------
    st.header("Tokens per round against the number of candidates")
    if variant == "tree":
        chart(fv.tree_width_figure(p_target, q_draft, len(widths), widths[0]), key="var_fig_width")
    else:
        m_now = current["m"] if variant == "multi_draft" else 1
        chart(fv.candidates_figure(p_target, q_draft, k_sim, m_now), key="var_fig_candidates")
        if variant == "multi_draft":
            alpha, beta = vr.multidraft_acceptance(p_target, q_draft, [1, m_now])
            st.caption(
                f"With m = {m_now} candidates a position keeps one of them with probability "
                f"beta_{m_now} = {beta:.3f}; with one candidate it is alpha = beta_1 = "
                f"{alpha:.3f}."
            )
        if variant == "typical_acceptance":
            st.caption(
                f"Typical acceptance drafts one candidate per position and emits {ours:.3f} tokens "
                f"per round against {basic:.3f} for the basic rule, at the price of TV = {tv:.3f}."
            )

    settings = {
        "variant": variant,
        "simulated as": sim_variant,
        "K": k_sim,
        "rounds simulated": result.n_rounds,
        "seed": seed,
        **{name: str(value) for name, value in sim_options.items()},
    }
    download_csv(
        functools.partial(fv.results_csv_table, result, labels, emitted, settings),
        "variants_lab.csv",
        key="var_csv",
        label="Download the results (CSV)",
    )

    values = {
        "preset": current["preset"],
        "variant": variant,
        "m": current["m"],
        "widths": current["widths"],
        "token": current["token"],
        "k": current["k"],
        "rounds": current["rounds"],
        "seed": seed,
        "epsilon": current["epsilon"],
        "delta": current["delta"],
        "broken": int(bool(current["broken"])),
    }
    if current["preset"] == fv.CUSTOM:
        values |= {"p": current["p_text"], "q": current["q_text"]}
    state.share(values)

    show_source(
        {
            "multi_draft": vr.multidraft_step,
            "tree": vt.verify_tree,
            "deterministic": vr.onehot_general_rule,
            "typical_acceptance": vr.typical_step,
        }[variant],
        sc.simulate_rounds,
    )
