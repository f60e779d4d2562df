"""app.py is an st.navigation router over the registry: Home is the default page, and every
page opens at the address Streamlit's pages/ folder gave it (old share links keep working)."""

import pytest
from streamlit.testing.v1 import AppTest

from specdec_ui.registry import HOME, available_pages
from tests.app.conftest import ROOT

PAGES = [page for page in available_pages() if not page.is_home]


def test_the_root_address_opens_home():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
    assert not at.exception
    assert HOME.title == "Home" and at.title[0].value.startswith(HOME.icon)
    assert "Where to go next" in [h.value for h in at.header]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.url_path)
def test_an_old_address_opens_its_page(page):
    # Before the first run AppTest names the page by its file name, as the pages/ folder did:
    # the router's url_path must equal that name, or the app would fall back to Home.
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.switch_page(page.path).run()
    assert not at.exception
    assert at.title[0].value == f"{page.icon} {page.title}"
