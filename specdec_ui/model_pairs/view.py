"""The Model pair lab's sections, top to bottom (``pages/scripts/model_pairs.py`` calls them).

Each function draws one section of the page from a :class:`Choice` (the student's
settings) and the shared :class:`~specdec_ui.model_pairs.work.LabRun`; the numbers come from
:mod:`specdec_ui.model_pairs.work` and the core, the figures from
:mod:`specdec_ui.model_pairs.figures`.
Every number on screen is about the student's own run, or says what it is about.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import streamlit as st

import specdec_core.lm as lm
from specdec_core import SpecDecError
from specdec_core.engine_metrics import metrics_from_accepted_per_round
from specdec_core.lm.adaptive import CostProfile, PriceLedger, round_costs
from specdec_core.lm.timing import SpeedMeasurement, impossible_reasons
from specdec_ui.kit.engine_view import engine_panel
from specdec_ui.kit.page_state import PageState
from specdec_ui.kit.presenter import chart
from specdec_ui.kit.simple_mode import simple
from specdec_ui.kit.stepper import stepper, steps_below
from specdec_ui.kit.text import md_escape
from specdec_ui.kit.theme import STATUS_SYMBOL
from specdec_ui.kit.token_text import legend_markdown, token_markdown
from specdec_ui.kit.widgets import seed_control, show_error
from specdec_ui.model_pairs import figures, work
from specdec_ui.runtime import shared_work
from specdec_ui.runtime.figure_cache import shared_figure

ROUND = "lm_round"  # the round shown in step mode (a widget key; the stepper moves it)
MODE_KEYS = {label: key for key, label in work.MODES.items()}
KIND_WORD = {
    "accepted": "kept drafts",
    "resampled": "resampled",
    "bonus": "bonus",
    "plain": "plain steps",
}
FINAL_WORD = {"resample": "resampled", "bonus": "bonus", "plain": "plain-step"}
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
        help="Steps aside: each round drafts K while drafting rounds are measured at least as "
        "fast as plain steps on this server's own clock, and is one plain target step while "
        "they are not (with a drafting round now and then to see whether that changed).",
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
        info = lm.pair_info(pair)
        st.caption(
            md_escape(f"Draft: {info.draft}. Target: {info.target}. {info.description} {info.why}")
        )
        # No max_chars on the box: a longer paste was dropped without a word (the box kept
        # its old text); now it reaches the core, whose message names the length and limit.
        prompt = st.text_area(
            f"Prompt (English text, at most {lm.MAX_PROMPT_CHARS} characters)",
            key="lm_prompt",
            height=90,
            help="The models read plain ASCII: curly quotes, dashes and accented letters "
            "are read as their plain forms (the page says so), other characters are refused.",
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
            help="0 = greedy (argmax on both sides): the output must equal "
            "the target's own greedy output.",
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


def round_stepper(run: work.LabRun) -> int:
    """Step mode: First / Back / Next / Last and a jump slider that says which round is
    shown; returns the round shown."""
    n_rounds = run.counts.rounds
    shown, rest = stepper("lm", ROUND, 1, n_rounds)
    with rest:
        if n_rounds > 1:  # the label changes, the key keeps the widget
            st.slider(f"Round {shown} of {n_rounds}: drag to jump", 1, n_rounds, key=ROUND)
        else:
            st.caption(f"Round {shown} of {n_rounds}")
    return shown


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
        st.caption(
            "Small models often repeat themselves when they always pick their top token "
            "(T = 0). Raise the temperature for varied text; the mechanics stay the same."
        )
    in_text = {kind: kinds.count(kind) for kind in KIND_WORD}
    st.caption(
        ("Tokens in the text so far: " if round_shown else "Tokens in the text: ")
        + " · ".join(f"{n} {KIND_WORD[kind]}" for kind, n in in_text.items() if n)
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
        else f" With a fixed K, K = {choice.request.k} is the most a round drafts: this draft "
        "looks its guesses up (in the prompt, or in a table of the target's habits) and "
        "proposes only what it finds, so a round where it finds no guess drafts nothing. "
        "A model draft always proposes K."
    )
    st.info(
        f"In {spec.empty_rounds} of {spec.n_rounds} rounds the draft proposed nothing: "
        f"{getattr(quiet, 'quiet_why', 'it had no guess')}. Those rounds ran one plain "
        f"step of the target. {getattr(quiet, 'quiet_gain', '')}{fixed}",
        icon="🔎",
    )


def round_detail(choice: Choice, run: work.LabRun, round_shown: int) -> None:
    """Step mode, right under the stepper (the first screen of a projector): the round's
    decision as a heading, then its charts side by side: p and q at each position, the
    coins (at T = 0: the argmax check, no coin) and the distribution of its last token;
    then the drafted tokens and the words."""
    vocab = lm.load_tokenizer().vocab
    rnd = run.spec.rounds[round_shown - 1]
    n_drafts = len(rnd.positions) - 1  # a lookup draft may propose fewer than K
    greedy = choice.request.temperature == 0
    shown = (choice.request.shared(trace=True), round_shown)  # the figures' key
    if n_drafts == 0:
        _plain_round_detail(choice, run, round_shown, shown)
        return
    kept = (
        f"all {n_drafts} drafts kept"
        if rnd.n_accepted == n_drafts > 1
        else (f"{rnd.n_accepted} of {n_drafts} draft{'s' if n_drafts > 1 else ''} kept")
    )
    st.header(
        f"Round {round_shown}: {kept}, then a {FINAL_WORD[rnd.final_kind]} token",
        anchor="lm-decision",  # the browser tests find the decision by it
    )
    _round_charts(rnd, vocab, greedy=greedy, n_rounds=run.counts.rounds, shown=shown)
    chips = [(vocab[p.token], "kept" if p.status == "accepted" else p.status)
             for p in rnd.positions[:-1]]  # fmt: skip
    chips.append((vocab[rnd.final_token], "bonus" if rnd.final_kind == "bonus" else "resampled"))
    st.caption("Drafted tokens (kept ✓, rejected ✗, discarded –) and the round's last token:")
    st.markdown(token_markdown(chips))
    st.write(
        f"The draft proposed {n_drafts} token{'s' if n_drafts > 1 else ''}; the target scored "
        f"the last accepted token and all {n_drafts} in one call, which gives {n_drafts + 1} "
        "distributions p. "
        + (GREEDY_RULE if greedy else COIN_RULE)
        + " The first rejection ends the round (later drafts are discarded unchecked)."
    )
    st.caption(
        "Top tokens of p (target, orange) and q (draft, blue hatched) at each position; "
        "▶ and an outline mark the drafted token."
        + (
            ""
            if rnd.final_kind == "bonus"
            else " No bonus position: this round ended with a rejection, so p at position "
            "K + 1 was never used."
        )
    )
    st.caption(
        "At T = 0 no seed matters: the decisions need no coin, so every seed gives these rounds."
        if greedy
        else "The run was made with your seed; stepping replays it round by round."
    )


COIN_RULE = "A drafted token x is kept when the coin u is below a = min(1, p(x)/q(x))."
GREEDY_RULE = (
    "At T = 0 p and q are one-hot (each model's top token), so a = min(1, p(x)/q(x)) is 1 "
    "when the draft is the target's top token and 0 otherwise: a draft is kept exactly when "
    "it is the target's top token, no coin is needed, and none is drawn on screen."
)


def _plain_round_detail(choice: Choice, run: work.LabRun, round_shown: int, shown: tuple) -> None:
    """A round whose draft proposed nothing: one plain step of the target, and its chart."""
    vocab = lm.load_tokenizer().vocab
    rnd = run.spec.rounds[round_shown - 1]
    quiet = lm.load_pair(choice.request.pair)[0]
    short = getattr(quiet, "quiet_short", "no guess")
    st.header(f"Round {round_shown}: {short}, nothing proposed", anchor="lm-decision")
    final = _round_figure(
        "final",
        shown,
        lambda: figures.final_figure(rnd.final_top, rnd.final_token, vocab, kind="plain"),
    )
    chart(final, key="lm_final")
    steps_below("lm", ROUND, 1, run.counts.rounds)
    st.write(
        "A plain step, not a bonus: with no draft to check, the target made one ordinary "
        "decoding step, and its token is the round's only token."
    )


def _round_figure(name: str, shown: tuple, build):
    """A figure of the round on screen, once per (run, round) and server: ``shown`` is the
    shared run's request (its typed prompt: the key expires) and the round's number."""
    return shared_figure(f"lm.round_{name}", shown, build, typed=True)


def _round_charts(rnd, vocab, *, greedy: bool, n_rounds: int, shown: tuple) -> None:
    """Side by side: the p and q bars of each position, the coins (at T = 0 the argmax
    check, in words: no coin decides anything there) and the final distribution."""
    bonus = rnd.final_kind == "bonus"
    positions = rnd.positions if bonus else rnd.positions[:-1]  # p_{K+1} only for a bonus
    if len(positions) > 3:  # a long round: the coins in one line, wide bars
        _checks_line(rnd.positions, vocab, greedy=greedy)
        bars, final = st.columns([8, 3])
    else:
        bars, middle, final = st.columns([5, 3, 3])
        with middle:
            if greedy:
                with st.container(key="lm_greedy_check"):
                    st.markdown("**The check at T = 0** (no coin)")
                    st.markdown(greedy_check_markdown(rnd.positions, vocab))
            else:
                coins = _round_figure("coins", shown, lambda: figures.coin_figure(rnd.positions))
                chart(coins, key="lm_coins")
    with bars:
        figure = _round_figure(
            "bars", shown, lambda: figures.position_bars_figure(positions, vocab)
        )
        chart(figure, key="lm_bars")
        steps_below("lm", ROUND, 1, n_rounds)  # a phone: under the bars, the step's chart
    with final:
        figure = _round_figure(
            "final",
            shown,
            lambda: figures.final_figure(
                rnd.final_top, rnd.final_token, vocab, kind=rnd.final_kind
            ),
        )
        chart(figure, key="lm_final")


def _checks_line(positions, vocab, *, greedy: bool) -> None:
    """A long round's checks in one paragraph: at T = 0 the argmax check, else each coin
    against its a (a chart per coin did not fit beside 9 panels of bars)."""
    checked = [(i, p) for i, p in enumerate(positions) if p.status in ("accepted", "rejected")]
    if greedy:
        words = "; ".join(
            f"{i + 1} {STATUS_SYMBOL[p.status]}" + ("" if p.status == "accepted" else " (not "
            "the target's top token)") for i, p in checked
        )  # fmt: skip
        text = f"**The check at T = 0** (no coin), by position: {words}."
        key = "lm_greedy_check"
    else:
        words = "; ".join(
            f"{i + 1}: u = {p.coin:.2f} {'<' if p.status == 'accepted' else '≥'} a = "
            f"{p.acceptance_probability:.2f} {STATUS_SYMBOL[p.status]}"
            for i, p in checked
        )
        text = f"**The coins**, by position: {words}."
        key = "lm_coins_line"
    with st.container(key=key):
        st.markdown(text)


def greedy_check_markdown(positions, vocab) -> str:
    """At T = 0, each checked position in words: the draft against the target's top token
    (p is one-hot there, so ``top_p[0]`` is the target's choice)."""
    lines = []
    for i, pos in enumerate(positions):
        if pos.status not in ("accepted", "rejected"):
            continue
        drafted = md_escape(repr(vocab[pos.token]))
        top = md_escape(repr(vocab[pos.top_p[0][0]])) if pos.top_p else "?"
        verdict = (
            f"{STATUS_SYMBOL['accepted']} kept (a = 1)"
            if pos.status == "accepted"
            else f"{STATUS_SYMBOL['rejected']} rejected (a = 0)"
        )
        lines.append(f"- pos {i + 1}: draft {drafted}, target's top {top}: {verdict}")
    return "\n".join(lines)


def counts(choice: Choice, run: work.LabRun) -> None:
    """Acceptance rate, tokens per round and target calls of this run."""
    counts, spec = run.counts, run.spec
    st.header("Counted in this run")
    c1, c2, c3 = st.columns(3)
    c1.metric(
        "Acceptance rate (measured)",
        f"{counts.acceptance_rate:.0%}" if counts.checked else "—",
        help="Drafted tokens kept / drafted tokens checked. A draft after a rejection is "
        "discarded without a check and does not count.",
    )
    c1.caption(_alpha_caption(counts, spec))
    c2.metric(
        "Tokens per round",
        f"{counts.tokens_per_round:.2f}",
        help="Tokens the rounds produced / rounds (before the cut at the token limit).",
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
            help="One call per round (it checks all K drafts at once); plain decoding calls "
            "the target once per token.",
        )
        column.caption(
            f"{counts.target_calls} calls instead of {counts.plain_calls} (one per token)"
        )
        return
    extra = counts.target_calls - counts.plain_calls
    column.metric(
        "Target lookups",
        f"{counts.target_calls}",
        help="An n-gram target has no parallel verify: each of the K + 1 positions of a "
        "round is its own lookup.",
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


def draft_lengths(choice: Choice, run: work.LabRun) -> None:
    """Guarded runs: which rounds drafted and which the guard kept plain, and this
    server's prices the guard started from."""
    request, spec = choice.request, run.spec
    if not request.adaptive:
        return
    costs = work.get_costs(request.pair, request.temperature)  # pinned: the run started from it
    st.header("Where the guard stepped aside, and why")
    left, right = st.columns(2)
    with left:
        sizes = (tuple(spec.draft_sizes), tuple(spec.accepted_sizes))
        figure = shared_figure(
            "lm.draft_lengths", sizes, lambda: figures.draft_lengths_figure(*sizes)
        )
        chart(figure, key="lm_draft_lengths")
        stepped = spec.prices.plain_rounds if spec.prices is not None else 0
        st.caption(
            f"A round drafted K = {request.k} while drafting rounds were measured at least as "
            f"fast as plain steps, and was one plain step while they were not: the guard "
            f"kept {stepped} of {spec.n_rounds} rounds plain; {spec.plain_rounds} rounds in "
            f"all drafted nothing ({spec.drafted / spec.n_rounds:.2f} drafts a round on "
            "average)."
        )
    unit = work.price_unit(request, costs.step_s)  # one plain step for the whole page
    with right:
        verify = tuple(v * unit.scale for v in costs.verify)
        whole = tuple(x * unit.scale for x in round_costs(costs, costs.k_max))
        figure = shared_figure(
            "lm.round_costs", (verify, whole), lambda: figures.round_costs_figure(verify, whole)
        )
        chart(figure, key="lm_round_costs")
        st.caption(
            f"Where the guard started, measured on this server (BLAS kernels: {costs.kernel}): "
            f"checking k drafts costs v(k) plain steps, from v(1) = {verify[1]:.2f} to "
            f"v({costs.k_max}) = {verify[-1]:.2f}, and a draft call c = "
            f"{costs.draft * unit.scale:.3f}; on a machine where checking is dearer the same "
            "draft steps aside sooner."
        )
    if spec.prices is not None:
        run_prices(spec.prices, unit)


def unit_words(unit: work.PriceUnit) -> str:
    """Which plain step the prices are in, and why it differs from the one measured apart."""
    apart = f"{unit.apart_s * 1e6:.1f} µs"
    if not unit.from_speed:
        return (
            f"In plain steps as this server's cost measurement timed one apart ({apart} of CPU: "
            "the target's call on one token of a short fixed text, in a tight loop). Once "
            "your run's speed is measured (below), these prices are given in that section's "
            "plain step, so that the page has one unit."
        )
    return (
        f"In plain steps as the speed section below counts them ({unit.seconds * 1e6:.1f} µs "
        "of CPU: a step of plain decoding of your prompt, timed beside your run), the unit of "
        f"its c and v. The cost measurement the guard started from timed a plain step apart "
        f"at {apart} (one token of a short fixed text, in a tight loop, its caches warm), so "
        f"its prices are multiplied by {unit.scale:.2f} here."
    )


PRICE_WORDS = {
    "guard": "the guard, per round (its decision and its books), a",
    "draft": "a call of the draft, c",
    "plain": "a plain round the guard took",
}


def run_prices(ledger: PriceLedger, unit: work.PriceUnit) -> None:
    """Issue 27: what this run's guard cost per round, beside c and v(n), as this server's
    measurement priced them and as the run's clock read them, in plain steps of ``unit``
    (issue 33, item 3: the speed section's once the run is measured)."""
    rows = ledger.in_steps(unit.seconds)
    lines = [
        "| this run's prices | how many | as measured apart | as paid |",
        "|---|---:|---:|---:|",
    ]
    for what, count, planned, paid in rows:
        name = PRICE_WORDS.get(what, f"checking {what[2:-1]} drafts, {what}")
        lines.append(f"| {name} | {count} | {planned:.3f} | {paid:.3f} |")
    with st.container(key="lm_prices"):  # scrolls sideways in its own box on a narrow screen
        st.markdown("\n".join(lines))
    guard_us = ledger.guard_per_round * 1e6
    how = (
        "The guard compared drafting and plain rounds by the run's own CPU clock, starting "
        "from this server's measurement"
        if ledger.own_clock
        else "The guard priced the rounds by this server's measurement throughout"
    )
    st.caption(
        f"{unit_words(unit)} The guard took {guard_us:.1f} µs a round: deciding whether to "
        f"draft is paid for like drafting. {how}; “as paid” is what its clock read."
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
    st.write(
        "At T > 0 the output is not the same as plain sampling token for token (the coins "
        "are used differently); it follows the same distribution. The Losslessness lab "
        "tests that statistically."
    )


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


AGAIN_HELP = (
    "Measures this run once more on this server, now, in the background. The figure above "
    "stays until the new one is ready; then it replaces this one for everyone who opens "
    "this run (the class sees the new figure and its new time). Use it when the server was "
    "busy during the first measurement, or to show that a measurement varies."
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
        st.write(AGAIN_HELP)
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
        st.write(
            "The basic formula assumes that verifying K + 1 tokens costs one target step. On "
            "a GPU that is nearly true: a step is memory-bound (reading the weights "
            "dominates), so scoring a few more tokens is almost free. A tiny model on a CPU "
            "is different: its few megabytes of weights stay in the processor's cache, so a "
            "step is bound by arithmetic, not by reading weights, and the work grows with "
            "the number of tokens. So v(K) is above 1, and the corrected formula, which "
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
    st.caption(
        "E(α, K) assumes K drafts in every round; the guard keeps some rounds plain, so the "
        "formula here is the run's own accounting: what its rounds produced over what they "
        "cost, in plain steps."
    )


def guard_gap_words(request: work.RunRequest, ledger: PriceLedger, speed) -> str:
    """Issue 33, item 3: why Steps aside reads below fixed K on the same rounds: the guard's
    share of a round, and fixed K's figure of the same run when it is measured."""
    gap = work.guard_gap(request, ledger.guard_per_round, speed)
    k = request.k
    words = (
        f"Against fixed K = {k}: where the guard drafts, its rounds are fixed K's rounds "
        "plus the guard (its decision and books, and the clock readings they need): "
        f"{gap.guard_s * 1e6:.1f} µs a round in your run, {gap.share:.1%} of a guarded "
        f"round's {gap.round_s * 1e6:.0f} µs of CPU in the timed runs. So where it never "
        f"steps aside it reads a little below fixed K = {k}; it gains only where it does."
    )
    if gap.fixed is None:
        return words + f" (Choose Fixed K = {k} to measure this run that way and compare.)"
    fixed = gap.fixed
    lo, hi = speed.spread
    f_lo, f_hi = fixed.spread
    same = "the same" if fixed.rounds == speed.rounds else "other"
    words += (
        f" Fixed K = {k} measured {fixed.speedup:.2f}x on this run ({fixed.rounds} rounds, "
        f"{same} rounds as the timed guarded runs' {speed.rounds}; its repeats "
        f"{f_lo:.2f}x to {f_hi:.2f}x). The guard's share alone takes that to "
        f"{gap.fixed_less_guard:.2f}x; Steps aside measured {speed.speedup:.2f}x (repeats "
        f"{lo:.2f}x to {hi:.2f}x)"
    )
    if speed.speedup < gap.fixed_less_guard:
        return words + (
            ": the rest of the gap is the machine's load between the two measurements, "
            "which were taken at different times."
        )
    return words + (
        ", at or above that: its plain rounds paid better than drafting would have."
        if speed.rounds != fixed.rounds
        else ", at or above that: within what the repeats vary by."
    )


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
    words = (
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
        return words + "No round of your run drafted anything."
    made = sum(kept + 1 for _, kept in drafting) / len(drafting)
    if parts:
        words += "In your run, " + " and ".join(parts) + "; "
        words += f"the {len(drafting)} rounds that drafted made {made:.2f} tokens each. "
    return words + (
        "The rest of the gap is text: drafts are kept in streaks on easy stretches and "
        "rejected on hard ones, which one average α does not describe. Neither number is "
        "wrong: E is the model, the other is what happened."
    )


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
        help="What the papers' hardware gives: verifying K + 1 tokens costs one step.",
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
        st.caption(
            "Same α, but the costs of a large model on a GPU (the papers report 2-3x "
            "with c between 0.02 and 0.1)."
        )
    rounded = tuple((label, round(float(value), 2)) for label, value in rows)
    chart(_speedup_figure(rounded), key="lm_speedup")


def _speedup_figure(rows: tuple[tuple[str, float], ...]):
    return shared_figure("lm.speedup", rows, lambda: figures.speedup_figure(rows))
