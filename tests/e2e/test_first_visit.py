"""A page opened by its own link on a server that nobody has visited yet.

The session server of the other browser tests has served the root address first, which
runs ``app.py``'s ``st.navigation`` router. A teacher's shared link often is the first
request of a freshly started (or rebooted) app instead: with page files at the top of
``pages/``, Streamlit 1.67 then served the page in its old folder mode, with "app" above
"Home", file-name titles ("Self test") and no icons, until some session opened the root
address. The page scripts sit in ``pages/scripts/`` so that this cannot happen
(``pages/README.md``).
"""

from __future__ import annotations

import asyncio
import re
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import ROOT, key, running_server, settle, sidebar_link

sys.path.insert(0, str(ROOT / "benchmarks"))
from streamlit_ws import StreamlitSession  # noqa: E402

pytestmark = pytest.mark.e2e


@pytest.fixture()
def fresh_server(_chromium_available):
    """A server of its own, so that the test's request is its first."""
    with running_server("e2e-first-visit-server.log") as url:
        yield url


def _nav_names(page) -> list[str]:
    links = page.locator('[data-testid="stSidebarNav"]').get_by_role("link")
    return [" ".join(text.split()) for text in links.all_inner_texts()]


def test_a_shared_link_as_the_first_request_gets_the_routers_sidebar(page, fresh_server):
    page.goto(f"{fresh_server}/Self_test")
    settle(page)
    expect(page.get_by_role("heading", level=1)).to_contain_text("Self-test")
    names = _nav_names(page)
    assert not any(re.fullmatch(r"(\W+\s*)?app", n) for n in names), names
    assert any(n.endswith("Home") for n in names), names
    assert any(n.endswith("Self-test") for n in names), names  # the registry's title
    assert names[0].endswith("Home"), names
    # a widget on the page reruns it in place: still the Self-test, at its address
    page.locator(key("quiz_new")).get_by_role("button").click()
    settle(page)
    expect(page).to_have_url(re.compile(r"/Self_test(\?.*)?$"))
    expect(page.get_by_role("heading", level=1)).to_contain_text("Self-test")
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    sidebar_link(page, "Model pair lab").click()
    settle(page)
    expect(page).to_have_url(re.compile(r"/Model_pair_lab(\?.*)?$"))


def test_a_share_link_as_the_first_request_keeps_its_settings(page, fresh_server):
    """The rerun through the router keeps the link's query: K and T come from the link."""
    page.goto(f"{fresh_server}/Model_pair_lab?k=2&t=0.7&seed=5")
    settle(page)
    expect(page.get_by_role("heading", level=1)).to_contain_text("Model pair lab")
    expect(page.locator(key("lm_k")).get_by_role("slider")).to_have_value("2")
    temperature = page.locator(key("lm_temperature")).get_by_role("slider")
    expect(temperature).to_have_value("0.7")
    expect(page).to_have_url(re.compile(r"/Model_pair_lab\?.*k=2"))
    assert "app" not in _nav_names(page)


def test_the_load_client_follows_the_first_visits_rerun(fresh_server):
    """Over the websocket protocol: the first run reruns itself once (through the router);
    the load client waits for that run, as a browser does, instead of failing on it."""

    async def scenario():
        s = StreamlitSession(fresh_server)
        await s.connect()
        try:
            first = await s.open_page("Step_through_a_round")
            assert first.ok, first.status
            assert "Step 1 of 9" in first.text()
            assert "app" not in s.pages and "Self_test" in s.pages, s.pages
            again = await s.click("round_next")
            assert again.ok and "Step 2 of 9" in again.text()
        finally:
            await s.close()

    with ThreadPoolExecutor(max_workers=1) as pool:  # Playwright keeps a loop in this thread
        pool.submit(asyncio.run, scenario()).result(timeout=120)
