"""Presenter view keeps its promise: every chart text on every page is at least 18 px.

The README and ``specdec_ui.kit.theme.presenter_figure`` promise chart text a class reads
from the back of a room (issue 33, item 5: the Variants lab's token labels were drawn at
12.75 px). Every registered page (``specdec_ui.registry.PAGES``) is opened in presenter
view on a 1366 x 768 projector; a page with a stepper is also measured after one Next.
The size of a text is what the screen shows: the computed font size of the element that
holds the text (a ``<tspan>`` of a sub- or superscript has its own) times the vertical
scale of its screen transform (plotly shrinks a bar label that does not fit with a
``transform``; a chart drawn smaller than its layout scales every text).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from specdec_ui.registry import PAGES
from tests.e2e.conftest import PRESENTER_VIEWPORT, artifact, key, laid_out, settle

pytestmark = pytest.mark.e2e

MIN_PX = 18  # the promise (PRESENTER_FONT_SIZE is 20: 2 px of headroom)
STEPPERS = ("round", "var", "lm")  # the pages' stepper prefixes (kit.stepper)
SLOW_MS = 120_000  # a heavy page on a busy 2-core runner

# (rendered px, text, chart key) of every drawn text node in every plotly chart
RENDERED_TEXT_JS = """
() => {
  const out = [];
  const charts = document.querySelectorAll(
    '[data-testid="stMainBlockContainer"] [data-testid="stPlotlyChart"]');
  for (const chart of charts) {
    const owner = chart.closest("[class*='st-key-']");
    const name = owner ? [...owner.classList].find((c) => c.startsWith("st-key-")) : "";
    const walker = document.createTreeWalker(chart, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node.parentElement;
      if (!node.textContent.trim() || !el || !el.closest("svg") || !el.getScreenCTM) continue;
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue;  // hidden (a folded legend item)
      const m = el.getScreenCTM();
      const scale = m ? Math.hypot(m.c, m.d) : 1;  // the text's vertical axis on screen
      const px = parseFloat(getComputedStyle(el).fontSize) * scale;
      out.push([Math.round(px * 100) / 100, node.textContent.trim().slice(0, 40), name]);
    }
  }
  return out;
}
"""


def _small_texts(page) -> tuple[list, int]:
    sizes = page.evaluate(RENDERED_TEXT_JS)
    return [s for s in sizes if s[0] < MIN_PX], len(sizes)


# every element drawn (no grey skeleton left) and every chart's SVG there
DRAWN_JS = """() => !document.querySelector('[data-testid="stSkeleton"]')
  && [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
       .every((chart) => chart.querySelector("svg.main-svg g.xtick, svg.main-svg g.trace"))"""


def _settled(page) -> None:
    settle(page, timeout=SLOW_MS)
    page.wait_for_function(DRAWN_JS, timeout=SLOW_MS)
    laid_out(page, timeout=SLOW_MS)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def _open(page, url_path: str) -> None:
    page.goto(f"/{url_path}?present=1")
    _settled(page)


def _stepper_next(page):
    """The page's enabled Next button of a stepper, or None."""
    for prefix in STEPPERS:
        button = page.locator(f"{key(prefix + '_next')} button").first
        if button.count() and button.is_visible() and button.is_enabled():
            return button
    return None


@pytest.mark.parametrize("info", PAGES, ids=[p.url_path or "home" for p in PAGES])
def test_every_chart_text_is_at_least_18_px_in_presenter_view(screen_context, info):
    page = screen_context(PRESENTER_VIEWPORT).new_page()
    _open(page, info.url_path)
    small, measured = _small_texts(page)
    artifact(page, f"presenter-text-{info.url_path or 'home'}")
    charts = page.locator('[data-testid="stPlotlyChart"]').count()
    assert measured or not charts, f"{info.title}: {charts} charts but no text measured"
    assert not small, f"{info.title}: chart text under {MIN_PX} px (of {measured}): {small}"
    next_button = _stepper_next(page)
    if next_button is None:
        return
    next_button.click()
    _settled(page)
    small, measured = _small_texts(page)
    assert measured, f"{info.title}: no chart text after Next"
    assert not small, f"{info.title} after Next: under {MIN_PX} px (of {measured}): {small}"
