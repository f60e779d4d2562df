"""The Model pair lab in step mode: the stepper over the rounds and the round on screen
(its decision, the bars of p and q at each position, the coins or the argmax check, the
distribution of its last token). ``pages/scripts/model_pairs.py`` calls
:func:`round_stepper`, then :func:`round_detail`.
"""

from __future__ import annotations

import streamlit as st

import specdec_core.lm as lm
from specdec_ui.kit.presenter import chart
from specdec_ui.kit.stepper import pressed, stepper, steps_below
from specdec_ui.kit.text import md_escape
from specdec_ui.kit.theme import STATUS_SYMBOL
from specdec_ui.kit.token_text import token_markdown
from specdec_ui.model_pairs import figures, words, work
from specdec_ui.model_pairs.view import Choice
from specdec_ui.runtime.figure_cache import shared_figure

ROUND = "lm_round"  # the round shown in step mode (the stepper's position)
JUMP = "lm_round_jump"  # the jump slider's own key
JUMP_DRAWN = "lm_round_jump_drawn"  # the round the slider was last drawn at


def _dragged_to() -> int | None:
    """The round the jump slider was dragged to in this request, or None.

    The slider once shared the stepper's key, and a press of Next sent in the instant before
    the browser had taken the slider's new value carried the old one with it, which put the
    round back: a clicker's fourth quick press was lost. So the slider has its own key, and
    its value counts only when it differs from the round it was drawn at and no stepper
    button was pressed in the same request (a hand cannot drag and press at once).
    """
    dragged = st.session_state.get(JUMP)
    if dragged is None or dragged == st.session_state.get(JUMP_DRAWN) or pressed("lm"):
        return None
    return int(dragged)


def round_stepper(run: work.LabRun) -> int:
    """Step mode: First / Back / Next / Last and a jump slider that says which round is
    shown; returns the round shown."""
    n_rounds = run.counts.rounds
    dragged = _dragged_to()
    if dragged is not None:
        st.session_state[ROUND] = dragged
    shown, rest = stepper("lm", ROUND, 1, n_rounds)
    st.session_state[JUMP] = st.session_state[JUMP_DRAWN] = shown
    with rest:
        if n_rounds > 1:  # the label changes, the key keeps the widget (and its focus)
            st.slider(f"Round {shown} of {n_rounds}: drag to jump", 1, n_rounds, key=JUMP)
        else:
            st.caption(f"Round {shown} of {n_rounds}")
    return shown


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
        f"Round {round_shown}: {kept}, then a {words.FINAL_WORD[rnd.final_kind]} token",
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
        + (words.GREEDY_RULE if greedy else words.COIN_RULE)
        + " The first rejection ends the round (later drafts are discarded unchecked)."
    )
    bonus = rnd.final_kind == "bonus"
    st.caption(words.BARS_CAPTION + ("" if bonus else words.NO_BONUS_POSITION))
    st.caption(words.GREEDY_SEEDS if greedy else words.SEEDED_STEPS)


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
    st.write(words.PLAIN_STEP)


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
