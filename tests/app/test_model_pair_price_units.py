"""Issue 33, item 3 on the Model pair lab: a guarded run's price table is in the same
plain step as the speed section (not a second unit measured apart), and the page says
why Steps aside reads below fixed K on the same rounds.

The speed measurements are set in the page's hold with known numbers (the issue's: a
plain step of 757.9 µs, fixed K = 3 at 1.38x, Steps aside at 1.29x, 31 rounds each), so
every figure on screen can be checked against its arithmetic; the run and the cost
measurement are the server's own."""

from __future__ import annotations

import re
import time
from dataclasses import replace

import pytest

from specdec_core.lm.timing import SpeedMeasurement
from specdec_ui.model_pairs import work as model_pairs_work
from tests.app.conftest import open_page

PAGE = "pages/scripts/model_pairs.py"
STEP_S = 757.9e-6  # the plain step in the speed section
N_TOKENS, ROUNDS, K = 60, 31, 3


def plain(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def _request(draft_length: str) -> model_pairs_work.RunRequest:
    return model_pairs_work.RunRequest(
        pair=model_pairs_work.DEFAULT_PAIR,
        prompt=model_pairs_work.DEFAULT_PROMPT,
        k=K,
        temperature=0.0,
        n_tokens=N_TOKENS,
        seed=0,
        draft_length=draft_length,
    )


def _speed(speedup: float, draft_length: str) -> SpeedMeasurement:
    plain_s = STEP_S * N_TOKENS
    spec = plain_s / speedup
    return SpeedMeasurement(
        k=K,
        temperature=0.0,
        n_tokens=N_TOKENS,
        parallel_verify=True,
        spec_s=(spec * 0.97, spec, spec * 1.04),
        plain_s=(plain_s,) * 3,
        draft_s=(0.02 * plain_s,) * 3,
        rounds=ROUNDS,
        accepted=20,
        checked=ROUNDS * K,
        clock="time.thread_time",
        drafted=ROUNDS * K if draft_length == "adaptive" else None,
        draft_length=draft_length,
    )


@pytest.fixture
def held(monkeypatch):
    """A fresh hold for this test, with the two measurements of the default run."""
    hold = model_pairs_work.MeasurementHold(hold_s=3600.0, retry_s=60.0, max_entries=8)
    monkeypatch.setattr(model_pairs_work, "HOLD", hold)

    def put(draft_length: str, speedup: float) -> SpeedMeasurement:
        speed = _speed(speedup, draft_length)
        key = ("lm.run_speed", model_pairs_work.speed_key(_request(draft_length)))
        hold.put(key, model_pairs_work.Held(speed, time.time()))
        return speed

    return put


def _price_table(at) -> list[list[str]]:
    table = next(m.value for m in at.markdown if m.value.startswith("| this run's prices"))
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in table.split("\n")[2:]]


def test_the_price_table_is_in_the_speed_sections_plain_step(held):
    costs = model_pairs_work.get_costs(model_pairs_work.DEFAULT_PAIR, 0.0, wait=True)
    guarded = held("adaptive", 1.29)
    at = open_page(PAGE, {"draft": "adaptive", "k": str(K)})
    assert not at.exception and not at.error
    ledger = model_pairs_work.get_run(_request("adaptive")).spec.prices
    rows = _price_table(at)
    expected = ledger.in_steps(guarded.target_step)
    assert [row[1:] for row in rows] == [
        [str(n), f"{planned:.3f}", f"{paid:.3f}"] for _, n, planned, paid in expected
    ]
    said = plain(" ".join(c.value for c in at.caption))
    scale = costs.step_s / STEP_S
    assert "plain steps as the speed section below counts them (757.9 µs of CPU" in said
    assert f"timed a plain step apart at {costs.step_s * 1e6:.1f} µs" in said
    assert f"multiplied by {scale:.2f} here" in said
    assert f"from v(1) = {costs.verify[1] * scale:.2f}" in said  # the chart's caption too
    assert "a plain target step: 758 µs" in " ".join(plain(m.value) for m in at.markdown)


def test_the_page_says_why_steps_aside_reads_below_fixed_k(held):
    model_pairs_work.get_costs(model_pairs_work.DEFAULT_PAIR, 0.0, wait=True)
    guarded = held("adaptive", 1.29)
    at = open_page(PAGE, {"draft": "adaptive", "k": str(K)})
    assert not at.exception
    said = plain(" ".join(c.value for c in at.caption))
    assert "Choose Fixed K = 3 to measure this run that way and compare" in said
    fixed = held("fixed", 1.38)
    at = open_page(PAGE, {"draft": "adaptive", "k": str(K)})
    assert not at.exception and not at.error
    ledger = model_pairs_work.get_run(_request("adaptive")).spec.prices
    gap = model_pairs_work.guard_gap(_request("adaptive"), ledger.guard_per_round, guarded)
    assert gap.fixed == fixed and gap.round_s == pytest.approx(STEP_S * N_TOKENS / 1.29 / 31)
    said = plain(" ".join(c.value for c in at.caption))
    assert f"{ledger.guard_per_round * 1e6:.1f} µs a round in your run" in said
    assert f"{gap.share:.1%} of a guarded round's" in said
    assert "Fixed K = 3 measured 1.38x on this run (31 rounds, the same rounds" in said
    assert f"takes that to {1.38 * (1 - gap.share):.2f}x" in said
    assert "Steps aside measured 1.29x" in said and "taken at different times" in said
    assert replace(_request("adaptive"), draft_length="fixed") == _request("fixed")


def test_a_step_link_opens_with_the_inputs_folded():
    """Issue 33, item 16: a step link puts the stepper first (the inputs fold); a plain
    link keeps them open; once opened, the session keeps its choice."""
    at = open_page(PAGE, {"mode": "step", "round": "2", "tokens": "30"})
    assert not at.exception
    assert [e.proto.expanded for e in at.expander if e.label.startswith("⚙️ Inputs")] == [False]
    at.button(key="lm_next").click().run()
    assert not at.exception
    assert [e.proto.expanded for e in at.expander if e.label.startswith("⚙️ Inputs")] == [False]
    at = open_page(PAGE, {"tokens": "30"})
    assert [e.proto.expanded for e in at.expander if e.label.startswith("⚙️ Inputs")] == [True]
