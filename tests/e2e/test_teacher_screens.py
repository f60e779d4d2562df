"""Issue 18 in Chromium, as a teacher (1366 x 768, normal and presenter view) and a student
(390 x 844 phone) see it, in light and dark:

5. presenter view: the key numbers (st.metric values) are the largest text on the screen;
6. presenter view: "📱 Show QR code" is in the first screen of every page, and opens the
   page's own link as a large QR code (decoded here), with the localhost reminder
   (:func:`check_the_qr_code`, run on every page by the presenter walk of
   test_accessibility.py);
7. the round page in normal view: Next, the decision and its chart(s) in the first screen;
8. the Variants lab's inputs are in the main column on a phone, not in the folded sidebar;
9. a phone: no plotly toolbar, and a swipe over a chart scrolls the page instead of zooming;
10. a phone: every formula fits the screen (it wraps after "=");
11. dark mode: the coin's label, the drafted token's outline and the tree's root read on
    the background (contrast measured from the computed colours);
and the chart labels that overlapped (the alpha marker on the dashed ceilings, the numbers
on the presenter's residual bars). Screenshots go to tests/e2e/artifacts/.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import (
    OTHER_SCHEME,
    PHONE_VIEWPORT,
    PRESENTER_VIEWPORT,
    artifact,
    assert_inside_viewport,
    decode_qr_image,
    each_theme,
    horizontal_overflow,
    key,
    main_scroll_top,
    overlapping_text,
    settle,
)

pytestmark = pytest.mark.e2e

SLOW = 90_000  # ms: a cold page (the Model pair lab loads its models) on a shared machine
ROUND = "/Step_through_a_round"
DRAWN = "svg.main-svg"


def _open(page, path: str) -> None:
    page.goto(path)
    settle(page, timeout=SLOW)
    expect(page.locator('[data-testid="stSkeleton"]')).to_have_count(0, timeout=SLOW)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def _drawn(page, name: str):
    """The keyed chart once plotly has drawn it (its SVG exists)."""
    chart = page.locator(key(name))
    expect(chart.locator(DRAWN).first).to_be_attached(timeout=SLOW)
    return chart


def _rgb(css: str) -> tuple[float, float, float]:
    found = re.findall(r"[\d.]+", css)
    assert len(found) >= 3, css
    return tuple(float(x) / 255 for x in found[:3])


def _luminance(css: str) -> float:
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in _rgb(css)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _text_contrast_needed(px: float, bold: bool) -> float:
    """WCAG 2 AA: 3:1 for large text (24 px, or 18.66 px bold), else 4.5:1."""
    return 3.0 if px >= 24 or (bold and px >= 18.66) else 4.5


def _background(page) -> str:
    return page.evaluate(
        "() => getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor"
    )


# --- 5. presenter view: the metrics are the largest text ------------------------------------

TEXT_SIZES_JS = """
() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const out = {values: [], labels: [], others: []};
  for (const el of main.querySelectorAll("*")) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;  // folded away (an expander's inside)
    const px = parseFloat(getComputedStyle(el).fontSize);
    const text = el.textContent.trim().slice(0, 40);
    if (el.closest('[data-testid="stMetricValue"]')) out.values.push([px, text]);
    else if (el.closest('[data-testid="stMetricLabel"], [data-testid="stMetricDelta"]'))
      out.labels.push([px, text]);
    else out.others.push([px, text]);
  }
  return out;
}
"""


@pytest.mark.parametrize(
    "path",
    [
        "/Speedup_explorer?preset=003-H&alpha=0.7&k=4&c_q=5&c_p=40",
        "/Losslessness_lab?preset=000&k=4&rounds=20000&seed=0",
        "/Variants_lab?rounds=20000",
    ],
)
def test_presenter_metrics_are_the_largest_text_on_the_screen(screen_context, path):
    page = screen_context(PRESENTER_VIEWPORT).new_page()
    _open(page, f"{path}&present=1")
    expect(page.locator('[data-testid="stMetricValue"]').first).to_be_attached(timeout=SLOW)
    sizes = page.evaluate(TEXT_SIZES_JS)
    assert sizes["values"] and sizes["labels"] and sizes["others"], sizes
    smallest_value = min(px for px, _ in sizes["values"])
    largest_other = max(sizes["others"])
    largest_label = max(sizes["labels"])
    assert smallest_value > largest_other[0], (smallest_value, largest_other)  # h1 included
    assert smallest_value >= 1.4 * largest_label[0], (smallest_value, largest_label)
    h1 = page.evaluate("() => parseFloat(getComputedStyle(document.querySelector('h1')).fontSize)")
    assert smallest_value > h1
    page.locator('[data-testid="stMetric"]').first.scroll_into_view_if_needed()
    artifact(page, f"teacher-presenter-metrics-{path.split('?')[0].strip('/')}")


def test_normal_view_metric_labels_stay_smaller_than_their_values(screen_context):
    page = screen_context(PRESENTER_VIEWPORT).new_page()
    _open(page, "/Speedup_explorer")
    expect(page.locator('[data-testid="stMetricValue"]').first).to_be_attached(timeout=SLOW)
    sizes = page.evaluate(TEXT_SIZES_JS)
    assert min(px for px, _ in sizes["values"]) > max(px for px, _ in sizes["labels"])


# --- 6. presenter view: the QR code from the first screen, on every page ---------------------


def qr_button(page):
    return page.locator(key("presenter_qr")).get_by_role("button", name="Show QR code")


def _expected_link(url: str) -> str:
    """The page's address as a phone should open it: without the projector's present=1
    (and the root page without its trailing slash, as the browser reports it)."""
    link = re.sub(r"[?&]present=1$", "", url).replace("present=1&", "")
    parts = urlsplit(link)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/")))


def check_the_qr_code(page, path: str) -> None:
    """Item 6 on the page on screen (presenter view, at the top): the QR button in the first
    screen and pinned there when scrolled, its dialog's code large, decoding to the page's
    own link (no present=1) with the localhost reminder. The dialog is closed (Escape) and
    the page scrolled back to the top at the end. The every-page walk of
    test_accessibility.py (presenter view) calls this on every page's first screen."""
    button = qr_button(page)
    expect(button).to_be_visible(timeout=SLOW)
    assert main_scroll_top(page) == 0
    assert_inside_viewport(page, button, f"{path}: the QR button")
    # Pinned to the corner: still there after scrolling to the bottom of the page.
    page.evaluate(
        "() => { const m = document.querySelector('[data-testid=stMain]');"
        " m.scrollTop = m.scrollHeight; }"
    )
    assert_inside_viewport(page, button, f"{path}: the QR button, scrolled down")
    button.click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible(timeout=SLOW)
    image = dialog.locator('[data-testid="stImage"] img')
    expect(image).to_be_visible(timeout=SLOW)
    expect(image).to_have_js_property("complete", True)
    box = assert_inside_viewport(page, image, f"{path}: the QR code in the dialog")
    assert box["width"] >= 360, box  # large: scanned from the back of the room
    decoded = decode_qr_image(image.screenshot())
    assert decoded == [_expected_link(page.url)], (decoded, page.url)
    assert "present" not in decoded[0]
    expect(dialog.locator('[data-testid="stCode"]')).to_contain_text(decoded[0])
    expect(dialog.get_by_text("points at this computer (localhost)")).to_be_visible()
    artifact(page, f"teacher-qr-dialog-{path.split('?')[0].strip('/') or 'Home'}")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0, timeout=SLOW)
    page.evaluate("() => { document.querySelector('[data-testid=stMain]').scrollTop = 0; }")


def test_qr_dialog_holds_the_current_step_and_reads_in_dark_mode(screen_context):
    page = screen_context(PRESENTER_VIEWPORT, "dark").new_page()
    _open(page, f"{ROUND}?mode=preset&preset=000-rejection&present=1")
    next_button = page.locator(f"{key('round_next')} button")
    for step in (2, 3):
        next_button.click()
        expect(page.get_by_text(f"Step {step} of 10", exact=True)).to_be_visible(timeout=SLOW)
        settle(page, timeout=SLOW)
    qr_button(page).click()
    image = page.get_by_role("dialog").locator('[data-testid="stImage"] img')
    expect(image).to_be_visible(timeout=SLOW)
    expect(image).to_have_js_property("complete", True)
    decoded = decode_qr_image(image.screenshot())
    assert len(decoded) == 1 and "step=2" in decoded[0], decoded
    artifact(page, "teacher-qr-dialog-round-dark")


# --- 7. the round page: the step first in normal view ------------------------------------------


@pytest.mark.parametrize(("preset", "n_steps"), [("000-round", 9), ("000-rejection", 10)])
def test_round_step_fits_the_first_screen_in_normal_view(screen_context, preset, n_steps):
    page = screen_context(PRESENTER_VIEWPORT).new_page()
    _open(page, f"{ROUND}?mode=preset&preset={preset}")
    expect(page.locator('[data-testid="stSidebar"]')).to_have_attribute("data-collapsed", "false")
    next_button = page.locator(f"{key('round_next')} button")
    for step in range(1, n_steps + 1):
        expect(page.get_by_text(f"Step {step} of {n_steps}", exact=True)).to_be_visible(
            timeout=SLOW
        )
        settle(page, timeout=SLOW)
        charts = ["round_chart_main"] + (
            ["round_chart_coin"] if page.locator(key("round_chart_coin")).count() else []
        )
        for name in charts:
            assert_inside_viewport(page, _drawn(page, name), f"step {step}: {name}")
        assert main_scroll_top(page) == 0
        assert_inside_viewport(page, next_button, f"step {step}: Next")
        assert_inside_viewport(page, page.locator(key("round_why")), f"step {step}: decision")
        if step in (1, 3, n_steps):
            artifact(page, f"teacher-round-normal-{preset}-step{step}")
        if step < n_steps:
            next_button.click()
    # the intro and the settings are folded under the title, above the step
    expect(page.get_by_text("What this page asks")).to_be_visible()
    expect(
        page.get_by_text(re.compile(r"Round settings: (Worked|Rejection) example"))
    ).to_be_visible()


def test_round_step_next_is_in_the_first_screen_of_a_phone(screen_context):
    context = screen_context(PHONE_VIEWPORT, is_mobile=True, has_touch=True)
    page = context.new_page()
    _open(page, ROUND)
    assert_inside_viewport(page, page.locator(f"{key('round_next')} button"), "phone: Next")
    artifact(page, "teacher-round-phone")


def test_a_bad_k_is_named_beside_the_field_in_the_browser(screen_context):
    page = screen_context(PRESENTER_VIEWPORT).new_page()
    _open(page, f"{ROUND}?mode=custom")
    page.get_by_text(re.compile(r"Round settings")).click()
    field = page.locator(f"{key('round_k')} input")
    expect(field).to_be_visible(timeout=SLOW)
    field.fill("25")
    field.press("Enter")
    settle(page, timeout=SLOW)
    message = page.get_by_text("K = 25 is out of range; allowed: 1 to 8.")
    expect(message).to_be_visible(timeout=SLOW)
    field_box, message_box = field.bounding_box(), message.bounding_box()
    below = message_box["y"] - (field_box["y"] + field_box["height"])
    assert 0 <= below < 80, (field_box, message_box)  # right under the field
    assert abs(message_box["x"] - field_box["x"]) < 60
    artifact(page, "teacher-round-bad-k")


# --- 8. the Variants lab's inputs in the main column ------------------------------------------


def test_variants_inputs_are_in_the_main_column_on_a_phone_in_both_themes(screen_context):
    context = screen_context(PHONE_VIEWPORT, "light", is_mobile=True, has_touch=True)
    page = context.new_page()
    _open(page, "/Variants_lab?rounds=20000")
    expect(page.locator('[data-testid="stSidebar"]')).to_have_attribute("data-collapsed", "true")
    main = page.locator('[data-testid="stMain"]')
    for name in ("var_preset", "var_variant", "var_p_text"):
        expect(main.locator(key(name))).to_be_visible(timeout=SLOW)
    assert page.locator('[data-testid="stSidebar"] [class*="st-key-var_"]').count() == 0
    for scheme in each_theme(page):
        assert_inside_viewport(page, main.locator(key("var_preset")), f"phone: preset ({scheme})")
        _drawn(page, "var_fig_step")
        found = horizontal_overflow(page)
        assert not found["count"] and found["pageScroll"] <= 1, (scheme, found)
        artifact(page, f"teacher-variants-phone-{scheme}")


def test_variants_inputs_fold_in_presenter_view(screen_context):
    page = screen_context(PRESENTER_VIEWPORT).new_page()
    _open(page, "/Variants_lab?rounds=20000&present=1")
    expect(page.get_by_text(re.compile(r"Inputs: variant, p and q"))).to_be_visible()
    expect(page.locator(key("var_preset"))).to_be_hidden()


# --- 9. phones: charts do not fight the thumb ------------------------------------------------

PLOT_STATE_JS = """
(sel) => {
  const gd = document.querySelector(sel + ' .js-plotly-plot');
  const bar = document.querySelector(sel + ' .modebar-container');
  const drag = document.querySelector(sel + ' .draglayer .nsewdrag');
  return {
    range: JSON.stringify(gd._fullLayout.xaxis.range),
    scrollZoom: gd._context.scrollZoom,
    toolbar: bar ? getComputedStyle(bar).display : "none",
    drag: drag ? getComputedStyle(drag).pointerEvents : "none",
  };
}
"""


def _swipe_up(page, context, x: float, y: float) -> None:
    """A thumb's swipe upwards (to scroll down) by CDP touch events, starting at (x, y)."""
    cdp = context.new_cdp_session(page)
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    for i in range(1, 11):
        point = {"x": x + 5 * i, "y": y - 15 * i}
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [point]})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


def test_a_swipe_over_a_chart_scrolls_a_phone_and_the_toolbar_is_gone(screen_context):
    context = screen_context(PHONE_VIEWPORT, is_mobile=True, has_touch=True)
    page = context.new_page()
    _open(page, "/Speedup_explorer")
    chart = _drawn(page, "speed_fig_k")
    chart.evaluate("e => e.scrollIntoView({block: 'center'})")
    before = page.evaluate(PLOT_STATE_JS, key("speed_fig_k"))
    assert before["toolbar"] == "none" and before["drag"] == "none", before
    assert before["scrollZoom"] is False
    top = main_scroll_top(page)
    box = chart.locator(".nsewdrag").first.bounding_box()
    _swipe_up(page, context, box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.8)
    page.wait_for_function(
        "(top) => document.querySelector('[data-testid=stMain]').scrollTop > top + 50", arg=top
    )
    after = page.evaluate(PLOT_STATE_JS, key("speed_fig_k"))
    assert after["range"] == before["range"], (before, after)  # the chart did not zoom
    artifact(page, "teacher-phone-chart-swipe")


def test_a_projector_keeps_drag_zoom_and_the_toolbar(screen_context):
    # Proof the phone rule is scoped: a mouse on a wide screen still zooms and has the toolbar.
    page = screen_context(PRESENTER_VIEWPORT).new_page()
    _open(page, "/Speedup_explorer")
    chart = _drawn(page, "speed_fig_k")
    chart.hover()
    state = page.evaluate(PLOT_STATE_JS, key("speed_fig_k"))
    assert state["drag"] != "none" and state["toolbar"] != "none", state
    assert state["scrollZoom"] is False  # the mouse wheel scrolls the page here too


# --- 10. phones: formulas fit -------------------------------------------------------------------

FORMULAS_JS = """
() => [...document.querySelectorAll('[data-testid="stMain"] .katex-display')]
  .filter((k) => k.clientWidth > 0)
  .map((k) => [k.clientWidth, k.scrollWidth, Math.round(k.getBoundingClientRect().right),
               k.textContent.slice(0, 40)])
"""


OVERHANG_PX = 3  # KaTeX's italic correction may stick out a pixel or two; a cut result
# ("= 2." for "= 2.773") was 27 to 67 px wider than its box


def _formulas_fit(page, where: str) -> int:
    width = PHONE_VIEWPORT["width"]
    found = page.evaluate(FORMULAS_JS)
    cut = [f for f in found if f[1] > f[0] + OVERHANG_PX or f[2] > width + 1]
    assert not cut, f"{where}: formulas cut at the right edge: {cut}"
    return len(found)


def test_every_formula_fits_a_phone_in_both_themes(screen_context):
    """Each page and each round step is looked at in the theme it is in, then in the other
    (outside presenter view a theme switch only repaints: no rerun)."""
    context = screen_context(PHONE_VIEWPORT, "light", is_mobile=True, has_touch=True)
    page = context.new_page()
    shown, theme = 0, "light"

    def fits_in_both_themes(where: str) -> int:
        nonlocal theme
        found = [_formulas_fit(page, f"{where} ({s})") for s in each_theme(page, theme)]
        theme = OTHER_SCHEME[theme]
        return sum(found)

    for path in ("/", "/Speedup_explorer", "/Losslessness_lab?rounds=20000"):
        _open(page, path)
        expect(page.locator(".katex-display").first).to_be_attached(timeout=SLOW)
        shown += fits_in_both_themes(path)
        if path == "/Speedup_explorer":
            page.locator(".katex-display").first.scroll_into_view_if_needed()
            artifact(page, "teacher-phone-formulas")
    _open(page, f"{ROUND}?mode=preset&preset=000-rejection")
    page.get_by_text("The two rules in plain words").click()
    next_button = page.locator(f"{key('round_next')} button")
    for step in range(1, 11):  # every step's formula, the long normalisation included
        expect(page.get_by_text(f"Step {step} of 10", exact=True)).to_be_visible(timeout=SLOW)
        settle(page, timeout=SLOW)
        shown += fits_in_both_themes(f"round step {step}")
        if step < 10:
            next_button.click()
    assert shown >= 40  # the check looked at real formulas (20 and more, in each theme)


# --- 11. dark mode: marks on the background read --------------------------------------------

MARKS_JS = """
(sel) => {
  const root = document.querySelector(sel);
  const texts = [...root.querySelectorAll('g.trace.scatter g.textpoint text')].map(
    (t) => { const s = getComputedStyle(t);
             return [t.textContent.trim(), s.fill, parseFloat(s.fontSize),
                     parseInt(s.fontWeight) >= 700]; });
  const strokes = [...root.querySelectorAll('g.trace.bars g.point path')]
    .map((p) => [parseFloat(getComputedStyle(p).strokeWidth) || 0, getComputedStyle(p).stroke])
    .filter(([w]) => w >= 2);
  const points = [...root.querySelectorAll('g.trace.scatter path.point')]
    .map((p) => getComputedStyle(p).fill);
  return {texts, strokes, points};
}
"""


def test_coin_label_and_drafted_outline_read_on_the_background_in_both_themes(screen_context):
    page = screen_context(PRESENTER_VIEWPORT, "light").new_page()
    _open(page, f"{ROUND}?mode=preset&preset=000-round&step=2")  # the coin u = 0.5 keeps A
    for scheme in each_theme(page):
        _drawn(page, "round_chart_coin")
        _drawn(page, "round_chart_main")
        background = _background(page)
        coin = page.evaluate(MARKS_JS, key("round_chart_coin"))
        label = [t for t in coin["texts"] if t[0].startswith("u = ")]
        assert len(label) == 1, coin["texts"]
        _, fill, size, bold = label[0]
        needed = _text_contrast_needed(size, bold)
        assert _contrast(fill, background) >= needed, (scheme, label, background)
        bars = page.evaluate(MARKS_JS, key("round_chart_main"))
        assert bars["strokes"], "the drafted token has no outline"
        for _, stroke in bars["strokes"]:
            assert _contrast(stroke, background) >= 3.0, (scheme, stroke, background)
        artifact(page, f"teacher-round-coin-{scheme}")


def test_the_trees_root_reads_on_the_background_in_both_themes(screen_context):
    page = screen_context(PRESENTER_VIEWPORT, "light").new_page()
    _open(page, "/Variants_lab?preset=tree&rounds=20000")
    for scheme in each_theme(page):
        chart = _drawn(page, "var_fig_step")
        chart.scroll_into_view_if_needed()
        background = _background(page)
        marks = page.evaluate(MARKS_JS, key("var_fig_step"))
        root_text = [t for t in marks["texts"] if t[0] == "root"]
        assert len(root_text) == 1, marks["texts"]
        # the label has the theme's chart text colour, the one of every tick label (Streamlit's
        # grey has 3.7:1 on white, its light grey more on dark), never a fixed black
        tick = page.evaluate(
            "(sel) => getComputedStyle(document.querySelector(sel + ' g.xtick text')).fill",
            key("var_fig_step"),
        )
        assert root_text[0][1] == tick, (scheme, root_text, tick)
        assert _contrast(tick, background) >= 3.0, (scheme, tick, background)
        root_fill = page.evaluate(
            "(sel) => { const g = [...document.querySelectorAll(sel + ' g.trace.scatter')]"
            ".find((t) => t.textContent.includes('root'));"
            " return getComputedStyle(g.querySelector('path.point')).fill; }",
            key("var_fig_step"),
        )
        assert _contrast(root_fill, background) >= 3.0, (scheme, root_fill, background)
        artifact(page, f"teacher-tree-root-{scheme}")


# --- chart labels that overlapped ---------------------------------------------------------------

ANNOTATION_ON_LINES_JS = """
([sel, label]) => {
  const root = document.querySelector(sel);
  const note = [...root.querySelectorAll('g.annotation')].find(
    (g) => g.textContent.includes(label));
  const box = note.querySelector('text').getBoundingClientRect();
  const crossing = [];
  for (const path of root.querySelectorAll('g.trace.scatter path.js-line')) {
    const r = path.getBoundingClientRect();
    const flat = r.height < 3;  // a horizontal floor or ceiling line
    if (flat && r.top <= box.bottom && r.bottom >= box.top && r.left <= box.right &&
        r.right >= box.left) {
      crossing.push(Math.round(r.top));
    }
  }
  return {box: [box.left, box.top, box.right, box.bottom], crossing};
}
"""


@pytest.mark.parametrize("presenting", [False, True])
def test_the_alpha_marker_label_is_not_on_a_dashed_line(screen_context, presenting):
    page = screen_context(PRESENTER_VIEWPORT).new_page()
    _open(page, "/Speedup_explorer" + ("?present=1" if presenting else ""))
    for name in ("speed_fig_e", "speed_fig_alpha"):
        chart = _drawn(page, name)
        chart.scroll_into_view_if_needed()
        expect(chart.locator("g.annotation").filter(has_text="alpha = 0.70")).to_be_attached()
        found = page.evaluate(ANNOTATION_ON_LINES_JS, [key(name), "alpha = 0.70"])
        assert not found["crossing"], (name, found)
        assert not overlapping_text(page, chart), name
    artifact(page, f"teacher-speedup-alpha-label-{'presenter' if presenting else 'normal'}")


def test_presenter_residual_bar_labels_do_not_collide_in_both_themes(screen_context):
    page = screen_context(PRESENTER_VIEWPORT, "light").new_page()
    theme = "light"
    for step in (6, 7):  # the leftover max(0, p - q), then its normalisation
        _open(page, f"{ROUND}?mode=preset&preset=000-rejection&step={step}&present=1")
        for scheme in each_theme(page, theme):
            chart = _drawn(page, "round_chart_main")
            expect(chart.locator("g.trace.bars").first).to_be_attached()
            clashes = overlapping_text(page, chart)
            assert not clashes, (step, scheme, clashes)
            artifact(page, f"teacher-presenter-residual-step{step + 1}-{scheme}")
        theme = OTHER_SCHEME[theme]
