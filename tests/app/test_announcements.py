"""Issue 33, items 7 and 8: every action is said in the one live region (the container
keyed "announce", drawn by ``page_frame`` on every page), and the Losslessness lab names
the number of rounds typed when it is out of range."""

from __future__ import annotations

import re

from specdec_ui import registry
from specdec_ui.kit.announce import REGION_KEY
from specdec_ui.round.story import STEP_KINDS
from tests.app.conftest import open_app, open_page


def said(at) -> str:
    """The live region's text."""
    assert not at.exception
    return " ".join(e.value for e in at.get_by_key(REGION_KEY) if e.type == "text")


def plain(text: str) -> str:
    """Undo md_escape: the text a reader sees."""
    return re.sub(r"\\(.)", r"\1", text)


def title_of(path: str) -> str:
    return next(p.title for p in registry.PAGES if p.path == path)


def test_every_page_has_the_region_and_says_its_title_on_arrival():
    for info in registry.PAGES:
        if not info.exists or info.heavy or info.is_home:  # Home: through the router, below
            continue
        at = open_page(info.path)
        assert said(at).startswith(f"Page: {info.title}."), info.path


def test_a_page_change_says_the_new_page_title():
    at = open_app()
    assert said(at) == "Page: Home."
    at.switch_page("pages/scripts/speedup.py")
    at.run()
    assert said(at).startswith(f"Page: {title_of('pages/scripts/speedup.py')}.")
    at.switch_page("pages/scripts/round.py")
    at.run()
    assert said(at).startswith(f"Page: {title_of('pages/scripts/round.py')}. Step 1 out of ")


def _step_on_screen(at) -> str:
    """The step as the page shows it: "Step N out of M: <kind>. <title>."."""
    label = at.get("progress")[0].proto.text.replace(" of ", " out of ")
    kind = plain(at.get_by_key("round_why").markdown[0].value).removeprefix("### ")
    heading = at.header[0].value
    assert heading.lower() in STEP_KINDS.values()
    return f"{label}: {heading.lower()}. {kind}."


def test_round_page_says_every_step_it_moves_to():
    at = open_page("pages/scripts/round.py")
    moves = ["round_next", "round_next", "round_back", "round_last", "round_first"]
    for key in moves:
        at.button(key=key).click().run()
        assert said(at) == _step_on_screen(at), key
    at.button(key="round_next").click().run()
    at.button(key="round_next").click().run()  # a coin step: "the coin decides. Coin u = ..."
    assert said(at).startswith("Step 3 out of ") and ": the coin decides. Coin u = " in said(at)


def test_round_page_rerun_without_a_move_says_nothing():
    at = open_page("pages/scripts/round.py")
    at.button(key="round_next").click().run()
    assert said(at).startswith("Step 2 out of ")
    at.run()
    assert said(at) == ""


def test_speedup_slider_says_the_speedup_the_page_shows():
    at = open_page("pages/scripts/speedup.py")
    for k in (5, 2):
        at.slider(key="speed_k").set_value(k).run()
        shown = next(m for m in at.metric if m.label == f"speedup at K = {k}")
        assert said(at).startswith(f"Speedup {shown.value} at K = {k} (alpha ")
    at.slider(key="speed_alpha").set_value(0.9).run()
    assert "(alpha 0.90, c_q " in said(at)
    best = next(m for m in at.metric if m.label == "best K")
    assert f"best K = {best.value}, " in said(at)


def test_losslessness_run_says_the_verdict_and_counts():
    at = open_page("pages/scripts/losslessness.py")
    verdict = " ".join(plain(e.value) for e in at.get_by_key("lab_verdict") if e.type == "success")
    assert verdict.startswith("PASS")
    at.button(key="lab_run").click().run()  # the same settings: said again
    text = said(at)
    assert text.startswith("Simulated 100,000 rounds of ") and text.endswith(verdict)
    assert re.search(r"K = \d+: [\d,]+ tokens emitted, \d\.\d\d per round\. PASS", text)
    at.selectbox(key="lab_variant").set_value("no_bonus").run()  # runs automatically
    assert "FAIL" in said(at)


def test_losslessness_names_the_rounds_typed():
    """Issue 33, item 7: -5 typed reached the page as 0 (the field's minimum)."""
    at = open_page("pages/scripts/losslessness.py")
    for typed in (-5, 0, 999, 500_001):
        at.number_input(key="lab_rounds").set_value(typed).run()
        errors = [plain(e.value) for e in at.error]
        assert errors == [
            f"Rounds to simulate: {typed:,} is out of range; allowed: 1,000 to 500,000. "
            "Nothing was simulated for it."
        ], typed
        assert said(at).startswith(f"Rounds to simulate: {typed:,} is out of range"), typed
