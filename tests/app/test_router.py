"""app.py is an st.navigation router over the registry: Home is the default page, and every
registered page opens through it (the browser tests open each by its old address)."""

import pytest

from specdec_ui.registry import HOME, available_pages
from tests.app.conftest import open_app

PAGES = [page for page in available_pages() if not page.is_home]


def test_the_root_address_opens_home():
    at = open_app()
    assert not at.exception
    assert HOME.title == "Home" and at.title[0].value.startswith(HOME.icon)
    assert "Where to go next" in [h.value for h in at.header]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.url_path)
def test_every_page_opens_through_the_router(page):
    at = open_app(page.path)
    assert not at.exception
    assert at.title[0].value == f"{page.icon} {page.title}"


def test_an_old_share_link_reopens_its_state_through_the_router():
    at = open_app("pages/scripts/speedup.py", {"preset": "custom", "k": "5", "alpha": "0.6"})
    assert not at.exception and not at.warning
    assert at.slider(key="speed_k").value == 5 and at.slider(key="speed_alpha").value == 0.6
    at = open_app("pages/scripts/round.py", {"preset": "003-A", "step": "2"})
    assert not at.exception and not at.warning
    assert at.selectbox(key="round_preset").value == "003-A"
    assert at.query_params["step"] == "2"
