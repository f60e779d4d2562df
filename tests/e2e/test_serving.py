"""The Serving lab in Chromium: a 1366 x 768 screen (normal and presenter view) and a
390 x 844 phone, light and dark.

- Normal view at 1366: the six metrics are readable (no label or value cut to "mem…"),
  every chart draws, the slow-draft case's chart has no clipped "break-even b = 1".
- Presenter view: the inputs are folded, the answer and the speedup-vs-batch chart lie in
  the first screen, chart text is at least 18 px.
- Phone: nothing in the main column sticks out sideways, every chart draws.
Screenshots go to tests/e2e/artifacts/.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import (
    PHONE_VIEWPORT,
    PRESENTER_VIEWPORT,
    artifact,
    assert_charts_drew,
    assert_inside_viewport,
    chart_text_sizes,
    each_theme,
    horizontal_overflow,
    key,
    laid_out,
    main_scroll_top,
    overlapping_text,
    settle,
)

pytestmark = pytest.mark.e2e

SERVING = "/Serving_lab"
SLOW = 60_000  # ms: a shared machine; a cold page can take this long
MIN_CHART_PX = 18
CHARTS = (
    "serve_fig_speedup",
    "serve_fig_v",
    "serve_fig_throughput",
    "serve_fig_measured_v",
    "serve_fig_measured_step",
)
# Text cut with an ellipsis: its content is wider than its box.
CUT_JS = (
    """(els) => els.filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent)"""
)


def _open(page, path: str) -> None:
    page.goto(path)
    settle(page, timeout=SLOW)
    expect(page.locator('[data-testid="stSkeleton"]')).to_have_count(0, timeout=SLOW)
    for name in CHARTS:
        expect(page.locator(f"{key(name)} svg.main-svg").first).to_be_attached(timeout=SLOW)
    laid_out(page)  # plotly lays out after the script ends: wait for the final layout


def _cut_metrics(page) -> list[str]:
    """Metric labels and values whose text is cut at this width."""
    parts = page.locator(
        '[data-testid="stMetricLabel"] p, [data-testid="stMetricLabel"] div, '
        '[data-testid="stMetricValue"] div'
    )
    return parts.evaluate_all(CUT_JS)


def test_serving_at_1366_shows_every_metric_whole_and_every_chart_in_both_themes(screen_context):
    page = screen_context(PRESENTER_VIEWPORT, "light").new_page()
    _open(page, SERVING)
    expect(page.locator(key("serve_answer"))).to_contain_text("At batch 1: 2.25x")
    # the published table, named (its cells are checked for "None" by AppTest)
    expect(page.get_by_role("table", name=re.compile("^Published results"))).to_be_attached()
    words = " ".join(page.locator('[data-testid="stMarkdownContainer"]').all_inner_texts())
    assert "None" not in words.split()
    for scheme in each_theme(page):
        artifact(page, f"serving-1366-{scheme}", whole=True)
        cut = _cut_metrics(page)
        assert not cut, f"metric text cut at 1366 px ({scheme}): {cut}"
        assert assert_charts_drew(page, minimum=len(CHARTS)) >= len(CHARTS)


def test_a_slow_draft_reads_slower_at_every_batch_size_in_the_chart_too(screen_context):
    page = screen_context(PRESENTER_VIEWPORT, "light").new_page()
    _open(page, SERVING)
    page.locator(f"{key('serve_why_slow_draft')} button").click()
    answer = page.locator(key("serve_answer"))
    expect(answer).to_contain_text("slower than plain decoding at every batch size", timeout=SLOW)
    settle(page)
    laid_out(page)
    chart = page.locator(key("serve_fig_speedup"))
    chart.scroll_into_view_if_needed()
    artifact(page, "serving-slow-draft")
    texts = chart.locator("svg text").all_text_contents()
    assert not any("break-even" in t for t in texts), texts
    assert any("every batch size" in t for t in texts), texts
    assert not overlapping_text(page, chart)


def test_serving_presenter_view_shows_the_answer_and_its_chart_in_one_screen_in_both_themes(
    screen_context,
):
    page = screen_context(PRESENTER_VIEWPORT, "light").new_page()
    _open(page, f"{SERVING}?present=1")
    for scheme in each_theme(page):
        artifact(page, f"presenter-serving-{scheme}")  # before the checks: kept on failure
        expect(page.locator('[data-testid="stSidebar"]')).to_have_attribute(
            "data-collapsed", "true"
        )
        assert main_scroll_top(page) == 0
        answer = page.locator(key("serve_answer"))
        expect(answer).to_contain_text("At batch 1: 2.25x")
        assert_inside_viewport(page, answer, f"serving: the answer ({scheme})")
        chart = page.locator(key("serve_fig_speedup"))
        assert_inside_viewport(page, chart, f"speedup vs batch chart ({scheme})")
        assert assert_charts_drew(page, minimum=len(CHARTS)) >= len(CHARTS)
        sizes = chart_text_sizes(page, key("serve_fig_speedup"))
        assert sizes, "no chart text found"
        small = [(size, text) for size, text in sizes if size < MIN_CHART_PX]
        assert not small, f"chart text under {MIN_CHART_PX} px ({scheme}): {small[:5]}"


def test_serving_on_a_phone_does_not_overflow_sideways_in_both_themes(screen_context):
    context = screen_context(PHONE_VIEWPORT, "light", is_mobile=True, has_touch=True)
    page = context.new_page()
    _open(page, SERVING)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    for scheme in each_theme(page):
        laid_out(page)
        artifact(page, f"phone-serving-{scheme}", whole=True)
        found = horizontal_overflow(page)
        assert not found["count"] and found["pageScroll"] <= 1, (scheme, found)
        assert assert_charts_drew(page, minimum=len(CHARTS)) >= len(CHARTS)
        cut = _cut_metrics(page)
        assert not cut, f"metric text cut on a phone ({scheme}): {cut}"


# --- issue 33 -------------------------------------------------------------------------------
IN_VIEW_JS = """(sel) => { const el = document.querySelector(sel); if (!el) { return false; }
  const r = el.getBoundingClientRect();
  return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight; }"""


def test_a_case_tapped_on_a_phone_brings_its_changed_chart_onto_the_screen(screen_context):
    """Item 16: the case buttons lie far below the charts on a phone; after a tap on one,
    the first chart it changes (speedup against the batch) is on the screen, showing it."""
    context = screen_context(PHONE_VIEWPORT, "light", is_mobile=True, has_touch=True)
    page = context.new_page()
    _open(page, SERVING)
    button = page.locator(f"{key('serve_why_k_large')} button")
    button.scroll_into_view_if_needed()
    chart = page.locator(key("serve_fig_speedup"))
    assert not page.evaluate(IN_VIEW_JS, key("serve_fig_speedup")), "chart already on screen"
    button.tap()
    expect(page.locator(key("serve_answer"))).to_contain_text("K = 8", timeout=SLOW)
    settle(page, timeout=SLOW)
    laid_out(page, timeout=SLOW)
    page.wait_for_function(IN_VIEW_JS, arg=key("serve_fig_speedup"), timeout=SLOW)
    artifact(page, "phone-serving-case-k-large")
    assert_inside_viewport(page, chart, "the speedup chart the case changed")
    texts = chart.locator("svg text").all_text_contents()
    assert any("K = 8" in t for t in texts), texts  # the chart shows the case, not the default


def _open_questions(page) -> None:
    box = page.locator('[data-testid="stExpander"]').filter(has_text="What this page asks").first
    box.locator("summary").first.click()
    answer = box.locator('[data-testid="stExpander"]').filter(has_text="Worked answer").first
    answer.locator("summary").first.click()
    expect(answer).to_contain_text("break-even batch", timeout=SLOW)
    box.scroll_into_view_if_needed()


@pytest.mark.parametrize(
    ("viewport", "query", "name"),
    [
        (PRESENTER_VIEWPORT, "?present=1", "presenter-serving-questions"),
        (PHONE_VIEWPORT, "", "phone-serving-questions"),
    ],
)
def test_the_serving_questions_open_in_presenter_view_and_on_a_phone(
    screen_context, viewport, query, name
):
    """Item 1: "What this page asks" opens with the three questions and a worked answer."""
    phone = viewport == PHONE_VIEWPORT
    context = screen_context(viewport, "light", is_mobile=phone, has_touch=phone)
    page = context.new_page()
    _open(page, SERVING + query)
    _open_questions(page)
    laid_out(page)
    artifact(page, name)
    box = page.locator('[data-testid="stExpander"]').filter(has_text="What this page asks").first
    for start in ("With the page's default settings", "At batch 1, checking", "K too large"):
        expect(box).to_contain_text(start)
    found = horizontal_overflow(page)
    assert not found["count"] and found["pageScroll"] <= 1, found


# --- issue 35: the Serving lab under load ---------------------------------------------------
LOAD_CHARTS = ("serve_fig_load_latency", "serve_fig_load_tokens", "serve_fig_load_memory")


@pytest.mark.parametrize(
    ("viewport", "query", "name"),
    [
        (PRESENTER_VIEWPORT, "", "serving-load-1366"),
        (PRESENTER_VIEWPORT, "?present=1", "presenter-serving-load"),
        (PHONE_VIEWPORT, "", "phone-serving-load"),
    ],
)
def test_under_load_draws_its_answer_and_three_charts_on_every_screen(
    screen_context, viewport, query, name
):
    """The "Under load" section: its answer (with the crossover QPS), latency and tokens
    against QPS and memory against batch drawn, no chart text overlapping, nothing sticking
    out sideways; in presenter view its chart text is at least 18 px."""
    phone = viewport == PHONE_VIEWPORT
    context = screen_context(viewport, "light", is_mobile=phone, has_touch=phone)
    page = context.new_page()
    _open(page, SERVING + query)
    answer = page.locator(key("serve_load_answer"))
    answer.scroll_into_view_if_needed()
    expect(answer).to_contain_text("stops paying from QPS", timeout=SLOW)
    for chart_key in LOAD_CHARTS:
        chart = page.locator(key(chart_key))
        expect(chart.locator("svg.main-svg").first).to_be_attached(timeout=SLOW)
    laid_out(page)
    latency = page.locator(key("serve_fig_load_latency"))
    latency.scroll_into_view_if_needed()
    artifact(page, name)
    page.locator(key("serve_fig_load_memory")).scroll_into_view_if_needed()
    artifact(page, f"{name}-memory")
    assert_charts_drew(page, minimum=len(CHARTS) + len(LOAD_CHARTS))
    texts = " ".join(latency.locator("svg text").all_text_contents())
    assert "stops paying" in texts, texts
    for chart_key in LOAD_CHARTS:
        chart = page.locator(key(chart_key))
        assert not overlapping_text(page, chart), (chart_key, overlapping_text(page, chart))
    found = horizontal_overflow(page)
    assert not found["count"] and found["pageScroll"] <= 1, found
    if "present" in query:
        sizes = chart_text_sizes(page, key("serve_fig_load_latency"))
        small = [(size, text) for size, text in sizes if size < MIN_CHART_PX]
        assert sizes and not small, f"chart text under {MIN_CHART_PX} px: {small[:5]}"
