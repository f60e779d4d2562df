"""The load test's websocket client really drives the pages (what benchmarks/load_test.py measures).

Two simulated students click through the round page and move the speedup sliders over
Streamlit's own protocol; every rerun must execute the page (the client checks the step
heading, the emitted tokens and the best K that come back) and none may fail.
"""

from __future__ import annotations

import asyncio
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import load_test  # noqa: E402
from streamlit_ws import StreamlitSession, check_loopback  # noqa: E402

pytestmark = pytest.mark.e2e


def run_async(coro):
    """asyncio.run in a fresh thread: Playwright's sync API keeps a loop in this one."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result(timeout=120)


def test_two_students_click_through_without_a_failed_rerun(app_server):
    level = run_async(load_test.run_level(app_server, None, "2", 2, 1, (0.0, 0.05), 7, 60))
    assert level.failures == []
    assert level.reruns == 2 * load_test.RERUNS_PER_CYCLE
    assert level.bytes_in > 2 * load_test.RERUNS_PER_CYCLE * 1_000  # real page content came back


def test_a_click_reruns_the_page_and_a_disabled_button_does_nothing(app_server):
    async def scenario():
        s = StreamlitSession(app_server)
        await s.connect()
        try:
            first = await s.open_page(load_test.ROUND_PAGE, load_test.ROUND_QUERY)
            assert first.ok and "Step 1 of 9" in first.text()
            assert {"round_next", "round_back", "round_first"} <= set(first.widget_ids)
            assert first.disabled["round_back"] and not first.disabled["round_next"]
            second = await s.click("round_next")
            assert second.ok and "Step 2 of 9" in second.text()
            assert "plotly_chart" in second.element_types
            reset = await s.click("round_first")
            assert "Step 1 of 9" in reset.text() and s.disabled["round_first"]
            # A click on a disabled button (Back at step 1), which no browser can send,
            # is ignored by the server: the page stays at step 1.
            ignored = await s.click("round_back")
            assert ignored.ok and "Step 1 of 9" in ignored.text()
            speed = await s.open_page(load_test.SPEED_PAGE)
            assert speed.ok and "speed_alpha" in speed.widget_ids
            low = await s.set_slider("speed_alpha", 0.0)
            assert "Best K = 1 " in low.text()
        finally:
            await s.close()

    run_async(scenario())


@pytest.mark.parametrize("url", ["http://example.org:8501", "http://10.0.0.1:8501"])
def test_the_load_client_refuses_non_loopback_addresses(url):
    with pytest.raises(ValueError, match="loopback"):
        check_loopback(url)
    with pytest.raises(ValueError, match="loopback"):
        StreamlitSession(url)
