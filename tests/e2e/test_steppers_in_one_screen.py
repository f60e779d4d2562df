"""Issue 25 ("a second teacher's walk") in Chromium, items 2-8, measured with bounding boxes
and computed colours, in light and dark:

2. Variants lab, presenter view at 1366 x 768: after each → (the clicker) the step's words
   and its chart lie wholly in the first screen, the page not scrolled;
3. Model pair lab, "Step round by round", presenter view: the round's decision (heading),
   p and q per position, the coins (at T = 0 the argmax check) and the last token's
   distribution in the first screen after each →;
4. Round page, the leftover step: the bars the step is about (A 0.10, C 0.05) drawn at full
   opacity, their fill at least 3:1 against the background; the rejected B faded;
5. Model pair lab: every token's text against its tint at least 4.5:1, each kind in its own
   colour, none in the page's plain text colour;
6. a 390 x 844 touch phone: Back and Next side by side, at least 44 px tall, on the round,
   model-pair and variants steppers; the row repeated under the chart: after each tap the
   step's chart and the row are on screen without scrolling;
7. Speedup explorer on the phone: the ms-per-token table's answer columns fit, and no chart
   title is cut;
8. Home on the phone: the timeline's title, notes and legend inside the chart, no label on
   another, "time →" clear of the legend.
Screenshots go to tests/e2e/artifacts/steppers-*.png.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import (
    PHONE_VIEWPORT,
    PRESENTER_VIEWPORT,
    artifact,
    assert_inside_viewport,
    each_theme,
    key,
    laid_out,
    main_scroll_top,
    overlapping_text,
    settle,
)
from tests.e2e.test_teacher_screens import _background, _contrast

pytestmark = pytest.mark.e2e

SLOW = 90_000  # ms: a cold page (the Model pair lab loads its models) on a shared machine
PHONE = {"is_mobile": True, "has_touch": True}


def _open(page, path: str) -> None:
    page.goto(path)
    settle(page, timeout=SLOW)
    expect(page.locator('[data-testid="stSkeleton"]')).to_have_count(0, timeout=SLOW)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def _drawn(page, name: str):
    chart = page.locator(key(name))
    expect(chart.locator("svg.main-svg").first).to_be_attached(timeout=SLOW)
    return chart


def _clicker(page, text_after, button: str = "ArrowRight") -> None:
    """The clicker's → (or ``button``: ← steps back) with the focus on the page (no widget),
    then wait for the new state."""
    page.mouse.click(5, PRESENTER_VIEWPORT["height"] - 5)
    page.keyboard.press(button)
    expect(text_after).to_be_visible(timeout=SLOW)
    settle(page, timeout=SLOW)
    laid_out(page, timeout=SLOW)


# --- 2. Variants lab: the decision and its chart on the projector's first screen ------------


@pytest.mark.parametrize("preset", ["rescue", "tree"])
def test_variants_decision_and_chart_fill_the_first_screen_after_each_click_in_both_themes(
    screen_context, preset
):
    """Forward with the clicker in light, then back to the first decision in dark: every
    decision is checked in both themes on one visit."""
    page = screen_context(PRESENTER_VIEWPORT, "light").new_page()
    _open(page, f"/Variants_lab?preset={preset}&rounds=20000&present=1")
    progress = page.get_by_text(re.compile(r"^Decision \d+ of \d+$"))
    n_steps = int(progress.inner_text().split(" of ")[1])
    assert n_steps >= 2
    for scheme in each_theme(page):
        steps = range(1, n_steps + 1) if scheme == "light" else range(n_steps, 0, -1)
        for step in steps:
            shown = page.get_by_text(f"Decision {step} of {n_steps}", exact=True)
            if step != steps[0]:
                _clicker(page, shown, "ArrowRight" if scheme == "light" else "ArrowLeft")
            where = f"{scheme}, step {step}"
            assert main_scroll_top(page) == 0
            assert_inside_viewport(page, page.locator(key("var_decision")), f"{where}: words")
            assert_inside_viewport(page, _drawn(page, "var_fig_step"), f"{where}: chart")
            next_button = page.locator(f"{key('var_next')} button")
            assert_inside_viewport(page, next_button, f"{where}: Next")
        artifact(page, f"steppers-variants-{preset}-presenter-{scheme}")


# --- 3. Model pair lab: the round's decision on the first screen -----------------------------


@pytest.mark.parametrize(("scheme", "temperature"), [("light", "1.0"), ("dark", "0.0")])
def test_model_pair_round_decision_and_charts_fill_the_first_screen(
    screen_context, scheme, temperature
):
    page = screen_context(PRESENTER_VIEWPORT, scheme).new_page()
    _open(page, f"/Model_pair_lab?mode=step&t={temperature}&present=1")
    checks = ("lm_greedy_check",) if temperature == "0.0" else ("lm_coins", "lm_coins_line")
    for shown in range(1, 7):
        if shown > 1:
            label = page.get_by_text(re.compile(rf"^Round {shown} of \d+: drag to jump$"))
            _clicker(page, label)
        assert main_scroll_top(page) == 0
        heading = page.locator("#lm-decision")
        expect(heading).to_have_text(re.compile(rf"^Round {shown}: "))
        assert_inside_viewport(page, heading, f"round {shown}: the decision")
        charts = ["lm_final"]
        if page.locator(key("lm_bars")).count():  # a round that drafted something
            charts += ["lm_bars"]
            middle = next(name for name in checks if page.locator(key(name)).count())
            assert_inside_viewport(page, page.locator(key(middle)), f"round {shown}: {middle}")
        for name in charts:
            assert_inside_viewport(page, _drawn(page, name), f"round {shown}: {name}")
        if temperature == "0.0":
            assert page.locator(key("lm_coins")).count() == 0  # item 11: no coin at T = 0
    artifact(page, f"steppers-model-pair-step-presenter-{scheme}")


# --- 4. Round page: the leftover step highlights A and C -------------------------------------

# opacity and fill of every bar; a patterned bar's fill is its pattern's background
BARS_JS = """
(sel) => [...document.querySelectorAll(sel + ' g.trace.bars')].map((trace) =>
  [...trace.querySelectorAll('g.point path')].map((p) => {
    const s = getComputedStyle(p);
    let fill = s.fill;
    const id = (fill.match(/url\\("?#([^")]+)"?\\)/) || [])[1];
    const rect = id && document.getElementById(id).querySelector('rect');
    if (id) { fill = rect ? getComputedStyle(rect).fill : 'rgba(0, 0, 0, 0)'; }
    return [parseFloat(s.opacity), fill];
  }))
"""


OUTLINES_JS = """
(sel) => [...[...document.querySelectorAll(sel + ' g.trace.bars')][1]
  .querySelectorAll('g.point path')].map((p) => { const s = getComputedStyle(p);
    return [parseFloat(s.strokeWidth) || 0, s.stroke]; })
"""


def test_the_leftover_step_highlights_the_tokens_where_p_exceeds_q_in_both_themes(
    screen_context,
):
    page = screen_context(PRESENTER_VIEWPORT, "light").new_page()
    _open(page, "/Step_through_a_round?mode=preset&preset=000-rejection&step=6&present=1")
    expect(page.get_by_text("Step 7 of 10", exact=True)).to_be_visible(timeout=SLOW)
    for scheme in each_theme(page):
        chart = _drawn(page, "round_chart_main")
        laid_out(page, timeout=SLOW)
        expect(chart.locator("g.g-gtitle")).to_contain_text("the leftover max(0, p − q)")
        traces = page.evaluate(BARS_JS, key("round_chart_main"))
        q, p, leftover = traces  # q, p and max(0, p - q), tokens A..E
        outlines = page.evaluate(OUTLINES_JS, key("round_chart_main"))
        background = _background(page)
        for token in (0, 2):  # A (0.10) and C (0.05): what the step is about
            for bars in (p, leftover):
                assert bars[token][0] == 1.0, (scheme, token, bars)
            fill = leftover[token][1]  # the leftover's green itself reads on the background
            assert _contrast(fill, background) >= 3.0, (scheme, token, fill, background)
            stroke_width, stroke = outlines[token]  # p's orange (2.3:1 on white) has an outline
            assert stroke_width >= 2, (scheme, token, stroke_width)
            assert _contrast(stroke, background) >= 3.0, (scheme, stroke, background)
        assert leftover[1][0] < 1.0 and p[1][0] < 1.0  # B, rejected, leftover 0: faded
        assert_inside_viewport(page, chart, f"the leftover chart ({scheme})")
        artifact(page, f"steppers-round-leftover-{scheme}")


# --- 5. Model pair lab: token colours that hold on a projector -------------------------------

TOKENS_JS = """
(sel) => [...document.querySelectorAll(sel + ' span')]
  .filter((s) => s.textContent.trim() && s.children.length === 0)
  .map((s) => {
    let bg = 'rgba(0, 0, 0, 0)';
    for (let e = s; e && bg.startsWith('rgba(0, 0, 0, 0)'); e = e.parentElement) {
      bg = getComputedStyle(e).backgroundColor;
    }
    return [s.textContent.trim(), getComputedStyle(s).color, bg];
  })
"""


def test_token_colours_read_on_a_projector_in_both_themes(screen_context):
    page = screen_context(PRESENTER_VIEWPORT, "light").new_page()
    _open(page, "/Model_pair_lab?mode=step&round=6&t=1.0&present=1")
    for scheme in each_theme(page):
        expect(page.locator(f"{key('lm_token_text')} .stMarkdownColoredText").first).to_be_visible()
        tokens = page.evaluate(TOKENS_JS, key("lm_token_text"))
        assert len(tokens) >= 8, tokens
        plain = page.evaluate(
            "() => getComputedStyle(document.querySelector('[data-testid=stMarkdownContainer] p'))"
            ".color"
        )
        colours = set()
        for text, colour, tint in tokens:
            assert _contrast(colour, tint) >= 4.5, (scheme, text, colour, tint)
            assert colour != plain, (scheme, text, colour)  # the colour is in the text too
            colours.add(colour)
        assert len(colours) >= 3  # prompt, kept drafts, resampled (at least) each their own
        page.locator(key("lm_token_text")).scroll_into_view_if_needed()
        artifact(page, f"steppers-model-pair-tokens-{scheme}")


# --- 6. the phone: Back and Next under the thumb --------------------------------------------

STEPPERS = [  # page, stepper prefix, the step's chart, its progress words ("{}": the step)
    (
        "/Step_through_a_round?mode=preset&preset=000-rejection",
        "round",
        "round_chart_coin|round_chart_main",  # a coin step: the coin (issue 33)
        r"^Step {} of \d+$",
    ),
    ("/Model_pair_lab?mode=step&t=1.0", "lm", "lm_bars|lm_final", r"^Round {} of \d+: drag"),
    ("/Variants_lab?preset=rescue&rounds=20000", "var", "var_fig_step", r"^Decision {} of \d+$"),
]


# the row under the chart sits on the viewport's bottom edge: the stepper script scrolled it
# there once the rerun the tap started had ended
SETTLED_SCROLL_JS = """(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
  return Math.abs(r.bottom - window.innerHeight) <= 2; }"""


def _same_row_and_thumb_sized(page, back, next_button, what: str) -> None:
    b, n = back.bounding_box(), next_button.bounding_box()
    assert b and n, what
    assert abs(b["y"] - n["y"]) <= 2, (what, b, n)  # one row
    assert b["height"] >= 44 and n["height"] >= 44, (what, b, n)
    assert b["x"] + b["width"] <= n["x"] + 1, (what, b, n)  # Back left of Next


@pytest.mark.parametrize(("path", "prefix", "chart", "progress"), STEPPERS)
def test_phone_steppers_keep_back_and_next_under_the_thumb_and_the_chart_in_view_in_both_themes(
    screen_context, path, prefix, chart, progress
):
    """Next, then Back, tapped in light; again in dark, on one visit."""
    page = screen_context(PHONE_VIEWPORT, "light", **PHONE).new_page()
    _open(page, path)
    top_back, top_next = (page.locator(f"{key(f'{prefix}_{s}')} button") for s in ("back", "next"))
    _same_row_and_thumb_sized(page, top_back, top_next, f"{prefix}: the top row")
    below_back, below_next = (
        page.locator(f"{key(f'{prefix}_{s}_below')} button") for s in ("back", "next")
    )
    below_next.scroll_into_view_if_needed()
    _same_row_and_thumb_sized(page, below_back, below_next, f"{prefix}: the row under the chart")
    for scheme in each_theme(page):
        for tap in range(2):  # the rescue preset has 2 decisions: Next, then Back
            button = below_next if tap == 0 else below_back
            shown = 2 if tap == 0 else 1
            button.tap()  # the thumb, with no scrolling between taps
            expect(page.get_by_text(re.compile(progress.format(shown)))).to_be_attached(
                timeout=SLOW
            )
            settle(page, timeout=SLOW)
            laid_out(page, timeout=SLOW)
            page.wait_for_function(SETTLED_SCROLL_JS, arg=key(f"{prefix}_below"), timeout=SLOW)
            shown_charts = [c for c in chart.split("|") if page.locator(key(c)).count()]
            drawn = _drawn(page, shown_charts[0])  # the bars, or the plain chart
            expect(drawn).to_be_visible()
            assert_inside_viewport(page, drawn, f"{prefix} ({scheme}), tap {tap + 1}: the chart")
            assert_inside_viewport(page, button, f"{prefix} ({scheme}), tap {tap + 1}: the button")
        artifact(page, f"steppers-phone-stepper-{prefix}-{scheme}")


def test_the_repeated_row_is_hidden_on_a_wide_screen(screen_context):
    page = screen_context(PRESENTER_VIEWPORT).new_page()
    _open(page, "/Step_through_a_round")
    expect(page.locator(f"{key('round_next_below')} button")).to_be_hidden()
    expect(page.locator(f"{key('round_next')} button")).to_be_visible()


# --- 7 and 8. the phone: the answer columns and whole titles ---------------------------------

TITLES_JS = """
(sel) => [...document.querySelectorAll(sel + ' [data-testid="stPlotlyChart"]')].map((c) => {
  const svg = c.querySelector('svg.main-svg').getBoundingClientRect();
  const t = c.querySelector('g.g-gtitle text');
  if (!t) return null;
  const r = t.getBoundingClientRect();
  return [t.textContent, r.left - svg.left, svg.right - r.right];
}).filter((x) => x)
"""


@pytest.mark.parametrize("path", ["/Speedup_explorer", "/"])
def test_no_chart_title_is_cut_on_a_phone_in_both_themes(screen_context, path):
    page = screen_context(PHONE_VIEWPORT, "light", **PHONE).new_page()
    _open(page, path)
    main = '[data-testid="stMainBlockContainer"]'
    expect(page.locator(f"{main} [data-testid=stPlotlyChart] svg.main-svg").first).to_be_attached()
    page.set_viewport_size({"width": 390, "height": 6000})  # every chart drawn at once
    settle(page, timeout=SLOW)
    for scheme in each_theme(page):
        laid_out(page, timeout=SLOW)
        titles = page.evaluate(TITLES_JS, main)
        assert titles, "no chart titles found"
        for text, left, right in titles:
            assert left >= -1 and right >= -1, (scheme, text, left, right)


def test_the_ms_per_token_table_shows_the_answers_on_a_phone(screen_context):
    page = screen_context(PHONE_VIEWPORT, **PHONE).new_page()
    _open(page, "/Speedup_explorer")
    table = page.get_by_role("table", name=re.compile("^Milliseconds per token"))
    table.scroll_into_view_if_needed()
    laid_out(page, timeout=SLOW)
    headers = table.locator("th")
    assert headers.all_inner_texts()[:3] == ["K", "ms / token", "speedup"]  # answers first
    # ... and all three lie inside the screen without a sideways swipe (issue 33 made the
    # table a static HTML table, whose box scrolls sideways for the columns after them)
    for i in range(3):
        headers.nth(i).scroll_into_view_if_needed()
        assert_inside_viewport(page, headers.nth(i), f"the header {headers.nth(i).inner_text()}")
    artifact(page, "steppers-speedup-table-phone")


def test_the_home_timeline_reads_on_a_phone_in_both_themes(screen_context):
    page = screen_context(PHONE_VIEWPORT, "light", **PHONE).new_page()
    _open(page, "/")
    for scheme in each_theme(page):
        chart = _drawn(page, "home_timeline")
        chart.scroll_into_view_if_needed()
        laid_out(page, timeout=SLOW)
        boxes = chart.evaluate(
            """(el) => { const svg = el.querySelector('svg.main-svg').getBoundingClientRect();
                 return [...el.querySelectorAll('svg text')].filter((t) => t.textContent.trim())
                   .map((t) => { const r = t.getBoundingClientRect();
                     return [t.textContent.trim(), r.left - svg.left, svg.right - r.right]; }); }"""
        )
        texts = [b[0] for b in boxes]
        assert "Same tokens, less time" in texts and "time →" in texts
        assert any("(all kept + bonus)" in t for t in texts)  # the note's second line, whole
        for text, left, right in boxes:
            assert left >= -1 and right >= -1, (scheme, text, left, right)  # nothing cut
        legend = chart.locator("g.legend").bounding_box()
        axis = chart.locator("g.g-xtitle").bounding_box()
        assert (
            legend["y"] + legend["height"] <= axis["y"] or axis["y"] + axis["height"] <= legend["y"]
        )
        assert overlapping_text(page, chart) == []
        artifact(page, f"steppers-home-timeline-phone-{scheme}")
