"""Real-browser tests: a Streamlit server started for the session, driven by Debian Chromium.

The ``app_server`` fixture starts ``streamlit run app.py`` from the repository root on a
free loopback port, waits for ``/_stcore/health`` and stops that process (by its PID) at
the end. Playwright drives ``/usr/bin/chromium`` (a browser download fails here).

Without Chromium the tests skip with a reason, unless ``SPECDEC_REQUIRE_E2E=1`` (CI),
where a missing browser is a failure.
"""

from __future__ import annotations

import os
import re
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
STARTUP_TIMEOUT_S = 60


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


@pytest.fixture(scope="session")
def app_server(_chromium_available):
    OUTPUT.mkdir(exist_ok=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = OUTPUT / "e2e-server.log"
    proc = start_server(port, log_path)
    try:
        wait_healthy(url, proc, log_path=log_path, timeout_s=STARTUP_TIMEOUT_S)
        yield url
    finally:
        stop_server(proc)


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

    expect(page.locator(SETTLED)).to_have_count(1, timeout=timeout)


def open_app(page, path: str = "/") -> None:
    page.goto(path)
    settle(page)


def key(name: str) -> str:
    """CSS selector of a keyed Streamlit element."""
    return f".st-key-{name}"


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
        page.wait_for_timeout(400)  # plotly redraws on resize
        settle(page)
        main.screenshot(path=path)
    finally:
        page.set_viewport_size(size)
    return path


def sidebar_link(page, title: str):
    """The sidebar link of a page; its accessible name also holds the icon text."""
    nav = page.locator('[data-testid="stSidebarNav"]')
    return nav.get_by_role("link", name=re.compile(re.escape(title), re.IGNORECASE))


def assert_charts_drew(
    page, scope: str = '[data-testid="stMainBlockContainer"]', minimum: int = 1
) -> int:
    """Every plotly chart in ``scope`` has an SVG with drawn marks (bars, lines or cells).

    An empty frame (axes only) has no ``.trace`` paths with a non-empty ``d``.
    Returns the number of charts checked.
    """
    from playwright.sync_api import expect

    charts = page.locator(f'{scope} [data-testid="stPlotlyChart"]')
    expect(charts.first).to_be_visible(timeout=20_000)
    n = charts.count()
    assert n >= minimum, f"expected at least {minimum} charts, found {n}"
    for i in range(n):
        chart = charts.nth(i)
        expect(chart.locator("svg.main-svg").first).to_be_attached(timeout=20_000)
        marks = chart.locator(
            "g.trace path[d]:not([d='']):not([d='M0,0Z']), g.heatmaplayer image, "
            "g.trace.scatter path.js-line[d]"
        )
        expect(marks.first).to_be_attached(timeout=20_000)
    return n


def bar_count(page, scope: str) -> int:
    """Drawn bars (``g.point path`` with a non-empty outline) inside ``scope``."""
    return page.locator(f"{scope} g.trace.bars g.point path[d]:not([d='M0,0Z'])").count()
