"""Issue 27 on the Model pair lab: a guarded run shows what its guard cost per round,
beside c and v(n), as this server's measurement priced them and as its clock read them."""

from __future__ import annotations

import pytest

from specdec_ui.model_pairs import words as model_pairs_words
from specdec_ui.model_pairs import work as model_pairs_work
from tests.app.conftest import open_page

PAGE = "pages/scripts/model_pairs.py"


def _request(**changes) -> model_pairs_work.RunRequest:
    default = {
        "pair": model_pairs_work.DEFAULT_PAIR,
        "prompt": model_pairs_work.DEFAULT_PROMPT,
        "k": 6,
        "temperature": 0.0,
        "n_tokens": model_pairs_work.DEFAULT_TOKENS,
        "seed": 0,
        "draft_length": "adaptive",
    }
    return model_pairs_work.RunRequest(**{**default, **changes})


def _price_table(at) -> list[list[str]]:
    table = next(m.value for m in at.markdown if m.value.startswith("| this run's prices"))
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in table.split("\n")[2:]]


@pytest.mark.parametrize("mode", ["run", "step"])
def test_a_guarded_run_shows_its_guards_cost_beside_c_and_v(mode):
    model_pairs_work.get_costs(model_pairs_work.DEFAULT_PAIR, 0.0, wait=True)
    at = open_page(PAGE, {"draft": "adaptive", "k": "6", "mode": mode})
    assert not at.exception and not at.error
    ledger = model_pairs_work.get_run(_request(), trace=mode == "step").spec.prices
    rows = _price_table(at)
    said = " ".join(c.value for c in at.caption)
    apart = "timed one apart" in said  # issue 33: the speed section's unit once it is held
    speed = None if apart else model_pairs_work.held_run_speed(_request())
    expected = ledger.in_steps(speed.target_step if speed is not None else None)
    assert len(rows) == len(expected)
    for row, (what, count, planned, paid) in zip(rows, expected, strict=True):
        assert row[1] == str(count) and row[3] == f"{paid:.3f}" and row[2] == f"{planned:.3f}"
        assert row[0] == model_pairs_words.PRICE_WORDS.get(
            what, f"checking {what[2:-1]} drafts, {what}"
        )
    assert rows[0][0].startswith("the guard, per round")
    assert f"The guard took {ledger.guard_per_round * 1e6:.1f} µs a round" in said
    assert f"timed one apart ({ledger.unit_s * 1e6:.1f} µs of CPU" in said or speed is not None
    assert "by the run's own CPU clock" in said  # the server's profile: its own clock


def test_a_fixed_k_run_shows_no_planner():
    at = open_page(PAGE, {"draft": "fixed"})
    assert not at.exception
    assert not any(m.value.startswith("| this run's prices") for m in at.markdown)
