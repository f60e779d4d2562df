"""The Model pair lab's settings and its first sections (``pages/scripts/model_pairs.py``
calls them): the inputs, the run, the text, the counts, the engine's log, the verdict.

Each function draws one section of the page from a :class:`Choice` (the student's
settings) and the shared :class:`~specdec_ui.model_pairs.work.LabRun`; the numbers come from
:mod:`specdec_ui.model_pairs.work` and the core, the words without numbers from
:mod:`specdec_ui.model_pairs.words`. The other sections: :mod:`.rounds` (step mode),
:mod:`.guard` (where the guard stepped aside) and :mod:`.speed` (the measured speedup).
Every number on screen is about the student's own run, or says what it is about.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import streamlit as st

import specdec_core.lm as lm
from specdec_core import SpecDecError
from specdec_core.engine_metrics import metrics_from_accepted_per_round
from specdec_core.lm.adaptive import CostProfile
from specdec_ui.kit.engine_view import engine_panel
from specdec_ui.kit.page_state import PageState
from specdec_ui.kit.simple_mode import simple
from specdec_ui.kit.text import md_escape
from specdec_ui.kit.token_text import legend_markdown, token_markdown
from specdec_ui.kit.widgets import seed_control, show_error
from specdec_ui.model_pairs import words, work
from specdec_ui.runtime import shared_work

MODE_KEYS = {label: key for key, label in work.MODES.items()}
POLL_S = 1.5  # how often a page waiting for its measurement looks again
OPENED_ON_A_STEP = "lm_opened_on_a_step"  # session: the page was opened from a step link


@dataclass(frozen=True)
class Choice:
    """The student's settings: the run they ask for and how to show it."""

    request: work.RunRequest
    mode: str  # "run" | "step"

    @property
    def stepping(self) -> bool:
        return self.mode == "step"

    def link_params(self, round_shown: int) -> dict[str, str]:
        """The query parameters that reopen this page (:func:`model_pairs.work.link_params`)."""
        r = self.request
        state = {
            "pair": r.pair,
            "prompt": r.prompt,
            "k": r.k,
            "draft": r.draft_length,
            "temperature": r.temperature,
            "seed": r.seed,
            "tokens": r.n_tokens,
            "mode": self.mode,
            "round": round_shown,
        }
        return work.link_params(state)


def page_state(pairs: list[str]) -> PageState:
    """The page's kept state; on a session's first visit, the settings from its link.

    A first visit without a draft length in its link opens on
    ``lw.DEFAULT_DRAFT_LENGTH`` (fixed, K = ``lw.DEFAULT_K``), whatever was measured.
    """
    preferred = work.DEFAULT_DRAFT_LENGTH
    page = PageState(
        "lm",
        {
            "pair": work.DEFAULT_PAIR if work.DEFAULT_PAIR in pairs else pairs[0],
            "prompt": work.DEFAULT_PROMPT,
            "k": work.DEFAULT_K,
            "draft": preferred,
            "temperature": 0.0,
            "seed": 0,
            "tokens": work.DEFAULT_TOKENS,
            "mode": work.MODES["run"],
            "round": 1,
        },
    )
    if (link := page.first_visit()) is not None:
        values, problems = work.state_from_link(link.params, pairs)
        values["mode"] = work.MODES[values["mode"]]  # the radio holds the label
        page.start(values, problems)
    page.restore()
    return page


def opened_on_a_step() -> bool:
    """Whether this session opened the page from a step link (``mode=step``): then the
    inputs start folded so that the stepper is near the top, on a phone within the first
    screen (issue 33, item 16). Decided once per session, so the box does not fold or open
    by itself later."""
    if OPENED_ON_A_STEP not in st.session_state:
        st.session_state[OPENED_ON_A_STEP] = st.query_params.get("mode") == "step"
    return bool(st.session_state[OPENED_ON_A_STEP])


def _draft_length() -> str:
    """The draft-length radio, and under it where stepping aside measured faster (a note)."""
    draft_length = st.radio(
        "Draft length",
        list(work.DRAFT_LENGTHS),
        format_func=work.DRAFT_LENGTHS.get,
        key="lm_draft",
        help=words.DRAFT_LENGTH_HELP,
    )
    if (note := work.adaptive_note(start=draft_length == "adaptive")) is not None:
        st.caption(md_escape(note))
    return draft_length


def inputs(pairs: list[str]) -> Choice:
    """Pair, prompt, temperature, K, tokens, seed and mode; returns the choice."""
    left, mid, right = st.columns([3, 2, 2])
    with left:
        pair = st.selectbox(
            "Model pair", pairs, key="lm_pair", format_func=lambda n: lm.pair_info(n).label
        )
        st.caption(md_escape(words.pair_caption(lm.pair_info(pair))))
        # No max_chars on the box: a longer paste was dropped without a word (the box kept
        # its old text); now it reaches the core, whose message names the length and limit.
        prompt = st.text_area(
            f"Prompt (English text, at most {lm.MAX_PROMPT_CHARS} characters)",
            key="lm_prompt",
            height=90,
            help=words.PROMPT_HELP,
        )
        if (note := work.prompt_note(prompt)) is not None:
            st.caption(md_escape(note))
    with mid:
        temperature = st.slider(
            "Temperature T",
            0.0,
            work.T_MAX,
            step=0.1,
            key="lm_temperature",
            help=words.TEMPERATURE_HELP,
        )
        draft_length = work.DEFAULT_DRAFT_LENGTH if simple() else _draft_length()  # no guard
        k = st.slider("K (drafts a round)", 1, work.K_MAX, key="lm_k")
        tokens = (work.TOKENS_MIN, work.TOKENS_MAX)
        n_tokens = st.slider("Tokens to generate", *tokens, step=work.TOKENS_STEP, key="lm_tokens")
    with right:
        seed = seed_control("lm")
        if temperature == 0:
            st.caption(work.GREEDY_SEED_NOTE)
        mode = st.radio("Show", list(work.MODES.values()), key="lm_mode", horizontal=True)
    request = work.RunRequest(
        pair=pair,
        prompt=prompt,
        k=int(k),
        temperature=round(float(temperature), 1),
        n_tokens=int(n_tokens),
        seed=seed,
        draft_length=draft_length,
    )
    return Choice(request=request, mode=MODE_KEYS[mode])


def fetch_run(choice: Choice) -> work.LabRun:
    """The shared run of ``choice``, with the queue's words while it waits; a bad input or
    a full queue is said in words and the page stops there. A guarded run waits for
    this server's costs first (measured once, in the background)."""
    if choice.request.adaptive:
        _costs_or_stop(choice.request)
    waiting = st.empty()
    try:
        run = work.get_run(
            choice.request,
            trace=choice.stepping,
            on_wait=lambda status: waiting.info(status.text, icon="⏳"),
        )
    except SpecDecError as err:
        waiting.empty()
        show_error(err)
        st.stop()
    except shared_work.QueueFullError as err:
        waiting.empty()
        st.warning(md_escape(err), icon="⏳")
        st.stop()
    waiting.empty()
    return run


def _costs_or_stop(request: work.RunRequest) -> CostProfile:
    """This server's costs; while they are measured, a notice that polls, and the page
    stops (a guarded run starts from them)."""
    costs = work.get_costs(request.pair, request.temperature)
    if isinstance(costs, CostProfile):
        return costs
    if isinstance(costs, work.Unmeasured):
        st.warning(costs.reason, icon="⏳")
    else:
        st.fragment(_wait_for_costs, run_every=POLL_S)(request)
    st.stop()


def _wait_for_costs(request: work.RunRequest) -> None:
    """(A fragment.) Say where the cost measurement stands; rerun the page once it is there."""
    if work.get_costs(request.pair, request.temperature) is not shared_work.MISSING:
        st.rerun()
    status = work.costs_status(request.pair, request.temperature)
    where = status.text if status is not None else "Starting…"
    st.info(
        "⏱️ Measuring what drafting and verifying cost on this server (c and v(k) for k = 0 "
        f"to {work.K_MAX}, once per server): the guard starts from them. {where}",
        icon="⏳",
    )


def _shown_tokens(run: work.LabRun, round_shown: int | None) -> tuple[list[int], list[str]]:
    """The tokens on screen: all of them, or those up to the end of the round shown."""
    spec = run.spec
    if round_shown is None:
        return spec.tokens, spec.kinds
    rnd = spec.rounds[round_shown - 1]
    end = min(len(spec.tokens), rnd.start + len(rnd.emitted))
    return spec.tokens[:end], spec.kinds[:end]


def generated_text(choice: Choice, run: work.LabRun, round_shown: int | None) -> None:
    """The text with each token on the colour of how it was made, then plain."""
    vocab = lm.load_tokenizer().vocab  # shared by every pair
    tokens, kinds = _shown_tokens(run, round_shown)
    st.header("Generated text")
    pieces = [(vocab[t], "prompt") for t in run.prompt_ids]
    pieces += [(vocab[t], kind) for t, kind in zip(tokens, kinds, strict=True)]
    with st.container(key="lm_token_text", border=True):
        st.markdown(token_markdown(pieces))
    st.caption("Colours and marks: " + legend_markdown(["prompt", *kinds]))
    with st.container(key="lm_output", border=True):
        st.caption("The same text, plain (prompt + generated):")
        tokenizer = lm.load_tokenizer()  # the prompt as the models read it (ASCII)
        st.text(tokenizer.decode(run.prompt_ids) + tokenizer.decode(tokens))
    if choice.request.temperature == 0:
        st.caption(words.GREEDY_REPEATS)
    in_text = {kind: kinds.count(kind) for kind in words.KIND_WORD}
    st.caption(
        ("Tokens in the text so far: " if round_shown else "Tokens in the text: ")
        + " · ".join(f"{n} {words.KIND_WORD[kind]}" for kind, n in in_text.items() if n)
    )
    _cut_note(run.counts, round_shown)


def _cut_note(counts: work.RunCounts, round_shown: int | None) -> None:
    """Where the last round made more tokens than asked for: say that they were cut (in
    step mode only on that last round, where the cut happens)."""
    if not counts.cut or (round_shown is not None and round_shown != counts.rounds):
        return
    s = "s" if counts.cut > 1 else ""
    st.info(
        f"The last round produced {counts.cut} token{s} more than the {counts.n_tokens} asked "
        f"for; {'they were' if counts.cut > 1 else 'it was'} cut from the text. The per-round "
        f"figures below count all {counts.emitted} tokens the {counts.rounds} rounds produced, "
        f"so the text holds {counts.text_count('accepted')} of the {counts.kept} kept drafts.",
        icon="✂️",
    )


def quiet_draft_note(choice: Choice, run: work.LabRun) -> None:
    """Rounds in which the draft proposed nothing, and why (the draft says); with a fixed K,
    why a fixed K can draft nothing."""
    spec = run.spec
    if not spec.empty_rounds:
        return
    quiet = lm.load_pair(choice.request.pair)[0]
    fixed = (
        ""
        if choice.request.adaptive
        else f" With a fixed K, K = {choice.request.k} is the most a round drafts: "
        + words.FIXED_K_QUIET
    )
    st.info(
        f"In {spec.empty_rounds} of {spec.n_rounds} rounds the draft proposed nothing: "
        f"{getattr(quiet, 'quiet_why', 'it had no guess')}. Those rounds ran one plain "
        f"step of the target. {getattr(quiet, 'quiet_gain', '')}{fixed}",
        icon="🔎",
    )


def counts(choice: Choice, run: work.LabRun) -> None:
    """Acceptance rate, tokens per round and target calls of this run."""
    counts, spec = run.counts, run.spec
    st.header("Counted in this run")
    c1, c2, c3 = st.columns(3)
    c1.metric(
        "Acceptance rate (measured)",
        f"{counts.acceptance_rate:.0%}" if counts.checked else "—",
        help=words.ACCEPTANCE_HELP,
    )
    c1.caption(_alpha_caption(counts, spec))
    c2.metric(
        "Tokens per round",
        f"{counts.tokens_per_round:.2f}",
        help=words.TOKENS_PER_ROUND_HELP,
    )
    endings = [f"{counts.rejected} ended with a resample", f"{counts.bonus_rounds} with a bonus"]
    if counts.plain_rounds:
        endings.append(f"{counts.plain_rounds} were plain steps (no draft)")
    c2.caption(f"{counts.emitted} tokens from {counts.rounds} rounds: {', '.join(endings)}.")
    _calls_metric(c3, counts, choice.request.k)


def _alpha_caption(counts: work.RunCounts, spec) -> str:
    text = (
        f"Drafts kept / drafts checked = {counts.kept} / {counts.checked} (a draft after a "
        "rejection is never checked). "
    )
    expected = spec.expected_acceptance_rate
    if math.isnan(expected):
        return text + "Expected α: none, since no draft was checked in this run."
    return text + (
        f"Expected α = mean of Σ min(p, q) at the checked positions of this run = {expected:.2f}"
    )


def _calls_metric(column, counts: work.RunCounts, k: int) -> None:
    """Target calls against plain decoding (lookups for a target without parallel verify)."""
    if counts.parallel_verify:
        saved = counts.calls_saved
        column.metric(
            "Target calls",
            f"{counts.target_calls}",
            f"-{saved} calls ({saved / counts.plain_calls:.0%})" if saved > 0 else "no saving",
            delta_color="inverse" if saved > 0 else "off",
            help=words.CALLS_HELP,
        )
        column.caption(
            f"{counts.target_calls} calls instead of {counts.plain_calls} (one per token)"
        )
        return
    extra = counts.target_calls - counts.plain_calls
    column.metric(
        "Target lookups",
        f"{counts.target_calls}",
        help=words.LOOKUPS_HELP,
    )
    column.caption(
        f"{counts.target_calls} lookups ({counts.rounds} rounds × {k + 1} positions) against "
        f"{counts.plain_calls} for plain decoding: "
        + (
            f"{extra} more, no saving (this target checks each position on its own)."
            if extra >= 0
            else f"{-extra} fewer."
        )
    )


def engine_numbers(choice: Choice, run: work.LabRun) -> None:
    """This run in the numbers a serving engine prints (rounds that drafted)."""
    spec = run.spec
    drafting = [kept for n, kept in zip(spec.draft_sizes, spec.accepted_sizes, strict=True) if n]
    st.header("Your run as an engine would log it")
    if not drafting:
        st.caption("No round drafted anything, so there is no acceptance to report.")
        return
    about = (
        f"your run's {len(drafting)} rounds that drafted (the {spec.plain_rounds} plain steps "
        "left out: engines count only rounds with drafts)"
    )
    metrics = metrics_from_accepted_per_round(drafting, choice.request.k)
    engine_panel(metrics, key="lm_engine", about=about)
    if spec.drafted < len(drafting) * choice.request.k:
        st.caption(
            f"Rounds here proposed fewer than K drafts ({spec.drafted} in {len(drafting)} "
            f"rounds): kept / proposed = {spec.accepted / spec.drafted:.1%} in this run, "
            "while (AL − 1) / K above assumes K drafts every round, as engines with a "
            "fixed K do."
        )


def greedy_verdict(choice: Choice, run: work.LabRun) -> None:
    """At T = 0 the output must equal the target's greedy output; at T > 0, the same law."""
    if choice.request.temperature == 0:
        verdict = (
            "identical to the target's own greedy output ✓"
            if run.identical
            else "DIFFERENT from the target's greedy output ✗ (a bug: please report it)"
        )
        st.write(f"At T = 0 the speculative output is **{verdict}**.")
        return
    st.write(words.SAME_LAW)
