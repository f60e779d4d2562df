"""Presenter view's promise, measured: every chart text is at least 18 px on screen.

The README and ``specdec_ui.kit.theme.presenter_figure`` promise chart text a class reads
from the back of a room (issue 33, item 5: the Variants lab's token labels were drawn at
12.75 px). The every-page walk of ``test_accessibility.py`` (presenter view, 1366 x 768)
measures every registered page with :func:`small_chart_texts`, in its first state and after
its typical action (a step, a run, a slider moved).
The size of a text is what the screen shows: the computed font size of the element that
holds the text (a ``<tspan>`` of a sub- or superscript has its own) times the vertical
scale of its screen transform (plotly shrinks a bar label that does not fit with a
``transform``; a chart drawn smaller than its layout scales every text).
"""

from __future__ import annotations

from playwright.sync_api import expect

from tests.e2e.conftest import laid_out, settle

MIN_PX = 18  # the promise (PRESENTER_FONT_SIZE is 20: 2 px of headroom)
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


def small_chart_texts(page, where: str) -> list[str]:
    """What is wrong with the chart text on screen: texts under :data:`MIN_PX`, or charts
    with no text measured (an empty list: every chart drawn, every text large enough)."""
    drawn(page)
    sizes = page.evaluate(RENDERED_TEXT_JS)
    small = [s for s in sizes if s[0] < MIN_PX]
    charts = page.locator('[data-testid="stMainBlockContainer"] [data-testid="stPlotlyChart"]')
    if charts.count() and not sizes:
        return [f"{where}: {charts.count()} charts but no chart text measured"]
    return [f"{where}: chart text under {MIN_PX} px (of {len(sizes)}): {small}"] if small else []


# every element drawn (no grey skeleton left) and every chart's SVG there
DRAWN_JS = """() => !document.querySelector('[data-testid="stSkeleton"]')
  && [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
       .every((chart) => chart.querySelector("svg.main-svg g.xtick, svg.main-svg g.trace"))"""


def drawn(page) -> None:
    """Wait until no script runs and every chart is drawn and laid out."""
    settle(page, timeout=SLOW_MS)
    page.wait_for_function(DRAWN_JS, timeout=SLOW_MS)
    laid_out(page, timeout=SLOW_MS)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
