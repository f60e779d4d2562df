"""Model pair lab: real speculative decoding with small language models, in numpy."""

from __future__ import annotations

import streamlit as st

import specdec_core.lm as lm
from specdec_core import SpecDecError
from specdec_ui import figures_lm as fl
from specdec_ui.text import md_escape
from specdec_ui.widgets import page_setup, seed_control, show_error, show_source

page_setup("Model pair lab", "🤖")

DEFAULT_PROMPT = "Return the number of"
DEFAULT_PAIR = "trigram-to-gpt-4L"  # the fastest pair here (benchmarks/results_model_pairs.md)
DEFAULT_K = 3  # its best K at T = 0 on the default prompt
RUN_KEY = "lm__run"  # the last run and the settings it was made with (not a widget key)
ROUND_KEY = "lm__round"  # the round shown in step mode
KIND_WORD = {"accepted": "kept drafts", "resampled": "resampled", "bonus": "bonus"}


@st.cache_resource(show_spinner="Loading the model pair (once per server)…")
def load(name: str):
    return lm.load_pair(name)


st.title("🤖 Model pair lab")
st.write(
    "Real language models, trained on Python's own documentation, run speculative decoding "
    "here in numpy. The **draft** q proposes K tokens, the **target** p checks them all in "
    "one call, keeps each with probability min(1, p/q), resamples the first rejected one "
    "and adds a free bonus token when all K survive. Beside it the same target decodes the "
    "same prompt the plain way, one call per token, so you can compare the clocks."
)

pairs = lm.available_pairs()
with st.container(border=True):
    left, mid, right = st.columns([3, 2, 2])
    with left:
        pair = st.selectbox(
            "Model pair",
            pairs,
            key="lm_pair",
            index=pairs.index(DEFAULT_PAIR) if DEFAULT_PAIR in pairs else 0,
            format_func=lambda n: lm.pair_info(n).label,
        )
        info = lm.pair_info(pair)
        st.caption(md_escape(f"Draft: {info.draft}. Target: {info.target}. {info.description}"))
        prompt = st.text_area(
            "Prompt (plain ASCII text)",
            DEFAULT_PROMPT,
            key="lm_prompt",
            max_chars=lm.MAX_PROMPT_CHARS,
            height=90,
        )
    with mid:
        temperature = st.slider(
            "Temperature T",
            0.0,
            2.0,
            0.0,
            0.1,
            key="lm_temperature",
            help="0 = greedy (argmax on both sides): the output must equal "
            "the target's own greedy output.",
        )
        k = st.slider("K (draft tokens per round)", 1, 8, DEFAULT_K, key="lm_k")
        n_tokens = st.slider("Tokens to generate", 10, 200, 60, 10, key="lm_tokens")
    with right:
        seed = seed_control("lm")
        mode = st.radio(
            "Show", ["Run to the end", "Step round by round"], key="lm_mode", horizontal=True
        )

settings = (pair, prompt, float(temperature), int(k), int(n_tokens), int(seed))
try:
    draft, target = load(pair)
    tok = target.tokenizer  # shared by draft and target
    prompt_ids = lm.encode_prompt(tok, prompt)
    stored = st.session_state.get(RUN_KEY)
    if stored is None or stored[0] != settings:
        bar = st.progress(0.0, text="Running speculative and plain decoding…")
        run = lm.compare_pair(
            draft,
            target,
            prompt_ids,
            k=int(k),
            max_new_tokens=int(n_tokens),
            temperature=float(temperature),
            seed=int(seed),
            repeats=3,
            progress=lambda f: bar.progress(min(1.0, f), text="Running…"),
        )
        bar.empty()
        st.session_state[RUN_KEY] = (settings, run)
        st.session_state[ROUND_KEY] = 0
    else:
        run = stored[1]
except SpecDecError as err:
    show_error(err)
    st.stop()

vocab = tok.vocab
spec, plain, cost = run.spec, run.plain, run.cost
n_rounds = len(spec.rounds)


def go_to(i: int) -> None:
    st.session_state[ROUND_KEY] = max(0, min(n_rounds - 1, i))


if mode == "Step round by round":
    r = min(st.session_state.get(ROUND_KEY, 0), n_rounds - 1)
    cols = st.columns(4)
    cols[0].button(
        "⏮ First", key="lm_first", on_click=go_to, args=(0,), disabled=r == 0, width="stretch"
    )
    cols[1].button(
        "◀ Back", key="lm_back", on_click=go_to, args=(r - 1,), disabled=r == 0, width="stretch"
    )
    cols[2].button(
        "Next round ▶",
        key="lm_next",
        on_click=go_to,
        args=(r + 1,),
        disabled=r >= n_rounds - 1,
        type="primary",
        width="stretch",
    )
    cols[3].progress((r + 1) / n_rounds, text=f"Round {r + 1} of {n_rounds}")
    rnd = spec.rounds[r]
    end = min(len(spec.tokens), rnd.start + len(rnd.emitted))
    shown_tokens, shown_kinds = spec.tokens[:end], spec.kinds[:end]
    st.caption("The run was made with your seed; stepping replays it round by round.")
else:
    shown_tokens, shown_kinds = spec.tokens, spec.kinds

st.subheader("Generated text")
pieces = [(vocab[t], "prompt") for t in prompt_ids]
pieces += [(vocab[t], kind) for t, kind in zip(shown_tokens, shown_kinds, strict=True)]
st.plotly_chart(fl.token_text_figure(pieces), key="lm_text_chart")
with st.container(key="lm_output", border=True):
    st.caption("The same text, plain (prompt + generated):")
    st.text(prompt + tok.decode(shown_tokens))
if temperature == 0:
    st.caption(
        "Small models often repeat themselves when they always pick their top token "
        "(T = 0). Raise the temperature for varied text; the mechanics stay the same."
    )
counts = {kind: shown_kinds.count(kind) for kind in KIND_WORD}
st.caption(" · ".join(f"{fl.KIND_STYLE[k_][1]} {n} {KIND_WORD[k_]}" for k_, n in counts.items()))

if mode == "Step round by round":
    rnd = spec.rounds[r]
    st.subheader(
        f"Round {r + 1}: {rnd.n_accepted} of {k} drafts kept, then a "
        f"{'bonus' if rnd.final_kind == 'bonus' else 'resampled'} token"
    )
    chips = [(vocab[p.token], p.status) for p in rnd.positions[:-1]]
    chips.append((vocab[rnd.final_token], "bonus" if rnd.final_kind == "bonus" else "resampled"))
    st.caption("Drafted tokens (kept ✓, rejected ✗, discarded –) and the round's last token:")
    st.plotly_chart(fl.token_text_figure(chips), key="lm_chips")
    st.write(
        f"The draft made {k} calls to propose {k} tokens; the target scored the last accepted "
        f"token and all {k} drafts in one call, which gives {k + 1} distributions p. A drafted "
        "token x is kept when the coin u is below a = min(1, p(x)/q(x)); the first rejection "
        "ends the round (later drafts are discarded unchecked)."
    )
    st.plotly_chart(fl.position_bars_figure(rnd.positions, vocab), key="lm_bars")
    st.caption(
        "Top tokens of p (target, orange) and q (draft, blue hatched) at each position; "
        "▶ and a black outline mark the drafted token."
    )
    left, right = st.columns(2)
    left.plotly_chart(fl.coin_figure(rnd.positions), key="lm_coins")
    right.plotly_chart(
        fl.final_figure(rnd.final_top, rnd.final_token, vocab, kind=rnd.final_kind), key="lm_final"
    )
    if temperature == 0:
        st.info(
            "At T = 0 p and q are one-hot (argmax): a draft is kept exactly when it is the "
            "target's top token. Raise T to see real coins.",
            icon="ℹ️",
        )

st.subheader("Measured against plain decoding of the same target")
c1, c2, c3, c4 = st.columns(4)
c1.metric(
    "Acceptance rate (measured)",
    f"{cost.alpha:.0%}",
    help="Drafted tokens kept / drafted tokens checked. A draft after a rejection is "
    "discarded without a check and does not count.",
)
c1.caption(
    f"Drafts kept / drafts checked = {spec.accepted} / {spec.checked} (a draft after a "
    f"rejection is never checked). Expected α = mean of Σ min(p, q) at the checked "
    f"positions = {spec.expected_acceptance_rate:.2f}"
)
c2.metric(
    "Tokens per target call",
    f"{spec.tokens_per_target_call:.2f}",
    help="Generated tokens / target calls (plain decoding: exactly 1).",
)
c2.caption(f"{spec.tokens_per_round:.2f} tokens per round")
c3.metric(
    "Target calls saved",
    f"{run.target_calls_saved}",
    f"{run.target_calls_saved_fraction:.0%} fewer",
    help="Plain decoding calls the target once per token.",
)
c3.caption(f"{spec.target_calls} calls instead of {plain.target_calls}")
c4.metric(
    "Speedup (measured)",
    f"{cost.measured_speedup:.2f}x",
    help=f"Plain decode time / speculative decode time (median of {run.repeats} "
    "interleaved repeats; the prompt's prefill is left out of both).",
)
c4.caption(f"{spec.time_total * 1000:.1f} ms vs {plain.time_total * 1000:.1f} ms plain")

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

st.subheader("Why the speedup is not what the formula says")
left, right = st.columns([3, 2])
with left:
    st.write(
        f"Measured on this server: one draft step costs **c = {cost.c:.3f}** target steps, and "
        f"one verify (the target call on K + 1 = {k + 1} tokens plus the accept / reject "
        f"decisions) costs **v(K) = {cost.v:.2f}** target steps (a plain target step took "
        f"{cost.target_step * 1e6:.0f} µs)."
    )
    st.latex(
        rf"E(\alpha, K) = \frac{{1 - \alpha^{{K+1}}}}{{1 - \alpha}} = "
        rf"\frac{{1 - {cost.alpha:.2f}^{{{k + 1}}}}}{{1 - {cost.alpha:.2f}}} = "
        rf"{cost.expected_tokens:.2f}"
        if cost.alpha < 1
        else rf"E(\alpha, K) = K + 1 = {k + 1}"
    )
    st.caption(
        f"E is the i.i.d. model's expected tokens per round at the measured α; this run "
        f"measured {spec.tokens_per_round:.2f}."
    )
    st.latex(
        rf"S_{{\text{{seeds}}}} = \frac{{E}}{{K c + 1}} = \frac{{E}}{{{k}\cdot{cost.c:.3f}"
        rf" + 1}} = {cost.seed_prediction:.2f}"
    )
    st.latex(
        rf"S_{{\text{{corrected}}}} = \frac{{E}}{{K c + v(K)}} = \frac{{E}}{{{k}\cdot"
        rf"{cost.c:.3f} + {cost.v:.2f}}} = {cost.corrected_prediction:.2f}"
    )
    st.write(
        "The seeds' formula assumes that verifying K + 1 tokens costs one target step. On a "
        "GPU that is nearly true: a step is memory-bound (reading the weights dominates), so "
        "scoring a few more tokens is almost free. A tiny model on a CPU is different: the "
        "work grows with the number of tokens, so v(K) is above 1 and the corrected formula, "
        "which uses the measured v(K), comes much closer to the clock. What is left is the "
        "bookkeeping of each round (coins, residuals, rollback)."
    )
    if not target.parallel_verify:
        st.warning(
            "This target is an n-gram model: it has no parallel verify, so checking "
            "K + 1 positions costs K + 1 lookups (v(K) ≈ K + 1). Speculative decoding "
            "saves it nothing; the pair is here to show the mechanics.",
            icon="🐢",
        )
with right:
    gpu = st.toggle(
        "GPU-like cost model (v = 1)",
        key="lm_gpu",
        help="What the papers' hardware gives: verifying K + 1 tokens costs one step.",
    )
    rows = [
        ("measured", cost.measured_speedup),
        ("seeds' formula", cost.seed_prediction),
        ("corrected (measured v)", cost.corrected_prediction),
    ]
    if gpu:
        c_gpu = st.slider("c (draft step / target step)", 0.0, 1.0, 0.05, 0.01, key="lm_gpu_c")
        gpu_speedup = lm.gpu_like_prediction(cost.alpha, k, c_gpu)
        rows.append((f"GPU-like (v = 1, c = {c_gpu:.2f})", gpu_speedup))
        st.latex(
            rf"\frac{{E}}{{K c + 1}} = \frac{{E}}{{{k}\cdot{c_gpu:.2f} + 1}} = "
            rf"{gpu_speedup:.2f}"
        )
        st.caption(
            "Same measured α, but the costs of a large model on a GPU (the papers "
            "report 2-3x with c between 0.02 and 0.1)."
        )
    st.plotly_chart(fl.speedup_figure(rows), key="lm_speedup")

with st.expander("Time split of the speculative run"):
    st.write(
        f"Draft {spec.time_draft * 1000:.1f} ms ({spec.draft_calls} calls) · verify "
        f"{spec.time_verify * 1000:.1f} ms ({spec.target_calls} target calls and the "
        f"accept / reject decisions) · overhead (rollback, counters) "
        f"{spec.time_overhead * 1000:.1f} ms · prompt prefill {spec.time_prefill * 1000:.1f} ms "
        "(left out of both decode times)."
    )
show_source(lm.speculative_generate)
