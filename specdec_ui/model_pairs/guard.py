"""The Model pair lab's guard (draft length "Steps aside"): where a guarded run stepped
aside and why, this server's prices it started from, what it paid per round, and why it
reads below fixed K (:func:`guard_gap_words`, for the speed section).
"""

from __future__ import annotations

import streamlit as st

from specdec_core.lm.adaptive import PriceLedger, round_costs
from specdec_ui.kit.presenter import chart
from specdec_ui.model_pairs import figures, words, work
from specdec_ui.model_pairs.view import Choice
from specdec_ui.runtime.figure_cache import shared_figure


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
        name = words.PRICE_WORDS.get(what, f"checking {what[2:-1]} drafts, {what}")
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


def guard_gap_words(request: work.RunRequest, ledger: PriceLedger, speed) -> str:
    """Issue 33, item 3: why Steps aside reads below fixed K on the same rounds: the guard's
    share of a round, and fixed K's figure of the same run when it is measured."""
    gap = work.guard_gap(request, ledger.guard_per_round, speed)
    k = request.k
    said = (
        f"Against fixed K = {k}: where the guard drafts, its rounds are fixed K's rounds "
        "plus the guard (its decision and books, and the clock readings they need): "
        f"{gap.guard_s * 1e6:.1f} µs a round in your run, {gap.share:.1%} of a guarded "
        f"round's {gap.round_s * 1e6:.0f} µs of CPU in the timed runs. So where it never "
        f"steps aside it reads a little below fixed K = {k}; it gains only where it does."
    )
    if gap.fixed is None:
        return said + f" (Choose Fixed K = {k} to measure this run that way and compare.)"
    fixed = gap.fixed
    lo, hi = speed.spread
    f_lo, f_hi = fixed.spread
    same = "the same" if fixed.rounds == speed.rounds else "other"
    said += (
        f" Fixed K = {k} measured {fixed.speedup:.2f}x on this run ({fixed.rounds} rounds, "
        f"{same} rounds as the timed guarded runs' {speed.rounds}; its repeats "
        f"{f_lo:.2f}x to {f_hi:.2f}x). The guard's share alone takes that to "
        f"{gap.fixed_less_guard:.2f}x; Steps aside measured {speed.speedup:.2f}x (repeats "
        f"{lo:.2f}x to {hi:.2f}x)"
    )
    if speed.speedup < gap.fixed_less_guard:
        return said + (
            ": the rest of the gap is the machine's load between the two measurements, "
            "which were taken at different times."
        )
    return said + (
        ", at or above that: its plain rounds paid better than drafting would have."
        if speed.rounds != fixed.rounds
        else ", at or above that: within what the repeats vary by."
    )
