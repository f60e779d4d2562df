"""The Losslessness lab's engine numbers (issue 20, item 3) in Chromium.

The panel (vLLM's log line, AL, draft acceptance rate, the i.i.d. alpha, the per-position
chart) renders for the student's simulated run on a projector (1366 x 768, normal and
presenter view) and on a 390 x 844 phone (light and dark): nothing sticks out sideways,
and no two texts of its chart overlap (the legend hangs under the axis title at every
font size). Screenshots go to tests/e2e/artifacts/.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import (
    PHONE_VIEWPORT,
    PRESENTER_VIEWPORT,
    artifact,
    each_theme,
    horizontal_overflow,
    key,
    laid_out,
    overlapping_text,
    settle,
)

pytestmark = pytest.mark.e2e

LAB = "/Losslessness_lab?rounds=20000&seed=0"  # preset 000, K = 4
SLOW = 90_000  # ms: a cold page on a shared machine

SCREENS = [  # the view, and the themes looked at on one visit (the first is the page's own)
    pytest.param(PRESENTER_VIEWPORT, ("light",), "", id="1366-normal"),
    pytest.param(PRESENTER_VIEWPORT, ("light",), "&present=1", id="1366-presenter"),
    pytest.param(PHONE_VIEWPORT, ("light", "dark"), "", id="phone-light-then-dark"),
]


@pytest.mark.parametrize("viewport, schemes, present", SCREENS)
def test_the_engine_panel_renders_without_sideways_overflow(
    screen_context, viewport, schemes, present
):
    phone = viewport == PHONE_VIEWPORT
    context = screen_context(viewport, schemes[0], is_mobile=phone, has_touch=phone)
    page = context.new_page()
    page.goto(LAB + present)
    settle(page, timeout=SLOW)
    panel = page.locator(key("lab_engine"))
    expect(panel).to_be_attached(timeout=SLOW)
    for scheme in each_theme(page) if len(schemes) == 2 else schemes:
        panel.scroll_into_view_if_needed()
        expect(panel.get_by_text("your 20,000 simulated rounds at K = 4")).to_be_visible()
        code = panel.locator("code")
        expect(code).to_contain_text("SpecDecoding metrics: Mean acceptance length")
        expect(panel.locator('[data-testid="stMetric"]')).to_have_count(3)
        expect(panel.get_by_text("The theory to compare with")).to_be_visible()
        chart = panel.locator(key("lab_fig_engine"))
        expect(chart.locator("svg.main-svg").first).to_be_attached(timeout=SLOW)
        expect(chart.locator("g.trace.bars g.point path")).to_have_count(4)  # r_1..r_4
        laid_out(page)
        overflow = horizontal_overflow(page)
        assert overflow["count"] == 0 and overflow["pageScroll"] <= 0, (scheme, overflow)
        box = panel.bounding_box()
        assert box is not None and box["x"] >= 0, (scheme, box)
        assert box["x"] + box["width"] <= viewport["width"] + 1, (scheme, box)
        assert not overlapping_text(page, chart), scheme
        panel.scroll_into_view_if_needed()
        view = f"{viewport['width']}-{scheme}{'-presenter' if present else ''}"
        artifact(page, f"lab-engine-{view}")
