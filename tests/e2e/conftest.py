"""Real-browser tests: a Streamlit server started for the session, driven by Debian Chromium.

The ``app_server`` fixture starts ``streamlit run app.py`` from the repository root on a
free loopback port, waits for ``/_stcore/health`` and stops that process (by its PID) at
the end. Playwright drives ``/usr/bin/chromium`` (a browser download fails here).

Without Chromium the tests skip with a reason, unless ``SPECDEC_REQUIRE_E2E=1`` (CI),
where a missing browser is a failure.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.local_server import free_port, start_server, stop_server, wait_healthy

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("SPECDEC_CHROMIUM", "/usr/bin/chromium"))  # Debian's chromium
OUTPUT = ROOT / "test-output"
SETTLED = (
    '[data-testid="stApp"][data-test-connection-state="CONNECTED"]'
    '[data-test-script-state="notRunning"]'
)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
# Under pytest-xdist each worker's browser and server share the cores with the others'; the
# waits here (and every settle / laid_out a test calls) grow with the number of workers. A wait
# ends as soon as the page is ready, so a longer limit costs a passing test nothing.
PATIENCE = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
STARTUP_TIMEOUT_S = 60 * PATIENCE
EXPECT_TIMEOUT_MS = 30_000 * PATIENCE  # a shared, busy runner


@pytest.fixture(scope="session", autouse=True)
def _patient_expect():
    from playwright.sync_api import expect

    expect.set_options(timeout=EXPECT_TIMEOUT_MS)


def _require_browser() -> None:
    if CHROMIUM.exists():
        return
    reason = f"{CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium)"
    if os.environ.get("SPECDEC_REQUIRE_E2E") == "1":
        pytest.fail(f"SPECDEC_REQUIRE_E2E=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session", autouse=True)
def _chromium_available():
    _require_browser()


def worker_file(name: str) -> str:
    """``name`` with the pytest-xdist worker's id (``e2e-server-gw1.log``): each worker
    runs its own server, and two must not write one log."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return name
    stem, dot, ext = name.rpartition(".")
    return f"{stem}-{worker}.{ext}" if dot else f"{name}-{worker}"


@contextlib.contextmanager
def running_server(log_name: str) -> Iterator[str]:
    """``streamlit run app.py`` on a free loopback port until the block ends; its URL."""
    OUTPUT.mkdir(exist_ok=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = OUTPUT / worker_file(log_name)
    proc = start_server(port, log_path)
    try:
        wait_healthy(url, proc, log_path=log_path, timeout_s=STARTUP_TIMEOUT_S)
        yield url
    finally:
        stop_server(proc)


@pytest.fixture(scope="session")
def app_server(_chromium_available):
    with running_server("e2e-server.log") as url:
        yield url


@pytest.fixture(scope="session")
def base_url(app_server):
    """pytest-playwright resolves ``page.goto("/...")`` against this."""
    return app_server


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM), "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {
        **browser_context_args,
        "viewport": {"width": 1400, "height": 1000},
        "service_workers": "block",
    }


# --- helpers the tests share ---------------------------------------------------------


def settle(page, timeout: float = 30_000) -> None:
    """Wait until the app is connected and no script runs."""
    from playwright.sync_api import expect

    expect(page.locator(SETTLED)).to_have_count(1, timeout=timeout * PATIENCE)


# The page's layout is final: web fonts loaded, no finite CSS transition or animation
# running (the sidebar slides in and out on a resize; a skeleton's endless shimmer does not
# count), and every plotly chart drawn at its container's width (plotly lays out after the
# script ends, and again after a resize: until then its SVG keeps the old width).
LAID_OUT_JS = """() => document.fonts.status === "loaded"
  && document.getAnimations().every((a) => a.playState !== "running"
       || (a.effect && a.effect.getComputedTiming().iterations === Infinity))
  && [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every((chart) => {
       const svg = chart.querySelector("svg.main-svg");
       return svg !== null
         && Math.abs(svg.getBoundingClientRect().width - chart.getBoundingClientRect().width) < 1;
     })"""


def laid_out(page, timeout: float = 30_000) -> None:
    """Wait until the layout is final (:data:`LAID_OUT_JS`), checked on every frame."""
    page.wait_for_function(LAID_OUT_JS, timeout=timeout * PATIENCE)


def open_app(page, path: str = "/") -> None:
    page.goto(path)
    settle(page)


def key(name: str) -> str:
    """CSS selector of a keyed Streamlit element."""
    return f".st-key-{name}"


def until_it_holds(page, attempt) -> None:
    """Run ``attempt()`` (a choice and the check that it took) at most three times. A rerun
    that lands with the click (a background result on a loaded machine) can close a select
    box's open list or leave the old choice on screen: then make the choice again."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    for tries_left in (2, 1, 0):
        settle(page, timeout=60_000)
        try:
            attempt()
            return
        except (AssertionError, PlaywrightTimeoutError):
            if not tries_left:
                raise
            page.keyboard.press("Escape")  # close a list left open


def choose_option(page, name: str, typed: str) -> None:
    """Pick the one option of select box ``name`` that contains ``typed``, by typing it
    (Streamlit's select box filters its options as one types), until the box shows it
    (:func:`until_it_holds`)."""
    from playwright.sync_api import expect

    box = page.locator(key(name)).get_by_role("combobox")  # its value: the chosen option
    option = page.get_by_role("option", name=re.compile(re.escape(typed)))

    def attempt() -> None:
        box.click(timeout=10_000)
        box.fill(typed, timeout=10_000)
        expect(option).to_have_count(1, timeout=10_000)
        option.click(timeout=10_000)
        expect(box).to_have_value(re.compile(re.escape(typed)), timeout=10_000)

    until_it_holds(page, attempt)


def screenshot(page, name: str) -> Path:
    """Screenshot of the main block, with the viewport grown to hold all of it.

    Streamlit scrolls inside its main block, so the part below the viewport would
    come out blank: the window is made tall enough first, then restored.
    """
    OUTPUT.mkdir(exist_ok=True)
    path = OUTPUT / f"{name}.png"
    main = page.locator('[data-testid="stMainBlockContainer"]')
    size = page.viewport_size or {"width": 1400, "height": 1000}
    height = int(main.evaluate("e => e.scrollHeight")) + 200
    page.set_viewport_size({"width": size["width"], "height": min(max(height, 800), 6000)})
    try:
        settle(page)
        laid_out(page)  # plotly redraws on resize
        main.screenshot(path=path)
    finally:
        page.set_viewport_size(size)
    return path


def sidebar_link(page, title: str):
    """The sidebar link of a page; its accessible name also holds the icon text."""
    nav = page.locator('[data-testid="stSidebarNav"]')
    return nav.get_by_role("link", name=re.compile(re.escape(title), re.IGNORECASE))


# Marks a drawn chart has: bars or areas with an outline, heatmap cells, a line.
CHART_MARKS = (
    "g.trace path[d]:not([d='']):not([d='M0,0Z']), g.heatmaplayer image, "
    "g.trace.scatter path.js-line[d]"
)
# Per chart in a scope, on one look at the DOM: has it an SVG, has it marks.
CHARTS_STATE_JS = """([scope, marks]) => [...document.querySelectorAll(
    scope + ' [data-testid="stPlotlyChart"]')].map((c) => [
      c.querySelector("svg.main-svg") !== null, c.querySelector(marks) !== null])"""
CHARTS_DREW_JS = (
    "([scope, marks, minimum]) => { const s = ("
    + CHARTS_STATE_JS
    + ")([scope, marks]);"
    + " return s.length >= minimum && s.every(([svg, m]) => svg && m) && s.length; }"
)


def assert_charts_drew(
    page, scope: str = '[data-testid="stMainBlockContainer"]', minimum: int = 1
) -> int:
    """Every plotly chart in ``scope`` has an SVG with drawn marks (bars, lines or cells), and
    there are at least ``minimum`` of them. Returns the number of charts checked.

    An empty frame (axes only) has no ``.trace`` paths with a non-empty ``d``. The condition
    is checked on one look at the DOM each frame: Streamlit mounts its charts one by one after
    the script has ended, and swaps a chart's element on a rerun, so counting first and then
    waiting on the n-th chart could wait on one that is gone (a flaky failure in CI).
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    args = [scope, CHART_MARKS, minimum]
    try:
        drew = page.wait_for_function(CHARTS_DREW_JS, arg=args, timeout=40_000 * PATIENCE)
    except PlaywrightTimeoutError:
        state = page.evaluate(CHARTS_STATE_JS, args[:2])
        bad = [i for i, (svg, marks) in enumerate(state) if not (svg and marks)]
        raise AssertionError(
            f"{len(state)} charts in {scope} (at least {minimum} expected); "
            f"charts without an SVG or marks: {bad}"
        ) from None
    return int(drew.json_value())


def bar_count(page, scope: str) -> int:
    """Drawn bars (``g.point path`` with a non-empty outline) inside ``scope``."""
    return page.locator(f"{scope} g.trace.bars g.point path[d]:not([d='M0,0Z'])").count()


# --- projector and phone screens (issue 10) -------------------------------------------

ARTIFACTS = ROOT / "tests" / "e2e" / "artifacts"  # gitignored screenshots to look at
PRESENTER_VIEWPORT = {"width": 1366, "height": 768}  # a classroom projector
PHONE_VIEWPORT = {"width": 390, "height": 844}  # a phone held upright
COLOR_SCHEMES = ("light", "dark")  # Chromium's prefers-color-scheme; the app has no theme.base


# What a page cannot change once its context exists: these key the kept contexts.
CONTEXT_ONLY = ("is_mobile", "has_touch", "device_scale_factor")
# The page's media settings (a context's options of the same name): set again for each test.
PAGE_MEDIA = {"color_scheme": "light", "reduced_motion": "no-preference", "media": "no-override"}


def reset_page(page, viewport: dict, media: dict) -> None:
    """Size ``page`` to ``viewport`` and set its media (:data:`PAGE_MEDIA`, then ``media``)."""
    page.set_viewport_size(viewport)
    page.emulate_media(**{**PAGE_MEDIA, **media})


class KeptScreens:
    """Per worker: one browser context and one page for each set of :data:`CONTEXT_ONLY`
    options (a desktop, a phone, a zoomed screen), handed from test to test.

    A fresh context costs its page a new renderer process and a cold start of the app's
    scripts: 5.4 s of CPU for the Round page here, against 2.3 s for the next address in a page
    that is already open (``benchmarks/`` has no such table: the suite's own cost). The browser
    tests are CPU-bound on two cores, so this is most of the test command's time.

    Each test gets the kept page with its viewport, theme, motion and media set anew and the
    mouse back at (0, 0), as a fresh context has them. When the test ends, the other pages of
    the kept context are closed and the kept page leaves the app for its health address, so no
    Streamlit session of the test stays open (a Class page reruns itself every 1-2 s).
    """

    def __init__(self, browser, base_url: str):
        self.browser, self.base_url = browser, base_url
        self.kept: dict[tuple, tuple] = {}  # options -> (context, page)
        self.handed: set[tuple] = set()  # the keys handed out in this test
        self.fresh: list = []  # contexts made for this test alone

    def new_context(self, **options):
        context = self.browser.new_context(
            base_url=self.base_url, service_workers="block", **options
        )
        context.set_default_timeout(EXPECT_TIMEOUT_MS)  # clicks, goto, waits (30 s alone)
        return context

    def hand_out(self, viewport: dict, media: dict, options: dict):
        """The kept context for ``options`` and its page, reset for this test; ``None`` when
        this test has it already (a second student's phone gets its own context)."""
        key = tuple(sorted(options.items()))
        if key in self.handed:
            return None
        context, page = self.kept.get(key) or (self.new_context(**options), None)
        if page is None or page.is_closed():
            page = context.new_page()
        self.kept[key] = (context, page)
        self.handed.add(key)
        reset_page(page, viewport, media)
        page.mouse.move(0, 0)
        page.set_default_timeout(EXPECT_TIMEOUT_MS)
        return context, page

    def end_test(self) -> None:
        from playwright.sync_api import Error as PlaywrightError

        for key in self.handed:
            context, kept = self.kept[key]
            for other in context.pages:
                if other is not kept:
                    other.close()
            try:
                kept.goto("/_stcore/health")  # ends the test's Streamlit session
                kept.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
            except PlaywrightError:
                kept.close()  # a crashed page: the next test opens a new one
        self.handed.clear()
        for context in self.fresh:
            context.close()
        self.fresh.clear()


class KeptContext:
    """What ``screen_context(...)`` returns: ``new_page()`` gives the kept page first, then new
    pages of its context (closed when the test ends); anything else is the context's."""

    def __init__(self, context, page, viewport: dict, media: dict):
        self._context, self._page, self._viewport, self._media = context, page, viewport, media

    def new_page(self):
        page, self._page = self._page, None
        if page is None:
            page = self._context.new_page()
            reset_page(page, self._viewport, self._media)
        return page

    def __getattr__(self, name: str):
        return getattr(self._context, name)


@pytest.fixture(scope="session")
def kept_screens(browser, app_server):
    screens = KeptScreens(browser, app_server)
    yield screens
    for context, _ in screens.kept.values():
        context.close()


@pytest.fixture
def screen_context(kept_screens):
    """``screen_context(viewport, scheme, **options)``: a browser for this test, its pages
    sized to ``viewport`` in theme ``scheme`` (Chromium's prefers-color-scheme: the app
    follows the viewer's light/dark preference).

    The first browser of each kind in a test is the worker's kept one (:class:`KeptScreens`);
    a second of the same kind, or one asked for with ``fresh=True`` (a test that adds an init
    script to its context), is a new context closed when the test ends.
    """

    def make(viewport: dict, scheme: str = "light", *, fresh: bool = False, **options):
        media = {"color_scheme": scheme}
        media.update({k: options.pop(k) for k in list(options) if k in PAGE_MEDIA})
        unknown = set(options) - set(CONTEXT_ONLY)
        assert not unknown, f"screen_context: {unknown} are not kept per context; add them"
        given = None if fresh else kept_screens.hand_out(viewport, media, options)
        if given is None:  # its pages are sized and themed by KeptContext.new_page
            context = kept_screens.new_context(**options)
            kept_screens.fresh.append(context)
            return KeptContext(context, None, viewport, media)
        return KeptContext(*given, viewport, media)

    yield make
    kept_screens.end_test()


@pytest.fixture
def page(request, kept_screens, browser_context_args):
    """pytest-playwright's ``page``, from the worker's kept desktop context; a test that also
    takes ``context`` (a classmate's second page) or ``fresh_server`` gets the plugin's own."""
    given = None
    if not {"context", "fresh_server"} & set(request.fixturenames):
        given = kept_screens.hand_out(browser_context_args["viewport"], {}, {})
    if given is None:
        yield request.getfixturevalue("context").new_page()
        return
    yield given[1]
    kept_screens.end_test()


DARK_BACKGROUND_JS = """(dark) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const [r, g, b] = getComputedStyle(app).backgroundColor.match(/\\d+/g).map(Number);
  return (0.299 * r + 0.587 * g + 0.114 * b < 128) === dark;
}"""
OTHER_SCHEME = {"light": "dark", "dark": "light"}


def to_scheme(page, scheme: str) -> None:
    """The viewer's system turns the theme to ``scheme`` (Chromium's prefers-color-scheme), as
    at sunset: wait until the app shows it, and in presenter view until its charts are drawn
    for it (``kit.presenter.THEME_JS`` reruns the page; the hidden button's key names the
    theme of the run). A page opened in that theme draws the same (test_screens.py)."""
    from playwright.sync_api import expect

    page.emulate_media(color_scheme=scheme)
    page.wait_for_function(DARK_BACKGROUND_JS, arg=scheme == "dark", timeout=60_000)
    if page.locator("[class*='st-key-present_theme_rerun']").count():
        expect(page.locator(key(f"present_theme_rerun_{scheme}"))).to_be_attached(timeout=60_000)
    settle(page, timeout=60_000)
    laid_out(page)


def each_theme(page, first: str = "light") -> Iterator[str]:
    """Yield ``first`` (the theme the page is in), then switch the page to the other theme
    (:func:`to_scheme`) and yield it: one visit checks a screen in light and in dark, where two
    visits cost a context, a page load and a script run more (the test command's time)."""
    yield first
    to_scheme(page, OTHER_SCHEME[first])
    yield OTHER_SCHEME[first]


def artifact(page, name: str, *, whole: bool = False) -> Path:
    """Save a screenshot under tests/e2e/artifacts/ (the viewport, or the whole main block)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    if whole:
        shot = screenshot(page, name)
        path.write_bytes(shot.read_bytes())
    else:
        page.screenshot(path=str(path))
    return path


def viewport_box(page) -> dict:
    size = page.viewport_size
    return {"x": 0, "y": 0, "width": size["width"], "height": size["height"]}


def assert_inside_viewport(page, locator, what: str, *, slack: float = 1.0) -> dict:
    """``locator``'s bounding box lies wholly inside the first viewport (no scrolling).

    Returns the box, for messages. ``slack`` px allows sub-pixel rounding.
    """
    box = locator.bounding_box()
    assert box is not None, f"{what}: not rendered (no bounding box)"
    view = viewport_box(page)
    right, bottom = box["x"] + box["width"], box["y"] + box["height"]
    inside = (
        box["x"] >= -slack
        and box["y"] >= -slack
        and right <= view["width"] + slack
        and bottom <= view["height"] + slack
    )
    assert inside, (
        f"{what} is not inside the {view['width']}x{view['height']} viewport: "
        f"x {box['x']:.0f}-{right:.0f}, y {box['y']:.0f}-{bottom:.0f}"
    )
    return box


def main_scroll_top(page) -> float:
    """How far the main block has been scrolled (0: the first viewport)."""
    script = "() => document.querySelector('[data-testid=\"stMain\"]').scrollTop"
    return float(page.evaluate(script))


# Elements wider than the viewport, unless an ancestor box inside the viewport clips or
# scrolls them (a code block, a formula or a table that scrolls inside its own box is fine).
OVERFLOW_JS = """
() => {
  const width = document.documentElement.clientWidth;
  const contained = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const style = getComputedStyle(a);
      if (["auto", "scroll", "hidden", "clip"].includes(style.overflowX)) {
        const r = a.getBoundingClientRect();
        // a clipping box that sticks out itself (a table cell's) may sit in one that fits
        if (r.right <= width + 1 && r.left >= -1) return true;
      }
    }
    return false;
  };
  const out = [];
  const root = document.querySelector('[data-testid="stMain"]') || document.body;
  for (const el of root.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if (!el.checkVisibility()) continue;  // e.g. inside a folded expander: nothing to see
    if ((r.right > width + 1 || r.left < -1) && !contained(el)) {
      const id = el.getAttribute("data-testid") || el.className.baseVal || el.className;
      out.push(`${el.tagName.toLowerCase()} ${String(id).slice(0, 60)} ` +
               `x ${Math.round(r.left)}-${Math.round(r.right)}`);
    }
  }
  return {
    offenders: out.slice(0, 20),
    count: out.length,
    pageScroll: document.documentElement.scrollWidth - width,
  };
}
"""


def horizontal_overflow(page) -> dict:
    """{offenders, count, pageScroll}: what sticks out of the viewport on the right or left."""
    return page.evaluate(OVERFLOW_JS)


CHART_TEXT_JS = """
(scope) => {
  const sizes = [];
  for (const t of document.querySelectorAll(scope + ' [data-testid="stPlotlyChart"] svg text')) {
    if (!t.textContent.trim()) continue;
    const r = t.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    // plotly shrinks text with a transform (bar labels that do not fit): the drawn size is
    // the font size times the scale of the text's transform matrix.
    const m = t.getCTM();
    const scale = m ? Math.sqrt(m.a * m.a + m.b * m.b) : 1;
    const px = parseFloat(getComputedStyle(t).fontSize) * scale;
    sizes.push([Math.round(px * 10) / 10, t.textContent.trim().slice(0, 30)]);
  }
  return sizes;
}
"""


def chart_text_sizes(
    page, scope: str = '[data-testid="stMainBlockContainer"]'
) -> list[tuple[float, str]]:
    """(font size in px, text) of every drawn text in the plotly charts inside ``scope``."""
    return [(float(size), text) for size, text in page.evaluate(CHART_TEXT_JS, scope)]


def decode_qr_image(png: bytes) -> list[str]:
    """The texts of every QR code zxing-cpp finds in a PNG screenshot."""
    import io

    import zxingcpp
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("L")
    return [code.text for code in zxingcpp.read_barcodes(image)]


def overlapping_text(page, chart) -> list[tuple[str, str]]:
    """Pairs of visible SVG texts inside one chart whose boxes intersect."""
    boxes = chart.evaluate(
        """(el) => [...el.querySelectorAll('svg text')]
             .filter((t) => t.textContent.trim())
             .map((t) => { const r = t.getBoundingClientRect();
                           return [t.textContent.trim(), r.left, r.top, r.right, r.bottom]; })
             .filter((b) => b[3] > b[1] && b[4] > b[2])"""
    )
    return overlapping_boxes(boxes)


def overlapping_boxes(boxes: list) -> list[tuple[str, str]]:
    """Pairs of (text, left, top, right, bottom, ...) boxes that intersect by over 1 px."""
    out = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if a[1] < b[3] - 1 and b[1] < a[3] - 1 and a[2] < b[4] - 1 and b[2] < a[4] - 1:
                out.append((a[0], b[0]))
    return out


def step_variants_lab_to_the_end(page, max_clicks: int = 12) -> int:
    """Click the Variants lab's Next until its last decision (each click waits for the
    counter "Decision i of n"); returns n, checked to be 2 .. max_clicks - 1."""
    from playwright.sync_api import expect

    progress = page.get_by_text(re.compile(r"^Decision \d+ of \d+$"))
    expect(progress).to_have_text(re.compile(r"^Decision 1 of \d+$"), timeout=30_000 * PATIENCE)
    n_steps = int(progress.inner_text().split(" of ")[1])
    assert 2 <= n_steps < max_clicks
    next_button = page.locator(f"{key('var_next')} button")
    settle(page, timeout=60_000)
    for shown in range(2, n_steps + 1):
        next_button.click()
        expect(progress).to_have_text(f"Decision {shown} of {n_steps}", timeout=30_000 * PATIENCE)
        settle(page)
    expect(next_button).to_be_disabled()
    return n_steps
